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
    ge_frame f;       /* f.data points into the buffer the source filled */
} src_frame;

/* A source of frames.  next() fills *fr (reserving `buf` as needed) and
 * returns 1, or 0 at the end of all input, or -1 on a fatal error (a bad
 * file is not fatal: the source marks that job failed and moves on). */
typedef struct frame_source {
    void *ctx;
    int (*next)(void *ctx, src_frame *fr, host_buf *buf);
} frame_source;

/* One finished frame. */
typedef struct sink_frame {
    int job;
    long index;
    double pts;
    long long ts, duration;
    int width, height;
    const uint8_t *edge; /* width*height, tightly packed */
    const uint64_t *hist;
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
