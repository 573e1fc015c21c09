/*
 * png_out.h — the PNG writer for 8-bit grey planes (edge maps): our own
 * chunks (signature, IHDR grey 8-bit, IDAT, IEND), our run-length deflate
 * (deflate_rle.h) or libdeflate behind them.
 *
 * A large image is cut into pieces of whole rows, a fixed number of
 * filtered bytes each (from the image's width only, never from the thread
 * count), deflated independently on several threads and joined into one
 * zlib stream.  So the bytes depend on the image, the level, the filter
 * and (levels 2..12) the libdeflate version, never on --threads.
 */
#ifndef GPUEDGE_PNG_OUT_H
#define GPUEDGE_PNG_OUT_H

#include <stddef.h>
#include <stdint.h>
#include "safeout.h"

/* 0 stores, 1 runs only (deflate_rle.h: the fastest, and on edge maps
 * smaller than libdeflate's level 1), 2 .. 12 libdeflate's levels (12
 * the smallest). */
#define PNG_LEVEL_MIN 0
#define PNG_LEVEL_MAX 12
#define PNG_LEVEL_RLE 1
#define PNG_LEVEL_DEFAULT PNG_LEVEL_RLE

/* PNG row filters (the values are the PNG filter-type bytes), and the
 * per-row choice (libpng's minimum sum of absolute differences over the
 * five). */
enum {
    PNG_FILTER_NONE = 0,
    PNG_FILTER_SUB = 1,
    PNG_FILTER_UP = 2,
    PNG_FILTER_AVG = 3,
    PNG_FILTER_PAETH = 4,
    PNG_FILTER_MINSUM = 5,
    PNG_FILTER_DEFAULT = -1
};

typedef struct png_opts {
    int level;          /* PNG_LEVEL_MIN..PNG_LEVEL_MAX */
    int filter;         /* PNG_FILTER_*; DEFAULT = the measured choice */
    int threads;        /* at most this many threads; 0 = one per CPU */
    size_t piece_bytes; /* filtered bytes a piece (rounded to whole rows);
                           0 = PNG_PIECE_BYTES.  Changes the bytes. */
} png_opts;

/* Filtered bytes a piece: small enough that a 14.7 Mpx image gives every
 * one of 16 cores several pieces, large enough that the independent
 * pieces cost little compression (docs/bench-log.md, "PNG writer"). */
#define PNG_PIECE_BYTES (512u * 1024u)

/* The defaults png_write uses (the CLI's --png-level and --threads).
 * Set them before writing starts (not synchronised). */
void png_set_defaults(int level, int threads);

/* Encodes width x height grey bytes (pitch bytes a row) as a PNG in
 * memory: *png (free() it) of *len bytes.  o NULL: the defaults.
 * Returns 0, or -1 with errno (EINVAL bad arguments, ENOMEM). */
int png_encode(const uint8_t *grey, int width, int height, size_t pitch,
               const png_opts *o, uint8_t **png, size_t *len);

/* The same written to an open output with the defaults.  0, or -1 with
 * the error recorded in the so_file. */
int png_write(so_file *out, const uint8_t *grey, int width, int height,
              size_t pitch);

/* A PNG of a width x height map from image data coded elsewhere: the
 * GPU's coder (kernels/png_gpu.h) gives, for the defaults (level 1, the
 * Paeth filter) and `rows` rows a piece (PNG_PIECE_BYTES / (width + 1)),
 * the pieces encode_pieces would: npieces of them back to back in z,
 * piece k lens[k] bytes, adler[k] the Adler-32 of its filtered rows.
 * The same file png_write / png_encode make from the map.  0, or -1
 * with errno (png_encode_coded) or the error recorded (png_write_coded). */
int png_encode_coded(int width, int height, int rows, int npieces, const uint8_t *z,
                     const uint32_t *lens, const uint32_t *adler, uint8_t **png, size_t *len);
int png_write_coded(so_file *out, int width, int height, int rows, int npieces,
                    const uint8_t *z, const uint32_t *lens, const uint32_t *adler);

#endif
