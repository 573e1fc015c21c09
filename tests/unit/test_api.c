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
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "edge.h"
#include "reference.h"

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

/* One frame through ctx (host or device path) against the reference;
 * "" or what differed. */
static const char *compare(ge_ctx *ctx, const ge_options *o, int w, int h, int ch, int bps,
                           size_t pad, int device_path)
{
    static char why[256];
    size_t stride, es = (size_t)w + 3;
    void *px = make_pixels(w, h, ch, bps, pad, &stride);
    uint8_t *got = malloc(es * h), *want = malloc((size_t)w * h);
    uint64_t hg[256], hw[256];
    int r;

    why[0] = 0;
    if (!px || !got || !want) {
        snprintf(why, sizeof why, "out of memory");
        goto end;
    }
    memset(got, 0xA5, es * h);
    if (device_path) {
#if GE_CUDA
        void *d_px = NULL, *d_edge = NULL, *d_hist = NULL;
        cudaStream_t s = NULL;
        if (cudaStreamCreate(&s) || cudaMalloc(&d_px, stride * h) ||
            cudaMalloc(&d_edge, es * h) || cudaMalloc(&d_hist, sizeof hg) ||
            cudaMemcpy(d_px, px, stride * h, cudaMemcpyHostToDevice) ||
            cudaMemcpy(d_edge, got, es * h, cudaMemcpyHostToDevice)) {
            snprintf(why, sizeof why, "CUDA setup failed");
        } else if ((r = ge_process_device(ctx, d_px, w, h, ch, bps, stride, d_edge, es, d_hist,
                                          s)) < 0) {
            snprintf(why, sizeof why, "ge_process_device %d: %s", r, ge_last_error(ctx));
        } else if (cudaStreamSynchronize(s) ||
                   cudaMemcpy(got, d_edge, es * h, cudaMemcpyDeviceToHost) ||
                   cudaMemcpy(hg, d_hist, sizeof hg, cudaMemcpyDeviceToHost)) {
            snprintf(why, sizeof why, "CUDA copy back failed");
        }
        cudaFree(d_px);
        cudaFree(d_edge);
        cudaFree(d_hist);
        if (s)
            cudaStreamDestroy(s);
        if (why[0])
            goto end;
#else
        snprintf(why, sizeof why, "built without CUDA");
        goto end;
#endif
    } else if ((r = ge_process(ctx, px, w, h, ch, bps, stride, got, es, hg)) < 0) {
        snprintf(why, sizeof why, "ge_process %d: %s", r, ge_last_error(ctx));
        goto end;
    }
    if (reference(o, px, w, h, ch, bps, stride, want, hw) < 0) {
        snprintf(why, sizeof why, "reference out of memory");
        goto end;
    }
    for (int y = 0; y < h && !why[0]; y++) {
        for (int x = 0; x < w; x++)
            if (got[y * es + x] != want[y * w + x]) {
                snprintf(why, sizeof why, "edge (%d,%d) %d, reference %d", x, y,
                         got[y * es + x], want[y * w + x]);
                break;
            }
        for (size_t x = w; x < es && !why[0]; x++)
            if (got[y * es + x] != 0xA5)
                snprintf(why, sizeof why, "row %d: padding byte %zu written", y, x);
    }
    if (!why[0] && memcmp(hg, hw, sizeof hg))
        snprintf(why, sizeof why, "histogram differs");
end:
    free(px);
    free(got);
    free(want);
    return why;
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
}

int main(void)
{
    test_bad_args();
    test_results(GE_BACKEND_CPU, "api cpu");
    test_threads(GE_BACKEND_CPU, "api cpu");
    test_gpu();
    CHECK_EXIT();
}
