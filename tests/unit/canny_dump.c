/*
 * canny_dump.c — a helper for tests/cli/canny.sh (not a test itself: its
 * name has no test_ prefix, so tests/run does not run it).  Writes the
 * CPU reference's Sobel gradients and Canny map of an image, so the
 * OpenCV agreement test feeds cv2.Canny our own gradients instead of
 * recomputing them in Python:
 *
 *   canny_dump IMAGE SIGMA LOW HIGH PREFIX
 *
 * writes PREFIX.gx and PREFIX.gy (W*H float32, native endian, row-major)
 * and PREFIX.edge (W*H bytes, 0/255, --canny LOW,HIGH with replicate
 * borders and scale 1), and prints "W H" on stdout.  Exit 0, or 1 after
 * a message.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edge.h"
#include "image_io.h"
#include "reference.h"

static int write_file(const char *prefix, const char *ext, const void *p, size_t n)
{
    char path[4096];
    FILE *f;
    int ok;

    snprintf(path, sizeof path, "%s.%s", prefix, ext);
    if (!(f = fopen(path, "wb"))) {
        perror(path);
        return -1;
    }
    ok = fwrite(p, 1, n, f) == n;
    ok &= fclose(f) == 0;
    if (!ok)
        fprintf(stderr, "%s: write failed\n", path);
    return ok ? 0 : -1;
}

int main(int argc, char **argv)
{
    img_image img;
    ge_frame f;
    ge_params p;
    ge_taps t;
    ge_planes pl;
    float *a = NULL, *b = NULL, *gx = NULL, *gy = NULL;
    size_t n;
    int ret = 1;

    if (argc != 6) {
        fprintf(stderr, "usage: canny_dump IMAGE SIGMA LOW HIGH PREFIX\n");
        return 2;
    }
    memset(&p, 0, sizeof p);
    p.sigma = atof(argv[2]);
    p.scale = 1.0f;
    p.border = GE_BORDER_REPLICATE;
    p.canny = GE_CANNY_ON;
    p.canny_low = (float)atof(argv[3]);
    p.canny_high = (float)atof(argv[4]);
    if (ge_taps_make(p.sigma, &t) < 0) {
        fprintf(stderr, "bad sigma\n");
        return 2;
    }
    if (img_load(argv[1], &img))
        return 1;
    f = img_as_frame(&img);
    n = (size_t)f.width * f.height;
    a = malloc(n * sizeof *a);
    b = malloc(n * sizeof *b);
    gx = malloc(n * sizeof *gx);
    gy = malloc(n * sizeof *gy);
    memset(&pl, 0, sizeof pl);
    pl.edge = malloc(n);
    if (!a || !b || !gx || !gy || !pl.edge) {
        fprintf(stderr, "out of memory\n");
        goto end;
    }
    /* the reference's own stages: grey, blur, gradients */
    ref_grey(&f, a);
    ref_blur_h(a, f.width, f.height, &t, p.border, b);
    ref_blur_v(b, f.width, f.height, &t, p.border, a);
    ref_gradients(a, f.width, f.height, p.border, gx, gy);
    if (ref_process(&f, &p, &pl)) {
        fprintf(stderr, "ref_process failed\n");
        goto end;
    }
    if (write_file(argv[5], "gx", gx, n * sizeof *gx) ||
        write_file(argv[5], "gy", gy, n * sizeof *gy) ||
        write_file(argv[5], "edge", pl.edge, n))
        goto end;
    printf("%d %d\n", f.width, f.height);
    ret = 0;
end:
    free(a);
    free(b);
    free(gx);
    free(gy);
    free(pl.edge);
    img_free(&img);
    return ret;
}
