/*
 * test_video_io.c — video in and out (src/io/vid_read.c, vid_pixels.c,
 * vid_seq.c, venc.c, venc_thread.c).
 *
 * The clips are made here, with libav itself, from known samples (FFV1 in
 * Matroska, rawvideo in NUT), so every decoded luma value has an expected
 * g from the DESIGN.md §1.2 formula, written out again below independently of
 * vid_luma_params.  Then: frame counts, sizes, pts (VFR too), --start and
 * --frames, the RGB path, formats built by hand (P010, YUYV, negative
 * linesize, pal8), the encoders round trip (FFV1 bit-exact, Y4M, H.264
 * when libx264 is there) through safeout, and broken inputs.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/imgutils.h>
#include <libavutil/pixdesc.h>

#include "check.h"
#include "frames.h"
#include "hfyu_enc.h"
#include "reference.h"
#include "safeout.h"
#include "signals.h"
#include "video_io.h"

static char dir[256];

static const char *tpath(const char *name)
{
    static char buf[8][512];
    static int k;
    k = (k + 1) % 8;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

/* Leftover temp files of safeout in the test directory. */
static int count_tmp_files(void)
{
    DIR *dp = opendir(dir);
    struct dirent *de;
    int n = 0;
    if (!dp)
        return -1;
    while ((de = readdir(dp)))
        if (strstr(de->d_name, ".tmp") || strstr(de->d_name, ".partial"))
            n++;
    closedir(dp);
    return n;
}

// ---------------------------------------------------------------------------
// stderr capture (one message line checks): what was printed, then the
// line the CLI would print for the calling thread's error record

static int err_saved = -1;

static void stderr_begin(void)
{
    int fd;
    fflush(stderr);
    err_saved = dup(2);
    fd = open(tpath("stderr.txt"), O_CREAT | O_TRUNC | O_WRONLY, 0600);
    dup2(fd, 2);
    close(fd);
    ge_why_clear();
}

static int stderr_end(char *buf, size_t n)
{
    FILE *fp;
    size_t got = 0;
    int lines = 0;
    if (ge_why()[0])
        ge_err_why(NULL); /* what the call recorded, as the CLI prints it (DESIGN.md §9) */
    fflush(stderr);
    dup2(err_saved, 2);
    close(err_saved);
    buf[0] = '\0';
    fp = fopen(tpath("stderr.txt"), "r");
    if (fp) {
        got = fread(buf, 1, n - 1, fp);
        fclose(fp);
    }
    buf[got] = '\0';
    for (size_t i = 0; i < got; i++)
        lines += buf[i] == '\n';
    /* echo it so the log shows what a user would see */
    fputs(buf, stderr);
    return lines;
}

// ---------------------------------------------------------------------------
// Making clips

/* Known sample values: every value of the depth shows up, extremes too. */
static int yval(int x, int y, int i, int bits)
{
    return (x * 37 + y * 101 + i * 53 + (x * y) % 7) % (1 << bits);
}

typedef void (*fill_fn)(AVFrame *f, int i, void *ctx);

/* Y from yval, chroma and alpha arbitrary; any planar YUV/grey format. */
static void fill_yuv(AVFrame *f, int i, void *ctx)
{
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(f->format);
    int bits = d->comp[0].depth;
    (void)ctx;
    for (int y = 0; y < f->height; y++)
        for (int x = 0; x < f->width; x++) {
            int v = yval(x, y, i, bits);
            if (d->comp[0].step == 2)
                ((uint16_t *)(f->data[0] + y * f->linesize[0]))[x] = (uint16_t)v;
            else
                f->data[0][y * f->linesize[0] + x] = (uint8_t)v;
        }
    for (int p = 1; p < 4 && f->data[p]; p++) {
        int ch = -((-f->height) >> d->log2_chroma_h);
        for (int y = 0; y < ch; y++)
            memset(f->data[p] + y * f->linesize[p], 100 + 20 * p,
                   (size_t)f->linesize[p]);
    }
}

/* Packed RGB (rgb24 / bgr0): channel c of pixel (x, y) = yval(x, y, i) + 40c */
static int rgbval(int x, int y, int i, int c)
{
    return (yval(x, y, i, 8) + 40 * c) & 255;
}

static void fill_rgb(AVFrame *f, int i, void *ctx)
{
    int bgr0 = f->format == AV_PIX_FMT_BGR0;
    (void)ctx;
    for (int y = 0; y < f->height; y++)
        for (int x = 0; x < f->width; x++) {
            uint8_t *p = f->data[0] + y * f->linesize[0] + x * (bgr0 ? 4 : 3);
            if (bgr0) {
                p[0] = (uint8_t)rgbval(x, y, i, 2);
                p[1] = (uint8_t)rgbval(x, y, i, 1);
                p[2] = (uint8_t)rgbval(x, y, i, 0);
                p[3] = 0;
            } else {
                for (int c = 0; c < 3; c++)
                    p[c] = (uint8_t)rgbval(x, y, i, c);
            }
        }
}

typedef struct clip_spec {
    const char *name, *muxer;
    enum AVCodecID codec;
    enum AVPixelFormat fmt;
    int w, h, n;
    AVRational tb;
    const int64_t *pts; /* NULL: 0, 1, 2, ... */
    enum AVColorRange range;
    fill_fn fill;
} clip_spec;

/* Writes a clip; 0, or -1 with the reason in *why. */
static int write_clip(const clip_spec *s, const char **why)
{
    AVFormatContext *oc = NULL;
    AVCodecContext *enc = NULL;
    AVStream *st;
    AVFrame *f = av_frame_alloc();
    AVPacket *pkt = av_packet_alloc();
    const AVCodec *codec = avcodec_find_encoder(s->codec);
    int ret = -1, i;

    *why = "setup";
    if (!codec) {
        *why = "no encoder";
        goto end;
    }
    if (avformat_alloc_output_context2(&oc, NULL, s->muxer, NULL) < 0)
        goto end;
    st = avformat_new_stream(oc, NULL);
    enc = avcodec_alloc_context3(codec);
    enc->width = s->w;
    enc->height = s->h;
    enc->pix_fmt = s->fmt;
    enc->time_base = s->tb;
    enc->color_range = s->range;
    if (s->codec == AV_CODEC_ID_FFV1)
        enc->level = 3;
    if (oc->oformat->flags & AVFMT_GLOBALHEADER)
        enc->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    if (avcodec_open2(enc, codec, NULL) < 0) {
        *why = "encoder open";
        goto end;
    }
    avcodec_parameters_from_context(st->codecpar, enc);
    st->time_base = s->tb;
    if (avio_open(&oc->pb, tpath(s->name), AVIO_FLAG_WRITE) < 0 ||
        avformat_write_header(oc, NULL) < 0) {
        *why = "header";
        goto end;
    }
    f->format = s->fmt;
    f->width = s->w;
    f->height = s->h;
    if (av_frame_get_buffer(f, 0) < 0)
        goto end;
    for (i = 0; i <= s->n; i++) {
        if (i < s->n) {
            if (av_frame_make_writable(f) < 0)
                goto end;
            s->fill(f, i, NULL);
            f->pts = s->pts ? s->pts[i] : i;
            ret = avcodec_send_frame(enc, f);
        } else {
            ret = avcodec_send_frame(enc, NULL);
        }
        if (ret < 0) {
            *why = "send_frame";
            goto end;
        }
        while ((ret = avcodec_receive_packet(enc, pkt)) >= 0) {
            av_packet_rescale_ts(pkt, enc->time_base, st->time_base);
            pkt->stream_index = 0;
            if (av_interleaved_write_frame(oc, pkt) < 0) {
                *why = "write";
                goto end;
            }
        }
        if (ret != AVERROR(EAGAIN) && ret != AVERROR_EOF) {
            *why = "receive_packet";
            goto end;
        }
    }
    if (av_write_trailer(oc) < 0) {
        *why = "trailer";
        goto end;
    }
    ret = 0;
end:
    if (oc && oc->pb)
        avio_closep(&oc->pb);
    avformat_free_context(oc);
    avcodec_free_context(&enc);
    av_frame_free(&f);
    av_packet_free(&pkt);
    return ret < 0 ? -1 : 0;
}

// ---------------------------------------------------------------------------
// Expected values (DESIGN.md §1.2, written out again)

static float expect_g(int Y, int b, int full)
{
    if (full)
        return (float)Y * (float)(255.0 / (pow(2.0, b) - 1.0));
    return (float)(Y - 16 * (int)pow(2.0, b - 8)) *
           (float)(255.0 / (219.0 * pow(2.0, b - 8)));
}

/* Decodes a luma clip and checks every g bit for bit. */
static void check_luma_clip(const clip_spec *s, int bits, int full, const char *tname)
{
    vid_reader *r = NULL;
    vid_opts o = {.max_frames = -1};
    host_buf buf = {0};
    src_frame fr;
    float *g = malloc((size_t)s->w * s->h * sizeof *g);
    char name[160], detail[200] = "";
    int n = 0, rc, bad = 0;
    double last_pts = -1e9;

    if (vid_open(tpath(s->name), &o, &r)) {
        CHECK(0, tname, "vid_open failed");
        free(g);
        return;
    }
    while ((rc = vid_next(r, &fr, &buf)) == 1) {
        int64_t want_pts = s->pts ? s->pts[n] : n;
        double want_s = (double)want_pts * av_q2d(s->tb);
        if (fr.f.width != s->w || fr.f.height != s->h || fr.f.channels != 1 ||
            fr.f.bytes_per_sample != (bits > 8 ? 2 : 1) || fr.index != n) {
            snprintf(detail, sizeof detail, "frame %d: %dx%d ch %d bps %d index %ld",
                     n, fr.f.width, fr.f.height, fr.f.channels,
                     fr.f.bytes_per_sample, fr.index);
            bad = 1;
            break;
        }
        if (fabs(fr.pts - want_s) > 1e-9 || fr.pts <= last_pts) {
            snprintf(detail, sizeof detail, "frame %d pts %.6f, want %.6f", n,
                     fr.pts, want_s);
            bad = 1;
            break;
        }
        last_pts = fr.pts;
        ref_grey(&fr.f, g);
        for (int y = 0; y < s->h && !bad; y++)
            for (int x = 0; x < s->w; x++) {
                float e = expect_g(yval(x, y, n, bits), bits, full);
                if (memcmp(&e, &g[y * s->w + x], sizeof e)) {
                    snprintf(detail, sizeof detail,
                             "frame %d (%d,%d) Y=%d g=%.9g want %.9g (offset %d gain %.9g)",
                             n, x, y, yval(x, y, n, bits), g[y * s->w + x], e,
                             fr.f.offset, fr.f.gain);
                    bad = 1;
                    break;
                }
            }
        if (bad)
            break;
        n++;
    }
    snprintf(name, sizeof name, "%s: %d frames %dx%d, exact g", tname, s->n, s->w, s->h);
    if (!bad && (rc != 0 || n != s->n))
        snprintf(detail, sizeof detail, "rc %d after %d frames, want %d", rc, n, s->n), bad = 1;
    CHECK(!bad, name, "%s", detail);
    vid_close(&r);
    host_buf_free(&buf);
    free(g);
}

// ---------------------------------------------------------------------------
// Tests

static int64_t vfr_pts[] = {0, 33, 50, 120, 121, 400};

static void test_luma_clips(void)
{
    const char *why;
    clip_spec lim = {"lim.mkv", "matroska", AV_CODEC_ID_FFV1, AV_PIX_FMT_YUV420P,
                     33, 17, 5, {1, 25}, NULL, AVCOL_RANGE_UNSPECIFIED, fill_yuv};
    clip_spec full = lim, gray = lim, ten = lim, ten_full = lim, tagged_lim = lim;

    full.name = "full.mkv";
    full.range = AVCOL_RANGE_JPEG;
    tagged_lim.name = "tagged_lim.mkv";
    tagged_lim.range = AVCOL_RANGE_MPEG;
    gray.name = "gray_vfr.mkv";
    gray.fmt = AV_PIX_FMT_GRAY8;
    gray.n = 6;
    gray.tb = (AVRational){1, 1000};
    gray.pts = vfr_pts;
    ten.name = "ten.mkv";
    ten.fmt = AV_PIX_FMT_YUV420P10LE;
    ten.w = 20;
    ten.h = 9;
    ten_full.name = "ten_full.mkv";
    ten_full.fmt = AV_PIX_FMT_YUV420P10LE;
    ten_full.range = AVCOL_RANGE_JPEG;

    if (write_clip(&lim, &why) == 0)
        check_luma_clip(&lim, 8, 0, "yuv420p unspecified range -> limited");
    else
        CHECK(0, "make yuv420p clip", "%s", why);
    if (write_clip(&tagged_lim, &why) == 0)
        check_luma_clip(&tagged_lim, 8, 0, "yuv420p tagged limited");
    else
        CHECK(0, "make tagged limited clip", "%s", why);
    if (write_clip(&full, &why) == 0)
        check_luma_clip(&full, 8, 1, "yuv420p tagged full range");
    else
        CHECK(0, "make full-range clip", "%s", why);
    if (write_clip(&gray, &why) == 0)
        check_luma_clip(&gray, 8, 1, "gray8 VFR -> full, pts kept");
    else
        CHECK(0, "make gray clip", "%s", why);
    if (write_clip(&ten, &why) == 0)
        check_luma_clip(&ten, 10, 0, "yuv420p10le limited");
    else
        CHECK(0, "make 10-bit clip", "%s", why);
    if (write_clip(&ten_full, &why) == 0)
        check_luma_clip(&ten_full, 10, 1, "yuv420p10le full");
    else
        CHECK(0, "make 10-bit full clip", "%s", why);
}

static void test_start_frames(void)
{
    vid_reader *r = NULL;
    vid_opts o = {.start = 0.1, .max_frames = -1};
    host_buf buf = {0};
    src_frame fr;
    int n = 0, rc;
    double pts[8];
    vid_info info;

    /* gray_vfr.mkv: pts 0 33 50 120 121 400 ms; from 0.1 s: 120 121 400 */
    if (vid_open(tpath("gray_vfr.mkv"), &o, &r)) {
        CHECK(0, "--start 0.1 on a VFR clip", "open failed");
        return;
    }
    vid_get_info(r, &info);
    CHECK(info.width == 33 && info.height == 17 && info.time_base.num == 1 &&
          info.time_base.den == 1000, "vid_get_info: size and time base",
          "%dx%d tb %d/%d", info.width, info.height, info.time_base.num,
          info.time_base.den);
    while ((rc = vid_next(r, &fr, &buf)) == 1 && n < 8)
        pts[n++] = fr.pts;
    CHECK(rc == 0 && n == 3 && fabs(pts[0] - 0.12) < 1e-9 &&
          fabs(pts[1] - 0.121) < 1e-9 && fabs(pts[2] - 0.4) < 1e-9,
          "--start 0.1 on a VFR clip: frames from 0.120 s", "rc %d n %d first %.6f",
          rc, n, n ? pts[0] : -1.0);
    {
        int64_t p, d;
        vid_last_ts(r, &p, &d);
        CHECK(p == 400 && vid_seconds_to_ts(pts[2], info.time_base) == 400 &&
              vid_seconds_to_ts(-1.0, info.time_base) == AV_NOPTS_VALUE,
              "raw timestamps and seconds -> ticks", "last %lld", (long long)p);
    }
    vid_close(&r);

    o.start = 0;
    o.max_frames = 2;
    n = 0;
    if (vid_open(tpath("lim.mkv"), &o, &r) == 0) {
        while ((rc = vid_next(r, &fr, &buf)) == 1)
            n++;
        CHECK(rc == 0 && n == 2, "--frames 2 delivers 2 frames", "rc %d n %d", rc, n);
        /* after the end it stays at the end */
        CHECK(vid_next(r, &fr, &buf) == 0, "vid_next after the end returns 0", " ");
        vid_close(&r);
    } else {
        CHECK(0, "--frames 2 delivers 2 frames", "open failed");
    }
    host_buf_free(&buf);
}

/* RGB sources: rawvideo rgb24 in NUT, FFV1 bgr0; the --rgb option. */
static void test_rgb_clips(void)
{
    const char *why;
    clip_spec rgb = {"rgb.nut", "nut", AV_CODEC_ID_RAWVIDEO, AV_PIX_FMT_RGB24,
                     13, 7, 3, {1, 30}, NULL, AVCOL_RANGE_UNSPECIFIED, fill_rgb};
    clip_spec bgr0 = rgb;
    const clip_spec *clips[2] = {&rgb, &bgr0};

    bgr0.name = "bgr0.mkv";
    bgr0.muxer = "matroska";
    bgr0.codec = AV_CODEC_ID_FFV1;
    bgr0.fmt = AV_PIX_FMT_BGR0;
    for (int c = 0; c < 2; c++) {
        const clip_spec *s = clips[c];
        vid_reader *r = NULL;
        vid_opts o = {.max_frames = -1};
        host_buf buf = {0};
        src_frame fr;
        char name[128], detail[160] = "";
        int n = 0, rc, bad = 0;

        snprintf(name, sizeof name, "%s source -> RGB24, channels 3, exact",
                 av_get_pix_fmt_name(s->fmt));
        if (write_clip(s, &why)) {
            SKIP(name, why);
            continue;
        }
        if (vid_open(tpath(s->name), &o, &r)) {
            CHECK(0, name, "open failed");
            continue;
        }
        while (!bad && (rc = vid_next(r, &fr, &buf)) == 1) {
            const uint8_t *p = fr.f.data;
            if (fr.f.channels != 3 || fr.f.bytes_per_sample != 1 ||
                fr.f.gain != 1.0f || fr.f.offset != 0 ||
                fr.f.stride != (size_t)s->w * 3) {
                snprintf(detail, sizeof detail, "descriptor ch %d stride %zu",
                         fr.f.channels, fr.f.stride);
                bad = 1;
                break;
            }
            for (int y = 0; y < s->h && !bad; y++)
                for (int x = 0; x < s->w && !bad; x++)
                    for (int k = 0; k < 3; k++)
                        if (p[y * fr.f.stride + x * 3 + k] != rgbval(x, y, n, k)) {
                            snprintf(detail, sizeof detail, "frame %d (%d,%d) c%d = %d want %d",
                                     n, x, y, k, p[y * fr.f.stride + x * 3 + k],
                                     rgbval(x, y, n, k));
                            bad = 1;
                            break;
                        }
            n++;
        }
        if (!bad && n != s->n)
            snprintf(detail, sizeof detail, "%d frames, want %d", n, s->n), bad = 1;
        CHECK(!bad, name, "%s", detail);
        vid_close(&r);
        host_buf_free(&buf);
    }

    /* --rgb on a YUV clip: RGB24 frames, grey picture stays grey-ish */
    {
        vid_reader *r = NULL;
        vid_opts o = {.max_frames = -1, .rgb = 1};
        host_buf buf = {0};
        src_frame fr;
        int rc = -1;
        if (vid_open(tpath("lim.mkv"), &o, &r) == 0) {
            rc = vid_next(r, &fr, &buf);
            CHECK(rc == 1 && fr.f.channels == 3 && fr.f.width == 33 &&
                  fr.f.stride == 99, "--rgb: a YUV source goes through swscale to RGB24",
                  "rc %d ch %d", rc, fr.f.channels);
            vid_close(&r);
        } else {
            CHECK(0, "--rgb: a YUV source goes through swscale to RGB24", "open failed");
        }
        host_buf_free(&buf);
    }
}

/* Hand-made frames through vid_frame_to_ge: layouts no test clip has. */
static void test_conversion(void)
{
    AVFrame *f = av_frame_alloc();
    host_buf buf = {0};
    vid_conv conv = {0};
    ge_frame g;
    int ok;

    /* P010: 10 bits in the top of 16; shift 6, b = 10 */
    f->format = AV_PIX_FMT_P010LE;
    f->width = 5;
    f->height = 3;
    av_frame_get_buffer(f, 0);
    for (int y = 0; y < 3; y++)
        for (int x = 0; x < 5; x++)
            ((uint16_t *)(f->data[0] + y * f->linesize[0]))[x] =
                (uint16_t)(yval(x, y, 0, 10) << 6);
    ok = vid_frame_to_ge(f, 0, &conv, &buf, &g) == 0 && g.shift == 6 &&
         g.bytes_per_sample == 2 && g.offset == 64;
    if (ok) {
        float grey[15];
        ref_grey(&g, grey);
        for (int i = 0; i < 15 && ok; i++) {
            float e = expect_g(yval(i % 5, i / 5, 0, 10), 10, 0);
            ok = !memcmp(&e, &grey[i], sizeof e);
        }
    }
    CHECK(ok, "P010: shift 6, 10-bit limited g exact", "shift %d offset %d", g.shift, g.offset);
    av_frame_unref(f);

    /* negative linesize: a bottom-up plane packs top-down */
    {
        uint8_t plane[4 * 8];
        uint8_t out[4 * 6];
        int ok2 = 1;
        for (int i = 0; i < 32; i++)
            plane[i] = (uint8_t)i;
        /* rows of 8 bytes stored bottom-up: row 0 is the last one */
        vid_pack_plane(out, 6, plane + 3 * 8, -8, 6, 4);
        for (int y = 0; y < 4; y++)
            for (int x = 0; x < 6; x++)
                ok2 &= out[y * 6 + x] == plane[(3 - y) * 8 + x];
        CHECK(ok2, "vid_pack_plane: negative linesize", " ");

        f->format = AV_PIX_FMT_GRAY8;
        f->width = 6;
        f->height = 4;
        f->data[0] = plane + 3 * 8;
        f->linesize[0] = -8;
        ok2 = vid_frame_to_ge(f, 0, &conv, &buf, &g) == 0 &&
              g.stride == 6 && !memcmp(buf.p, out, sizeof out);
        CHECK(ok2, "frame with negative linesize packed into the host_buf", " ");
        f->data[0] = NULL;
        f->linesize[0] = 0;
    }

    /* YUYV (packed): the generic reader, 8-bit limited */
    f->format = AV_PIX_FMT_YUYV422;
    f->width = 6;
    f->height = 2;
    f->color_range = AVCOL_RANGE_UNSPECIFIED;
    av_frame_get_buffer(f, 0);
    for (int y = 0; y < 2; y++)
        for (int x = 0; x < 6; x++) {
            f->data[0][y * f->linesize[0] + 2 * x] = (uint8_t)(x * 40 + y);
            f->data[0][y * f->linesize[0] + 2 * x + 1] = 128;
        }
    ok = vid_frame_to_ge(f, 0, &conv, &buf, &g) == 0 &&
         g.channels == 1 && g.bytes_per_sample == 1 && g.offset == 16;
    for (int i = 0; i < 12 && ok; i++)
        ok = ((uint8_t *)buf.p)[i] == (uint8_t)((i % 6) * 40 + i / 6);
    CHECK(ok, "yuyv422: Y samples unpacked, limited range", " ");
    av_frame_unref(f);

    /* range rules without a tag */
    {
        ge_frame a, b, c, d, e;
        int r1 = vid_luma_params(AV_PIX_FMT_YUVJ420P, AVCOL_RANGE_UNSPECIFIED, &a);
        int r2 = vid_luma_params(AV_PIX_FMT_GRAY16LE, AVCOL_RANGE_UNSPECIFIED, &b);
        int r3 = vid_luma_params(AV_PIX_FMT_YUV444P12LE, AVCOL_RANGE_UNSPECIFIED, &c);
        int r4 = vid_luma_params(AV_PIX_FMT_YUVJ420P, AVCOL_RANGE_MPEG, &d);
        int r5 = vid_luma_params(AV_PIX_FMT_RGB24, AVCOL_RANGE_UNSPECIFIED, &e);
        CHECK(r1 == 0 && a.offset == 0 && a.gain == 1.0f,
              "yuvj420p unspecified -> full range", " ");
        CHECK(r2 == 0 && b.offset == 0 && b.bytes_per_sample == 2 &&
              b.gain == (float)(255.0 / 65535.0), "gray16 unspecified -> full range", " ");
        CHECK(r3 == 0 && c.offset == 256 && c.gain == (float)(255.0 / (219.0 * 16.0)),
              "yuv444p12 unspecified -> limited, offset 16<<4", " ");
        CHECK(r4 == 0 && d.offset == 16, "the frame's own tag wins (yuvj + MPEG -> limited)", " ");
        CHECK(r5 == -1, "rgb24 is not a luma format", " ");
    }

    /* pal8 through swscale: the palette colours exactly */
    {
        uint32_t pal[256];
        int ok3;
        f->format = AV_PIX_FMT_PAL8;
        f->width = 4;
        f->height = 2;
        av_frame_get_buffer(f, 0);
        for (int i = 0; i < 256; i++)
            pal[i] = 0xff000000u | (uint32_t)(i << 16) | (uint32_t)((255 - i) << 8) |
                     (uint32_t)(i / 2);
        memcpy(f->data[1], pal, sizeof pal);
        for (int y = 0; y < 2; y++)
            for (int x = 0; x < 4; x++)
                f->data[0][y * f->linesize[0] + x] = (uint8_t)(y * 100 + x * 50);
        ok3 = vid_frame_to_ge(f, 0, &conv, &buf, &g) == 0 && g.channels == 3;
        for (int i = 0; i < 8 && ok3; i++) {
            int idx = (i / 4) * 100 + (i % 4) * 50;
            const uint8_t *p = (const uint8_t *)buf.p + 3 * i;
            ok3 = p[0] == idx && p[1] == 255 - idx && p[2] == idx / 2;
        }
        CHECK(ok3, "pal8 -> RGB24 through swscale, palette exact", "%s", ok3 ? "" : ge_why());
        av_frame_unref(f);
    }

    /* a size change mid-stream: the same conv re-initialises */
    {
        int ok4 = 1;
        for (int k = 0; k < 2 && ok4; k++) {
            f->format = AV_PIX_FMT_RGB24;
            f->width = k ? 9 : 4;
            f->height = k ? 5 : 3;
            av_frame_get_buffer(f, 0);
            for (int y = 0; y < f->height; y++)
                memset(f->data[0] + y * f->linesize[0], 77, (size_t)f->width * 3);
            ok4 = vid_frame_to_ge(f, 0, &conv, &buf, &g) == 0 &&
                  g.width == f->width && g.height == f->height &&
                  ((uint8_t *)buf.p)[g.stride * (size_t)g.height - 1] == 77;
            av_frame_unref(f);
        }
        CHECK(ok4, "a mid-stream size change re-initialises the conversion", " ");
    }
    vid_conv_free(&conv);
    host_buf_free(&buf);
    av_frame_free(&f);
}

// ---------------------------------------------------------------------------
// Encoders

static uint8_t edge_val(int x, int y, int i)
{
    return (uint8_t)((x * 29 + y * 71 + i * 97) & 255);
}

/* Writes n edge maps w x h (pitch w + 3) to `name` through safeout. */
static int write_edges(const char *name, const char *ext, int w, int h, int n,
                       AVRational tb, AVRational fps, const int64_t *pts,
                       const int64_t *dur, const venc_opts *vo)
{
    so_file *out = NULL;
    venc_writer *wr = NULL;
    so_opts so = {1, 0};
    int pitch = w + 3, rc = 0;
    uint8_t *e = malloc((size_t)pitch * h);

    if (so_open(&out, name, &so, NULL, 0)) {
        free(e);
        return -1;
    }
    if (venc_open(out, ext, w, h, tb, fps, vo, &wr)) {
        so_abort(&out);
        free(e);
        return -1;
    }
    for (int i = 0; i < n && !rc; i++) {
        for (int y = 0; y < h; y++)
            for (int x = 0; x < pitch; x++)
                e[y * pitch + x] = x < w ? edge_val(x, y, i) : 0xEE;
        rc = venc_put(wr, e, pitch, pts ? pts[i] : i, dur ? dur[i] : 0);
    }
    if (venc_close(&wr, rc != 0) || rc) {
        so_abort(&out);
        free(e);
        return -1;
    }
    free(e);
    return so_commit(&out);
}

/* Decodes `name`; checks n frames of w x h whose Y equals edge_val
 * exactly (lossless) or within tol on average (lossy). */
/* MagicYUV: FFmpeg 5.1 decodes its grey as limited range whatever the
 * encoder was told; the samples are still the edge values (checked). */
static int tv_range_ok;

static int read_edges(const char *name, int w, int h, int n, const int64_t *pts,
                      AVRational tb, double mean_tol, char *detail, size_t dn)
{
    vid_reader *r = NULL;
    vid_opts o = {.max_frames = -1};
    host_buf buf = {0};
    src_frame fr;
    int k = 0, rc, bad = 0;

    if (vid_open(name, &o, &r)) {
        snprintf(detail, dn, "open failed");
        return -1;
    }
    while (!bad && (rc = vid_next(r, &fr, &buf)) == 1) {
        const uint8_t *p = fr.f.data;
        double sum = 0;
        if (k >= n || fr.f.channels != 1 || fr.f.bytes_per_sample != 1 ||
            ((fr.f.offset != 0 || fr.f.gain != 1.0f) && !(tv_range_ok && fr.f.offset == 16)) ||
            fr.f.width < w || fr.f.height < h) {
            snprintf(detail, dn, "frame %d: %dx%d offset %d gain %g", k, fr.f.width,
                     fr.f.height, fr.f.offset, fr.f.gain);
            bad = 1;
            break;
        }
        if (pts && fabs(fr.pts - (double)pts[k] * av_q2d(tb)) > 1e-9) {
            snprintf(detail, dn, "frame %d pts %.6f want %.6f", k, fr.pts,
                     (double)pts[k] * av_q2d(tb));
            bad = 1;
            break;
        }
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                int d = p[y * fr.f.stride + x] - edge_val(x, y, k);
                if (mean_tol == 0 && d) {
                    snprintf(detail, dn, "frame %d (%d,%d) %d want %d", k, x, y,
                             p[y * fr.f.stride + x], edge_val(x, y, k));
                    bad = 1;
                    y = h;
                    break;
                }
                sum += fabs((double)d);
            }
        if (!bad && mean_tol > 0 && sum / (w * h) > mean_tol) {
            snprintf(detail, dn, "frame %d mean |diff| %.2f", k, sum / (w * h));
            bad = 1;
        }
        k++;
    }
    if (!bad && k != n) {
        snprintf(detail, dn, "%d frames, want %d", k, n);
        bad = 1;
    }
    vid_close(&r);
    host_buf_free(&buf);
    return bad ? -1 : 0;
}

static void test_mkv_roundtrip(void)
{
    static const int64_t pts[] = {0, 40, 50, 130, 131, 500, 517};
    static const int64_t dur[] = {40, 10, 80, 1, 369, 17, 60};
    char detail[200] = "";
    const char *out = tpath("edges.mkv");
    AVRational tb = {1, 1000};
    int rc = write_edges(out, "mkv", 33, 17, 7, tb, (AVRational){25, 1}, pts, dur, NULL);

    CHECK(rc == 0, "mkv (FFV1) written through safeout", " ");
    if (rc == 0)
        CHECK(read_edges(out, 33, 17, 7, pts, tb, 0, detail, sizeof detail) == 0,
              "mkv round trip: 7 VFR frames, pts and pixels identical, last frame kept",
              "%s", detail);
    /* the last frame's duration is in the file */
    {
        AVFormatContext *ic = NULL;
        int ok = avformat_open_input(&ic, out, NULL, NULL) == 0 &&
                 avformat_find_stream_info(ic, NULL) >= 0;
        if (ok) {
            /* 517 + 60 ms: the container's duration covers the last frame */
            ok = ic->duration >= 577000 - 1000 && ic->duration <= 577000 + 1000;
            CHECK(ok, "mkv duration includes the last frame's duration",
                  "duration %lld us", (long long)ic->duration);
        } else {
            CHECK(0, "mkv duration includes the last frame's duration", "cannot open");
        }
        avformat_close_input(&ic);
    }
    CHECK(count_tmp_files() == 0, "no temp file left after commit", " ");

    /* durations unknown (0), a larger frame with many slices, 1x1 */
    rc = write_edges(tpath("big.mkv"), "mkv", 400, 300, 2, tb, (AVRational){0, 1},
                     NULL, NULL, NULL);
    CHECK(rc == 0 && read_edges(tpath("big.mkv"), 400, 300, 2, NULL, tb, 0, detail,
                                sizeof detail) == 0,
          "mkv 400x300 (slices), unknown durations", "%s", detail);
    rc = write_edges(tpath("one.mkv"), "mkv", 1, 1, 3, tb, (AVRational){25, 1}, NULL,
                     NULL, NULL);
    CHECK(rc == 0 && read_edges(tpath("one.mkv"), 1, 1, 3, NULL, tb, 0, detail,
                                sizeof detail) == 0, "mkv 1x1", "%s", detail);
}

/* FFmpeg 5.1's FFV1 v3 mangles slice grids as wide as the frame (2x2 with
 * 4 slices decodes to zeros): tiny and thin frames must still round-trip,
 * with the default slice count and with many threads. */
/* Clusters in a Matroska file and how many open with a CRC-32 element
 * (a Cluster, 1F 43 B6 75, its EBML size, then BF 84 as the first child). */
static void mkv_crc_count(const char *name, int *clusters, int *with_crc)
{
    FILE *f = fopen(name, "rb");
    static uint8_t d[1 << 20];
    size_t n = f ? fread(d, 1, sizeof d, f) : 0;
    *clusters = *with_crc = 0;
    if (f)
        fclose(f);
    for (size_t i = 0; i + 4 < n; i++) {
        size_t j = i + 4, len = 1;
        if (memcmp(d + i, "\x1f\x43\xb6\x75", 4))
            continue;
        while (len <= 8 && !(d[j] & (0x80 >> (len - 1))))
            len++;
        j += len;
        ++*clusters;
        *with_crc += j + 2 <= n && d[j] == 0xbf && d[j + 1] == 0x84;
    }
}

/* venc_opts.mkv_crc: no CRC-32 element in a cluster by default, one in
 * each with it; the frames are the same either way. */
static void test_mkv_crc(void)
{
    static const int64_t pts[] = {0, 40, 80, 120, 160, 200};
    char d1[200] = "", d2[200] = "";
    AVRational tb = {1, 1000};
    venc_opts crc = {.mkv_crc = 1};
    int c0, k0, c1, k1;
    int rc = write_edges(tpath("nocrc.mkv"), "mkv", 48, 32, 6, tb, (AVRational){25, 1},
                         pts, NULL, NULL) ||
             write_edges(tpath("crc.mkv"), "mkv", 48, 32, 6, tb, (AVRational){25, 1},
                         pts, NULL, &crc);
    mkv_crc_count(tpath("nocrc.mkv"), &c0, &k0);
    mkv_crc_count(tpath("crc.mkv"), &c1, &k1);
    CHECK(rc == 0 && c0 >= 1 && k0 == 0 && c1 >= 1 && k1 == c1 &&
          read_edges(tpath("nocrc.mkv"), 48, 32, 6, pts, tb, 0, d1, sizeof d1) == 0 &&
          read_edges(tpath("crc.mkv"), 48, 32, 6, pts, tb, 0, d2, sizeof d2) == 0,
          "mkv: no CRC-32 element in a cluster by default, one in each with "
          "venc_opts.mkv_crc; same frames",
          "rc %d; default %d clusters %d with CRC; mkv_crc %d clusters %d with CRC; %s %s",
          rc, c0, k0, c1, k1, d1, d2);
}

static void test_mkv_tiny(void)
{
    static const int sz[][2] = {{1, 1}, {1, 5}, {5, 1}, {2, 2}, {3, 2}, {2, 3},
                                {8, 2}, {3, 3}, {5, 5}, {7, 4}, {17, 3}, {64, 9}};
    /* every intra codec .mkv holds (issue 11), FFV1 first */
    static const char *const codecs[] = {"ffv1", "ffvhuff", "magicyuv", "rawvideo"};
    char detail[200] = "", name[96];
    AVRational tb = {1, 25};
    for (int t = 0; t < 2 * 4; t++) {
        venc_opts vo = {.threads = t % 2 ? 16 : 0, .codec = codecs[t / 2]};
        tv_range_ok = !strcmp(codecs[t / 2], "magicyuv");
        char what[128];
        int bad = 0;
        for (size_t i = 0; i < sizeof sz / sizeof sz[0] && !bad; i++) {
            int w = sz[i][0], h = sz[i][1];
            if (write_edges(tpath("tiny.mkv"), "mkv", w, h, 2, tb, tb, NULL, NULL, &vo) ||
                read_edges(tpath("tiny.mkv"), w, h, 2, NULL, tb, 0, detail,
                           sizeof detail)) {
                snprintf(name, sizeof name, "%dx%d: ", w, h);
                bad = 1;
            }
        }
        snprintf(what, sizeof what, t % 2 ? "mkv %s tiny and thin sizes, 16 threads, lossless"
                                          : "mkv %s tiny and thin sizes (1x1 .. 64x9), lossless",
                 codecs[t / 2]);
        CHECK(!bad, what, "%s%s", bad ? name : "", detail);
        tv_range_ok = 0;
    }
}

/* 1 when the two files hold the same bytes. */
static int same_bytes(const char *a, const char *b)
{
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    int same = fa && fb, ca, cb;
    while (same) {
        ca = getc(fa);
        cb = getc(fb);
        same = ca == cb;
        if (ca == EOF || cb == EOF)
            break;
    }
    if (fa)
        fclose(fa);
    if (fb)
        fclose(fb);
    return same;
}

/* hfyu_enc.c's FFVHuff frames == libavcodec's ffvhuff packets (gray8,
 * median, context 0: venc.c's settings), byte for byte: sizes from
 * 1x1 up, odd ones, rows wider than hfyu_code's 4096-pixel pieces, and
 * contents whose residuals take short codes (flat, smooth, sparse edges)
 * and long ones (noise, alternating extremes). */
static void test_hfyu(void)
{
    static const int sz[][2] = {{1, 1}, {2, 1}, {1, 2}, {3, 3}, {2, 2}, {17, 1}, {1, 17},
                                {31, 5}, {33, 7}, {161, 121}, {640, 360}, {4096, 2},
                                {4097, 3}, {8193, 2}, {1920, 1080}};
    const AVCodec *codec = avcodec_find_encoder_by_name("ffvhuff");
    char detail[200] = "";
    int bad = 0, n = 0;
    uint32_t seed = 12345;
    if (!codec) {
        SKIP("hfyu_enc == libavcodec's ffvhuff", "no ffvhuff encoder");
        return;
    }
    for (size_t i = 0; i < sizeof sz / sizeof sz[0] && !bad; i++)
        for (int kind = 0; kind < 6 && !bad; kind++) {
            int w = sz[i][0], h = sz[i][1], ret;
            AVCodecContext *e = avcodec_alloc_context3(codec);
            AVDictionary *d = NULL;
            AVFrame *f = av_frame_alloc();
            AVPacket *p = av_packet_alloc();
            hfyu_tab t;
            uint8_t *out = NULL;
            e->width = w;
            e->height = h;
            e->pix_fmt = AV_PIX_FMT_GRAY8;
            e->time_base = (AVRational){1, 25};
            av_dict_set(&d, "pred", "median", 0);
            av_dict_set(&d, "context", "0", 0);
            ret = avcodec_open2(e, codec, &d);
            av_dict_free(&d);
            f->format = AV_PIX_FMT_GRAY8;
            f->width = w;
            f->height = h;
            if (ret < 0 || av_frame_get_buffer(f, 0) < 0 ||
                hfyu_parse(e->extradata, e->extradata_size, &t)) {
                snprintf(detail, sizeof detail, "%dx%d: open/parse failed", w, h);
                bad = 1;
            } else {
                for (int y = 0; y < h; y++)
                    for (int x = 0; x < w; x++) {
                        uint8_t v;
                        seed = seed * 1103515245u + 12345u;
                        switch (kind) {
                        case 0: v = 0; break;
                        case 1: v = (uint8_t)(x + 2 * y); break;
                        case 2: v = (seed >> 24) < 20 ? (uint8_t)(seed >> 8) : 0; break;
                        case 3: v = (uint8_t)(seed >> 16); break;
                        case 4: v = (x + y) & 1 ? 255 : 0; break;
                        default: v = (uint8_t)(128 + ((int)(seed >> 28) - 8)); break;
                        }
                        f->data[0][(size_t)y * f->linesize[0] + x] = v;
                    }
                out = malloc(hfyu_max_bytes(&t, w, h));
                if (!out || avcodec_send_frame(e, f) < 0 || avcodec_receive_packet(e, p) < 0) {
                    snprintf(detail, sizeof detail, "%dx%d: libavcodec failed", w, h);
                    bad = 1;
                } else {
                    size_t k = hfyu_code(&t, f->data[0], f->linesize[0], w, h, out);
                    if (k != (size_t)p->size || memcmp(out, p->data, k)) {
                        snprintf(detail, sizeof detail, "%dx%d content %d: %zu bytes, libavcodec %d%s",
                                 w, h, kind, k, p->size,
                                 k == (size_t)p->size ? " (bytes differ)" : "");
                        bad = 1;
                    }
                    n++;
                }
            }
            free(out);
            av_packet_free(&p);
            av_frame_free(&f);
            avcodec_free_context(&e);
        }
    CHECK(!bad, "hfyu_enc == libavcodec's ffvhuff (gray8, median, context 0), byte for byte",
          "%s (after %d equal frames)", detail, n);
    {
        /* what hfyu_parse must refuse: another predictor, interlacing,
         * context 1, a truncated or incomplete table */
        static const uint8_t hdr[4] = {2, 0x70, 0x20, 1};
        uint8_t ex[8];
        hfyu_tab t;
        int refused = 1;
        memcpy(ex, hdr, 4);
        ex[4] = 8 | 7 << 5; /* seven lengths of 8, then nothing: truncated */
        refused &= hfyu_parse(ex, 5, &t) != 0;
        ex[4] = 8;          /* 256 lengths of 8: a complete code */
        ex[5] = 255;
        ex[6] = 8 | 1 << 5;
        refused &= hfyu_parse(ex, 7, &t) == 0;
        ex[0] = 0; /* left predictor */
        refused &= hfyu_parse(ex, 7, &t) != 0;
        ex[0] = 2;
        ex[2] = 0x10; /* interlaced */
        refused &= hfyu_parse(ex, 7, &t) != 0;
        ex[2] = 0x60; /* context 1 */
        refused &= hfyu_parse(ex, 7, &t) != 0;
        ex[2] = 0x20;
        ex[4] = 9; /* 256 lengths of 9: not a complete code */
        refused &= hfyu_parse(ex, 7, &t) != 0;
        CHECK(refused, "hfyu_parse takes only gray8 median context-0 tables that form a "
              "complete code", " ");
    }
}

/* How many encoders code at once (et_count's rule, venc_thread.c): one a thread below
 * 8 threads; from 8 on half of them, or three quarters for NVDEC's frames
 * (venc_opts.gpu_frames); FFV1 one a 4 threads. */
static void test_mkv_lane_rule(void)
{
    static const struct { const char *codec; int threads, gpu, want; } t[] = {
        {"ffvhuff", 1, 0, 1},   {"ffvhuff", 4, 0, 4},  {"ffvhuff", 4, 1, 4},
        {"ffvhuff", 7, 1, 7},   {"ffvhuff", 8, 0, 4},  {"ffvhuff", 8, 1, 6},
        {"ffvhuff", 16, 0, 8},  {"ffvhuff", 16, 1, 12}, {"magicyuv", 16, 1, 12},
        {"ffvhuff", 64, 1, 16}, {"ffv1", 16, 1, 4},    {"ffv1", 16, 0, 4},
    };
    char detail[256] = "";
    int bad = 0;
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        so_opts so = {1, 0};
        so_file *out = NULL;
        venc_writer *wr = NULL;
        venc_opts vo = {.threads = t[i].threads, .gpu_frames = t[i].gpu, .codec = t[i].codec};
        int got = -1;
        if (so_open(&out, tpath("encoders.mkv"), &so, NULL, 0) == 0 &&
            venc_open(out, "mkv", 640, 360, (AVRational){1, 25}, (AVRational){25, 1}, &vo,
                      &wr) == 0)
            got = venc_encoders(wr);
        venc_close(&wr, 1);
        so_abort(&out);
        if (got != t[i].want) {
            snprintf(detail + strlen(detail), sizeof detail - strlen(detail),
                     "%s %d threads%s: %d, not %d; ", t[i].codec, t[i].threads,
                     t[i].gpu ? " (NVDEC)" : "", got, t[i].want);
            bad = 1;
        }
    }
    CHECK(!bad, "mkv encoders at once: 1 a thread below 8, then 1/2 (3/4 with NVDEC "
          "frames), at most 16; FFV1 one a 4 threads", "%s", detail);
    CHECK(venc_encoders_follow_decoder("mkv", NULL, 16) && venc_encoders_follow_decoder("mkv", "magicyuv", 8) &&
          !venc_encoders_follow_decoder("mkv", NULL, 7) && !venc_encoders_follow_decoder("mkv", "ffv1", 16) &&
          !venc_encoders_follow_decoder("mp4", NULL, 16) && !venc_encoders_follow_decoder("y4m", NULL, 16),
          "venc_encoders_follow_decoder: FFVHuff/MagicYUV .mkv from 8 threads only", " ");
}

/* Frame-parallel FFV1 (venc_opts.encoders): each frame is a keyframe
 * coded from itself alone by whichever encoder is free, the packets muxed
 * in frame order, so any number of encoders must write the bytes one
 * encoder writes, and decode to the exact edge maps.  Sizes with slices,
 * odd ones, and thin ones that fall back to FFV1 version 1; fewer frames
 * than encoders too.  --threads 1..4 all ask FFV1 for the same 4 slices:
 * one encoder in venc_put (threads 1) is the reference. */
static void test_mkv_parallel(void)
{
    static const int sz[][2] = {{640, 360}, {401, 299}, {33, 17}, {7, 4},
                                {2, 2}, {1, 1}, {1, 37}, {97, 2}};
    static const int64_t pts[] = {0, 40, 50, 130, 131, 500, 517, 600, 601, 700, 740};
    static const int64_t dur[] = {40, 10, 80, 1, 369, 17, 60, 1, 99, 40, 40};
    static const int cfg[][2] = {{1, 2}, {1, 3}, {2, 0}, {2, 2}, {3, 5}, {4, 0}, {4, 16}};
    static const int counts[] = {1, 2, 11};
    /* the intra codecs (issue 11): each frame stands alone in all three */
    static const char *const codecs[] = {"ffv1", "ffvhuff", "magicyuv"};
    AVRational tb = {1, 1000};
    char detail[200] = "", what[96] = "", label[160];
    int bad = 0;

    for (size_t q = 0; q < 3; q++, bad = 0) {
    tv_range_ok = !strcmp(codecs[q], "magicyuv");
    for (size_t i = 0; i < sizeof sz / sizeof sz[0] && !bad; i++)
        for (size_t k = 0; k < sizeof counts / sizeof counts[0] && !bad; k++) {
            int w = sz[i][0], h = sz[i][1], n = counts[k];
            venc_opts ref = {.threads = 1, .codec = codecs[q]};
            if (write_edges(tpath("ref.mkv"), "mkv", w, h, n, tb, (AVRational){25, 1},
                            pts, dur, &ref) ||
                read_edges(tpath("ref.mkv"), w, h, n, pts, tb, 0, detail, sizeof detail)) {
                snprintf(what, sizeof what, "%dx%d, %d frames, one encoder: ", w, h, n);
                bad = 1;
                break;
            }
            for (size_t c = 0; c < sizeof cfg / sizeof cfg[0] && !bad; c++) {
                venc_opts vo = {.threads = cfg[c][0], .encoders = cfg[c][1],
                                .codec = codecs[q]};
                if (write_edges(tpath("par.mkv"), "mkv", w, h, n, tb, (AVRational){25, 1},
                                pts, dur, &vo) ||
                    !same_bytes(tpath("ref.mkv"), tpath("par.mkv"))) {
                    snprintf(what, sizeof what, "%dx%d, %d frames, threads %d, %d encoders: ",
                             w, h, n, cfg[c][0], cfg[c][1]);
                    snprintf(detail, sizeof detail, "not the same bytes");
                    bad = 1;
                }
            }
        }
    snprintf(label, sizeof label, "mkv frame-parallel %s (2..16 encoders, 1..11 frames, "
             "odd and thin sizes): the bytes of one encoder, lossless", codecs[q]);
    CHECK(!bad, label, "%s%s", what, detail);
    }
    tv_range_ok = 0;

    /* the errors of a parallel writer: a full disk, an abandoned output
     * with frames in flight, an interruption */
    if (access("/dev/full", W_OK) == 0) {
        char msg[1024];
        int lines, rc;
        venc_opts vo = {.threads = 4, .encoders = 3};
        stderr_begin();
        rc = write_edges("/dev/full", "mkv", 64, 64, 40, tb, (AVRational){25, 1}, NULL,
                         NULL, &vo);
        lines = stderr_end(msg, sizeof msg);
        CHECK(rc != 0 && lines >= 1 && strstr(msg, "No space left"),
              "mkv, 3 encoders, to /dev/full fails with the write error", "rc %d: %s", rc,
              msg);
    } else {
        SKIP("mkv, 3 encoders, to /dev/full fails with the write error", "no /dev/full");
    }
    for (int stop = 0; stop < 2; stop++) {
        so_file *out = NULL;
        venc_writer *wr = NULL;
        so_opts so = {1, 0};
        venc_opts vo = {.threads = 2, .encoders = 4};
        uint8_t e[96 * 64];
        char msg[1024] = "";
        int ok = 0, lines, put = 0, rc = 0;
        memset(e, 7, sizeof e);
        stderr_begin();
        if (so_open(&out, tpath("stop.mkv"), &so, NULL, 0) == 0 &&
            venc_open(out, "mkv", 96, 64, tb, (AVRational){25, 1}, &vo, &wr) == 0) {
            for (int i = 0; i < 6; i++)
                put += venc_put(wr, e, 96, i * 40, 40) == 0;
            if (stop)
                sig_stop = SIGINT;
            rc = venc_put(wr, e, 96, 240, 40);
            ok = put == 6 && (stop ? rc == -1 : rc == 0);
            /* abandoned with frames in flight: no hang, no message */
            ok = venc_close(&wr, 1) == (stop ? -1 : 0) && ok;
            sig_stop = 0;
        }
        so_abort(&out);
        lines = stderr_end(msg, sizeof msg);
        CHECK(ok && lines == 0 && count_tmp_files() == 0,
              stop ? "mkv, 4 encoders, interrupted: venc_put -1 quietly, temp removed"
                   : "mkv, 4 encoders, abandoned with frames in flight: quiet, temp removed",
              "ok %d, %d lines: %s", ok, lines, msg);
    }
}

/* venc_put_coded (packets coded elsewhere, as the GPU does: here by
 * hfyu_code with venc_ffvhuff_codes' codes) writes the very file venc_put
 * writes, mixed with pixel frames in any order, with encoder threads and
 * with one encoder; it declines (1) frames it cannot take: other codes,
 * another size, another codec. */
static void test_put_coded(void)
{
    const int w = 97, h = 31, n = 9;
    const AVRational tb = {1, 1000}, fps = {25, 1};
    uint32_t cl[256], other[256];
    hfyu_tab t;
    uint8_t e[97 * 31], *pkt;
    venc_opts vo = {.threads = 3};
    int ok = venc_ffvhuff_codes(cl) == 0, took = 0, declined = 0;
    memset(&t, 0, sizeof t);
    for (int i = 0; i < 256 && ok; i++) {
        t.cl[i] = cl[i];
        t.code[i] = cl[i] >> 5;
        t.len[i] = (uint8_t)(cl[i] & 31);
        t.max_len = t.len[i] > t.max_len ? t.len[i] : t.max_len;
    }
    pkt = malloc(hfyu_max_bytes(&t, w, h));
    ok = ok && pkt && write_edges(tpath("px.mkv"), "mkv", w, h, n, tb, fps, NULL, NULL, &vo) == 0;
    for (int mode = 0; mode < 4 && ok; mode++) {
        /* 0: FFVHuff frame-parallel; 1: one encoder; 2: FFV1; 3: wrong codes */
        venc_opts o = {.threads = mode == 1 ? 1 : 3, .codec = mode == 2 ? "ffv1" : NULL};
        so_file *out = NULL;
        venc_writer *wr = NULL;
        so_opts so = {1, 0};
        int rc = 0;
        memcpy(other, cl, sizeof other);
        other[0] ^= 1u << 5;
        ok = so_open(&out, tpath("coded.mkv"), &so, NULL, 0) == 0 &&
             venc_open(out, "mkv", w, h, tb, fps, &o, &wr) == 0;
        for (int i = 0; i < n && ok && !rc; i++) {
            size_t k;
            for (int y = 0; y < h; y++)
                for (int x = 0; x < w; x++)
                    e[y * w + x] = edge_val(x, y, i);
            k = hfyu_code(&t, e, w, w, h, pkt);
            /* every third frame as pixels; one of another size declined */
            int tried = i % 3 != 2;
            rc = tried ? venc_put_coded(wr, pkt, k, mode == 3 ? other : cl, w, h, i, 0, NULL, NULL)
                       : 1;
            if (i == 4 && venc_put_coded(wr, pkt, k, cl, w - 1, h, i, 0, NULL, NULL) != 1)
                ok = 0;
            took += tried && rc == 0 && mode < 2;
            declined += tried && rc == 1 && mode >= 2;
            if (rc == 1)
                rc = venc_put(wr, e, w, i, 0);
        }
        ok = ok && !rc && venc_close(&wr, 0) == 0 && so_commit(&out) == 0;
        if (!ok)
            so_abort(&out);
        if (ok && mode != 2)
            ok = same_bytes(tpath("px.mkv"), tpath("coded.mkv"));
    }
    free(pkt);
    CHECK(venc_is_ffvhuff("mkv", NULL) && venc_is_ffvhuff(".MKV", "FFVHuff") &&
              !venc_is_ffvhuff("mkv", "ffv1") && !venc_is_ffvhuff("mp4", NULL) &&
              !venc_is_ffvhuff("png", NULL),
          "venc_is_ffvhuff: .mkv's default and --codec ffvhuff only", "%s", "");
    CHECK(ok && took == 12 && declined == 12,
          "venc_put_coded: GPU-style packets make venc_put's file; declined where not FFVHuff's own",
          "ok %d, taken %d (12), declined %d (12)", ok, took, declined);
}

/* A source whose size changes: the video keeps its first size. */
static void test_size_change(void)
{
    so_file *out = NULL;
    venc_writer *wr = NULL;
    so_opts so = {1, 0};
    uint8_t a[10 * 8], b[12 * 6];
    vid_reader *r = NULL;
    vid_opts o = {.max_frames = -1};
    host_buf buf = {0};
    src_frame fr;
    char msg[512];
    int ok = 0, lines;

    memset(a, 50, sizeof a);
    for (int i = 0; i < 12 * 6; i++)
        b[i] = (uint8_t)(100 + i % 12);
    stderr_begin();
    if (so_open(&out, tpath("resize.mkv"), &so, NULL, 0) == 0 &&
        venc_open(out, "mkv", 10, 8, (AVRational){1, 25}, (AVRational){25, 1}, NULL, &wr) == 0) {
        ok = venc_put(wr, a, 10, 0, 1) == 0 &&
             venc_put_sized(wr, b, 12, 6, 12, 1, 1) == 0 &&
             venc_put_sized(wr, b, 12, 6, 12, 2, 1) == 0;
        ok = venc_close(&wr, !ok) == 0 && ok;
        ok = ok ? so_commit(&out) == 0 : (so_abort(&out), 0);
    }
    lines = stderr_end(msg, sizeof msg);
    CHECK(ok && lines == 1 && strstr(msg, "frame size changed"),
          "venc_put_sized: a size change is noted once", "%s", msg);
    if (ok && vid_open(tpath("resize.mkv"), &o, &r) == 0) {
        int n = 0, good = 1;
        while (vid_next(r, &fr, &buf) == 1) {
            const uint8_t *p = fr.f.data;
            good &= fr.f.width == 10 && fr.f.height == 8;
            for (int y = 0; y < 8 && good && n > 0; y++)
                for (int x = 0; x < 10; x++)
                    good &= p[y * fr.f.stride + x] == (y < 6 ? 100 + x : 0);
            n++;
        }
        CHECK(good && n == 3, "a larger/shorter frame is cropped and padded with 0",
              "%d frames", n);
        vid_close(&r);
    }
    host_buf_free(&buf);
}

/* "-" reads standard input (a y4m pipe). */
static void test_stdin(void)
{
    int saved = dup(0), fd = open(tpath("edges.y4m"), O_RDONLY);
    vid_reader *r = NULL;
    vid_opts o = {.max_frames = -1};
    host_buf buf = {0};
    src_frame fr;
    int n = 0, rc = -1;

    dup2(fd, 0);
    close(fd);
    if (vid_open("-", &o, &r) == 0) {
        while ((rc = vid_next(r, &fr, &buf)) == 1)
            n++;
        vid_close(&r);
    }
    dup2(saved, 0);
    close(saved);
    CHECK(rc == 0 && n == 3, "- reads a y4m stream from standard input", "rc %d n %d", rc, n);
    host_buf_free(&buf);
}

static void test_y4m(void)
{
    char detail[200] = "", head[128] = "";
    const char *out = tpath("edges.y4m");
    AVRational fps = {25, 1};
    venc_opts vo = {0};
    int rc = write_edges(out, "y4m", 17, 9, 3, (AVRational){1, 1000}, fps, NULL,
                         NULL, NULL);
    static const int64_t pts[] = {0, 1, 2};
    FILE *fp;

    CHECK(rc == 0, "y4m written", " ");
    fp = fopen(out, "rb");
    if (fp) {
        if (!fgets(head, sizeof head, fp))
            head[0] = '\0';
        fclose(fp);
    }
    CHECK(!strncmp(head, "YUV4MPEG2 W17 H9 F25:1", 22) && strstr(head, "Cmono"),
          "y4m header: size, rate 25:1, mono", "%s", head);
    CHECK(rc == 0 && read_edges(out, 17, 9, 3, pts, (AVRational){1, 25}, 0, detail,
                                sizeof detail) == 0,
          "y4m round trip: 3 frames at 1/25 s, pixels identical", "%s", detail);

    vo.y4m_yuv420 = 1;
    out = tpath("edges420.y4m");
    rc = write_edges(out, "y4m", 17, 9, 2, (AVRational){1, 1000}, (AVRational){30000, 1001},
                     NULL, NULL, &vo);
    CHECK(rc == 0 && read_edges(out, 17, 9, 2, NULL, (AVRational){1, 25}, 0, detail,
                                sizeof detail) == 0,
          "y4m yuv420p (odd size), tagged full range: luma identical", "%s", detail);

    /* "-": streamed to standard output */
    {
        int saved, fd;
        struct stat st;
        fflush(stdout);
        saved = dup(1);
        fd = open(tpath("stdout.y4m"), O_CREAT | O_TRUNC | O_WRONLY, 0600);
        dup2(fd, 1);
        close(fd);
        rc = write_edges("-", "y4m", 17, 9, 3, (AVRational){1, 1000}, fps, NULL, NULL,
                         NULL);
        dup2(saved, 1);
        close(saved);
        CHECK(rc == 0 && stat(tpath("stdout.y4m"), &st) == 0 &&
              read_edges(tpath("stdout.y4m"), 17, 9, 3, NULL, fps, 0, detail,
                         sizeof detail) == 0,
              "y4m to standard output (-)", "%s", detail);
    }

    /* a full disk: the error is reported, never a silent short file */
    if (access("/dev/full", W_OK) == 0) {
        char msg[1024];
        int lines;
        stderr_begin();
        rc = write_edges("/dev/full", "y4m", 64, 64, 40, (AVRational){1, 1000}, fps,
                         NULL, NULL, NULL);
        lines = stderr_end(msg, sizeof msg);
        CHECK(rc != 0 && lines >= 1 && strstr(msg, "No space left"),
              "y4m to /dev/full fails with the write error", "rc %d: %s", rc, msg);
    } else {
        SKIP("y4m to /dev/full fails with the write error", "no /dev/full");
    }
}

static void test_mp4(void)
{
    static const int64_t pts[] = {0, 40, 80, 100, 180};
    char detail[200] = "";
    const char *out = tpath("edges.mp4");
    AVRational tb = {1, 1000};
    vid_reader *r = NULL;
    vid_opts o = {.max_frames = -1};
    int rc;

    if (!avcodec_find_encoder_by_name("libx264")) {
        SKIP("mp4 (H.264) round trip", "libavcodec without libx264");
        return;
    }
    rc = write_edges(out, "mp4", 33, 17, 5, tb, (AVRational){25, 1}, pts, NULL, NULL);
    CHECK(rc == 0, "mp4 (H.264) written, odd size 33x17", " ");
    if (rc)
        return;
    /* lossy: close on average; padded to 34x18; full range (gain 1) */
    CHECK(read_edges(out, 33, 17, 5, pts, tb, 12.0, detail, sizeof detail) == 0,
          "mp4 round trip: 5 VFR frames, pts kept, full range, luma close", "%s", detail);
    if (vid_open(out, &o, &r) == 0) {
        host_buf buf = {0};
        src_frame fr;
        rc = vid_next(r, &fr, &buf);
        CHECK(rc == 1 && fr.f.width == 34 && fr.f.height == 18,
              "mp4 odd size padded to even (34x18)", "%dx%d", fr.f.width, fr.f.height);
        vid_close(&r);
        host_buf_free(&buf);
    }
}

// ---------------------------------------------------------------------------
// Broken inputs, probing, names

static void test_broken(void)
{
    char msg[2048];
    vid_reader *r = NULL;
    vid_opts o = {.max_frames = -1};
    host_buf buf = {0};
    src_frame fr;
    int lines, rc, n;
    const char *missing = tpath("no_such_file.mkv");

    stderr_begin();
    rc = vid_open(missing, &o, &r);
    lines = stderr_end(msg, sizeof msg);
    CHECK(rc == -1 && !r && lines == 1 && strstr(msg, "gpuedge: ") == msg &&
          strstr(msg, missing) && strstr(msg, "cannot open video"),
          "missing file: -1 and one message line naming it", "%s", msg);

    {
        FILE *fp = fopen(tpath("junk.mkv"), "wb");
        unsigned s = 12345;
        for (int i = 0; i < 3000; i++) {
            s = s * 1103515245u + 12345u;
            fputc((int)(s >> 16) & 255, fp);
        }
        fclose(fp);
    }
    stderr_begin();
    rc = vid_open(tpath("junk.mkv"), &o, &r);
    lines = stderr_end(msg, sizeof msg);
    CHECK(rc == -1 && lines == 1, "garbage file: -1 and one message line", "%s", msg);

    /* a clip with its tail cut off: what is there decodes, no error */
    {
        clip_spec s = {"ten_frames.mkv", "matroska", AV_CODEC_ID_FFV1, AV_PIX_FMT_GRAY8,
                       64, 64, 10, {1, 25}, NULL, AVCOL_RANGE_UNSPECIFIED, fill_yuv};
        const char *why;
        FILE *in, *out;
        long size;
        char *data;
        if (write_clip(&s, &why)) {
            CHECK(0, "make the clip to break", "%s", why);
            return;
        }
        in = fopen(tpath(s.name), "rb");
        fseek(in, 0, SEEK_END);
        size = ftell(in);
        rewind(in);
        data = malloc((size_t)size);
        if (fread(data, 1, (size_t)size, in) != (size_t)size)
            size = 0;
        fclose(in);

        out = fopen(tpath("cut.mkv"), "wb");
        fwrite(data, 1, (size_t)(size * 6 / 10), out);
        fclose(out);
        n = 0;
        stderr_begin();
        if (vid_open(tpath("cut.mkv"), &o, &r) == 0) {
            while ((rc = vid_next(r, &fr, &buf)) == 1)
                n++;
            vid_close(&r);
        } else {
            rc = -2;
        }
        stderr_end(msg, sizeof msg);
        CHECK(rc == 0 && n >= 1 && n < 10, "truncated clip: the frames that are there, then the end",
              "rc %d, %d frames", rc, n);

        /* bytes flipped in the middle: skipped or concealed, never a crash */
        for (long i = size / 2; i < size / 2 + 300 && i < size; i++)
            data[i] ^= 0x5a;
        out = fopen(tpath("damaged.mkv"), "wb");
        fwrite(data, 1, (size_t)size, out);
        fclose(out);
        free(data);
        n = 0;
        stderr_begin();
        if (vid_open(tpath("damaged.mkv"), &o, &r) == 0) {
            long corrupt;
            while ((rc = vid_next(r, &fr, &buf)) == 1)
                n++;
            corrupt = vid_corrupt_count(r);
            vid_close(&r);
            stderr_end(msg, sizeof msg);
            CHECK(rc == 0 && n <= 10 && (corrupt > 0 || n < 10),
                  "damaged clip: corrupt data counted, decoding goes on to the end",
                  "rc %d, %d frames, %ld corrupt", rc, n, corrupt);
            printf("# damaged clip: %d frames decoded, %ld corrupt counted\n", n, corrupt);
        } else {
            stderr_end(msg, sizeof msg);
            CHECK(0, "damaged clip: corrupt data counted, decoding goes on to the end",
                  "cannot open: %s", msg);
        }
    }

    /* an interruption stops reading without a message */
    if (vid_open(tpath("lim.mkv"), &o, &r) == 0) {
        sig_stop = SIGINT;
        stderr_begin();
        rc = vid_next(r, &fr, &buf);
        lines = stderr_end(msg, sizeof msg);
        sig_stop = 0;
        CHECK(rc == -1 && lines == 0, "sig_stop: vid_next returns -1 quietly", "rc %d", rc);
        vid_close(&r);
    }
    sig_stop = SIGTERM;
    rc = vid_open(tpath("lim.mkv"), &o, &r);
    sig_stop = 0;
    CHECK(rc == -1 && !r, "sig_stop: vid_open is interrupted", "rc %d", rc);
    host_buf_free(&buf);
}

static void test_probe_and_names(void)
{
    char buf[64];
    FILE *fp;
    int ok;

    CHECK(vid_probe("a.png") == 0 && vid_probe("a.JPG") == 0 && vid_probe("a.gif") == 0,
          "vid_probe: image extensions are images", " ");
    CHECK(vid_probe("a.mkv") == 1 && vid_probe("b.MP4") == 1 && vid_probe("c.y4m") == 1 &&
          vid_probe("-") == 1, "vid_probe: video extensions and stdin are videos", " ");
    /* by content: an mkv under another name, and a text file */
    if (link(tpath("lim.mkv"), tpath("clip.dat")) != 0)
        CHECK(0, "link", "%s", strerror(errno));
    fp = fopen(tpath("text.dat"), "w");
    fputs("just some words, not a video\n", fp);
    fclose(fp);
    CHECK(vid_probe(tpath("clip.dat")) == 1, "vid_probe: Matroska found by content", " ");
    CHECK(vid_probe(tpath("text.dat")) == 0 && vid_probe(tpath("none.dat")) == 0,
          "vid_probe: text or missing file is not a video", " ");

    ok = vid_sequence_name("frames/e_%05d.png", 7, buf, sizeof buf) == 0 &&
         !strcmp(buf, "frames/e_00007.png");
    CHECK(ok, "vid_sequence_name: %05d", "%s", buf);
    ok = vid_sequence_name("100%%_%d.png", 12, buf, sizeof buf) == 0 &&
         !strcmp(buf, "100%_12.png");
    CHECK(ok, "vid_sequence_name: %% and %d", "%s", buf);
    CHECK(vid_sequence_name("plain.png", 1, buf, sizeof buf) == -1 &&
          vid_sequence_name("a_%s.png", 1, buf, sizeof buf) == -1 &&
          vid_sequence_name("a_%d_%d.png", 1, buf, sizeof buf) == -1 &&
          vid_sequence_name("a_%n%d.png", 1, buf, sizeof buf) == -1 &&
          vid_sequence_name("e_%05d.png", 1, buf, 8) == -1,
          "vid_sequence_name refuses no %d, %s, two %d, %n, and overflow", " ");
    CHECK(vid_is_sequence("x/%03d.png") == 1 && vid_is_sequence("x.png") == 0 &&
          vid_is_sequence("%%d.png") == 0, "vid_is_sequence", " ");
    CHECK(venc_format_ok("mkv") && venc_format_ok(".MP4") && venc_format_ok("y4m") &&
          !venc_format_ok("png") && !venc_format_ok(""), "venc_format_ok", " ");
}

int main(void)
{
    if (check_tmpdir(dir, sizeof dir, "gpuedge_vid")) {
        printf("not ok test_video_io: cannot make a temp directory\n");
        return 1;
    }
    test_luma_clips();
    test_start_frames();
    test_rgb_clips();
    test_conversion();
    test_mkv_roundtrip();
    test_mkv_tiny();
    test_mkv_crc();
    test_mkv_parallel();
    test_mkv_lane_rule();
    test_hfyu();
    test_put_coded();
    test_size_change();
    test_y4m();
    test_stdin();
    test_mp4();
    test_broken();
    test_probe_and_names();
    check_rm_dir(dir);
    CHECK_EXIT();
}
