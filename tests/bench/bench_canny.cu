/*
 * bench_canny.cu — GPU time of --canny on a 3840x2160 8-bit RGB frame in
 * device memory: RGB in -> Canny edge map + histogram out, every kernel
 * the pipeline enqueues (kernels/canny.h):
 *   memset hist, fused_canny_window_gpu (grey, blur, Sobel, codes, t, the
 *   e histogram), canny_auto_gpu or a memset, canny_nms_gpu,
 *   canny_hyst_gpu
 * for both hysteresis methods (CANNY_UNION, CANNY_ITER) and three inputs:
 *   shapes   discs and boxes of random grey levels on faint noise, blurred
 *            edges everywhere (what photos look like to Canny);
 *   random   random bytes (candidates everywhere: the most unions);
 *   spiral   one 2-pixel rectangular spiral (6-pixel gaps) whose start
 *            alone is strong: one chain of ~2 M pixels winding through
 *            every tile (the worst case for CANNY_ITER's rounds).
 * Beside them the plain fused kernel (Sobel edge map, fused_gpu) on the
 * same frames: what --canny adds.
 *
 * Method.  NBUF input frames (>= 4x the L2 in all), rotated launch by
 * launch, so every run reads its frame from DRAM; the Canny scratch and
 * edge planes are one set (as in the pipeline: the compute stream reuses
 * them).  5 warm-up runs, then RUNS timed ones (fewer for the spiral with
 * CANNY_ITER), cudaEvent pairs: total, and the parts (sobel = memset +
 * fused kernel, nms = auto/memset + NMS, hyst).  Median (p10, p90) in us.
 *
 * Usage: bench_canny [RUNS]   (default 100).  Without a CUDA device it
 * prints "skip bench-canny: no CUDA device" and exits 0.
 */
#include <algorithm>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

#include <cuda_runtime.h>

#include "canny.h"
#include "cuda_check.h"
#include "edge.h"
#include "fused.h"

#define MUST(call)                                                          \
    do {                                                                    \
        if (CUDA_CHECK(call) != cudaSuccess)                                \
            exit(1);                                                        \
    } while (0)

static double q_of(std::vector<float> v, double q)
{
    std::sort(v.begin(), v.end());
    return v[(size_t)(q * (v.size() - 1) + 0.5)];
}

static uint64_t rs = 20261201;
static unsigned rnd(void)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return (unsigned)(rs >> 11);
}

static void put(unsigned char *img, int w, int h, int x, int y, unsigned v)
{
    if (x < 0 || y < 0 || x >= w || y >= h)
        return;
    unsigned char *p = img + ((size_t)y * w + x) * 3;
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v * 3 / 4);
    p[2] = (unsigned char)(v / 2 + 20);
}

enum { IN_SHAPES, IN_RANDOM, IN_SPIRAL, IN_N };
static const char *const in_name[IN_N] = {"shapes", "random", "spiral"};

static void make(unsigned char *img, int w, int h, int kind)
{
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            if (kind == IN_RANDOM) {
                unsigned char *p = img + ((size_t)y * w + x) * 3;
                p[0] = (unsigned char)rnd();
                p[1] = (unsigned char)rnd();
                p[2] = (unsigned char)rnd();
            } else {
                put(img, w, h, x, y, 40 + rnd() % 5);
            }
        }
    if (kind == IN_SHAPES) {
        for (int i = 0; i < 600; i++) {
            const int cx = (int)(rnd() % w), cy = (int)(rnd() % h);
            const int r = 4 + (int)(rnd() % 200);
            const unsigned v = rnd() % 256, disc = rnd() % 2;
            for (int y = cy - r; y <= cy + r; y++)
                for (int x = cx - r; x <= cx + r; x++)
                    if (!disc || (x - cx) * (x - cx) + (y - cy) * (y - cy) <= r * r)
                        put(img, w, h, x, y, v);
        }
    } else if (kind == IN_SPIRAL) { /* as tests/gpu/test_canny_gpu.c */
        int L = 2, T = 2, R = w - 4, B = h - 4;
        const int P = 8;
        while (R - L >= P && B - T >= P) {
            const int seg[5][4] = {{L, T, R, T}, {R, T, R, B}, {L, B, R, B},
                                   {L, T + P, L, B}, {L, T + P, L + P, T + P}};
            for (int k = 0; k < 5; k++)
                for (int y = seg[k][1]; y <= seg[k][3] + 1; y++)
                    for (int x = seg[k][0]; x <= seg[k][2] + 1; x++)
                        put(img, w, h, x, y, 90);
            L += P;
            T += P;
            R -= P;
            B -= P;
        }
        for (int y = 2; y < 4; y++)
            for (int x = 2; x < 66; x++)
                put(img, w, h, x, y, x < 16 ? 255u : 255u - (unsigned)(x - 16) * 165u / 50u);
    }
}

int main(int argc, char **argv)
{
    const int runs = argc > 1 ? atoi(argv[1]) : 100;
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        printf("skip bench-canny: no CUDA device\n");
        return 0;
    }
    cudaDeviceProp prop;
    MUST(cudaGetDeviceProperties(&prop, 0));
    const int w = 3840, h = 2160;
    const size_t n = (size_t)w * h, in_bytes = n * 3;
    int nbuf = (int)((4.0 * prop.l2CacheSize) / in_bytes) + 1;
    if (nbuf < 2)
        nbuf = 2;
    printf("# bench_canny: %s, %d SMs, L2 %d MB; 3840x2160 RGB8, sigma 1, replicate; %d input "
           "buffers; %d runs\n",
           prop.name, prop.multiProcessorCount, prop.l2CacheSize >> 20, nbuf, runs);

    ge_taps taps;
    ge_taps_make(1.0, &taps);
    MUST(fused_set_taps_gpu(&taps, 0));
    unsigned char *h_img = (unsigned char *)malloc(in_bytes);
    std::vector<unsigned char *> d_in(nbuf);
    for (int i = 0; i < nbuf; i++)
        MUST(cudaMalloc(&d_in[i], in_bytes));
    uint8_t *d_edge;
    unsigned long long *d_hist;
    void *scr;
    MUST(cudaMalloc(&d_edge, n));
    MUST(cudaMalloc(&d_hist, GE_HIST_BINS * 8));
    MUST(cudaMalloc(&scr, canny_scratch_bytes(w, h)));
    float *t = canny_t_plane(scr), *thr = canny_thr(scr, w, h);
    uint32_t *lab = canny_labels(scr, w, h);
    unsigned *flags = canny_flags(scr, w, h);
    cudaEvent_t ev[5];
    for (int i = 0; i < 5; i++)
        MUST(cudaEventCreate(&ev[i]));

    for (int kind = 0; kind < IN_N; kind++) {
        make(h_img, w, h, kind);
        for (int i = 0; i < nbuf; i++)
            MUST(cudaMemcpy(d_in[i], h_img, in_bytes, cudaMemcpyHostToDevice));
        ge_frame f;
        memset(&f, 0, sizeof f);
        f.width = w;
        f.height = h;
        f.channels = 3;
        f.bytes_per_sample = 1;
        f.stride = (size_t)w * 3;
        f.gain = 1.0f;
        ge_params p;
        memset(&p, 0, sizeof p);
        p.sigma = 1.0;
        p.scale = 1.0f;

        /* plain fused (Sobel edge map) for comparison */
        {
            std::vector<float> tt;
            for (int r = 0; r < runs + 5; r++) {
                f.data = d_in[r % nbuf];
                MUST(cudaEventRecord(ev[0], 0));
                MUST(fused_gpu(&f, d_edge, w, &p, taps.radius, d_hist, 0));
                MUST(cudaEventRecord(ev[1], 0));
                MUST(cudaEventSynchronize(ev[1]));
                float ms;
                MUST(cudaEventElapsedTime(&ms, ev[0], ev[1]));
                if (r >= 5)
                    tt.push_back(ms * 1000);
            }
            printf("bench canny %-7s sobel-only (fused_gpu)          total %7.1f us (p10 %.1f, p90 %.1f)\n",
                   in_name[kind], q_of(tt, 0.5), q_of(tt, 0.1), q_of(tt, 0.9));
        }
        for (int th = 0; th < 2; th++)
            for (int m = 0; m < 2; m++) {
                canny_set_method(m ? CANNY_ITER : CANNY_UNION);
                p.canny = th ? GE_CANNY_AUTO : GE_CANNY_ON;
                p.canny_low = kind == IN_SPIRAL ? 20.0f : 20.0f;
                p.canny_high = kind == IN_SPIRAL ? 150.0f : 60.0f;
                const int nr = (kind == IN_SPIRAL && m) ? 1 : runs; /* ~1.6 s a run */
                std::vector<float> tot, ps, pn, ph;
                unsigned rounds = 0;
                long long kept = 0;
                for (int r = 0; r < nr + 2; r++) {
                    f.data = d_in[r % nbuf];
                    MUST(cudaEventRecord(ev[0], 0));
                    MUST(cudaMemsetAsync(d_hist, 0, GE_HIST_BINS * 8, 0));
                    MUST(fused_canny_window_gpu(&f, h, 0, d_edge, w, t, w, 0, h, &p, taps.radius,
                                                d_hist, 0));
                    MUST(cudaEventRecord(ev[1], 0));
                    if (th)
                        MUST(canny_auto_gpu(d_hist, n, thr, 0));
                    else
                        MUST(cudaMemsetAsync(d_hist, 0, GE_HIST_BINS * 8, 0));
                    MUST(canny_nms_gpu(d_edge, w, t, w, lab, w, h, &p, th ? thr : NULL, 0));
                    MUST(cudaEventRecord(ev[2], 0));
                    MUST(canny_hyst_gpu(d_edge, w, lab, w, h, &p, d_hist, flags, 0));
                    MUST(cudaEventRecord(ev[3], 0));
                    MUST(cudaEventSynchronize(ev[3]));
                    float a, b, c, d;
                    MUST(cudaEventElapsedTime(&a, ev[0], ev[3]));
                    MUST(cudaEventElapsedTime(&b, ev[0], ev[1]));
                    MUST(cudaEventElapsedTime(&c, ev[1], ev[2]));
                    MUST(cudaEventElapsedTime(&d, ev[2], ev[3]));
                    if (r >= 2) {
                        tot.push_back(a * 1000);
                        ps.push_back(b * 1000);
                        pn.push_back(c * 1000);
                        ph.push_back(d * 1000);
                    }
                }
                unsigned long long hh[GE_HIST_BINS];
                MUST(cudaMemcpy(hh, d_hist, sizeof hh, cudaMemcpyDeviceToHost));
                kept = (long long)hh[255];
                if (m)
                    MUST(cudaMemcpy(&rounds, flags + 3, 4, cudaMemcpyDeviceToHost));
                printf("bench canny %-7s %-5s %-5s total %7.1f us (p10 %.1f, p90 %.1f); "
                       "sobel %.1f nms %.1f hyst %.1f us; %lld px kept (%.2f %%)%s",
                       in_name[kind], m ? "iter" : "union", th ? "auto" : "fixed", q_of(tot, 0.5),
                       q_of(tot, 0.1), q_of(tot, 0.9), q_of(ps, 0.5), q_of(pn, 0.5), q_of(ph, 0.5),
                       kept, 100.0 * kept / n, m ? "" : "\n");
                if (m)
                    printf("; %u rounds\n", rounds);
            }
    }
    canny_set_method(CANNY_UNION);
    /* back to back: 100 frames (shapes, auto, union) between one pair */
    {
        make(h_img, w, h, IN_SHAPES);
        for (int i = 0; i < nbuf; i++)
            MUST(cudaMemcpy(d_in[i], h_img, in_bytes, cudaMemcpyHostToDevice));
        ge_frame f;
        memset(&f, 0, sizeof f);
        f.width = w;
        f.height = h;
        f.channels = 3;
        f.bytes_per_sample = 1;
        f.stride = (size_t)w * 3;
        f.gain = 1.0f;
        ge_params p;
        memset(&p, 0, sizeof p);
        p.sigma = 1.0;
        p.scale = 1.0f;
        p.canny = GE_CANNY_AUTO;
        MUST(cudaEventRecord(ev[0], 0));
        for (int r = 0; r < 100; r++) {
            f.data = d_in[r % nbuf];
            MUST(cudaMemsetAsync(d_hist, 0, GE_HIST_BINS * 8, 0));
            MUST(fused_canny_window_gpu(&f, h, 0, d_edge, w, t, w, 0, h, &p, taps.radius, d_hist, 0));
            MUST(canny_auto_gpu(d_hist, n, thr, 0));
            MUST(canny_nms_gpu(d_edge, w, t, w, lab, w, h, &p, thr, 0));
            MUST(canny_hyst_gpu(d_edge, w, lab, w, h, &p, d_hist, flags, 0));
        }
        MUST(cudaEventRecord(ev[1], 0));
        MUST(cudaEventSynchronize(ev[1]));
        float ms;
        MUST(cudaEventElapsedTime(&ms, ev[0], ev[1]));
        printf("bench canny shapes  union auto  back-to-back %.1f us a frame (100 frames)\n",
               ms * 10);
    }
    printf("# bench_canny done\n");
    return 0;
}
