/*
 * reference.h — the CPU gold (DESIGN.md §2): plain loops, one function a stage,
 * written independently of the kernels and the CPU backend.  Each stage
 * takes the previous stage's plane so --cpu-ref can recompute a stage from
 * the GPU's own input to it and name the stage that broke.
 * All planes are W*H, row-major, tightly packed.
 */
#ifndef GPUEDGE_REFERENCE_H
#define GPUEDGE_REFERENCE_H

#include "edge.h"

/* DESIGN.md §1.1-1.2: frame -> grey plane. */
/* DESIGN.md §1.5 as the reference states it (independently of kernels/border.h):
 * index i mapped into [0, n-1], or -1 where the value is 0 (zero border). */
int ref_border_index(int i, int n, int border);
void ref_grey(const ge_frame *f, float *grey);
/* DESIGN.md §1.3, horizontal pass; with t->radius == 0 it copies. */
void ref_blur_h(const float *in, int w, int h, const ge_taps *t, int border,
                float *out);
/* DESIGN.md §1.3, vertical pass over the horizontal result. */
void ref_blur_v(const float *in, int w, int h, const ge_taps *t, int border,
                float *out);
/* DESIGN.md §1.4 + §1.6: Sobel magnitude of the blurred plane -> 8-bit edge map
 * (scale, threshold, invert from p). */
void ref_sobel(const float *blur, int w, int h, const ge_params *p,
               uint8_t *edge);
/* DESIGN.md §1.7: 256 bins over n edge values. */
void ref_histogram(const uint8_t *edge, size_t n, uint64_t hist[GE_HIST_BINS]);

/* --- Canny (DESIGN.md §1.8), in three pieces so a checker can name the one that
 * broke.  Every plane W*H, row-major. */

/* DESIGN.md §1.4's gx = R - L and gy = D - T of the blurred plane, per pixel
 * (border-mapped neighbours, exactly as ref_sobel computes them). */
void ref_gradients(const float *blur, int w, int h, int border, float *gx,
                   float *gy);
/* Non-maximum suppression and the two thresholds: t = m * scale with
 * m = sqrtf(fma(gx, gx, gy * gy)); cls[i] = REF_CANNY_NONE, _WEAK (a
 * candidate: passes the NMS test and t > low) or _STRONG (also t > high).
 * A neighbour outside the image has t = 0, whatever the border mode. */
enum { REF_CANNY_NONE = 0, REF_CANNY_WEAK = 1, REF_CANNY_STRONG = 2 };
void ref_canny_nms(const float *gx, const float *gy, int w, int h,
                   float scale, float low, float high, uint8_t *cls);
/* Hysteresis: out = 255 for every candidate joined to a strong pixel by
 * 8-connected candidates, else 0 (a flood fill from the strong pixels).
 * Returns 0, or -1 when out of memory (its stack). */
int ref_canny_hysteresis(const uint8_t *cls, int w, int h, uint8_t *out);
/* Both of the above: the 0/255 Canny map (no --invert). 0 or -1. */
int ref_canny(const float *gx, const float *gy, int w, int h, float scale,
              float low, float high, uint8_t *out);
/* The thresholds a frame uses: p->canny_low/high for GE_CANNY_ON; for
 * GE_CANNY_AUTO, ge_canny_auto() over the histogram of step 6's edge map of
 * this blurred plane (scale, no --threshold, no --invert), computed into
 * the scratch plane `e` (W*H).  0, or -1 when p->canny is off. */
int ref_canny_thresholds(const float *blur, int w, int h, const ge_params *p,
                         uint8_t *e, float *low, float *high);
/* Blurred plane -> the final edge map of a Canny frame: thresholds,
 * gradients, NMS, hysteresis, then --invert.  0, or -1 out of memory. */
int ref_canny_edge(const float *blur, int w, int h, const ge_params *p,
                   uint8_t *edge);

/* All stages in order (with p->canny set, Canny replaces step 6 and
 * --threshold is ignored); planes->grey/blur_h/blur may be NULL (scratch is
 * allocated then).  Returns 0, or -1 when out of memory. */
int ref_process(const ge_frame *f, const ge_params *p, ge_planes *planes);

#endif
