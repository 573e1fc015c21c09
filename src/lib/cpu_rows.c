/*
 * cpu_rows.c — the CPU backend's row kernels: grey, the two blur passes,
 * Sobel and quantisation, Canny's gradient, NMS and final pass, each as a
 * scalar body instantiated twice, portable and AVX2+FMA (chosen at run
 * time).  Each output is computed with the same operations in the same
 * order as the reference (DESIGN.md §1), one value per SIMD lane, so the
 * two give the same bits (test_cpu_backend and test_canny compare them
 * through cpu_hook_no_simd).
 */
#include <math.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define CPU_HAVE_X86 1
#else
#define CPU_HAVE_X86 0
#endif

#include "cpu_internal.h"

int cpu_hook_no_simd;

// ---------------------------------------------------------------------------
// Row kernels: scalar bodies (always inlined, so each instantiation below
// gets its target's fmaf), then the AVX2 loops that fall back to them for
// the last few columns.

#define CB_INLINE static inline __attribute__((always_inline))

/* DESIGN.md §1.1-1.2 for row y of f into g[x0..w-1] */
CB_INLINE void grey_row_body(const ge_frame *f, int y, int x0, float *g)
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
            for (x = x0; x < w; x++) {
                const unsigned char *s = row + (size_t)x * nc;
                g[x] = fmaf(0.114f, lut[s[2]],
                            fmaf(0.587f, lut[s[1]], 0.299f * lut[s[0]]));
            }
        } else {
            for (x = x0; x < w; x++)
                g[x] = lut[row[(size_t)x * nc]];
        }
    } else {
        for (x = x0; x < w; x++) {
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

/* DESIGN.md §1.4's gx and gy at x: a, b, c are the rows above, at and below
 * (in this order of operations; sobel8 is the same for 8 pixels). */
CB_INLINE void sobel1(const float *a, const float *b, const float *c, int x, float *gx,
                      float *gy)
{
    float L = (a[x - 1] + 2.0f * b[x - 1]) + c[x - 1];
    float R = (a[x + 1] + 2.0f * b[x + 1]) + c[x + 1];
    float T = (a[x - 1] + 2.0f * a[x]) + a[x + 1];
    float D = (c[x - 1] + 2.0f * c[x]) + c[x + 1];
    *gx = R - L;
    *gy = D - T;
}

/* DESIGN.md §1.4 for one row: a, b, c are the rows above, at and below, each
 * readable at [-1, w] (border values already in place). */
CB_INLINE void sobel_body(const float *a, const float *b, const float *c,
                          int x0, int w, const ge_params *p, uint8_t *e)
{
    int x;

    for (x = x0; x < w; x++) {
        float gx, gy;
        sobel1(a, b, c, x, &gx, &gy);
        e[x] = quantise(sqrtf(fmaf(gx, gx, gy * gy)), p);
    }
}

/* DESIGN.md §1.8's sector codes: which two neighbours NMS compares a pixel
 * with (dy, dx): left/right, above/below, (-1,+1)/(+1,-1) when gx and gy
 * have different signs, else (-1,-1)/(+1,+1). */
enum { CB_DIR_H = 0, CB_DIR_V = 1, CB_DIR_D1 = 2, CB_DIR_D2 = 3 };
/* tan 22.5 and tan 67.5 degrees: ratios computed in double, rounded once */
#define CB_T1 ((float)(M_SQRT2 - 1.0))
#define CB_T2 ((float)(M_SQRT2 + 1.0))
/* Canny's first half for one row: t = m * scale (DESIGN.md §1.8, m as DESIGN.md §1.4
 * computes it) and the sector code. */
CB_INLINE void grad_body(const float *a, const float *b, const float *c,
                         int x0, int w, float scale, float *t, uint8_t *dir)
{
    int x;

    for (x = x0; x < w; x++) {
        float gx, gy, ax, ay;
        sobel1(a, b, c, x, &gx, &gy);
        ax = fabsf(gx);
        ay = fabsf(gy);

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


// --- portable instantiation

static void grey_row_c(const ge_frame *f, int y, float *g)
{
    grey_row_body(f, y, 0, g);
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

/* Eight samples (int32 lanes) as grey_row_body's lut makes them:
 * ((v >> shift) - offset) * gain, exact to the int, one rounding. */
CB_AVX2 static inline __m256 grey_in8(__m256i v, __m128i sh, __m256i off,
                                      __m256 gain)
{
    v = _mm256_sub_epi32(_mm256_srl_epi32(v, sh), off);
    return _mm256_mul_ps(_mm256_cvtepi32_ps(v), gain);
}

/* 0.299 R, then + 0.587 G, then + 0.114 B: grey_row_body's two fmaf */
CB_AVX2 static inline __m256 luma8(__m256 r, __m256 gr, __m256 b)
{
    __m256 t = _mm256_mul_ps(_mm256_set1_ps(0.299f), r);
    t = _mm256_fmadd_ps(_mm256_set1_ps(0.587f), gr, t);
    return _mm256_fmadd_ps(_mm256_set1_ps(0.114f), b, t);
}

/* 8-bit rows eight pixels a step; 16-bit samples and the last few columns
 * through the scalar body.  Loads stay inside the row's w * nc bytes. */
CB_AVX2 static void grey_row_avx2(const ge_frame *f, int y, float *g)
{
    const unsigned char *row = (const unsigned char *)f->data +
                               (size_t)y * f->stride;
    const int w = f->width, nc = f->channels;
    const __m128i sh = _mm_cvtsi32_si128(f->shift);
    const __m256i off = _mm256_set1_epi32(f->offset);
    const __m256 gain = _mm256_set1_ps(f->gain);
    const __m256i byte = _mm256_set1_epi32(0xff);
    int x = 0;

    if (f->bytes_per_sample != 1) {
        /* (16-bit photos are rare: the scalar body) */
    } else if (nc == 3) {
        /* pixels 0-3 from bytes 0-11 of the low lane, 4-7 from bytes 12-23
         * loaded into the high lane; 28 bytes read, so 10 pixels left */
#define GE_RGB_PICK(c)                                                        \
    _mm256_setr_epi8(c, -1, -1, -1, c + 3, -1, -1, -1, c + 6, -1, -1, -1,     \
                     c + 9, -1, -1, -1, c, -1, -1, -1, c + 3, -1, -1, -1,     \
                     c + 6, -1, -1, -1, c + 9, -1, -1, -1)
        const __m256i pr = GE_RGB_PICK(0), pg = GE_RGB_PICK(1), pb = GE_RGB_PICK(2);
#undef GE_RGB_PICK
        for (; x + 10 <= w; x += 8) {
            const unsigned char *s = row + (size_t)x * 3;
            __m256i v = _mm256_inserti128_si256(
                _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)s)),
                _mm_loadu_si128((const __m128i *)(const void *)(s + 12)), 1);
            _mm256_storeu_ps(g + x, luma8(grey_in8(_mm256_shuffle_epi8(v, pr), sh, off, gain),
                                          grey_in8(_mm256_shuffle_epi8(v, pg), sh, off, gain),
                                          grey_in8(_mm256_shuffle_epi8(v, pb), sh, off, gain)));
        }
    } else if (nc == 4) {
        for (; x + 8 <= w; x += 8) {
            __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(row + (size_t)x * 4));
            _mm256_storeu_ps(
                g + x,
                luma8(grey_in8(_mm256_and_si256(v, byte), sh, off, gain),
                      grey_in8(_mm256_and_si256(_mm256_srli_epi32(v, 8), byte), sh, off, gain),
                      grey_in8(_mm256_and_si256(_mm256_srli_epi32(v, 16), byte), sh, off, gain)));
        }
    } else {
        for (; x + 8 <= w; x += 8) {
            __m256i v;
            if (nc == 1)
                v = _mm256_cvtepu8_epi32(
                    _mm_loadl_epi64((const __m128i *)(const void *)(row + x)));
            else /* grey and alpha: the grey bytes */
                v = _mm256_cvtepu16_epi32(_mm_and_si128(
                    _mm_loadu_si128((const __m128i *)(const void *)(row + (size_t)x * 2)),
                    _mm_set1_epi16(0xff)));
            _mm256_storeu_ps(g + x, grey_in8(v, sh, off, gain));
        }
    }
    if (x < w)
        grey_row_body(f, y, x, g);
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

/* 8 int32 lanes (each 0..255) -> 8 bytes at out */
CB_AVX2 static inline void store8_epi32(__m256i v, uint8_t *out)
{
    __m128i v16 = _mm_packus_epi32(_mm256_castsi256_si128(v),
                                   _mm256_extracti128_si256(v, 1));
    _mm_storel_epi64((__m128i *)(void *)out, _mm_packus_epi16(v16, v16));
}

/* Sobel's 3x3 at 8 pixels: a, b, c point at x in the rows above, at and
 * below (x - 1 and x + 8 readable); gx, gy and the magnitude, in sobel1's
 * order of operations. */
CB_AVX2 static inline __m256 sobel8(const float *a, const float *b, const float *c,
                                    __m256 *gx, __m256 *gy)
{
    const __m256 two = _mm256_set1_ps(2.0f);
    __m256 nw = _mm256_loadu_ps(a - 1), n = _mm256_loadu_ps(a);
    __m256 ne = _mm256_loadu_ps(a + 1);
    __m256 wv = _mm256_loadu_ps(b - 1), ev = _mm256_loadu_ps(b + 1);
    __m256 sw = _mm256_loadu_ps(c - 1), s = _mm256_loadu_ps(c);
    __m256 se = _mm256_loadu_ps(c + 1);
    __m256 L = _mm256_add_ps(_mm256_add_ps(nw, _mm256_mul_ps(two, wv)), sw);
    __m256 R = _mm256_add_ps(_mm256_add_ps(ne, _mm256_mul_ps(two, ev)), se);
    __m256 T = _mm256_add_ps(_mm256_add_ps(nw, _mm256_mul_ps(two, n)), ne);
    __m256 D = _mm256_add_ps(_mm256_add_ps(sw, _mm256_mul_ps(two, s)), se);
    *gx = _mm256_sub_ps(R, L);
    *gy = _mm256_sub_ps(D, T);
    return _mm256_sqrt_ps(_mm256_fmadd_ps(*gx, *gx, _mm256_mul_ps(*gy, *gy)));
}

CB_AVX2 static void sobel_avx2(const float *a, const float *b, const float *c,
                               int w, const ge_params *p, uint8_t *e)
{
    const __m256 half = _mm256_set1_ps(0.5f);
    const __m256 f255 = _mm256_set1_ps(255.0f);
    const __m256 scale = _mm256_set1_ps(p->scale);
    const __m256 thr = _mm256_set1_ps(p->threshold);
    const __m256i i255 = _mm256_set1_epi32(255);
    int x = 0;

    for (; x + 8 <= w; x += 8) {
        __m256 gx, gy, m = sobel8(a + x, b + x, c + x, &gx, &gy);
        __m256i v;

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
        store8_epi32(v, e + x);
    }
    sobel_body(a, b, c, x, w, p, e);
}

CB_AVX2 static void grad_avx2(const float *a, const float *b, const float *c,
                              int w, float scale, float *t, uint8_t *dir)
{
    const __m256 sc = _mm256_set1_ps(scale);
    const __m256 t1 = _mm256_set1_ps(CB_T1), t2 = _mm256_set1_ps(CB_T2);
    const __m256 zero = _mm256_setzero_ps();
    const __m256 absmask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    int x = 0;

    for (; x + 8 <= w; x += 8) {
        __m256 gx, gy, m = sobel8(a + x, b + x, c + x, &gx, &gy);
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

const cb_kernels *cb_pick_kernels(void)
{
    if (cpu_hook_no_simd)
        return &cb_kernels_c;
#if CPU_HAVE_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return &cb_kernels_avx2;
#endif
    return &cb_kernels_c;
}

