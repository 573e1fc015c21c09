/*
 * frames.h — what flows through an engine: frames from a source (decoder),
 * edge maps to a sink (writer/encoder), and the growable host buffers the
 * frames live in.  The GPU pipeline and the CPU engine drive the same
 * sources and sinks.
 */
#ifndef GPUEDGE_FRAMES_H
#define GPUEDGE_FRAMES_H

#include <stddef.h>
#include <stdint.h>
#include "edge.h"

/* A host buffer that grows with headroom.  Pinned (cudaMallocHost) when
 * `pinned` is set and the block is within pin_max, else malloc (also when
 * the pinned allocation fails: copies from pageable memory still work,
 * just without overlap).  Growing frees the old block: only call it
 * when nothing in flight reads the buffer. */
typedef struct host_buf {
    void *p;
    size_t cap;
    int pinned;     /* wanted: pinned (page-locked) memory */
    size_t pin_max; /* a block larger than this is pageable (0: no cap) */
    int on_pin;     /* the block held now is pinned */
} host_buf;

int host_buf_reserve(host_buf *b, size_t n); /* 0, or -1 out of memory */
void host_buf_free(host_buf *b);

/* One decoded frame. */
typedef struct src_frame {
    int job;          /* index of the file it came from */
    long index;       /* frame number within that file */
    double pts;       /* seconds, or -1 if none */
    long long ts, duration; /* pts and duration in the source's time base
                               (video; ts = INT64_MIN when unknown) */
    double decode_ms; /* host time spent producing it */
    ge_frame f;       /* f.data points into the buffer the source filled,
                         or (on_device) into the decoder's device surface */
    /* Device-resident frames (DESIGN.md §4), the contract between a GPU decoder
     * (NVDEC, nvJPEG) and the GPU engine:
     *   on_device    f.data is a DEVICE pointer to row 0 of the plane the
     *                engine reads, f.stride its pitch in bytes; channels,
     *                bytes_per_sample (1 or 2), shift, offset and gain mean
     *                what they mean for host frames.  The engine uploads
     *                nothing: its kernels read the surface where it is.
     *   ready        NULL, or a cudaEvent_t recorded (on the decoder's
     *                stream) after the work that writes f.data; the engine's
     *                streams wait for it on the device (cudaStreamWaitEvent),
     *                never the host.  It must stay valid until release.
     *   release      NULL, or called exactly once with release_ctx when no
     *                work of the engine reads f.data any more: by the writer
     *                thread once the frame's download event (recorded after
     *                the last kernel reading the surface) has completed, or,
     *                for a frame dropped on an error or interruption, after
     *                the engine's streams are idle.  Any thread may call it,
     *                possibly after the source closed the file the frame came
     *                from: release_ctx must own everything it frees (the
     *                surface reference, the ready event).  release must not
     *                block on the GPU.
     * Only pipe_run_gpu accepts device frames (pipe_run_cpu fails on one);
     * a source makes them only when asked (vid_opts.hwdec, which run.c sets
     * only with the GPU backend).  Sources of host frames leave on_device 0
     * and release NULL (the engines clear them before each next()), but
     * a host frame may point into the source's own buffer instead of `buf`
     * (an image's decoded pixels, src_image.c), pageable memory: the GPU
     * engine uploads from it and calls its release as for a device frame;
     * pipe_run_cpu calls it once the frame is written, before the next
     * next(), or when it stops. */
    int on_device;
    struct CUevent_st *ready; /* cudaEvent_t */
    void (*release)(void *release_ctx);
    void *release_ctx;
} src_frame;

/* Clears the device-frame fields before a source fills *fr. */
static inline void src_frame_host(src_frame *fr)
{
    fr->on_device = 0;
    fr->ready = NULL;
    fr->release = NULL;
    fr->release_ctx = NULL;
}

/* Calls fr->release once (NULL-safe; clears it). */
static inline void src_frame_release(src_frame *fr)
{
    void (*rel)(void *) = fr->release;
    fr->release = NULL;
    if (rel)
        rel(fr->release_ctx);
}

/* A source of frames.  next() fills *fr (reserving `buf` as needed) and
 * returns 1, or 0 at the end of all input, or -1 on a fatal error (a bad
 * file is not fatal: the source marks that job failed and moves on). */
typedef struct frame_source {
    void *ctx;
    int (*next)(void *ctx, src_frame *fr, host_buf *buf);
} frame_source;

/* A PNG's image data coded on the GPU (kernels/png_gpu.h): npieces
 * pieces of `rows` rows, back to back in z (piece k lens[k] bytes),
 * adler[k] the Adler-32 of piece k's filtered rows: what png_write_coded
 * takes. */
typedef struct sink_png {
    const uint8_t *z;
    const uint32_t *lens, *adler;
    int rows, npieces;
} sink_png;

/* Memory an engine lends a sink past put(): the sink gives it back once
 * done with it, from any thread (a packet the GPU coded, which the .mkv
 * writer then writes from where it was downloaded instead of copying it). */
typedef struct buf_loan {
    void (*give_back)(struct buf_loan *l);
} buf_loan;

/* One finished frame. */
typedef struct sink_frame {
    int job;
    long index;
    double pts;
    long long ts, duration;
    int width, height;
    const uint8_t *edge; /* width*height, tightly packed */
    const uint64_t *hist;
    int on_device; /* the frame was decoded on the GPU (NVDEC): its decoder
                      leaves the cores to the sink's encoders */
    const uint8_t *coded;   /* the edge map as an FFVHuff packet coded on the
                               GPU with `codes` (pipe_opts.hfyu), or NULL */
    size_t coded_bytes;
    const uint32_t *codes;
    const sink_png *png;    /* the edge map as a PNG's image data coded on
                               the GPU (pipe_opts.png_job), or NULL */
    /* lend_coded(lend_ctx) lends `coded`'s memory to the sink, or returns
     * NULL (none to spare: the sink copies it in put()); NULL: never */
    buf_loan *(*lend_coded)(void *lend_ctx);
    void *lend_ctx;
} sink_frame;

/* A sink.  put() consumes one frame (returns 0, or -1 on a fatal error; a
 * failed file is recorded by the sink, not fatal) and adds its host time to
 * *write_ms (or sets it negative when the write goes on in the background
 * and the sink reports its time itself).  finish() completes whatever is still open, or abandons it
 * when `abandon` is set (a fatal error or an interruption): 0 or -1. */
typedef struct frame_sink {
    void *ctx;
    int (*put)(void *ctx, const sink_frame *fr, double *write_ms);
    int (*finish)(void *ctx, int abandon);
} frame_sink;

#endif
