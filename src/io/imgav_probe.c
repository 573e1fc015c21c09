/*
 * imgav_probe.c — the formats image_av.c decodes: their signatures, the
 * sizes their headers state (checked before any decoder starts), and
 * whether a file is whole (for the decoders that conceal a cut file
 * without an error).  See image_av.c for why.
 */
#include "image_av.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include <libavutil/intreadwrite.h>

#include "imgav_internal.h"
#include "util.h"

/* Bytes imgav_probe_file reads for a header. */
#define IMGAV_PROBE_BYTES 65536

// ---------------------------------------------------------------------------
// Formats

const kind_info imgav_kinds[] = {
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
enum imgav_kind imgav_sniff_kind(const unsigned char *d, size_t n)
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
    return imgav_sniff_kind(buf, n) != K_NONE;
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
int imgav_webp_has_alpha(const unsigned char *d, size_t n)
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
int imgav_header_size(enum imgav_kind k, const src *s, int *w, int *h,
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
    k = imgav_sniff_kind(buf, (size_t)got);
    if (k == K_NONE) {
        ret = -1;
    } else {
        s.d = buf;
        s.n = (size_t)got;
        s.fd = fd;
        s.fsize = (size_t)end;
        if (k != K_BIGTIFF && imgav_header_size(k, &s, &w, &h, &pages, &anim) == 0 &&
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

const char *imgav_check_complete(enum imgav_kind k, const src *s)
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

