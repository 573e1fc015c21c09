/*
 * test_hfyu_gpu.c — FFVHuff coded on the GPU (kernels/hfyu_gpu.h) against
 * the CPU coder (src/io/hfyu_enc.c, itself checked against libavcodec's
 * encoder by test_video_io): the same packet, byte for byte, and the same
 * size, with the codes the .mkv writers use (venc_ffvhuff_codes):
 *   sizes     1x1 ... 8193x2, rows spanning the kernels' tiles, 1920x1080,
 *             3840x2160, and pitches wider than the rows;
 *   contents  flat, ramp, sparse (edge-map-like), noise (long codes),
 *             checkerboard, small noise, all 255;
 *   reuse     the output buffer is coded into twice (the second frame
 *             must not keep bits of the first).
 * Then the GPU's time a 1080p and a 4K frame (information, no threshold;
 * not with --no-timing, for the sanitizers).
 * Without a CUDA device it prints "skip hfyu_gpu: no CUDA device".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/check.h"
#include "gpu_test.h"

#include "hfyu_enc.h"
#include "hfyu_gpu.h"
#include "venc.h"

/* One frame, coded on both sides: a CHECK line (the packets compared as
 * one row of bytes, once their sizes agree).  Returns 1 equal. */
static int one(const hfyu_tab *t, int w, int h, int pad, int kind, uint32_t *d_out,
               unsigned long long *d_bytes)
{
    const size_t pitch = (size_t)w + (size_t)pad, max = hfyu_gpu_max_bytes(w, h);
    uint8_t *img = xmalloc(pitch * (size_t)h), *cpu = xmalloc(hfyu_max_bytes(t, w, h));
    uint8_t *gpu = xmalloc(max), *d_img = dmalloc(pitch * (size_t)h);
    void *d_scr = dmalloc(hfyu_gpu_scratch_bytes(w, h));
    unsigned long long bytes = 0;
    char name[96];
    size_t k;
    int ok;
    for (int y = 0; y < h; y++)
        for (size_t x = 0; x < pitch; x++)
            img[(size_t)y * pitch + x] = x < (size_t)w ? map_pixel(kind, (int)x, y) : 0xA5;
    k = hfyu_code(t, img, (ptrdiff_t)pitch, w, h, cpu);
    MUST(cudaMemcpy(d_img, img, pitch * (size_t)h, cudaMemcpyHostToDevice));
    MUST(cudaMemset(d_out, 0xFF, max)); /* another frame's bits first */
    MUST(hfyu_gpu(d_img, (int)pitch, w, h, t->cl, d_out, d_scr, d_bytes, 0));
    MUST(cudaMemcpy(&bytes, d_bytes, sizeof bytes, cudaMemcpyDeviceToHost));
    snprintf(name, sizeof name, "%dx%d pitch %zu content %d", w, h, pitch, kind);
    if (bytes != k) {
        CHECK(0, "hfyu_gpu size", "%s: GPU %llu bytes, CPU %zu", name, bytes, k);
        ok = 0;
    } else {
        MUST(cudaMemcpy(gpu, d_out, k, cudaMemcpyDeviceToHost));
        ok = cmp_u8("hfyu_gpu == hfyu_code", name, gpu, cpu, (int)k, 1);
    }
    cudaFree(d_img);
    cudaFree(d_scr);
    free(img);
    free(cpu);
    free(gpu);
    return ok;
}

/* The GPU's time a frame of sparse edges (50 calls, synchronised). */
static void timing(const hfyu_tab *t, int w, int h)
{
    uint8_t *img = xmalloc((size_t)w * h), *d_img = dmalloc((size_t)w * h);
    uint32_t *d_out = dmalloc(hfyu_gpu_max_bytes(w, h));
    void *d_scr = dmalloc(hfyu_gpu_scratch_bytes(w, h));
    unsigned long long *d_bytes = dmalloc(sizeof *d_bytes), bytes = 0;
    const int reps = 50;
    double t0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            img[(size_t)y * w + x] = map_pixel(2, x, y);
    MUST(cudaMemcpy(d_img, img, (size_t)w * h, cudaMemcpyHostToDevice));
    MUST(hfyu_gpu(d_img, w, w, h, t->cl, d_out, d_scr, d_bytes, 0));
    MUST(cudaDeviceSynchronize());
    t0 = now_s();
    for (int i = 0; i < reps; i++)
        MUST(hfyu_gpu(d_img, w, w, h, t->cl, d_out, d_scr, d_bytes, 0));
    MUST(cudaDeviceSynchronize());
    t0 = now_s() - t0;
    MUST(cudaMemcpy(&bytes, d_bytes, sizeof bytes, cudaMemcpyDeviceToHost));
    printf("# hfyu_gpu %dx%d sparse edges: %.3f ms a frame on the GPU, %llu bytes (%.2f of "
           "raw)\n", w, h, t0 * 1e3 / reps, bytes, (double)bytes / ((double)w * h));
    cudaFree(d_img);
    cudaFree(d_out);
    cudaFree(d_scr);
    cudaFree(d_bytes);
    free(img);
}

int main(int argc, char **argv)
{
    static const int sz[][2] = {{1, 1}, {2, 1}, {1, 2}, {3, 3}, {17, 1}, {1, 17}, {31, 5},
                                {33, 7}, {161, 121}, {2047, 1}, {2049, 2}, {640, 360},
                                {4096, 2}, {4097, 3}, {8193, 2}, {1920, 1080}, {3840, 2160}};
    static const int pads[] = {0, 3, 256};
    uint32_t cl[256];
    hfyu_tab t;
    int dev = 0, bad = 0;
    uint32_t *d_out;
    unsigned long long *d_bytes;

    if (cudaGetDeviceCount(&dev) != cudaSuccess || dev == 0) {
        cudaGetLastError();
        SKIP("hfyu_gpu", "no CUDA device");
        return 0;
    }
    rng_state = 20261203;
    printf("# seed %llu\n", (unsigned long long)rng_state);
    int have = venc_ffvhuff_codes(cl) == 0;
    CHECK(have, "the .mkv writers' FFVHuff codes", "%s", "venc_ffvhuff_codes failed");
    if (!have)
        return 1;
    /* hfyu_tab from the codes: code and length are all the coders read */
    memset(&t, 0, sizeof t);
    for (int i = 0; i < 256; i++) {
        t.cl[i] = cl[i];
        t.code[i] = cl[i] >> 5;
        t.len[i] = (uint8_t)(cl[i] & 31);
        if (t.len[i] > t.max_len)
            t.max_len = t.len[i];
    }
    d_out = dmalloc(hfyu_gpu_max_bytes(3840, 2160)); /* the largest case's */
    d_bytes = dmalloc(sizeof *d_bytes);
    for (size_t i = 0; i < sizeof sz / sizeof sz[0]; i++)
        for (int kind = 0; kind < 7; kind++)
            for (size_t p = 0; p < sizeof pads / sizeof pads[0]; p++) {
                int w = sz[i][0], h = sz[i][1];
                if ((size_t)w * h > 4000000 && (kind > 3 || p > 0))
                    continue; /* 4K: four contents are enough */
                if ((size_t)(w + pads[p]) * h > (size_t)3840 * 2160 + 256 * 2160)
                    continue;
                bad += !one(&t, w, h, pads[p], kind, d_out, d_bytes);
            }
    cudaFree(d_out);
    cudaFree(d_bytes);
    if (argc < 2 || strcmp(argv[1], "--no-timing")) {
        timing(&t, 1920, 1080);
        timing(&t, 3840, 2160);
    }
    CHECK_EXIT();
}
