/*
 * edges.c — libgpuedge's smallest program: an 8-bit binary PPM (P6) in,
 * its edge map as a binary PGM (P5) out, with the library's defaults
 * (sigma 1, replicate border, the GPU when there is one).
 *
 *     cc edges.c $(pkg-config --cflags --libs gpuedge) -o edges
 *     ./edges in.ppm out.pgm
 *
 * Only the public API (gpuedge.h); the PNM reader is its own.  The map is
 * written to OUT.tmp and renamed over OUT only once complete, so a failed
 * write leaves no partial file and an existing OUT as it was.
 */
#include <gpuedge.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The next header number of a PNM file (skipping blanks and # comments);
 * -1 when there is none. */
static long pnm_number(FILE *f)
{
    long v = 0;
    int c, digits = 0;

    do {
        c = getc(f);
        if (c == '#')
            while (c != '\n' && c != EOF)
                c = getc(f);
    } while (c == ' ' || c == '\t' || c == '\n' || c == '\r');
    while (c >= '0' && c <= '9') {
        if (v > 1000000000L)
            return -1;
        v = v * 10 + (c - '0');
        digits++;
        c = getc(f);
    }
    /* exactly one whitespace byte ends the number (after maxval: the
     * pixels start right after it) */
    if (!digits || (c != ' ' && c != '\t' && c != '\n' && c != '\r'))
        return -1;
    return v;
}

/* Reads an 8-bit P6 file; *w x *h RGB pixels, malloc'd. */
static uint8_t *read_ppm(const char *path, int *w, int *h)
{
    FILE *f = fopen(path, "rb");
    uint8_t *px = NULL;
    long width, height, maxval;

    if (!f) {
        perror(path);
        return NULL;
    }
    if (getc(f) != 'P' || getc(f) != '6' || (width = pnm_number(f)) < 1 ||
        (height = pnm_number(f)) < 1 || (maxval = pnm_number(f)) < 1 || maxval > 255 ||
        width > 65536 || height > 65536) {
        fprintf(stderr, "%s: not an 8-bit binary PPM (P6)\n", path);
        goto end;
    }
    px = malloc((size_t)width * height * 3);
    if (!px) {
        fprintf(stderr, "%s: out of memory\n", path);
        goto end;
    }
    if (fread(px, 3, (size_t)width * height, f) != (size_t)width * height) {
        fprintf(stderr, "%s: truncated\n", path);
        free(px);
        px = NULL;
        goto end;
    }
    *w = (int)width;
    *h = (int)height;
end:
    fclose(f);
    return px;
}

int main(int argc, char **argv)
{
    ge_ctx *ctx = NULL;
    uint8_t *rgb = NULL, *edge = NULL;
    uint64_t hist[GE_HIST_BINS];
    int w = 0, h = 0, r, status = 1;
    FILE *out = NULL;
    char *tmp = NULL;
    int made = 0; /* tmp is ours to remove */

    if (argc != 3) {
        fprintf(stderr, "usage: %s IN.ppm OUT.pgm\n", argv[0]);
        return 2;
    }
    if (!(rgb = read_ppm(argv[1], &w, &h)))
        return 1;
    if (!(edge = malloc((size_t)w * h))) {
        fprintf(stderr, "out of memory\n");
        goto end;
    }
    /* NULL options: the defaults (ge_options_init) */
    if ((r = ge_ctx_new(&ctx, NULL)) < 0) {
        fprintf(stderr, "libgpuedge: %s (%s)\n", ge_last_error(NULL), ge_strerror(r));
        goto end;
    }
    if ((r = ge_process(ctx, rgb, w, h, 3, 1, (size_t)w * 3, edge, (size_t)w, hist)) < 0) {
        fprintf(stderr, "libgpuedge: %s (%s)\n", ge_last_error(ctx), ge_strerror(r));
        goto end;
    }
    if (!(tmp = malloc(strlen(argv[2]) + 5))) {
        fprintf(stderr, "out of memory\n");
        goto end;
    }
    strcat(strcpy(tmp, argv[2]), ".tmp");
    if (!(out = fopen(tmp, "wb")) || !(made = 1) ||
        fprintf(out, "P5\n%d %d\n255\n", w, h) < 0 ||
        fwrite(edge, 1, (size_t)w * h, out) != (size_t)w * h) {
        perror(argv[2]);
        goto end;
    }
    r = fclose(out);
    out = NULL;
    if (r != 0 || rename(tmp, argv[2]) != 0) {
        perror(argv[2]);
        goto end;
    }
    free(tmp);
    tmp = NULL;
    printf("%dx%d on the %s backend (libgpuedge %s): %llu pixels of edge value 0\n", w, h,
           ge_ctx_backend(ctx) == GE_BACKEND_GPU ? "GPU" : "CPU", ge_version(),
           (unsigned long long)hist[0]);
    status = 0;
end:
    if (out)
        fclose(out);
    if (made && tmp)
        remove(tmp); /* a failed write: nothing partial left */
    free(tmp);
    ge_ctx_free(&ctx);
    free(edge);
    free(rgb);
    return status;
}
