/*
 * test_devframe.c — the GPU engine's device-resident frame path (DESIGN.md §4,
 * src/base/frames.h) without any decoder: the same frames go through
 * pipe_run_gpu once as host frames and once as device frames (a pitched
 * device surface, written on a "decoder" stream that records the frame's
 * `ready` event, handed back through `release`), and the edge maps and
 * histograms must be equal byte for byte:
 *   frames    8-bit luma (limited range) 322x242, 1920x1080, 17x5, 1x1,
 *             16-bit MSB-aligned P010-style (shift 6), RGB 8-bit 3 channels,
 *             pitches wider than the rows (NVDEC's 256-byte alignment and
 *             odd ones)
 *   engines   fused, staged, strips (--mem-limit small enough that a
 *             1080p frame runs in strips from the surface), --cpu-ref on
 *             every frame (the luma plane comes to the host for checked
 *             frames only: 0 mismatches)
 *   contract  release is called exactly once a frame; on release the test
 *             overwrites the surface at once (cudaMemsetAsync on its own
 *             stream, no wait): a release before the kernels finished
 *             reading would show as a wrong edge map.  The "decoder" copy
 *             that fills each surface is slow (pageable, 2D) and on its own
 *             stream: an engine that did not wait for `ready` would read
 *             stale data.
 * Without a CUDA device it prints "skip devframe: no CUDA device".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/check.h"
#include "gpu_test.h"

#include "edge.h"
#include "frames.h"
#include "gpu.h"
#include "util.h"
#include "pipeline.h"
#include "report.h"

#define NFR 12 /* frames a run: more than the engine's slots */

typedef struct tcase {
    const char *name;
    int w, h, ch, bps, shift, offset;
    float gain;
    size_t pitch_pad; /* device pitch = row bytes + pad */
} tcase;

typedef struct surf {
    void *d;
    size_t pitch, bytes;
    cudaEvent_t ready;
    int released; /* atomic */
} surf;

typedef struct tsrc {
    const tcase *tc;
    int device;
    long next;
    uint8_t *h_frames; /* NFR frames, rows packed */
    surf s[NFR];
    cudaStream_t dec; /* the "decoder" stream */
    int releases;     /* atomic */
} tsrc;

typedef struct tsink {
    int w, h;
    uint8_t *edge;  /* NFR * w * h */
    uint64_t *hist; /* NFR * 256 */
    int got;
} tsink;

static size_t row_bytes(const tcase *t) { return (size_t)t->w * t->ch * t->bps; }

static void on_release(void *ctx)
{
    surf *s = ctx;
    /* "the decoder writes the next picture into it": at once, no wait */
    (void)cudaMemsetAsync(s->d, 0xA5, s->bytes, 0);
    __atomic_add_fetch(&s->released, 1, __ATOMIC_ACQ_REL);
}

static int src_next(void *ctx, src_frame *fr, host_buf *buf)
{
    tsrc *t = ctx;
    const tcase *c = t->tc;
    const size_t rb = row_bytes(c);
    const uint8_t *h = t->h_frames + (size_t)t->next * rb * c->h;
    if (t->next >= NFR)
        return 0;
    memset(fr, 0, sizeof *fr);
    fr->job = 0;
    fr->index = t->next;
    fr->pts = -1;
    fr->ts = INT64_MIN;
    fr->f.width = c->w;
    fr->f.height = c->h;
    fr->f.channels = c->ch;
    fr->f.bytes_per_sample = c->bps;
    fr->f.shift = c->shift;
    fr->f.offset = c->offset;
    fr->f.gain = c->gain;
    if (!t->device) {
        if (host_buf_reserve(buf, rb * c->h))
            return -1;
        memcpy(buf->p, h, rb * c->h);
        fr->f.stride = rb;
        fr->f.data = buf->p;
    } else {
        surf *s = &t->s[t->next];
        /* pageable 2D copy on the decoder's stream, then the event */
        MUST(cudaMemcpy2DAsync(s->d, s->pitch, h, rb, rb, c->h, cudaMemcpyHostToDevice, t->dec));
        MUST(cudaEventRecord(s->ready, t->dec));
        fr->f.stride = s->pitch;
        fr->f.data = s->d;
        fr->on_device = 1;
        fr->ready = s->ready;
        fr->release = on_release;
        fr->release_ctx = s;
    }
    t->next++;
    return 1;
}

static int sink_put(void *ctx, const sink_frame *fr, double *ms)
{
    tsink *k = ctx;
    (void)ms;
    if (fr->index < 0 || fr->index >= NFR || fr->width != k->w || fr->height != k->h)
        return -1;
    memcpy(k->edge + (size_t)fr->index * k->w * k->h, fr->edge, (size_t)k->w * k->h);
    memcpy(k->hist + (size_t)fr->index * 256, fr->hist, 256 * sizeof *fr->hist);
    k->got++;
    return 0;
}

static int sink_finish(void *ctx, int abandon) { (void)ctx; (void)abandon; return 0; }

/* One engine run; returns pipe_run_gpu's status. */
static int run_once(const tcase *c, const uint8_t *frames, int device, int staged,
                    size_t mem_limit, int cpu_ref, tsink *k, tsrc *t, chk_stats *chk)
{
    pipe_opts o;
    memset(&o, 0, sizeof o);
    memset(t, 0, sizeof *t);
    memset(chk, 0, sizeof *chk);
    o.params.sigma = 1.0;
    o.params.scale = 1.0f;
    ge_taps_make(1.0, &o.taps);
    o.staged = staged;
    o.mem_limit = mem_limit;
    o.cpu_ref_every = cpu_ref;
    o.check = chk;
    t->tc = c;
    t->device = device;
    t->h_frames = (uint8_t *)frames;
    if (device) {
        MUST(cudaStreamCreateWithFlags(&t->dec, cudaStreamNonBlocking));
        for (int i = 0; i < NFR; i++) {
            t->s[i].pitch = row_bytes(c) + c->pitch_pad;
            t->s[i].bytes = t->s[i].pitch * c->h;
            t->s[i].d = dmalloc(t->s[i].bytes);
            MUST(cudaEventCreateWithFlags(&t->s[i].ready, cudaEventDisableTiming));
        }
    }
    k->w = c->w;
    k->h = c->h;
    k->got = 0;
    memset(k->edge, 0x5A, (size_t)NFR * c->w * c->h);
    frame_source src = {t, src_next};
    frame_sink sink = {k, sink_put, sink_finish};
    int r = pipe_run_gpu(&o, &src, &sink);
    if (device) {
        MUST(cudaDeviceSynchronize());
        for (int i = 0; i < NFR; i++) {
            t->releases += t->s[i].released;
            MUST(cudaFree(t->s[i].d));
            MUST(cudaEventDestroy(t->s[i].ready));
        }
        MUST(cudaStreamDestroy(t->dec));
    }
    return r;
}

int main(void)
{
    gpu_info gi;
    (void)now_s;
    (void)cmp_u8;
    if (gpu_probe(0, &gi)) {
        printf("skip devframe: no CUDA device (%s)\n", ge_why());
        return 0;
    }
    rng_state = 11;
    const float lim8 = (float)(255.0 / 219.0), lim10 = (float)(255.0 / (219.0 * 4));
    static tcase cases[] = {
        {"322x242 y8 limited", 322, 242, 1, 1, 0, 16, 0, 256 - 322 % 256},
        {"1920x1080 y8 pitch2048", 1920, 1080, 1, 1, 0, 16, 0, 128},
        {"1920x1080 p010", 1920, 1080, 1, 2, 6, 64, 0, 256},
        {"17x5 y8 odd pitch", 17, 5, 1, 1, 0, 0, 1.0f, 3},
        {"1x1 y8", 1, 1, 1, 1, 0, 0, 1.0f, 255},
        {"101x67 rgb24", 101, 67, 3, 1, 0, 0, 1.0f, 1},
    };
    cases[0].gain = cases[1].gain = lim8;
    cases[2].gain = lim10;
    const size_t cmax = (size_t)1920 * 1080 * 2 * NFR;
    uint8_t *frames = xmalloc(cmax);
    tsink ref = {0}, got = {0};
    ref.edge = xmalloc((size_t)NFR * 1920 * 1080);
    got.edge = xmalloc((size_t)NFR * 1920 * 1080);
    ref.hist = xmalloc(NFR * 256 * sizeof(uint64_t));
    got.hist = xmalloc(NFR * 256 * sizeof(uint64_t));
    tsrc t;
    chk_stats chk;

    for (size_t ci = 0; ci < sizeof cases / sizeof *cases; ci++) {
        const tcase *c = &cases[ci];
        const size_t n = row_bytes(c) * c->h * NFR;
        /* smooth-ish random content: edges of every strength */
        for (size_t i = 0; i < n; i++)
            frames[i] = (uint8_t)(rnd_below(4) == 0 ? rnd() : (i / 7) * 3);
        if (c->bps == 2) /* MSB-aligned 10-bit samples, low 6 bits 0 */
            for (size_t i = 0; i < n; i += 2) {
                uint16_t v = (uint16_t)(rnd_below(1024) << 6);
                memcpy(frames + i, &v, 2);
            }
        static const struct { const char *name; int staged; size_t mem; int ref; } eng[] = {
            {"fused", 0, 0, 0}, {"staged", 1, 0, 0}, {"strips", 0, 3u << 20, 0},
            {"fused cpu-ref", 0, 0, 1}, {"staged cpu-ref", 1, 0, 1},
        };
        for (size_t ei = 0; ei < sizeof eng / sizeof *eng; ei++) {
            char name[160];
            int r1 = run_once(c, frames, 0, eng[ei].staged, eng[ei].mem, eng[ei].ref, &ref, &t, &chk);
            int r2 = run_once(c, frames, 1, eng[ei].staged, eng[ei].mem, eng[ei].ref, &got, &t, &chk);
            snprintf(name, sizeof name, "devframe %s %s runs", c->name, eng[ei].name);
            CHECK(r1 == 0 && r2 == 0 && ref.got == NFR && got.got == NFR, name,
                  "host rc %d (%d frames), device rc %d (%d frames)", r1, ref.got, r2, got.got);
            snprintf(name, sizeof name, "devframe %s %s release once a frame", c->name, eng[ei].name);
            int once = 1;
            for (int i = 0; i < NFR; i++)
                once &= t.s[i].released == 1;
            CHECK(once && t.releases == NFR, name, "%d releases for %d frames", t.releases, NFR);
            snprintf(name, sizeof name, "devframe %s %s edge+hist", c->name, eng[ei].name);
            size_t bad = 0, np = (size_t)NFR * c->w * c->h;
            for (size_t i = 0; i < np; i++)
                bad += ref.edge[i] != got.edge[i];
            int hbad = memcmp(ref.hist, got.hist, NFR * 256 * sizeof(uint64_t)) != 0;
            CHECK(bad == 0 && !hbad, name, "%zu of %zu edge bytes differ, histograms %s", bad,
                  np, hbad ? "differ" : "equal");
            if (eng[ei].ref) {
                long long mis = 0;
                for (int s = 0; s < CHK_NSTAGES; s++)
                    mis += chk.mismatches[s];
                snprintf(name, sizeof name, "devframe %s %s cpu-ref", c->name, eng[ei].name);
                CHECK(chk.frames == NFR && mis == 0 && chk.checked[CHK_EDGE] == NFR, name,
                      "%lld frames checked, %lld mismatches", chk.frames, mis);
            }
        }
    }
    free(frames);
    free(ref.edge);
    free(got.edge);
    free(ref.hist);
    free(got.hist);
    CHECK_EXIT();
}
