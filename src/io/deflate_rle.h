/*
 * deflate_rle.h — deflate (RFC 1951) with run-length matches only (every
 * match at distance 1, as zlib's Z_RLE strategy) and one dynamic Huffman
 * block: the PNG writer's level 1 (png_out.c).  An edge map's filtered
 * rows are noise around zero with flat stretches: Huffman codes take the
 * noise, runs the flat stretches, and looking for longer-range matches
 * (libdeflate's level 1) costs time without paying (BENCHMARKS.md,
 * "Constants chosen by measurement").
 */
#ifndef GPUEDGE_DEFLATE_RLE_H
#define GPUEDGE_DEFLATE_RLE_H

#include <stddef.h>
#include <stdint.h>

/* Bytes drle_compress may write for n bytes in (enough for any input). */
size_t drle_bound(size_t n);

/* Compresses in[0..n) into out (drle_bound(n) bytes) as one dynamic block,
 * never referring before in[0].  final: the block is the stream's last
 * (BFINAL), padded to a byte; else it is followed by an empty stored
 * block (zlib's sync flush), so that another stream's blocks may follow
 * on the next byte.  Returns the bytes written, 0 out of memory. */
size_t drle_compress(const uint8_t *in, size_t n, uint8_t *out, int final);

#endif
