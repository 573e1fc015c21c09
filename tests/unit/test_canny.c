/*
 * test_canny.c — DESIGN.md §1.8 (Canny): known answers for the reference
 * (src/lib/reference.c), each expected map worked out by hand from the
 * rules in the comments; the --canny auto rule on hand-made histograms;
 * and the CPU backend against the reference bit for bit on random images
 * (the seed comes from the clock, is printed, and GPUEDGE_TEST_SEED
 * replays it).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "cpu_backend.h"
#include "edge.h"
#include "reference.h"

static const char *border_name[] = { "replicate", "reflect101", "zero" };
static unsigned seed;

static void *xcalloc(size_t n, size_t s)
{
    void *p = calloc(n ? n : 1, s);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    return p;
}

/* first index where a and b differ, or -1 */
static long first_diff(const uint8_t *a, const uint8_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i])
            return (long)i;
    return -1;
}

static ge_params canny_params(double sigma, int border, float low, float high)
{
    ge_params p;

    memset(&p, 0, sizeof p);
    p.sigma = sigma;
    p.border = border;
    p.scale = 1.0f;
    p.canny = GE_CANNY_ON;
    p.canny_low = low;
    p.canny_high = high;
    return p;
}

static ge_frame grey_frame(int w, int h, const uint8_t *data)
{
    ge_frame f;

    memset(&f, 0, sizeof f);
    f.width = w;
    f.height = h;
    f.channels = 1;
    f.bytes_per_sample = 1;
    f.stride = (size_t)w;
    f.gain = 1.0f;
    f.data = data;
    return f;
}

/* ref_process on an 8-bit grey image; edge (W*H) and hist out */
static int ref_run(int w, int h, const uint8_t *img, const ge_params *p,
                   uint8_t *edge, uint64_t *hist)
{
    ge_frame f = grey_frame(w, h, img);
    ge_planes pl;
    int rc;

    memset(&pl, 0, sizeof pl);
    pl.edge = edge;
    rc = ref_process(&f, p, &pl);
    if (hist)
        memcpy(hist, pl.hist, sizeof pl.hist);
    return rc;
}

static void check_map(const char *name, const uint8_t *got, const uint8_t *want,
                      int w, int h)
{
    long d = first_diff(got, want, (size_t)w * h);
    CHECK(d < 0, name, "first difference at (y %ld, x %ld): got %d want %d",
          d / w, d % w, d < 0 ? 0 : got[d], d < 0 ? 0 : want[d]);
}

// ---------------------------------------------------------------------------
// Known answers through the whole reference (images in)

/* A vertical step 0 | 100 between columns 3 and 4, sigma 0, replicate:
 * every row alike, so gy = 0 and gx(x) = 4 * (b(x+1) - b(x-1)): 400 at
 * columns 3 and 4, 0 elsewhere.  Horizontal NMS (t > left, t >= right):
 * column 3 passes (400 > 0, 400 >= 400), column 4 does not (400 > 400 is
 * false).  So exactly column 3, in every row: a 1-pixel line. */
static void test_step_edge(void)
{
    enum { W = 8, H = 6 };
    uint8_t img[W * H], edge[W * H], want[W * H];
    uint64_t hist[GE_HIST_BINS];
    ge_params p = canny_params(0.0, GE_BORDER_REPLICATE, 50.0f, 100.0f);
    int x, y, rc;

    for (y = 0; y < H; y++)
        for (x = 0; x < W; x++) {
            img[y * W + x] = x < 4 ? 0 : 100;
            want[y * W + x] = x == 3 ? 255 : 0;
        }
    rc = ref_run(W, H, img, &p, edge, hist);
    CHECK(rc == 0, "canny ref: step edge runs", "rc %d", rc);
    check_map("canny ref: step edge -> one line at column 3", edge, want, W, H);
    CHECK(hist[255] == H && hist[0] == W * H - H,
          "canny ref: step edge histogram counts 0 and 255",
          "h[0] %llu h[255] %llu", (unsigned long long)hist[0],
          (unsigned long long)hist[255]);

    /* --invert applies after Canny: the same line, dark on white */
    p.invert = 1;
    rc = ref_run(W, H, img, &p, edge, hist);
    for (x = 0; x < W * H; x++)
        want[x] = (uint8_t)(255 - want[x]);
    check_map("canny ref: step edge with --invert", edge, want, W, H);
    CHECK(rc == 0 && hist[0] == H && hist[255] == W * H - H,
          "canny ref: inverted histogram", "h[0] %llu h[255] %llu",
          (unsigned long long)hist[0], (unsigned long long)hist[255]);
}

/* The same step at the left rim: columns 0 | 1..3 = 0 | 100, replicate.
 * gx(0) = 4 * (b(1) - b(-1) = b(0)) = 400, gx(1) = 4 * (b(2) - b(0)) = 400,
 * gx(2) = gx(3) = 0.  Column 0's left neighbour is outside the image, so
 * its t is 0 (not the replicated 400): column 0 passes, column 1 does not
 * (400 > 400 false).  Had the border replicated t, nothing would pass. */
static void test_rim(void)
{
    enum { W = 4, H = 3 };
    uint8_t img[W * H], edge[W * H], want[W * H];
    ge_params p = canny_params(0.0, GE_BORDER_REPLICATE, 50.0f, 100.0f);
    int x, y;

    for (y = 0; y < H; y++)
        for (x = 0; x < W; x++) {
            img[y * W + x] = x == 0 ? 0 : 100;
            want[y * W + x] = x == 0 ? 255 : 0;
        }
    CHECK(ref_run(W, H, img, &p, edge, NULL) == 0, "canny ref: rim runs", "-");
    check_map("canny ref: outside neighbours have t = 0 (left rim)", edge, want, W, H);
}

/* A blurred ramp, sigma 0 so the values are the ones written here: row
 * b = 0 0 0 10 30 60 85 100 100 100 (x = 0..9), every row alike.
 * gx(x)/4 = b(x+1) - b(x-1): 0 0 10 30 50 55 40 15 0 0, so t = 0 0 40 120
 * 200 220 160 60 0 0.  Only column 5 (220) is a horizontal maximum; with
 * LOW 50 columns 3, 4, 6, 7 are above LOW but suppressed.  One line at
 * column 5, every row. */
static void test_ramp(void)
{
    enum { W = 10, H = 5 };
    static const uint8_t row[W] = { 0, 0, 0, 10, 30, 60, 85, 100, 100, 100 };
    uint8_t img[W * H], edge[W * H], want[W * H];
    ge_params p = canny_params(0.0, GE_BORDER_REPLICATE, 50.0f, 100.0f);
    int x, y;

    for (y = 0; y < H; y++)
        for (x = 0; x < W; x++) {
            img[y * W + x] = row[x];
            want[y * W + x] = x == 5 ? 255 : 0;
        }
    CHECK(ref_run(W, H, img, &p, edge, NULL) == 0, "canny ref: ramp runs", "-");
    check_map("canny ref: blurred ramp -> one thinned line at column 5", edge,
              want, W, H);
}

/* A step 0 | 200 between columns 31 and 32 blurred with sigma 1.5 (a
 * smooth ramp over radius 3 each side): gx rises strictly to the centre
 * and falls after, mirror-symmetric about 31.5, so t(31) and t(32) are
 * equal up to rounding and every other column is below one of its
 * neighbours.  Whichever of the two rounding makes larger (or 31 on a
 * tie: t >= right) is the only pixel of its row: one thinned line, the
 * same column in every row (the rows are alike). */
static void test_blurred_ramp(void)
{
    enum { W = 64, H = 12 };
    uint8_t img[W * H], edge[W * H];
    ge_params p = canny_params(1.5, GE_BORDER_REPLICATE, 5.0f, 10.0f);
    int x, y, col = -1, ok = 1;

    for (y = 0; y < H; y++)
        for (x = 0; x < W; x++)
            img[y * W + x] = x < 32 ? 0 : 200;
    CHECK(ref_run(W, H, img, &p, edge, NULL) == 0, "canny ref: sigma-1.5 step runs", "-");
    for (y = 0; y < H && ok; y++) {
        int n = 0, c = -1;
        for (x = 0; x < W; x++)
            if (edge[y * W + x]) {
                n++;
                c = x;
            }
        if (n != 1 || (col >= 0 && c != col) || c < 31 || c > 32)
            ok = 0;
        col = c;
    }
    CHECK(ok, "canny ref: blurred step (sigma 1.5) -> one pixel per row at column 31 or 32",
          "row %d breaks it", y - 1);
}

/* 1x1, 1xN, Nx1: a 1x1 image has gx = gy = 0 in every mode (each pair of
 * taps reads the same value, or 0 and 0 for the zero border), so t = 0 and
 * nothing is a candidate.  A single row 0 0 100 100 (replicate): gy = 0,
 * gx/4 = 0 100 100 0 -> column 1 (the first of the tie). */
static void test_tiny(void)
{
    uint8_t one = 200, e1 = 7, row[4] = { 0, 0, 100, 100 }, er[4], ec[4];
    uint8_t want_r[4] = { 0, 255, 0, 0 };
    ge_params p;
    int b;

    for (b = 0; b < 3; b++) {
        char name[80];
        p = canny_params(1.0, b, 0.0f, 0.0f);
        snprintf(name, sizeof name, "canny ref: 1x1 %s is 0", border_name[b]);
        CHECK(ref_run(1, 1, &one, &p, &e1, NULL) == 0 && e1 == 0, name, "e %d", e1);
    }
    p = canny_params(0.0, GE_BORDER_REPLICATE, 50.0f, 100.0f);
    CHECK(ref_run(4, 1, row, &p, er, NULL) == 0, "canny ref: 4x1 runs", "-");
    check_map("canny ref: 4x1 row -> column 1", er, want_r, 4, 1);
    /* the same as a column: gx = 0, gy/4 = 0 100 100 0, vertical rule
     * (t > above, t >= below) -> row 1 */
    CHECK(ref_run(1, 4, row, &p, ec, NULL) == 0, "canny ref: 1x4 runs", "-");
    check_map("canny ref: 1x4 column -> row 1", ec, want_r, 1, 4);
}

// ---------------------------------------------------------------------------
// Known answers on hand-made gradients (NMS) and classes (hysteresis)

/* Isolated weak pixels are dropped, an isolated strong one stays.  gy = 0,
 * gx = 60 (weak: 50 < 60 <= 100) at three scattered pixels, 200 (strong) at
 * one more, 0 elsewhere.  Each is a horizontal maximum (ay = 0 < T1 * ax)
 * over zeros, so each is a candidate; only the strong one is joined to a
 * strong pixel. */
static void test_isolated(void)
{
    enum { W = 12, H = 9 };
    float gx[W * H] = { 0 }, gy[W * H] = { 0 };
    uint8_t out[W * H], want[W * H] = { 0 }, cls[W * H];
    int rc;

    gx[1 * W + 1] = 60.0f;
    gx[4 * W + 6] = 60.0f;
    gx[7 * W + 10] = 60.0f;
    gx[2 * W + 9] = 200.0f;
    want[2 * W + 9] = 255;
    ref_canny_nms(gx, gy, W, H, 1.0f, 50.0f, 100.0f, cls);
    CHECK(cls[1 * W + 1] == REF_CANNY_WEAK && cls[2 * W + 9] == REF_CANNY_STRONG &&
          cls[0] == REF_CANNY_NONE, "canny ref: NMS classes (weak, strong, none)",
          "%d %d %d", cls[1 * W + 1], cls[2 * W + 9], cls[0]);
    rc = ref_canny(gx, gy, W, H, 1.0f, 50.0f, 100.0f, out);
    CHECK(rc == 0, "canny ref: isolated runs", "rc %d", rc);
    check_map("canny ref: isolated weak pixels dropped, strong kept", out, want, W, H);

    /* thresholds are strict: t == LOW is no candidate, t == HIGH is weak */
    memset(gx, 0, sizeof gx);
    gx[1 * W + 1] = 50.0f;  /* == LOW */
    gx[1 * W + 5] = 100.0f; /* == HIGH */
    ref_canny_nms(gx, gy, W, H, 1.0f, 50.0f, 100.0f, cls);
    CHECK(cls[1 * W + 1] == REF_CANNY_NONE && cls[1 * W + 5] == REF_CANNY_WEAK,
          "canny ref: t > LOW and t > HIGH are strict", "%d %d",
          cls[1 * W + 1], cls[1 * W + 5]);
    /* scale multiplies before the thresholds: 50 * 1.5 = 75 > LOW */
    ref_canny_nms(gx, gy, W, H, 1.5f, 50.0f, 100.0f, cls);
    CHECK(cls[1 * W + 1] == REF_CANNY_WEAK && cls[1 * W + 5] == REF_CANNY_STRONG,
          "canny ref: thresholds apply to t = m * scale", "%d %d",
          cls[1 * W + 1], cls[1 * W + 5]);
}

/* A 1,000-pixel weak chain touching one strong pixel at its end is kept
 * whole; a parallel 1,000-pixel weak chain two rows away (not 8-adjacent)
 * is dropped.  Chains along a row with gx = 0, gy = 60 (weak) are vertical
 * maxima over the zero rows above and below (ay > T2 * ax); the strong
 * pixel has gy = 200. */
static void test_long_chain(void)
{
    enum { W = 1003, H = 5 };
    float *gx = xcalloc((size_t)W * H, sizeof *gx);
    float *gy = xcalloc((size_t)W * H, sizeof *gy);
    uint8_t *out = xcalloc((size_t)W * H, 1), *want = xcalloc((size_t)W * H, 1);
    int x;

    for (x = 1; x <= 1000; x++) {
        gy[1 * W + x] = 60.0f;
        want[1 * W + x] = 255;
        gy[3 * W + x] = 60.0f;
    }
    gy[1 * W + 1001] = 200.0f;
    want[1 * W + 1001] = 255;
    CHECK(ref_canny(gx, gy, W, H, 1.0f, 50.0f, 100.0f, out) == 0,
          "canny ref: long chain runs", "-");
    check_map("canny ref: 1,000-pixel weak chain joined to a strong pixel kept, "
              "a lone one dropped", out, want, W, H);
    free(gx);
    free(gy);
    free(out);
    free(want);
}

/* Square spiral of candidates (class plane, hysteresis alone): walking
 * in from the rim with a one-pixel gap between turns, so turns are never
 * 8-adjacent except along the path.  The one strong pixel is the OUTER end
 * of the path; the fill must follow every turn to the centre.  A second,
 * all-weak spiral beside it is dropped, and a weak pixel touching the first
 * spiral only diagonally is kept (8-connectivity). */
static int spiral(uint8_t *cls, int stride, int x0, int y0, int n, uint8_t v)
{
    /* sides of n-1, n-1, n-1, then n-3, n-3, n-5, n-5, ...: right, down,
     * left, up, ... so each turn stays 2 pixels inside the previous one */
    static const int dx[4] = { 1, 0, -1, 0 }, dy[4] = { 0, 1, 0, -1 };
    int x = x0, y = y0, count = 1, side, k;

    cls[y * stride + x] = v;
    for (side = 0;; side++) {
        int len = side == 0 ? n - 1 : n - 1 - 2 * ((side - 1) / 2);
        if (len <= 0)
            break;
        for (k = 0; k < len; k++) {
            x += dx[side % 4];
            y += dy[side % 4];
            cls[y * stride + x] = v;
            count++;
        }
    }
    return count;
}

static void test_spiral(void)
{
    enum { N = 31, W = 2 * N + 6, H = N + 4 };
    uint8_t *cls = xcalloc((size_t)W * H, 1), *out = xcalloc((size_t)W * H, 1);
    uint8_t *want = xcalloc((size_t)W * H, 1);
    int i, n1;

    n1 = spiral(cls, W, 2, 2, N, REF_CANNY_WEAK);
    for (i = 0; i < W * H; i++)
        want[i] = cls[i] ? 255 : 0;
    cls[2 * W + 2] = REF_CANNY_STRONG; /* the outer end */
    /* a diagonal-only neighbour of the spiral's top-left corner */
    cls[1 * W + 1] = REF_CANNY_WEAK;
    want[1 * W + 1] = 255;
    spiral(cls, W, N + 4, 2, N, REF_CANNY_WEAK); /* all weak: dropped */
    CHECK(n1 > 400, "canny ref: spiral is long", "%d pixels", n1);
    CHECK(ref_canny_hysteresis(cls, W, H, out) == 0, "canny ref: spiral runs", "-");
    check_map("canny ref: spiral followed from its outer end, all-weak one dropped",
              out, want, W, H);
    free(cls);
    free(out);
    free(want);
}

/* Diagonal ties and sector boundaries.  Diagonal NMS is strict on both
 * sides, so two equal neighbours along the gradient both fail, unlike the
 * horizontal / vertical rule (t > n1, t >= n2), where the first of a tie
 * stays. */
static void test_diagonals(void)
{
    enum { W = 8, H = 8 };
    float gx[W * H], gy[W * H];
    uint8_t cls[W * H];

    /* gx = gy = 100 at (2,2) and (3,3): same signs -> neighbours (-1,-1),
     * (+1,+1): each other.  Equal t: both fail. */
    memset(gx, 0, sizeof gx);
    memset(gy, 0, sizeof gy);
    gx[2 * W + 2] = gy[2 * W + 2] = 100.0f;
    gx[3 * W + 3] = gy[3 * W + 3] = 100.0f;
    /* signs differ at (2,6) and (3,5): neighbours (-1,+1), (+1,-1) */
    gx[2 * W + 6] = 100.0f;
    gy[2 * W + 6] = -100.0f;
    gx[3 * W + 5] = -100.0f;
    gy[3 * W + 5] = 100.0f;
    /* untied: (5,1) 100/100 beats (6,2) 50/50; (6,2) fails */
    gx[5 * W + 1] = gy[5 * W + 1] = 100.0f;
    gx[6 * W + 2] = gy[6 * W + 2] = 50.0f;
    ref_canny_nms(gx, gy, W, H, 1.0f, 10.0f, 20.0f, cls);
    CHECK(cls[2 * W + 2] == 0 && cls[3 * W + 3] == 0,
          "canny ref: diagonal tie (same signs): both suppressed", "%d %d",
          cls[2 * W + 2], cls[3 * W + 3]);
    CHECK(cls[2 * W + 6] == 0 && cls[3 * W + 5] == 0,
          "canny ref: diagonal tie (signs differ): both suppressed", "%d %d",
          cls[2 * W + 6], cls[3 * W + 5]);
    CHECK(cls[5 * W + 1] == REF_CANNY_STRONG && cls[6 * W + 2] == 0,
          "canny ref: untied diagonal keeps the larger", "%d %d",
          cls[5 * W + 1], cls[6 * W + 2]);

    /* the sector test uses (float)(sqrt2 - 1) * ax as a float product:
     * ax = 1000 -> 414.2136; ay 414 is horizontal (compares left/right),
     * ay 415 diagonal.  A pixel with a big left neighbour and nothing on
     * its diagonals tells which rule ran. */
    memset(gx, 0, sizeof gx);
    memset(gy, 0, sizeof gy);
    gx[2 * W + 2] = 1000.0f;
    gy[2 * W + 2] = 414.0f;
    gx[2 * W + 1] = 2000.0f; /* left neighbour, larger */
    gx[5 * W + 2] = 1000.0f;
    gy[5 * W + 2] = 415.0f;
    gx[5 * W + 1] = 2000.0f;
    ref_canny_nms(gx, gy, W, H, 1.0f, 10.0f, 20.0f, cls);
    CHECK(cls[2 * W + 2] == 0 && cls[5 * W + 2] == REF_CANNY_STRONG,
          "canny ref: sector boundary at tan 22.5 (414 horizontal, 415 diagonal)",
          "%d %d", cls[2 * W + 2], cls[5 * W + 2]);
    /* and (float)(sqrt2 + 1) * ax: ax = 100 -> 241.42136; ay 241 diagonal
     * (ignores a larger pixel above), ay 242 vertical (suppressed by it) */
    memset(gx, 0, sizeof gx);
    memset(gy, 0, sizeof gy);
    gx[2 * W + 2] = 100.0f;
    gy[2 * W + 2] = 241.0f;
    gy[1 * W + 2] = 900.0f;
    gx[5 * W + 5] = 100.0f;
    gy[5 * W + 5] = 242.0f;
    gy[4 * W + 5] = 900.0f;
    ref_canny_nms(gx, gy, W, H, 1.0f, 10.0f, 20.0f, cls);
    CHECK(cls[2 * W + 2] == REF_CANNY_STRONG && cls[5 * W + 5] == 0,
          "canny ref: sector boundary at tan 67.5 (241 diagonal, 242 vertical)",
          "%d %d", cls[2 * W + 2], cls[5 * W + 5]);
    /* vertical tie: (2,2) above (3,2), gy 100 both: upper passes
     * (t > above 0, t >= below 100), lower fails (100 > 100 false) */
    memset(gx, 0, sizeof gx);
    memset(gy, 0, sizeof gy);
    gy[2 * W + 2] = gy[3 * W + 2] = 100.0f;
    ref_canny_nms(gx, gy, W, H, 1.0f, 10.0f, 20.0f, cls);
    CHECK(cls[2 * W + 2] == REF_CANNY_STRONG && cls[3 * W + 2] == 0,
          "canny ref: vertical tie keeps the upper", "%d %d", cls[2 * W + 2],
          cls[3 * W + 2]);
}

// ---------------------------------------------------------------------------
// --canny auto

static void test_auto_rule(void)
{
    uint64_t h[GE_HIST_BINS];
    float lo, hi;

    /* 60 at 0, 5 at 10, 35 at 20 (N 100): cumulative 60, 65, 100; the
     * first with 10 * cum >= 700 is code 20 -> HIGH 20.5, LOW 0.4f * 20.5f */
    memset(h, 0, sizeof h);
    h[0] = 60;
    h[10] = 5;
    h[20] = 35;
    ge_canny_auto(h, 100, &lo, &hi);
    CHECK(hi == 20.5f && lo == 0.4f * 20.5f, "canny auto: 60/5/35 -> HIGH 20.5",
          "low %g high %g", lo, hi);
    /* exactly 70 % in bin 0 -> c = 0 (>= is inclusive) */
    memset(h, 0, sizeof h);
    h[0] = 70;
    h[255] = 30;
    ge_canny_auto(h, 100, &lo, &hi);
    CHECK(hi == 0.5f && lo == 0.4f * 0.5f, "canny auto: 70 % at 0 -> HIGH 0.5",
          "low %g high %g", lo, hi);
    /* 69 in bin 3 of 100: cum 69 < 70, then 100 at 255 -> 255.5 */
    h[0] = 0;
    h[3] = 69;
    h[255] = 31;
    ge_canny_auto(h, 100, &lo, &hi);
    CHECK(hi == 255.5f, "canny auto: 69 % below -> HIGH 255.5", "high %g", hi);

    /* through ref_process: AUTO gives the frame the thresholds ge_canny_auto
     * takes from that frame's own non-Canny histogram */
    {
        enum { W = 40, H = 30 };
        uint8_t img[W * H], ea[W * H], eb[W * H];
        uint64_t hist[GE_HIST_BINS];
        ge_params p = canny_params(1.0, GE_BORDER_REFLECT101, 0, 0);
        int i;
        uint32_t s = 12345;

        for (i = 0; i < W * H; i++) {
            s = s * 1103515245u + 12345u;
            img[i] = (uint8_t)(s >> 24);
        }
        p.canny = GE_CANNY_OFF;
        p.invert = 1; /* ignored by the auto rule */
        ref_run(W, H, img, &p, ea, NULL);
        for (i = 0; i < W * H; i++)
            ea[i] = (uint8_t)(255 - ea[i]);
        memset(hist, 0, sizeof hist);
        for (i = 0; i < W * H; i++)
            hist[ea[i]]++;
        ge_canny_auto(hist, W * H, &lo, &hi);
        p.canny = GE_CANNY_ON;
        p.canny_low = lo;
        p.canny_high = hi;
        p.invert = 0;
        ref_run(W, H, img, &p, ea, NULL);
        p.canny = GE_CANNY_AUTO;
        p.canny_low = p.canny_high = 0;
        ref_run(W, H, img, &p, eb, NULL);
        CHECK(first_diff(ea, eb, W * H) < 0 && hi > 0.5f,
              "canny auto: ref_process uses the frame's own histogram",
              "maps differ (low %g high %g)", lo, hi);
    }
}

// ---------------------------------------------------------------------------
// The CPU backend == the reference, bit for bit

/* xorshift32: the same stream from the same seed on every libc */
static uint32_t rng_state;
static uint32_t rng(void)
{
    uint32_t x = rng_state;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return rng_state = x;
}

/* Something with edges worth following: a few random rectangles and discs
 * of random grey over a gradient, plus noise of random strength; c
 * channels, 8 bit. */
static void make_image(uint8_t *img, int w, int h, int c)
{
    int nshapes = 1 + (int)(rng() % 6), noise = (int)(rng() % 40);
    int x, y, k, s;

    for (y = 0; y < h; y++)
        for (x = 0; x < w; x++)
            for (k = 0; k < c; k++)
                img[((size_t)y * w + x) * c + k] = (uint8_t)((x * 3 + y * 2 + k * 40) & 0xff);
    for (s = 0; s < nshapes; s++) {
        int cx = (int)(rng() % (unsigned)w), cy = (int)(rng() % (unsigned)h);
        int rx = 1 + (int)(rng() % (unsigned)(w / 2 + 1));
        int ry = 1 + (int)(rng() % (unsigned)(h / 2 + 1));
        int disc = (int)(rng() & 1);
        uint8_t v = (uint8_t)rng();
        for (y = 0; y < h; y++)
            for (x = 0; x < w; x++) {
                long dx = x - cx, dy = y - cy;
                int in = disc ? dx * dx * (long)ry * ry + dy * dy * (long)rx * rx <=
                                    (long)rx * rx * ry * ry
                              : labs(dx) <= rx && labs(dy) <= ry;
                if (in)
                    for (k = 0; k < c; k++)
                        img[((size_t)y * w + x) * c + k] = (uint8_t)(v + 30 * k);
            }
    }
    for (size_t i = 0; i < (size_t)w * h * c; i++) {
        int v = img[i] + (noise ? (int)(rng() % (unsigned)(2 * noise + 1)) - noise : 0);
        img[i] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
    }
}

/* --mem-limit for compare_one (0 = none) */
static size_t mem_limit;

/* ref_process and cpu_process on one random image; returns 1 when equal
 * (every plane, the edge map, the histogram), else prints the first
 * difference and the seed */
static int compare_one(int w, int h, int c, double sigma, int border,
                       int threads, const ge_params *base, const char *what)
{
    const size_t n = (size_t)w * h;
    uint8_t *img = xcalloc(n * c, 1);
    ge_planes ref, cpu;
    ge_frame f = grey_frame(w, h, img);
    ge_params p = *base;
    char name[256], why[200];
    long d;
    int rr, rc;

    p.sigma = sigma;
    p.border = border;
    f.channels = c;
    f.stride = (size_t)w * c;
    make_image(img, w, h, c);
    memset(&ref, 0, sizeof ref);
    memset(&cpu, 0, sizeof cpu);
    ref.edge = xcalloc(n, 1);
    ref.blur = xcalloc(n, sizeof(float));
    cpu.edge = xcalloc(n, 1);
    cpu.blur = xcalloc(n, sizeof(float));
    memset(cpu.edge, 0xA5, n);
    rr = ref_process(&f, &p, &ref);
    rc = mem_limit ? cpu_process_limited(&f, &p, threads, mem_limit, &cpu, NULL)
                   : cpu_process(&f, &p, threads, &cpu, NULL);
    why[0] = 0;
    if (rr || rc)
        snprintf(why, sizeof why, "rc ref %d cpu %d", rr, rc);
    else if ((d = first_diff((const uint8_t *)ref.blur, (const uint8_t *)cpu.blur,
                             n * sizeof(float))) >= 0)
        snprintf(why, sizeof why, "blur plane differs at byte %ld", d);
    else if ((d = first_diff(ref.edge, cpu.edge, n)) >= 0)
        snprintf(why, sizeof why, "edge differs at (y %ld, x %ld): ref %d cpu %d",
                 d / w, d % w, ref.edge[d], cpu.edge[d]);
    else if (memcmp(ref.hist, cpu.hist, sizeof ref.hist))
        snprintf(why, sizeof why, "histograms differ");
    else if (ref.hist[0] + ref.hist[255] != n)
        snprintf(why, sizeof why, "histogram has bins other than 0 and 255");
    snprintf(name, sizeof name, "canny cpu == ref: %dx%d c%d sigma %g %s t%d %s",
             w, h, c, sigma, border_name[border], threads, what);
    CHECK(!why[0], name, "%s (seed %u)", why, seed);
    free(img);
    free(ref.edge);
    free(ref.blur);
    free(cpu.edge);
    free(cpu.blur);
    return !why[0];
}

/* random thresholds (explicit or auto), scale and --invert */
static ge_params random_params(char *what, size_t len)
{
    static const float scales[] = { 1.0f, 0.5f, 2.0f, 0.125f };
    ge_params p = canny_params(1.0, 0, 0, 0);

    p.scale = scales[rng() % 4];
    p.invert = (int)(rng() % 4 == 0);
    if (rng() % 4 == 0) {
        p.canny = GE_CANNY_AUTO;
        snprintf(what, len, "auto scale %g%s", p.scale, p.invert ? " invert" : "");
    } else {
        p.canny_low = (float)(rng() % 600) / 10.0f;
        p.canny_high = p.canny_low + (float)(rng() % 1000) / 10.0f;
        snprintf(what, len, "%g,%g scale %g%s", p.canny_low, p.canny_high, p.scale,
                 p.invert ? " invert" : "");
    }
    return p;
}

static void test_cpu_vs_ref(void)
{
    static const int sizes[][2] = { { 1, 1 }, { 1, 9 }, { 9, 1 }, { 2, 2 },
                                    { 7, 5 }, { 64, 3 }, { 3, 70 },
                                    { 61, 131 }, { 200, 150 }, { 333, 257 } };
    static const double sigmas[] = { 0.0, 0.5, 1.0, 2.5 };
    static const int threads[] = { 1, 2, 3, 7 };
    char what[96];
    int si, b, k = 0;

    for (si = 0; si < (int)(sizeof sizes / sizeof sizes[0]); si++)
        for (b = 0; b < 3; b++) {
            ge_params p = random_params(what, sizeof what);
            compare_one(sizes[si][0], sizes[si][1], 1 + (int)(rng() % 4) / 3 * 2,
                        sigmas[k % 4], b, threads[(k / 4) % 4], &p, what);
            k++;
        }
    /* many candidates, tiny stacks: fills overflow and the pending passes
     * finish them (cpu_hook_canny_stack is the backend's test hook) */
    cpu_hook_canny_stack = 2;
    {
        ge_params p = canny_params(0, 0, 0.0f, 40.0f);
        compare_one(300, 211, 1, 1.0, GE_BORDER_REFLECT101, 3, &p, "0,40 stack 2");
        p = canny_params(0, 0, 1.0f, 1.0f);
        compare_one(97, 300, 3, 0.0, GE_BORDER_ZERO, 2, &p, "1,1 stack 2");
    }
    cpu_hook_canny_stack = 0;
    /* --canny auto keeps a t plane when --mem-limit leaves room for it,
     * else recomputes (a Sobel pass for the histogram first): both paths,
     * 300x211's plane being 211 * 302 * 4 = 255 KB */
    {
        ge_params p = canny_params(0, 0, 0, 0);
        p.canny = GE_CANNY_AUTO;
        mem_limit = 200 << 10; /* scratch fits (16-row bands, small stacks), the plane not */
        compare_one(300, 211, 3, 1.0, GE_BORDER_REPLICATE, 1, &p, "auto, 200 KiB: no t plane");
        mem_limit = 64 << 20;
        compare_one(300, 211, 3, 1.0, GE_BORDER_ZERO, 2, &p, "auto, 64 MiB: t plane");
        mem_limit = 0;
    }
    /* the portable path (no AVX2) too */
    cpu_hook_no_simd = 1;
    {
        ge_params p = random_params(what, sizeof what);
        compare_one(203, 77, 3, 1.0, GE_BORDER_REPLICATE, 2, &p, what);
        p = canny_params(0, 0, 10.0f, 30.0f);
        compare_one(130, 65, 1, 0.0, GE_BORDER_ZERO, 3, &p, "10,30 portable");
    }
    cpu_hook_no_simd = 0;
}

/* The known-answer images through the CPU backend as well */
static void test_cpu_known(void)
{
    enum { W = 10, H = 70 };
    static const uint8_t row[W] = { 0, 0, 0, 10, 30, 60, 85, 100, 100, 100 };
    uint8_t img[W * H], edge[W * H], want[W * H];
    ge_params p = canny_params(0.0, GE_BORDER_REPLICATE, 50.0f, 100.0f);
    ge_frame f = grey_frame(W, H, img);
    ge_planes pl;
    int x, y, rc;

    for (y = 0; y < H; y++)
        for (x = 0; x < W; x++) {
            img[y * W + x] = row[x];
            want[y * W + x] = x == 5 ? 255 : 0;
        }
    memset(&pl, 0, sizeof pl);
    pl.edge = edge;
    rc = cpu_process(&f, &p, 2, &pl, NULL);
    CHECK(rc == 0, "canny cpu: ramp runs", "rc %d", rc);
    check_map("canny cpu: blurred ramp -> one line at column 5 (two bands)", edge,
              want, W, H);
    p.canny_low = 100.0f;
    p.canny_high = 50.0f;
    CHECK(cpu_process(&f, &p, 2, &pl, NULL) == -1 && ref_process(&f, &p, &pl) == -1,
          "canny: LOW > HIGH refused by both", "-");
    p.canny = 7;
    CHECK(cpu_process(&f, &p, 2, &pl, NULL) == -1, "canny: bad mode refused", "-");
}

// ---------------------------------------------------------------------------

int main(void)
{
    const char *s = getenv("GPUEDGE_TEST_SEED");

    seed = s ? (unsigned)strtoul(s, NULL, 10) : (unsigned)time(NULL);
    rng_state = seed ? seed : 1;
    printf("# seed %u\n", seed);
    test_step_edge();
    test_rim();
    test_ramp();
    test_blurred_ramp();
    test_tiny();
    test_isolated();
    test_long_chain();
    test_spiral();
    test_diagonals();
    test_auto_rule();
    test_cpu_known();
    test_cpu_vs_ref();
    CHECK_EXIT();
}
