/*
 * coded.h — an output slot's edge map coded on the GPU and brought back
 * beside the edge map: as an FFVHuff packet (kernels/hfyu_gpu.h), so that
 * a .mkv writer only muxes it, or as a PNG's image data
 * (kernels/png_gpu.h), so that a PNG writer only writes its chunks
 * (DESIGN.md §4).  pipeline.c's GPU engine
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
#include "png_gpu.h"

/* The pinned buffers the packets come back into, one pool an engine: a
 * slot's buffer may be lent to the sink with its packet (coded_lend), and
 * the slot then takes another from the pool; a lent buffer comes back to
 * the pool when the sink gives it back, from any thread, also after the
 * engine has ended (coded_pool_close). */
typedef struct coded_pool coded_pool;
typedef struct coded_blk coded_blk;

coded_pool *coded_pool_new(void);
/* The engine is done with the pool: its free buffers go now, lent ones as
 * they come back. */
void coded_pool_close(coded_pool *p);

typedef struct pipe_coded {
    uint32_t *d_out;            /* the coded words (hfyu_gpu_max_bytes) */
    size_t d_cap;
    void *d_scratch;
    size_t scratch_cap;
    unsigned long long *d_bytes; /* the packet's size, device */
    unsigned long long *h_bytes; /* and pinned host */
    cudaEvent_t done;           /* coded (compute stream) */
    coded_pool *pool;
    coded_blk *blk;             /* pinned: the packet's first `got` bytes */
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
/* sink_frame.lend_coded for a pipe_coded: its packet's buffer, lent (the
 * slot takes another at its next frame), or NULL when CODED_LEND_BYTES are
 * out already (the sink copies). */
buf_loan *coded_lend(void *pipe_coded_ctx);
/* Frees the slot's device buffers; its host buffer goes back to the pool. */
void coded_free(pipe_coded *c);

typedef struct pipe_png {
    png_gpu_geom g;
    uint8_t *d_out;     /* the pieces (png_gpu_out_bytes) */
    size_t d_cap;
    uint8_t *d_z;       /* the pieces back to back: the first w x h bytes */
    size_t dz_cap;
    uint32_t *d_meta;   /* lens then adler, npieces each */
    size_t dm_cap;
    void *d_scratch;
    size_t scratch_cap;
    cudaEvent_t done;   /* coded (compute stream) */
    host_buf h;         /* pinned: lens, adler, then the first g.w x g.h bytes of z */
    int on;             /* this slot's frame was coded */
} pipe_png;

/* Codes the w x h edge map at d_edge (device, pitch w) as a PNG's image
 * data, pieces of piece_bytes filtered bytes (the writer's), on `comp`
 * after what is queued there, and queues on `dl` (after
 * that) the download of the pieces' lengths and Adler-32s and of their
 * bytes back to back, the first w x h of them (image data no larger than
 * the edge map comes back whole).  Sets p->on.  0, or -1 with the reason
 * recorded. */
int png_enqueue(pipe_png *p, const uint8_t *d_edge, int w, int h, size_t piece_bytes,
                cudaStream_t comp, cudaStream_t dl, const char *name);
/* Once `dl` has passed the download: the image data in *out (pointing
 * into p), or NULL when the frame was not coded or its data is larger
 * than what came back (the edge map then goes to the PNG writer). */
const sink_png *png_coded(const pipe_png *p, sink_png *out);
void png_free(pipe_png *p);

#endif
