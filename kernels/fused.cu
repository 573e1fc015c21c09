/*
 * fused.cu — DESIGN.md §1 end to end in ONE kernel: input frame (8/16-bit,
 * 1..4 channels, ge_frame's shift/offset/gain) -> grey -> blur H -> blur V
 * -> Sobel -> quantise (scale / threshold / invert) -> 8-bit edge map, plus
 * the 256-bin histogram.  No float plane touches device memory: the only
 * DRAM traffic is the input (with a small halo re-read, mostly from L2),
 * the edge bytes and 256 64-bit atomics a block.
 *
 * Algorithm, one output tile of FT_W x FT_H = 128 x 32 pixels per block
 * iteration (256 threads), every intermediate in shared memory:
 *   1. grey   (34 x (GR = 32 + 2 + 2r)) groups of 4 pixels: virtual columns
 *             X0 - GH .. (GH = HOFF + r, a multiple of 4, so each group is a
 *             4-pixel-aligned run of the input row), virtual rows
 *             Y0 - 1 - r ..  Each row's border-mapped byte offset comes
 *             from a per-tile row table in shared memory (computed one tile
 *             ahead, so the hot loop has no mapping code).  Every group's
 *             raw words are loaded before any is converted (all loads of a
 *             thread in flight together):
 *             8-bit RGB: three aligned 32-bit loads a group (a warp reads
 *             384 contiguous bytes), RGBA: one 16-byte load, luma: one
 *             32-bit load.  Bytes become floats exactly with the
 *             0x4B000000 trick (PRMT + FADD: (2^23 + v) - (2^23 + offset)
 *             = v - offset exactly), then * gain (skipped when gain 1,
 *             offset 0) and the RGB formula.  Groups that touch the left or
 *             right image border, 16-bit and unaligned frames, and shift
 *             != 0 take the per-pixel path (border-mapped column, generic
 *             sample load, I2F + FMUL exactly as ref_channel).
 *   2. blur H over every grey row, h slots j = virtual x X0 - HOFF + j
 *             (HOFF = 4 - r mod 4, so the 4 + 2r taps of 4 outputs are
 *             (4 + 2r) / 4 aligned LDS.128): 4 outputs a thread-item,
 *             h = w0*x(-r), then fma left to right (taps from __constant__,
 *             operand-bank FFMAs).
 *   3. blur V into the b tile (rows Y0 - 1 .. Y0 + 32, the Sobel halo
 *             included; it overwrites the dead grey tile): 7 row chunks x
 *             33 column groups = 231 items of 5 rows x 4 columns, sliding
 *             down the h rows (each h float4 read once an item).
 *   4. border fix-up (only tiles on an image border): a b slot whose
 *             virtual coordinate is outside the image (x = -1, x = W,
 *             y = -1, y = H) takes the b value at the border-MAPPED
 *             coordinate, which always lies inside the same tile (or 0 for
 *             the zero border) — DESIGN.md §1.4: Sobel sees border-mapped blur
 *             values, never a blur evaluated outside the image.
 *   5. Sobel + quantise: each thread 4 columns x 4 rows, a 3-row window
 *             sliding down; the [1 2 1] sums are shared between neighbours
 *             (T/D along rows, L/R along columns), each still evaluated in
 *             DESIGN.md §1's order.  sqrt: the operations of __fsqrt_rn's own fast
 *             path (rsqrt estimate + one residual Newton step, correctly
 *             rounded for q in [2^-101, FLT_MAX]) without its per-pixel
 *             branch; q outside that range (tiny, inf, NaN) sets a flag
 *             and those pixels are recomputed with __fsqrt_rn; q = 0 gives
 *             NaN, which the quantiser maps to e = 0 exactly as sqrt(0)
 *             (the threshold test selects a true 0).  Quantise without
 *             conversions: floor(t) for 0 <= t <= 255 is the low byte of
 *             fadd_rd(min(max(t, 0), 255), 2^23).  4 bytes are packed
 *             (PRMT) and stored as one 32-bit word (coalesced 128-byte
 *             rows a warp).
 *   6. histogram: per-block 256 shared bins; each pixel one
 *             red.shared.add 1 (SASS ATOMS.POPC.INC: the hardware
 *             aggregates the lanes of a warp that hit the same bin, so
 *             flat images piling into bin 0 cost no more — measured faster
 *             than counting bins 0..3 in registers).  The address is one
 *             LEA of the quantiser's 2^23-biased float bits.  The block
 *             merges its non-zero bins into the 64-bit global bins once,
 *             at exit.  Counts are kept on the pre-invert value
 *             (threshold: key 0/1) and mapped to the output bin there.
 *
 * Borders (DESIGN.md §1.5).  Every grey slot is loaded from the border-mapped
 * (row, column) (0 for the zero border), so every blur tap — H and V —
 * reads x(k) at the mapped neighbour, for any radius >= size, 1 x 1 too.
 * Rows map against the full height H through the row window (kernels.h):
 * f->data holds image rows [in_y0, in_y0 + f->height); the launcher
 * refuses a window missing a row the kernel would read.  Virtual rows past
 * the last output row + r are never loaded (zeros), so the last tile of a
 * strip reads nothing outside the caller's window.
 *
 * Why bit-exact.  Every arithmetic operation is an explicit _rn intrinsic in
 * DESIGN.md §1's order (file built with -fmad=false): the same operations, on
 * the same operands, as ref_process and the staged kernels.  Two rewrites
 * are exact identities, not approximations:
 *   - `a + 2*b` is written fmaf(2, b, a): 2*b is exact (a power-of-two
 *     scale; |b| < 2^127 always holds here), so the fma's single rounding
 *     of a + 2b equals the addition's;
 *   - byte -> float via the 2^23 trick and floor via fadd_rd(t, 2^23)
 *     are exact for the ranges used (integers < 2^23; 0 <= t <= 255).
 *
 * Launch geometry.  256 threads; grid = (ceil(W / 128), ceil(rows / 32))
 * (grid.y capped at 65535, row tiles grid-strided).  Shared memory, in
 * floats: grey/b max(GR*GW, 35*HW) + h (35 + 2r)*HW, dynamic; bins and
 * two row tables static (2.6 KB).  r = 2: 20.7 + 20.6 KB + 2.6 KB.
 * Kernels are templated on the radius for r = 0..4 (sigma 0, 0.5..2) and
 * on the input layout (8-bit RGB / RGBA / luma, generic); radii 5..32 run
 * the same algorithm with a runtime radius and dynamic shared memory
 * (r = 32: 129 KB, 1 block/SM; on GPUs whose per-block shared memory is
 * too small for a radius the launcher returns cudaErrorNotSupported and
 * the caller runs the staged kernels).  (Blocks that copy the next row
 * tile's input into shared memory with cp.async while computing the
 * current one measured slower: 61 against 43 us at 4K RGB; bench-log.md.)
 *
 * Build facts (CUDA 13.0, sm_90, -Xptxas -v): r = 2 RGB8: 64 registers,
 * 0 spills, 41.2 KB dynamic + 2.6 KB static shared memory -> 4 blocks/SM
 * (register-bound by __launch_bounds__(256, 4): 32 warps, 50 %); every
 * templated kernel <= 64 registers, spills <= 8 bytes (r = 3 RGBA/luma/
 * generic).  FT_MINB=5 (48 registers) spills 20 bytes and measured slower.
 *
 * Its cost (instructions a pixel, the issue and DRAM floors) and what
 * would make it faster: docs/bench-log.md, "the fused kernel".
 */
#include <stdint.h>
#include <cuda_runtime.h>
#include "fused.h"
#include "canny.h"
#include "border.h"

#define FT_W 128       /* output tile columns */
#define FT_H 32        /* output tile rows */
#define FT_THREADS 256 /* threads a block (8 warps) */
/* __launch_bounds__ min blocks a SM: 4 -> <= 64 registers (5 -> 48:
 * small spills, more warps, measured slower) */
#define FT_MINB 4
#define FT_RV 5        /* b rows a blur-V item */
#define FT_NCH ((FT_H + 2 + FT_RV - 1) / FT_RV) /* blur-V row chunks: 7 */
#define FT_BR (FT_NCH * FT_RV)                  /* b rows allocated: 35 */
#define FT_TMAX 4      /* radii 0..FT_TMAX have compiled-in kernels */
#define FT_MAX_GRID_Y 65535
#define FULL_MASK 0xffffffffu


enum { LAY_RGB8 = 0, LAY_RGBA8 = 1, LAY_Y8 = 2, LAY_GEN = 3, LAY_N = 4 };

__constant__ float c_ftaps[GE_MAX_TAPS];

/* The radius in c_ftaps as far as the host knows (-1: never set). */
static int h_fradius = -1;
/* fused_set_max_grid_y (tests): cap on blocks a tile column, 0 = auto */
static int h_max_gy = 0;

// ---------------------------------------------------------------------------
// Tile geometry (floats), a function of the radius only.
//   HOFF  h/b slot j <-> virtual column X0 - HOFF + j  (1..4, = -r mod 4)
//   HW    h/b row length: covers slots 0 .. HOFF + FT_W (the right halo)
//   GH    grey slot s <-> virtual column X0 - GH + s   (multiple of 4)
//   GW    grey row length (HW + 2r, rounded up to 4)
//   GR    grey and h rows: virtual rows Y0 - 1 - r .. Y0 + FT_H + r
__host__ __device__ constexpr int ft_hoff(int r)
{
    return r % 4 == 0 ? 4 : 4 - r % 4;
}
__host__ __device__ constexpr int ft_hw(int r)
{
    return (ft_hoff(r) + FT_W + 1 + 3) & ~3;
}
__host__ __device__ constexpr int ft_gw(int r)
{
    return (ft_hw(r) + 2 * r + 3) & ~3;
}
__host__ __device__ constexpr int ft_gr(int r) { return FT_H + 2 + 2 * r; }
__host__ __device__ constexpr int ft_hra(int r) { return FT_BR + 2 * r; }
__host__ __device__ constexpr int ft_gb(int r)
{
    return ft_gr(r) * ft_gw(r) > FT_BR * ft_hw(r) ? ft_gr(r) * ft_gw(r)
                                                   : FT_BR * ft_hw(r);
}
__host__ __device__ constexpr int ft_smem_floats(int r)
{
    return ft_gb(r) + (r > 0 ? ft_hra(r) * ft_hw(r) : 0);
}

// Border mapping, DESIGN.md §1.5: map_border() in border.h.

struct fused_args {
    const unsigned char *src; /* image row in_y0 */
    size_t stride;            /* bytes */
    int W, H, in_y0;
    int y0, yend;             /* output rows [y0, yend) */
    int tiles_y;
    uint8_t *edge;            /* output row y0 */
    size_t edge_pitch;
    int edge_al4;             /* edge rows 4-byte aligned */
    unsigned long long *hist; /* NULL: no histogram */
    int channels, bps, al2;   /* al2: 16-bit samples 2-byte aligned */
    int shift, offset;
    float gain;
    float nmoff;              /* -(2^23 + offset), exact */
    int ident;                /* offset 0, gain 1: skip the FMUL */
    int border, r;
    float scale, threshold;
    int thr, invert;
    float *tplane;            /* Canny (fused_canny_window_gpu): t = m * scale */
    size_t tpitch;            /* floats; tplane row y0 */
    int canny;                /* edge bytes = NMS direction codes */
};

// ---------------------------------------------------------------------------
// DESIGN.md §1.1-1.2 per sample and per pixel.
__device__ __forceinline__ float rgb_grey(float r, float g, float b)
{
    return __fmaf_rn(0.114f, b, __fmaf_rn(0.587f, g, __fmul_rn(0.299f, r)));
}

/* ref_channel exactly: (float)((int)(v >> shift) - offset) * gain */
__device__ __forceinline__ float gen_chan(unsigned v, const fused_args &a)
{
    return __fmul_rn((float)((int)(v >> a.shift) - a.offset), a.gain);
}

__device__ __forceinline__ unsigned ld16(const unsigned char *p, int al2)
{
    if (al2)
        return *(const unsigned short *)p;
    return (unsigned)p[0] | ((unsigned)p[1] << 8); /* little endian */
}

/* grey of pixel x of an input row, any layout (the slow path) */
__device__ float gen_px(const unsigned char *row, int x, const fused_args &a)
{
    const int C = a.channels;
    if (a.bps == 1) {
        const unsigned char *p = row + (size_t)x * C;
        if (C >= 3)
            return rgb_grey(gen_chan(p[0], a), gen_chan(p[1], a),
                            gen_chan(p[2], a));
        return gen_chan(p[0], a);
    }
    const unsigned char *p = row + (size_t)x * C * 2;
    if (C >= 3)
        return rgb_grey(gen_chan(ld16(p, a.al2), a),
                        gen_chan(ld16(p + 2, a.al2), a),
                        gen_chan(ld16(p + 4, a.al2), a));
    return gen_chan(ld16(p, a.al2), a);
}

/* 4 grey values of virtual columns vx0..vx0+3 of the grey row whose byte
 * offset (border-mapped row, -1: zeros) is ro; columns border-mapped. */
__device__ float4 slow_group(const fused_args &a, long long ro, int vx0)
{
    float v[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    if (ro >= 0) {
        const unsigned char *row = a.src + ro;
#pragma unroll
        for (int u = 0; u < 4; u++) {
            const int mx = map_border(vx0 + u, a.W, a.border);
            if (mx >= 0)
                v[u] = gen_px(row, mx, a);
        }
    }
    return make_float4(v[0], v[1], v[2], v[3]);
}

/* byte b of w as an exact float: (2^23 + v) - (2^23 + offset), * gain */
template <bool ID>
__device__ __forceinline__ float c8(uint32_t w, int b, const fused_args &a)
{
    const float f = __fadd_rn(
        __uint_as_float(__byte_perm(w, 0x4B000000u, 0x7540u | (unsigned)b)),
        a.nmoff);
    return ID ? f : __fmul_rn(f, a.gain);
}

template <int LAY> struct lay_words {
    static constexpr int n = LAY == LAY_RGB8 ? 3 : LAY == LAY_RGBA8 ? 4 : 1;
};

template <int LAY, bool ID>
__device__ __forceinline__ float4 conv_group(const uint32_t *w,
                                             const fused_args &a)
{
    float4 g;
    if (LAY == LAY_RGB8) {
        /* w0 = R0 G0 B0 R1, w1 = G1 B1 R2 G2, w2 = B2 R3 G3 B3 */
        g.x = rgb_grey(c8<ID>(w[0], 0, a), c8<ID>(w[0], 1, a),
                       c8<ID>(w[0], 2, a));
        g.y = rgb_grey(c8<ID>(w[0], 3, a), c8<ID>(w[1], 0, a),
                       c8<ID>(w[1], 1, a));
        g.z = rgb_grey(c8<ID>(w[1], 2, a), c8<ID>(w[1], 3, a),
                       c8<ID>(w[2], 0, a));
        g.w = rgb_grey(c8<ID>(w[2], 1, a), c8<ID>(w[2], 2, a),
                       c8<ID>(w[2], 3, a));
    } else if (LAY == LAY_RGBA8) {
        g.x = rgb_grey(c8<ID>(w[0], 0, a), c8<ID>(w[0], 1, a),
                       c8<ID>(w[0], 2, a));
        g.y = rgb_grey(c8<ID>(w[1], 0, a), c8<ID>(w[1], 1, a),
                       c8<ID>(w[1], 2, a));
        g.z = rgb_grey(c8<ID>(w[2], 0, a), c8<ID>(w[2], 1, a),
                       c8<ID>(w[2], 2, a));
        g.w = rgb_grey(c8<ID>(w[3], 0, a), c8<ID>(w[3], 1, a),
                       c8<ID>(w[3], 2, a));
    } else {
        g.x = c8<ID>(w[0], 0, a);
        g.y = c8<ID>(w[0], 1, a);
        g.z = c8<ID>(w[0], 2, a);
        g.w = c8<ID>(w[0], 3, a);
    }
    return g;
}

// ---------------------------------------------------------------------------
// Phase 1: grey tile, GR rows x GW floats.  The fast loop does every group
// whose 4 columns lie inside the image; the groups crossing the left/right
// border (block-uniform: only tiles on those borders have any) follow in
// a second, per-pixel loop, so the hot loop carries no slow code.
template <int RT, int LAY, bool ID, int NIT>
__device__ __forceinline__ void grey_fast(const fused_args &a, float *sg,
                                          const long long *s_row, int X0)
{
    constexpr int GW = ft_gw(RT), NGG = GW / 4, GR = ft_gr(RT);
    constexpr int GH = ft_hoff(RT) + RT, N = GR * NGG;
    constexpr int WPG = lay_words<LAY>::n;
    uint32_t w[NIT][WPG];
    int st[NIT]; /* 0: border group (later), 1: load, 2: zero row */

    /* every load of the thread first ... */
#pragma unroll
    for (int it = 0; it < NIT; it++) {
        const int item = threadIdx.x + it * FT_THREADS;
        const int i = item / NGG, g = item - i * NGG;
        const int vx0 = X0 - GH + 4 * g;
        st[it] = 0;
#pragma unroll
        for (int k = 0; k < WPG; k++)
            w[it][k] = 0;
        if ((N % FT_THREADS == 0 || item < N) && vx0 >= 0 &&
            vx0 + 4 <= a.W) {
            const long long ro = s_row[i];
            st[it] = ro >= 0 ? 1 : 2;
            if (ro >= 0) {
                const unsigned char *row = a.src + ro;
                if (LAY == LAY_RGB8) {
                    const uint32_t *p =
                        (const uint32_t *)(row + (size_t)vx0 * 3);
                    w[it][0] = __ldg(p);
                    w[it][1] = __ldg(p + 1);
                    w[it][2] = __ldg(p + 2);
                } else if (LAY == LAY_RGBA8) {
                    const uint4 q =
                        __ldg((const uint4 *)(row + (size_t)vx0 * 4));
                    w[it][0] = q.x;
                    w[it][1] = q.y;
                    w[it][2] = q.z;
                    w[it][3] = q.w;
                } else {
                    w[it][0] = __ldg((const uint32_t *)(row + vx0));
                }
            }
        }
    }
    /* ... then the conversions and the shared stores */
#pragma unroll
    for (int it = 0; it < NIT; it++) {
        const int item = threadIdx.x + it * FT_THREADS;
        const int i = item / NGG, g = item - i * NGG;
        if (st[it]) {
            const float4 v = st[it] == 1 ? conv_group<LAY, ID>(w[it], a)
                                         : make_float4(0.f, 0.f, 0.f, 0.f);
            *(float4 *)(sg + i * GW + 4 * g) = v;
        }
    }
}

template <int RT, int LAY>
__device__ __forceinline__ void grey_phase(const fused_args &a, float *sg,
                                           const long long *s_row, int X0,
                                           int R)
{
    const int GW = ft_gw(R), NGG = GW / 4, GR = ft_gr(R);
    const int GH = ft_hoff(R) + R, n = GR * NGG;
    const bool fast = RT >= 0 && LAY != LAY_GEN;
    if (fast) {
        constexpr int RR = RT >= 0 ? RT : 0;
        constexpr int NIT =
            (ft_gr(RR) * (ft_gw(RR) / 4) + FT_THREADS - 1) / FT_THREADS;
        if (a.ident)
            grey_fast<RR, LAY, true, NIT>(a, sg, s_row, X0);
        else
            grey_fast<RR, LAY, false, NIT>(a, sg, s_row, X0);
        if (X0 - GH >= 0 && X0 - GH + GW <= a.W)
            return; /* no group of this tile crosses a border */
    }
    if (fast) { /* border groups only */
#pragma unroll 1
        for (int item = threadIdx.x; item < n; item += FT_THREADS) {
            const int i = item / NGG, g = item - i * NGG;
            const int vx0 = X0 - GH + 4 * g;
            if (vx0 < 0 || vx0 + 4 > a.W)
                *(float4 *)(sg + i * GW + 4 * g) =
                    slow_group(a, s_row[i], vx0);
        }
    } else { /* every group, several in flight */
#pragma unroll 4
        for (int item = threadIdx.x; item < n; item += FT_THREADS) {
            const int i = item / NGG, g = item - i * NGG;
            *(float4 *)(sg + i * GW + 4 * g) =
                slow_group(a, s_row[i], X0 - GH + 4 * g);
        }
    }
}

/* The byte offset of each grey row of the tile at Y0 from a.src: virtual
 * row Y0 - 1 - r + i, border-mapped against H; -1 where the row is 0
 * (zero border) or lies past the last row any output needs (yend + r). */
__device__ __forceinline__ void row_table(const fused_args &a,
                                          long long *s_row, int Y0, int R)
{
    const int GR = ft_gr(R), ylast = a.yend + R;
    for (int i = threadIdx.x; i < GR; i += FT_THREADS) {
        const int vy = Y0 - 1 - R + i;
        const int my = vy <= ylast ? map_border(vy, a.H, a.border) : -1;
        s_row[i] = my < 0 ? -1ll : (long long)(my - a.in_y0) * (long long)a.stride;
    }
}

// ---------------------------------------------------------------------------
// Phase 2: blur H, every grey row -> h (GR rows x HW floats).
// h slot j = sum over tap kk = 0..2r of w[kk] * grey slot j + kk.
template <int RT>
__device__ __forceinline__ void h_phase(const float *sg, float *sh, int R)
{
    if (RT > 0) {
        constexpr int GW = ft_gw(RT), HW = ft_hw(RT), NHG = HW / 4;
        constexpr int N = ft_gr(RT) * NHG;
        constexpr int NV = (4 + 2 * RT + 3) / 4; /* float4 loads an item */
#pragma unroll
        for (int it = 0; it < (N + FT_THREADS - 1) / FT_THREADS; it++) {
            const int item = threadIdx.x + it * FT_THREADS;
            if (N % FT_THREADS != 0 && item >= N)
                break;
            const int i = item / NHG, g = item - i * NHG;
            const float4 *src = (const float4 *)(sg + i * GW + 4 * g);
            float x[4 * NV];
#pragma unroll
            for (int v = 0; v < NV; v++) {
                const float4 q = src[v];
                x[4 * v] = q.x;
                x[4 * v + 1] = q.y;
                x[4 * v + 2] = q.z;
                x[4 * v + 3] = q.w;
            }
            float o[4];
#pragma unroll
            for (int u = 0; u < 4; u++) {
                float acc = __fmul_rn(c_ftaps[0], x[u]);
#pragma unroll
                for (int kk = 1; kk <= 2 * RT; kk++)
                    acc = __fmaf_rn(c_ftaps[kk], x[u + kk], acc);
                o[u] = acc;
            }
            *(float4 *)(sh + i * HW + 4 * g) = make_float4(o[0], o[1], o[2], o[3]);
        }
        return;
    }
    const int GW = ft_gw(R), HW = ft_hw(R), NHG = HW / 4;
    const int n = ft_gr(R) * NHG;
    for (int item = threadIdx.x; item < n; item += FT_THREADS) {
        const int i = item / NHG, g = item - i * NHG;
        const float *src = sg + i * GW + 4 * g;
        float acc[4];
#pragma unroll
        for (int u = 0; u < 4; u++)
            acc[u] = __fmul_rn(c_ftaps[0], src[u]);
        for (int kk = 1; kk <= 2 * R; kk++) {
            const float w = c_ftaps[kk];
#pragma unroll
            for (int u = 0; u < 4; u++)
                acc[u] = __fmaf_rn(w, src[u + kk], acc[u]);
        }
        *(float4 *)(sh + i * HW + 4 * g) =
            make_float4(acc[0], acc[1], acc[2], acc[3]);
    }
}

// ---------------------------------------------------------------------------
// Phase 3: blur V, h -> b (FT_BR rows x HW floats; b row i <-> virtual row
// Y0 - 1 + i).  b row i = sum over kk of w[kk] * h row i + kk.
__device__ __forceinline__ float4 mul4(float w, float4 h)
{
    return make_float4(__fmul_rn(w, h.x), __fmul_rn(w, h.y),
                       __fmul_rn(w, h.z), __fmul_rn(w, h.w));
}
__device__ __forceinline__ float4 fma4(float w, float4 h, float4 acc)
{
    return make_float4(__fmaf_rn(w, h.x, acc.x), __fmaf_rn(w, h.y, acc.y),
                       __fmaf_rn(w, h.z, acc.z), __fmaf_rn(w, h.w, acc.w));
}

template <int RT>
__device__ __forceinline__ void v_phase(const float *sh, float *sb, int R)
{
    const int HW = ft_hw(R), NHG = HW / 4, n = FT_NCH * NHG;
    for (int item = threadIdx.x; item < n; item += FT_THREADS) {
        const int c = item / NHG, g = item - c * NHG;
        const float *src = sh + c * FT_RV * HW + 4 * g;
        float4 acc[FT_RV];
        if (RT > 0) {
#pragma unroll
            for (int rho = 0; rho < FT_RV + 2 * RT; rho++) {
                const float4 h = *(const float4 *)(src + rho * HW);
#pragma unroll
                for (int t = 0; t < FT_RV; t++) {
                    const int kk = rho - t;
                    if (kk == 0)
                        acc[t] = mul4(c_ftaps[0], h);
                    else if (kk > 0 && kk <= 2 * RT)
                        acc[t] = fma4(c_ftaps[kk], h, acc[t]);
                }
            }
        } else {
#pragma unroll
            for (int t = 0; t < FT_RV; t++)
                acc[t] = mul4(c_ftaps[0], *(const float4 *)(src + t * HW));
            for (int kk = 1; kk <= 2 * R; kk++) {
                const float w = c_ftaps[kk];
#pragma unroll
                for (int t = 0; t < FT_RV; t++)
                    acc[t] = fma4(w, *(const float4 *)(src + (t + kk) * HW),
                                  acc[t]);
            }
        }
#pragma unroll
        for (int t = 0; t < FT_RV; t++)
            *(float4 *)(sb + (c * FT_RV + t) * HW + 4 * g) = acc[t];
    }
}

// ---------------------------------------------------------------------------
// Phase 4 (border tiles only): b slots whose virtual coordinate lies
// outside the image — only x = -1, x = W, y = -1, y = H are ever read —
// take b at the border-mapped coordinate (inside this tile), or 0.
__device__ void fix_phase(const fused_args &a, float *sb, int X0, int Y0,
                          int HOFF, int HW)
{
    const int BW = FT_W + 2, BH = FT_H + 2;
    const int fr0 = Y0 == 0 ? 0 : -1;                        /* y = -1 */
    const int fr1 = a.H - Y0 + 1 <= FT_H + 1 ? a.H - Y0 + 1 : -1; /* y = H */
    const int fc0 = X0 == 0 ? HOFF - 1 : -1;                  /* x = -1 */
    const int fc1 = a.W - X0 <= FT_W ? a.W - X0 + HOFF : -1;  /* x = W */
    const int zero = a.border == GE_BORDER_ZERO;

    for (int idx = threadIdx.x; idx < 2 * BW + 2 * BH; idx += FT_THREADS) {
        int i, j;
        if (idx < 2 * BW) { /* a whole row outside: every needed column */
            i = idx < BW ? fr0 : fr1;
            j = HOFF - 1 + (idx < BW ? idx : idx - BW);
            if (i < 0 || X0 - HOFF + j > a.W)
                continue;
        } else { /* a column outside, rows inside (the rest: above) */
            const int k = idx - 2 * BW;
            j = k < BH ? fc0 : fc1;
            i = k < BH ? k : k - BH;
            const int vy = Y0 - 1 + i;
            if (j < 0 || vy < 0 || vy >= a.H)
                continue;
        }
        const int my = map_border(Y0 - 1 + i, a.H, a.border);
        const int mx = map_border(X0 - HOFF + j, a.W, a.border);
        sb[i * HW + j] = (zero || my < 0 || mx < 0)
                             ? 0.0f
                             : sb[(my - Y0 + 1) * HW + (mx - X0 + HOFF)];
    }
}

// ---------------------------------------------------------------------------
// Phase 5: Sobel + quantise + edge store + histogram.

/* v[k] = p[OFF + k], k = 0..5, p 16-byte aligned; OFF < 0: runtime off */
template <int OFF>
__device__ __forceinline__ void load6(const float *p, int off, float v[6])
{
    if (OFF == 0) {
        const float4 a = *(const float4 *)p;
        const float2 b = *(const float2 *)(p + 4);
        v[0] = a.x; v[1] = a.y; v[2] = a.z; v[3] = a.w; v[4] = b.x; v[5] = b.y;
    } else if (OFF == 1) {
        const float4 a = *(const float4 *)p;
        const float4 b = *(const float4 *)(p + 4);
        v[0] = a.y; v[1] = a.z; v[2] = a.w; v[3] = b.x; v[4] = b.y; v[5] = b.z;
    } else if (OFF == 2) {
        const float2 a = *(const float2 *)(p + 2);
        const float4 b = *(const float4 *)(p + 4);
        v[0] = a.x; v[1] = a.y; v[2] = b.x; v[3] = b.y; v[4] = b.z; v[5] = b.w;
    } else if (OFF == 3) {
        const float4 b = *(const float4 *)(p + 4);
        v[0] = p[3]; v[1] = b.x; v[2] = b.y; v[3] = b.z; v[4] = b.w; v[5] = p[8];
    } else {
#pragma unroll
        for (int k = 0; k < 6; k++)
            v[k] = p[off + k];
    }
}

/* (a + 2b) + c, DESIGN.md §1.4's order; fma(2, b, a) == a + 2b exactly */
__device__ __forceinline__ float s121(float a, float b, float c)
{
    return __fadd_rn(__fmaf_rn(2.0f, b, a), c);
}

/* IEEE sqrt, the same operations as the fast path of __fsqrt_rn (rsqrt
 * estimate, one Newton step with a residual), exact for q in [2^-101,
 * FLT_MAX] — which callers check (sqrt_fast_ok), falling back to
 * __fsqrt_rn for the rest.  No branch, so 16 of them schedule together. */
__device__ __forceinline__ float sqrt_fast(float q)
{
    float y;
    asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(q));
    const float m = __fmul_rn(q, y);
    const float h = __fmul_rn(y, 0.5f);
    return __fmaf_rn(__fmaf_rn(-m, m, q), h, m);
}
__device__ __forceinline__ bool sqrt_fast_ok(float q)
{
    return __float_as_uint(q) - 0x0D000000u <= 0x727FFFFFu;
}

/* one increment of shared bin (key - 0x4B000000): the keys are the
 * quantiser's 2^23-biased floats, so the address is a single LEA */
__device__ __forceinline__ void bin_inc(unsigned hbias, unsigned key)
{
    asm volatile("red.shared.add.u32 [%0], 1;" ::"r"(hbias + (key << 2))
                 : "memory");
}

/* CN (Canny): the edge byte is the pixel's nms_code and t = m * scale goes
 * to a.tplane; the histogram still counts step 6's e (--canny auto reads
 * it).  The caller passes no threshold and no invert then. */
template <int RT, bool THR, bool CN>
__device__ __forceinline__ void sobel_phase(const fused_args &a,
                                            const float *sb, int X0, int Y0,
                                            int HOFF, int HW, unsigned hbias)
{
    constexpr int OFF = RT >= 0 ? ft_hoff(RT) - 1 : -1;
    const int cx = threadIdx.x & 31, ry = threadIdx.x >> 5;
    const int x = X0 + 4 * cx, yb = Y0 + 4 * ry;
    const int ncol = a.W - x; /* valid columns of the 4 (may be <= 0) */
    const float *base = sb + 4 * ry * HW + 4 * cx;
    const unsigned invmask = a.invert ? 0xFFFFFFFFu : 0u;
    const bool all_in = ncol >= 4 && yb + 4 <= a.yend; /* 16 valid pixels */
    uint8_t *dst = a.edge + (ptrdiff_t)(yb - a.y0) * (ptrdiff_t)a.edge_pitch + x;
    const bool st32 = ncol >= 4 && a.edge_al4;

    float r0[6], r1[6], r2[6], h0[4], h1[4], h2[4];
    load6<OFF>(base, HOFF - 1, r0);
    load6<OFF>(base + HW, HOFF - 1, r1);
#pragma unroll
    for (int u = 0; u < 4; u++) {
        h0[u] = s121(r0[u], r0[u + 1], r0[u + 2]);
        h1[u] = s121(r1[u], r1[u + 1], r1[u + 2]);
    }
#pragma unroll
    for (int t = 0; t < 4; t++) {
        load6<OFF>(base + (t + 2) * HW, HOFF - 1, r2);
        float vs[6];
#pragma unroll
        for (int c = 0; c < 6; c++)
            vs[c] = s121(r0[c], r1[c], r2[c]); /* L/R of columns */
        unsigned e[4], key[4], code[4];
        float q[4], m[4];
        bool slow = false;
#pragma unroll
        for (int u = 0; u < 4; u++) {
            h2[u] = s121(r2[u], r2[u + 1], r2[u + 2]); /* T/D of rows */
            const float gx = __fsub_rn(vs[u + 2], vs[u]);
            const float gy = __fsub_rn(h2[u], h0[u]);
            if (CN)
                code[u] = nms_code(gx, gy);
            q[u] = __fmaf_rn(gx, gx, __fmul_rn(gy, gy));
            m[u] = sqrt_fast(q[u]);
            /* q = 0 (flat: common) gives NaN here, which the non-threshold
             * quantiser turns into e = 0, exactly sqrt(0)'s e; the
             * threshold test needs the true 0 */
            if (THR)
                m[u] = q[u] == 0.0f ? 0.0f : m[u];
            slow |= !sqrt_fast_ok(q[u]) && q[u] != 0.0f;
        }
        if (slow) { /* tiny, infinite or NaN q: rare */
#pragma unroll
            for (int u = 0; u < 4; u++)
                if (!sqrt_fast_ok(q[u]))
                    m[u] = __fsqrt_rn(q[u]);
        }
#pragma unroll
        for (int u = 0; u < 4; u++) {
            if (THR) {
                const bool pass = __fmul_rn(m[u], a.scale) >= a.threshold;
                e[u] = pass ? 255u : 0u;
                key[u] = pass ? 0x4B000001u : 0x4B000000u;
            } else {
                float tq = __fmaf_rn(m[u], a.scale, 0.5f);
                tq = fminf(fmaxf(tq, 0.0f), 255.0f); /* NaN -> 0 */
                e[u] = __float_as_uint(__fadd_rd(tq, 8388608.0f));
                key[u] = e[u]; /* 0x4B000000 + e */
            }
        }
        unsigned word =
            __byte_perm(__byte_perm(e[0], e[1], 0x0040),
                        __byte_perm(e[2], e[3], 0x0040), 0x5410) ^
            invmask;
        const int y = yb + t;
        if (CN) {
            word = code[0] | code[1] << 8 | code[2] << 16 | code[3] << 24;
            float tv[4];
#pragma unroll
            for (int u = 0; u < 4; u++) /* q = 0: the true sqrt is 0 */
                tv[u] = __fmul_rn(q[u] == 0.0f ? 0.0f : m[u], a.scale);
            float *tp = a.tplane +
                        (ptrdiff_t)(y - a.y0) * (ptrdiff_t)a.tpitch + x;
            if (all_in && (a.tpitch & 3) == 0)
                *(float4 *)tp = make_float4(tv[0], tv[1], tv[2], tv[3]);
            else if (y < a.yend)
#pragma unroll
                for (int u = 0; u < 4; u++)
                    if (u < ncol)
                        tp[u] = tv[u];
        }
        if (all_in) { /* interior: no per-pixel tests */
            if (st32)
                *(uint32_t *)(dst + (ptrdiff_t)t * (ptrdiff_t)a.edge_pitch) = word;
            else
#pragma unroll
                for (int u = 0; u < 4; u++)
                    dst[(ptrdiff_t)t * (ptrdiff_t)a.edge_pitch + u] =
                        (uint8_t)(word >> (8 * u));
#pragma unroll
            for (int u = 0; u < 4; u++)
                bin_inc(hbias, key[u]);
        } else if (y < a.yend) {
#pragma unroll
            for (int u = 0; u < 4; u++)
                if (u < ncol) {
                    dst[(ptrdiff_t)t * (ptrdiff_t)a.edge_pitch + u] =
                        (uint8_t)(word >> (8 * u));
                    bin_inc(hbias, key[u]);
                }
        }
#pragma unroll
        for (int c = 0; c < 6; c++) {
            r0[c] = r1[c];
            r1[c] = r2[c];
        }
#pragma unroll
        for (int u = 0; u < 4; u++) {
            h0[u] = h1[u];
            h1[u] = h2[u];
        }
    }
}

// ---------------------------------------------------------------------------
template <int RT, int LAY>
__global__ void __launch_bounds__(FT_THREADS, FT_MINB)
    fused_kernel(const fused_args a)
{
    extern __shared__ float4 ft_smem4[];
    __shared__ unsigned s_hist[GE_HIST_BINS];
    __shared__ long long s_row[2][ft_gr(GE_MAX_RADIUS)];
    float *const sm = (float *)ft_smem4;
    const int R = RT >= 0 ? RT : a.r;
    const int HOFF = ft_hoff(R), HW = ft_hw(R);
    float *const sg = sm;              /* grey, then b */
    float *const sh = sm + ft_gb(R);   /* h */
    const int X0 = blockIdx.x * FT_W;
    const int gdy = gridDim.y;
    /* s_hist's shared address less the quantiser's 2^23 bias, times 4 */
    const unsigned hbias =
        (unsigned)__cvta_generic_to_shared(s_hist) - (0x4B000000u << 2);

    s_hist[threadIdx.x] = 0; /* FT_THREADS == GE_HIST_BINS */
    if (R > 0) /* h rows no grey row feeds (read only for unused b rows) */
        for (int i = threadIdx.x; i < (ft_hra(R) - ft_gr(R)) * HW;
             i += FT_THREADS)
            sh[ft_gr(R) * HW + i] = 0.0f;
    /* row tables of the first two tiles (then always one tile ahead) */
    int ty = blockIdx.y;
    if (ty < a.tiles_y)
        row_table(a, s_row[0], a.y0 + ty * FT_H, R);
    if (ty + gdy < a.tiles_y)
        row_table(a, s_row[1], a.y0 + (ty + gdy) * FT_H, R);
    __syncthreads();

    for (int cur = 0; ty < a.tiles_y; ty += gdy, cur ^= 1) {
        const int Y0 = a.y0 + ty * FT_H;
        grey_phase<RT, LAY>(a, sg, s_row[cur], X0, R);
        __syncthreads();
        if (R > 0) {
            h_phase<RT>(sg, sh, R);
            __syncthreads();
            v_phase<RT>(sh, sg, R);
            __syncthreads();
        }
        if (X0 == 0 || X0 + FT_W >= a.W || Y0 == 0 || Y0 + FT_H >= a.H) {
            fix_phase(a, sg, X0, Y0, HOFF, HW);
            __syncthreads();
        }
        if (a.canny)
            sobel_phase<RT, false, true>(a, sg, X0, Y0, HOFF, HW, hbias);
        else if (a.thr)
            sobel_phase<RT, true, false>(a, sg, X0, Y0, HOFF, HW, hbias);
        else
            sobel_phase<RT, false, false>(a, sg, X0, Y0, HOFF, HW, hbias);
        /* the row table two tiles ahead, into this tile's buffer (its
         * last readers: this tile's grey phase, before the barriers
         * above) */
        if (ty + 2 * gdy < a.tiles_y)
            row_table(a, s_row[cur], Y0 + 2 * gdy * FT_H, R);
        __syncthreads(); /* b (= grey) is reloaded next tile; bins final */
    }
    if (a.hist) {
        const unsigned c = s_hist[threadIdx.x];
        if (c) {
            int bin = threadIdx.x;
            if (a.thr && bin == 1) /* threshold keys: 0 or 1 */
                bin = 255;
            if (a.invert)
                bin = 255 - bin;
            atomicAdd(&a.hist[bin], (unsigned long long)c);
        }
    }
}

// ---------------------------------------------------------------------------
// Host side.
typedef void (*fused_fn)(const fused_args);

#define FT_NK ((FT_TMAX + 1) * LAY_N + 1) /* + the runtime-radius kernel */

static fused_fn kernel_for(int r, int lay, int *idx)
{
    if (r > FT_TMAX) {
        *idx = FT_NK - 1;
        return fused_kernel<-1, LAY_GEN>;
    }
    *idx = r * LAY_N + lay;
#define FT_CASE(R)                                                         \
    case R:                                                                \
        switch (lay) {                                                     \
        case LAY_RGB8: return fused_kernel<R, LAY_RGB8>;                   \
        case LAY_RGBA8: return fused_kernel<R, LAY_RGBA8>;                 \
        case LAY_Y8: return fused_kernel<R, LAY_Y8>;                       \
        default: return fused_kernel<R, LAY_GEN>;                          \
        }
    switch (r) {
        FT_CASE(0)
        FT_CASE(1)
        FT_CASE(2)
        FT_CASE(3)
        FT_CASE(4)
    }
#undef FT_CASE
    return 0;
}

/* static shared memory of every fused kernel: bins + two row tables */
#define FT_STATIC_SMEM (GE_HIST_BINS * 4 + 2 * ft_gr(GE_MAX_RADIUS) * 8)

/* Raises the kernel's dynamic shared-memory limit to the most any of its
 * launches needs (the runtime-radius kernel: radius 32's, or what the
 * device allows), preferring shared memory over L1, once a kernel a
 * device.  Not a stream operation: fine during graph capture; two threads
 * setting it at once is harmless.  A launch needing more shared memory
 * than the device has returns cudaErrorNotSupported (large radii on GPUs
 * with 64 or 99 KB a block: the caller runs the staged kernels). */
static cudaError_t prepare_kernel(fused_fn fn, int idx, size_t shm)
{
    static unsigned long long done[FT_NK]; /* bit a device ordinal < 64 */
    static int optin_of[64];
    int dev = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e != cudaSuccess)
        return e;
    const unsigned long long bit = dev < 64 ? 1ull << dev : 0;
    if (!bit || !(__atomic_load_n(&done[idx], __ATOMIC_RELAXED) & bit)) {
        int optin = 0;
        e = cudaDeviceGetAttribute(&optin,
                                   cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
        if (e != cudaSuccess)
            return e;
        size_t most = idx == FT_NK - 1
                          ? sizeof(float) * (size_t)ft_smem_floats(GE_MAX_RADIUS)
                          : shm;
        if (most + FT_STATIC_SMEM > (size_t)optin)
            most = (size_t)optin > FT_STATIC_SMEM ? optin - FT_STATIC_SMEM : 0;
        e = cudaFuncSetAttribute((const void *)fn,
                                 cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 (int)most);
        if (e == cudaSuccess)
            e = cudaFuncSetAttribute(
                (const void *)fn,
                cudaFuncAttributePreferredSharedMemoryCarveout,
                (int)cudaSharedmemCarveoutMaxShared);
        if (e != cudaSuccess)
            return e;
        if (shm + FT_STATIC_SMEM > (size_t)optin)
            return cudaErrorNotSupported;
        if (bit) {
            __atomic_store_n(&optin_of[dev], optin, __ATOMIC_RELAXED);
            __atomic_fetch_or(&done[idx], bit, __ATOMIC_RELAXED);
        }
        return cudaSuccess;
    }
    if (shm + FT_STATIC_SMEM >
        (size_t)__atomic_load_n(&optin_of[dev], __ATOMIC_RELAXED))
        return cudaErrorNotSupported;
    return cudaSuccess;
}

extern "C" cudaError_t fused_set_taps_gpu(const ge_taps *t,
                                          cudaStream_t stream)
{
    if (!t || t->radius < 0 || t->radius > GE_MAX_RADIUS)
        return cudaErrorInvalidValue;
    const cudaError_t e = cudaMemcpyToSymbolAsync(
        c_ftaps, t->w, sizeof(float) * (2 * t->radius + 1), 0,
        cudaMemcpyHostToDevice, stream);
    if (e != cudaSuccess)
        return e;
    h_fradius = t->radius;
    return cudaGetLastError();
}

/* fused_window_gpu and, with tplane, fused_canny_window_gpu */
static cudaError_t fused_launch(const ge_frame *f, int H, int in_y0,
                                uint8_t *edge, int edge_pitch, int y0,
                                int rows, const ge_params *p, int radius,
                                unsigned long long *hist, float *tplane,
                                int tpitch, cudaStream_t stream)
{
    if (!f || !p || f->channels < 1 || f->channels > 4 ||
        (f->bytes_per_sample != 1 && f->bytes_per_sample != 2) ||
        f->width < 0 || f->height < 0 || rows < 0 || edge_pitch < f->width ||
        f->shift < 0 || f->shift >= 8 * f->bytes_per_sample ||
        (p->border != GE_BORDER_REPLICATE &&
         p->border != GE_BORDER_REFLECT101 && p->border != GE_BORDER_ZERO) ||
        radius < 0 || radius > GE_MAX_RADIUS || radius != h_fradius)
        return cudaErrorInvalidValue;
    const int W = f->width;
    if (W == 0 || rows == 0)
        return cudaGetLastError();
    if (!f->data || !edge ||
        f->stride < (size_t)W * f->channels * f->bytes_per_sample ||
        /* every row the kernel reads: virtual rows y0 - 1 - r .. y0 + rows + r */
        !window_holds(H, in_y0, f->height, y0, rows, radius + 1, p->border))
        return cudaErrorInvalidValue;

    fused_args a;
    a.src = (const unsigned char *)f->data;
    a.stride = f->stride;
    a.W = W;
    a.H = H;
    a.in_y0 = in_y0;
    a.y0 = y0;
    a.yend = y0 + rows;
    a.tiles_y = (rows + FT_H - 1) / FT_H;
    a.edge = edge;
    a.edge_pitch = (size_t)edge_pitch;
    a.edge_al4 = (uintptr_t)edge % 4 == 0 && edge_pitch % 4 == 0;
    a.hist = hist;
    a.channels = f->channels;
    a.bps = f->bytes_per_sample;
    a.al2 = (uintptr_t)f->data % 2 == 0 && f->stride % 2 == 0;
    a.shift = f->shift;
    a.offset = f->offset;
    a.gain = f->gain;
    a.nmoff = (float)(-(8388608.0 + (double)f->offset));
    a.ident = f->offset == 0 && f->gain == 1.0f;
    a.border = p->border;
    a.r = radius;
    a.scale = p->scale;
    a.threshold = p->threshold;
    a.thr = p->use_threshold != 0;
    a.invert = p->invert != 0;
    a.tplane = tplane;
    a.tpitch = tplane ? (size_t)tpitch : 0;
    a.canny = tplane != NULL;
    if (a.canny) { /* codes, not e: no threshold, no invert (canny.h) */
        if (tpitch < W)
            return cudaErrorInvalidValue;
        a.thr = 0;
        a.invert = 0;
    }

    /* the fast layouts: 8-bit, no shift, an offset the 2^23 trick keeps
     * exact, rows aligned for their word loads */
    const uintptr_t sp = (uintptr_t)f->data;
    int lay = LAY_GEN;
    if (f->bytes_per_sample == 1 && f->shift == 0 && f->offset >= -65536 &&
        f->offset <= 65536 && sp % 4 == 0 && f->stride % 4 == 0) {
        if (f->channels == 3)
            lay = LAY_RGB8;
        else if (f->channels == 1)
            lay = LAY_Y8;
        else if (f->channels == 4 && sp % 16 == 0 && f->stride % 16 == 0)
            lay = LAY_RGBA8;
    }
    int idx;
    const fused_fn fn = kernel_for(radius, lay, &idx);
    const size_t shm = sizeof(float) * (size_t)ft_smem_floats(radius);
    cudaError_t e = prepare_kernel(fn, idx, shm);
    if (e != cudaSuccess)
        return e;
    /* one row tile a block (grid.y capped: blocks loop over row tiles) */
    const int gx = (W + FT_W - 1) / FT_W;
    long gy = a.tiles_y;
    if (h_max_gy > 0 && gy > h_max_gy)
        gy = h_max_gy;
    if (gy > FT_MAX_GRID_Y)
        gy = FT_MAX_GRID_Y;
    const dim3 grid((unsigned)gx, (unsigned)gy);
    fn<<<grid, FT_THREADS, shm, stream>>>(a);
    return cudaGetLastError();
}

extern "C" cudaError_t fused_window_gpu(const ge_frame *f, int H, int in_y0,
                                        uint8_t *edge, int edge_pitch,
                                        int y0, int rows, const ge_params *p,
                                        int radius,
                                        unsigned long long *hist,
                                        cudaStream_t stream)
{
    return fused_launch(f, H, in_y0, edge, edge_pitch, y0, rows, p, radius,
                        hist, NULL, 0, stream);
}

extern "C" cudaError_t fused_canny_window_gpu(
    const ge_frame *f, int H, int in_y0, uint8_t *code, int code_pitch,
    float *t, int t_pitch, int y0, int rows, const ge_params *p, int radius,
    unsigned long long *hist, cudaStream_t stream)
{
    if (!t)
        return cudaErrorInvalidValue;
    return fused_launch(f, H, in_y0, code, code_pitch, y0, rows, p, radius,
                        hist, t, t_pitch, stream);
}

extern "C" cudaError_t fused_gpu(const ge_frame *f, uint8_t *edge,
                                 int edge_pitch, const ge_params *p,
                                 int radius, unsigned long long *hist,
                                 cudaStream_t stream)
{
    if (!f)
        return cudaErrorInvalidValue;
    if (hist) {
        const cudaError_t e = cudaMemsetAsync(
            hist, 0, GE_HIST_BINS * sizeof(unsigned long long), stream);
        if (e != cudaSuccess)
            return e;
    }
    return fused_window_gpu(f, f->height, 0, edge, edge_pitch, 0, f->height,
                            p, radius, hist, stream);
}

extern "C" void fused_set_max_grid_y(int n) { h_max_gy = n > 0 ? n : 0; }
