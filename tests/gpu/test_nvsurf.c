/*
 * test_nvsurf — NVDEC sessions whose decoded frames are held (queued), as
 * src/io/vsource.c's segment decoders hold them: several sessions on
 * several threads decode segments of one file at once (issue 11).
 *
 *   test_nvsurf CLIP [SEGSTART_S...]
 *
 * Each segment (start seconds; default 0 and 2) is decoded on its own
 * thread with its own CUDA device context (hwdec.c's hw_open, as
 * vid_read.c does), one libav thread, FRAMES (env NVSURF_FRAMES, 60)
 * frames, every frame kept until the end (a queue that never drains),
 * two ways:
 *   hold    the AVFrames kept as libavcodec returns them (the segment
 *           decoders before the fix): printed per frame (data[0],
 *           linesize, format, the decoder's hw_frames_ctx pool size,
 *           buf sizes) until the first frame without a luma plane or a
 *           decoding error; information only ("# " lines): FFmpeg 5.1
 *           hands out the mapped decoder surface itself, so this is
 *           expected to run out at about the pool size
 *   detach  hw_take + hw_detach on every frame (the fix): every frame must
 *           have a plane, and its luma, downloaded at the end (after all
 *           of them were decoded and held), must equal a software decode
 *           of the same file (libavcodec, one thread; 10-bit: P010 = the
 *           software sample << 6) at the same pts: "ok" / "not ok" lines.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/hwcontext.h>
#include <libavutil/pixdesc.h>

#include "hwdec.h"
#include "util.h"

#define MAX_SEGS 8

typedef struct ref_frame { /* the software decode, by pts */
    int64_t pts;
    int w, h, bps;
    uint8_t *y; /* w * bps bytes a row, packed */
} ref_frame;

typedef struct seg {
    const char *path;
    double start;
    int detach;
    int frames;
    /* results */
    int got, bad_at, errors, pool;
    char why[256];
    src_frame *held;
    int64_t *pts;
} seg;

static ref_frame *refs;
static int nrefs;

static int open_in(const char *path, AVFormatContext **fc, int *vidx, const AVCodec **codec)
{
    *fc = NULL;
    if (avformat_open_input(fc, path, NULL, NULL) < 0 || avformat_find_stream_info(*fc, NULL) < 0)
        return -1;
    *vidx = av_find_best_stream(*fc, AVMEDIA_TYPE_VIDEO, -1, -1, codec, 0);
    return *vidx < 0 ? -1 : 0;
}

/* The software reference: every frame's luma, by pts. */
static int decode_sw(const char *path)
{
    AVFormatContext *fc;
    const AVCodec *codec;
    AVCodecContext *dec;
    AVPacket *pkt = av_packet_alloc();
    AVFrame *f = av_frame_alloc();
    int vidx, cap = 0, eof = 0;
    if (open_in(path, &fc, &vidx, &codec))
        return -1;
    dec = avcodec_alloc_context3(codec);
    avcodec_parameters_to_context(dec, fc->streams[vidx]->codecpar);
    dec->thread_count = 1;
    if (avcodec_open2(dec, codec, NULL) < 0)
        return -1;
    for (;;) {
        int ret = avcodec_receive_frame(dec, f);
        if (ret == 0) {
            const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(f->format);
            ref_frame *r;
            if (nrefs == cap) {
                cap = cap ? 2 * cap : 256;
                refs = realloc(refs, cap * sizeof *refs);
            }
            r = &refs[nrefs++];
            r->pts = f->best_effort_timestamp;
            r->w = f->width;
            r->h = f->height;
            r->bps = d->comp[0].step;
            r->y = malloc((size_t)r->w * r->bps * r->h);
            for (int y = 0; y < r->h; y++)
                memcpy(r->y + (size_t)y * r->w * r->bps, f->data[0] + (size_t)y * f->linesize[0],
                       (size_t)r->w * r->bps);
            av_frame_unref(f);
            continue;
        }
        if (ret == AVERROR_EOF)
            break;
        if (eof)
            break;
        if (av_read_frame(fc, pkt) < 0) {
            avcodec_send_packet(dec, NULL);
            eof = 1;
            continue;
        }
        if (pkt->stream_index == vidx)
            avcodec_send_packet(dec, pkt);
        av_packet_unref(pkt);
    }
    avcodec_free_context(&dec);
    avformat_close_input(&fc);
    av_packet_free(&pkt);
    av_frame_free(&f);
    return 0;
}

static void *run_seg(void *arg)
{
    seg *s = arg;
    AVFormatContext *fc;
    const AVCodec *codec, *hc;
    AVCodecContext *dec = NULL;
    AVPacket *pkt = av_packet_alloc();
    AVFrame *f = av_frame_alloc();
    AVFrame **keep = calloc(s->frames, sizeof *keep);
    hw_dec *hw = NULL;
    int vidx, hw_only = 0, eof = 0;
    int64_t start_ts = AV_NOPTS_VALUE;
    AVStream *st;

    s->bad_at = -1;
    s->held = calloc(s->frames, sizeof *s->held);
    s->pts = calloc(s->frames, sizeof *s->pts);
    if (open_in(s->path, &fc, &vidx, &codec)) {
        snprintf(s->why, sizeof s->why, "cannot open");
        return NULL;
    }
    st = fc->streams[vidx];
    hc = hw_find_decoder(codec, &hw_only);
    dec = avcodec_alloc_context3(hc ? hc : codec);
    avcodec_parameters_to_context(dec, st->codecpar);
    dec->pkt_timebase = st->time_base;
    dec->thread_count = 1;
    if (hw_open(dec, 0, &hw)) {
        snprintf(s->why, sizeof s->why, "%s", ge_why());
        goto end;
    }
    if (avcodec_open2(dec, hc, NULL) < 0) {
        snprintf(s->why, sizeof s->why, "cannot open the decoder");
        goto end;
    }
    if (s->start > 0) {
        int64_t s0 = st->start_time != AV_NOPTS_VALUE ? st->start_time : 0;
        start_ts = s0 + av_rescale_q(llrint(s->start * AV_TIME_BASE), AV_TIME_BASE_Q, st->time_base);
        avformat_seek_file(fc, vidx, INT64_MIN, start_ts, start_ts, 0);
    }
    while (s->got < s->frames) {
        int ret = avcodec_receive_frame(dec, f);
        if (ret == 0) {
            const AVHWFramesContext *hfc =
                dec->hw_frames_ctx ? (const AVHWFramesContext *)dec->hw_frames_ctx->data : NULL;
            ge_frame g;
            int n = s->got;
            if (start_ts != AV_NOPTS_VALUE && f->best_effort_timestamp < start_ts) {
                av_frame_unref(f);
                continue;
            }
            s->pool = hfc ? hfc->initial_pool_size : -1;
            if (!s->detach && (n < 3 || n >= s->pool - 3))
                printf("# hold %s@%.1f frame %d: format %s data[0] %p linesize[0] %d pool %d "
                       "buf0 %zu buf1 %zu errors %d\n", s->path, s->start, n,
                       av_get_pix_fmt_name(f->format) ? av_get_pix_fmt_name(f->format) : "?",
                       (void *)f->data[0], f->linesize[0], s->pool,
                       f->buf[0] ? f->buf[0]->size : 0, f->buf[1] ? f->buf[1]->size : 0,
                       s->errors);
            if (f->format != AV_PIX_FMT_CUDA || hw_describe(f, dec->sw_pix_fmt, &g)) {
                s->bad_at = n;
                snprintf(s->why, sizeof s->why, "frame %d: %s", n,
                         f->format == AV_PIX_FMT_CUDA ? ge_why() : "not a CUDA frame");
                av_frame_unref(f);
                break;
            }
            s->pts[n] = f->best_effort_timestamp;
            if (s->detach) {
                src_frame *fr = &s->held[n];
                memset(fr, 0, sizeof *fr);
                fr->f = g;
                if (hw_take(hw, f, fr) || hw_detach(fr)) {
                    s->bad_at = n;
                    snprintf(s->why, sizeof s->why, "frame %d: %s", n, ge_why());
                    break;
                }
            } else {
                keep[n] = av_frame_clone(f);
                av_frame_unref(f);
            }
            s->got++;
            continue;
        }
        if (ret == AVERROR_EOF)
            break;
        if (ret != AVERROR(EAGAIN)) {
            s->errors++;
            if (!s->detach && s->bad_at < 0) {
                s->bad_at = s->got;
                snprintf(s->why, sizeof s->why, "frame %d: decoding error %d", s->got, ret);
                break;
            }
            continue;
        }
        if (eof)
            break;
        if (av_read_frame(fc, pkt) < 0) {
            avcodec_send_packet(dec, NULL);
            eof = 1;
            continue;
        }
        if (pkt->stream_index == vidx && avcodec_send_packet(dec, pkt) < 0)
            s->errors++;
        av_packet_unref(pkt);
    }
end:
    for (int i = 0; i < s->frames; i++)
        av_frame_free(&keep[i]);
    free(keep);
    avcodec_free_context(&dec);
    hw_close(&hw); /* detached frames outlive their session */
    avformat_close_input(&fc);
    av_packet_free(&pkt);
    av_frame_free(&f);
    return NULL;
}

static const ref_frame *ref_at(int64_t pts)
{
    for (int i = 0; i < nrefs; i++)
        if (refs[i].pts == pts)
            return &refs[i];
    return NULL;
}

/* Downloads held frame i of s and compares it with the software decode. */
static int check_frame(const seg *s, int i, char *why, size_t n)
{
    const src_frame *fr = &s->held[i];
    const ref_frame *r = ref_at(s->pts[i]);
    size_t row = (size_t)fr->f.width * fr->f.bytes_per_sample;
    uint8_t *h;
    int bad = 0;
    if (!r || r->w != fr->f.width || r->h != fr->f.height || r->bps != fr->f.bytes_per_sample) {
        snprintf(why, n, "frame %d (pts %lld): no software frame of that size", i,
                 (long long)s->pts[i]);
        return -1;
    }
    h = malloc(row * fr->f.height);
    if (cudaMemcpy2D(h, row, fr->f.data, fr->f.stride, row, fr->f.height,
                     cudaMemcpyDeviceToHost) != cudaSuccess) {
        snprintf(why, n, "frame %d: download failed", i);
        free(h);
        return -1;
    }
    for (size_t k = 0; k < row * fr->f.height && !bad; k += fr->f.bytes_per_sample) {
        if (fr->f.bytes_per_sample == 1)
            bad = h[k] != r->y[k];
        else {
            unsigned hv = h[k] | h[k + 1] << 8, sv = r->y[k] | r->y[k + 1] << 8;
            bad = hv != (sv << fr->f.shift & 0xffff);
        }
        if (bad)
            snprintf(why, n, "frame %d (pts %lld): luma differs at byte %zu", i,
                     (long long)s->pts[i], k);
    }
    free(h);
    return bad ? -1 : 0;
}

int main(int argc, char **argv)
{
    seg segs[MAX_SEGS];
    pthread_t th[MAX_SEGS];
    double starts[MAX_SEGS] = {0, 2};
    int nseg = 2, frames = getenv("NVSURF_FRAMES") ? atoi(getenv("NVSURF_FRAMES")) : 60;
    int fails = 0, dev = 0;

    if (argc < 2) {
        /* tests/run runs every test binary without arguments */
        printf("skip nvsurf: no clip (usage: test_nvsurf CLIP [SEGSTART_S...]; "
               "tests/gpu/run nvseg runs it)\n");
        return 0;
    }
    /* the primary context's flags libavutil asks for (as src/lib/gpu.c) */
    cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync);
    if (cudaGetDeviceCount(&dev) != cudaSuccess || dev < 1) {
        printf("skip nvsurf: no CUDA device\n");
        return 0;
    }
    if (argc > 2) {
        nseg = 0;
        for (int i = 2; i < argc && nseg < MAX_SEGS; i++)
            starts[nseg++] = atof(argv[i]);
    }
    av_log_set_level(AV_LOG_ERROR);
    if (decode_sw(argv[1])) {
        printf("not ok nvsurf %s: software decode failed\n", argv[1]);
        return 1;
    }
    for (int detach = 0; detach <= 1; detach++) {
        for (int i = 0; i < nseg; i++) {
            memset(&segs[i], 0, sizeof segs[i]);
            segs[i].path = argv[1];
            segs[i].start = starts[i];
            segs[i].detach = detach;
            segs[i].frames = frames;
            pthread_create(&th[i], NULL, run_seg, &segs[i]);
        }
        for (int i = 0; i < nseg; i++)
            pthread_join(th[i], NULL);
        for (int i = 0; i < nseg; i++) {
            seg *s = &segs[i];
            if (!detach) {
                printf("# hold %s@%.1f: %d of %d frames held, pool %d, %d decoding errors; "
                       "stopped: %s\n", s->path, s->start, s->got, s->frames, s->pool,
                       s->errors, s->bad_at >= 0 ? s->why : "no");
                continue;
            }
            char why[256] = "";
            int eq = 0;
            for (int k = 0; k < s->got; k++) {
                if (check_frame(s, k, why, sizeof why))
                    break;
                eq++;
            }
            if (s->got == s->frames && s->bad_at < 0 && s->errors == 0 && eq == s->got)
                printf("ok nvsurf %s@%.1f: %d sessions at once, %d frames held detached "
                       "(pool %d), luma == software, every frame\n", s->path, s->start, nseg,
                       s->got, s->pool);
            else {
                fails++;
                printf("not ok nvsurf %s@%.1f: %d of %d frames, %d equal, %d errors; %s%s%s\n",
                       s->path, s->start, s->got, s->frames, eq, s->errors,
                       s->bad_at >= 0 ? s->why : "", why[0] ? "; " : "", why);
            }
            for (int k = 0; k < s->got; k++)
                src_frame_release(&s->held[k]);
            free(s->held);
            free(s->pts);
        }
        if (!detach)
            for (int i = 0; i < nseg; i++) {
                free(segs[i].held);
                free(segs[i].pts);
            }
    }
    for (int i = 0; i < nrefs; i++)
        free(refs[i].y);
    free(refs);
    return fails ? 1 : 0;
}
