/*
 * cpu_backend.c — DESIGN.md §1 on the CPU, bit for bit the reference's result,
 * written for speed.
 *
 * Work split: the image is cut into bands of rows; worker threads (the
 * calling thread is one of them) take bands from a shared counter.  A band
 * is fused: it computes grey + horizontal blur for every row its vertical
 * blur needs (its own rows plus r+1 halo rows each side, recomputed rather
 * than shared, so bands never wait for each other), then the vertical blur
 * of its rows plus one halo row each side, then Sobel + quantisation +
 * histogram of its own rows.  All of that lives in band-local scratch, so a
 * band's planes stay in cache; full planes are written only when asked for.
 *
 * Borders: rows are never padded in memory.  Each grey row is written into
 * a buffer with r extra slots each side that hold the border-mapped values
 * (or 0 for the zero border), so the horizontal pass has no border case at
 * all; the vertical pass and Sobel take row pointers chosen through the
 * same mapping (a row of zeros for the zero border), and blurred rows carry
 * one mapped value each side for Sobel.  So every tap sees exactly the value
 * DESIGN.md §1.5 gives it, for any radius and any size.
 *
 * Arithmetic: each output is computed with the same operations in the same
 * order as the reference (DESIGN.md §1), one value per SIMD lane; vectorising
 * changes which lane does the work, never the rounding.  fmaf is a single
 * rounding on every path (libm call, scalar vfmadd or packed vfmadd), and
 * -ffp-contract=off keeps the compiler from adding any.  On x86-64 with
 * AVX2+FMA the hot loops use intrinsics (chosen at run time); elsewhere, or
 * with GPUEDGE_NO_SIMD set in the environment (a test hook that exercises
 * the portable path), plain C.
 */
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define CPU_HAVE_X86 1
#else
#define CPU_HAVE_X86 0
#endif

#include "cpu_backend.h"
#include "border.h"
#include "util.h"

/* Rows per band at least; grown with the radius so that the recomputed
 * halo (2r+2 rows of grey + horizontal blur) stays a small fraction. */
#define CPU_BAND_ROWS 64
#define CPU_BAND_HALO_FACTOR 8
/* more threads than this is certainly a mistake */
#define CPU_MAX_THREADS 1024

// ---------------------------------------------------------------------------
// Borders (DESIGN.md §1.5)

/* cb_map: i mapped into [0, n-1], or -1 where the value is 0 (zero
 * border) — the rule the kernels use too (kernels/border.h). */
#define cb_map map_border

// ---------------------------------------------------------------------------
// Row kernels: scalar bodies (always inlined, so each instantiation below
// gets its target's fmaf), then the AVX2 loops that fall back to them for
// the last few columns.

#define CB_INLINE static inline __attribute__((always_inline))

/* DESIGN.md §1.1-1.2 for row y of f into g[0..w-1] */
CB_INLINE void grey_row_body(const ge_frame *f, int y, float *g)
{
    const unsigned char *row = (const unsigned char *)f->data +
                               (size_t)y * f->stride;
    const int w = f->width, nc = f->channels, sh = f->shift, off = f->offset;
    const float gain = f->gain;
    int x;

    if (f->bytes_per_sample == 1) {
        /* every possible value of a byte, computed as DESIGN.md §1 writes it */
        float lut[256];
        for (x = 0; x < 256; x++)
            lut[x] = (float)((int)((unsigned)x >> sh) - off) * gain;
        if (nc >= 3) {
            for (x = 0; x < w; x++) {
                const unsigned char *s = row + (size_t)x * nc;
                g[x] = fmaf(0.114f, lut[s[2]],
                            fmaf(0.587f, lut[s[1]], 0.299f * lut[s[0]]));
            }
        } else {
            for (x = 0; x < w; x++)
                g[x] = lut[row[(size_t)x * nc]];
        }
    } else {
        for (x = 0; x < w; x++) {
            uint16_t s[4];
            memcpy(s, row + (size_t)x * nc * 2, (size_t)nc * 2);
            if (nc >= 3) {
                float r = (float)((int)((unsigned)s[0] >> sh) - off) * gain;
                float gr = (float)((int)((unsigned)s[1] >> sh) - off) * gain;
                float b = (float)((int)((unsigned)s[2] >> sh) - off) * gain;
                g[x] = fmaf(0.114f, b, fmaf(0.587f, gr, 0.299f * r));
            } else {
                g[x] = (float)((int)((unsigned)s[0] >> sh) - off) * gain;
            }
        }
    }
}

/* out[x] = sum over taps of wt[k] * pad[x + k], tap 0 a product, the rest
 * fmas in order; pad[x + k] is x(x + k - r). */
CB_INLINE void hblur_body(const float *pad, int x0, int w, const float *wt,
                          int ntaps, float *out)
{
    int x, k;

    for (x = x0; x < w; x++) {
        float acc = wt[0] * pad[x];
        for (k = 1; k < ntaps; k++)
            acc = fmaf(wt[k], pad[x + k], acc);
        out[x] = acc;
    }
}

/* out[x] = the same over rows rows[0..ntaps-1] (top to bottom) */
CB_INLINE void vblur_body(const float *const *rows, int x0, int w,
                          const float *wt, int ntaps, float *out)
{
    int x, k;

    for (x = x0; x < w; x++) {
        float acc = wt[0] * rows[0][x];
        for (k = 1; k < ntaps; k++)
            acc = fmaf(wt[k], rows[k][x], acc);
        out[x] = acc;
    }
}

/* DESIGN.md §1.6 */
CB_INLINE uint8_t quantise(float m, const ge_params *p)
{
    uint8_t e;

    if (p->use_threshold) {
        e = (m * p->scale >= p->threshold) ? 255 : 0;
    } else {
        float t = fmaf(m, p->scale, 0.5f);
        e = t >= 255.0f ? 255 : (uint8_t)floorf(t);
    }
    return p->invert ? (uint8_t)(255 - e) : e;
}

/* DESIGN.md §1.4 for one row: a, b, c are the rows above, at and below, each
 * readable at [-1, w] (border values already in place). */
CB_INLINE void sobel_body(const float *a, const float *b, const float *c,
                          int x0, int w, const ge_params *p, uint8_t *e)
{
    int x;

    for (x = x0; x < w; x++) {
        float L = (a[x - 1] + 2.0f * b[x - 1]) + c[x - 1];
        float R = (a[x + 1] + 2.0f * b[x + 1]) + c[x + 1];
        float T = (a[x - 1] + 2.0f * a[x]) + a[x + 1];
        float D = (c[x - 1] + 2.0f * c[x]) + c[x + 1];
        float gx = R - L;
        float gy = D - T;
        float m = sqrtf(fmaf(gx, gx, gy * gy));
        e[x] = quantise(m, p);
    }
}

/* DESIGN.md §1.8's sector codes: which two neighbours NMS compares a pixel
 * with (dy, dx): left/right, above/below, (-1,+1)/(+1,-1) when gx and gy
 * have different signs, else (-1,-1)/(+1,+1). */
enum { CB_DIR_H = 0, CB_DIR_V = 1, CB_DIR_D1 = 2, CB_DIR_D2 = 3 };
/* tan 22.5 and tan 67.5 degrees: ratios computed in double, rounded once */
#define CB_T1 ((float)(M_SQRT2 - 1.0))
#define CB_T2 ((float)(M_SQRT2 + 1.0))
/* What the edge plane holds while a Canny frame is in flight: the NMS
 * classes, then the hysteresis states; only the final pass writes 0/255. */
enum { CB_NONE = 0, CB_WEAK = 1, CB_STRONG = 2, CB_JOINED = 3, CB_PENDING = 4 };

/* Canny's first half for one row: t = m * scale (DESIGN.md §1.8, m as DESIGN.md §1.4
 * computes it) and the sector code. */
CB_INLINE void grad_body(const float *a, const float *b, const float *c,
                         int x0, int w, float scale, float *t, uint8_t *dir)
{
    int x;

    for (x = x0; x < w; x++) {
        float L = (a[x - 1] + 2.0f * b[x - 1]) + c[x - 1];
        float R = (a[x + 1] + 2.0f * b[x + 1]) + c[x + 1];
        float T = (a[x - 1] + 2.0f * a[x]) + a[x + 1];
        float D = (c[x - 1] + 2.0f * c[x]) + c[x + 1];
        float gx = R - L;
        float gy = D - T;
        float ax = fabsf(gx), ay = fabsf(gy);

        t[x] = sqrtf(fmaf(gx, gx, gy * gy)) * scale;
        dir[x] = ay < CB_T1 * ax   ? CB_DIR_H
                 : ay > CB_T2 * ax ? CB_DIR_V
                 : (gx < 0) != (gy < 0) ? CB_DIR_D1 : CB_DIR_D2;
    }
}

/* Non-maximum suppression and the thresholds for one row: tp, tc, tn are
 * the t rows above, at and below, each readable at [-1, w] with 0 outside
 * the image (a row outside is all zeros). */
CB_INLINE void nms_body(const float *tp, const float *tc, const float *tn,
                        const uint8_t *dir, int x0, int w, float low,
                        float high, uint8_t *cls)
{
    int x;

    for (x = x0; x < w; x++) {
        float v = tc[x];
        int pass;

        switch (dir[x]) {
        case CB_DIR_H: pass = v > tc[x - 1] && v >= tc[x + 1]; break;
        case CB_DIR_V: pass = v > tp[x] && v >= tn[x]; break;
        case CB_DIR_D1: pass = v > tp[x + 1] && v > tn[x - 1]; break;
        default: pass = v > tp[x - 1] && v > tn[x + 1]; break;
        }
        cls[x] = !pass || !(v > low) ? CB_NONE : v > high ? CB_STRONG : CB_WEAK;
    }
}

/* Canny's last pass over n bytes: joined -> 255, anything else -> 0,
 * then ^ inv (--invert); returns how many were joined. */
CB_INLINE size_t final_body(uint8_t *e, size_t i0, size_t n, uint8_t inv)
{
    size_t i, on = 0;

    for (i = i0; i < n; i++) {
        uint8_t v = e[i] == CB_JOINED;
        on += v;
        e[i] = (uint8_t)((0u - v) ^ inv);
    }
    return on;
}

typedef struct cb_kernels {
    void (*grey_row)(const ge_frame *f, int y, float *g);
    void (*hblur)(const float *pad, int w, const float *wt, int ntaps,
                  float *out);
    void (*vblur)(const float *const *rows, int w, const float *wt,
                  int ntaps, float *out);
    void (*sobel)(const float *a, const float *b, const float *c, int w,
                  const ge_params *p, uint8_t *e);
    void (*grad)(const float *a, const float *b, const float *c, int w,
                 float scale, float *t, uint8_t *dir);
    void (*nms)(const float *tp, const float *tc, const float *tn,
                const uint8_t *dir, int w, float low, float high,
                uint8_t *cls);
    size_t (*final)(uint8_t *e, size_t n, uint8_t inv);
} cb_kernels;

// --- portable instantiation

static void grey_row_c(const ge_frame *f, int y, float *g)
{
    grey_row_body(f, y, g);
}

static void hblur_c(const float *pad, int w, const float *wt, int ntaps,
                    float *out)
{
    hblur_body(pad, 0, w, wt, ntaps, out);
}

static void vblur_c(const float *const *rows, int w, const float *wt,
                    int ntaps, float *out)
{
    vblur_body(rows, 0, w, wt, ntaps, out);
}

static void sobel_c(const float *a, const float *b, const float *c, int w,
                    const ge_params *p, uint8_t *e)
{
    sobel_body(a, b, c, 0, w, p, e);
}

static void grad_c(const float *a, const float *b, const float *c, int w,
                   float scale, float *t, uint8_t *dir)
{
    grad_body(a, b, c, 0, w, scale, t, dir);
}

static void nms_c(const float *tp, const float *tc, const float *tn,
                  const uint8_t *dir, int w, float low, float high,
                  uint8_t *cls)
{
    nms_body(tp, tc, tn, dir, 0, w, low, high, cls);
}

static size_t final_c(uint8_t *e, size_t n, uint8_t inv)
{
    return final_body(e, 0, n, inv);
}

static const cb_kernels cb_kernels_c = { grey_row_c, hblur_c, vblur_c,
                                         sobel_c, grad_c, nms_c, final_c };

#if CPU_HAVE_X86
// --- AVX2 + FMA instantiation (one lane = one output, same operations)

#define CB_AVX2 __attribute__((target("avx2,fma")))

CB_AVX2 static void grey_row_avx2(const ge_frame *f, int y, float *g)
{
    grey_row_body(f, y, g); /* scalar, but fmaf becomes one instruction */
}

CB_AVX2 static void hblur_avx2(const float *pad, int w, const float *wt,
                               int ntaps, float *out)
{
    int x = 0, k;

    for (; x + 16 <= w; x += 16) {
        __m256 w0 = _mm256_set1_ps(wt[0]);
        __m256 a0 = _mm256_mul_ps(w0, _mm256_loadu_ps(pad + x));
        __m256 a1 = _mm256_mul_ps(w0, _mm256_loadu_ps(pad + x + 8));
        for (k = 1; k < ntaps; k++) {
            __m256 wk = _mm256_set1_ps(wt[k]);
            a0 = _mm256_fmadd_ps(wk, _mm256_loadu_ps(pad + x + k), a0);
            a1 = _mm256_fmadd_ps(wk, _mm256_loadu_ps(pad + x + 8 + k), a1);
        }
        _mm256_storeu_ps(out + x, a0);
        _mm256_storeu_ps(out + x + 8, a1);
    }
    for (; x + 8 <= w; x += 8) {
        __m256 a0 = _mm256_mul_ps(_mm256_set1_ps(wt[0]),
                                  _mm256_loadu_ps(pad + x));
        for (k = 1; k < ntaps; k++)
            a0 = _mm256_fmadd_ps(_mm256_set1_ps(wt[k]),
                                 _mm256_loadu_ps(pad + x + k), a0);
        _mm256_storeu_ps(out + x, a0);
    }
    hblur_body(pad, x, w, wt, ntaps, out);
}

CB_AVX2 static void vblur_avx2(const float *const *rows, int w,
                               const float *wt, int ntaps, float *out)
{
    int x = 0, k;

    for (; x + 16 <= w; x += 16) {
        __m256 w0 = _mm256_set1_ps(wt[0]);
        __m256 a0 = _mm256_mul_ps(w0, _mm256_loadu_ps(rows[0] + x));
        __m256 a1 = _mm256_mul_ps(w0, _mm256_loadu_ps(rows[0] + x + 8));
        for (k = 1; k < ntaps; k++) {
            __m256 wk = _mm256_set1_ps(wt[k]);
            a0 = _mm256_fmadd_ps(wk, _mm256_loadu_ps(rows[k] + x), a0);
            a1 = _mm256_fmadd_ps(wk, _mm256_loadu_ps(rows[k] + x + 8), a1);
        }
        _mm256_storeu_ps(out + x, a0);
        _mm256_storeu_ps(out + x + 8, a1);
    }
    for (; x + 8 <= w; x += 8) {
        __m256 a0 = _mm256_mul_ps(_mm256_set1_ps(wt[0]),
                                  _mm256_loadu_ps(rows[0] + x));
        for (k = 1; k < ntaps; k++)
            a0 = _mm256_fmadd_ps(_mm256_set1_ps(wt[k]),
                                 _mm256_loadu_ps(rows[k] + x), a0);
        _mm256_storeu_ps(out + x, a0);
    }
    vblur_body(rows, x, w, wt, ntaps, out);
}

CB_AVX2 static void sobel_avx2(const float *a, const float *b, const float *c,
                               int w, const ge_params *p, uint8_t *e)
{
    const __m256 two = _mm256_set1_ps(2.0f), half = _mm256_set1_ps(0.5f);
    const __m256 f255 = _mm256_set1_ps(255.0f);
    const __m256 scale = _mm256_set1_ps(p->scale);
    const __m256 thr = _mm256_set1_ps(p->threshold);
    const __m256i i255 = _mm256_set1_epi32(255);
    int x = 0;

    for (; x + 8 <= w; x += 8) {
        __m256 nw = _mm256_loadu_ps(a + x - 1), n = _mm256_loadu_ps(a + x);
        __m256 ne = _mm256_loadu_ps(a + x + 1);
        __m256 wv = _mm256_loadu_ps(b + x - 1), ev = _mm256_loadu_ps(b + x + 1);
        __m256 sw = _mm256_loadu_ps(c + x - 1), s = _mm256_loadu_ps(c + x);
        __m256 se = _mm256_loadu_ps(c + x + 1);
        __m256 L = _mm256_add_ps(_mm256_add_ps(nw, _mm256_mul_ps(two, wv)), sw);
        __m256 R = _mm256_add_ps(_mm256_add_ps(ne, _mm256_mul_ps(two, ev)), se);
        __m256 T = _mm256_add_ps(_mm256_add_ps(nw, _mm256_mul_ps(two, n)), ne);
        __m256 D = _mm256_add_ps(_mm256_add_ps(sw, _mm256_mul_ps(two, s)), se);
        __m256 gx = _mm256_sub_ps(R, L), gy = _mm256_sub_ps(D, T);
        __m256 m = _mm256_sqrt_ps(
            _mm256_fmadd_ps(gx, gx, _mm256_mul_ps(gy, gy)));
        __m256i v;
        __m128i v16, v8;

        if (p->use_threshold) {
            __m256 ge = _mm256_cmp_ps(_mm256_mul_ps(m, scale), thr, _CMP_GE_OQ);
            v = _mm256_and_si256(_mm256_castps_si256(ge), i255);
        } else {
            __m256 t = _mm256_fmadd_ps(m, scale, half);
            __m256 sat = _mm256_cmp_ps(t, f255, _CMP_GE_OQ);
            __m256i fl = _mm256_cvttps_epi32(
                _mm256_round_ps(t, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC));
            v = _mm256_blendv_epi8(fl, i255, _mm256_castps_si256(sat));
        }
        if (p->invert)
            v = _mm256_sub_epi32(i255, v);
        v16 = _mm_packus_epi32(_mm256_castsi256_si128(v),
                               _mm256_extracti128_si256(v, 1));
        v8 = _mm_packus_epi16(v16, v16);
        _mm_storel_epi64((__m128i *)(void *)(e + x), v8);
    }
    sobel_body(a, b, c, x, w, p, e);
}

/* 8 int32 lanes (each 0..255) -> 8 bytes at out */
CB_AVX2 static inline void store8_epi32(__m256i v, uint8_t *out)
{
    __m128i v16 = _mm_packus_epi32(_mm256_castsi256_si128(v),
                                   _mm256_extracti128_si256(v, 1));
    _mm_storel_epi64((__m128i *)(void *)out, _mm_packus_epi16(v16, v16));
}

CB_AVX2 static void grad_avx2(const float *a, const float *b, const float *c,
                              int w, float scale, float *t, uint8_t *dir)
{
    const __m256 two = _mm256_set1_ps(2.0f), sc = _mm256_set1_ps(scale);
    const __m256 t1 = _mm256_set1_ps(CB_T1), t2 = _mm256_set1_ps(CB_T2);
    const __m256 zero = _mm256_setzero_ps();
    const __m256 absmask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    int x = 0;

    for (; x + 8 <= w; x += 8) {
        __m256 nw = _mm256_loadu_ps(a + x - 1), n = _mm256_loadu_ps(a + x);
        __m256 ne = _mm256_loadu_ps(a + x + 1);
        __m256 wv = _mm256_loadu_ps(b + x - 1), ev = _mm256_loadu_ps(b + x + 1);
        __m256 sw = _mm256_loadu_ps(c + x - 1), s = _mm256_loadu_ps(c + x);
        __m256 se = _mm256_loadu_ps(c + x + 1);
        __m256 L = _mm256_add_ps(_mm256_add_ps(nw, _mm256_mul_ps(two, wv)), sw);
        __m256 R = _mm256_add_ps(_mm256_add_ps(ne, _mm256_mul_ps(two, ev)), se);
        __m256 T = _mm256_add_ps(_mm256_add_ps(nw, _mm256_mul_ps(two, n)), ne);
        __m256 D = _mm256_add_ps(_mm256_add_ps(sw, _mm256_mul_ps(two, s)), se);
        __m256 gx = _mm256_sub_ps(R, L), gy = _mm256_sub_ps(D, T);
        __m256 m = _mm256_sqrt_ps(
            _mm256_fmadd_ps(gx, gx, _mm256_mul_ps(gy, gy)));
        __m256 ax = _mm256_and_ps(gx, absmask), ay = _mm256_and_ps(gy, absmask);
        /* gx < 0 by comparison, not the sign bit: -0 is not negative */
        __m256 sd = _mm256_xor_ps(_mm256_cmp_ps(gx, zero, _CMP_LT_OQ),
                                  _mm256_cmp_ps(gy, zero, _CMP_LT_OQ));
        __m256 h = _mm256_cmp_ps(ay, _mm256_mul_ps(t1, ax), _CMP_LT_OQ);
        __m256 v = _mm256_cmp_ps(ay, _mm256_mul_ps(t2, ax), _CMP_GT_OQ);
        __m256i code = _mm256_set1_epi32(CB_DIR_D2);

        code = _mm256_blendv_epi8(code, _mm256_set1_epi32(CB_DIR_D1),
                                  _mm256_castps_si256(sd));
        code = _mm256_blendv_epi8(code, _mm256_set1_epi32(CB_DIR_V),
                                  _mm256_castps_si256(v));
        code = _mm256_blendv_epi8(code, _mm256_set1_epi32(CB_DIR_H),
                                  _mm256_castps_si256(h));
        _mm256_storeu_ps(t + x, _mm256_mul_ps(m, sc));
        store8_epi32(code, dir + x);
    }
    grad_body(a, b, c, x, w, scale, t, dir);
}

CB_AVX2 static void nms_avx2(const float *tp, const float *tc, const float *tn,
                             const uint8_t *dir, int w, float low, float high,
                             uint8_t *cls)
{
    const __m256 lo = _mm256_set1_ps(low), hi = _mm256_set1_ps(high);
    const __m256i one = _mm256_set1_epi32(1);
    int x = 0;

    for (; x + 8 <= w; x += 8) {
        __m256 v = _mm256_loadu_ps(tc + x);
        __m256 l = _mm256_loadu_ps(tc + x - 1), r = _mm256_loadu_ps(tc + x + 1);
        __m256 u = _mm256_loadu_ps(tp + x), d = _mm256_loadu_ps(tn + x);
        __m256 ul = _mm256_loadu_ps(tp + x - 1), ur = _mm256_loadu_ps(tp + x + 1);
        __m256 dl = _mm256_loadu_ps(tn + x - 1), dr = _mm256_loadu_ps(tn + x + 1);
        __m256i dv = _mm256_cvtepu8_epi32(
            _mm_loadl_epi64((const __m128i *)(const void *)(dir + x)));
        __m256 ph = _mm256_and_ps(_mm256_cmp_ps(v, l, _CMP_GT_OQ),
                                  _mm256_cmp_ps(v, r, _CMP_GE_OQ));
        __m256 pv = _mm256_and_ps(_mm256_cmp_ps(v, u, _CMP_GT_OQ),
                                  _mm256_cmp_ps(v, d, _CMP_GE_OQ));
        __m256 p1 = _mm256_and_ps(_mm256_cmp_ps(v, ur, _CMP_GT_OQ),
                                  _mm256_cmp_ps(v, dl, _CMP_GT_OQ));
        __m256 p2 = _mm256_and_ps(_mm256_cmp_ps(v, ul, _CMP_GT_OQ),
                                  _mm256_cmp_ps(v, dr, _CMP_GT_OQ));
        __m256i pass = _mm256_or_si256(
            _mm256_or_si256(
                _mm256_and_si256(_mm256_castps_si256(ph),
                                 _mm256_cmpeq_epi32(dv, _mm256_set1_epi32(CB_DIR_H))),
                _mm256_and_si256(_mm256_castps_si256(pv),
                                 _mm256_cmpeq_epi32(dv, _mm256_set1_epi32(CB_DIR_V)))),
            _mm256_or_si256(
                _mm256_and_si256(_mm256_castps_si256(p1),
                                 _mm256_cmpeq_epi32(dv, _mm256_set1_epi32(CB_DIR_D1))),
                _mm256_and_si256(_mm256_castps_si256(p2),
                                 _mm256_cmpeq_epi32(dv, _mm256_set1_epi32(CB_DIR_D2)))));
        __m256i cand = _mm256_and_si256(
            pass, _mm256_castps_si256(_mm256_cmp_ps(v, lo, _CMP_GT_OQ)));
        __m256i strong = _mm256_and_si256(
            cand, _mm256_castps_si256(_mm256_cmp_ps(v, hi, _CMP_GT_OQ)));
        /* CB_WEAK = 1, CB_STRONG = 2 */
        store8_epi32(_mm256_add_epi32(_mm256_and_si256(cand, one),
                                      _mm256_and_si256(strong, one)), cls + x);
    }
    nms_body(tp, tc, tn, dir, x, w, low, high, cls);
}

CB_AVX2 static size_t final_avx2(uint8_t *e, size_t n, uint8_t inv)
{
    const __m256i joined = _mm256_set1_epi8(CB_JOINED);
    const __m256i vinv = _mm256_set1_epi8((char)inv);
    size_t i = 0, on = 0;

    for (; i + 32 <= n; i += 32) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(e + i));
        __m256i m = _mm256_cmpeq_epi8(v, joined);
        on += (size_t)__builtin_popcount((unsigned)_mm256_movemask_epi8(m));
        _mm256_storeu_si256((__m256i *)(void *)(e + i), _mm256_xor_si256(m, vinv));
    }
    return on + final_body(e, i, n, inv);
}

static const cb_kernels cb_kernels_avx2 = { grey_row_avx2, hblur_avx2,
                                            vblur_avx2, sobel_avx2,
                                            grad_avx2, nms_avx2, final_avx2 };
#endif

static const cb_kernels *cb_pick_kernels(void)
{
    const char *no = getenv("GPUEDGE_NO_SIMD");

    if (no && *no && strcmp(no, "0") != 0)
        return &cb_kernels_c;
#if CPU_HAVE_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return &cb_kernels_avx2;
#endif
    return &cb_kernels_c;
}

// ---------------------------------------------------------------------------
// Bands and workers

typedef struct cb_job {
    const ge_frame *f;
    const ge_params *p;
    const cb_kernels *k;
    ge_taps taps;
    int w, h, r, border;
    int band_rows, nbands;
    float *grey_out, *blur_h_out, *blur_out; /* full planes or NULL */
    uint8_t *edge;
    volatile const int *stop;
    atomic_int next_band;
    int phase;            /* enum cb_phase: what a band means now */
    int canny;            /* scratch laid out for Canny bands */
    float low, high;      /* Canny thresholds of this frame */
    size_t stack_cap;     /* hysteresis stack entries per worker */
    size_t mem_limit;     /* --mem-limit (0 none): may auto keep a t plane? */
    float *tplane;        /* auto: t of the frame, rows of w + 2 (0 at the
                             ends), or NULL */
    ge_params q;          /* auto: step 6's parameters (no threshold, no
                             invert) for the histogram the thresholds use */
    atomic_int pending;   /* a fill left CB_PENDING pixels behind */
} cb_job;

/* The passes over the bands.  Sobel frames take one; Canny frames four
 * (auto adds the Sobel pass first, for the histogram its thresholds come
 * from), each finished by every worker before the next starts. */
enum cb_phase {
    CB_PH_SOBEL,    /* DESIGN.md §1.1-1.7 */
    CB_PH_NMS,      /* grey .. blur, then t, NMS, classes into the edge plane */
    CB_PH_HYST,     /* flood fills from the strong pixels of each band */
    CB_PH_PENDING,  /* the same from pixels a full stack left pending */
    CB_PH_FINAL,    /* 0/255, --invert, histogram */
    CB_PH_GRAD,     /* auto: grey .. t into the t plane, sector codes into
                       the edge plane, histogram of step 6's e */
    CB_PH_NMS_PLANE /* auto: NMS from the t plane, classes in place */
};

typedef struct cb_worker {
    cb_job *job;
    float *mem;   /* the block below */
    float *pad;   /* grey row with r mapped values each side: w + 2r */
    float *hrows; /* horizontal blur of rows hlo..hhi: nh_max * w */
    float *brows; /* blur of rows blo..bhi, 1 mapped value each side */
    float *zero;  /* w + 2 zeros: the rows outside, zero border */
    float *trow[3];     /* Canny: t of three rows, 0 at [-1] and [w] */
    uint8_t *dirrow[3]; /* Canny: their sector codes */
    size_t *stack;      /* Canny: hysteresis stack, stack_cap entries */
    const float *rowp[GE_MAX_TAPS];
    uint64_t hist[4][GE_HIST_BINS]; /* 4 copies: no store-forward chains */
    int bands_done;
    pthread_t tid;
} cb_worker;

/* one row of e into the worker's four histogram copies (round robin, so
 * the runs of equal codes an edge map is made of don't chain) */
static void cb_hist_row(cb_worker *wk, const uint8_t *e, int w)
{
    int x;

    for (x = 0; x + 4 <= w; x += 4) {
        wk->hist[0][e[x]]++;
        wk->hist[1][e[x + 1]]++;
        wk->hist[2][e[x + 2]]++;
        wk->hist[3][e[x + 3]]++;
    }
    for (; x < w; x++)
        wk->hist[0][e[x]]++;
}

/* row y (mapped) of the band's blurred rows, readable at [-1, w] */
static const float *cb_brow(const cb_worker *wk, int y, int blo)
{
    const cb_job *j = wk->job;
    int m = cb_map(y, j->h, j->border);

    if (m < 0)
        return wk->zero + 1;
    return wk->brows + (size_t)(m - blo) * (j->w + 2) + 1;
}

/* Grey and horizontal blur of rows hlo..hhi, then the vertical blur of
 * rows blo..bhi into the band's scratch; the band's own rows [y0, y1) also
 * into the full planes that were asked for. */
static void cb_blur_rows(cb_worker *wk, int y0, int y1, int hlo, int hhi,
                         int blo, int bhi)
{
    const cb_job *j = wk->job;
    const cb_kernels *k = j->k;
    const int w = j->w, h = j->h, r = j->r, bd = j->border;
    const int ntaps = 2 * r + 1;
    const size_t rowb = (size_t)w * sizeof(float);
    int y, i;

    for (y = hlo; y <= hhi; y++) {
        float *g = wk->pad + r;
        float *hr = wk->hrows + (size_t)(y - hlo) * w;
        int own = y >= y0 && y < y1;

        k->grey_row(j->f, y, g);
        if (own && j->grey_out)
            memcpy(j->grey_out + (size_t)y * w, g, rowb);
        if (r == 0) {
            memcpy(hr, g, rowb);
        } else {
            for (i = -r; i < 0; i++) {
                int m = cb_map(i, w, bd);
                g[i] = m < 0 ? 0.0f : g[m];
            }
            for (i = w; i < w + r; i++) {
                int m = cb_map(i, w, bd);
                g[i] = m < 0 ? 0.0f : g[m];
            }
            k->hblur(wk->pad, w, j->taps.w, ntaps, hr);
        }
        if (own && j->blur_h_out)
            memcpy(j->blur_h_out + (size_t)y * w, hr, rowb);
    }

    for (y = blo; y <= bhi; y++) {
        float *br = wk->brows + (size_t)(y - blo) * (w + 2) + 1;
        int ml, mr;

        if (r == 0) {
            memcpy(br, wk->hrows + (size_t)(y - hlo) * w, rowb);
        } else {
            for (i = 0; i < ntaps; i++) {
                int m = cb_map(y + i - r, h, bd);
                wk->rowp[i] = m < 0 ? wk->zero + 1
                                    : wk->hrows + (size_t)(m - hlo) * w;
            }
            k->vblur(wk->rowp, w, j->taps.w, ntaps, br);
        }
        ml = cb_map(-1, w, bd);
        mr = cb_map(w, w, bd);
        br[-1] = ml < 0 ? 0.0f : br[ml];
        br[w] = mr < 0 ? 0.0f : br[mr];
        if (y >= y0 && y < y1 && j->blur_out)
            memcpy(j->blur_out + (size_t)y * w, br, rowb);
    }
}

static void cb_band(cb_worker *wk, int band)
{
    const cb_job *j = wk->job;
    const int w = j->w, h = j->h, r = j->r, bd = j->border;
    const int y0 = band * j->band_rows;
    const int y1 = y0 + j->band_rows < h ? y0 + j->band_rows : h;
    int blo, bhi, hlo, hhi, y;

    /* Sobel reads blurred rows y0-1..y1, the vertical blur of those reads
     * horizontal rows r further out; both through the border mapping.  Row
     * y0 itself is always among them, so neither range is empty. */
    map_range(y0 - 1, y1, h, bd, &blo, &bhi);
    map_range(blo - r, bhi + r, h, bd, &hlo, &hhi);
    cb_blur_rows(wk, y0, y1, hlo, hhi, blo, bhi);

    for (y = y0; y < y1; y++) {
        uint8_t *e = j->edge + (size_t)y * w;

        j->k->sobel(cb_brow(wk, y - 1, blo), cb_brow(wk, y, blo),
                    cb_brow(wk, y + 1, blo), w, j->p, e);
        cb_hist_row(wk, e, w);
    }
}

// ---------------------------------------------------------------------------
// Canny (DESIGN.md §1.8)

/* NMS needs t of the rows above and below its own, so a band computes t
 * for rows y0-1..y1 (the image's rows only: outside, t is 0) from blurred
 * rows y0-2..y1+1, keeping three rows of t in a ring.  The classes go into
 * the edge plane; nothing whole-frame is allocated. */
static void cb_band_nms(cb_worker *wk, int band)
{
    const cb_job *j = wk->job;
    const int w = j->w, h = j->h, r = j->r, bd = j->border;
    const int y0 = band * j->band_rows;
    const int y1 = y0 + j->band_rows < h ? y0 + j->band_rows : h;
    const float *tp[3];
    int blo, bhi, hlo, hhi, y;

    map_range(y0 - 2, y1 + 1, h, bd, &blo, &bhi);
    map_range(blo - r, bhi + r, h, bd, &hlo, &hhi);
    cb_blur_rows(wk, y0, y1, hlo, hhi, blo, bhi);

    for (y = y0 - 1; y <= y1; y++) {
        const int s = (y - y0 + 1) % 3;

        if (y < 0 || y >= h) {
            tp[s] = wk->zero + 1;
        } else {
            j->k->grad(cb_brow(wk, y - 1, blo), cb_brow(wk, y, blo),
                       cb_brow(wk, y + 1, blo), w, j->p->scale,
                       wk->trow[s] + 1, wk->dirrow[s]);
            tp[s] = wk->trow[s] + 1;
        }
        if (y > y0) {
            /* row y-1 has both neighbours now */
            const int c = (y - y0) % 3;
            j->k->nms(tp[(y - y0 + 2) % 3], tp[c], tp[s], wk->dirrow[c], w,
                      j->low, j->high, j->edge + (size_t)(y - 1) * w);
        }
    }
}

/* --canny auto with a t plane (cb_canny): the thresholds depend on the
 * whole frame's histogram, so the first pass keeps t for the second
 * instead of the second recomputing grey .. Sobel. */
static float *cb_trow(const cb_worker *wk, int y)
{
    const cb_job *j = wk->job;

    if (y < 0 || y >= j->h)
        return wk->zero + 1;
    return j->tplane + (size_t)y * (j->w + 2) + 1;
}

static void cb_band_grad(cb_worker *wk, int band)
{
    const cb_job *j = wk->job;
    const int w = j->w, h = j->h, r = j->r, bd = j->border;
    const int y0 = band * j->band_rows;
    const int y1 = y0 + j->band_rows < h ? y0 + j->band_rows : h;
    uint8_t *e = wk->dirrow[0]; /* the t ring is idle in this pass */
    int blo, bhi, hlo, hhi, y;

    map_range(y0 - 1, y1, h, bd, &blo, &bhi);
    map_range(blo - r, bhi + r, h, bd, &hlo, &hhi);
    cb_blur_rows(wk, y0, y1, hlo, hhi, blo, bhi);
    for (y = y0; y < y1; y++) {
        const float *a = cb_brow(wk, y - 1, blo), *b = cb_brow(wk, y, blo);
        const float *c = cb_brow(wk, y + 1, blo);
        float *t = cb_trow(wk, y);

        t[-1] = t[w] = 0.0f;
        j->k->grad(a, b, c, w, j->p->scale, t, j->edge + (size_t)y * w);
        j->k->sobel(a, b, c, w, &j->q, e);
        cb_hist_row(wk, e, w);
    }
}

static void cb_band_nms_plane(cb_worker *wk, int band)
{
    const cb_job *j = wk->job;
    const int w = j->w;
    const int y0 = band * j->band_rows;
    const int y1 = y0 + j->band_rows < j->h ? y0 + j->band_rows : j->h;

    /* each row's sector codes are read before its classes overwrite them */
    for (int y = y0; y < y1; y++)
        j->k->nms(cb_trow(wk, y - 1), cb_trow(wk, y), cb_trow(wk, y + 1),
                  j->edge + (size_t)y * w, w, j->low, j->high,
                  j->edge + (size_t)y * w);
}

/* Hysteresis over the whole frame, on the edge plane in place: every
 * worker starts fills from the seeds of its bands, and a fill crosses
 * bands freely.  A pixel is claimed by one compare-and-swap (weak, strong
 * or pending -> joined) and only its claimer pushes it, so each joined
 * pixel is expanded exactly once whichever thread gets there first: the
 * final set is the 8-connected closure of the strong pixels, the same for
 * any thread count or timing.  When a stack is full the pixel is claimed
 * as pending instead, and a later pass starts fills from those: bounded
 * memory for any image. */
static inline int cb_claim(uint8_t *e, uint8_t want, uint8_t to)
{
    return __atomic_compare_exchange_n(e, &want, to, 0, __ATOMIC_RELAXED,
                                       __ATOMIC_RELAXED);
}

static void cb_fill(cb_worker *wk, size_t start)
{
    cb_job *j = wk->job;
    uint8_t *e = j->edge;
    const size_t w = (size_t)j->w, h = (size_t)j->h, cap = j->stack_cap;
    size_t *st = wk->stack, top = 0;

    st[top++] = start;
    while (top > 0) {
        const size_t i = st[--top], y = i / w, x = i - y * w;
        const size_t ya = y > 0 ? y - 1 : y, yb = y + 1 < h ? y + 1 : y;
        const size_t xa = x > 0 ? x - 1 : x, xb = x + 1 < w ? x + 1 : x;
        size_t yy, xx;

        for (yy = ya; yy <= yb; yy++) {
            for (xx = xa; xx <= xb; xx++) {
                const size_t k = yy * w + xx;
                uint8_t v = __atomic_load_n(&e[k], __ATOMIC_RELAXED);

                if (v != CB_WEAK && v != CB_STRONG && v != CB_PENDING)
                    continue;
                if (top < cap) {
                    if (cb_claim(&e[k], v, CB_JOINED))
                        st[top++] = k;
                } else if (v != CB_PENDING && cb_claim(&e[k], v, CB_PENDING)) {
                    atomic_store_explicit(&j->pending, 1, memory_order_relaxed);
                }
            }
        }
    }
}

static void cb_band_hyst(cb_worker *wk, int band, uint8_t seed)
{
    cb_job *j = wk->job;
    const size_t w = (size_t)j->w;
    const int y0 = band * j->band_rows;
    const int y1 = y0 + j->band_rows < j->h ? y0 + j->band_rows : j->h;
    uint8_t *e = j->edge;
    size_t i, end = (size_t)y1 * w;

    for (i = (size_t)y0 * w; i < end; i++)
        if (__atomic_load_n(&e[i], __ATOMIC_RELAXED) == seed &&
            cb_claim(&e[i], seed, CB_JOINED))
            cb_fill(wk, i);
}

/* joined -> 255, everything else -> 0, then --invert; the histogram has
 * two bins */
static void cb_band_final(cb_worker *wk, int band)
{
    const cb_job *j = wk->job;
    const size_t w = (size_t)j->w;
    const int y0 = band * j->band_rows;
    const int y1 = y0 + j->band_rows < j->h ? y0 + j->band_rows : j->h;
    const uint8_t inv = j->p->invert ? 255 : 0;
    const size_t n = (size_t)(y1 - y0) * w;
    const size_t on = j->k->final(j->edge + (size_t)y0 * w, n, inv);

    wk->hist[0][inv ^ 255] += on;
    wk->hist[0][inv] += n - on;
}

static void *cb_worker_main(void *arg)
{
    cb_worker *wk = arg;
    cb_job *j = wk->job;

    for (;;) {
        int b;
        if (j->stop && *j->stop)
            break;
        b = atomic_fetch_add(&j->next_band, 1);
        if (b >= j->nbands)
            break;
        switch (j->phase) {
        case CB_PH_SOBEL: cb_band(wk, b); break;
        case CB_PH_NMS: cb_band_nms(wk, b); break;
        case CB_PH_HYST: cb_band_hyst(wk, b, CB_STRONG); break;
        case CB_PH_PENDING: cb_band_hyst(wk, b, CB_PENDING); break;
        case CB_PH_GRAD: cb_band_grad(wk, b); break;
        case CB_PH_NMS_PLANE: cb_band_nms_plane(wk, b); break;
        default: cb_band_final(wk, b); break;
        }
        wk->bands_done++;
    }
    return NULL;
}

/* One pass over every band with nthreads workers (the calling thread is
 * worker 0; a thread that cannot be created leaves its bands to the
 * others).  Returns 0, or -2 when stopped before every band was done. */
static int cb_run_phase(cb_job *j, cb_worker *wk, int nthreads, int phase)
{
    int started = 0, done = 0, i;

    j->phase = phase;
    atomic_store(&j->next_band, 0);
    for (i = 0; i < nthreads; i++)
        wk[i].bands_done = 0;
    for (i = 1; i < nthreads; i++) {
        if (pthread_create(&wk[i].tid, NULL, cb_worker_main, &wk[i]) != 0)
            break;
        started = i;
    }
    cb_worker_main(&wk[0]);
    for (i = 1; i <= started; i++)
        pthread_join(wk[i].tid, NULL);
    for (i = 0; i < nthreads; i++)
        done += wk[i].bands_done;
    return done < j->nbands ? -2 : 0; /* only a stop leaves bands undone */
}

/* the workers' histograms, summed into hist and cleared */
static void cb_take_hist(cb_worker *wk, int nthreads, uint64_t *hist)
{
    int i, b;

    memset(hist, 0, GE_HIST_BINS * sizeof *hist);
    for (i = 0; i < nthreads; i++) {
        for (b = 0; b < GE_HIST_BINS; b++)
            hist[b] += wk[i].hist[0][b] + wk[i].hist[1][b] +
                       wk[i].hist[2][b] + wk[i].hist[3][b];
        memset(wk[i].hist, 0, sizeof wk[i].hist);
    }
}

// ---------------------------------------------------------------------------
// Scratch and the entry points

/* Hysteresis stack entries a worker gets: enough that pending passes are
 * rare (a fill's stack holds its front, not its area), fewer under
 * --mem-limit, never fewer than CB_STACK_MIN. */
#define CB_STACK_MAX ((size_t)1 << 16)
#define CB_STACK_MIN ((size_t)256)

/* Rows of horizontal blur (nh) and of blur (nb) a band of band_rows rows
 * holds: its rows plus the halos map_range gives (one more each side for
 * Canny's NMS), never more than the image has. */
static size_t cb_rows_nh(int height, int r, int band_rows, int canny)
{
    size_t nh = (size_t)band_rows + 2 + 2 * (size_t)canny + 2 * (size_t)r;
    return nh > (size_t)height ? (size_t)height : nh;
}

static size_t cb_rows_nb(int height, int band_rows, int canny)
{
    size_t nb = (size_t)band_rows + 2 + 2 * (size_t)canny;
    return nb > (size_t)height ? (size_t)height : nb;
}

/* Floats of scratch one worker needs: pad + hrows + brows + zero, and for
 * Canny three t rows (w + 2) and three sector-code rows (w bytes, counted
 * in floats); SIZE_MAX on overflow. */
static size_t cb_scratch_floats(int width, int height, int r, int band_rows,
                                int canny)
{
    const size_t w = (size_t)width;
    const size_t nh = cb_rows_nh(height, r, band_rows, canny);
    const size_t nb = cb_rows_nb(height, band_rows, canny);

    if (nh > SIZE_MAX / sizeof(float) / 8 / w ||
        nb > SIZE_MAX / sizeof(float) / 8 / (w + 2))
        return SIZE_MAX;
    return (w + 2 * (size_t)r) + nh * w + nb * (w + 2) + (w + 2) +
           (canny ? 3 * (w + 2) + (3 * w + 3) / 4 : 0);
}

/* all of one worker's bytes: scratch floats and the stack */
static size_t cb_worker_bytes(const cb_job *j)
{
    size_t n = cb_scratch_floats(j->w, j->h, j->r, j->band_rows, j->canny);
    if (n == SIZE_MAX)
        return SIZE_MAX;
    return n * sizeof(float) + (j->canny ? j->stack_cap * sizeof(size_t) : 0);
}

size_t cpu_scratch_bytes(int width, int height, double sigma, int band_rows)
{
    ge_taps t;
    size_t n;
    if (width < 1 || height < 1 || band_rows < 1 || ge_taps_make(sigma, &t) < 0)
        return SIZE_MAX;
    n = cb_scratch_floats(width, height, t.radius, band_rows, 0);
    return n == SIZE_MAX ? SIZE_MAX : n * sizeof(float);
}

/* scratch for one worker; sizes from the band geometry */
static int cb_worker_init(cb_worker *wk, cb_job *j)
{
    const size_t w = (size_t)j->w;
    const size_t total = cb_scratch_floats(j->w, j->h, j->r, j->band_rows, j->canny);
    int i;

    memset(wk, 0, sizeof *wk);
    wk->job = j;
    if (total == SIZE_MAX)
        return -1;
    wk->mem = malloc(total * sizeof(float));
    if (!wk->mem)
        return -1;
    wk->pad = wk->mem;
    wk->hrows = wk->pad + w + 2 * (size_t)j->r;
    wk->brows = wk->hrows + cb_rows_nh(j->h, j->r, j->band_rows, j->canny) * w;
    wk->zero = wk->brows + cb_rows_nb(j->h, j->band_rows, j->canny) * (w + 2);
    memset(wk->zero, 0, (w + 2) * sizeof(float));
    if (j->canny) {
        uint8_t *d = (uint8_t *)(wk->zero + (w + 2) + 3 * (w + 2));
        for (i = 0; i < 3; i++) {
            wk->trow[i] = wk->zero + (w + 2) * (size_t)(i + 1);
            wk->trow[i][0] = wk->trow[i][w + 1] = 0.0f; /* outside: t = 0 */
            wk->dirrow[i] = d + (size_t)i * w;
        }
        wk->stack = malloc(j->stack_cap * sizeof *wk->stack);
        if (!wk->stack)
            return -1;
    }
    return 0;
}

int cpu_process(const ge_frame *f, const ge_params *p, int threads,
                ge_planes *planes, volatile const int *stop)
{
    return cpu_process_limited(f, p, threads, 0, planes, stop);
}

static _Thread_local double cb_canny_ms[8];

void cpu_canny_times(double ms[8])
{
    memcpy(ms, cb_canny_ms, sizeof cb_canny_ms);
}

static double cb_thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A Canny frame: (auto: the Sobel pass for the thresholds,) NMS, the
 * fills, the pending passes while any are left, the final pass. */
static int cb_canny(cb_job *j, cb_worker *wk, int nthreads, ge_planes *planes)
{
    const ge_params *p = j->p;
    double t0 = ge_now(), t1, c0 = cb_thread_cpu(), c1;
    int ret;

    memset(cb_canny_ms, 0, sizeof cb_canny_ms);

    if (p->canny == GE_CANNY_AUTO) {
        /* The thresholds come from DESIGN.md §1.6's map of this frame (no
         * --threshold, no --invert).  With room for a t plane (4 bytes a
         * pixel, within --mem-limit beside the workers' scratch), one pass
         * keeps t and the sector codes and counts the histogram, and NMS
         * follows from the plane; without, a Sobel pass counts the
         * histogram and the NMS pass recomputes everything.  The bits are
         * the same either way. */
        const size_t row = (size_t)j->w + 2;
        size_t tbytes = SIZE_MAX, used = cb_worker_bytes(j);

        if ((size_t)j->h <= SIZE_MAX / sizeof(float) / row)
            tbytes = (size_t)j->h * row * sizeof(float);
        j->q = *p;
        j->q.canny = GE_CANNY_OFF;
        j->q.use_threshold = 0;
        j->q.invert = 0;
        if (tbytes != SIZE_MAX && used != SIZE_MAX &&
            (!j->mem_limit || (used <= j->mem_limit / (size_t)nthreads &&
                               tbytes <= j->mem_limit - used * (size_t)nthreads)))
            j->tplane = malloc(tbytes);
        if (j->tplane) {
            ret = cb_run_phase(j, wk, nthreads, CB_PH_GRAD);
        } else {
            const ge_params *keep = j->p;
            float *grey = j->grey_out, *bh = j->blur_h_out, *bl = j->blur_out;

            j->p = &j->q;
            j->grey_out = j->blur_h_out = j->blur_out = NULL;
            ret = cb_run_phase(j, wk, nthreads, CB_PH_SOBEL);
            j->p = keep;
            j->grey_out = grey;
            j->blur_h_out = bh;
            j->blur_out = bl;
        }
        if (ret < 0)
            goto end;
        cb_take_hist(wk, nthreads, planes->hist);
        ge_canny_auto(planes->hist, (uint64_t)j->w * (uint64_t)j->h, &j->low, &j->high);
    } else {
        j->low = p->canny_low;
        j->high = p->canny_high;
    }
    t1 = ge_now();
    c1 = cb_thread_cpu();
    cb_canny_ms[0] = (t1 - t0) * 1e3;
    cb_canny_ms[4] = (c1 - c0) * 1e3;
    ret = cb_run_phase(j, wk, nthreads, j->tplane ? CB_PH_NMS_PLANE : CB_PH_NMS);
    free(j->tplane);
    j->tplane = NULL;
    if (ret < 0)
        return ret;
    t0 = ge_now();
    c0 = cb_thread_cpu();
    cb_canny_ms[1] = (t0 - t1) * 1e3;
    cb_canny_ms[5] = (c0 - c1) * 1e3;
    if ((ret = cb_run_phase(j, wk, nthreads, CB_PH_HYST)) < 0)
        return ret;
    while (atomic_load(&j->pending)) {
        atomic_store(&j->pending, 0);
        if ((ret = cb_run_phase(j, wk, nthreads, CB_PH_PENDING)) < 0)
            return ret;
    }
    t1 = ge_now();
    c1 = cb_thread_cpu();
    cb_canny_ms[2] = (t1 - t0) * 1e3;
    cb_canny_ms[6] = (c1 - c0) * 1e3;
    if ((ret = cb_run_phase(j, wk, nthreads, CB_PH_FINAL)) < 0)
        return ret;
    cb_take_hist(wk, nthreads, planes->hist);
    cb_canny_ms[3] = (ge_now() - t1) * 1e3;
    cb_canny_ms[7] = (cb_thread_cpu() - c1) * 1e3;
    return 0;
end:
    free(j->tplane);
    j->tplane = NULL;
    return ret;
}

int cpu_process_limited(const ge_frame *f, const ge_params *p, int threads,
                        size_t mem_limit, ge_planes *planes,
                        volatile const int *stop)
{
    cb_job job;
    cb_worker *wk = NULL;
    int nthreads, i, ret = -1;

    if (!f || !p || !planes || !planes->edge || !f->data)
        return -1;
    if (f->width < 1 || f->height < 1 || f->channels < 1 || f->channels > 4 ||
        (f->bytes_per_sample != 1 && f->bytes_per_sample != 2) ||
        f->width > INT_MAX - 2 * GE_MAX_RADIUS - 2)
        return -1;
    /* a row must hold its samples; a shift past the sample is meaningless */
    if (f->stride / f->bytes_per_sample / f->channels < (size_t)f->width ||
        f->shift < 0 || f->shift >= 8 * f->bytes_per_sample ||
        p->border < GE_BORDER_REPLICATE || p->border > GE_BORDER_ZERO)
        return -1;
    if (p->canny < GE_CANNY_OFF || p->canny > GE_CANNY_AUTO ||
        (p->canny == GE_CANNY_ON && !(p->canny_low >= 0 && p->canny_low <= p->canny_high)))
        return -1;

    memset(&job, 0, sizeof job);
    if (ge_taps_make(p->sigma, &job.taps) < 0)
        return -1;
    job.f = f;
    job.p = p;
    job.k = cb_pick_kernels();
    job.w = f->width;
    job.h = f->height;
    job.r = job.taps.radius;
    job.border = p->border;
    job.canny = p->canny != GE_CANNY_OFF;
    job.stack_cap = CB_STACK_MAX;
    job.mem_limit = mem_limit;
    {
        /* test hook: tiny stacks, so tests reach the pending passes */
        const char *st = getenv("GPUEDGE_CANNY_STACK");
        long v = st && *st ? strtol(st, NULL, 10) : 0;
        if (v > 0 && (size_t)v < job.stack_cap)
            job.stack_cap = (size_t)v;
    }
    job.band_rows = CPU_BAND_HALO_FACTOR * (job.r + 1);
    if (job.band_rows < CPU_BAND_ROWS)
        job.band_rows = CPU_BAND_ROWS;
    job.nbands = (job.h + job.band_rows - 1) / job.band_rows;
    job.grey_out = planes->grey;
    job.blur_h_out = planes->blur_h;
    job.blur_out = planes->blur;
    job.edge = planes->edge;
    job.stop = stop;
    atomic_init(&job.next_band, 0);
    atomic_init(&job.pending, 0);

    nthreads = threads;
    if (nthreads <= 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        nthreads = n > 0 ? (int)(n < CPU_MAX_THREADS ? n : CPU_MAX_THREADS) : 1;
    }
    if (nthreads > CPU_MAX_THREADS)
        nthreads = CPU_MAX_THREADS;
    if (nthreads > job.nbands)
        nthreads = job.nbands;
    if (mem_limit > 0) {
        /* --mem-limit: every worker's scratch together within the budget.
         * Shorter bands first (down to 16 rows), then smaller hysteresis
         * stacks, then fewer threads, then bands down to one row; the
         * result does not depend on any of them. */
        size_t per;
        for (;;) {
            per = cb_worker_bytes(&job);
            if (per != SIZE_MAX && per <= mem_limit / (size_t)nthreads)
                break;
            if (job.band_rows > 16)
                job.band_rows = job.band_rows / 2 > 16 ? job.band_rows / 2 : 16;
            else if (job.canny && job.stack_cap > CB_STACK_MIN)
                job.stack_cap = job.stack_cap / 4 > CB_STACK_MIN ? job.stack_cap / 4
                                                                 : CB_STACK_MIN;
            else if (nthreads > 1)
                nthreads--;
            else if (job.band_rows > 1)
                job.band_rows /= 2;
            else
                return -3;
        }
        job.nbands = (job.h + job.band_rows - 1) / job.band_rows;
        if (nthreads > job.nbands)
            nthreads = job.nbands;
    }

    wk = calloc((size_t)nthreads, sizeof *wk);
    if (!wk)
        return -1;
    for (i = 0; i < nthreads; i++) {
        if (cb_worker_init(&wk[i], &job) < 0)
            goto end;
    }

    if (job.canny) {
        ret = cb_canny(&job, wk, nthreads, planes);
    } else if ((ret = cb_run_phase(&job, wk, nthreads, CB_PH_SOBEL)) == 0) {
        cb_take_hist(wk, nthreads, planes->hist);
    }
end:
    for (i = 0; i < nthreads; i++) {
        free(wk[i].mem);
        free(wk[i].stack);
    }
    free(wk);
    return ret;
}
