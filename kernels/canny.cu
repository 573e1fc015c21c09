/*
 * canny.cu — DESIGN.md §1.8 after the Sobel stage: --canny auto's thresholds,
 * non-maximum suppression, 8-connected hysteresis (canny.h).
 *
 * Input: the code plane (NMS direction a pixel) and the t plane that the
 * fused kernel in Canny mode (fused.h) or canny_sobel_gpu (staged) wrote.
 * NMS needs t of the 8 neighbours, i.e. Sobel one pixel past the fused
 * tile, i.e. the blurred plane two pixels past it — the fused tile keeps
 * only the one-pixel Sobel halo, so NMS is a separate pass over t (read
 * right after the fused kernel wrote it, mostly from L2).
 *
 * canny_nms_kernel, one 64 x 32 tile a block (256 threads, 8 pixels
 * each; a warp covers 32 adjacent pixels of a row): t of the tile and its
 * one-pixel ring (34 x 66 floats, 0 outside the image: DESIGN.md §1.8's "a
 * neighbour outside the image has t = 0", every border mode) into shared
 * memory; each pixel's test against its two neighbours (strict on the
 * first, >= on the second for codes 0/1, strict on both for 2/3), then
 * t > LOW (candidate) and t > HIGH (strong).  Class byte written in place
 * of the code.  For the union-find hysteresis the block then labels the
 * tile's candidates: union-find in shared memory over the in-tile
 * 8-neighbour pairs (W, NW, N, NE of each pixel, pruned by Wu's decision
 * tree to one or two unions a candidate; every access during the unions
 * is an atomic, so the concurrent finds and links are well-defined and
 * racecheck-clean), each candidate's label = its local root.
 *
 * Keys.  A node's key is (weak << 31) | index (local: (weak << 15) | i),
 * and a link always points from a larger key to a smaller one (atomicMin,
 * Playne & Hawick's lock-free union), so each tree's root is its smallest
 * key: a STRONG pixel whenever the component holds one.  Whether a weak
 * candidate is kept is then one bit of its root.  Inside a tile, local
 * index order is global index order (both row-major), so the local root
 * is the smallest global key too and every parent key stays below its
 * child's, across tiles as well.
 *
 * canny_merge_kernel: one thread per pixel of a tile's top row and left
 * column; unions (global atomicMin) with the candidate neighbours in the
 * tiles above / to the left (every 8-neighbour pair that crosses a tile
 * border is seen from its lower or right pixel).
 *
 * canny_final_kernel: rows grid-strided over ~8 blocks a SM, 4 pixels
 * a thread (one 32-bit load and store; most words hold no candidate)
 * where rows are 4-byte aligned; a strong
 * pixel is 255, a weak one 255 when its root's key is strong (find with
 * path splitting: a node's parent is only ever replaced by one of its
 * ancestors, so concurrent splits stay valid), else 0; XOR invert; the
 * block's counts of 255 and 0 go to the two histogram bins (two global
 * atomics a block).
 *
 * CANNY_ITER instead: canny_iter_kernel, cooperative (every block
 * resident), blocks loop over the tiles: load a tile's classes with the
 * ring, propagate strong to weak 8-neighbours in shared memory to a
 * fixpoint (double-buffered sweeps, __syncthreads_or), write the pixels
 * that became strong; a grid-wide barrier; another round while any tile
 * changed a pixel on its border.  Three rotating flags make the "changed"
 * test race-free across rounds.  Global loads/stores of the classes go
 * through L2 (ld.cg/st.cg): other SMs wrote them last round.
 */
#include <stdint.h>
#include <cuda_runtime.h>
#include <cooperative_groups.h>
#include "canny.h"
#include "border.h"

namespace cg = cooperative_groups;

#define CT_W 64
#define CT_H 32
#define CT_THREADS 256
#define CT_PPT (CT_W * CT_H / CT_THREADS) /* pixels a thread: 8 */
#define CT_SW (CT_W + 2)                 /* ring included */
#define CT_SH (CT_H + 2)
#define KEY_WEAK 0x80000000u
#define KEY_IDX 0x7FFFFFFFu
#define LKEY_WEAK 0x8000u
#define LKEY_IDX 0x7FFFu
#define LNONE 0xFFFFFFFFu
#define FIN_THREADS 256

static int h_method = CANNY_UNION;
extern "C" void canny_set_method(int m)
{
    h_method = m == CANNY_ITER ? CANNY_ITER : CANNY_UNION;
}
extern "C" int canny_get_method(void) { return h_method; }

extern "C" size_t canny_scratch_bytes(int w, int h)
{
    if (w < 1 || h < 1)
        return 0;
    const unsigned long long n = (unsigned long long)w * (unsigned long long)h;
    if (n >= (1ull << 31))
        return 0;
    return (size_t)((8 * n + 15) / 16 * 16 + 32);
}
extern "C" float *canny_t_plane(void *s) { return (float *)s; }
extern "C" uint32_t *canny_labels(void *s, int w, int h)
{
    return (uint32_t *)((char *)s + 4 * (size_t)w * h);
}
extern "C" unsigned *canny_flags(void *s, int w, int h)
{
    return (unsigned *)((char *)s + (8 * (size_t)w * h + 15) / 16 * 16);
}
extern "C" float *canny_thr(void *s, int w, int h)
{
    return (float *)(canny_flags(s, w, h) + 4);
}

// ---------------------------------------------------------------------------
// --canny auto: ge_canny_auto (taps.c) on the device histogram.
__global__ void canny_auto_kernel(unsigned long long *hist,
                                  unsigned long long n, float *thr)
{
    __shared__ unsigned long long s[GE_HIST_BINS];
    s[threadIdx.x] = hist[threadIdx.x];
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned long long cum = 0;
        int c = GE_HIST_BINS - 1;
        for (int i = 0; i < GE_HIST_BINS; i++) {
            cum += s[i];
            if (cum * 10 >= n * 7) {
                c = i;
                break;
            }
        }
        const float high = __fadd_rn((float)c, 0.5f);
        thr[0] = __fmul_rn(0.4f, high);
        thr[1] = high;
    }
    hist[threadIdx.x] = 0; /* read above, before the barrier */
}

extern "C" cudaError_t canny_auto_gpu(unsigned long long *hist,
                                      unsigned long long n, float *thr,
                                      cudaStream_t stream)
{
    if (!hist || !thr)
        return cudaErrorInvalidValue;
    canny_auto_kernel<<<1, GE_HIST_BINS, 0, stream>>>(hist, n, thr);
    return cudaGetLastError();
}

// ---------------------------------------------------------------------------
// Staged Sobel for Canny (DESIGN.md §1.4 on the blurred plane, border-mapped):
// one pixel a thread, the histogram of e in shared bins.
__device__ __forceinline__ float blur_at(const float *b, int pitch, int w,
                                         int h, int y, int x, int border)
{
    const int my = map_border(y, h, border), mx = map_border(x, w, border);
    return (my < 0 || mx < 0) ? 0.0f : __ldg(b + (size_t)my * pitch + mx);
}

__global__ void canny_sobel_kernel(const float *b, int bp, int w, int h,
                                   uint8_t *code, int cp, float *t, int tp,
                                   int border, float scale,
                                   unsigned long long *hist)
{
    __shared__ unsigned s_hist[GE_HIST_BINS];
    const int tid = threadIdx.y * blockDim.x + threadIdx.x;
    s_hist[tid] = 0; /* blockDim 32 x 8 = 256 */
    __syncthreads();
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) {
        const float nw = blur_at(b, bp, w, h, y - 1, x - 1, border);
        const float n = blur_at(b, bp, w, h, y - 1, x, border);
        const float ne = blur_at(b, bp, w, h, y - 1, x + 1, border);
        const float wv = blur_at(b, bp, w, h, y, x - 1, border);
        const float ev = blur_at(b, bp, w, h, y, x + 1, border);
        const float sw = blur_at(b, bp, w, h, y + 1, x - 1, border);
        const float s = blur_at(b, bp, w, h, y + 1, x, border);
        const float se = blur_at(b, bp, w, h, y + 1, x + 1, border);
        const float L = __fadd_rn(__fadd_rn(nw, __fmul_rn(2.0f, wv)), sw);
        const float R = __fadd_rn(__fadd_rn(ne, __fmul_rn(2.0f, ev)), se);
        const float T = __fadd_rn(__fadd_rn(nw, __fmul_rn(2.0f, n)), ne);
        const float D = __fadd_rn(__fadd_rn(sw, __fmul_rn(2.0f, s)), se);
        const float gx = __fsub_rn(R, L), gy = __fsub_rn(D, T);
        const float m = __fsqrt_rn(__fmaf_rn(gx, gx, __fmul_rn(gy, gy)));
        const float q = __fmaf_rn(m, scale, 0.5f);
        const unsigned e = q >= 255.0f ? 255u : (unsigned)floorf(q);
        code[(size_t)y * cp + x] = (uint8_t)nms_code(gx, gy);
        t[(size_t)y * tp + x] = __fmul_rn(m, scale);
        atomicAdd(&s_hist[e], 1u);
    }
    __syncthreads();
    if (s_hist[tid])
        atomicAdd(&hist[tid], (unsigned long long)s_hist[tid]);
}

extern "C" cudaError_t canny_sobel_gpu(const float *blur, int blur_pitch,
                                       int w, int h, uint8_t *code,
                                       int code_pitch, float *t, int t_pitch,
                                       const ge_params *p,
                                       unsigned long long *hist,
                                       cudaStream_t stream)
{
    if (!p || w < 0 || h < 0 || blur_pitch < w || code_pitch < w ||
        t_pitch < w ||
        (p->border != GE_BORDER_REPLICATE &&
         p->border != GE_BORDER_REFLECT101 && p->border != GE_BORDER_ZERO))
        return cudaErrorInvalidValue;
    if (w == 0 || h == 0)
        return cudaGetLastError();
    if (!blur || !code || !t || !hist || (h + 7) / 8 > 65535)
        return cudaErrorInvalidValue;
    const dim3 block(32, 8), grid((unsigned)((w + 31) / 32),
                                  (unsigned)((h + 7) / 8));
    canny_sobel_kernel<<<grid, block, 0, stream>>>(
        blur, blur_pitch, w, h, code, code_pitch, t, t_pitch, p->border,
        p->scale, hist);
    return cudaGetLastError();
}

// ---------------------------------------------------------------------------
// NMS + in-tile labels.

/* shared-memory union-find, every access atomic (see the file comment) */
__device__ __forceinline__ unsigned s_find(unsigned *L, unsigned k)
{
    for (;;) {
        const unsigned p = atomicOr(&L[k & LKEY_IDX], 0u);
        if (p == k)
            return k;
        k = p;
    }
}

__device__ __forceinline__ void s_union(unsigned *L, unsigned a, unsigned b)
{
    for (;;) {
        a = s_find(L, a);
        b = s_find(L, b);
        if (a == b)
            return;
        if (a > b) {
            const unsigned x = a;
            a = b;
            b = x;
        }
        /* link root b under a; if b stopped being a root meanwhile, the
         * min keeps the smaller parent and we go on with b's parent */
        const unsigned old = atomicMin(&L[b & LKEY_IDX], a);
        if (old == b)
            return;
        b = old;
    }
}

struct nms_args {
    uint8_t *cls;
    int pitch;
    const float *t;
    int tp;
    uint32_t *lab;
    int w, h, tiles_x;
    float low, high;
    const float *thr; /* device {low, high} or NULL */
    int label;
};

__global__ void __launch_bounds__(CT_THREADS)
    canny_nms_kernel(const nms_args a)
{
    __shared__ float st[CT_SH * CT_SW];
    __shared__ unsigned sl[CT_W * CT_H];
    __shared__ uint8_t sc[CT_W * CT_H];
    const int X0 = (blockIdx.x % a.tiles_x) * CT_W;
    const int Y0 = (blockIdx.x / a.tiles_x) * CT_H;
    const float low = a.thr ? a.thr[0] : a.low;
    const float high = a.thr ? a.thr[1] : a.high;

    /* a warp a row segment (coalesced), no index division */
    for (int ly = threadIdx.x >> 5; ly < CT_SH; ly += CT_THREADS / 32) {
        const int y = Y0 - 1 + ly;
        const bool yin = (unsigned)y < (unsigned)a.h;
        const float *row = a.t + (size_t)(yin ? y : 0) * a.tp;
        for (int lx = threadIdx.x & 31; lx < CT_SW; lx += 32) {
            const int x = X0 - 1 + lx;
            st[ly * CT_SW + lx] = yin && (unsigned)x < (unsigned)a.w ? __ldg(row + x) : 0.0f;
        }
    }
    __syncthreads();

    uint8_t cl[CT_PPT];
#pragma unroll
    for (int k = 0; k < CT_PPT; k++) {
        const int j = threadIdx.x + k * CT_THREADS;
        const int ly = j / CT_W, lx = j % CT_W;
        const int y = Y0 + ly, x = X0 + lx;
        cl[k] = 0;
        if (y < a.h && x < a.w) {
            uint8_t *px = a.cls + (size_t)y * a.pitch + x;
            const unsigned code = *px;
            const float *c = st + (ly + 1) * CT_SW + lx + 1;
            /* n2 is n1 mirrored: n1 = c[-o], n2 = c[+o] */
            const int o = code == 0u ? 1 : code == 1u ? CT_SW : code == 2u ? CT_SW - 1 : CT_SW + 1;
            const float t1 = c[-o], t2 = c[o];
            const float t0 = *c;
            const bool pass = t0 > t1 && (code < 2u ? t0 >= t2 : t0 > t2);
            if (pass && t0 > low)
                cl[k] = t0 > high ? 2 : 1;
            *px = cl[k];
        }
        if (a.label) {
            sc[j] = cl[k];
            sl[j] = cl[k] ? (cl[k] == 1 ? LKEY_WEAK : 0u) | (unsigned)j : LNONE;
        }
    }
    if (!a.label)
        return;
    __syncthreads();
    /* unions over the in-tile pairs with W, NW, N, NE, pruned by Wu,
     * Otoo and Suzuki's decision tree (2009): N alone when N is a
     * candidate (NW, NE and W touch N and are joined to it by their own
     * unions); else NE plus NW or else W; else NW; else W.  Every pixel's
     * choice depends on the candidate mask only, so the unions all
     * pixels make are the sequential algorithm's, in any order: the same
     * components. */
#pragma unroll
    for (int k = 0; k < CT_PPT; k++) {
        if (!cl[k])
            continue;
        const int j = threadIdx.x + k * CT_THREADS;
        const int ly = j / CT_W, lx = j % CT_W;
        const unsigned me = (cl[k] == 1 ? LKEY_WEAK : 0u) | (unsigned)j;
        const int jw = j - 1, jn = j - CT_W, jnw = jn - 1, jne = jn + 1;
        const unsigned cw = lx > 0 ? sc[jw] : 0u;
        const unsigned cn = ly > 0 ? sc[jn] : 0u;
        const unsigned cnw = lx > 0 && ly > 0 ? sc[jnw] : 0u;
        const unsigned cne = lx < CT_W - 1 && ly > 0 ? sc[jne] : 0u;
#define LK(c, i) (((c) == 1 ? LKEY_WEAK : 0u) | (unsigned)(i))
        if (cn) {
            s_union(sl, me, LK(cn, jn));
        } else if (cne) {
            s_union(sl, me, LK(cne, jne));
            if (cnw)
                s_union(sl, me, LK(cnw, jnw));
            else if (cw)
                s_union(sl, me, LK(cw, jw));
        } else if (cnw) {
            s_union(sl, me, LK(cnw, jnw));
        } else if (cw) {
            s_union(sl, me, LK(cw, jw));
        }
#undef LK
    }
    __syncthreads();
    /* each candidate's label: its local root as a global key (no writes to
     * sl any more: plain reads) */
#pragma unroll
    for (int k = 0; k < CT_PPT; k++) {
        if (!cl[k])
            continue;
        const int j = threadIdx.x + k * CT_THREADS;
        unsigned r = (cl[k] == 1 ? LKEY_WEAK : 0u) | (unsigned)j;
        for (unsigned p; (p = sl[r & LKEY_IDX]) != r;)
            r = p;
        const int rj = (int)(r & LKEY_IDX);
        const unsigned gidx = (unsigned)((Y0 + rj / CT_W) * a.w + X0 + rj % CT_W);
        const int y = Y0 + j / CT_W, x = X0 + j % CT_W;
        a.lab[(size_t)y * a.w + x] = ((r & LKEY_WEAK) ? KEY_WEAK : 0u) | gidx;
    }
}

extern "C" cudaError_t canny_nms_gpu(uint8_t *cls, int pitch, const float *t,
                                     int t_pitch, uint32_t *lab, int w, int h,
                                     const ge_params *p, const float *thr,
                                     cudaStream_t stream)
{
    if (!p || w < 0 || h < 0 || pitch < w || t_pitch < w)
        return cudaErrorInvalidValue;
    if (w == 0 || h == 0)
        return cudaGetLastError();
    if (!cls || !t || (h_method == CANNY_UNION && !lab) ||
        (unsigned long long)w * (unsigned long long)h >= (1ull << 31))
        return cudaErrorInvalidValue;
    nms_args a;
    a.cls = cls;
    a.pitch = pitch;
    a.t = t;
    a.tp = t_pitch;
    a.lab = lab;
    a.w = w;
    a.h = h;
    a.tiles_x = (w + CT_W - 1) / CT_W;
    a.low = p->canny_low;
    a.high = p->canny_high;
    a.thr = thr;
    a.label = h_method == CANNY_UNION;
    const long long n = (long long)a.tiles_x * ((h + CT_H - 1) / CT_H);
    if (n > 0x7FFFFFFF)
        return cudaErrorInvalidValue;
    canny_nms_kernel<<<(unsigned)n, CT_THREADS, 0, stream>>>(a);
    return cudaGetLastError();
}

// ---------------------------------------------------------------------------
// Union-find hysteresis: merge across tile borders, then resolve.

__device__ __forceinline__ unsigned g_ld(const unsigned *p)
{
    return __ldcg(p); /* L2: other blocks link concurrently */
}

__device__ __forceinline__ unsigned g_find(unsigned *L, unsigned k)
{
    for (;;) {
        const unsigned p = g_ld(&L[k & KEY_IDX]);
        if (p == k)
            return k;
        k = p;
    }
}

__device__ __forceinline__ void g_union(unsigned *L, unsigned a, unsigned b)
{
    for (;;) {
        a = g_find(L, a);
        b = g_find(L, b);
        if (a == b)
            return;
        if (a > b) {
            const unsigned x = a;
            a = b;
            b = x;
        }
        const unsigned old = atomicMin(&L[b & KEY_IDX], a);
        if (old == b)
            return;
        b = old;
    }
}

__device__ __forceinline__ unsigned key_of(unsigned c, size_t idx)
{
    return (c == 1 ? KEY_WEAK : 0u) | (unsigned)idx;
}

__global__ void canny_merge_kernel(const uint8_t *cls, int pitch, unsigned *L,
                                   int w, int h, int tiles_x)
{
    const int X0 = (blockIdx.x % tiles_x) * CT_W;
    const int Y0 = (blockIdx.x / tiles_x) * CT_H;
    const int i = threadIdx.x;
    int y, x;
    if (i < CT_W) { /* top row: the three neighbours above */
        y = Y0;
        x = X0 + i;
        if (Y0 == 0)
            return;
    } else if (i < CT_W + CT_H) { /* left column: the three to the left */
        y = Y0 + i - CT_W;
        x = X0;
        if (X0 == 0)
            return;
    } else {
        return;
    }
    if (y >= h || x >= w)
        return;
    const unsigned c = cls[(size_t)y * pitch + x];
    if (!c)
        return;
    const unsigned me = key_of(c, (size_t)y * w + x);
    for (int d = -1; d <= 1; d++) {
        const int ny = i < CT_W ? y - 1 : y + d;
        const int nx = i < CT_W ? x + d : x - 1;
        if ((unsigned)ny >= (unsigned)h || (unsigned)nx >= (unsigned)w)
            continue;
        const unsigned cn = cls[(size_t)ny * pitch + nx];
        if (cn)
            g_union(L, me, key_of(cn, (size_t)ny * w + nx));
    }
}

/* the root of key k, splitting the path on the way (final pass only: no
 * unions run concurrently) */
__device__ __forceinline__ unsigned g_find_split(unsigned *L, unsigned k)
{
    for (;;) {
        const unsigned p = g_ld(&L[k & KEY_IDX]);
        if (p == k)
            return k;
        const unsigned gp = g_ld(&L[p & KEY_IDX]);
        if (gp == p)
            return p;
        __stcg(&L[k & KEY_IDX], gp);
        k = gp;
    }
}

__global__ void __launch_bounds__(FIN_THREADS)
    canny_final_kernel(uint8_t *cls, int pitch, unsigned *L, int w, int h,
                       int use_labels, int invert, int vec4,
                       unsigned long long *hist)
{
    __shared__ unsigned s_on;
    if (threadIdx.x == 0)
        s_on = 0;
    __syncthreads();
    unsigned on = 0;
    const uint8_t inv = invert ? 255 : 0;
    /* 4 pixels a thread where rows are 4-byte aligned (most words hold
     * no candidate: one load, one store), the row's tail byte by byte */
    const int nq = vec4 ? w >> 2 : 0;
    for (int y = blockIdx.x; y < h; y += gridDim.x) {
        uint8_t *row = cls + (size_t)y * pitch;
        const size_t i0 = (size_t)y * w;
        for (int q = threadIdx.x; q < nq; q += FIN_THREADS) {
            const uint32_t v = ((const uint32_t *)row)[q];
            uint32_t out = 0;
            if (v) {
#pragma unroll
                for (int b = 0; b < 4; b++) {
                    const unsigned c = (v >> (8 * b)) & 0xFFu;
                    bool keep = c == 2;
                    if (c == 1 && use_labels)
                        keep = !(g_find_split(L, key_of(1, i0 + 4 * q + b)) & KEY_WEAK);
                    out |= keep ? 0xFFu << (8 * b) : 0u;
                    on += keep;
                }
            }
            ((uint32_t *)row)[q] = out ^ (invert ? 0xFFFFFFFFu : 0u);
        }
        for (int x = 4 * nq + threadIdx.x; x < w; x += FIN_THREADS) {
            const unsigned c = row[x];
            bool keep = c == 2;
            if (c == 1 && use_labels)
                keep = !(g_find_split(L, key_of(1, i0 + x)) & KEY_WEAK);
            row[x] = (uint8_t)((keep ? 255 : 0) ^ inv);
            on += keep;
        }
    }
    if (on)
        atomicAdd(&s_on, on);
    __syncthreads();
    if (threadIdx.x == 0) {
        /* pixels of this block: its rows (gridDim.x <= h) times w */
        const unsigned long long rows = (h - 1 - blockIdx.x) / gridDim.x + 1;
        const unsigned long long npx = rows * (unsigned long long)w;
        const unsigned long long n255 = s_on;
        if (n255)
            atomicAdd(&hist[invert ? 0 : 255], n255);
        if (npx - n255)
            atomicAdd(&hist[invert ? 255 : 0], npx - n255);
    }
}

// ---------------------------------------------------------------------------
// CANNY_ITER: cooperative fixpoint.
__global__ void __launch_bounds__(CT_THREADS)
    canny_iter_kernel(uint8_t *cls, int pitch, int w, int h, int tiles_x,
                      int ntiles, unsigned *flags)
{
    __shared__ uint8_t sa[CT_SH * CT_SW], sb[CT_SH * CT_SW];
    cg::grid_group grid = cg::this_grid();
    for (int it = 0;; it++) {
        if (blockIdx.x == 0 && threadIdx.x == 0)
            flags[(it + 1) % 3] = 0; /* last read two rounds ago */
        int any = 0;
        for (int tile = blockIdx.x; tile < ntiles; tile += gridDim.x) {
            const int X0 = (tile % tiles_x) * CT_W, Y0 = (tile / tiles_x) * CT_H;
            for (int i = threadIdx.x; i < CT_SH * CT_SW; i += CT_THREADS) {
                const int ly = i / CT_SW, lx = i - ly * CT_SW;
                const int y = Y0 - 1 + ly, x = X0 - 1 + lx;
                uint8_t v = 0;
                if ((unsigned)y < (unsigned)h && (unsigned)x < (unsigned)w)
                    v = __ldcg(cls + (size_t)y * pitch + x);
                sa[i] = v;
                sb[i] = v;
            }
            __syncthreads();
            uint8_t *cur = sa, *nxt = sb;
            unsigned mine = 0; /* bit k: pixel k turned strong */
            for (;;) {
                int ch = 0;
#pragma unroll
                for (int k = 0; k < CT_PPT; k++) {
                    const int j = threadIdx.x + k * CT_THREADS;
                    const int i = (j / CT_W + 1) * CT_SW + j % CT_W + 1;
                    uint8_t v = cur[i];
                    if (v == 1 &&
                        (cur[i - CT_SW - 1] == 2 || cur[i - CT_SW] == 2 ||
                         cur[i - CT_SW + 1] == 2 || cur[i - 1] == 2 ||
                         cur[i + 1] == 2 || cur[i + CT_SW - 1] == 2 ||
                         cur[i + CT_SW] == 2 || cur[i + CT_SW + 1] == 2)) {
                        v = 2;
                        ch = 1;
                        mine |= 1u << k;
                    }
                    nxt[i] = v;
                }
                uint8_t *x = cur;
                cur = nxt;
                nxt = x;
                if (!__syncthreads_or(ch))
                    break;
            }
            int edge_changed = 0;
#pragma unroll
            for (int k = 0; k < CT_PPT; k++) {
                if (!(mine >> k & 1u))
                    continue;
                const int j = threadIdx.x + k * CT_THREADS;
                const int ly = j / CT_W, lx = j % CT_W;
                __stcg(cls + (size_t)(Y0 + ly) * pitch + X0 + lx, (uint8_t)2);
                edge_changed |= ly == 0 || ly == CT_H - 1 || lx == 0 || lx == CT_W - 1;
            }
            /* also the barrier before the buffers are reloaded */
            any |= __syncthreads_or(edge_changed);
        }
        if (threadIdx.x == 0 && any)
            atomicOr(&flags[it % 3], 1u);
        grid.sync();
        const unsigned f = __ldcg(&flags[it % 3]);
        if (!f) {
            if (blockIdx.x == 0 && threadIdx.x == 0)
                flags[3] = (unsigned)it + 1; /* rounds run */
            break;
        }
    }
}

/* Per device, once: SMs, and the blocks of canny_iter_kernel resident at
 * once (0: no cooperative launch).  Host attribute queries, no stream
 * operation. */
static cudaError_t dev_facts(int *sms, int *resident)
{
    static int c_sms[64], c_res[64];
    int dev = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e != cudaSuccess)
        return e;
    if (dev >= 0 && dev < 64 && __atomic_load_n(&c_sms[dev], __ATOMIC_RELAXED) > 0) {
        *sms = c_sms[dev];
        *resident = __atomic_load_n(&c_res[dev], __ATOMIC_RELAXED);
        return cudaSuccess;
    }
    int nb = 0, coop = 0;
    e = cudaDeviceGetAttribute(sms, cudaDevAttrMultiProcessorCount, dev);
    if (e == cudaSuccess)
        e = cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, dev);
    if (e == cudaSuccess)
        e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nb, canny_iter_kernel,
                                                          CT_THREADS, 0);
    if (e != cudaSuccess)
        return e;
    *resident = coop && nb > 0 ? nb * *sms : 0;
    if (dev >= 0 && dev < 64) {
        __atomic_store_n(&c_res[dev], *resident, __ATOMIC_RELAXED);
        __atomic_store_n(&c_sms[dev], *sms, __ATOMIC_RELAXED);
    }
    return cudaSuccess;
}

extern "C" cudaError_t canny_hyst_gpu(uint8_t *cls, int pitch, uint32_t *lab,
                                      int w, int h, const ge_params *p,
                                      unsigned long long *hist,
                                      unsigned *flags, cudaStream_t stream)
{
    if (!p || w < 0 || h < 0 || pitch < w)
        return cudaErrorInvalidValue;
    if (w == 0 || h == 0)
        return cudaGetLastError();
    if (!cls || !hist || (unsigned long long)w * (unsigned long long)h >= (1ull << 31))
        return cudaErrorInvalidValue;
    const int tiles_x = (w + CT_W - 1) / CT_W;
    const int ntiles = tiles_x * ((h + CT_H - 1) / CT_H);
    const int uf = h_method == CANNY_UNION;
    int sms = 0, res = 0;
    cudaError_t e = dev_facts(&sms, &res);
    if (e != cudaSuccess)
        return e;
    if (uf) {
        if (!lab)
            return cudaErrorInvalidValue;
        canny_merge_kernel<<<(unsigned)ntiles, ((CT_W + CT_H + 31) / 32) * 32, 0, stream>>>(
            cls, pitch, lab, w, h, tiles_x);
    } else {
        if (!flags)
            return cudaErrorInvalidValue;
        if (res < 1)
            return cudaErrorNotSupported;
        e = cudaMemsetAsync(flags, 0, 4 * sizeof(unsigned), stream);
        if (e != cudaSuccess)
            return e;
        int grid = ntiles < res ? ntiles : res;
        void *args[] = {&cls, &pitch, &w, &h, (void *)&tiles_x, (void *)&ntiles, &flags};
        e = cudaLaunchCooperativeKernel((const void *)canny_iter_kernel, dim3(grid),
                                        dim3(CT_THREADS), args, 0, stream);
        if (e != cudaSuccess)
            return e;
    }
    e = cudaGetLastError();
    if (e != cudaSuccess)
        return e;
    int fg = sms * 8;
    if (fg > h)
        fg = h;
    canny_final_kernel<<<(unsigned)fg, FIN_THREADS, 0, stream>>>(
        cls, pitch, lab, w, h, uf, p->invert != 0,
        (uintptr_t)cls % 4 == 0 && pitch % 4 == 0, hist);
    return cudaGetLastError();
}
