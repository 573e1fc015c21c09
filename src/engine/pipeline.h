/*
 * pipeline.h — the engines that turn a frame source into a frame sink.
 *
 * pipe_run_gpu: DESIGN.md §4.  A decode thread fills pinned input slots; the
 * calling thread enqueues upload (upload stream), the kernels (compute
 * stream, per-stage events) and the download (download stream) into pinned
 * output slots; a writer thread waits on each frame's download event and
 * hands the edge map to the sink.  Everything is ordered by events; no
 * device-wide synchronisation and no cudaFree/cudaFreeHost in the frame
 * loop except when a larger frame makes a buffer grow.
 *
 * pipe_run_cpu: the same source and sink around the CPU backend.
 */
#ifndef GPUEDGE_PIPELINE_H
#define GPUEDGE_PIPELINE_H

#include "api.h"
#include "edge.h"
#include "frames.h"
#include "report.h"

typedef struct pipe_opts {
    ge_params params;
    ge_taps taps;
    int threads;          /* CPU backend threads (0 = all) */
    int slots;            /* GPU ring slots a side (0 = default 3, max 8) */
    int staged;           /* GPU: per-stage kernels (planes, per-stage
                             timing) instead of the fused kernel */
    int cpu_ref_every;    /* 0 off; check every N-th frame */
    size_t mem_limit;     /* --mem-limit bytes (0 = none): GPU frame buffers
                             and each pinned buffer within a share of it
                             (frames beyond: strips), CPU scratch within it */
    const char *(*job_name)(void *ctx, int job); /* for messages */
    void *job_ctx;
    int device;           /* GPU: the CUDA device its threads use; -1 = the
                             calling thread's current one (several engines,
                             one a device: --devices) */
    rep_stats *report;    /* may be NULL */
    const volatile int *stop; /* raised by the caller to stop (a signal,
                             DESIGN.md §6); NULL: never */
    chk_stats *check;     /* required when cpu_ref_every > 0 */
    const uint32_t *hfyu; /* GPU: the 256 FFVHuff codes of the .mkv
                             writers (venc_ffvhuff_codes), for frames of the
                             jobs code_job says 1 to: each such frame also
                             comes to the sink as a packet coded on the GPU
                             (sink_frame.coded); NULL: none */
    int (*code_job)(void *ctx, int job); /* called with job_ctx */
    size_t png_piece_bytes; /* GPU: the frames of the jobs png_job says 1
                             to also come to the sink as a PNG's image data
                             coded on the GPU (sink_frame.png), in pieces of
                             this many filtered bytes (the PNG writer's at
                             its defaults); 0: none */
    int (*png_job)(void *ctx, int job); /* called with job_ctx */
    ge_ctx *ctx;          /* the libgpuedge context (api.h) every frame's
                             compute goes through, made for the engine's
                             backend from params; NULL: the engine makes
                             one for the run */
} pipe_opts;

/* Both return 0 when every frame went through (mismatches are counted in
 * check), GE_STOPPED when interrupted, or -1 on a fatal error: the engine's
 * own is in the calling thread's error record, for the caller to print
 * (DESIGN.md §9); the record is empty when the source or the sink failed
 * (they report their own). */
int pipe_run_gpu(const pipe_opts *o, frame_source *src, frame_sink *sink);
int pipe_run_cpu(const pipe_opts *o, frame_source *src, frame_sink *sink);

#endif
