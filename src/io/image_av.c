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
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libavcodec/avcodec.h>
#include <libavcodec/version.h>
#include <libavutil/bswap.h>
#include <libavutil/imgutils.h>
#include <libavutil/intreadwrite.h>
#include <libavutil/log.h>
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define IMGAV_NATIVE_BE 1
#else
#define IMGAV_NATIVE_BE 0
#endif

/* The stb path's limits (third_party/stb_impl.c STBI_MAX_DIMENSIONS and
 * image_io.c's INT_MAX bytes of samples), so every decoder accepts the
 * same sizes. */
#define IMGAV_MAX_SIDE (1 << 20)
/* DESIGN.md §1.2's conversion flags. */
#define IMGAV_SWS_FLAGS (SWS_BITEXACT | SWS_ACCURATE_RND)
/* swscale's vector code may store a little past a plane's end. */
#define IMGAV_SWS_SLACK 64
/* TIFF pages counted for the notice; a longer chain is "many". */
#define IMGAV_MAX_PAGES 100000
/* Bytes imgav_probe_file reads for a header. */
#define IMGAV_PROBE_BYTES 65536
/* WebP's own limit on each side (14-bit sizes). */
#define IMGAV_WEBP_MAX 16383

// ---------------------------------------------------------------------------
// Formats

enum imgav_kind {
    K_NONE = 0, K_WEBP, K_TIFF, K_BIGTIFF, K_JP2, K_J2K, K_EXR, K_QOI,
    K_JPEGLS, K_PCX, K_SGI, K_SUN, K_XBM, K_XPM, K_XWD, K_DDS, K_PFM, K_PHM,
    K_PAM, K_PBM, K_PGM, K_PPM, K_DPX, K_PGX
};

typedef struct kind_info {
    const char *name;      /* for messages */
    enum AVCodecID id;
    const char *decoder;   /* preferred decoder by name, else by id */
    /* Bytes a pixel the decoder may hold besides the frame it returns
     * (its working buffers), for the decode limit. */
    unsigned work_per_px;
    /* AV_EF_EXPLODE off: the TIFF decoder fails every tag it does not
     * know under it (ExtraSamples, which Pillow writes for alpha). */
    int no_explode;
} kind_info;

static const kind_info kinds[] = {
    [K_WEBP] = { "WebP", AV_CODEC_ID_WEBP, "webp", 8 },
    [K_TIFF] = { "TIFF", AV_CODEC_ID_TIFF, "tiff", 8, 1 },
    [K_BIGTIFF] = { "BigTIFF", AV_CODEC_ID_TIFF, NULL, 0 },
    /* OpenJPEG when present: what Pillow, OpenCV and ImageMagick decode
     * with (the same pixels for lossy files too); its planes are int32. */
    [K_JP2] = { "JPEG 2000", AV_CODEC_ID_JPEG2000, "libopenjpeg", 16 },
    [K_J2K] = { "JPEG 2000", AV_CODEC_ID_JPEG2000, "libopenjpeg", 16 },
    [K_EXR] = { "OpenEXR", AV_CODEC_ID_EXR, "exr", 4 },
    [K_QOI] = { "QOI", AV_CODEC_ID_QOI, "qoi", 0 },
    [K_JPEGLS] = { "JPEG-LS", AV_CODEC_ID_JPEGLS, "jpegls", 8 },
    [K_PCX] = { "PCX", AV_CODEC_ID_PCX, "pcx", 0 },
    [K_SGI] = { "SGI", AV_CODEC_ID_SGI, "sgi", 0 },
    [K_SUN] = { "Sun raster", AV_CODEC_ID_SUNRAST, "sunrast", 0 },
    [K_XBM] = { "XBM", AV_CODEC_ID_XBM, "xbm", 0 },
    [K_XPM] = { "XPM", AV_CODEC_ID_XPM, "xpm", 0 },
    [K_XWD] = { "XWD", AV_CODEC_ID_XWD, "xwd", 0 },
    [K_DDS] = { "DDS", AV_CODEC_ID_DDS, "dds", 0 },
    [K_PFM] = { "PFM", AV_CODEC_ID_PFM, "pfm", 0 },
    [K_PHM] = { "PHM", AV_CODEC_ID_PHM, "phm", 0 },
    [K_PAM] = { "PAM", AV_CODEC_ID_PAM, "pam", 0 },
    [K_PBM] = { "PBM", AV_CODEC_ID_PBM, "pbm", 0 },
    [K_PGM] = { "PGM", AV_CODEC_ID_PGM, "pgm", 0 },
    [K_PPM] = { "PPM", AV_CODEC_ID_PPM, "ppm", 0 },
    [K_DPX] = { "DPX", AV_CODEC_ID_DPX, "dpx", 0 },
    [K_PGX] = { "PGX", AV_CODEC_ID_PGX, "pgx", 0 },
};

static int is_space(unsigned char c)
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}

static int has(const unsigned char *d, size_t n, size_t off, const char *s, size_t len)
{
    return n >= off + len && !memcmp(d + off, s, len);
}

/* JPEG-LS: a JPEG whose first frame header is SOF55 (0xf7).  stb and
 * libjpeg-turbo read none; every other JPEG stays with them.  Walks the
 * length-prefixed segments up to the first SOF, SOS or EOI. */
static int is_jpegls(const unsigned char *d, size_t n)
{
    size_t pos = 2;
    if (n < 4 || d[0] != 0xff || d[1] != 0xd8)
        return 0;
    while (pos + 4 <= n) {
        int m;
        if (d[pos] != 0xff)
            return 0;
        while (pos < n && d[pos] == 0xff)
            pos++;
        if (pos + 3 > n)
            return 0;
        m = d[pos++];
        if (m == 0xf7)
            return 1;
        if ((m >= 0xc0 && m <= 0xcf && m != 0xc4 && m != 0xc8 && m != 0xcc) ||
            m == 0xda || m == 0xd9)
            return 0;
        if ((m >= 0xd0 && m <= 0xd7) || m == 0x01)
            continue;
        pos += AV_RB16(d + pos);
    }
    return 0;
}

/* The signatures libavformat's image pipe demuxers probe for (img2dec.c),
 * without the formats stb reads (PNG, JPEG, BMP, GIF, PSD, TGA, HDR, PIC,
 * binary PGM/PPM). */
static enum imgav_kind sniff(const unsigned char *d, size_t n)
{
    if (!d || n < 4)
        return K_NONE;
    if (has(d, n, 0, "RIFF", 4) && has(d, n, 8, "WEBP", 4))
        return K_WEBP;
    if (has(d, n, 0, "II*\0", 4) || has(d, n, 0, "MM\0*", 4))
        return K_TIFF;
    if (has(d, n, 0, "II+\0", 4) || has(d, n, 0, "MM\0+", 4))
        return K_BIGTIFF;
    if (has(d, n, 0, "\0\0\0\x0cjP  \r\n\x87\n", 12))
        return K_JP2;
    if (has(d, n, 0, "\xff\x4f\xff\x51", 4))
        return K_J2K;
    if (has(d, n, 0, "\x76\x2f\x31\x01", 4))
        return K_EXR;
    if (has(d, n, 0, "qoif", 4) && n >= 14)
        return K_QOI;
    /* JPEG XL (ff 0a, or its ISOBMFF box) is not taken: FFmpeg 5.1's
     * libjxl wrapper spins for ever on a truncated file (JXL has no end
     * marker to check first). */
    if (is_jpegls(d, n))
        return K_JPEGLS;
    if (has(d, n, 0, "\x59\xa6\x6a\x95", 4))
        return K_SUN;
    if (has(d, n, 0, "DDS ", 4) && n >= 8 && AV_RL32(d + 4) == 124)
        return K_DDS;
    if (has(d, n, 0, "SDPX", 4) || has(d, n, 0, "XPDS", 4))
        return K_DPX;
    if (has(d, n, 0, "PG ML ", 6) || has(d, n, 0, "PG LM ", 6))
        return K_PGX;
    if (has(d, n, 0, "/* XPM */", 9))
        return K_XPM;
    if (has(d, n, 0, "#define ", 8) || has(d, n, 0, "/* XBM", 6)) {
        size_t look = n < 512 ? n : 512;
        if (memmem(d, look, "_width", 6))
            return K_XBM;
    }
    if (d[0] == 'P' && is_space(d[2])) {
        switch (d[1]) {
        case 'F': case 'f': return K_PFM;
        case 'H': case 'h': return K_PHM;
        case '7': return K_PAM;
        case '1': case '4': return K_PBM;
        case '2': return K_PGM;   /* ASCII; binary P5 is stb's */
        case '3': return K_PPM;   /* ASCII; binary P6 is stb's */
        default: break;
        }
    }
    /* PCX: manufacturer 10, version 0..5, RLE 0/1, 1/2/4/8 bits, a
     * non-empty window, reserved byte 0 and 1..4 planes. */
    if (n >= 128 && d[0] == 0x0a && d[1] <= 5 && d[1] != 1 && d[2] <= 1 &&
        (d[3] == 1 || d[3] == 2 || d[3] == 4 || d[3] == 8) &&
        AV_RL16(d + 8) >= AV_RL16(d + 4) && AV_RL16(d + 10) >= AV_RL16(d + 6) &&
        d[64] == 0 && d[65] >= 1 && d[65] <= 4)
        return K_PCX;
    /* SGI: magic 474, storage 0/1, 1 or 2 bytes a channel, 1..3 dims. */
    if (n >= 512 && AV_RB16(d) == 474 && d[2] <= 1 && (d[3] == 1 || d[3] == 2) &&
        AV_RB16(d + 4) >= 1 && AV_RB16(d + 4) <= 3)
        return K_SGI;
    /* XWD: header size >= 100, version 7, pixmap format <= 2, depth 1..32. */
    if (n >= 100 && AV_RB32(d) >= 100 && AV_RB32(d + 4) == 7 &&
        AV_RB32(d + 8) <= 2 && AV_RB32(d + 12) >= 1 && AV_RB32(d + 12) <= 32)
        return K_XWD;
    return K_NONE;
}

int imgav_sniff(const void *buf, size_t n)
{
    return sniff(buf, n) != K_NONE;
}

int imgav_is_image_ext(const char *ext)
{
    static const char *const exts[] = {
        "webp", "tif", "tiff", "jp2", "j2k", "j2c", "jpc", "jpf", "jpx", "exr",
        "qoi", "jls", "pcx", "sgi", "rgb", "rgba", "bw", "ras", "sun",
        "im1", "im8", "im24", "im32", "xbm", "xpm", "xwd", "dds", "pfm", "phm",
        "pam", "pbm", "dpx", "pgx", NULL};
    if (!ext)
        return 0;
    for (int i = 0; exts[i]; i++)
        if (!strcmp(ext, exts[i]))
            return 1;
    return 0;
}

// ---------------------------------------------------------------------------
// Headers: sizes, pages, refusals

/* Random access to the bytes: memory, or a file through pread. */
typedef struct src {
    const unsigned char *d;
    size_t n;   /* bytes at d (the whole file for memory) */
    int fd;     /* -1: memory only */
    size_t fsize;
} src;

static int src_read(const src *s, size_t off, void *buf, size_t len)
{
    if (off <= s->n && len <= s->n - off) {
        memcpy(buf, s->d + off, len);
        return 0;
    }
    if (s->fd >= 0 && off <= s->fsize && len <= s->fsize - off) {
        ssize_t r;
        do {
            r = pread(s->fd, buf, len, (off_t)off);
        } while (r < 0 && errno == EINTR);
        return r == (ssize_t)len ? 0 : -1;
    }
    return -1;
}

static size_t src_size(const src *s)
{
    return s->fd >= 0 ? s->fsize : s->n;
}

/* TIFF IFD0's ImageWidth/ImageLength and the number of pages (IFDs in the
 * chain).  Returns 0, or -1 when the header cannot be walked. */
static int tiff_header(const src *s, int *w, int *h, long *pages)
{
    unsigned char hd[8], e[12];
    int be, gotw = 0, goth = 0;
    uint32_t off;
    long np = 0;

    if (src_read(s, 0, hd, 8))
        return -1;
    be = hd[0] == 'M';
#define T16(p) (be ? AV_RB16(p) : AV_RL16(p))
#define T32(p) (be ? AV_RB32(p) : AV_RL32(p))
    off = T32(hd + 4);
    while (off && np < IMGAV_MAX_PAGES) {
        unsigned char cnt[2], nx[4];
        unsigned count;
        if (off < 8 || src_read(s, off, cnt, 2))
            return np ? 0 : -1;
        count = T16(cnt);
        if (np == 0) {
            for (unsigned i = 0; i < count; i++) {
                unsigned tag, type;
                uint32_t v;
                if (src_read(s, (size_t)off + 2 + 12 * (size_t)i, e, 12))
                    return -1;
                tag = T16(e);
                type = T16(e + 2);
                v = type == 3 ? T16(e + 8) : T32(e + 8); /* SHORT or LONG */
                if (type != 3 && type != 4)
                    continue;
                if (tag == 256)
                    *w = (int)(v > INT_MAX ? INT_MAX : v), gotw = 1;
                else if (tag == 257)
                    *h = (int)(v > INT_MAX ? INT_MAX : v), goth = 1;
            }
            if (!gotw || !goth)
                return -1;
        }
        np++;
        if (src_read(s, (size_t)off + 2 + 12 * (size_t)count, nx, 4))
            break;
        {
            uint32_t next = T32(nx);
            /* a loop back is the end of the chain, not more pages */
            if (next <= off)
                break;
            off = next;
        }
    }
#undef T16
#undef T32
    *pages = np;
    return 0;
}

/* JPEG 2000: where the codestream is (a raw .j2k, or a JP2's jp2c box)
 * and how long.  Returns 0, or -1. */
static int jp2_codestream(const src *s, size_t *cs, size_t *len)
{
    size_t pos = 0, total = src_size(s);
    unsigned char b[16];
    if (src_read(s, 0, b, 4))
        return -1;
    if (AV_RB32(b) == 0xff4fff51) {
        *cs = 0;
        *len = total;
        return 0;
    }
    while (pos + 8 <= total) {
        uint64_t bl;
        size_t hl = 8;
        if (src_read(s, pos, b, 16) && src_read(s, pos, b, 8))
            return -1;
        bl = AV_RB32(b);
        if (bl == 1) {
            if (pos + 16 > total)
                return -1;
            bl = AV_RB64(b + 8);
            hl = 16;
        } else if (bl == 0) {
            bl = total - pos;
        }
        if (bl < hl || bl > total - pos) {
            if (!memcmp(b + 4, "jp2c", 4)) {
                /* a jp2c box longer than the file: truncated */
                *cs = pos + hl;
                *len = total - pos - hl;
                return 0;
            }
            return -1;
        }
        if (!memcmp(b + 4, "jp2c", 4)) {
            *cs = pos + hl;
            *len = (size_t)bl - hl;
            return 0;
        }
        pos += (size_t)bl;
    }
    return -1;
}

static int j2k_size(const src *s, int *w, int *h)
{
    size_t cs, len;
    unsigned char b[24];
    uint32_t xs, ys, xo, yo;
    if (jp2_codestream(s, &cs, &len) || len < 24 || src_read(s, cs, b, 24) ||
        AV_RB32(b) != 0xff4fff51)
        return -1;
    xs = AV_RB32(b + 8);
    ys = AV_RB32(b + 12);
    xo = AV_RB32(b + 16);
    yo = AV_RB32(b + 20);
    if (xo >= xs || yo >= ys)
        return -1;
    *w = (int)((xs - xo) > INT_MAX ? INT_MAX : xs - xo);
    *h = (int)((ys - yo) > INT_MAX ? INT_MAX : ys - yo);
    return 0;
}

/* EXR's header: the dataWindow attribute (box2i, inclusive corners), the
 * compression, and where the attribute list ends (the offset table
 * follows).  Returns 0, or -1. */
typedef struct exr_hdr {
    int w, h, compression;
    size_t end;
} exr_hdr;

static int exr_header(const src *s, exr_hdr *e)
{
    size_t pos = 8, total = src_size(s);
    int have_window = 0;
    e->compression = -1;
    for (int attr = 0; attr < 1024 && pos < total; attr++) {
        char name[2][64];
        unsigned char sz[4], box[16];
        uint32_t size;
        for (int k = 0; k < 2; k++) {
            int i = 0;
            for (;; i++) {
                unsigned char c;
                if (i >= 63 || src_read(s, pos + (size_t)i, &c, 1))
                    return -1;
                name[k][i] = (char)c;
                if (!c)
                    break;
            }
            pos += (size_t)i + 1;
            if (k == 0 && i == 0) {
                e->end = pos; /* the empty name ends the header */
                return have_window ? 0 : -1;
            }
        }
        if (src_read(s, pos, sz, 4))
            return -1;
        size = AV_RL32(sz);
        pos += 4;
        if (!strcmp(name[0], "dataWindow") && !strcmp(name[1], "box2i") && size == 16) {
            int64_t x0, y0, x1, y1;
            if (src_read(s, pos, box, 16))
                return -1;
            x0 = (int32_t)AV_RL32(box);
            y0 = (int32_t)AV_RL32(box + 4);
            x1 = (int32_t)AV_RL32(box + 8);
            y1 = (int32_t)AV_RL32(box + 12);
            if (x1 < x0 || y1 < y0)
                return -1;
            e->w = (int)(x1 - x0 + 1 > INT_MAX ? INT_MAX : x1 - x0 + 1);
            e->h = (int)(y1 - y0 + 1 > INT_MAX ? INT_MAX : y1 - y0 + 1);
            have_window = 1;
        } else if (!strcmp(name[0], "compression") && size == 1) {
            if (src_read(s, pos, box, 1))
                return -1;
            e->compression = box[0];
        }
        if (size > total - pos)
            return -1;
        pos += size;
    }
    return -1;
}

static int exr_size(const src *s, int *w, int *h)
{
    exr_hdr e;
    if (exr_header(s, &e))
        return -1;
    *w = e.w;
    *h = e.h;
    return 0;
}

/* WebP: the canvas (VP8X) or the one frame's size.  *anim set for an
 * animation (VP8X flag, or an ANIM/ANMF chunk anywhere). */
static int webp_header(const src *s, int *w, int *h, int *anim)
{
    unsigned char b[30];
    size_t pos = 12, total = src_size(s);
    int known = 0;
    *anim = 0;
    if (src_read(s, 0, b, 30))
        return -1;
    if (!memcmp(b + 12, "VP8X", 4)) {
        *anim = (b[20] & 0x02) != 0;
        *w = (int)AV_RL24(b + 24) + 1;
        *h = (int)AV_RL24(b + 27) + 1;
        known = 1;
    } else if (!memcmp(b + 12, "VP8L", 4) && b[20] == 0x2f) {
        uint32_t v = AV_RL32(b + 21);
        *w = (int)(v & 0x3fff) + 1;
        *h = (int)((v >> 14) & 0x3fff) + 1;
        known = 1;
    } else if (!memcmp(b + 12, "VP8 ", 4) && b[23] == 0x9d && b[24] == 0x01 &&
               b[25] == 0x2a) {
        *w = AV_RL16(b + 26) & 0x3fff;
        *h = AV_RL16(b + 28) & 0x3fff;
        known = 1;
    }
    for (int i = 0; i < 10000 && pos + 8 <= total; i++) {
        unsigned char c[8];
        uint32_t len;
        if (src_read(s, pos, c, 8))
            break;
        if (!memcmp(c, "ANIM", 4) || !memcmp(c, "ANMF", 4))
            *anim = 1;
        len = AV_RL32(c + 4);
        pos += 8 + (size_t)len + (len & 1);
    }
    return known ? 0 : -1;
}

/* Does the WebP say it has alpha (what libwebp's WebPGetFeatures and so
 * Pillow go by: VP8X's flag, VP8L's alpha_is_used bit; a plain VP8 has
 * none)?  The lossless decoder returns ARGB either way. */
static int webp_has_alpha(const unsigned char *d, size_t n)
{
    if (n >= 21 && !memcmp(d + 12, "VP8X", 4))
        return (d[20] & 0x10) != 0;
    if (n >= 25 && !memcmp(d + 12, "VP8L", 4))
        return (AV_RL32(d + 21) >> 28) & 1;
    return 0;
}

/* Size from the header for the formats that say it at a fixed place.
 * Returns 0 or -1 (unknown).  *pages: TIFF's page count (else 1), *anim:
 * an animated WebP. */
static int header_size(enum imgav_kind k, const src *s, int *w, int *h,
                       long *pages, int *anim)
{
    unsigned char b[32];
    *pages = 1;
    *anim = 0;
    switch (k) {
    case K_WEBP:
        return webp_header(s, w, h, anim);
    case K_TIFF:
        return tiff_header(s, w, h, pages);
    case K_JP2:
    case K_J2K:
        return j2k_size(s, w, h);
    case K_EXR:
        return exr_size(s, w, h);
    case K_QOI:
        if (src_read(s, 0, b, 12))
            return -1;
        *w = (int)(AV_RB32(b + 4) > INT_MAX ? INT_MAX : AV_RB32(b + 4));
        *h = (int)(AV_RB32(b + 8) > INT_MAX ? INT_MAX : AV_RB32(b + 8));
        return 0;
    case K_PCX:
        if (src_read(s, 0, b, 12))
            return -1;
        *w = AV_RL16(b + 8) - AV_RL16(b + 4) + 1;
        *h = AV_RL16(b + 10) - AV_RL16(b + 6) + 1;
        return 0;
    case K_SGI:
        if (src_read(s, 0, b, 12))
            return -1;
        *w = AV_RB16(b + 6);
        *h = AV_RB16(b + 8);
        return 0;
    case K_SUN:
        if (src_read(s, 0, b, 12))
            return -1;
        *w = (int)(AV_RB32(b + 4) > INT_MAX ? INT_MAX : AV_RB32(b + 4));
        *h = (int)(AV_RB32(b + 8) > INT_MAX ? INT_MAX : AV_RB32(b + 8));
        return 0;
    case K_XWD:
        if (src_read(s, 0, b, 24))
            return -1;
        *w = (int)(AV_RB32(b + 16) > INT_MAX ? INT_MAX : AV_RB32(b + 16));
        *h = (int)(AV_RB32(b + 20) > INT_MAX ? INT_MAX : AV_RB32(b + 20));
        return 0;
    case K_DDS:
        if (src_read(s, 0, b, 20))
            return -1;
        *h = (int)(AV_RL32(b + 12) > INT_MAX ? INT_MAX : AV_RL32(b + 12));
        *w = (int)(AV_RL32(b + 16) > INT_MAX ? INT_MAX : AV_RL32(b + 16));
        return 0;
    default:
        return -1;
    }
}

int imgav_probe_file(const char *path, int *width, int *height)
{
    unsigned char *buf;
    struct src s;
    ssize_t got = 0;
    enum imgav_kind k;
    int fd, w = 0, h = 0, anim, ret = 0;
    long pages;
    off_t end;

    if (!path || !strcmp(path, "-"))
        return -1;
    do {
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0)
        return -1;
    buf = malloc(IMGAV_PROBE_BYTES);
    end = lseek(fd, 0, SEEK_END);
    if (!buf || end < 0) {
        free(buf);
        close(fd);
        return -1;
    }
    while (got < IMGAV_PROBE_BYTES) {
        ssize_t r = pread(fd, buf + got, (size_t)(IMGAV_PROBE_BYTES - got), got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += r;
    }
    k = sniff(buf, (size_t)got);
    if (k == K_NONE) {
        ret = -1;
    } else {
        s.d = buf;
        s.n = (size_t)got;
        s.fd = fd;
        s.fsize = (size_t)end;
        if (k != K_BIGTIFF && header_size(k, &s, &w, &h, &pages, &anim) == 0 &&
            !anim && w > 0 && h > 0) {
            if (width)
                *width = w;
            if (height)
                *height = h;
            ret = 1;
        }
    }
    free(buf);
    close(fd);
    return ret;
}

// ---------------------------------------------------------------------------
// Completeness: decoders that conceal a cut file without an error

/* These decoders stop where the data stops and return the frame with the
 * rest of it unset (or repeated), telling nobody: EXR ignores its failing
 * blocks, QOI repeats the last pixel, Sun raster, PCX and SGI stop their
 * RLE early, JPEG-LS (FFmpeg's mjpeg code) decodes what is there, DPX,
 * XBM and XPM stop where the data does, and JPEG 2000 decoders do so by
 * design.  So the container is walked here: every
 * block, run or marker the image needs must be in the file.  Returns NULL,
 * or the reason the file is refused. */

static const char *jp2_complete(const src *s)
{
    size_t cs, len;
    if (jp2_codestream(s, &cs, &len) || len < 4 ||
        s->d[cs + len - 2] != 0xff || s->d[cs + len - 1] != 0xd9)
        return "file is truncated (no JPEG 2000 end-of-codestream marker)";
    return NULL;
}

static const char *qoi_complete(const unsigned char *d, size_t n)
{
    static const unsigned char end[8] = { 0, 0, 0, 0, 0, 0, 0, 1 };
    uint64_t want = (uint64_t)AV_RB32(d + 4) * AV_RB32(d + 8), got = 0;
    size_t pos = 14;
    if (n < 22 || memcmp(d + n - 8, end, 8))
        return "file is truncated (no QOI end marker)";
    /* every chunk's pixels: the stream must cover the image exactly */
    while (pos < n - 8 && got < want) {
        unsigned char b = d[pos];
        if (b == 0xfe) {
            pos += 4;
            got++;
        } else if (b == 0xff) {
            pos += 5;
            got++;
        } else if ((b >> 6) == 3) {
            pos++;
            got += (uint64_t)(b & 0x3f) + 1;
        } else if ((b >> 6) == 2) {
            pos += 2;
            got++;
        } else {
            pos++;
            got++;
        }
    }
    if (got < want || pos > n - 8)
        return "file is truncated (QOI data ends before the last pixel)";
    return NULL;
}

static const char *sun_complete(const unsigned char *d, size_t n)
{
    uint32_t w, h, depth, type, maplen;
    uint64_t line, want, got = 0;
    size_t pos;
    if (n < 32)
        return "file is truncated";
    w = AV_RB32(d + 4);
    h = AV_RB32(d + 8);
    depth = AV_RB32(d + 12);
    type = AV_RB32(d + 20);
    maplen = AV_RB32(d + 28);
    line = ((uint64_t)w * depth + 7) / 8;
    line += line & 1;               /* rows are padded to 16 bits */
    want = line * h;
    if (maplen > n - 32)
        return "file is truncated (Sun raster colour map)";
    pos = 32 + (size_t)maplen;
    if (type != 2)                  /* raw rows */
        return want <= n - pos ? NULL : "file is truncated";
    while (got < want) {            /* RLE: 0x80 N V = N+1 times V, 0x80 0 = 0x80 */
        if (pos >= n)
            return "file is truncated";
        if (d[pos] != 0x80) {
            pos++;
            got++;
        } else {
            if (pos + 1 >= n)
                return "file is truncated";
            if (d[pos + 1] == 0) {
                pos += 2;
                got++;
            } else {
                if (pos + 2 >= n)
                    return "file is truncated";
                got += (uint64_t)d[pos + 1] + 1;
                pos += 3;
            }
        }
    }
    return NULL;
}

static const char *pcx_complete(const unsigned char *d, size_t n)
{
    uint64_t h = (uint64_t)AV_RL16(d + 10) - AV_RL16(d + 6) + 1;
    uint64_t want = (uint64_t)AV_RL16(d + 66) * d[65] * h, got = 0;
    size_t pos = 128;
    if (d[2] == 0) {                /* uncompressed */
        if (want > n - pos)
            return "file is truncated";
        pos += (size_t)want;
    }
    while (got < want) {            /* RLE: 0xc0|N V = N times V */
        if (pos >= n)
            return "file is truncated";
        if (d[pos] >= 0xc0) {
            if (pos + 1 >= n)
                return "file is truncated";
            got += d[pos] & 0x3f;
            pos += 2;
        } else {
            got++;
            pos++;
        }
    }
    /* 8 bits in one plane: a 256-colour palette (0x0c, then 768 bytes)
     * ends the file; the decoder reads it from the end */
    if (d[3] == 8 && d[65] == 1 && (n - pos < 769 || d[n - 769] != 0x0c))
        return "file is truncated (no PCX palette after the image data)";
    return NULL;
}

/* SGI: raw planes, or RLE rows through the start/length tables. */
static const char *sgi_complete(const unsigned char *d, size_t n)
{
    uint64_t w = AV_RB16(d + 6), h = AV_RB16(d + 8), z = AV_RB16(d + 10), bpc = d[3];
    if (AV_RB16(d + 4) < 3)
        z = 1;
    if (AV_RB16(d + 4) == 1)
        h = 1;
    if (d[2] == 0)
        return w * h * z * bpc <= n - 512 ? NULL : "file is truncated";
    if (h * z * 8 > n - 512)
        return "file is truncated (SGI offset tables)";
    for (uint64_t i = 0; i < h * z; i++) {
        uint64_t start = AV_RB32(d + 512 + 4 * i);
        uint64_t len = AV_RB32(d + 512 + 4 * (h * z + i));
        if (start > n || len > n - start)
            return "file is truncated (SGI row past the end of the file)";
    }
    return NULL;
}

/* DPX: the header's total file size. */
static const char *dpx_complete(const unsigned char *d, size_t n)
{
    uint32_t size;
    if (n < 20)
        return "file is truncated";
    size = d[0] == 'S' ? AV_RB32(d + 16) : AV_RL32(d + 16);
    if (size > n)
        return "file is truncated";
    return NULL;
}

/* XBM and XPM are C source: the array's closing brace ends the data (the
 * decoders stop at the last complete number or string, quietly). */
static const char *c_source_complete(const unsigned char *d, size_t n)
{
    const unsigned char *open = memchr(d, '{', n);
    if (!open || !memchr(open, '}', n - (size_t)(open - d)))
        return "file is truncated (no closing brace)";
    return NULL;
}

/* JPEG-LS: the scan data must reach the end-of-image marker. */
static const char *jls_complete(const unsigned char *d, size_t n)
{
    if (n < 4 || d[n - 2] != 0xff || d[n - 1] != 0xd9)
        return "file is truncated (no JPEG-LS end-of-image marker)";
    return NULL;
}

/* EXR: every block the offset table names lies inside the file (the
 * decoder skips the ones that do not, leaving their rows unset). */
static const char *exr_complete(const src *s)
{
    static const int lines[] = { 1, 1, 1, 16, 32, 16, 32, 32, 32, 256 };
    const unsigned char *d = s->d;
    size_t n = s->n, pos, nblocks = 0;
    uint32_t flags = n >= 8 ? AV_RL32(d + 4) : 0;
    int tiled = (flags & 0x200) != 0;
    exr_hdr e;

    if (flags & 0x1800)
        return NULL; /* multi-part and deep data: not walked (the decoder checks them) */
    if (exr_header(s, &e))
        return "corrupt OpenEXR header";
    if (!tiled) {
        if (e.compression < 0 || e.compression > 9)
            return NULL; /* the decoder refuses it */
        nblocks = ((size_t)e.h + (size_t)lines[e.compression] - 1) / (size_t)lines[e.compression];
    }
    pos = e.end;
    /* tiled: the table runs up to the first block it points at */
    for (size_t i = 0, first = SIZE_MAX; tiled ? pos + 8 * i < first : i < nblocks; i++) {
        size_t at = pos + 8 * i, hl = tiled ? 20 : 8;
        uint64_t off;
        if (at > n || n - at < 8)
            return "file is truncated (OpenEXR offset table)";
        off = AV_RL64(d + at);
        if (off < pos + 8 * (i + 1) || off > n || n - off < hl ||
            AV_RL32(d + off + hl - 4) > n - off - hl)
            return "file is truncated (OpenEXR block past the end of the file)";
        if (off < first)
            first = (size_t)off;
    }
    return NULL;
}

static const char *check_complete(enum imgav_kind k, const src *s)
{
    switch (k) {
    case K_JP2:
    case K_J2K:
        return jp2_complete(s);
    case K_QOI:
        return qoi_complete(s->d, s->n);
    case K_SUN:
        return sun_complete(s->d, s->n);
    case K_PCX:
        return pcx_complete(s->d, s->n);
    case K_JPEGLS:
        return jls_complete(s->d, s->n);
    case K_SGI:
        return sgi_complete(s->d, s->n);
    case K_DPX:
        return dpx_complete(s->d, s->n);
    case K_XBM:
    case K_XPM:
        return c_source_complete(s->d, s->n);
    case K_EXR:
        return exr_complete(s);
    default:
        return NULL;
    }
}

// ---------------------------------------------------------------------------
// Pixel formats to img_image's layouts

enum conv_path { P_COPY, P_SCALE, P_PAL, P_FLOAT, P_SWS, P_WEBP };

/* What a decoded pixel format becomes: channels, bytes a sample, and how.
 * Returns 0, or -1 for a format we cannot take (hardware, Bayer...). */
static int out_layout(enum AVPixelFormat fmt, int *ch, int *bps, enum conv_path *path)
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
                       int bps, uint8_t *out, const char **why)
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
        *why = "image too wide";
        return -1;
    }
    dls[0] = (int)ls;
    sws = sws_getContext(f->width, f->height, f->format, f->width, f->height,
                         to[bps - 1][ch - 1], IMGAV_SWS_FLAGS, NULL, NULL, NULL);
    if (!sws) {
        *why = "unsupported pixel format";
        return -1;
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
        *why = "pixel format conversion failed";
        return -1;
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

// ---------------------------------------------------------------------------
// Decoding

static pthread_once_t log_once = PTHREAD_ONCE_INIT;

/* libav's decoders would print their own lines; ours names the reason.
 * The same rule as video_io's (which may set the level first). */
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
    if (out_layout(fmt, &ch, &bps, &p))
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

    if (kinds[k].decoder)
        codec = avcodec_find_decoder_by_name(kinds[k].decoder);
    if (!codec)
        codec = avcodec_find_decoder(kinds[k].id);
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
                         AV_EF_CAREFUL | (kinds[k].no_explode ? 0 : AV_EF_EXPLODE);
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
    ge_err(name, "cannot read image: %s", why);
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
    k = sniff(d, n);
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
    st.work_per_px = kinds[k].work_per_px;

    hdr = header_size(k, &s, &w, &h, &pages, &anim);
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
            ge_err(name, "cannot read image: image too large (%dx%d)", w, h);
            return -1;
        }
    }
    if ((why = check_complete(k, &s))) {
        fail(name, why);
        return -1;
    }

    if (!(fr = av_frame_alloc())) {
        ge_err(name, "cannot read image: %s: out of memory", kinds[k].name);
        return -1;
    }
    if (decode_frame(k, d, n, &st, fr, &err)) {
        if (st.too_large && st.w > 0 && st.h > 0)
            ge_err(name, "cannot read image: image too large (%dx%d)", st.w, st.h);
        else if (err == AVERROR_DECODER_NOT_FOUND)
            ge_err(name, "cannot read image: this libavcodec has no %s decoder",
                   kinds[k].name);
        else
            ge_err(name, "cannot read image: %s: %s", kinds[k].name,
                   av_why(err, ebuf, sizeof ebuf));
        goto end;
    }
    desc = av_pix_fmt_desc_get(fr->format);
    if (!desc || out_layout(fr->format, &ch, &bps, &path)) {
        ge_err(name, "cannot read image: %s: unsupported pixel format %s", kinds[k].name,
               desc ? desc->name : "?");
        goto end;
    }
    if (k == K_WEBP) {
        if (fr->format == AV_PIX_FMT_YUV420P || fr->format == AV_PIX_FMT_YUVA420P) {
            path = P_WEBP; /* lossy: libwebp's conversion */
            ch = fr->format == AV_PIX_FMT_YUVA420P ? 4 : 3;
            bps = 1;
        } else if (ch == 4 && !webp_has_alpha(d, n)) {
            ch = 3; /* lossless without alpha: RGB, as libwebp reports it */
        }
    }
    if (fr->width <= 0 || fr->height <= 0) {
        fail(name, "image has no pixels");
        goto end;
    }
    bytes = (size_t)fr->width * (size_t)fr->height * (size_t)ch * (size_t)bps;
    img->pixels = malloc(bytes + (path == P_SWS ? IMGAV_SWS_SLACK : 0));
    if (!img->pixels) {
        ge_err(name, "cannot read image: %s: out of memory", kinds[k].name);
        goto end;
    }
    switch (path) {
    case P_COPY:
        copy_components(fr, desc, ch, bps, img->pixels);
        break;
    case P_SCALE:
        copy_scaled(fr, desc, ch, bps, img->pixels);
        break;
    case P_FLOAT:
        copy_float(fr, desc, ch, img->pixels);
        break;
    case P_PAL:
        ch = copy_pal(fr, img->pixels);
        break;
    case P_WEBP:
        webp_to_rgb(fr, ch, img->pixels);
        break;
    case P_SWS:
        if (convert_sws(fr, desc, ch, bps, img->pixels, &why)) {
            ge_err(name, "cannot read image: %s: %s (%s)", kinds[k].name, why, desc->name);
            goto end;
        }
        break;
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
        free(img->pixels);
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
        ge_err(so_name(out), "cannot write WebP: %dx%d is larger than WebP's %dx%d",
               width, height, IMGAV_WEBP_MAX, IMGAV_WEBP_MAX);
        so_fail_reported(out, EFBIG);
        return -1;
    }
    codec = kind == IMGAV_OUT_TIFF ? avcodec_find_encoder_by_name("tiff")
                                   : avcodec_find_encoder_by_name("libwebp");
    if (!codec) {
        ge_err(so_name(out), "cannot write %s: this libavcodec has no %s encoder",
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
        /* LZW: a 4096x4096 edge map in 0.93 s / 3.47 MB, deflate (zlib's
         * default level) 2.24 s / 3.22 MB (2-core machine, 2026-12-01) */
        av_opt_set(c->priv_data, "compression_algo", "lzw", 0);
    } else {
        /* libwebp takes ARGB; grey goes in as R = G = B, opaque */
        c->pix_fmt = AV_PIX_FMT_RGB32;
        av_opt_set_int(c->priv_data, "lossless", 1, 0);
        /* libwebp's least effort (method 0, quality 0, which in lossless
         * mode is effort): a 4096x4096 edge map in 3.0 s / 3.42 MB, against
         * 11.7 s / 3.17 MB at its default quality 75 (2-core machine,
         * 2026-12-01) */
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
