/*
 * bench_decode.c — decode time of gpuedge's PNG and JPEG decoders against
 * stb_image on the same bytes, side by side in one run (issue 10: libspng
 * vs stb for PNG, libjpeg-turbo vs stb for JPEG).  For each FILE: REPS
 * rounds of (ours, then stb), each on one thread, from memory (the file
 * read once before the clock); prints the best of each and the ratio.
 * Ratios only: absolute times depend on the machine and its load.
 *
 *   bench_decode [-r REPS] FILE...      (REPS default 3)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stb_image.h>

#include "image_in_jpeg.h"
#include "image_in_png.h"
#include "image_io.h"
#include "util.h"

static unsigned char *slurp(const char *p, size_t *n)
{
    FILE *f = fopen(p, "rb");
    unsigned char *d = NULL;
    long len;
    *n = 0;
    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (d = malloc((size_t)len)) && fread(d, 1, (size_t)len, f) == (size_t)len)
        *n = (size_t)len;
    else {
        free(d);
        d = NULL;
    }
    fclose(f);
    return d;
}

int main(int argc, char **argv)
{
    int reps = 3, a = 1, status = 0;
    if (argc > 2 && !strcmp(argv[1], "-r")) {
        reps = atoi(argv[2]);
        a = 3;
    }
    if (a >= argc || reps < 1) {
        fprintf(stderr, "usage: bench_decode [-r REPS] FILE...\n");
        return 2;
    }
    for (; a < argc; a++) {
        size_t n;
        unsigned char *d = slurp(argv[a], &n);
        int jpeg, r, w = 0, h = 0, c = 0;
        double ours = 1e30, stb = 1e30;
        if (!d) {
            fprintf(stderr, "bench_decode: %s: cannot read\n", argv[a]);
            status = 1;
            continue;
        }
        jpeg = imgjpg_is_jpeg(d, n);
        for (r = 0; r < reps; r++) {
            img_image m;
            void *p;
            double t0 = ge_now(), t1;
            int rc = jpeg ? imgjpg_decode(d, n, (size_t)1 << 34, argv[a], &m)
                          : imgpng_decode(d, n, (size_t)1 << 34, argv[a], &m) == IMGPNG_OK ? 0 : -1;
            t1 = ge_now();
            if (rc == 0)
                img_free(&m);
            else
                status = 1;
            if (t1 - t0 < ours)
                ours = t1 - t0;
            t0 = ge_now();
            p = stbi_is_16_bit_from_memory(d, (int)n)
                    ? (void *)stbi_load_16_from_memory(d, (int)n, &w, &h, &c, 0)
                    : (void *)stbi_load_from_memory(d, (int)n, &w, &h, &c, 0);
            t1 = ge_now();
            stbi_image_free(p);
            if (t1 - t0 < stb)
                stb = t1 - t0;
        }
        printf("%s: %dx%d, %zu bytes: %s %.1f ms, stb_image %.1f ms: %.2fx\n", argv[a], w, h, n,
               jpeg ? "libjpeg-turbo" : "libspng", ours * 1e3, stb * 1e3, stb / ours);
        free(d);
    }
    return status;
}
