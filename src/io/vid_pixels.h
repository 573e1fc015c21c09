/*
 * vid_pixels.h — a decoded libav frame into a ge_frame: the luma path or
 * RGB24 through libswscale (DESIGN.md §1.2).  Used by the video reader
 * (video_io.h) and by hwdec.c for NVDEC's surfaces.
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
 */
#ifndef GPUEDGE_VID_PIXELS_H
#define GPUEDGE_VID_PIXELS_H

#include <stddef.h>
#include <stdint.h>
#include <libavutil/pixfmt.h>

#include "frames.h"

struct AVFrame;
struct SwsContext;

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
 * the reason recorded (ge_fail, DESIGN.md §9: out of memory, unsupported
 * format). */
int vid_frame_to_ge(const struct AVFrame *frame, int force_rgb, vid_conv *conv,
                    host_buf *buf, ge_frame *f);

/* Copies `rows` rows of `row_bytes` from src (rows `src_linesize` apart,
 * negative for bottom-up planes) to dst (rows dst_stride apart). */
void vid_pack_plane(uint8_t *dst, size_t dst_stride, const uint8_t *src,
                    ptrdiff_t src_linesize, size_t row_bytes, int rows);

#endif
