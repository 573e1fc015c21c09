/*
 * hwdec.c — NVDEC through libavcodec's CUDA hwaccel; see hwdec.h.
 *
 * Why each piece is as it is:
 *   - The device context is made with AV_CUDA_USE_PRIMARY_CONTEXT (DESIGN.md
 *     §4): the CUDA runtime the engine uses works in the same primary
 *     context, so the engine's kernels can read the decoder's surfaces and
 *     wait on events recorded beside them.
 *   - libavcodec copies each decoded picture out of NVDEC's decode surface
 *     into a frame of its CUDA frame pool on AVCUDADeviceContext.stream.
 *     We give it a non-blocking stream of our own (destroyed when the
 *     device context is freed, i.e. after the last frame) and record the
 *     frame's `ready` event on it right after avcodec_receive_frame
 *     returned: the engine's kernels wait for that event on the device.
 *   - The frame keeps its pool buffer (and through it the frames and
 *     device contexts) until the engine calls release: a token owning the
 *     AVFrame and the event, so a frame may outlive its reader.
 *   - FFmpeg 5.1's NVDEC (nvdec_retrieve_data) returns the mapped decoder
 *     surface itself, not a copy: buf[0] is an empty placeholder, buf[1]
 *     the mapping, and the frame holds one of the session's
 *     initial_pool_size surfaces (DPB + 5) until it is freed.  One session
 *     handed straight to the engine holds few; frames queued ahead (the
 *     segments of src/io/vsource.c) exhaust them at about the 10th, and
 *     libavcodec then outputs a frame whose start_frame failed: data[0]
 *     NULL (H.264) or concealed pictures (HEVC).  hw_detach copies the luma
 *     plane into a buffer of our own and gives the surface back at once.
 */
#include "hwdec.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>
#include <libavutil/hwcontext.h>
#include <libavutil/hwcontext_cuda.h>
#include <libavutil/pixdesc.h>

#include "util.h"
#include "vid_pixels.h"

struct hw_dec {
    AVBufferRef *dev;    /* AVHWDeviceContext (CUDA) */
    cudaStream_t stream; /* owned by dev (freed with it) */
    int device;
};

/* Detached frames' buffers are carved from slabs: one cudaMalloc for
 * several planes of one size (see blk_get). */
typedef struct hw_slab {
    void *base;
    int device;
    int nblk, dead; /* blocks carved, blocks dropped (over HW_CACHE_MAX) */
} hw_slab;

/* A device buffer of the detached-frame cache. */
typedef struct hw_blk {
    struct hw_blk *next;
    void *p;
    size_t n;
    int device;
    hw_slab *slab;
} hw_blk;

typedef struct hw_token {
    AVFrame *frame;      /* the decoder surface (NULL once detached) */
    cudaEvent_t ready;
    cudaStream_t stream; /* the session's: valid while frame holds it */
    int device;
    hw_blk *blk;         /* detached: the buffer holding the plane */
} hw_token;

/* Detached frames' buffers, process-wide, reused by size: cudaFree waits
 * for the whole device, so a buffer released (possibly on the engine's
 * writer thread, which must not block on the GPU) goes back here.  Up to
 * HW_CACHE_MAX bytes stay cached; a buffer released beyond that is
 * dropped, and a slab whose blocks are all dropped is freed.
 * Slabs: with several sessions decoding far ahead (vsource.c's device
 * budget) one cudaMalloc a plane was slow and held up the sessions' own
 * start, so a miss allocates HW_SLAB_BYTES worth of planes of that size at
 * once (at most HW_SLAB_MAX, at least one), the rest going into the cache.
 * Measured: BENCHMARKS.md "Constants chosen by measurement". */
#define HW_CACHE_MAX ((size_t)4 << 30)
#define HW_SLAB_BYTES ((size_t)64 << 20)
#define HW_SLAB_MAX 32
static pthread_mutex_t cache_mu = PTHREAD_MUTEX_INITIALIZER;
static hw_blk *cache;
static size_t cache_bytes;
static long n_malloc;   /* cudaMallocs made for detached frames (under cache_mu) */
static double t_malloc; /* and their seconds */

static int slab_planes(size_t n)
{
    size_t k = HW_SLAB_BYTES / (n ? n : 1);
    if (k < 1)
        return 1;
    return k > HW_SLAB_MAX ? HW_SLAB_MAX : (int)k;
}

static hw_blk *blk_get(int device, size_t n)
{
    hw_blk *b = NULL, *more = NULL;
    hw_slab *sl;
    void *base = NULL;
    int k;
    pthread_mutex_lock(&cache_mu);
    for (hw_blk **p = &cache; *p; p = &(*p)->next)
        if ((*p)->device == device && (*p)->n == n) {
            b = *p;
            *p = b->next;
            cache_bytes -= n;
            break;
        }
    pthread_mutex_unlock(&cache_mu);
    if (b)
        return b;
    /* a slab of k planes, each 512-byte aligned as a cudaMalloc's would be;
     * when that much is not there, one plane */
    size_t step = (n + 511) & ~(size_t)511;
    k = slab_planes(step);
    double t = ge_now();
    while (cudaMalloc(&base, (size_t)k * step) != cudaSuccess) {
        cudaGetLastError();
        base = NULL;
        if (k == 1)
            return NULL;
        k = 1;
    }
    t = ge_now() - t;
    if (!(sl = calloc(1, sizeof *sl)))
        goto oom;
    sl->base = base;
    sl->device = device;
    for (int i = k - 1; i >= 0; i--) {
        hw_blk *x = calloc(1, sizeof *x);
        if (!x)
            goto oom;
        x->p = (char *)base + (size_t)i * step;
        x->n = n;
        x->device = device;
        x->slab = sl;
        sl->nblk++;
        x->next = more;
        more = x;
    }
    b = more; /* the first plane; the others go to the cache */
    more = b->next;
    b->next = NULL;
    pthread_mutex_lock(&cache_mu);
    n_malloc++;
    t_malloc += t;
    while (more) {
        hw_blk *x = more;
        more = x->next;
        x->next = cache;
        cache = x;
        cache_bytes += n;
    }
    pthread_mutex_unlock(&cache_mu);
    return b;
oom:
    while (more) {
        hw_blk *x = more;
        more = x->next;
        free(x);
    }
    free(sl);
    cudaFree(base);
    return NULL;
}

static void blk_put(hw_blk *b)
{
    hw_slab *gone = NULL;
    pthread_mutex_lock(&cache_mu);
    if (cache_bytes + b->n <= HW_CACHE_MAX) {
        b->next = cache;
        cache = b;
        cache_bytes += b->n;
        b = NULL;
    } else if (++b->slab->dead == b->slab->nblk) {
        gone = b->slab; /* no block of it is cached or in use */
    }
    pthread_mutex_unlock(&cache_mu);
    free(b);
    if (gone) {
        cudaSetDevice(gone->device);
        cudaFree(gone->base);
        free(gone);
    }
}

static int has_cuda_hwaccel(const AVCodec *c)
{
    for (int i = 0;; i++) {
        const AVCodecHWConfig *cfg = avcodec_get_hw_config(c, i);
        if (!cfg)
            return 0;
        if (cfg->pix_fmt == AV_PIX_FMT_CUDA && cfg->device_type == AV_HWDEVICE_TYPE_CUDA &&
            (cfg->methods & AV_CODEC_HW_CONFIG_METHOD_HW_DEVICE_CTX))
            return 1;
    }
}

const AVCodec *hw_find_decoder(const AVCodec *sw, int *hw_only)
{
    const AVCodec *c;
    void *it = NULL;
    *hw_only = 0;
    if (!sw->wrapper_name && has_cuda_hwaccel(sw))
        return sw;
    /* The *_cuvid wrappers (wrapper_name "cuvid") parse with NVIDIA's
     * parser and have no software fallback: only libavcodec's own
     * decoders with the hwaccel qualify. */
    while ((c = av_codec_iterate(&it)))
        if (av_codec_is_decoder(c) && c->id == sw->id && !c->wrapper_name &&
            has_cuda_hwaccel(c)) {
            *hw_only = 1;
            return c;
        }
    return NULL;
}

static void stream_free(AVHWDeviceContext *ctx)
{
    if (ctx->user_opaque)
        cudaStreamDestroy((cudaStream_t)ctx->user_opaque);
    ctx->user_opaque = NULL;
}

int hw_open(AVCodecContext *dec, int device, hw_dec **out)
{
    hw_dec *h = calloc(1, sizeof *h);
    char name[16], eb[AV_ERROR_MAX_STRING_SIZE];
    AVHWDeviceContext *hd;
    cudaError_t ce;
    int err;

    *out = NULL;
    if (!h)
        return ge_fail("out of memory");
    /* the decode thread's current device: the stream and the per-frame
     * events are made on it */
    ce = cudaSetDevice(device);
    if (ce != cudaSuccess) {
        cudaGetLastError();
        ge_fail("CUDA device %d: %s", device, cudaGetErrorString(ce));
        goto fail;
    }
    /* libavutil retains the primary context only with blocking-sync
     * scheduling ("already active with incompatible flags" otherwise), as
     * gpu_probe sets it; when this opens while the probe still runs (run.c
     * early_open), cudaSetDevice above may have made the context first:
     * the flags again, for it (changing an active primary context's flags
     * is allowed since CUDA 11) */
    if (cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync) != cudaSuccess)
        cudaGetLastError();
    h->device = device;
    snprintf(name, sizeof name, "%d", device);
    err = av_hwdevice_ctx_create(&h->dev, AV_HWDEVICE_TYPE_CUDA, name, NULL,
                                 AV_CUDA_USE_PRIMARY_CONTEXT);
    if (err < 0) {
        av_strerror(err, eb, sizeof eb);
        ge_fail("cannot open CUDA device %d for NVDEC: %s", device, eb);
        goto fail;
    }
    ce = cudaStreamCreateWithFlags(&h->stream, cudaStreamNonBlocking);
    if (ce != cudaSuccess) {
        cudaGetLastError();
        ge_fail("cannot create a CUDA stream: %s", cudaGetErrorString(ce));
        goto fail;
    }
    hd = (AVHWDeviceContext *)h->dev->data;
    ((AVCUDADeviceContext *)hd->hwctx)->stream = h->stream;
    hd->user_opaque = h->stream;
    hd->free = stream_free;
    if (dec && !(dec->hw_device_ctx = av_buffer_ref(h->dev))) {
        ge_fail("out of memory");
        goto fail;
    }
    *out = h;
    return 0;
fail:
    hw_close(&h);
    return -1;
}

AVBufferRef *hw_device_ref(hw_dec *h) { return h->dev; }

void hw_close(hw_dec **hp)
{
    hw_dec *h;
    if (!hp || !*hp)
        return;
    h = *hp;
    *hp = NULL;
    if (h->dev)
        av_buffer_unref(&h->dev); /* the stream goes with the last frame */
    else if (h->stream)
        cudaStreamDestroy(h->stream);
    free(h);
}

int hw_describe(const AVFrame *frame, enum AVPixelFormat sw_fmt, ge_frame *g)
{
    const AVHWFramesContext *fc =
        frame->hw_frames_ctx ? (const AVHWFramesContext *)frame->hw_frames_ctx->data : NULL;
    const AVPixFmtDescriptor *sd = fc ? av_pix_fmt_desc_get(fc->sw_format) : NULL;
    const AVPixFmtDescriptor *dd;
    int depth, bps;

    memset(g, 0, sizeof *g);
    if (!sd || sd->comp[0].plane != 0 || sd->comp[0].offset != 0 || frame->width <= 0 ||
        frame->height <= 0 || frame->linesize[0] <= 0 || !frame->data[0]) {
        return ge_fail("NVDEC frame without a usable luma plane");
    }
    /* The stream's own format (yuv420p10le for P010 surfaces) gives the
     * bit depth and the default range, as in software decoding. */
    if (sw_fmt == AV_PIX_FMT_NONE || !(dd = av_pix_fmt_desc_get(sw_fmt)) ||
        vid_luma_params(sw_fmt, frame->color_range, g)) {
        sw_fmt = fc->sw_format;
        dd = sd;
        if (vid_luma_params(sw_fmt, frame->color_range, g)) {
            return ge_fail("unsupported NVDEC surface format");
        }
    }
    depth = dd->comp[0].depth;
    bps = sd->comp[0].step;
    if (bps == 2) {
        /* NV12's 16-bit siblings (P010, P016, YUV444P16) are MSB-aligned */
        g->bytes_per_sample = 2;
        g->shift = 16 - depth;
    } else if (bps != 1 || g->bytes_per_sample != 1) {
        return ge_fail("unsupported NVDEC surface format");
    }
    g->width = frame->width;
    g->height = frame->height;
    g->stride = (size_t)frame->linesize[0];
    g->data = frame->data[0];
    /* libavcodec crops only right/bottom of hwaccel frames: do left/top */
    if (frame->crop_left || frame->crop_top) {
        if (frame->crop_left >= (size_t)frame->width || frame->crop_top >= (size_t)frame->height) {
            return ge_fail("NVDEC frame cropped to nothing");
        }
        g->data = frame->data[0] + frame->crop_top * g->stride + frame->crop_left * (size_t)bps;
        g->width -= (int)frame->crop_left;
        g->height -= (int)frame->crop_top;
    }
    return 0;
}

static void hw_release(void *ctx)
{
    hw_token *t = ctx;
    if (t->ready)
        cudaEventDestroy(t->ready);
    av_frame_free(&t->frame);
    if (t->blk)
        blk_put(t->blk);
    free(t);
}

int hw_take(hw_dec *h, AVFrame *frame, src_frame *fr)
{
    hw_token *t = calloc(1, sizeof *t);
    if (!t || !(t->frame = av_frame_alloc())) {
        free(t);
        return ge_fail("out of memory");
    }
    /* the reader may run on a thread other than the one that opened it
     * (vsource.c hands segment 0's reader to a decoder thread): the event
     * must be made on the stream's device */
    cudaSetDevice(h->device);
    /* blocking: hw_detach waits on it, and a spinning wait would take a
     * core from the encoders for as long as the copy runs */
    if (cudaEventCreateWithFlags(&t->ready, cudaEventDisableTiming | cudaEventBlockingSync) !=
            cudaSuccess ||
        cudaEventRecord(t->ready, h->stream) != cudaSuccess) {
        cudaGetLastError();
        if (t->ready)
            cudaEventDestroy(t->ready);
        av_frame_free(&t->frame);
        free(t);
        return ge_fail("cannot record a CUDA event");
    }
    av_frame_move_ref(t->frame, frame);
    t->stream = h->stream;
    t->device = h->device;
    fr->on_device = 1;
    fr->ready = t->ready;
    fr->release = hw_release;
    fr->release_ctx = t;
    return 0;
}

size_t hw_frame_bytes(const src_frame *fr)
{
    const hw_token *t = fr->release == hw_release ? fr->release_ctx : NULL;
    size_t n = 0;
    if (t && t->blk)
        return t->blk->n;
    if (!t || !t->frame)
        return 0;
    for (int i = 0; i < AV_NUM_DATA_POINTERS && t->frame->buf[i]; i++)
        n += t->frame->buf[i]->size;
    return n;
}

int hw_on_surface(const src_frame *fr)
{
    const hw_token *t = fr->release == hw_release ? fr->release_ctx : NULL;
    return t && t->frame && !t->blk;
}

int hw_detach(src_frame *fr)
{
    hw_token *t = fr->release == hw_release ? fr->release_ctx : NULL;
    int ch = fr->f.channels > 0 ? fr->f.channels : 1;
    size_t row, n;
    hw_blk *b;

    if (!t || !t->frame || t->blk)
        return 0;
    row = (size_t)fr->f.width * (size_t)ch * (size_t)fr->f.bytes_per_sample;
    n = fr->f.stride * (size_t)fr->f.height;
    cudaSetDevice(t->device);
    if (!(b = blk_get(t->device, n))) {
        return ge_fail("out of GPU memory for a decoded frame");
    }
    /* the same pitch: the engine reads it as it read the surface.  After
     * `ready` (the decoder's work, on the same stream); synchronised, since
     * freeing the frame unmaps the surface at once. */
    if (cudaMemcpy2DAsync(b->p, fr->f.stride, fr->f.data, fr->f.stride, row,
                          (size_t)fr->f.height, cudaMemcpyDeviceToDevice,
                          t->stream) != cudaSuccess ||
        cudaEventRecord(t->ready, t->stream) != cudaSuccess ||
        cudaEventSynchronize(t->ready) != cudaSuccess) {
        cudaGetLastError();
        blk_put(b);
        return ge_fail("cannot copy a decoded frame off its NVDEC surface");
    }
    av_frame_free(&t->frame); /* the surface goes back to the decoder */
    t->stream = NULL;
    t->blk = b;
    fr->f.data = b->p;
    return 0;
}

void hw_detach_stats(long *mallocs, double *seconds, size_t *cached)
{
    pthread_mutex_lock(&cache_mu);
    *mallocs = n_malloc;
    *seconds = t_malloc;
    *cached = cache_bytes;
    pthread_mutex_unlock(&cache_mu);
}

size_t hw_mem_free(int device)
{
    size_t fr = 0, tot = 0;
    int cur = -1;
    if (cudaGetDevice(&cur) != cudaSuccess || (cur != device && cudaSetDevice(device) != cudaSuccess)) {
        cudaGetLastError();
        return 0;
    }
    if (cudaMemGetInfo(&fr, &tot) != cudaSuccess) {
        cudaGetLastError();
        fr = 0;
    }
    if (cur != device)
        if (cudaSetDevice(cur) != cudaSuccess)
            cudaGetLastError();
    return fr;
}
