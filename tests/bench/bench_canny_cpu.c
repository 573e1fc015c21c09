/*
 * bench_canny_cpu.c — the CPU backend's Canny against its plain Sobel map,
 * in one process, side by side (issue 12): one frame (IMAGE resized
 * bilinearly to W x H, RGB 8-bit), for each thread count: the median of
 * RUNS calls of cpu_process for the Sobel map, --canny 40,100 and --canny
 * auto (and auto under --mem-limit 16M, which leaves no room for its t
 * plane at 4K), the ratios to Sobel, and the Canny passes
 * (cpu_canny_times: grey .. NMS, hysteresis, final).  Runs alternate between the three, so a
 * neighbour's load on a shared machine hits them alike.
 *
 *   bench_canny_cpu [IMAGE [W H [RUNS [THREADS...]]]]
 *   (defaults: samples/photo.png 3840 2160 9, threads 1 and all)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cpu_backend.h"
#include "edge.h"
#include "image_io.h"
#include "util.h"

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* bilinear resize of an 8-bit image with c channels (nothing exact needed:
 * this only makes a large, photo-like frame) */
static uint8_t *resize(const uint8_t *src, int sw, int sh, int c, int w, int h)
{
    uint8_t *d = malloc((size_t)w * h * c);
    if (!d)
        return NULL;
    for (int y = 0; y < h; y++) {
        double fy = (y + 0.5) * sh / h - 0.5;
        int y0 = fy < 0 ? 0 : (int)fy, y1 = y0 + 1 < sh ? y0 + 1 : sh - 1;
        double ay = fy - y0 < 0 ? 0 : fy - y0;
        for (int x = 0; x < w; x++) {
            double fx = (x + 0.5) * sw / w - 0.5;
            int x0 = fx < 0 ? 0 : (int)fx, x1 = x0 + 1 < sw ? x0 + 1 : sw - 1;
            double ax = fx - x0 < 0 ? 0 : fx - x0;
            for (int k = 0; k < c; k++) {
                double v = (1 - ay) * ((1 - ax) * src[((size_t)y0 * sw + x0) * c + k] +
                                       ax * src[((size_t)y0 * sw + x1) * c + k]) +
                           ay * ((1 - ax) * src[((size_t)y1 * sw + x0) * c + k] +
                                 ax * src[((size_t)y1 * sw + x1) * c + k]);
                d[((size_t)y * w + x) * c + k] = (uint8_t)(v + 0.5);
            }
        }
    }
    return d;
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "samples/photo.png";
    int w = argc > 3 ? atoi(argv[2]) : 3840, h = argc > 3 ? atoi(argv[3]) : 2160;
    int runs = argc > 4 ? atoi(argv[4]) : 9;
    int tlist[16], nt = 0;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    img_image img;
    ge_frame f;
    ge_planes pl;
    uint8_t *px;

    for (int i = 5; i < argc && nt < 16; i++)
        tlist[nt++] = atoi(argv[i]);
    if (!nt) {
        tlist[nt++] = 1;
        if (ncpu > 1)
            tlist[nt++] = (int)ncpu;
    }
    if (w < 1 || h < 1 || runs < 1) {
        fprintf(stderr, "usage: bench_canny_cpu [IMAGE [W H [RUNS [THREADS...]]]]\n");
        return 2;
    }
    if (img_load(path, &img))
        return 1;
    if (img.bytes_per_sample != 1 || img.channels < 3) {
        fprintf(stderr, "%s: want an 8-bit RGB image\n", path);
        return 1;
    }
    px = resize(img.pixels, img.width, img.height, img.channels, w, h);
    memset(&pl, 0, sizeof pl);
    pl.edge = malloc((size_t)w * h);
    if (!px || !pl.edge) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    memset(&f, 0, sizeof f);
    f.width = w;
    f.height = h;
    f.channels = img.channels;
    f.bytes_per_sample = 1;
    f.stride = (size_t)w * img.channels;
    f.gain = 1.0f;
    f.data = px;

    printf("# bench_canny_cpu: %dx%d from %s, sigma 1, %d runs each (median), %ld CPUs online\n",
           w, h, path, runs, ncpu);
    printf("Wall ms (median), and in [] the process CPU ms (median; the cost, steady under "
           "load).  Passes of --canny 40,100: wall, and [CPU of the calling thread].\n\n");
    printf("| threads | Sobel ms | Canny 40,100 ms | x Sobel | Canny auto ms | x Sobel "
           "| passes grey..NMS / hysteresis / final ms | edge px |\n");
    printf("|---:|---:|---:|---:|---:|---:|---|---:|\n");
    for (int ti = 0; ti < nt; ti++) {
        double *ts = calloc((size_t)runs * 14, sizeof *ts);
        ge_params ps, pc, pa;
        uint64_t edges = 0;
        if (!ts)
            return 1;
        memset(&ps, 0, sizeof ps);
        ps.sigma = 1.0;
        ps.scale = 1.0f;
        pc = pa = ps;
        pc.canny = GE_CANNY_ON;
        pc.canny_low = 40.0f;
        pc.canny_high = 100.0f;
        pa.canny = GE_CANNY_AUTO;
        /* one warm-up of each */
        if (cpu_process(&f, &ps, tlist[ti], &pl, NULL) || cpu_process(&f, &pc, tlist[ti], &pl, NULL) ||
            cpu_process(&f, &pa, tlist[ti], &pl, NULL)) {
            fprintf(stderr, "cpu_process failed\n");
            return 1;
        }
        for (int r = 0; r < runs; r++) {
            double t0 = ge_now(), u0 = cpu_now(), ph[8];
            cpu_process(&f, &ps, tlist[ti], &pl, NULL);
            double t1 = ge_now(), u1 = cpu_now();
            cpu_process(&f, &pc, tlist[ti], &pl, NULL);
            double t2 = ge_now(), u2 = cpu_now();
            cpu_canny_times(ph);
            edges = pl.hist[255];
            cpu_process(&f, &pa, tlist[ti], &pl, NULL);
            double t3 = ge_now(), u3 = cpu_now();
            if (r == runs - 1) {
                double pa8[8];
                cpu_canny_times(pa8);
                fprintf(stderr, "# auto passes (last run, CPU ms): first %.1f, NMS %.1f, "
                        "hysteresis %.1f, final %.1f\n", pa8[4], pa8[5], pa8[6], pa8[7]);
            }
            /* auto without the t plane: --mem-limit 16M leaves the
             * workers' scratch room but not the 33 MB plane of 4K */
            cpu_process_limited(&f, &pa, tlist[ti], (size_t)16 << 20, &pl, NULL);
            ts[12 * runs + r] = (ge_now() - t3) * 1e3;
            ts[13 * runs + r] = (cpu_now() - u3) * 1e3;
            ts[6 * runs + r] = (u1 - u0) * 1e3;
            ts[7 * runs + r] = (u2 - u1) * 1e3;
            ts[8 * runs + r] = (u3 - u2) * 1e3;
            ts[9 * runs + r] = ph[5];
            ts[10 * runs + r] = ph[6];
            ts[11 * runs + r] = ph[7];
            ts[r] = (t1 - t0) * 1e3;
            ts[runs + r] = (t2 - t1) * 1e3;
            ts[2 * runs + r] = (t3 - t2) * 1e3;
            ts[3 * runs + r] = ph[1];
            ts[4 * runs + r] = ph[2];
            ts[5 * runs + r] = ph[3];
        }
        double s = median(ts, runs), c = median(ts + runs, runs), a = median(ts + 2 * runs, runs);
        double us = median(ts + 6 * runs, runs), uc = median(ts + 7 * runs, runs);
        double ua = median(ts + 8 * runs, runs);
        printf("| %d | %.1f [%.1f] | %.1f [%.1f] | %.2f [%.2f] | %.1f [%.1f] | %.2f [%.2f] "
               "| %.1f / %.1f / %.1f [%.1f / %.1f / %.1f] | %llu |\n",
               tlist[ti], s, us, c, uc, c / s, uc / us, a, ua, a / s, ua / us,
               median(ts + 3 * runs, runs), median(ts + 4 * runs, runs),
               median(ts + 5 * runs, runs), median(ts + 9 * runs, runs),
               median(ts + 10 * runs, runs), median(ts + 11 * runs, runs),
               (unsigned long long)edges);
        printf("|   | auto without the t plane (--mem-limit 16M): %.1f [%.1f] ms, x Sobel %.2f [%.2f] |\n",
               median(ts + 12 * runs, runs), median(ts + 13 * runs, runs),
               median(ts + 12 * runs, runs) / s, median(ts + 13 * runs, runs) / us);
        fflush(stdout);
        free(ts);
    }
    free(px);
    free(pl.edge);
    img_free(&img);
    return 0;
}
