/*
 * vid_read.c — video in through libavformat/libavcodec (FFmpeg 5.1 API:
 * send/receive only, no deprecated calls): the probe, the reader, NVDEC
 * through hwdec.c.  See video_io.h for the behaviour; the comments here
 * say why.
 */
#include "video_io.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/imgutils.h>
#include <libavutil/log.h>
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>

#include "hwdec.h"
#include "image_av.h"
#include "util.h"
#include "vid_internal.h"

/* A decoder that fails this many times in a row without a frame is not
 * going to recover: the file fails instead of spinning. */
#define VID_MAX_ERRORS_IN_ROW 1000

// ---------------------------------------------------------------------------
// libav's log: decoding errors it only logs

static pthread_once_t log_once = PTHREAD_ONCE_INIT;

/* Readers whose demuxer/decoder messages are being counted (see log_cb). */
static pthread_mutex_t live_mu = PTHREAD_MUTEX_INITIALIZER;
static int64_t reader_ids; /* vid_reader.id */
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

void vid_log_init(void)
{
    pthread_once(&log_once, log_init);
}

// ---------------------------------------------------------------------------
// Probe: video or image?

static int in_list(const char *e, const char *const *list)
{
    for (int i = 0; list[i]; i++)
        if (!strcmp(e, list[i]))
            return 1;
    return 0;
}

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
    int failed;        /* vid_next recorded why the file failed */
    int draining, eof;
    long nout;
    long corrupt;
    int64_t pkt_end;   /* where the last packet read ended (a y4m's end) */
    int64_t y4m_data;  /* a seekable y4m: where its frames start, else -1 */
    int errors_in_row;
    int64_t last_pts, last_dur;
    int64_t sent_max;  /* the largest pts sent to the decoder (INT64_MAX
                          after a packet without one) */
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
    /* Files chained on one decoder (vid_opts.next_input, DESIGN.md §4):
     * at the end of this file's packets the next file's follow them into
     * the same decoder instead of a drain, and the decoder moves to it */
    int64_t id;        /* tags this file's packets (reordered_opaque) */
    const char *(*next_input)(void *opaque);
    void *next_opaque;
    vid_reader *succ;  /* the next file, which owns the decoder now; this
                          file's last frames still come out of it */
    int tail_done;     /* ... and all of them have */
    int pred;          /* a predecessor still takes its last frames from
                          this reader's decoder */
    int held;          /* r->frame is this file's first frame, received
                          while the predecessor took its last ones */
    int pkt_held;      /* r->pkt is this file's first packet, unsent */
    ge_why_rec *dead;  /* it failed while the predecessor finished */
    int has_b0;        /* the decoder's reorder delay at the first frame */
    /* libavcodec's guess_correct_pts state, kept per file (the decoder's
     * own would carry over from the file before) */
    int64_t pc_faulty_pts, pc_faulty_dts, pc_last_pts, pc_last_dts;
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
    r->pc_faulty_pts = r->pc_faulty_dts = 0;
    r->pc_last_pts = r->pc_last_dts = INT64_MIN;
    r->has_b0 = -1;
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
        ge_fail_in(r->path, "cannot decode video: NVDEC does not take this %s stream and its "
                   "decoder has no software path (--hwdec=none decodes it in software)",
                   avcodec_get_name(r->dec->codec_id));
        return -1;
    }
    ret = hw_to_software(r);
    if (ret < 0) {
        r->failed = 1;
        ge_fail_in(r->path, "cannot open the %s decoder: %s", r->sw_codec->name,
                   vid_err_str(ret, eb, sizeof eb));
        return -1;
    }
    return 0;
}

/* Chooses NVDEC or software for this stream (before the decoder is made):
 * *codec may become FFmpeg's hwaccel-only decoder (AV1).  Returns 0, or
 * -1 (why recorded) when --hwdec=nvdec cannot get a device. */
static int hw_choose(vid_reader *r, const vid_opts *o, const AVCodec **codec)
{
    const AVCodec *c;
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
    if (hw_open(NULL, o->device, &r->hw)) {
        r->hw_only = 0;
        if (o->hwdec == VID_HWDEC_NVDEC) {
            ge_fail_in(r->path, "--hwdec=nvdec: %s", ge_why());
            return -1;
        }
        if (ge_verbose)
            ge_note("%s: %s: decoding in software", r->path, ge_why());
        return 0;
    }
    *codec = c;
    return 0;
}

/* The stream's decoder for r, opened (NVDEC when o asks and the stream
 * allows: hw_choose), and --start's seek.  0, or -1 (why recorded). */
static int open_codec(vid_reader *r, const vid_opts *o, const AVCodec *codec)
{
    AVStream *st = r->fmt->streams[r->vidx];
    const AVCodec *st_codec = codec;
    char eb[AV_ERROR_MAX_STRING_SIZE];
    int ret;

    if (o && o->hwdec != VID_HWDEC_NONE && hw_choose(r, o, &codec))
        return -1;
    r->sw_codec = st_codec;
    r->threads = o && o->threads > 0 ? o->threads : 0;
    if (r->hw && r->next_input)
        r->threads = 1; /* chain_ok: one thread, as NVDEC's segments have */
    ret = open_decoder(r, codec);
    if (ret < 0 && r->hw_lost) {
        /* FFmpeg's av1 decoder met NVDEC's refusal in its own init */
        codec = r->sw_codec;
        ret = hw_to_software(r);
    }
    if (ret == AVERROR(ENOMEM) && !r->dec) {
        ge_fail_in(r->path, "cannot open video: %s", strerror(ENOMEM));
        return -1;
    }
    if (ret < 0) {
        ge_fail_in(r->path, "cannot open the %s decoder: %s", codec->name,
                   vid_err_str(ret, eb, sizeof eb));
        return -1;
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
    return 0;
}

/* vid_open and vid_open_mem: mem == NULL opens path (a file, "-" or URL);
 * else the n bytes at mem, with path only naming them in messages. */
static int open_reader(const char *path, const void *mem, size_t mem_n,
                       const vid_opts *o, int demux_only, vid_reader **out)
{
    vid_reader *r = NULL;
    const AVCodec *codec = NULL;
    AVStream *st;
    char *url = NULL;
    char eb[AV_ERROR_MAX_STRING_SIZE];
    int ret;

    vid_log_init();
    *out = NULL;
    r = calloc(1, sizeof *r);
    if (!r || !(r->path = strdup(path)) ||
        !(url = mem ? strdup(path) : input_url(path)) ||
        !(r->pkt = av_packet_alloc()) || !(r->frame = av_frame_alloc()) ||
        !(r->fmt = avformat_alloc_context())) {
        ge_fail_in(path, "cannot open video: %s", strerror(ENOMEM));
        goto fail;
    }
    if (mem && mem_n == 0) {
        ge_fail_in(path, "cannot open video: file is empty"); /* as vid_open says */
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
            ge_fail_in(path, "cannot open video: %s", strerror(ENOMEM));
            goto fail;
        }
        r->fmt->pb = r->avio;
    }
    r->fmt->interrupt_callback.callback = vid_interrupt_cb;
    r->fmt->interrupt_callback.opaque = NULL;
    r->fmt->opaque = r; /* log_cb counts its errors */
    live_add(r);
    r->max_frames = o ? o->max_frames : -1;
    r->rgb = o ? o->rgb : 0;
    r->start_ts = AV_NOPTS_VALUE;
    r->sent_max = INT64_MIN;
    r->last_pts = AV_NOPTS_VALUE;
    r->id = __atomic_add_fetch(&reader_ids, 1, __ATOMIC_RELAXED);
    r->has_b0 = -1;
    r->pc_last_pts = r->pc_last_dts = INT64_MIN;
    if (o && !mem) {
        r->next_input = o->next_input;
        r->next_opaque = o->next_opaque;
    }

    ret = avformat_open_input(&r->fmt, url, NULL, NULL);
    if (ret < 0) {
        /* avformat_open_input freed the context */
        struct stat sb;
        if (sig_stop)
            ;
        else if (ret == AVERROR_INVALIDDATA && !mem && strcmp(path, "-") &&
                 !strstr(path, "://") && stat(path, &sb) == 0 && S_ISREG(sb.st_mode) &&
                 sb.st_size == 0)
            ge_fail_in(path, "cannot open video: file is empty"); /* as images say */
        else
            ge_fail_in(path, "cannot open video: %s", vid_err_str(ret, eb, sizeof eb));
        goto fail;
    }
    /* a y4m's header is read: its frames follow (y4m_frames) */
    r->y4m_data = -1;
    if (!strcmp(r->fmt->iformat->name, "yuv4mpegpipe") && r->fmt->pb &&
        (r->fmt->pb->seekable & AVIO_SEEKABLE_NORMAL))
        r->y4m_data = avio_tell(r->fmt->pb);
    ret = avformat_find_stream_info(r->fmt, NULL);
    if (ret < 0) {
        if (!sig_stop)
            ge_fail_in(path, "cannot read video stream information: %s",
                       vid_err_str(ret, eb, sizeof eb));
        goto fail;
    }
    ret = av_find_best_stream(r->fmt, AVMEDIA_TYPE_VIDEO, -1, -1, &codec, 0);
    if (ret == AVERROR_STREAM_NOT_FOUND) {
        ge_fail_in(path, "no video stream in this file");
        goto fail;
    }
    if (ret < 0 || !codec) {
        int i = ret >= 0 ? ret : av_find_best_stream(r->fmt, AVMEDIA_TYPE_VIDEO, -1, -1, NULL, 0);
        const char *name = i >= 0 ? avcodec_get_name(r->fmt->streams[i]->codecpar->codec_id) : "?";
        ge_fail_in(path, "cannot decode video: no decoder for codec '%s'", name);
        goto fail;
    }
    r->vidx = ret;
    /* Audio and everything else is dropped: let the demuxer skip it. */
    for (unsigned i = 0; i < r->fmt->nb_streams; i++)
        if ((int)i != r->vidx)
            r->fmt->streams[i]->discard = AVDISCARD_ALL;
    st = r->fmt->streams[r->vidx];
    r->tb = st->time_base;
    /* chain(): a demuxer only, the decoder comes from the file before */
    if (!demux_only && open_codec(r, o, codec))
        goto fail;
    free(url);
    *out = r;
    return 0;

fail:
    free(url);
    vid_close(&r);
    return -1;
}

int vid_open(const char *path, const vid_opts *o, vid_reader **out)
{
    return open_reader(path, NULL, 0, o, 0, out);
}

int vid_open_mem(const void *buf, size_t n, const char *name,
                 const vid_opts *o, vid_reader **out)
{
    static const uint8_t none[1];
    return open_reader(name ? name : "(memory)", buf ? buf : none,
                       buf ? n : 0, o, 0, out);
}

/* libavcodec's guess_correct_pts (decode.c, 5.1), on this file's state:
 * the same best_effort_timestamp a decoder of this file alone gives. */
static int64_t best_effort(vid_reader *r, int64_t pts, int64_t dts)
{
    if (dts != AV_NOPTS_VALUE) {
        r->pc_faulty_dts += dts <= r->pc_last_dts;
        r->pc_last_dts = dts;
    } else if (pts != AV_NOPTS_VALUE) {
        r->pc_last_dts = pts;
    }
    if (pts != AV_NOPTS_VALUE) {
        r->pc_faulty_pts += pts <= r->pc_last_pts;
        r->pc_last_pts = pts;
    } else if (dts != AV_NOPTS_VALUE) {
        r->pc_last_pts = dts;
    }
    if ((r->pc_faulty_pts <= r->pc_faulty_dts || dts == AV_NOPTS_VALUE) && pts != AV_NOPTS_VALUE)
        return pts;
    return dts;
}

static void fill_frame(vid_reader *r, src_frame *fr, const ge_frame *g, const AVFrame *f,
                       int64_t ts, double t0)
{
    fr->f = *g;
    fr->index = r->nout++;
    fr->pts = ts == AV_NOPTS_VALUE ? -1.0 : (double)ts * av_q2d(r->tb);
    r->last_pts = ts;
    r->last_dur = f->pkt_duration > 0 ? f->pkt_duration : 0;
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
        ge_fail_in(r->path, "cannot decode video: %s", strerror(ENOMEM));
        return -1;
    }
    r->corrupt++;
    if (++r->errors_in_row > VID_MAX_ERRORS_IN_ROW) {
        r->failed = 1;
        ge_fail_in(r->path, "cannot decode video: %s", vid_err_str(ret, eb, sizeof eb));
        return -1;
    }
    return 0;
}

/* A .y4m cut inside a frame: its demuxer drops the partial frame and
 * says only "end of file".  Its frames are back to back, so the last
 * packet of an intact file ends where the file does. */
static int ends_inside_frame(vid_reader *r)
{
    int64_t size;
    if (!r->fmt->pb || strcmp(r->fmt->iformat->name, "yuv4mpegpipe") ||
        (r->fmt->pb->seekable & AVIO_SEEKABLE_NORMAL) == 0)
        return 0;
    size = avio_size(r->fmt->pb);
    return size > 0 && r->pkt_end > 0 && r->pkt_end < size;
}

/* own->frame, decoded from r's packets, handed on as r's frame (own: the
 * reader whose decoder gave it; r's successor for r's last frames, whose
 * dts is then none, as a drain's are).  1 a frame, 0 dropped (before
 * --start), -1 failed (why recorded). */
static int deliver(vid_reader *r, vid_reader *own, int64_t dts, src_frame *fr, host_buf *buf,
                   double t0)
{
    AVFrame *f = own->frame;
    int64_t ts = best_effort(r, f->pts, dts);
    ge_frame g;
    if (r->has_b0 < 0)
        r->has_b0 = own->dec->has_b_frames;
    if ((f->flags & AV_FRAME_FLAG_CORRUPT) || f->decode_error_flags)
        r->corrupt++;
    if (r->start_ts != AV_NOPTS_VALUE && ts != AV_NOPTS_VALUE && ts < r->start_ts) {
        av_frame_unref(f);
        return 0;
    }
    if (f->format == AV_PIX_FMT_CUDA) {
        /* NVDEC: the luma plane stays in the decoder's surface */
        ge_why_clear();
        if (own->hw && hw_describe(f, own->dec->sw_pix_fmt, &g) == 0) {
            fill_frame(r, fr, &g, f, ts, t0);
            if (hw_take(own->hw, f, fr) == 0) {
                if (ge_verbose && !r->hw_noted)
                    ge_note("%s: NVDEC decoding (%s, %s, %dx%d), frames kept on the GPU",
                            r->path, own->dec->codec->name,
                            av_get_pix_fmt_name(own->dec->sw_pix_fmt) ?
                            av_get_pix_fmt_name(own->dec->sw_pix_fmt) : "?",
                            fr->f.width, fr->f.height);
                r->hw_noted = 1;
                return 1;
            }
            r->nout--;
        }
        r->failed = 1;
        ge_fail_in(r->path, "cannot use NVDEC frame %ld (%dx%d): %s", r->nout, f->width,
                   f->height, ge_why()[0] ? ge_why() : "a CUDA frame without NVDEC");
        av_frame_unref(f);
        return -1;
    }
    if (vid_frame_to_ge(f, r->rgb, &r->conv, buf, &g)) {
        r->failed = 1;
        ge_fail_in(r->path, "cannot convert frame %ld (%s, %dx%d): %s", r->nout,
                   av_get_pix_fmt_name(f->format) ? av_get_pix_fmt_name(f->format) : "?",
                   f->width, f->height, ge_why());
        av_frame_unref(f);
        return -1;
    }
    fill_frame(r, fr, &g, f, ts, t0);
    av_frame_unref(f);
    return 1;
}

/* Sends r->pkt (tagged as r's) and lets it go.  0, or -1 (the file
 * failed: why recorded). */
static int send_packet(vid_reader *r)
{
    int ret;
    r->hw_mark_set = 0;
    r->dec->reordered_opaque = r->id;
    if (r->pkt->pts == AV_NOPTS_VALUE || r->pkt->pts > r->sent_max)
        r->sent_max = r->pkt->pts == AV_NOPTS_VALUE ? INT64_MAX : r->pkt->pts;
    ret = avcodec_send_packet(r->dec, r->pkt);
    av_packet_unref(r->pkt);
    /* Every frame was received before this send, so EAGAIN cannot
     * happen; any other error is a bad packet, skipped. */
    if (ret < 0 && ret != AVERROR(EAGAIN) && r->hw_lost)
        return hw_fallback(r);
    if (ret < 0 && ret != AVERROR(EAGAIN) && decode_error(r, ret))
        return -1;
    return 0;
}

/* The first NAL units of an H.264 access unit hold an IDR slice (type
 * 5): nothing after it refers to what came before.  lensize: the NAL
 * length field's bytes (avcC), 0 for start codes (Annex B). */
int vid_h264_idr(const uint8_t *p, int n, int lensize)
{
    if (lensize > 0) {
        while (n > lensize) {
            uint32_t len = 0;
            for (int i = 0; i < lensize; i++)
                len = len << 8 | p[i];
            p += lensize;
            n -= lensize;
            if (len == 0 || len > (uint32_t)n)
                return 0;
            if ((p[0] & 0x1f) == 5)
                return 1;
            p += len;
            n -= (int)len;
        }
        return 0;
    }
    for (int i = 0; i + 3 < n; i++)
        if (p[i] == 0 && p[i + 1] == 0 && p[i + 2] == 1) {
            if ((p[i + 3] & 0x1f) == 5)
                return 1;
            i += 2;
        }
    return 0;
}

/* r's decoder may take packets from elsewhere after its own without a
 * drain (an IDR first): H.264 on NVDEC or a one-thread software decoder,
 * undamaged so far, its reorder delay what its parameter sets gave (a
 * decoder started at that IDR starts from that too). */
static int decoder_goes_on(const vid_reader *r)
{
    return !r->pred && !r->succ && !r->mem && !r->rgb && r->max_frames < 0 && r->nout > 0 &&
           r->dec && r->dec->codec_id == AV_CODEC_ID_H264 && r->dec->active_thread_type == 0 &&
           (r->hw ? r->dec->pix_fmt == AV_PIX_FMT_CUDA : r->dec->pix_fmt != AV_PIX_FMT_CUDA) &&
           !r->hw_only && r->dec->has_b_frames == r->has_b0 && vid_corrupt_count(r) == 0;
}

/* The decoder may go on into another file at the end of r's packets: the
 * whole file read from its start. */
static int chain_ok(const vid_reader *r)
{
    return r->next_input && r->start_ts == AV_NOPTS_VALUE && decoder_goes_on(r);
}

/* Reads r's next packet of its stream and holds it for the decoder: 1 an
 * undamaged IDR, 0 another packet or none.  a: the stream's parameters. */
static int hold_idr(vid_reader *r, const AVCodecParameters *a)
{
    int ret, lensize = a->extradata_size >= 7 && a->extradata[0] == 1
                           ? (a->extradata[4] & 3) + 1 : 0; /* avcC, else Annex B */
    while ((ret = av_read_frame(r->fmt, r->pkt)) >= 0 && r->pkt->stream_index != r->vidx)
        av_packet_unref(r->pkt);
    if (ret < 0)
        return 0;
    r->pkt_held = 1;
    if (r->fmt->pb)
        r->pkt_end = avio_tell(r->fmt->pb);
    return (r->pkt->flags & AV_PKT_FLAG_KEY) && !(r->pkt->flags & AV_PKT_FLAG_CORRUPT) &&
           vid_h264_idr(r->pkt->data, r->pkt->size, lensize);
}

/* s's stream continues r's in one decoder: the same codec, parameter
 * sets (extradata), size, format, colours and time base, and its first
 * packet an IDR. */
static int continues(vid_reader *r, vid_reader *s)
{
    const AVStream *sa = r->fmt->streams[r->vidx], *sb = s->fmt->streams[s->vidx];
    const AVCodecParameters *a = sa->codecpar, *b = sb->codecpar;
    if (b->codec_id != a->codec_id || b->width != a->width || b->height != a->height ||
        b->format != a->format || b->profile != a->profile || b->level != a->level ||
        b->color_range != a->color_range || b->color_primaries != a->color_primaries ||
        b->color_trc != a->color_trc || b->color_space != a->color_space ||
        b->chroma_location != a->chroma_location || b->field_order != a->field_order ||
        av_cmp_q(b->sample_aspect_ratio, a->sample_aspect_ratio) ||
        av_cmp_q(sb->time_base, sa->time_base) || a->extradata_size < 7 ||
        b->extradata_size != a->extradata_size ||
        memcmp(b->extradata, a->extradata, (size_t)a->extradata_size))
        return 0;
    return hold_idr(s, a);
}

/* At the end of r's packets: the next file (vid_opts.next_input) takes
 * the decoder over when its stream continues r's, and its packets follow
 * r's without a drain; r->succ.  0 chained, -1 not (r drains as usual;
 * nothing recorded: a file that cannot be opened here is opened again
 * and reported by its own turn). */
static int chain(vid_reader *r)
{
    ge_why_rec *keep;
    const char *path;
    vid_reader *s = NULL;
    struct stat sb;
    int ok;
    if (!chain_ok(r) || !(path = r->next_input(r->next_opaque)))
        return -1;
    /* a regular file only: one that does not continue is read again */
    if (!strcmp(path, "-") || strstr(path, "://") || stat(path, &sb) || !S_ISREG(sb.st_mode) ||
        !(keep = malloc(sizeof *keep)))
        return -1;
    ge_why_save(keep);
    ok = open_reader(path, NULL, 0, NULL, 1, &s) == 0 && continues(r, s);
    ge_why_load(keep);
    free(keep);
    if (!ok) {
        vid_close(&s);
        return -1;
    }
    s->dec = r->dec;
    s->hw = r->hw;
    r->dec = NULL;
    r->hw = NULL;
    s->dec->opaque = s; /* log_cb counts its errors as s's now */
    s->sw_codec = r->sw_codec;
    s->threads = r->threads;
    s->has_b0 = r->has_b0;
    s->next_input = r->next_input;
    s->next_opaque = r->next_opaque;
    s->pred = 1;
    r->succ = s;
    if (ge_verbose)
        ge_note("%s: decoded on by %s that decoded %s (no new decoder)", s->path,
                s->hw ? "the NVDEC session" : "the decoder", r->path);
    return 0;
}

/* r's decoder's next frame, into r->frame: 1 a frame, 0 the end, 2
 * chained (r->succ decodes on), -1 failed (why recorded). */
static int decode_step(vid_reader *r)
{
    char eb[AV_ERROR_MAX_STRING_SIZE];
    int ret;
    for (;;) {
        if (sig_stop)
            return -1;
        if (r->eof)
            return 0;
        r->hw_mark_set = 0; /* get_format's retry happens within one call */
        ret = avcodec_receive_frame(r->dec, r->frame);
        if (ret >= 0) {
            r->errors_in_row = 0;
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
        if (r->pkt_held) {
            r->pkt_held = 0;
            if (send_packet(r))
                return -1;
            continue;
        }
        ret = av_read_frame(r->fmt, r->pkt);
        if (ret < 0) {
            if (sig_stop || ret == AVERROR_EXIT)
                return -1;
            if (ret == AVERROR_EOF && ends_inside_frame(r))
                r->corrupt++; /* the frames before it stand */
            if (ret != AVERROR_EOF) {
                if (is_io_error(ret)) {
                    r->failed = 1;
                    ge_fail_in(r->path, "cannot read video: %s",
                               vid_err_str(ret, eb, sizeof eb));
                    return -1;
                }
                r->corrupt++; /* malformed tail: what decoded so far stands */
                if (ge_verbose)
                    ge_note("%s: video data ends early: %s", r->path,
                            vid_err_str(ret, eb, sizeof eb));
            }
            if (ret == AVERROR_EOF && chain(r) == 0)
                return 2;
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
        if (r->fmt->pb)
            r->pkt_end = avio_tell(r->fmt->pb);
        if (send_packet(r))
            return -1;
    }
}

/* r chained: its last frames, out of its successor's decoder, until the
 * successor's first.  1 a frame, 0 r's end, -1 failed.  When the
 * successor fails first (its file unreadable), it keeps why for its own
 * turn and drains, so that r's frames still come out. */
static int tail_next(vid_reader *r, src_frame *fr, host_buf *buf, double t0)
{
    vid_reader *s = r->succ;
    for (;;) {
        int rc;
        if (r->tail_done)
            return 0;
        rc = decode_step(s);
        if (rc < 0 && !sig_stop && !s->dead && (s->dead = malloc(sizeof *s->dead))) {
            ge_why_save(s->dead);
            avcodec_send_packet(s->dec, NULL);
            s->draining = 1;
            s->eof = 0;
            s->pkt_held = 0;
            av_packet_unref(s->pkt);
            continue;
        }
        if (rc < 0)
            return -1;
        if (rc == 1 && s->frame->reordered_opaque == r->id) {
            if ((rc = deliver(r, s, AV_NOPTS_VALUE, fr, buf, t0)) != 0)
                return rc;
            continue;
        }
        s->held = rc == 1;
        s->pred = 0;
        r->tail_done = 1;
        return 0;
    }
}

int vid_next(vid_reader *r, src_frame *fr, host_buf *buf)
{
    double t0 = ge_now();
    int rc;

    src_frame_host(fr);
    for (;;) {
        if (r->max_frames >= 0 && r->nout >= r->max_frames)
            return 0;
        if (sig_stop)
            return -1;
        if (r->succ)
            return tail_next(r, fr, buf, t0);
        if (r->dead) {
            ge_why_load(r->dead);
            r->failed = 1;
            return -1;
        }
        if (r->held) {
            r->held = 0;
        } else if ((rc = decode_step(r)) != 1) {
            if (rc == 2)
                continue;
            return rc;
        }
        if ((rc = deliver(r, r, r->frame->pkt_dts, fr, buf, t0)) != 0)
            return rc;
    }
}

int vid_skip_to(vid_reader *r, double start)
{
    AVStream *st = r->fmt->streams[r->vidx];
    int64_t s0 = st->start_time != AV_NOPTS_VALUE ? st->start_time : 0, ts;
    if (!decoder_goes_on(r) || r->eof || r->draining || r->pkt_held || r->held || r->dead ||
        !(r->fmt->pb && (r->fmt->pb->seekable & AVIO_SEEKABLE_NORMAL)))
        return -1;
    ts = s0 + av_rescale_q(llrint(start * AV_TIME_BASE), AV_TIME_BASE_Q, st->time_base);
    /* forward only, past every packet the decoder has had: all it still
     * holds is then before `start` */
    if (ts <= r->sent_max || avformat_seek_file(r->fmt, r->vidx, INT64_MIN, ts, ts, 0) < 0 ||
        !hold_idr(r, st->codecpar))
        return -1;
    r->start_ts = ts; /* what the decoder still holds from before comes out first */
    return 0;
}

vid_reader *vid_successor(vid_reader *r)
{
    vid_reader *s = r ? r->succ : NULL;
    if (!s || !r->tail_done)
        return NULL;
    r->succ = NULL;
    return s;
}

void vid_close(vid_reader **pr)
{
    vid_reader *r;
    if (!pr || !*pr)
        return;
    r = *pr;
    *pr = NULL;
    vid_close(&r->succ); /* (the decoder is the successor's) */
    free(r->dead);
    avcodec_free_context(&r->dec); /* joins the decoder's threads */
    hw_close(&r->hw); /* frames handed out keep their own references */
    avformat_close_input(&r->fmt);
    if (r->avio) { /* ours (vid_open_mem): the buffer may have been replaced */
        av_freep(&r->avio->buffer);
        avio_context_free(&r->avio);
    }
    live_remove(r);
    av_packet_free(&r->pkt);
    av_frame_free(&r->frame);
    vid_conv_free(&r->conv);
    free(r->path);
    free(r);
}

/* The frames a seekable y4m holds, a partial one at its end included
 * (its container counts none): the bytes after the header over a frame's
 * ("FRAME\n" and the picture, as libavformat's demuxer reads them).  0
 * when unknown. */
static int64_t y4m_frames(const vid_reader *r)
{
    const AVCodecParameters *par = r->fmt->streams[r->vidx]->codecpar;
    int64_t size, frame;
    int pic;
    if (r->y4m_data < 0 || (size = avio_size(r->fmt->pb)) <= r->y4m_data ||
        (pic = av_image_get_buffer_size(par->format, par->width, par->height, 1)) <= 0)
        return 0;
    frame = (int64_t)pic + 6;
    return (size - r->y4m_data + frame - 1) / frame;
}

void vid_get_info(const vid_reader *r, vid_info *info)
{
    AVStream *st = r->fmt->streams[r->vidx];
    AVRational fr = av_guess_frame_rate(r->fmt, st, NULL);
    memset(info, 0, sizeof *info);
    info->width = st->codecpar->width;
    info->height = st->codecpar->height;
    info->time_base = st->time_base;
    info->frame_rate = vid_valid_q(fr) ? fr : (AVRational){0, 1};
    if (st->duration != AV_NOPTS_VALUE && st->duration > 0)
        info->duration = (double)st->duration * av_q2d(st->time_base);
    else if (r->fmt->duration != AV_NOPTS_VALUE && r->fmt->duration > 0)
        info->duration = (double)r->fmt->duration / AV_TIME_BASE;
    else
        info->duration = -1;
    info->nb_frames = st->nb_frames > 0 ? st->nb_frames : y4m_frames(r);
    info->codec = r->dec && r->dec->codec ? r->dec->codec->name : "?";
}

int vid_hwdec_active(const vid_reader *r)
{
    return r && (r->hw != NULL || (r->succ && r->succ->hw != NULL));
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
    if (seconds == -1.0 || !vid_valid_q(tb) || !isfinite(seconds))
        return AV_NOPTS_VALUE;
    /* seconds was ts * num / den in double: ts is the nearest integer */
    return llrint(seconds * (double)tb.den / (double)tb.num);
}

