/*
 * bench_images.c — the image-batch baseline of issue #5: "decode + encode
 * alone, with parallel decoders/encoders".  For every input image of
 * IN_DIR, on THREADS workers: decode it with gpuedge's loader (stb), then
 * encode the edge map gpuedge made of it (EDGE_DIR/<stem>.png, loaded
 * before the clock starts, so the encoder compresses the same content) as
 * PNG through gpuedge's own safe writer (temp file, fsync, rename) into
 * OUT_DIR.  No edge computation at all: what a batch would cost if the
 * GPU work were free.  Prints images, seconds, images/s.
 *
 *   bench_images IN_DIR EDGE_DIR OUT_DIR [THREADS (0 = one per CPU)]
 *   bench_images --make N DIR     writes N different 1920x1080 RGB PNGs
 *                                 (gradients, boxes, a noisy patch) to DIR:
 *                                 the GPU machine has no encoder to make
 *                                 a batch with, and carrying one is large
 */
#define STBI_WRITE_NO_STDIO
#include <stb_image_write.h>
#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "image_io.h"
#include "safeout.h"
#include "util.h"

typedef struct item {
    char in[4096], out[4096];
    img_image edge;
} item;

static item *items;
static int nitems;
static atomic_int next_item, failures;

static void *worker(void *arg)
{
    so_opts so = {.overwrite = 1};
    (void)arg;
    for (;;) {
        int i = atomic_fetch_add(&next_item, 1);
        img_image im;
        so_file *f = NULL;
        if (i >= nitems)
            break;
        if (img_load(items[i].in, &im) < 0) {
            atomic_fetch_add(&failures, 1);
            continue;
        }
        img_free(&im);
        if (so_open(&f, items[i].out, &so, NULL, 0) < 0 ||
            img_write(f, IMG_FMT_PNG, items[i].edge.pixels, items[i].edge.width,
                      items[i].edge.height, items[i].edge.width) < 0 ||
            so_commit(&f) < 0) {
            so_abort(&f);
            atomic_fetch_add(&failures, 1);
        }
    }
    return NULL;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

static int make_images(int n, const char *dir)
{
    const int w = 1920, h = 1080;
    unsigned char *px = malloc((size_t)w * h * 3);
    so_opts so = {.overwrite = 1};
    unsigned seed = 20261129u;

    if (!px)
        return 1;
    for (int k = 0; k < n; k++) {
        char path[4096];
        so_file *f = NULL;
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                unsigned char *p = px + ((size_t)y * w + x) * 3;
                int bx = (x + 37 * k) / 160, by = (y + 23 * k) / 120;
                int box = ((bx ^ by) + k) % 5 == 0;
                p[0] = (unsigned char)(box ? 40 + 30 * (k % 7) : (x * 255 / w + k * 3));
                p[1] = (unsigned char)(box ? 200 - 20 * (k % 5) : (y * 255 / h));
                p[2] = (unsigned char)((x + y + 11 * k) / 12);
                if (x > 600 && x < 1000 && y > 300 && y < 700) { /* texture */
                    seed = seed * 1664525u + 1013904223u;
                    p[0] = (unsigned char)(p[0] + (seed >> 28));
                    p[1] = (unsigned char)(p[1] + (seed >> 27 & 15));
                }
            }
        snprintf(path, sizeof path, "%s/img%04d.png", dir, k);
        if (so_open(&f, path, &so, NULL, 0) < 0 ||
            !stbi_write_png_to_func(so_stb_writer, f, w, h, 3, px, w * 3) ||
            so_commit(&f) < 0) {
            so_abort(&f);
            free(px);
            return 1;
        }
    }
    free(px);
    return 0;
}

int main(int argc, char **argv)
{
    struct dirent **ents;
    int n, threads, i;
    pthread_t tid[256];
    double t0, dt;

    if (argc == 4 && !strcmp(argv[1], "--make"))
        return make_images(atoi(argv[2]), argv[3]);
    if (argc < 4) {
        fprintf(stderr, "usage: bench_images IN_DIR EDGE_DIR OUT_DIR [THREADS]\n");
        return 2;
    }
    threads = argc > 4 ? atoi(argv[4]) : 0;
    if (threads <= 0)
        threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (threads < 1)
        threads = 1;
    if (threads > 256)
        threads = 256;
    n = scandir(argv[1], &ents, NULL, by_name);
    if (n < 0) {
        perror(argv[1]);
        return 1;
    }
    items = calloc((size_t)n + 1, sizeof *items);
    for (i = 0; i < n; i++) {
        const char *name = ents[i]->d_name;
        char stem[1024], edge[4096];
        const char *dot = strrchr(name, '.');
        if (name[0] == '.' || !dot || dot == name) {
            free(ents[i]);
            continue;
        }
        snprintf(stem, sizeof stem, "%.*s", (int)(dot - name), name);
        item *it = &items[nitems];
        snprintf(it->in, sizeof it->in, "%s/%s", argv[1], name);
        snprintf(it->out, sizeof it->out, "%s/%s.png", argv[3], stem);
        snprintf(edge, sizeof edge, "%s/%s.png", argv[2], stem);
        if (img_load(edge, &it->edge) < 0 || it->edge.channels != 1 ||
            it->edge.bytes_per_sample != 1) {
            fprintf(stderr, "bench_images: %s: need gpuedge's 8-bit edge map\n", edge);
            return 1;
        }
        nitems++;
        free(ents[i]);
    }
    free(ents);
    t0 = ge_now();
    for (i = 0; i < threads; i++)
        if (pthread_create(&tid[i], NULL, worker, NULL))
            break;
    n = i;
    for (i = 0; i < n; i++)
        pthread_join(tid[i], NULL);
    dt = ge_now() - t0;
    printf("decode+encode alone: %d images, %d threads, %.3f s, %.1f images/s, %d failures\n",
           nitems, n, dt, nitems / dt, (int)failures);
    for (i = 0; i < nitems; i++)
        img_free(&items[i].edge);
    free(items);
    return failures ? 1 : 0;
}
