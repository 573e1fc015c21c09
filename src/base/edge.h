/*
 * edge.h — the definitions every implementation of DESIGN.md §1 shares:
 * parameters, border modes, the Gaussian tap table and the input-frame
 * descriptor.  Nothing here computes a pixel: the reference, the CPU
 * backend and the kernels each do that on their own, and are checked
 * against one another.  Plain C, also included by nvcc.
 */
#ifndef GPUEDGE_EDGE_H
#define GPUEDGE_EDGE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* --sigma limits (DESIGN.md §1.3): 0 (no blur) or GE_SIGMA_MIN..GE_SIGMA_MAX. */
#define GE_SIGMA_MIN 0.1
#define GE_SIGMA_MAX 16.0
/* radius = max(1, ceil(2 sigma)) so sigma 16 gives 32. */
#define GE_MAX_RADIUS 32
#define GE_MAX_TAPS (2 * GE_MAX_RADIUS + 1)
#define GE_HIST_BINS 256

#include "ge_modes.h" /* enum ge_border, enum ge_canny */

/* What the user asked for (the numeric part of the command line). */
typedef struct ge_params {
    double sigma;        /* 0 = no blur */
    int border;          /* enum ge_border */
    float scale;         /* > 0, default 1 */
    int use_threshold;   /* --threshold given */
    float threshold;     /* 0..255 */
    int invert;          /* e = 255 - e, applied last */
    int canny;           /* enum ge_canny: replaces step 6's edge map */
    float canny_low;     /* GE_CANNY_ON: thresholds on t = m * scale, */
    float canny_high;    /* 0 <= low <= high (DESIGN.md §1.8) */
} ge_params;

/* The Gaussian as every implementation uses it (DESIGN.md §1.3).  radius 0 means
 * "no blur" (sigma 0): the blurred plane is the grey plane. */
typedef struct ge_taps {
    int radius;
    float w[GE_MAX_TAPS]; /* w[k + radius] for k = -radius..radius */
} ge_taps;

/* Builds the tap table for sigma (double precision, normalised, rounded
 * once to float).  Returns 0, or -1 when sigma is out of range. */
int ge_taps_make(double sigma, ge_taps *t);

/* One input frame as it sits in (host or device) memory: interleaved
 * samples, 1..4 channels, 1 or 2 bytes each (native endian).  Each channel
 * value v becomes c = (float)((int)(v >> shift) - offset) * gain
 * (DESIGN.md §1.1/§1.2: images have offset 0 and gain 1 or S16; video luma has
 * the range expansion).  With 3 or 4 channels (R, G, B[, A]) the grey value
 * is the RGB formula; with 1 or 2 (grey[, alpha]) it is c of channel 0. */
typedef struct ge_frame {
    int width, height;
    int channels;          /* 1..4 */
    int bytes_per_sample;  /* 1 or 2 */
    size_t stride;         /* bytes between rows (>= width*channels*bps) */
    int shift;             /* right shift undoing MSB alignment (P010); 0 */
    int offset;            /* subtracted before the gain (limited range) */
    float gain;            /* 1, S16, or the range-expansion factor */
    const void *data;
} ge_frame;

/* (float)(255.0 / 65535.0), DESIGN.md §1.1 */
#define GE_S16 ((float)(255.0 / 65535.0))

/* The planes one frame produces.  The float planes are optional outputs
 * (NULL when nobody asked for them); edge and hist are always produced. */
typedef struct ge_planes {
    float *grey;   /* W*H */
    float *blur_h; /* W*H, horizontal pass */
    float *blur;   /* W*H, both passes (== grey when sigma is 0) */
    uint8_t *edge; /* W*H */
    uint64_t hist[GE_HIST_BINS];
} ge_planes;

/* --canny auto's thresholds (DESIGN.md §1.8) from the frame's own
 * pre-Canny edge-map histogram: hist = step 7's 256 bins of e, n = W*H.
 * c = the smallest code with 10 * (hist[0] + ... + hist[c]) >= 7 * n
 * (integers), HIGH = (float)c + 0.5f (so at most ~30 % of pixels have
 * t > HIGH, since e <= c exactly when t < c + 0.5), LOW = 0.4f * HIGH
 * (MATLAB's edge() rule on our histogram).  Every backend uses this one
 * function, so auto is as bit-exact as explicit thresholds. */
void ge_canny_auto(const uint64_t hist[GE_HIST_BINS], uint64_t n,
                   float *low, float *high);

#ifdef __cplusplus
}
#endif
#endif
