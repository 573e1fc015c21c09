/*
 * imgav_pixels.c — a frame from libavcodec's image decoders into
 * img_image's layouts (DESIGN.md §1.2): samples copied, scaled, from
 * float or a palette, through libswscale, or lossy WebP's Y'CbCr as
 * libwebp converts it.
 */
#include "image_av.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <libavutil/frame.h>
#include <libavutil/intreadwrite.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>

#include "imgav_internal.h"
#include "util.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define IMGAV_NATIVE_BE 1
#else
#define IMGAV_NATIVE_BE 0
#endif

/* DESIGN.md §1.2's conversion flags. */
#define IMGAV_SWS_FLAGS (SWS_BITEXACT | SWS_ACCURATE_RND)

// ---------------------------------------------------------------------------
// Pixel formats to img_image's layouts

/* What a decoded pixel format becomes: channels, bytes a sample, and how.
 * Returns 0, or -1 for a format we cannot take (hardware, Bayer...). */
int imgav_out_layout(enum AVPixelFormat fmt, int *ch, int *bps, enum conv_path *path)
{
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(fmt);
    int grey, alpha, depth = 0, all8 = 1, all16 = 1;

    if (!d || (d->flags & (AV_PIX_FMT_FLAG_HWACCEL | AV_PIX_FMT_FLAG_BAYER)) ||
        d->nb_components < 1)
        return -1;
    alpha = (d->flags & AV_PIX_FMT_FLAG_ALPHA) != 0;
    if (d->flags & AV_PIX_FMT_FLAG_PAL) {
        *ch = 4; /* 3 when no palette entry is transparent: frame_to_img */
        *bps = 1;
        *path = P_PAL;
        return 0;
    }
    /* grey and grey+alpha are the formats of 1 or 2 components */
    grey = !(d->flags & AV_PIX_FMT_FLAG_RGB) && d->nb_components <= 2;
    for (int i = 0; i < d->nb_components; i++) {
        if (d->comp[i].depth > depth)
            depth = d->comp[i].depth;
        if (d->comp[i].depth != 8 || d->comp[i].shift)
            all8 = 0;
        if (d->comp[i].depth != 16 || d->comp[i].shift)
            all16 = 0;
    }
    *ch = grey ? (alpha ? 2 : 1) : (alpha ? 4 : 3);
    if (d->flags & AV_PIX_FMT_FLAG_FLOAT) {
        if (depth != 32 || (!grey && !(d->flags & AV_PIX_FMT_FLAG_RGB)))
            return -1;
        *bps = 2;
        *path = P_FLOAT;
        return 0;
    }
    *bps = depth > 8 ? 2 : 1;
    /* 8- and 16-bit grey and RGB layouts (packed, planar, either byte
     * order): the components are reordered, never changed. */
    if ((grey || (d->flags & AV_PIX_FMT_FLAG_RGB)) &&
        !(d->flags & AV_PIX_FMT_FLAG_BITSTREAM) && (all8 || all16)) {
        *path = P_COPY;
        return 0;
    }
    /* other grey and RGB depths (12-bit grey, 10-bit DPX, RGB565...):
     * each component to the nearest 8- or 16-bit value */
    if ((grey || (d->flags & AV_PIX_FMT_FLAG_RGB)) &&
        !(d->flags & AV_PIX_FMT_FLAG_BITSTREAM) && depth <= 16) {
        *path = P_SCALE;
        return 0;
    }
    *path = P_SWS;
    return 0;
}

static void copy_components(const AVFrame *f, const AVPixFmtDescriptor *d,
                            int ch, int bps, uint8_t *out)
{
    int swap = bps == 2 && ((d->flags & AV_PIX_FMT_FLAG_BE) != 0) != IMGAV_NATIVE_BE;
    size_t row = (size_t)f->width * (size_t)ch;
    for (int y = 0; y < f->height; y++) {
        for (int c = 0; c < ch; c++) {
            const AVComponentDescriptor *cd = &d->comp[c];
            const uint8_t *p = f->data[cd->plane] + (ptrdiff_t)y * f->linesize[cd->plane] +
                               cd->offset;
            if (bps == 1) {
                uint8_t *o = out + (size_t)y * row + (size_t)c;
                for (int x = 0; x < f->width; x++, p += cd->step, o += ch)
                    *o = *p;
            } else {
                uint16_t *o = (uint16_t *)out + (size_t)y * row + (size_t)c;
                for (int x = 0; x < f->width; x++, p += cd->step, o += ch) {
                    uint16_t v;
                    memcpy(&v, p, 2);
                    *o = swap ? av_bswap16(v) : v;
                }
            }
        }
    }
}

/* Components of other depths b, read through av_read_image_line2 (any
 * packing, shift or byte order), to the nearest value of the output depth:
 * round(v * max / (2^b - 1)), the rule image_io.c applies to PNM maxvals. */
static void copy_scaled(const AVFrame *f, const AVPixFmtDescriptor *d, int ch,
                        int bps, uint8_t *out)
{
    uint16_t line[256];
    uint32_t maxo = bps == 2 ? 65535u : 255u;
    for (int y = 0; y < f->height; y++)
        for (int c = 0; c < ch; c++) {
            uint32_t maxi = (1u << d->comp[c].depth) - 1;
            for (int x0 = 0; x0 < f->width; x0 += 256) {
                int n = f->width - x0 < 256 ? f->width - x0 : 256;
                av_read_image_line2(line, (const uint8_t **)f->data, f->linesize, d, x0, y,
                                    c, n, 0, 2);
                for (int x = 0; x < n; x++) {
                    uint32_t v = line[x] > maxi ? maxi : line[x];
                    uint32_t q = (v * maxo * 2 + maxi) / (2 * maxi);
                    size_t i = ((size_t)y * f->width + (size_t)(x0 + x)) * (size_t)ch + (size_t)c;
                    if (bps == 2)
                        ((uint16_t *)out)[i] = (uint16_t)q;
                    else
                        out[i] = (uint8_t)q;
                }
            }
        }
}

/* Linear float -> 16 bits: clamped to [0, 1] (NaN as 0), then rounded to
 * nearest (lrintf, ties to even); image_av.h and the man page say so. */
static uint16_t float_to_u16(float v)
{
    if (!(v > 0.0f))
        return 0;
    if (v >= 1.0f)
        return 65535;
    return (uint16_t)lrintf(v * 65535.0f);
}

static void copy_float(const AVFrame *f, const AVPixFmtDescriptor *d, int ch,
                       uint16_t *out)
{
    int swap = ((d->flags & AV_PIX_FMT_FLAG_BE) != 0) != IMGAV_NATIVE_BE;
    size_t row = (size_t)f->width * (size_t)ch;
    for (int y = 0; y < f->height; y++)
        for (int c = 0; c < ch; c++) {
            const AVComponentDescriptor *cd = &d->comp[c];
            const uint8_t *p = f->data[cd->plane] + (ptrdiff_t)y * f->linesize[cd->plane] +
                               cd->offset;
            uint16_t *o = out + (size_t)y * row + (size_t)c;
            for (int x = 0; x < f->width; x++, p += cd->step, o += ch) {
                uint32_t u;
                float v;
                memcpy(&u, p, 4);
                if (swap)
                    u = av_bswap32(u);
                memcpy(&v, &u, 4);
                *o = float_to_u16(v);
            }
        }
}

/* Palette (ARGB, native uint32 in data[1]): RGBA when an index the image
 * uses is not opaque, grey when every one it uses is opaque grey (a PCX
 * grey or 1-bit file, which Pillow also reads as "L"), else RGB. */
static int copy_pal(const AVFrame *f, uint8_t *out)
{
    const uint32_t *pal = (const uint32_t *)f->data[1];
    int ch = 1;
    for (int y = 0; y < f->height && ch != 4; y++) {
        const uint8_t *p = f->data[0] + (ptrdiff_t)y * f->linesize[0];
        for (int x = 0; x < f->width; x++) {
            uint32_t v = pal[p[x]];
            if ((v >> 24) != 0xff) {
                ch = 4;
                break;
            }
            if (((v >> 16) & 0xff) != (v & 0xff) || ((v >> 8) & 0xff) != (v & 0xff))
                ch = 3;
        }
    }
    for (int y = 0; y < f->height; y++) {
        const uint8_t *p = f->data[0] + (ptrdiff_t)y * f->linesize[0];
        uint8_t *o = out + (size_t)y * (size_t)f->width * (size_t)ch;
        for (int x = 0; x < f->width; x++, o += ch) {
            uint32_t v = pal[p[x]];
            if (ch == 1) {
                o[0] = (uint8_t)v;
                continue;
            }
            o[0] = (uint8_t)(v >> 16);
            o[1] = (uint8_t)(v >> 8);
            o[2] = (uint8_t)v;
            if (ch == 4)
                o[3] = (uint8_t)(v >> 24);
        }
    }
    return ch;
}

static int range_full(const AVFrame *f, const AVPixFmtDescriptor *d)
{
    if (f->color_range == AVCOL_RANGE_JPEG)
        return 1;
    if (f->color_range == AVCOL_RANGE_MPEG)
        return 0;
    /* as video_io: yuvj* and grey are full range, other Y'CbCr limited */
    return !strncmp(d->name, "yuvj", 4) || d->nb_components <= 2;
}

static int convert_sws(const AVFrame *f, const AVPixFmtDescriptor *d, int ch,
                       int bps, uint8_t *out)
{
    static const enum AVPixelFormat to[2][4] = {
        { AV_PIX_FMT_GRAY8, AV_PIX_FMT_YA8, AV_PIX_FMT_RGB24, AV_PIX_FMT_RGBA },
        { AV_PIX_FMT_GRAY16, AV_PIX_FMT_YA16, AV_PIX_FMT_RGB48, AV_PIX_FMT_RGBA64 },
    };
    struct SwsContext *sws;
    uint8_t *dst[4] = { out, NULL, NULL, NULL };
    int dls[4] = { 0 }, cs = f->colorspace, ok;
    size_t ls = (size_t)f->width * (size_t)ch * (size_t)bps;

    if (ls > INT_MAX) {
        return ge_fail("image too wide");
    }
    dls[0] = (int)ls;
    sws = sws_getContext(f->width, f->height, f->format, f->width, f->height,
                         to[bps - 1][ch - 1], IMGAV_SWS_FLAGS, NULL, NULL, NULL);
    if (!sws) {
        return ge_fail("unsupported pixel format");
    }
    if (!(d->flags & (AV_PIX_FMT_FLAG_RGB | AV_PIX_FMT_FLAG_PAL))) {
        /* Y'CbCr: the frame's own matrix and range (video_io's rule);
         * out-of-table matrices fall back to swscale's default (BT.601) */
        if (cs < 0 || cs > AVCOL_SPC_BT2020_CL || cs == AVCOL_SPC_RGB)
            cs = SWS_CS_DEFAULT;
        sws_setColorspaceDetails(sws, sws_getCoefficients(cs), range_full(f, d),
                                 sws_getCoefficients(SWS_CS_DEFAULT), 1, 0,
                                 1 << 16, 1 << 16);
    }
    ok = sws_scale(sws, (const uint8_t *const *)f->data, f->linesize, 0,
                   f->height, dst, dls) == f->height;
    sws_freeContext(sws);
    if (!ok) {
        return ge_fail("pixel format conversion failed");
    }
    return 0;
}

// ---------------------------------------------------------------------------
// Lossy WebP: libwebp's own Y'CbCr -> RGB

/* VP8 decoding is exact (FFmpeg's planes equal libwebp's), but the RGB a
 * WebP becomes is libwebp's choice: "fancy" upsampling of the 4:2:0
 * chroma (each output sample 9:3:3:1 from its four nearest chroma
 * samples, rows in pairs, edges replicated) and its 14-bit fixed-point
 * BT.601 limited-range matrix.  Pillow, OpenCV, ImageMagick and libvips
 * all decode WebP through libwebp, so we compute the same arithmetic
 * (libwebp src/dsp/yuv.h and upsampling.c define it) rather than
 * swscale's, and gpuedge's pixels equal theirs; tests compare with Pillow. */

static int webp_clip8(int v)
{
    return (v & ~16383) == 0 ? v >> 6 : v < 0 ? 0 : 255;
}

static void webp_rgb(int y, int u, int v, uint8_t *o)
{
    int yy = (y * 19077) >> 8;
    o[0] = (uint8_t)webp_clip8(yy + ((v * 26149) >> 8) - 14234);
    o[1] = (uint8_t)webp_clip8(yy - ((u * 6419) >> 8) - ((v * 13320) >> 8) + 8708);
    o[2] = (uint8_t)webp_clip8(yy + ((u * 33050) >> 8) - 17685);
}

/* One output row from its luma row and two chroma rows: `near` the chroma
 * row closer to it (weight 3), `far` the other (weight 1). */
static void webp_row(const uint8_t *y, const uint8_t *nu, const uint8_t *nv,
                     const uint8_t *fu, const uint8_t *fv, int w, int ch, uint8_t *o)
{
    int last_pair = (w - 1) >> 1;
    /* left edge: vertical interpolation only */
    webp_rgb(y[0], (3 * nu[0] + fu[0] + 2) >> 2, (3 * nv[0] + fv[0] + 2) >> 2, o);
    for (int x = 1; x <= last_pair; x++) {
        /* the four chroma samples around output columns 2x-1 and 2x */
        int nl[2] = { nu[x - 1], nv[x - 1] }, nr[2] = { nu[x], nv[x] };
        int fl[2] = { fu[x - 1], fv[x - 1] }, fr[2] = { fu[x], fv[x] };
        int c0[2], c1[2];
        for (int k = 0; k < 2; k++) {
            int avg = nl[k] + nr[k] + fl[k] + fr[k] + 8;
            int d_nr_fl = (avg + 2 * (nr[k] + fl[k])) >> 3;
            int d_nl_fr = (avg + 2 * (nl[k] + fr[k])) >> 3;
            c0[k] = (d_nr_fl + nl[k]) >> 1;  /* column 2x-1: nearest nl */
            c1[k] = (d_nl_fr + nr[k]) >> 1;  /* column 2x: nearest nr */
        }
        webp_rgb(y[2 * x - 1], c0[0], c0[1], o + (size_t)(2 * x - 1) * (size_t)ch);
        webp_rgb(y[2 * x], c1[0], c1[1], o + (size_t)(2 * x) * (size_t)ch);
    }
    if (!(w & 1))
        webp_rgb(y[w - 1], (3 * nu[last_pair] + fu[last_pair] + 2) >> 2,
                 (3 * nv[last_pair] + fv[last_pair] + 2) >> 2, o + (size_t)(w - 1) * (size_t)ch);
}

static void webp_to_rgb(const AVFrame *f, int ch, uint8_t *out)
{
    int w = f->width, h = f->height;
    size_t row = (size_t)w * (size_t)ch;
    for (int y = 0; y < h; y++) {
        /* output row y sits between chroma rows (y-1)/2 and (y+1)/2, the
         * nearer being y/2 (edges: the same row twice) */
        int cn = y / 2, cf = (y & 1) ? (y + 1) / 2 : y / 2 - 1;
        if (cf < 0)
            cf = 0;
        if (cf > (h - 1) / 2)
            cf = (h - 1) / 2;
        webp_row(f->data[0] + (ptrdiff_t)y * f->linesize[0],
                 f->data[1] + (ptrdiff_t)cn * f->linesize[1],
                 f->data[2] + (ptrdiff_t)cn * f->linesize[2],
                 f->data[1] + (ptrdiff_t)cf * f->linesize[1],
                 f->data[2] + (ptrdiff_t)cf * f->linesize[2], w, ch,
                 out + (size_t)y * row);
        if (ch == 4) {
            const uint8_t *a = f->data[3] + (ptrdiff_t)y * f->linesize[3];
            for (int x = 0; x < w; x++)
                out[(size_t)y * row + 4 * (size_t)x + 3] = a[x];
        }
    }
}


int imgav_convert(const AVFrame *fr, const AVPixFmtDescriptor *desc, enum conv_path path,
                  int ch, int bps, void *out)
{
    switch (path) {
    case P_COPY:
        copy_components(fr, desc, ch, bps, out);
        break;
    case P_SCALE:
        copy_scaled(fr, desc, ch, bps, out);
        break;
    case P_FLOAT:
        copy_float(fr, desc, ch, out);
        break;
    case P_PAL:
        ch = copy_pal(fr, out);
        break;
    case P_WEBP:
        webp_to_rgb(fr, ch, out);
        break;
    case P_SWS:
        if (convert_sws(fr, desc, ch, bps, out))
            return -1;
        break;
    }
    return ch;
}
