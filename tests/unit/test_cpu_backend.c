/*
 * test_cpu_backend.c — the CPU backend equals the reference bit for bit
 * (grey, blur_h, blur, edge planes and histogram) on random images, over
 * sizes, sigmas, borders, thread counts, channel layouts and edge options.
 * The seed comes from the clock and is printed in every failure line; set
 * GPUEDGE_TEST_SEED to replay one.  The full product of the options would
 * be thousands of runs, so each size x sigma x border cell takes one
 * channel/depth/thread/option combination in turn, and separate sweeps
 * cover every thread count and every layout on one size.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "cpu_backend.h"
#include "edge.h"
#include "reference.h"
#include "util.h"

static const char *border_name[] = { "replicate", "reflect101", "zero" };
static const int thread_counts[] = { 1, 2, 3, 7, 64 };
static unsigned seed;

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

typedef struct config {
    int w, h, channels, bps, threads, border, variant;
    double sigma;
    int video;     /* shift/offset/gain like a limited-range 10-bit source */
    int pad_bytes; /* extra bytes at the end of each row */
} config;

/* the edge options variant v stands for */
static ge_params make_params(const config *c)
{
    ge_params p;

    memset(&p, 0, sizeof p);
    p.sigma = c->sigma;
    p.border = c->border;
    p.scale = 1.0f;
    switch (c->variant % 5) {
    case 1: p.scale = 0.25f; break;
    case 2: p.use_threshold = 1; p.threshold = 60.0f; break;
    case 3: p.scale = 0.5f; p.invert = 1; break;
    case 4: p.use_threshold = 1; p.threshold = 17.5f; p.scale = 2.0f;
            p.invert = 1; break;
    default: break;
    }
    return p;
}

static const char *variant_name(int v)
{
    static const char *n[] = { "scale 1", "scale 0.25", "threshold 60",
                               "scale 0.5 invert", "threshold invert" };
    return n[v % 5];
}

static void describe(const config *c, char *buf, size_t len)
{
    snprintf(buf, len, "%dx%d c%d %d-bit sigma %g %s t%d %s%s%s", c->w, c->h,
             c->channels, 8 * c->bps, c->sigma, border_name[c->border],
             c->threads, variant_name(c->variant), c->video ? " video" : "",
             c->pad_bytes ? " padded" : "");
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    return p;
}

static void planes_alloc(ge_planes *pl, size_t n, int floats)
{
    memset(pl, 0, sizeof *pl);
    if (floats) {
        pl->grey = xmalloc(n * sizeof(float));
        pl->blur_h = xmalloc(n * sizeof(float));
        pl->blur = xmalloc(n * sizeof(float));
        /* junk, so a plane the backend forgets to write shows */
        memset(pl->grey, 0x7f, n * sizeof(float));
        memset(pl->blur_h, 0x7f, n * sizeof(float));
        memset(pl->blur, 0x7f, n * sizeof(float));
    }
    pl->edge = xmalloc(n);
    memset(pl->edge, 0xA5, n);
    memset(pl->hist, 0xA5, sizeof pl->hist);
}

static void planes_free(ge_planes *pl)
{
    free(pl->grey);
    free(pl->blur_h);
    free(pl->blur);
    free(pl->edge);
    memset(pl, 0, sizeof *pl);
}

/* first differing element of two planes of n elements of size sz, or -1 */
static long first_diff(const void *a, const void *b, size_t n, size_t sz)
{
    size_t i;

    if (!memcmp(a, b, n * sz))
        return -1;
    for (i = 0; i < n; i++)
        if (memcmp((const char *)a + i * sz, (const char *)b + i * sz, sz))
            return (long)i;
    return -1;
}

/* One comparison: reference vs backend with all planes, and the backend
 * again with only the edge plane (the path without copies). */
static void compare(const config *c)
{
    const size_t n = (size_t)c->w * c->h;
    const size_t row = (size_t)c->w * c->channels * c->bps + c->pad_bytes;
    const size_t bytes = row * c->h;
    ge_params p = make_params(c);
    ge_frame f;
    ge_planes ref, cpu, cpu2;
    unsigned char *img = xmalloc(bytes);
    char desc[160], name[200], why[200];
    size_t i;
    long d;
    int rc_ref, rc_cpu, rc_cpu2;

    if (c->bps == 1) {
        for (i = 0; i < bytes; i++)
            img[i] = (unsigned char)rng();
    } else {
        for (i = 0; i + 1 < bytes; i += 2) {
            uint16_t v = (uint16_t)rng();
            if (c->video)
                v = (uint16_t)(v & 0xFFC0); /* 10 bits, MSB aligned */
            memcpy(img + i, &v, 2);
        }
    }
    memset(&f, 0, sizeof f);
    f.width = c->w;
    f.height = c->h;
    f.channels = c->channels;
    f.bytes_per_sample = c->bps;
    f.stride = row;
    f.gain = c->bps == 2 ? GE_S16 : 1.0f;
    if (c->video) {
        f.shift = c->bps == 2 ? 6 : 0;
        f.offset = c->bps == 2 ? 64 : 16;
        f.gain = c->bps == 2 ? (float)(255.0 / (219.0 * 4))
                             : (float)(255.0 / 219.0);
    }
    f.data = img;

    planes_alloc(&ref, n, 1);
    planes_alloc(&cpu, n, 1);
    planes_alloc(&cpu2, n, 0);
    rc_ref = ref_process(&f, &p, &ref);
    rc_cpu = cpu_process(&f, &p, c->threads, &cpu, NULL);
    rc_cpu2 = cpu_process(&f, &p, c->threads, &cpu2, NULL);

    describe(c, desc, sizeof desc);
    snprintf(name, sizeof name, "cpu == ref: %s", desc);
    why[0] = 0;
    if (rc_ref || rc_cpu || rc_cpu2) {
        snprintf(why, sizeof why, "rc ref %d cpu %d cpu(edge only) %d", rc_ref,
                 rc_cpu, rc_cpu2);
    } else if ((d = first_diff(ref.grey, cpu.grey, n, 4)) >= 0) {
        snprintf(why, sizeof why, "grey differs at (%ld,%ld): %.9g vs %.9g",
                 d % c->w, d / c->w, ref.grey[d], cpu.grey[d]);
    } else if ((d = first_diff(ref.blur_h, cpu.blur_h, n, 4)) >= 0) {
        snprintf(why, sizeof why, "blur_h differs at (%ld,%ld): %.9g vs %.9g",
                 d % c->w, d / c->w, ref.blur_h[d], cpu.blur_h[d]);
    } else if ((d = first_diff(ref.blur, cpu.blur, n, 4)) >= 0) {
        snprintf(why, sizeof why, "blur differs at (%ld,%ld): %.9g vs %.9g",
                 d % c->w, d / c->w, ref.blur[d], cpu.blur[d]);
    } else if ((d = first_diff(ref.edge, cpu.edge, n, 1)) >= 0) {
        snprintf(why, sizeof why, "edge differs at (%ld,%ld): %d vs %d",
                 d % c->w, d / c->w, ref.edge[d], cpu.edge[d]);
    } else if ((d = first_diff(ref.hist, cpu.hist, GE_HIST_BINS, 8)) >= 0) {
        snprintf(why, sizeof why, "hist[%ld] differs: %llu vs %llu", d,
                 (unsigned long long)ref.hist[d],
                 (unsigned long long)cpu.hist[d]);
    } else if ((d = first_diff(ref.edge, cpu2.edge, n, 1)) >= 0 ||
               memcmp(ref.hist, cpu2.hist, sizeof ref.hist)) {
        snprintf(why, sizeof why, "edge-only run differs (pixel %ld)", d);
    }
    CHECK(!why[0], name, "%s (seed %u)", why, seed);

    planes_free(&ref);
    planes_free(&cpu);
    planes_free(&cpu2);
    free(img);
}

static void sweep_cells(int *counter)
{
    static const int sizes[][2] = { { 1, 1 }, { 1, 7 }, { 7, 1 }, { 6, 5 },
                                    { 33, 17 }, { 321, 241 }, { 1000, 3 },
                                    { 3, 1000 } };
    static const double sigmas[] = { 0.0, 0.5, 1.0, 2.5, 16.0 };
    int si, gi, b;

    for (si = 0; si < (int)(sizeof sizes / sizeof sizes[0]); si++)
        for (gi = 0; gi < (int)(sizeof sigmas / sizeof sigmas[0]); gi++)
            for (b = 0; b < 3; b++) {
                int i = (*counter)++;
                config c;
                memset(&c, 0, sizeof c);
                c.w = sizes[si][0];
                c.h = sizes[si][1];
                c.sigma = sigmas[gi];
                c.border = b;
                c.channels = 1 + i % 4;
                c.bps = 1 + (i / 4) % 2;
                c.threads = thread_counts[i % 5];
                c.variant = i % 5 == 0 ? (i / 5) % 5 : i % 5;
                c.video = i % 11 == 3;
                c.pad_bytes = i % 7 == 2 ? 3 : 0;
                compare(&c);
            }
}

/* every thread count on two sizes; every layout on one */
static void sweep_threads_layouts(void)
{
    int t, ch, bps, b;

    for (t = 0; t < 5; t++) {
        config c;
        memset(&c, 0, sizeof c);
        c.w = 257;
        c.h = 301; /* several bands, last one short */
        c.sigma = 1.0;
        c.border = t % 3;
        c.channels = 3;
        c.bps = 1;
        c.threads = thread_counts[t];
        compare(&c);
        c.w = 40;
        c.h = 130;
        c.sigma = 16.0; /* halo larger than a band's neighbour */
        c.channels = 1;
        compare(&c);
    }
    for (ch = 1; ch <= 4; ch++)
        for (bps = 1; bps <= 2; bps++)
            for (b = 0; b < 3; b += 2) {
                config c;
                memset(&c, 0, sizeof c);
                c.w = 37;
                c.h = 23;
                c.sigma = 2.5;
                c.border = b;
                c.channels = ch;
                c.bps = bps;
                c.threads = 2;
                c.variant = ch + bps;
                compare(&c);
            }
    {
        config c;
        memset(&c, 0, sizeof c);
        c.w = 64;
        c.h = 64;
        c.sigma = 1.0;
        c.channels = 3;
        c.bps = 1;
        c.threads = 0; /* one per CPU */
        compare(&c);
    }
}

/* the portable (non-SIMD) kernels against the reference too */
static void sweep_portable(void)
{
    static const int sizes[][2] = { { 1, 1 }, { 7, 1 }, { 33, 17 },
                                    { 131, 70 } };
    int si, b;

    cpu_hook_no_simd = 1;
    for (si = 0; si < 4; si++)
        for (b = 0; b < 3; b++) {
            config c;
            memset(&c, 0, sizeof c);
            c.w = sizes[si][0];
            c.h = sizes[si][1];
            c.sigma = b == 1 ? 16.0 : 1.0;
            c.border = b;
            c.channels = 3 + (si & 1);
            c.bps = 1 + (b & 1);
            c.threads = 2;
            c.variant = si + b;
            compare(&c);
        }
    cpu_hook_no_simd = 0;
}

static void test_stop_and_errors(void)
{
    const int w = 50, h = 200;
    unsigned char *img = xmalloc((size_t)w * h);
    ge_frame f;
    ge_params p;
    ge_planes pl;
    volatile int stop = 1;
    int rc;

    memset(img, 9, (size_t)w * h);
    memset(&f, 0, sizeof f);
    f.width = w;
    f.height = h;
    f.channels = 1;
    f.bytes_per_sample = 1;
    f.stride = w;
    f.gain = 1.0f;
    f.data = img;
    memset(&p, 0, sizeof p);
    p.sigma = 1.0;
    p.scale = 1.0f;
    planes_alloc(&pl, (size_t)w * h, 0);

    rc = cpu_process(&f, &p, 2, &pl, &stop);
    CHECK(rc == GE_STOPPED, "cpu_process: stop set -> GE_STOPPED", "rc %d", rc);
    stop = 0;
    rc = cpu_process(&f, &p, 2, &pl, &stop);
    CHECK(rc == 0, "cpu_process: stop clear -> 0", "rc %d", rc);
    p.sigma = 0.05;
    rc = cpu_process(&f, &p, 2, &pl, NULL);
    CHECK(rc == -1, "cpu_process: bad sigma -> -1", "rc %d", rc);
    p.sigma = 1.0;
    f.bytes_per_sample = 3;
    rc = cpu_process(&f, &p, 2, &pl, NULL);
    CHECK(rc == -1, "cpu_process: 3 bytes per sample -> -1", "rc %d", rc);
    f.bytes_per_sample = 1;
    f.height = 0;
    rc = cpu_process(&f, &p, 2, &pl, NULL);
    CHECK(rc == -1, "cpu_process: height 0 -> -1", "rc %d", rc);
    planes_free(&pl);
    free(img);
}

int main(void)
{
    const char *s = getenv("GPUEDGE_TEST_SEED");
    int counter = 0;

    seed = s ? (unsigned)strtoul(s, NULL, 10) : (unsigned)time(NULL);
    rng_state = seed ? seed : 1;
    printf("# seed %u\n", seed);

    sweep_cells(&counter);
    sweep_threads_layouts();
    sweep_portable();
    test_stop_and_errors();
    CHECK_EXIT();
}
