/*
 * bench_pipeline.c — streamed throughput of in-memory frames through the
 * GPU pipeline (pipe_run_gpu): pinned upload, kernels, download, with no
 * decoder or encoder in the way.  Each pinned input slot is filled once
 * with its own random RGB frame (so nothing is copied on the host per
 * frame); a null sink takes the edge maps.
 *
 *   bench_pipeline [WIDTH HEIGHT FRAMES [CHANNELS [SLOTS [staged]]]]
 *                            (default 3840 2160 600 3 3, fused kernel)
 *   bench_pipeline copies    pinned H2D alone, D2H alone, and both at once
 *                            on two streams (does PCIe overlap the two
 *                            directions on this machine?)
 *
 * Prints fps, GB/s moved over PCIe, and the pipeline's own report.
 */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"
#include "pipeline.h"
#include "report.h"
#include "safeout.h"
#include "signals.h"
#include "util.h"

typedef struct bench_src {
    int w, h, ch;
    long frames, produced;
    void *filled[8];
    int nfilled;
    unsigned rng;
    double reserve_s, fill_s; /* start-up: buffer growth, first fill of a slot */
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
    double t0;
    if (b->produced == b->frames)
        return 0;
    t0 = ge_now();
    if (host_buf_reserve(buf, bytes))
        return -1;
    b->reserve_s += ge_now() - t0;
    for (int i = 0; i < b->nfilled; i++)
        seen |= b->filled[i] == buf->p;
    if (!seen) {
        double tf = ge_now();
        /* smooth gradients plus noise: realistic, not zeros */
        unsigned char *p = buf->p;
        for (int y = 0; y < b->h; y++)
            for (int x = 0; x < b->w * b->ch; x++)
                p[(size_t)y * b->w * b->ch + x] =
                    (unsigned char)((x / 7 + y / 3 + (xorshift(&b->rng) & 15)) & 255);
        if (b->nfilled < 8)
            b->filled[b->nfilled++] = buf->p;
        b->fill_s += ge_now() - tf;
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

/* The sink times the steady state: from the WARM-th frame to the last, so
 * start-up (pinned allocations, filling each slot once) is not counted. */
#define WARM 50
/* Start-up timeline: when each of the first frames left the pipeline. */
#define TIMELINE 64
typedef struct null_sink {
    unsigned long long sum;
    long last_index;
    double t_warm, t_last;
    double t_out[TIMELINE];
} null_sink;

static int null_put(void *ctx, const sink_frame *fr, double *ms)
{
    null_sink *n = ctx;
    n->sum += fr->edge[0] + fr->hist[0];
    if (fr->index == WARM)
        n->t_warm = ge_now();
    n->t_last = ge_now();
    if (fr->index >= 0 && fr->index < TIMELINE)
        n->t_out[fr->index] = n->t_last;
    n->last_index = fr->index;
    *ms = 0;
    return 0;
}

static int null_finish(void *ctx, int abandon)
{
    (void)ctx;
    (void)abandon;
    return 0;
}

/* GB/s of `reps` copies of `bytes` each way, alone and concurrently. */
static int copies(void)
{
    const size_t bytes = 64u << 20;
    const int reps = 20;
    void *h_a, *h_b, *d_a, *d_b;
    cudaStream_t s1, s2;
    cudaEvent_t e0, e1, f0, f1;
    float ms_up = 0, ms_dn = 0, ms_both = 0;
    if (cudaMallocHost(&h_a, bytes) || cudaMallocHost(&h_b, bytes) ||
        cudaMalloc(&d_a, bytes) || cudaMalloc(&d_b, bytes))
        return 1;
    memset(h_a, 1, bytes);
    memset(h_b, 2, bytes);
    cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking);
    cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking);
    cudaEventCreate(&e0); cudaEventCreate(&e1);
    cudaEventCreate(&f0); cudaEventCreate(&f1);
    for (int pass = 0; pass < 2; pass++) { /* pass 0 warms up */
        cudaEventRecord(e0, s1);
        for (int i = 0; i < reps; i++)
            cudaMemcpyAsync(d_a, h_a, bytes, cudaMemcpyHostToDevice, s1);
        cudaEventRecord(e1, s1);
        cudaEventSynchronize(e1);
        cudaEventElapsedTime(&ms_up, e0, e1);
        cudaEventRecord(e0, s2);
        for (int i = 0; i < reps; i++)
            cudaMemcpyAsync(h_b, d_b, bytes, cudaMemcpyDeviceToHost, s2);
        cudaEventRecord(e1, s2);
        cudaEventSynchronize(e1);
        cudaEventElapsedTime(&ms_dn, e0, e1);
    }
    double t0 = ge_now();
    for (int i = 0; i < reps; i++) {
        cudaMemcpyAsync(d_a, h_a, bytes, cudaMemcpyHostToDevice, s1);
        cudaMemcpyAsync(h_b, d_b, bytes, cudaMemcpyDeviceToHost, s2);
    }
    cudaStreamSynchronize(s1);
    cudaStreamSynchronize(s2);
    ms_both = (float)((ge_now() - t0) * 1e3);
    printf("copies %zu MiB x %d: H2D alone %.1f GB/s, D2H alone %.1f GB/s, "
           "both at once %.1f + %.1f GB/s (%.1f in all)\n",
           bytes >> 20, reps, reps * bytes / ms_up / 1e6, reps * bytes / ms_dn / 1e6,
           reps * bytes / ms_both / 1e6, reps * bytes / ms_both / 1e6,
           2.0 * reps * bytes / ms_both / 1e6);
    return 0;
}

int main(int argc, char **argv)
{
    bench_src b = {3840, 2160, 3, 600, 0, {0}, 0, 12345u, 0, 0};
    gpu_info gi;
    pipe_opts po;
    rep_stats rep;
    null_sink ns = {0};
    double t0, wall;
    int r;

    int slots = 0;
    if (argc >= 2 && !strcmp(argv[1], "copies")) {
        if (gpu_probe(0, &gi)) {
            printf("skip bench-pipeline: %s\n", ge_why());
            return 0;
        }
        return copies();
    }
    if (argc >= 4) {
        b.w = atoi(argv[1]);
        b.h = atoi(argv[2]);
        b.frames = atol(argv[3]);
    }
    if (argc >= 5)
        b.ch = atoi(argv[4]);
    if (argc >= 6)
        slots = atoi(argv[5]);
    int staged = argc >= 7 && !strcmp(argv[6], "staged");
    if (sig_init())
        return 1;
    if (gpu_probe(0, &gi)) {
        printf("skip bench-pipeline: %s\n", ge_why());
        return 0;
    }
    memset(&po, 0, sizeof po);
    po.slots = slots;
    po.staged = staged;
    po.params.sigma = 1.0;
    po.params.scale = 1.0f;
    ge_taps_make(1.0, &po.taps);
    rep_init(&rep);
    po.report = &rep;
    snprintf(rep.device, sizeof rep.device, "%.200s", gi.name);
    frame_source src = {&b, bench_next};
    frame_sink sink = {&ns, null_put, null_finish};
    t0 = ge_now();
    r = pipe_run_gpu(&po, &src, &sink);
    wall = ge_now() - t0;
    rep.wall_s = wall;
    if (r) {
        fprintf(stderr, "bench-pipeline: pipeline failed (%d)\n", r);
        return 1;
    }
    if (b.frames <= WARM + 10) {
        fprintf(stderr, "bench-pipeline: give more than %d frames\n", WARM + 10);
        return 2;
    }
    {
        double in_b = (double)b.w * b.h * b.ch, out_b = (double)b.w * b.h;
        double fps = (double)(ns.last_index - WARM) / (ns.t_last - ns.t_warm);
        printf("pipeline %s %dx%d ch=%d slots=%d: %.1f fps steady (frames %d..%ld), "
               "H2D %.2f GB/s, D2H %.2f GB/s; whole run %ld frames in %.3f s (checksum %llu)\n",
               staged ? "staged" : "fused", b.w, b.h, b.ch, slots ? slots : 3, fps, WARM, ns.last_index, fps * in_b / 1e9,
               fps * out_b / 1e9, b.frames, wall, ns.sum);
    }
    /* Where the start-up goes: the source's own first fills (a real
     * decoder's work), buffer growth, and the frames' exit times. */
    printf("startup: first frame out %.1f ms after pipe start; frame %d out at %.1f ms "
           "(steady pace would be %.1f ms); source: buffer growth %.1f ms, first fills %.1f ms\n",
           (ns.t_out[0] - t0) * 1e3, WARM, (ns.t_warm - t0) * 1e3,
           WARM * (ns.t_last - ns.t_warm) / (double)(ns.last_index - WARM) * 1e3,
           b.reserve_s * 1e3, b.fill_s * 1e3);
    printf("startup timeline (ms, frame:out):");
    for (int i = 0; i < TIMELINE && i <= ns.last_index; i += (i < 8 ? 1 : 8))
        printf(" %d:%.1f", i, (ns.t_out[i] - t0) * 1e3);
    printf("\n");
    rep_print(&rep, 0, stdout);
    rep_free(&rep);
    return 0;
}
