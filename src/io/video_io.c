/*
 * video_io.c — video in and out through libavformat/libavcodec/libswscale
 * (FFmpeg 5.1 API: send/receive only, no deprecated calls).  See
 * video_io.h for the behaviour; the comments here say why.
 */
#include "video_io.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/cpu.h>
#include <libavutil/imgutils.h>
#include <libavutil/log.h>
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>

#include "hfyu_enc.h"
#include "hwdec.h"
#include "image_av.h"
#include "util.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define VID_NATIVE_BE 1
#else
#define VID_NATIVE_BE 0
#endif

/* The flags DESIGN.md §1.2 pins for the RGB path. */
#define VID_SWS_FLAGS (SWS_BITEXACT | SWS_ACCURATE_RND)
/* A decoder that fails this many times in a row without a frame is not
 * going to recover: the file fails instead of spinning. */
#define VID_MAX_ERRORS_IN_ROW 1000
/* swscale's vector code may store a little past a row's end. */
#define VID_SWS_SLACK 64
/* Custom AVIO buffer for direct (streamed) outputs. */
#define VENC_IO_BUF (64 * 1024)

// ---------------------------------------------------------------------------
// Shared helpers

static pthread_once_t log_once = PTHREAD_ONCE_INIT;

/* Readers whose demuxer/decoder messages are being counted (see log_cb). */
static pthread_mutex_t live_mu = PTHREAD_MUTEX_INITIALIZER;
static struct vid_reader *live_head;
static void count_log_error(void *opaque);

/* Many decoders conceal damage without telling the API (FFV1 in 5.1 logs
 * "slice CRC mismatch" and copies the slice from the previous frame), so
 * error-level lines logged by a reader's demuxer or decoder contexts
 * (frame-thread copies share the opaque pointer) are counted as corrupt
 * data.  Then libav's default callback applies the log level. */
static void log_cb(void *avcl, int level, const char *fmt, va_list vl)
{
    if (level <= AV_LOG_ERROR && avcl && fmt && *fmt &&
        fmt[strlen(fmt) - 1] == '\n') {
        const AVClass *cls = *(const AVClass *const *)avcl;
        if (cls == avcodec_get_class())
            count_log_error(((AVCodecContext *)avcl)->opaque);
        else if (cls == avformat_get_class())
            count_log_error(((AVFormatContext *)avcl)->opaque);
    }
    av_log_default_callback(avcl, level, fmt, vl);
}

/* libav would print multi-line diagnostics of its own; our one line names
 * the reason.  A level someone set before us is kept. */
static void log_init(void)
{
    if (av_log_get_level() == AV_LOG_INFO)
        av_log_set_level(ge_verbose ? AV_LOG_WARNING : AV_LOG_QUIET);
    av_log_set_callback(log_cb);
}

static const char *err_str(int err, char *buf, size_t n)
{
    if (av_strerror(err, buf, n) < 0)
        snprintf(buf, n, "error %d", err);
    return buf;
}

/* libav reads and writes poll this (DESIGN.md §6: interrupt_callback). */
static int interrupt_cb(void *opaque)
{
    (void)opaque;
    return sig_stop != 0;
}

static int valid_q(AVRational q)
{
    return q.num > 0 && q.den > 0;
}

static const char *ext_of(const char *s, char *buf, size_t n)
{
    if (s && *s == '.')
        s++;
    if (!s)
        s = "";
    snprintf(buf, n, "%s", s);
    for (char *p = buf; *p; p++)
        if (*p >= 'A' && *p <= 'Z')
            *p = (char)(*p - 'A' + 'a');
    return buf;
}

static int in_list(const char *e, const char *const *list)
{
    for (int i = 0; list[i]; i++)
        if (!strcmp(e, list[i]))
            return 1;
    return 0;
}

// ---------------------------------------------------------------------------
// Probe: video or image?

/* What stb reads (DESIGN.md §3): these stay images, GIF's first frame too. */
static const char *const image_exts[] = {
    "png", "jpg", "jpeg", "jpe", "bmp", "tga", "psd", "hdr", "pnm", "ppm",
    "pgm", "pic", "gif", NULL};
static const char *const video_exts[] = {
    "mkv", "mka", "webm", "mp4", "m4v", "mov", "qt", "avi", "flv", "f4v",
    "ts", "mts", "m2ts", "m2t", "mpg", "mpeg", "m2v", "m1v", "vob", "ogv",
    "ogg", "3gp", "3g2", "wmv", "asf", "y4m", "nut", "mxf", "dv", "h264",
    "264", "h265", "265", "hevc", "ivf", "rm", "rmvb", "gifv", "apng", NULL};

int vid_probe(const char *path)
{
    char ebuf[16];
    const char *e;
    unsigned char *buf;
    int fd, score = 0, ret = 0;
    ssize_t got = 0;
    const AVInputFormat *fmt;
    AVProbeData pd;
    enum { PROBE_BYTES = 4096 };

    if (!path)
        return 0;
    if (!strcmp(path, "-"))
        return 1;
    e = ge_ext(path, ebuf, sizeof ebuf);
    if (in_list(e, image_exts) || imgav_is_image_ext(e))
        return 0;
    if (in_list(e, video_exts))
        return 1;
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0; /* the image loader will say why it cannot be read */
    buf = calloc(1, PROBE_BYTES + AVPROBE_PADDING_SIZE);
    if (buf) {
        while (got < PROBE_BYTES) {
            ssize_t n = read(fd, buf + got, (size_t)(PROBE_BYTES - got));
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                break;
            got += n;
        }
    }
    close(fd);
    if (!buf || got <= 0) {
        free(buf);
        return 0;
    }
    memset(&pd, 0, sizeof pd);
    pd.filename = "";  /* contents only: the extension was looked at above */
    pd.buf = buf;
    pd.buf_size = (int)got;
    fmt = av_probe_input_format3(&pd, 1, &score);
    /* Below 26 libavformat itself would keep reading before trusting it. */
    if (fmt && score > AVPROBE_SCORE_MAX / 4 && !strstr(fmt->name, "_pipe") &&
        strcmp(fmt->name, "image2") && strcmp(fmt->name, "gif") &&
        strcmp(fmt->name, "tty"))
        ret = 1;
    free(buf);
    return ret;
}

// ---------------------------------------------------------------------------
// Frame conversion

void vid_pack_plane(uint8_t *dst, size_t dst_stride, const uint8_t *src,
                    ptrdiff_t src_linesize, size_t row_bytes, int rows)
{
    for (int y = 0; y < rows; y++)
        memcpy(dst + (size_t)y * dst_stride, src + (ptrdiff_t)y * src_linesize,
               row_bytes);
}

/* yuvj* and grey formats are full range when the frame does not say;
 * plain yuv* is limited (DESIGN.md §1.2, as FFmpeg assumes). */
static int default_full(enum AVPixelFormat fmt, const AVPixFmtDescriptor *d)
{
    return !strncmp(d->name, "yuvj", 4) || d->nb_components <= 2 ||
           fmt == AV_PIX_FMT_YUVJ411P;
}

static int range_is_full(enum AVPixelFormat fmt, enum AVColorRange range)
{
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(fmt);
    if (range == AVCOL_RANGE_JPEG)
        return 1;
    if (range == AVCOL_RANGE_MPEG)
        return 0;
    return d ? default_full(fmt, d) : 0;
}

int vid_luma_params(enum AVPixelFormat fmt, enum AVColorRange range, ge_frame *f)
{
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(fmt);
    int b, shift;

    if (!d || d->nb_components < 1 ||
        (d->flags & (AV_PIX_FMT_FLAG_RGB | AV_PIX_FMT_FLAG_PAL |
                     AV_PIX_FMT_FLAG_HWACCEL | AV_PIX_FMT_FLAG_BITSTREAM |
                     AV_PIX_FMT_FLAG_FLOAT | AV_PIX_FMT_FLAG_BAYER)))
        return -1;
    /* XYZ carries no RGB flag but is not Y'CbCr either. */
    if (fmt == AV_PIX_FMT_XYZ12LE || fmt == AV_PIX_FMT_XYZ12BE)
        return -1;
    b = d->comp[0].depth;
    shift = d->comp[0].shift;
    if (b < 8 || b > 16 || b + shift > 16)
        return -1;
    f->channels = 1;
    f->bytes_per_sample = b + shift > 8 ? 2 : 1;
    f->shift = shift;
    if (range_is_full(fmt, range)) {
        f->offset = 0;
        f->gain = (float)(255.0 / (double)((1 << b) - 1));
    } else {
        f->offset = 16 << (b - 8);
        f->gain = (float)(255.0 / (219.0 * (double)(1 << (b - 8))));
    }
    return 0;
}

/* The Y samples of any layout (packed YUYV, big-endian, Y+alpha...):
 * av_read_image_line2 undoes step, offset, shift and endianness. */
static void read_luma_generic(const AVFrame *fr, const AVPixFmtDescriptor *d,
                              int bps, uint8_t *dst, size_t stride)
{
    uint16_t tmp[256];
    for (int y = 0; y < fr->height; y++) {
        uint8_t *row = dst + (size_t)y * stride;
        /* 256 samples at a time through a 16-bit buffer, then stored at
         * the frame's sample size (rows need not be 2-byte aligned) */
        for (int x0 = 0; x0 < fr->width; x0 += 256) {
            int n = fr->width - x0 < 256 ? fr->width - x0 : 256;
            av_read_image_line2(tmp, (const uint8_t **)fr->data, fr->linesize,
                                d, x0, y, 0, n, 0, 2);
            if (bps == 2)
                memcpy(row + 2 * (size_t)x0, tmp, 2 * (size_t)n);
            else
                for (int x = 0; x < n; x++)
                    row[x0 + x] = (uint8_t)tmp[x];
        }
    }
}

void vid_conv_free(vid_conv *c)
{
    if (c) {
        sws_freeContext(c->sws);
        memset(c, 0, sizeof *c);
    }
}

static int to_rgb24(const AVFrame *fr, vid_conv *c, host_buf *buf, ge_frame *f,
                    const char **why)
{
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(fr->format);
    size_t stride = (size_t)fr->width * 3;
    int cs = fr->colorspace, full;
    uint8_t *dst[4] = {NULL};
    int dst_ls[4] = {0};

    /* The matrix only matters for Y'CbCr input; out-of-table values
     * (reserved, ICtCp...) fall back to swscale's default (BT.601). */
    if (cs < 0 || cs > AVCOL_SPC_BT2020_CL || cs == AVCOL_SPC_RGB)
        cs = SWS_CS_DEFAULT;
    full = range_is_full(fr->format, fr->color_range);
    if (stride > INT_MAX) {
        *why = "frame too wide";
        return -1;
    }
    if (!c->sws || c->fmt != fr->format || c->w != fr->width || c->h != fr->height) {
        sws_freeContext(c->sws);
        c->sws = sws_getContext(fr->width, fr->height, fr->format, fr->width,
                                fr->height, AV_PIX_FMT_RGB24, VID_SWS_FLAGS,
                                NULL, NULL, NULL);
        c->fmt = fr->format;
        c->w = fr->width;
        c->h = fr->height;
        c->cs = -1;
        if (!c->sws) {
            *why = "cannot convert this pixel format to RGB";
            return -1;
        }
    }
    /* Y'CbCr and grey sources: their matrix and range (grey has no matrix
     * but its range still scales Y). */
    if (d && !(d->flags & (AV_PIX_FMT_FLAG_RGB | AV_PIX_FMT_FLAG_PAL)) &&
        (c->cs != cs || c->full != full)) {
        /* Output full-range RGB (1), unit brightness/contrast/saturation. */
        sws_setColorspaceDetails(c->sws, sws_getCoefficients(cs), full,
                                 sws_getCoefficients(SWS_CS_DEFAULT), 1, 0,
                                 1 << 16, 1 << 16);
        c->cs = cs;
        c->full = full;
    }
    if (host_buf_reserve(buf, stride * (size_t)fr->height + VID_SWS_SLACK)) {
        *why = "out of memory";
        return -1;
    }
    dst[0] = buf->p;
    dst_ls[0] = (int)stride;
    if (sws_scale(c->sws, (const uint8_t *const *)fr->data, fr->linesize, 0,
                  fr->height, dst, dst_ls) != fr->height) {
        *why = "RGB conversion failed";
        return -1;
    }
    f->channels = 3;
    f->bytes_per_sample = 1;
    f->stride = stride;
    f->shift = 0;
    f->offset = 0;
    f->gain = 1.0f;
    return 0;
}

int vid_frame_to_ge(const AVFrame *fr, int force_rgb, vid_conv *conv,
                    host_buf *buf, ge_frame *f, const char **why)
{
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(fr->format);
    static const char *dummy;

    if (!why)
        why = &dummy;
    memset(f, 0, sizeof *f);
    if (!d || fr->width <= 0 || fr->height <= 0) {
        *why = "frame without a size or pixel format";
        return -1;
    }
    f->width = fr->width;
    f->height = fr->height;
    if (!force_rgb && vid_luma_params(fr->format, fr->color_range, f) == 0) {
        int bps = f->bytes_per_sample;
        size_t row = (size_t)fr->width * (size_t)bps;
        if (host_buf_reserve(buf, row * (size_t)fr->height)) {
            *why = "out of memory";
            return -1;
        }
        f->stride = row;
        if (d->comp[0].plane == 0 && d->comp[0].offset == 0 &&
            d->comp[0].step == bps &&
            (bps == 1 || !!(d->flags & AV_PIX_FMT_FLAG_BE) == VID_NATIVE_BE)) {
            /* The Y plane as stored: shift (P010) is left to the engines. */
            vid_pack_plane(buf->p, row, fr->data[0], fr->linesize[0], row,
                           fr->height);
        } else {
            read_luma_generic(fr, d, bps, buf->p, row);
            f->shift = 0; /* av_read_image_line2 already shifted */
        }
    } else if (to_rgb24(fr, conv, buf, f, why)) {
        return -1;
    }
    f->data = buf->p;
    return 0;
}

// ---------------------------------------------------------------------------
// Reader

struct vid_reader {
    struct vid_reader *live_next; /* registry for log_cb */
    long log_errors;              /* atomic: written by decoder threads */
    char *path;
    AVFormatContext *fmt;
    AVCodecContext *dec;
    AVPacket *pkt;
    AVFrame *frame;
    vid_conv conv;
    int vidx;
    AVRational tb;
    int64_t start_ts;  /* frames before it are decoded and dropped */
    long max_frames;
    int rgb;
    int opened;        /* vid_open succeeded (close notes errors only then) */
    int failed;        /* vid_next printed why the file failed */
    int draining, eof;
    long nout;
    long corrupt;
    int errors_in_row;
    int64_t last_pts, last_dur;
    /* NVDEC (hwdec.c): frames in AV_PIX_FMT_CUDA become device frames */
    hw_dec *hw;
    int hw_only;       /* the decoder has no software path (FFmpeg's av1) */
    int hw_lost;       /* ... and its hwaccel gave up: the file fails */
    int hw_soft_noted; /* "decoding in software" said once */
    int hw_noted;      /* "NVDEC decoding" said once */
    int hw_mark_set;   /* get_format just chose CUDA (in this decode call) */
    long hw_log_mark;  /* log_errors then */
    const AVCodec *sw_codec; /* the stream's software decoder */
    int threads;       /* decoder threads (0 = auto) */
    /* vid_open_mem: the caller's bytes, read through our AVIOContext */
    AVIOContext *avio;
    const uint8_t *mem;
    size_t mem_size, mem_pos;
};

static void count_log_error(void *opaque)
{
    pthread_mutex_lock(&live_mu);
    for (vid_reader *r = live_head; r; r = r->live_next)
        if (r == opaque) {
            __atomic_add_fetch(&r->log_errors, 1, __ATOMIC_RELAXED);
            break;
        }
    pthread_mutex_unlock(&live_mu);
}

static void live_add(vid_reader *r)
{
    pthread_mutex_lock(&live_mu);
    r->live_next = live_head;
    live_head = r;
    pthread_mutex_unlock(&live_mu);
}

static void live_remove(vid_reader *r)
{
    pthread_mutex_lock(&live_mu);
    for (vid_reader **p = &live_head; *p; p = &(*p)->live_next)
        if (*p == r) {
            *p = r->live_next;
            break;
        }
    pthread_mutex_unlock(&live_mu);
}

static char *input_url(const char *path)
{
    char *url;
    if (!strcmp(path, "-"))
        return strdup("pipe:0");
    if (strstr(path, "://"))
        return strdup(path);
    /* "file:" so that a name with a colon is never taken for a protocol. */
    if (asprintf(&url, "file:%s", path) < 0)
        return NULL;
    return url;
}

// In-memory input (vid_open_mem): read and seek callbacks over the bytes.

static int mem_read(void *opaque, uint8_t *buf, int size)
{
    vid_reader *r = opaque;
    size_t n = r->mem_size - r->mem_pos;
    if (n == 0)
        return AVERROR_EOF;
    if (size < 0)
        return AVERROR(EINVAL);
    if (n > (size_t)size)
        n = (size_t)size;
    memcpy(buf, r->mem + r->mem_pos, n);
    r->mem_pos += n;
    return (int)n;
}

static int64_t mem_seek(void *opaque, int64_t offset, int whence)
{
    vid_reader *r = opaque;
    int64_t base;
    switch (whence & ~AVSEEK_FORCE) {
    case AVSEEK_SIZE: return (int64_t)r->mem_size;
    case SEEK_SET: base = 0; break;
    case SEEK_CUR: base = (int64_t)r->mem_pos; break;
    case SEEK_END: base = (int64_t)r->mem_size; break;
    default: return AVERROR(EINVAL);
    }
    /* no overflow: both are within [INT64_MIN/2, INT64_MAX/2] or refused */
    if (offset > INT64_MAX / 2 || offset < INT64_MIN / 2 ||
        base + offset < 0 || (uint64_t)(base + offset) > r->mem_size)
        return AVERROR(EINVAL);
    r->mem_pos = (size_t)(base + offset);
    return (int64_t)r->mem_pos;
}

#define VID_MEM_IO_BUF (32 * 1024)

// NVDEC (--hwdec): which decoder, the device context, get_format.

/* libavcodec offers AV_PIX_FMT_CUDA when the CUDA hwaccel can take the
 * stream; when its init fails (a size, depth or profile NVDEC does not
 * support) or the stream changes to such, ff_get_format asks again
 * without it: then the software format, so decoding goes on in software
 * (DESIGN.md §1.9: both give the same frames for the exact codecs). */
static enum AVPixelFormat hw_get_format(AVCodecContext *s, const enum AVPixelFormat *fmts)
{
    vid_reader *r = s->opaque;
    for (const enum AVPixelFormat *p = fmts; *p != AV_PIX_FMT_NONE; p++)
        if (*p == AV_PIX_FMT_CUDA) {
            r->hw_log_mark = __atomic_load_n(&r->log_errors, __ATOMIC_RELAXED);
            r->hw_mark_set = 1;
            return *p;
        }
    /* Asked again within the same decode call: the hwaccel's init failed,
     * and the error lines it logged are not the stream's decoding errors. */
    if (r->hw_mark_set)
        __atomic_store_n(&r->log_errors, r->hw_log_mark, __ATOMIC_RELAXED);
    r->hw_mark_set = 0;
    if (r->hw_only) {
        r->hw_lost = 1;
        return AV_PIX_FMT_NONE;
    }
    if (ge_verbose && !r->hw_soft_noted)
        ge_note("%s: NVDEC does not take this stream (%s, %dx%d): decoding in software",
                r->path, avcodec_get_name(s->codec_id), s->coded_width, s->coded_height);
    r->hw_soft_noted = 1;
    return avcodec_default_get_format(s, fmts);
}

/* Makes and opens r->dec for codec, with the CUDA hwaccel when r->hw.
 * Returns 0 or an AVERROR (ENOMEM with r->dec NULL: no context). */
static int open_decoder(vid_reader *r, const AVCodec *codec)
{
    AVStream *st = r->fmt->streams[r->vidx];
    int ret;
    r->dec = avcodec_alloc_context3(codec);
    if (!r->dec)
        return AVERROR(ENOMEM);
    ret = avcodec_parameters_to_context(r->dec, st->codecpar);
    if (ret < 0)
        return ret;
    r->dec->pkt_timebase = st->time_base;
    r->dec->opaque = r; /* log_cb counts its errors */
    r->dec->thread_count = r->threads;
    r->dec->thread_type = FF_THREAD_FRAME | FF_THREAD_SLICE;
    if (r->hw) {
        r->dec->get_format = hw_get_format;
        if (!(r->dec->hw_device_ctx = av_buffer_ref(hw_device_ref(r->hw))))
            return AVERROR(ENOMEM);
    }
    return avcodec_open2(r->dec, codec, NULL);
}

/* NVDEC refused a stream whose hwaccel decoder has no software path
 * (FFmpeg's av1): the stream's software decoder (libdav1d) takes over,
 * with a notice under -v.  Returns open_decoder's status. */
static int hw_to_software(vid_reader *r)
{
    avcodec_free_context(&r->dec);
    hw_close(&r->hw);
    r->hw_only = r->hw_lost = 0;
    r->draining = r->eof = 0;
    r->errors_in_row = 0;
    r->corrupt = 0; /* the refused attempt's errors are not the file's */
    __atomic_store_n(&r->log_errors, 0, __ATOMIC_RELAXED);
    if (ge_verbose)
        ge_note("%s: NVDEC does not take this %s stream: decoding in software (%s)", r->path,
                avcodec_get_name(r->sw_codec->id), r->sw_codec->name);
    r->hw_soft_noted = 1;
    return open_decoder(r, r->sw_codec);
}

/* The same once packets were read: only before the first frame came out,
 * and only where the input can seek back to where decoding started.
 * 0 (decoding goes on), or -1 with the file failed (one line). */
static int hw_fallback(vid_reader *r)
{
    AVStream *st = r->fmt->streams[r->vidx];
    int64_t ts = r->start_ts != AV_NOPTS_VALUE ? r->start_ts
                 : st->start_time != AV_NOPTS_VALUE ? st->start_time : 0;
    char eb[AV_ERROR_MAX_STRING_SIZE];
    int ret;
    if (r->nout > 0 || avformat_seek_file(r->fmt, r->vidx, INT64_MIN, ts, ts, 0) < 0) {
        r->failed = 1;
        ge_err(r->path, "cannot decode video: NVDEC does not take this %s stream and its "
               "decoder has no software path (--hwdec=none decodes it in software)",
               avcodec_get_name(r->dec->codec_id));
        return -1;
    }
    ret = hw_to_software(r);
    if (ret < 0) {
        r->failed = 1;
        ge_err(r->path, "cannot open the %s decoder: %s", r->sw_codec->name,
               err_str(ret, eb, sizeof eb));
        return -1;
    }
    return 0;
}

/* Chooses NVDEC or software for this stream (before the decoder is made):
 * *codec may become FFmpeg's hwaccel-only decoder (AV1).  Returns 0, or
 * -1 (message printed) when --hwdec=nvdec cannot get a device. */
static int hw_choose(vid_reader *r, const vid_opts *o, const AVCodec **codec)
{
    const AVCodec *c;
    char why[256];
    const char *cname = avcodec_get_name((*codec)->id);
    if (o->rgb) {
        if (ge_verbose)
            ge_note("%s: --rgb converts on the host: decoding in software", r->path);
        return 0;
    }
    if (o->hwdec == VID_HWDEC_AUTO && !hw_codec_exact((*codec)->id)) {
        if (ge_verbose)
            ge_note("%s: %s decodes in software (NVDEC's pictures may differ; "
                    "--hwdec=nvdec to force)", r->path, cname);
        return 0;
    }
    c = hw_find_decoder(*codec, &r->hw_only);
    if (!c) {
        if (ge_verbose)
            ge_note("%s: no NVDEC decoder for %s: decoding in software", r->path, cname);
        return 0;
    }
    if (hw_open(NULL, o->device, &r->hw, why, sizeof why)) {
        r->hw_only = 0;
        if (o->hwdec == VID_HWDEC_NVDEC) {
            ge_err(r->path, "--hwdec=nvdec: %s", why);
            return -1;
        }
        if (ge_verbose)
            ge_note("%s: %s: decoding in software", r->path, why);
        return 0;
    }
    *codec = c;
    return 0;
}

/* vid_open and vid_open_mem: mem == NULL opens path (a file, "-" or URL);
 * else the n bytes at mem, with path only naming them in messages. */
static int open_reader(const char *path, const void *mem, size_t mem_n,
                       const vid_opts *o, vid_reader **out)
{
    vid_reader *r = NULL;
    const AVCodec *codec = NULL, *st_codec;
    AVStream *st;
    char *url = NULL;
    char eb[AV_ERROR_MAX_STRING_SIZE];
    int ret;

    pthread_once(&log_once, log_init);
    *out = NULL;
    r = calloc(1, sizeof *r);
    if (!r || !(r->path = strdup(path)) ||
        !(url = mem ? strdup(path) : input_url(path)) ||
        !(r->pkt = av_packet_alloc()) || !(r->frame = av_frame_alloc()) ||
        !(r->fmt = avformat_alloc_context())) {
        ge_err(path, "cannot open video: %s", strerror(ENOMEM));
        goto fail;
    }
    if (mem && mem_n == 0) {
        ge_err(path, "cannot open video: file is empty"); /* as vid_open says */
        goto fail;
    }
    if (mem) {
        /* Our AVIOContext: avformat_close_input leaves it to vid_close
         * (AVFMT_FLAG_CUSTOM_IO); the name only hints the demuxer. */
        unsigned char *iobuf = av_malloc(VID_MEM_IO_BUF);
        r->mem = mem;
        r->mem_size = mem_n;
        if (iobuf)
            r->avio = avio_alloc_context(iobuf, VID_MEM_IO_BUF, 0, r,
                                         mem_read, NULL, mem_seek);
        if (!r->avio) {
            av_free(iobuf);
            ge_err(path, "cannot open video: %s", strerror(ENOMEM));
            goto fail;
        }
        r->fmt->pb = r->avio;
    }
    r->fmt->interrupt_callback.callback = interrupt_cb;
    r->fmt->interrupt_callback.opaque = NULL;
    r->fmt->opaque = r; /* log_cb counts its errors */
    live_add(r);
    r->max_frames = o ? o->max_frames : -1;
    r->rgb = o ? o->rgb : 0;
    r->start_ts = AV_NOPTS_VALUE;
    r->last_pts = AV_NOPTS_VALUE;

    ret = avformat_open_input(&r->fmt, url, NULL, NULL);
    if (ret < 0) {
        /* avformat_open_input freed the context */
        struct stat sb;
        if (sig_stop)
            ;
        else if (ret == AVERROR_INVALIDDATA && !mem && strcmp(path, "-") &&
                 !strstr(path, "://") && stat(path, &sb) == 0 && S_ISREG(sb.st_mode) &&
                 sb.st_size == 0)
            ge_err(path, "cannot open video: file is empty"); /* as images say */
        else
            ge_err(path, "cannot open video: %s", err_str(ret, eb, sizeof eb));
        goto fail;
    }
    ret = avformat_find_stream_info(r->fmt, NULL);
    if (ret < 0) {
        if (!sig_stop)
            ge_err(path, "cannot read video stream information: %s",
                   err_str(ret, eb, sizeof eb));
        goto fail;
    }
    ret = av_find_best_stream(r->fmt, AVMEDIA_TYPE_VIDEO, -1, -1, &codec, 0);
    if (ret == AVERROR_STREAM_NOT_FOUND) {
        ge_err(path, "no video stream in this file");
        goto fail;
    }
    if (ret < 0 || !codec) {
        int i = ret >= 0 ? ret : av_find_best_stream(r->fmt, AVMEDIA_TYPE_VIDEO, -1, -1, NULL, 0);
        const char *name = i >= 0 ? avcodec_get_name(r->fmt->streams[i]->codecpar->codec_id) : "?";
        ge_err(path, "cannot decode video: no decoder for codec '%s'", name);
        goto fail;
    }
    r->vidx = ret;
    /* Audio and everything else is dropped: let the demuxer skip it. */
    for (unsigned i = 0; i < r->fmt->nb_streams; i++)
        if ((int)i != r->vidx)
            r->fmt->streams[i]->discard = AVDISCARD_ALL;
    st = r->fmt->streams[r->vidx];
    r->tb = st->time_base;

    st_codec = codec;
    if (o && o->hwdec != VID_HWDEC_NONE && hw_choose(r, o, &codec))
        goto fail;
    r->sw_codec = st_codec;
    r->threads = o && o->threads > 0 ? o->threads : 0;
    ret = open_decoder(r, codec);
    if (ret < 0 && r->hw_lost) {
        /* FFmpeg's av1 decoder met NVDEC's refusal in its own init */
        codec = r->sw_codec;
        ret = hw_to_software(r);
    }
    if (ret == AVERROR(ENOMEM) && !r->dec) {
        ge_err(path, "cannot open video: %s", strerror(ENOMEM));
        goto fail;
    }
    if (ret < 0) {
        ge_err(path, "cannot open the %s decoder: %s", codec->name,
               err_str(ret, eb, sizeof eb));
        goto fail;
    }

    if (o && o->start > 0) {
        /* --start counts from the stream's first timestamp, as ffmpeg -ss
         * does; seek to the keyframe before it, then drop frames. */
        int64_t s0 = st->start_time != AV_NOPTS_VALUE ? st->start_time : 0;
        int64_t us = llrint(o->start * AV_TIME_BASE);
        r->start_ts = s0 + av_rescale_q(us, AV_TIME_BASE_Q, st->time_base);
        /* a failed seek (a pipe) just means decoding from the start */
        avformat_seek_file(r->fmt, r->vidx, INT64_MIN, r->start_ts,
                           r->start_ts, 0);
    }
    free(url);
    r->opened = 1;
    *out = r;
    return 0;

fail:
    free(url);
    vid_close(&r);
    return -1;
}

int vid_open(const char *path, const vid_opts *o, vid_reader **out)
{
    return open_reader(path, NULL, 0, o, out);
}

int vid_open_mem(const void *buf, size_t n, const char *name,
                 const vid_opts *o, vid_reader **out)
{
    static const uint8_t none[1];
    return open_reader(name ? name : "(memory)", buf ? buf : none,
                       buf ? n : 0, o, out);
}

static void fill_frame(vid_reader *r, src_frame *fr, const ge_frame *g, double t0)
{
    int64_t ts = r->frame->best_effort_timestamp;
    fr->f = *g;
    fr->index = r->nout++;
    fr->pts = ts == AV_NOPTS_VALUE ? -1.0 : (double)ts * av_q2d(r->tb);
    r->last_pts = ts;
    r->last_dur = r->frame->pkt_duration > 0 ? r->frame->pkt_duration : 0;
    fr->decode_ms = (ge_now() - t0) * 1000.0;
}

/* A read error other than the end: errno-style ones (EIO from the disk)
 * fail the file; malformed data just ends it. */
static int is_io_error(int err)
{
    int e = AVUNERROR(err);
    return e > 0 && e < 4096 && e != EAGAIN && err != AVERROR_EOF;
}

/* A send or receive error: out of memory, or more than
 * VID_MAX_ERRORS_IN_ROW failures in a row, ends the video (-1, reported);
 * anything else is a bad packet or frame, counted and skipped (0). */
static int decode_error(vid_reader *r, int ret)
{
    char eb[AV_ERROR_MAX_STRING_SIZE];
    if (ret == AVERROR(ENOMEM)) {
        r->failed = 1;
        ge_err(r->path, "cannot decode video: %s", strerror(ENOMEM));
        return -1;
    }
    r->corrupt++;
    if (++r->errors_in_row > VID_MAX_ERRORS_IN_ROW) {
        r->failed = 1;
        ge_err(r->path, "cannot decode video: %s", err_str(ret, eb, sizeof eb));
        return -1;
    }
    return 0;
}

int vid_next(vid_reader *r, src_frame *fr, host_buf *buf)
{
    double t0 = ge_now();
    char eb[AV_ERROR_MAX_STRING_SIZE];
    int ret;

    src_frame_host(fr);
    for (;;) {
        if (r->max_frames >= 0 && r->nout >= r->max_frames)
            return 0;
        if (sig_stop)
            return -1;
        if (r->eof)
            return 0;

        r->hw_mark_set = 0; /* get_format's retry happens within one call */
        ret = avcodec_receive_frame(r->dec, r->frame);
        if (ret >= 0) {
            int64_t ts = r->frame->best_effort_timestamp;
            ge_frame g;
            const char *why = NULL;
            r->errors_in_row = 0;
            if ((r->frame->flags & AV_FRAME_FLAG_CORRUPT) ||
                r->frame->decode_error_flags)
                r->corrupt++;
            if (r->start_ts != AV_NOPTS_VALUE && ts != AV_NOPTS_VALUE &&
                ts < r->start_ts) {
                av_frame_unref(r->frame);
                continue;
            }
            if (r->frame->format == AV_PIX_FMT_CUDA) {
                /* NVDEC: the luma plane stays in the decoder's surface */
                if (r->hw && hw_describe(r->frame, r->dec->sw_pix_fmt, &g, &why) == 0) {
                    fill_frame(r, fr, &g, t0);
                    if (hw_take(r->hw, r->frame, fr, &why) == 0) {
                        if (ge_verbose && !r->hw_noted)
                            ge_note("%s: NVDEC decoding (%s, %s, %dx%d), frames kept on the GPU",
                                    r->path, r->dec->codec->name,
                                    av_get_pix_fmt_name(r->dec->sw_pix_fmt) ?
                                    av_get_pix_fmt_name(r->dec->sw_pix_fmt) : "?",
                                    fr->f.width, fr->f.height);
                        r->hw_noted = 1;
                        return 1;
                    }
                    r->nout--;
                }
                if (!why)
                    why = "a CUDA frame without NVDEC";
                r->failed = 1;
                ge_err(r->path, "cannot use NVDEC frame %ld (%dx%d): %s", r->nout,
                       r->frame->width, r->frame->height, why);
                av_frame_unref(r->frame);
                return -1;
            }
            if (vid_frame_to_ge(r->frame, r->rgb, &r->conv, buf, &g, &why)) {
                r->failed = 1;
                ge_err(r->path, "cannot convert frame %ld (%s, %dx%d): %s",
                       r->nout, av_get_pix_fmt_name(r->frame->format) ?
                       av_get_pix_fmt_name(r->frame->format) : "?",
                       r->frame->width, r->frame->height, why);
                av_frame_unref(r->frame);
                return -1;
            }
            fill_frame(r, fr, &g, t0);
            av_frame_unref(r->frame);
            return 1;
        }
        if (ret == AVERROR_EOF) {
            r->eof = 1;
            return 0;
        }
        if (ret != AVERROR(EAGAIN)) {
            if (r->hw_lost) { /* FFmpeg's av1 decoder without NVDEC */
                if (hw_fallback(r))
                    return -1;
                continue;
            }
            /* a frame that failed to decode: counted, decoding goes on */
            if (decode_error(r, ret))
                return -1;
            continue;
        }
        if (r->draining) { /* EAGAIN while draining: the decoder is done */
            r->eof = 1;
            return 0;
        }

        ret = av_read_frame(r->fmt, r->pkt);
        if (ret < 0) {
            if (sig_stop || ret == AVERROR_EXIT)
                return -1;
            if (ret != AVERROR_EOF) {
                if (is_io_error(ret)) {
                    r->failed = 1;
                    ge_err(r->path, "cannot read video: %s",
                           err_str(ret, eb, sizeof eb));
                    return -1;
                }
                r->corrupt++; /* malformed tail: what decoded so far stands */
                if (ge_verbose)
                    ge_note("%s: video data ends early: %s", r->path,
                            err_str(ret, eb, sizeof eb));
            }
            /* drain: a NULL packet, then receive until AVERROR_EOF */
            avcodec_send_packet(r->dec, NULL);
            r->draining = 1;
            continue;
        }
        if (r->pkt->stream_index != r->vidx) {
            av_packet_unref(r->pkt);
            continue;
        }
        if (r->pkt->flags & AV_PKT_FLAG_CORRUPT)
            r->corrupt++; /* still decoded: the decoder may conceal it */
        r->hw_mark_set = 0;
        ret = avcodec_send_packet(r->dec, r->pkt);
        av_packet_unref(r->pkt);
        /* Every frame was received before this send, so EAGAIN cannot
         * happen; any other error is a bad packet, skipped. */
        if (ret < 0 && ret != AVERROR(EAGAIN) && r->hw_lost) {
            if (hw_fallback(r))
                return -1;
            continue;
        }
        if (ret < 0 && ret != AVERROR(EAGAIN) && decode_error(r, ret))
            return -1;
    }
}

void vid_close(vid_reader **pr)
{
    vid_reader *r;
    if (!pr || !*pr)
        return;
    r = *pr;
    *pr = NULL;
    avcodec_free_context(&r->dec); /* joins the decoder's threads */
    hw_close(&r->hw); /* frames handed out keep their own references */
    avformat_close_input(&r->fmt);
    if (r->avio) { /* ours (vid_open_mem): the buffer may have been replaced */
        av_freep(&r->avio->buffer);
        avio_context_free(&r->avio);
    }
    live_remove(r);
    /* Only for a file that yielded frames: one that failed has said so in
     * its one error line (the caller's "no video frames decoded" tells
     * the count itself). */
    if (r->opened && !r->failed && r->nout > 0 && vid_corrupt_count(r) > 0)
        ge_note("%s: %ld decoding error%s (corrupt data skipped or concealed)",
                r->path, vid_corrupt_count(r), vid_corrupt_count(r) == 1 ? "" : "s");
    av_packet_free(&r->pkt);
    av_frame_free(&r->frame);
    vid_conv_free(&r->conv);
    free(r->path);
    free(r);
}

void vid_get_info(const vid_reader *r, vid_info *info)
{
    AVStream *st = r->fmt->streams[r->vidx];
    AVRational fr = av_guess_frame_rate(r->fmt, st, NULL);
    memset(info, 0, sizeof *info);
    info->width = st->codecpar->width;
    info->height = st->codecpar->height;
    info->time_base = st->time_base;
    info->frame_rate = valid_q(fr) ? fr : (AVRational){0, 1};
    if (st->duration != AV_NOPTS_VALUE && st->duration > 0)
        info->duration = (double)st->duration * av_q2d(st->time_base);
    else if (r->fmt->duration != AV_NOPTS_VALUE && r->fmt->duration > 0)
        info->duration = (double)r->fmt->duration / AV_TIME_BASE;
    else
        info->duration = -1;
    info->nb_frames = st->nb_frames > 0 ? st->nb_frames : 0;
    info->codec = r->dec && r->dec->codec ? r->dec->codec->name : "?";
}

int vid_hwdec_active(const vid_reader *r)
{
    return r && r->hw != NULL;
}

long vid_corrupt_count(const vid_reader *r)
{
    if (!r)
        return 0;
    return r->corrupt + __atomic_load_n(&r->log_errors, __ATOMIC_RELAXED);
}

void vid_last_ts(const vid_reader *r, int64_t *pts, int64_t *duration)
{
    if (pts)
        *pts = r->last_pts;
    if (duration)
        *duration = r->last_dur;
}

int64_t vid_seconds_to_ts(double seconds, AVRational tb)
{
    if (seconds == -1.0 || !valid_q(tb) || !isfinite(seconds))
        return AV_NOPTS_VALUE;
    /* seconds was ts * num / den in double: ts is the nearest integer */
    return llrint(seconds * (double)tb.den / (double)tb.num);
}

// ---------------------------------------------------------------------------
// Image-sequence names

int vid_is_sequence(const char *pattern)
{
    char buf[4096];
    return pattern && av_get_frame_filename2(buf, sizeof buf, pattern, 1, 0) == 0;
}

int vid_sequence_name(const char *pattern, long index, char *buf, size_t size)
{
    size_t need;
    char *tmp;
    int ret;

    if (buf && size)
        buf[0] = '\0';
    if (!pattern || !buf || size < 2 || index < 0 || index > INT_MAX)
        return -1;
    /* av_get_frame_filename2 cuts a name that does not fit and still says
     * 0: expand into room for the longest result (a %d is at most 19
     * digits there), then check the length.  flags 0: exactly one %d; the
     * pattern never goes through printf. */
    need = strlen(pattern) + 32;
    if (need > INT_MAX || !(tmp = malloc(need)))
        return -1;
    ret = av_get_frame_filename2(tmp, (int)need, pattern, (int)index, 0);
    if (ret == 0 && strlen(tmp) < size)
        memcpy(buf, tmp, strlen(tmp) + 1);
    else
        ret = -1;
    free(tmp);
    return ret < 0 ? -1 : 0;
}

// ---------------------------------------------------------------------------
// Writer

enum { VENC_MKV, VENC_MP4, VENC_Y4M };

/* What each container holds (the muxers' codec tags: Matroska takes
 * FFVHuff and MagicYUV through their VfW FourCCs, raw video as
 * V_UNCOMPRESSED; MP4 takes H.264 of these; Y4M only raw frames).
 * lanes: every frame stands alone (intra-only, no state carried from frame
 * to frame, the same extradata in every encoder), so several encoders may
 * code successive frames at once and write the bytes one would. */
enum { VC_FFV1, VC_FFVHUFF, VC_MAGICYUV, VC_RAW, VC_X264, VC_WRAPPED };
typedef struct venc_codec {
    const char *name;  /* --codec */
    const char *lib;   /* libavcodec's encoder */
    int id;            /* VC_* */
    unsigned in;       /* containers: 1 << VENC_* */
    int lanes;
} venc_codec;


/* FFmpeg 5.1's FFV1 encoder (versions 1..3) reserves its worst-case packet,
 * 148 bytes a pixel (+ 16 KiB), zeroed, at its first frame and keeps it
 * until it is closed: 1.2 GB for a 4K frame, in every encoder, and about
 * 0.6 s of page faults and zeroing (measured on the 16-core H200 host; 0.8 s
 * for two to four encoders at once).  That, not the frames in flight, is
 * what each frame-parallel encoder costs. */
#define FFV1_PKT_BYTES_PER_PX 148
/* Frame-parallel FFV1: about this many slice threads an encoder (the rest
 * of --threads become more encoders, at least two from 2 threads on).  On
 * the H200 host, 4K, 16 threads, per frame once started: 1 encoder 10.5 ms,
 * 2 x 8 threads 7.3 ms, 4 x 4 6.0 ms, 8 x 2 7.6 ms. */
#define VENC_LANE_THREADS 4
/* FFVHuff and MagicYUV, a lane: two frames in flight and their packets
 * (at most about 2 bytes a pixel are written of the worst-case ones). */
#define VENC_INTRA_BYTES_PER_PX 8
#define VENC_MAX_LANES 16
/* From this many threads FFVHuff/MagicYUV get fewer lanes than threads,
 * how many depending on the decoder (venc_lanes). */
#define VENC_SHARE_FROM 8
/* Default memory for the encoders' packet buffers together (--mem-limit,
 * when given, replaces it): at most this, and at most 1/VENC_RAM_SHARE of
 * physical memory; one encoder is always allowed.  3 GiB keeps 4K at two
 * encoders, whose start (the zeroing above) costs least for short clips. */
#define VENC_MEM_DEFAULT (3ull << 30)
#define VENC_RAM_SHARE 8

typedef struct ts_entry {
    int64_t pts, dur;
} ts_entry;

/* Frame-parallel encoders (.mkv: FFV1, FFVHuff, MagicYUV).  Every frame is
 * coded from itself alone (FFV1: gop_size 1, its range coder states reset
 * for each), so `nlanes` encoders opened with the same settings (same
 * extradata: checked) can each code a different frame at once, and muxing
 * their packets in frame order writes the very bytes one encoder would.
 * Frames wait in a ring of `nslots`; the thread calling venc_put fills
 * slots (a copy of the edge map) and goes back to its caller.  Lanes take
 * slots in order, any lane any slot; the lane that finishes a frame muxes
 * it, and every coded frame after it, when no other lane is muxing (the
 * `muxing` token, under mu): so the muxer (Matroska's copies and CRC-32s,
 * the writes) runs beside the caller and the other lanes, one frame at a
 * time and in order, and the caller waits only when all slots are in
 * flight.  Nothing but the token holder touches the muxer or the so_file
 * until the lanes have ended. */
typedef struct venc_slot {
    AVFrame *frame;
    AVPacket *pkt;
    int64_t dur; /* the frame's duration (the packet's: intra, one a frame) */
    int err;     /* 0, or the AVERROR the lane failed with */
    int done;    /* coded (or failed): the token holder may mux it */
} venc_slot;

struct venc_par;

typedef struct venc_lane {
    struct venc_par *par;
    AVCodecContext *enc;
    pthread_t th;
    int running;
    uint8_t *buf;   /* hfyu_packet's worst-case buffer, kept */
    size_t buf_cap;
} venc_lane;

typedef struct venc_par {
    pthread_mutex_t mu;
    pthread_cond_t work;  /* a slot was queued, or quit was set */
    pthread_cond_t freed; /* a slot was muxed (free again), or muxing failed */
    struct venc_writer *w;
    venc_lane *lanes;
    venc_slot *slots;
    int nlanes, nslots;
    long put, take; /* frames queued, frames taken by lanes (under mu) */
    long muxed;     /* frames muxed (under mu) */
    int muxing;     /* a lane holds the muxing token (under mu) */
    int quit;       /* no more frames: lanes exit once nothing is queued */
    int stop;       /* abandoning or failed: lanes skip what is queued */
    /* GPUEDGE_TRACE=venc: seconds the caller spent copying and waiting
     * for a free slot, and the lanes muxing (under mu) */
    double t_copy, t_wait, t_mux, t_code;
} venc_par;

struct venc_writer {
    so_file *out;
    int kind;
    const venc_codec *vc;
    enum AVPixelFormat pixfmt;
    int slices;         /* FFV1's count (0: version 1) */
    AVFormatContext *oc;
    AVCodecContext *enc; /* the encoder (lane 0 when frame-parallel) */
    AVStream *st;
    AVFrame *frame;
    AVPacket *pkt;
    AVBufferPool *pool; /* mkv: gray8 picture buffers, linesize a row */
    int linesize;
    venc_par *par;      /* mkv, frame-parallel; NULL: coded in venc_put */
    hfyu_tab *hfyu;     /* FFVHuff coded by hfyu_enc.c in the lanes (the
                           tables of enc's extradata); NULL: libavcodec */
    int custom_io;     /* pb is ours (over so_write), not avio_open's */
    int w, h;          /* the edge maps' size */
    int cw, ch;        /* the coded size (padded for 4:2:0) */
    AVRational tb;     /* the caller's pts unit == encoder time base */
    AVRational fps;
    int64_t last_pts, last_dur;
    long nput;
    int size_noted;
    /* set once (venc_error); the lanes' muxer sets it too, so atomic */
    _Atomic int failed;
    ts_entry *ts;      /* durations of frames inside the encoder, by pts */
    size_t nts, cap_ts;
};

int venc_format_ok(const char *ext)
{
    char b[16];
    ext_of(ext, b, sizeof b);
    return !strcmp(b, "mkv") || !strcmp(b, "mp4") || !strcmp(b, "y4m");
}

static const venc_codec venc_codecs[] = {
    /* the first of a container is its default (BENCHMARKS.md, "Video
     * encoders (issue 11)"): FFVHuff codes an edge map in the least CPU of
     * the lossless codecs, frames stand alone (lanes), and its files say
     * full range; MagicYUV's are smaller on sparse edges but FFmpeg 5.1
     * decodes its grey as limited range (tv), so a reader would stretch
     * the edge values */
    {"ffvhuff", "ffvhuff", VC_FFVHUFF, 1u << VENC_MKV, 1},
    {"magicyuv", "magicyuv", VC_MAGICYUV, 1u << VENC_MKV, 1},
    {"ffv1", "ffv1", VC_FFV1, 1u << VENC_MKV, 1},
    {"rawvideo", "rawvideo", VC_RAW, 1u << VENC_MKV, 0},
    {"libx264", "libx264", VC_X264, 1u << VENC_MKV | 1u << VENC_MP4, 0},
    {"h264", "libx264", VC_X264, 1u << VENC_MKV | 1u << VENC_MP4, 0},
    /* y4m's raw frames go through wrapped_avframe (what the muxer takes) */
    {"rawvideo", "wrapped_avframe", VC_WRAPPED, 1u << VENC_Y4M, 0},
};

static const char *const x264_presets[] = {
    "ultrafast", "superfast", "veryfast", "faster", "fast", "medium",
    "slow", "slower", "veryslow", "placebo", NULL};

static int venc_kind(const char *ext)
{
    char b[16];
    ext_of(ext, b, sizeof b);
    return !strcmp(b, "mkv") ? VENC_MKV : !strcmp(b, "mp4") ? VENC_MP4
           : !strcmp(b, "y4m") ? VENC_Y4M : -1;
}

/* The entry for `name` (NULL: the default) in container `kind`, or NULL. */
static const venc_codec *codec_find(int kind, const char *name)
{
    size_t n = sizeof venc_codecs / sizeof venc_codecs[0];
    for (size_t i = 0; kind >= 0 && i < n; i++)
        if ((venc_codecs[i].in & (1u << kind)) &&
            (!name || !strcasecmp(name, venc_codecs[i].name)))
            return &venc_codecs[i];
    return NULL;
}

const char *venc_default_codec(const char *ext)
{
    const venc_codec *c = codec_find(venc_kind(ext), NULL);
    return c ? c->name : NULL;
}

int venc_codec_check(const char *ext, const char *codec, const char *preset,
                     const char *crf, char *why, size_t size)
{
    int kind = venc_kind(ext);
    const venc_codec *c = codec_find(kind, codec);
    char b[16];
    const char *e = ext_of(ext, b, sizeof b);

    if (kind < 0) {
        snprintf(why, size, "--codec, --preset and --crf apply to video outputs "
                 "(.mkv, .mp4, .y4m), not '.%s'", e);
        return -1;
    }
    if (!c) {
        snprintf(why, size, "--codec '%s': .%s holds %s", codec, e,
                 kind == VENC_MKV ? "ffvhuff, magicyuv, ffv1, rawvideo or libx264"
                 : kind == VENC_MP4 ? "libx264 only" : "rawvideo only");
        return -1;
    }
    if ((preset || crf) && c->id != VC_X264) {
        snprintf(why, size, "--%s applies to libx264 (.mp4, or .mkv with --codec "
                 "libx264), not %s", preset ? "preset" : "crf", c->name);
        return -1;
    }
    if (preset) {
        int i;
        for (i = 0; x264_presets[i] && strcmp(preset, x264_presets[i]); i++)
            ;
        if (!x264_presets[i]) {
            snprintf(why, size, "--preset '%s': expected ultrafast, superfast, veryfast, "
                     "faster, fast, medium, slow, slower, veryslow or placebo", preset);
            return -1;
        }
    }
    if (crf) {
        char *end;
        double v;
        errno = 0;
        v = strtod(crf, &end);
        /* x264's range for 8-bit video (0 is lossless) */
        if (errno || end == crf || *end || !(v >= 0 && v <= 51)) {
            snprintf(why, size, "--crf '%s': expected a number from 0 to 51", crf);
            return -1;
        }
    }
    return 0;
}

/* Marks the output failed: an errno-style error is a write error that
 * safeout reports; anything else gets our own line. */
static void venc_error(venc_writer *w, const char *what, int err)
{
    char eb[AV_ERROR_MAX_STRING_SIZE];
    int e = AVUNERROR(err);
    if (atomic_exchange(&w->failed, 1))
        return; /* one message a writer */
    if (sig_stop && (err == AVERROR_EXIT || e == EINTR))
        return;
    if (e > 0 && e < 4096 && e != ENOMEM && e != EINVAL && e != ENOSYS) {
        so_fail(w->out, e); /* so_abort prints "cannot write: ..." */
        return;
    }
    ge_err(so_name(w->out), "cannot encode video: %s: %s", what,
           err_str(err, eb, sizeof eb));
}

static int io_write(void *opaque, uint8_t *buf, int size)
{
    if (size > 0 && so_write(opaque, buf, (size_t)size) < 0)
        return AVERROR(EIO);
    return size > 0 ? size : 0;
}

/* FFV1 version 3 slice grid.  ffv1enc.c takes, for a requested count,
 * the first nv x nh (nv rows, nv <= nh < 2 nv, nh <= W, nv <= H, bounded
 * slice area) in this order.  The slice header codes positions as
 * (x + 1) * nh / W, which only round-trips when nh < W and nv < H
 * (FFmpeg 5.1 writes 2x2 with 4 slices, or any 1-pixel-high frame, and
 * decodes zeros), so such grids are skipped here.  The smallest count
 * >= want (at least 4, to scale), or 0 when none fits: then version 1. */
static int ffv1_slices(int w, int h, int want)
{
    if (want < 4)
        want = 4;
    if (want > 64)
        want = 64;
    for (int s = want; s <= 256; s++)
        for (int nv = 1; nv < 32; nv++)
            for (int nh = nv; nh < 2 * nv; nh++) {
                int64_t maxw = (w + nh - 1) / nh, maxh = (h + nv - 1) / nv;
                if (nh > w || nv > h || maxw * maxh * 9 > (8 << 24))
                    continue;
                if (nh * nv != s)
                    continue;
                if (nh < w && nv < h)
                    return s;
                /* the encoder would take this grid: try the next count */
                nv = 32;
                break;
            }
    return 0;
}

static int cpu_threads(int t)
{
    int n = t > 0 ? t : av_cpu_count();
    return n < 1 ? 1 : n > 64 ? 64 : n;
}

/* How many encoders of an intra codec code frames at once for `threads`
 * threads, within the memory budget (VENC_MEM_DEFAULT).  FFV1: see
 * VENC_LANE_THREADS; FFVHuff and MagicYUV have no slice threads: one
 * encoder a thread. */
static int venc_lanes(const venc_writer *wr, int threads, const venc_opts *o)
{
    int ffv1 = wr->vc->id == VC_FFV1;
    /* FFV1: the packet buffer, the frames in flight (two a lane) and the
     * one the encoder holds; the others: two frames and two packets */
    double per = (double)wr->cw * wr->ch *
                 (ffv1 ? FFV1_PKT_BYTES_PER_PX + 3 : VENC_INTRA_BYTES_PER_PX) + 16384;
    double budget;
    int n;

    if (o && o->lanes > 0) /* asked for (tests, benchmarks) */
        return o->lanes < VENC_MAX_LANES ? o->lanes : VENC_MAX_LANES;
    /* the same, from outside (measuring the lanes/decoders split) */
    if ((n = (int)ge_env_long("GPUEDGE_ENC_LANES", 0)) > 0)
        return n < VENC_MAX_LANES ? n : VENC_MAX_LANES;
    if (threads < 2)
        return 1;
    /* FFVHuff/MagicYUV: one lane a thread, but from 8 threads on half of
     * them when software decodes, three quarters when NVDEC does.  On the
     * H200 (16 threads; BENCHMARKS.md "NVDEC in segments", "The .mkv
     * bound"): with software decoding 8 lanes beat 16 in each of 8 runs
     * (1080p .mkv 286 vs 245 fps, 4K 96.5 vs 83.8) and 12 (408 vs 434 on
     * 1590 frames of 1080p); with NVDEC, once the lanes mux (2026-12-02),
     * 12 beat 8 (1080p 565-586 vs 462-481, 4K 162 vs 143) and 16 (565). */
    n = ffv1 ? (threads + VENC_LANE_THREADS - 1) / VENC_LANE_THREADS
        : threads < VENC_SHARE_FROM ? threads
        : o && o->gpu_frames ? threads * 3 / 4 : threads / 2;
    if (n < 2)
        n = 2;
    if (n > VENC_MAX_LANES)
        n = VENC_MAX_LANES;
    if (o && o->mem_limit > 0) {
        budget = (double)o->mem_limit;
    } else {
        long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
        budget = (double)VENC_MEM_DEFAULT;
        if (pages > 0 && psz > 0 && (double)pages * psz / VENC_RAM_SHARE < budget)
            budget = (double)pages * psz / VENC_RAM_SHARE;
    }
    while (n > 1 && n * per > budget)
        n--;
    return n;
}

/* Allocates and opens one encoder with the writer's settings.  Called once,
 * or once a lane for frame-parallel intra codecs (the same settings but for
 * FFV1's slice threads, which do not change the bytes).  threads: the
 * encoder's threads.  Returns 0 or an AVERROR. */
static int enc_open(venc_writer *wr, const AVCodec *codec, int threads,
                    const venc_opts *o, AVCodecContext **out)
{
    enum AVPixelFormat pixfmt = wr->pixfmt;
    int slices = wr->slices;
    AVCodecContext *enc = avcodec_alloc_context3(codec);
    AVDictionary *copts = NULL;
    int ret;

    *out = NULL;
    if (!enc)
        return AVERROR(ENOMEM);
    enc->width = wr->cw;
    enc->height = wr->ch;
    enc->pix_fmt = pixfmt;
    enc->time_base = wr->tb;
    enc->framerate = wr->fps;
    enc->sample_aspect_ratio = (AVRational){1, 1};
    /* Edge values are 0..255 as they are: full range, so players show
     * 255 as white instead of clipping 235..255. */
    enc->color_range = AVCOL_RANGE_JPEG;
    enc->flags |= AV_CODEC_FLAG_BITEXACT; /* no encoder version strings */
    if (wr->oc->oformat->flags & AVFMT_GLOBALHEADER)
        enc->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;

    if (wr->vc->id == VC_FFV1) {
        enc->gop_size = 1;  /* every frame self-contained */
        if (slices > 0) {
            enc->level = 3; /* FFV1 version 3: slices, CRCs */
            enc->slices = slices;
            enc->thread_count = threads;
            enc->thread_type = FF_THREAD_SLICE;
            av_dict_set(&copts, "slicecrc", "1", 0);
        } else {
            enc->level = 1; /* tiny frames: one slice, no header grid */
        }
    } else if (wr->vc->id == VC_FFVHUFF || wr->vc->id == VC_MAGICYUV) {
        /* One thread: libavcodec's frame threads would delay packets (the
         * lanes expect each frame's packet at once) and the lanes do the
         * same work.  FFVHuff's median prediction and MagicYUV's median:
         * the smallest files of their predictors at about the same speed
         * (BENCHMARKS.md); FFVHuff's context 0 keeps its fixed tables in
         * the extradata, so every frame stands alone. */
        enc->thread_count = 1;
        av_dict_set(&copts, "pred", "median", 0);
        if (wr->vc->id == VC_FFVHUFF)
            av_dict_set(&copts, "context", "0", 0);
    } else if (wr->vc->id == VC_X264) {
        /* Streamed (fragmented) MP4 has no edit list to hide B-frame delay:
         * without B-frames every pts stays where it was given. */
        if (wr->kind == VENC_MP4 && !strcmp(so_path(wr->out), so_name(wr->out)))
            enc->max_b_frames = 0;
        av_dict_set(&copts, "crf", o && o->crf ? o->crf : VENC_DEFAULT_CRF, 0);
        av_dict_set(&copts, "preset", o && o->preset ? o->preset : VENC_DEFAULT_PRESET, 0);
        enc->thread_count = o && o->threads > 0 ? o->threads : 0;
    }
    ret = avcodec_open2(enc, codec, &copts);
    av_dict_free(&copts);
    if (ret < 0) {
        avcodec_free_context(&enc);
        return ret;
    }
    *out = enc;
    return 0;
}

/* A gray8 picture from the writer's pool.  FFV1 keeps a reference to the
 * last frame it coded, so the frame given before is not writable yet:
 * av_frame_make_writable would allocate a new buffer and copy stale pixels
 * into it every frame; a pooled buffer comes back once FFV1 lets it go. */
static int pool_frame(venc_writer *w, AVFrame *f)
{
    av_frame_unref(f);
    f->buf[0] = av_buffer_pool_get(w->pool);
    if (!f->buf[0])
        return AVERROR(ENOMEM);
    f->data[0] = f->buf[0]->data;
    f->linesize[0] = w->linesize;
    f->format = AV_PIX_FMT_GRAY8;
    f->width = w->cw;
    f->height = w->ch;
    f->color_range = AVCOL_RANGE_JPEG;
    return 0;
}

// ---------------------------------------------------------------------------
// Frame-parallel FFV1 lanes

/* FFVHuff's frame coded by hfyu_enc.c: the bytes libavcodec's encoder
 * writes (test_video_io compares them), in less CPU (BENCHMARKS.md "The
 * .mkv bound").  Coded into the lane's kept worst-case buffer, then copied
 * into a packet of its size, as libavcodec does (a fresh worst-case
 * packet a frame costs an mmap and munmap each); the packet as libavcodec
 * makes it: a keyframe, dts = pts. */
static int hfyu_packet(const hfyu_tab *t, venc_lane *l, const AVFrame *f, AVPacket *pkt)
{
    size_t cap = hfyu_max_bytes(t, f->width, f->height), n;
    int ret;
    if (cap > (size_t)INT_MAX - AV_INPUT_BUFFER_PADDING_SIZE)
        return AVERROR(EINVAL);
    if (l->buf_cap < cap) {
        uint8_t *b = realloc(l->buf, cap);
        if (!b)
            return AVERROR(ENOMEM);
        l->buf = b;
        l->buf_cap = cap;
    }
    n = hfyu_code(t, f->data[0], f->linesize[0], f->width, f->height, l->buf);
    if ((ret = av_new_packet(pkt, (int)n)) < 0)
        return ret;
    memcpy(pkt->data, l->buf, n);
    pkt->pts = pkt->dts = f->pts;
    pkt->flags |= AV_PKT_FLAG_KEY;
    return 0;
}

/* One frame through a lane's encoder.  FFV1 returns each frame's packet
 * at once (one packet a frame, in order); an encoder that held one back
 * would break the one-packet-a-slot bookkeeping, so that is an error. */
static int lane_code(const hfyu_tab *hfyu, venc_lane *l, venc_slot *s)
{
    if (hfyu)
        return hfyu_packet(hfyu, l, s->frame, s->pkt);
    int ret = avcodec_send_frame(l->enc, s->frame);
    if (ret < 0)
        return ret;
    ret = avcodec_receive_packet(l->enc, s->pkt);
    return ret == AVERROR(EAGAIN) || ret == AVERROR_EOF ? AVERROR_BUG : ret;
}

static int mux_packet(venc_writer *w, AVPacket *pkt, int64_t dur);

/* The token holder (p->muxing set by it, mu held on entry and on return):
 * muxes the oldest queued frames while they are coded, in order, with mu
 * released around each.  A failure (a lane's or the muxer's) stops the
 * lanes and wakes the caller, who finds w->failed. */
static void par_mux_ready(venc_par *p)
{
    venc_writer *w = p->w;
    for (;;) {
        venc_slot *s = &p->slots[p->muxed % p->nslots];
        double t0;
        int err, bad, skip;
        if (p->muxed == p->put || !s->done)
            break;
        s->done = 0;
        err = s->err;
        skip = p->stop; /* abandoning, or failed already: free it only */
        pthread_mutex_unlock(&p->mu);
        t0 = ge_now();
        bad = 0;
        if (!skip && err < 0) {
            venc_error(w, "encoding", err); /* quiet when interrupted */
            bad = 1;
        } else if (!skip && (w->failed || mux_packet(w, s->pkt, s->dur))) {
            bad = 1;
        }
        av_packet_unref(s->pkt);
        av_frame_unref(s->frame);
        pthread_mutex_lock(&p->mu);
        p->t_mux += ge_now() - t0;
        p->muxed++;
        if (bad) {
            w->failed = 1; /* also when sig_stop kept venc_error quiet */
            p->stop = 1;
        }
        pthread_cond_broadcast(&p->freed);
    }
}

static void *lane_main(void *arg)
{
    venc_lane *l = arg;
    venc_par *p = l->par;
    const long nice_inc = ge_env_long("GPUEDGE_ENC_NICE", 0);

    /* GPUEDGE_ENC_NICE=N: the lanes at nice +N (Linux: per thread), so
     * that decoder threads, which wait on the GPU and then run briefly,
     * get a core at once (an A/B knob, BENCHMARKS.md) */
    if (nice_inc > 0)
        setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), (int)nice_inc);
    pthread_mutex_lock(&p->mu);
    for (;;) {
        venc_slot *s;
        int err, skip;
        while (!p->quit && p->take == p->put)
            pthread_cond_wait(&p->work, &p->mu);
        if (p->take == p->put)
            break; /* quit, and nothing queued */
        s = &p->slots[p->take++ % p->nslots];
        skip = p->stop;
        pthread_mutex_unlock(&p->mu);
        /* an interrupted or failed run muxes nothing more: skip, do not
         * code (the slot still passes through the muxer, which frees it) */
        double t0 = ge_now();
        err = skip || sig_stop ? AVERROR_EXIT : lane_code(p->w->hfyu, l, s);
        t0 = ge_now() - t0;
        pthread_mutex_lock(&p->mu);
        p->t_code += t0;
        s->err = err < 0 ? err : 0;
        s->done = 1;
        if (!p->muxing) {
            p->muxing = 1;
            par_mux_ready(p);
            p->muxing = 0;
        }
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* Frees the lanes (their threads must have ended) and the slots; lane 0's
 * encoder is w->enc and stays. */
static void par_free(venc_writer *w)
{
    venc_par *p = w->par;
    if (!p)
        return;
    w->par = NULL;
    for (int i = 1; p->lanes && i < p->nlanes; i++)
        avcodec_free_context(&p->lanes[i].enc);
    for (int i = 0; p->lanes && i < p->nlanes; i++)
        free(p->lanes[i].buf);
    for (int i = 0; p->slots && i < p->nslots; i++) {
        av_frame_free(&p->slots[i].frame);
        av_packet_free(&p->slots[i].pkt);
    }
    free(p->lanes);
    free(p->slots);
    pthread_cond_destroy(&p->work);
    pthread_cond_destroy(&p->freed);
    pthread_mutex_destroy(&p->mu);
    free(p);
}

/* Opens lanes 1..n-1 beside w->enc (lane 0) and the ring of slots.
 * Returns 0, or an AVERROR (then nothing is left allocated).  A lane whose
 * extradata differs from lane 0's would write other bytes than the header
 * promises: AVERROR_BUG (never seen; the caller falls back to one lane). */
static int par_init(venc_writer *w, const AVCodec *codec, int nlanes,
                    int lane_threads, const venc_opts *o)
{
    venc_par *p = calloc(1, sizeof *p);
    int ret = AVERROR(ENOMEM);

    if (!p)
        return ret;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->freed, NULL);
    w->par = p;
    p->w = w;
    p->nlanes = nlanes;
    /* two frames a lane: one being coded, one queued or waiting to be
     * muxed behind a slower lane (or the muxer) */
    p->nslots = 2 * nlanes;
    p->lanes = calloc((size_t)nlanes, sizeof *p->lanes);
    p->slots = calloc((size_t)p->nslots, sizeof *p->slots);
    if (!p->lanes || !p->slots)
        goto fail;
    for (int i = 0; i < p->nslots; i++)
        if (!(p->slots[i].frame = av_frame_alloc()) || !(p->slots[i].pkt = av_packet_alloc()))
            goto fail;
    p->lanes[0].enc = w->enc;
    for (int i = 0; i < nlanes; i++) {
        AVCodecContext *e;
        p->lanes[i].par = p;
        if (i == 0)
            continue;
        ret = enc_open(w, codec, lane_threads, o, &p->lanes[i].enc);
        if (ret < 0)
            goto fail;
        e = p->lanes[i].enc;
        if (e->extradata_size != w->enc->extradata_size ||
            (e->extradata_size > 0 &&
             memcmp(e->extradata, w->enc->extradata, (size_t)e->extradata_size))) {
            ret = AVERROR_BUG;
            goto fail;
        }
    }
    return 0;
fail:
    par_free(w);
    return ret;
}

/* Starts the lanes' threads (they inherit the caller's blocked signals).
 * Returns how many started. */
static int par_start(venc_writer *w)
{
    venc_par *p = w->par;
    int n = 0;
    for (int i = 0; i < p->nlanes; i++)
        if (pthread_create(&p->lanes[i].th, NULL, lane_main, &p->lanes[i]) == 0) {
            p->lanes[i].running = 1;
            n++;
        }
    return n;
}

/* The slot for the next frame, once the muxer has freed one (all slots
 * in flight: the caller waits for the oldest).  NULL: the output failed. */
static venc_slot *par_slot(venc_writer *w)
{
    venc_par *p = w->par;
    venc_slot *s = NULL;
    double t0 = ge_now();
    pthread_mutex_lock(&p->mu);
    while (!w->failed && p->put - p->muxed >= p->nslots)
        pthread_cond_wait(&p->freed, &p->mu);
    if (!w->failed)
        s = &p->slots[p->put % p->nslots];
    p->t_wait += ge_now() - t0;
    pthread_mutex_unlock(&p->mu);
    return s;
}

static void par_submit(venc_par *p, venc_slot *s, int64_t dur, double t_copy)
{
    pthread_mutex_lock(&p->mu);
    s->dur = dur;
    p->t_copy += t_copy;
    p->put++;
    pthread_cond_signal(&p->work);
    pthread_mutex_unlock(&p->mu);
}

/* Ends the lanes: unless abandoning, every queued frame is coded and muxed
 * first, then each encoder is flushed (these codecs hold nothing back).
 * The threads are joined in every case.  Returns 0, or -1 (failed). */
static int par_finish(venc_writer *w, int abandon)
{
    venc_par *p = w->par;

    pthread_mutex_lock(&p->mu);
    while (!abandon && !w->failed && p->muxed < p->put)
        pthread_cond_wait(&p->freed, &p->mu);
    p->quit = 1;
    if (abandon || w->failed)
        p->stop = 1;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->nlanes; i++)
        if (p->lanes[i].running) {
            pthread_join(p->lanes[i].th, NULL);
            p->lanes[i].running = 0;
        }
    if (ge_trace("venc"))
        fprintf(stderr, "gpuedge: venc trace: %ld frames, %d lanes: caller copying %.1f ms, "
                "waiting for a slot %.1f ms; muxing %.1f ms; coding %.1f ms (lanes summed, "
                "%d slots)\n", p->muxed, p->nlanes, p->t_copy * 1e3, p->t_wait * 1e3,
                p->t_mux * 1e3, p->t_code * 1e3, p->nslots);
    for (int i = 0; i < p->nlanes && !abandon && !w->failed; i++) {
        int ret = avcodec_send_frame(p->lanes[i].enc, NULL);
        if (ret >= 0) {
            ret = avcodec_receive_packet(p->lanes[i].enc, w->pkt);
            if (ret >= 0) {
                av_packet_unref(w->pkt);
                ret = AVERROR_BUG; /* a packet no frame is waiting for */
            } else if (ret == AVERROR_EOF) {
                ret = 0;
            }
        }
        if (ret < 0)
            venc_error(w, "flushing the encoder", ret);
    }
    return w->failed ? -1 : 0;
}

// ---------------------------------------------------------------------------

int venc_open(so_file *out, const char *format_ext, int w, int h,
              AVRational time_base, AVRational fps, const venc_opts *o,
              venc_writer **wp)
{
    venc_writer *wr = NULL;
    const AVCodec *codec = NULL;
    const char *muxer;
    const char *name = so_name(out);
    char eb[AV_ERROR_MAX_STRING_SIZE], ext[16], eb2[256];
    enum AVPixelFormat pixfmt = AV_PIX_FMT_GRAY8;
    AVDictionary *mopts = NULL;
    int direct, ret, threads = 0, nlanes = 1;

    pthread_once(&log_once, log_init);
    *wp = NULL;
    ext_of(format_ext, ext, sizeof ext);
    if (w <= 0 || h <= 0) {
        ge_err(name, "cannot encode video: empty frame size %dx%d", w, h);
        return -1;
    }
    wr = calloc(1, sizeof *wr);
    if (!wr)
        goto oom;
    wr->out = out;
    wr->w = wr->cw = w;
    wr->h = wr->ch = h;
    wr->fps = valid_q(fps) ? fps : (AVRational){25, 1};
    wr->last_pts = AV_NOPTS_VALUE;

    wr->kind = venc_kind(ext);
    if (wr->kind < 0) {
        ge_err(name, "cannot encode video: unknown format '%s' (use mkv, mp4 or y4m)", ext);
        goto fail;
    }
    if (venc_codec_check(ext, o ? o->codec : NULL, o ? o->preset : NULL,
                         o ? o->crf : NULL, eb2, sizeof eb2)) {
        ge_err(name, "cannot encode video: %s", eb2);
        goto fail;
    }
    wr->vc = codec_find(wr->kind, o ? o->codec : NULL);
    muxer = wr->kind == VENC_MKV ? "matroska" : wr->kind == VENC_MP4 ? "mp4"
            : "yuv4mpegpipe";
    codec = avcodec_find_encoder_by_name(wr->vc->lib);
    if (wr->vc->id == VC_X264) {
        pixfmt = AV_PIX_FMT_YUV420P;
        /* 4:2:0 has no odd sizes: pad with a column/row of 0 */
        wr->cw = (w + 1) & ~1;
        wr->ch = (h + 1) & ~1;
    } else if (wr->vc->id == VC_WRAPPED && o && o->y4m_yuv420) {
        pixfmt = AV_PIX_FMT_YUV420P;
    }
    wr->pixfmt = pixfmt;
    if (!codec) {
        ge_err(name, "cannot encode video: this libavcodec has no %s encoder",
               wr->vc->lib);
        goto fail;
    }
    /* Y4M's header holds the rate and each frame is one 1/fps tick. */
    wr->tb = wr->kind == VENC_Y4M ? av_inv_q(wr->fps)
             : valid_q(time_base) ? time_base : av_inv_q(wr->fps);

    ret = avformat_alloc_output_context2(&wr->oc, NULL, muxer, NULL);
    if (ret < 0 || !wr->oc) {
        ge_err(name, "cannot encode video: no %s muxer: %s", muxer,
               err_str(ret, eb, sizeof eb));
        goto fail;
    }
    /* Same input, same bytes: no random Matroska segment UID, no dates or
     * library versions in the headers (reproducible outputs, resumable
     * batches that can be compared). */
    wr->oc->flags |= AVFMT_FLAG_BITEXACT;
    wr->oc->interrupt_callback.callback = interrupt_cb;
    if (!(wr->st = avformat_new_stream(wr->oc, NULL)) ||
        !(wr->frame = av_frame_alloc()) || !(wr->pkt = av_packet_alloc()))
        goto oom;

    if (wr->vc->id == VC_FFV1) {
        /* The slice count follows the frame size alone (so do the bytes;
         * until issue 11 it followed --threads): 16 from 512x512 pixels on,
         * enough for a lane's slice threads, else 4; the threads are then
         * split between encoders working on successive frames
         * (venc_lanes) and their slices. */
        threads = cpu_threads(o ? o->threads : 0);
        wr->slices = (int64_t)w * h >= 512 * 512 ? ffv1_slices(w, h, 16) : 0;
        if (wr->slices == 0)
            wr->slices = ffv1_slices(w, h, 4);
        if (wr->slices > 0)
            nlanes = venc_lanes(wr, threads, o);
        if (nlanes > 1)
            threads = threads / nlanes > 0 ? threads / nlanes : 1;
    } else if (wr->vc->lanes) {
        /* one thread an encoder; nothing in the bytes depends on threads */
        threads = 1;
        nlanes = venc_lanes(wr, cpu_threads(o ? o->threads : 0), o);
    }
    ret = enc_open(wr, codec, threads, o, &wr->enc);
    if (ret < 0) {
        ge_err(name, "cannot open the %s encoder (%dx%d): %s", codec->name,
               wr->cw, wr->ch, err_str(ret, eb, sizeof eb));
        goto fail;
    }
    if (nlanes > 1) {
        ret = par_init(wr, codec, nlanes, threads, o);
        if (ret == AVERROR(ENOMEM))
            goto oom;
        /* any other failure: one encoder (with fewer threads) still
         * writes the same bytes */
    }
    /* FFVHuff in the lanes: coded by hfyu_enc.c from the extradata's
     * tables when they are what it codes (GPUEDGE_FFVHUFF_OWN=0: by
     * libavcodec, for A/B) */
    if (wr->par && wr->vc->id == VC_FFVHUFF && pixfmt == AV_PIX_FMT_GRAY8 &&
        ge_env_long("GPUEDGE_FFVHUFF_OWN", 1)) {
        if (!(wr->hfyu = malloc(sizeof *wr->hfyu)))
            goto oom;
        if (hfyu_parse(wr->enc->extradata, wr->enc->extradata_size, wr->hfyu)) {
            free(wr->hfyu);
            wr->hfyu = NULL;
        }
    }
    ret = avcodec_parameters_from_context(wr->st->codecpar, wr->enc);
    if (ret < 0)
        goto oom;
    wr->st->time_base = wr->tb;
    wr->st->avg_frame_rate = wr->fps;
    wr->st->r_frame_rate = wr->fps;

    if (pixfmt == AV_PIX_FMT_GRAY8 && wr->vc->id != VC_WRAPPED) {
        wr->linesize = FFALIGN(wr->cw, 64);
        wr->pool = av_buffer_pool_init((size_t)wr->linesize * wr->ch + 64, NULL);
        if (!wr->pool || pool_frame(wr, wr->frame) < 0)
            goto oom;
    } else {
        wr->frame->format = pixfmt;
        wr->frame->width = wr->cw;
        wr->frame->height = wr->ch;
        wr->frame->color_range = AVCOL_RANGE_JPEG;
        if (av_frame_get_buffer(wr->frame, 0) < 0)
            goto oom;
    }

    /* A regular output is a seekable temp file (the muxers write their
     * indexes at the end); a direct one (stdout, pipe, device) streams
     * through so_write, which records the errors. */
    direct = !strcmp(so_path(out), name);
    if (direct) {
        uint8_t *iob = av_malloc(VENC_IO_BUF);
        if (!iob)
            goto oom;
        wr->oc->pb = avio_alloc_context(iob, VENC_IO_BUF, 1, out, NULL, io_write, NULL);
        if (!wr->oc->pb) {
            av_free(iob);
            goto oom;
        }
        wr->custom_io = 1;
        wr->oc->flags |= AVFMT_FLAG_CUSTOM_IO;
        if (wr->kind == VENC_MP4)
            av_dict_set(&mopts, "movflags", "frag_keyframe+empty_moov+default_base_moof", 0);
    } else {
        char *url;
        if (asprintf(&url, "file:%s", so_path(out)) < 0)
            goto oom;
        ret = avio_open2(&wr->oc->pb, url, AVIO_FLAG_WRITE,
                         &wr->oc->interrupt_callback, NULL);
        free(url);
        if (ret < 0) {
            ge_err(name, "cannot open output: %s", err_str(ret, eb, sizeof eb));
            goto fail;
        }
    }
    /* No CRC-32 element in each Matroska cluster (the elements are
     * optional; FFmpeg writes them by default): its muxer checksums every
     * byte it writes on the one thread that writes them, 1 ms of a 1080p
     * FFVHuff frame's 1.4 ms there (BENCHMARKS.md, "The .mkv bound").
     * FFV1 keeps its slice CRCs.  GPUEDGE_MKV_CRC=1 writes them (A/B). */
    if (wr->kind == VENC_MKV && ge_env_long("GPUEDGE_MKV_CRC", 0) <= 0)
        av_dict_set(&mopts, "write_crc32", "0", 0);
    ret = avformat_write_header(wr->oc, &mopts);
    if (ret < 0) {
        venc_error(wr, "writing the header", ret);
        goto fail;
    }
    av_dict_free(&mopts);
    if (wr->par && par_start(wr) == 0)
        par_free(wr); /* no thread: code in venc_put instead */
    if (ge_verbose && wr->vc->id == VC_FFV1)
        ge_note("%s: FFV1 %dx%d, %d slice%s, %d encoder%s of %d thread%s", name, w, h,
                wr->slices, wr->slices == 1 ? "" : "s", wr->par ? wr->par->nlanes : 1,
                wr->par && wr->par->nlanes > 1 ? "s" : "",
                wr->enc->thread_count, wr->enc->thread_count == 1 ? "" : "s");
    else if (ge_verbose)
        ge_note("%s: %s %dx%d, %d encoder%s", name, wr->vc->lib, wr->cw, wr->ch,
                wr->par ? wr->par->nlanes : 1, wr->par && wr->par->nlanes > 1 ? "s" : "");
    *wp = wr;
    return 0;

oom:
    ge_err(name, "cannot encode video: %s", strerror(ENOMEM));
fail:
    av_dict_free(&mopts);
    if (wr)
        wr->failed = 1;
    venc_close(&wr, 1);
    return -1;
}

static int ts_push(venc_writer *w, int64_t pts, int64_t dur)
{
    if (w->nts == w->cap_ts) {
        size_t cap = w->cap_ts ? 2 * w->cap_ts : 64;
        ts_entry *p = realloc(w->ts, cap * sizeof *p);
        if (!p)
            return -1;
        w->ts = p;
        w->cap_ts = cap;
    }
    w->ts[w->nts].pts = pts;
    w->ts[w->nts].dur = dur;
    w->nts++;
    return 0;
}

/* The duration given with the frame whose pts the packet carries
 * (encoders such as x264 reorder, and none in 5.1 pass durations on). */
static int64_t ts_take(venc_writer *w, int64_t pts)
{
    for (size_t i = 0; i < w->nts; i++)
        if (w->ts[i].pts == pts) {
            int64_t d = w->ts[i].dur;
            w->ts[i] = w->ts[--w->nts];
            return d;
        }
    return 0;
}

/* Muxes one packet from the encoder (or a lane's, with the same time
 * base, and dur its frame's duration; else dur 0 and the duration comes
 * from ts_take).  The packet is unreferenced.  0, or -1 (failed). */
static int mux_packet(venc_writer *w, AVPacket *pkt, int64_t dur)
{
    int ret;
    if (dur > 0) {
        pkt->duration = dur; /* a lane's packet: its frame's duration */
    } else if (pkt->pts != AV_NOPTS_VALUE) {
        int64_t d = ts_take(w, pkt->pts);
        if (d > 0)
            pkt->duration = d;
    }
    av_packet_rescale_ts(pkt, w->enc->time_base, w->st->time_base);
    pkt->stream_index = w->st->index;
    ret = av_interleaved_write_frame(w->oc, pkt); /* unrefs pkt */
    if (ret < 0) {
        venc_error(w, "writing", ret);
        return -1;
    }
    if (!w->custom_io) /* libavformat writes the temp file itself */
        so_writeback(w->out, avio_tell(w->oc->pb));
    return 0;
}

/* Receives every packet the encoder has ready and muxes it. */
static int drain_packets(venc_writer *w)
{
    for (;;) {
        int ret = avcodec_receive_packet(w->enc, w->pkt);
        if (ret == AVERROR(EAGAIN) || ret == AVERROR_EOF)
            return 0;
        if (ret < 0) {
            venc_error(w, "encoding", ret);
            return -1;
        }
        if (mux_packet(w, w->pkt, 0))
            return -1;
    }
}

int venc_put_sized(venc_writer *w, const uint8_t *edge, int width, int height,
                   int pitch, int64_t pts, int64_t duration)
{
    AVFrame *f;
    venc_slot *slot = NULL;
    double t_copy = 0;
    int cw, chh, ret;

    if (!w || w->failed)
        return -1;
    if (sig_stop) {
        w->failed = 1;
        return -1;
    }
    if ((width != w->w || height != w->h) && !w->size_noted) {
        ge_note("%s: frame size changed from %dx%d to %dx%d; the video keeps "
                "%dx%d (cropped or padded with 0)", so_name(w->out), w->w, w->h,
                width, height, w->w, w->h);
        w->size_noted = 1;
    }
    if (w->par) {
        /* a free slot, a fresh pooled picture */
        slot = par_slot(w);
        if (!slot)
            return -1;
        t_copy = ge_now();
        f = slot->frame;
        ret = pool_frame(w, f);
    } else {
        f = w->frame;
        /* The encoder may still hold the last frame (a reference): FFV1
         * always does, others seldom; copy on write, as
         * doc/examples/muxing.c does, or a pooled buffer for FFV1. */
        if (w->pool)
            ret = av_frame_is_writable(f) ? 0 : pool_frame(w, f);
        else
            ret = av_frame_make_writable(f);
    }
    if (ret < 0) {
        venc_error(w, "allocating a frame", ret);
        return -1;
    }
    cw = width < w->w ? width : w->w;
    chh = height < w->h ? height : w->h;
    for (int y = 0; y < w->ch; y++) {
        uint8_t *row = f->data[0] + (ptrdiff_t)y * f->linesize[0];
        int n = 0;
        if (y < chh && edge) {
            memcpy(row, edge + (ptrdiff_t)y * pitch, (size_t)cw);
            n = cw;
        }
        memset(row + n, 0, (size_t)(w->cw - n));
    }
    if (f->format == AV_PIX_FMT_YUV420P)
        for (int p = 1; p <= 2; p++)
            for (int y = 0; y < (w->ch + 1) / 2; y++)
                memset(f->data[p] + (ptrdiff_t)y * f->linesize[p], 128,
                       (size_t)(w->cw + 1) / 2);

    if (w->kind == VENC_Y4M) {
        pts = w->nput; /* one 1/fps tick a frame */
        duration = 1;
    } else {
        if (pts == AV_NOPTS_VALUE ||
            (w->last_pts != AV_NOPTS_VALUE && pts <= w->last_pts))
            pts = w->last_pts == AV_NOPTS_VALUE
                      ? 0 : w->last_pts + (w->last_dur > 0 ? w->last_dur : 1);
        if (duration <= 0) {
            if (w->last_pts != AV_NOPTS_VALUE)
                duration = pts - w->last_pts;
            else
                duration = av_rescale_q(1, av_inv_q(w->fps), w->tb);
            if (duration <= 0)
                duration = 1;
        }
    }
    if (!w->par && ts_push(w, pts, duration)) {
        venc_error(w, "allocating", AVERROR(ENOMEM));
        return -1;
    }
    f->pts = pts;
    f->pkt_duration = duration;
    if (w->par) {
        par_submit(w->par, slot, duration, ge_now() - t_copy);
    } else {
        ret = avcodec_send_frame(w->enc, f);
        if (ret < 0) {
            venc_error(w, "encoding", ret);
            return -1;
        }
    }
    w->last_pts = pts;
    w->last_dur = duration;
    w->nput++;
    return w->par ? 0 : drain_packets(w);
}

int venc_put(venc_writer *w, const uint8_t *edge, int pitch, int64_t pts,
             int64_t duration)
{
    if (!w)
        return -1;
    return venc_put_sized(w, edge, w->w, w->h, pitch, pts, duration);
}

int venc_close(venc_writer **wp, int abandon)
{
    venc_writer *w;
    int rc = 0, ret;

    if (!wp || !*wp)
        return 0;
    w = *wp;
    *wp = NULL;
    if (w->par)
        par_finish(w, abandon || w->failed); /* failures set w->failed */
    if (!abandon && !w->failed) {
        /* flush: a NULL frame, then every packet up to AVERROR_EOF (the
         * lanes were flushed above) */
        if (!w->par) {
            ret = avcodec_send_frame(w->enc, NULL);
            if (ret < 0 && ret != AVERROR_EOF)
                venc_error(w, "flushing the encoder", ret);
            else
                drain_packets(w);
        }
        if (!w->failed) {
            ret = av_write_trailer(w->oc);
            if (ret < 0)
                venc_error(w, "writing the trailer", ret);
        }
        if (!w->failed && w->oc->pb) {
            avio_flush(w->oc->pb);
            if (w->oc->pb->error < 0)
                venc_error(w, "writing", w->oc->pb->error);
        }
    }
    if (abandon || w->failed)
        rc = -1;
    if (w->oc && w->oc->pb) {
        if (w->custom_io) {
            av_freep(&w->oc->pb->buffer);
            avio_context_free(&w->oc->pb);
        } else {
            ret = avio_closep(&w->oc->pb);
            if (ret < 0 && rc == 0) {
                venc_error(w, "closing", ret);
                rc = -1;
            }
        }
    }
    if (abandon && !w->failed)
        rc = 0; /* abandoning on purpose is not a failure of ours */
    par_free(w);
    avformat_free_context(w->oc);
    avcodec_free_context(&w->enc);
    av_frame_free(&w->frame);
    av_packet_free(&w->pkt);
    av_buffer_pool_uninit(&w->pool);
    free(w->hfyu);
    free(w->ts);
    free(w);
    return rc;
}

long venc_frames(const venc_writer *w)
{
    return w ? w->nput : 0;
}

int venc_lanes_follow_decoder(const char *format_ext, const char *codec, int threads)
{
    int kind = venc_kind(format_ext);
    const venc_codec *vc = kind < 0 ? NULL : codec_find(kind, codec);
    /* venc_lanes: FFVHuff/MagicYUV lanes depend on it from VENC_SHARE_FROM on */
    return vc && vc->lanes && vc->id != VC_FFV1 && cpu_threads(threads) >= VENC_SHARE_FROM;
}

int venc_encoders(const venc_writer *w)
{
    return w && w->par ? w->par->nlanes : 1;
}

void venc_coded_size(const venc_writer *w, int *cw, int *ch)
{
    if (cw)
        *cw = w ? w->cw : 0;
    if (ch)
        *ch = w ? w->ch : 0;
}
