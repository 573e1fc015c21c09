/*
 * test_image_av.c — the libavcodec image formats (src/io/image_av.c,
 * imgav_probe.c, imgav_pixels.c).
 *
 * Round trips from known pixels: random images in every layout a format's
 * libavcodec encoder writes (lossless settings) are encoded in memory,
 * loaded through img_load_mem, and must come back exactly: 8/16-bit grey,
 * grey+alpha, RGB, RGBA, big-endian and planar layouts, palettes, 1-bit,
 * and float (clamped to [0, 1] and rounded to 16 bits, computed here on
 * its own).  Then every encoded file cut short at many points, with its
 * header damaged, zero bytes, a huge declared size, and a decode limit
 * below its size must fail with one message and nothing allocated.
 *
 * With arguments, `test_image_av --dump FILE OUT` writes what img_load
 * decodes as "W H CHANNELS BYTES\n" and the raw samples (native endian),
 * for tests/cli/formats.sh to compare with Pillow.
 */
#include "check.h"
#include "image_io.h"
#include "image_av.h"
#include "safeout.h"
#include "util.h"

#include <fcntl.h>
#include <math.h>
#include <unistd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libavcodec/avcodec.h>
#include <libavutil/dict.h>
#include <libavutil/imgutils.h>
#include <libavutil/log.h>
#include <libavutil/pixdesc.h>

// ---------------------------------------------------------------------------
// Dump mode

static int dump(const char *in, const char *out)
{
    img_image img;
    FILE *f;
    size_t n;
    if (img_load(in, &img))
        return 1;
    n = (size_t)img.width * img.height * img.channels * img.bytes_per_sample;
    f = fopen(out, "wb");
    if (!f || fprintf(f, "%d %d %d %d\n", img.width, img.height, img.channels,
                      img.bytes_per_sample) < 0 ||
        fwrite(img.pixels, 1, n, f) != n || fclose(f)) {
        perror(out);
        img_free(&img);
        return 1;
    }
    img_free(&img);
    return 0;
}

// ---------------------------------------------------------------------------
// Encoding known pixels

static uint32_t rng = 12345;
static uint32_t rnd(void)
{
    rng = rng * 1103515245u + 12345u;
    return rng >> 8;
}

/* A random frame of `fmt` (every plane's bytes random; palette random
 * with opaque entries; floats in [-0.25, 1.25] with a NaN and infinities). */
static AVFrame *random_frame(enum AVPixelFormat fmt, int w, int h)
{
    AVFrame *f = av_frame_alloc();
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(fmt);
    if (!f)
        return NULL;
    f->format = fmt;
    f->width = w;
    f->height = h;
    if (av_frame_get_buffer(f, 0) < 0) {
        av_frame_free(&f);
        return NULL;
    }
    for (int p = 0; p < 4 && f->data[p]; p++) {
        int rows = (p == 1 && (d->flags & AV_PIX_FMT_FLAG_PAL)) ? 1 : h;
        int bytes = (p == 1 && (d->flags & AV_PIX_FMT_FLAG_PAL)) ? 1024
                                                                  : av_image_get_linesize(fmt, w, p);
        for (int y = 0; y < rows; y++) {
            uint8_t *r = f->data[p] + (ptrdiff_t)y * f->linesize[p];
            if (d->flags & AV_PIX_FMT_FLAG_FLOAT) {
                for (int x = 0; x < bytes / 4; x++) {
                    float v = (float)(rnd() % 30000) / 20000.0f - 0.25f;
                    if (y == 0 && x == 0)
                        v = NAN;
                    else if (y == 0 && x == 1)
                        v = INFINITY;
                    else if (y == 0 && x == 2)
                        v = -INFINITY;
                    memcpy(r + 4 * x, &v, 4);
                }
            } else {
                for (int x = 0; x < bytes; x++)
                    r[x] = (uint8_t)rnd();
            }
        }
        if (p == 1 && (d->flags & AV_PIX_FMT_FLAG_PAL))
            for (int i = 0; i < 256; i++)
                ((uint32_t *)f->data[1])[i] |= 0xff000000u;
    }
    return f;
}

/* What img_image must hold for frame f: component values read through
 * av_read_image_line2 (not image_av's reader), palettes looked up, 1-bit
 * as 0/255, floats clamped and rounded. */
static void *expected(const AVFrame *f, int *ch, int *bps)
{
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(f->format);
    int w = f->width, h = f->height, nc = d->nb_components;
    int grey = !(d->flags & AV_PIX_FMT_FLAG_RGB) && nc <= 2;
    uint8_t *out;
    uint16_t line[4096];

    if (d->flags & AV_PIX_FMT_FLAG_PAL) {
        *ch = 3; /* random palettes are not grey */
        *bps = 1;
    } else if (d->flags & AV_PIX_FMT_FLAG_BITSTREAM) {
        *ch = 1;
        *bps = 1;
    } else {
        *ch = grey ? nc : nc;
        *bps = d->comp[0].depth > 8 ? 2 : 1;
    }
    out = malloc((size_t)w * h * *ch * *bps);
    for (int y = 0; y < h; y++)
        for (int c = 0; c < (d->flags & AV_PIX_FMT_FLAG_PAL ? 1 : nc); c++) {
            if (d->flags & AV_PIX_FMT_FLAG_FLOAT) {
                const AVComponentDescriptor *cd = &d->comp[c];
                for (int x = 0; x < w; x++) {
                    float v;
                    memcpy(&v, f->data[cd->plane] + (ptrdiff_t)y * f->linesize[cd->plane] +
                                   cd->offset + (ptrdiff_t)x * cd->step, 4);
                    /* clamp to [0,1], NaN -> 0, then nearest (ties even) */
                    v = isnan(v) ? 0.0f : v < 0.0f ? 0.0f : v > 1.0f ? 1.0f : v;
                    ((uint16_t *)out)[((size_t)y * w + x) * *ch + c] =
                        (uint16_t)nearbyintf(v * 65535.0f);
                }
                continue;
            }
            av_read_image_line2(line, (const uint8_t **)f->data, f->linesize, d, 0, y, c,
                                w, 0, 2);
            for (int x = 0; x < w; x++) {
                size_t i = ((size_t)y * w + x) * *ch;
                if (d->flags & AV_PIX_FMT_FLAG_PAL) {
                    uint32_t v = ((const uint32_t *)f->data[1])[line[x]];
                    out[i] = (uint8_t)(v >> 16);
                    out[i + 1] = (uint8_t)(v >> 8);
                    out[i + 2] = (uint8_t)v;
                } else if (d->flags & AV_PIX_FMT_FLAG_BITSTREAM) {
                    int white = f->format == AV_PIX_FMT_MONOWHITE ? !line[x] : line[x];
                    out[i] = white ? 255 : 0;
                } else if (*bps == 2) {
                    ((uint16_t *)out)[i + c] = line[x];
                } else {
                    out[i + c] = (uint8_t)line[x];
                }
            }
        }
    return out;
}

/* Encodes f with encoder `enc` and options "k=v:k=v"; the packet is the
 * whole file.  Returns the bytes (av_malloc'ed) or NULL. */
static uint8_t *encode(const char *enc, const char *opts, const AVFrame *f, int *n)
{
    const AVCodec *codec = avcodec_find_encoder_by_name(enc);
    AVCodecContext *c = NULL;
    AVPacket *pkt = NULL;
    AVDictionary *dict = NULL;
    uint8_t *out = NULL;
    if (!codec || !(c = avcodec_alloc_context3(codec)) || !(pkt = av_packet_alloc()))
        goto end;
    c->width = f->width;
    c->height = f->height;
    c->pix_fmt = f->format;
    c->time_base = (AVRational){ 1, 25 };
    c->strict_std_compliance = FF_COMPLIANCE_EXPERIMENTAL;
    if (opts && *opts && av_dict_parse_string(&dict, opts, "=", ":", 0) < 0)
        goto end;
    if (avcodec_open2(c, codec, &dict) < 0 || avcodec_send_frame(c, f) < 0 ||
        avcodec_send_frame(c, NULL) < 0 || avcodec_receive_packet(c, pkt) < 0)
        goto end;
    out = av_malloc((size_t)pkt->size);
    if (out) {
        memcpy(out, pkt->data, (size_t)pkt->size);
        *n = pkt->size;
    }
end:
    av_dict_free(&dict);
    av_packet_free(&pkt);
    avcodec_free_context(&c);
    return out;
}

typedef struct rt_case {
    const char *enc, *opts;
    enum AVPixelFormat fmt;
    const char *label;
} rt_case;

static const rt_case cases[] = {
    { "tiff", "compression_algo=deflate", AV_PIX_FMT_GRAY8, "TIFF grey8 deflate" },
    { "tiff", "compression_algo=lzw", AV_PIX_FMT_GRAY16LE, "TIFF grey16 LZW" },
    { "tiff", "compression_algo=packbits", AV_PIX_FMT_YA8, "TIFF grey+alpha 8" },
    { "tiff", "compression_algo=raw", AV_PIX_FMT_YA16LE, "TIFF grey+alpha 16" },
    { "tiff", "compression_algo=deflate", AV_PIX_FMT_RGB24, "TIFF RGB 8" },
    { "tiff", "compression_algo=lzw", AV_PIX_FMT_RGB48LE, "TIFF RGB 16" },
    { "tiff", "compression_algo=deflate", AV_PIX_FMT_RGBA, "TIFF RGBA 8" },
    { "tiff", "compression_algo=packbits", AV_PIX_FMT_RGBA64LE, "TIFF RGBA 16" },
    { "tiff", "compression_algo=lzw", AV_PIX_FMT_PAL8, "TIFF palette" },
    { "tiff", "compression_algo=raw", AV_PIX_FMT_MONOBLACK, "TIFF 1-bit" },
    { "qoi", "", AV_PIX_FMT_RGB24, "QOI RGB" },
    { "qoi", "", AV_PIX_FMT_RGBA, "QOI RGBA" },
    { "pcx", "", AV_PIX_FMT_RGB24, "PCX RGB" },
    { "pcx", "", AV_PIX_FMT_PAL8, "PCX palette" },
    { "pcx", "", AV_PIX_FMT_GRAY8, "PCX grey" },
    { "pcx", "", AV_PIX_FMT_MONOBLACK, "PCX 1-bit" },
    { "sgi", "rle=1", AV_PIX_FMT_RGB24, "SGI RGB RLE" },
    { "sgi", "rle=0", AV_PIX_FMT_RGBA, "SGI RGBA" },
    { "sgi", "rle=1", AV_PIX_FMT_RGB48BE, "SGI RGB 16 big-endian" },
    { "sgi", "rle=0", AV_PIX_FMT_GRAY16BE, "SGI grey 16" },
    { "sgi", "rle=1", AV_PIX_FMT_GRAY8, "SGI grey" },
    { "sunrast", "", AV_PIX_FMT_BGR24, "Sun raster BGR RLE" },
    { "sunrast", "", AV_PIX_FMT_GRAY8, "Sun raster grey" },
    { "sunrast", "", AV_PIX_FMT_PAL8, "Sun raster palette" },
    { "xwd", "", AV_PIX_FMT_BGRA, "XWD BGRA" },
    { "xwd", "", AV_PIX_FMT_RGB24, "XWD RGB" },
    { "xwd", "", AV_PIX_FMT_GRAY8, "XWD grey" },
    { "pam", "", AV_PIX_FMT_RGBA64BE, "PAM RGBA 16" },
    { "pam", "", AV_PIX_FMT_YA8, "PAM grey+alpha" },
    { "pam", "", AV_PIX_FMT_MONOBLACK, "PAM 1-bit" },
    { "pbm", "", AV_PIX_FMT_MONOWHITE, "PBM" },
    { "dpx", "", AV_PIX_FMT_RGB24, "DPX RGB" },
    { "dpx", "", AV_PIX_FMT_RGBA64BE, "DPX RGBA 16" },
    { "dpx", "", AV_PIX_FMT_GRAY16BE, "DPX grey 16" },
    { "xbm", "", AV_PIX_FMT_MONOWHITE, "XBM" },
    { "exr", "compression=zip16:format=float", AV_PIX_FMT_GBRPF32LE, "OpenEXR RGB float" },
    { "exr", "compression=rle:format=float", AV_PIX_FMT_GBRAPF32LE, "OpenEXR RGBA float" },
    { "exr", "compression=none:format=float", AV_PIX_FMT_GRAYF32LE, "OpenEXR Y float" },
    { "pfm", "", AV_PIX_FMT_GBRPF32LE, "PFM RGB" },
    { "pfm", "", AV_PIX_FMT_GRAYF32LE, "PFM grey" },
    { "jpeg2000", "pred=1:format=j2k", AV_PIX_FMT_RGB24, "JPEG 2000 RGB lossless (j2k)" },
    { "jpeg2000", "pred=1:format=jp2", AV_PIX_FMT_GRAY8, "JPEG 2000 grey lossless (jp2)" },
    { "jpeg2000", "pred=1:format=jp2", AV_PIX_FMT_GRAY16LE, "JPEG 2000 grey 16 lossless" },
    { "jpegls", "", AV_PIX_FMT_RGB24, "JPEG-LS RGB" },
    { "jpegls", "", AV_PIX_FMT_GRAY16LE, "JPEG-LS grey 16" },
    { "libwebp", "lossless=1", AV_PIX_FMT_RGB32, "WebP lossless RGBA" },
};

static int same(const img_image *img, const void *want, int ch, int bps, int w, int h,
                char *why, size_t n)
{
    size_t bytes = (size_t)w * h * ch * bps;
    if (img->width != w || img->height != h || img->channels != ch ||
        img->bytes_per_sample != bps) {
        snprintf(why, n, "got %dx%d c%d b%d, want %dx%d c%d b%d", img->width, img->height,
                 img->channels, img->bytes_per_sample, w, h, ch, bps);
        return 0;
    }
    for (size_t i = 0; i < bytes; i++)
        if (((const uint8_t *)img->pixels)[i] != ((const uint8_t *)want)[i]) {
            snprintf(why, n, "byte %zu differs: %u, want %u", i,
                     ((const uint8_t *)img->pixels)[i], ((const uint8_t *)want)[i]);
            return 0;
        }
    return 1;
}

/* Fails, with img left zeroed? */
static int refused(const void *buf, size_t n)
{
    img_image img;
    int rc = img_load_mem(buf, n, "test", &img);
    if (rc == 0)
        img_free(&img);
    return rc != 0 && !img.pixels && !img.width && !img.height;
}

/* A cut file is refused, or gives exactly the whole file's pixels (the
 * bytes cut were no image data: a TIFF's next-IFD pointer, padding). */
static int cut_ok(const uint8_t *buf, size_t n, const img_image *full)
{
    img_image img;
    int ok;
    if (img_load_mem(buf, n, "test", &img) != 0)
        return !img.pixels && !img.width && !img.height;
    ok = img.width == full->width && img.height == full->height &&
         img.channels == full->channels && img.bytes_per_sample == full->bytes_per_sample &&
         !memcmp(img.pixels, full->pixels, (size_t)img.width * img.height * img.channels *
                                               img.bytes_per_sample);
    img_free(&img);
    return ok;
}

static void round_trip(const rt_case *t)
{
    char name[160], why[160];
    int w = 37 + (int)(rnd() % 9), h = 23 + (int)(rnd() % 7), n = 0, ch, bps, ok;
    AVFrame *f;
    uint8_t *file;
    void *want;
    img_image img;

    if (!avcodec_find_encoder_by_name(t->enc)) {
        snprintf(name, sizeof name, "%s: round trip", t->label);
        SKIP(name, "no such encoder in this libavcodec");
        return;
    }
    f = random_frame(t->fmt, w, h);
    /* libwebp may change the colour under alpha 0 (its "exact" is off) */
    if (f && !strcmp(t->enc, "libwebp"))
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                f->data[0][(ptrdiff_t)y * f->linesize[0] + 4 * x + 3] |= 1;
    file = f ? encode(t->enc, t->opts, f, &n) : NULL;
    snprintf(name, sizeof name, "%s: encoded in memory (%s)", t->label, t->enc);
    CHECK(file != NULL, name, "encoder refused %s", av_get_pix_fmt_name(t->fmt));
    if (!file) {
        av_frame_free(&f);
        return;
    }
    want = expected(f, &ch, &bps);
    /* FFmpeg 5.1's PFM encoder writes the top row first, against the
     * format (bottom first), which gpuedge's reader follows */
    if (!strcmp(t->enc, "pfm")) {
        size_t row = (size_t)w * ch * bps;
        uint8_t *tmp = malloc(row), *p = want;
        for (int y = 0; y < h / 2; y++) {
            memcpy(tmp, p + y * row, row);
            memcpy(p + y * row, p + (h - 1 - y) * row, row);
            memcpy(p + (h - 1 - y) * row, tmp, row);
        }
        free(tmp);
    }
    /* WebP lossless from ARGB with alpha everywhere random: RGBA */
    snprintf(name, sizeof name, "%s: decodes to the same pixels", t->label);
    ok = img_load_mem(file, (size_t)n, "test", &img) == 0;
    why[0] = 0;
    CHECK(ok && same(&img, want, ch, bps, w, h, why, sizeof why), name, "%s",
          ok ? why : "load failed");

    /* cut short anywhere: refused, or (bytes the image does not need)
     * the same pixels; never other pixels */
    if (ok) {
        int bad = -1, step = n / 50 > 0 ? n / 50 : 1;
        for (int cut = 0; cut < n && bad < 0; cut += step)
            if (!cut_ok(file, (size_t)cut, &img))
                bad = cut;
        for (int cut = n - 1; cut > n - 16 && cut > 0 && bad < 0; cut--)
            if (!cut_ok(file, (size_t)cut, &img))
                bad = cut;
        snprintf(name, sizeof name, "%s: every truncation refused", t->label);
        CHECK(bad < 0, name, "%d of %d bytes decoded to other pixels", bad, n);
        img_free(&img);
    }
    /* the header's size without decoding (--backend=auto sizes runs by it) */
    {
        char path[] = "/tmp/test_image_av.XXXXXX";
        int fd = mkstemp(path), pw = 0, ph = 0, r = -1;
        if (fd >= 0) {
            if (write(fd, file, (size_t)n) == n)
                r = img_probe_size(path, &pw, &ph);
            close(fd);
            unlink(path);
        }
        if (!strcmp(t->enc, "tiff") || !strcmp(t->enc, "qoi") || !strcmp(t->enc, "libwebp") ||
            !strcmp(t->enc, "jpeg2000") || !strcmp(t->enc, "exr") || !strcmp(t->enc, "sgi") ||
            !strcmp(t->enc, "pcx") || !strcmp(t->enc, "sunrast") || !strcmp(t->enc, "xwd")) {
            snprintf(name, sizeof name, "%s: img_probe_size reads the header's size", t->label);
            CHECK(r == 1 && pw == w && ph == h, name, "r=%d %dx%d", r, pw, ph);
        }
    }
    /* a decode limit below the image: refused before decoding it */
    img_set_decode_limit((size_t)w * h);
    snprintf(name, sizeof name, "%s: refused over the decode limit", t->label);
    CHECK(refused(file, (size_t)n), name, " ");
    img_set_decode_limit(0);

    free(want);
    av_free(file);
    av_frame_free(&f);
}

// ---------------------------------------------------------------------------
// Hand-made headers

static void headers(void)
{
    /* QOI claiming 1<<30 x 1<<30 */
    unsigned char qoi[32] = "qoif\x40\0\0\0\x40\0\0\0\x03\0";
    unsigned char web[40] = "RIFF\x20\0\0\0WEBPVP8X\x0a\0\0\0\x02\0\0\0\xff\xff\0\xff\xff\0";
    unsigned char big[16] = "II+\0\x08\0\0\0";
    unsigned char zero[32] = "qoif\0\0\0\0\0\0\0\x10\x03\0";
    memset(qoi + 14, 0, 18);
    qoi[31] = 1;
    CHECK(refused(qoi, sizeof qoi), "QOI with a 2^30 x 2^30 header refused", " ");
    CHECK(refused(zero, sizeof zero), "QOI with width 0 refused", " ");
    CHECK(refused(web, sizeof web), "animated WebP (VP8X flag) refused", " ");
    CHECK(refused(big, sizeof big), "BigTIFF refused", " ");
    CHECK(refused("II*\0", 4), "4-byte TIFF refused", " ");
    CHECK(refused("", 0), "zero bytes refused", " ");
    CHECK(imgav_sniff("\x89PNG\r\n\x1a\n", 8) == 0 && imgav_sniff("\xff\xd8\xff\xe0", 4) == 0 &&
              imgav_sniff("P5\n1 1\n255\n", 11) == 0 && imgav_sniff("P6 1 1 255 ", 11) == 0 &&
              imgav_sniff("GIF89a", 6) == 0 && imgav_sniff("BM", 2) == 0,
          "stb's formats are not sniffed as libavcodec's", " ");
    CHECK(imgav_sniff("\xff\xd8\xff\xf7\0\x0b", 6) == 1, "JPEG-LS (SOF55) is sniffed", " ");
    /* FFmpeg 5.1's libjxl wrapper hangs on truncated files: not taken */
    CHECK(imgav_sniff("\xff\x0a\xfa\x7f", 4) == 0, "JPEG XL is not sniffed", " ");
    CHECK(imgav_is_image_ext("webp") && imgav_is_image_ext("tif") && imgav_is_image_ext("exr") &&
              !imgav_is_image_ext("mp4") && !imgav_is_image_ext("png"),
          "image extensions", " ");
}

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "--dump"))
        return dump(argv[2], argv[3]);
    if (argc != 1) {
        fprintf(stderr, "usage: test_image_av [--dump FILE OUT]\n");
        return 2;
    }
    /* the refusals' messages are expected: keep the log to the checks */
    {
        int fd = open("/dev/null", O_WRONLY);
        if (fd >= 0) {
            dup2(fd, 2);
            close(fd);
        }
    }
    av_log_set_level(AV_LOG_QUIET);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        round_trip(&cases[i]);
    headers();
    CHECK_EXIT();
}
