/*
 * src_media.c — the frame source an engine's decode thread calls: the
 * next job from the queue (or one this engine took ahead), images through
 * src_image.c, videos through vsource frame by frame.  A bad file is
 * reported, marked (src_failed) and skipped; the batch goes on.
 */
#include "run_int.h"

#include <limits.h>
#include <string.h>
#include <time.h>

#include <libavutil/avutil.h>

#include "util.h"

/* Job ji's video is open in c->vr: its rates and expected frames. */
void video_opened(run_ctx *c, int ji)
{
    job *j = &c->jobs[ji];
    vid_info vi;
    vsrc_get_info(c->vr, &vi);
    j->tb = vi.time_base;
    j->fps = vi.frame_rate;
    j->total = vi.nb_frames > 0 ? (long)vi.nb_frames
               : vi.duration > 0 && vi.frame_rate.num > 0
                   ? (long)(vi.duration * av_q2d(vi.frame_rate) + 0.5) : 0;
    j->total_exact = vi.nb_frames > 0 && c->o->start <= 0;
    if (c->o->start > 0 && j->total > 0 && vi.frame_rate.num > 0) {
        /* --start skips about start * fps of them */
        long skip = (long)(c->o->start * av_q2d(vi.frame_rate) + 0.5);
        j->total = j->total > skip ? j->total - skip : 0;
    }
    /* what a damaged file's notice compares with: none when unknown */
    j->expect = j->total > c->o->frames && c->o->frames > 0 ? c->o->frames : j->total;
    if (c->o->frames > 0 && (j->total == 0 || j->total > c->o->frames))
        j->total = c->o->frames;
    c->vr_job = ji;
    j->decoded = 0;
    j->damaged = 0;
    j->damage[0] = '\0';
}

/* A video that ended after decoding errors: one line saying what was
 * lost (no error count: segments and fallbacks count differently, the
 * line is the same with any --threads).  Without --strict the frames
 * stand: a notice (in a batch, the file's "ok" line says it instead:
 * close_output); with it the file fails. */
static void video_damaged(run_ctx *c, job *j)
{
    char of[48] = "";
    if (j->expect > j->decoded)
        snprintf(of, sizeof of, " of %s%ld", j->total_exact ? "" : "about ", j->expect);
    snprintf(j->damage, sizeof j->damage,
             "damaged: %ld%s frame%s decoded (corrupt or missing data skipped or concealed)",
             j->decoded, of, j->decoded == 1 && !of[0] ? "" : "s");
    if (c->o->strict) {
        ge_err(j->input, "%s; --strict", j->damage);
        j->src_failed = 1;
        return;
    }
    j->damaged = 1;
    if (!c->batch)
        ge_note("%s: %s", j->input, j->damage);
}

/* Start-up figure: the first frame decoded (any engine's decode thread). */
static void first_decoded(run_ctx *c)
{
    double zero = 0, now = ge_now();
    __atomic_compare_exchange(&c->sh->t_first_decoded, &zero, &now, 0, __ATOMIC_RELAXED,
                              __ATOMIC_RELAXED);
}

/* An engine decoding in software beside NVDEC's (mix_lanes) is there to
 * cover the NVDEC sessions' starts.  It waits for the NVDEC engines'
 * files to end: where they chained onto the next more often than not,
 * there is no start left to cover, and its slower files and the cores it
 * takes would only hold the batch back, so it takes nothing more; else
 * it takes the next file (BENCHMARKS.md "Video batches").  0 take, -1
 * this engine ends. */
static int sw_lane_go(run_ctx *c)
{
    run_shared *sh = c->sh;
    const struct timespec tick = {0, 2000000};
    for (;;) {
        int ch = __atomic_load_n(&sh->chained, __ATOMIC_RELAXED);
        int un = __atomic_load_n(&sh->unchained, __ATOMIC_RELAXED);
        if (ch + un > 0 || __atomic_load_n(&sh->nvdec_done, __ATOMIC_RELAXED) > 0)
            return ch > un ? -1 : 0;
        if (sig_stopped() || !jq_left(&sh->q))
            return -1;
        nanosleep(&tick, NULL);
    }
}

/* Job ji is this engine's now (seq: its queue position, -1 unknown). */
static void lane_took(run_ctx *c, int ji, int seq)
{
    run_shared *sh = c->sh;
    c->jobs[ji].lane = c->lane;
    c->lane_files++;
    if (sh->nlanes > 1 && ge_verbose) {
        if (seq >= 0)
            ge_note("%s: engine %d takes it (queue position %d)", c->jobs[ji].input, c->lane,
                    seq);
        else
            ge_note("%s: engine %d takes it", c->jobs[ji].input, c->lane);
    }
    if ((sh->fail_lane == c->lane || sh->fail_lane == INT_MAX) && c->lane_files == sh->fail_nth)
        c->fail_job = ji;
}

/* The first of the jobs this engine took ahead (c->nclaim > 0). */
static int claim_pop(run_ctx *c)
{
    int ji = c->claim[0];
    c->nclaim--;
    memmove(c->claim, c->claim + 1, (size_t)c->nclaim * sizeof *c->claim);
    return ji;
}

/* The next job for this engine: one its video's reader took and did not
 * chain, one it took ahead, else the queue's.  -1 when none is left. */
static int lane_take(run_ctx *c)
{
    int ji, seq = -1;
    if (c->hwdec == CLI_HWDEC_NONE && c->sh->sw_lanes > 0 && sw_lane_go(c))
        return -1;
    if (c->chain_back >= 0) {
        ji = c->chain_back; /* (taken already) */
        c->chain_back = -1;
        return ji;
    }
    if (c->nclaim) {
        ji = claim_pop(c);
    } else if ((ji = jq_pop(&c->sh->q, &seq)) < 0) {
        return -1;
    }
    lane_took(c, ji, seq);
    return ji;
}

/* A job the reader of this engine's video may chain onto: a video of a
 * regular file (vid_read.c opens it itself, checks that its stream
 * continues the one decoding, else leaves it to lane_take). */
static int chain_fits(void *ctx, int ji)
{
    const job *j = &((run_ctx *)ctx)->jobs[ji];
    return j->state == JOB_PENDING && j->video_in && strcmp(j->input, "-") &&
           !strstr(j->input, "://");
}

/* vid_opts.next_input: this engine's next file when it is such a video;
 * video_end learns whether the reader chained it. */
static const char *chain_next(void *ctx)
{
    run_ctx *c = ctx;
    int ji, seq = -1;
    if (sig_stopped() || c->chain_job >= 0 || c->chain_back >= 0)
        return NULL;
    if (c->nclaim) {
        if (!chain_fits(c, c->claim[0]))
            return NULL;
        ji = claim_pop(c);
    } else if ((ji = jq_pop_if(&c->sh->q, chain_fits, c, &seq)) < 0) {
        return NULL;
    }
    lane_took(c, ji, seq);
    c->chain_job = ji;
    return c->jobs[ji].input;
}

/* The failing-engine test hook: this engine fails now, as a lost device
 * would, in the middle of its file. */
static int lane_fail_now(run_ctx *c)
{
    ge_err(NULL, "engine %d: failing on purpose (GPUEDGE_FAIL_ENGINE, a test)", c->lane);
    c->fail_job = -1;
    return -1;
}

/* The source's options for a video of this run, decoded by `hwdec` on
 * `device` (media_next, early_open, early_to_software). */
vid_opts video_opts(const cli_opts *o, int hwdec, int device)
{
    vid_opts vo = {.start = o->start, .max_frames = o->frames, .rgb = o->rgb,
                   .threads = o->threads};
    vo.hwdec = hwdec;
    vo.device = device;
    return vo;
}

/* The open video ended (r: vsrc_next's 0 or -1): closed, and the file
 * its reader chained onto (chain_next) open in its place, decoding on;
 * one it took but did not chain goes next (lane_take). */
static void video_end(run_ctx *c, int r)
{
    int ji = c->chain_job;
    vsrc *next = ji >= 0 && r == 0 ? vsrc_successor(c->vr, c->jobs[ji].input) : NULL;
    vsrc_close(&c->vr);
    c->chain_job = -1;
    if (!next) {
        c->chain_back = ji;
        if (c->vr_offered)
            __atomic_add_fetch(&c->sh->unchained, 1, __ATOMIC_RELAXED);
        return;
    }
    c->vr = next;
    __atomic_add_fetch(&c->sh->chained, 1, __ATOMIC_RELAXED);
    c->jobs[ji].t_begin = ge_now();
    video_opened(c, ji);
}

/* The open video's next frame: 1 a frame, 0 the video ended (closed; a
 * failure marked), -1 the failing-engine hook. */
static int video_frame(run_ctx *c, src_frame *fr, host_buf *buf)
{
    job *j = &c->jobs[c->vr_job];
    int r = vsrc_next(c->vr, fr, buf);
    if (r == 1 && c->vr_job == c->fail_job && j->decoded == 1)
        return lane_fail_now(c); /* its second frame */
    if (r == 1) {
        int64_t ts, dur;
        if (fr->on_device)
            c->dec_nvdec++;
        else
            c->dec_sw++;
        vsrc_last_ts(c->vr, &ts, &dur);
        fr->job = c->vr_job;
        fr->ts = ts == AV_NOPTS_VALUE ? INT64_MIN : ts;
        fr->duration = dur;
        j->decoded++;
        first_decoded(c);
        return 1;
    }
    if (r < 0 && !sig_stopped()) {
        ge_err_why(j->input);
        j->src_failed = 1;
    } else if (r == 0 && j->decoded > 0 && vsrc_corrupt_count(c->vr) > 0) {
        video_damaged(c, j);
    } else if (r == 0 && j->decoded == 0) {
        /* one line, with the count of decoding errors */
        long nerr = vsrc_corrupt_count(c->vr);
        if (nerr > 0)
            ge_err(j->input, "no video frames decoded (%ld decoding error%s)", nerr,
                   nerr == 1 ? "" : "s");
        else
            ge_err(j->input, "no video frames decoded");
        j->src_failed = 1;
    }
    video_end(c, r);
    return 0;
}

int media_next(void *ctx, src_frame *fr, host_buf *buf)
{
    run_ctx *c = ctx;
    prefetch_more(c);
    for (;;) {
        int ji, r;
        job *j;
        if (sig_stopped()) {
            vsrc_close(&c->vr);
            return 0;
        }
        if (c->vr) {
            if ((r = video_frame(c, fr, buf)) != 0)
                return r;
            continue;
        }
        if ((ji = lane_take(c)) < 0)
            return 0;
        j = &c->jobs[ji];
        if (j->state != JOB_PENDING)
            continue;
        if (!j->video_in) {
            int got;
            if (ji == c->fail_job)
                return lane_fail_now(c);
            got = j->nvj && c->nvj ? nvj_job_frame(c, ji, fr)
                                   : image_job_frame(c, ji, fr);
            prefetch_more(c);
            if (got) {
                first_decoded(c);
                return 1;
            }
            j->src_failed = 1;
            continue;
        }
        /* NVDEC's frames stay on the device: only for the GPU engine, on
         * this engine's device (NVDEC sessions spread over the devices) */
        vid_opts vo = video_opts(c->o, c->use_gpu ? c->hwdec : CLI_HWDEC_NONE, c->device);
        vo.threads = c->threads;
        vo.mem_budget = c->mem_budget;
        /* NVDEC engines chain; engines decoding in software only with one
         * thread each (frame threads do not chain, and several threads
         * would rather decode the file in segments) */
        c->vr_offered = c->sh->chain && (c->use_gpu ? vo.hwdec != CLI_HWDEC_NONE : c->threads == 1);
        if (c->vr_offered) {
            vo.next_input = chain_next;
            vo.next_opaque = c;
        }
        j->t_begin = ge_now();
        if (vsrc_open(j->input, &vo, &c->vr)) {
            ge_err_why(j->input);
            j->src_failed = 1;
            if (c->vr_offered)
                __atomic_add_fetch(&c->sh->unchained, 1, __ATOMIC_RELAXED);
            continue;
        }
        video_opened(c, ji);
    }
}
