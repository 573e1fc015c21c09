/*
 * venc_internal.h — the video writer's state, shared by venc.c (the
 * writer: open, put, close), venc_thread.c (encoder threads coding
 * successive frames at once), venc_mux.c (one encoder's settings, the
 * muxer) and venc_codecs.c; not for other callers.  venc.c calls the other
 * three, venc_thread.c calls venc_mux.c, never the other way.
 */
#ifndef GPUEDGE_VENC_INTERNAL_H
#define GPUEDGE_VENC_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>

#include "hfyu_enc.h"
#include "mkvw.h"
#include "util.h"
#include "venc.h"

enum { VENC_MKV, VENC_MP4, VENC_Y4M };

/* What each container holds (the muxers' codec tags: Matroska takes
 * FFVHuff and MagicYUV through their VfW FourCCs, raw video as
 * V_UNCOMPRESSED; MP4 takes H.264 of these; Y4M only raw frames).
 * frame_par: every frame stands alone (intra-only, no state carried from
 * frame to frame, the same extradata in every encoder), so several
 * encoders may code successive frames at once and write the bytes one
 * would. */
enum { VC_FFV1, VC_FFVHUFF, VC_MAGICYUV, VC_RAW, VC_X264, VC_WRAPPED };
typedef struct venc_codec {
    const char *name;  /* --codec */
    const char *lib;   /* libavcodec's encoder */
    int id;            /* VC_* */
    unsigned in;       /* containers: 1 << VENC_* */
    int frame_par;
} venc_codec;

/* From this many threads FFVHuff/MagicYUV get fewer encoder threads than
 * threads, how many depending on the decoder (et_count). */
#define VENC_SHARE_FROM 8

typedef struct ts_entry {
    int64_t pts, dur;
} ts_entry;

/* Frame-parallel encoders (.mkv: FFV1, FFVHuff, MagicYUV).  Every frame is
 * coded from itself alone (FFV1: gop_size 1, its range coder states reset
 * for each), so `nenc` encoders opened with the same settings (same
 * extradata: checked) can each code a different frame at once, and muxing
 * their packets in frame order writes the very bytes one encoder would.
 * Frames wait in a ring of `nslots`; the thread calling venc_put fills
 * slots (a copy of the edge map) and goes back to its caller.  Encoder
 * threads take slots in order, any thread any slot; the thread that
 * finishes a frame muxes it, and every coded frame after it, when no other
 * is muxing (the `muxing` token, under mu): so the muxer (Matroska's copies
 * and CRC-32s, the writes) runs beside the caller and the other encoder
 * threads, one frame at a time and in order, and the caller waits only
 * when all slots are in flight.  Nothing but the token holder touches the
 * muxer or the so_file until the encoder threads have ended. */
typedef struct enc_slot {
    AVFrame *frame;
    AVPacket *pkt;
    int64_t dur; /* the frame's duration (the packet's: intra, one a frame) */
    int err;     /* 0, or the AVERROR its encoder failed with */
    int done;    /* coded (or failed): the token holder may mux it */
    int coded;   /* pkt came coded (venc_put_coded): nothing to code */
    double t_sub; /* GPUEDGE_TRACE=venc: when it was queued */
} enc_slot;

struct enc_threads;

/* One encoder and the thread that runs it. */
typedef struct enc_thread {
    struct enc_threads *set;
    AVCodecContext *enc;
    pthread_t th;
    int running;
    uint8_t *buf;   /* hfyu_packet's worst-case buffer, kept */
    size_t buf_cap;
} enc_thread;

/* A writer's encoder threads, their slots and the muxing token. */
typedef struct enc_threads {
    pthread_mutex_t mu;
    pthread_cond_t work;  /* a slot was queued, or quit was set */
    pthread_cond_t freed; /* a slot was muxed (free again), or muxing failed */
    struct venc_writer *w;
    enc_thread *t;  /* n of them; t[0].enc is the writer's enc */
    enc_slot *slots;
    int n, nslots;
    long put, take; /* frames queued, frames taken by threads (under mu) */
    long muxed;     /* frames muxed (under mu) */
    long coded;     /* of the frames queued, those that came coded (under mu) */
    int muxing;     /* a thread holds the muxing token (under mu) */
    int quit;       /* no more frames: threads exit once nothing is queued */
    int stop;       /* abandoning or failed: threads skip what is queued */
    /* GPUEDGE_TRACE=venc: seconds the caller spent copying and waiting
     * for a free slot, and the threads muxing and coding (under mu) */
    double t_copy, t_wait, t_mux, t_code;
    /* and (under mu): the caller's waits for a slot, their longest, those
     * begun while no thread held the muxing token; a coded packet from
     * its queueing to ready for the muxer (an encoder thread woken to pass
     * it on); the token's takings; the first frame queued, the last
     * muxed */
    int trace;
    long n_wait, n_token;
    double t_wait_max, t_wait_idle, t_relay, t_relay_max, t_first, t_last;
} enc_threads;

struct venc_writer {
    so_file *out;
    int kind;
    const venc_codec *vc;
    enum AVPixelFormat pixfmt;
    int slices;         /* FFV1's count (0: version 1) */
    AVFormatContext *oc;
    AVCodecContext *enc; /* the encoder (et->t[0]'s when frame-parallel) */
    AVStream *st;
    AVFrame *frame;
    AVPacket *pkt;
    AVBufferPool *pool; /* mkv: gray8 picture buffers, linesize a row */
    int linesize;
    enc_threads *et;    /* mkv, frame-parallel; NULL: coded in venc_put */
    hfyu_tab *hfyu;     /* FFVHuff coded by hfyu_enc.c on the encoder threads (the
                           tables of enc's extradata); NULL: libavcodec */
    AVBufferPool *pkt_pool; /* with hfyu: packets of up to w x h bytes (pkt_fill) */
    int custom_io;     /* pb is ours (over so_write), not avio_open's */
    int hdr_mem;       /* FFVHuff .mkv: pb is a dynamic buffer, the
                          header in memory for mkvw */
    mkvw *mkv;         /* the .mkv written by mkvw (mkvw.h); NULL: by
                          libavformat's muxer */
    int w, h;          /* the edge maps' size */
    int cw, ch;        /* the coded size (padded for 4:2:0) */
    AVRational tb;     /* the caller's pts unit == encoder time base */
    AVRational fps;
    int64_t last_pts, last_dur;
    long nput;
    int size_noted;
    /* set once (venc_error); the threads' muxer sets it too, so atomic */
    _Atomic int failed;
    /* What venc_error recorded, on whichever thread (an encoder thread's
     * record is its own): venc_put and venc_close hand it to their
     * caller's thread once (DESIGN.md §9).  why_ready publishes it. */
    ge_why_rec why;    /* written once: venc_error runs once a writer */
    _Atomic int why_ready;
    int why_given;
    ts_entry *ts;      /* durations of frames inside the encoder, by pts */
    size_t nts, cap_ts;
};

/* venc_codecs.c */
/* ext ("mkv", ".MP4") in lower case without its dot, into buf. */
const char *venc_ext_of(const char *ext, char *buf, size_t n);
/* VENC_* for an output extension, or -1. */
int venc_kind(const char *ext);
/* The entry for `name` (NULL: the default) in container `kind`, or NULL. */
const venc_codec *venc_codec_find(int kind, const char *name);

/* venc_mux.c: what venc.c and venc_thread.c both call */
void venc_error(venc_writer *w, const char *what, int err);
int enc_open(venc_writer *wr, const AVCodec *codec, int threads,
             const venc_opts *o, AVCodecContext **out);
/* A frame's duration kept by pts until its packet comes out (0, -1 out
 * of memory); mux_packet takes it back. */
int ts_push(venc_writer *w, int64_t pts, int64_t dur);
int mux_packet(venc_writer *w, AVPacket *pkt, int64_t dur);
/* pkt gets a copy of n bytes of data, in a buffer of the writer's packet
 * pool when it fits, and is made a keyframe at pts (dts = pts).  0 or an
 * AVERROR. */
int pkt_fill(venc_writer *w, AVPacket *pkt, const uint8_t *data, size_t n, int64_t pts);

/* venc_thread.c */
int venc_cpu_threads(int t);
int et_count(const venc_writer *wr, int threads, const venc_opts *o);
int et_init(venc_writer *w, const AVCodec *codec, int nenc, int slice_threads,
            const venc_opts *o);
int et_start(venc_writer *w);
enc_slot *et_slot(venc_writer *w);
void et_submit(enc_threads *p, enc_slot *s, int64_t dur, double t_copy);
int et_finish(venc_writer *w, int abandon);
void et_free(venc_writer *w);

#endif
