/*
 * vid_pixels.c — a decoded frame into a ge_frame: the Y plane as stored or
 * read sample by sample, or RGB24 through libswscale (DESIGN.md §1.2).
 * See vid_pixels.h for the behaviour; the comments here say why.
 */
#include "vid_pixels.h"

#include <limits.h>
#include <string.h>

#include <libavutil/frame.h>
#include <libavutil/imgutils.h>
#include <libavutil/pixdesc.h>

#include "util.h"
#include <libswscale/swscale.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define VID_NATIVE_BE 1
#else
#define VID_NATIVE_BE 0
#endif

/* The flags DESIGN.md §1.2 pins for the RGB path. */
#define VID_SWS_FLAGS (SWS_BITEXACT | SWS_ACCURATE_RND)
/* swscale's vector code may store a little past a row's end. */
#define VID_SWS_SLACK 64

void vid_pack_plane(uint8_t *dst, size_t dst_stride, const uint8_t *src,
                    ptrdiff_t src_linesize, size_t row_bytes, int rows)
{
    for (int y = 0; y < rows; y++)
        memcpy(dst + (size_t)y * dst_stride, src + (ptrdiff_t)y * src_linesize,
               row_bytes);
}

/* yuvj* and grey formats are full range when the frame does not say;
 * plain yuv* is limited (DESIGN.md §1.2, as FFmpeg assumes). */
static int default_full(enum AVPixelFormat fmt, const AVPixFmtDescriptor *d)
{
    return !strncmp(d->name, "yuvj", 4) || d->nb_components <= 2 ||
           fmt == AV_PIX_FMT_YUVJ411P;
}

static int range_is_full(enum AVPixelFormat fmt, enum AVColorRange range)
{
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(fmt);
    if (range == AVCOL_RANGE_JPEG)
        return 1;
    if (range == AVCOL_RANGE_MPEG)
        return 0;
    return d ? default_full(fmt, d) : 0;
}

int vid_luma_params(enum AVPixelFormat fmt, enum AVColorRange range, ge_frame *f)
{
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(fmt);
    int b, shift;

    if (!d || d->nb_components < 1 ||
        (d->flags & (AV_PIX_FMT_FLAG_RGB | AV_PIX_FMT_FLAG_PAL |
                     AV_PIX_FMT_FLAG_HWACCEL | AV_PIX_FMT_FLAG_BITSTREAM |
                     AV_PIX_FMT_FLAG_FLOAT | AV_PIX_FMT_FLAG_BAYER)))
        return -1;
    /* XYZ carries no RGB flag but is not Y'CbCr either. */
    if (fmt == AV_PIX_FMT_XYZ12LE || fmt == AV_PIX_FMT_XYZ12BE)
        return -1;
    b = d->comp[0].depth;
    shift = d->comp[0].shift;
    if (b < 8 || b > 16 || b + shift > 16)
        return -1;
    f->channels = 1;
    f->bytes_per_sample = b + shift > 8 ? 2 : 1;
    f->shift = shift;
    if (range_is_full(fmt, range)) {
        f->offset = 0;
        f->gain = (float)(255.0 / (double)((1 << b) - 1));
    } else {
        f->offset = 16 << (b - 8);
        f->gain = (float)(255.0 / (219.0 * (double)(1 << (b - 8))));
    }
    return 0;
}

/* The Y samples of any layout (packed YUYV, big-endian, Y+alpha...):
 * av_read_image_line2 undoes step, offset, shift and endianness. */
static void read_luma_generic(const AVFrame *fr, const AVPixFmtDescriptor *d,
                              int bps, uint8_t *dst, size_t stride)
{
    uint16_t tmp[256];
    for (int y = 0; y < fr->height; y++) {
        uint8_t *row = dst + (size_t)y * stride;
        /* 256 samples at a time through a 16-bit buffer, then stored at
         * the frame's sample size (rows need not be 2-byte aligned) */
        for (int x0 = 0; x0 < fr->width; x0 += 256) {
            int n = fr->width - x0 < 256 ? fr->width - x0 : 256;
            av_read_image_line2(tmp, (const uint8_t **)fr->data, fr->linesize,
                                d, x0, y, 0, n, 0, 2);
            if (bps == 2)
                memcpy(row + 2 * (size_t)x0, tmp, 2 * (size_t)n);
            else
                for (int x = 0; x < n; x++)
                    row[x0 + x] = (uint8_t)tmp[x];
        }
    }
}

void vid_conv_free(vid_conv *c)
{
    if (c) {
        sws_freeContext(c->sws);
        memset(c, 0, sizeof *c);
    }
}

static int to_rgb24(const AVFrame *fr, vid_conv *c, host_buf *buf, ge_frame *f)
{
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(fr->format);
    size_t stride = (size_t)fr->width * 3;
    int cs = fr->colorspace, full;
    uint8_t *dst[4] = {NULL};
    int dst_ls[4] = {0};

    /* The matrix only matters for Y'CbCr input; out-of-table values
     * (reserved, ICtCp...) fall back to swscale's default (BT.601). */
    if (cs < 0 || cs > AVCOL_SPC_BT2020_CL || cs == AVCOL_SPC_RGB)
        cs = SWS_CS_DEFAULT;
    full = range_is_full(fr->format, fr->color_range);
    if (stride > INT_MAX) {
        return ge_fail("frame too wide");
    }
    if (!c->sws || c->fmt != fr->format || c->w != fr->width || c->h != fr->height) {
        sws_freeContext(c->sws);
        c->sws = sws_getContext(fr->width, fr->height, fr->format, fr->width,
                                fr->height, AV_PIX_FMT_RGB24, VID_SWS_FLAGS,
                                NULL, NULL, NULL);
        c->fmt = fr->format;
        c->w = fr->width;
        c->h = fr->height;
        c->cs = -1;
        if (!c->sws) {
            return ge_fail("cannot convert this pixel format to RGB");
        }
    }
    /* Y'CbCr and grey sources: their matrix and range (grey has no matrix
     * but its range still scales Y). */
    if (d && !(d->flags & (AV_PIX_FMT_FLAG_RGB | AV_PIX_FMT_FLAG_PAL)) &&
        (c->cs != cs || c->full != full)) {
        /* Output full-range RGB (1), unit brightness/contrast/saturation. */
        sws_setColorspaceDetails(c->sws, sws_getCoefficients(cs), full,
                                 sws_getCoefficients(SWS_CS_DEFAULT), 1, 0,
                                 1 << 16, 1 << 16);
        c->cs = cs;
        c->full = full;
    }
    if (host_buf_reserve(buf, stride * (size_t)fr->height + VID_SWS_SLACK)) {
        return ge_fail("out of memory");
    }
    dst[0] = buf->p;
    dst_ls[0] = (int)stride;
    if (sws_scale(c->sws, (const uint8_t *const *)fr->data, fr->linesize, 0,
                  fr->height, dst, dst_ls) != fr->height) {
        return ge_fail("RGB conversion failed");
    }
    f->channels = 3;
    f->bytes_per_sample = 1;
    f->stride = stride;
    f->shift = 0;
    f->offset = 0;
    f->gain = 1.0f;
    return 0;
}

int vid_frame_to_ge(const AVFrame *fr, int force_rgb, vid_conv *conv,
                    host_buf *buf, ge_frame *f)
{
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(fr->format);

    memset(f, 0, sizeof *f);
    if (!d || fr->width <= 0 || fr->height <= 0) {
        return ge_fail("frame without a size or pixel format");
    }
    f->width = fr->width;
    f->height = fr->height;
    if (!force_rgb && vid_luma_params(fr->format, fr->color_range, f) == 0) {
        int bps = f->bytes_per_sample;
        size_t row = (size_t)fr->width * (size_t)bps;
        if (host_buf_reserve(buf, row * (size_t)fr->height)) {
            return ge_fail("out of memory");
        }
        f->stride = row;
        if (d->comp[0].plane == 0 && d->comp[0].offset == 0 &&
            d->comp[0].step == bps &&
            (bps == 1 || !!(d->flags & AV_PIX_FMT_FLAG_BE) == VID_NATIVE_BE)) {
            /* The Y plane as stored: shift (P010) is left to the engines. */
            vid_pack_plane(buf->p, row, fr->data[0], fr->linesize[0], row,
                           fr->height);
        } else {
            read_luma_generic(fr, d, bps, buf->p, row);
            f->shift = 0; /* av_read_image_line2 already shifted */
        }
    } else if (to_rgb24(fr, conv, buf, f)) {
        return -1;
    }
    f->data = buf->p;
    return 0;
}

