/*
 * bench_pipeline.c — streamed throughput of in-memory frames through the
 * GPU pipeline (pipe_run_gpu): pinned upload, kernels, download, with no
 * decoder or encoder in the way.  Each pinned input slot is filled once
 * with its own random RGB frame (so nothing is copied on the host per
 * frame); a null sink takes the edge maps.
 *
 *   bench_pipeline [WIDTH HEIGHT FRAMES [CHANNELS]]   (default 3840 2160 600 3)
 *
 * Prints fps, GB/s moved over PCIe, and the pipeline's own report.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"
#include "pipeline.h"
#include "report.h"
#include "safeout.h"
#include "util.h"

typedef struct bench_src {
    int w, h, ch;
    long frames, produced;
    void *filled[8];
    int nfilled;
    unsigned rng;
} bench_src;

static unsigned xorshift(unsigned *s)
{
    unsigned x = *s;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return *s = x;
}

static int bench_next(void *ctx, src_frame *fr, host_buf *buf)
{
    bench_src *b = ctx;
    size_t bytes = (size_t)b->w * b->h * b->ch;
    int seen = 0;
    if (b->produced == b->frames)
        return 0;
    if (host_buf_reserve(buf, bytes))
        return -1;
    for (int i = 0; i < b->nfilled; i++)
        seen |= b->filled[i] == buf->p;
    if (!seen) {
        /* smooth gradients plus noise: realistic, not zeros */
        unsigned char *p = buf->p;
        for (int y = 0; y < b->h; y++)
            for (int x = 0; x < b->w * b->ch; x++)
                p[(size_t)y * b->w * b->ch + x] =
                    (unsigned char)((x / 7 + y / 3 + (xorshift(&b->rng) & 15)) & 255);
        if (b->nfilled < 8)
            b->filled[b->nfilled++] = buf->p;
    }
    memset(fr, 0, sizeof *fr);
    fr->job = 0;
    fr->index = b->produced++;
    fr->pts = -1;
    fr->f.width = b->w;
    fr->f.height = b->h;
    fr->f.channels = b->ch;
    fr->f.bytes_per_sample = 1;
    fr->f.stride = (size_t)b->w * b->ch;
    fr->f.gain = 1.0f;
    fr->f.data = buf->p;
    return 1;
}

static int null_put(void *ctx, const sink_frame *fr, double *ms)
{
    (*(unsigned long long *)ctx) += fr->edge[0] + fr->hist[0];
    *ms = 0;
    return 0;
}

static int null_finish(void *ctx, int abandon)
{
    (void)ctx;
    (void)abandon;
    return 0;
}

int main(int argc, char **argv)
{
    bench_src b = {3840, 2160, 3, 600, 0, {0}, 0, 12345u};
    gpu_info gi;
    char why[256];
    pipe_opts po;
    rep_stats rep;
    unsigned long long sum = 0;
    double t0, wall;
    int r;

    if (argc >= 4) {
        b.w = atoi(argv[1]);
        b.h = atoi(argv[2]);
        b.frames = atol(argv[3]);
    }
    if (argc >= 5)
        b.ch = atoi(argv[4]);
    if (sig_init())
        return 1;
    if (gpu_probe(0, &gi, why, sizeof why)) {
        printf("skip bench-pipeline: %s\n", why);
        return 0;
    }
    memset(&po, 0, sizeof po);
    po.params.sigma = 1.0;
    po.params.scale = 1.0f;
    ge_taps_make(1.0, &po.taps);
    rep_init(&rep);
    po.report = &rep;
    snprintf(rep.device, sizeof rep.device, "%.200s", gi.name);
    frame_source src = {&b, bench_next};
    frame_sink sink = {&sum, null_put, null_finish};
    t0 = ge_now();
    r = pipe_run_gpu(&po, &src, &sink);
    wall = ge_now() - t0;
    rep.wall_s = wall;
    if (r) {
        fprintf(stderr, "bench-pipeline: pipeline failed (%d)\n", r);
        return 1;
    }
    {
        double in_b = (double)b.w * b.h * b.ch, out_b = (double)b.w * b.h;
        double fps = (double)b.frames / wall;
        printf("pipeline %dx%d ch=%d: %ld frames in %.3f s = %.1f fps; "
               "H2D %.2f GB/s, D2H %.2f GB/s (checksum %llu)\n",
               b.w, b.h, b.ch, b.frames, wall, fps, fps * in_b / 1e9, fps * out_b / 1e9, sum);
    }
    rep_print(&rep, 0, stdout);
    rep_free(&rep);
    return 0;
}
