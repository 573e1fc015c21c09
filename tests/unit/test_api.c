/*
 * test_api.c — libgpuedge's public API (include/gpuedge.h): bad arguments
 * give the documented negative code and a text; results equal the
 * reference (ref_process) for 8/16-bit, 1..4 channels, padded strides and
 * every parameter; contexts used from several threads at once give the
 * single-thread bits (the header's thread-safety rules).  The GPU checks
 * run where a GPU is usable, else say skip.
 */
#include "gpuedge.h"

#if GE_CUDA /* the CPU-only variant (make CUDA=0) has no device path */
#include <cuda_runtime_api.h>
#endif
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "edge.h"
#include "reference.h"
#include "util.h"

static uint32_t rng = 12345;
static uint32_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 17;
    rng ^= rng << 5;
    return rng;
}

/* A random frame of w x h, ch channels, bps bytes, `pad` bytes after each
 * row; smooth-ish (a gradient plus noise) so the edge map is not flat. */
static void *make_pixels(int w, int h, int ch, int bps, size_t pad, size_t *stride)
{
    const size_t row = (size_t)w * ch * bps + pad;
    uint8_t *p = malloc(row * h + 1);
    if (!p)
        return NULL;
    *stride = row;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w * ch; x++) {
            uint32_t v = (uint32_t)(x * 7 + y * 13) + (next_rand() & 63);
            if (bps == 1)
                p[y * row + x] = (uint8_t)v;
            else {
                uint16_t s = (uint16_t)(v * 257 + (next_rand() & 255));
                memcpy(p + y * row + 2 * (size_t)x, &s, 2);
            }
        }
    return p;
}

static ge_params params_of(const ge_options *o)
{
    ge_params p;
    memset(&p, 0, sizeof p);
    p.sigma = o->sigma;
    p.border = o->border;
    p.scale = o->scale;
    p.use_threshold = o->use_threshold;
    p.threshold = o->threshold;
    p.invert = o->invert;
    p.canny = o->canny;
    p.canny_low = o->canny_low;
    p.canny_high = o->canny_high;
    return p;
}

/* ref_process on the same frame: edge (w*h) and hist. */
static int reference(const ge_options *o, const void *px, int w, int h, int ch, int bps,
                     size_t stride, uint8_t *edge, uint64_t *hist)
{
    ge_frame f;
    ge_planes pl;
    ge_params p = params_of(o);
    memset(&f, 0, sizeof f);
    f.width = w;
    f.height = h;
    f.channels = ch;
    f.bytes_per_sample = bps;
    f.stride = stride;
    f.gain = bps == 2 ? GE_S16 : 1.0f;
    f.data = px;
    memset(&pl, 0, sizeof pl);
    pl.edge = edge;
    if (ref_process(&f, &p, &pl) < 0)
        return -1;
    memcpy(hist, pl.hist, sizeof pl.hist);
    return 0;
}

/* The BGR(A) twin of an RGB(A) frame (same stride). */
static void *to_bgr(const void *px, int w, int h, int ch, int bps, size_t stride)
{
    uint8_t *q = malloc(stride * h + 1);
    const uint8_t *p = px;
    if (!q)
        return NULL;
    memcpy(q, p, stride * h);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            uint8_t *d = q + y * stride + (size_t)x * ch * bps;
            const uint8_t *s = p + y * stride + (size_t)x * ch * bps;
            memcpy(d, s + 2 * bps, bps);
            memcpy(d + 2 * bps, s, bps);
        }
    return q;
}

/* count frames of w x h (rows `pad` bytes apart more than needed; frames
 * and maps apart, with gaps) through ctx, each against the reference of its
 * own pixels (of its RGB twin when bgr): with batch, one ge_process_batch
 * (_device) call; without, one ge_process(_device) call (count 1).  The
 * device calls with device_path.  "" or what differed. */
static const char *frames_vs_ref(ge_ctx *ctx, const ge_options *o, int count, int w, int h,
                                 int ch, int bps, size_t pad, int bgr, int batch,
                                 int device_path)
{
    static char why[256];
    size_t stride = 0, es = (size_t)w + 5, fb, efb = es * h + 7;
    uint8_t *rgb[8] = {0}, *all = NULL, *got = NULL, *want = malloc((size_t)w * h);
    uint64_t *hg = calloc((size_t)count * 256, sizeof *hg), hw[256];
    int r;

    why[0] = 0;
    if (count < 1 || count > 8)
        count = 0; /* reported below (rgb holds 8) */
    for (int i = 0; i < count; i++)
        rgb[i] = make_pixels(w, h, ch, bps, pad, &stride);
    fb = stride * h + 11;
    all = malloc(fb * count);
    got = malloc(efb * count);
    if (!count || !all || !got || !want || !hg) {
        snprintf(why, sizeof why, count ? "out of memory" : "test: 1 to 8 frames");
        goto end;
    }
    for (int i = 0; i < count; i++) {
        void *b = bgr ? to_bgr(rgb[i], w, h, ch, bps, stride) : NULL;
        memcpy(all + i * fb, b ? b : rgb[i], stride * h);
        free(b);
    }
    memset(got, 0xA5, efb * count);
    if (device_path) {
#if GE_CUDA
        void *d_px = NULL, *d_edge = NULL, *d_hist = NULL;
        cudaStream_t s = NULL;
        if (cudaStreamCreate(&s) || cudaMalloc(&d_px, fb * count) ||
            cudaMalloc(&d_edge, efb * count) || cudaMalloc(&d_hist, 256 * 8 * count) ||
            cudaMemcpy(d_px, all, fb * count, cudaMemcpyHostToDevice) ||
            cudaMemcpy(d_edge, got, efb * count, cudaMemcpyHostToDevice))
            snprintf(why, sizeof why, "CUDA setup failed");
        else if ((r = batch ? ge_process_batch_device(ctx, count, d_px, fb, w, h, ch, bps,
                                                      stride, d_edge, efb, es, d_hist, s)
                            : ge_process_device(ctx, d_px, w, h, ch, bps, stride, d_edge, es,
                                                d_hist, s)) < 0)
            snprintf(why, sizeof why, "%s %d: %s", batch ? "ge_process_batch_device" :
                     "ge_process_device", r, ge_last_error(ctx));
        else if (cudaStreamSynchronize(s) ||
                 cudaMemcpy(got, d_edge, efb * count, cudaMemcpyDeviceToHost) ||
                 cudaMemcpy(hg, d_hist, 256 * 8 * count, cudaMemcpyDeviceToHost))
            snprintf(why, sizeof why, "CUDA copy back failed");
        cudaFree(d_px);
        cudaFree(d_edge);
        cudaFree(d_hist);
        if (s)
            cudaStreamDestroy(s);
#else
        snprintf(why, sizeof why, "built without CUDA");
#endif
        if (why[0])
            goto end;
    } else if ((r = batch ? ge_process_batch(ctx, count, all, fb, w, h, ch, bps, stride, got,
                                             efb, es, hg)
                          : ge_process(ctx, all, w, h, ch, bps, stride, got, es, hg)) < 0) {
        snprintf(why, sizeof why, "%s %d: %s", batch ? "ge_process_batch" : "ge_process", r,
                 ge_last_error(ctx));
        goto end;
    }
    for (int i = 0; i < count && !why[0]; i++) {
        const uint8_t *g = got + i * efb;
        if (reference(o, rgb[i], w, h, ch, bps, stride, want, hw) < 0) {
            snprintf(why, sizeof why, "reference out of memory");
            break;
        }
        for (int y = 0; y < h && !why[0]; y++)
            for (size_t x = 0; x < es && !why[0]; x++)
                if (x < (size_t)w ? g[y * es + x] != want[y * w + x] : g[y * es + x] != 0xA5)
                    snprintf(why, sizeof why, "frame %d (%zu,%d): %d, want %d", i, x, y,
                             g[y * es + x], x < (size_t)w ? want[y * w + x] : 0xA5);
        if (!why[0] && g[es * (h - 1) + w] != 0xA5)
            snprintf(why, sizeof why, "frame %d: the gap after its map written", i);
        if (!why[0] && memcmp(hg + 256 * i, hw, sizeof hw))
            snprintf(why, sizeof why, "frame %d: histogram differs", i);
    }
end:
    for (int i = 0; i < count; i++)
        free(rgb[i]);
    free(all);
    free(got);
    free(want);
    free(hg);
    return why;
}

/* One frame through ge_process or ge_process_device; "" or what differed. */
static const char *compare(ge_ctx *ctx, const ge_options *o, int w, int h, int ch, int bps,
                           size_t pad, int device_path)
{
    return frames_vs_ref(ctx, o, 1, w, h, ch, bps, pad, 0, 0, device_path);
}

/* count frames through one batch call; "" or what differed. */
static const char *compare_batch(ge_ctx *ctx, const ge_options *o, int count, int w, int h,
                                 int ch, int bps, int bgr, int device_path)
{
    return frames_vs_ref(ctx, o, count, w, h, ch, bps, 3, bgr, 1, device_path);
}

/* ------------------------------------------------------------------------ */

static void test_bad_args(void)
{
    ge_options o;
    ge_ctx *ctx = (ge_ctx *)&o; /* must come back NULL */
    uint8_t px[64] = {0}, edge[64];
    uint64_t hist[256];
    int r;

#define BAD_OPT(label, stmt)                                                      \
    do {                                                                          \
        ge_options_init(&o);                                                      \
        o.backend = GE_BACKEND_CPU;                                               \
        stmt;                                                                     \
        ctx = (ge_ctx *)&o;                                                       \
        r = ge_ctx_new(&ctx, &o);                                                 \
        CHECK(r == GE_ERR_ARG && ctx == NULL && ge_last_error(NULL)[0],           \
              "ge_ctx_new: " label " -> GE_ERR_ARG + text", "rc %d, text '%s'", r,  \
              ge_last_error(NULL));                                               \
        ge_ctx_free(&ctx);                                                        \
    } while (0)
    BAD_OPT("sigma 20", o.sigma = 20);
    BAD_OPT("sigma 0.05", o.sigma = 0.05);
    BAD_OPT("sigma -1", o.sigma = -1);
    BAD_OPT("border 3", o.border = 3);
    BAD_OPT("scale 0", o.scale = 0);
    BAD_OPT("scale NaN", o.scale = (float)NAN);
    BAD_OPT("threshold 300", (o.use_threshold = 1, o.threshold = 300));
    BAD_OPT("canny 3", o.canny = 3);
    BAD_OPT("canny low > high", (o.canny = GE_CANNY_ON, o.canny_low = 50, o.canny_high = 10));
    BAD_OPT("canny and threshold", (o.canny = GE_CANNY_AUTO, o.use_threshold = 1));
    BAD_OPT("backend 7", o.backend = 7);
    BAD_OPT("device -1", o.device = -1);
    BAD_OPT("threads -1", o.threads = -1);
    r = ge_ctx_new(NULL, NULL);
    CHECK(r == GE_ERR_ARG, "ge_ctx_new(NULL) -> GE_ERR_ARG", "rc %d", r);

    ge_options_init(&o);
    o.backend = GE_BACKEND_CPU;
    r = ge_ctx_new(&ctx, &o);
    CHECK(r == 0 && ctx && ge_ctx_backend(ctx) == GE_BACKEND_CPU, "ge_ctx_new: CPU context",
          "rc %d: %s", r, ge_last_error(NULL));
    if (r)
        return;
    CHECK(ge_last_error(ctx)[0] == 0, "a new context has no error text", "'%s'",
          ge_last_error(ctx));

#define BAD_CALL(label, code, call)                                               \
    do {                                                                          \
        r = (call);                                                               \
        CHECK(r == (code) && ge_last_error(ctx)[0] && ge_last_error(NULL)[0],     \
              label " -> " #code " + text", "rc %d, text '%s'", r,                \
              ge_last_error(ctx));                                                \
    } while (0)
    BAD_CALL("ge_process: pixels NULL", GE_ERR_ARG,
             ge_process(ctx, NULL, 4, 4, 1, 1, 4, edge, 4, hist));
    BAD_CALL("ge_process: edge NULL", GE_ERR_ARG,
             ge_process(ctx, px, 4, 4, 1, 1, 4, NULL, 4, hist));
    BAD_CALL("ge_process: width 0", GE_ERR_ARG,
             ge_process(ctx, px, 0, 4, 1, 1, 4, edge, 4, hist));
    BAD_CALL("ge_process: height 0", GE_ERR_ARG,
             ge_process(ctx, px, 4, 0, 1, 1, 4, edge, 4, hist));
    BAD_CALL("ge_process: width -3", GE_ERR_ARG,
             ge_process(ctx, px, -3, 4, 1, 1, 4, edge, 4, hist));
    BAD_CALL("ge_process: stride too small", GE_ERR_ARG,
             ge_process(ctx, px, 4, 4, 3, 1, 11, edge, 4, hist));
    BAD_CALL("ge_process: 16-bit stride too small", GE_ERR_ARG,
             ge_process(ctx, px, 4, 4, 1, 2, 7, edge, 4, hist));
    BAD_CALL("ge_process: channels 5", GE_ERR_ARG,
             ge_process(ctx, px, 2, 2, 5, 1, 10, edge, 2, hist));
    BAD_CALL("ge_process: channels 0", GE_ERR_ARG,
             ge_process(ctx, px, 2, 2, 0, 1, 10, edge, 2, hist));
    BAD_CALL("ge_process: 3 bytes a sample", GE_ERR_ARG,
             ge_process(ctx, px, 2, 2, 1, 3, 6, edge, 2, hist));
    BAD_CALL("ge_process: edge stride < width", GE_ERR_ARG,
             ge_process(ctx, px, 4, 4, 1, 1, 4, edge, 3, hist));
    BAD_CALL("ge_process_device on a CPU context", GE_ERR_UNSUPPORTED,
             ge_process_device(ctx, px, 4, 4, 1, 1, 4, edge, 4, NULL, NULL));
    BAD_CALL("ge_process_batch: count 0", GE_ERR_ARG,
             ge_process_batch(ctx, 0, px, 16, 4, 4, 1, 1, 4, edge, 16, 4, hist));
    BAD_CALL("ge_process_batch: overlapping edge maps", GE_ERR_ARG,
             ge_process_batch(ctx, 2, px, 16, 4, 4, 1, 1, 4, edge, 15, 4, NULL));
    BAD_CALL("ge_process_batch: pixels NULL", GE_ERR_ARG,
             ge_process_batch(ctx, 2, NULL, 16, 4, 4, 1, 1, 4, edge, 16, 4, NULL));
    BAD_CALL("ge_process_batch_device on a CPU context", GE_ERR_UNSUPPORTED,
             ge_process_batch_device(ctx, 2, px, 16, 4, 4, 1, 1, 4, edge, 16, 4, NULL, NULL));
    BAD_CALL("ge_ctx_set_order 2", GE_ERR_ARG, ge_ctx_set_order(ctx, 2));
    r = ge_process(NULL, px, 4, 4, 1, 1, 4, edge, 4, hist);
    CHECK(r == GE_ERR_ARG && strstr(ge_last_error(NULL), "ctx"),
          "ge_process: ctx NULL -> GE_ERR_ARG, thread's text", "rc %d '%s'", r,
          ge_last_error(NULL));
    CHECK(ge_ctx_backend(NULL) == GE_ERR_ARG, "ge_ctx_backend(NULL) -> GE_ERR_ARG", "%d", ge_ctx_backend(NULL));
    /* a good call after failures works and leaves the texts alone */
    r = ge_process(ctx, px, 8, 8, 1, 1, 8, edge, 8, NULL);
    CHECK(r == 0 && ge_last_error(ctx)[0], "a good call after bad ones: 0, text kept",
          "rc %d", r);
    ge_ctx_free(&ctx);
    CHECK(ctx == NULL, "ge_ctx_free sets the pointer to NULL", "%p", (void *)ctx);
    ge_ctx_free(&ctx);
    ge_ctx_free(NULL);
    CHECK(1, "ge_ctx_free twice and on NULL", "-");

    CHECK(strcmp(ge_strerror(GE_ERR_ARG), "bad argument") == 0 && ge_strerror(-99)[0],
          "ge_strerror", "%s", ge_strerror(GE_ERR_ARG));
    {
        char v[32];
        snprintf(v, sizeof v, "%d.%d.%d", GE_VERSION_MAJOR, GE_VERSION_MINOR, GE_VERSION_PATCH);
        CHECK(strcmp(ge_version(), v) == 0 && ge_version_number() == GE_VERSION_NUMBER,
              "ge_version matches the header", "%s vs %s", ge_version(), v);
    }
}

/* Every layout and a spread of parameters against the reference. */
static void test_results(int backend, const char *tag)
{
    static const struct { int w, h; size_t pad; } sizes[] = {
        {1, 1, 0}, {6, 5, 3}, {37, 23, 1}, {130, 40, 0},
    };
    char name[160];
    for (int bps = 1; bps <= 2; bps++)
        for (int ch = 1; ch <= 4; ch++) {
            ge_options o;
            ge_ctx *ctx = NULL;
            const char *why = "";
            int r;
            ge_options_init(&o);
            o.backend = backend;
            if ((r = ge_ctx_new(&ctx, &o)) < 0) {
                snprintf(name, sizeof name, "%s: %d-bit %d channels", tag, 8 * bps, ch);
                CHECK(0, name, "ge_ctx_new %d: %s", r, ge_last_error(NULL));
                continue;
            }
            for (size_t i = 0; i < sizeof sizes / sizeof sizes[0] && !why[0]; i++)
                why = compare(ctx, &o, sizes[i].w, sizes[i].h, ch, bps, sizes[i].pad, 0);
            snprintf(name, sizeof name, "%s: %d-bit %d channel%s, 4 sizes, padded strides == "
                     "reference", tag, 8 * bps, ch, ch > 1 ? "s" : "");
            CHECK(!why[0], name, "%s", why);
            ge_ctx_free(&ctx);
        }
    {
        static const struct { double sigma; int border; float scale; int thr; float t; int inv;
                              int canny; float lo, hi; }
            ps[] = {
                {1, GE_BORDER_REPLICATE, 1, 0, 0, 0, GE_CANNY_ON, 20, 60},
                {2, GE_BORDER_ZERO, 1, 0, 0, 1, GE_CANNY_AUTO, 0, 0},
                {0, GE_BORDER_REPLICATE, 1, 0, 0, 0, 0, 0, 0},
                {2.5, GE_BORDER_REFLECT101, 1, 0, 0, 0, 0, 0, 0},
                {1, GE_BORDER_ZERO, 0.5f, 0, 0, 1, 0, 0, 0},
                {1, GE_BORDER_REPLICATE, 3, 1, 40, 0, 0, 0, 0},
                {16, GE_BORDER_REFLECT101, 1, 1, 0, 1, 0, 0, 0},
                {0.1, GE_BORDER_ZERO, 8, 0, 0, 0, 0, 0, 0},
            };
        for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++) {
            ge_options o;
            ge_ctx *ctx = NULL;
            const char *why;
            int r;
            ge_options_init(&o);
            o.backend = backend;
            o.sigma = ps[i].sigma;
            o.border = ps[i].border;
            o.scale = ps[i].scale;
            o.use_threshold = ps[i].thr;
            o.threshold = ps[i].t;
            o.invert = ps[i].inv;
            o.canny = ps[i].canny;
            o.canny_low = ps[i].lo;
            o.canny_high = ps[i].hi;
            char thr[48] = "";
            if (o.use_threshold)
                snprintf(thr, sizeof thr, " threshold %g", (double)o.threshold);
            else if (o.canny)
                snprintf(thr, sizeof thr, " canny %s", o.canny == GE_CANNY_AUTO ? "auto" : "20,60");
            snprintf(name, sizeof name, "%s: sigma %g border %d scale %g%s%s == reference", tag,
                     o.sigma, o.border, (double)o.scale, thr, o.invert ? " invert" : "");
            if ((r = ge_ctx_new(&ctx, &o)) < 0) {
                CHECK(0, name, "ge_ctx_new %d: %s", r, ge_last_error(NULL));
                continue;
            }
            why = compare(ctx, &o, 71, 45, 3, 1, 2, 0);
            if (!why[0])
                why = compare(ctx, &o, 33, 70, 1, 2, 0, 0);
            CHECK(!why[0], name, "%s", why);
            ge_ctx_free(&ctx);
        }
    }
}

/* ------------------------------------------------------------------------ */
/* threads: one context each, different parameters, frames in a loop        */

#define TW 97
#define TH 61
#define TFRAMES 6
#define TTHREADS 4

typedef struct {
    int backend;
    ge_options o;
    const uint8_t *px[TFRAMES];
    uint8_t *edge[TFRAMES];
    uint64_t hist[TFRAMES][256];
    int rc;
    char err[256];
} tjob;

static void *tjob_run(void *arg)
{
    tjob *j = arg;
    ge_ctx *ctx = NULL;
    j->rc = ge_ctx_new(&ctx, &j->o);
    for (int round = 0; round < 3 && j->rc == 0; round++)
        for (int k = 0; k < TFRAMES && j->rc == 0; k++)
            j->rc = ge_process(ctx, j->px[k], TW, TH, 3, 1, TW * 3, j->edge[k], TW, j->hist[k]);
    snprintf(j->err, sizeof j->err, "%s", ctx ? ge_last_error(ctx) : ge_last_error(NULL));
    ge_ctx_free(&ctx);
    return NULL;
}

static void test_threads(int backend, const char *tag)
{
    uint8_t *px[TFRAMES];
    tjob *solo = calloc(TTHREADS, sizeof *solo), *par = calloc(TTHREADS, sizeof *par);
    pthread_t th[TTHREADS];
    char name[160], why[640] = "";
    size_t stride;

    for (int k = 0; k < TFRAMES; k++)
        px[k] = make_pixels(TW, TH, 3, 1, 0, &stride);
    for (int i = 0; i < TTHREADS; i++) {
        tjob *js[2] = {&solo[i], &par[i]};
        for (int v = 0; v < 2; v++) {
            ge_options_init(&js[v]->o);
            js[v]->o.backend = backend;
            js[v]->o.threads = 2;
            /* different taps per context: on a GPU they share a table */
            js[v]->o.sigma = 0.5 + i;
            js[v]->o.border = i % 3;
            for (int k = 0; k < TFRAMES; k++) {
                js[v]->px[k] = px[k];
                js[v]->edge[k] = malloc(TW * TH);
            }
        }
    }
    /* one after another, then all at once */
    for (int i = 0; i < TTHREADS; i++)
        tjob_run(&solo[i]);
    for (int i = 0; i < TTHREADS; i++)
        if (pthread_create(&th[i], NULL, tjob_run, &par[i])) {
            snprintf(why, sizeof why, "pthread_create");
            for (int k = 0; k < i; k++)
                pthread_join(th[k], NULL);
            goto end;
        }
    for (int i = 0; i < TTHREADS; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < TTHREADS && !why[0]; i++) {
        if (solo[i].rc || par[i].rc) {
            snprintf(why, sizeof why, "context %d: rc %d/%d: %s %s", i, solo[i].rc, par[i].rc,
                     solo[i].err, par[i].err);
            break;
        }
        for (int k = 0; k < TFRAMES && !why[0]; k++)
            if (memcmp(solo[i].edge[k], par[i].edge[k], TW * TH) ||
                memcmp(solo[i].hist[k], par[i].hist[k], sizeof solo[i].hist[k]))
                snprintf(why, sizeof why, "context %d frame %d differs", i, k);
    }
    if (!why[0]) {
        /* and the single-thread results are the reference's */
        uint8_t *want = malloc(TW * TH);
        uint64_t hw[256];
        for (int i = 0; i < TTHREADS && !why[0]; i++)
            if (!want || reference(&solo[i].o, px[0], TW, TH, 3, 1, stride, want, hw) ||
                memcmp(want, solo[i].edge[0], TW * TH))
                snprintf(why, sizeof why, "context %d differs from the reference", i);
        free(want);
    }
end:
    snprintf(name, sizeof name, "%s: %d threads, a context each (different sigma), %d frames x 3 "
             "== one thread's results", tag, TTHREADS, TFRAMES);
    CHECK(!why[0], name, "%s", why);
    for (int i = 0; i < TTHREADS; i++)
        for (int k = 0; k < TFRAMES; k++) {
            free(solo[i].edge[k]);
            free(par[i].edge[k]);
        }
    for (int k = 0; k < TFRAMES; k++)
        free(px[k]);
    free(solo);
    free(par);
}

/* ------------------------------------------------------------------------ */
/* batches, channel order, threads                                          */

static void test_batch(int backend, const char *tag)
{
    static const struct { int count, w, h, threads; } cases[] = {
        {1, 37, 23, 0}, {5, 37, 23, 3}, {8, 6, 5, 2}, {3, 130, 40, 1}, {2, 64, 48, 7},
    };
    char name[200];
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        for (int bps = 1; bps <= 2; bps++) {
            ge_options o;
            ge_ctx *ctx = NULL;
            const char *why = "";
            int r;
            ge_options_init(&o);
            o.backend = backend;
            o.threads = cases[k].threads;
            o.sigma = 1.5;
            o.border = GE_BORDER_REFLECT101;
            if ((r = ge_ctx_new(&ctx, &o)) < 0)
                why = ge_last_error(NULL);
            for (int ch = 1; ch <= 4 && !why[0]; ch++)
                why = compare_batch(ctx, &o, cases[k].count, cases[k].w, cases[k].h, ch, bps, 0,
                                    0);
            snprintf(name, sizeof name, "%s: ge_process_batch %d x %dx%d %d-bit, 1..4 channels, "
                     "threads %d, gaps between frames and maps == reference", tag,
                     cases[k].count, cases[k].w, cases[k].h, 8 * bps, cases[k].threads);
            CHECK(!why[0], name, "%s", why);
            ge_ctx_free(&ctx);
        }
    {
        /* Canny and a threshold through the batch too */
        ge_options o;
        ge_ctx *ctx = NULL;
        const char *why = "";
        ge_options_init(&o);
        o.backend = backend;
        o.canny = GE_CANNY_AUTO;
        if (ge_ctx_new(&ctx, &o) == 0)
            why = compare_batch(ctx, &o, 4, 71, 33, 3, 1, 0, 0);
        else
            why = ge_last_error(NULL);
        ge_ctx_free(&ctx);
        ge_options_init(&o);
        o.backend = backend;
        o.use_threshold = 1;
        o.threshold = 30;
        o.invert = 1;
        if (!why[0] && ge_ctx_new(&ctx, &o) == 0)
            why = compare_batch(ctx, &o, 3, 50, 20, 4, 2, 0, 0);
        snprintf(name, sizeof name, "%s: ge_process_batch with canny auto, threshold + invert "
                 "== reference", tag);
        CHECK(!why[0], name, "%s", why);
        ge_ctx_free(&ctx);
    }
}

static void test_order(int backend, const char *tag)
{
    char name[160];
    for (int bps = 1; bps <= 2; bps++)
        for (int ch = 1; ch <= 4; ch++) {
            ge_options o;
            ge_ctx *ctx = NULL;
            const char *why = "";
            int r;
            ge_options_init(&o);
            o.backend = backend;
            o.sigma = 2;
            if ((r = ge_ctx_new(&ctx, &o)) < 0 || (r = ge_ctx_set_order(ctx, GE_ORDER_BGR)) < 0)
                why = ctx ? ge_last_error(ctx) : ge_last_error(NULL);
            /* 1 and 2 channels: nothing to reorder */
            if (!why[0])
                why = compare_batch(ctx, &o, 1, 45, 31, ch, bps, ch >= 3, 0);
            if (!why[0])
                why = compare_batch(ctx, &o, 3, 20, 9, ch, bps, ch >= 3, 0);
            snprintf(name, sizeof name, "%s: GE_ORDER_BGR, %d-bit %d channel%s, one frame and a "
                     "batch == the RGB twin's reference", tag, 8 * bps, ch, ch > 1 ? "s" : "");
            CHECK(!why[0], name, "%s", why);
            ge_ctx_free(&ctx);
        }
}

static int write_file(const char *dir, const char *rel, const char *text)
{
    char path[512], cmd[600];
    FILE *f;
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    snprintf(cmd, sizeof cmd, "mkdir -p \"$(dirname '%s')\"", path);
    if (system(cmd) != 0 || !(f = fopen(path, "w")))
        return -1;
    fputs(text, f);
    return fclose(f);
}

/* ge_cpu_quota on made-up /proc and /sys trees, ge_cpu_count under a
 * one-CPU affinity mask, and the contexts' thread counts. */
static void test_cpu_count(void)
{
    static const struct {
        const char *label, *cgroup, *files[4][2];
        int want;
    } trees[] = {
        {"v2: no limit", "0::/a\n", {{"sys/fs/cgroup/a/cpu.max", "max 100000\n"}}, 0},
        {"v2: 2.5 CPUs", "0::/a\n", {{"sys/fs/cgroup/a/cpu.max", "250000 100000\n"}}, 3},
        {"v2: the parent's limit binds", "0::/a/b\n",
         {{"sys/fs/cgroup/a/b/cpu.max", "max 100000\n"},
          {"sys/fs/cgroup/a/cpu.max", "200000 100000\n"}}, 2},
        {"v2: the tighter of child and parent", "0::/a/b\n",
         {{"sys/fs/cgroup/a/b/cpu.max", "50000 100000\n"},
          {"sys/fs/cgroup/a/cpu.max", "400000 100000\n"}}, 1},
        {"v2 hybrid (unified)", "1:cpu:/\n0::/s\n",
         {{"sys/fs/cgroup/unified/s/cpu.max", "600000 100000\n"}}, 6},
        {"v1: quota/period", "4:cpu,cpuacct:/x\n",
         {{"sys/fs/cgroup/cpu,cpuacct/x/cpu.cfs_quota_us", "350000\n"},
          {"sys/fs/cgroup/cpu,cpuacct/x/cpu.cfs_period_us", "100000\n"}}, 4},
        {"v1: quota -1", "3:cpu:/\n",
         {{"sys/fs/cgroup/cpu/cpu.cfs_quota_us", "-1\n"},
          {"sys/fs/cgroup/cpu/cpu.cfs_period_us", "100000\n"}}, 0},
        {"v1: the container's own mount (path not under it)", "2:cpu:/docker/abc\n",
         {{"sys/fs/cgroup/cpu/cpu.cfs_quota_us", "100000\n"},
          {"sys/fs/cgroup/cpu/cpu.cfs_period_us", "50000\n"}}, 2},
        {"no cgroup files", "0::/\n", {{NULL, NULL}}, 0},
    };
    char tmpl[] = "/tmp/ge_cgXXXXXX", name[200];
    char *dir = mkdtemp(tmpl);

    for (size_t i = 0; dir && i < sizeof trees / sizeof trees[0]; i++) {
        char sub[600], cmd[700];
        int q, bad = 0;
        snprintf(sub, sizeof sub, "%s/%zu", dir, i);
        bad |= write_file(sub, "proc/self/cgroup", trees[i].cgroup);
        for (int k = 0; k < 4 && trees[i].files[k][0]; k++)
            bad |= write_file(sub, trees[i].files[k][0], trees[i].files[k][1]);
        q = ge_cpu_quota(sub);
        snprintf(name, sizeof name, "ge_cpu_quota: %s -> %d", trees[i].label, trees[i].want);
        CHECK(!bad && q == trees[i].want, name, "got %d%s", q, bad ? " (setup failed)" : "");
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", sub);
        if (system(cmd) != 0)
            bad = 1;
    }
    if (dir)
        rmdir(dir);
    {
        cpu_set_t old, one;
        long online = sysconf(_SC_NPROCESSORS_ONLN);
        int n = ge_cpu_count(), q = ge_cpu_quota(""), a = -1, m;
        if (sched_getaffinity(0, sizeof old, &old) == 0)
            a = CPU_COUNT(&old);
        CHECK(n >= 1 && n <= online && (a < 0 || n <= a) && (q == 0 || n <= q),
              "ge_cpu_count within the affinity mask and the cgroup quota",
              "%d (online %ld, affinity %d, quota %d)", n, online, a, q);
        CPU_ZERO(&one);
        for (int c = 0; c < CPU_SETSIZE; c++)
            if (a > 0 && CPU_ISSET(c, &old)) {
                CPU_SET(c, &one);
                break;
            }
        if (a > 0 && sched_setaffinity(0, sizeof one, &one) == 0) {
            ge_options o;
            ge_ctx *ctx = NULL;
            m = ge_cpu_count();
            ge_options_init(&o);
            o.backend = GE_BACKEND_CPU;
            ge_ctx_new(&ctx, &o);
            CHECK(m == 1 && ge_ctx_threads(ctx) == 1, "one-CPU affinity mask: ge_cpu_count 1, "
                  "a threads-0 context computes with 1 thread", "%d, %d", m, ge_ctx_threads(ctx));
            ge_ctx_free(&ctx);
            sched_setaffinity(0, sizeof old, &old);
        } else {
            SKIP("one-CPU affinity mask", "sched_setaffinity failed");
        }
    }
    {
        ge_options o;
        ge_ctx *ctx = NULL;
        ge_options_init(&o);
        o.backend = GE_BACKEND_CPU;
        o.threads = 3;
        ge_ctx_new(&ctx, &o);
        CHECK(ge_ctx_threads(ctx) == 3 && ge_ctx_threads(NULL) == GE_ERR_ARG,
              "ge_ctx_threads: the threads asked for; NULL -> GE_ERR_ARG", "%d",
              ge_ctx_threads(ctx));
        ge_ctx_free(&ctx);
    }
}

/* ------------------------------------------------------------------------ */

static void test_gpu(void)
{
    ge_options o;
    ge_ctx *ctx = NULL;
    int r;
    ge_options_init(&o);
    o.backend = GE_BACKEND_GPU;
    r = ge_ctx_new(&ctx, &o);
    if (r == GE_ERR_NOGPU) {
        CHECK(ctx == NULL && ge_last_error(NULL)[0], "GPU context without a GPU -> "
              "GE_ERR_NOGPU + text", "'%s'", ge_last_error(NULL));
        SKIP("api: GPU host and device paths",
             strstr(ge_last_error(NULL), "built without CUDA") ? "built without CUDA"
                                                                 : "no usable GPU");
        /* auto falls back to the CPU */
        o.backend = GE_BACKEND_AUTO;
        r = ge_ctx_new(&ctx, &o);
        CHECK(r == 0 && ge_ctx_backend(ctx) == GE_BACKEND_CPU, "auto without a GPU: CPU",
              "rc %d", r);
        ge_ctx_free(&ctx);
        return;
    }
    CHECK(r == 0, "GPU context", "rc %d: %s", r, ge_last_error(NULL));
    if (r)
        return;
    for (int k = 0; k < 2; k++) {
        /* Canny on the device path: scratch made, reused, then grown */
        ge_options co;
        ge_ctx *cc = NULL;
        const char *why = "";
        char name[96];
        ge_options_init(&co);
        co.backend = GE_BACKEND_GPU;
        co.canny = k ? GE_CANNY_AUTO : GE_CANNY_ON;
        co.canny_low = 20;
        co.canny_high = 60;
        co.invert = k;
        r = ge_ctx_new(&cc, &co);
        if (r == 0) {
            why = compare(cc, &co, 131, 67, 3, 1, 5, 1);
            if (!why[0])
                why = compare(cc, &co, 131, 67, 1, 2, 0, 1);
            if (!why[0])
                why = compare(cc, &co, 300, 201, 4, 1, 3, 1);
        }
        snprintf(name, sizeof name, "api gpu device path: canny %s == reference",
                 k ? "auto, invert" : "20,60");
        CHECK(r == 0 && !why[0], name, "rc %d: %s", r, r ? ge_last_error(NULL) : why);
        ge_ctx_free(&cc);
    }
    {
        uint8_t host[64];
        r = ge_process_device(ctx, host, 4, 4, 1, 1, 4, host, 4, NULL, NULL);
        CHECK(r == GE_ERR_ARG && strstr(ge_last_error(ctx), "host memory"),
              "ge_process_device: host pointers -> GE_ERR_ARG", "rc %d '%s'", r,
              ge_last_error(ctx));
    }
    ge_ctx_free(&ctx);
    test_results(GE_BACKEND_GPU, "api gpu host path");
    for (int bps = 1; bps <= 2; bps++)
        for (int ch = 1; ch <= 4; ch++) {
            const char *why;
            char name[128];
            ge_options_init(&o);
            o.backend = GE_BACKEND_GPU;
            o.sigma = 1.5;
            if (ge_ctx_new(&ctx, &o) < 0)
                break;
            why = compare(ctx, &o, 131, 67, ch, bps, 5, 1);
            if (!why[0])
                why = compare(ctx, &o, 1, 1, ch, bps, 0, 1);
            snprintf(name, sizeof name, "api gpu device path: %d-bit %d channels == reference",
                     8 * bps, ch);
            CHECK(!why[0], name, "%s", why);
            ge_ctx_free(&ctx);
        }
    test_threads(GE_BACKEND_GPU, "api gpu");
    test_batch(GE_BACKEND_GPU, "api gpu host path");
    test_order(GE_BACKEND_GPU, "api gpu host path");
    for (int bps = 1; bps <= 2; bps++) {
        const char *why = "";
        char name[128];
        ge_options_init(&o);
        o.backend = GE_BACKEND_GPU;
        o.sigma = 2.5;
        if (ge_ctx_new(&ctx, &o) < 0)
            why = ge_last_error(NULL);
        for (int ch = 1; ch <= 4 && !why[0]; ch++)
            why = compare_batch(ctx, &o, 6, 131, 67, ch, bps, 0, 1);
        snprintf(name, sizeof name, "api gpu device path: ge_process_batch_device 6 frames "
                 "%d-bit 1..4 channels == reference", 8 * bps);
        CHECK(!why[0], name, "%s", why);
#if GE_CUDA
        if (ctx && ge_ctx_set_order(ctx, GE_ORDER_BGR) == 0) {
            uint8_t *d = NULL;
            cudaMalloc((void **)&d, 4096);
            r = ge_process_batch_device(ctx, 2, d, 48, 4, 4, 3, 1, 12, d + 1024, 16, 4, NULL,
                                        NULL);
            CHECK(r == GE_ERR_UNSUPPORTED, "ge_process_batch_device: BGR -> GE_ERR_UNSUPPORTED",
                  "rc %d", r);
            cudaFree(d);
        }
#endif
        ge_ctx_free(&ctx);
    }
    {
        /* Canny through the device batch */
        const char *why = "";
        ge_options_init(&o);
        o.backend = GE_BACKEND_GPU;
        o.canny = GE_CANNY_AUTO;
        if (ge_ctx_new(&ctx, &o) < 0)
            why = ge_last_error(NULL);
        else
            why = compare_batch(ctx, &o, 5, 97, 61, 3, 1, 0, 1);
        CHECK(!why[0], "api gpu device path: ge_process_batch_device canny auto == reference",
              "%s", why);
        ge_ctx_free(&ctx);
    }
}

int main(void)
{
    test_bad_args();
    test_results(GE_BACKEND_CPU, "api cpu");
    test_threads(GE_BACKEND_CPU, "api cpu");
    test_batch(GE_BACKEND_CPU, "api cpu");
    test_order(GE_BACKEND_CPU, "api cpu");
    test_cpu_count();
    test_gpu();
    CHECK_EXIT();
}
