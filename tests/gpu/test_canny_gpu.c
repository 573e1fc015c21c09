/*
 * test_canny_gpu.c — Canny on the GPU (kernels/canny.h, fused.h's Canny mode)
 * against the CPU, bit for bit (DESIGN.md §1.8): the final edge map and its
 * histogram (bins 0 and 255) of
 *   fused     fused_canny_window_gpu -> [canny_auto_gpu] -> canny_nms_gpu
 *             -> canny_hyst_gpu
 *   staged    grey_gpu -> blur_h_gpu -> blur_v_gpu -> canny_sobel_gpu -> ...
 * with each hysteresis method (CANNY_UNION, CANNY_ITER), against
 *   ref       ref_process with p.canny set (the project's CPU reference), and
 *   own       this file's own plain §1.8 (Sobel on ref_process's blurred
 *             plane, NMS, a flood fill from the strong pixels), written
 *             independently of both.
 * for sizes 1x1 .. 3840x2160 (tile borders: 64x32, 65x33, ...), every
 * border, sigma 0 / 0.5 / 1 / 2.5 (the runtime-radius kernel), explicit
 * thresholds (0,0), equal, nothing strong, and --canny auto (scale 1 and
 * 3.7), invert; data: random bytes, a gentle ramp with noise, shapes
 * (discs and boxes: real-looking edges), a 1-pixel rectangular spiral with
 * one strong end (the longest chain a frame can hold: the worst case of
 * CANNY_ITER), a constant frame.
 *
 * Outputs are poisoned (edge 0x5A, histogram 0xFF) before each run.  One
 * line a case ("ok canny ..." / "not ok canny ...: N of M pixels differ
 * ..."), plus "# ..." lines with the kept pixels and CANNY_ITER's rounds.
 *
 * Usage: test_canny_gpu [--quick|--small] [--seed N] [--no-ref] [--cpu-only]
 *                       [--method union|iter]
 * (--quick: frames up to 1100 px a side; --small: about 50 cases up to
 * 300 px a side and the 300x200 spiral, for compute-sanitizer; --no-ref:
 * skip ref_process; --cpu-only: only own == ref_process, no GPU needed).  Without a CUDA device it prints
 * "skip canny: no CUDA device" and exits 0.
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
#include "canny.h"
#include "cuda_check.h"
#include "edge.h"
#include "fused.h"
#include "kernels.h"
#include "reference.h"

#define POISON_B 0x5A
#define QUICK_MAX 1100

enum { DATA_RANDOM, DATA_RAMP, DATA_SHAPES, DATA_SPIRAL, DATA_CONST, DATA_N };
static const char *const data_name[DATA_N] = {"random", "ramp", "shapes",
                                              "spiral", "const"};
enum { TH_AUTO, TH_PLAIN, TH_ZERO, TH_EQUAL, TH_NONE, TH_AUTO_SCALED, TH_N };
static const char *const th_name[TH_N] = {"auto", "20,60", "0,0",
                                          "25,25", "5,inf", "auto scale=3.7"};

// ---------------------------------------------------------------------------
// Inputs: 8-bit, 1 or 3 channels, tightly packed.

static void put(unsigned char *img, int w, int h, int c, int x, int y,
                unsigned v)
{
    if (x < 0 || y < 0 || x >= w || y >= h)
        return;
    for (int k = 0; k < c; k++)
        img[((size_t)y * w + x) * c + k] = (unsigned char)(c == 3 ? (v * (k + 2)) / 4 : v);
}

static unsigned char *make_image(int w, int h, int c, int data)
{
    unsigned char *img = xmalloc((size_t)w * h * c);
    const unsigned base = rnd_below(256);
    const int gx = (int)rnd_below(7) - 3, gy = (int)rnd_below(7) - 3;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            unsigned v;
            if (data == DATA_RANDOM) {
                for (int k = 0; k < c; k++)
                    img[((size_t)y * w + x) * c + k] = (unsigned char)rnd();
                continue;
            }
            if (data == DATA_RAMP) {
                long s = (long)base + (gx * x + gy * y) / 16 + (long)rnd_below(3) - 1;
                v = (unsigned)(((s % 256) + 256) % 256);
            } else if (data == DATA_CONST) {
                v = base;
            } else {
                v = 40 + rnd_below(5); /* background, faint noise */
            }
            put(img, w, h, c, x, y, v);
        }
    if (data == DATA_SHAPES) {
        const int n = 3 + (int)(((size_t)w * h) >> 14);
        for (int i = 0; i < n && i < 400; i++) {
            const int cx = (int)rnd_below((unsigned)w), cy = (int)rnd_below((unsigned)h);
            const int r = 2 + (int)rnd_below(1 + (unsigned)(w < h ? w : h) / 4);
            const unsigned v = rnd_below(256), disc = rnd_below(2);
            for (int y = cy - r; y <= cy + r; y++)
                for (int x = cx - r; x <= cx + r; x++)
                    if (!disc || (x - cx) * (x - cx) + (y - cy) * (y - cy) <= r * r)
                        put(img, w, h, c, x, y, v);
        }
    } else if (data == DATA_SPIRAL) {
        /* one rectangular spiral of a 2-pixel line (90 on 40), 6-pixel
         * gaps, from the rim inwards, and its start bright (255 fading to 90 over
         * 50 pixels): the only strong edges, so the whole chain (both
         * flanks of the line) hangs on them */
        int L = 2, T = 2, R = w - 4, B = h - 4;
        const int P = 8;
        while (R - L >= P && B - T >= P) {
            const int seg[5][4] = {{L, T, R, T}, {R, T, R, B}, {L, B, R, B},
                                   {L, T + P, L, B}, {L, T + P, L + P, T + P}};
            for (int k = 0; k < 5; k++)
                for (int y = seg[k][1]; y <= seg[k][3] + 1; y++)
                    for (int x = seg[k][0]; x <= seg[k][2] + 1; x++)
                        put(img, w, h, c, x, y, 90);
            L += P;
            T += P;
            R -= P;
            B -= P;
        }
        for (int y = 2; y < 4; y++) /* the line's start: 255 fading to 90 */
            for (int x = 2; x < 66 && x < w - 2; x++)
                put(img, w, h, c, x, y, x < 16 ? 255u : 255u - (unsigned)(x - 16) * 165u / 50u);
    }
    return img;
}

// ---------------------------------------------------------------------------
// The test's own §1.8, on a blurred plane.

static float blur_at(const float *b, int w, int h, int y, int x, int bd)
{
    const int my = map_index(y, h, bd), mx = map_index(x, w, bd);
    return my < 0 || mx < 0 ? 0.0f : b[(size_t)my * w + mx];
}

static void own_canny(const float *b, int w, int h, const ge_params *p,
                      uint8_t *out, uint64_t hist[GE_HIST_BINS], long *kept)
{
    const size_t n = (size_t)w * h;
    float *t = xmalloc(n * sizeof *t);
    uint8_t *dir = xmalloc(n), *cls = xmalloc(n);
    uint64_t eh[GE_HIST_BINS] = {0};
    size_t *stack = xmalloc(n * sizeof *stack), sp = 0;
    const float T1 = (float)(sqrt(2.0) - 1.0), T2 = (float)(sqrt(2.0) + 1.0);
    float lo = p->canny_low, hi = p->canny_high;

    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            const int bd = p->border;
            const float nw = blur_at(b, w, h, y - 1, x - 1, bd), nn = blur_at(b, w, h, y - 1, x, bd),
                        ne = blur_at(b, w, h, y - 1, x + 1, bd), ww = blur_at(b, w, h, y, x - 1, bd),
                        ee = blur_at(b, w, h, y, x + 1, bd), sw = blur_at(b, w, h, y + 1, x - 1, bd),
                        ss = blur_at(b, w, h, y + 1, x, bd), se = blur_at(b, w, h, y + 1, x + 1, bd);
            const float L = (nw + 2.0f * ww) + sw, R = (ne + 2.0f * ee) + se;
            const float T = (nw + 2.0f * nn) + ne, D = (sw + 2.0f * ss) + se;
            const float gx = R - L, gy = D - T;
            const float m = sqrtf(fmaf(gx, gx, gy * gy));
            const float q = fmaf(m, p->scale, 0.5f);
            eh[q >= 255.0f ? 255 : (int)floorf(q)]++;
            t[(size_t)y * w + x] = m * p->scale;
            const float ax = fabsf(gx), ay = fabsf(gy);
            dir[(size_t)y * w + x] = ay < T1 * ax ? 0 : ay > T2 * ax ? 1
                                     : (gx < 0) != (gy < 0)         ? 2
                                                                    : 3;
        }
    if (p->canny == GE_CANNY_AUTO)
        ge_canny_auto(eh, n, &lo, &hi);
    static const int off[4][4] = {{0, -1, 0, 1}, {-1, 0, 1, 0}, {-1, 1, 1, -1}, {-1, -1, 1, 1}};
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            const size_t i = (size_t)y * w + x;
            const int *o = off[dir[i]];
            const int y1 = y + o[0], x1 = x + o[1], y2 = y + o[2], x2 = x + o[3];
            const float t1 = (y1 < 0 || y1 >= h || x1 < 0 || x1 >= w) ? 0.0f : t[(size_t)y1 * w + x1];
            const float t2 = (y2 < 0 || y2 >= h || x2 < 0 || x2 >= w) ? 0.0f : t[(size_t)y2 * w + x2];
            const int pass = t[i] > t1 && (dir[i] < 2 ? t[i] >= t2 : t[i] > t2);
            cls[i] = pass && t[i] > lo ? (t[i] > hi ? 2 : 1) : 0;
            out[i] = 0;
            if (cls[i] == 2) {
                out[i] = 255;
                stack[sp++] = i;
            }
        }
    while (sp) {
        const size_t i = stack[--sp];
        const int y = (int)(i / w), x = (int)(i % w);
        for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++) {
                const int yy = y + dy, xx = x + dx;
                if (yy < 0 || yy >= h || xx < 0 || xx >= w)
                    continue;
                const size_t j = (size_t)yy * w + xx;
                if (cls[j] && !out[j]) {
                    out[j] = 255;
                    stack[sp++] = j;
                }
            }
    }
    *kept = 0;
    memset(hist, 0, GE_HIST_BINS * sizeof *hist);
    for (size_t i = 0; i < n; i++) {
        *kept += out[i] == 255;
        if (p->invert)
            out[i] = (uint8_t)(255 - out[i]);
        hist[out[i]]++;
    }
    free(t);
    free(dir);
    free(cls);
    free(stack);
}

// ---------------------------------------------------------------------------
// The GPU side, as the pipeline enqueues it.

static cudaError_t gpu_canny(const ge_frame *hf, const ge_params *p,
                             const ge_taps *taps, int staged, uint8_t *out,
                             unsigned long long *hist, unsigned *rounds)
{
    const int w = hf->width, h = hf->height;
    const size_t n = (size_t)w * h, in_bytes = hf->stride * (size_t)h;
    unsigned char *d_in = dmalloc(in_bytes);
    uint8_t *d_edge = dmalloc(n);
    unsigned long long *d_hist = dmalloc(GE_HIST_BINS * 8);
    void *scr = dmalloc(canny_scratch_bytes(w, h));
    float *d_grey = NULL, *d_bh = NULL, *d_b = NULL;
    float *t = canny_t_plane(scr), *thr = canny_thr(scr, w, h);
    uint32_t *lab = canny_labels(scr, w, h);
    unsigned *flags = canny_flags(scr, w, h);
    const int aut = p->canny == GE_CANNY_AUTO;
    cudaError_t e;
    ge_frame df = *hf;

    MUST(cudaMemcpy(d_in, hf->data, in_bytes, cudaMemcpyHostToDevice));
    MUST(cudaMemset(d_edge, POISON_B, n));
    MUST(cudaMemset(d_hist, 0xFF, GE_HIST_BINS * 8));
    df.data = d_in;
    e = cudaMemset(d_hist, 0, GE_HIST_BINS * 8);
    if (!staged) {
        if (e == cudaSuccess)
            e = fused_set_taps_gpu(taps, 0);
        if (e == cudaSuccess)
            e = fused_canny_window_gpu(&df, h, 0, d_edge, w, t, w, 0, h, p, taps->radius,
                                       d_hist, 0);
    } else {
        d_grey = dmalloc(n * 4);
        d_bh = dmalloc(n * 4);
        d_b = dmalloc(n * 4);
        if (e == cudaSuccess)
            e = grey_gpu(&df, d_grey, w, 0);
        const float *b = d_grey;
        if (e == cudaSuccess && taps->radius > 0) {
            e = gaussian_set_taps_gpu(taps, 0);
            if (e == cudaSuccess)
                e = blur_h_gpu(d_grey, w, d_bh, w, w, h, p->border, 0);
            if (e == cudaSuccess)
                e = blur_v_gpu(d_bh, w, w, h, 0, h, d_b, w, 0, h, p->border, 0);
            b = d_b;
        }
        if (e == cudaSuccess)
            e = canny_sobel_gpu(b, w, w, h, d_edge, w, t, w, p, d_hist, 0);
    }
    if (e == cudaSuccess)
        e = aut ? canny_auto_gpu(d_hist, n, thr, 0) : cudaMemsetAsync(d_hist, 0, GE_HIST_BINS * 8, 0);
    if (e == cudaSuccess)
        e = canny_nms_gpu(d_edge, w, t, w, lab, w, h, p, aut ? thr : NULL, 0);
    if (e == cudaSuccess)
        e = canny_hyst_gpu(d_edge, w, lab, w, h, p, d_hist, flags, 0);
    if (e == cudaSuccess)
        e = cudaDeviceSynchronize();
    if (e == cudaSuccess) {
        MUST(cudaMemcpy(out, d_edge, n, cudaMemcpyDeviceToHost));
        MUST(cudaMemcpy(hist, d_hist, GE_HIST_BINS * 8, cudaMemcpyDeviceToHost));
        *rounds = 0;
        if (canny_get_method() == CANNY_ITER)
            MUST(cudaMemcpy(rounds, flags + 3, sizeof *rounds, cudaMemcpyDeviceToHost));
    }
    cudaFree(d_in);
    cudaFree(d_edge);
    cudaFree(d_hist);
    cudaFree(scr);
    cudaFree(d_grey);
    cudaFree(d_bh);
    cudaFree(d_b);
    return e;
}

static int cmp_hist(const char *name, const unsigned long long *gpu, const uint64_t *ref)
{
    int bad = 0, first = -1;
    for (int b = 0; b < GE_HIST_BINS; b++)
        if (gpu[b] != ref[b] && !bad++)
            first = b;
    CHECK(bad == 0, name, "histogram: %d of 256 bins differ, first bin %d: gpu %llu ref %llu",
          bad, first, first >= 0 ? gpu[first] : 0,
          first >= 0 ? (unsigned long long)ref[first] : 0);
    return bad == 0;
}

struct tcase {
    int w, h, channels, border, data, th, invert;
    double sigma;
};

static long total_kept;
static int cpu_only; /* --cpu-only: own == ref_process, no GPU */
static int small;    /* --small: ~50 cases up to 300 px (compute-sanitizer) */
static int only_method = -1; /* --method union|iter: that one alone */

static void run_case(const struct tcase *c, int with_ref)
{
    char name[256], nm[320];
    ge_params p;
    ge_taps taps;
    ge_planes pl;
    const size_t n = (size_t)c->w * c->h;
    unsigned char *img = make_image(c->w, c->h, c->channels, c->data);
    ge_frame f;
    uint8_t *own = xmalloc(n), *refe = xmalloc(n), *gpu = xmalloc(n);
    uint64_t own_hist[GE_HIST_BINS];
    long kept = 0;

    memset(&f, 0, sizeof f);
    f.width = c->w;
    f.height = c->h;
    f.channels = c->channels;
    f.bytes_per_sample = 1;
    f.stride = (size_t)c->w * c->channels;
    f.gain = 1.0f;
    f.data = img;
    memset(&p, 0, sizeof p);
    p.sigma = c->sigma;
    p.border = c->border;
    p.scale = c->th == TH_AUTO_SCALED ? 3.7f : 1.0f;
    p.invert = c->invert;
    p.canny = c->th == TH_AUTO || c->th == TH_AUTO_SCALED ? GE_CANNY_AUTO : GE_CANNY_ON;
    static const float lo[TH_N] = {0, 20, 0, 25, 5, 0}, hi[TH_N] = {0, 60, 0, 25, INFINITY, 0};
    p.canny_low = lo[c->th];
    p.canny_high = hi[c->th];
    if (c->data == DATA_SPIRAL && p.canny == GE_CANNY_ON && c->th == TH_PLAIN) {
        p.canny_low = 20; /* the line's edges weak, its start strong */
        p.canny_high = 150;
    }
    ge_taps_make(p.sigma, &taps);
    snprintf(name, sizeof name, "canny %dx%d c%d %s sigma=%g %s %s%s", c->w, c->h,
             c->channels, border_name[c->border], c->sigma, data_name[c->data],
             c->data == DATA_SPIRAL && c->th == TH_PLAIN ? "20,150" : th_name[c->th],
             c->invert ? " invert" : "");

    /* the test's own answer, from the reference's blurred plane */
    memset(&pl, 0, sizeof pl);
    pl.blur = xmalloc(n * sizeof(float));
    pl.edge = xmalloc(n);
    ge_params ps = p;
    ps.canny = GE_CANNY_OFF;
    if (ref_process(&f, &ps, &pl) < 0) {
        CHECK(0, name, "ref_process failed");
        goto end;
    }
    own_canny(pl.blur, c->w, c->h, &p, own, own_hist, &kept);
    total_kept += kept;
    if (with_ref) { /* the project's reference must agree with it */
        ge_planes rp;
        memset(&rp, 0, sizeof rp);
        rp.edge = refe;
        snprintf(nm, sizeof nm, "%s ref_process == own", name);
        if (ref_process(&f, &p, &rp) < 0)
            CHECK(0, nm, "ref_process failed");
        else if (cmp_u8("edge", nm, refe, own, c->w, c->h))
            cmp_hist(nm, (const unsigned long long *)rp.hist, own_hist);
    }
    for (int staged = 0; staged < 2 && !cpu_only; staged++)
        for (int m = 0; m < 2; m++) {
            unsigned long long gh[GE_HIST_BINS];
            if (only_method >= 0 && m != only_method)
                continue;
            unsigned rounds = 0;
            canny_set_method(m ? CANNY_ITER : CANNY_UNION);
            snprintf(nm, sizeof nm, "%s %s %s", name, staged ? "staged" : "fused",
                     m ? "iter" : "union");
            cudaError_t e = gpu_canny(&f, &p, &taps, staged, gpu, gh, &rounds);
            if (e == cudaErrorNotSupported) {
                (void)cudaGetLastError();
                SKIP(nm, "not supported on this GPU (radius / cooperative launch)");
                continue;
            }
            if (e != cudaSuccess) {
                CHECK(0, nm, "CUDA: %s", cudaGetErrorString(e));
                exit(1); /* a sticky error: nothing after it means anything */
            }
            if (cmp_u8("edge", nm, gpu, own, c->w, c->h))
                cmp_hist(nm, gh, own_hist);
            if (m && rounds > 1)
                printf("# %s: %u rounds\n", nm, rounds);
        }
    canny_set_method(CANNY_UNION);
    printf("# %s: %ld of %zu pixels kept\n", name, kept, n);
end:
    free(pl.blur);
    free(pl.edge);
    free(img);
    free(own);
    free(refe);
    free(gpu);
}

static void test_refusals(void)
{
    ge_params p;
    memset(&p, 0, sizeof p);
    p.scale = 1.0f;
    p.canny = GE_CANNY_ON;
    uint8_t *d = dmalloc(64);
    float *t = dmalloc(64 * 4);
    cudaError_t e = canny_nms_gpu(d, 7, t, 8, NULL, 8, 8, &p, NULL, 0);
    CHECK(e == cudaErrorInvalidValue, "canny nms refuses pitch < width", "got %s",
          cudaGetErrorString(e));
    e = canny_hyst_gpu(d, 8, NULL, 8, 8, &p, NULL, NULL, 0);
    CHECK(e == cudaErrorInvalidValue, "canny hyst refuses no histogram", "got %s",
          cudaGetErrorString(e));
    CHECK(canny_scratch_bytes(65536, 32768) == 0, "canny scratch: 2^31 pixels refused", "%s", "not 0");
    CHECK(canny_scratch_bytes(0, 5) == 0, "canny scratch: empty frame", "%s", "not 0");
    (void)cudaGetLastError();
    cudaFree(d);
    cudaFree(t);
}

int main(int argc, char **argv)
{
    int quick = getenv("GPUEDGE_QUICK") && atoi(getenv("GPUEDGE_QUICK"));
    uint64_t seed = (uint64_t)time(NULL) ^ ((uint64_t)clock() << 32);
    const char *es = getenv("GPUEDGE_SEED");
    int ndev = 0, with_ref = 1;

    if (es)
        seed = strtoull(es, NULL, 0);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick"))
            quick = 1;
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            seed = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--no-ref"))
            with_ref = 0; /* only the test's own reference */
        else if (!strcmp(argv[i], "--method") && i + 1 < argc)
            only_method = !strcmp(argv[++i], "iter") ? 1 : 0;
        else if (!strcmp(argv[i], "--small"))
            small = quick = 1;
        else if (!strcmp(argv[i], "--cpu-only"))
            cpu_only = 1; /* the two CPU answers only (no GPU needed) */
        else {
            fprintf(stderr, "usage: test_canny_gpu [--quick|--small] [--seed N] [--no-ref] [--cpu-only] [--method union|iter]\n");
            return 2;
        }
    }
    if (!cpu_only && (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0)) {
        (void)cudaGetLastError();
        printf("skip canny: no CUDA device\n");
        return 0;
    }
    printf("# test_canny_gpu seed %llu%s (rerun: test_canny_gpu --seed %llu)\n",
           (unsigned long long)seed, quick ? " quick" : "", (unsigned long long)seed);
    rng_state = seed;
    const double t0 = now_s();

    static const int sizes[][2] = {{1, 1},   {1, 17},   {17, 1},    {2, 2},
                                   {6, 5},   {33, 17},  {64, 32},   {65, 33},
                                   {130, 70}, {257, 129}, {1023, 769}, {3840, 2160}};
    static const double sigmas[] = {0, 0.5, 1, 2.5};
    const int nsz = sizeof sizes / sizeof sizes[0];
    int idx = 0;
    for (int s = 0; s < nsz; s++) {
        const int w = sizes[s][0], h = sizes[s][1];
        if (quick && (w > QUICK_MAX || h > QUICK_MAX)) {
            char nm[64];
            snprintf(nm, sizeof nm, "canny %dx%d", w, h);
            SKIP(nm, "--quick");
            continue;
        }
        const int large = w * h > 200000;
        for (int b = 0; b < 3; b++)
            for (int g = 0; g < 4; g++)
                for (int d = 0; d < DATA_N; d++, idx++) {
                    struct tcase c;
                    /* large frames: one case a border (the CPU side's
                     * time); --quick (sanitizers): no large spiral
                     * (CANNY_ITER's thousands of rounds) */
                    if (large && (g != 2 || d != (b + s) % (quick ? 3 : DATA_N - 1)))
                        continue;
                    /* --small: one border and sigma a size and data */
                    if (small && (w > 300 || h > 300 || b != (d + s) % 3 ||
                                  g != (d + s + b) % 4))
                        continue;
                    c.w = w;
                    c.h = h;
                    c.channels = idx % 3 == 1 ? 1 : 3;
                    c.border = b;
                    c.sigma = sigmas[g];
                    c.data = d;
                    c.th = d == DATA_SPIRAL ? (idx % 2 ? TH_PLAIN : TH_AUTO) : idx % TH_N;
                    c.invert = idx % 4 == 3;
                    run_case(&c, with_ref);
                }
    }
    /* spirals: the worst chains for CANNY_ITER */
    static const int sp[][2] = {{300, 200}, {1024, 1024}, {3840, 2160}};
    for (int i = 0; i < 3; i++) {
        struct tcase c = {sp[i][0], sp[i][1], 1, i % 3, DATA_SPIRAL, TH_PLAIN, 0, 1.0};
        if (quick && i >= 1) /* CANNY_ITER: ~1 round a tile of the chain */
            continue;
        run_case(&c, with_ref);
    }
    if (!cpu_only)
        test_refusals();
    printf("# test_canny_gpu: %ld pixels kept in all, %.1f s\n", total_kept, now_s() - t0);
    CHECK_EXIT();
}
