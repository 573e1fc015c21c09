/*
 * canny.h — DESIGN.md §1.8 (Canny) on the GPU, after the Sobel stage.
 *
 * The Sobel stage in Canny mode (fused_canny_window_gpu in fused.h, or
 * canny_sobel_gpu below after the staged blur) leaves two planes:
 *   code   one byte a pixel, the NMS direction of (gx, gy):
 *          0 compare with (0,-1), (0,+1)      ay < T1 * ax
 *          1 compare with (-1,0), (+1,0)      ay > T2 * ax
 *          2 compare with (-1,+1), (+1,-1)    diagonal, gx, gy of opposite sign
 *          3 compare with (-1,-1), (+1,+1)    diagonal, same sign
 *   t      float a pixel, t = m * scale (the value the thresholds test).
 * and the histogram of step 6's e (what --canny auto reads).  Then:
 *   canny_auto_gpu  (auto only) LOW/HIGH from that histogram, on the device;
 *   canny_nms_gpu   non-maximum suppression + thresholds: the code plane
 *                   becomes the class plane (0 none, 1 weak candidate,
 *                   2 strong), plus, for the union-find hysteresis, each
 *                   candidate's label inside its 64 x 32 tile;
 *   canny_hyst_gpu  8-connected hysteresis: the class plane becomes the
 *                   edge map (255 / 0, inverted with p->invert) and hist
 *                   its two bins.
 * Only comparisons and set membership after t: bit-identical to ref.
 *
 * Every launcher enqueues on `stream`, never synchronises and returns
 * cudaGetLastError() (or the first failing call's error).  Planes are whole
 * frames (W x H, row 0 first); pitches in elements.
 */
#ifndef GPUEDGE_CANNY_H
#define GPUEDGE_CANNY_H

#include <cuda_runtime_api.h>
#include <stdint.h>
#include "edge.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Hysteresis algorithms (canny_set_method; tests and benchmarks pick):
 *   CANNY_UNION  union-find: labels inside each tile in shared memory
 *                (canny_nms_gpu), one merge pass over the tile borders,
 *                one pass resolving each candidate's root: a fixed number
 *                of kernels, whatever the chains' shape (the default);
 *   CANNY_ITER   strong-flag propagation to a fixpoint: a cooperative
 *                kernel, each iteration a fixpoint inside every tile in
 *                shared memory, grid-wide barrier, repeat while a tile
 *                border changed (no host round trip; a long spiral needs
 *                one iteration per tile it crosses). */
enum { CANNY_UNION = 0, CANNY_ITER = 1 };
void canny_set_method(int method);
int canny_get_method(void);

/* Device bytes of scratch a W x H frame needs beside the code plane (the
 * t plane and the labels), or 0 when the frame is too large for the
 * 31-bit labels (W * H >= 2^31). */
size_t canny_scratch_bytes(int w, int h);
/* The parts of one allocation of canny_scratch_bytes(w, h): the t plane
 * (w floats a row), the labels, 16 bytes of flags (canny_hyst_gpu) and
 * the two auto thresholds (canny_auto_gpu). */
float *canny_t_plane(void *scratch);
uint32_t *canny_labels(void *scratch, int w, int h);
unsigned *canny_flags(void *scratch, int w, int h);
float *canny_thr(void *scratch, int w, int h);

/* --canny auto (edge.h's rule, ge_canny_auto's arithmetic): reads the 256
 * bins of step 6's e (device), writes thr[0] = LOW, thr[1] = HIGH
 * (device), then zeroes hist for canny_hyst_gpu.  n = W * H. */
cudaError_t canny_auto_gpu(unsigned long long *hist, unsigned long long n,
                           float *thr, cudaStream_t stream);

/* Staged path: Sobel of the blurred plane (DESIGN.md §1.4, border-mapped) ->
 * code plane + t plane, ADDING step 6's e bins to hist. */
cudaError_t canny_sobel_gpu(const float *blur, int blur_pitch, int w, int h,
                            uint8_t *code, int code_pitch, float *t,
                            int t_pitch, const ge_params *p,
                            unsigned long long *hist, cudaStream_t stream);

/* NMS: code plane (in place) -> class plane.  thr: device {LOW, HIGH}
 * (auto) or NULL for p->canny_low / p->canny_high.  lab: W*H labels
 * (canny_labels), written for candidates when the method is CANNY_UNION. */
cudaError_t canny_nms_gpu(uint8_t *cls, int pitch, const float *t,
                          int t_pitch, uint32_t *lab, int w, int h,
                          const ge_params *p, const float *thr,
                          cudaStream_t stream);

/* Hysteresis: class plane (in place) -> edge map; ZEROES nothing: hist
 * must be zero (canny_auto_gpu leaves it so; else cudaMemsetAsync) and
 * gets bins 0 and 255 (inverted with p->invert).  flags: 16 bytes of
 * device scratch (CANNY_ITER's barrier flags and its iteration count). */
cudaError_t canny_hyst_gpu(uint8_t *cls, int pitch, uint32_t *lab, int w,
                           int h, const ge_params *p,
                           unsigned long long *hist, unsigned *flags,
                           cudaStream_t stream);

#ifdef __CUDACC__
/* DESIGN.md §1.8's NMS direction of (gx, gy) (the code plane above), for
 * canny.cu and fused.cu's Canny mode alike: 0 (0,-1)/(0,+1), 1 (-1,0)/(+1,0), 2 (-1,+1)/(+1,-1),
 * 3 (-1,-1)/(+1,+1).  T1 = (float)(sqrt(2) - 1), T2 = (float)(sqrt(2) + 1),
 * both rounded once from double. */
static __device__ __forceinline__ unsigned nms_code(float gx, float gy)
{
    const float ax = fabsf(gx), ay = fabsf(gy);
    if (ay < __fmul_rn((float)(1.4142135623730951 - 1.0), ax))
        return 0u;
    if (ay > __fmul_rn((float)(1.4142135623730951 + 1.0), ax))
        return 1u;
    return (gx < 0.0f) != (gy < 0.0f) ? 2u : 3u;
}
#endif

#ifdef __cplusplus
}
#endif
#endif
