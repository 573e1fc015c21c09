/*
 * venc.c — edge maps out as video through libavcodec/libavformat (FFmpeg
 * 5.1 API: send/receive only, no deprecated calls): the writer's open, put
 * and close, over venc_mux.c (the encoder's settings, the muxer) and
 * venc_thread.c (frame-parallel encoders).  See venc.h for the behaviour;
 * the comments here say why.
 */
#include "venc.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/opt.h>

#include "util.h"
#include "venc_internal.h"
#include "vid_internal.h"

/* Custom AVIO buffer for direct (streamed) outputs. */
#define VENC_IO_BUF (64 * 1024)

/* A failing venc_put or venc_close: the writer's record (venc_error's, made
 * on any thread) into the caller's, once.  Returns -1. */
static int hand_why(venc_writer *w)
{
    if (atomic_load(&w->why_ready) && !w->why_given) {
        w->why_given = 1;
        ge_why_load(&w->why);
    }
    return -1;
}

static int io_write(void *opaque, uint8_t *buf, int size)
{
    if (size > 0 && so_write(opaque, buf, (size_t)size) < 0)
        return AVERROR(EIO);
    return size > 0 ? size : 0;
}

/* After the header, which libavformat wrote into memory (a dynamic
 * buffer it may seek in, as in a file): mkvw takes the file over, writing
 * as o->mkv_via says.  0, -1 (why recorded) or AVERROR(ENOMEM). */
static int mkv_take_over(venc_writer *w, const venc_opts *o)
{
    const int how = !o || o->mkv_via == VENC_MKV_AUTO ? MKVW_MAP_IN_RAM
                    : o->mkv_via == VENC_MKV_MAP      ? MKVW_MAP
                                                      : MKVW_PWRITE;
    AVStream *st = w->st;
    uint8_t *hdr;
    int64_t def_dur = 0;
    int ret, n = avio_get_dyn_buf(w->oc->pb, &hdr);
    if (w->oc->pb->error < 0) {
        venc_error(w, "writing the header", w->oc->pb->error);
        return -1;
    }
    /* mux.c's guess for a packet without a duration */
    if (st->avg_frame_rate.num > 0 && st->avg_frame_rate.den > 0)
        def_dur = av_rescale_q(1, av_inv_q(st->avg_frame_rate), st->time_base);
    else if (st->time_base.num * 1000LL > st->time_base.den)
        def_dur = 1;
    ret = mkvw_open(&w->mkv, w->out, hdr, (size_t)n, st->time_base.num, st->time_base.den,
                    def_dur, how);
    if (ret == -ENOMEM)
        return AVERROR(ENOMEM);
    if (ret == -EINVAL) { /* with libavformat 5.1 itself: a bug of mkvw's */
        venc_error(w, "libavformat's Matroska header, not as mkvw.c reads it", AVERROR(EINVAL));
        return -1;
    }
    if (ret) {
        venc_error(w, "writing the header", AVERROR(-ret));
        return -1;
    }
    return 0;
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

/* Opens wr->enc and, for intra codecs with threads to spare, the encoder
 * threads.  Returns 0, -1 (why recorded) or AVERROR(ENOMEM). */
static int open_encoders(venc_writer *wr, const AVCodec *codec, int w, int h,
                         const venc_opts *o)
{
    char eb[AV_ERROR_MAX_STRING_SIZE];
    int ret, threads = 0, nenc = 1;

    if (wr->vc->id == VC_FFV1) {
        /* The slice count follows the frame size alone, so the bytes do
         * not depend on --threads: 16 from 512x512 pixels on, enough for an
         * encoder's slice threads, else 4; the threads are then split
         * between encoders working on successive frames (et_count) and
         * their slices. */
        threads = venc_cpu_threads(o ? o->threads : 0);
        wr->slices = (int64_t)w * h >= 512 * 512 ? ffv1_slices(w, h, 16) : 0;
        if (wr->slices == 0)
            wr->slices = ffv1_slices(w, h, 4);
        if (wr->slices > 0)
            nenc = et_count(wr, threads, o);
        if (nenc > 1)
            threads = threads / nenc > 0 ? threads / nenc : 1;
    } else if (wr->vc->frame_par) {
        /* one thread an encoder; nothing in the bytes depends on threads */
        threads = 1;
        nenc = et_count(wr, venc_cpu_threads(o ? o->threads : 0), o);
    }
    ret = enc_open(wr, codec, threads, o, &wr->enc);
    if (ret < 0) {
        ge_fail_in(so_name(wr->out), "cannot open the %s encoder (%dx%d): %s", codec->name,
                   wr->cw, wr->ch, vid_err_str(ret, eb, sizeof eb));
        return -1;
    }
    if (nenc > 1) {
        ret = et_init(wr, codec, nenc, threads, o);
        if (ret == AVERROR(ENOMEM))
            return AVERROR(ENOMEM);
        /* any other failure: one encoder (with fewer threads) still
         * writes the same bytes */
    }
    /* FFVHuff: the extradata's tables, when they are what hfyu_enc.c codes:
     * the encoder threads code with them (the same bytes as libavcodec's
     * encoder in less CPU: docs/bench-log.md "Our own FFVHuff coder"), and
     * venc_put_coded takes packets coded with them (by the GPU) */
    if (wr->vc->id == VC_FFVHUFF && wr->pixfmt == AV_PIX_FMT_GRAY8) {
        if (!(wr->hfyu = malloc(sizeof *wr->hfyu)))
            return AVERROR(ENOMEM);
        if (hfyu_parse(wr->enc->extradata, wr->enc->extradata_size, wr->hfyu)) {
            free(wr->hfyu);
            wr->hfyu = NULL;
        } else if (!(wr->pkt_pool = av_buffer_pool_init(
                         (size_t)w * h + AV_INPUT_BUFFER_PADDING_SIZE, NULL))) {
            return AVERROR(ENOMEM);
        }
    }
    return 0;
}

/* Opens the muxer's output and sets its options in *mopts.  Returns 0,
 * -1 (why recorded) or AVERROR(ENOMEM). */
static int open_output(venc_writer *wr, const venc_opts *o, AVDictionary **mopts)
{
    so_file *out = wr->out;
    char eb[AV_ERROR_MAX_STRING_SIZE];
    int direct, ret;

    /* A regular output is a seekable temp file (the muxers write their
     * indexes at the end); a direct one (stdout, pipe, device) streams
     * through so_write, which records the errors. */
    direct = !strcmp(so_path(out), so_name(out));
    if (!direct && wr->kind == VENC_MKV && wr->hfyu &&
        !(o && (o->mkv_crc || o->mkv_via == VENC_MKV_LIBAV)) &&
        avformat_version() == LIBAVFORMAT_VERSION_INT) {
        /* written by mkvw, whose rules are libavformat 5.1's (mkvw.h); the
         * header into memory, laid out as in a seekable file */
        if (avio_open_dyn_buf(&wr->oc->pb) < 0)
            return AVERROR(ENOMEM);
        wr->oc->pb->seekable = AVIO_SEEKABLE_NORMAL;
        wr->hdr_mem = 1;
        wr->oc->flags |= AVFMT_FLAG_CUSTOM_IO;
    } else if (direct || wr->kind == VENC_Y4M) { /* Y4M never seeks: always so_write (put_y4m) */
        uint8_t *iob = av_malloc(VENC_IO_BUF);
        if (!iob)
            return AVERROR(ENOMEM);
        wr->oc->pb = avio_alloc_context(iob, VENC_IO_BUF, 1, out, NULL, io_write, NULL);
        if (!wr->oc->pb) {
            av_free(iob);
            return AVERROR(ENOMEM);
        }
        wr->custom_io = 1;
        wr->oc->flags |= AVFMT_FLAG_CUSTOM_IO;
        if (wr->kind == VENC_MP4 && direct)
            av_dict_set(mopts, "movflags", "frag_keyframe+empty_moov+default_base_moof", 0);
    } else {
        char *url;
        if (asprintf(&url, "file:%s", so_path(out)) < 0)
            return AVERROR(ENOMEM);
        ret = avio_open2(&wr->oc->pb, url, AVIO_FLAG_WRITE,
                         &wr->oc->interrupt_callback, NULL);
        free(url);
        if (ret < 0) {
            ge_fail_in(so_name(out), "cannot open output: %s", vid_err_str(ret, eb, sizeof eb));
            return -1;
        }
    }
    /* No CRC-32 element in each Matroska cluster (the elements are
     * optional; FFmpeg writes them by default): its muxer checksums every
     * byte it writes on the one thread that writes them, 1 ms of a 1080p
     * FFVHuff frame's 1.4 ms there (docs/bench-log.md, "The .mkv bound").
     * FFV1 keeps its slice CRCs.  venc_opts.mkv_crc writes them. */
    if (wr->kind == VENC_MKV && !(o && o->mkv_crc))
        av_dict_set(mopts, "write_crc32", "0", 0);
    return 0;
}

int venc_open(so_file *out, const char *format_ext, int w, int h,
              AVRational time_base, AVRational fps, const venc_opts *o,
              venc_writer **wp)
{
    venc_writer *wr = NULL;
    const AVCodec *codec = NULL;
    const char *muxer;
    const char *name = so_name(out);
    char eb[AV_ERROR_MAX_STRING_SIZE], ext[16];
    enum AVPixelFormat pixfmt = AV_PIX_FMT_GRAY8;
    AVDictionary *mopts = NULL;
    int ret;

    vid_log_init();
    *wp = NULL;
    venc_ext_of(format_ext, ext, sizeof ext);
    if (w <= 0 || h <= 0) {
        ge_fail_in(name, "cannot encode video: empty frame size %dx%d", w, h);
        return -1;
    }
    wr = calloc(1, sizeof *wr);
    if (!wr)
        goto oom;
    wr->out = out;
    wr->w = wr->cw = w;
    wr->h = wr->ch = h;
    wr->fps = vid_valid_q(fps) ? fps : (AVRational){25, 1};
    wr->last_pts = AV_NOPTS_VALUE;

    wr->kind = venc_kind(ext);
    if (wr->kind < 0) {
        ge_fail_in(name, "cannot encode video: unknown format '%s' (use mkv, mp4 or y4m)", ext);
        goto fail;
    }
    if (venc_codec_check(ext, o ? o->codec : NULL, o ? o->preset : NULL,
                         o ? o->crf : NULL)) {
        ge_fail_in(name, "cannot encode video: %s", ge_why());
        goto fail;
    }
    wr->vc = venc_codec_find(wr->kind, o ? o->codec : NULL);
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
        ge_fail_in(name, "cannot encode video: this libavcodec has no %s encoder",
                   wr->vc->lib);
        goto fail;
    }
    /* Y4M's header holds the rate and each frame is one 1/fps tick. */
    wr->tb = wr->kind == VENC_Y4M ? av_inv_q(wr->fps)
             : vid_valid_q(time_base) ? time_base : av_inv_q(wr->fps);

    ret = avformat_alloc_output_context2(&wr->oc, NULL, muxer, NULL);
    if (ret < 0 || !wr->oc) {
        ge_fail_in(name, "cannot encode video: no %s muxer: %s", muxer,
                   vid_err_str(ret, eb, sizeof eb));
        goto fail;
    }
    /* Same input, same bytes: no random Matroska segment UID, no dates or
     * library versions in the headers (reproducible outputs, resumable
     * batches that can be compared). */
    wr->oc->flags |= AVFMT_FLAG_BITEXACT;
    wr->oc->interrupt_callback.callback = vid_interrupt_cb;
    if (!(wr->st = avformat_new_stream(wr->oc, NULL)) ||
        !(wr->frame = av_frame_alloc()) || !(wr->pkt = av_packet_alloc()))
        goto oom;

    ret = open_encoders(wr, codec, w, h, o);
    if (ret == AVERROR(ENOMEM))
        goto oom;
    if (ret < 0)
        goto fail;
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

    ret = open_output(wr, o, &mopts);
    if (ret == AVERROR(ENOMEM))
        goto oom;
    if (ret < 0)
        goto fail;
    ret = avformat_write_header(wr->oc, &mopts);
    if (ret < 0) {
        venc_error(wr, "writing the header", ret);
        goto fail;
    }
    av_dict_free(&mopts);
    if (wr->hdr_mem && (ret = mkv_take_over(wr, o)) < 0) {
        if (ret == AVERROR(ENOMEM))
            goto oom;
        goto fail;
    }
    if (wr->et && et_start(wr) == 0)
        et_free(wr); /* no thread: code in venc_put instead */
    if (ge_verbose && wr->vc->id == VC_FFV1)
        ge_note("%s: FFV1 %dx%d, %d slice%s, %d encoder%s of %d thread%s", name, w, h,
                wr->slices, wr->slices == 1 ? "" : "s", wr->et ? wr->et->n : 1,
                wr->et && wr->et->n > 1 ? "s" : "",
                wr->enc->thread_count, wr->enc->thread_count == 1 ? "" : "s");
    else if (ge_verbose)
        ge_note("%s: %s %dx%d, %d encoder%s", name, wr->vc->lib, wr->cw, wr->ch,
                wr->et ? wr->et->n : 1, wr->et && wr->et->n > 1 ? "s" : "");
    *wp = wr;
    return 0;

oom:
    ge_fail_in(name, "cannot encode video: %s", strerror(ENOMEM));
fail:
    av_dict_free(&mopts);
    if (wr)
        wr->failed = 1;
    venc_close(&wr, 1);
    return -1;
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

/* The pts and duration a frame is written with (venc_put's rules): Y4M
 * counts frames; elsewhere a missing or non-increasing pts continues from
 * the previous frame, and an unknown duration is the last interval or
 * 1/fps. */
static void fix_ts(const venc_writer *w, int64_t *ptsp, int64_t *durp)
{
    int64_t pts = *ptsp, duration = *durp;
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
    *ptsp = pts;
    *durp = duration;
}

/* A grey .y4m frame of the writer's size goes out as it is: the frame
 * header the muxer writes ("FRAME\n") and the plane in one so_write, not
 * copied into a frame and then through the muxer's buffer (two copies a
 * frame: 0.3 ms of a 1080p frame, the bound of a run to /dev/null or a
 * pipe; docs/bench-log.md).  The same bytes.  1 done, 0 not such a frame,
 * -1 failed. */
static int put_y4m(venc_writer *w, const uint8_t *edge, int width, int height, int pitch,
                   int64_t pts, int64_t duration)
{
    AVIOContext *pb = w->oc->pb;
    if (w->vc->id != VC_WRAPPED || w->pixfmt != AV_PIX_FMT_GRAY8 || !edge || width != w->cw ||
        height != w->ch || pitch != width)
        return 0;
    avio_write(pb, (const unsigned char *)"FRAME\n", 6);
    avio_flush(pb);
    if (pb->error < 0 || so_write(w->out, edge, (size_t)width * (size_t)height) < 0) {
        venc_error(w, "writing", pb->error < 0 ? pb->error : AVERROR(EIO));
        return -1;
    }
    fix_ts(w, &pts, &duration);
    w->last_pts = pts;
    w->last_dur = duration;
    w->nput++;
    return 1;
}

static int put_sized(venc_writer *w, const uint8_t *edge, int width, int height,
                     int pitch, int64_t pts, int64_t duration)
{
    AVFrame *f;
    enc_slot *slot = NULL;
    double t_copy = 0;
    int cw, chh, ret;

    if (!w || w->failed)
        return -1;
    if (sig_stop) {
        w->failed = 1;
        return -1;
    }
    if ((ret = put_y4m(w, edge, width, height, pitch, pts, duration)) != 0)
        return ret < 0 ? -1 : 0;
    if ((width != w->w || height != w->h) && !w->size_noted) {
        ge_note("%s: frame size changed from %dx%d to %dx%d; the video keeps "
                "%dx%d (cropped or padded with 0)", so_name(w->out), w->w, w->h,
                width, height, w->w, w->h);
        w->size_noted = 1;
    }
    if (w->et) {
        /* a free slot, a fresh pooled picture */
        slot = et_slot(w);
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

    fix_ts(w, &pts, &duration);
    if (!w->et && ts_push(w, pts, duration)) {
        venc_error(w, "allocating", AVERROR(ENOMEM));
        return -1;
    }
    f->pts = pts;
    f->pkt_duration = duration;
    if (w->et) {
        et_submit(w->et, slot, duration, ge_now() - t_copy);
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
    return w->et ? 0 : drain_packets(w);
}

int venc_put_sized(venc_writer *w, const uint8_t *edge, int width, int height,
                   int pitch, int64_t pts, int64_t duration)
{
    if (put_sized(w, edge, width, height, pitch, pts, duration) == 0)
        return 0;
    return w ? hand_why(w) : -1;
}

/* A packet coded elsewhere with the writer's own codes goes through the
 * encoder threads' ring like a frame (the slot marked coded: the thread
 * that takes it only passes it to the muxer), so it is muxed in order
 * among the frames coded here; with one encoder (no threads), whose
 * packets come out at once, it is muxed here. */
static void give_loan(void *opaque, uint8_t *data)
{
    buf_loan *l = opaque;
    (void)data;
    l->give_back(l);
}

/* pkt refers to the lent packet (no copy): 0, or -1 (lend nothing, copy) */
static int pkt_lent(AVPacket *pkt, const uint8_t *data, size_t n, int64_t pts,
                    buf_loan *(*lend)(void *), void *lend_ctx)
{
    buf_loan *l = lend(lend_ctx);
    if (!l)
        return -1;
    if (!(pkt->buf = av_buffer_create((uint8_t *)data, (int)n, give_loan, l,
                                      AV_BUFFER_FLAG_READONLY))) {
        l->give_back(l);
        return -1;
    }
    pkt->data = pkt->buf->data;
    pkt->size = (int)n;
    pkt->pts = pkt->dts = pts;
    pkt->flags |= AV_PKT_FLAG_KEY;
    return 0;
}

static int put_coded(venc_writer *w, const uint8_t *data, size_t n, int64_t pts,
                     int64_t duration, buf_loan *(*lend)(void *), void *lend_ctx)
{
    enc_slot *slot = NULL;
    AVPacket *pkt = w->pkt;
    double t0;
    int ret;
    if (w->failed)
        return -1;
    if (sig_stop) {
        w->failed = 1;
        return -1;
    }
    fix_ts(w, &pts, &duration);
    if (w->mkv)
        mkvw_cores_free(w->mkv); /* the GPU coded it */
    if (w->et && !(slot = et_slot(w)))
        return -1;
    if (slot)
        pkt = slot->pkt;
    t0 = ge_now();
    /* mkvw's writers take the packet from where the engine downloaded it
     * (libavformat's muxer would want padding after it) */
    ret = w->mkv && lend ? pkt_lent(pkt, data, n, pts, lend, lend_ctx) : -1;
    if (ret < 0 && (ret = pkt_fill(w, pkt, data, n, pts)) < 0) {
        venc_error(w, "allocating a packet", ret);
        return -1;
    }
    if (slot) {
        slot->coded = 1;
        et_submit(w->et, slot, duration, ge_now() - t0);
    } else if (mux_packet(w, pkt, duration)) {
        return -1;
    }
    w->last_pts = pts;
    w->last_dur = duration;
    w->nput++;
    return 0;
}

int venc_put_coded(venc_writer *w, const uint8_t *data, size_t n, const uint32_t *codes,
                   int width, int height, int64_t pts, int64_t duration,
                   buf_loan *(*lend)(void *lend_ctx), void *lend_ctx)
{
    if (!w || !w->hfyu || width != w->w || height != w->h || !data ||
        n > (size_t)INT_MAX - AV_INPUT_BUFFER_PADDING_SIZE ||
        memcmp(codes, w->hfyu->cl, sizeof w->hfyu->cl))
        return 1;
    if (put_coded(w, data, n, pts, duration, lend, lend_ctx) == 0)
        return 0;
    return hand_why(w);
}

int venc_ffvhuff_codes(uint32_t cl[256])
{
    /* an FFVHuff encoder as a .mkv writer opens it (enc_open; its tables
     * follow the settings, not the size), without a muxer */
    venc_writer wr = {.vc = venc_codec_find(VENC_MKV, "ffvhuff"), .pixfmt = AV_PIX_FMT_GRAY8,
                      .cw = 16, .ch = 16, .tb = {1, 25}, .fps = {25, 1}};
    const AVCodec *codec = avcodec_find_encoder_by_name("ffvhuff");
    AVCodecContext *enc = NULL;
    hfyu_tab t;
    int ret = -1;
    if (codec && wr.vc && enc_open(&wr, codec, 1, NULL, &enc) >= 0 &&
        hfyu_parse(enc->extradata, enc->extradata_size, &t) == 0) {
        memcpy(cl, t.cl, sizeof t.cl);
        ret = 0;
    } else {
        ge_fail("cannot open the ffvhuff encoder");
    }
    avcodec_free_context(&enc);
    return ret;
}

int venc_is_ffvhuff(const char *format_ext, const char *codec)
{
    const venc_codec *c = venc_codec_find(venc_kind(format_ext), codec);
    return c && c->id == VC_FFVHUFF;
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
    int rc = 0, ret, trace = ge_trace("venc");
    double t0 = ge_now(), t_et = 0, t_mkvw = 0;

    if (!wp || !*wp)
        return 0;
    w = *wp;
    *wp = NULL;
    if (w->et)
        et_finish(w, abandon || w->failed); /* failures set w->failed */
    t_et = ge_now() - t0;
    if (!abandon && !w->failed) {
        /* flush: a NULL frame, then every packet up to AVERROR_EOF (the
         * encoder threads were flushed above) */
        if (!w->et) {
            ret = avcodec_send_frame(w->enc, NULL);
            if (ret < 0 && ret != AVERROR_EOF)
                venc_error(w, "flushing the encoder", ret);
            else
                drain_packets(w);
        }
        if (!w->failed && w->mkv) {
            t_mkvw = ge_now();
            ret = mkvw_finish(w->mkv);
            t_mkvw = ge_now() - t_mkvw;
            if (ret)
                venc_error(w, "writing the trailer", AVERROR(-ret));
        } else if (!w->failed) {
            ret = av_write_trailer(w->oc);
            if (ret < 0)
                venc_error(w, "writing the trailer", ret);
        }
        if (!w->failed && w->oc->pb && !w->mkv) {
            avio_flush(w->oc->pb);
            if (w->oc->pb->error < 0)
                venc_error(w, "writing", w->oc->pb->error);
        }
    }
    if (abandon || w->failed)
        rc = -1;
    if (w->oc && w->oc->pb) {
        if (w->hdr_mem) {
            uint8_t *b = NULL;
            avio_close_dyn_buf(w->oc->pb, &b);
            av_free(b);
            w->oc->pb = NULL;
        } else if (w->custom_io) {
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
    if (rc)
        hand_why(w);
    et_free(w);
    mkvw_free(&w->mkv);
    if (trace && w->nput)
        ge_note("venc trace: closing %.1f ms: the encoder threads' last frames muxed and the "
                "threads joined %.1f ms, mkvw_finish (the writers' last packets, the "
                "trailer) %.1f ms", (ge_now() - t0) * 1e3, t_et * 1e3, t_mkvw * 1e3);
    avformat_free_context(w->oc);
    avcodec_free_context(&w->enc);
    av_frame_free(&w->frame);
    av_packet_free(&w->pkt);
    av_buffer_pool_uninit(&w->pool);
    av_buffer_pool_uninit(&w->pkt_pool);
    free(w->hfyu);
    free(w->ts);
    free(w);
    return rc;
}

int venc_encoders_follow_decoder(const char *format_ext, const char *codec, int threads)
{
    int kind = venc_kind(format_ext);
    const venc_codec *vc = kind < 0 ? NULL : venc_codec_find(kind, codec);
    /* et_count: FFVHuff/MagicYUV encoders depend on it from VENC_SHARE_FROM on */
    return vc && vc->frame_par && vc->id != VC_FFV1 && venc_cpu_threads(threads) >= VENC_SHARE_FROM;
}

const char *venc_muxer(const venc_writer *w)
{
    return w && w->mkv ? "mkvw" : "libavformat";
}

int venc_encoders(const venc_writer *w)
{
    return w && w->et ? w->et->n : 1;
}

