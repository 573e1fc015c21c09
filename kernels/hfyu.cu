/*
 * hfyu.cu — FFVHuff gray8 frames coded on the GPU; see hfyu_gpu.h.
 *
 * Pixels are taken in raster order (index i = y * w + x), so a tile of
 * HFYU_TILE pixels may span rows: the residual of each pixel depends only
 * on the frame, never on the tile.  A thread holds HFYU_PPT consecutive
 * pixels; its codes (at most 16 bits each) span at most HFYU_PPT * 16 + 31
 * bits, so they go out as whole words from a 64-bit accumulator.
 */
#include <stdint.h>
#include <string.h>
#include <cuda_runtime.h>
#include "hfyu_gpu.h"

#define HFYU_THREADS 256
#define HFYU_PPT 8
#define HFYU_TILE (HFYU_THREADS * HFYU_PPT)
#define HFYU_SCAN_THREADS 1024

typedef struct ge_hfyu_codes {
    uint32_t cl[256];
} ge_hfyu_codes;

static size_t tiles_of(int w, int h)
{
    return ((size_t)w * (size_t)h + HFYU_TILE - 1) / HFYU_TILE;
}

size_t hfyu_gpu_max_bytes(int w, int h)
{
    return ((size_t)w * (size_t)h * 16 + 31) / 32 * 4;
}

/* tile bit counts (uint32) then tile offsets (uint64) */
size_t hfyu_gpu_scratch_bytes(int w, int h)
{
    size_t n = tiles_of(w, h);
    return (n * 4 + 7) / 8 * 8 + n * 8;
}

/* The residual of pixel (x, y) (hfyu_enc.c: row 0 from the left starting
 * at 0; later rows median of left, top and left + top - top-left, where at
 * x = 0 the left is the row above's last pixel and the top-left the last
 * pixel of the row above that, or for row 1 the frame's first pixel). */
__device__ __forceinline__ unsigned residual(const uint8_t *__restrict__ p, int pitch, int w,
                                             int x, int y)
{
    const uint8_t *row = p + (size_t)y * pitch;
    int c = __ldg(row + x);
    if (y == 0)
        return (unsigned)(c - (x ? __ldg(row + x - 1) : 0)) & 0xFF;
    const uint8_t *top = row - pitch;
    int t = __ldg(top + x), l, lt;
    if (x) {
        l = __ldg(row + x - 1);
        lt = __ldg(top + x - 1);
    } else {
        l = __ldg(top + w - 1);
        lt = y == 1 ? __ldg(top) : __ldg(top - pitch + w - 1);
    }
    int g = (l + t - lt) & 0xFF;
    int mn = min(l, t), mx = max(l, t);
    int med = g < mn ? mn : g > mx ? mx : g;
    return (unsigned)(c - med) & 0xFF;
}

/* This thread's pixels' code entries (code << 5 | len; 0 past the end) and
 * the sum of their lengths. */
__device__ __forceinline__ unsigned thread_codes(const uint8_t *__restrict__ p, int pitch, int w,
                                                 size_t npx, const ge_hfyu_codes &t,
                                                 uint32_t cl[HFYU_PPT])
{
    size_t i = ((size_t)blockIdx.x * HFYU_THREADS + threadIdx.x) * HFYU_PPT;
    int y = (int)(i / (size_t)w), x = (int)(i - (size_t)y * w);
    unsigned bits = 0;
#pragma unroll
    for (int k = 0; k < HFYU_PPT; k++) {
        cl[k] = 0;
        if (i + k < npx) {
            cl[k] = t.cl[residual(p, pitch, w, x, y)];
            bits += cl[k] & 31;
        }
        if (++x == w) {
            x = 0;
            y++;
        }
    }
    return bits;
}

/* Block-wide exclusive prefix sum of v (HFYU_THREADS threads); *total gets
 * the block's sum. */
__device__ __forceinline__ unsigned block_excl(unsigned v, unsigned *total)
{
    __shared__ unsigned warp_sum[HFYU_THREADS / 32];
    const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    unsigned inc = v;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        unsigned o = __shfl_up_sync(0xffffffffu, inc, d);
        if (lane >= d)
            inc += o;
    }
    if (lane == 31)
        warp_sum[wid] = inc;
    __syncthreads();
    if (wid == 0) {
        unsigned s = lane < HFYU_THREADS / 32 ? warp_sum[lane] : 0, si = s;
#pragma unroll
        for (int d = 1; d < 32; d <<= 1) {
            unsigned o = __shfl_up_sync(0xffffffffu, si, d);
            if (lane >= d)
                si += o;
        }
        if (lane < HFYU_THREADS / 32)
            warp_sum[lane] = si - s; /* exclusive, per warp */
        if (lane == HFYU_THREADS / 32 - 1)
            *total = si;
    }
    __syncthreads();
    return warp_sum[wid] + inc - v;
}

__global__ void __launch_bounds__(HFYU_THREADS)
hfyu_len(const uint8_t *__restrict__ p, int pitch, int w, size_t npx, const ge_hfyu_codes t,
         uint32_t *__restrict__ tile_bits)
{
    __shared__ unsigned total;
    uint32_t cl[HFYU_PPT];
    unsigned bits = thread_codes(p, pitch, w, npx, t, cl);
    block_excl(bits, &total);
    __syncthreads();
    if (threadIdx.x == 0)
        tile_bits[blockIdx.x] = total;
}

/* One block: the tiles' exclusive offsets (64-bit) and the packet's bytes. */
__global__ void __launch_bounds__(HFYU_SCAN_THREADS)
hfyu_scan(const uint32_t *__restrict__ tile_bits, size_t ntiles,
          unsigned long long *__restrict__ tile_off, unsigned long long *__restrict__ d_bytes)
{
    __shared__ unsigned long long part[HFYU_SCAN_THREADS];
    const size_t per = (ntiles + HFYU_SCAN_THREADS - 1) / HFYU_SCAN_THREADS;
    const size_t b = threadIdx.x * per, e = b + per < ntiles ? b + per : ntiles;
    unsigned long long s = 0;
    for (size_t k = b; k < e; k++)
        s += tile_bits[k];
    part[threadIdx.x] = s;
    __syncthreads();
    /* Hillis-Steele over the 1024 partial sums (inclusive) */
    for (int d = 1; d < HFYU_SCAN_THREADS; d <<= 1) {
        unsigned long long o = threadIdx.x >= (unsigned)d ? part[threadIdx.x - d] : 0;
        __syncthreads();
        part[threadIdx.x] += o;
        __syncthreads();
    }
    unsigned long long off = part[threadIdx.x] - s;
    for (size_t k = b; k < e; k++) {
        tile_off[k] = off;
        off += tile_bits[k];
    }
    if (threadIdx.x == HFYU_SCAN_THREADS - 1)
        *d_bytes = (part[threadIdx.x] + 31) / 32 * 4;
}

__global__ void __launch_bounds__(HFYU_THREADS)
hfyu_pack(const uint8_t *__restrict__ p, int pitch, int w, size_t npx, const ge_hfyu_codes t,
          const unsigned long long *__restrict__ tile_off, uint32_t *__restrict__ out)
{
    __shared__ unsigned total;
    uint32_t cl[HFYU_PPT];
    unsigned bits = thread_codes(p, pitch, w, npx, t, cl);
    unsigned long long pos = tile_off[blockIdx.x] + block_excl(bits, &total);
    if (!bits)
        return; /* past the frame's end */
    size_t wi = (size_t)(pos >> 5);
    const size_t first = wi;
    const int lead = (int)(pos & 31); /* bits of the first word before ours */
    uint64_t acc = 0;
    int n = lead;
#pragma unroll
    for (int k = 0; k < HFYU_PPT; k++) {
        int len = (int)(cl[k] & 31);
        acc = acc << len | (cl[k] >> 5);
        n += len;
        if (n >= 32) {
            n -= 32;
            uint32_t word = (uint32_t)(acc >> n);
            if (wi == first && lead)
                atomicOr(out + wi, word); /* shared with the thread before */
            else
                out[wi] = word;
            wi++;
        }
    }
    if (n > 0) /* shared with the thread after (or the padding) */
        atomicOr(out + wi, (uint32_t)(acc << (32 - n)));
}

cudaError_t hfyu_gpu(const uint8_t *edge, int pitch, int w, int h, const uint32_t *codes,
                     uint32_t *out, void *scratch, unsigned long long *d_bytes,
                     cudaStream_t stream)
{
    const size_t npx = (size_t)w * (size_t)h, nt = tiles_of(w, h);
    uint32_t *tile_bits = (uint32_t *)scratch;
    unsigned long long *tile_off =
        (unsigned long long *)((char *)scratch + (nt * 4 + 7) / 8 * 8);
    ge_hfyu_codes t;
    cudaError_t e;
    if (w <= 0 || h <= 0)
        return cudaErrorInvalidValue;
    memcpy(t.cl, codes, sizeof t.cl);
    e = cudaMemsetAsync(out, 0, hfyu_gpu_max_bytes(w, h), stream);
    if (e != cudaSuccess)
        return e;
    hfyu_len<<<(unsigned)nt, HFYU_THREADS, 0, stream>>>(edge, pitch, w, npx, t, tile_bits);
    hfyu_scan<<<1, HFYU_SCAN_THREADS, 0, stream>>>(tile_bits, nt, tile_off, d_bytes);
    hfyu_pack<<<(unsigned)nt, HFYU_THREADS, 0, stream>>>(edge, pitch, w, npx, t, tile_off,
                                                         out);
    return cudaGetLastError();
}
