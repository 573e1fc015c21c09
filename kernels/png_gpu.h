/*
 * png_gpu.h — an edge map's PNG image data coded on the GPU: for each
 * piece of PNG_PIECE_BYTES of its Paeth-filtered rows, the bytes the PNG
 * writer's run-length deflate gives it on the cores (src/io/png_out.c,
 * src/io/deflate_rle.c) and its Adler-32, so that a PNG output costs the
 * cores only its chunks' CRCs and the write (DESIGN.md §4).
 *
 * The steps (kernels/drle_core.h says why each byte's token depends only
 * on its stretch of equal bytes; tests/unit/test_drle_steps.c runs them on
 * the CPU against drle_compress):
 *   1. the filtered rows (filter byte 4, then Paeth), row 0 against zeros;
 *   2. each byte's stretch: where it starts (an inclusive max-scan of the
 *      breaks) and ends (a min-scan from the right), a piece's first byte
 *      a break;
 *   3. per piece, the tokens' counts and the Adler-32 sums;
 *   4. per piece, one thread: the Huffman tables and the block header;
 *   5. each token's bits, their offsets (an exclusive prefix sum: 32-bit,
 *      wrapping, since only differences inside a piece are used);
 *   6. each token's bits OR-ed in at its offset (64-bit atomics);
 *   7. per piece, one thread: the end of block, the trailer, the length.
 */
#ifndef GPUEDGE_PNG_GPU_H
#define GPUEDGE_PNG_GPU_H

#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Where a w x h map's pieces go: `rows` rows each (the PNG writer's
 * PNG_PIECE_BYTES / (w + 1), at least 1), npieces of them, piece k's
 * bytes at out + k * cap. */
typedef struct png_gpu_geom {
    int w, h, rows, npieces;
    size_t cap;
} png_gpu_geom;

/* The geometry for a w x h map cut every `rows` rows; 0, or -1 when the
 * map is beyond this coder (2^31 filtered bytes or more, or more than
 * 65,535 pieces). */
int png_gpu_geom_of(int w, int h, int rows, png_gpu_geom *g);
/* Device scratch the coder needs for g (the scans' included); 0 if CUDA
 * cannot say (no device). */
size_t png_gpu_scratch_bytes(const png_gpu_geom *g);
/* Device bytes of the output: npieces * cap. */
size_t png_gpu_out_bytes(const png_gpu_geom *g);

/* The per-thread stack the coder's table step needs (its one thread a
 * piece builds the Huffman codes in about 2 KB of local arrays), or 0 if
 * CUDA cannot say.  Above the default limit (1 KB) the driver raises the
 * limit at the first launch, reserving that much local memory for every
 * thread the device can hold (hundreds of MB on a large GPU): a caller raises
 * cudaLimitStackSize to this first, before it sizes its buffers by what
 * memory is free. */
size_t png_gpu_stack_bytes(void);

/* Codes the map at `edge` (device, rows `pitch` bytes apart) into `out`
 * (device, png_gpu_out_bytes, 8-byte aligned; zeroed here): piece k's
 * deflate data (joinable but the last, as drle_compress(..., final)) at
 * out + k * g->cap, its length in lens[k] and the Adler-32 of its filtered
 * bytes in adler[k] (device arrays of npieces).  Enqueued on `stream`;
 * returns the first error. */
cudaError_t png_gpu_code(const uint8_t *edge, int pitch, const png_gpu_geom *g, void *scratch,
                         size_t scratch_bytes, uint8_t *out, uint32_t *lens, uint32_t *adler,
                         cudaStream_t stream);

/* png_gpu_code's pieces (out, lens: device) back to back into dst
 * (device, dst_cap bytes; what would go past it is left out).  Enqueued
 * on `stream`. */
cudaError_t png_gpu_compact(const png_gpu_geom *g, const uint8_t *out, const uint32_t *lens,
                            uint8_t *dst, size_t dst_cap, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
