/*
 * image_in_jpeg.h — JPEG in through libjpeg-turbo (DESIGN.md §1.9: the pixels
 * OpenCV, Pillow, ImageMagick and libvips decode), and the EXIF
 * orientation of a JPEG, applied to any decoded image.
 */
#ifndef GPUEDGE_IMAGE_IN_JPEG_H
#define GPUEDGE_IMAGE_IN_JPEG_H

#include <stddef.h>
#include "image_io.h"

/* Does buf start like a JPEG (SOI and a marker)? */
int imgjpg_is_jpeg(const void *buf, size_t n);

/* Decodes the JPEG in buf with libjpeg's defaults (ISLOW IDCT, fancy
 * upsampling): grey -> 1 channel, YCbCr/RGB -> RGB, CMYK/YCCK -> RGB the
 * way OpenCV's imread converts them (Adobe's inverted CMYK).  `limit`
 * caps what decoding allocates: the image, plus libjpeg's whole-image
 * coefficient buffers for progressive and multi-scan files.  Refused with
 * "cannot read image: WHY" recorded for NAME (DESIGN.md §9): a truncated file,
 * a fatal libjpeg error, 12-bit and lossless JPEGs, more than 500 scans,
 * an unknown colour space.  Recoverable corruption that libjpeg warns
 * about ("Corrupt JPEG data: N extraneous bytes") decodes, as in Pillow
 * and OpenCV (a notice under -v).  Returns 0 or -1 (*img zeroed).
 * Thread-safe: one decompressor a call. */
int imgjpg_decode(const void *buf, size_t n, size_t limit, const char *name,
                  img_image *img);

/* The EXIF orientation (TIFF tag 0x0112, 1..8) from the first APP1 Exif
 * segment before the first scan; 1 when there is none or it is invalid.
 * Every read is bounds-checked against n. */
int imgjpg_exif_orientation(const void *buf, size_t n);

/* Applies orientation o (2..8; 1 and others: nothing) to the image, as
 * PIL's ImageOps.exif_transpose and cv2.imread do: 5..8 swap width and
 * height.  Returns 0, or -1 when out of memory (the image unchanged). */
int imgjpg_orient(img_image *img, int o);

/* libjpeg-turbo's version (the headers built against). */
const char *imgjpg_version(void);

#endif
