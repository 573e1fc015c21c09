/*
 * src_media.c — the frame source an engine's decode thread calls: the
 * next job from the queue (or one this engine took ahead), images through
 * src_image.c, videos through vsource frame by frame.  A bad file is
 * reported, marked (src_failed) and skipped; the batch goes on.
 */
#include "run_int.h"

#include <limits.h>
#include <string.h>

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

/* The next job for this engine: one it took ahead, else the queue's.
 * -1 when none is left. */
static int lane_take(run_ctx *c)
{
    run_shared *sh = c->sh;
    int ji, seq = -1;
    if (c->nclaim) {
        ji = c->claim[0];
        c->nclaim--;
        memmove(c->claim, c->claim + 1, (size_t)c->nclaim * sizeof *c->claim);
    } else if ((ji = jq_pop(&sh->q, &seq)) < 0) {
        return -1;
    }
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
    return ji;
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
    vsrc_close(&c->vr);
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
            got = j->nvj && c->nvj ? nvj_job_frame(c, ji, fr, buf)
                                   : image_job_frame(c, ji, fr, buf);
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
        j->t_begin = ge_now();
        if (vsrc_open(j->input, &vo, &c->vr)) {
            ge_err_why(j->input);
            j->src_failed = 1;
            continue;
        }
        video_opened(c, ji);
    }
}
