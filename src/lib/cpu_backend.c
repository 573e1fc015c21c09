/*
 * cpu_backend.c — SPEC §1 on the CPU, bit for bit the reference's result,
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
 * SPEC §1.5 gives it, for any radius and any size.
 *
 * Arithmetic: each output is computed with the same operations in the same
 * order as the reference (SPEC §1), one value per SIMD lane; vectorising
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
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define CPU_HAVE_X86 1
#else
#define CPU_HAVE_X86 0
#endif

#include "cpu_backend.h"
#include "border.h"

/* Rows per band at least; grown with the radius so that the recomputed
 * halo (2r+2 rows of grey + horizontal blur) stays a small fraction. */
#define CPU_BAND_ROWS 64
#define CPU_BAND_HALO_FACTOR 8
/* more threads than this is certainly a mistake */
#define CPU_MAX_THREADS 1024

// ---------------------------------------------------------------------------
// Borders (SPEC §1.5)

/* cb_map: i mapped into [0, n-1], or -1 where the value is 0 (zero
 * border) — the rule the kernels use too (kernels/border.h). */
#define cb_map map_border

// ---------------------------------------------------------------------------
// Row kernels: scalar bodies (always inlined, so each instantiation below
// gets its target's fmaf), then the AVX2 loops that fall back to them for
// the last few columns.

#define CB_INLINE static inline __attribute__((always_inline))

/* SPEC §1.1-1.2 for row y of f into g[0..w-1] */
CB_INLINE void grey_row_body(const ge_frame *f, int y, float *g)
{
    const unsigned char *row = (const unsigned char *)f->data +
                               (size_t)y * f->stride;
    const int w = f->width, nc = f->channels, sh = f->shift, off = f->offset;
    const float gain = f->gain;
    int x;

    if (f->bytes_per_sample == 1) {
        /* every possible value of a byte, computed as SPEC writes it */
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

/* SPEC §1.6 */
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

/* SPEC §1.4 for one row: a, b, c are the rows above, at and below, each
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

typedef struct cb_kernels {
    void (*grey_row)(const ge_frame *f, int y, float *g);
    void (*hblur)(const float *pad, int w, const float *wt, int ntaps,
                  float *out);
    void (*vblur)(const float *const *rows, int w, const float *wt,
                  int ntaps, float *out);
    void (*sobel)(const float *a, const float *b, const float *c, int w,
                  const ge_params *p, uint8_t *e);
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

static const cb_kernels cb_kernels_c = { grey_row_c, hblur_c, vblur_c,
                                         sobel_c };

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

static const cb_kernels cb_kernels_avx2 = { grey_row_avx2, hblur_avx2,
                                            vblur_avx2, sobel_avx2 };
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
} cb_job;

typedef struct cb_worker {
    cb_job *job;
    float *mem;   /* the block below */
    float *pad;   /* grey row with r mapped values each side: w + 2r */
    float *hrows; /* horizontal blur of rows hlo..hhi: nh_max * w */
    float *brows; /* blur of rows blo..bhi, 1 mapped value each side */
    float *zero;  /* w + 2 zeros: the rows outside, zero border */
    const float *rowp[GE_MAX_TAPS];
    uint64_t hist[4][GE_HIST_BINS]; /* 4 copies: no store-forward chains */
    int bands_done;
    pthread_t tid;
} cb_worker;

/* row y (mapped) of the band's blurred rows, readable at [-1, w] */
static const float *cb_brow(const cb_worker *wk, int y, int blo)
{
    const cb_job *j = wk->job;
    int m = cb_map(y, j->h, j->border);

    if (m < 0)
        return wk->zero + 1;
    return wk->brows + (size_t)(m - blo) * (j->w + 2) + 1;
}

static void cb_band(cb_worker *wk, int band)
{
    const cb_job *j = wk->job;
    const cb_kernels *k = j->k;
    const int w = j->w, h = j->h, r = j->r, bd = j->border;
    const int ntaps = 2 * r + 1;
    const int y0 = band * j->band_rows;
    const int y1 = y0 + j->band_rows < h ? y0 + j->band_rows : h;
    const size_t rowb = (size_t)w * sizeof(float);
    int blo, bhi, hlo, hhi, y, i;

    /* Sobel reads blurred rows y0-1..y1, the vertical blur of those reads
     * horizontal rows r further out; both through the border mapping.  Row
     * y0 itself is always among them, so neither range is empty. */
    map_range(y0 - 1, y1, h, bd, &blo, &bhi);
    map_range(blo - r, bhi + r, h, bd, &hlo, &hhi);

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

    for (y = y0; y < y1; y++) {
        uint8_t *e = j->edge + (size_t)y * w;
        int x;

        k->sobel(cb_brow(wk, y - 1, blo), cb_brow(wk, y, blo),
                 cb_brow(wk, y + 1, blo), w, j->p, e);
        for (x = 0; x + 4 <= w; x += 4) {
            wk->hist[0][e[x]]++;
            wk->hist[1][e[x + 1]]++;
            wk->hist[2][e[x + 2]]++;
            wk->hist[3][e[x + 3]]++;
        }
        for (; x < w; x++)
            wk->hist[0][e[x]]++;
    }
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
        cb_band(wk, b);
        wk->bands_done++;
    }
    return NULL;
}

/* Rows of horizontal blur (nh) and of blur (nb) a band of band_rows rows
 * holds: its rows plus the halos map_range gives, never more than the
 * image has. */
static size_t cb_rows_nh(int height, int r, int band_rows)
{
    size_t nh = (size_t)band_rows + 2 + 2 * (size_t)r;
    return nh > (size_t)height ? (size_t)height : nh;
}

static size_t cb_rows_nb(int height, int band_rows)
{
    size_t nb = (size_t)band_rows + 2;
    return nb > (size_t)height ? (size_t)height : nb;
}

/* Floats of scratch one worker needs: pad + hrows + brows + zero;
 * SIZE_MAX on overflow. */
static size_t cb_scratch_floats(int width, int height, int r, int band_rows)
{
    const size_t w = (size_t)width;
    const size_t nh = cb_rows_nh(height, r, band_rows), nb = cb_rows_nb(height, band_rows);

    if (nh > SIZE_MAX / sizeof(float) / 4 / w ||
        nb > SIZE_MAX / sizeof(float) / 4 / (w + 2))
        return SIZE_MAX;
    return (w + 2 * (size_t)r) + nh * w + nb * (w + 2) + (w + 2);
}

size_t cpu_scratch_bytes(int width, int height, double sigma, int band_rows)
{
    ge_taps t;
    size_t n;
    if (width < 1 || height < 1 || band_rows < 1 || ge_taps_make(sigma, &t) < 0)
        return SIZE_MAX;
    n = cb_scratch_floats(width, height, t.radius, band_rows);
    return n == SIZE_MAX ? SIZE_MAX : n * sizeof(float);
}

/* scratch for one worker; sizes from the band geometry */
static int cb_worker_init(cb_worker *wk, cb_job *j)
{
    const size_t w = (size_t)j->w;
    const size_t total = cb_scratch_floats(j->w, j->h, j->r, j->band_rows);

    memset(wk, 0, sizeof *wk);
    wk->job = j;
    if (total == SIZE_MAX)
        return -1;
    wk->mem = malloc(total * sizeof(float));
    if (!wk->mem)
        return -1;
    wk->pad = wk->mem;
    wk->hrows = wk->pad + w + 2 * (size_t)j->r;
    wk->brows = wk->hrows + cb_rows_nh(j->h, j->r, j->band_rows) * w;
    wk->zero = wk->brows + cb_rows_nb(j->h, j->band_rows) * (w + 2);
    memset(wk->zero, 0, (w + 2) * sizeof(float));
    return 0;
}

int cpu_process(const ge_frame *f, const ge_params *p, int threads,
                ge_planes *planes, volatile const int *stop)
{
    return cpu_process_limited(f, p, threads, 0, planes, stop);
}

int cpu_process_limited(const ge_frame *f, const ge_params *p, int threads,
                        size_t mem_limit, ge_planes *planes,
                        volatile const int *stop)
{
    cb_job job;
    cb_worker *wk = NULL;
    int nthreads, started = 0, done = 0, i, b, ret = -1;

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
         * Shorter bands first (down to 16 rows), then fewer threads, then
         * bands down to one row; the result does not depend on either. */
        size_t per;
        for (;;) {
            per = cb_scratch_floats(job.w, job.h, job.r, job.band_rows);
            if (per != SIZE_MAX && per * sizeof(float) <= mem_limit / (size_t)nthreads)
                break;
            if (job.band_rows > 16)
                job.band_rows = job.band_rows / 2 > 16 ? job.band_rows / 2 : 16;
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

    /* The calling thread is worker 0.  A thread that cannot be created
     * just leaves its bands to the others. */
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
    if (done < job.nbands) {
        ret = -2; /* only a stop leaves bands undone */
        goto end;
    }
    memset(planes->hist, 0, sizeof planes->hist);
    for (i = 0; i < nthreads; i++)
        for (b = 0; b < GE_HIST_BINS; b++)
            planes->hist[b] += wk[i].hist[0][b] + wk[i].hist[1][b] +
                               wk[i].hist[2][b] + wk[i].hist[3][b];
    ret = 0;
end:
    for (i = 0; i < nthreads; i++)
        free(wk[i].mem);
    free(wk);
    return ret;
}
