/*
 * venc_mux.c — what the video writer (venc.c) and its encoder threads
 * (venc_thread.c) both call: one encoder opened with the writer's settings,
 * a packet into the muxer with its frame's duration, the writer's one
 * failure.  Nothing here calls venc.c or venc_thread.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>

#include "util.h"
#include "venc_internal.h"
#include "vid_internal.h"

/* Marks the output failed: an errno-style error is a write error that
 * safeout reports; anything else gets our own line. */
void venc_error(venc_writer *w, const char *what, int err)
{
    char eb[AV_ERROR_MAX_STRING_SIZE];
    int e = AVUNERROR(err);
    if (atomic_exchange(&w->failed, 1))
        return; /* one message a writer */
    if (sig_stop && (err == AVERROR_EXIT || e == EINTR))
        return;
    if (e > 0 && e < 4096 && e != ENOMEM && e != EINVAL && e != ENOSYS) {
        so_fail(w->out, e); /* so_abort records "cannot write: ..." */
        return;
    }
    ge_fail_in(so_name(w->out), "cannot encode video: %s: %s", what,
               vid_err_str(err, eb, sizeof eb));
    ge_why_save(&w->why);
    atomic_store(&w->why_ready, 1);
}

/* Allocates and opens one encoder with the writer's settings.  Called once,
 * or once an encoder thread for frame-parallel intra codecs (the same settings but for
 * FFV1's slice threads, which do not change the bytes).  threads: the
 * encoder's threads.  Returns 0 or an AVERROR. */
int enc_open(venc_writer *wr, const AVCodec *codec, int threads,
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
    if (!wr->oc || wr->oc->oformat->flags & AVFMT_GLOBALHEADER) /* (no muxer: a probe) */
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
         * encoder threads expect each frame's packet at once) and they do the
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

// ---------------------------------------------------------------------------
// The muxer

int ts_push(venc_writer *w, int64_t pts, int64_t dur)
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

static void unref_buffer(void *ref)
{
    av_buffer_unref((AVBufferRef **)&ref);
}

/* Muxes one packet from the encoder (or an encoder thread's, with the same time
 * base, and dur its frame's duration; else dur 0 and the duration comes
 * from ts_take).  The packet is unreferenced.  0, or -1 (failed). */
int mux_packet(venc_writer *w, AVPacket *pkt, int64_t dur)
{
    int ret;
    if (dur > 0) {
        pkt->duration = dur; /* an encoder thread's packet: its frame's duration */
    } else if (pkt->pts != AV_NOPTS_VALUE) {
        int64_t d = ts_take(w, pkt->pts);
        if (d > 0)
            pkt->duration = d;
    }
    av_packet_rescale_ts(pkt, w->enc->time_base, w->st->time_base);
    pkt->stream_index = w->st->index;
    if (w->mkv) {
        /* FFVHuff: every packet a keyframe, dts = pts when unset (mux.c);
         * the packet's buffer travels to mkvw's writer threads */
        AVBufferRef *ref = NULL;
        if (!(pkt->flags & AV_PKT_FLAG_KEY))
            ret = -EINVAL;
        else if (av_packet_make_refcounted(pkt) < 0 || !(ref = av_buffer_ref(pkt->buf)))
            ret = -ENOMEM;
        else
            ret = mkvw_put(w->mkv, pkt->data, (size_t)pkt->size,
                           pkt->dts != AV_NOPTS_VALUE ? pkt->dts : pkt->pts, pkt->duration,
                           unref_buffer, ref);
        av_packet_unref(pkt);
        if (ret) {
            venc_error(w, "writing", AVERROR(-ret));
            return -1;
        }
        return 0;
    }
    ret = av_interleaved_write_frame(w->oc, pkt); /* unrefs pkt */
    if (ret < 0) {
        venc_error(w, "writing", ret);
        return -1;
    }
    if (!w->custom_io) /* libavformat writes the temp file itself */
        so_writeback(w->out, avio_tell(w->oc->pb));
    return 0;
}

/* A packet of a megabyte or more, allocated afresh for every frame, costs
 * its page faults at every copy into it (the .mkv writer's thread spent
 * 0.6 ms a 1080p packet: docs/bench-log.md); the pool's buffers are
 * touched once. */
int pkt_fill(venc_writer *w, AVPacket *pkt, const uint8_t *data, size_t n, int64_t pts)
{
    AVBufferRef *b;
    int ret;
    if (w->pkt_pool && n <= (size_t)w->w * w->h && (b = av_buffer_pool_get(w->pkt_pool))) {
        pkt->buf = b;
        pkt->data = b->data;
        pkt->size = (int)n;
        memset(b->data + n, 0, AV_INPUT_BUFFER_PADDING_SIZE);
    } else if ((ret = av_new_packet(pkt, (int)n)) < 0) {
        return ret;
    }
    memcpy(pkt->data, data, n);
    pkt->pts = pkt->dts = pts;
    pkt->flags |= AV_PKT_FLAG_KEY;
    return 0;
}
