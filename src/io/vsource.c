/*
 * vsource.c — a video's segments decoded at once (see vsource.h).
 *
 * Why the frames equal a sequential decode's:
 *   - Segment i covers the presentation times [start_i, start_i+1): a
 *     keyframe's pts up to the next segment's keyframe pts.  A decoder
 *     outputs frames in pts order, so segment i's decoder, reading on past
 *     the next keyframe in decode order, has output every frame before
 *     start_i+1 (leading B-frames of an open GOP included) by the time it
 *     outputs the first frame at or after it, where it stops.
 *   - Segment i+1's decoder seeks to its keyframe and drops whatever it
 *     outputs before start_i+1 (leading pictures it cannot decode
 *     properly).  From a keyframe on, a decoder's frames are the ones a
 *     decode from the start gives (H.264/HEVC/VP9/AV1 define it exactly:
 *     DESIGN.md §1.9).  Its first frame must be the keyframe itself; when it is
 *     not (a seek that landed past it), the segment is decoded again from
 *     the file's start, dropping the frames before it: slower, still exact.
 *   - Every packet must have a pts and no two the same (the scan checks);
 *     best_effort_timestamp is then the pts, in a seek or not.
 * --start T: segment 0 opens with T exactly as a sequential run does;
 * the others start at keyframes after it.  --frames N: counted here, over
 * the whole file; the last segment is open-ended, so frames the decoder
 * drops (corrupt data) change nothing.
 */
#include "vsource.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libavformat/avformat.h>
#include <libavutil/mathematics.h>

#include "hwdec.h"
#include "signals.h"
#include "util.h"
#include "vscan.h"

/* Up to this many decoders a file. */
#define VS_MAX_DECODERS 16
/* About 4 segments a software decoder (load balance: segments differ in
 * cost), but not more (vscan.h: none shorter than VS_MIN_SEG frames). */
#define VS_SEGS_PER_DECODER 4
/* The segment being handed on may always hold VS_HEAD_QUEUE frames more
 * than the budget (vplan.h) allows: it decodes on when the budget is
 * spent by the segments after it. */
#define VS_HEAD_QUEUE 4
/* NVDEC sessions: one segment a session (a session's start, its first
 * frame 0.1-0.4 s after the open, is paid once a segment), as long as the
 * device budget lets the segments be that long.  Every frame a segment
 * decodes leaves its decoder surface at once (hw_detach: FFmpeg 5.1 hands
 * out the surface itself and a session has about 10, which queued frames
 * would exhaust); it then holds a luma-plane buffer of GPU memory (pitch x
 * height, P010 twice): at most the device budget of them together, and
 * segments short enough that the sessions' segments fit in it. */
#define VS_HW_SEGS_PER_DECODER 1

typedef struct vs_frame {
    struct vs_frame *next;
    src_frame fr;
    host_buf buf;
    size_t bytes;     /* host bytes (copied on by vsrc_next) */
    size_t dev_bytes; /* GPU memory a device frame holds */
    int64_t ts, dur;
    int tainted; /* its decoder had met damaged data by then */
} vs_frame;

typedef struct vs_seg {
    int64_t start, end; /* pts range [start, end) in stream ticks; end
                           INT64_MAX for the last */
    vs_frame *head, *tail;
    int qn;
    int done, failed;
    ge_why_rec *why; /* failed: its worker's error record (DESIGN.md §9),
                        for vsrc_next to hand on */
    int begun; /* its first frame is out of the decoder (or it ended) */
    int kept;  /* decoded on by the decoder of its worker's segment before */
    /* GPUEDGE_TRACE=vsrc: seconds from vsrc_open to this segment's start,
     * its reader opened, first frame queued, end; waiting for room;
     * moving frames off NVDEC surfaces; frames queued */
    double t_start, t_open, t_first, t_end, t_wait, t_detach;
    long nq;
} vs_seg;

struct vsrc {
    char *path;
    vid_opts o;
    vid_info info;
    vid_reader *plain;  /* not segmented: every call passes through */
    vid_reader *first;  /* segment 0's reader, opened by vsrc_open */
    int64_t s0;         /* the stream's start_time (ticks) */
    int dec_threads;    /* libav threads of each decoder */
    int hw;             /* the decoders are NVDEC sessions */
    size_t dev_budget;  /* GPU bytes of frames decoded ahead */
    size_t mem_budget;  /* host bytes of frames decoded ahead */
    double t0;          /* vsrc_open's start (GPUEDGE_TRACE=vsrc) */
    int trace;

    pthread_mutex_t mu;
    pthread_cond_t cv;
    vs_seg *segs;
    int nseg, ndec, next_seg, head;
    pthread_t *th;
    int nth;
    vs_frame *free_list;
    size_t buffered, dev_buffered;
    long corrupt;       /* decoding errors of closed readers */
    int quit;

    long delivered;
    int64_t last_ts, last_dur;
    /* Damaged input: from the first frame decoded after a decoding error,
     * the rest comes from one single-threaded decoder over the whole file
     * (plain), skipping the first `skip` frames it gives (those handed on
     * already): concealment may reach across a keyframe, so segments
     * could differ from a sequential decode there, and frame threads
     * conceal differently from one thread.  The output is then
     * --threads 1's.  Counted, not compared by pts: damaged frames may
     * repeat or go back in pts.  One decoder of several threads over a
     * regular file (not segmented) falls back the same way. */
    int fallback;
    long skip;
    int regular;        /* a regular file: it can be decoded again */
};

// ---------------------------------------------------------------------------
// Planning: the segments (vscan.c scans the file and cuts it)

/* Cuts the scanned frames into segments for ndec decoders (NVDEC sessions
 * when s->hw), in whole rounds (every decoder one segment a round; more
 * rounds where a segment would be longer than seg_max frames, 0: no cap)
 * of about equal length: a decoder left alone with a long last segment
 * binds the run (BENCHMARKS.md "Constants chosen by measurement").  0 with
 * the segments in s (nseg >= 2), or -1 (s->segs NULL). */
static int cut(vsrc *s, const vs_scan *sc, int ndec, size_t seg_max)
{
    size_t want = (size_t)ndec * (s->hw ? VS_HW_SEGS_PER_DECODER : VS_SEGS_PER_DECODER);
    vs_cut_seg *cs;
    int n;

    if (ndec < 1)
        return -1;
    while (seg_max && sc->limit / want > seg_max)
        want += (size_t)ndec;
    if (vs_cut(sc, want, &cs, &n))
        return -1;
    if (!(s->segs = calloc((size_t)n, sizeof *s->segs))) {
        free(cs);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        s->segs[i].start = cs[i].start;
        s->segs[i].end = cs[i].end;
    }
    s->nseg = n;
    free(cs);
    return 0;
}

/* vid_opts.start for a segment beginning at tick `ts`: the seconds whose
 * conversion in vid_open (s0 + rescale(llrint(start * 1e6))) gives ts
 * exactly, so that the reader seeks to that keyframe; when no
 * microsecond does (ticks finer than 1 us), the last one before it (the
 * seek may then land a keyframe early: more decoding, same frames). */
static double seg_seconds(const vsrc *s, int64_t ts)
{
    AVRational tb = s->info.time_base;
    int64_t us0 = av_rescale_q(ts - s->s0, tb, AV_TIME_BASE_Q), best = INT64_MIN;
    for (int64_t us = us0 - 3; us <= us0 + 3; us++) {
        int64_t t = s->s0 + av_rescale_q(us, AV_TIME_BASE_Q, tb);
        if (t == ts && us > 0)
            return (double)us / AV_TIME_BASE;
        if (t < ts && us > best)
            best = us;
    }
    return best > 0 ? (double)best / AV_TIME_BASE : 0;
}

// ---------------------------------------------------------------------------
// Decoder threads

static vs_frame *frame_get(vsrc *s)
{
    vs_frame *f = s->free_list;
    if (f) {
        s->free_list = f->next;
        f->next = NULL;
        return f;
    }
    return calloc(1, sizeof *f);
}

static void frame_put(vsrc *s, vs_frame *f)
{
    f->next = s->free_list;
    s->free_list = f;
}

/* May segment i's decoder decode one more frame?  (under mu) */
static int may_decode(const vsrc *s, int i)
{
    /* The head (the segment being handed on) decodes ahead within the
     * budget like the others, and below VS_HEAD_QUEUE whatever the others
     * hold (no deadlock).  Capping it at VS_HEAD_QUEUE would tie segment
     * 0's decoder to the engine's pace (nothing decoded ahead while CUDA
     * starts) and stop a segment that became the head with its frames
     * queued until the engine had taken them. */
    if (i == s->head && s->segs[i].qn < VS_HEAD_QUEUE)
        return 1;
    /* the next frame may be either kind (NVDEC falls back to software
     * per stream): both budgets */
    return s->buffered < s->mem_budget && s->dev_buffered < s->dev_budget;
}

static void close_reader(vsrc *s, vid_reader **r)
{
    long n;
    if (!*r)
        return;
    n = vid_corrupt_count(*r);
    vid_close(r);
    pthread_mutex_lock(&s->mu);
    s->corrupt += n;
    pthread_mutex_unlock(&s->mu);
}

/* Segment i's reader into *r: segment 0's, opened by vsrc_open; else the
 * reader of this decoder's segment before, gone on to i's keyframe
 * (vid_skip_to: no drain, no new NVDEC session; libavcodec's flush would
 * make the session again); else a new one.  *kept is used or closed.
 * 1 a new reader, 0 one already open, -1 failed (recorded). */
static int seg_reader(vsrc *s, int i, const vid_opts *vo, vid_reader **kept, vid_reader **r)
{
    vs_seg *g = &s->segs[i];
    if (i == 0) {
        pthread_mutex_lock(&s->mu);
        *r = s->first;
        s->first = NULL;
        pthread_mutex_unlock(&s->mu);
        return 0;
    }
    if (*kept && vid_skip_to(*kept, vo->start) == 0) {
        *r = *kept;
        *kept = NULL;
        g->kept = 1;
        return 0;
    }
    if (*kept)
        close_reader(s, kept);
    return vid_open(s->path, vo, r) ? -1 : 1;
}

/* Decodes segment i into its queue, on *kept when it can go on there (see
 * seg_reader); the reader is left in *kept for the next segment when its
 * decoder may go on.  0, or -1 (the file failed: why is recorded, for
 * worker() to keep, or sig_stop is set). */
static int decode_seg(vsrc *s, int i, vid_reader **kept)
{
    vs_seg *g = &s->segs[i];
    vid_opts vo = s->o;
    vid_reader *r = NULL;
    int retried = 0, first = 1, rc = 0, fresh;
    int64_t pushed = INT64_MIN; /* pts of the last frame queued */
    long base = 0;              /* the reader's decoding errors at open */

    vo.max_frames = -1; /* counted in vsrc_next */
    vo.threads = s->dec_threads;
    g->t_start = ge_now() - s->t0;
    if (i > 0)
        vo.start = seg_seconds(s, g->start);
    if ((fresh = seg_reader(s, i, &vo, kept, &r)) < 0)
        return -1;
    base = vid_corrupt_count(r);
    g->t_open = ge_now() - s->t0;
    if (s->hw && i > 0 && fresh) {
        /* An NVDEC session is made at its first frame, and sessions made
         * at once come up one after another in no set order (a segment's
         * late start delays every frame after it in the output): segment
         * i's waits for segment i-1's first frame, so they come up in the
         * order the frames are handed on.  Measured: BENCHMARKS.md
         * "Constants chosen by measurement". */
        pthread_mutex_lock(&s->mu);
        while (!s->quit && !s->segs[i - 1].begun && !s->segs[i - 1].done)
            pthread_cond_wait(&s->cv, &s->mu);
        pthread_mutex_unlock(&s->mu);
    }
    for (;;) {
        vs_frame *f;
        int k;
        int quit;
        double tw = s->trace ? ge_now() : 0;
        pthread_mutex_lock(&s->mu);
        while (!s->quit && !may_decode(s, i))
            pthread_cond_wait(&s->cv, &s->mu);
        if (s->trace)
            g->t_wait += ge_now() - tw;
        quit = s->quit;
        f = quit ? NULL : frame_get(s);
        pthread_mutex_unlock(&s->mu);
        if (!f) {
            rc = quit ? 0 : -1;
            if (!quit)
                ge_fail_in(s->path, "cannot decode video: %s", strerror(ENOMEM));
            break;
        }
        src_frame_host(&f->fr);
        k = vid_next(r, &f->fr, &f->buf);
        if (k == 1) {
            vid_last_ts(r, &f->ts, &f->dur);
            f->tainted = vid_corrupt_count(r) > base;
            if (i > 0 && f->ts != AV_NOPTS_VALUE &&
                (f->ts < g->start || (pushed != INT64_MIN && f->ts <= pushed)))
                k = 2; /* a leading picture (segment i-1's), or, after a
                          restart, a frame already queued */
            else if (i > 0 && first && f->ts != g->start && !retried)
                k = 3; /* the seek did not land on the keyframe */
            else if (f->ts != AV_NOPTS_VALUE && f->ts >= g->end)
                k = 0; /* segment i+1's first frame: done */
        } else if (k == 0 && i > 0 && !retried && (first || g->end != INT64_MAX)) {
            k = 3; /* the file ended before the segment did: a bad seek */
        }
        if (k == 1 && hw_on_surface(&f->fr)) {
            /* off the NVDEC surface before it is queued (hwdec.h) */
            double td = s->trace ? ge_now() : 0;
            int dk = hw_detach(&f->fr);
            if (s->trace)
                g->t_detach += ge_now() - td;
            if (dk) {
                ge_fail_in(s->path, "cannot decode video: %s", ge_why());
                k = -2; /* released below */
                rc = -1;
            }
        }
        if (k == 3) {
            /* decode this segment again from the start (the run's --start),
             * dropping what comes before it: slower, still exact */
            if (ge_verbose)
                ge_note("%s: segment %d: the seek missed its keyframe; decoding it "
                        "from the start", s->path, i);
            close_reader(s, &r);
            vo.start = s->o.start;
            retried = 1;
            if (vid_open(s->path, &vo, &r)) {
                rc = -1;
                k = -2;
            } else {
                base = vid_corrupt_count(r);
                k = 2;
            }
        }
        pthread_mutex_lock(&s->mu);
        if (!g->begun) {
            g->begun = 1;
            pthread_cond_broadcast(&s->cv);
        }
        if (k == 1) {
            if (f->fr.on_device) {
                f->bytes = 0;
                f->dev_bytes = hw_frame_bytes(&f->fr);
                if (!f->dev_bytes) /* not hwdec's: its luma plane at least */
                    f->dev_bytes = f->fr.f.stride * (size_t)f->fr.f.height;
                s->dev_buffered += f->dev_bytes;
            } else {
                f->bytes = f->fr.f.stride * (size_t)f->fr.f.height;
                f->dev_bytes = 0;
                s->buffered += f->bytes;
            }
            if (g->tail)
                g->tail->next = f;
            else
                g->head = f;
            g->tail = f;
            g->qn++;
            if (first)
                g->t_first = ge_now() - s->t0;
            g->nq++;
            first = 0;
            pushed = f->ts;
            pthread_cond_broadcast(&s->cv);
        } else {
            if (k != -1)
                src_frame_release(&f->fr); /* a dropped device frame */
            frame_put(s, f);
        }
        pthread_mutex_unlock(&s->mu);
        if (k == 0 || k < 0) {
            if (k == -1)
                rc = -1;
            break;
        }
    }
    if (r && rc == 0 && !s->quit)
        *kept = r; /* vid_skip_to says whether it can go on */
    else if (r)
        close_reader(s, &r);
    g->t_end = ge_now() - s->t0;
    return rc;
}

static void *worker(void *arg)
{
    vsrc *s = arg;
    vid_reader *kept = NULL; /* the last segment's, for the next one */
    pthread_mutex_lock(&s->mu);
    while (!s->quit && s->next_seg < s->nseg) {
        int i = s->next_seg++, rc;
        pthread_mutex_unlock(&s->mu);
        ge_why_clear(); /* the segment's record only */
        rc = decode_seg(s, i, &kept);
        if (rc < 0 && (s->segs[i].why = malloc(sizeof *s->segs[i].why)))
            ge_why_save(s->segs[i].why);
        pthread_mutex_lock(&s->mu);
        s->segs[i].done = 1;
        s->segs[i].failed = rc < 0;
        pthread_cond_broadcast(&s->cv);
        if (rc < 0)
            break; /* the file failed there: nothing after it is handed on */
    }
    pthread_mutex_unlock(&s->mu);
    close_reader(s, &kept);
    return NULL;
}

// ---------------------------------------------------------------------------

/* Software segments decode ahead into host memory: the decoders past the
 * segment being handed on stop when s->mem_budget is spent, so a file cut
 * into long segments (keyframes far apart) keeps only about 1 + budget /
 * segment bytes of them busy; the rest would wait.  Then fewer decoders,
 * each with more frame threads, and the segments cut again for them.
 * Returns the decoders to use (1: no segments, s->segs freed). */
static int fit_sw_decoders(vsrc *s, const vs_scan *sc, int ndec)
{
    double fb = (double)s->info.width * s->info.height * (s->o.rgb ? 3 : 1);
    double seg = (double)sc->limit / s->nseg, fit;
    if (fb <= 0 || seg <= 0)
        return ndec;
    fit = 1 + (double)s->mem_budget / (seg * fb);
    if (fit >= ndec)
        return ndec;
    free(s->segs);
    s->segs = NULL;
    s->nseg = 0;
    ndec = fit < 2 ? 1 : (int)fit;
    if (ndec >= 2 && cut(s, sc, ndec, 0))
        ndec = 1;
    return ndec;
}

/* --hwdec=auto's choice for the file opened in software (sc: its scan, or
 * NULL): 1 NVDEC (or a codec whose reader explains itself under -v), 0
 * software.  Says which under -v. */
static int auto_nvdec(vsrc *s, const vs_scan *sc, int ndec, long ncpu)
{
    const AVCodec *c = avcodec_find_decoder_by_name(s->info.codec);
    const char *path = s->path;
    int hw_ndec = ndec < VS_HW_DECODERS ? ndec : VS_HW_DECODERS, sessions = 1, use;
    double gpx = sc ? (double)sc->limit * s->info.width * s->info.height / 1e9
                    : vsrc_info_gpx(&s->info);
    s->hw = 1; /* (cut as for NVDEC) */
    if (sc && hw_ndec >= 2 && cut(s, sc, hw_ndec, 0) == 0)
        sessions = s->nseg < hw_ndec ? s->nseg : hw_ndec;
    free(s->segs);
    s->segs = NULL;
    s->nseg = 0;
    s->hw = 0;
    use = !c || !hw_codec_exact(c->id) || vsrc_auto_nvdec(sessions, ncpu, gpx);
    if (!use && ge_verbose)
        ge_note("%s: --hwdec=auto: decoding in software (%d NVDEC session%s, %.1f Gpx, "
                "%ld threads: NVDEC from %d sessions and %.1f Gpx, or with %d threads "
                "or fewer)", path, sessions, sessions == 1 ? "" : "s", gpx, ncpu,
                VS_AUTO_SESSIONS, VS_AUTO_GPX, VS_AUTO_FEW_THREADS);
    if (use && ge_verbose && c && hw_codec_exact(c->id))
        ge_note("%s: --hwdec=auto: NVDEC (%d session%s, %.1f Gpx, %ld threads)", path,
                sessions, sessions == 1 ? "" : "s", gpx, ncpu);
    return use;
}

/* A source for `path` with nothing open yet (vsrc_open, vsrc_successor);
 * NULL out of memory. */
static vsrc *vs_new(const char *path, const vid_opts *o)
{
    vsrc *s = calloc(1, sizeof *s);
    if (!s || !(s->path = strdup(path))) {
        free(s);
        return NULL;
    }
    s->o = *o;
    s->last_ts = AV_NOPTS_VALUE;
    s->t0 = ge_now();
    s->trace = ge_trace("vsrc");
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    return s;
}

int vsrc_open(const char *path, const vid_opts *o, vsrc **out)
{
    vsrc *s = vs_new(path, o);
    vid_opts vo = *o;
    struct stat sb;
    long ncpu = o->threads > 0 ? o->threads : ge_cpu_count();
    /* a file that may chain onto the next (vid_opts.next_input) has one
     * decoder: its session goes on into the next file */
    int ndec = o->next_input ? 1 : ncpu > VS_MAX_DECODERS ? VS_MAX_DECODERS
                                   : ncpu < 1 ? 1 : (int)ncpu;
    int autohw = 0, sw_first = 0, regular, reopen, scanned = 0, segmented;
    size_t seg_max = 0;
    vs_scan sc;

    *out = NULL;
    memset(&sc, 0, sizeof sc);
    if (!s) {
        ge_fail_in(path, "cannot open video: %s", strerror(ENOMEM));
        return -1;
    }
    s->dev_budget = VS_DEV_BUDGET_MIN;
    s->mem_budget = o->mem_budget > 0 ? o->mem_budget : vsrc_host_budget(vsrc_phys_bytes(), 1);
    /* --hwdec=auto and nvdec: a file that can be opened again opens in
     * software first, for the scan below (which needs no device): auto's
     * rule (vsrc_auto_nvdec) reads it, and only then does NVDEC open the
     * device, so run.c's early_open overlaps reading and scanning the file
     * with CUDA's start-up.  A pipe is read once: nvdec opens it on NVDEC,
     * auto as its rule says for one session.  (--rgb never decodes on
     * NVDEC: the reader says so itself.) */
    regular = strcmp(path, "-") && !strstr(path, "://") && stat(path, &sb) == 0 &&
              S_ISREG(sb.st_mode);
    s->regular = regular;
    reopen = regular || (strcmp(path, "-") && strstr(path, "://"));
    if (o->hwdec != VID_HWDEC_NONE && !o->rgb) {
        if (reopen) {
            sw_first = 1;
            vo.hwdec = VID_HWDEC_NONE;
        } else if (o->hwdec == VID_HWDEC_AUTO && !vsrc_auto_nvdec(1, ncpu, 0)) {
            vo.hwdec = VID_HWDEC_NONE;
            if (ge_verbose)
                ge_note("%s: --hwdec=auto: decoding in software (a stream read once: one NVDEC "
                        "session, %ld threads; NVDEC with %d threads or fewer)", path, ncpu,
                        VS_AUTO_FEW_THREADS);
        }
    }
    /* The file opens as it always did (the messages are vid_open's; it
     * also sets up libav's logging before the scan below reads anything). */
    if (vid_open(path, &vo, &s->plain)) {
        vsrc_close(&s);
        return -1;
    }
    vid_get_info(s->plain, &s->info);
    autohw = sw_first && o->hwdec == VID_HWDEC_AUTO;
    if (regular && (ndec >= 2 || autohw))
        if ((scanned = vs_scan_file(path, o->start, o->max_frames, &sc) == 0))
            s->s0 = sc.s0;
    if (sw_first) {
        int use = 1;
        if (autohw)
            use = auto_nvdec(s, scanned ? &sc : NULL, ndec, ncpu);
        if (use) {
            /* NVDEC (or, under auto, a codec whose reader explains itself
             * under -v): opened again, now on the device */
            vid_close(&s->plain);
            vo.hwdec = o->hwdec;
            if (vid_open(path, &vo, &s->plain)) {
                vs_scan_free(&sc);
                vsrc_close(&s);
                return -1;
            }
        }
    }
    /* A regular file, two decoders or more: segments.  Software decoders
     * get their share of the threads each; NVDEC sessions (when the
     * reader just opened is one) one thread each, at most VS_HW_DECODERS,
     * their segments short enough for the device budget.  When NVDEC was asked
     * for but this reader decodes in software (the codec, --rgb, no
     * device), the segments' readers are told so: the same choice without
     * asking the device again. */
    if (o->hwdec != VID_HWDEC_NONE && vid_hwdec_active(s->plain)) {
        s->hw = 1;
        if (ndec > VS_HW_DECODERS)
            ndec = VS_HW_DECODERS;
        s->dev_budget = vsrc_dev_budget(hw_mem_free(s->o.device));
        if (s->info.width > 0 && s->info.height > 0) {
            /* a luma plane at an aligned pitch (16-bit surfaces hold twice
             * that: the budget then stops decoders ahead earlier, no more) */
            size_t fb = (size_t)((s->info.width + 511) & ~511) * (size_t)s->info.height;
            seg_max = s->dev_budget / (fb * (size_t)ndec);
        }
    } else {
        s->o.hwdec = VID_HWDEC_NONE;
    }
    segmented = ndec >= 2 && scanned && cut(s, &sc, ndec, seg_max) == 0;
    if (segmented && !s->hw)
        segmented = (ndec = fit_sw_decoders(s, &sc, ndec)) >= 2;
    if (segmented) {
        s->ndec = s->nseg < ndec ? s->nseg : ndec;
        s->dec_threads = (int)(ncpu / s->ndec) > 0 ? (int)(ncpu / s->ndec) : 1;
        if (s->hw)
            s->dec_threads = 1;
        vo = s->o;
        vo.threads = s->dec_threads;
        vo.max_frames = -1;
        vid_close(&s->plain);
        if (vid_open(path, &vo, &s->first)) {
            vs_scan_free(&sc);
            vsrc_close(&s);
            return -1;
        }
    }
    vs_scan_free(&sc);
    if (s->nseg) {
        s->th = calloc((size_t)s->ndec, sizeof *s->th);
        if (!s->th) {
            ge_fail_in(path, "cannot open video: %s", strerror(ENOMEM));
            vsrc_close(&s);
            return -1;
        }
        for (int i = 0; i < s->ndec; i++)
            if (pthread_create(&s->th[s->nth], NULL, worker, s) == 0)
                s->nth++;
        if (s->nth == 0) {
            ge_fail_in(path, "cannot start the decoder threads");
            vsrc_close(&s);
            return -1;
        }
        if (ge_verbose)
            ge_note("%s: %d segments on %d %sdecoders of %d thread%s, at most %zu MiB decoded "
                    "ahead%s", path, s->nseg, s->nth, s->hw ? "NVDEC " : "", s->dec_threads,
                    s->dec_threads == 1 ? "" : "s",
                    (s->hw ? s->dev_budget : s->mem_budget) >> 20, s->hw ? " on the device" : "");
    }
    *out = s;
    return 0;
}

/* Tells the segment decoders to quit and joins them. */
static void stop_decoders(vsrc *s)
{
    pthread_mutex_lock(&s->mu);
    s->quit = 1;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    for (int i = 0; i < s->nth; i++)
        pthread_join(s->th[i], NULL);
}

/* Ends the segment decoders and opens one decoder over the whole file
 * (see vsrc.fallback).  0, or -1 (why recorded). */
static int start_fallback(vsrc *s)
{
    vid_opts vo = s->o;
    stop_decoders(s);
    s->nth = 0;
    vid_close(&s->first);
    s->fallback = 1;
    s->skip = s->delivered;
    if (ge_verbose)
        ge_note("%s: damaged data after frame %ld: the rest from one decoder", s->path,
                s->delivered);
    vo.max_frames = -1; /* counted here */
    vo.next_input = NULL;
    /* one thread: libavcodec's frame threads conceal damaged H.264
     * differently from run to run (seen with FFmpeg 5.1); one thread gives
     * what --threads 1 gives */
    vo.threads = 1;
    return vid_open(s->path, &vo, &s->plain);
}

/* The next frame of the fallback decoder after those handed on. */
static int fallback_next(vsrc *s, src_frame *fr, host_buf *buf)
{
    for (;;) {
        int64_t ts, dur;
        int rc = vid_next(s->plain, fr, buf);
        if (rc != 1)
            return rc;
        if (s->skip > 0) {
            s->skip--; /* handed on already */
            continue;
        }
        vid_last_ts(s->plain, &ts, &dur);
        fr->index = s->delivered++;
        s->last_ts = ts;
        s->last_dur = dur;
        return 1;
    }
}

/* Not segmented: the one decoder's next frame.  A decoder of several
 * threads that has met damaged data gives way to one of one thread (see
 * vsrc.fallback) where the file can be read again. */
static int plain_next(vsrc *s, src_frame *fr, host_buf *buf)
{
    int rc;
    if (s->fallback)
        return fallback_next(s, fr, buf);
    rc = vid_next(s->plain, fr, buf);
    if (rc != 1)
        return rc;
    if (s->regular && s->o.threads != 1 && !vid_hwdec_active(s->plain) &&
        vid_corrupt_count(s->plain) > 0) {
        /* decoded after an error: this frame comes from the new decoder */
        vid_close(&s->plain);
        if (start_fallback(s))
            return -1;
        return fallback_next(s, fr, buf);
    }
    fr->index = s->delivered++;
    vid_last_ts(s->plain, &s->last_ts, &s->last_dur);
    return 1;
}

int vsrc_next(vsrc *s, src_frame *fr, host_buf *buf)
{
    vs_frame *f = NULL;
    int rc;
    double t0;

    if (s->o.max_frames >= 0 && s->delivered >= s->o.max_frames)
        return 0;
    if (!s->nseg)
        return plain_next(s, fr, buf);
    if (s->fallback)
        return fallback_next(s, fr, buf);
    t0 = ge_now();
    pthread_mutex_lock(&s->mu);
    for (;;) {
        vs_seg *g;
        if (s->head >= s->nseg) {
            rc = 0;
            break;
        }
        g = &s->segs[s->head];
        if (g->qn > 0 && g->head->tainted) {
            rc = 2; /* damaged data from here on: one decoder */
            break;
        }
        if (g->qn > 0) {
            f = g->head;
            g->head = f->next;
            if (!g->head)
                g->tail = NULL;
            g->qn--;
            s->buffered -= f->bytes;
            s->dev_buffered -= f->dev_bytes;
            pthread_cond_broadcast(&s->cv);
            rc = 1;
            break;
        }
        if (g->done) {
            if (g->failed) {
                if (g->why)
                    ge_why_load(g->why);
                else
                    ge_fail_in(s->path, "cannot decode video: %s", strerror(ENOMEM));
                rc = -1;
                break;
            }
            s->head++;
            pthread_cond_broadcast(&s->cv); /* a new head may decode on */
            continue;
        }
        pthread_cond_wait(&s->cv, &s->mu);
    }
    pthread_mutex_unlock(&s->mu);
    if (rc == 2)
        return start_fallback(s) ? -1 : fallback_next(s, fr, buf);
    if (rc != 1)
        return rc;
    /* The decoders run beside each other: what a frame's decoding costs the
     * run is the time this call waited for it (--report's decode row; the
     * decoder's own time per frame would add up across them) */
    f->fr.decode_ms = (ge_now() - t0) * 1e3;
    if (f->fr.on_device) {
        /* a hardware decoder's surface (DESIGN.md §4): handed on as it is, its
         * release goes with it */
        *fr = f->fr;
        src_frame_host(&f->fr);
        fr->index = s->delivered++;
        s->last_ts = f->ts;
        s->last_dur = f->dur;
    } else if (host_buf_reserve(buf, f->bytes ? f->bytes : 1)) {
        /* (host frames go into the engine's buffer, which may be pinned:
         * one copy) */
        ge_fail_in(s->path, "cannot decode video: %s", strerror(ENOMEM));
        rc = -1;
    } else {
        memcpy(buf->p, f->buf.p, f->bytes);
        *fr = f->fr;
        fr->f.data = buf->p;
        fr->index = s->delivered++;
        s->last_ts = f->ts;
        s->last_dur = f->dur;
    }
    pthread_mutex_lock(&s->mu);
    frame_put(s, f);
    pthread_mutex_unlock(&s->mu);
    return rc;
}

void vsrc_close(vsrc **ps)
{
    vsrc *s;
    if (!ps || !*ps)
        return;
    s = *ps;
    *ps = NULL;
    stop_decoders(s);
    for (int i = 0; s->trace && i < s->nseg; i++) {
        const vs_seg *g = &s->segs[i];
        ge_note("%s: trace segment %d%s%s: start %.3f opened %.3f first %.3f end %.3f s; "
                "%ld frames, waited %.3f s, off NVDEC surfaces %.3f s", s->path, i,
                s->hw ? " (NVDEC)" : "", g->kept ? " (decoder kept)" : "", g->t_start,
                g->t_open, g->t_first, g->t_end, g->nq, g->t_wait, g->t_detach);
    }
    if (ge_verbose && s->nseg) {
        int kept = 0;
        for (int i = 0; i < s->nseg; i++)
            kept += s->segs[i].kept;
        if (kept)
            ge_note("%s: %d of %d segments decoded on by the decoder of the segment before "
                    "(no new %s)", s->path, kept, s->nseg, s->hw ? "NVDEC session" : "decoder");
    }
    if (s->trace && s->hw) {
        long nm;
        double tm;
        size_t cb;
        hw_detach_stats(&nm, &tm, &cb);
        ge_note("%s: trace: %ld cudaMallocs for detached frames, %.3f s; %zu bytes cached",
                s->path, nm, tm, cb);
    }
    vid_close(&s->plain);
    vid_close(&s->first);
    for (int i = 0; i < s->nseg; i++) {
        for (vs_frame *f = s->segs[i].head, *n; f; f = n) {
            n = f->next;
            src_frame_release(&f->fr); /* an undelivered device surface */
            host_buf_free(&f->buf);
            free(f);
        }
        free(s->segs[i].why);
    }
    for (vs_frame *f = s->free_list, *n; f; f = n) {
        n = f->next;
        host_buf_free(&f->buf);
        free(f);
    }
    free(s->segs);
    free(s->th);
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
    free(s->path);
    free(s);
}

void vsrc_get_info(const vsrc *s, vid_info *info)
{
    *info = s->info;
}

void vsrc_last_ts(const vsrc *s, int64_t *pts, int64_t *duration)
{
    if (pts)
        *pts = s->last_ts;
    if (duration)
        *duration = s->last_dur;
}

long vsrc_corrupt_count(const vsrc *s)
{
    long n;
    if (!s)
        return 0;
    if (s->plain)
        return vid_corrupt_count(s->plain);
    pthread_mutex_lock((pthread_mutex_t *)&s->mu);
    n = s->corrupt;
    pthread_mutex_unlock((pthread_mutex_t *)&s->mu);
    return n;
}

vsrc *vsrc_successor(vsrc *s, const char *path)
{
    vid_reader *r = s && s->plain && !s->fallback ? vid_successor(s->plain) : NULL;
    vsrc *n;
    if (!r)
        return NULL;
    if (!(n = vs_new(path, &s->o))) {
        vid_close(&r);
        return NULL;
    }
    n->plain = r;
    vid_get_info(r, &n->info);
    n->hw = vid_hwdec_active(r);
    n->regular = s->regular;
    n->dev_budget = s->dev_budget;
    n->mem_budget = s->mem_budget;
    return n;
}

int vsrc_nvdec(const vsrc *s)
{
    return s && s->hw;
}

int vsrc_segments(const vsrc *s)
{
    return s && s->nseg ? s->nseg : 1;
}

int vsrc_head_queued(vsrc *s)
{
    int n = 0;
    if (!s || !s->nseg)
        return 0;
    pthread_mutex_lock(&s->mu);
    if (s->head < s->nseg)
        n = s->segs[s->head].qn;
    pthread_mutex_unlock(&s->mu);
    return n;
}
