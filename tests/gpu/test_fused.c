/*
 * test_fused.c — the fused kernel (kernels/fused.cu) against the CPU
 * reference, bit for bit (DESIGN.md §1, §2): edge map and histogram of
 * fused_gpu == ref_process, for
 *   sizes     1x1 1x17 17x1 6x5 33x17 1023x769 3840x2160 3841x2163
 *   borders   replicate reflect101 zero
 *   sigma     0 0.5 1 2.5 16 (radius 0 1 2 5 32), and every radius 1..32
 *   inputs    1/3/4 channels, 8/16-bit, image (gain 1 / S16) and video
 *             luma (limited range offset/gain, P010 shift), aligned rows
 *             (the vector-load paths) and odd strides / odd base pointers
 *   outputs   scale, threshold, invert variants; edge pitch != width,
 *             unaligned edge rows
 *   data      random bytes (edges everywhere), smooth (edge values pile
 *             into a few low bins: warp-aggregated bin atomics), constant
 * Small sizes run the whole matrix; the large ones a rotating subset.
 * Also: strips through fused_window_gpu, each from an exactly-sized copy of
 * its input rows (a read outside would show under compute-sanitizer),
 * adding into one histogram == the whole frame; a window missing a halo
 * row, a radius that is not the one set, bad arguments: refused; a grid
 * capped to 1 or 3 blocks a column (fused_set_max_grid_y), so each block
 * loops over many row tiles (the prefetch pipeline) in --quick runs too.
 *
 * Outputs are poisoned before each launch (edge bytes 0x5A, histogram
 * 0xFF bytes): fused_gpu must zero the histogram and write every edge byte
 * of the frame and none of the pitch padding.  One line a case:
 *     ok fused WxH CxBPS border sigma=S variant
 *     not ok fused ...: N of M pixels differ, max |d| D, first at (x,y) ...
 *
 * Usage: test_fused [--quick] [--seed N]
 *   --quick (or GPUEDGE_QUICK=1) skips frames over 1100 pixels a side (for
 *   compute-sanitizer); --seed N (or GPUEDGE_SEED=N) repeats a run, the
 *   seed is printed first.  Without a CUDA device it prints
 *   "skip fused: no CUDA device" and exits 0.
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
#include "fused.h"
#include "reference.h"

#define POISON_B 0x5A
#define QUICK_MAX 1100


// ---------------------------------------------------------------------------
// One input case.
enum { DATA_RANDOM, DATA_SMOOTH, DATA_CONST, DATA_N };
static const char *const data_name[DATA_N] = {"random", "smooth", "const"};

enum { CONV_IMAGE, CONV_LIMITED, CONV_P010, CONV_N };

struct tcase {
    int w, h, channels, bps, border, data, conv;
    double sigma;
    int odd_stride; /* stride not a multiple of 4, base pointer + 1 */
    int edge_pad, edge_odd; /* edge pitch = w + pad; edge pointer + 1 */
    int use_threshold, invert;
    float scale, threshold;
};

static void case_name(const struct tcase *c, char *buf, size_t n)
{
    snprintf(buf, n,
             "fused %dx%d c%d/%dbit %s sigma=%g %s%s%s scale=%g%s%s%s",
             c->w, c->h, c->channels, 8 * c->bps, border_name[c->border],
             c->sigma, data_name[c->data],
             c->conv == CONV_LIMITED ? " limited"
             : c->conv == CONV_P010 ? " p010"
                                    : "",
             c->odd_stride ? " odd-stride" : "", c->scale,
             c->use_threshold ? " threshold" : "",
             c->invert ? " invert" : "", c->edge_odd ? " odd-edge" : "");
}

/* Host frame: rows of `stride` bytes at data + base_off. */
struct hframe {
    unsigned char *buf; /* allocation */
    size_t size, base_off;
    ge_frame f;         /* f.data = buf + base_off */
};

static void make_frame(const struct tcase *c, struct hframe *hf)
{
    const int C = c->channels, B = c->bps;
    size_t stride = (size_t)c->w * C * B;
    int gx = (int)rnd_below(7) - 3, gy = (int)rnd_below(7) - 3, k;
    unsigned base = rnd_below(256);

    if (c->odd_stride)
        stride += 1 + 4 * rnd_below(3); /* % 4 == 1 past the row */
    else
        stride = (stride + 3) / 4 * 4 + 4 * rnd_below(3);
    hf->base_off = c->odd_stride ? 1 : 0;
    hf->size = hf->base_off + stride * (size_t)c->h;
    hf->buf = xmalloc(hf->size);
    for (size_t i = 0; i < hf->size; i++)
        hf->buf[i] = (unsigned char)rnd(); /* padding too */

    memset(&hf->f, 0, sizeof hf->f);
    hf->f.width = c->w;
    hf->f.height = c->h;
    hf->f.channels = C;
    hf->f.bytes_per_sample = B;
    hf->f.stride = stride;
    hf->f.data = hf->buf + hf->base_off;
    hf->f.gain = B == 2 ? GE_S16 : 1.0f;
    if (c->conv == CONV_LIMITED) { /* yuv, limited range */
        hf->f.offset = 16 << (8 * B - 8);
        hf->f.gain = (float)(255.0 / (219.0 * (1 << (8 * B - 8))));
    } else if (c->conv == CONV_P010) { /* 10 bits, MSB aligned */
        hf->f.shift = 6;
        hf->f.offset = 64;
        hf->f.gain = (float)(255.0 / (219.0 * 4));
    }

    for (int y = 0; y < c->h; y++) {
        unsigned char *row = hf->buf + hf->base_off + (size_t)y * stride;
        for (int x = 0; x < c->w; x++)
            for (k = 0; k < C; k++) {
                unsigned v, max = B == 2 ? 65535u : 255u;
                if (c->data == DATA_RANDOM) {
                    v = (unsigned)rnd() & max;
                } else if (c->data == DATA_CONST) {
                    v = (base * 257u) & max;
                } else { /* a gentle ramp with +-1 noise */
                    long s = (long)base + (gx * x + gy * y) / 16 +
                             (long)rnd_below(3) - 1;
                    s = ((s % 256) + 256) % 256;
                    v = B == 2 ? (unsigned)s * 257u : (unsigned)s;
                }
                if (B == 1) {
                    row[(size_t)x * C + k] = (unsigned char)v;
                } else {
                    const uint16_t s16 = (uint16_t)v;
                    memcpy(row + 2 * ((size_t)x * C + k), &s16, 2);
                }
            }
    }
}

// ---------------------------------------------------------------------------
// Comparisons.

static int cmp_hist(const char *name, const unsigned long long *gpu,
                    const uint64_t *ref)
{
    int bad = 0, first = -1;
    for (int b = 0; b < GE_HIST_BINS; b++)
        if (gpu[b] != ref[b] && !bad++)
            first = b;
    CHECK(bad == 0, name,
          "histogram: %d of 256 bins differ, first bin %d: gpu %llu ref %llu",
          bad, first, first >= 0 ? gpu[first] : 0,
          first >= 0 ? (unsigned long long)ref[first] : 0);
    return bad == 0;
}

/* Downloads a pitched edge window into a tight buffer and counts padding
 * bytes that lost their poison (a write outside the window). */
static size_t download_edge(uint8_t *tight, const uint8_t *d, int pitch,
                            int w, int h)
{
    uint8_t *full = xmalloc((size_t)pitch * h);
    size_t dirty = 0;
    MUST(cudaMemcpy(full, d, (size_t)pitch * h, cudaMemcpyDeviceToHost));
    for (int y = 0; y < h; y++) {
        memcpy(tight + (size_t)y * w, full + (size_t)y * pitch, w);
        for (int x = w; x < pitch; x++)
            dirty += full[(size_t)y * pitch + x] != POISON_B;
    }
    free(full);
    return dirty;
}

// ---------------------------------------------------------------------------
// One whole-frame case: fused_gpu vs ref_process.

static int run_case(const struct tcase *c)
{
    struct hframe hf;
    ge_params p;
    ge_taps taps;
    ge_planes ref;
    char name[256];
    int ok = 1;

    case_name(c, name, sizeof name);
    make_frame(c, &hf);
    memset(&p, 0, sizeof p);
    p.sigma = c->sigma;
    p.border = c->border;
    p.scale = c->scale;
    p.use_threshold = c->use_threshold;
    p.threshold = c->threshold;
    p.invert = c->invert;
    if (ge_taps_make(p.sigma, &taps) < 0) {
        CHECK(0, name, "ge_taps_make(%g) failed", p.sigma);
        free(hf.buf);
        return 0;
    }

    const size_t n = (size_t)c->w * c->h;
    memset(&ref, 0, sizeof ref);
    ref.edge = xmalloc(n);
    if (ref_process(&hf.f, &p, &ref) < 0) {
        CHECK(0, name, "ref_process failed");
        free(ref.edge);
        free(hf.buf);
        return 0;
    }

    /* device copies: the frame at the same offset from an aligned base */
    unsigned char *d_buf = dmalloc(hf.size);
    MUST(cudaMemcpy(d_buf, hf.buf, hf.size, cudaMemcpyHostToDevice));
    ge_frame df = hf.f;
    df.data = d_buf + hf.base_off;

    const int pitch = c->w + c->edge_pad;
    uint8_t *d_ebuf = dmalloc((size_t)pitch * c->h + 1);
    uint8_t *d_edge = d_ebuf + (c->edge_odd ? 1 : 0);
    unsigned long long *d_hist = dmalloc(GE_HIST_BINS * 8);
    unsigned long long h_hist[GE_HIST_BINS];
    MUST(cudaMemset(d_ebuf, POISON_B, (size_t)pitch * c->h + 1));
    MUST(cudaMemset(d_hist, 0xFF, GE_HIST_BINS * 8));

    cudaError_t e = fused_set_taps_gpu(&taps, 0);
    if (e == cudaSuccess)
        e = fused_gpu(&df, d_edge, pitch, &p, taps.radius, d_hist, 0);
    if (e == cudaErrorNotSupported) {
        (void)cudaGetLastError();
        SKIP(name, "radius too large for this GPU's shared memory");
        goto end;
    }
    if (e != cudaSuccess) {
        CHECK(0, name, "fused_gpu: %s", cudaGetErrorString(e));
        ok = 0;
        goto end;
    }
    MUST(cudaDeviceSynchronize());

    uint8_t *edge = xmalloc(n);
    const size_t dirty = download_edge(edge, d_edge, pitch, c->w, c->h);
    MUST(cudaMemcpy(h_hist, d_hist, sizeof h_hist, cudaMemcpyDeviceToHost));
    if (dirty) {
        CHECK(0, name, "%zu edge padding bytes overwritten", dirty);
        ok = 0;
    } else {
        ok = cmp_u8("edge", name, edge, ref.edge, c->w, c->h);
        /* one line a case: the histogram shows only when it differs */
        if (ok) {
            int hb = 0;
            for (int b = 0; b < GE_HIST_BINS; b++)
                hb |= h_hist[b] != ref.hist[b];
            if (hb) {
                /* replace the ok with the failure detail */
                char hn[300];
                snprintf(hn, sizeof hn, "%s (histogram)", name);
                ok = cmp_hist(hn, h_hist, ref.hist);
            }
        }
    }
    free(edge);
end:
    cudaFree(d_buf);
    cudaFree(d_ebuf);
    cudaFree(d_hist);
    free(ref.edge);
    free(hf.buf);
    return ok;
}

// ---------------------------------------------------------------------------
// Strips through fused_window_gpu, each from an exactly-sized copy of the
// input rows it may read; one histogram across them == the whole frame.

static void test_strips(int w, int h, double sigma, int border, int channels)
{
    struct tcase c;
    struct hframe hf;
    ge_params p;
    ge_taps taps;
    ge_planes ref;
    char name[256];

    memset(&c, 0, sizeof c);
    c.w = w;
    c.h = h;
    c.channels = channels;
    c.bps = 1;
    c.border = border;
    c.sigma = sigma;
    c.data = DATA_RANDOM;
    c.scale = 1.0f;
    make_frame(&c, &hf);
    memset(&p, 0, sizeof p);
    p.sigma = sigma;
    p.border = border;
    p.scale = 1.0f;
    ge_taps_make(sigma, &taps);
    const int r = taps.radius;
    snprintf(name, sizeof name, "fused strips %dx%d c%d %s sigma=%g", w, h,
             channels, border_name[border], sigma);

    memset(&ref, 0, sizeof ref);
    ref.edge = xmalloc((size_t)w * h);
    if (ref_process(&hf.f, &p, &ref) < 0) {
        CHECK(0, name, "ref_process failed");
        free(ref.edge);
        free(hf.buf);
        return;
    }
    uint8_t *d_edge = dmalloc((size_t)w * h);
    unsigned long long *d_hist = dmalloc(GE_HIST_BINS * 8);
    MUST(cudaMemset(d_edge, POISON_B, (size_t)w * h));
    MUST(cudaMemset(d_hist, 0, GE_HIST_BINS * 8));
    MUST(fused_set_taps_gpu(&taps, 0));

    /* cut points: 3 uneven strips (a 1-row one where h allows) */
    int cut[4] = {0, h / 3, h / 3 + (h > 2 ? 1 : 0), h};
    int ok = 1;
    for (int s = 0; s < 3 && ok; s++) {
        const int y0 = cut[s], rows = cut[s + 1] - cut[s];
        if (rows <= 0)
            continue;
        /* the rows this strip may read: mapped [y0-1-r, y0+rows+r] */
        int lo = h, hi = -1;
        for (int v = y0 - 1 - r; v <= y0 + rows + r; v++) {
            const int m = map_index(v, h, border);
            if (m < 0)
                continue;
            lo = m < lo ? m : lo;
            hi = m > hi ? m : hi;
        }
        if (hi < 0)
            lo = hi = y0;
        const size_t sz = (size_t)(hi - lo + 1) * hf.f.stride;
        unsigned char *d_in = dmalloc(sz);
        MUST(cudaMemcpy(d_in,
                        (const unsigned char *)hf.f.data +
                            (size_t)lo * hf.f.stride,
                        sz, cudaMemcpyHostToDevice));
        ge_frame df = hf.f;
        df.data = d_in;
        df.height = hi - lo + 1;
        cudaError_t e = fused_window_gpu(&df, h, lo, d_edge + (size_t)y0 * w,
                                         w, y0, rows, &p, r, d_hist, 0);
        if (e != cudaSuccess) {
            CHECK(0, name, "strip %d: fused_window_gpu: %s", s,
                  cudaGetErrorString(e));
            ok = 0;
        }
        MUST(cudaDeviceSynchronize());
        /* a window one row short of the halo is refused */
        if (ok && hi - lo >= 1) {
            df.height = hi - lo; /* drop the last needed row */
            e = fused_window_gpu(&df, h, lo, d_edge + (size_t)y0 * w, w, y0,
                                 rows, &p, r, d_hist, 0);
            if (e != cudaErrorInvalidValue) {
                CHECK(0, name,
                      "strip %d: a window missing row %d was not refused (%s)",
                      s, hi, cudaGetErrorString(e));
                ok = 0;
            }
            (void)cudaGetLastError();
        }
        cudaFree(d_in);
    }
    if (ok) {
        uint8_t *edge = xmalloc((size_t)w * h);
        unsigned long long hh[GE_HIST_BINS];
        MUST(cudaMemcpy(edge, d_edge, (size_t)w * h, cudaMemcpyDeviceToHost));
        MUST(cudaMemcpy(hh, d_hist, sizeof hh, cudaMemcpyDeviceToHost));
        if (cmp_u8("edge", name, edge, ref.edge, w, h)) {
            int hb = 0;
            for (int b = 0; b < GE_HIST_BINS; b++)
                hb |= hh[b] != ref.hist[b];
            if (hb) {
                char hn[300];
                snprintf(hn, sizeof hn, "%s (histogram)", name);
                cmp_hist(hn, hh, ref.hist);
            }
        }
        free(edge);
    }
    cudaFree(d_edge);
    cudaFree(d_hist);
    free(ref.edge);
    free(hf.buf);
}

// ---------------------------------------------------------------------------
// Argument checks: refused with cudaErrorInvalidValue, nothing launched.

static void test_refusals(void)
{
    ge_taps t1, t2;
    ge_params p;
    unsigned char *d_in = dmalloc(64 * 3 * 8);
    uint8_t *d_edge = dmalloc(64 * 8);
    ge_frame f;
    cudaError_t e;

    /* the accepted window below really runs: give it defined input
     * (compute-sanitizer initcheck flagged the reads of this buffer) */
    MUST(cudaMemset(d_in, 0, 64 * 3 * 8));

    memset(&p, 0, sizeof p);
    p.scale = 1.0f;
    ge_taps_make(1.0, &t1); /* r = 2 */
    ge_taps_make(2.0, &t2); /* r = 4 */
    memset(&f, 0, sizeof f);
    f.width = 64;
    f.height = 8;
    f.channels = 3;
    f.bytes_per_sample = 1;
    f.stride = 64 * 3;
    f.gain = 1.0f;
    f.data = d_in;
    MUST(fused_set_taps_gpu(&t1, 0));

    e = fused_gpu(&f, d_edge, 64, &p, t2.radius, NULL, 0);
    CHECK(e == cudaErrorInvalidValue, "fused refuses a radius not set",
          "got %s", cudaGetErrorString(e));
    e = fused_gpu(&f, d_edge, 63, &p, t1.radius, NULL, 0);
    CHECK(e == cudaErrorInvalidValue, "fused refuses pitch < width", "got %s",
          cudaGetErrorString(e));
    f.stride = 64 * 3 - 1;
    e = fused_gpu(&f, d_edge, 64, &p, t1.radius, NULL, 0);
    CHECK(e == cudaErrorInvalidValue, "fused refuses stride < row", "got %s",
          cudaGetErrorString(e));
    f.stride = 64 * 3;
    p.border = 3;
    e = fused_gpu(&f, d_edge, 64, &p, t1.radius, NULL, 0);
    CHECK(e == cudaErrorInvalidValue, "fused refuses a bad border", "got %s",
          cudaGetErrorString(e));
    p.border = 0;
    /* window: rows 4..7 of a 16-row image from rows 2..9: r = 2 needs
     * 4-1-2 = 1 .. 7+1+2 = 10 */
    e = fused_window_gpu(&f, 16, 2, d_edge, 64, 4, 4, &p, t1.radius, NULL, 0);
    CHECK(e == cudaErrorInvalidValue, "fused refuses a window without halo",
          "got %s", cudaGetErrorString(e));
    /* the same window with the halo: rows 1..8 present is still short of
     * 10; rows 0..7 of an 8-row image (whole frame) is fine */
    e = fused_window_gpu(&f, 8, 0, d_edge, 64, 4, 4, &p, t1.radius, NULL, 0);
    CHECK(e == cudaSuccess, "fused accepts a window with its halo", "got %s",
          cudaGetErrorString(e));
    f.width = 0;
    e = fused_gpu(&f, d_edge, 64, &p, t1.radius, NULL, 0);
    CHECK(e == cudaSuccess, "fused: zero-sized frame is a no-op", "got %s",
          cudaGetErrorString(e));
    (void)cudaGetLastError();
    MUST(cudaDeviceSynchronize());
    cudaFree(d_in);
    cudaFree(d_edge);
}

// ---------------------------------------------------------------------------

int main(int argc, char **argv)
{
    int quick = getenv("GPUEDGE_QUICK") && atoi(getenv("GPUEDGE_QUICK"));
    uint64_t seed = (uint64_t)time(NULL) ^ ((uint64_t)clock() << 32);
    const char *es = getenv("GPUEDGE_SEED");
    int ndev = 0;

    if (es)
        seed = strtoull(es, NULL, 0);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) {
            quick = 1;
        } else if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
            seed = strtoull(argv[++i], NULL, 0);
        } else {
            fprintf(stderr, "usage: test_fused [--quick] [--seed N]\n");
            return 2;
        }
    }
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        (void)cudaGetLastError();
        printf("skip fused: no CUDA device\n");
        return 0;
    }
    printf("# test_fused seed %llu%s (rerun: test_fused --seed %llu)\n",
           (unsigned long long)seed, quick ? " quick" : "",
           (unsigned long long)seed);
    rng_state = seed;
    const double t0 = now_s();

    static const int sizes[][2] = {{1, 1},     {1, 17},      {17, 1},
                                   {6, 5},     {33, 17},     {1023, 769},
                                   {3840, 2160}, {3841, 2163}};
    static const double sigmas[] = {0, 0.5, 1, 2.5, 16};
    static const int layouts[][2] = {{1, 1}, {3, 1}, {4, 1},
                                     {1, 2}, {3, 2}, {4, 2}};
    const int nsz = sizeof sizes / sizeof sizes[0];
    const int nsig = sizeof sigmas / sizeof sigmas[0];
    const int nlay = sizeof layouts / sizeof layouts[0];
    int idx = 0;

    for (int s = 0; s < nsz; s++) {
        const int w = sizes[s][0], h = sizes[s][1];
        const int big = w > QUICK_MAX || h > QUICK_MAX;
        const int large = w * h > 100000;
        if (quick && big) {
            char nm[64];
            snprintf(nm, sizeof nm, "fused %dx%d", w, h);
            SKIP(nm, "--quick");
            continue;
        }
        for (int b = 0; b < 3; b++)
            for (int g = 0; g < nsig; g++)
                for (int l = 0; l < nlay; l++, idx++) {
                    struct tcase c;
                    /* large frames: a rotating subset (every sigma and
                     * border, 8-bit RGB at sigma 1 always) */
                    if (large) {
                        const int want_l = (b + g + s) % nlay;
                        const int rgb1 = sigmas[g] == 1.0 && l == 1;
                        if (l != want_l && !rgb1)
                            continue;
                        if (big && sigmas[g] == 16 && b != 0 && !rgb1)
                            continue; /* CPU reference time */
                    }
                    memset(&c, 0, sizeof c);
                    c.w = w;
                    c.h = h;
                    c.channels = layouts[l][0];
                    c.bps = layouts[l][1];
                    c.border = b;
                    c.sigma = sigmas[g];
                    c.data = idx % 5 == 4 ? DATA_CONST
                             : idx % 5 >= 2 ? DATA_SMOOTH
                                            : DATA_RANDOM;
                    c.conv = c.channels == 1 ? idx % CONV_N : CONV_IMAGE;
                    if (c.conv == CONV_P010 && c.bps == 1)
                        c.conv = CONV_LIMITED;
                    c.odd_stride = idx % 7 == 3;
                    c.edge_pad = (int)rnd_below(9);
                    c.edge_odd = idx % 11 == 5;
                    c.scale = idx % 3 == 1 ? 0.37f : idx % 3 == 2 ? 4.0f : 1.0f;
                    c.use_threshold = idx % 4 == 3;
                    c.threshold = (float)rnd_below(256);
                    if (c.use_threshold && idx % 8 == 7)
                        c.threshold = 0.0f; /* every pixel 255: one bin */
                    c.invert = idx % 6 == 5;
                    run_case(&c);
                }
    }

    /* every radius 1..32 (the compiled-in 1..4 and the runtime one) */
    for (int r = 1; r <= GE_MAX_RADIUS; r++) {
        struct tcase c;
        memset(&c, 0, sizeof c);
        c.w = 67 + (int)rnd_below(200);
        c.h = 45 + (int)rnd_below(100);
        c.channels = r % 3 == 0 ? 1 : 3;
        c.bps = 1;
        c.border = r % 3;
        c.sigma = r / 2.0;
        c.data = r % 2 ? DATA_RANDOM : DATA_SMOOTH;
        c.edge_pad = r % 4;
        c.scale = 1.0f;
        run_case(&c);
    }

    /* few blocks, many row tiles each: the prefetch pipeline, the row
     * tables kept ahead, bins summed over tiles */
    for (int gyc = 1; gyc <= 3; gyc += 2)
        for (int l = 0; l < 3; l++) {
            struct tcase c;
            static const int ch[3] = {3, 1, 4};
            memset(&c, 0, sizeof c);
            c.w = 300 + (int)rnd_below(80);
            c.h = 200 + (int)rnd_below(150);
            c.channels = ch[l];
            c.bps = 1;
            c.border = (gyc + l) % 3;
            c.sigma = l == 2 ? 2.0 : 1.0;
            c.data = l == 1 ? DATA_SMOOTH : DATA_RANDOM;
            c.conv = l == 1 ? CONV_LIMITED : CONV_IMAGE;
            c.edge_pad = l;
            c.scale = 1.0f;
            c.invert = l == 2;
            fused_set_max_grid_y(gyc);
            printf("# max grid y %d\n", gyc);
            run_case(&c);
        }
    fused_set_max_grid_y(0);

    /* strips (windows) */
    for (int b = 0; b < 3; b++) {
        test_strips(300, 97, 1.0, b, 3);
        test_strips(129, 40, 16.0, b, 1);
        test_strips(17, 5, 2.5, b, 4);
    }
    test_strips(1, 3, 1.0, GE_BORDER_REFLECT101, 3);
    if (!quick)
        test_strips(3840, 2160, 1.0, GE_BORDER_REPLICATE, 3);

    test_refusals();

    printf("# test_fused: %.1f s\n", now_s() - t0);
    CHECK_EXIT();
}
