/*
 * image_in_stb.h — what stb_image v2.27 does not check for itself: a file
 * that ends before its pixel data does.  stb reads zeros past the end of
 * its input and says nothing, so a cut BMP, TGA or GIF decodes to rows of
 * garbage, and a bare header claiming 20000x20000 pixels makes it allocate
 * the whole image before finding nothing to read.
 */
#ifndef GPUEDGE_IMAGE_IN_STB_H
#define GPUEDGE_IMAGE_IN_STB_H

#include <stddef.h>

/* 1 when the file is shorter than its header says its pixel data must be
 * (BMP, TGA plain and RLE, GIF, PSD, PIC: walked or counted from the header,
 * before anything of the image's size is allocated), else 0.  Files of
 * other formats, and headers stb itself refuses, give 0. */
int imgstb_short(const unsigned char *d, size_t n);

/* stbi_load_from_memory (req_comp) or, with is16, stbi_load_16, fed
 * through stb's callbacks so that a decoder reading past the end of the
 * data is seen: *ran_off is then 1 (the pixels, zeros past the end, are
 * still returned; the caller refuses them). */
void *imgstb_load(const unsigned char *d, size_t n, int is16, int req_comp,
                  int *w, int *h, int *comp, int *ran_off);

/* Forgets stb's failure reason (third_party/stb_impl.c). */
void imgstb_clear_reason(void);

/* "PNG", "BMP", "GIF", ... by the signature stb goes by; "TGA" for the
 * rest (stb tries TGA last, it has no signature). */
const char *imgstb_format(const unsigned char *d, size_t n);

#endif
