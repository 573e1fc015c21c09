/*
 * test_jpeg_ycc — kernels/jpeg_ycc.h against libjpeg-turbo itself: for
 * colour JPEGs in every chroma sampling libjpeg writes (4:4:4, 4:2:2,
 * 4:2:0, 4:4:0, 4:1:1, 4:1:0), sizes from 1x1 up with odd edges, and
 * content from smooth to sharp colour edges, the RGB jycc_pixel computes
 * from libjpeg-turbo's own downsampled planes (raw_data_out) equals, byte
 * for byte, the RGB gpuedge's JPEG decoder gives (img_load_mem).  The
 * nvJPEG path's kernel runs the same jycc_pixel on the GPU
 * (tests/gpu/test_nvjpeg.c checks it there).
 */
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>

#include "check.h"
#include "image_io.h"
#include "jpeg_ycc.h"

typedef struct jerr {
    struct jpeg_error_mgr pub;
    jmp_buf jb;
} jerr;

static void on_error(j_common_ptr c)
{
    longjmp(((jerr *)c->err)->jb, 1);
}

/* An RGB test picture: kind 0 smooth gradients, 1 noise, 2 hard colour
 * blocks and stripes (the upsampler's worst case). */
static unsigned char *picture(int w, int h, int kind, unsigned seed)
{
    unsigned char *p = malloc((size_t)w * h * 3);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            unsigned char *q = p + ((size_t)y * w + x) * 3;
            seed = seed * 1103515245u + 12345u;
            if (kind == 0) {
                q[0] = (unsigned char)(x * 255 / (w > 1 ? w - 1 : 1));
                q[1] = (unsigned char)(y * 255 / (h > 1 ? h - 1 : 1));
                q[2] = (unsigned char)((x + y) * 7);
            } else if (kind == 1) {
                q[0] = (unsigned char)(seed >> 8);
                q[1] = (unsigned char)(seed >> 16);
                q[2] = (unsigned char)(seed >> 24);
            } else {
                int b = ((x / 3) ^ (y / 5)) & 3;
                q[0] = b & 1 ? 255 : 0;
                q[1] = b & 2 ? 240 : 10;
                q[2] = (x & 1) ? 255 : 0;
            }
        }
    return p;
}

/* The picture as a JPEG with luma sampling factors hs x vs (chroma 1x1). */
static unsigned char *compress(const unsigned char *rgb, int w, int h, int hs, int vs,
                               int quality, unsigned long *len)
{
    struct jpeg_compress_struct c;
    jerr e;
    unsigned char *out = NULL;
    c.err = jpeg_std_error(&e.pub);
    e.pub.error_exit = on_error;
    if (setjmp(e.jb)) {
        jpeg_destroy_compress(&c);
        free(out);
        return NULL;
    }
    jpeg_create_compress(&c);
    jpeg_mem_dest(&c, &out, len);
    c.image_width = (JDIMENSION)w;
    c.image_height = (JDIMENSION)h;
    c.input_components = 3;
    c.in_color_space = JCS_RGB;
    jpeg_set_defaults(&c);
    jpeg_set_quality(&c, quality, TRUE);
    c.comp_info[0].h_samp_factor = hs;
    c.comp_info[0].v_samp_factor = vs;
    c.comp_info[1].h_samp_factor = c.comp_info[1].v_samp_factor = 1;
    c.comp_info[2].h_samp_factor = c.comp_info[2].v_samp_factor = 1;
    jpeg_start_compress(&c, TRUE);
    while (c.next_scanline < c.image_height) {
        JSAMPROW row = (JSAMPROW)(rgb + (size_t)c.next_scanline * w * 3);
        jpeg_write_scanlines(&c, &row, 1);
    }
    jpeg_finish_compress(&c);
    jpeg_destroy_compress(&c);
    return out;
}

/* The three downsampled planes libjpeg-turbo's IDCT gives (raw data out),
 * each `pitch` = its width in whole blocks; their sizes in cw x ch. */
typedef struct raw {
    unsigned char *pl[3];
    int pitch[3], w[3], h[3];
    int hmax, vmax, hs[3], vs[3];
} raw;

static int decode_raw(const unsigned char *jpg, unsigned long len, raw *r)
{
    struct jpeg_decompress_struct d;
    jerr e;
    memset(r, 0, sizeof *r);
    d.err = jpeg_std_error(&e.pub);
    e.pub.error_exit = on_error;
    if (setjmp(e.jb)) {
        jpeg_destroy_decompress(&d);
        return -1;
    }
    jpeg_create_decompress(&d);
    jpeg_mem_src(&d, jpg, len);
    jpeg_read_header(&d, TRUE);
    d.raw_data_out = TRUE;
    d.dct_method = JDCT_ISLOW;
    jpeg_start_decompress(&d);
    r->hmax = d.max_h_samp_factor;
    r->vmax = d.max_v_samp_factor;
    for (int c = 0; c < 3; c++) {
        jpeg_component_info *ci = &d.comp_info[c];
        int rows = (int)(ci->height_in_blocks + (JDIMENSION)ci->v_samp_factor) * DCTSIZE;
        r->pitch[c] = (int)(ci->width_in_blocks + (JDIMENSION)ci->h_samp_factor) * DCTSIZE;
        r->w[c] = (int)ci->downsampled_width;
        r->h[c] = (int)ci->downsampled_height;
        r->hs[c] = ci->h_samp_factor;
        r->vs[c] = ci->v_samp_factor;
        r->pl[c] = calloc((size_t)r->pitch[c], (size_t)rows);
    }
    {
        const int mrows = d.max_v_samp_factor * DCTSIZE;
        JSAMPROW rowp[3][4 * DCTSIZE];
        JSAMPARRAY planes[3] = {rowp[0], rowp[1], rowp[2]};
        for (int done = 0; d.output_scanline < d.output_height; done += mrows) {
            for (int c = 0; c < 3; c++) {
                int cr = d.comp_info[c].v_samp_factor * DCTSIZE;
                int y0 = done / mrows * cr;
                for (int i = 0; i < cr; i++)
                    rowp[c][i] = r->pl[c] + (size_t)(y0 + i) * r->pitch[c];
            }
            jpeg_read_raw_data(&d, planes, (JDIMENSION)mrows);
        }
    }
    jpeg_finish_decompress(&d);
    jpeg_destroy_decompress(&d);
    return 0;
}

/* How many pixels of jycc_pixel's RGB differ from ref (w x h RGB). */
static long compare(const raw *r, int w, int h, const unsigned char *ref, int *up)
{
    jycc_planes p;
    long bad = 0;
    memset(&p, 0, sizeof p);
    p.y = r->pl[0];
    p.cb = r->pl[1];
    p.cr = r->pl[2];
    p.y_pitch = r->pitch[0];
    p.c_pitch = r->pitch[1];
    p.width = w;
    p.height = h;
    p.cw = r->w[1];
    p.ch = r->h[1];
    p.hx = r->hmax / r->hs[1];
    p.vx = r->vmax / r->vs[1];
    p.up = *up = jycc_method(p.hx, p.vx, p.cw);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            uint8_t rgb[3];
            jycc_pixel(&p, x, y, rgb);
            bad += memcmp(rgb, ref + ((size_t)y * w + x) * 3, 3) != 0;
        }
    return bad;
}

int main(void)
{
    static const struct { int hs, vs; const char *name; } samp[] = {
        {1, 1, "4:4:4"}, {2, 1, "4:2:2"}, {2, 2, "4:2:0"}, {1, 2, "4:4:0"},
        {4, 1, "4:1:1"}, {4, 2, "4:1:0"},
    };
    static const int sizes[][2] = {{1, 1}, {2, 2}, {3, 5}, {4, 3}, {5, 4}, {7, 9}, {16, 16},
                                   {17, 15}, {33, 31}, {64, 48}, {101, 67}, {333, 217}};
    int seen_up[5] = {0};
    for (size_t s = 0; s < sizeof samp / sizeof samp[0]; s++) {
        long files = 0, bad_files = 0, bad_px = 0, px = 0;
        char first[160] = "";
        for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++)
            for (int kind = 0; kind < 3; kind++)
                for (int q = 0; q < 2; q++) {
                    int w = sizes[z][0], h = sizes[z][1], up = 0;
                    unsigned long len = 0;
                    unsigned char *rgb = picture(w, h, kind, (unsigned)(s * 977 + z * 31 + kind));
                    unsigned char *jpg = compress(rgb, w, h, samp[s].hs, samp[s].vs,
                                                  q ? 100 : 85, &len);
                    img_image im;
                    raw r;
                    long bad;
                    files++;
                    if (!jpg || img_load_mem(jpg, len, "t.jpg", &im) || decode_raw(jpg, len, &r)) {
                        bad_files++;
                        if (!first[0])
                            snprintf(first, sizeof first, "%dx%d: not decoded", w, h);
                        free(rgb);
                        free(jpg);
                        continue;
                    }
                    bad = im.channels == 3 && im.width == w && im.height == h
                              ? compare(&r, w, h, im.pixels, &up)
                              : (long)w * h;
                    seen_up[up] = 1;
                    px += (long)w * h;
                    if (bad) {
                        bad_files++;
                        bad_px += bad;
                        if (!first[0])
                            snprintf(first, sizeof first, "%dx%d kind %d q%d: %ld px", w, h,
                                     kind, q ? 100 : 85, bad);
                    }
                    img_free(&im);
                    for (int c = 0; c < 3; c++)
                        free(r.pl[c]);
                    free(rgb);
                    free(jpg);
                }
        {
            char name[96];
            snprintf(name, sizeof name, "jycc %s: %ld JPEGs, %ld px == libjpeg-turbo's RGB",
                     samp[s].name, files, px);
            check_report_(bad_files == 0, name, "%ld files, %ld px differ; first %s", bad_files,
                          bad_px, first);
        }
    }
    /* every method was exercised (box: 4:1:1, 4:1:0 and the 2-sample rows) */
    for (int m = 0; m < 5; m++) {
        char name[64];
        snprintf(name, sizeof name, "jycc method %d exercised", m);
        check_report_(seen_up[m], name, "no file took it");
    }
    return check_failed_;
}
