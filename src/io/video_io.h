/*
 * video_io.h — video in (libavformat/libavcodec, any container and codec
 * FFmpeg 5.1 reads: vid_read.c) and the image-sequence name helpers
 * (vid_seq.c); the umbrella header the CLI includes, which also brings
 * vid_pixels.h (frame conversion) and venc.h (video out) (DESIGN.md §1.2,
 * §3, §6).
 *
 * Reading: vid_open / vid_next / vid_close, shaped like FFmpeg's
 * doc/examples/demuxing_decoding.c (send/receive, EAGAIN, NULL-packet
 * drain).  vid_next follows frame_source.next: 1 a frame, 0 the end,
 * -1 this file failed (why recorded, DESIGN.md §9; nothing recorded when
 * the failure is an interruption: sig_stop is set then).
 *
 * libav's own logging is silenced (warnings with ge_verbose) the first
 * time this module opens anything, unless someone set a level before.
 */
#ifndef GPUEDGE_VIDEO_IO_H
#define GPUEDGE_VIDEO_IO_H

#include <stddef.h>
#include <stdint.h>
#include <libavutil/pixfmt.h>
#include <libavutil/rational.h>

#include "edge.h"
#include "frames.h"
#include "safeout.h"
#include "venc.h"
#include "vid_pixels.h"

// ---------------------------------------------------------------------------
// Reading

typedef struct vid_opts {
    double start;    /* --start: seconds after the stream's start; <= 0 none */
    long max_frames; /* --frames: frames to deliver; < 0 all */
    int rgb;         /* --rgb: the RGB path even for YUV sources */
    int threads;     /* decoder threads; 0 = as many as CPUs */
    int hwdec;       /* VID_HWDEC_* (hwdec.h; 0 = none): NVDEC frames stay
                        on the device (src_frame.on_device): only for the
                        GPU engine.  auto: H.264/HEVC/VP9/AV1 where
                        libavcodec's CUDA hwaccel takes the stream; nvdec:
                        every codec it has.  Otherwise, and with rgb, and
                        where the hwaccel gives up (at open or mid-file),
                        software (a notice under -v). */
    int device;      /* CUDA device for NVDEC */
    size_t mem_budget; /* vsrc_*: host bytes of frames its segments may
                          hold decoded ahead; 0 = vsrc_host_budget's for
                          one engine (vsource.h) */
    /* Files chained on one decoder (DESIGN.md §4): at the end of an H.264
     * file decoded on NVDEC (or by a one-thread software decoder), from
     * its start and undamaged, the reader asks next_input(next_opaque)
     * for the next file's name (NULL: none).  When that file's stream
     * continues this one's (the same parameter sets, size, format and
     * time base; an IDR first), its packets follow into the same decoder
     * with no drain and no new NVDEC session, and vid_successor hands its
     * reader on once this file's frames are out; else this file drains
     * as usual and the name is the caller's to open.  NULL: never. */
    const char *(*next_input)(void *opaque);
    void *next_opaque;
} vid_opts;

typedef struct vid_reader vid_reader;

typedef struct vid_info {
    int width, height;     /* from the stream header (frames may differ) */
    AVRational time_base;  /* the video stream's: unit of vid_last_ts */
    AVRational frame_rate; /* av_guess_frame_rate; {0,1} when unknown */
    double duration;       /* seconds; -1 when unknown */
    int64_t nb_frames;     /* as the container says (a seekable .y4m: as
                              its size holds, a partial frame included);
                              0 when unknown */
    const char *codec;     /* decoder name */
} vid_info;

/* Is `path` a video (or an animated/multi-frame container) for libav
 * rather than an image for stb?  1 yes, 0 no.  Decided by the extension
 * (stb's image extensions, .gif included, say no; known video extensions
 * say yes), else by libavformat probing the first bytes (an image demuxer
 * or no confident match says no).  "-" (stdin) says yes. */
int vid_probe(const char *path);

/* Opens a video ("-" is stdin; names with "://" are URLs, everything else
 * is a file name, never a protocol).  Returns 0, or -1 with why recorded
 * and *out NULL. */
int vid_open(const char *path, const vid_opts *o, vid_reader **out);
/* The same for n bytes in memory (a custom AVIOContext, seekable; the
 * fuzz harness and tests use it).  `name` (NULL: "(memory)") names the
 * file in the record and hints the demuxer by its extension; buf must stay valid
 * until vid_close. */
int vid_open_mem(const void *buf, size_t n, const char *name,
                 const vid_opts *o, vid_reader **out);
/* Next frame into *fr (fr->f.data points into buf, reserved as needed;
 * fr->job is left to the caller).  1 / 0 end / -1 failed (see above). */
int vid_next(vid_reader *r, src_frame *fr, host_buf *buf);
/* After vid_next returned 0: the next file's reader when this one
 * chained (vid_opts.next_input; it owns the decoder now and goes on from
 * its first frame), else NULL.  The caller owns it; r can be closed. */
vid_reader *vid_successor(vid_reader *r);
/* r's decoder goes on from the keyframe at or before `start` (seconds,
 * as vid_opts.start) in r's file, without a drain or a new decoder (an
 * NVDEC session kept): where its decoding could go on into another file
 * (vid_opts.next_input), that keyframe an IDR, the file seekable.  The
 * frames before `start` are dropped as --start's are, those the decoder
 * held from before included.  0, or -1: r is spent, close it.  For a
 * source that decodes one file's parts in turn (vsource.h). */
int vid_skip_to(vid_reader *r, double start);
/* Frees, silently: the caller reports a damaged input once
 * (vid_corrupt_count; a source of several readers over one file would
 * otherwise say it once a reader).  NULL-safe, sets *r to NULL. */
void vid_close(vid_reader **r);

void vid_get_info(const vid_reader *r, vid_info *info);
/* Decoding errors so far: packets the demuxer flagged or the decoder
 * rejected, frames the decoder marked corrupt, a .y4m ending inside a
 * frame, and error lines the
 * demuxer or decoder logged (FFV1 slice CRC mismatches are only logged:
 * this module installs an av_log callback that counts them, then hands
 * every message to av_log_default_callback). */
long vid_corrupt_count(const vid_reader *r);
/* 1 when the reader decodes on NVDEC (it opened a session; a stream the
 * hwaccel refuses later still goes on in software), else 0. */
int vid_hwdec_active(const vid_reader *r);
/* The last frame vid_next returned, in vid_info.time_base units:
 * pts (AV_NOPTS_VALUE when none) and duration (0 when unknown). */
void vid_last_ts(const vid_reader *r, int64_t *pts, int64_t *duration);
/* src_frame.pts (seconds, -1 = none) back to ticks of tb: exact for every
 * pts vid_next produced; AV_NOPTS_VALUE for -1. */
int64_t vid_seconds_to_ts(double seconds, AVRational tb);

// ---------------------------------------------------------------------------
// Image-sequence names ("frames/e_%05d.png")

/* 1 when `pattern` holds exactly one %d conversion (%0Nd, %%, as
 * av_get_frame_filename2 understands them), else 0.  The pattern is never
 * handed to printf. */
int vid_is_sequence(const char *pattern);
/* Expands `pattern` for frame `index` (>= 0; FFmpeg's image2 starts at 1)
 * into buf.  Returns 0, or -1 (not a valid pattern, index out of range, or
 * the name does not fit in size). */
int vid_sequence_name(const char *pattern, long index, char *buf, size_t size);

#endif
