/*
 * bench_fused.cu — GPU time of the fused kernel (kernels/fused.cu), one
 * frame not resident in L2: 1920x1080, 3840x2160, 7680x4320, 8-bit RGB
 * (image path) and 8-bit luma (1 channel, video limited range), sigma 1
 * (r = 2), replicate border; plus 4K RGB on smooth data (edge values in
 * bins 0..3) and 4K RGB sigma 2.5 (r = 5, the runtime-radius kernel).
 *
 * Method.  Random input; NBUF distinct input + edge + histogram sets,
 * rotated launch by launch, with NBUF * (set bytes) >= 4 x the L2 (the
 * L2 size read from the device), so every launch reads its frame from
 * DRAM.  10 warm-up launches, then >= 200 timed ones:
 *   kernel   median (p10, p90) of cudaEvent pairs around fused_window_gpu
 *            alone (the histogram zeroed beforehand, outside the pair);
 *   +memset  the same around fused_gpu (2 KB cudaMemsetAsync + kernel),
 *            what a frame costs in the pipeline;
 *   b2b      200 fused_gpu back to back between one event pair / 200
 *            (throughput when frames queue: tails overlap).
 * Effective GB/s = (input bytes + edge bytes) / kernel median; "% D2D" is
 * that over a device-to-device cudaMemcpy measured in the same run
 * (bytes read + written, 1 GiB); "x floor" is kernel median / ((in + out)
 * / D2D bandwidth), 1.0 = the DRAM floor.
 *
 * Usage: bench_fused [runs [CASE]]  (default 200 runs, every case; CASE
 * is one case name, e.g. "3840x2160 rgb8 s1", for profilers).  Without a
 * CUDA device it
 * prints "skip bench-fused: no CUDA device" and exits 0.
 */
#include <algorithm>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

#include <cuda_runtime.h>

#include "cuda_check.h"
#include "edge.h"
#include "fused.h"

#define MUST(call)                                                          \
    do {                                                                    \
        if (CUDA_CHECK(call) != cudaSuccess)                                \
            exit(1);                                                        \
    } while (0)

static double median_of(std::vector<float> v, double q)
{
    std::sort(v.begin(), v.end());
    size_t i = (size_t)(q * (v.size() - 1) + 0.5);
    return v[i];
}

__global__ void fill_random(uint32_t *p, size_t n, uint32_t seed)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        uint32_t x = (uint32_t)i * 2654435761u ^ seed;
        x ^= x >> 15;
        x *= 0x2c1b3c6du;
        x ^= x >> 12;
        x *= 0x297a2d39u;
        x ^= x >> 15;
        p[i] = x;
    }
}

/* a gentle ramp with +-1 noise, per byte (edge values pile into 0..3) */
__global__ void fill_smooth(uint8_t *p, size_t n, size_t stride)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        const size_t y = i / stride, x = i % stride;
        uint32_t h = (uint32_t)i * 2654435761u;
        h ^= h >> 13;
        p[i] = (uint8_t)(100 + (x / 3 + y) / 16 % 64 + (h % 3) - 1);
    }
}

static double measure_d2d(void)
{
    const size_t n = (size_t)1 << 30;
    void *a, *b;
    cudaEvent_t e0, e1;
    std::vector<float> t;
    MUST(cudaMalloc(&a, n));
    MUST(cudaMalloc(&b, n));
    MUST(cudaMemset(a, 1, n));
    MUST(cudaEventCreate(&e0));
    MUST(cudaEventCreate(&e1));
    for (int i = 0; i < 23; i++) {
        MUST(cudaEventRecord(e0));
        MUST(cudaMemcpyAsync(b, a, n, cudaMemcpyDeviceToDevice));
        MUST(cudaEventRecord(e1));
        MUST(cudaEventSynchronize(e1));
        float ms;
        MUST(cudaEventElapsedTime(&ms, e0, e1));
        if (i >= 3)
            t.push_back(ms);
    }
    const double ms = median_of(t, 0.5);
    cudaFree(a);
    cudaFree(b);
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    return 2.0 * n / (ms * 1e-3); /* bytes read + written per second */
}

struct config {
    const char *name;
    int w, h, channels;
    double sigma;
    int smooth;
    int offset;
    float gain;
};

static void bench(const config &c, int runs, double d2d, size_t l2)
{
    const size_t stride = (size_t)c.w * c.channels; /* multiple of 4 here */
    const size_t in_bytes = stride * c.h, out_bytes = (size_t)c.w * c.h;
    const size_t set = in_bytes + out_bytes + 2048;
    int nbuf = (int)((4 * l2 + set - 1) / set);
    if (nbuf < 3)
        nbuf = 3;
    std::vector<uint8_t *> in(nbuf), out(nbuf);
    std::vector<unsigned long long *> hist(nbuf);
    for (int i = 0; i < nbuf; i++) {
        MUST(cudaMalloc(&in[i], in_bytes));
        MUST(cudaMalloc(&out[i], out_bytes));
        MUST(cudaMalloc(&hist[i], 2048));
        if (c.smooth)
            fill_smooth<<<1024, 256>>>(in[i], in_bytes, stride);
        else
            fill_random<<<1024, 256>>>((uint32_t *)in[i], in_bytes / 4,
                                       0x9E3779B9u * (i + 1));
    }
    MUST(cudaGetLastError());

    ge_taps taps;
    ge_taps_make(c.sigma, &taps);
    MUST(fused_set_taps_gpu(&taps, 0));
    ge_params p;
    memset(&p, 0, sizeof p);
    p.sigma = c.sigma;
    p.border = GE_BORDER_REPLICATE;
    p.scale = 1.0f;
    ge_frame f;
    memset(&f, 0, sizeof f);
    f.width = c.w;
    f.height = c.h;
    f.channels = c.channels;
    f.bytes_per_sample = 1;
    f.stride = stride;
    f.offset = c.offset;
    f.gain = c.gain;

    cudaEvent_t e0, e1;
    MUST(cudaEventCreate(&e0));
    MUST(cudaEventCreate(&e1));
    auto launch = [&](int i, bool with_memset) {
        f.data = in[i];
        if (with_memset)
            return fused_gpu(&f, out[i], c.w, &p, taps.radius, hist[i], 0);
        return fused_window_gpu(&f, c.h, 0, out[i], c.w, 0, c.h, &p,
                                taps.radius, hist[i], 0);
    };
    for (int i = 0; i < 10; i++)
        MUST(launch(i % nbuf, true));
    MUST(cudaDeviceSynchronize());

    std::vector<float> tk, tm;
    for (int r = 0; r < runs; r++) {
        const int i = r % nbuf;
        float ms;
        MUST(cudaMemsetAsync(hist[i], 0, 2048));
        MUST(cudaEventRecord(e0));
        MUST(launch(i, false));
        MUST(cudaEventRecord(e1));
        MUST(cudaEventSynchronize(e1));
        MUST(cudaEventElapsedTime(&ms, e0, e1));
        tk.push_back(ms * 1000.0f);
    }
    for (int r = 0; r < runs; r++) {
        const int i = r % nbuf;
        float ms;
        MUST(cudaEventRecord(e0));
        MUST(launch(i, true));
        MUST(cudaEventRecord(e1));
        MUST(cudaEventSynchronize(e1));
        MUST(cudaEventElapsedTime(&ms, e0, e1));
        tm.push_back(ms * 1000.0f);
    }
    float b2b_ms;
    MUST(cudaEventRecord(e0));
    for (int r = 0; r < runs; r++)
        MUST(launch(r % nbuf, true));
    MUST(cudaEventRecord(e1));
    MUST(cudaEventSynchronize(e1));
    MUST(cudaEventElapsedTime(&b2b_ms, e0, e1));

    const double us = median_of(tk, 0.5);
    const double bytes = (double)(in_bytes + out_bytes);
    const double gbs = bytes / (us * 1e-6) / 1e9;
    const double floor_us = bytes / d2d * 1e6;
    printf("%-28s %9.2f (%7.2f %7.2f) %9.2f %9.2f %8.1f %6.1f%% %7.2f %5d\n",
           c.name, us, median_of(tk, 0.1), median_of(tk, 0.9),
           median_of(tm, 0.5), b2b_ms * 1000.0 / runs, gbs,
           100.0 * gbs * 1e9 / d2d, us / floor_us, nbuf);
    fflush(stdout);

    for (int i = 0; i < nbuf; i++) {
        cudaFree(in[i]);
        cudaFree(out[i]);
        cudaFree(hist[i]);
    }
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
}

int main(int argc, char **argv)
{
    int ndev = 0, dev = 0, runs = argc > 1 ? atoi(argv[1]) : 200;
    if (runs < 100)
        runs = 100;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        printf("skip bench-fused: no CUDA device\n");
        return 0;
    }
    cudaDeviceProp prop;
    MUST(cudaGetDevice(&dev));
    MUST(cudaGetDeviceProperties(&prop, dev));
    const size_t l2 = prop.l2CacheSize > 0 ? (size_t)prop.l2CacheSize
                                           : (size_t)64 << 20;
    const double d2d = measure_d2d();
    printf("# bench_fused: %s, %d SMs, L2 %.0f MB, D2D copy %.2f TB/s "
           "(read + write), %d runs a line\n",
           prop.name, prop.multiProcessorCount, l2 / 1e6, d2d / 1e12, runs);
    printf("# times in us; kernel = fused_window_gpu alone (median, p10, "
           "p90); +memset = fused_gpu; b2b = back-to-back average\n");
    printf("%-28s %9s %17s %9s %9s %8s %7s %7s %5s\n", "# case", "kernel",
           "(p10     p90)", "+memset", "b2b", "GB/s", "%D2D", "xfloor",
           "bufs");
    const float lim = (float)(255.0 / 219.0);
    const config cs[] = {
        {"1920x1080 rgb8 s1", 1920, 1080, 3, 1.0, 0, 0, 1.0f},
        {"1920x1080 luma8 s1", 1920, 1080, 1, 1.0, 0, 16, lim},
        {"3840x2160 rgb8 s1", 3840, 2160, 3, 1.0, 0, 0, 1.0f},
        {"3840x2160 luma8 s1", 3840, 2160, 1, 1.0, 0, 16, lim},
        {"7680x4320 rgb8 s1", 7680, 4320, 3, 1.0, 0, 0, 1.0f},
        {"7680x4320 luma8 s1", 7680, 4320, 1, 1.0, 0, 16, lim},
        {"3840x2160 rgb8 s1 smooth", 3840, 2160, 3, 1.0, 1, 0, 1.0f},
        {"3840x2160 rgb8 s0.5 (r1)", 3840, 2160, 3, 0.5, 0, 0, 1.0f},
        {"3840x2160 rgb8 s2 (r4)", 3840, 2160, 3, 2.0, 0, 0, 1.0f},
        {"3840x2160 rgb8 s2.5 (r5)", 3840, 2160, 3, 2.5, 0, 0, 1.0f},
    };
    for (const config &c : cs)
        if (argc <= 2 || !strcmp(argv[2], c.name))
            bench(c, runs, d2d, l2);
    return 0;
}
