/*
 * bench_png.c — the PNG writer (src/io/png_out.c) on edge maps: time and
 * bytes per filter, level and thread count, against stb_image_write's PNG
 * (what gpuedge wrote before issue 10).  Encodes in memory (no file I/O);
 * each figure is the median of REPS runs.  Every encode is checked: the
 * PNG is inflated by libdeflate and unfiltered here, and must give the
 * edge map back.
 *
 *   bench_png [-t THREADS,...] [-l LEVELS] [-f FILTERS] [-r REPS] [-p PIECE_BYTES]
 *             [--stb] EDGE_MAP...
 *     THREADS  comma list, 0 = one per CPU              [1]
 *     LEVELS   comma list of libdeflate levels 0..12    [the default]
 *     FILTERS  comma list of none,sub,up,avg,paeth,minsum [the default]
 *     --stb    also time stbi_write_png_to_mem
 *   EDGE_MAP: 8-bit grey images (PGM or PNG: gpuedge --format pgm -o DIR ...).
 *   bench_png --upscale W H IN OUT.ppm   IN resized (bilinear) to WxH as a
 *                                        PPM: a large photo-like input made
 *                                        where no image tool is installed
 * One line per (file, filter, level, threads); then a line per setting
 * with the totals over all files ("total ...").
 *
 * The H200 target of issue 10 (a 14.7 Mpx map in <= 40 ms on 16 threads):
 * tests/bench/bench_png.sh (it makes the map with --upscale and gpuedge).
 */
#define STBI_WRITE_NO_STDIO
#include <stb_image_write.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libdeflate.h>

#include "image_io.h"
#include "png_out.h"
#include "util.h"

/* stb_image_write defines it (STBIWDEF) but declares it only in its
 * implementation section. */
unsigned char *stbi_write_png_to_mem(const unsigned char *pixels, int stride_bytes, int x, int y,
                                     int n, int *out_len);

static const char *const fnames[] = {"none", "sub", "up", "avg", "paeth", "minsum"};

static int parse_list(const char *s, int *v, int max, int is_filter)
{
    int n = 0;
    char buf[256], *tok, *save = NULL;
    snprintf(buf, sizeof buf, "%s", s);
    for (tok = strtok_r(buf, ",", &save); tok && n < max; tok = strtok_r(NULL, ",", &save)) {
        if (is_filter) {
            int k;
            for (k = 0; k < 6 && strcmp(tok, fnames[k]); k++)
                ;
            if (k == 6)
                return -1;
            v[n++] = k;
        } else {
            v[n++] = atoi(tok);
        }
    }
    return n;
}

/* CPU seconds of the whole process (all threads): on a shared machine
 * the wall time says more about the neighbours than about the encoder. */
static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Inflates the PNG's IDATs with libdeflate and undoes the filters: 0 when
 * the pixels are the map's. */
static int check_png(const uint8_t *png, size_t len, const uint8_t *map, int w, int h)
{
    size_t pos = 8, zn = 0, rowb = (size_t)w + 1, got = 0;
    uint8_t *z = malloc(len), *raw = malloc(rowb * (size_t)h), *img = malloc((size_t)w * h);
    struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
    int bad = 1;
    if (!z || !raw || !img || !d)
        goto end;
    while (pos + 12 <= len) {
        size_t n = (size_t)png[pos] << 24 | (size_t)png[pos + 1] << 16 |
                   (size_t)png[pos + 2] << 8 | png[pos + 3];
        if (!memcmp(png + pos + 4, "IDAT", 4)) {
            memcpy(z + zn, png + pos + 8, n);
            zn += n;
        }
        pos += 12 + n;
    }
    if (libdeflate_zlib_decompress(d, z, zn, raw, rowb * (size_t)h, &got) != LIBDEFLATE_SUCCESS ||
        got != rowb * (size_t)h)
        goto end;
    for (int y = 0; y < h; y++) {
        const uint8_t *r = raw + (size_t)y * rowb + 1;
        uint8_t *o = img + (size_t)y * w, *p = y ? o - w : NULL;
        for (int x = 0; x < w; x++) {
            int a = x ? o[x - 1] : 0, b = p ? p[x] : 0, c = x && p ? p[x - 1] : 0, pr;
            switch (r[-1]) {
            case 0: pr = 0; break;
            case 1: pr = a; break;
            case 2: pr = b; break;
            case 3: pr = (a + b) >> 1; break;
            case 4: {
                int pa = abs(b - c), pb = abs(a - c), pc = abs(a + b - 2 * c);
                pr = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
                break;
            }
            default: goto end;
            }
            o[x] = (uint8_t)(r[x] + pr);
        }
    }
    bad = memcmp(img, map, (size_t)w * h) != 0;
end:
    libdeflate_free_decompressor(d);
    free(z);
    free(raw);
    free(img);
    return bad;
}

/* Bilinear resize of an 8-bit image (any channel count) to w x h, as a
 * binary PPM (or PGM for grey). */
static int upscale(int w, int h, const char *in, const char *out)
{
    img_image im;
    FILE *f;
    uint8_t *row;
    int ch, ok = 1;
    if (w < 1 || h < 1 || img_load(in, &im) < 0)
        return 1;
    if (im.bytes_per_sample != 1) {
        fprintf(stderr, "bench_png: %s: not an 8-bit image\n", in);
        img_free(&im);
        return 1;
    }
    ch = im.channels >= 3 ? 3 : 1;
    row = malloc((size_t)w * ch);
    f = fopen(out, "wb");
    if (!row || !f) {
        perror(out);
        ok = 0;
        goto end;
    }
    fprintf(f, "P%c\n%d %d\n255\n", ch == 3 ? '6' : '5', w, h);
    for (int y = 0; y < h; y++) {
        double sy = (y + 0.5) * im.height / h - 0.5;
        int y0 = sy < 0 ? 0 : (int)sy, y1 = y0 + 1 < im.height ? y0 + 1 : y0;
        double fy = sy < 0 ? 0 : sy - y0;
        for (int x = 0; x < w; x++) {
            double sx = (x + 0.5) * im.width / w - 0.5;
            int x0 = sx < 0 ? 0 : (int)sx, x1 = x0 + 1 < im.width ? x0 + 1 : x0;
            double fx = sx < 0 ? 0 : sx - x0;
            for (int c = 0; c < ch; c++) {
                const uint8_t *p = im.pixels;
                size_t st = (size_t)im.channels;
#define PX(xx, yy) p[((size_t)(yy) * im.width + (xx)) * st + c]
                double v = (1 - fy) * ((1 - fx) * PX(x0, y0) + fx * PX(x1, y0)) +
                           fy * ((1 - fx) * PX(x0, y1) + fx * PX(x1, y1));
#undef PX
                row[(size_t)x * ch + c] = (uint8_t)(v + 0.5);
            }
        }
        if (fwrite(row, 1, (size_t)w * ch, f) != (size_t)w * ch)
            ok = 0;
    }
    if (fclose(f))
        ok = 0;
    f = NULL;
    if (!ok)
        perror(out);
end:
    if (f)
        fclose(f);
    free(row);
    img_free(&im);
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    int threads[16] = {1}, nthreads = 1, levels[16] = {PNG_LEVEL_DEFAULT}, nlevels = 1;
    int filt[8] = {PNG_FILTER_DEFAULT}, nfilt = 1, reps = 5, stb = 0, a = 1, failures = 0;
    size_t piece = 0;
    double tot_ms[16][16][8] = {{{0}}}, stb_ms = 0, tot_cpu[16][16][8] = {{{0}}}, stb_cpu = 0;
    size_t tot_b[16][16][8] = {{{0}}}, stb_b = 0;
    long long tot_px = 0;

    if (argc == 6 && !strcmp(argv[1], "--upscale"))
        return upscale(atoi(argv[2]), atoi(argv[3]), argv[4], argv[5]);
    for (; a < argc && argv[a][0] == '-'; a++) {
        const char *v = a + 1 < argc ? argv[a + 1] : "";
        if (!strcmp(argv[a], "-t") && (nthreads = parse_list(v, threads, 16, 0)) > 0)
            a++;
        else if (!strcmp(argv[a], "-l") && (nlevels = parse_list(v, levels, 16, 0)) > 0)
            a++;
        else if (!strcmp(argv[a], "-f") && (nfilt = parse_list(v, filt, 8, 1)) > 0)
            a++;
        else if (!strcmp(argv[a], "-r") && (reps = atoi(v)) > 0)
            a++;
        else if (!strcmp(argv[a], "-p") && atol(v) > 0)
            piece = (size_t)atol(v), a++;
        else if (!strcmp(argv[a], "--stb"))
            stb = 1;
        else {
            fprintf(stderr, "usage: bench_png [-t T,..] [-l L,..] [-f F,..] [-r REPS] [-p BYTES] "
                            "[--stb] EDGE_MAP...\n");
            return 2;
        }
    }
    if (a >= argc) {
        fprintf(stderr, "bench_png: no edge maps\n");
        return 2;
    }
    printf("# bench_png: median of %d; ms and bytes per encode (in memory)\n", reps);
    printf("%-36s %9s %6s %5s %3s %9s %10s %9s\n", "file", "Mpx", "filter", "level", "thr", "ms",
           "bytes", "cpu_ms");
    for (; a < argc; a++) {
        img_image im;
        double *ms = malloc(sizeof *ms * (size_t)reps), *cms = malloc(sizeof *cms * (size_t)reps);
        const char *base = strrchr(argv[a], '/') ? strrchr(argv[a], '/') + 1 : argv[a];
        if (!ms || !cms || img_load(argv[a], &im) < 0) {
            free(ms);
            free(cms);
            failures++;
            continue;
        }
        if (im.channels != 1 || im.bytes_per_sample != 1) {
            fprintf(stderr, "bench_png: %s: not an 8-bit grey image\n", argv[a]);
            img_free(&im);
            free(ms);
            free(cms);
            failures++;
            continue;
        }
        tot_px += (long long)im.width * im.height;
        for (int fi = 0; fi < nfilt; fi++)
            for (int li = 0; li < nlevels; li++)
                for (int ti = 0; ti < nthreads; ti++) {
                    png_opts o = {levels[li], filt[fi], threads[ti], piece};
                    size_t len = 0;
                    for (int r = 0; r < reps; r++) {
                        uint8_t *png = NULL;
                        double t0 = ge_now(), c0 = cpu_now();
                        if (png_encode(im.pixels, im.width, im.height, (size_t)im.width, &o, &png,
                                       &len)) {
                            perror("png_encode");
                            return 1;
                        }
                        ms[r] = (ge_now() - t0) * 1e3;
                        cms[r] = (cpu_now() - c0) * 1e3;
                        if (r == 0 && check_png(png, len, im.pixels, im.width, im.height)) {
                            fprintf(stderr, "bench_png: %s: the PNG does not decode to the map\n",
                                    argv[a]);
                            failures++;
                        }
                        free(png);
                    }
                    qsort(ms, (size_t)reps, sizeof *ms, cmp_d);
                    qsort(cms, (size_t)reps, sizeof *cms, cmp_d);
                    printf("%-36s %9.2f %6s %5d %3d %9.2f %10zu %9.2f\n", base,
                           im.width * (double)im.height / 1e6,
                           filt[fi] < 0 ? "dflt" : fnames[filt[fi]], levels[li], threads[ti],
                           ms[reps / 2], len, cms[reps / 2]);
                    tot_ms[fi][li][ti] += ms[reps / 2];
                    tot_cpu[fi][li][ti] += cms[reps / 2];
                    tot_b[fi][li][ti] += len;
                }
        if (stb) {
            int len = 0;
            for (int r = 0; r < reps; r++) {
                double t0 = ge_now(), c0 = cpu_now();
                unsigned char *png = stbi_write_png_to_mem(im.pixels, im.width, im.width,
                                                           im.height, 1, &len);
                ms[r] = (ge_now() - t0) * 1e3;
                cms[r] = (cpu_now() - c0) * 1e3;
                free(png);
            }
            qsort(ms, (size_t)reps, sizeof *ms, cmp_d);
            qsort(cms, (size_t)reps, sizeof *cms, cmp_d);
            printf("%-36s %9.2f %6s %5s %3d %9.2f %10d %9.2f\n", base,
                   im.width * (double)im.height / 1e6, "stb", "-", 1, ms[reps / 2], len,
                   cms[reps / 2]);
            stb_ms += ms[reps / 2];
            stb_cpu += cms[reps / 2];
            stb_b += (size_t)len;
        }
        img_free(&im);
        free(ms);
        free(cms);
    }
    for (int fi = 0; fi < nfilt; fi++)
        for (int li = 0; li < nlevels; li++)
            for (int ti = 0; ti < nthreads; ti++)
                printf("total %-30s %9.2f %6s %5d %3d %9.2f %10zu %9.2f\n", "", tot_px / 1e6,
                       filt[fi] < 0 ? "dflt" : fnames[filt[fi]], levels[li], threads[ti],
                       tot_ms[fi][li][ti], tot_b[fi][li][ti], tot_cpu[fi][li][ti]);
    if (stb)
        printf("total %-30s %9.2f %6s %5s %3d %9.2f %10zu %9.2f\n", "", tot_px / 1e6, "stb", "-",
               1, stb_ms, stb_b, stb_cpu);
    return failures ? 1 : 0;
}
