/*
 * gpuedge.h — libgpuedge, the public C API (DESIGN.md §7).
 *
 * One frame in (8- or 16-bit samples, 1..4 channels, any row stride), an
 * 8-bit edge map and its 256-bin histogram out, computed exactly as the
 * gpuedge command computes them (DESIGN.md §1: grey, Gaussian blur, Sobel,
 * quantise; bit for bit the same on the GPU and the CPU backend).
 *
 *     ge_options o;
 *     ge_ctx *ctx = NULL;
 *     ge_options_init(&o);            // defaults: auto backend, sigma 1
 *     o.sigma = 2.0;
 *     if (ge_ctx_new(&ctx, &o) < 0)
 *         fprintf(stderr, "%s\n", ge_last_error(NULL));
 *     else if (ge_process(ctx, rgb, w, h, 3, 1, w * 3, edges, w, hist) < 0)
 *         fprintf(stderr, "%s\n", ge_last_error(ctx));
 *     ge_ctx_free(&ctx);
 *
 * Errors.  Every function that can fail returns 0 or a negative enum
 * ge_status; none exits, prints, or raises a signal.  The text of the last
 * failure is kept in two places: in the context the call was given (read
 * it with ge_last_error(ctx)), and in the calling thread (ge_last_error
 * (NULL): the only place ge_ctx_new's failures can go).  A successful call
 * leaves both texts as they were.
 *
 * Thread safety.  A context is NOT internally locked: use one context from
 * one thread at a time (calls on one context must not overlap; a context
 * may move between threads between calls).  Different contexts may be
 * used at the same time from different threads, on the same GPU or on
 * different ones, and give the same bits as one thread would.  The library
 * keeps one piece of process state per GPU, the blur taps held in constant
 * memory; it is locked internally, and contexts of different sigma on one
 * GPU take turns at it (a context switching taps waits for the kernels
 * other contexts have queued on that GPU to finish).  ge_version,
 * ge_strerror and ge_options_init may be called from any thread.
 *
 * GPU state.  A GPU context uses its device's primary CUDA context (the one
 * the CUDA runtime, CuPy and PyTorch share) and leaves the calling
 * thread's current device as it found it.  It never changes device flags.
 *
 * Linking: pkg-config gpuedge (libgpuedge.so.0: the CUDA runtime is linked
 * into it statically; only the ge_* functions below are exported).
 */
#ifndef GPUEDGE_H
#define GPUEDGE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(GE_BUILDING_LIB) && defined(__GNUC__)
#define GE_API __attribute__((visibility("default")))
#else
#define GE_API
#endif

#define GE_VERSION_MAJOR 0
#define GE_VERSION_MINOR 1
#define GE_VERSION_PATCH 0
/* MAJOR * 10000 + MINOR * 100 + PATCH */
#define GE_VERSION_NUMBER \
    (GE_VERSION_MAJOR * 10000 + GE_VERSION_MINOR * 100 + GE_VERSION_PATCH)

/* Return codes: 0 or one of these. */
enum ge_status {
    GE_OK = 0,
    GE_ERR_ARG = -1,      /* a bad argument: NULL, size, stride, channels,
                             sample size or a parameter out of range */
    GE_ERR_NOMEM = -2,    /* out of host or device memory */
    GE_ERR_NOGPU = -3,    /* no usable GPU (no driver, no device, no kernel
                             image for it, or a build without CUDA) */
    GE_ERR_CUDA = -4,     /* a CUDA call failed (text: which, and why) */
    GE_ERR_UNSUPPORTED = -5 /* valid, but not on this context: a device
                             call on a CPU context, or a parameter this
                             backend does not implement yet */
};

/* ge_options.backend */
enum ge_backend {
    GE_BACKEND_AUTO = 0, /* the GPU when one is usable, else the CPU */
    GE_BACKEND_GPU = 1,  /* the GPU or GE_ERR_NOGPU */
    GE_BACKEND_CPU = 2
};

/* ge_options.border and ge_options.canny: enum ge_border, enum ge_canny.
 * Defined once, in the engine's ge_modes.h; `make install` writes that file
 * in here, so the installed header stands alone. */
#include "ge_modes.h"
/* The histogram's bins; sigma's range (0, or GE_SIGMA_MIN..GE_SIGMA_MAX). */
#define GE_HIST_BINS 256
#define GE_SIGMA_MIN 0.1
#define GE_SIGMA_MAX 16.0

/* What a context computes; fill with ge_options_init, then change fields.
 * The fields mean what the command line's options mean (gpuedge(1)). */
typedef struct ge_options {
    int backend;        /* enum ge_backend (default AUTO) */
    int device;         /* CUDA device index (default 0) */
    int threads;        /* CPU backend threads, 0 (the default) = one per
                           CPU this process may use: its affinity mask,
                           capped by its cgroup's CPU quota */
    double sigma;       /* --sigma: 0 (no blur) or 0.1..16 (default 1) */
    int border;         /* --border: GE_BORDER_* (default replicate) */
    float scale;        /* --scale: > 0 (default 1) */
    int use_threshold;  /* --threshold given: edges are 0 or 255 */
    float threshold;    /* 0..255 */
    int canny;          /* --canny: GE_CANNY_* (default off).  On a GPU
                           context the first Canny frame of a size makes
                           the context's scratch (8 bytes a pixel) */
    float canny_low;    /* GE_CANNY_ON: 0 <= low <= high */
    float canny_high;
    int invert;         /* --invert: e = 255 - e, applied last */
} ge_options;

typedef struct ge_ctx ge_ctx;

/* A CUDA stream, type-compatible with cudaStream_t (which is
 * struct CUstream_st *), so this header needs no CUDA headers.  NULL is
 * the default stream. */
typedef struct CUstream_st *ge_stream;

/* Defaults (see ge_options).  Never fails. */
GE_API void ge_options_init(ge_options *o);

/* Makes a context.  opt NULL means the defaults.  With GE_BACKEND_GPU or
 * AUTO it checks the device now (driver, device index, kernel image).
 * *out is NULL on failure.  GE_ERR_ARG (bad options), GE_ERR_NOGPU,
 * GE_ERR_NOMEM. */
GE_API int ge_ctx_new(ge_ctx **out, const ge_options *opt);

/* Frees the context and everything it holds (waiting for its own GPU work
 * first) and sets *ctx to NULL.  NULL and *ctx NULL are fine. */
GE_API void ge_ctx_free(ge_ctx **ctx);

/* The backend the context runs on: GE_BACKEND_GPU or GE_BACKEND_CPU
 * (AUTO resolved); GE_ERR_ARG for NULL. */
GE_API int ge_ctx_backend(const ge_ctx *ctx);

/* One frame from host memory.
 *   pixels    row 0 of the frame: width * channels samples a row,
 *             interleaved; 1 byte a sample, or 2 (native-endian uint16;
 *             scaled by 255/65535 as 16-bit images are)
 *   channels  1 grey, 2 grey+alpha, 3 RGB, 4 RGBA (alpha is ignored)
 *   stride    bytes from one row to the next, >= width * channels *
 *             bytes_per_sample (any alignment)
 *   edge      out: width bytes a row, height rows, edge_stride bytes
 *             apart (>= width)
 *   hist      out: 256 counts (hist[v] = pixels of edge value v), or NULL
 * On a GPU context the frame is copied to the GPU and back; the call
 * returns when edge and hist are written.  A failed call may have written
 * part of edge. */
GE_API int ge_process(ge_ctx *ctx, const void *pixels, int width, int height,
                      int channels, int bytes_per_sample, size_t stride,
                      uint8_t *edge, size_t edge_stride, uint64_t *hist);

/* The same for a frame already in GPU memory (a GPU context only, else
 * GE_ERR_UNSUPPORTED): d_pixels, d_edge and d_hist (256 uint64 counts, or
 * NULL) are device pointers on the context's device.  Asynchronous: the
 * work is queued on `stream` (the caller's cudaStream_t; NULL = the legacy
 * default stream), ordered after what the caller queued there before, and
 * the results are ready when that stream reaches this point (synchronise
 * it, or record an event).  d_pixels must not change, and d_edge/d_hist
 * must not be read, until then.  No host synchronisation, no allocation:
 * the call returns once the kernel is queued (Canny excepted: its first
 * frame of a size allocates the context's scratch, waiting first for the
 * context's queued work, and a frame on another stream than the previous
 * one's is ordered after it on the device).  Arguments are checked on
 * the host (GE_ERR_ARG); a fault inside the kernel shows on the stream, as
 * for any CUDA kernel. */
GE_API int ge_process_device(ge_ctx *ctx, const void *d_pixels, int width,
                             int height, int channels, int bytes_per_sample,
                             size_t stride, uint8_t *d_edge,
                             size_t edge_stride, uint64_t *d_hist,
                             ge_stream stream);

/* The channel order of 3- and 4-channel frames (ge_ctx_set_order). */
enum ge_order {
    GE_ORDER_RGB = 0, /* R, G, B (, A): the default */
    GE_ORDER_BGR = 1  /* B, G, R (, A): OpenCV's order (cv2.imread) */
};

/* Sets the channel order of the context's 3- and 4-channel frames (1 and 2
 * channels have none); a BGR frame gives the map and histogram of its RGB
 * twin, bit for bit.  The host calls reorder the frame into the context's
 * scratch first (one pass over it); the device calls return
 * GE_ERR_UNSUPPORTED for BGR frames: reorder them on the device first.
 * GE_ERR_ARG for another order. */
GE_API int ge_ctx_set_order(ge_ctx *ctx, int order);

/* The CPU threads the context computes with: ge_options.threads, or when
 * that is 0 the CPUs this process may use (sched_getaffinity, capped by the
 * cgroup v2 cpu.max or v1 cfs quota, rounded up) when it was made.
 * GE_ERR_ARG for NULL. */
GE_API int ge_ctx_threads(const ge_ctx *ctx);

/* count frames of one size and format in one call, frame i at
 * pixels + i * frame_bytes (any distance, 0 included), its map at
 * edge + i * edge_frame_bytes (maps must not overlap: edge_frame_bytes >=
 * edge_stride * (height - 1) + width) and its 256 counts at
 * hist + 256 * i (hist NULL: none); the other arguments as ge_process.
 * On the CPU, min(threads, count) workers take frames in turn, each with
 * threads / workers threads.  On a GPU context every upload, launch and
 * download is queued on the context's stream and the call waits once, at
 * the end; the device buffers hold the whole batch.  A failed call may
 * have written some of the maps. */
GE_API int ge_process_batch(ge_ctx *ctx, int count, const void *pixels, size_t frame_bytes,
                            int width, int height, int channels, int bytes_per_sample,
                            size_t stride, uint8_t *edge, size_t edge_frame_bytes,
                            size_t edge_stride, uint64_t *hist);

/* The same for frames already in GPU memory, as ge_process_device: every
 * frame's work queued on `stream` in order, no host synchronisation between
 * frames or at the end, nothing allocated (Canny's first frame of a size
 * excepted).  d_hist: 256 counts a frame, or NULL. */
GE_API int ge_process_batch_device(ge_ctx *ctx, int count, const void *d_pixels,
                                   size_t frame_bytes, int width, int height, int channels,
                                   int bytes_per_sample, size_t stride, uint8_t *d_edge,
                                   size_t edge_frame_bytes, size_t edge_stride,
                                   uint64_t *d_hist, ge_stream stream);

/* The text of the last failure: of ctx, or (ctx NULL) of the calling
 * thread.  "" when there was none.  Valid until the next failing call on
 * the same context (or thread). */
GE_API const char *ge_last_error(const ge_ctx *ctx);

/* A fixed phrase for a status code ("bad argument", ...). */
GE_API const char *ge_strerror(int status);

/* "MAJOR.MINOR.PATCH" of the library actually loaded; ge_version_number
 * is GE_VERSION_NUMBER's form of it. */
GE_API const char *ge_version(void);
GE_API int ge_version_number(void);

#ifdef __cplusplus
}
#endif
#endif
