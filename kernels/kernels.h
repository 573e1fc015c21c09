/*
 * kernels.h — launchers of the CUDA stages, callable from C.
 *
 * Every launcher enqueues on `stream`, never synchronises, and returns
 * cudaGetLastError().  Arithmetic follows DESIGN.md §1 exactly (explicit
 * __fmaf_rn/__fmul_rn/__fadd_rn, IEEE sqrt, built with -fmad=false), so
 * every plane is bit-identical to the CPU reference.
 *
 * Row windows.  A frame may be processed whole or in horizontal strips
 * (huge images), so the stencil stages take a window of the full image:
 *   H        the full image's height (borders are mapped against it);
 *   in_y0    the image row that the input pointer's first row holds;
 *   in_rows  how many input rows are available from in_y0 (the caller
 *            supplies the halo: every mapped row must fall inside);
 *   y0, rows the output rows to compute; `out` points at row y0's data.
 * A whole frame is in_y0 = 0, in_rows = H, y0 = 0, rows = H.
 * Pitches are in elements (floats for float planes, bytes for 8-bit).
 */
#ifndef GPUEDGE_KERNELS_H
#define GPUEDGE_KERNELS_H

#include <cuda_runtime_api.h>
#include <stdint.h>
#include "edge.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Copies the tap table into __constant__ memory (cudaMemcpyToSymbolAsync on
 * `stream`); later launches on any stream ordered after it see it. */
cudaError_t gaussian_set_taps_gpu(const ge_taps *t, cudaStream_t stream);

/* DESIGN.md §1.1-1.2: an input frame (ge_frame layout; f->data is a DEVICE
 * pointer) -> float grey plane, rows [0, f->height) of the frame. */
cudaError_t grey_gpu(const ge_frame *f, float *grey, int grey_pitch,
                     cudaStream_t stream);

/* DESIGN.md §1.3 horizontal pass over `rows` rows (no vertical halo needed). */
cudaError_t blur_h_gpu(const float *in, int in_pitch, float *out,
                       int out_pitch, int width, int rows, int border,
                       cudaStream_t stream);

/* DESIGN.md §1.3 vertical pass, windowed (see above). */
cudaError_t blur_v_gpu(const float *in, int in_pitch, int width, int H,
                       int in_y0, int in_rows, float *out, int out_pitch,
                       int y0, int rows, int border, cudaStream_t stream);

/* DESIGN.md §1.4 + §1.6: Sobel magnitude -> 8-bit edge map, windowed. */
cudaError_t sobel_gpu(const float *blur, int blur_pitch, int width, int H,
                      int in_y0, int in_rows, uint8_t *edge, int edge_pitch,
                      int y0, int rows, const ge_params *p,
                      cudaStream_t stream);

/* DESIGN.md §1.7: adds the 256-bin histogram of a width x rows edge window to
 * hist (64-bit totals; the caller zeroes it once per frame). */
cudaError_t histogram_gpu(const uint8_t *edge, int edge_pitch, int width,
                          int rows, unsigned long long *hist,
                          cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
