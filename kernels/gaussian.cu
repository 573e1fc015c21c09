/*
 * gaussian.cu — DESIGN.md §1.3 separable Gaussian: horizontal and vertical pass.
 *
 * Algorithm.  out = w[0]*x(-r), then out = fma(w[k], x(k - r), out) for
 * k = 1..2r, taps in increasing offset (left to right, top to bottom), the
 * tap table in __constant__ memory (every lane reads the same tap: a
 * broadcast).  Each pass is a shared-memory tile with a halo of r:
 *   blur_h_kernel  block 32 x 8; each warp owns one row of a 128-column
 *                  tile: it loads 128 + 2r border-mapped floats (coalesced,
 *                  consecutive lanes on consecutive columns) into its own
 *                  shared row, __syncwarp, and each lane computes 4 outputs
 *                  32 columns apart (consecutive lanes hit consecutive banks,
 *                  and the 4 independent accumulators give the FMA chain
 *                  ILP).  No block barrier: warps never share data.
 *   blur_v_kernel  block 32 x 8; a 32-column x 64-row output tile; the
 *                  block loads 64 + 2r border-mapped rows of 32 floats (one
 *                  128-byte line a warp-row), __syncthreads, and each
 *                  thread computes 8 outputs 8 rows apart.  Column reads
 *                  s[row][tx] are conflict-free without padding.
 * Both grid-stride over row tiles (grid.y <= 65535 for any height).  The
 * tap loop is a runtime loop over r (1..32): one kernel for every sigma.
 *
 * Borders (DESIGN.md §1.5) are applied while the tile is loaded, so every tap
 * reads a border-mapped value: replicate clamps, reflect101 folds (W = 1 ->
 * 0, any radius >= size), zero stores 0.  Vertical mapping is against the
 * full height H; the input pointer holds image rows [in_y0, in_y0 +
 * in_rows), and the launcher refuses (cudaErrorInvalidValue) a window
 * whose mapped rows are not all present, so a kernel never reads outside
 * the caller's buffer.  Tile rows no valid output needs are not loaded.
 *
 * Radius 0 (sigma 0) is a copy (cudaMemcpy2DAsync).  The launchers take
 * the radius from the last gaussian_set_taps_gpu call (a host-side copy of
 * it sizes the halo), so set the taps before the first blur and do not
 * change them while blur kernels of another stream may still read them.
 */
#include <stdint.h>
#include <cuda_runtime.h>
#include "kernels.h"
#include "border.h"

#define BH_TW 128 /* blur_h: output columns a tile */
#define BH_ROWS 8 /* blur_h: rows a block (one a warp) */
#define BH_PX (BH_TW / 32)
#define BH_HALO ((2 * GE_MAX_RADIUS + 31) / 32) /* halo loads a lane */
#define BV_TW 32  /* blur_v: output columns a tile */
#define BV_BY 8
#define BV_TH 64  /* blur_v: output rows a tile */
#define BV_PX (BV_TH / BV_BY)
#define BV_HALO ((2 * GE_MAX_RADIUS + BV_BY - 1) / BV_BY)
#define MAX_GRID_Y 65535

__constant__ float c_taps[GE_MAX_TAPS];

/* The radius the constant table holds, as far as the host knows (-1: never
 * set).  Launch geometry (shared-memory halo) depends on it. */
static int h_radius = -1;

// Border mapping, DESIGN.md §1.5: map_border() in border.h.

// ---------------------------------------------------------------------------
__global__ void __launch_bounds__(32 * BH_ROWS)
    blur_h_kernel(const float *__restrict__ in, size_t in_pitch,
                  float *__restrict__ out, size_t out_pitch, int width,
                  int rows, int r, int border)
{
    extern __shared__ float smem[];
    const int lane = threadIdx.x;
    const int span = BH_TW + 2 * r;
    float *s = smem + threadIdx.y * span; /* this warp's row */
    const int x0 = blockIdx.x * BH_TW;

    for (int y = blockIdx.y * BH_ROWS + threadIdx.y; y < rows;
         y += gridDim.y * BH_ROWS) {
        const float *src = in + (size_t)y * in_pitch;
        /* all loads first (unrolled, independent), then the stores: the
         * loads are in flight together instead of one latency each */
        float v[BH_PX + BH_HALO];
#pragma unroll
        for (int q = 0; q < BH_PX + BH_HALO; q++) {
            const int j = lane + 32 * q;
            const int m = map_border(x0 - r + j, width, border);
            v[q] = (j < span && m >= 0) ? __ldg(src + m) : 0.0f;
        }
#pragma unroll
        for (int q = 0; q < BH_PX + BH_HALO; q++)
            if (lane + 32 * q < span)
                s[lane + 32 * q] = v[q];
        __syncwarp();

        float acc[BH_PX];
        const float w0 = c_taps[0];
#pragma unroll
        for (int o = 0; o < BH_PX; o++)
            acc[o] = __fmul_rn(w0, s[lane + 32 * o]);
#pragma unroll 4
        for (int k = 1; k <= 2 * r; k++) {
            const float w = c_taps[k];
#pragma unroll
            for (int o = 0; o < BH_PX; o++)
                acc[o] = __fmaf_rn(w, s[lane + 32 * o + k], acc[o]);
        }
        float *dst = out + (size_t)y * out_pitch;
#pragma unroll
        for (int o = 0; o < BH_PX; o++) {
            const int x = x0 + lane + 32 * o;
            if (x < width)
                dst[x] = acc[o];
        }
        __syncwarp(); /* the row is reloaded next iteration */
    }
}

__global__ void __launch_bounds__(BV_TW *BV_BY)
    blur_v_kernel(const float *__restrict__ in, size_t in_pitch, int width,
                  int H, int in_y0, float *__restrict__ out, size_t out_pitch,
                  int y0, int rows, int r, int border)
{
    extern __shared__ float smem[]; /* [BV_TH + 2r][BV_TW] */
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int x = blockIdx.x * BV_TW + tx;
    const int ntiles = (rows + BV_TH - 1) / BV_TH;

    for (int t = blockIdx.y; t < ntiles; t += gridDim.y) {
        const int ty0 = y0 + t * BV_TH; /* image row of the tile's output 0 */
        int valid = y0 + rows - ty0;
        if (valid > BV_TH)
            valid = BV_TH;
        const int need = valid + 2 * r; /* tile rows any valid output reads */
        /* all loads first (unrolled, independent), then the stores */
        float v[BV_PX + BV_HALO];
#pragma unroll
        for (int q = 0; q < BV_PX + BV_HALO; q++) {
            const int j = ty + BV_BY * q;
            v[q] = 0.0f;
            if (j < need && x < width) {
                const int m = map_border(ty0 - r + j, H, border);
                if (m >= 0)
                    v[q] = __ldg(in + (size_t)(m - in_y0) * in_pitch + x);
            }
        }
#pragma unroll
        for (int q = 0; q < BV_PX + BV_HALO; q++) {
            const int j = ty + BV_BY * q;
            if (j < BV_TH + 2 * r)
                smem[j * BV_TW + tx] = v[q];
        }
        __syncthreads();

        float acc[BV_PX];
        const float w0 = c_taps[0];
#pragma unroll
        for (int o = 0; o < BV_PX; o++)
            acc[o] = __fmul_rn(w0, smem[(ty + BV_BY * o) * BV_TW + tx]);
#pragma unroll 2
        for (int k = 1; k <= 2 * r; k++) {
            const float w = c_taps[k];
#pragma unroll
            for (int o = 0; o < BV_PX; o++)
                acc[o] = __fmaf_rn(
                    w, smem[(ty + BV_BY * o + k) * BV_TW + tx], acc[o]);
        }
        if (x < width) {
#pragma unroll
            for (int o = 0; o < BV_PX; o++) {
                const int i = ty + BV_BY * o;
                if (i < valid)
                    out[(size_t)(ty0 - y0 + i) * out_pitch + x] = acc[o];
            }
        }
        __syncthreads(); /* the tile is reloaded next iteration */
    }
}

// ---------------------------------------------------------------------------
extern "C" cudaError_t gaussian_set_taps_gpu(const ge_taps *t,
                                             cudaStream_t stream)
{
    if (!t || t->radius < 0 || t->radius > GE_MAX_RADIUS)
        return cudaErrorInvalidValue;
    if (t->radius > 0) {
        /* From pageable memory the call returns once the data is staged,
         * so the caller may reuse *t at once. */
        const cudaError_t e = cudaMemcpyToSymbolAsync(
            c_taps, t->w, sizeof(float) * (2 * t->radius + 1), 0,
            cudaMemcpyHostToDevice, stream);
        if (e != cudaSuccess)
            return e;
    }
    h_radius = t->radius;
    return cudaGetLastError();
}

static bool border_ok(int border)
{
    return border == GE_BORDER_REPLICATE || border == GE_BORDER_REFLECT101 ||
           border == GE_BORDER_ZERO;
}

extern "C" cudaError_t blur_h_gpu(const float *in, int in_pitch, float *out,
                                  int out_pitch, int width, int rows,
                                  int border, cudaStream_t stream)
{
    if (width < 0 || rows < 0 || in_pitch < width || out_pitch < width ||
        !border_ok(border))
        return cudaErrorInvalidValue;
    if (width == 0 || rows == 0)
        return cudaGetLastError();
    if (!in || !out || h_radius < 0)
        return cudaErrorInvalidValue;
    const int r = h_radius;
    if (r == 0) {
        if (in != out) {
            const cudaError_t e = cudaMemcpy2DAsync(
                out, sizeof(float) * out_pitch, in, sizeof(float) * in_pitch,
                sizeof(float) * width, rows, cudaMemcpyDeviceToDevice, stream);
            if (e != cudaSuccess)
                return e;
        }
        return cudaGetLastError();
    }
    const int gy = (rows + BH_ROWS - 1) / BH_ROWS;
    const dim3 block(32, BH_ROWS);
    const dim3 grid((unsigned)((width + BH_TW - 1) / BH_TW),
                    (unsigned)(gy < MAX_GRID_Y ? gy : MAX_GRID_Y));
    const size_t shm = sizeof(float) * BH_ROWS * (BH_TW + 2 * r);
    blur_h_kernel<<<grid, block, shm, stream>>>(in, (size_t)in_pitch, out,
                                                (size_t)out_pitch, width,
                                                rows, r, border);
    return cudaGetLastError();
}

extern "C" cudaError_t blur_v_gpu(const float *in, int in_pitch, int width,
                                  int H, int in_y0, int in_rows, float *out,
                                  int out_pitch, int y0, int rows, int border,
                                  cudaStream_t stream)
{
    if (width < 0 || rows < 0 || in_pitch < width || out_pitch < width ||
        !border_ok(border))
        return cudaErrorInvalidValue;
    if (width == 0 || rows == 0)
        return cudaGetLastError();
    if (!in || !out || h_radius < 0)
        return cudaErrorInvalidValue;
    const int r = h_radius;
    if (!window_holds(H, in_y0, in_rows, y0, rows, r, border))
        return cudaErrorInvalidValue;
    if (r == 0) {
        const float *src = in + (size_t)(y0 - in_y0) * in_pitch;
        if (src != out) {
            const cudaError_t e = cudaMemcpy2DAsync(
                out, sizeof(float) * out_pitch, src, sizeof(float) * in_pitch,
                sizeof(float) * width, rows, cudaMemcpyDeviceToDevice, stream);
            if (e != cudaSuccess)
                return e;
        }
        return cudaGetLastError();
    }
    const int gy = (rows + BV_TH - 1) / BV_TH;
    const dim3 block(BV_TW, BV_BY);
    const dim3 grid((unsigned)((width + BV_TW - 1) / BV_TW),
                    (unsigned)(gy < MAX_GRID_Y ? gy : MAX_GRID_Y));
    const size_t shm = sizeof(float) * BV_TW * (BV_TH + 2 * r);
    blur_v_kernel<<<grid, block, shm, stream>>>(
        in, (size_t)in_pitch, width, H, in_y0, out, (size_t)out_pitch, y0,
        rows, r, border);
    return cudaGetLastError();
}
