/*
 * video_io.h — video in (libavformat/libavcodec, any container and codec
 * FFmpeg 5.1 reads) and out (.mkv FFV1, .mp4 H.264, .y4m), plus the
 * image-sequence name helpers (DESIGN.md §1.2, §3, §6).
 *
 * Reading: vid_open / vid_next / vid_close, shaped like FFmpeg's
 * doc/examples/demuxing_decoding.c (send/receive, EAGAIN, NULL-packet
 * drain).  vid_next follows frame_source.next: 1 a frame, 0 the end,
 * -1 this file failed (one message printed; nothing printed when the
 * failure is an interruption: sig_stop is set then).
 *
 * What a frame becomes (DESIGN.md §1.2):
 *   YUV / grey sources: the luma path.  Only the Y plane is handed on,
 *     1 byte a sample for 8 bits, 2 bytes (native endian) for 9..16 bits,
 *     packed into the host_buf (any linesize, negative too), with
 *     offset/gain from the frame's range: the frame's color_range when
 *     set, else full for yuvj* and grey formats and limited for yuv*.
 *     MSB-aligned formats (P010...) keep their samples and set `shift`.
 *   RGB-family sources (rgb24, bgr24, gbrp, pal8, rgba, xyz, float,
 *     bayer, 1-bit...) and vid_opts.rgb: libswscale to RGB24 with
 *     SWS_BITEXACT | SWS_ACCURATE_RND and the frame's own matrix and
 *     range; channels 3, gain 1.
 *   Sizes and formats may change between frames: each frame carries its
 *   own descriptor.  Display rotation (a display-matrix side data) and the
 *   sample aspect ratio are ignored: the edge map is of the stored
 *   picture, pixel for pixel.
 *
 * Writing: venc_open / venc_put / venc_close into an so_file (safeout.h):
 *   "mkv"  lossless gray8, every frame a keyframe, every frame's pts and
 *          duration kept (VFR), in one of (venc_opts.codec):
 *          ffvhuff (the default) median prediction, context 0 (fixed
 *            tables in the extradata): the least CPU a frame of the
 *            lossless codecs, about 0.3-0.45 of raw on edge maps;
 *          magicyuv median prediction: smaller on sparse edges, a little
 *            more CPU; FFmpeg 5.1 decodes its grey as limited range (tv);
 *          ffv1 version 3 (level 3), Golomb-Rice, slice CRCs, 16 slices
 *            from 512x512 pixels on, else 4 (the count follows the frame
 *            size only); frames too small for a 4-slice grid (FFmpeg 5.1's
 *            v3 slice header cannot code a grid as wide or as high as the
 *            frame: 1- and 2-pixel sides) are written as FFV1 version 1;
 *            the smallest files, 4-7 times the CPU of ffvhuff;
 *          rawvideo (Y800), one encoder;
 *          libx264 as for "mp4" below (lossy).
 *          Intra codecs (ffvhuff, magicyuv, ffv1) with 2 threads or more:
 *          several encoders with the same settings code successive frames
 *          at once (every frame stands alone) on threads of this module
 *          (FFVHuff and MagicYUV: one encoder a thread; FFV1: the threads
 *          split between encoders and their slices), and the packets are
 *          muxed in frame order: the same bytes as one encoder, whatever
 *          venc_opts.threads.  venc_put then only copies the frame into a
 *          free slot (waiting while all are in flight, muxing the finished
 *          ones); an encoder's error surfaces at a later venc_put or at
 *          venc_close.  Each FFV1 encoder holds FFmpeg 5.1's worst-case
 *          packet buffer (148 bytes a pixel: 1.2 GB at 4K), so their number
 *          is also bounded by memory (venc_opts.mem_limit).
 *   "mp4"  H.264 (libx264) yuv420p, Y = edge value, chroma 128, tagged
 *          full range (AVCOL_RANGE_JPEG, the VUI full-range flag) so that
 *          0..255 means black..white; CRF 18 and preset superfast by
 *          default (venc_opts.crf/preset); x264's own threads follow
 *          venc_opts.threads, and so do its bytes.  Odd widths or
 *          heights are padded by one column/row of 0 (4:2:0 cannot code
 *          odd sizes): the video is then (W+1)x(H+1).  Streamed (pipe)
 *          MP4 is fragmented and coded without B-frames so that the pts
 *          are kept without an edit list.
 *   "y4m"  yuv4mpegpipe (through the wrapped_avframe encoder, which is
 *          what FFmpeg 5.1's muxer accepts), gray8 ("Cmono") by default
 *          or yuv420p with venc_opts.y4m_yuv420; tagged full range; the
 *          frame rate is kept, timestamps are not (Y4M has none).
 * Audio and all other streams are dropped.  Regular outputs are written
 * to so_path() (the temp file) with the muxer named explicitly; direct
 * outputs ("-", pipes, devices) go through so_write() and are streamed
 * (mp4 then fragmented).  Errors: a write error is recorded in the
 * so_file (so_abort/so_commit print it); any other error prints one line
 * "gpuedge: OUTPUT: cannot encode video: WHY".  After venc_close returned
 * -1 the caller must so_abort().
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

struct AVFrame;
struct SwsContext;

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
} vid_opts;

typedef struct vid_reader vid_reader;

typedef struct vid_info {
    int width, height;     /* from the stream header (frames may differ) */
    AVRational time_base;  /* the video stream's: unit of vid_last_ts */
    AVRational frame_rate; /* av_guess_frame_rate; {0,1} when unknown */
    double duration;       /* seconds; -1 when unknown */
    int64_t nb_frames;     /* as the container says; 0 when unknown */
    const char *codec;     /* decoder name */
} vid_info;

/* Is `path` a video (or an animated/multi-frame container) for libav
 * rather than an image for stb?  1 yes, 0 no.  Decided by the extension
 * (stb's image extensions, .gif included, say no; known video extensions
 * say yes), else by libavformat probing the first bytes (an image demuxer
 * or no confident match says no).  "-" (stdin) says yes. */
int vid_probe(const char *path);

/* Opens a video ("-" is stdin; names with "://" are URLs, everything else
 * is a file name, never a protocol).  Returns 0, or -1 with one message
 * and *out NULL. */
int vid_open(const char *path, const vid_opts *o, vid_reader **out);
/* The same for n bytes in memory (a custom AVIOContext, seekable; the
 * fuzz harness and tests use it).  `name` (NULL: "(memory)") labels the
 * messages and hints the demuxer by its extension; buf must stay valid
 * until vid_close. */
int vid_open_mem(const void *buf, size_t n, const char *name,
                 const vid_opts *o, vid_reader **out);
/* Next frame into *fr (fr->f.data points into buf, reserved as needed;
 * fr->job is left to the caller).  1 / 0 end / -1 failed (see above). */
int vid_next(vid_reader *r, src_frame *fr, host_buf *buf);
/* Frees; prints "gpuedge: FILE: N decoding errors (corrupt data skipped
 * or concealed)" (ge_note) when decoding met any.  NULL-safe, sets *r to
 * NULL. */
void vid_close(vid_reader **r);

void vid_get_info(const vid_reader *r, vid_info *info);
/* Decoding errors so far: packets the demuxer flagged or the decoder
 * rejected, frames the decoder marked corrupt, and error lines the
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
// Frame conversion (used by vid_next; public for tests and other callers)

/* Conversion state kept between frames (the swscale context). */
typedef struct vid_conv {
    struct SwsContext *sws;
    int fmt, w, h, cs, full; /* what sws was set up for */
} vid_conv;
void vid_conv_free(vid_conv *c);

/* DESIGN.md §1.2 luma parameters for `fmt` with `range`: fills bytes_per_sample,
 * shift, offset, gain and channels = 1 of *f.  Returns 0, or -1 when fmt
 * is not a YUV/grey format with an 8..16-bit Y plane. */
int vid_luma_params(enum AVPixelFormat fmt, enum AVColorRange range, ge_frame *f);

/* Converts one decoded frame into buf and describes it in *f (f->data =
 * buf->p).  force_rgb: the RGB path for any format.  Returns 0, or -1 with
 * *why set to a static reason (out of memory, unsupported format). */
int vid_frame_to_ge(const struct AVFrame *frame, int force_rgb, vid_conv *conv,
                    host_buf *buf, ge_frame *f, const char **why);

/* Copies `rows` rows of `row_bytes` from src (rows `src_linesize` apart,
 * negative for bottom-up planes) to dst (rows dst_stride apart). */
void vid_pack_plane(uint8_t *dst, size_t dst_stride, const uint8_t *src,
                    ptrdiff_t src_linesize, size_t row_bytes, int rows);

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

// ---------------------------------------------------------------------------
// Writing

typedef struct venc_opts {
    int threads;         /* encoder threads; 0 = as many as CPUs */
    const char *codec;   /* --codec (venc_codec_check's names); NULL = the
                            format's default (venc_default_codec) */
    const char *crf;     /* libx264: CRF as ffmpeg takes it ("18", "23.5");
                            NULL = VENC_DEFAULT_CRF */
    const char *preset;  /* libx264: preset; NULL = VENC_DEFAULT_PRESET */
    int y4m_yuv420;      /* y4m: yuv420p (chroma 128) instead of gray */
    size_t mem_limit;    /* mkv: memory for the frame-parallel encoders
                            (--mem-limit); 0 = 3 GiB or 1/8 of RAM,
                            whichever is less */
    int lanes;           /* intra codecs: encoders coding successive frames
                            at once; 0 = from threads and memory; > 0
                            (tests, benchmarks) as asked, up to 16 */
    int gpu_frames;      /* the frames come from NVDEC, whose decoders
                            leave the cores free: more lanes (venc_lanes) */
} venc_opts;

typedef struct venc_writer venc_writer;

/* libx264's defaults here (--crf, --preset): CRF 18 as before; the preset
 * chosen by measurement (BENCHMARKS.md, "Video encoders (issue 11)"). */
#define VENC_DEFAULT_CRF "18"
#define VENC_DEFAULT_PRESET "superfast"

/* Is `ext` ("mkv", ".MP4", ...) a video output format?  1 / 0. */
int venc_format_ok(const char *ext);

/* The codec a video format gets without --codec ("ffvhuff" for mkv,
 * "libx264" for mp4, "rawvideo" for y4m); NULL for other extensions. */
const char *venc_default_codec(const char *ext);
/* Can format `ext` hold `codec` (NULL: the default), with the x264
 * `preset` and `crf` (NULL: none given)?  0 yes; -1 with a one-line reason
 * in why[size] (no "gpuedge:" prefix).  The CLI calls it before any work;
 * venc_open calls it again. */
int venc_codec_check(const char *ext, const char *codec, const char *preset,
                     const char *crf, char *why, size_t size);

/* Opens an encoder and muxer for w x h edge maps into `out`.  time_base:
 * the unit of the pts given to venc_put (normally vid_info.time_base);
 * fps: the nominal rate (vid_info.frame_rate; Y4M's rate, x264's hint and
 * the duration of a first frame given none; {0,1} = unknown -> 25).
 * Returns 0, or -1 with the message printed (out is left to the caller). */
int venc_open(so_file *out, const char *format_ext, int w, int h,
              AVRational time_base, AVRational fps, const venc_opts *o,
              venc_writer **wp);

/* One edge map of the size given to venc_open (pitch bytes a row).
 * pts in time_base units (AV_NOPTS_VALUE, or one not after the previous,
 * is replaced by previous + its duration); duration in the same units,
 * <= 0 = unknown (then the previous frame interval, or 1/fps).  Returns 0,
 * or -1 (message printed or error recorded in the so_file). */
int venc_put(venc_writer *w, const uint8_t *edge, int pitch, int64_t pts,
             int64_t duration);
/* The same for a frame of another size (a mid-stream size change of the
 * source): placed top-left, cropped or padded with 0 (no edge), with one
 * ge_note the first time. */
int venc_put_sized(venc_writer *w, const uint8_t *edge, int width, int height,
                   int pitch, int64_t pts, int64_t duration);

/* Finishes: flushes the encoder (no frame is lost), writes the trailer and
 * checks every write (pb->error, the close).  abandon: frees without
 * finishing.  Returns 0, or -1 (then so_abort the file).  NULL-safe. */
int venc_close(venc_writer **w, int abandon);

/* Frames written so far and the size of the coded picture (padded for
 * odd mp4 sizes). */
long venc_frames(const venc_writer *w);
/* Encoders coding frames at once (the lanes; 1 when coded in venc_put). */
int venc_encoders(const venc_writer *w);
/* 1 when venc_opts.gpu_frames would change how many encoders a `format_ext`
 * output with `codec` (NULL: the default) gets at `threads` (0: the CPUs). */
int venc_lanes_follow_decoder(const char *format_ext, const char *codec, int threads);
void venc_coded_size(const venc_writer *w, int *cw, int *ch);

#endif
