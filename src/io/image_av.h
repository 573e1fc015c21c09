/*
 * image_av.h — still images that stb_image (and the PNG/JPEG decoders)
 * cannot read, decoded by libavcodec's image decoders from memory, and the
 * lossless .tiff/.webp outputs through libavcodec's encoders (DESIGN.md §1.9).
 *
 * Inputs, recognised by their first bytes (as libavformat's image pipe
 * demuxers do), never by name: WebP (lossy and lossless, still), TIFF
 * (classic; the first page), JPEG 2000 (.jp2 and raw .j2k codestreams),
 * OpenEXR, QOI, JPEG-LS, PCX, SGI, Sun raster, XBM, XPM, XWD, DDS,
 * PFM, PHM, PAM, PBM and ASCII PGM/PPM, DPX, PGX.
 *
 * Pixels keep the file's channel count (1 grey, 2 grey+alpha, 3 RGB,
 * 4 RGBA) and depth (8 bits, or 16 bits native endian for anything deeper
 * than 8).  Packed, planar and big-endian 8/16-bit layouts are reordered by
 * hand (no value changes); palettes are expanded; float samples (EXR, PFM,
 * PHM) are taken as they are decoded (linear, no transfer function),
 * clamped to [0, 1] (NaN as 0) and rounded to 16 bits:
 * q = lrintf(v * 65535.0f); Y'CbCr and other depths go through libswscale
 * with SWS_BITEXACT | SWS_ACCURATE_RND.
 */
#ifndef GPUEDGE_IMAGE_AV_H
#define GPUEDGE_IMAGE_AV_H

#include <stddef.h>
#include <stdint.h>
#include "image_io.h"
#include "safeout.h"

/* Does imgav decode (or knowingly refuse) these bytes?  1 yes, 0 no. */
int imgav_sniff(const void *buf, size_t n);

/* Decodes n bytes (imgav_sniff said yes) into *img (zeroed first; pixels
 * malloc'ed, freed by img_free).  `limit` caps what decoding may allocate,
 * all buffers together (img_set_decode_limit).  On failure records
 * "cannot read image: WHY" for NAME (ge_fail_in, DESIGN.md §9) and returns
 * -1 with *img zeroed. */
int imgav_load_mem(const void *buf, size_t n, const char *name, size_t limit,
                   img_image *img);

/* The image size from the file's header, reading only the header.
 * Returns 1 (size set), 0 (an imgav format whose size the header does not
 * say cheaply, or unreadable), -1 (not an imgav format). */
int imgav_probe_file(const char *path, int *width, int *height);

/* Is `ext` (lower case, no dot) an input extension of imgav's formats
 * (batch directories, and vid_probe's "this is an image")? */
int imgav_is_image_ext(const char *ext);

enum imgav_out { IMGAV_OUT_TIFF, IMGAV_OUT_WEBP };

/* Encodes an 8-bit grey plane losslessly (TIFF: grey8, LZW; WebP:
 * libwebp lossless) in memory and writes it through the checked writer.
 * Returns 0, or -1 with the error recorded in `out` (so_fail). */
int imgav_write(so_file *out, enum imgav_out kind, const uint8_t *grey,
                int width, int height, int pitch);

#endif
