/*
 * image_av.c — still images through libavcodec's image decoders (the
 * formats stb_image cannot read) and the lossless .tiff/.webp writers
 * (image_av.h says what comes out).
 *
 * Why decode without libavformat: every one of these files is one image,
 * and the image pipe demuxers hand a whole file to the decoder as one
 * packet anyway.  So we sniff the first bytes (the same signatures those
 * demuxers' probes look for), pick the decoder, and send the file's bytes
 * (copied once into a padded buffer) as one packet.  No I/O, no probing
 * of other demuxers, nothing for a fuzzer to find outside the decoder.
 *
 * Memory: decoders allocate the frame through our get_buffer2, which
 * refuses sizes over the decode limit (img_set_decode_limit) or over what
 * the rest of gpuedge takes (1 << 20 a side, INT_MAX bytes of samples: the
 * stb path's limits) before anything is allocated.  Where the header says
 * the size cheaply (WebP, TIFF, JPEG 2000, EXR, QOI, PCX, SGI, Sun, XWD,
 * DDS) it is checked before the decoder even starts, and max_pixels bounds
 * what a decoder may set up before asking for its frame.
 *
 * Damage: AV_EF_EXPLODE makes the decoders that can conceal errors fail
 * instead, and a frame flagged corrupt is refused.  JPEG 2000 decoders
 * decode a truncated codestream as far as it goes (by design, for
 * progressive transmission), so a codestream must end with its EOC marker.
 */
#include "image_av.h"
#include "bigbuf.h"
#include "util.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <libavcodec/avcodec.h>
#include <libavcodec/version.h>
#include <libavutil/imgutils.h>
#include <libavutil/intreadwrite.h>
#include <libavutil/log.h>
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>

#include "imgav_internal.h"

/* The stb path's limits (third_party/stb_impl.c STBI_MAX_DIMENSIONS and
 * image_io.c's INT_MAX bytes of samples), so every decoder accepts the
 * same sizes. */
#define IMGAV_MAX_SIDE (1 << 20)
/* WebP's own limit on each side (14-bit sizes). */
#define IMGAV_WEBP_MAX 16383

// ---------------------------------------------------------------------------
// Decoding

static pthread_once_t log_once = PTHREAD_ONCE_INIT;

/* libav's decoders would print their own lines; ours names the reason.
 * The same rule as vid_read.c's (which may set the level first). */
static void log_init(void)
{
    if (av_log_get_level() == AV_LOG_INFO)
        av_log_set_level(ge_verbose ? AV_LOG_WARNING : AV_LOG_QUIET);
}

typedef struct dec_state {
    size_t limit;
    unsigned work_per_px;
    int too_large, w, h;
} dec_state;

/* Bytes of the img_image a frame of this format becomes. */
static int out_bytes(enum AVPixelFormat fmt, int w, int h, size_t *bytes)
{
    int ch, bps;
    enum conv_path p;
    if (imgav_out_layout(fmt, &ch, &bps, &p))
        return -1;
    *bytes = (size_t)w * (size_t)h * (size_t)ch * (size_t)bps;
    return 0;
}

/* Is a w x h image within gpuedge's sizes and the decode limit, counting
 * `frame` bytes of decoded frame, `out` of our image and the decoder's
 * working buffers? */
static int fits(const dec_state *s, int w, int h, size_t frame, size_t out)
{
    size_t px = (size_t)w * (size_t)h;
    if (w <= 0 || h <= 0 || w > IMGAV_MAX_SIDE || h > IMGAV_MAX_SIDE ||
        out > (size_t)INT_MAX)
        return 0;
    if (px > SIZE_MAX / 64)
        return 0;
    return frame <= s->limit && out <= s->limit - frame &&
           px * s->work_per_px <= s->limit - frame - out;
}

static int get_buffer(AVCodecContext *c, AVFrame *f, int flags)
{
    dec_state *s = c->opaque;
    int fb = av_image_get_buffer_size(f->format, f->width, f->height, 32);
    size_t ob = 0;
    if (fb < 0 || out_bytes(f->format, f->width, f->height, &ob) ||
        !fits(s, f->width, f->height, (size_t)fb, ob)) {
        if (fb >= 0 || f->width > 0) {
            s->too_large = 1;
            s->w = f->width;
            s->h = f->height;
        }
        return AVERROR(ENOMEM);
    }
    return avcodec_default_get_buffer2(c, f, flags);
}

static const char *av_why(int err, char *buf, size_t n)
{
    if (err == AVERROR_INVALIDDATA || err == AVERROR_EOF)
        return "corrupt or truncated image data";
    if (err == AVERROR(ENOMEM))
        return "out of memory";
    if (err == AVERROR_PATCHWELCOME || err == AVERROR(ENOSYS))
        return "unsupported variant of this format";
    if (av_strerror(err, buf, n) < 0)
        snprintf(buf, n, "error %d", err);
    return buf;
}

/* Sends the whole file as one packet and takes the first frame. */
static int decode_frame(enum imgav_kind k, const unsigned char *data, size_t n,
                        dec_state *st, AVFrame *fr, int *err)
{
    const AVCodec *codec = NULL;
    AVCodecContext *c = NULL;
    AVPacket *pkt = NULL;
    int ret;

    if (imgav_kinds[k].decoder)
        codec = avcodec_find_decoder_by_name(imgav_kinds[k].decoder);
    if (!codec)
        codec = avcodec_find_decoder(imgav_kinds[k].id);
    if (!codec) {
        *err = AVERROR_DECODER_NOT_FOUND;
        return -1;
    }
    if (!(c = avcodec_alloc_context3(codec)) || !(pkt = av_packet_alloc())) {
        ret = AVERROR(ENOMEM);
        goto end;
    }
    /* One thread: the batch decodes images in parallel already, and the
     * decode limit then bounds one set of working buffers. */
    c->thread_count = 1;
    c->err_recognition = AV_EF_CRCCHECK | AV_EF_BITSTREAM | AV_EF_BUFFER |
                         AV_EF_CAREFUL | (imgav_kinds[k].no_explode ? 0 : AV_EF_EXPLODE);
    c->opaque = st;
    c->get_buffer2 = get_buffer;
    /* What a decoder may set up before it asks for its frame. */
    {
        size_t mp = st->limit / (2 + st->work_per_px);
        c->max_pixels = mp > INT_MAX ? INT_MAX : (int64_t)mp;
    }
    if ((ret = avcodec_open2(c, codec, NULL)) < 0)
        goto end;
    if ((ret = av_new_packet(pkt, (int)n)) < 0)
        goto end;
    memcpy(pkt->data, data, n);
    ret = avcodec_send_packet(c, pkt);
    if (ret >= 0 || ret == AVERROR(EAGAIN)) {
        ret = avcodec_receive_frame(c, fr);
        if (ret == AVERROR(EAGAIN)) {
            /* a decoder that holds the frame until the end (frame threads) */
            avcodec_send_packet(c, NULL);
            ret = avcodec_receive_frame(c, fr);
        }
    }
    if (ret >= 0 && (fr->decode_error_flags || (fr->flags & AV_FRAME_FLAG_CORRUPT))) {
        av_frame_unref(fr);
        ret = AVERROR_INVALIDDATA;
    }
end:
    av_packet_free(&pkt);
    avcodec_free_context(&c);
    *err = ret;
    return ret < 0 ? -1 : 0;
}

static void drop_opaque_alpha(img_image *img)
{
    uint8_t *p = img->pixels;
    size_t n = (size_t)img->width * (size_t)img->height;
    for (size_t i = 0; i < n; i++)
        if (p[4 * i + 3] != 0xff)
            return;
    for (size_t i = 0; i < n; i++)
        memmove(p + 3 * i, p + 4 * i, 3);
    img->channels = 3;
}

static void flip_rows(img_image *img)
{
    size_t row = (size_t)img->width * (size_t)img->channels * (size_t)img->bytes_per_sample;
    uint8_t *p = img->pixels, tmp[1024];
    for (int y = 0; y < img->height / 2; y++) {
        uint8_t *a = p + (size_t)y * row, *b = p + (size_t)(img->height - 1 - y) * row;
        for (size_t o = 0; o < row; o += sizeof tmp) {
            size_t k = row - o < sizeof tmp ? row - o : sizeof tmp;
            memcpy(tmp, a + o, k);
            memcpy(a + o, b + o, k);
            memcpy(b + o, tmp, k);
        }
    }
}

static void fail(const char *name, const char *why)
{
    ge_fail_in(name, "cannot read image: %s", why);
}

int imgav_load_mem(const void *buf, size_t n, const char *name, size_t limit,
                   img_image *img)
{
    const unsigned char *d = buf;
    enum imgav_kind k;
    src s = { d, n, -1, 0 };
    dec_state st;
    AVFrame *fr = NULL;
    const AVPixFmtDescriptor *desc;
    enum conv_path path;
    int w = 0, h = 0, anim = 0, hdr, ch, bps, err = 0, rc = -1;
    long pages = 1;
    const char *why = NULL;
    char ebuf[128];
    size_t bytes;

    if (!img)
        return -1;
    memset(img, 0, sizeof *img);
    if (!name)
        name = "(memory)";
    pthread_once(&log_once, log_init);
    k = imgav_sniff_kind(d, n);
    if (k == K_NONE) {
        fail(name, "not a supported image format");
        return -1;
    }
    if (k == K_BIGTIFF) {
        fail(name, "BigTIFF is not supported (FFmpeg 5.1's TIFF decoder reads classic TIFF only)");
        return -1;
    }
    if (n > (size_t)INT_MAX - AV_INPUT_BUFFER_PADDING_SIZE) {
        fail(name, "file too large");
        return -1;
    }
    memset(&st, 0, sizeof st);
    st.limit = limit;
    st.work_per_px = imgav_kinds[k].work_per_px;

    hdr = imgav_header_size(k, &s, &w, &h, &pages, &anim);
    if (anim) {
        fail(name, "animated WebP is not supported (FFmpeg 5.1's WebP decoder reads still images only)");
        return -1;
    }
    if (hdr == 0) {
        /* the smallest frame and image that size can give: refuse early */
        size_t px = (size_t)(w > 0 ? w : 0) * (size_t)(h > 0 ? h : 0);
        if (w <= 0 || h <= 0) {
            fail(name, "image has no pixels");
            return -1;
        }
        if (!fits(&st, w, h, px, px)) {
            ge_fail_in(name, "cannot read image: image too large (%dx%d)", w, h);
            return -1;
        }
    }
    if ((why = imgav_check_complete(k, &s))) {
        fail(name, why);
        return -1;
    }

    if (!(fr = av_frame_alloc())) {
        ge_fail_in(name, "cannot read image: %s: out of memory", imgav_kinds[k].name);
        return -1;
    }
    if (decode_frame(k, d, n, &st, fr, &err)) {
        if (st.too_large && st.w > 0 && st.h > 0)
            ge_fail_in(name, "cannot read image: image too large (%dx%d)", st.w, st.h);
        else if (err == AVERROR_DECODER_NOT_FOUND)
            ge_fail_in(name, "cannot read image: this libavcodec has no %s decoder",
                       imgav_kinds[k].name);
        else
            ge_fail_in(name, "cannot read image: %s: %s", imgav_kinds[k].name,
                       av_why(err, ebuf, sizeof ebuf));
        goto end;
    }
    desc = av_pix_fmt_desc_get(fr->format);
    if (!desc || imgav_out_layout(fr->format, &ch, &bps, &path)) {
        ge_fail_in(name, "cannot read image: %s: unsupported pixel format %s", imgav_kinds[k].name,
                   desc ? desc->name : "?");
        goto end;
    }
    if (k == K_WEBP) {
        if (fr->format == AV_PIX_FMT_YUV420P || fr->format == AV_PIX_FMT_YUVA420P) {
            path = P_WEBP; /* lossy: libwebp's conversion */
            ch = fr->format == AV_PIX_FMT_YUVA420P ? 4 : 3;
            bps = 1;
        } else if (ch == 4 && !imgav_webp_has_alpha(d, n)) {
            ch = 3; /* lossless without alpha: RGB, as libwebp reports it */
        }
    }
    if (fr->width <= 0 || fr->height <= 0) {
        fail(name, "image has no pixels");
        goto end;
    }
    bytes = (size_t)fr->width * (size_t)fr->height * (size_t)ch * (size_t)bps;
    img->pixels = bb_alloc(bytes + (path == P_SWS ? IMGAV_SWS_SLACK : 0));
    if (!img->pixels) {
        ge_fail_in(name, "cannot read image: %s: out of memory", imgav_kinds[k].name);
        goto end;
    }
    ch = imgav_convert(fr, desc, path, ch, bps, img->pixels);
    if (ch < 0) {
        ge_fail_in(name, "cannot read image: %s: %s (%s)", imgav_kinds[k].name, ge_why(),
                   desc->name);
        goto end;
    }
    img->width = fr->width;
    img->height = fr->height;
    img->channels = ch;
    img->bytes_per_sample = bps;
    /* XPM always decodes to BGRA: an opaque one is RGB (as Pillow reads it) */
    if (k == K_XPM && ch == 4)
        drop_opaque_alpha(img);
#if LIBAVCODEC_VERSION_MAJOR < 60
    /* PFM and PHM store the bottom row first; FFmpeg 5.1's decoder keeps
     * the file's order (upside down) */
    if (k == K_PFM || k == K_PHM)
        flip_rows(img);
#endif
    if (k == K_TIFF && pages > 1 && !ge_quiet)
        ge_note("%s: TIFF with %s%ld pages: using the first", name,
                pages >= IMGAV_MAX_PAGES ? "over " : "", pages);
    rc = 0;
end:
    av_frame_free(&fr);
    if (rc) {
        bb_free(img->pixels);
        memset(img, 0, sizeof *img);
    }
    return rc;
}

// ---------------------------------------------------------------------------
// Writing

/* so_write of nothing answers whether the file has failed so far. */
static int out_failed(so_file *out)
{
    return so_write(out, "", 0) != 0;
}

int imgav_write(so_file *out, enum imgav_out kind, const uint8_t *grey,
                int width, int height, int pitch)
{
    const AVCodec *codec;
    AVCodecContext *c = NULL;
    AVFrame *fr = NULL;
    AVPacket *pkt = NULL;
    int ret, err = 0;

    if (!out)
        return -1;
    if (!grey || width <= 0 || height <= 0 || pitch < width) {
        so_fail(out, EINVAL);
        return -1;
    }
    if (out_failed(out))
        return -1;
    pthread_once(&log_once, log_init);
    if (kind == IMGAV_OUT_WEBP && (width > IMGAV_WEBP_MAX || height > IMGAV_WEBP_MAX)) {
        ge_fail_in(so_name(out), "cannot write WebP: %dx%d is larger than WebP's %dx%d",
                   width, height, IMGAV_WEBP_MAX, IMGAV_WEBP_MAX);
        so_fail_reported(out, EFBIG);
        return -1;
    }
    codec = kind == IMGAV_OUT_TIFF ? avcodec_find_encoder_by_name("tiff")
                                   : avcodec_find_encoder_by_name("libwebp");
    if (!codec) {
        ge_fail_in(so_name(out), "cannot write %s: this libavcodec has no %s encoder",
                   kind == IMGAV_OUT_TIFF ? "TIFF" : "WebP",
                   kind == IMGAV_OUT_TIFF ? "tiff" : "libwebp");
        so_fail_reported(out, ENOSYS);
        return -1;
    }
    if (!(c = avcodec_alloc_context3(codec)) || !(fr = av_frame_alloc()) ||
        !(pkt = av_packet_alloc())) {
        err = ENOMEM;
        goto end;
    }
    c->width = width;
    c->height = height;
    c->time_base = (AVRational){ 1, 1 };
    /* no encoder version in the file: the same map gives the same bytes */
    c->flags |= AV_CODEC_FLAG_BITEXACT;
    c->thread_count = 1;
    if (kind == IMGAV_OUT_TIFF) {
        c->pix_fmt = AV_PIX_FMT_GRAY8;
        /* LZW: less than half deflate's time for 8 % more bytes on edge
         * maps (BENCHMARKS.md "Constants chosen by measurement") */
        av_opt_set(c->priv_data, "compression_algo", "lzw", 0);
    } else {
        /* libwebp takes ARGB; grey goes in as R = G = B, opaque */
        c->pix_fmt = AV_PIX_FMT_RGB32;
        av_opt_set_int(c->priv_data, "lossless", 1, 0);
        /* libwebp's least effort (method 0, quality 0, which in lossless
         * mode is effort): a quarter of the default's time for 8 % more
         * bytes (BENCHMARKS.md "Constants chosen by measurement") */
        c->compression_level = 0;
        av_opt_set_double(c->priv_data, "quality", 0.0, 0);
    }
    if ((ret = avcodec_open2(c, codec, NULL)) < 0)
        goto av_fail;
    fr->format = c->pix_fmt;
    fr->width = width;
    fr->height = height;
    if ((ret = av_frame_get_buffer(fr, 0)) < 0)
        goto av_fail;
    for (int y = 0; y < height; y++) {
        const uint8_t *s = grey + (size_t)y * (size_t)pitch;
        uint8_t *o = fr->data[0] + (ptrdiff_t)y * fr->linesize[0];
        if (kind == IMGAV_OUT_TIFF) {
            memcpy(o, s, (size_t)width);
        } else {
            uint32_t *p = (uint32_t *)o;
            for (int x = 0; x < width; x++)
                p[x] = 0xff000000u | (uint32_t)s[x] << 16 | (uint32_t)s[x] << 8 | s[x];
        }
    }
    if ((ret = avcodec_send_frame(c, fr)) < 0 || (ret = avcodec_send_frame(c, NULL)) < 0)
        goto av_fail;
    for (;;) {
        ret = avcodec_receive_packet(c, pkt);
        if (ret == AVERROR_EOF)
            break;
        if (ret < 0)
            goto av_fail;
        so_write(out, pkt->data, (size_t)pkt->size);
        av_packet_unref(pkt);
    }
    goto end;
av_fail:
    err = ret == AVERROR(ENOMEM) ? ENOMEM : EIO;
end:
    if (err)
        so_fail(out, err);
    av_packet_free(&pkt);
    av_frame_free(&fr);
    avcodec_free_context(&c);
    return out_failed(out) ? -1 : 0;
}

