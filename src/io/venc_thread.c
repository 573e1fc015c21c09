/*
 * venc_thread.c — frame-parallel intra encoders (.mkv: FFV1, FFVHuff,
 * MagicYUV): several encoders with the same settings code successive
 * frames at once, each on an encoder thread, and the packets are muxed in
 * frame order, so the bytes are one encoder's (see venc.h).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libavutil/cpu.h>

#include "signals.h"
#include "util.h"
#include "venc_internal.h"

/* FFmpeg 5.1's FFV1 encoder (versions 1..3) reserves its worst-case packet,
 * 148 bytes a pixel (+ 16 KiB), zeroed, at its first frame and keeps it
 * until it is closed: 1.2 GB for a 4K frame, in every encoder, and its
 * page faults and zeroing.  That, not the frames in flight, is what each
 * frame-parallel encoder costs. */
#define FFV1_PKT_BYTES_PER_PX 148
/* Frame-parallel FFV1: about this many slice threads an encoder (the rest
 * of --threads become more encoders, at least two from 2 threads on).
 * Measured: BENCHMARKS.md "Constants chosen by measurement". */
#define VENC_FFV1_SLICE_THREADS 4
/* FFVHuff and MagicYUV, an encoder thread: two frames in flight and their packets
 * (at most about 2 bytes a pixel are written of the worst-case ones). */
#define VENC_INTRA_BYTES_PER_PX 8
#define VENC_MAX_ENCODERS 16
/* Default memory for the encoders' packet buffers together (--mem-limit,
 * when given, replaces it): at most this, and at most 1/VENC_RAM_SHARE of
 * physical memory; one encoder is always allowed.  3 GiB keeps 4K at two
 * encoders, whose start (the zeroing above) costs least for short clips. */
#define VENC_MEM_DEFAULT (3ull << 30)
#define VENC_RAM_SHARE 8

int venc_cpu_threads(int t)
{
    int n = t > 0 ? t : av_cpu_count();
    return n < 1 ? 1 : n > 64 ? 64 : n;
}

/* How many encoders of an intra codec code frames at once for `threads`
 * threads, within the memory budget (VENC_MEM_DEFAULT).  FFV1: see
 * VENC_FFV1_SLICE_THREADS; FFVHuff and MagicYUV have no slice threads: one
 * encoder a thread. */
int et_count(const venc_writer *wr, int threads, const venc_opts *o)
{
    int ffv1 = wr->vc->id == VC_FFV1;
    /* FFV1: the packet buffer, the frames in flight (two a thread) and the
     * one the encoder holds; the others: two frames and two packets */
    double per = (double)wr->cw * wr->ch *
                 (ffv1 ? FFV1_PKT_BYTES_PER_PX + 3 : VENC_INTRA_BYTES_PER_PX) + 16384;
    double budget;
    int n;

    if (o && o->encoders > 0) /* asked for (tests, benchmarks) */
        return o->encoders < VENC_MAX_ENCODERS ? o->encoders : VENC_MAX_ENCODERS;
    if (threads < 2)
        return 1;
    /* FFVHuff/MagicYUV: one encoder a thread, but from VENC_SHARE_FROM
     * threads on half of them when software decodes (the decoders need the
     * cores), three quarters when NVDEC does.  Measured: BENCHMARKS.md
     * "Constants chosen by measurement". */
    n = ffv1 ? (threads + VENC_FFV1_SLICE_THREADS - 1) / VENC_FFV1_SLICE_THREADS
        : threads < VENC_SHARE_FROM ? threads
        : o && o->gpu_frames ? threads * 3 / 4 : threads / 2;
    if (n < 2)
        n = 2;
    if (n > VENC_MAX_ENCODERS)
        n = VENC_MAX_ENCODERS;
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

// ---------------------------------------------------------------------------
// The encoder threads

/* FFVHuff's frame coded by hfyu_enc.c: the bytes libavcodec's encoder
 * writes (test_video_io compares them), in less CPU (docs/bench-log.md "Our
 * own FFVHuff coder").  Coded into the thread's kept worst-case buffer, then copied
 * into a packet of its size, as libavcodec does (a fresh worst-case
 * packet a frame costs an mmap and munmap each); the packet as libavcodec
 * makes it: a keyframe, dts = pts. */
static int hfyu_packet(const hfyu_tab *t, enc_thread *l, const AVFrame *f, AVPacket *pkt)
{
    size_t cap = hfyu_max_bytes(t, f->width, f->height), n;
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
    return pkt_fill(l->set->w, pkt, l->buf, n, f->pts);
}

/* One frame through a thread's encoder.  FFV1 returns each frame's packet
 * at once (one packet a frame, in order); an encoder that held one back
 * would break the one-packet-a-slot bookkeeping, so that is an error. */
static int et_code(const hfyu_tab *hfyu, enc_thread *l, enc_slot *s)
{
    if (hfyu)
        return hfyu_packet(hfyu, l, s->frame, s->pkt);
    int ret = avcodec_send_frame(l->enc, s->frame);
    if (ret < 0)
        return ret;
    ret = avcodec_receive_packet(l->enc, s->pkt);
    return ret == AVERROR(EAGAIN) || ret == AVERROR_EOF ? AVERROR_BUG : ret;
}

/* The token holder (p->muxing set by it, mu held on entry and on return):
 * muxes the oldest queued frames while they are coded, in order, with mu
 * released around each.  A failure (an encoder's or the muxer's) stops the
 * threads and wakes the caller, who finds w->failed. */
static void et_mux_ready(enc_threads *p)
{
    venc_writer *w = p->w;
    int first = 1;
    for (;;) {
        enc_slot *s = &p->slots[p->muxed % p->nslots];
        double t0;
        int err, bad, skip;
        if (p->muxed == p->put || !s->done)
            break;
        if (first) {
            p->n_token++;
            first = 0;
        }
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
        s->coded = 0;
        pthread_mutex_lock(&p->mu);
        p->t_last = ge_now();
        p->t_mux += p->t_last - t0;
        p->muxed++;
        if (bad) {
            w->failed = 1; /* also when sig_stop kept venc_error quiet */
            p->stop = 1;
        }
        pthread_cond_broadcast(&p->freed);
    }
}

static void *et_main(void *arg)
{
    enc_thread *l = arg;
    enc_threads *p = l->set;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        enc_slot *s;
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
        err = skip || sig_stop ? AVERROR_EXIT : s->coded ? 0 : et_code(p->w->hfyu, l, s);
        t0 = ge_now() - t0;
        pthread_mutex_lock(&p->mu);
        p->t_code += t0;
        s->err = err < 0 ? err : 0;
        s->done = 1;
        if (p->trace && s->coded) {
            double r = ge_now() - s->t_sub;
            p->t_relay += r;
            p->t_relay_max = r > p->t_relay_max ? r : p->t_relay_max;
        }
        if (!p->muxing) {
            p->muxing = 1;
            et_mux_ready(p);
            p->muxing = 0;
        }
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* Frees the encoder threads' state (the threads must have ended) and the
 * slots; t[0]'s
 * encoder is w->enc and stays. */
void et_free(venc_writer *w)
{
    enc_threads *p = w->et;
    if (!p)
        return;
    w->et = NULL;
    for (int i = 1; p->t && i < p->n; i++)
        avcodec_free_context(&p->t[i].enc);
    for (int i = 0; p->t && i < p->n; i++)
        free(p->t[i].buf);
    for (int i = 0; p->slots && i < p->nslots; i++) {
        av_frame_free(&p->slots[i].frame);
        av_packet_free(&p->slots[i].pkt);
    }
    free(p->t);
    free(p->slots);
    pthread_cond_destroy(&p->work);
    pthread_cond_destroy(&p->freed);
    pthread_mutex_destroy(&p->mu);
    free(p);
}

/* Opens encoders 1..n-1 beside w->enc (t[0]'s) and the ring of slots.
 * Returns 0, or an AVERROR (then nothing is left allocated).  An encoder
 * whose extradata differs from w->enc's would write other bytes than the
 * header promises: AVERROR_BUG (never seen; the caller falls back to one
 * encoder). */
int et_init(venc_writer *w, const AVCodec *codec, int nenc,
            int slice_threads, const venc_opts *o)
{
    enc_threads *p = calloc(1, sizeof *p);
    int ret = AVERROR(ENOMEM);

    if (!p)
        return ret;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->freed, NULL);
    w->et = p;
    p->w = w;
    p->n = nenc;
    p->trace = ge_trace("venc");
    /* two frames a thread: one being coded, one queued or waiting to be
     * muxed behind a slower thread (or the muxer) */
    p->nslots = 2 * nenc;
    p->t = calloc((size_t)nenc, sizeof *p->t);
    p->slots = calloc((size_t)p->nslots, sizeof *p->slots);
    if (!p->t || !p->slots)
        goto fail;
    for (int i = 0; i < p->nslots; i++)
        if (!(p->slots[i].frame = av_frame_alloc()) || !(p->slots[i].pkt = av_packet_alloc()))
            goto fail;
    p->t[0].enc = w->enc;
    for (int i = 0; i < nenc; i++) {
        AVCodecContext *e;
        p->t[i].set = p;
        if (i == 0)
            continue;
        ret = enc_open(w, codec, slice_threads, o, &p->t[i].enc);
        if (ret < 0)
            goto fail;
        e = p->t[i].enc;
        if (e->extradata_size != w->enc->extradata_size ||
            (e->extradata_size > 0 &&
             memcmp(e->extradata, w->enc->extradata, (size_t)e->extradata_size))) {
            ret = AVERROR_BUG;
            goto fail;
        }
    }
    return 0;
fail:
    et_free(w);
    return ret;
}

/* Starts the encoder threads (they inherit the caller's blocked signals).
 * Returns how many started. */
int et_start(venc_writer *w)
{
    enc_threads *p = w->et;
    int n = 0;
    for (int i = 0; i < p->n; i++)
        if (pthread_create(&p->t[i].th, NULL, et_main, &p->t[i]) == 0) {
            p->t[i].running = 1;
            n++;
        }
    return n;
}

/* The slot for the next frame, once the muxer has freed one (all slots
 * in flight: the caller waits for the oldest).  NULL: the output failed. */
enc_slot *et_slot(venc_writer *w)
{
    enc_threads *p = w->et;
    enc_slot *s = NULL;
    double t0 = ge_now(), t;
    int waited = 0;
    pthread_mutex_lock(&p->mu);
    while (!w->failed && p->put - p->muxed >= p->nslots) {
        int idle = !p->muxing; /* the oldest slot not ready: no thread muxes */
        double a = p->trace ? ge_now() : 0;
        waited = 1;
        pthread_cond_wait(&p->freed, &p->mu);
        if (idle && p->trace)
            p->t_wait_idle += ge_now() - a;
    }
    if (!w->failed)
        s = &p->slots[p->put % p->nslots];
    t = ge_now() - t0;
    p->t_wait += t;
    if (waited) {
        p->n_wait++;
        p->t_wait_max = t > p->t_wait_max ? t : p->t_wait_max;
    }
    pthread_mutex_unlock(&p->mu);
    return s;
}

void et_submit(enc_threads *p, enc_slot *s, int64_t dur, double t_copy)
{
    pthread_mutex_lock(&p->mu);
    s->dur = dur;
    if (p->trace) {
        s->t_sub = ge_now();
        if (!p->put)
            p->t_first = s->t_sub;
    }
    p->t_copy += t_copy;
    p->coded += s->coded;
    p->put++;
    pthread_cond_signal(&p->work);
    pthread_mutex_unlock(&p->mu);
}

/* Ends the encoder threads: unless abandoning, every queued frame is coded and muxed
 * first, then each encoder is flushed (these codecs hold nothing back).
 * The threads are joined in every case.  Returns 0, or -1 (failed). */
int et_finish(venc_writer *w, int abandon)
{
    enc_threads *p = w->et;

    pthread_mutex_lock(&p->mu);
    while (!abandon && !w->failed && p->muxed < p->put)
        pthread_cond_wait(&p->freed, &p->mu);
    p->quit = 1;
    if (abandon || w->failed)
        p->stop = 1;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->n; i++)
        if (p->t[i].running) {
            pthread_join(p->t[i].th, NULL);
            p->t[i].running = 0;
        }
    if (ge_trace("venc"))
        fprintf(stderr, "gpuedge: venc trace: %ld frames (%ld coded on the GPU), %d encoder "
                "threads: caller copying %.1f ms, waiting for a slot %.1f ms; muxing %.1f ms; "
                "coding %.1f ms (threads summed, %d slots)\n", p->muxed, p->coded, p->n,
                p->t_copy * 1e3, p->t_wait * 1e3, p->t_mux * 1e3, p->t_code * 1e3, p->nslots);
    if (p->trace && p->muxed)
        ge_note("venc trace: the muxing token is one thread's at a time: muxing %.1f ms of the "
                "%.1f ms from the first frame queued to the last muxed; taken %ld times for %ld "
                "frames; the caller found all %d slots in flight %ld times (longest wait %.2f "
                "ms), %.1f ms of its waiting begun while no thread held the token; a coded "
                "packet from queued to ready for the muxer %.1f ms summed (max %.2f ms)",
                p->t_mux * 1e3, (p->t_last - p->t_first) * 1e3, p->n_token, p->muxed,
                p->nslots, p->n_wait, p->t_wait_max * 1e3, p->t_wait_idle * 1e3,
                p->t_relay * 1e3, p->t_relay_max * 1e3);
    for (int i = 0; i < p->n && !abandon && !w->failed; i++) {
        int ret = avcodec_send_frame(p->t[i].enc, NULL);
        if (ret >= 0) {
            ret = avcodec_receive_packet(p->t[i].enc, w->pkt);
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

