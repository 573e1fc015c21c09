/*
 * test_kernels.c — the CUDA stages against the CPU reference, bit for bit
 * (DESIGN.md §1, §2).
 *
 * Every stage is recomputed on the CPU from the GPU's own previous plane
 * (ref_grey from the frame, ref_blur_h from the GPU grey plane, ...), so a
 * failure names the stage that broke.  Device outputs are poisoned before
 * each launch (floats 0xFF bytes = NaN, bytes 0x5A), pitches differ between
 * planes, and the pitch padding must still hold the poison afterwards (no
 * write outside the window).  One line a (stage, case):
 *     ok STAGE CASE
 *     not ok STAGE CASE: N of M pixels differ, max |d| D, first at (x,y) ...
 * Also: windowed blur_v / sobel over 3 strips (each from an exactly-sized
 * copy of its input rows) == the whole frame; windows missing a halo row
 * are refused; every radius 1..32; scale/threshold/invert variants;
 * histogram sums, one-bin frames, unaligned rows, accumulation past 2^32;
 * zero-sized launches write nothing.
 *
 * Usage: test_kernels [--quick] [--seed N]
 *   --quick (or GPUEDGE_QUICK=1) skips the 4K frames (for compute-sanitizer)
 *   --only-4k runs just one 4K RGB case (a 4K compute-sanitizer memcheck)
 *   --seed N (or GPUEDGE_SEED=N) repeats a run; the seed is printed first.
 * Without a CUDA device it prints "skip gpu-kernels: no CUDA device" and
 * exits 0.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include "../unit/check.h"
#include "gpu_test.h"
#include "cuda_check.h"
#include "edge.h"
#include "kernels.h"
#include "reference.h"

#define POISON_F 0xFF /* float bytes: NaN */
#define POISON_B 0x5A /* edge bytes */


// ---------------------------------------------------------------------------
// Comparisons.  Each prints one ok / not ok line.

static int cmp_f32(const char *stage, const char *cname, const float *gpu,
                   const float *ref, int w, int h)
{
    size_t bad = 0;
    double maxd = 0;
    long fx = -1, fy = -1;
    float fg = 0, fr = 0;
    char name[256];

    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            const size_t i = (size_t)y * w + x;
            uint32_t a, b;
            memcpy(&a, gpu + i, 4);
            memcpy(&b, ref + i, 4);
            if (a == b)
                continue;
            double d = fabs((double)gpu[i] - (double)ref[i]);
            if (d != d)
                d = INFINITY;
            if (d > maxd)
                maxd = d;
            if (!bad++) {
                fx = x;
                fy = y;
                fg = gpu[i];
                fr = ref[i];
            }
        }
    snprintf(name, sizeof name, "%s %s", stage, cname);
    CHECK(bad == 0, name,
          "%zu of %zu pixels differ, max |d| %g, first at (%ld,%ld): "
          "gpu %.9g ref %.9g",
          bad, (size_t)w * h, maxd, fx, fy, fg, fr);
    return bad == 0;
}

static int cmp_hist(const char *stage, const char *cname,
                    const unsigned long long *gpu, const uint64_t *ref)
{
    int bad = 0, first = -1;
    unsigned long long maxd = 0;
    char name[256];

    for (int b = 0; b < GE_HIST_BINS; b++)
        if (gpu[b] != ref[b]) {
            const unsigned long long d =
                gpu[b] > ref[b] ? gpu[b] - ref[b] : ref[b] - gpu[b];
            if (d > maxd)
                maxd = d;
            if (!bad++)
                first = b;
        }
    snprintf(name, sizeof name, "%s %s", stage, cname);
    CHECK(bad == 0, name,
          "%d of 256 bins differ, max |d| %llu, first bin %d: gpu %llu ref %llu",
          bad, maxd, first, first >= 0 ? gpu[first] : 0,
          first >= 0 ? (unsigned long long)ref[first] : 0);
    return bad == 0;
}

/* Downloads a pitched plane (elem bytes an element) into a tight one and
 * checks that the padding columns still hold the poison byte. */
static size_t download(void *tight, const void *d, int pitch, int w, int h,
                       size_t elem, int poison)
{
    const size_t pb = (size_t)pitch * elem, wb = (size_t)w * elem;
    size_t dirty = 0;
    if (w == 0 || h == 0)
        return 0;
    MUST(cudaMemcpy2D(tight, wb, d, pb, wb, h, cudaMemcpyDeviceToHost));
    if (pb > wb) {
        unsigned char *raw = xmalloc(pb * h);
        MUST(cudaMemcpy(raw, d, pb * h, cudaMemcpyDeviceToHost));
        for (int y = 0; y < h; y++)
            for (size_t i = wb; i < pb; i++)
                dirty += raw[(size_t)y * pb + i] != (unsigned char)poison;
        free(raw);
    }
    return dirty;
}

static void check_padding(const char *stage, const char *cname, size_t dirty)
{
    char name[256];
    snprintf(name, sizeof name, "%s-padding %s", stage, cname);
    CHECK(dirty == 0, name, "%zu bytes written outside the window", dirty);
}

/* Runs a launcher's result to completion; a failure is a not-ok line. */
static int finish(cudaError_t launch, cudaStream_t st, const char *stage,
                  const char *cname)
{
    char name[256];
    cudaError_t e = launch;
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(st);
    if (e != cudaSuccess) {
        snprintf(name, sizeof name, "%s %s", stage, cname);
        CHECK(0, name, "CUDA error: %s", cudaGetErrorString(e));
        if (cudaGetLastError() != cudaSuccess ||
            cudaDeviceSynchronize() != cudaSuccess) {
            printf("not ok gpu-kernels: sticky CUDA error, stopping\n");
            exit(1);
        }
        return 0;
    }
    return 1;
}

// ---------------------------------------------------------------------------
// Border mapping for the test's window arithmetic (DESIGN.md §1.5, written again).
static int tmap(int i, int n, int border)
{
    if (i >= 0 && i < n)
        return i;
    if (border == GE_BORDER_ZERO)
        return -1;
    if (border == GE_BORDER_REPLICATE)
        return i < 0 ? 0 : n - 1;
    if (n == 1)
        return 0;
    i = abs(i) % (2 * n - 2);
    return i >= n ? 2 * n - 2 - i : i;
}

/* Rows [*lo, *hi] of an H-row image the outputs [y0, y0+rows) read with
 * radius r; returns 0 when they read none. */
static int rows_read(int H, int y0, int rows, int r, int border, int *lo,
                     int *hi)
{
    *lo = H;
    *hi = -1;
    for (int y = y0; y < y0 + rows; y++)
        for (int k = -r; k <= r; k++) {
            const int m = tmap(y + k, H, border);
            if (m < 0)
                continue;
            if (m < *lo)
                *lo = m;
            if (m > *hi)
                *hi = m;
        }
    return *hi >= 0;
}

// ---------------------------------------------------------------------------
// Test frames.

enum { PAT_NOISE, PAT_SHAPES, PAT_CONST };
static const char *const pat_name[3] = {"noise", "shapes", "const"};
enum { SRC_IMAGE, SRC_LIMITED8, SRC_P010 };

typedef struct tcase {
    int w, h, channels, bps;
    int border;
    double sigma;
    int pattern;
    int source;     /* SRC_*: image (gain 1 / S16) or video luma ranges */
    int stride_pad; /* bytes after each row of the frame */
    int misalign;   /* bytes the device frame is offset from cudaMalloc's */
    int pitch_pad[4]; /* grey, blur_h, blur, edge pitch = w + pad */
} tcase;

static void case_name(const tcase *c, char *buf, size_t n)
{
    snprintf(buf, n, "%dx%d c%d/%dbit%s %s sigma=%g %s stride+%d%s",
             c->w, c->h, c->channels, 8 * c->bps,
             c->source == SRC_LIMITED8 ? "/limited"
             : c->source == SRC_P010   ? "/p010"
                                       : "",
             border_name[c->border], c->sigma, pat_name[c->pattern],
             c->stride_pad, c->misalign ? " misaligned" : "");
}

/* one sample value for (x, y, ch) */
static unsigned sample(const tcase *c, int x, int y, int ch)
{
    unsigned v8;
    switch (c->pattern) {
    case PAT_CONST: /* exactly constant in every depth */
        v8 = 100 + 20 * ch;
        if (c->source == SRC_P010)
            return (v8 * 4) << 6;
        return c->bps == 2 ? v8 * 257 : v8;
    case PAT_SHAPES: {
        /* blocks of 4 levels with steps, a gradient and small noise */
        const int bx = (x * 7) / (c->w / 5 + 1), by = (y * 5) / (c->h / 4 + 1);
        int v = ((bx ^ by) & 3) * 60 + 10 * ch + (x + y) % 16 +
                (int)rnd_below(5);
        v8 = (unsigned)(v > 255 ? 255 : v);
        break;
    }
    default:
        if (c->source == SRC_P010)
            return (unsigned)rnd_below(1024) << 6;
        return c->bps == 2 ? (unsigned)rnd_below(65536) : rnd_below(256);
    }
    if (c->source == SRC_P010)
        return (v8 * 4 + (unsigned)rnd_below(4)) << 6;
    return c->bps == 2 ? v8 * 257 + rnd_below(257) : v8;
}

static void make_frame(const tcase *c, ge_frame *f, unsigned char **buf)
{
    const size_t row = (size_t)c->w * c->channels * c->bps;
    f->width = c->w;
    f->height = c->h;
    f->channels = c->channels;
    f->bytes_per_sample = c->bps;
    f->stride = row + c->stride_pad;
    f->shift = 0;
    f->offset = 0;
    f->gain = c->bps == 2 ? GE_S16 : 1.0f;
    if (c->source == SRC_LIMITED8) {
        f->offset = 16;
        f->gain = (float)(255.0 / 219.0);
    } else if (c->source == SRC_P010) {
        f->shift = 6;
        f->offset = 64;
        f->gain = (float)(255.0 / (219.0 * 4));
    }
    *buf = xmalloc(f->stride * c->h);
    for (size_t i = 0; i < f->stride * c->h; i++)
        (*buf)[i] = (unsigned char)rnd(); /* padding: garbage */
    for (int y = 0; y < c->h; y++)
        for (int x = 0; x < c->w; x++)
            for (int ch = 0; ch < c->channels; ch++) {
                const unsigned v = sample(c, x, y, ch);
                unsigned char *p = *buf + (size_t)y * f->stride +
                                   ((size_t)x * c->channels + ch) * c->bps;
                if (c->bps == 2) {
                    const uint16_t s = (uint16_t)v;
                    memcpy(p, &s, 2);
                } else {
                    *p = (unsigned char)v;
                }
            }
    f->data = *buf;
}

// ---------------------------------------------------------------------------
// One case: every stage, the variants and the strips.

static const ge_params sobel_variants[] = {
    /* sigma border scale thr? thr invert (Canny is test_canny_gpu's) */
#define SV(sc, ut, th, inv) \
    { .sigma = 0, .border = 0, .scale = sc, .use_threshold = ut, .threshold = th, .invert = inv }
    SV(0.25f, 0, 0, 0), SV(4.0f, 0, 0, 1), SV(1e6f, 0, 0, 0), SV(1.0f, 1, 40, 0),
    SV(2.0f, 1, 40, 1), SV(1.0f, 1, 0, 0), SV(0.1f, 1, 255, 0),
#undef SV
};

static void run_case(const tcase *c, cudaStream_t st)
{
    char cn[200];
    const int W = c->w, H = c->h, bd = c->border;
    const size_t n = (size_t)W * H;
    const int pg = W + c->pitch_pad[0], pbh = W + c->pitch_pad[1],
              pb = W + c->pitch_pad[2], pe = W + c->pitch_pad[3];
    ge_frame hf, df;
    unsigned char *h_frame, *d_frame_base;
    ge_taps taps;

    case_name(c, cn, sizeof cn);
    make_frame(c, &hf, &h_frame);
    if (ge_taps_make(c->sigma, &taps) != 0) {
        CHECK(0, "taps", "ge_taps_make(%g) failed", c->sigma);
        free(h_frame);
        return;
    }
    const int r = taps.radius;

    float *g_gpu = xmalloc(n * 4), *bh_gpu = xmalloc(n * 4),
          *b_gpu = xmalloc(n * 4), *fref = xmalloc(n * 4),
          *ftmp = xmalloc(n * 4);
    uint8_t *e_gpu = xmalloc(n), *eref = xmalloc(n), *etmp = xmalloc(n);
    uint64_t href[GE_HIST_BINS];
    unsigned long long hgpu[GE_HIST_BINS];

    /* the frame: exactly stride * H bytes after the misalignment, so a
     * read past its end is a sanitizer error */
    d_frame_base = dmalloc(hf.stride * H + c->misalign);
    df = hf;
    df.data = d_frame_base + c->misalign;
    MUST(cudaMemcpy((void *)df.data, h_frame, hf.stride * H,
                    cudaMemcpyHostToDevice));
    float *d_grey = dmalloc((size_t)pg * H * 4),
          *d_bh = dmalloc((size_t)pbh * H * 4),
          *d_blur = dmalloc((size_t)pb * H * 4),
          *d_blur2 = dmalloc((size_t)pb * H * 4);
    uint8_t *d_edge = dmalloc((size_t)pe * H),
            *d_edge2 = dmalloc((size_t)pe * H);
    unsigned long long *d_hist = dmalloc(GE_HIST_BINS * 8);

    /* grey */
    MUST(cudaMemset(d_grey, POISON_F, (size_t)pg * H * 4));
    if (finish(grey_gpu(&df, d_grey, pg, st), st, "grey", cn)) {
        check_padding("grey", cn,
                      download(g_gpu, d_grey, pg, W, H, 4, POISON_F));
        ref_grey(&hf, fref);
        cmp_f32("grey", cn, g_gpu, fref, W, H);
    } else {
        goto end;
    }

    /* blur, horizontal then vertical */
    if (!finish(gaussian_set_taps_gpu(&taps, st), st, "taps", cn))
        goto end;
    MUST(cudaMemset(d_bh, POISON_F, (size_t)pbh * H * 4));
    if (!finish(blur_h_gpu(d_grey, pg, d_bh, pbh, W, H, bd, st), st,
                "blur_h", cn))
        goto end;
    check_padding("blur_h", cn,
                  download(bh_gpu, d_bh, pbh, W, H, 4, POISON_F));
    ref_blur_h(g_gpu, W, H, &taps, bd, fref);
    cmp_f32("blur_h", cn, bh_gpu, fref, W, H);

    MUST(cudaMemset(d_blur, POISON_F, (size_t)pb * H * 4));
    if (!finish(blur_v_gpu(d_bh, pbh, W, H, 0, H, d_blur, pb, 0, H, bd, st),
                st, "blur_v", cn))
        goto end;
    check_padding("blur_v", cn, download(b_gpu, d_blur, pb, W, H, 4, POISON_F));
    ref_blur_v(bh_gpu, W, H, &taps, bd, fref);
    cmp_f32("blur_v", cn, b_gpu, fref, W, H);

    /* sobel with the default parameters */
    ge_params p = {.sigma = c->sigma, .border = bd, .scale = 1.0f};
    MUST(cudaMemset(d_edge, POISON_B, (size_t)pe * H));
    if (!finish(sobel_gpu(d_blur, pb, W, H, 0, H, d_edge, pe, 0, H, &p, st),
                st, "sobel", cn))
        goto end;
    check_padding("sobel", cn, download(e_gpu, d_edge, pe, W, H, 1, POISON_B));
    ref_sobel(b_gpu, W, H, &p, eref);
    cmp_u8("sobel", cn, e_gpu, eref, W, H);
    if (c->pattern == PAT_CONST && bd != GE_BORDER_ZERO) {
        /* known answer, independent of the reference */
        size_t nz = 0;
        for (size_t i = 0; i < n; i++)
            nz += e_gpu[i] != 0;
        char name[256];
        snprintf(name, sizeof name, "sobel-constant-is-zero %s", cn);
        CHECK(nz == 0, name, "%zu nonzero edge pixels", nz);
    }

    /* histogram of the GPU edge map */
    MUST(cudaMemset(d_hist, 0, GE_HIST_BINS * 8));
    if (!finish(histogram_gpu(d_edge, pe, W, H, d_hist, st), st, "histogram",
                cn))
        goto end;
    MUST(cudaMemcpy(hgpu, d_hist, sizeof hgpu, cudaMemcpyDeviceToHost));
    ref_histogram(e_gpu, n, href);
    cmp_hist("histogram", cn, hgpu, href);
    {
        unsigned long long sum = 0;
        char name[256];
        for (int b = 0; b < GE_HIST_BINS; b++)
            sum += hgpu[b];
        snprintf(name, sizeof name, "histogram-sum %s", cn);
        CHECK(sum == n, name, "bins sum to %llu, want %zu", sum, n);
    }

    /* sobel variants: scale, threshold, invert */
    for (size_t v = 0; v < sizeof sobel_variants / sizeof *sobel_variants;
         v++) {
        ge_params q = sobel_variants[v];
        char vn[300];
        q.sigma = c->sigma;
        q.border = bd;
        snprintf(vn, sizeof vn, "%s scale=%g%s%s", cn, q.scale,
                 q.use_threshold ? (q.threshold == 0   ? " threshold=0"
                                    : q.threshold == 40 ? " threshold=40"
                                                        : " threshold=255")
                                 : "",
                 q.invert ? " invert" : "");
        MUST(cudaMemset(d_edge2, POISON_B, (size_t)pe * H));
        if (!finish(sobel_gpu(d_blur, pb, W, H, 0, H, d_edge2, pe, 0, H, &q,
                              st),
                    st, "sobel-variant", vn))
            goto end;
        download(etmp, d_edge2, pe, W, H, 1, POISON_B);
        ref_sobel(b_gpu, W, H, &q, eref);
        cmp_u8("sobel-variant", vn, etmp, eref, W, H);
    }

    /* strips: rows in 3 windows, each from an exact copy of the input rows
     * it needs (so a read outside the window would hit other memory or a
     * sanitizer error), must rebuild the whole-frame planes bit for bit */
    {
        int cut[4] = {0, H / 3, 2 * H / 3, H};
        if (H > 6) {
            cut[1] += (int)rnd_below(3);
            cut[2] -= (int)rnd_below(3);
        }
        MUST(cudaMemset(d_blur2, POISON_F, (size_t)pb * H * 4));
        MUST(cudaMemset(d_edge2, POISON_B, (size_t)pe * H));
        int refused = 1, tried = 0, nr_fail = 0;
        for (int s = 0; s < 3; s++) {
            const int ys = cut[s], rows = cut[s + 1] - cut[s];
            int lo, hi;
            char sn[260];
            snprintf(sn, sizeof sn, "%s strip %d", cn, s);
            /* blur_v */
            if (rows > 0 && rows_read(H, ys, rows, r, bd, &lo, &hi)) {
                const int nr = hi - lo + 1, pw = W + 1;
                float *d_win = dmalloc((size_t)pw * nr * 4);
                MUST(cudaMemcpy2D(d_win, (size_t)pw * 4,
                                  d_bh + (size_t)lo * pbh, (size_t)pbh * 4,
                                  (size_t)W * 4, nr,
                                  cudaMemcpyDeviceToDevice));
                if (!finish(blur_v_gpu(d_win, pw, W, H, lo, nr,
                                       d_blur2 + (size_t)ys * pb, pb, ys,
                                       rows, bd, st),
                            st, "blur_v-strip", sn))
                    nr_fail++;
                /* a window one row short must be refused, not read */
                else if (r > 0 && nr > 1) {
                    tried = 1;
                    refused &= blur_v_gpu(d_win + pw, pw, W, H, lo + 1,
                                          nr - 1, d_blur2 + (size_t)ys * pb,
                                          pb, ys, rows, bd,
                                          st) == cudaErrorInvalidValue;
                    refused &= blur_v_gpu(d_win, pw, W, H, lo, nr - 1,
                                          d_blur2 + (size_t)ys * pb, pb, ys,
                                          rows, bd,
                                          st) == cudaErrorInvalidValue;
                }
                MUST(cudaStreamSynchronize(st));
                MUST(cudaFree(d_win));
            }
            /* sobel from the whole-frame blur */
            if (rows > 0 && rows_read(H, ys, rows, 1, bd, &lo, &hi)) {
                const int nr = hi - lo + 1, pw = W + 3;
                float *d_win = dmalloc((size_t)pw * nr * 4);
                MUST(cudaMemcpy2D(d_win, (size_t)pw * 4,
                                  d_blur + (size_t)lo * pb, (size_t)pb * 4,
                                  (size_t)W * 4, nr,
                                  cudaMemcpyDeviceToDevice));
                if (!finish(sobel_gpu(d_win, pw, W, H, lo, nr,
                                      d_edge2 + (size_t)ys * pe, pe, ys, rows,
                                      &p, st),
                            st, "sobel-strip", sn))
                    nr_fail++;
                MUST(cudaFree(d_win));
            } else {
                /* an empty strip launches nothing and succeeds */
                if (!finish(sobel_gpu(d_blur, pb, W, H, 0, H, d_edge2, pe, ys,
                                      0, &p, st),
                            st, "sobel-empty-strip", sn))
                    nr_fail++;
            }
        }
        (void)nr_fail; /* each failure already printed its not-ok line */
        download(ftmp, d_blur2, pb, W, H, 4, POISON_F);
        cmp_f32("blur_v-strips==whole", cn, ftmp, b_gpu, W, H);
        download(etmp, d_edge2, pe, W, H, 1, POISON_B);
        cmp_u8("sobel-strips==whole", cn, etmp, e_gpu, W, H);
        if (tried) {
            char name[256];
            snprintf(name, sizeof name, "blur_v-short-window-refused %s", cn);
            CHECK(refused, name, "a window missing a halo row was accepted");
        }
    }

end:
    MUST(cudaFree(d_frame_base));
    MUST(cudaFree(d_grey));
    MUST(cudaFree(d_bh));
    MUST(cudaFree(d_blur));
    MUST(cudaFree(d_blur2));
    MUST(cudaFree(d_edge));
    MUST(cudaFree(d_edge2));
    MUST(cudaFree(d_hist));
    free(h_frame);
    free(g_gpu);
    free(bh_gpu);
    free(b_gpu);
    free(fref);
    free(ftmp);
    free(e_gpu);
    free(eref);
    free(etmp);
}

// ---------------------------------------------------------------------------
// Histogram-only checks.

static void hist_case(const char *what, int W, int H, int pitch, int offset,
                      int fill, cudaStream_t st)
{
    char cn[200];
    const size_t n = (size_t)W * H;
    uint8_t *h = xmalloc((size_t)pitch * H + offset);
    uint8_t *tight = xmalloc(n);
    uint64_t href[GE_HIST_BINS];
    unsigned long long hgpu[GE_HIST_BINS];

    snprintf(cn, sizeof cn, "%s %dx%d pitch=%d offset=%d", what, W, H, pitch,
             offset);
    /* padding bytes are 0x77: counting one would show in bin 0x77 */
    memset(h, 0x77, (size_t)pitch * H + offset);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            uint8_t v;
            if (fill >= 0)
                v = (uint8_t)fill;
            else if (fill == -1)
                v = (uint8_t)rnd(); /* uniform */
            else /* edge-map-like: mostly 0..3, some higher */
                v = rnd_below(8) ? (uint8_t)rnd_below(4)
                                 : (uint8_t)rnd_below(256);
            h[offset + (size_t)y * pitch + x] = v;
            tight[(size_t)y * W + x] = v;
        }
    uint8_t *d = dmalloc((size_t)pitch * H + offset);
    unsigned long long *dh = dmalloc(GE_HIST_BINS * 8);
    MUST(cudaMemcpy(d, h, (size_t)pitch * H + offset, cudaMemcpyHostToDevice));
    MUST(cudaMemset(dh, 0, GE_HIST_BINS * 8));
    if (finish(histogram_gpu(d + offset, pitch, W, H, dh, st), st,
               "histogram", cn)) {
        MUST(cudaMemcpy(hgpu, dh, sizeof hgpu, cudaMemcpyDeviceToHost));
        ref_histogram(tight, n, href);
        cmp_hist("histogram", cn, hgpu, href);
    }
    MUST(cudaFree(d));
    MUST(cudaFree(dh));
    free(h);
    free(tight);
}

static void hist_checks(int quick, cudaStream_t st)
{
    const int bigW = quick ? 1023 : 3841, bigH = quick ? 769 : 2163;
    static const int fills[] = {0, 3, 4, 200, 255};

    /* one bin: every pixel the same value, packed and pitched */
    for (size_t i = 0; i < sizeof fills / sizeof *fills; i++) {
        char what[64];
        snprintf(what, sizeof what, "one-bin=%d", fills[i]);
        hist_case(what, bigW, bigH, bigW, 0, fills[i], st);
        hist_case(what, bigW, bigH, (bigW + 511) & ~511, 0, fills[i], st);
        hist_case(what, bigW, bigH, bigW + 1, 5, fills[i], st);
    }
    /* awkward widths, pitches and alignments */
    for (int i = 0; i < 60; i++) {
        const int W = 1 + (int)rnd_below(i < 30 ? 40 : 3000);
        const int H = 1 + (int)rnd_below(i < 30 ? 9 : 300);
        const int pitch = (i % 3 == 0) ? W : W + (int)rnd_below(70);
        hist_case(i % 2 ? "random" : "edge-like", W, H, pitch,
                  (int)rnd_below(16), i % 2 ? -1 : -2, st);
    }

    /* totals are 64-bit and accumulate: > 2^32 counts in bin 9 */
    {
        const int W = quick ? 1920 : 3840, H = quick ? 1080 : 2160;
        const size_t n = (size_t)W * H;
        const unsigned long long calls = (0x100000000ull + n) / n + 1;
        uint8_t *d = dmalloc(n);
        unsigned long long *dh = dmalloc(GE_HIST_BINS * 8),
                           hgpu[GE_HIST_BINS];
        MUST(cudaMemset(d, 9, n));
        MUST(cudaMemset(dh, 0, GE_HIST_BINS * 8));
        cudaError_t e = cudaSuccess;
        for (unsigned long long k = 0; k < calls && e == cudaSuccess; k++)
            e = histogram_gpu(d, W, W, H, dh, st);
        if (finish(e, st, "histogram-accumulate", "64-bit")) {
            int others = 0;
            MUST(cudaMemcpy(hgpu, dh, sizeof hgpu, cudaMemcpyDeviceToHost));
            for (int b = 0; b < GE_HIST_BINS; b++)
                others += b != 9 && hgpu[b] != 0;
            CHECK(hgpu[9] == calls * n && !others,
                  "histogram-accumulate 64-bit",
                  "bin 9 = %llu after %llu calls of %zu, want %llu; "
                  "%d other bins nonzero",
                  hgpu[9], calls, n, calls * n, others);
        }
        MUST(cudaFree(d));
        MUST(cudaFree(dh));
    }
}

/* Zero-sized launches return cudaSuccess and write nothing. */
static void zero_size_checks(cudaStream_t st)
{
    float *d_f = dmalloc(64 * 4);
    uint8_t *d_b = dmalloc(64);
    unsigned long long *d_h = dmalloc(GE_HIST_BINS * 8);
    unsigned char host[64 * 4];
    ge_frame f = {0, 4, 3, 1, 16, 0, 0, 1.0f, d_b};
    ge_params p = {.sigma = 1.0, .scale = 1.0f};
    ge_taps t;
    int bad = 0, dirty = 0;

    MUST(cudaMemset(d_f, POISON_F, 64 * 4));
    MUST(cudaMemset(d_b, POISON_B, 64));
    MUST(cudaMemset(d_h, POISON_B, GE_HIST_BINS * 8));
    ge_taps_make(1.0, &t);
    bad |= gaussian_set_taps_gpu(&t, st) != cudaSuccess;
    bad |= grey_gpu(&f, d_f, 4, st) != cudaSuccess;  /* width 0 */
    f.width = 4;
    f.height = 0;
    bad |= grey_gpu(&f, d_f, 4, st) != cudaSuccess;  /* height 0 */
    bad |= blur_h_gpu(d_f, 4, d_f + 16, 4, 0, 4, 0, st) != cudaSuccess;
    bad |= blur_h_gpu(d_f, 4, d_f + 16, 4, 4, 0, 0, st) != cudaSuccess;
    bad |= blur_v_gpu(d_f, 4, 0, 4, 0, 4, d_f + 16, 4, 0, 4, 0, st) !=
           cudaSuccess;
    bad |= blur_v_gpu(d_f, 4, 4, 4, 0, 4, d_f + 16, 4, 2, 0, 0, st) !=
           cudaSuccess;
    bad |= sobel_gpu(d_f, 4, 0, 4, 0, 4, d_b, 4, 0, 4, &p, st) != cudaSuccess;
    bad |= sobel_gpu(d_f, 4, 4, 4, 0, 4, d_b, 4, 1, 0, &p, st) != cudaSuccess;
    bad |= histogram_gpu(d_b, 4, 0, 4, d_h, st) != cudaSuccess;
    bad |= histogram_gpu(d_b, 4, 4, 0, d_h, st) != cudaSuccess;
    MUST(cudaStreamSynchronize(st));
    MUST(cudaMemcpy(host, d_f, 64 * 4, cudaMemcpyDeviceToHost));
    for (int i = 0; i < 64 * 4; i++)
        dirty += host[i] != POISON_F;
    MUST(cudaMemcpy(host, d_b, 64, cudaMemcpyDeviceToHost));
    for (int i = 0; i < 64; i++)
        dirty += host[i] != POISON_B;
    MUST(cudaMemcpy(host, d_h, 64 * 4, cudaMemcpyDeviceToHost));
    for (int i = 0; i < 64 * 4; i++)
        dirty += host[i] != POISON_B;
    CHECK(!bad && !dirty, "zero-size-launches",
          "%s; %d bytes written", bad ? "a launcher failed" : "all returned 0",
          dirty);

    /* bad arguments are refused without a launch and leave no error */
    int refused = 1;
    refused &= blur_h_gpu(d_f, 4, d_f + 16, 4, 4, 4, 7, st) ==
               cudaErrorInvalidValue;                        /* border 7 */
    refused &= blur_h_gpu(d_f, 3, d_f + 16, 4, 4, 4, 0, st) ==
               cudaErrorInvalidValue;                        /* pitch < w */
    refused &= sobel_gpu(d_f, 4, 4, 4, 0, 2, d_b, 4, 0, 4, &p, st) ==
               cudaErrorInvalidValue;                        /* short window */
    refused &= cudaGetLastError() == cudaSuccess;
    CHECK(refused, "bad-arguments-refused", "a bad call was not refused");
    MUST(cudaFree(d_f));
    MUST(cudaFree(d_b));
    MUST(cudaFree(d_h));
}

// ---------------------------------------------------------------------------
int main(int argc, char **argv)
{
    int quick = getenv("GPUEDGE_QUICK") && *getenv("GPUEDGE_QUICK") &&
                strcmp(getenv("GPUEDGE_QUICK"), "0") != 0;
    uint64_t seed = (uint64_t)time(NULL);
    const char *es = getenv("GPUEDGE_SEED");
    int ndev = 0, only4k = 0;

    if (es && *es)
        seed = strtoull(es, NULL, 0);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick"))
            quick = 1;
        else if (!strcmp(argv[i], "--only-4k"))
            only4k = 1;
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            seed = strtoull(argv[++i], NULL, 0);
        else {
            fprintf(stderr, "usage: %s [--quick | --only-4k] [--seed N]\n", argv[0]);
            return 2;
        }
    }

    cudaError_t e = cudaGetDeviceCount(&ndev);
    if (e != cudaSuccess || ndev == 0) {
        SKIP("gpu-kernels", "no CUDA device");
        return 0;
    }
    {
        struct cudaDeviceProp prop;
        int dev = 0;
        MUST(cudaGetDevice(&dev));
        MUST(cudaGetDeviceProperties(&prop, dev));
        printf("# device %d: %s (sm_%d%d)\n", dev, prop.name, prop.major,
               prop.minor);
    }
    printf("# seed %llu (rerun: GPUEDGE_SEED=%llu %s%s)\n",
           (unsigned long long)seed, (unsigned long long)seed, argv[0],
           quick ? " --quick" : "");
    rng_state = seed;
    const double t0 = now_s();

    /* A blocking stream: the plain cudaMemset/cudaMemcpy calls (legacy
     * default stream) that poison and upload are ordered before the
     * launches on st and after them.  (cudaMemset and a pageable
     * cudaMemcpy H2D may return before they finish; a non-blocking
     * stream would race them.) */
    cudaStream_t st;
    MUST(cudaStreamCreate(&st));

    if (!only4k)
        zero_size_checks(st);

    /* the grid of cases: small sizes get every (border, sigma), the 4K
     * frames a chosen few; channels/depth/source/pitches rotate */
    static const int sizes[][2] = {{1, 1},     {1, 17},   {17, 1},
                                   {6, 5},     {33, 17},  {1023, 769},
                                   {3840, 2160}, {3841, 2163}};
    static const double sigmas[] = {0, 0.5, 1, 2.5, 16};
    static const int chans[][3] = {
        /* channels, bps, source */
        {3, 1, SRC_IMAGE}, {1, 1, SRC_IMAGE},    {4, 1, SRC_IMAGE},
        {3, 2, SRC_IMAGE}, {1, 2, SRC_P010},     {4, 2, SRC_IMAGE},
        {1, 1, SRC_LIMITED8}, {2, 1, SRC_IMAGE}, {1, 2, SRC_IMAGE},
    };
    const int nchans = (int)(sizeof chans / sizeof *chans);
    int rot = 0;
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        const int W = sizes[s][0], H = sizes[s][1];
        const int big = W >= 3840;
        if ((big && quick) || (!big && only4k) || (only4k && W != 3840))
            continue;
        for (int b = 0; b < 3; b++)
            for (int k = 0; k < 5; k++) {
                /* 4K: replicate sigma 1, reflect101 sigma 16 (3840) or
                 * 2.5 (3841), zero sigma 0.5 (3840) or 0 (3841) */
                if (only4k && b != 0)
                    continue;
                if (big) {
                    const int want[2][3] = {{2, 4, 1}, {2, 3, 0}};
                    if (k != want[W & 1][b])
                        continue;
                }
                tcase c;
                memset(&c, 0, sizeof c);
                const int *ch = chans[rot % nchans];
                c.w = W;
                c.h = H;
                c.channels = ch[0];
                c.bps = ch[1];
                c.source = ch[2];
                c.border = b;
                c.sigma = sigmas[k];
                c.pattern = (rot % 7 == 3) ? PAT_CONST
                            : (rot % 2)    ? PAT_SHAPES
                                           : PAT_NOISE;
                if (big && b == 0)
                    c.pattern = PAT_SHAPES; /* the fast RGB path, aligned */
                /* stride: tight, word-padded, odd */
                c.stride_pad = rot % 3 == 0 ? 0 : rot % 3 == 1 ? 64 : 3;
                if (c.bps == 2 && c.stride_pad == 3)
                    c.stride_pad = 2;
                c.misalign = (rot % 5 == 4) ? (c.bps == 2 ? 2 : 1) : 0;
                if (big && b == 0) {
                    /* RGB8 with 4-byte aligned rows: the quad fast path
                     * (3841: plus its row-tail pixel) */
                    c.channels = 3;
                    c.bps = 1;
                    c.source = SRC_IMAGE;
                    c.stride_pad = (4 - (W * 3) % 4) % 4;
                    c.misalign = 0;
                }
                for (int i = 0; i < 4; i++)
                    c.pitch_pad[i] = (int)((rot + i) % 4 == 0 ? 0
                                          : (rot + i) % 4 == 1 ? 1
                                          : (rot + i) % 4 == 2 ? 3
                                                               : 61);
                rot++;
                run_case(&c, st);
            }
    }

    /* every radius 1..32 (sigma = r/2), on a frame smaller than the
     * largest radii, borders rotating */
    for (int r = 1; r <= GE_MAX_RADIUS && !only4k; r++) {
        tcase c;
        memset(&c, 0, sizeof c);
        c.w = 37 + r;
        c.h = 29;
        c.channels = 1;
        c.bps = 1;
        c.border = r % 3;
        c.sigma = r / 2.0;
        c.pattern = PAT_NOISE;
        c.pitch_pad[1] = r & 7;
        run_case(&c, st);
    }

    if (!only4k)
        hist_checks(quick, st);

    MUST(cudaStreamDestroy(st));
    printf("# %.1f s\n", now_s() - t0);
    CHECK_EXIT();
}
