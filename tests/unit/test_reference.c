/*
 * test_reference.c — known answers for the CPU gold (src/lib/reference.c) and
 * the tap table (src/lib/taps.c): every expected value here is worked out from
 * DESIGN.md §1 by hand, not by running another implementation.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "edge.h"
#include "reference.h"

static const char *border_name[] = { "replicate", "reflect101", "zero" };

static ge_params params(double sigma, int border)
{
    ge_params p;

    memset(&p, 0, sizeof p);
    p.sigma = sigma;
    p.border = border;
    p.scale = 1.0f;
    return p;
}

static ge_frame frame8(int w, int h, int ch, const uint8_t *data)
{
    ge_frame f;

    memset(&f, 0, sizeof f);
    f.width = w;
    f.height = h;
    f.channels = ch;
    f.bytes_per_sample = 1;
    f.stride = (size_t)w * ch;
    f.gain = 1.0f;
    f.data = data;
    return f;
}

/* All planes allocated (so the float stages can be inspected too). */
typedef struct run {
    ge_planes pl;
    int rc;
} run;

static int run_ref(const ge_frame *f, const ge_params *p, run *r)
{
    size_t n = (size_t)f->width * f->height;

    memset(r, 0, sizeof *r);
    r->pl.grey = malloc(n * sizeof(float));
    r->pl.blur_h = malloc(n * sizeof(float));
    r->pl.blur = malloc(n * sizeof(float));
    r->pl.edge = malloc(n);
    if (!r->pl.grey || !r->pl.blur_h || !r->pl.blur || !r->pl.edge) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    r->rc = ref_process(f, p, &r->pl);
    return r->rc;
}

static void run_free(run *r)
{
    free(r->pl.grey);
    free(r->pl.blur_h);
    free(r->pl.blur);
    free(r->pl.edge);
    memset(r, 0, sizeof *r);
}

static uint64_t hist_sum(const uint64_t *h)
{
    uint64_t s = 0;
    int i;

    for (i = 0; i < GE_HIST_BINS; i++)
        s += h[i];
    return s;
}

/* index of the first edge value that differs from want(), or -1 */
static long first_edge_diff(const uint8_t *e, const uint8_t *want, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        if (e[i] != want[i])
            return (long)i;
    return -1;
}

// ---------------------------------------------------------------------------

static void test_taps(void)
{
    static const float seed[5] = { 0.06136f, 0.24477f, 0.38774f, 0.24477f,
                                   0.06136f };
    static const double sigmas[] = { 0.1, 0.3, 0.5, 0.75, 1.0, 1.5, 2.5,
                                     4.0, 7.3, 12.0, 16.0 };
    static const double bad[] = { 0.05, 0.0999, 16.5, 16.0001, -1.0, -0.5 };
    ge_taps t;
    char name[96];
    int rc, i, k;

    rc = ge_taps_make(1.0, &t);
    CHECK(rc == 0 && t.radius == 2, "taps: sigma 1 has radius 2",
          "rc %d radius %d", rc, t.radius);
    for (k = 0; k < 5; k++) {
        snprintf(name, sizeof name, "taps: sigma 1 w[%d] matches the seed", k);
        CHECK(fabsf(t.w[k] - seed[k]) <= 1e-5f, name, "got %.7f want %.5f",
              t.w[k], seed[k]);
    }

    rc = ge_taps_make(0.0, &t);
    CHECK(rc == 0 && t.radius == 0 && t.w[0] == 1.0f,
          "taps: sigma 0 is radius 0, w = [1]", "rc %d radius %d w0 %g", rc,
          t.radius, t.w[0]);

    for (i = 0; i < (int)(sizeof bad / sizeof bad[0]); i++) {
        snprintf(name, sizeof name, "taps: sigma %g rejected", bad[i]);
        CHECK(ge_taps_make(bad[i], &t) == -1, name, "accepted");
    }
    CHECK(ge_taps_make(NAN, &t) == -1, "taps: sigma NaN rejected", "accepted");
    CHECK(ge_taps_make(INFINITY, &t) == -1, "taps: sigma inf rejected",
          "accepted");

    for (i = 0; i < (int)(sizeof sigmas / sizeof sigmas[0]); i++) {
        double s = sigmas[i], sum = 0.0;
        int want_r = (int)ceil(2.0 * s), sym = 1, pos = 1;
        if (want_r < 1)
            want_r = 1;
        rc = ge_taps_make(s, &t);
        snprintf(name, sizeof name, "taps: sigma %g valid, radius %d", s,
                 want_r);
        CHECK(rc == 0 && t.radius == want_r, name, "rc %d radius %d", rc,
              t.radius);
        if (rc != 0)
            continue;
        for (k = 0; k <= 2 * t.radius; k++) {
            sum += t.w[k];
            if (t.w[k] != t.w[2 * t.radius - k])
                sym = 0;
            if (!(t.w[k] > 0.0f))
                pos = 0;
        }
        for (k = 0; k < t.radius; k++)
            if (t.w[k] > t.w[k + 1]) /* rising to the centre */
                pos = 0;
        snprintf(name, sizeof name, "taps: sigma %g sums to 1", s);
        CHECK(fabs(sum - 1.0) < 1e-5, name, "sum %.9f", sum);
        snprintf(name, sizeof name, "taps: sigma %g symmetric", s);
        CHECK(sym, name, "w[k] != w[2r-k]");
        snprintf(name, sizeof name, "taps: sigma %g positive, unimodal", s);
        CHECK(pos, name, "shape wrong");
    }
}

/* A constant image: no edges in replicate and reflect101, at any size and
 * radius (every pixel's taps see the same values, so the blurred plane is
 * one value and L = R, T = D exactly); zero border: runs, sums right. */
static void test_constant(void)
{
    static const int sizes[][2] = { { 1, 1 }, { 1, 7 }, { 7, 1 }, { 6, 5 },
                                    { 7, 9 }, { 5, 5 }, { 2, 2 }, { 40, 3 } };
    static const double sigmas[] = { 0.0, 0.5, 1.0, 2.5, 16.0 };
    char name[128], why[128];
    int si, gi, b;

    for (si = 0; si < (int)(sizeof sizes / sizeof sizes[0]); si++) {
        int w = sizes[si][0], h = sizes[si][1];
        size_t n = (size_t)w * h, i;
        uint8_t *img = malloc(n), *zeros = calloc(n, 1);
        memset(img, 77, n);
        for (b = 0; b < 3; b++) {
            int ok = 1;
            why[0] = 0;
            for (gi = 0; ok && gi < (int)(sizeof sigmas / sizeof sigmas[0]);
                 gi++) {
                ge_frame f = frame8(w, h, 1, img);
                ge_params p = params(sigmas[gi], b);
                run r;
                long d;
                run_ref(&f, &p, &r);
                if (r.rc != 0 || hist_sum(r.pl.hist) != n) {
                    ok = 0;
                    snprintf(why, sizeof why, "sigma %g: rc %d, hist sum %llu",
                             sigmas[gi], r.rc,
                             (unsigned long long)hist_sum(r.pl.hist));
                } else if (b != GE_BORDER_ZERO) {
                    for (i = 0; i < n; i++)
                        if (r.pl.blur[i] != r.pl.blur[0])
                            ok = 0;
                    d = first_edge_diff(r.pl.edge, zeros, n);
                    if (!ok || d >= 0) {
                        ok = 0;
                        snprintf(why, sizeof why,
                                 "sigma %g: blur not flat or edge[%ld] != 0",
                                 sigmas[gi], d);
                    }
                }
                run_free(&r);
            }
            snprintf(name, sizeof name, "constant %dx%d %s, sigma 0..16: %s",
                     w, h, border_name[b],
                     b == GE_BORDER_ZERO ? "runs, histogram sums to W*H"
                                         : "flat blur, no edges");
            CHECK(ok, name, "%s", why);
        }
        free(img);
        free(zeros);
    }
}

/* Zero border, sigma 0, constant c = 10 on 5x4.  Outside is 0, so along
 * the rim one Sobel arm is missing:
 *   top row, not a corner: L = R = 0+2c+c = 3c, T = 0, D = c+2c+c = 4c
 *     -> gx 0, gy 40, m = 40, e = floor(40.5) = 40 (same on every side);
 *   corner (0,0): L = 0, R = 0+2c+c = 30, T = 0, D = 30
 *     -> m = sqrtf(fma(30,30,900)) = sqrtf(1800) = 42.43, e = 42;
 *   interior: 0. */
static void test_zero_rim(void)
{
    const int w = 5, h = 4;
    uint8_t img[20], want[20];
    int x, y;
    ge_frame f;
    ge_params p = params(0.0, GE_BORDER_ZERO);
    run r;
    long d;

    memset(img, 10, sizeof img);
    f = frame8(w, h, 1, img);
    for (y = 0; y < h; y++) {
        for (x = 0; x < w; x++) {
            int rx = x == 0 || x == w - 1, ry = y == 0 || y == h - 1;
            want[y * w + x] = (rx && ry) ? 42 : (rx || ry) ? 40 : 0;
        }
    }
    run_ref(&f, &p, &r);
    d = first_edge_diff(r.pl.edge, want, 20);
    CHECK(r.rc == 0 && d < 0, "zero border: constant 5x4 has the exact rim",
          "rc %d, edge[%ld] = %d want %d", r.rc, d, d < 0 ? 0 : r.pl.edge[d],
          d < 0 ? 0 : want[d]);
    CHECK(r.pl.hist[42] == 4 && r.pl.hist[40] == 10 && r.pl.hist[0] == 6,
          "zero border: rim histogram 4x42, 10x40, 6x0", "%llu %llu %llu",
          (unsigned long long)r.pl.hist[42], (unsigned long long)r.pl.hist[40],
          (unsigned long long)r.pl.hist[0]);
    run_free(&r);

    /* 1x1 in zero border: every neighbour is 0, so m = 0 */
    {
        uint8_t one = 200;
        ge_frame f1 = frame8(1, 1, 1, &one);
        run_ref(&f1, &p, &r);
        CHECK(r.rc == 0 && r.pl.edge[0] == 0,
              "zero border: 1x1 has no edge (no neighbours)", "edge %d",
              r.pl.edge[0]);
        run_free(&r);
    }
}

/* Vertical step: columns 0..3 are 0, 4..7 are 100, sigma 0.  At column 3,
 * L = 0 and R = 100+200+100 = 400; at column 4, L = 0 (column 3) and
 * R = 400; elsewhere L = R.  Rows are alike, so T = D: m = 400 exactly at
 * columns 3 and 4, 0 elsewhere. */
static void make_step(uint8_t *img, int w, int h, int horizontal)
{
    int x, y;

    for (y = 0; y < h; y++)
        for (x = 0; x < w; x++)
            img[y * w + x] = (horizontal ? y >= h / 2 : x >= w / 2) ? 100 : 0;
}

static void expect_step(const char *what, double scale_or_thr, int use_thr,
                        int invert, uint8_t at_step, uint8_t elsewhere)
{
    const int w = 8, h = 4;
    uint8_t img[32], want[32];
    char name[160];
    int b, x, y, hz;

    for (hz = 0; hz < 2; hz++) {
        int iw = hz ? h : w, ih = hz ? w : h; /* horizontal step: 4x8 */
        make_step(img, iw, ih, hz);
        for (y = 0; y < ih; y++)
            for (x = 0; x < iw; x++) {
                int c = hz ? y : x;
                want[y * iw + x] = (c == 3 || c == 4) ? at_step : elsewhere;
            }
        for (b = 0; b < 2; b++) { /* the zero border adds a rim */
            ge_frame f = frame8(iw, ih, 1, img);
            ge_params p = params(0.0, b);
            run r;
            long d;
            if (use_thr) {
                p.use_threshold = 1;
                p.threshold = (float)scale_or_thr;
            } else {
                p.scale = (float)scale_or_thr;
            }
            p.invert = invert;
            run_ref(&f, &p, &r);
            d = first_edge_diff(r.pl.edge, want, 32);
            snprintf(name, sizeof name, "%s step, %s: %s",
                     hz ? "horizontal" : "vertical", border_name[b], what);
            CHECK(r.rc == 0 && d < 0, name, "rc %d edge[%ld] = %d want %d",
                  r.rc, d, d < 0 ? 0 : r.pl.edge[d], d < 0 ? 0 : want[d]);
            run_free(&r);
        }
    }
}

static void test_step(void)
{
    /* t = fma(400, scale, 0.5) */
    expect_step("scale 0.25 -> 100 at the step", 0.25, 0, 0, 100, 0);
    expect_step("scale 0.5 -> 200 at the step", 0.5, 0, 0, 200, 0);
    expect_step("scale 1 saturates to 255", 1.0, 0, 0, 255, 0);
    expect_step("scale 0.635 -> floor(254.5) = 254", 0.635, 0, 0, 254, 0);
    expect_step("scale 0.63625 -> t = 255 saturates", 0.63625, 0, 0, 255, 0);
    expect_step("invert, scale 0.25 -> 155 / 255", 0.25, 0, 1, 155, 255);
    expect_step("threshold 400 (>=) -> 255", 400.0, 1, 0, 255, 0);
    expect_step("threshold 400.5 -> nothing", 400.5, 1, 0, 0, 0);
    expect_step("threshold 0 -> everything", 0.0, 1, 0, 255, 255);
    expect_step("threshold 400 + invert -> 0 / 255", 400.0, 1, 1, 0, 255);

    /* threshold compares m * scale: 400 * 0.5 = 200 */
    {
        uint8_t img[32];
        ge_frame f = frame8(8, 4, 1, img);
        ge_params p = params(0.0, GE_BORDER_REPLICATE);
        run r;
        make_step(img, 8, 4, 0);
        p.use_threshold = 1;
        p.threshold = 200.0f;
        p.scale = 0.5f;
        run_ref(&f, &p, &r);
        CHECK(r.pl.edge[3] == 255 && r.pl.edge[4] == 255 && r.pl.edge[2] == 0,
              "threshold 200 with scale 0.5 compares m*scale",
              "edges %d %d %d", r.pl.edge[2], r.pl.edge[3], r.pl.edge[4]);
        p.threshold = 200.001f;
        run_free(&r);
        run_ref(&f, &p, &r);
        CHECK(r.pl.edge[3] == 0 && r.pl.hist[0] == 32,
              "threshold 200.001 with scale 0.5 -> nothing", "edge %d",
              r.pl.edge[3]);
        run_free(&r);
    }

    /* One bright pixel (100) at (2,2) of 5x5, sigma 0, scale 1.
     * (1,1) sees it at (+1,+1): R = 100, D = 100, L = T = 0
     *   -> m = sqrtf(fma(100,100,10000)) = sqrtf(20000) = 141.42, e 141;
     * (1,2) sees it at (+1,0): D = 200 -> m = 200; (2,1) at (0,+1): R = 200;
     * the other diagonals and sides by symmetry; (2,2) itself is 0. */
    {
        uint8_t img[25] = { 0 };
        static const uint8_t want[25] = {
            0, 0,   0,   0,   0,
            0, 141, 200, 141, 0,
            0, 200, 0,   200, 0,
            0, 141, 200, 141, 0,
            0, 0,   0,   0,   0,
        };
        ge_frame f = frame8(5, 5, 1, img);
        ge_params p = params(0.0, GE_BORDER_REPLICATE);
        run r;
        long d;
        img[12] = 100;
        run_ref(&f, &p, &r);
        d = first_edge_diff(r.pl.edge, want, 25);
        CHECK(d < 0, "single bright pixel: exact Sobel ring",
              "edge[%ld] = %d want %d", d, d < 0 ? 0 : r.pl.edge[d],
              d < 0 ? 0 : want[d]);
        run_free(&r);
    }
}

/* The blur's border mapping, checked tap by tap on a 3-pixel row and
 * column with sigma 2 (r = 4 > size); output x reads taps x-4..x+4, so
 * indices -4..6.  reflect101 with n = 3: |i| mod 4, then i >= 3 -> 4 - i:
 *   i  -4 -3 -2 -1  0  1  2  3  4  5  6
 *   ->  0  1  2  1  0  1  2  1  0  1  2     (the table below, by hand) */
static void test_border_taps(void)
{
    static const float row[3] = { 3.0f, 50.0f, 200.0f };
    static const int refl[11] = { 0, 1, 2, 1, 0, 1, 2, 1, 0, 1, 2 };
    ge_taps t;
    char name[128];
    float out[3], outv[3];
    int b, x, k;

    ge_taps_make(2.0, &t);
    CHECK(t.radius == 4, "border taps: sigma 2 has radius 4", "radius %d",
          t.radius);
    for (b = 0; b < 3; b++) {
        int ok = 1;
        ref_blur_h(row, 3, 1, &t, b, out);
        ref_blur_v(row, 1, 3, &t, b, outv); /* the same row as a column */
        for (x = 0; x < 3; x++) {
            float acc = 0.0f;
            for (k = -4; k <= 4; k++) {
                int i = x + k;
                float v;
                if (b == GE_BORDER_REPLICATE)
                    v = row[i < 0 ? 0 : i > 2 ? 2 : i];
                else if (b == GE_BORDER_ZERO)
                    v = (i < 0 || i > 2) ? 0.0f : row[i];
                else
                    v = row[refl[i + 4]];
                acc = k == -4 ? t.w[0] * v : fmaf(t.w[k + 4], v, acc);
            }
            if (out[x] != acc || outv[x] != acc)
                ok = 0;
        }
        snprintf(name, sizeof name,
                 "border taps: 1x3 / 3x1, radius 4, %s, tap by tap",
                 border_name[b]);
        CHECK(ok, name, "h %g %g %g  v %g %g %g", out[0], out[1], out[2],
              outv[0], outv[1], outv[2]);
    }
}

static void test_grey(void)
{
    char name[128];
    int i;

    /* 16-bit grey: c = v * S16 */
    {
        static const uint16_t v[6] = { 0, 1, 257, 32768, 65534, 65535 };
        ge_frame f;
        float g[6];
        int ok = 1;
        memset(&f, 0, sizeof f);
        f.width = 6;
        f.height = 1;
        f.channels = 1;
        f.bytes_per_sample = 2;
        f.stride = sizeof v;
        f.gain = GE_S16;
        f.data = v;
        ref_grey(&f, g);
        for (i = 0; i < 6; i++)
            if (g[i] != (float)v[i] * GE_S16)
                ok = 0;
        CHECK(ok, "grey: 16-bit c = v * S16", "g[5] = %.9g", g[5]);
        CHECK(fabsf(g[5] - 255.0f) < 1e-4f && g[2] == 257.0f * GE_S16,
              "grey: 16-bit 65535 -> 255", "g = %.9g", g[5]);
    }
    /* 16-bit RGB with shift/offset (P010-like limited range) */
    {
        static const uint16_t v[6] = { 64 << 6, 940 << 6, 0, 512 << 6,
                                       1023 << 6, 100 << 6 };
        const float gain = (float)(255.0 / (219.0 * 4));
        ge_frame f;
        float g[2], c[6];
        memset(&f, 0, sizeof f);
        f.width = 2;
        f.height = 1;
        f.channels = 3;
        f.bytes_per_sample = 2;
        f.stride = sizeof v;
        f.shift = 6;
        f.offset = 64;
        f.gain = gain;
        f.data = v;
        ref_grey(&f, g);
        for (i = 0; i < 6; i++)
            c[i] = (float)((int)(v[i] >> 6) - 64) * gain;
        CHECK(g[0] == fmaf(0.114f, c[2], fmaf(0.587f, c[1], 0.299f * c[0])) &&
              g[1] == fmaf(0.114f, c[5], fmaf(0.587f, c[4], 0.299f * c[3])),
              "grey: shift 6, offset 64, gain (RGB formula, c < 0 allowed)",
              "g %g %g", g[0], g[1]);
    }
    /* RGB formula, RGBA ignores alpha, grey+alpha uses channel 0, stride */
    {
        enum { W = 7, H = 3 };
        uint8_t rgb[H][W * 3], rgba[H][W * 4 + 5], ga[H][W * 2 + 3];
        float g3[W * H], g4[W * H], g2[W * H];
        int ok3 = 1, ok4 = 1, ok2 = 1, x, y;
        ge_frame f3 = frame8(W, H, 3, &rgb[0][0]);
        ge_frame f4 = frame8(W, H, 4, &rgba[0][0]);
        ge_frame f2 = frame8(W, H, 2, &ga[0][0]);
        srand(7);
        memset(rgba, 0xAB, sizeof rgba); /* stride padding is junk */
        memset(ga, 0xCD, sizeof ga);
        f4.stride = sizeof rgba[0];
        f2.stride = sizeof ga[0];
        for (y = 0; y < H; y++)
            for (x = 0; x < W; x++) {
                for (i = 0; i < 3; i++)
                    rgb[y][x * 3 + i] = rgba[y][x * 4 + i] = (uint8_t)rand();
                rgba[y][x * 4 + 3] = (uint8_t)rand();
                ga[y][x * 2] = rgb[y][x * 3];
                ga[y][x * 2 + 1] = (uint8_t)rand();
            }
        ref_grey(&f3, g3);
        ref_grey(&f4, g4);
        ref_grey(&f2, g2);
        for (y = 0; y < H; y++)
            for (x = 0; x < W; x++) {
                const uint8_t *s = &rgb[y][x * 3];
                float want = fmaf(0.114f, (float)s[2],
                                  fmaf(0.587f, (float)s[1], 0.299f * s[0]));
                if (g3[y * W + x] != want)
                    ok3 = 0;
                if (g4[y * W + x] != want)
                    ok4 = 0;
                if (g2[y * W + x] != (float)s[0])
                    ok2 = 0;
            }
        CHECK(ok3, "grey: RGB formula fma(.114,B,fma(.587,G,.299R))", "diff");
        CHECK(ok4, "grey: RGBA ignores alpha and honours stride", "diff");
        CHECK(ok2, "grey: grey+alpha uses channel 0", "diff");
    }
    /* a white RGB pixel is 255 within rounding (coefficients sum to 1) */
    {
        uint8_t px[3] = { 255, 255, 255 };
        ge_frame f = frame8(1, 1, 3, px);
        float g;
        ref_grey(&f, &g);
        snprintf(name, sizeof name, "grey: white RGB is 255 (got %.7g)", g);
        CHECK(fabsf(g - 255.0f) < 1e-3f, name, "far from 255");
    }
}

/* random images: histogram sums, sigma 0 planes are copies, all sizes */
static void test_random(void)
{
    static const int sizes[][2] = { { 1, 1 }, { 1, 9 }, { 9, 1 }, { 6, 5 },
                                    { 13, 11 }, { 64, 3 } };
    char name[128];
    int si, b;

    srand(12345);
    for (si = 0; si < (int)(sizeof sizes / sizeof sizes[0]); si++) {
        int w = sizes[si][0], h = sizes[si][1];
        size_t n = (size_t)w * h * 3, i;
        uint8_t *img = malloc(n);
        for (i = 0; i < n; i++)
            img[i] = (uint8_t)rand();
        for (b = 0; b < 3; b++) {
            ge_frame f = frame8(w, h, 3, img);
            ge_params p = params(0.0, b);
            ge_planes pl;
            run r;
            run_ref(&f, &p, &r);
            snprintf(name, sizeof name,
                     "random %dx%d RGB %s sigma 0: blur planes copy grey", w,
                     h, border_name[b]);
            CHECK(r.rc == 0 &&
                  !memcmp(r.pl.grey, r.pl.blur_h, n / 3 * sizeof(float)) &&
                  !memcmp(r.pl.grey, r.pl.blur, n / 3 * sizeof(float)),
                  name, "rc %d", r.rc);
            run_free(&r);

            p.sigma = 16.0;
            run_ref(&f, &p, &r);
            snprintf(name, sizeof name,
                     "random %dx%d RGB %s sigma 16: histogram sums to W*H", w,
                     h, border_name[b]);
            CHECK(r.rc == 0 && hist_sum(r.pl.hist) == n / 3, name,
                  "rc %d sum %llu", r.rc,
                  (unsigned long long)hist_sum(r.pl.hist));

            /* NULL float planes: same edge map, scratch freed */
            memset(&pl, 0, sizeof pl);
            pl.edge = malloc(n / 3);
            snprintf(name, sizeof name,
                     "random %dx%d RGB %s sigma 16: NULL planes, same result",
                     w, h, border_name[b]);
            CHECK(ref_process(&f, &p, &pl) == 0 &&
                  !memcmp(pl.edge, r.pl.edge, n / 3) &&
                  !memcmp(pl.hist, r.pl.hist, sizeof pl.hist),
                  name, "differs");
            free(pl.edge);
            run_free(&r);
        }
        free(img);
    }
}

static void test_bad_input(void)
{
    uint8_t px[4] = { 0 };
    uint8_t e[4];
    ge_frame f = frame8(2, 2, 1, px);
    ge_params p = params(1.0, GE_BORDER_REPLICATE);
    ge_planes pl;

    memset(&pl, 0, sizeof pl);
    pl.edge = e;
    p.sigma = 20.0;
    CHECK(ref_process(&f, &p, &pl) == -1, "ref_process: bad sigma -> -1",
          "accepted");
    p.sigma = 1.0;
    f.channels = 5;
    CHECK(ref_process(&f, &p, &pl) == -1, "ref_process: 5 channels -> -1",
          "accepted");
    f.channels = 1;
    f.width = 0;
    CHECK(ref_process(&f, &p, &pl) == -1, "ref_process: width 0 -> -1",
          "accepted");
    f.width = 2;
    f.stride = 1;
    CHECK(ref_process(&f, &p, &pl) == -1, "ref_process: stride < row -> -1",
          "accepted");
    f.stride = 2;
    p.border = 3;
    CHECK(ref_process(&f, &p, &pl) == -1, "ref_process: border 3 -> -1",
          "accepted");
    p.border = GE_BORDER_ZERO;
    CHECK(ref_process(&f, &p, &pl) == 0, "ref_process: valid 2x2 -> 0",
          "rc != 0");
}

int main(void)
{
    test_taps();
    test_constant();
    test_zero_rim();
    test_step();
    test_border_taps();
    test_grey();
    test_random();
    test_bad_input();
    CHECK_EXIT();
}
