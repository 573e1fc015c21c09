/*
 * sobel.cu — DESIGN.md §1.4 + §1.6: Sobel magnitude of the blurred plane ->
 * 8-bit edge map (scale, threshold, invert).
 *
 * Algorithm.  With b(dy, dx) the border-mapped neighbour,
 *   L = (b(-1,-1) + 2 b(0,-1)) + b(+1,-1)   R = (b(-1,+1) + 2 b(0,+1)) + b(+1,+1)
 *   T = (b(-1,-1) + 2 b(-1,0)) + b(-1,+1)   D = (b(+1,-1) + 2 b(+1,0)) + b(+1,+1)
 *   gx = R - L, gy = D - T, m = sqrt_rn(fma(gx, gx, gy * gy))
 *   e = t >= 255 ? 255 : floor(t), t = fma(m, scale, 0.5)
 *   threshold: e = m * scale >= T ? 255 : 0;  invert: e = 255 - e
 * each operation an explicit _rn intrinsic (bit-identical to ref_sobel).
 *
 * Launch geometry.  Block 32 x 8, output tile 128 columns x 32 rows, shared
 * tile (32 + 2) x (128 + 2) floats with the 1-pixel halo, loaded by rows
 * (consecutive lanes on consecutive columns: coalesced, conflict-free).
 * Each thread computes 4 columns 32 apart x 4 consecutive rows, sliding a
 * 3-row window down each column so a tile value is read from shared memory
 * about once a thread.  A warp's stores are 32 consecutive bytes (one
 * sector).  Row tiles are grid-strided (grid.y <= 65535).
 *
 * Borders (DESIGN.md §1.5) are applied while the tile is loaded: replicate,
 * reflect101 (W = 1 or H = 1 -> 0), zero (0 outside).  Rows map against the
 * full height H; the input pointer holds rows [in_y0, in_y0 + in_rows) and
 * the launcher refuses a window whose mapped rows are not all there.
 */
#include <stdint.h>
#include <cuda_runtime.h>
#include "kernels.h"
#include "border.h"

#define SB_TW 128
#define SB_TH 32
#define SB_BY 8
#define SB_RPT (SB_TH / SB_BY) /* rows a thread */
#define SB_CPT (SB_TW / 32)    /* columns a thread */
#define SB_SW (SB_TW + 2)      /* shared row length */
#define SB_LR ((SB_TH + 2 + SB_BY - 1) / SB_BY) /* tile rows a thread loads */
#define SB_LC ((SB_SW + 31) / 32)               /* tile columns a lane loads */
#define MAX_GRID_Y 65535

// Border mapping, DESIGN.md §1.5: map_border() in border.h.

struct sobel_params {
    float scale, threshold;
    int use_threshold, invert;
};

__device__ __forceinline__ uint8_t edge_value(float gx, float gy,
                                              const sobel_params &p)
{
    const float m = __fsqrt_rn(__fmaf_rn(gx, gx, __fmul_rn(gy, gy)));
    uint8_t e;
    if (p.use_threshold) {
        e = __fmul_rn(m, p.scale) >= p.threshold ? 255 : 0;
    } else {
        const float t = __fmaf_rn(m, p.scale, 0.5f);
        e = t >= 255.0f ? 255 : (uint8_t)floorf(t);
    }
    return p.invert ? (uint8_t)(255 - e) : e;
}

// ---------------------------------------------------------------------------
__global__ void __launch_bounds__(32 * SB_BY, 4)
    sobel_kernel(const float *__restrict__ in, size_t in_pitch, int width,
                 int H, int in_y0, uint8_t *__restrict__ out,
                 size_t out_pitch, int y0, int rows, int border,
                 sobel_params p)
{
    __shared__ float s[SB_TH + 2][SB_SW];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int x0 = blockIdx.x * SB_TW;
    const int ntiles = (rows + SB_TH - 1) / SB_TH;

    for (int t = blockIdx.y; t < ntiles; t += gridDim.y) {
        const int ty0 = y0 + t * SB_TH; /* image row of tile output row 0 */
        int valid = y0 + rows - ty0;
        if (valid > SB_TH)
            valid = SB_TH;
        /* mapped columns once a tile; then every load of the tile in
         * flight together (unrolled, independent), then the stores */
        int cm[SB_LC];
#pragma unroll
        for (int q = 0; q < SB_LC; q++)
            cm[q] = map_border(x0 - 1 + tx + 32 * q, width, border);
        float v[SB_LR][SB_LC];
#pragma unroll
        for (int pr = 0; pr < SB_LR; pr++) {
            const int j = ty + SB_BY * pr;
            const int m = (j < SB_TH + 2 && j < valid + 2)
                              ? map_border(ty0 - 1 + j, H, border)
                              : -1;
            const float *src = in + (size_t)(m < 0 ? 0 : m - in_y0) * in_pitch;
#pragma unroll
            for (int q = 0; q < SB_LC; q++)
                v[pr][q] = (m >= 0 && cm[q] >= 0 && tx + 32 * q < SB_SW)
                               ? __ldg(src + cm[q])
                               : 0.0f;
        }
#pragma unroll
        for (int pr = 0; pr < SB_LR; pr++)
#pragma unroll
            for (int q = 0; q < SB_LC; q++) {
                const int j = ty + SB_BY * pr, i = tx + 32 * q;
                if (j < SB_TH + 2 && i < SB_SW)
                    s[j][i] = v[pr][q];
            }
        __syncthreads();

#pragma unroll
        for (int c = 0; c < SB_CPT; c++) {
            const int col = tx + 32 * c; /* tile column; s index col+1 */
            const int x = x0 + col;
            const int r0 = ty * SB_RPT;  /* tile row of the first output */
            float al = s[r0][col], ac = s[r0][col + 1], ar = s[r0][col + 2];
            float bl = s[r0 + 1][col], bc = s[r0 + 1][col + 1],
                  br = s[r0 + 1][col + 2];
#pragma unroll
            for (int i = 0; i < SB_RPT; i++) {
                const float cl = s[r0 + i + 2][col];
                const float cc = s[r0 + i + 2][col + 1];
                const float cr = s[r0 + i + 2][col + 2];
                /* a: row -1, b: row 0, c: row +1 */
                const float L = __fadd_rn(__fadd_rn(al, __fmul_rn(2.0f, bl)), cl);
                const float R = __fadd_rn(__fadd_rn(ar, __fmul_rn(2.0f, br)), cr);
                const float T = __fadd_rn(__fadd_rn(al, __fmul_rn(2.0f, ac)), ar);
                const float D = __fadd_rn(__fadd_rn(cl, __fmul_rn(2.0f, cc)), cr);
                const float gx = __fsub_rn(R, L);
                const float gy = __fsub_rn(D, T);
                if (x < width && r0 + i < valid)
                    out[(size_t)(ty0 - y0 + r0 + i) * out_pitch + x] =
                        edge_value(gx, gy, p);
                al = bl; ac = bc; ar = br;
                bl = cl; bc = cc; br = cr;
            }
        }
        __syncthreads(); /* the tile is reloaded next iteration */
    }
}

// ---------------------------------------------------------------------------
extern "C" cudaError_t sobel_gpu(const float *blur, int blur_pitch,
                                 int width, int H, int in_y0, int in_rows,
                                 uint8_t *edge, int edge_pitch, int y0,
                                 int rows, const ge_params *p,
                                 cudaStream_t stream)
{
    if (!p || width < 0 || rows < 0 || blur_pitch < width ||
        edge_pitch < width ||
        (p->border != GE_BORDER_REPLICATE &&
         p->border != GE_BORDER_REFLECT101 && p->border != GE_BORDER_ZERO))
        return cudaErrorInvalidValue;
    if (width == 0 || rows == 0)
        return cudaGetLastError();
    if (!blur || !edge || !window_holds(H, in_y0, in_rows, y0, rows, 1, p->border))
        return cudaErrorInvalidValue;

    sobel_params sp;
    sp.scale = p->scale;
    sp.threshold = p->threshold;
    sp.use_threshold = p->use_threshold != 0;
    sp.invert = p->invert != 0;

    const int gy = (rows + SB_TH - 1) / SB_TH;
    const dim3 block(32, SB_BY);
    const dim3 grid((unsigned)((width + SB_TW - 1) / SB_TW),
                    (unsigned)(gy < MAX_GRID_Y ? gy : MAX_GRID_Y));
    sobel_kernel<<<grid, block, 0, stream>>>(blur, (size_t)blur_pitch, width,
                                             H, in_y0, edge,
                                             (size_t)edge_pitch, y0, rows,
                                             p->border, sp);
    return cudaGetLastError();
}
