/*
 * test_png_gpu.c — an edge map's PNG image data coded on the GPU
 * (kernels/png_gpu.h) against the CPU coder: each piece's bytes what
 * drle_compress gives its Paeth-filtered rows (the PNG writer's level 1,
 * joinable but the last), and its Adler-32 libdeflate's:
 *   sizes     1x1 ... 8193x2, pieces of 1, 2, 7 rows and the writer's
 *             PNG_PIECE_BYTES, pitches wider than the rows;
 *   contents  flat, ramp, sparse (edge-map-like), noise, checkerboard,
 *             small noise, all 255;
 *   reuse     the output coded into twice (no bits of the first kept).
 * Then the GPU's time for a 1080p and a 5120x2880 map (information).
 * Without a CUDA device it prints "skip png_gpu: no CUDA device".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libdeflate.h>

#include "../unit/check.h"
#include "gpu_test.h"

#include "deflate_rle.h"
#include "png_gpu.h"
#include "png_out.h"

static int paeth(int a, int b, int c)
{
    int pa = abs(b - c), pb = abs(a - c), pc = abs(a + b - 2 * c);
    return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/* Rows y0 .. y0 + rows - 1 filtered as the PNG writer does (Paeth). */
static void filter_rows(const uint8_t *img, size_t pitch, int w, int y0, int rows, uint8_t *out)
{
    for (int r = 0; r < rows; r++) {
        const int y = y0 + r;
        const uint8_t *c = img + (size_t)y * pitch, *p = y ? c - pitch : NULL;
        uint8_t *o = out + (size_t)r * ((size_t)w + 1);
        o[0] = 4;
        for (int x = 0; x < w; x++)
            o[1 + x] = (uint8_t)(c[x] - paeth(x ? c[x - 1] : 0, p ? p[x] : 0, x && p ? p[x - 1] : 0));
    }
}

/* A map on the device and what the coder needs for it. */
typedef struct coder {
    png_gpu_geom g;
    uint8_t *d_img, *d_out;
    uint32_t *d_lens, *d_adl;
    void *d_scr;
    size_t sb;
} coder;

/* img (h rows `pitch` bytes apart) uploaded, buffers for `rows` rows a
 * piece; 0, or -1 (a CHECK line) when the geometry is refused. */
static int coder_make(coder *c, const uint8_t *img, int w, int h, size_t pitch, int rows)
{
    if (png_gpu_geom_of(w, h, rows, &c->g)) {
        CHECK(0, "png_gpu_geom_of", "%dx%d rows %d refused", w, h, rows);
        return -1;
    }
    c->sb = png_gpu_scratch_bytes(&c->g);
    c->d_img = dmalloc(pitch * (size_t)h);
    c->d_out = dmalloc(png_gpu_out_bytes(&c->g));
    c->d_lens = dmalloc(sizeof *c->d_lens * c->g.npieces);
    c->d_adl = dmalloc(sizeof *c->d_adl * c->g.npieces);
    c->d_scr = dmalloc(c->sb);
    MUST(cudaMemcpy(c->d_img, img, pitch * (size_t)h, cudaMemcpyHostToDevice));
    return 0;
}

static void coder_run(const coder *c, size_t pitch)
{
    MUST(png_gpu_code(c->d_img, (int)pitch, &c->g, c->d_scr, c->sb, c->d_out, c->d_lens, c->d_adl,
                      0));
}

static void coder_free(coder *c)
{
    cudaFree(c->d_img);
    cudaFree(c->d_out);
    cudaFree(c->d_lens);
    cudaFree(c->d_adl);
    cudaFree(c->d_scr);
}

/* One map, coded on both sides; a CHECK line.  Returns 1 equal. */
static int one(int w, int h, int pad, int kind, int rows, int twice)
{
    const size_t pitch = (size_t)w + (size_t)pad, rowb = (size_t)w + 1;
    uint8_t *img = xmalloc(pitch * (size_t)h);
    coder c;
    char name[112];
    int ok = 1;
    for (int y = 0; y < h; y++)
        for (size_t x = 0; x < pitch; x++)
            img[(size_t)y * pitch + x] = x < (size_t)w ? map_pixel(kind, (int)x, y) : 0xA5;
    if (coder_make(&c, img, w, h, pitch, rows)) {
        free(img);
        return 0;
    }
    const png_gpu_geom g = c.g;
    uint8_t *flt = xmalloc(rowb * (size_t)g.rows), *cpu = xmalloc(drle_bound(rowb * g.rows));
    uint8_t *gpu = xmalloc(png_gpu_out_bytes(&g));
    uint32_t *lens = xmalloc(sizeof *lens * g.npieces), *adl = xmalloc(sizeof *adl * g.npieces);
    snprintf(name, sizeof name, "%dx%d pitch %zu content %d, %d rows a piece (%d)", w, h, pitch,
             kind, g.rows, g.npieces);
    MUST(cudaMemset(c.d_out, 0xFF, png_gpu_out_bytes(&g))); /* another map's bits first */
    for (int t = 0; t <= twice; t++)
        coder_run(&c, pitch);
    MUST(cudaMemcpy(gpu, c.d_out, png_gpu_out_bytes(&g), cudaMemcpyDeviceToHost));
    MUST(cudaMemcpy(lens, c.d_lens, sizeof *lens * g.npieces, cudaMemcpyDeviceToHost));
    MUST(cudaMemcpy(adl, c.d_adl, sizeof *adl * g.npieces, cudaMemcpyDeviceToHost));
    for (int k = 0; k < g.npieces && ok; k++) {
        const int y0 = k * g.rows, nr = h - y0 < g.rows ? h - y0 : g.rows;
        const size_t n = rowb * (size_t)nr;
        size_t z;
        filter_rows(img, pitch, w, y0, nr, flt);
        z = drle_compress(flt, n, cpu, k + 1 == g.npieces);
        if (lens[k] != z || memcmp(gpu + (size_t)k * g.cap, cpu, z)) {
            size_t at = 0;
            while (at < z && at < lens[k] && gpu[(size_t)k * g.cap + at] == cpu[at])
                at++;
            CHECK(0, "png_gpu == drle_compress", "%s: piece %d: GPU %u bytes, CPU %zu, first "
                  "difference at byte %zu", name, k, lens[k], z, at);
            ok = 0;
        } else if (adl[k] != libdeflate_adler32(1, flt, n)) {
            CHECK(0, "png_gpu's Adler-32", "%s: piece %d: %08x, libdeflate %08x", name, k, adl[k],
                  libdeflate_adler32(1, flt, n));
            ok = 0;
        }
    }
    if (ok) {
        /* the pieces back to back (png_gpu_compact), as the engine brings
         * them back */
        size_t total = 0, at = 0;
        for (int k = 0; k < g.npieces; k++)
            total += lens[k];
        uint8_t *cat = xmalloc(total), *d_cat = dmalloc(total), *back = xmalloc(total);
        for (int k = 0; k < g.npieces; k++, at += lens[k - 1])
            memcpy(cat + at, gpu + (size_t)k * g.cap, lens[k]);
        MUST(png_gpu_compact(&g, c.d_out, c.d_lens, d_cat, total, 0));
        MUST(cudaMemcpy(back, d_cat, total, cudaMemcpyDeviceToHost));
        ok = !memcmp(back, cat, total);
        CHECK(ok, "png_gpu == drle_compress", "%s: the compacted pieces differ", name);
        cudaFree(d_cat);
        free(cat);
        free(back);
    }
    coder_free(&c);
    free(img);
    free(flt);
    free(cpu);
    free(gpu);
    free(lens);
    free(adl);
    return ok;
}

/* The GPU's time for a map of sparse edges (20 calls, synchronised). */
static void timing(int w, int h)
{
    uint8_t *img = xmalloc((size_t)w * h);
    uint32_t *lens;
    size_t total = 0;
    const int reps = 20;
    coder c;
    double t0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            img[(size_t)y * w + x] = map_pixel(2, x, y);
    if (coder_make(&c, img, w, h, (size_t)w, (int)(PNG_PIECE_BYTES / ((size_t)w + 1)))) {
        free(img);
        return;
    }
    lens = xmalloc(sizeof *lens * c.g.npieces);
    coder_run(&c, (size_t)w);
    MUST(cudaDeviceSynchronize());
    t0 = now_s();
    for (int i = 0; i < reps; i++)
        coder_run(&c, (size_t)w);
    MUST(cudaDeviceSynchronize());
    t0 = now_s() - t0;
    MUST(cudaMemcpy(lens, c.d_lens, sizeof *lens * c.g.npieces, cudaMemcpyDeviceToHost));
    for (int k = 0; k < c.g.npieces; k++)
        total += lens[k];
    printf("# png_gpu %dx%d sparse edges: %.3f ms a map on the GPU, %zu bytes in %d pieces, "
           "scratch %.1f MB\n", w, h, t0 * 1e3 / reps, total, c.g.npieces, c.sb / 1e6);
    coder_free(&c);
    free(img);
    free(lens);
}

int main(int argc, char **argv)
{
    static const int sz[][2] = {{1, 1}, {2, 1}, {1, 2}, {3, 3}, {17, 1}, {1, 17}, {31, 5},
                                {33, 7}, {161, 121}, {2047, 1}, {2049, 2}, {640, 360},
                                {300, 2000}, {4097, 3}, {8193, 2}, {1920, 1080}};
    static const int pads[] = {0, 3, 256};
    int dev = 0, bad = 0;

    (void)cmp_u8; /* (gpu_test.h's plane comparison: pieces are compared as bytes here) */
    if (cudaGetDeviceCount(&dev) != cudaSuccess || dev == 0) {
        cudaGetLastError();
        SKIP("png_gpu", "no CUDA device");
        return 0;
    }
    {
        /* (as a caller would, before sizing its buffers: png_gpu.h) */
        size_t stack = png_gpu_stack_bytes(), have = 0;
        CHECK(stack > 0 && cudaDeviceGetLimit(&have, cudaLimitStackSize) == cudaSuccess &&
                  (have >= stack || cudaDeviceSetLimit(cudaLimitStackSize, stack) == cudaSuccess),
              "png_gpu's stack", "needs %zu bytes a thread, the limit was %zu", stack, have);
        printf("# png_gpu: %zu bytes of stack a thread (the limit was %zu)\n", stack, have);
    }
    rng_state = 20261205;
    printf("# seed %llu\n", (unsigned long long)rng_state);
    for (size_t s = 0; s < sizeof sz / sizeof sz[0]; s++)
        for (int kind = 0; kind < 7; kind++) {
            const int w = sz[s][0], h = sz[s][1];
            const int rows_opts[] = {(int)(PNG_PIECE_BYTES / ((size_t)w + 1)), 1, 2, 7};
            const int rows = rows_opts[(s + (size_t)kind) % 4] > 0 ? rows_opts[(s + (size_t)kind) % 4] : 1;
            bad += !one(w, h, pads[(s + (size_t)kind) % 3], kind, rows, kind == 3);
        }
    if (!(argc > 1 && !strcmp(argv[1], "--no-timing"))) {
        timing(1920, 1080);
        timing(5120, 2880);
    }
    return bad ? 1 : 0;
}
