/*
 * histogram.cu — DESIGN.md §1.7: 256-bin histogram of an 8-bit edge window,
 * added to 64-bit global totals.
 *
 * Algorithm (seed 003 §8.8 privatisation plus warp aggregation).  Each
 * block keeps 256 32-bit bins in shared memory and merges them into the
 * global histogram once (one 64-bit atomicAdd a non-empty bin).  Edge maps
 * pile into bins 0..3, so the hot bins never see an atomic in the loop:
 *   - every thread loads 16 bytes at a time (uint4, 2 a thread an
 *     iteration for memory-level parallelism) and counts bytes equal to
 *     0, 1, 2, 3 in registers with an exact SWAR zero-byte test + popc;
 *     at the end a warp shuffle-reduces them and lane 0 adds 4 shared bins;
 *   - a word holding a byte >= 4 (rare in an edge map; every byte of an
 *     inverted or flat image) is tested with __match_all_sync: when the 32
 *     lanes hold the same word (flat regions, one-bin frames) lane 0 adds
 *     32 a byte, one shared atomic for the warp; otherwise each byte >= 4
 *     is one shared atomic.  (Measured faster than both per-byte atomics
 *     and a __match_any_sync grouping of every byte: docs/bench-log.md.)
 * Rows are 16-byte vectors between an unaligned head and tail (< 16 bytes
 * each, counted with plain shared atomics by the blocks of grid column 0).
 * A tightly packed window (pitch == width) is one long row.
 *
 * Launch geometry.  256 threads; grid.x strides the vectors of a row,
 * grid.y strides rows; about 4 blocks an SM in all (2, 8 or 16 an SM, or 1
 * or 4 vectors a thread, measured slower), so the merge is at most
 * 4 x SMs x 256 global atomics a call.  The vector loop is warp-uniform
 * (lanes past the end carry a sentinel), as the _sync intrinsics need.
 * No borders: a reduction.
 */
#include <stdint.h>
#include <cuda_runtime.h>
#include "kernels.h"

#define HIST_THREADS 256
#define HIST_VPT 2               /* uint4 vectors a thread an iteration */
#define HIST_BLOCKS_PER_SM 4
#define MAX_GRID_Y 65535
#define FULL_MASK 0xffffffffu

/* Number of zero bytes in x, exact (no borrow false positives). */
__device__ __forceinline__ unsigned zero_bytes(unsigned x)
{
    const unsigned t = (x & 0x7F7F7F7Fu) + 0x7F7F7F7Fu;
    return __popc(~(t | x | 0x7F7F7F7Fu));
}

struct hot_counts {
    unsigned c0, c1, c2, c3;
};

/* Counts the 4 bytes of w: bytes 0..3 into registers; the others into the
 * shared bins, one atomic for the whole warp when all 32 lanes hold the
 * same word (flat regions, one-bin frames), else one a byte.  Called by all
 * 32 lanes together; ok = false lanes contribute nothing. */
__device__ __forceinline__ void count_word(unsigned w, bool ok,
                                           hot_counts &h, unsigned *s_hist,
                                           int lane)
{
    if (ok) {
        h.c0 += zero_bytes(w);
        h.c1 += zero_bytes(w ^ 0x01010101u);
        h.c2 += zero_bytes(w ^ 0x02020202u);
        h.c3 += zero_bytes(w ^ 0x03030303u);
    }
    const bool rare = ok && (w & 0xFCFCFCFCu) != 0;
    if (!__any_sync(FULL_MASK, rare))
        return;
    int same = 0;
    __match_all_sync(FULL_MASK, w, &same);
    same = same && __all_sync(FULL_MASK, ok);
    if (same) {
        if (lane == 0) {
#pragma unroll
            for (int b = 0; b < 4; b++) {
                const unsigned v = (w >> (8 * b)) & 255u;
                if (v >= 4)
                    atomicAdd(&s_hist[v], 32u);
            }
        }
    } else if (rare) {
#pragma unroll
        for (int b = 0; b < 4; b++) {
            const unsigned v = (w >> (8 * b)) & 255u;
            if (v >= 4)
                atomicAdd(&s_hist[v], 1u);
        }
    }
}

__global__ void __launch_bounds__(HIST_THREADS)
    histogram_kernel(const uint8_t *__restrict__ edge, size_t pitch,
                     size_t width, int rows,
                     unsigned long long *__restrict__ hist)
{
    __shared__ unsigned s_hist[GE_HIST_BINS];
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    for (int b = tid; b < GE_HIST_BINS; b += HIST_THREADS)
        s_hist[b] = 0;
    __syncthreads();

    hot_counts h = {0, 0, 0, 0};
    const size_t stride = (size_t)gridDim.x * HIST_THREADS * HIST_VPT;
    const size_t warp_first =
        ((size_t)blockIdx.x * (HIST_THREADS / 32) + warp) * 32 * HIST_VPT;

    for (int y = blockIdx.y; y < rows; y += gridDim.y) {
        const uint8_t *p = edge + (size_t)y * pitch;
        size_t head = (16 - ((uintptr_t)p & 15)) & 15;
        if (head > width)
            head = width;
        const size_t nvec = (width - head) / 16;
        const size_t tail = head + nvec * 16; /* first byte after vectors */
        if (blockIdx.x == 0) {
            if ((size_t)tid < head)
                atomicAdd(&s_hist[p[tid]], 1u);
            if ((size_t)tid < width - tail)
                atomicAdd(&s_hist[p[tail + tid]], 1u);
        }
        const uint4 *v = (const uint4 *)(p + head);
        for (size_t i0 = warp_first; i0 < nvec; i0 += stride) {
            uint4 q[HIST_VPT];
            bool ok[HIST_VPT];
#pragma unroll
            for (int u = 0; u < HIST_VPT; u++) {
                const size_t i = i0 + 32 * u + lane;
                ok[u] = i < nvec;
                q[u] = ok[u] ? __ldg(v + i) : make_uint4(0, 0, 0, 0);
            }
#pragma unroll
            for (int u = 0; u < HIST_VPT; u++) {
                count_word(q[u].x, ok[u], h, s_hist, lane);
                count_word(q[u].y, ok[u], h, s_hist, lane);
                count_word(q[u].z, ok[u], h, s_hist, lane);
                count_word(q[u].w, ok[u], h, s_hist, lane);
            }
        }
    }

    /* the register bins: warp sum, one shared atomic a bin a warp */
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        h.c0 += __shfl_xor_sync(FULL_MASK, h.c0, off);
        h.c1 += __shfl_xor_sync(FULL_MASK, h.c1, off);
        h.c2 += __shfl_xor_sync(FULL_MASK, h.c2, off);
        h.c3 += __shfl_xor_sync(FULL_MASK, h.c3, off);
    }
    if (lane == 0) {
        if (h.c0) atomicAdd(&s_hist[0], h.c0);
        if (h.c1) atomicAdd(&s_hist[1], h.c1);
        if (h.c2) atomicAdd(&s_hist[2], h.c2);
        if (h.c3) atomicAdd(&s_hist[3], h.c3);
    }
    __syncthreads();

    /* merge once a block; empty bins cost nothing */
    for (int b = tid; b < GE_HIST_BINS; b += HIST_THREADS)
        if (s_hist[b])
            atomicAdd(&hist[b], (unsigned long long)s_hist[b]);
}

extern "C" cudaError_t histogram_gpu(const uint8_t *edge, int edge_pitch,
                                     int width, int rows,
                                     unsigned long long *hist,
                                     cudaStream_t stream)
{
    if (width < 0 || rows < 0 || edge_pitch < width)
        return cudaErrorInvalidValue;
    if (width == 0 || rows == 0)
        return cudaGetLastError();
    if (!edge || !hist)
        return cudaErrorInvalidValue;

    int dev = 0, sms = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e == cudaSuccess)
        e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    if (e != cudaSuccess)
        return e;
    if (sms < 1)
        sms = 1;

    /* packed rows are one long row: vectors run across row ends */
    size_t w = (size_t)width;
    int nrows = rows;
    if ((size_t)edge_pitch == w) {
        w *= (size_t)rows;
        nrows = 1;
    }
    const size_t per_block = (size_t)HIST_THREADS * HIST_VPT * 16;
    const size_t want_x = (w + per_block - 1) / per_block;
    const size_t target = (size_t)sms * HIST_BLOCKS_PER_SM;
    const size_t gx = want_x < target ? want_x : target;
    size_t gy = target / gx;
    if (gy > (size_t)nrows)
        gy = (size_t)nrows;
    if (gy > MAX_GRID_Y)
        gy = MAX_GRID_Y;
    if (gy < 1)
        gy = 1;
    const dim3 grid((unsigned)(gx ? gx : 1), (unsigned)gy);
    histogram_kernel<<<grid, HIST_THREADS, 0, stream>>>(
        edge, (size_t)edge_pitch, w, nrows, hist);
    return cudaGetLastError();
}
