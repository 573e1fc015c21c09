/*
 * fuzz_common.h — shared by the libFuzzer harnesses: parameters for the
 * CPU reference drawn from one input byte, and the reference run itself
 * (so the math sees the shapes a fuzzed decoder produces: 1..4 channels,
 * 8/16 bit, odd strides, 1-pixel sides).
 */
#ifndef GPUEDGE_FUZZ_COMMON_H
#define GPUEDGE_FUZZ_COMMON_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "edge.h"
#include "reference.h"

/* The reference runs only on frames up to this many pixels: the point is
 * shapes, not throughput. */
#define FUZZ_REF_MAX_PX (64 * 1024)

static ge_params fuzz_params(uint8_t b)
{
    static const double sigmas[4] = { 0.0, 0.1, 1.0, 2.5 };
    ge_params p;
    memset(&p, 0, sizeof p);
    p.sigma = sigmas[b & 3];
    p.border = (b >> 2) % 3;          /* replicate, reflect101, zero */
    p.scale = (b & 0x20) ? 4.0f : 1.0f;
    p.use_threshold = (b & 0x40) != 0;
    p.threshold = 32.0f;
    p.invert = (b & 0x80) != 0;
    return p;
}

/* Runs ref_process over f and checks what it must produce: a histogram
 * that counts every pixel.  Aborts (a finding) when it does not. */
static void fuzz_reference(const ge_frame *f, uint8_t pbyte)
{
    ge_params p = fuzz_params(pbyte);
    ge_planes pl;
    size_t n, total = 0;
    int i;

    if (f->width < 1 || f->height < 1 ||
        (size_t)f->width * (size_t)f->height > FUZZ_REF_MAX_PX)
        return;
    n = (size_t)f->width * (size_t)f->height;
    memset(&pl, 0, sizeof pl);
    pl.edge = malloc(n);
    if (!pl.edge)
        return;
    if (ref_process(f, &p, &pl) != 0)
        abort(); /* valid frame, valid parameters: only OOM may fail */
    for (i = 0; i < GE_HIST_BINS; i++)
        total += pl.hist[i];
    if (total != n)
        abort();
    free(pl.edge);
}

#endif
