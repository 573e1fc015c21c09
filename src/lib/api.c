/*
 * api.c — libgpuedge's public calls (include/gpuedge.h) over the engine:
 * the CPU backend (cpu_backend.c) and the fused kernel (kernels/fused.cu).
 *
 * Contexts hold their parameters, taps and scratch (host edge rows for a
 * strided output; on a GPU context a private stream and device buffers
 * for the host call).  Nothing here prints or exits: failures become a
 * ge_status and a text kept in the context and in the calling thread.
 *
 * The one shared state: the fused kernel reads its Gaussian taps from a
 * __constant__ table, one per device (fused_set_taps_gpu).  Contexts of
 * different sigma on one device must not overwrite it under each other's
 * queued kernels, so every launch happens under g_taps_lock, which records
 * which taps each device holds; a context that needs other taps first
 * waits (host-side, on events) for every kernel the device's contexts
 * have queued since the last change, then loads its own synchronously on
 * its private stream.  Contexts of equal sigma never wait: the lock is
 * held only to queue a launch and record an event.
 */
#define GE_BUILDING_LIB 1
#include "api.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_backend.h"
#include "gpu.h"
#include "util.h"

/* The GPU contexts: CUDA builds only.  The CPU-only variant (make CUDA=0)
 * keeps the host API and CPU contexts; a GPU context fails in probe with
 * GE_ERR_NOGPU "built without CUDA", and ge_process_device likewise. */
#if GE_CUDA
#include <cuda_runtime_api.h>

#include "canny.h"
#include "fused.h"

cudaError_t kernels_probe_gpu(void); /* kernels/probe.cu */
#endif

_Static_assert(GE_HIST_BINS == 256, "gpuedge.h and edge.h agree");
_Static_assert(sizeof(unsigned long long) == sizeof(uint64_t), "hist counts");

/* Canny (DESIGN.md §1.8) on the GPU backend (kernels/canny.h).  In
 * the CPU-only variant an auto context runs it on the CPU, as any other. */
#define API_GPU_CANNY GE_CUDA

#define API_ERR_LEN 256
#define API_MAX_DEVICES 64

struct ge_ctx {
    ge_options opt;
    ge_params p;
    ge_taps taps;
    int backend;            /* GE_BACKEND_GPU or GE_BACKEND_CPU */
    int nthreads;           /* CPU threads: opt.threads, or ge_cpu_count() for 0 */
    int order;              /* GE_ORDER_RGB or GE_ORDER_BGR (ge_ctx_set_order) */
    char err[API_ERR_LEN];
    uint8_t *h_edge;        /* CPU: packed edge rows for a strided output */
    size_t h_edge_cap;
    uint8_t *h_swz;         /* BGR frames reordered to RGB (host paths) */
    size_t h_swz_cap;
    /* GPU */
    struct CUstream_st *stream; /* cudaStream_t: host calls, and taps loads */
    void *d_in;
    size_t d_in_cap;
    uint8_t *d_edge;
    size_t d_edge_cap;
    unsigned long long *d_hist;
    unsigned long long *d_hists; /* host calls: 256 counts a frame of the batch */
    size_t d_hists_cap;
    void *d_canny;          /* Canny scratch (canny_scratch_bytes) */
    size_t d_canny_cap;
    struct CUevent_st *launched; /* cudaEvent_t: after this context's last fused launch */
    int has_launched;       /* `launched` recorded since the last taps change */
    struct ge_ctx *next;    /* g_gpu_ctxs */
};

#if GE_CUDA
static pthread_mutex_t g_taps_lock = PTHREAD_MUTEX_INITIALIZER;
static ge_ctx *g_gpu_ctxs;            /* every live GPU context */
static struct {
    int loaded;                       /* taps below are in the device's table */
    ge_taps taps;
} g_dev[API_MAX_DEVICES];
static int g_radius_set = -1;         /* the radius of the last load (fused.cu
                                         checks launches against it) */
#endif

/* ------------------------------------------------------------------------ */
/* errors                                                                    */

static int fail(ge_ctx *c, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The thread's text is the error record every layer shares (util.h,
 * DESIGN.md §9); a context keeps a copy of its own (gpuedge.h "Errors"). */
static int fail(ge_ctx *c, int status, const char *fmt, ...)
{
    char text[API_ERR_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    if (c)
        memcpy(c->err, text, sizeof c->err);
    return ge_fail_code(status, "%s", text);
}

#if GE_CUDA
static int fail_cuda(ge_ctx *c, const char *what, cudaError_t e)
{
    cudaGetLastError(); /* clear a non-sticky error for the caller */
    if (e == cudaErrorMemoryAllocation)
        return fail(c, GE_ERR_NOMEM, "%s: out of GPU memory", what);
    return fail(c, GE_ERR_CUDA, "%s: %s", what, cudaGetErrorString(e));
}
#endif

GE_API const char *ge_last_error(const ge_ctx *ctx)
{
    return ctx ? ctx->err : ge_why();
}

GE_API const char *ge_strerror(int status)
{
    switch (status) {
    case GE_OK: return "success";
    case GE_ERR_ARG: return "bad argument";
    case GE_ERR_NOMEM: return "out of memory";
    case GE_ERR_NOGPU: return "no usable GPU";
    case GE_ERR_CUDA: return "CUDA error";
    case GE_ERR_UNSUPPORTED: return "not supported by this context";
    default: return "unknown status";
    }
}

#define API_STR_(x) #x
#define API_STR(x) API_STR_(x)
GE_API const char *ge_version(void)
{
    return API_STR(GE_VERSION_MAJOR) "." API_STR(GE_VERSION_MINOR) "." API_STR(GE_VERSION_PATCH);
}

GE_API int ge_version_number(void)
{
    return GE_VERSION_NUMBER;
}

/* ------------------------------------------------------------------------ */
/* contexts                                                                  */

GE_API void ge_options_init(ge_options *o)
{
    if (!o)
        return;
    memset(o, 0, sizeof *o);
    o->backend = GE_BACKEND_AUTO;
    o->sigma = 1.0;
    o->border = GE_BORDER_REPLICATE;
    o->scale = 1.0f;
}

/* The CLI's rules for the same options (cli.c, DESIGN.md §1, §1.8). */
static int check_params(const ge_params *p, ge_taps *taps)
{
    if (!(p->sigma == 0 || (p->sigma >= GE_SIGMA_MIN && p->sigma <= GE_SIGMA_MAX)))
        return fail(NULL, GE_ERR_ARG, "sigma %g: expected 0 or %g to %g", p->sigma,
                    GE_SIGMA_MIN, GE_SIGMA_MAX);
    if (p->border < GE_BORDER_REPLICATE || p->border > GE_BORDER_ZERO)
        return fail(NULL, GE_ERR_ARG, "border %d: expected GE_BORDER_REPLICATE, "
                    "GE_BORDER_REFLECT101 or GE_BORDER_ZERO", p->border);
    if (!(p->scale > 0) || !isfinite(p->scale))
        return fail(NULL, GE_ERR_ARG, "scale %g: expected a finite number greater than 0",
                    (double)p->scale);
    if (p->use_threshold && !(p->threshold >= 0 && p->threshold <= 255))
        return fail(NULL, GE_ERR_ARG, "threshold %g: expected 0 to 255", (double)p->threshold);
    if (p->canny < GE_CANNY_OFF || p->canny > GE_CANNY_AUTO)
        return fail(NULL, GE_ERR_ARG, "canny %d: expected GE_CANNY_OFF, GE_CANNY_ON or "
                    "GE_CANNY_AUTO", p->canny);
    if (p->canny == GE_CANNY_ON &&
        !(p->canny_low >= 0 && p->canny_low <= p->canny_high && isfinite(p->canny_high)))
        return fail(NULL, GE_ERR_ARG, "canny thresholds %g, %g: expected 0 <= low <= high",
                    (double)p->canny_low, (double)p->canny_high);
    if (p->canny && p->use_threshold)
        return fail(NULL, GE_ERR_ARG, "canny and threshold contradict each other (Canny's map "
                    "is already binary)");
    if (ge_taps_make(p->sigma, taps) < 0)
        return fail(NULL, GE_ERR_ARG, "sigma %g: no tap table", p->sigma);
    return 0;
}

#if GE_CUDA
/* Is a GPU usable: a driver, the device, a kernel image for it.  Unlike
 * the CLI's gpu_probe it sets no device flags (the caller's process may
 * have its own) and leaves the current device as it was. */
static int probe(int device)
{
    int count = 0, drv = 0, rt = 0, old = -1;
    cudaError_t e;

    cudaDriverGetVersion(&drv);
    cudaRuntimeGetVersion(&rt);
    if (drv == 0)
        return fail(NULL, GE_ERR_NOGPU, "no CUDA driver found");
    if (drv < rt)
        return fail(NULL, GE_ERR_NOGPU, "CUDA driver %d.%d is older than the runtime %d.%d",
                    drv / 1000, drv % 1000 / 10, rt / 1000, rt % 1000 / 10);
    e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        cudaGetLastError();
        return fail(NULL, GE_ERR_NOGPU, "no CUDA device found%s%s", e ? ": " : "",
                    e ? cudaGetErrorString(e) : "");
    }
    if (device >= count)
        return fail(NULL, GE_ERR_NOGPU, "no CUDA device %d (%d found)", device, count);
    cudaGetDevice(&old);
    e = cudaSetDevice(device);
    if (e == cudaSuccess)
        e = kernels_probe_gpu();
    if (old >= 0 && old != device)
        cudaSetDevice(old);
    if (e != cudaSuccess) {
        cudaGetLastError();
        return fail(NULL, GE_ERR_NOGPU, "CUDA device %d unusable: %s", device,
                    cudaGetErrorString(e));
    }
    return 0;
}

/* Makes `device` current for a call; *old gets what to restore. */
static int enter(ge_ctx *c, int *old)
{
    cudaError_t e;
    *old = -1;
    if (cudaGetDevice(old) != cudaSuccess)
        *old = -1;
    if (*old == c->opt.device)
        return 0;
    e = cudaSetDevice(c->opt.device);
    return e == cudaSuccess ? 0 : fail_cuda(c, "cudaSetDevice", e);
}

static void leave(ge_ctx *c, int old)
{
    if (old >= 0 && old != c->opt.device)
        cudaSetDevice(old);
}

/* A GPU context's stream, event and histogram buffer (ctx_make). */
static int ctx_gpu_open(ge_ctx *c)
{
    int r, old;
    cudaError_t e;

    if ((r = enter(c, &old)) < 0)
        return r;
    if ((e = cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking)) ||
        (e = cudaEventCreateWithFlags(&c->launched, cudaEventDisableTiming)) ||
        (e = cudaMalloc((void **)&c->d_hist, GE_HIST_BINS * sizeof *c->d_hist))) {
        r = fail_cuda(c, "creating the context's stream and buffers", e);
        leave(c, old);
        return r;
    }
    leave(c, old);
    pthread_mutex_lock(&g_taps_lock);
    c->next = g_gpu_ctxs;
    g_gpu_ctxs = c;
    pthread_mutex_unlock(&g_taps_lock);
    return 0;
}

/* Undoes ctx_gpu_open, or what of it was done (ge_ctx_free). */
static void ctx_gpu_close(ge_ctx *c)
{
    int old = -1;

    pthread_mutex_lock(&g_taps_lock);
    for (ge_ctx **pp = &g_gpu_ctxs; *pp; pp = &(*pp)->next)
        if (*pp == c) {
            *pp = c->next;
            break;
        }
    pthread_mutex_unlock(&g_taps_lock);
    enter(c, &old);
    /* its own stream's work reads its buffers; so does a Canny frame
     * queued on a caller's stream (the scratch), hence the wait on its
     * last launch too (a binding may free a context it cached at any time) */
    if (c->stream)
        cudaStreamSynchronize(c->stream);
    if (c->launched && c->has_launched)
        cudaEventSynchronize(c->launched);
    if (c->d_in) cudaFree(c->d_in);
    if (c->d_edge) cudaFree(c->d_edge);
    if (c->d_hist) cudaFree(c->d_hist);
    if (c->d_hists) cudaFree(c->d_hists);
    if (c->d_canny) cudaFree(c->d_canny);
    if (c->launched) cudaEventDestroy(c->launched);
    if (c->stream) cudaStreamDestroy(c->stream);
    cudaGetLastError();
    leave(c, old);
}
#else
/* the CPU-only variant: no GPU context is ever made */
static int probe(int device)
{
    (void)device;
    return fail(NULL, GE_ERR_NOGPU, "%s", GPU_NONE_WHY);
}

static int ctx_gpu_open(ge_ctx *c)
{
    return fail(c, GE_ERR_NOGPU, "%s", GPU_NONE_WHY);
}

static void ctx_gpu_close(ge_ctx *c) { (void)c; }
#endif

static int ctx_make(ge_ctx **out, const ge_params *p, int backend, int device,
                    int threads, int probe_gpu)
{
    ge_ctx *c;
    ge_taps taps;
    int r;

    if (!out)
        return fail(NULL, GE_ERR_ARG, "ge_ctx_new: out is NULL");
    *out = NULL;
    if ((r = check_params(p, &taps)) < 0)
        return r;
    if (backend < GE_BACKEND_AUTO || backend > GE_BACKEND_CPU)
        return fail(NULL, GE_ERR_ARG, "backend %d: expected GE_BACKEND_AUTO, GPU or CPU", backend);
    if (device < 0 || device >= API_MAX_DEVICES)
        return fail(NULL, GE_ERR_ARG, "device %d: expected 0 to %d", device, API_MAX_DEVICES - 1);
    if (threads < 0 || threads > 1024)
        return fail(NULL, GE_ERR_ARG, "threads %d: expected 0 (one per CPU) to 1024", threads);
    if (p->canny && !API_GPU_CANNY && backend == GE_BACKEND_AUTO)
        backend = GE_BACKEND_CPU;
    if (backend != GE_BACKEND_CPU && probe_gpu) {
        r = probe(device);
        if (r < 0 && backend == GE_BACKEND_GPU)
            return r;
        backend = r < 0 ? GE_BACKEND_CPU : GE_BACKEND_GPU;
    }
    if (!(c = calloc(1, sizeof *c)))
        return fail(NULL, GE_ERR_NOMEM, "out of memory");
    ge_options_init(&c->opt);
    c->opt.backend = backend;
    c->opt.device = device;
    c->opt.threads = threads;
    c->nthreads = threads > 0 ? threads : ge_cpu_count();
    c->p = *p;
    c->p.invert = p->invert != 0;
    c->p.use_threshold = p->use_threshold != 0;
    c->taps = taps;
    c->backend = backend;
    if (backend == GE_BACKEND_GPU && (r = ctx_gpu_open(c)) < 0) {
        ge_fail("%s", c->err);
        ge_ctx_free(&c);
        return r;
    }
    *out = c;
    return 0;
}

GE_API int ge_ctx_new(ge_ctx **out, const ge_options *opt)
{
    ge_options d;
    ge_params p;

    if (!opt) {
        ge_options_init(&d);
        opt = &d;
    }
    memset(&p, 0, sizeof p);
    p.sigma = opt->sigma;
    p.border = opt->border;
    p.scale = opt->scale;
    p.use_threshold = opt->use_threshold;
    p.threshold = opt->threshold;
    p.invert = opt->invert;
    p.canny = opt->canny;
    p.canny_low = opt->canny_low;
    p.canny_high = opt->canny_high;
    return ctx_make(out, &p, opt->backend, opt->device, opt->threads, 1);
}

int api_ctx_for_engine(ge_ctx **out, const ge_params *p, int backend, int device, int threads)
{
    if (backend != GE_BACKEND_GPU && backend != GE_BACKEND_CPU)
        return fail(NULL, GE_ERR_ARG, "engine context: backend must be chosen");
    return ctx_make(out, p, backend, device, threads < 0 ? 0 : threads, 0);
}

GE_API void ge_ctx_free(ge_ctx **ctx)
{
    ge_ctx *c = ctx ? *ctx : NULL;

    if (!c)
        return;
    if (c->backend == GE_BACKEND_GPU)
        ctx_gpu_close(c);
    free(c->h_edge);
    free(c->h_swz);
    free(c);
    *ctx = NULL;
}

GE_API int ge_ctx_backend(const ge_ctx *ctx)
{
    return ctx ? ctx->backend : fail(NULL, GE_ERR_ARG, "ge_ctx_backend: ctx is NULL");
}

/* ------------------------------------------------------------------------ */
/* the engine entries                                                        */

int api_cpu_frame(ge_ctx *c, const ge_frame *f, size_t mem_limit, ge_planes *planes,
                  volatile const int *stop)
{
    return cpu_process_limited(f, &c->p, c->nthreads, mem_limit, planes, stop);
}

#if GE_CUDA
/* Under g_taps_lock: makes the device's table hold c's taps. */
static cudaError_t taps_load(ge_ctx *c)
{
    const int dev = c->opt.device;
    cudaError_t e;

    if (g_dev[dev].loaded && g_radius_set == c->taps.radius &&
        memcmp(&g_dev[dev].taps, &c->taps, sizeof c->taps) == 0)
        return cudaSuccess;
    if (!g_dev[dev].loaded || memcmp(&g_dev[dev].taps, &c->taps, sizeof c->taps) != 0) {
        /* other taps: every kernel queued on this device reads the table
         * until it finishes */
        for (ge_ctx *x = g_gpu_ctxs; x; x = x->next)
            if (x->opt.device == dev && x->has_launched) {
                if ((e = cudaEventSynchronize(x->launched)) != cudaSuccess)
                    return e;
                x->has_launched = 0;
            }
    }
    /* synchronous, so that a launch on any stream after it sees the taps */
    if ((e = fused_set_taps_gpu(&c->taps, c->stream)) != cudaSuccess ||
        (e = cudaStreamSynchronize(c->stream)) != cudaSuccess) {
        g_dev[dev].loaded = 0;
        return e;
    }
    g_dev[dev].loaded = 1;
    g_dev[dev].taps = c->taps;
    g_radius_set = c->taps.radius;
    return cudaSuccess;
}

/* Canny on the GPU, the engine's enqueue_canny for one whole frame: the
 * Canny half of the fused kernel (direction codes into edge, t plane),
 * auto's thresholds, NMS, hysteresis into edge and hist.  The scratch (t
 * plane, labels: 8 bytes a pixel) is the context's, made on its first
 * Canny frame of a size (a larger frame first waits for the context's
 * queued work); a frame on another stream than the last one's waits on
 * the device for that one's kernels, so the scratch is never shared by
 * two frames at once. */
static cudaError_t gpu_canny_frame(ge_ctx *c, const ge_frame *f, uint8_t *edge, int pitch,
                                   unsigned long long *hist, cudaStream_t s)
{
    const int w = f->width, h = f->height;
    const size_t need = canny_scratch_bytes(w, h);
    const size_t hb = GE_HIST_BINS * sizeof *hist;
    const int aut = c->p.canny == GE_CANNY_AUTO;
    cudaError_t e;
    float *thr;

    if (!need)
        return cudaErrorInvalidValue; /* 2^31 pixels or more: 31-bit labels */
    if (!hist)
        hist = c->d_hist;
    if (need > c->d_canny_cap) {
        if (c->has_launched && (e = cudaEventSynchronize(c->launched)) != cudaSuccess)
            return e;
        if (c->d_canny)
            cudaFree(c->d_canny);
        c->d_canny = NULL;
        c->d_canny_cap = 0;
        if ((e = cudaMalloc(&c->d_canny, need)) != cudaSuccess)
            return e;
        c->d_canny_cap = need;
    }
    thr = canny_thr(c->d_canny, w, h);
    if ((c->has_launched && (e = cudaStreamWaitEvent(s, c->launched, 0)) != cudaSuccess) ||
        (e = cudaMemsetAsync(hist, 0, hb, s)) != cudaSuccess)
        return e;
    pthread_mutex_lock(&g_taps_lock);
    e = taps_load(c);
    if (e == cudaSuccess)
        e = fused_canny_window_gpu(f, h, 0, edge, pitch, canny_t_plane(c->d_canny), w, 0, h,
                                   &c->p, c->taps.radius, hist, s);
    if (e == cudaSuccess && (e = cudaEventRecord(c->launched, s)) == cudaSuccess)
        c->has_launched = 1;
    pthread_mutex_unlock(&g_taps_lock);
    if (e != cudaSuccess)
        return e;
    /* auto reads step 6's bins and zeroes them; else zero them here */
    if ((e = aut ? canny_auto_gpu(hist, (unsigned long long)w * h, thr, s)
                 : cudaMemsetAsync(hist, 0, hb, s)) != cudaSuccess ||
        (e = canny_nms_gpu(edge, pitch, canny_t_plane(c->d_canny), w,
                           canny_labels(c->d_canny, w, h), w, h, &c->p, aut ? thr : NULL,
                           s)) != cudaSuccess ||
        (e = canny_hyst_gpu(edge, pitch, canny_labels(c->d_canny, w, h), w, h, &c->p, hist,
                            canny_flags(c->d_canny, w, h), s)) != cudaSuccess)
        return e;
    pthread_mutex_lock(&g_taps_lock);
    e = cudaEventRecord(c->launched, s); /* now after the scratch's last reader */
    if (e == cudaSuccess)
        c->has_launched = 1;
    pthread_mutex_unlock(&g_taps_lock);
    return e;
}

int api_gpu_frame(ge_ctx *c, const ge_frame *f, uint8_t *edge, int edge_pitch,
                  unsigned long long *hist, struct CUstream_st *stream)
{
    cudaError_t e;

    if (c->p.canny)
        return (int)gpu_canny_frame(c, f, edge, edge_pitch, hist, stream);
    pthread_mutex_lock(&g_taps_lock);
    e = taps_load(c);
    if (e == cudaSuccess)
        e = fused_gpu(f, edge, edge_pitch, &c->p, c->taps.radius, hist, stream);
    if (e == cudaSuccess && (e = cudaEventRecord(c->launched, stream)) == cudaSuccess)
        c->has_launched = 1;
    pthread_mutex_unlock(&g_taps_lock);
    return (int)e;
}
#endif

/* ------------------------------------------------------------------------ */
/* the public frame calls                                                    */

GE_API int ge_ctx_set_order(ge_ctx *ctx, int order)
{
    if (!ctx)
        return fail(NULL, GE_ERR_ARG, "ge_ctx_set_order: ctx is NULL");
    if (order != GE_ORDER_RGB && order != GE_ORDER_BGR)
        return fail(ctx, GE_ERR_ARG, "ge_ctx_set_order: order %d: expected GE_ORDER_RGB or "
                    "GE_ORDER_BGR", order);
    ctx->order = order;
    return 0;
}

GE_API int ge_ctx_threads(const ge_ctx *ctx)
{
    return ctx ? ctx->nthreads : fail(NULL, GE_ERR_ARG, "ge_ctx_threads: ctx is NULL");
}

static int check_frame(ge_ctx *c, const char *fn, const void *pixels, int width, int height,
                       int channels, int bps, size_t stride, const void *edge,
                       size_t edge_stride)
{
    if (!c)
        return fail(NULL, GE_ERR_ARG, "%s: ctx is NULL", fn);
    if (!pixels || !edge)
        return fail(c, GE_ERR_ARG, "%s: %s is NULL", fn, !pixels ? "pixels" : "edge");
    if (width < 1 || height < 1 || width > (1 << 30) - 2 * GE_MAX_RADIUS ||
        height > (1 << 30))
        return fail(c, GE_ERR_ARG, "%s: size %dx%d: expected 1 to 2^30 a side", fn, width, height);
    if (channels < 1 || channels > 4)
        return fail(c, GE_ERR_ARG, "%s: %d channels: expected 1 to 4", fn, channels);
    if (bps != 1 && bps != 2)
        return fail(c, GE_ERR_ARG, "%s: %d bytes a sample: expected 1 or 2", fn, bps);
    if (stride / (size_t)bps / (size_t)channels < (size_t)width)
        return fail(c, GE_ERR_ARG, "%s: stride %zu bytes: a row of %d x %d x %d needs %zu", fn,
                    stride, width, channels, bps, (size_t)width * channels * bps);
    if (edge_stride < (size_t)width)
        return fail(c, GE_ERR_ARG, "%s: edge stride %zu bytes: a row needs %d", fn, edge_stride,
                    width);
    return 0;
}

/* A batch's count and frame distances: the edge maps must not overlap
 * (frames are written in parallel); inputs are only read, so any distance
 * goes, 0 included (one frame N times). */
static int check_batch(ge_ctx *c, const char *fn, int count, int height, int width,
                       size_t edge_frame_bytes, size_t edge_stride)
{
    const size_t edge_span = edge_stride * (size_t)(height - 1) + (size_t)width;
    if (count < 1)
        return fail(c, GE_ERR_ARG, "%s: count %d: expected 1 or more frames", fn, count);
    if (count > 1 && edge_frame_bytes < edge_span)
        return fail(c, GE_ERR_ARG, "%s: edge maps %zu bytes apart: one map spans %zu", fn,
                    edge_frame_bytes, edge_span);
    return 0;
}

static ge_frame make_frame(const void *data, int width, int height, int channels, int bps,
                           size_t stride)
{
    ge_frame f;
    memset(&f, 0, sizeof f);
    f.width = width;
    f.height = height;
    f.channels = channels;
    f.bytes_per_sample = bps;
    f.stride = stride;
    f.gain = bps == 2 ? GE_S16 : 1.0f; /* DESIGN.md §1.1, as 16-bit images */
    f.data = data;
    return f;
}

/* A host buffer that only grows. */
typedef struct { uint8_t *p; size_t cap; } api_buf;

static int buf_grow(api_buf *b, size_t n)
{
    uint8_t *p;
    if (n <= b->cap)
        return 0;
    if (!(p = malloc(n)))
        return -1;
    free(b->p);
    b->p = p;
    b->cap = n;
    return 0;
}

static int wants_reorder(const ge_ctx *c, int channels)
{
    return c->order == GE_ORDER_BGR && channels >= 3;
}

/* A BGR(A) frame as its RGB(A) twin, packed rows at dst (the engine and
 * the kernels read RGB only; a copy costs one pass over the frame). */
static void reorder_into(uint8_t *dst, const ge_frame *f)
{
    const int ch = f->channels, bps = f->bytes_per_sample;
    const size_t row = (size_t)f->width * ch * bps;
    for (int y = 0; y < f->height; y++) {
        const uint8_t *s = (const uint8_t *)f->data + (size_t)y * f->stride;
        uint8_t *d = dst + (size_t)y * row;
        for (int x = 0; x < f->width; x++, s += ch * bps, d += ch * bps) {
            memcpy(d, s + 2 * bps, (size_t)bps);
            memcpy(d + bps, s + bps, (size_t)bps);
            memcpy(d + 2 * bps, s, (size_t)bps);
            if (ch == 4)
                memcpy(d + 3 * bps, s + 3 * bps, (size_t)bps);
        }
    }
}

/* ---- the CPU backend ---- */

/* One frame on the CPU with `threads` threads into edge/hist; `swz` and
 * `packed` are the caller's scratch (the reordered frame, the packed edge
 * rows of a strided output).  0, -1 out of memory, -2 the backend failed
 * (memory or threads): the caller words the error, so that workers of a
 * batch never write the context's error text at the same time. */
static int cpu_frame_into(ge_ctx *c, const ge_frame *f, int threads, uint8_t *edge,
                          size_t edge_stride, uint64_t *hist, api_buf *swz, api_buf *packed)
{
    const size_t w = (size_t)f->width, h = (size_t)f->height;
    ge_frame rf = *f;
    ge_planes pl;

    if (wants_reorder(c, f->channels)) {
        rf.stride = w * f->channels * f->bytes_per_sample;
        if (buf_grow(swz, rf.stride * h) < 0)
            return -1;
        reorder_into(swz->p, f);
        rf.data = swz->p;
    }
    memset(&pl, 0, sizeof pl);
    pl.edge = edge;
    if (edge_stride != w) {
        /* the backend writes packed rows */
        if (buf_grow(packed, w * h) < 0)
            return -1;
        pl.edge = packed->p;
    }
    if (cpu_process_limited(&rf, &c->p, threads, 0, &pl, NULL) < 0)
        return -2;
    if (pl.edge != edge)
        for (size_t y = 0; y < h; y++)
            memcpy(edge + y * edge_stride, pl.edge + y * w, w);
    if (hist)
        memcpy(hist, pl.hist, sizeof pl.hist);
    return 0;
}

/* A CPU batch: min(threads, count) workers take frames in turn, each
 * frame computed with threads / workers threads, so that many small frames
 * run side by side and a few large ones still use every thread. */
typedef struct {
    ge_ctx *c;
    ge_frame f0;              /* frame 0; frame i is f0.data + i * frame_bytes */
    size_t frame_bytes;
    uint8_t *edge;
    size_t edge_frame_bytes, edge_stride;
    uint64_t *hist;
    int count, per_frame;
    int next;                 /* the next frame to take (atomic) */
    int rc, bad;              /* the first failure (under the atomic `failed`) */
    int failed;
} cpu_batch;

static void *cpu_batch_worker(void *arg)
{
    cpu_batch *b = arg;
    api_buf swz = {0}, packed = {0};
    for (;;) {
        const int i = __atomic_fetch_add(&b->next, 1, __ATOMIC_RELAXED);
        ge_frame f = b->f0;
        int r;
        if (i >= b->count || __atomic_load_n(&b->failed, __ATOMIC_RELAXED))
            break;
        f.data = (const uint8_t *)b->f0.data + (size_t)i * b->frame_bytes;
        r = cpu_frame_into(b->c, &f, b->per_frame, b->edge + (size_t)i * b->edge_frame_bytes,
                           b->edge_stride, b->hist ? b->hist + (size_t)i * GE_HIST_BINS : NULL,
                           &swz, &packed);
        if (r < 0) {
            if (!__atomic_exchange_n(&b->failed, 1, __ATOMIC_ACQ_REL)) {
                b->rc = r;
                b->bad = i;
            }
            break;
        }
    }
    free(swz.p);
    free(packed.p);
    return NULL;
}

static int process_cpu(ge_ctx *c, const ge_frame *f, int count, size_t frame_bytes,
                       uint8_t *edge, size_t edge_frame_bytes, size_t edge_stride,
                       uint64_t *hist)
{
    cpu_batch b;
    pthread_t th[64];
    int workers = c->nthreads < count ? c->nthreads : count, started = 0;

    memset(&b, 0, sizeof b);
    b.c = c;
    b.f0 = *f;
    b.frame_bytes = frame_bytes;
    b.edge = edge;
    b.edge_frame_bytes = edge_frame_bytes;
    b.edge_stride = edge_stride;
    b.hist = hist;
    b.count = count;
    if (workers > (int)(sizeof th / sizeof th[0]))
        workers = (int)(sizeof th / sizeof th[0]);
    if (workers < 1)
        workers = 1;
    b.per_frame = c->nthreads / workers > 0 ? c->nthreads / workers : 1;
    if (count == 1) {
        /* one frame: the context's own scratch, kept between calls */
        api_buf swz = {c->h_swz, c->h_swz_cap}, packed = {c->h_edge, c->h_edge_cap};
        b.rc = cpu_frame_into(c, f, c->nthreads, edge, edge_stride, hist, &swz, &packed);
        c->h_swz = swz.p;
        c->h_swz_cap = swz.cap;
        c->h_edge = packed.p;
        c->h_edge_cap = packed.cap;
        b.failed = b.rc < 0;
    } else {
        for (; started < workers - 1; started++)
            if (pthread_create(&th[started], NULL, cpu_batch_worker, &b) != 0)
                break; /* fewer workers: the same frames, later */
        cpu_batch_worker(&b);
        for (int i = 0; i < started; i++)
            pthread_join(th[i], NULL);
    }
    if (!b.failed)
        return 0;
    if (b.rc == -1)
        return fail(c, GE_ERR_NOMEM, "out of memory for frame %d (%dx%d)", b.bad, f->width,
                    f->height);
    return fail(c, GE_ERR_NOMEM, "out of memory or threads for frame %d (%dx%d)", b.bad,
                f->width, f->height);
}

/* ---- the GPU backend, host memory ---- */

#if GE_CUDA
/* Grows a device buffer (exact size: frames of one size are the case). */
static int dev_grow(ge_ctx *c, void **p, size_t *cap, size_t n)
{
    cudaError_t e;
    if (n <= *cap)
        return 0;
    if (*p) {
        cudaStreamSynchronize(c->stream);
        cudaFree(*p);
        *p = NULL;
        *cap = 0;
    }
    if ((e = cudaMalloc(p, n)) != cudaSuccess) {
        *p = NULL;
        return fail_cuda(c, "device buffer", e);
    }
    *cap = n;
    return 0;
}

/* count frames from host memory: every upload, launch and download queued
 * on the context's stream, then one wait.  The device buffers hold the
 * whole batch. */
static int process_gpu_host(ge_ctx *c, const ge_frame *hf, int count, size_t frame_bytes,
                            uint8_t *edge, size_t edge_frame_bytes, size_t edge_stride,
                            uint64_t *hist)
{
    const size_t row = (size_t)hf->width * hf->channels * hf->bytes_per_sample;
    const size_t w = (size_t)hf->width, h = (size_t)hf->height, n = (size_t)count;
    const size_t hb = GE_HIST_BINS * sizeof *c->d_hists;
    const int reorder = wants_reorder(c, hf->channels);
    int r, old;
    cudaError_t e = cudaSuccess;
    const char *what = "";

    if ((r = enter(c, &old)) < 0)
        return r;
    if ((r = dev_grow(c, &c->d_in, &c->d_in_cap, row * h * n)) < 0 ||
        (r = dev_grow(c, (void **)&c->d_edge, &c->d_edge_cap, w * h * n)) < 0 ||
        (r = dev_grow(c, (void **)&c->d_hists, &c->d_hists_cap, hb * n)) < 0)
        goto end;
    if (reorder) {
        api_buf swz = {c->h_swz, c->h_swz_cap};
        /* the previous call's uploads read this buffer: they are done (each
         * call ends with a wait on the stream) */
        if (buf_grow(&swz, row * h * n) < 0) {
            r = fail(c, GE_ERR_NOMEM, "out of memory reordering %d BGR frames", count);
            goto end;
        }
        c->h_swz = swz.p;
        c->h_swz_cap = swz.cap;
        for (size_t i = 0; i < n; i++) {
            ge_frame f = *hf;
            f.data = (const uint8_t *)hf->data + i * frame_bytes;
            reorder_into(c->h_swz + i * row * h, &f);
        }
    }
    for (size_t i = 0; i < n && e == cudaSuccess; i++) {
        const uint8_t *src = reorder ? c->h_swz + i * row * h
                                     : (const uint8_t *)hf->data + i * frame_bytes;
        ge_frame df = *hf;
        df.data = (uint8_t *)c->d_in + i * row * h;
        df.stride = row;
        what = "uploading a frame";
        if ((e = cudaMemcpy2DAsync((void *)df.data, row, src, reorder ? row : hf->stride, row, h,
                                   cudaMemcpyHostToDevice, c->stream)) != cudaSuccess)
            break;
        what = "the fused kernel";
        if ((e = api_gpu_frame(c, &df, c->d_edge + i * w * h, (int)w, c->d_hists + i * GE_HIST_BINS,
                               c->stream)) != cudaSuccess)
            break;
        what = "downloading an edge map";
        e = cudaMemcpy2DAsync(edge + i * edge_frame_bytes, edge_stride, c->d_edge + i * w * h, w,
                              w, h, cudaMemcpyDeviceToHost, c->stream);
    }
    if (e == cudaSuccess && hist) {
        what = "downloading the histograms";
        e = cudaMemcpyAsync(hist, c->d_hists, hb * n, cudaMemcpyDeviceToHost, c->stream);
    }
    if (e == cudaSuccess) {
        what = "waiting for the frames";
        e = cudaStreamSynchronize(c->stream);
    } else {
        cudaStreamSynchronize(c->stream); /* nothing queued may outlive the call */
    }
    r = e == cudaSuccess ? 0 : fail_cuda(c, what, e);
end:
    leave(c, old);
    return r;
}
#else
static int process_gpu_host(ge_ctx *c, const ge_frame *hf, int count, size_t frame_bytes,
                            uint8_t *edge, size_t edge_frame_bytes, size_t edge_stride,
                            uint64_t *hist)
{
    (void)hf;
    (void)count;
    (void)frame_bytes;
    (void)edge;
    (void)edge_frame_bytes;
    (void)edge_stride;
    (void)hist;
    return fail(c, GE_ERR_NOGPU, "%s", GPU_NONE_WHY);
}
#endif

GE_API int ge_process_batch(ge_ctx *ctx, int count, const void *pixels, size_t frame_bytes,
                            int width, int height, int channels, int bytes_per_sample,
                            size_t stride, uint8_t *edge, size_t edge_frame_bytes,
                            size_t edge_stride, uint64_t *hist)
{
    ge_frame f;
    int r = check_frame(ctx, "ge_process_batch", pixels, width, height, channels,
                        bytes_per_sample, stride, edge, edge_stride);
    if (r < 0 || (r = check_batch(ctx, "ge_process_batch", count, height, width,
                                  edge_frame_bytes, edge_stride)) < 0)
        return r;
    f = make_frame(pixels, width, height, channels, bytes_per_sample, stride);
    if (ctx->backend == GE_BACKEND_GPU)
        return process_gpu_host(ctx, &f, count, frame_bytes, edge, edge_frame_bytes,
                                edge_stride, hist);
    return process_cpu(ctx, &f, count, frame_bytes, edge, edge_frame_bytes, edge_stride, hist);
}

GE_API int ge_process(ge_ctx *ctx, const void *pixels, int width, int height, int channels,
                      int bytes_per_sample, size_t stride, uint8_t *edge, size_t edge_stride,
                      uint64_t *hist)
{
    ge_frame f;
    int r = check_frame(ctx, "ge_process", pixels, width, height, channels, bytes_per_sample,
                        stride, edge, edge_stride);
    if (r < 0)
        return r;
    f = make_frame(pixels, width, height, channels, bytes_per_sample, stride);
    if (ctx->backend == GE_BACKEND_GPU)
        return process_gpu_host(ctx, &f, 1, 0, edge, 0, edge_stride, hist);
    return process_cpu(ctx, &f, 1, 0, edge, 0, edge_stride, hist);
}

/* ---- the GPU backend, device memory ---- */

/* ge_process_device's and ge_process_batch_device's checks, apart from the
 * pointers (device_frames checks those on the device). */
static int check_device_call(ge_ctx *ctx, const char *fn, int channels, size_t edge_stride)
{
    if (ctx->backend != GE_BACKEND_GPU)
        return fail(ctx, GE_ERR_UNSUPPORTED, "%s: a CPU context takes host frames only "
                    "(ge_process)%s%s", fn, GE_CUDA ? "" : "; ", GE_CUDA ? "" : GPU_NONE_WHY);
    if (wants_reorder(ctx, channels))
        return fail(ctx, GE_ERR_UNSUPPORTED, "%s: BGR frames on the device: reorder them to RGB "
                    "first (the context reorders host frames only)", fn);
    if (edge_stride > (size_t)INT32_MAX)
        return fail(ctx, GE_ERR_ARG, "%s: edge stride %zu too large", fn, edge_stride);
    return 0;
}

#if GE_CUDA
/* A pointer the kernel can read on c's device (device or managed memory;
 * a host pointer here is the usual mistake). */
static int check_device_ptr(ge_ctx *c, const char *fn, const void *p, const char *what)
{
    struct cudaPointerAttributes a;
    cudaError_t e = cudaPointerGetAttributes(&a, p);
    if (e != cudaSuccess) {
        cudaGetLastError();
        return fail(c, GE_ERR_ARG, "%s: %s: not a CUDA pointer (%s)", fn, what,
                    cudaGetErrorString(e));
    }
    if (a.type != cudaMemoryTypeDevice && a.type != cudaMemoryTypeManaged)
        return fail(c, GE_ERR_ARG, "%s: %s is host memory, not device memory", fn, what);
    if (a.type == cudaMemoryTypeDevice && a.device != c->opt.device)
        return fail(c, GE_ERR_ARG, "%s: %s is on device %d, the context on %d", fn, what,
                    a.device, c->opt.device);
    return 0;
}

/* count device frames, each launch queued on `stream` after the previous
 * one: no host synchronisation between frames, nothing allocated (Canny's
 * first frame of a size excepted, gpu_canny_frame). */
static int device_frames(ge_ctx *ctx, const char *fn, int count, const void *d_pixels,
                         size_t frame_bytes, const ge_frame *f0, uint8_t *d_edge,
                         size_t edge_frame_bytes, size_t edge_stride, uint64_t *d_hist,
                         ge_stream stream)
{
    int r, old;
    cudaError_t e = cudaSuccess;

    if ((r = enter(ctx, &old)) < 0)
        return r;
    if ((r = check_device_ptr(ctx, fn, d_pixels, "d_pixels")) < 0 ||
        (r = check_device_ptr(ctx, fn, d_edge, "d_edge")) < 0 ||
        (d_hist && (r = check_device_ptr(ctx, fn, d_hist, "d_hist")) < 0))
        goto end;
    for (int i = 0; i < count && e == cudaSuccess; i++) {
        ge_frame f = *f0;
        f.data = (const uint8_t *)d_pixels + (size_t)i * frame_bytes;
        e = api_gpu_frame(ctx, &f, d_edge + (size_t)i * edge_frame_bytes, (int)edge_stride,
                          d_hist ? (unsigned long long *)d_hist + (size_t)i * GE_HIST_BINS
                                 : NULL,
                          (cudaStream_t)stream);
    }
    r = e == cudaSuccess ? 0 : fail_cuda(ctx, fn, e);
end:
    leave(ctx, old);
    return r;
}
#else
static int device_frames(ge_ctx *ctx, const char *fn, int count, const void *d_pixels,
                         size_t frame_bytes, const ge_frame *f0, uint8_t *d_edge,
                         size_t edge_frame_bytes, size_t edge_stride, uint64_t *d_hist,
                         ge_stream stream)
{
    (void)count, (void)d_pixels, (void)frame_bytes, (void)f0, (void)d_edge;
    (void)edge_frame_bytes, (void)edge_stride, (void)d_hist, (void)stream;
    return fail(ctx, GE_ERR_UNSUPPORTED, "%s: %s", fn, GPU_NONE_WHY);
}
#endif

GE_API int ge_process_batch_device(ge_ctx *ctx, int count, const void *d_pixels,
                                   size_t frame_bytes, int width, int height, int channels,
                                   int bytes_per_sample, size_t stride, uint8_t *d_edge,
                                   size_t edge_frame_bytes, size_t edge_stride,
                                   uint64_t *d_hist, ge_stream stream)
{
    static const char fn[] = "ge_process_batch_device";
    ge_frame f;
    int r = check_frame(ctx, fn, d_pixels, width, height, channels, bytes_per_sample, stride,
                        d_edge, edge_stride);
    if (r < 0 ||
        (r = check_batch(ctx, fn, count, height, width, edge_frame_bytes, edge_stride)) < 0 ||
        (r = check_device_call(ctx, fn, channels, edge_stride)) < 0)
        return r;
    f = make_frame(d_pixels, width, height, channels, bytes_per_sample, stride);
    return device_frames(ctx, fn, count, d_pixels, frame_bytes, &f, d_edge, edge_frame_bytes,
                         edge_stride, d_hist, stream);
}

GE_API int ge_process_device(ge_ctx *ctx, const void *d_pixels, int width, int height,
                             int channels, int bytes_per_sample, size_t stride, uint8_t *d_edge,
                             size_t edge_stride, uint64_t *d_hist, ge_stream stream)
{
    static const char fn[] = "ge_process_device";
    ge_frame f;
    int r = check_frame(ctx, fn, d_pixels, width, height, channels, bytes_per_sample, stride,
                        d_edge, edge_stride);
    if (r < 0 || (r = check_device_call(ctx, fn, channels, edge_stride)) < 0)
        return r;
    f = make_frame(d_pixels, width, height, channels, bytes_per_sample, stride);
    return device_frames(ctx, fn, 1, d_pixels, 0, &f, d_edge, 0, edge_stride, d_hist, stream);
}
