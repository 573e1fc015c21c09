/*
 * fused.h — the whole of DESIGN.md §1 (grey, blur H, blur V, Sobel, quantise,
 * histogram) as ONE CUDA kernel: 8/16-bit input frame in, 8-bit edge map and
 * 256-bin histogram out; no float plane ever reaches device memory.
 * Bit-identical to the staged kernels (kernels.h) and to ref_process.
 *
 * Taps: the fused kernel keeps its own __constant__ tap table (it does not
 * depend on gaussian.cu); set it with fused_set_taps_gpu before the first
 * launch, and pass the same radius to the launchers (a mismatch is
 * cudaErrorInvalidValue).  Like gaussian_set_taps_gpu, the copy is ordered
 * on `stream`; do not change the taps while a fused kernel of another
 * stream may still read them.
 *
 * Every launcher enqueues on `stream`, never synchronises, and returns
 * cudaGetLastError() (or the first failing call's error).  Launches are
 * capturable in a CUDA graph (no host-side waits, no allocation).
 */
#ifndef GPUEDGE_FUSED_H
#define GPUEDGE_FUSED_H

#include <cuda_runtime_api.h>
#include <stdint.h>
#include "edge.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Copies t's taps into the fused kernel's __constant__ table
 * (cudaMemcpyToSymbolAsync on `stream`). */
cudaError_t fused_set_taps_gpu(const ge_taps *t, cudaStream_t stream);

/* The whole frame: f->data is a DEVICE pointer to f->height rows.  Zeroes
 * hist (cudaMemsetAsync, 2 KB) and then adds the frame's 256 bins to it;
 * hist may be NULL (no histogram).  edge: f->width x f->height bytes,
 * edge_pitch bytes a row (>= width).  radius must equal the radius of the
 * last fused_set_taps_gpu. */
cudaError_t fused_gpu(const ge_frame *f /* device data */, uint8_t *edge,
                      int edge_pitch, const ge_params *p, int radius,
                      unsigned long long *hist, cudaStream_t stream);

/* Row window (kernels.h conventions): the image is f->width x H; f->data
 * holds image rows [in_y0, in_y0 + f->height) (the caller supplies the
 * halo: every row that outputs [y0, y0 + rows) read, radius + 1 away and
 * border-mapped against H, must be there, else cudaErrorInvalidValue);
 * edge points at output row y0.  ADDS the window's bins to hist (the
 * caller zeroes it once a frame); hist may be NULL. */
cudaError_t fused_window_gpu(const ge_frame *f, int H, int in_y0,
                             uint8_t *edge, int edge_pitch, int y0, int rows,
                             const ge_params *p, int radius,
                             unsigned long long *hist, cudaStream_t stream);

/* Canny's first half (DESIGN.md §1.8, canny.h): the same kernel, but each
 * output pixel's edge byte becomes its NMS direction code (0..3, canny.h)
 * and t = m * scale (float, exactly ref's) goes to t (t_pitch floats a
 * row, >= width; t points at row y0 like code).  hist ADDS step 6's e bins
 * (no threshold, no invert: what --canny auto reads).  Same row-window
 * rules as fused_window_gpu. */
cudaError_t fused_canny_window_gpu(const ge_frame *f, int H, int in_y0,
                                   uint8_t *code, int code_pitch, float *t,
                                   int t_pitch, int y0, int rows,
                                   const ge_params *p, int radius,
                                   unsigned long long *hist,
                                   cudaStream_t stream);

/* Tests and tuning: caps the blocks a tile column gets (each then loops
 * over more row tiles, prefetching the next); 0 (default) = automatic,
 * about one resident wave. */
void fused_set_max_grid_y(int n);

#ifdef __cplusplus
}
#endif
#endif
