/*
 * image_in_png.h — PNG in through libspng, with stb_image's pixels and
 * channel layout (DESIGN.md §1.1, §1.9: a lossless format, so any correct
 * decoder gives the same pixels; tests/unit/test_image_in_png.c proves it).
 */
#ifndef GPUEDGE_IMAGE_IN_PNG_H
#define GPUEDGE_IMAGE_IN_PNG_H

#include <stddef.h>
#include "image_io.h"

enum {
    IMGPNG_OK = 0,        /* decoded into *img */
    IMGPNG_FAILED = -1,   /* refused, why recorded (too large; DESIGN.md §9) */
    IMGPNG_FALLBACK = 1   /* libspng cannot, or might differ from stb: use stb */
};

/* Decodes the PNG in buf as stbi_load(req_comp = 0) / stbi_load_16 would:
 * palette -> RGB (RGBA with tRNS), grey + tRNS -> grey+alpha, RGB + tRNS
 * -> RGBA, 1/2/4-bit grey scaled to 8 bits, 16-bit samples kept (native
 * endian), Adam7 deinterlaced, no gamma.  `limit` caps the decoded image's
 * bytes (checked from the header, before decoding); a larger image records
 * "cannot read image: image too large (WxH)" for NAME and returns
 * IMGPNG_FAILED.  Any error of libspng's returns IMGPNG_FALLBACK with
 * nothing recorded and *img zeroed, so that stb (and its guards) decide:
 * a file stb decodes is never lost to a stricter decoder.  Pixels are
 * malloc'ed (img_free frees them).  Thread-safe: one context a call. */
int imgpng_decode(const void *buf, size_t n, size_t limit, const char *name,
                  img_image *img);

/* libspng's version, as the library says it. */
const char *imgpng_version(void);

#endif
