/*
 * pipeline.c — the engines (DESIGN.md §4).
 *
 * GPU engine, three threads and three streams:
 *
 *   decode thread   free_in -> source->next() into a pinned input slot
 *                   (or a frame the source lends: a device surface, an
 *                   image's decoded pixels) -> filled_in
 *   this thread     filled_in + free_out -> upload stream: H2D
 *                   -> compute stream: grey, blur H, blur V, Sobel,
 *                      histogram (events between stages)
 *                   -> download stream: D2H into the output slot's pinned
 *                      buffers -> done_out; the input slot goes back to
 *                      free_in at once (its reuse waits on events)
 *   writer thread   done_out -> wait for the frame's download event ->
 *                   timings, --cpu-ref, sink->put() -> free_out
 *
 * Why each buffer may be reused:
 *   - an input slot's pinned memory is refilled by the decode thread only
 *     after its `uploaded` event (the H2D read it) has completed;
 *   - an input slot's device copy is overwritten by the next H2D only after
 *     the upload stream waited on `consumed` (the grey kernel read it);
 *   - grey / blur planes are single buffers used by the compute stream
 *     only, which runs in order (the --cpu-ref copies of them are in that
 *     stream too);
 *   - an output slot (device edge map + histogram, pinned host copies,
 *     events) belongs to one frame from the moment this thread takes it
 *     off free_out until the writer, after synchronising on the frame's
 *     download event, puts it back: the seed's shared d_edges/h_edges race
 *     cannot happen.
 * No device-wide synchronisation and no cudaFree/cudaFreeHost in the loop,
 * except when a larger frame makes a buffer grow (with headroom, so a batch
 * of equal frames grows once).
 *
 * Huge frames: a frame whose buffers exceed one slot's share of the memory
 * budget (--mem-limit, else 80 % of the free GPU memory) is enqueued as
 * horizontal strips (submit_strips; windows planned by strips.c), through
 * two halves of the slot's device buffers ordered by the s_* events.
 */
#include "pipeline.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "canny.h"
#include "cpu_backend.h"
#include "gpu.h"
#include "hostbuf.h"
#include "refcheck.h"
#include "strips.h"
#include "util.h"

/* Ring sizes: 3 a side by default (DESIGN.md §4: >= 2; 3 lets decode, PCIe
 * and the writer each hold one while the GPU works on the next). */
#define PIPE_DEFAULT_SLOTS 3
#define PIPE_MAX_SLOTS 8
/* The caller's stop flag (a signal arrived): in-flight frames finish, no
 * new one starts. */
static int stop_asked(const pipe_opts *o)
{
    return o->stop && *o->stop;
}

static const char *job_name(const pipe_opts *o, int job)
{
    return o->job_name ? o->job_name(o->job_ctx, job) : NULL;
}

/* The GPU engine, to pipe_run_gpu: CUDA builds only (the Makefile's CUDA=0,
 * the CPU-only variant, links gpu_none.c's pipe_run_gpu instead). */
#if GE_CUDA
#include <cuda_runtime_api.h>

#define GE_CUDA_RECORD /* CUDA failures are recorded, not printed (DESIGN.md §9) */
#include "coded.h"
#include "cuda_check.h"
#include "fused.h"
#include "kernels.h"
#include "ptrq.h"

/* ------------------------------------------------------------------------ */
/* GPU engine                                                                */

enum { EV_UP0, EV_UP1, EV_C0, EV_GREY, EV_BH, EV_BV, EV_SOBEL, EV_HIST,
       EV_DL0, EV_DL1, EV_CHECK, EV_NMS, EV_N };

typedef struct in_slot {
    host_buf h;            /* pinned input frame */
    src_frame fr;
    void *d_in;
    size_t d_cap;
    cudaEvent_t uploaded;  /* H2D done: h may be refilled */
    cudaEvent_t consumed;  /* grey kernel done: d_in may be overwritten */
    cudaEvent_t s_up[2];   /* strips: window k uploaded into half k */
    cudaEvent_t s_read[2]; /* strips: the kernel has read half k */
    int used;
} in_slot;

typedef struct out_slot {
    host_buf h_edge, h_grey, h_blur_h, h_blur; /* pinned */
    host_buf in_copy;      /* input frame kept for --cpu-ref (malloc) */
    uint64_t *h_hist;      /* pinned, 256 */
    uint8_t *d_edge;
    size_t d_edge_cap;
    unsigned long long *d_hist;
    pipe_coded code;       /* the edge map coded for a .mkv writer */
    pipe_png png;          /* the edge map coded for a PNG writer */
    cudaEvent_t ev[EV_N];
    cudaEvent_t s_done[2]; /* strips: edge rows of half k written */
    cudaEvent_t s_dl[2];   /* strips: edge rows of half k downloaded */
    src_frame fr;
    size_t in_copy_stride; /* row pitch of in_copy */
    int check, blurred, fused, canny;
} out_slot;

typedef struct gpu_engine {
    const pipe_opts *o;
    frame_source *src;
    frame_sink *sink;
    int nslots;
    in_slot in[PIPE_MAX_SLOTS];
    out_slot out[PIPE_MAX_SLOTS];
    int fused;        /* one fused kernel per frame, no float planes */
    queue free_in, filled_in, free_out, done_out;
    cudaStream_t up, comp, dl;
    float *d_grey, *d_blur_h, *d_blur;
    size_t plane_cap; /* pixels */
    coded_pool *coded; /* the output slots' packet buffers */
    void *d_canny;    /* --canny scratch (canny_scratch_bytes): compute stream only */
    size_t canny_cap;
    size_t budget;    /* GPU memory for frame buffers, all slots (bytes) */
    long strip_frames;
    int strip_job;    /* the last job told about its strips (-v) */
    int fatal;        /* atomic */
    int why_taken;    /* atomic: `why` belongs to the first failure */
    int has_why;      /* `why` holds the engine's own failure */
    ge_why_rec why;   /* that failure's record, from the thread it hit */
    int stopped;
    ge_ctx *ctx;      /* o->ctx, or the engine's own (own_ctx) */
    int own_ctx;
    /* GPUEDGE_TRACE=pipe: seconds each thread spent waiting and working
     * (printed at the end): the decode thread waiting for an input slot /
     * in the source; this thread waiting for a filled slot / an output
     * slot / submitting; the writer waiting for a frame / for its
     * download / in the sink */
    int trace;
    double t_dec_wait, t_dec_src, t_sub_in, t_sub_out, t_sub, t_wr_wait, t_wr_dl, t_wr_sink;
} gpu_engine;

/* ge_now() when tracing (else 0): the trace's clock */
static double tnow(const gpu_engine *e) { return e->trace ? ge_now() : 0; }

static int eng_failed(gpu_engine *e) { return __atomic_load_n(&e->fatal, __ATOMIC_ACQUIRE); }
/* The engine's own failure: the first one's record (the calling thread's,
 * DESIGN.md §9) goes back to pipe_run_gpu's caller. */
static void eng_fail(gpu_engine *e)
{
    if (!__atomic_exchange_n(&e->why_taken, 1, __ATOMIC_ACQ_REL)) {
        ge_why_save(&e->why);
        e->has_why = 1; /* read after the threads are joined */
    }
    __atomic_store_n(&e->fatal, 1, __ATOMIC_RELEASE);
}

/* The source's or the sink's failure: they have reported it. */
static void eng_fail_reported(gpu_engine *e)
{
    __atomic_exchange_n(&e->why_taken, 1, __ATOMIC_ACQ_REL);
    __atomic_store_n(&e->fatal, 1, __ATOMIC_RELEASE);
}

/* A thread's current device is its own (device 0 when it starts): each
 * engine thread selects the engine's, so that several engines, one a
 * device, never allocate or launch on another's. */
static void use_device(const pipe_opts *o)
{
    if (o->device >= 0)
        CUDA_QUIET(cudaSetDevice(o->device));
}

static void *decode_thread(void *arg)
{
    gpu_engine *e = arg;
    use_device(e->o);
    for (;;) {
        double t0 = tnow(e), t1;
        in_slot *s = q_pop(&e->free_in);
        int r;
        e->t_dec_wait += tnow(e) - t0;
        if (eng_failed(e) || stop_asked(e->o)) {
            e->stopped = stop_asked(e->o);
            break;
        }
        /* The previous H2D from this slot must be done before refilling. */
        if (s->used && CUDA_CHECK(cudaEventSynchronize(s->uploaded)) != cudaSuccess) {
            eng_fail(e);
            break;
        }
        src_frame_host(&s->fr);
        t1 = tnow(e);
        r = e->src->next(e->src->ctx, &s->fr, &s->h);
        e->t_dec_src += tnow(e) - t1;
        if (r < 0)
            eng_fail_reported(e);
        if (r <= 0)
            break;
        q_push(&e->filled_in, s);
    }
    q_push(&e->filled_in, NULL);
    return NULL;
}

static double elapsed(cudaEvent_t a, cudaEvent_t b)
{
    float ms = 0;
    if (cudaEventElapsedTime(&ms, a, b) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return ms;
}

/* The frame an output slot holds came from a device surface. */
static int f_on_device(const out_slot *s) { return s->fr.on_device; }

static void *writer_thread(void *arg)
{
    gpu_engine *e = arg;
    const pipe_opts *o = e->o;
    out_slot *s;
    use_device(o);
    for (;;) {
        double t0 = tnow(e), t1;
        int ok;
        if (!(s = q_pop(&e->done_out)))
            break;
        t1 = tnow(e);
        e->t_wr_wait += t1 - t0;
        ok = !eng_failed(e);
        if (ok && CUDA_CHECK(cudaEventSynchronize(s->ev[EV_DL1])) != cudaSuccess)
            ok = 0;
        e->t_wr_dl += tnow(e) - t1;
        if (ok && s->check && CUDA_CHECK(cudaEventSynchronize(s->ev[EV_CHECK])) != cudaSuccess)
            ok = 0;
        if (s->fr.release) {
            /* A lent frame (a device surface, an image's pixels): EV_DL1
             * follows its upload and the last kernel (and the --cpu-ref
             * copy) reading it, so the source may have it back now.  After
             * a failure, wait for that event anyway (an event never
             * recorded counts as complete). */
            if (!ok)
                CUDA_QUIET(cudaEventSynchronize(s->ev[EV_DL1]));
            src_frame_release(&s->fr);
        }
        if (!ok) {
            eng_fail(e);
            q_push(&e->free_out, s);
            continue;
        }
        const ge_frame *f = &s->fr.f;
        if (o->report) {
            rep_stats *r = o->report;
            rep_add(r, REP_DECODE, s->fr.decode_ms);
            if (!f_on_device(s))
                rep_add(r, REP_UPLOAD, elapsed(s->ev[EV_UP0], s->ev[EV_UP1]));
            if (!s->fused) {
                rep_add(r, REP_GREY, elapsed(s->ev[EV_C0], s->ev[EV_GREY]));
                if (s->blurred) {
                    rep_add(r, REP_BLUR_H, elapsed(s->ev[EV_GREY], s->ev[EV_BH]));
                    rep_add(r, REP_BLUR_V, elapsed(s->ev[EV_BH], s->ev[EV_BV]));
                }
                rep_add(r, REP_SOBEL, elapsed(s->ev[EV_BV], s->ev[EV_SOBEL]));
                if (!s->canny)
                    rep_add(r, REP_HIST, elapsed(s->ev[EV_SOBEL], s->ev[EV_HIST]));
            }
            if (s->canny) { /* the histogram is part of the hysteresis pass */
                rep_add(r, REP_NMS, elapsed(s->ev[EV_SOBEL], s->ev[EV_NMS]));
                rep_add(r, REP_HYST, elapsed(s->ev[EV_NMS], s->ev[EV_HIST]));
            }
            rep_add(r, REP_COMPUTE, elapsed(s->ev[EV_C0], s->ev[EV_HIST]));
            rep_add(r, REP_DOWNLOAD, elapsed(s->ev[EV_DL0], s->ev[EV_DL1]));
            r->frames++;
            r->pixels += (long long)f->width * f->height;
        }
        if (s->check) {
            ge_frame in = *f;
            double t0 = ge_now();
            in.data = s->in_copy.p;
            in.stride = s->in_copy_stride;
            int c = chk_frame(o->check, &in, &o->params, &o->taps,
                              s->fused ? NULL : s->h_grey.p,
                              s->blurred ? s->h_blur_h.p : NULL,
                              s->blurred ? s->h_blur.p : NULL, s->h_edge.p,
                              s->h_hist, job_name(o, s->fr.job), s->fr.index);
            if (c < 0) {
                ge_fail_in(job_name(o, s->fr.job), "cpu-ref: out of memory");
                eng_fail(e);
            }
            if (o->report)
                rep_add(o->report, REP_CHECK, (ge_now() - t0) * 1e3);
        }
        if (!eng_failed(e)) {
            sink_frame sf = {
                .job = s->fr.job, .index = s->fr.index, .pts = s->fr.pts,
                .ts = s->fr.ts, .duration = s->fr.duration,
                .width = f->width, .height = f->height,
                .edge = s->h_edge.p, .hist = s->h_hist,
                .on_device = f_on_device(s),
            };
            sink_png sp;
            if ((sf.coded = coded_packet(&s->code, &sf.coded_bytes))) {
                sf.codes = o->hfyu;
                sf.lend_coded = coded_lend;
                sf.lend_ctx = &s->code;
            }
            sf.png = png_coded(&s->png, &sp);
            double wms = 0, t2 = tnow(e);
            if (e->sink->put(e->sink->ctx, &sf, &wms) < 0)
                eng_fail_reported(e);
            e->t_wr_sink += tnow(e) - t2;
            if (o->report && wms >= 0)
                rep_add(o->report, REP_WRITE, wms);
        }
        q_push(&e->free_out, s);
    }
    return NULL;
}

static int sync_streams(gpu_engine *e)
{
    int ret = 0;
    CUDA_TRY(cudaStreamSynchronize(e->up));
    CUDA_TRY(cudaStreamSynchronize(e->comp));
    CUDA_TRY(cudaStreamSynchronize(e->dl));
end:
    return ret;
}

/* --mem-limit: device buffers are reserved without headroom. */
static int dev_exact(const gpu_engine *e) { return e->o->mem_limit > 0; }

/* Device bytes a buffer of n bytes takes once reserved. */
static size_t dev_size(const gpu_engine *e, size_t n)
{
    return dev_exact(e) ? n : buf_headroom(n);
}

/* Output rows a strip gets for this frame, or h when the whole frame's
 * buffers fit the engine's budget (one ring slot's share of it; the staged
 * path's three float planes are shared by all slots).  0: not even a
 * one-row strip fits (recorded). */
static int plan_strips(const gpu_engine *e, const ge_frame *f, int on_device,
                       const char *name)
{
    const size_t per = e->budget / (size_t)e->nslots;
    const size_t npx = (size_t)f->width * f->height;
    /* a device frame's input is the decoder's surface: no buffer of ours */
    const size_t in_bytes = on_device ? 0 : f->stride * (size_t)f->height;
    size_t whole = dev_size(e, in_bytes) + dev_size(e, npx);
    int rows;

    if (whole >= in_bytes && whole <= per) {
        if (e->fused)
            return f->height;
        if (npx <= (e->budget - whole * (size_t)e->nslots) / (3 * sizeof(float)))
            return f->height;
    }
    rows = strip_rows(f->height, e->o->taps.radius, f->stride, (size_t)f->width, 2, per);
    if (rows < 1) {
        size_t min = strip_bytes(1, e->o->taps.radius, f->stride, (size_t)f->width, 2);
        ge_fail_in(name, "a %dx%d frame does not fit the memory budget (%zu KiB of GPU "
                   "memory a ring slot; a one-row strip needs %zu KiB): raise --mem-limit",
                   f->width, f->height, per >> 10, min >> 10);
    }
    return rows;
}

/* --canny: a hysteresis chain can cross the whole frame, so Canny frames
 * are never split into strips; the frame's buffers plus the Canny scratch
 * (t plane, labels: 8 B a pixel) must fit the budget whole.  Returns h, or
 * 0 (recorded). */
static int plan_canny(const gpu_engine *e, const ge_frame *f, int on_device,
                      const char *name)
{
    const size_t per = e->budget / (size_t)e->nslots;
    const size_t npx = (size_t)f->width * f->height;
    const size_t in_bytes = on_device ? 0 : f->stride * (size_t)f->height;
    const size_t whole = dev_size(e, in_bytes) + dev_size(e, npx);
    const size_t scratch = canny_scratch_bytes(f->width, f->height);
    const size_t planes = e->fused ? 0 : 3 * sizeof(float) * npx;

    if (!scratch) {
        ge_fail_in(name, "a %dx%d frame is too large for --canny on the GPU (2^31 pixels or "
                   "more)", f->width, f->height);
        return 0;
    }
    /* npx < 2^31 here (scratch != 0): no product overflows */
    if (whole >= in_bytes && whole <= per &&
        dev_size(e, scratch) + planes <= e->budget - whole * (size_t)e->nslots)
        return f->height;
    ge_fail_in(name, "a %dx%d frame does not fit the memory budget for --canny (%zu MiB of "
               "GPU memory; Canny frames are processed whole, never in strips, and need %zu "
               "MiB): raise --mem-limit", f->width, f->height, e->budget >> 20,
               (whole * (size_t)e->nslots + dev_size(e, scratch) + planes) >> 20);
    return 0;
}

/* --canny after the blur: Sobel in Canny mode (b == NULL: the fused kernel
 * from df's input; else canny_sobel_gpu over the blurred plane b), --canny
 * auto's thresholds, NMS, hysteresis (kernels/canny.h), into o->d_edge and
 * o->d_hist; records EV_SOBEL, EV_NMS, EV_HIST (and, fused, s->consumed).
 * Returns 0 or -1. */
static int enqueue_canny(gpu_engine *e, in_slot *s, out_slot *o, const ge_frame *df,
                         const float *b)
{
    const pipe_opts *opt = e->o;
    const int w = df->width, h = df->height;
    float *t = canny_t_plane(e->d_canny);
    uint32_t *lab = canny_labels(e->d_canny, w, h);
    float *thr = canny_thr(e->d_canny, w, h);
    const int aut = opt->params.canny == GE_CANNY_AUTO;
    const size_t hb = GE_HIST_BINS * sizeof *o->d_hist;
    int ret = 0;

    CUDA_TRY(cudaMemsetAsync(o->d_hist, 0, hb, e->comp));
    if (!b) {
        CUDA_TRY(fused_canny_window_gpu(df, h, 0, o->d_edge, w, t, w, 0, h, &opt->params,
                                        opt->taps.radius, o->d_hist, e->comp));
        CUDA_TRY(cudaEventRecord(s->consumed, e->comp));
    } else {
        CUDA_TRY(canny_sobel_gpu(b, w, w, h, o->d_edge, w, t, w, &opt->params, o->d_hist,
                                 e->comp));
    }
    CUDA_TRY(cudaEventRecord(o->ev[EV_SOBEL], e->comp));
    /* auto reads step 6's bins and zeroes them; else zero them here */
    if (aut)
        CUDA_TRY(canny_auto_gpu(o->d_hist, (unsigned long long)w * h, thr, e->comp));
    else
        CUDA_TRY(cudaMemsetAsync(o->d_hist, 0, hb, e->comp));
    CUDA_TRY(canny_nms_gpu(o->d_edge, w, t, w, lab, w, h, &opt->params, aut ? thr : NULL,
                           e->comp));
    CUDA_TRY(cudaEventRecord(o->ev[EV_NMS], e->comp));
    CUDA_TRY(canny_hyst_gpu(o->d_edge, w, lab, w, h, &opt->params, o->d_hist,
                            canny_flags(e->d_canny, w, h), e->comp));
    CUDA_TRY(cudaEventRecord(o->ev[EV_HIST], e->comp));
end:
    return ret;
}

/* Enqueues a frame whose buffers do not fit the budget as horizontal
 * strips of `rows` output rows through the fused window kernel:
 * each strip's input window (its rows plus the halo the taps reach,
 * strips.h) is uploaded into one half of d_in, its edge rows computed into
 * one half of d_edge and downloaded to their place in the whole edge map;
 * the halves alternate, so strip k+1 uploads while strip k computes and
 * k-1 downloads.  The histogram accumulates over the strips (zeroed once).
 * The same bits as the whole frame.  Returns 0 or -1. */
static int submit_strips(gpu_engine *e, in_slot *s, out_slot *o, int rows)
{
    const pipe_opts *opt = e->o;
    const ge_frame *f = &s->fr.f;
    const int w = f->width, h = f->height, r = opt->taps.radius;
    const size_t win_cap = ((size_t)rows + 2 * (size_t)r + 2) * f->stride;
    const size_t edge_cap = (size_t)rows * w;
    const int dev = s->fr.on_device;
    int ret = 0, k, y0;

    if (s->used)
        CUDA_TRY(cudaStreamWaitEvent(e->up, s->consumed, 0));
    CUDA_TRY(cudaEventRecord(o->ev[EV_UP0], e->up));
    if (dev && s->fr.ready) /* the decoder's write of the surface */
        CUDA_TRY(cudaStreamWaitEvent(e->comp, (cudaEvent_t)s->fr.ready, 0));
    CUDA_TRY(cudaEventRecord(o->ev[EV_C0], e->comp));
    CUDA_TRY(cudaMemsetAsync(o->d_hist, 0, GE_HIST_BINS * sizeof *o->d_hist, e->comp));
    CUDA_TRY(cudaEventRecord(o->ev[EV_DL0], e->dl));
    for (k = 0, y0 = 0; y0 < h; k++, y0 += rows) {
        const int b = k & 1, y1 = h - y0 > rows ? y0 + rows : h;
        unsigned char *d_win = (unsigned char *)s->d_in + b * win_cap;
        uint8_t *d_edge = o->d_edge + b * edge_cap;
        ge_frame df = *f;
        int lo, hi;

        strip_window(y0, y1, h, r, opt->params.border, &lo, &hi);
        df.data = d_win;
        df.height = hi - lo + 1;
        if (dev) {
            /* the window is already in device memory: read it in place */
            df.data = (const unsigned char *)f->data + (size_t)lo * f->stride;
        } else {
            if (k >= 2)
                CUDA_TRY(cudaStreamWaitEvent(e->up, s->s_read[b], 0));
            CUDA_TRY(cudaMemcpyAsync(d_win, (const unsigned char *)f->data + (size_t)lo * f->stride,
                                     (size_t)df.height * f->stride, cudaMemcpyHostToDevice, e->up));
            CUDA_TRY(cudaEventRecord(s->s_up[b], e->up));
            CUDA_TRY(cudaStreamWaitEvent(e->comp, s->s_up[b], 0));
        }
        if (k >= 2)
            CUDA_TRY(cudaStreamWaitEvent(e->comp, o->s_dl[b], 0));
        CUDA_TRY(fused_window_gpu(&df, h, lo, d_edge, w, y0, y1 - y0, &opt->params, r,
                                  o->d_hist, e->comp));
        CUDA_TRY(cudaEventRecord(s->s_read[b], e->comp));
        CUDA_TRY(cudaEventRecord(o->s_done[b], e->comp));

        CUDA_TRY(cudaStreamWaitEvent(e->dl, o->s_done[b], 0));
        CUDA_TRY(cudaMemcpyAsync((uint8_t *)o->h_edge.p + (size_t)y0 * w, d_edge,
                                 (size_t)(y1 - y0) * w, cudaMemcpyDeviceToHost, e->dl));
        CUDA_TRY(cudaEventRecord(o->s_dl[b], e->dl));
    }
    CUDA_TRY(cudaEventRecord(o->ev[EV_UP1], e->up));
    CUDA_TRY(cudaEventRecord(s->uploaded, e->up));
    CUDA_TRY(cudaEventRecord(o->ev[EV_HIST], e->comp));
    CUDA_TRY(cudaEventRecord(s->consumed, e->comp));
    CUDA_TRY(cudaStreamWaitEvent(e->dl, o->ev[EV_HIST], 0));
    CUDA_TRY(cudaMemcpyAsync(o->h_hist, o->d_hist, GE_HIST_BINS * sizeof *o->h_hist,
                             cudaMemcpyDeviceToHost, e->dl));
    o->code.on = o->png.on = 0; /* strips: no packet, the pixels go out */
    CUDA_TRY(cudaEventRecord(o->ev[EV_DL1], e->dl));
    s->used = 1;
end:
    return ret;
}

/* Grows the device buffers this frame needs (rare: the first frame, a
 * larger one, or the first frame in strips).  0, or -1 (reported). */
static int grow_device(gpu_engine *e, in_slot *s, out_slot *o, int rows, const char *name)
{
    const pipe_opts *opt = e->o;
    const ge_frame *f = &s->fr.f;
    const int w = f->width, h = f->height, dev = s->fr.on_device;
    const size_t npx = (size_t)w * h;
    const size_t in_bytes = dev ? 0 : f->stride * (size_t)h;
    const int fused = e->fused || rows < h;

    if (rows < h) {
        const size_t win = dev ? 0 : ((size_t)rows + 2 * (size_t)opt->taps.radius + 2) * f->stride;
        if (2 * win > s->d_cap || 2 * (size_t)rows * w > o->d_edge_cap) {
            if (sync_streams(e) ||
                dev_reserve(&s->d_in, &s->d_cap, 2 * win, 1, name) ||
                dev_reserve((void **)&o->d_edge, &o->d_edge_cap, 2 * (size_t)rows * w, 1, name))
                return -1;
        }
        if (ge_verbose && s->fr.job != e->strip_job)
            ge_note("%s: %dx%d frame in %d strips of %d rows (GPU memory budget %zu MiB)",
                    name ? name : "frame", w, h, (h + rows - 1) / rows, rows, e->budget >> 20);
        e->strip_job = s->fr.job;
        e->strip_frames++;
    } else if ((!fused && npx > e->plane_cap) || in_bytes > s->d_cap || npx > o->d_edge_cap) {
        size_t cap;
        if (sync_streams(e))
            return -1;
        cap = e->plane_cap * sizeof(float);
        if (!fused && npx * sizeof(float) > cap) {
            size_t c1 = cap, c2 = cap;
            if (dev_reserve((void **)&e->d_grey, &cap, npx * sizeof(float), dev_exact(e), name) ||
                dev_reserve((void **)&e->d_blur_h, &c1, npx * sizeof(float), dev_exact(e), name) ||
                dev_reserve((void **)&e->d_blur, &c2, npx * sizeof(float), dev_exact(e), name))
                return -1;
            e->plane_cap = cap / sizeof(float);
        }
        if (dev_reserve(&s->d_in, &s->d_cap, in_bytes, dev_exact(e), name) ||
            dev_reserve((void **)&o->d_edge, &o->d_edge_cap, npx, dev_exact(e), name))
            return -1;
    }
    if (opt->params.canny != GE_CANNY_OFF && canny_scratch_bytes(w, h) > e->canny_cap &&
        (sync_streams(e) ||
         dev_reserve(&e->d_canny, &e->canny_cap, canny_scratch_bytes(w, h), dev_exact(e), name)))
        return -1;
    return 0;
}

/* The host side of one output slot: its edge map, and for a --cpu-ref
 * frame the input's copy and (staged) the float planes.  A device frame's
 * input comes to the host in the compute stream, before the kernels (the
 * writer's wait on EV_DL1 covers it).  0, or -1 (reported). */
static int prepare_out(gpu_engine *e, in_slot *s, out_slot *o, const char *name)
{
    int ret = 0;
    const ge_frame *f = &s->fr.f;
    const int w = f->width, h = f->height, dev = s->fr.on_device;
    const size_t npx = (size_t)w * h;
    const size_t row_bytes = (size_t)w * f->channels * f->bytes_per_sample;
    const size_t copy_stride = dev ? row_bytes : f->stride;

    if (host_buf_reserve(&o->h_edge, npx))
        goto oom;
    if (!o->check)
        return 0;
    if ((!o->fused && (host_buf_reserve(&o->h_grey, npx * sizeof(float)) ||
                       host_buf_reserve(&o->h_blur_h, npx * sizeof(float)) ||
                       host_buf_reserve(&o->h_blur, npx * sizeof(float)))) ||
        host_buf_reserve(&o->in_copy, copy_stride * (size_t)h))
        goto oom;
    o->in_copy_stride = copy_stride;
    if (!dev) {
        memcpy(o->in_copy.p, f->data, f->stride * (size_t)h);
    } else {
        if (s->fr.ready)
            CUDA_TRY(cudaStreamWaitEvent(e->comp, (cudaEvent_t)s->fr.ready, 0));
        CUDA_TRY(cudaMemcpy2DAsync(o->in_copy.p, copy_stride, f->data, f->stride, row_bytes,
                                   (size_t)h, cudaMemcpyDeviceToHost, e->comp));
    }
end:
    return ret;
oom:
    return ge_fail_in(name, "out of host memory for a %dx%d frame", w, h);
}

/* The staged path in the compute stream: grey, blur H, blur V, then Sobel
 * and the histogram (or Canny), each stage's plane materialised and timed
 * by its event; a --cpu-ref frame's planes come back in the same stream,
 * since the next frame's kernels overwrite them.  0 or -1. */
static int enqueue_staged(gpu_engine *e, in_slot *s, out_slot *o, const ge_frame *df)
{
    const pipe_opts *opt = e->o;
    const int w = df->width, h = df->height;
    const size_t npx = (size_t)w * h;
    const int blur = opt->taps.radius > 0;
    const float *b;
    int ret = 0;

    CUDA_TRY(grey_gpu(df, e->d_grey, w, e->comp));
    CUDA_TRY(cudaEventRecord(o->ev[EV_GREY], e->comp));
    CUDA_TRY(cudaEventRecord(s->consumed, e->comp));
    if (blur) {
        CUDA_TRY(blur_h_gpu(e->d_grey, w, e->d_blur_h, w, w, h, opt->params.border, e->comp));
        CUDA_TRY(cudaEventRecord(o->ev[EV_BH], e->comp));
        CUDA_TRY(blur_v_gpu(e->d_blur_h, w, w, h, 0, h, e->d_blur, w, 0, h,
                            opt->params.border, e->comp));
        b = e->d_blur;
    } else {
        b = e->d_grey;
    }
    CUDA_TRY(cudaEventRecord(o->ev[EV_BV], e->comp));
    if (o->canny) {
        if (enqueue_canny(e, s, o, df, b))
            return -1;
    } else {
        CUDA_TRY(sobel_gpu(b, w, w, h, 0, h, o->d_edge, w, 0, h, &opt->params, e->comp));
        CUDA_TRY(cudaEventRecord(o->ev[EV_SOBEL], e->comp));
        CUDA_TRY(cudaMemsetAsync(o->d_hist, 0, GE_HIST_BINS * sizeof *o->d_hist, e->comp));
        CUDA_TRY(histogram_gpu(o->d_edge, w, w, h, o->d_hist, e->comp));
        CUDA_TRY(cudaEventRecord(o->ev[EV_HIST], e->comp));
    }
    if (o->check) {
        CUDA_TRY(cudaMemcpyAsync(o->h_grey.p, e->d_grey, npx * sizeof(float),
                                 cudaMemcpyDeviceToHost, e->comp));
        if (blur) {
            CUDA_TRY(cudaMemcpyAsync(o->h_blur_h.p, e->d_blur_h, npx * sizeof(float),
                                     cudaMemcpyDeviceToHost, e->comp));
            CUDA_TRY(cudaMemcpyAsync(o->h_blur.p, e->d_blur, npx * sizeof(float),
                                     cudaMemcpyDeviceToHost, e->comp));
        }
        CUDA_TRY(cudaEventRecord(o->ev[EV_CHECK], e->comp));
    }
end:
    return ret;
}

/* Enqueues one frame: upload (host frames), compute, download.  0 or -1. */
static int submit(gpu_engine *e, in_slot *s, out_slot *o, long seq)
{
    const pipe_opts *opt = e->o;
    const ge_frame *f = &s->fr.f;
    const int w = f->width, h = f->height;
    const size_t npx = (size_t)w * h;
    /* a device frame: no input buffer of ours (the kernels read the
     * decoder's surface), and --cpu-ref gets its rows packed */
    const int dev = s->fr.on_device;
    const char *name = job_name(opt, s->fr.job);
    const int canny = opt->params.canny != GE_CANNY_OFF;
    const int rows = canny ? plan_canny(e, f, dev, name) : plan_strips(e, f, dev, name);
    const int strips = rows < h;
    const int fused = e->fused || strips;
    ge_frame df = *f;
    int ret = 0;

    if (rows < 1 || grow_device(e, s, o, rows, name))
        return -1;
    o->fr = s->fr;
    o->canny = canny;
    o->blurred = opt->taps.radius > 0 && !fused;
    o->fused = fused;
    o->check = opt->cpu_ref_every > 0 && seq % opt->cpu_ref_every == 0;
    if (prepare_out(e, s, o, name))
        return -1;
    if (strips)
        return submit_strips(e, s, o, rows);

    if (!dev) {
        /* upload stream: wait until the last grey kernel has read d_in */
        if (s->used)
            CUDA_TRY(cudaStreamWaitEvent(e->up, s->consumed, 0));
        CUDA_TRY(cudaEventRecord(o->ev[EV_UP0], e->up));
        CUDA_TRY(cudaMemcpyAsync(s->d_in, f->data, f->stride * (size_t)h, cudaMemcpyHostToDevice,
                                 e->up));
        CUDA_TRY(cudaEventRecord(o->ev[EV_UP1], e->up));
        CUDA_TRY(cudaEventRecord(s->uploaded, e->up));
        df.data = s->d_in;
        CUDA_TRY(cudaStreamWaitEvent(e->comp, o->ev[EV_UP1], 0));
    } else if (s->fr.ready) {
        /* no upload: the kernels wait for the decoder's write */
        CUDA_TRY(cudaStreamWaitEvent(e->comp, (cudaEvent_t)s->fr.ready, 0));
    }

    /* compute stream */
    CUDA_TRY(cudaEventRecord(o->ev[EV_C0], e->comp));
    if (fused && canny) {
        if (enqueue_canny(e, s, o, &df, NULL))
            return -1;
    } else if (fused) {
        /* grey -> blur -> Sobel -> edge + histogram in one kernel, the
         * library's entry (api.c, as ge_process_device): the float planes
         * never reach device memory */
        CUDA_TRY((cudaError_t)api_gpu_frame(e->ctx, &df, o->d_edge, w, o->d_hist, e->comp));
        CUDA_TRY(cudaEventRecord(o->ev[EV_HIST], e->comp));
        CUDA_TRY(cudaEventRecord(s->consumed, e->comp));
    } else if (enqueue_staged(e, s, o, &df)) {
        return -1;
    }

    /* download stream */
    CUDA_TRY(cudaStreamWaitEvent(e->dl, o->ev[EV_HIST], 0));
    CUDA_TRY(cudaEventRecord(o->ev[EV_DL0], e->dl));
    CUDA_TRY(cudaMemcpyAsync(o->h_edge.p, o->d_edge, npx, cudaMemcpyDeviceToHost, e->dl));
    CUDA_TRY(cudaMemcpyAsync(o->h_hist, o->d_hist, GE_HIST_BINS * sizeof *o->h_hist,
                             cudaMemcpyDeviceToHost, e->dl));
    /* a .mkv writer's frame: its FFVHuff packet too (not with --mem-limit) */
    o->code.on = 0;
    if (opt->hfyu && !dev_exact(e) && opt->code_job(opt->job_ctx, o->fr.job) &&
        coded_enqueue(&o->code, o->d_edge, w, h, opt->hfyu, e->comp, e->dl, name))
        return -1;
    /* a PNG writer's: its image data too */
    o->png.on = 0;
    if (opt->png_piece_bytes && !dev_exact(e) && opt->png_job(opt->job_ctx, o->fr.job) &&
        png_enqueue(&o->png, o->d_edge, w, h, opt->png_piece_bytes, e->comp, e->dl, name))
        return -1;
    CUDA_TRY(cudaEventRecord(o->ev[EV_DL1], e->dl));
    s->used = 1;
end:
    return ret;
}

static int engine_init(gpu_engine *e)
{
    int ret = 0;
    q_init(&e->free_in);
    q_init(&e->filled_in);
    q_init(&e->free_out);
    q_init(&e->done_out);
    CUDA_TRY(cudaStreamCreateWithFlags(&e->up, cudaStreamNonBlocking));
    CUDA_TRY(cudaStreamCreateWithFlags(&e->comp, cudaStreamNonBlocking));
    CUDA_TRY(cudaStreamCreateWithFlags(&e->dl, cudaStreamNonBlocking));
    /* GPU memory for the frame buffers: --mem-limit, else most of what is
     * free now (the rest for the runtime, other processes and fragmentation).
     * Pinned host buffers: each within a share of --mem-limit. */
    {
        size_t fr = 0, tot = 0, stack = 0;
        e->strip_job = -1;
        /* the PNG coder's table step needs more stack a thread than the
         * default; raised now, before the budget, since the driver would
         * raise it at the first launch and reserve it for every thread the
         * device can hold (png_gpu.h) */
        if (e->o->png_piece_bytes) {
            size_t need = png_gpu_stack_bytes();
            CUDA_TRY(cudaDeviceGetLimit(&stack, cudaLimitStackSize));
            if (need > stack)
                CUDA_TRY(cudaDeviceSetLimit(cudaLimitStackSize, need));
        }
        if (dev_exact(e)) {
            e->budget = e->o->mem_limit;
        } else {
            CUDA_TRY(cudaMemGetInfo(&fr, &tot));
            e->budget = fr / 10 * 8;
        }
    }
    for (int i = 0; i < e->nslots; i++) {
        in_slot *s = &e->in[i];
        s->h.pinned = 1;
        s->h.pin_max = e->o->mem_limit / (2 * (size_t)e->nslots);
        CUDA_TRY(cudaEventCreateWithFlags(&s->uploaded, cudaEventDisableTiming | cudaEventBlockingSync));
        CUDA_TRY(cudaEventCreateWithFlags(&s->consumed, cudaEventDisableTiming));
        for (int k = 0; k < 2; k++) {
            CUDA_TRY(cudaEventCreateWithFlags(&s->s_up[k], cudaEventDisableTiming));
            CUDA_TRY(cudaEventCreateWithFlags(&s->s_read[k], cudaEventDisableTiming));
        }
        q_push(&e->free_in, s);
    }
    if (!(e->coded = coded_pool_new()))
        return ge_fail("out of host memory");
    for (int i = 0; i < e->nslots; i++) {
        out_slot *s = &e->out[i];
        s->code.pool = e->coded;
        s->h_edge.pinned = s->h_grey.pinned = s->h_blur_h.pinned = s->h_blur.pinned = 1;
        s->h_edge.pin_max = s->h_grey.pin_max = s->h_blur_h.pin_max = s->h_blur.pin_max =
            e->o->mem_limit / (2 * (size_t)e->nslots);
        CUDA_TRY(cudaMallocHost((void **)&s->h_hist, GE_HIST_BINS * sizeof *s->h_hist));
        CUDA_TRY(cudaMalloc((void **)&s->d_hist, GE_HIST_BINS * sizeof *s->d_hist));
        for (int k = 0; k < EV_N; k++)
            CUDA_TRY(cudaEventCreateWithFlags(&s->ev[k], cudaEventBlockingSync));
        for (int k = 0; k < 2; k++) {
            CUDA_TRY(cudaEventCreateWithFlags(&s->s_done[k], cudaEventDisableTiming));
            CUDA_TRY(cudaEventCreateWithFlags(&s->s_dl[k], cudaEventDisableTiming));
        }
        q_push(&e->free_out, s);
    }
    /* The fused kernel checks the radius against its tap table, sigma 0
     * (radius 0) included; the staged blur is not launched at radius 0. */
    /* The staged engine needs the fused taps too: frames too big for its
     * budget run as fused strips. */
    CUDA_TRY(fused_set_taps_gpu(&e->o->taps, e->comp));
    if (!e->fused && e->o->taps.radius > 0)
        CUDA_TRY(gaussian_set_taps_gpu(&e->o->taps, e->comp));
end:
    return ret;
}

static void engine_free(gpu_engine *e)
{
    if (e->up) CUDA_QUIET(cudaStreamSynchronize(e->up));
    if (e->comp) CUDA_QUIET(cudaStreamSynchronize(e->comp));
    if (e->dl) CUDA_QUIET(cudaStreamSynchronize(e->dl));
    for (int i = 0; i < e->nslots; i++) {
        in_slot *s = &e->in[i];
        host_buf_free(&s->h);
        if (s->d_in) CUDA_QUIET(cudaFree(s->d_in));
        if (s->uploaded) CUDA_QUIET(cudaEventDestroy(s->uploaded));
        if (s->consumed) CUDA_QUIET(cudaEventDestroy(s->consumed));
        for (int k = 0; k < 2; k++) {
            if (s->s_up[k]) CUDA_QUIET(cudaEventDestroy(s->s_up[k]));
            if (s->s_read[k]) CUDA_QUIET(cudaEventDestroy(s->s_read[k]));
        }
    }
    for (int i = 0; i < e->nslots; i++) {
        out_slot *s = &e->out[i];
        host_buf_free(&s->h_edge);
        host_buf_free(&s->h_grey);
        host_buf_free(&s->h_blur_h);
        host_buf_free(&s->h_blur);
        host_buf_free(&s->in_copy);
        if (s->h_hist) CUDA_QUIET(cudaFreeHost(s->h_hist));
        if (s->d_edge) CUDA_QUIET(cudaFree(s->d_edge));
        if (s->d_hist) CUDA_QUIET(cudaFree(s->d_hist));
        coded_free(&s->code);
        png_free(&s->png);
        for (int k = 0; k < EV_N; k++)
            if (s->ev[k]) CUDA_QUIET(cudaEventDestroy(s->ev[k]));
        for (int k = 0; k < 2; k++) {
            if (s->s_done[k]) CUDA_QUIET(cudaEventDestroy(s->s_done[k]));
            if (s->s_dl[k]) CUDA_QUIET(cudaEventDestroy(s->s_dl[k]));
        }
    }
    coded_pool_close(e->coded);
    if (e->d_grey) CUDA_QUIET(cudaFree(e->d_grey));
    if (e->d_blur_h) CUDA_QUIET(cudaFree(e->d_blur_h));
    if (e->d_blur) CUDA_QUIET(cudaFree(e->d_blur));
    if (e->d_canny) CUDA_QUIET(cudaFree(e->d_canny));
    if (e->up) CUDA_QUIET(cudaStreamDestroy(e->up));
    if (e->comp) CUDA_QUIET(cudaStreamDestroy(e->comp));
    if (e->dl) CUDA_QUIET(cudaStreamDestroy(e->dl));
    q_destroy(&e->free_in);
    q_destroy(&e->filled_in);
    q_destroy(&e->free_out);
    q_destroy(&e->done_out);
}

int pipe_run_gpu(const pipe_opts *o, frame_source *src, frame_sink *sink)
{
    gpu_engine *e = calloc(1, sizeof *e);
    pthread_t dec, wr;
    int have_dec = 0, have_wr = 0, ret;
    long seq = 0;
    in_slot *s;

    if (!e)
        return ge_fail("out of memory");
    use_device(o);
    e->o = o;
    e->nslots = o->slots > 0 ? (o->slots < PIPE_MAX_SLOTS ? o->slots : PIPE_MAX_SLOTS)
                             : PIPE_DEFAULT_SLOTS;
    e->trace = ge_trace("pipe");
    e->src = src;
    e->sink = sink;
    e->fused = !o->staged;
    e->ctx = o->ctx;
    if (!e->ctx) {
        if (api_ctx_for_engine(&e->ctx, &o->params, GE_BACKEND_GPU,
                               o->device >= 0 ? o->device : 0, o->threads) < 0) {
            free(e); /* (the library recorded why) */
            return -1;
        }
        e->own_ctx = 1;
    }
    if (o->report) {
        o->report->backend = "gpu";
        o->report->path = e->fused ? "fused" : "staged";
    }
    if (engine_init(e))
        goto fail;
    if (pthread_create(&wr, NULL, writer_thread, e)) {
        ge_fail("cannot start the writer thread");
        goto fail;
    }
    have_wr = 1;
    if (pthread_create(&dec, NULL, decode_thread, e)) {
        ge_fail("cannot start the decode thread");
        goto fail;
    }
    have_dec = 1;

    for (;;) {
        double t0 = tnow(e), t1;
        if (!(s = q_pop(&e->filled_in)))
            break;
        t1 = tnow(e);
        e->t_sub_in += t1 - t0;
        if (!eng_failed(e)) {
            out_slot *os = q_pop(&e->free_out);
            double t2 = tnow(e);
            int rs;
            e->t_sub_out += t2 - t1;
            rs = submit(e, s, os, seq++);
            e->t_sub += tnow(e) - t2;
            if (rs == 0) {
                s->fr.release = NULL; /* the output slot's copy owns it now */
                q_push(&e->done_out, os);
            } else {
                eng_fail(e);
                os->fr.release = NULL;
                q_push(&e->free_out, os);
                /* part of the frame's work may be queued: let it finish
                 * before the decoder gets the surface back */
                if (s->fr.release)
                    sync_streams(e);
            }
        }
        src_frame_release(&s->fr); /* a lent frame dropped unprocessed */
        q_push(&e->free_in, s);
    }
fail:
    if (!have_dec || !have_wr)
        eng_fail(e);
    if (have_dec)
        pthread_join(dec, NULL);
    if (have_wr) {
        q_push(&e->done_out, NULL);
        pthread_join(wr, NULL);
    }
    ret = eng_failed(e) ? -1 : (e->stopped || stop_asked(o)) ? GE_STOPPED : 0;
    if (e->trace)
        ge_note("pipe trace (%d slots): decode thread waiting for a slot %.3f s, in the source "
                "%.3f s; submitting thread waiting for a frame %.3f s, for an output slot "
                "%.3f s, submitting %.3f s; writer waiting for a frame %.3f s, for its "
                "download %.3f s, in the sink %.3f s", e->nslots, e->t_dec_wait, e->t_dec_src,
                e->t_sub_in, e->t_sub_out, e->t_sub, e->t_wr_wait, e->t_wr_dl, e->t_wr_sink);
    if (o->report && e->strip_frames)
        o->report->path = e->fused ? "fused (strips)" : "staged (big frames: fused strips)";
    if (sink->finish(sink->ctx, ret != 0) < 0 && ret == 0)
        ret = -1;
    /* after finish, which may leave records of its own */
    if (ret == -1 && e->has_why)
        ge_why_load(&e->why);
    else if (ret == -1)
        ge_why_clear();
    engine_free(e);
    if (e->own_ctx)
        ge_ctx_free(&e->ctx);
    free(e);
    return ret;
}
#else /* !GE_CUDA: the CPU-only variant never finds a GPU, so never gets here */

int pipe_run_gpu(const pipe_opts *o, frame_source *src, frame_sink *sink)
{
    (void)o;
    (void)src;
    (void)sink;
    return ge_fail("the GPU engine: %s", GPU_NONE_WHY);
}

#endif /* GE_CUDA */

/* ------------------------------------------------------------------------ */
/* CPU engine: the same source and sink, sequential, the backend threaded    */

int pipe_run_cpu(const pipe_opts *o, frame_source *src, frame_sink *sink)
{
    host_buf in = {0}, edge = {0}, grey = {0}, blur_h = {0}, blur = {0};
    long seq = 0;
    int ret = 0, r;
    src_frame fr;
    ge_ctx *ctx = o->ctx, *own = NULL;
    ge_why_rec why; /* the engine's own failure, kept over finish() */
    int has_why = 0;

    if (!ctx) {
        if (api_ctx_for_engine(&own, &o->params, GE_BACKEND_CPU, 0, o->threads) < 0)
            return -1; /* (the library recorded why) */
        ctx = own;
    }
    if (o->report) {
        o->report->backend = "cpu";
        o->report->path = "cpu";
    }
    src_frame_host(&fr);
    for (;;) {
        const ge_frame *f = &fr.f;
        const char *name;
        ge_planes pl;
        double t0, wms = 0;
        size_t npx;
        int check;

        /* the frame before is written: a buffer the source lent it (a
         * host frame's release) goes back before the next is asked for */
        src_frame_release(&fr);
        src_frame_host(&fr);
        if (stop_asked(o) || (r = src->next(src->ctx, &fr, &in)) == 0)
            break;
        if (r < 0) {
            ret = -1;
            break;
        }
        npx = (size_t)f->width * f->height;
        check = o->cpu_ref_every > 0 && seq++ % o->cpu_ref_every == 0;
        name = job_name(o, fr.job);
        if (fr.on_device) {
            /* sources make device frames only for the GPU engine */
            src_frame_release(&fr);
            ret = ge_fail_in(name, "internal error: a device frame reached the CPU backend");
            has_why = 1;
            break;
        }
        memset(&pl, 0, sizeof pl);
        if (host_buf_reserve(&edge, npx) ||
            (check && (host_buf_reserve(&grey, npx * sizeof(float)) ||
                       host_buf_reserve(&blur_h, npx * sizeof(float)) ||
                       host_buf_reserve(&blur, npx * sizeof(float))))) {
            ret = ge_fail_in(name, "out of memory for a %dx%d frame", f->width, f->height);
            has_why = 1;
            break;
        }
        pl.edge = edge.p;
        if (check) {
            pl.grey = grey.p;
            pl.blur_h = blur_h.p;
            pl.blur = blur.p;
        }
        t0 = ge_now();
        /* the library's CPU entry (api.c), as ge_process */
        r = api_cpu_frame(ctx, f, o->mem_limit, &pl, o->stop);
        if (r == GE_STOPPED)
            break;
        if (r == GE_OVER_BUDGET) {
            ret = ge_fail_in(name, "a %dx%d frame does not fit the memory budget (%zu KiB; "
                             "one row band needs %zu KiB): raise --mem-limit", f->width,
                             f->height, o->mem_limit >> 10,
                             cpu_scratch_bytes(f->width, f->height, o->params.sigma, 1) >> 10);
            has_why = 1;
            break;
        }
        if (r < 0) {
            ret = ge_fail_in(name, "out of memory or threads for a %dx%d frame", f->width,
                             f->height);
            has_why = 1;
            break;
        }
        if (o->report) {
            rep_add(o->report, REP_DECODE, fr.decode_ms);
            rep_add(o->report, REP_COMPUTE, (ge_now() - t0) * 1e3);
            o->report->frames++;
            o->report->pixels += (long long)npx;
        }
        t0 = ge_now();
        if (check && chk_frame(o->check, f, &o->params, &o->taps, pl.grey,
                               o->taps.radius ? pl.blur_h : NULL,
                               o->taps.radius ? pl.blur : NULL, pl.edge, pl.hist,
                               name, fr.index) < 0) {
            ret = ge_fail_in(name, "cpu-ref: out of memory");
            has_why = 1;
            break;
        }
        if (check && o->report)
            rep_add(o->report, REP_CHECK, (ge_now() - t0) * 1e3);
        {
            sink_frame sf = {
                .job = fr.job, .index = fr.index, .pts = fr.pts,
                .ts = fr.ts, .duration = fr.duration,
                .width = f->width, .height = f->height,
                .edge = pl.edge, .hist = pl.hist,
            };
            if (sink->put(sink->ctx, &sf, &wms) < 0) {
                ret = -1;
                break;
            }
            if (o->report && wms >= 0)
                rep_add(o->report, REP_WRITE, wms);
        }
    }
    src_frame_release(&fr);
    if (ret == 0 && stop_asked(o))
        ret = GE_STOPPED;
    if (has_why)
        ge_why_save(&why);
    if (sink->finish(sink->ctx, ret != 0) < 0 && ret == 0)
        ret = -1;
    /* after finish, which may leave records of its own */
    if (ret == -1 && has_why)
        ge_why_load(&why);
    else if (ret == -1)
        ge_why_clear();
    host_buf_free(&in);
    host_buf_free(&edge);
    host_buf_free(&grey);
    host_buf_free(&blur_h);
    host_buf_free(&blur);
    ge_ctx_free(&own);
    return ret;
}
