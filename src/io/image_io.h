/*
 * image_io.h — images in (PNG: libspng, image_in_png.c; JPEG: libjpeg-turbo,
 * image_in_jpeg.c; every other format stb_image reads: stb) and out
 * (PNG by png_out.c over libdeflate, PGM by us, the others through
 * stb_image_write's *_to_func writers; all through safeout).
 */
#ifndef GPUEDGE_IMAGE_IO_H
#define GPUEDGE_IMAGE_IO_H

#include <stddef.h>
#include <stdint.h>
#include "edge.h"
#include "safeout.h"

typedef struct img_image {
    int width, height;
    int channels;        /* native: 1 grey, 2 grey+alpha, 3 RGB, 4 RGBA */
    int bytes_per_sample;/* 1, or 2 for 16-bit files (stbi_load_16) */
    void *pixels;        /* owned; free with img_free */
    const char *decoder; /* which library made the pixels (static text):
                            "libspng", "libjpeg-turbo", "stb_image" */
} img_image;

enum img_format {
    IMG_FMT_UNKNOWN = -1,
    IMG_FMT_PNG, IMG_FMT_JPG, IMG_FMT_BMP, IMG_FMT_TGA, IMG_FMT_PGM,
    IMG_FMT_TIFF, IMG_FMT_WEBP /* lossless, through libavcodec (image_av.c) */
};

/* Is this path an image by its extension, and which output format? */
int img_format_from_path(const char *path);
/* Does stb recognise the file's contents (for batch dispatch)? */
int img_probe(const char *path);
/* The same, with the image's size from its header. */
int img_probe_size(const char *path, int *width, int *height);

/* Loads path; on failure records "cannot read image: WHY" for PATH (the
 * caller prints it: ge_err_why, DESIGN.md §9) and returns -1 with *img
 * zeroed. */
int img_load(const char *path, img_image *img);
/* The same for n bytes in memory (what img_load does after reading the
 * file; the fuzz harness calls it directly).  `name` (NULL: "(memory)")
 * only names the file in the record; buf is not kept. */
int img_load_mem(const void *buf, size_t n, const char *name, img_image *img);
/* Caps what decoding one image may allocate (the image and the decoder's
 * working buffers, estimated per format); larger images fail with "image
 * too large".  0 restores the default, INT_MAX bytes (stb's ceiling).
 * Set it before loading starts (not synchronised). */
void img_set_decode_limit(size_t bytes);
/* JPEG decoder: libjpeg-turbo (default, the pixels of OpenCV and Pillow)
 * or stb_image (the pixels of gpuedge before 2026-12).  Set before loading
 * starts (not synchronised), as img_set_decode_limit. */
enum img_jpeg_decoder { IMG_JPEG_TURBO, IMG_JPEG_STB };
void img_set_jpeg_decoder(int which);
/* Apply a JPEG's EXIF orientation after decoding (1, the default: what
 * cv2.imread and image viewers show) or keep the stored pixels (0). */
void img_set_auto_orient(int on);
/* "libspng X (PNG), libjpeg-turbo Y (JPEG)" for --version. */
void img_versions(char *buf, size_t n);
void img_free(img_image *img);
/* Describes a loaded image as a frame (gain S16 for 16-bit). */
ge_frame img_as_frame(const img_image *img);

/* Writes an 8-bit grey plane (pitch bytes per row) in format `fmt` to an
 * open output.  Returns 0 or -1 (the so_file records the error). */
int img_write(so_file *out, int fmt, const uint8_t *grey, int width,
              int height, int pitch);

#endif
