/*
 * greyscale.cu — DESIGN.md §1.1-1.2: input frame -> float grey plane.
 *
 * Algorithm.  Each channel sample v becomes
 *     c = __fmul_rn((float)((int)(v >> shift) - offset), gain)
 * and grey is g = fma(0.114, B, fma(0.587, G, 0.299 * R)) for 3/4 channels
 * (alpha ignored), g = c0 for 1/2 channels.  Built with -fmad=false and
 * written with explicit _rn intrinsics, so it is bit-identical to ref_grey.
 *
 * Launch geometry.  Block 128 x 2 threads, 2-D grid over (x, row), rows
 * grid-strided (grid.y <= 65535 for any height).
 *   rgb8_quad_kernel  8-bit RGB, row starts 4-byte aligned: each thread
 *                     converts 4 pixels = 12 bytes with three aligned 32-bit
 *                     loads (a warp reads 384 contiguous bytes) and writes
 *                     one float4 when the grey rows are 16-byte aligned;
 *                     the last (width % 4) pixels of a row take the scalar
 *                     path of the same thread.
 *   rgba8_kernel      8-bit RGBA, aligned: one 32-bit load a pixel.
 *   grey_kernel<C,B>  every other layout (templated on channels and bytes a
 *                     sample), one thread a pixel; 16-bit samples are read
 *                     as bytes when the rows are not 2-byte aligned.
 * No borders: a point operation.
 */
#include <stdint.h>
#include <cuda_runtime.h>
#include "kernels.h"

#define GREY_BX 128
#define GREY_BY 2
#define GREY_MAX_GRID_Y 65535

struct grey_args {
    const unsigned char *src;
    size_t stride;
    float *dst;
    size_t dst_pitch; /* floats */
    int width, height;
    int shift, offset;
    float gain;
};

// ---------------------------------------------------------------------------
// The per-sample and per-pixel arithmetic (DESIGN.md §1 order, no contraction).
__device__ __forceinline__ float chan(unsigned v, const grey_args &a)
{
    return __fmul_rn((float)((int)(v >> a.shift) - a.offset), a.gain);
}

__device__ __forceinline__ float rgb_to_grey(float r, float g, float b)
{
    return __fmaf_rn(0.114f, b, __fmaf_rn(0.587f, g, __fmul_rn(0.299f, r)));
}

template <int BPS, bool ALIGNED>
__device__ __forceinline__ unsigned load_sample(const unsigned char *p)
{
    if (BPS == 1)
        return p[0];
    if (ALIGNED)
        return *(const unsigned short *)p;
    /* native endian = little endian on every CUDA device */
    return (unsigned)p[0] | ((unsigned)p[1] << 8);
}

// ---------------------------------------------------------------------------
template <int C, int BPS, bool ALIGNED>
__global__ void __launch_bounds__(GREY_BX *GREY_BY)
    grey_kernel(grey_args a)
{
    const int x = blockIdx.x * GREY_BX + threadIdx.x;
    if (x >= a.width)
        return;
    for (int y = blockIdx.y * GREY_BY + threadIdx.y; y < a.height;
         y += gridDim.y * GREY_BY) {
        const unsigned char *p = a.src + (size_t)y * a.stride +
                                 (size_t)x * (C * BPS);
        float g;
        if (C >= 3) {
            const float r = chan(load_sample<BPS, ALIGNED>(p), a);
            const float gg = chan(load_sample<BPS, ALIGNED>(p + BPS), a);
            const float b = chan(load_sample<BPS, ALIGNED>(p + 2 * BPS), a);
            g = rgb_to_grey(r, gg, b);
        } else {
            g = chan(load_sample<BPS, ALIGNED>(p), a);
        }
        a.dst[(size_t)y * a.dst_pitch + x] = g;
    }
}

__device__ __forceinline__ float rgb8_px(unsigned r, unsigned g, unsigned b,
                                         const grey_args &a)
{
    return rgb_to_grey(chan(r, a), chan(g, a), chan(b, a));
}

/* 4 RGB pixels = 12 bytes = 3 words w0 w1 w2 (little endian):
 *   w0 = R0 G0 B0 R1, w1 = G1 B1 R2 G2, w2 = B2 R3 G3 B3 */
template <bool VEC_OUT>
__global__ void __launch_bounds__(GREY_BX *GREY_BY)
    rgb8_quad_kernel(grey_args a)
{
    const int q = blockIdx.x * GREY_BX + threadIdx.x; /* quad index */
    const int x = q * 4;
    if (x >= a.width)
        return;
    const bool full = x + 4 <= a.width;
    for (int y = blockIdx.y * GREY_BY + threadIdx.y; y < a.height;
         y += gridDim.y * GREY_BY) {
        const unsigned char *row = a.src + (size_t)y * a.stride;
        float *out = a.dst + (size_t)y * a.dst_pitch + x;
        if (full) {
            const unsigned *w = (const unsigned *)(row + (size_t)x * 3);
            const unsigned w0 = __ldg(w), w1 = __ldg(w + 1), w2 = __ldg(w + 2);
            float4 g;
            g.x = rgb8_px(w0 & 255, (w0 >> 8) & 255, (w0 >> 16) & 255, a);
            g.y = rgb8_px(w0 >> 24, w1 & 255, (w1 >> 8) & 255, a);
            g.z = rgb8_px((w1 >> 16) & 255, w1 >> 24, w2 & 255, a);
            g.w = rgb8_px((w2 >> 8) & 255, (w2 >> 16) & 255, w2 >> 24, a);
            if (VEC_OUT) {
                *(float4 *)out = g;
            } else {
                out[0] = g.x;
                out[1] = g.y;
                out[2] = g.z;
                out[3] = g.w;
            }
        } else {
            /* row tail: fewer than 4 pixels, bytes one at a time so the
             * read never passes the row's last byte */
            for (int i = 0; x + i < a.width; i++) {
                const unsigned char *p = row + (size_t)(x + i) * 3;
                out[i] = rgb8_px(p[0], p[1], p[2], a);
            }
        }
    }
}

__global__ void __launch_bounds__(GREY_BX *GREY_BY) rgba8_kernel(grey_args a)
{
    const int x = blockIdx.x * GREY_BX + threadIdx.x;
    if (x >= a.width)
        return;
    for (int y = blockIdx.y * GREY_BY + threadIdx.y; y < a.height;
         y += gridDim.y * GREY_BY) {
        const unsigned w =
            __ldg((const unsigned *)(a.src + (size_t)y * a.stride) + x);
        a.dst[(size_t)y * a.dst_pitch + x] =
            rgb8_px(w & 255, (w >> 8) & 255, (w >> 16) & 255, a);
    }
}

// ---------------------------------------------------------------------------
static dim3 grid_for(int threads_x, int height)
{
    const int gy = (height + GREY_BY - 1) / GREY_BY;
    return dim3((unsigned)((threads_x + GREY_BX - 1) / GREY_BX),
                (unsigned)(gy < GREY_MAX_GRID_Y ? gy : GREY_MAX_GRID_Y));
}

template <int C, int BPS>
static void launch_generic(const grey_args &a, bool aligned, cudaStream_t s)
{
    const dim3 block(GREY_BX, GREY_BY), grid = grid_for(a.width, a.height);
    if (aligned)
        grey_kernel<C, BPS, true><<<grid, block, 0, s>>>(a);
    else
        grey_kernel<C, BPS, false><<<grid, block, 0, s>>>(a);
}

extern "C" cudaError_t grey_gpu(const ge_frame *f, float *grey,
                                int grey_pitch, cudaStream_t stream)
{
    if (!f || f->channels < 1 || f->channels > 4 ||
        (f->bytes_per_sample != 1 && f->bytes_per_sample != 2) ||
        f->width < 0 || f->height < 0 || grey_pitch < f->width)
        return cudaErrorInvalidValue;
    if (f->width == 0 || f->height == 0)
        return cudaGetLastError();
    if (!f->data || !grey ||
        f->stride < (size_t)f->width * f->channels * f->bytes_per_sample)
        return cudaErrorInvalidValue;

    grey_args a;
    a.src = (const unsigned char *)f->data;
    a.stride = f->stride;
    a.dst = grey;
    a.dst_pitch = (size_t)grey_pitch;
    a.width = f->width;
    a.height = f->height;
    a.shift = f->shift;
    a.offset = f->offset;
    a.gain = f->gain;

    const uintptr_t sp = (uintptr_t)f->data;
    const bool rows4 = sp % 4 == 0 && f->stride % 4 == 0;
    const bool rows2 = sp % 2 == 0 && f->stride % 2 == 0;
    const dim3 block(GREY_BX, GREY_BY);
    const int C = f->channels;

    if (f->bytes_per_sample == 1 && C == 3 && rows4) {
        const bool vec_out = (uintptr_t)grey % 16 == 0 && grey_pitch % 4 == 0;
        const dim3 grid = grid_for((f->width + 3) / 4, f->height);
        if (vec_out)
            rgb8_quad_kernel<true><<<grid, block, 0, stream>>>(a);
        else
            rgb8_quad_kernel<false><<<grid, block, 0, stream>>>(a);
    } else if (f->bytes_per_sample == 1 && C == 4 && rows4) {
        rgba8_kernel<<<grid_for(f->width, f->height), block, 0, stream>>>(a);
    } else if (f->bytes_per_sample == 1) {
        switch (C) {
        case 1: launch_generic<1, 1>(a, true, stream); break;
        case 2: launch_generic<2, 1>(a, true, stream); break;
        case 3: launch_generic<3, 1>(a, true, stream); break;
        default: launch_generic<4, 1>(a, true, stream); break;
        }
    } else {
        switch (C) {
        case 1: launch_generic<1, 2>(a, rows2, stream); break;
        case 2: launch_generic<2, 2>(a, rows2, stream); break;
        case 3: launch_generic<3, 2>(a, rows2, stream); break;
        default: launch_generic<4, 2>(a, rows2, stream); break;
        }
    }
    return cudaGetLastError();
}
