/*
 * hwdec.h — NVDEC through libavcodec's CUDA hwaccel (DESIGN.md §1.9, §4), for
 * vid_read.c's reader: which decoder and streams qualify, the CUDA device
 * context (the runtime's primary context, shared with the engine), and
 * decoded CUDA frames turned into device-resident src_frames
 * (frames.h's on_device / ready / release contract).
 *
 * libcuda is never linked: libavutil loads it (and libnvcuvid) at run
 * time, so on a machine without the driver hw_open fails with a reason.
 */
#ifndef GPUEDGE_HWDEC_H
#define GPUEDGE_HWDEC_H

#include <stddef.h>
#include <libavcodec/avcodec.h>

#include "frames.h"

/* --hwdec (vid_opts.hwdec).  0 is "none" so that a zeroed vid_opts
 * decodes in software. */
enum { VID_HWDEC_NONE = 0, VID_HWDEC_AUTO = 1, VID_HWDEC_NVDEC = 2 };

/* Codecs --hwdec=auto sends to NVDEC: those whose standards define the
 * decoded picture exactly (DESIGN.md §1.9: H.264, HEVC, VP9, AV1), so NVDEC's
 * frames equal libavcodec's.  1 / 0.  (Here, not in hwdec.c: the CPU-only
 * variant's readers apply the same --hwdec=auto rule.) */
static inline int hw_codec_exact(enum AVCodecID id)
{
    return id == AV_CODEC_ID_H264 || id == AV_CODEC_ID_HEVC || id == AV_CODEC_ID_VP9 ||
           id == AV_CODEC_ID_AV1;
}

/* A decoder for `id` with libavcodec's CUDA hwaccel (an
 * AV_CODEC_HW_CONFIG_METHOD_HW_DEVICE_CTX config for AV_PIX_FMT_CUDA),
 * preferring `sw` itself; never a wrapper (*_cuvid).  NULL when none.
 * *hw_only is set when the decoder found is not `sw` (AV1: libdav1d
 * decodes in software, FFmpeg's own av1 decoder only through a hwaccel). */
const AVCodec *hw_find_decoder(const AVCodec *sw, int *hw_only);

typedef struct hw_dec hw_dec;

/* Makes a CUDA device context for GPU `device` (primary context) and, when
 * dec is not NULL, attaches it to dec (before avcodec_open2); with a stream of its own for the copies
 * out of the decoder's surfaces.  Makes `device` current on the calling
 * thread.  Returns 0, or -1 with a one-phrase reason recorded (ge_fail,
 * DESIGN.md §9). */
int hw_open(AVCodecContext *dec, int device, hw_dec **out);
/* The device context (for AVCodecContext.hw_device_ctx: take a ref). */
AVBufferRef *hw_device_ref(hw_dec *h);
/* NULL-safe; frames already handed out stay valid (they hold their own
 * references).  Sets *h to NULL. */
void hw_close(hw_dec **h);

/* For a decoded AV_PIX_FMT_CUDA frame: the luma plane of its surface as a
 * ge_frame (device pointer, pitch, DESIGN.md §1.2 range expansion from the
 * decoder's software format `sw_fmt` and the frame's color_range: P010 /
 * P016 samples keep their MSB alignment, shift = 16 - bit depth).
 * Returns 0, or -1 with the reason recorded (ge_fail, DESIGN.md §9). */
int hw_describe(const AVFrame *frame, enum AVPixelFormat sw_fmt, ge_frame *g);
/* Takes frame's reference (frame is left blank) into a token released
 * through fr->release, records fr->ready on the hw stream, and marks fr
 * on_device.  Returns 0, or -1 with the reason recorded (frame left as it
 * was). */
int hw_take(hw_dec *h, AVFrame *frame, src_frame *fr);
/* GPU memory a device frame made by hw_take holds (its CUDA frame pool
 * buffers: NV12 about 1.5 x pitch x height); 0 for any other frame. */
size_t hw_frame_bytes(const src_frame *fr);

/* A device frame made by hw_take moved off its decoder surface: its luma
 * plane is copied (device to device, same pitch) into a buffer of a
 * process-wide cache and the surface goes back to the decoder before this
 * returns.  Needed wherever decoded frames are held longer than one at a
 * time: FFmpeg 5.1's NVDEC hands out the mapped decoder surface itself
 * (no copy), and a session has only its DPB plus ~5 surfaces
 * (initial_pool_size), so a decoder whose frames are queued runs out of
 * surfaces at about its 10th held frame ("No decoder surfaces left": the
 * frame then comes out with no data, or, for HEVC, concealed).  fr keeps
 * its ready event (recorded after the copy) and its release (the buffer
 * goes back to the cache).  A frame that is not hw_take's is left alone.
 * Returns 0, or -1 with the reason recorded (fr left as it was). */
int hw_detach(src_frame *fr);
/* Is fr still on its decoder surface (hw_take's, not detached)?  1 / 0. */
int hw_on_surface(const src_frame *fr);
/* hw_detach's buffers so far: cudaMallocs made, their seconds, bytes cached
 * (GPUEDGE_TRACE=vsrc). */
void hw_detach_stats(long *mallocs, double *seconds, size_t *cached);
/* Device `device`'s free memory in bytes (0 when CUDA cannot say). */
size_t hw_mem_free(int device);

#endif
