/*
 * gpu_test.h — what the GPU test programs share: a seeded random source
 * (splitmix64; the seed is printed so a failure can be rerun), a clock,
 * and allocations that end the run with a "not ok" line when they fail.
 * Header-only (static functions): each test is one translation unit.
 */
#ifndef GPUEDGE_GPU_TEST_H
#define GPUEDGE_GPU_TEST_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include "cuda_check.h"

static const char *const border_name[3] = {"replicate", "reflect101", "zero"};

/* DESIGN.md §1.5, written again for the tests (they share no code with the
 * kernels): the in-image index, or -1 for "0" (zero border). */
static inline int map_index(int i, int n, int border)
{
    if (i >= 0 && i < n)
        return i;
    if (border == 2 /* GE_BORDER_ZERO */)
        return -1;
    if (border == 1 /* GE_BORDER_REFLECT101 */) {
        if (n == 1)
            return 0;
        i = abs(i) % (2 * n - 2);
        return i >= n ? 2 * n - 2 - i : i;
    }
    return i < 0 ? 0 : n - 1;
}

static uint64_t rng_state;

static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static unsigned rnd_below(unsigned n) { return (unsigned)(rnd() % n); }

/* A pixel of an 8-bit test map, by kind: 0 flat, 1 ramp, 2 sparse
 * (edge-map-like), 3 noise, 4 checkerboard, 5 small noise, else all 255
 * (the coders' tests: hfyu_gpu, png_gpu). */
static uint8_t map_pixel(int kind, int x, int y) __attribute__((unused));
static uint8_t map_pixel(int kind, int x, int y)
{
    uint64_t r = rnd();
    switch (kind) {
    case 0: return 0;
    case 1: return (uint8_t)(x + 2 * y);
    case 2: return rnd_below(256) < 20 ? (uint8_t)(r >> 8) : 0;
    case 3: return (uint8_t)(r >> 16);
    case 4: return (x + y) & 1 ? 255 : 0;
    case 5: return (uint8_t)(128 + (int)((r >> 20) & 15) - 8);
    default: return 255;
    }
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Aborts the whole run on a CUDA failure outside a checked stage: the
 * device may hold a sticky error, so later results would mean nothing. */
#define MUST(call)                                                          \
    do {                                                                    \
        if (CUDA_CHECK(call) != cudaSuccess) {                              \
            printf("not ok cuda-call: %s failed at %s:%d\n", #call,         \
                   __FILE__, __LINE__);                                     \
            exit(1);                                                        \
        }                                                                   \
    } while (0)

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        printf("not ok host-memory: malloc(%zu) failed\n", n);
        exit(1);
    }
    return p;
}

static void *dmalloc(size_t n)
{
    void *p = NULL;
    MUST(cudaMalloc(&p, n ? n : 1));
    return p;
}

/* Compares two 8-bit planes exactly: one CHECK line "STAGE CASE" with the
 * count of differing pixels, max |d| and the first difference.  Needs
 * check.h included first.  Returns 1 when equal. */
static int cmp_u8(const char *stage, const char *cname, const uint8_t *gpu,
                  const uint8_t *ref, int w, int h)
{
    size_t bad = 0;
    int maxd = 0;
    long fx = -1, fy = -1;
    int fg = 0, fr = 0;
    char name[256];

    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            const size_t i = (size_t)y * w + x;
            if (gpu[i] == ref[i])
                continue;
            const int d = abs((int)gpu[i] - (int)ref[i]);
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
          "%zu of %zu pixels differ, max |d| %d, first at (%ld,%ld): "
          "gpu %d ref %d",
          bad, (size_t)w * h, maxd, fx, fy, fg, fr);
    return bad == 0;
}

#endif
