/*
 * jpeg_ycc_gpu.h — jpeg_ycc.h's upsampling and colour conversion as a
 * kernel: nvJPEG's engines decode a colour JPEG to its Y, Cb and Cr planes
 * (their IDCT is libjpeg-turbo's), and this finishes the pixels the way
 * libjpeg-turbo does, so an image's RGB is the same whichever decoder took
 * it (DESIGN.md §1.9).
 */
#ifndef GPUEDGE_JPEG_YCC_GPU_H
#define GPUEDGE_JPEG_YCC_GPU_H

#include <stdint.h>
#include <cuda_runtime_api.h>
#include "jpeg_ycc.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Interleaved RGB, rows rgb_pitch bytes apart, from the planes p names
 * (all device memory).  Enqueued on `stream`; returns cudaGetLastError(). */
cudaError_t jycc_rgb_gpu(const jycc_planes *p, uint8_t *rgb, size_t rgb_pitch,
                         cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
