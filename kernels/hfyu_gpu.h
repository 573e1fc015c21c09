/*
 * hfyu_gpu.h — FFVHuff frames of 8-bit grey coded on the GPU: the bytes
 * src/io/hfyu_enc.c's hfyu_code writes (FFmpeg's ffvhuff encoder, gray8,
 * median predictor, context 0), for an edge map already in device memory,
 * so that a .mkv output costs the cores only its muxing (DESIGN.md §4).
 *
 * The stream is data-parallel once each pixel's code length is known:
 *   1. hfyu_len: every pixel's median residual (hfyu_enc.h's
 *      predictor, the row-to-row carries included) and its code's length,
 *      summed over tiles of HFYU_TILE pixels in raster order;
 *   2. hfyu_scan: the tiles' bit offsets (one block, exclusive prefix
 *      sums) and the packet's size in bytes (whole 32-bit words);
 *   3. hfyu_pack: each thread its pixels' codes at its offset, most
 *      significant bit first, into 32-bit words stored little-endian as
 *      FFmpeg's byte swap leaves them; the words two threads share are
 *      OR-ed in atomically, the others stored.
 * The codes: 256 entries as hfyu_enc.h's hfyu_tab.cl holds them (code << 5
 * | length, every length 1..16); they go by value (a kernel parameter, 1 KB):
 * nothing to upload.
 */
#ifndef GPUEDGE_HFYU_GPU_H
#define GPUEDGE_HFYU_GPU_H

#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Device bytes the coded stream of a w x h frame may take (every pixel a
 * 16-bit code), a multiple of 4. */
size_t hfyu_gpu_max_bytes(int w, int h);
/* Device scratch hfyu_gpu needs for a w x h frame. */
size_t hfyu_gpu_scratch_bytes(int w, int h);

/* Codes the w x h edge map at `edge` (device, rows `pitch` bytes apart)
 * into `out` (device, hfyu_gpu_max_bytes; zeroed here), and writes the
 * packet's size in bytes to *d_bytes (device).  Enqueued on `stream`;
 * returns cudaGetLastError(). */
cudaError_t hfyu_gpu(const uint8_t *edge, int pitch, int w, int h, const uint32_t *codes,
                     uint32_t *out, void *scratch, unsigned long long *d_bytes,
                     cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
