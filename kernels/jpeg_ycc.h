/*
 * jpeg_ycc.h — the last two steps of libjpeg-turbo's colour JPEG decoding,
 * chroma upsampling and YCbCr -> RGB, exactly as libjpeg-turbo does them at
 * its defaults (do_fancy_upsampling, the integer colour tables), from the
 * planes its IDCT (or an identical one: nvJPEG's JPEG engines, DESIGN.md
 * §1.9) left.  One copy for C and CUDA: the nvJPEG path's kernel
 * (jycc_rgb_gpu, jpeg_ycc_gpu.h) and the CPU test that proves it against libjpeg-turbo
 * itself (tests/unit/test_jpeg_ycc.c) compute every pixel with jycc_pixel.
 *
 * Upsampling, per libjpeg-turbo's jdsample.c (the method depends on the
 * component's expansion hx x vx and its downsampled width cw):
 *   1x1          none;
 *   2x1, cw > 2  "fancy": a triangle filter, 3/4 of the nearer sample and
 *                1/4 of the other, rounding biases 1 and 2 alternating;
 *   1x2          the same vertically;
 *   2x2, cw > 2  the same in both directions (biases 8 and 7 on the sum);
 *   any other    each sample repeated hx x vx times (4:1:1, 4:1:0, and
 *                2x1 / 2x2 planes of at most two samples a row).
 * Outside the plane (cw x ch samples) the nearest edge sample stands in:
 * libjpeg-turbo's context rows and end columns repeat the edge the same way.
 * Colour (jdcolor.c): 16-bit fixed point, rounded by adding 1/2 before the
 * arithmetic right shift, clamped to 0..255.
 */
#ifndef GPUEDGE_JPEG_YCC_H
#define GPUEDGE_JPEG_YCC_H

#include <stdint.h>

#ifdef __CUDACC__
#define JYCC_FN static __host__ __device__ __forceinline__
#else
#define JYCC_FN static inline
#endif

/* How a chroma plane is brought to full size (libjpeg-turbo's choice). */
enum jycc_up { JYCC_FULL, JYCC_BOX, JYCC_H2V1, JYCC_H1V2, JYCC_H2V2 };

/* A decoded colour JPEG as three planes (device or host memory). */
typedef struct jycc_planes {
    const uint8_t *y, *cb, *cr;
    int y_pitch, c_pitch; /* bytes between rows */
    int width, height;    /* the image (and the Y plane) */
    int cw, ch;           /* the chroma planes' samples: ceil(width / hx) x ceil(height / vx) */
    int hx, vx;           /* chroma expansion: 1, 2 or 4 across; 1 or 2 down */
    int up;               /* enum jycc_up, from jycc_method */
} jycc_planes;

/* libjpeg-turbo's method for expansion hx x vx and chroma width cw. */
JYCC_FN int jycc_method(int hx, int vx, int cw)
{
    if (hx == 1 && vx == 1)
        return JYCC_FULL;
    if (hx == 2 && vx == 1)
        return cw > 2 ? JYCC_H2V1 : JYCC_BOX;
    if (hx == 1 && vx == 2)
        return JYCC_H1V2;
    if (hx == 2 && vx == 2)
        return cw > 2 ? JYCC_H2V2 : JYCC_BOX;
    return JYCC_BOX;
}

JYCC_FN int jycc_clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

/* Chroma plane c's sample for image pixel (x, y). */
JYCC_FN int jycc_chroma(const jycc_planes *p, const uint8_t *c, int x, int y)
{
    const int pitch = p->c_pitch;
    switch (p->up) {
    case JYCC_FULL:
        return c[(long)y * pitch + x];
    case JYCC_H2V1: {
        const uint8_t *row = c + (long)y * pitch;
        const int i = x >> 1, odd = x & 1;
        const int j = odd ? jycc_clampi(i + 1, 0, p->cw - 1) : jycc_clampi(i - 1, 0, p->cw - 1);
        return (3 * row[i] + row[j] + 1 + odd) >> 2;
    }
    case JYCC_H1V2: {
        const int k = y >> 1, odd = y & 1;
        const int far = odd ? jycc_clampi(k + 1, 0, p->ch - 1) : jycc_clampi(k - 1, 0, p->ch - 1);
        return (3 * c[(long)k * pitch + x] + c[(long)far * pitch + x] + 1 + odd) >> 2;
    }
    case JYCC_H2V2: {
        const int k = y >> 1, i = x >> 1, odd = x & 1;
        const int far = (y & 1) ? jycc_clampi(k + 1, 0, p->ch - 1) : jycc_clampi(k - 1, 0, p->ch - 1);
        const int j = odd ? jycc_clampi(i + 1, 0, p->cw - 1) : jycc_clampi(i - 1, 0, p->cw - 1);
        const uint8_t *rn = c + (long)k * pitch, *rf = c + (long)far * pitch;
        const int si = 3 * rn[i] + rf[i], sj = 3 * rn[j] + rf[j];
        return (3 * si + sj + 8 - odd) >> 4;
    }
    default:
        return c[(long)(y / p->vx) * pitch + x / p->hx];
    }
}

/* Image pixel (x, y) as R, G, B. */
JYCC_FN void jycc_pixel(const jycc_planes *p, int x, int y, uint8_t *rgb)
{
    /* FIX(1.40200), FIX(0.71414), FIX(0.34414), FIX(1.77200) at 16 bits */
    const int l = p->y[(long)y * p->y_pitch + x];
    const int cb = jycc_chroma(p, p->cb, x, y) - 128, cr = jycc_chroma(p, p->cr, x, y) - 128;
    const int half = 1 << 15;
    rgb[0] = (uint8_t)jycc_clampi(l + ((91881 * cr + half) >> 16), 0, 255);
    rgb[1] = (uint8_t)jycc_clampi(l + ((-46802 * cr - 22554 * cb + half) >> 16), 0, 255);
    rgb[2] = (uint8_t)jycc_clampi(l + ((116130 * cb + half) >> 16), 0, 255);
}

#endif
