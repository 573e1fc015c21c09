/*
 * venc.h — edge maps out as video (.mkv, .mp4, .y4m) through libavcodec
 * and libavformat (DESIGN.md §3, §6).
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
 * so_file (so_abort/so_commit record it); any other error records one
 * line "cannot encode video: WHY" for OUTPUT, on the thread that met it;
 * venc_put or venc_close hands it to its caller's thread (DESIGN.md §9).
 * After venc_close returned -1 the caller must so_abort().
 *
 * libav's own logging is silenced (warnings with ge_verbose) the first
 * time this module opens anything, unless someone set a level before.
 */
#ifndef GPUEDGE_VENC_H
#define GPUEDGE_VENC_H

#include <stddef.h>
#include <stdint.h>
#include <libavutil/rational.h>

#include "frames.h"
#include "safeout.h"

typedef struct venc_opts {
    int threads;         /* encoder threads; 0 = as many as CPUs */
    const char *codec;   /* --codec (venc_codec_check's names); NULL = the
                            format's default: ffvhuff for mkv, libx264 for
                            mp4, rawvideo for y4m */
    const char *crf;     /* libx264: CRF as ffmpeg takes it ("18", "23.5");
                            NULL = VENC_DEFAULT_CRF */
    const char *preset;  /* libx264: preset; NULL = VENC_DEFAULT_PRESET */
    int y4m_yuv420;      /* y4m: yuv420p (chroma 128) instead of gray */
    size_t mem_limit;    /* mkv: memory for the frame-parallel encoders
                            (--mem-limit); 0 = 3 GiB or 1/8 of RAM,
                            whichever is less */
    int encoders;        /* intra codecs: encoders coding successive frames
                            at once, each on an encoder thread; 0 = from
                            threads and memory; > 0 (tests, benchmarks)
                            as asked, up to 16 */
    int gpu_frames;      /* the frames come from NVDEC, whose decoders
                            leave the cores free: more encoder threads */
    int mkv_crc;         /* mkv: a CRC-32 element in each cluster (off by
                            default: the muxer's checksum was most of the
                            writer's time, docs/bench-log.md "The .mkv bound"; --mkv-crc) */
    int mkv_via;         /* mkv of FFVHuff: VENC_MKV_AUTO (0: mkvw.h's
                            writers copy into a mapping of a file in RAM
                            whose packets the GPU coded, pwrite otherwise:
                            MKVW_MAP_IN_RAM), VENC_MKV_MAP (a mapping
                            wherever space can be reserved), VENC_MKV_PWRITE,
                            VENC_MKV_LIBAV (libavformat's muxer, the
                            reference tests/unit/test_mkvw.c compares
                            them with) */
} venc_opts;

enum { VENC_MKV_AUTO, VENC_MKV_MAP, VENC_MKV_PWRITE, VENC_MKV_LIBAV };

typedef struct venc_writer venc_writer;

/* libx264's defaults here (--crf, --preset): CRF 18 as before; the preset
 * chosen by measurement (docs/bench-log.md, "Video encoders"). */
#define VENC_DEFAULT_CRF "18"
#define VENC_DEFAULT_PRESET "superfast"

/* Is `ext` ("mkv", ".MP4", ...) a video output format?  1 / 0. */
int venc_format_ok(const char *ext);

/* Can format `ext` hold `codec` (NULL: the default), with the x264
 * `preset` and `crf` (NULL: none given)?  0 yes; -1 with a one-line reason
 * recorded (ge_fail, DESIGN.md §9).  The CLI calls it before any work;
 * venc_open calls it again. */
int venc_codec_check(const char *ext, const char *codec, const char *preset,
                     const char *crf);

/* Opens an encoder and muxer for w x h edge maps into `out`.  time_base:
 * the unit of the pts given to venc_put (normally vid_info.time_base);
 * fps: the nominal rate (vid_info.frame_rate; Y4M's rate, x264's hint and
 * the duration of a first frame given none; {0,1} = unknown -> 25).
 * Returns 0, or -1 with why recorded (out is left to the caller). */
int venc_open(so_file *out, const char *format_ext, int w, int h,
              AVRational time_base, AVRational fps, const venc_opts *o,
              venc_writer **wp);

/* One edge map of the size given to venc_open (pitch bytes a row).
 * pts in time_base units (AV_NOPTS_VALUE, or one not after the previous,
 * is replaced by previous + its duration); duration in the same units,
 * <= 0 = unknown (then the previous frame interval, or 1/fps).  Returns 0,
 * or -1 (why recorded, or the error kept in the so_file). */
int venc_put(venc_writer *w, const uint8_t *edge, int pitch, int64_t pts,
             int64_t duration);
/* The same for a frame of another size (a mid-stream size change of the
 * source): placed top-left, cropped or padded with 0 (no edge), with one
 * ge_note the first time. */
int venc_put_sized(venc_writer *w, const uint8_t *edge, int width, int height,
                   int pitch, int64_t pts, int64_t duration);

/* A frame already coded as FFVHuff (the GPU's hfyu_gpu: the bytes
 * hfyu_enc.c writes) with `codes` (256 entries, code << 5 | length): the
 * packet is muxed in order.  Taken only by an FFVHuff writer of gray8
 * whose tables are exactly these codes, for a frame of the writer's size;
 * otherwise 1 (nothing done: put the frame's pixels with venc_put_sized).
 * 0 taken, -1 as venc_put.  The packet is copied, unless the .mkv writer
 * (mkvw.h) writes it and lend (NULL: never) lends `data`'s memory: it is
 * then given back once written or dropped, from any thread. */
int venc_put_coded(venc_writer *w, const uint8_t *data, size_t n, const uint32_t *codes,
                   int width, int height, int64_t pts, int64_t duration,
                   buf_loan *(*lend)(void *lend_ctx), void *lend_ctx);
/* The codes an FFVHuff .mkv writer codes gray8 edge maps with (its fixed
 * tables), into cl as venc_put_coded takes them.  0, or -1 (recorded). */
int venc_ffvhuff_codes(uint32_t cl[256]);
/* Does a `format_ext` output with `codec` (NULL: the format's default) code
 * FFVHuff, so that venc_put_coded may take its frames?  1 / 0. */
int venc_is_ffvhuff(const char *format_ext, const char *codec);

/* Finishes: flushes the encoder (no frame is lost), writes the trailer and
 * checks every write (pb->error, the close).  abandon: frees without
 * finishing.  Returns 0, or -1 (then so_abort the file).  NULL-safe. */
int venc_close(venc_writer **w, int abandon);

/* Who writes the file: "mkvw" (an FFVHuff .mkv, mkvw.h) or "libavformat". */
const char *venc_muxer(const venc_writer *w);

/* Encoders coding frames at once (one an encoder thread; 1 when coded in
 * venc_put). */
int venc_encoders(const venc_writer *w);
/* 1 when venc_opts.gpu_frames would change how many encoders a `format_ext`
 * output with `codec` (NULL: the default) gets at `threads` (0: the CPUs).
 * (Its name predates "encoder threads": the CLI calls it by this one.) */
int venc_encoders_follow_decoder(const char *format_ext, const char *codec, int threads);

#endif
