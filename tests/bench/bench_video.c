/*
 * bench_video.c — the decode + encode baseline for video end to end
 * (issue #5): the project's reader (vid_open/vid_next, luma path) and
 * writer (venc_open/venc_put into an so_file), with the Y plane standing
 * in for the edge map and nothing computed in between.  gpuedge on the
 * same clip, output format and --threads is then compared with it:
 * end to end should reach >= 0.8x of this.
 *
 *   bench_video [-t THREADS] [-j ENCODERS] [-n FRAMES] [-r REPEAT]
 *               [-m pipe|serial|decode|encode] [-v] INPUT OUTPUT
 *
 *   pipe    (default) a decode thread hands frames through a ring of 3
 *           buffers to the writer on this thread: gpuedge's shape
 *   serial  decode a frame, write it, in one loop
 *   decode  decode only (OUTPUT is not written)
 *   encode  the writer alone: the first FRAMES frames (default 30) are
 *           decoded into memory untimed, then written REPEAT times over
 *           (default 3) as one video
 *   -t      --threads for both decoder and writer (0 = one per CPU)
 *   -j      FFV1 encoders coding successive frames (venc_opts.encoders;
 *           0 = the writer's own choice, as gpuedge makes it)
 *   -v      the writer's choice of slices/encoders on stderr
 *
 * Prints one line: "bench_video: MODE IN -> OUT WxH: N frames, S s,
 * F fps (decode busy D ms/frame, write W ms/frame)".  The output is
 * written through safeout (temp file, fsync, rename; overwritten).
 * Its frame buffers are the project's host_buf, unpinned (plain malloc),
 * as the writer side of gpuedge's CPU engine uses them.
 */
#include <getopt.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libavutil/avutil.h>

#include "frames.h"
#include "safeout.h"
#include "signals.h"
#include "util.h"
#include "video_io.h"

#define RING 3

typedef struct bslot {
    src_frame fr;
    host_buf buf;
    int full;
} bslot;

typedef struct bench {
    vid_reader *r;
    venc_writer *wr;
    so_file *out;
    venc_opts vo;
    const char *outname;
    char ext[16];
    AVRational tb, fps;
    uint8_t *scratch; /* 8-bit plane for frames that are not 8-bit luma */
    size_t scratch_cap;
    /* pipe mode */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bslot ring[RING];
    long head, tail; /* frames taken / frames decoded */
    int eof;         /* 1 end, -1 failed */
    double decode_s, write_s;
    long frames;
} bench;

/* The 8-bit plane standing in for the edge map: the Y plane as it is for
 * 8-bit luma, else the high byte (deeper luma) or the first channel (RGB
 * path).  Sets *pitch.  NULL: out of memory. */
static const uint8_t *plane8(bench *b, const ge_frame *f, int *pitch)
{
    size_t n = (size_t)f->width * f->height;
    if (f->channels == 1 && f->bytes_per_sample == 1) {
        *pitch = (int)f->stride;
        return f->data;
    }
    if (n > b->scratch_cap) {
        free(b->scratch);
        b->scratch = malloc(n);
        b->scratch_cap = b->scratch ? n : 0;
        if (!b->scratch)
            return NULL;
    }
    for (int y = 0; y < f->height; y++) {
        const uint8_t *row = (const uint8_t *)f->data + (size_t)y * f->stride;
        for (int x = 0; x < f->width; x++) {
            size_t at = (size_t)x * f->channels * f->bytes_per_sample;
            b->scratch[(size_t)y * f->width + x] =
                f->bytes_per_sample == 1 ? row[at]
                                         : (uint8_t)((row[at] | row[at + 1] << 8) >> 8);
        }
    }
    *pitch = f->width;
    return b->scratch;
}

/* Writes one decoded frame (opening the writer at the first).  0 / -1. */
static int put(bench *b, const src_frame *fr)
{
    int pitch;
    const uint8_t *p;
    double t0 = ge_now();
    int rc;

    if (!b->wr && venc_open(b->out, b->ext, fr->f.width, fr->f.height, b->tb, b->fps,
                            &b->vo, &b->wr))
        return -1;
    p = plane8(b, &fr->f, &pitch);
    if (!p) {
        ge_err(b->outname, "out of memory");
        return -1;
    }
    rc = venc_put_sized(b->wr, p, fr->f.width, fr->f.height, pitch,
                        fr->ts != INT64_MIN ? fr->ts : AV_NOPTS_VALUE, fr->duration);
    b->write_s += ge_now() - t0;
    return rc;
}

static void *decode_main(void *arg)
{
    bench *b = arg;
    for (;;) {
        bslot *s;
        double t0;
        int r;
        pthread_mutex_lock(&b->mu);
        while (b->tail - b->head == RING && !b->eof)
            pthread_cond_wait(&b->cv, &b->mu);
        s = &b->ring[b->tail % RING];
        r = b->eof;
        pthread_mutex_unlock(&b->mu);
        if (r)
            return NULL; /* the writer gave up */
        t0 = ge_now();
        r = vid_next(b->r, &s->fr, &s->buf);
        b->decode_s += ge_now() - t0;
        pthread_mutex_lock(&b->mu);
        if (r == 1)
            b->tail++;
        else
            b->eof = r == 0 ? 1 : -1;
        pthread_cond_broadcast(&b->cv);
        pthread_mutex_unlock(&b->mu);
        if (r != 1)
            return NULL;
    }
}

static int run_pipe(bench *b)
{
    pthread_t th;
    int rc = 0;
    pthread_mutex_init(&b->mu, NULL);
    pthread_cond_init(&b->cv, NULL);
    if (pthread_create(&th, NULL, decode_main, b)) {
        ge_err(NULL, "cannot start the decode thread");
        return -1;
    }
    for (;;) {
        bslot *s;
        pthread_mutex_lock(&b->mu);
        while (b->head == b->tail && !b->eof)
            pthread_cond_wait(&b->cv, &b->mu);
        if (b->head == b->tail) {
            if (b->eof < 0)
                rc = -1;
            pthread_mutex_unlock(&b->mu);
            break;
        }
        s = &b->ring[b->head % RING];
        pthread_mutex_unlock(&b->mu);
        if (put(b, &s->fr)) {
            rc = -1;
            pthread_mutex_lock(&b->mu);
            b->eof = -1;
            pthread_cond_broadcast(&b->cv);
            pthread_mutex_unlock(&b->mu);
            break;
        }
        b->frames++;
        pthread_mutex_lock(&b->mu);
        b->head++;
        pthread_cond_broadcast(&b->cv);
        pthread_mutex_unlock(&b->mu);
    }
    pthread_join(th, NULL);
    for (int i = 0; i < RING; i++)
        host_buf_free(&b->ring[i].buf);
    pthread_cond_destroy(&b->cv);
    pthread_mutex_destroy(&b->mu);
    return rc;
}

static int run_serial(bench *b, int write)
{
    src_frame fr;
    host_buf buf = {0};
    int r, rc = 0;
    for (;;) {
        double t0 = ge_now();
        r = vid_next(b->r, &fr, &buf);
        b->decode_s += ge_now() - t0;
        if (r != 1)
            break;
        if (write && put(b, &fr)) {
            rc = -1;
            break;
        }
        b->frames++;
    }
    host_buf_free(&buf);
    return r < 0 ? -1 : rc;
}

/* The writer alone: n frames decoded into memory first, then written
 * `repeat` times over with continuing timestamps. */
static int run_encode(bench *b, long n, int repeat, double *t_start)
{
    src_frame *fr = calloc((size_t)n, sizeof *fr);
    host_buf *buf = calloc((size_t)n, sizeof *buf);
    long got = 0;
    int rc = 0;
    if (!fr || !buf) {
        free(fr);
        free(buf);
        ge_err(NULL, "out of memory");
        return -1;
    }
    while (got < n && (rc = vid_next(b->r, &fr[got], &buf[got])) == 1)
        got++;
    if (rc < 0 || got == 0) {
        rc = -1;
        goto end;
    }
    rc = 0;
    *t_start = ge_now();
    for (int k = 0; k < repeat && !rc; k++)
        for (long i = 0; i < got && !rc; i++) {
            src_frame f = fr[i];
            /* later rounds continue after the first: pts strictly rising */
            if (f.ts != INT64_MIN) {
                long long span = fr[got - 1].ts - fr[0].ts +
                                 (fr[got - 1].duration > 0 ? fr[got - 1].duration : 1);
                f.ts += (long long)k * span;
            }
            rc = put(b, &f);
            b->frames++;
        }
end:
    for (long i = 0; i < n; i++)
        host_buf_free(&buf[i]);
    free(buf);
    free(fr);
    return rc;
}

static void usage(void)
{
    fputs("usage: bench_video [-t THREADS] [-j ENCODERS] [-n FRAMES] [-r REPEAT]\n"
          "                   [-m pipe|serial|decode|encode] [-v] INPUT OUTPUT\n",
          stderr);
    exit(2);
}

int main(int argc, char **argv)
{
    bench b;
    vid_opts o = {0, -1, 0, 0};
    so_opts so = {1, 0};
    const char *mode = "pipe";
    long nframes = -1;
    int repeat = 3, c, rc;
    double t0, t1, tw0;
    vid_info vi;

    memset(&b, 0, sizeof b);
    if (sig_init())
        return 1;
    while ((c = getopt(argc, argv, "t:j:n:r:m:v")) != -1) {
        switch (c) {
        case 't': b.vo.threads = o.threads = atoi(optarg); break;
        case 'j': b.vo.encoders = atoi(optarg); break;
        case 'n': nframes = atol(optarg); break;
        case 'r': repeat = atoi(optarg); break;
        case 'm': mode = optarg; break;
        case 'v': ge_verbose = 1; break;
        default: usage();
        }
    }
    if (argc - optind != 2 || repeat < 1 ||
        (strcmp(mode, "pipe") && strcmp(mode, "serial") && strcmp(mode, "decode") &&
         strcmp(mode, "encode")))
        usage();
    if (!strcmp(mode, "encode") && nframes < 0)
        nframes = 30;
    o.max_frames = !strcmp(mode, "encode") ? -1 : nframes;
    b.outname = argv[optind + 1];
    {
        ge_ext(b.outname, b.ext, sizeof b.ext);
        if (strcmp(mode, "decode") && !venc_format_ok(b.ext)) {
            fprintf(stderr, "bench_video: %s: not a video output (.mkv .mp4 .y4m)\n", b.outname);
            return 2;
        }
    }

    t0 = ge_now();
    if (vid_open(argv[optind], &o, &b.r))
        return 1;
    vid_get_info(b.r, &vi);
    b.tb = vi.time_base.num > 0 ? vi.time_base : (AVRational){1, 25};
    b.fps = vi.frame_rate.num > 0 ? vi.frame_rate : (AVRational){25, 1};
    if (strcmp(mode, "decode") && so_open(&b.out, b.outname, &so, NULL, 0)) {
        vid_close(&b.r);
        return 1;
    }
    tw0 = t0;
    if (!strcmp(mode, "pipe"))
        rc = run_pipe(&b);
    else if (!strcmp(mode, "encode"))
        rc = run_encode(&b, nframes, repeat, &tw0);
    else
        rc = run_serial(&b, strcmp(mode, "decode") != 0);
    if (b.out) {
        if (venc_close(&b.wr, rc != 0) || rc || so_commit(&b.out)) {
            so_abort(&b.out);
            rc = -1;
        }
    }
    t1 = ge_now();
    vid_close(&b.r);
    free(b.scratch);
    if (rc) {
        fprintf(stderr, "bench_video: failed\n");
        return sig_stopped() ? sig_exit_status() : 1;
    }
    printf("bench_video: %s %s -> %s %dx%d: %ld frames, %.3f s, %.2f fps "
           "(decode busy %.2f ms/frame, write %.2f ms/frame)\n",
           mode, argv[optind], !strcmp(mode, "decode") ? "(none)" : b.outname, vi.width,
           vi.height, b.frames, t1 - tw0, b.frames / (t1 - tw0),
           b.frames ? b.decode_s * 1e3 / b.frames : 0, b.frames ? b.write_s * 1e3 / b.frames : 0);
    return 0;
}
