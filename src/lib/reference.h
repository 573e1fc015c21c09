/*
 * reference.h — the CPU gold (SPEC §2): plain loops, one function a stage,
 * written independently of the kernels and the CPU backend.  Each stage
 * takes the previous stage's plane so --cpu-ref can recompute a stage from
 * the GPU's own input to it and name the stage that broke.
 * All planes are W*H, row-major, tightly packed.
 */
#ifndef GPUEDGE_REFERENCE_H
#define GPUEDGE_REFERENCE_H

#include "edge.h"

/* SPEC §1.1-1.2: frame -> grey plane. */
/* SPEC §1.5 as the reference states it (independently of kernels/border.h):
 * index i mapped into [0, n-1], or -1 where the value is 0 (zero border). */
int ref_border_index(int i, int n, int border);
void ref_grey(const ge_frame *f, float *grey);
/* SPEC §1.3, horizontal pass; with t->radius == 0 it copies. */
void ref_blur_h(const float *in, int w, int h, const ge_taps *t, int border,
                float *out);
/* SPEC §1.3, vertical pass over the horizontal result. */
void ref_blur_v(const float *in, int w, int h, const ge_taps *t, int border,
                float *out);
/* SPEC §1.4 + §1.6: Sobel magnitude of the blurred plane -> 8-bit edge map
 * (scale, threshold, invert from p). */
void ref_sobel(const float *blur, int w, int h, const ge_params *p,
               uint8_t *edge);
/* SPEC §1.7: 256 bins over n edge values. */
void ref_histogram(const uint8_t *edge, size_t n, uint64_t hist[GE_HIST_BINS]);

/* All stages in order; planes->grey/blur_h/blur may be NULL (scratch is
 * allocated then).  Returns 0, or -1 when out of memory. */
int ref_process(const ge_frame *f, const ge_params *p, ge_planes *planes);

#endif
