/*
 * coded.h — an output slot's edge map coded as an FFVHuff packet on the
 * GPU (kernels/hfyu_gpu.h) and brought back beside the edge map, so that
 * a .mkv writer only muxes it (DESIGN.md §4).  pipeline.c's GPU engine
 * (CUDA builds only); a slot's buffers grow between uses of the slot and
 * are never freed in the frame loop otherwise.
 */
#ifndef GPUEDGE_CODED_H
#define GPUEDGE_CODED_H

#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime_api.h>

#include "frames.h"
#include "hfyu_gpu.h"

typedef struct pipe_coded {
    uint32_t *d_out;            /* the coded words (hfyu_gpu_max_bytes) */
    size_t d_cap;
    void *d_scratch;
    size_t scratch_cap;
    unsigned long long *d_bytes; /* the packet's size, device */
    unsigned long long *h_bytes; /* and pinned host */
    cudaEvent_t done;           /* coded (compute stream) */
    host_buf h;                 /* pinned: the packet's first `got` bytes */
    size_t got;
    int on;                     /* this slot's frame was coded */
} pipe_coded;

/* Codes the w x h edge map at d_edge (device, pitch w) on `comp` after
 * what is queued there, and queues on `dl` (after that) the download of
 * the packet's size and of its first w x h bytes (a packet no larger than
 * the edge map comes back whole).  Sets c->on.  0, or -1 with the reason
 * recorded (DESIGN.md §9). */
int coded_enqueue(pipe_coded *c, const uint8_t *d_edge, int w, int h,
                  const uint32_t *codes, cudaStream_t comp, cudaStream_t dl,
                  const char *name);
/* Once `dl` has passed the download: the packet (n bytes), or NULL when
 * the frame was not coded or its packet is larger than what came back (the
 * edge map then goes out as pixels). */
const uint8_t *coded_packet(const pipe_coded *c, size_t *n);
void coded_free(pipe_coded *c);

#endif
