/*
 * image_io.c — images in (native channel count, 16-bit kept as 16-bit:
 * DESIGN.md §1.1): PNG through libspng (image_in_png.c, stb's pixels exactly),
 * JPEG through libjpeg-turbo (image_in_jpeg.c, OpenCV's and Pillow's
 * pixels; EXIF orientation applied), every other format stb_image reads
 * through stb, chosen by the file's first bytes (img_load_mem); out into
 * safeout's checked writer: PNG through png_out.c (libdeflate, several
 * threads), a PGM writer of our own (stb has none), the rest through
 * stb_image_write's *_to_func writers.
 *
 * Loading reads the file ourselves and decodes from memory: open/read give
 * the real errno ("Permission denied", "Is a directory") where stb would only
 * say "can't fopen", and a short read is an error rather than stb's silent
 * end of data; image_in_stb.c sees stb's decoders run past the end of the
 * file, and headers that promise more data than the file holds, before
 * anything of the claimed size is allocated.  stb's reasons are terse keys
 * ("bad png sig"); we translate the common ones and quote the rest.
 *
 * Works around stb v2.27's PNM reader (VERSIONS.md): 16-bit samples come
 * back big-endian, maxval is ignored, and a truncated payload leaves the
 * pixels uninitialised.  We parse the PNM header ourselves to fix all three.
 */
#include "image_io.h"
#include "bigbuf.h"
#include "image_av.h"
#include "image_in_jpeg.h"
#include "image_in_png.h"
#include "image_in_stb.h"
#include "png_out.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <stb_image.h>
#include <stb_image_write.h>

#define IMG_JPEG_QUALITY 95

// ---------------------------------------------------------------------------
// Formats

int img_format_from_path(const char *path)
{
    char ext[8];
    ge_ext(path, ext, sizeof ext);
    if (strcmp(ext, "png") == 0)
        return IMG_FMT_PNG;
    if (strcmp(ext, "jpg") == 0 || strcmp(ext, "jpeg") == 0)
        return IMG_FMT_JPG;
    if (strcmp(ext, "bmp") == 0)
        return IMG_FMT_BMP;
    if (strcmp(ext, "tga") == 0)
        return IMG_FMT_TGA;
    if (strcmp(ext, "pgm") == 0)
        return IMG_FMT_PGM;
    if (strcmp(ext, "tif") == 0 || strcmp(ext, "tiff") == 0)
        return IMG_FMT_TIFF;
    if (strcmp(ext, "webp") == 0)
        return IMG_FMT_WEBP;
    return IMG_FMT_UNKNOWN;
}

/* Header only (stbi_info reads a few bytes through stdio): cheap enough to
 * ask of every file of a batch, videos included. */
int img_probe(const char *path)
{
    return img_probe_size(path, NULL, NULL);
}

int img_probe_size(const char *path, int *width, int *height)
{
    int w, h, c, r;
    /* libavcodec's formats first: stb's TGA test takes almost anything */
    if ((r = imgav_probe_file(path, width, height)) >= 0)
        return r;
    if (!path || strcmp(path, "-") == 0 || !stbi_info(path, &w, &h, &c))
        return 0;
    if (width)
        *width = w;
    if (height)
        *height = h;
    return 1;
}

// ---------------------------------------------------------------------------
// Reading the file

/* Reads the whole file (or stdin for "-").  On failure returns -1 with
 * the reason recorded (ge_fail). */
static int read_file(const char *path, unsigned char **data, size_t *size)
{
    const char *why = NULL;
    unsigned char *buf = NULL;
    size_t cap = 0, len = 0;
    struct stat st;
    int fd, e = 0;

    *data = NULL;
    *size = 0;
    if (strcmp(path, "-") == 0) {
        fd = STDIN_FILENO;
    } else {
        do {
            fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        } while (fd < 0 && errno == EINTR);
        if (fd < 0)
            return ge_fail("%s", strerror(errno));
    }
    if (fstat(fd, &st) != 0) {
        e = errno;
        goto end;
    }
    if (S_ISDIR(st.st_mode)) {
        e = EISDIR;
        goto end;
    }
    if (S_ISREG(st.st_mode)) {
        if (st.st_size == 0) {
            why = "file is empty";
            goto end;
        }
        /* stb takes the length as int. */
        if (st.st_size > INT_MAX) {
            why = "file too large";
            goto end;
        }
        cap = (size_t)st.st_size;
    } else {
        cap = 1 << 16; /* a pipe: grow as it comes */
    }
    buf = bb_alloc(cap);
    if (!buf) {
        e = ENOMEM;
        goto end;
    }
    for (;;) {
        ssize_t r;
        if (len == cap) {
            unsigned char *nb;
            if (S_ISREG(st.st_mode))
                break; /* read what fstat promised (a file may grow) */
            if (cap >= (size_t)INT_MAX) {
                why = "file too large";
                goto end;
            }
            cap = cap * 2 > (size_t)INT_MAX ? (size_t)INT_MAX : cap * 2;
            nb = bb_realloc(buf, cap);
            if (!nb) {
                e = ENOMEM;
                goto end;
            }
            buf = nb;
        }
        r = read(fd, buf + len, cap - len);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            e = errno;
            goto end;
        }
        if (r == 0)
            break;
        len += (size_t)r;
    }
    if (len == 0) {
        why = "file is empty";
        goto end;
    }
    *data = buf;
    *size = len;
    buf = NULL;
end:
    if (e)
        why = e == ENOMEM ? "out of memory (reading the file)" : strerror(e);
    if (why)
        ge_fail("%s", why);
    bb_free(buf);
    if (fd != STDIN_FILENO)
        close(fd);
    return *data ? 0 : -1;
}

// ---------------------------------------------------------------------------
// stb's reasons, for people

static const char *friendly_reason(const char *r)
{
    static const struct {
        const char *key, *text;
    } map[] = {
        { "unknown image type", "not a supported image format" },
        { "outofmem", "out of memory" },
        { "too large", "image too large (stb_image decodes at most 1048576 pixels a side and 2 GiB of samples)" },
        { "0-pixel image", "image has no pixels" },
        { "outofdata", "file is truncated" },
        { "not enough pixels", "file is truncated" },
        { "unexpected end", "file is truncated" },
        { "no IDAT", "file is truncated (no image data)" },
        { "bad png sig", "not a PNG file" },
        { "not BMP", "not a BMP file" },
        { "not GIF", "not a GIF file" },
        { "not PSD", "not a PSD file" },
        { "max value > 65535", "PNM maximum value above 65535" },
        { "bad zlib header", "corrupt PNG data (bad zlib header)" },
        { "bad huffman code", "corrupt compressed data" },
        { "bad codelengths", "corrupt compressed data" },
        { "bad sizes", "corrupt compressed data" },
        { "corrupt", "corrupt image data" },
        { "bad IHDR len", "corrupt PNG header" },
        { "first not IHDR", "corrupt PNG header" },
        { "no SOI", "corrupt JPEG (no start-of-image marker)" },
        { "no SOF", "corrupt JPEG (no frame header)" },
        { "progressive jpeg", "unsupported JPEG variant" },
        { "1/2/4/8/16-bit only", "unsupported PNG bit depth" },
    };
    size_t i;
    if (!r || !*r)
        return "damaged or unsupported image data";
    for (i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strcmp(r, map[i].key) == 0)
            return map[i].text;
    return NULL; /* caller quotes stb's key */
}

static void load_error(const char *path, const char *why)
{
    ge_fail_in(path, "cannot read image: %s", why);
}

static void stb_error(const char *path)
{
    const char *r = stbi_failure_reason();
    const char *t = friendly_reason(r);
    if (t)
        load_error(path, t);
    else
        ge_fail_in(path, "cannot read image: damaged or unsupported image data "
                   "(%s)", r);
}

/* A decode that failed after stbi_info knew the format: out of memory
 * says so and names the decoder (stb's "outofmem", or no reason at all
 * with malloc's ENOMEM); the rest as stb_error. */
static void stb_load_error(const char *name, const unsigned char *d, size_t n, int e)
{
    const char *r = stbi_failure_reason();
    if (r ? !strcmp(r, "outofmem") : e == ENOMEM)
        ge_fail_in(name, "cannot read image: %s: out of memory", imgstb_format(d, n));
    else if (!r)
        ge_fail_in(name, "cannot read image: %s: damaged or unsupported image data",
                   imgstb_format(d, n));
    else
        stb_error(name);
}

// ---------------------------------------------------------------------------
// PNM fix-ups

typedef struct pnm_info {
    int is_pnm;
    int width, height, comp;
    unsigned maxval;
    size_t data_off;
} pnm_info;

/* Mirrors stbi__pnm_info's reading exactly (stb decides where the pixels
 * start), but refuses numbers stb would overflow on. */
static int pnm_parse(const unsigned char *d, size_t n, pnm_info *p)
{
    size_t pos = 0;
    unsigned long v[3];
    char c;
    int i;

    memset(p, 0, sizeof *p);
    if (n < 2 || d[0] != 'P' || (d[1] != '5' && d[1] != '6'))
        return 0;
    p->is_pnm = 1;
    p->comp = d[1] == '6' ? 3 : 1;
    pos = 2;
#define PNM_EOF() (pos >= n)
#define PNM_GET() (pos < n ? (char)d[pos++] : (char)0)
#define PNM_SPACE(ch) ((ch) == ' ' || ((ch) >= '\t' && (ch) <= '\r'))
    c = PNM_GET();
    for (i = 0; i < 3; i++) {
        int digits = 0;
        for (;;) { /* whitespace and '#' comments */
            while (!PNM_EOF() && PNM_SPACE(c))
                c = PNM_GET();
            if (PNM_EOF() || c != '#')
                break;
            while (!PNM_EOF() && c != '\n' && c != '\r')
                c = PNM_GET();
        }
        v[i] = 0;
        while (!PNM_EOF() && c >= '0' && c <= '9') {
            if (++digits > 9)
                return -1; /* stb's int would overflow */
            v[i] = v[i] * 10 + (unsigned long)(c - '0');
            c = PNM_GET();
        }
    }
#undef PNM_EOF
#undef PNM_GET
#undef PNM_SPACE
    p->width = (int)v[0];
    p->height = (int)v[1];
    p->maxval = (unsigned)v[2];
    p->data_off = pos;
    return 1;
}

static void pnm_fix(const pnm_info *p, img_image *img)
{
    size_t i, n = (size_t)img->width * img->height * img->channels;
    if (img->bytes_per_sample == 2) {
        uint16_t *s = img->pixels;
        const unsigned char *b = img->pixels;
        for (i = 0; i < n; i++) {
            /* stb copied the big-endian bytes as they are. */
            unsigned v = (unsigned)b[2 * i] << 8 | b[2 * i + 1];
            if (p->maxval != 65535) {
                if (v > p->maxval)
                    v = p->maxval;
                v = (unsigned)(((unsigned long)v * 65535 + p->maxval / 2) /
                               p->maxval);
            }
            s[i] = (uint16_t)v;
        }
    } else if (p->maxval != 255) {
        uint8_t *s = img->pixels;
        for (i = 0; i < n; i++) {
            unsigned v = s[i] > p->maxval ? p->maxval : s[i];
            s[i] = (uint8_t)((v * 255 + p->maxval / 2) / p->maxval);
        }
    }
}

// ---------------------------------------------------------------------------
// Guards for stb v2.27 bugs found by fuzzing (tests/fuzz, VERSIONS.md)

/* JPEG DHT tables whose 16 code-length counts add up to more than 256
 * symbols: stb v2.27's stbi__build_huffman writes past huffman.size[257]
 * and the DHT reader past values[256] (upstream nothings/stb#1289 and
 * #1291, fixed by PR #1297 in v2.28; Debian 12 ships v2.27).  Walks the
 * file the way stbi__decode_jpeg_header / stbi__decode_jpeg_image do
 * (marker, length-prefixed segment, entropy-coded data after SOS up to
 * the next marker other than a stuffed 00 or an RST) and visits every DHT
 * stb could reach; one that stb would overflow on refuses the file.
 * Also refused: a scan that decodes with a Huffman table no DHT before it
 * defined.  stb does not check this and decodes with the uninitialised
 * table (its stbi__jpeg is malloc'ed), whose garbage sends
 * stbi__jpeg_huff_decode's symbol index out of range: an assert, or an
 * out-of-bounds read without asserts (the index check upstream added in
 * PR #1297 for nothings/stb#1289 only bounds the read; the table stays
 * undefined).  JPEG requires tables before use (only Motion-JPEG frames
 * imply default ones, which stb does not supply either).
 * Returns 0, -1 for an oversized table, -2 for an undefined one. */
static int jpeg_guard(const unsigned char *d, size_t n)
{
    size_t pos = 0;
    int m, dc_def = 0, ac_def = 0, progressive = -1;

    /* stb: SOI first (after any 0xff fill), else not a JPEG */
    if (n < 2 || d[0] != 0xff)
        return 0;
    while (pos < n && d[pos] == 0xff)
        pos++;
    if (pos >= n || d[pos] != 0xd8)
        return 0;
    pos++;
    for (;;) {
        size_t len, end;
        /* next marker: stb skips stray bytes, then 0xff fill */
        while (pos < n && d[pos] != 0xff)
            pos++;
        while (pos < n && d[pos] == 0xff)
            pos++;
        if (pos >= n)
            return 0;
        m = d[pos++];
        if (m == 0xd9)                       /* EOI: stb reads no further */
            return 0;
        if (m == 0x00 || (m >= 0xd0 && m <= 0xd8) || m == 0x01)
            continue;                        /* no length: stb fails or skips */
        if (n - pos < 2)
            return 0;
        len = (size_t)d[pos] << 8 | d[pos + 1];
        if (len < 2)
            return 0;                        /* stb refuses it */
        end = pos + len;
        if (m == 0xc4) {                     /* DHT: stb reads table by table */
            size_t p = pos + 2;
            long left = (long)len - 2;
            while (left > 0) {
                int i, count = 0, q = p < n ? d[p] : 0;
                p++;                         /* class and id */
                if ((q >> 4) == 0 && (q & 15) <= 3)
                    dc_def |= 1 << (q & 15);
                else if ((q >> 4) == 1 && (q & 15) <= 3)
                    ac_def |= 1 << (q & 15);
                for (i = 0; i < 16; i++, p++)
                    count += p < n ? d[p] : 0; /* stb reads 0 past the end */
                if (count > 256)
                    return -1;
                p += (size_t)count;
                left -= 17 + count;
            }
            if (left != 0)
                return 0;                    /* stb fails the segment */
            end = p;
        }
        if (m == 0xc0 || m == 0xc1 || m == 0xc2) /* the SOFs stb reads */
            progressive = m == 0xc2;
        if (m == 0xda && progressive >= 0 && pos + 2 < n) {
            /* SOS: the tables its components decode with (stbi__decode_
             * jpeg_image: every block uses both in a sequential scan; a
             * progressive DC-first scan the DC one, an AC scan the AC one) */
            int ns = d[pos + 2], i;
            size_t sp = pos + 3 + 2 * (size_t)ns; /* Ss, Se, Ah|Al */
            if (ns >= 1 && ns <= 4 && sp + 2 < n && len >= 6 + 2 * (size_t)ns) {
                int ss = d[sp], ah = d[sp + 2] >> 4;
                for (i = 0; i < ns; i++) {
                    int sel = d[pos + 4 + 2 * i], td = sel >> 4, ta = sel & 15;
                    int need_dc = !progressive || (ss == 0 && ah == 0);
                    int need_ac = !progressive || ss != 0;
                    if (td > 3 || ta > 3)
                        continue;            /* stb refuses those */
                    if ((need_dc && !(dc_def >> td & 1)) ||
                        (need_ac && !(ac_def >> ta & 1)))
                        return -2;
                }
            }
        }
        pos = end;
        if (m == 0xda) {                     /* SOS: skip the entropy-coded data */
            while (pos < n) {
                size_t q;
                if (d[pos] != 0xff) {
                    pos++;
                    continue;
                }
                for (q = pos; q < n && d[q] == 0xff; q++)
                    ;
                if (q < n && (d[q] == 0x00 || (d[q] >= 0xd0 && d[q] <= 0xd7))) {
                    pos = q + 1;             /* stuffed byte or restart */
                    continue;
                }
                break;                       /* a marker: the loop reads it */
            }
        }
    }
}

/* Radiance HDR: stb v2.27 decodes RLE scanlines with stbi__get8, which
 * returns 0 past the end of the data, and takes a 0 as an empty "dump"
 * run: a file cut inside an RLE scanline loops forever (CVE-2021-42715,
 * upstream nothings/stb#1224, fixed by PR #1223 in v2.28).  Replays stb's
 * header and RLE parsing over the bytes (no pixels) and refuses a file
 * whose RLE data would be read past its end.  Returns 0, or -1. */
#define HDR_BUFLEN 1024 /* STBI__HDR_BUFLEN */

typedef struct hdr_rd {
    const unsigned char *d;
    size_t n, pos;
    int past_end;
} hdr_rd;

static int hdr_get8(hdr_rd *r)
{
    if (r->pos < r->n)
        return r->d[r->pos++];
    r->past_end = 1;
    return 0;
}

/* stbi__hdr_gettoken, byte for byte (the last byte of the file is read
 * but not kept, as stb does). */
static const char *hdr_token(hdr_rd *r, char *buf)
{
    int len = 0;
    char c = (char)hdr_get8(r);
    while (r->pos < r->n && c != '\n') {
        buf[len++] = c;
        if (len == HDR_BUFLEN - 1) {
            while (r->pos < r->n && hdr_get8(r) != '\n')
                ;
            break;
        }
        c = (char)hdr_get8(r);
    }
    buf[len] = 0;
    return buf;
}

static int hdr_guard(const unsigned char *d, size_t n)
{
    hdr_rd r = { d, n, 0, 0 };
    char buf[HDR_BUFLEN];
    char *t;
    long width, height, j;
    int valid = 0, k;

    if (!((n >= 11 && !memcmp(d, "#?RADIANCE\n", 11)) ||
          (n >= 7 && !memcmp(d, "#?RGBE\n", 7))))
        return 0;
    hdr_token(&r, buf);
    for (;;) {
        t = (char *)hdr_token(&r, buf);
        if (!t[0])
            break;
        if (!strcmp(t, "FORMAT=32-bit_rle_rgbe"))
            valid = 1;
    }
    if (!valid)
        return 0;
    t = (char *)hdr_token(&r, buf);
    if (strncmp(t, "-Y ", 3))
        return 0;
    height = strtol(t + 3, &t, 10);
    while (*t == ' ')
        t++;
    if (strncmp(t, "+X ", 3))
        return 0;
    width = strtol(t + 3, NULL, 10);
    /* A floor for the pixels before stb allocates them: 4 bytes each when
     * flat; an RLE row (8 <= width < 32768) at least its 4-byte header and,
     * a channel, 2 bytes a run of at most 127. */
    if (width >= 1 && height >= 1 && width <= (1L << 20) && height <= (1L << 20)) {
        unsigned long long row = 4ull * (unsigned long long)width;
        unsigned long long rle = 4 + 8 * (((unsigned long long)width + 126) / 127);
        if (width >= 8 && width < 32768 && rle < row)
            row = rle;
        if (row * (unsigned long long)height > n - r.pos)
            return -1;
    }
    /* stb's own limits refuse the rest; flat data cannot loop */
    if (width < 8 || width >= 32768 || height < 1 ||
        height > (1L << 20) /* STBI_MAX_DIMENSIONS, stb_impl.c */)
        return 0;
    for (j = 0; j < height; j++) {
        int c1 = hdr_get8(&r), c2 = hdr_get8(&r), len = hdr_get8(&r);
        if (r.past_end)
            return -1;
        if (c1 != 2 || c2 != 2 || (len & 0x80))
            return 0;            /* stb switches to flat data: finite */
        len = len << 8 | hdr_get8(&r);
        if (r.past_end)
            return -1;
        if (len != width)
            return 0;            /* stb refuses it */
        for (k = 0; k < 4; k++) {
            long i = 0;
            while (width - i > 0) {
                int count = hdr_get8(&r);
                if (count > 128) {
                    hdr_get8(&r);
                    count -= 128;
                    if (count > width - i)
                        return 0; /* stb refuses it */
                } else {
                    if (count > width - i)
                        return 0;
                    r.pos += (size_t)count <= r.n - r.pos ? (size_t)count
                                                          : r.n - r.pos + 1;
                    if (r.pos > r.n)
                        r.past_end = 1;
                }
                if (r.past_end)
                    return -1;
                i += count;
            }
        }
    }
    return 0;
}

// ---------------------------------------------------------------------------
// Loading

/* What decoding may allocate, all buffers together (img_set_decode_limit). */
static size_t decode_limit = (size_t)INT_MAX;

void img_set_decode_limit(size_t bytes)
{
    decode_limit = bytes ? bytes : (size_t)INT_MAX;
}

/* --jpeg-decoder and --no-auto-orient (set before loading starts). */
static int jpeg_decoder = IMG_JPEG_TURBO;
static int auto_orient = 1;

void img_set_jpeg_decoder(int which)
{
    jpeg_decoder = which == IMG_JPEG_STB ? IMG_JPEG_STB : IMG_JPEG_TURBO;
}

void img_set_auto_orient(int on)
{
    auto_orient = on != 0;
}

void img_versions(char *buf, size_t n)
{
    snprintf(buf, n, "libdeflate and libspng %s (PNG), libjpeg-turbo %s (JPEG)", imgpng_version(),
             imgjpg_version());
}

/* Bytes a pixel that stb v2.27 allocates besides the image it returns,
 * for the formats whose working buffers outgrow the image (found by
 * fuzzing: a 10-byte GIF header claiming 17993x14136 pixels made stb
 * allocate and clear 2.3 GB, 9 bytes a pixel, before reading any image
 * data, where the check on the returned image alone saw 1 GB):
 *   GIF  background (4) and history (1) beside the RGBA image
 *   HDR  float RGB (12) before the conversion to 8 bits
 *   PIC  RGBA (4) before the conversion to RGB
 * The others decode into the image or through smaller buffers (PSD
 * returns the RGBA it decodes into). */
static size_t stb_work_per_px(const unsigned char *d, size_t n)
{
    if (n >= 6 && (!memcmp(d, "GIF87a", 6) || !memcmp(d, "GIF89a", 6)))
        return 5;
    if ((n >= 11 && !memcmp(d, "#?RADIANCE\n", 11)) ||
        (n >= 7 && !memcmp(d, "#?RGBE\n", 7)))
        return 12;
    if (n >= 92 && !memcmp(d, "\x53\x80\xf6\x34", 4) && !memcmp(d + 88, "PICT", 4))
        return 4;   /* the RGBA asked for (is_pic), beside an RGB image */
    return 0;
}

/* Softimage PIC: when stbi__pic_load_core fails, stb v2.27 frees the
 * image and passes NULL on to stbi__convert_format, which dereferences it
 * (or, asked for the file's own channel count before knowing it, asserts):
 * CVE-2023-43898, upstream nothings/stb#1452, fix proposed in PR #1454,
 * not in any release.  Asked for 4 channels, convert_format has nothing
 * to do and returns the NULL, a clean failure; an RGB file then comes back
 * as RGBA with alpha 255, and pic_to_rgb drops that channel, which is what
 * stb's own 4-to-3 conversion does. */
static int is_pic(const unsigned char *d, size_t n)
{
    return n >= 92 && !memcmp(d, "\x53\x80\xf6\x34", 4) &&
           !memcmp(d + 88, "PICT", 4);
}

static void pic_to_rgb(img_image *img)
{
    unsigned char *p = img->pixels;
    size_t i, n = (size_t)img->width * (size_t)img->height;
    if (img->channels != 3 || img->bytes_per_sample != 1)
        return;
    for (i = 0; i < n; i++) {
        p[3 * i] = p[4 * i];
        p[3 * i + 1] = p[4 * i + 1];
        p[3 * i + 2] = p[4 * i + 2];
    }
}

static int png_sig_ok(const unsigned char *d, size_t n)
{
    static const unsigned char sig[8] = { 0x89, 'P', 'N', 'G', 0x0d, 0x0a, 0x1a, 0x0a };
    return n >= 8 && !memcmp(d, sig, 8);
}

/* Decodes n bytes at data; `name` is used in messages only. */
static int decode_mem(const unsigned char *data, size_t size,
                      const char *name, img_image *img)
{
    size_t bytes;
    pnm_info pnm;
    int w = 0, h = 0, comp = 0, comp_max, is16, len, ran_off = 0;

    if (size == 0) {
        load_error(name, "file is empty");
        return -1;
    }
    /* stb takes the length as int. */
    if (size > (size_t)INT_MAX) {
        load_error(name, "file too large");
        return -1;
    }
    len = (int)size;

    switch (pnm_parse(data, size, &pnm)) {
    case -1:
        load_error(name, "corrupt PNM header");
        return -1;
    case 1:
        if (pnm.maxval == 0 || pnm.width <= 0 || pnm.height <= 0) {
            load_error(name, "corrupt PNM header");
            return -1;
        }
        break;
    default:
        break;
    }

    switch (jpeg_guard(data, size)) {
    case -1:
        load_error(name, "corrupt JPEG (bad Huffman table)");
        return -1;
    case -2:
        load_error(name, "corrupt JPEG (undefined Huffman table)");
        return -1;
    default:
        break;
    }
    if (hdr_guard(data, size) != 0) {
        load_error(name, "file is truncated");
        return -1;
    }
    if (!stbi_info_from_memory(data, len, &w, &h, &comp)) {
        if (imgstb_short(data, size)) /* a signature, then too little */
            load_error(name, "file is truncated");
        else
            stb_error(name);
        return -1;
    }
    is16 = stbi_is_16_bit_from_memory(data, len);
    if (w <= 0 || h <= 0 || comp < 1 || comp > 4) {
        load_error(name, "image has no pixels");
        return -1;
    }
    /* stbi_info answers a grey or RGB PNG right after IHDR, before it could
     * see a tRNS chunk, which makes stbi_load add an alpha channel: such a
     * file may load with one channel more (found by test_image_in_png). */
    comp_max = comp;
    if (png_sig_ok(data, size) && (comp == 1 || comp == 3))
        comp_max = comp + 1;
    /* stb's own ceiling is INT_MAX bytes; refuse before it allocates.
     * The decode budget (img_set_decode_limit) counts the decoder's
     * working buffers too (stb_work_per_px). */
    bytes = (size_t)w * (size_t)h;
    if (bytes > (size_t)INT_MAX / (size_t)comp_max / (is16 ? 2u : 1u) ||
        bytes > decode_limit / ((size_t)comp_max * (is16 ? 2u : 1u) +
                                stb_work_per_px(data, size))) {
        ge_fail_in(name, "cannot read image: image too large (%dx%d)", w, h);
        return -1;
    }
    bytes *= (size_t)comp * (is16 ? 2u : 1u);
    /* Before anything of the claimed size is allocated
     * (image_in_stb.c) */
    if (imgstb_short(data, size)) {
        load_error(name, "file is truncated");
        return -1;
    }
    if (pnm.is_pnm && size - pnm.data_off < bytes) {
        load_error(name, "file is truncated");
        return -1;
    }

    imgstb_clear_reason();
    errno = 0;
    /* PIC: RGBA from stb, see pic_to_rgb */
    img->pixels = imgstb_load(data, size, is16, is_pic(data, size) ? 4 : 0, &img->width,
                              &img->height, &img->channels, &ran_off);
    if (!img->pixels) {
        stb_load_error(name, data, size, errno);
        return -1;
    }
    if (ran_off) {
        load_error(name, "file is truncated");
        return -1;
    }
    img->bytes_per_sample = is16 ? 2 : 1;
    if (img->width != w || img->height != h ||
        (img->channels != comp && img->channels != comp_max)) {
        /* info and load disagreeing means a decoder bug; do not trust it. */
        load_error(name, "damaged or unsupported image data");
        return -1;
    }
    if (pnm.is_pnm)
        pnm_fix(&pnm, img);
    if (is_pic(data, size))
        pic_to_rgb(img);
    return 0;
}

/* Deflate expands at most 1032:1 (258 bytes from a 2-bit code at best):
 * the IDAT data of a whole PNG (read up to IEND) holds at least the
 * image's bytes / 1032, filter bytes not counted.  Less is a header
 * claiming more than the file holds: refused before a decoder allocates
 * the claimed image.  1 when too short. */
static int png_too_short(const unsigned char *d, size_t n, size_t idat_bytes)
{
    static const unsigned char ch[7] = { 1, 0, 3, 1, 2, 0, 4 }; /* by colour type */
    uint64_t w, h, bits;

    if (n < 29 || memcmp(d + 12, "IHDR", 4) || d[25] > 6 || !ch[d[25]])
        return 0;
    w = (uint64_t)d[16] << 24 | (uint64_t)d[17] << 16 | (uint64_t)d[18] << 8 | d[19];
    h = (uint64_t)d[20] << 24 | (uint64_t)d[21] << 16 | (uint64_t)d[22] << 8 | d[23];
    if (w > (1u << 20) || h > (1u << 20))
        return 0; /* too large for stb and libspng alike: they say so */
    bits = w * h * ch[d[25]] * d[24];
    return bits / 8 / 1032 > idat_bytes;
}

/* PNG, two things stb v2.27 does with IDAT chunks (found by tests/fuzz;
 * no upstream report that we know of):
 *  - an IDAT of length 0 before any image data is read as memcpy(NULL, p,
 *    0) (stbi__getn into a z->idata not yet allocated): undefined
 *    behaviour (UBSan: null pointer passed as argument 1) that a compiler
 *    may use to drop stb's later NULL checks.  An empty IDAT adds nothing
 *    to the image, so a copy without the empty ones decodes the same;
 *  - an IDAT whose length runs past the end of the file makes stb grow
 *    its buffer to that length (up to 2 GiB for a 200-byte file) before
 *    finding the data missing.  Such a file fails in stb anyway ("outofdata",
 *    "file is truncated"); we say so before the allocation.
 * png_scan walks the chunks as stb does (length, type, data, CRC
 * unchecked) up to IEND or the first chunk that does not fit.  Returns -1
 * for a chunk cut by the end of the file or too little IDAT data for the
 * header's image (png_too_short), else 0 with the number of empty IDATs in
 * *empty. */
static int png_scan(const unsigned char *d, size_t n, size_t *empty)
{
    static const unsigned char sig[8] = { 0x89, 'P', 'N', 'G', 0x0d, 0x0a, 0x1a, 0x0a };
    size_t pos, idat_bytes = 0;

    *empty = 0;
    if (n < 8 || memcmp(d, sig, 8))
        return 0;
    for (pos = 8; n - pos >= 8; ) {
        size_t len = (size_t)d[pos] << 24 | (size_t)d[pos + 1] << 16 |
                     (size_t)d[pos + 2] << 8 | d[pos + 3];
        int idat = !memcmp(d + pos + 4, "IDAT", 4);
        /* Any chunk running past the end: the file is cut.  (stb fails at
         * it either way; through callbacks, image_in_stb.c, it would skip
         * a length of 2^31 or more to the end of its 128-byte buffer only
         * and read on from there, where from memory it skips to the end.) */
        if (len > n - pos - 8)
            return -1;
        if (len == 0 && idat)
            (*empty)++;
        if (idat)
            idat_bytes += len;
        if (!memcmp(d + pos + 4, "IEND", 4) || n - pos - 8 - len < 4)
            break;
        pos += 12 + len;
    }
    return png_too_short(d, n, idat_bytes) ? -1 : 0;
}

/* A copy of the PNG without its empty IDAT chunks (png_scan's walk), or
 * NULL when out of memory (stb then gets the original). */
static unsigned char *png_strip_empty_idat(const unsigned char *d, size_t n,
                                           size_t *out_n)
{
    unsigned char *c = malloc(n);
    size_t pos, o = 8;

    if (!c)
        return NULL;
    memcpy(c, d, 8);
    for (pos = 8; n - pos >= 12; ) {
        size_t len = (size_t)d[pos] << 24 | (size_t)d[pos + 1] << 16 |
                     (size_t)d[pos + 2] << 8 | d[pos + 3];
        int iend = !memcmp(d + pos + 4, "IEND", 4);
        if (len > n - pos - 12)
            break;
        if (len != 0 || memcmp(d + pos + 4, "IDAT", 4)) {
            memcpy(c + o, d + pos, 12 + len);
            o += 12 + len;
        }
        pos += 12 + len;
        if (iend)
            break;
    }
    memcpy(c + o, d + pos, n - pos); /* what follows, as it was */
    *out_n = o + (n - pos);
    return c;
}

/* stb with its guards: every format but the ones below, and the fallback
 * for PNGs libspng will not decode. */
static int load_stb(const void *buf, size_t n, const char *name, img_image *img)
{
    size_t cn = 0, empty = 0;
    unsigned char *copy = NULL;
    int rc;
    if (buf && png_scan(buf, n, &empty) < 0) {
        load_error(name, "file is truncated");
        return -1;
    }
    if (empty)
        copy = png_strip_empty_idat(buf, n, &cn);
    rc = copy ? decode_mem(copy, cn, name, img) : decode_mem(buf, n, name, img);
    free(copy);
    if (rc == 0)
        img->decoder = "stb_image";
    return rc;
}

static int load_png(const void *buf, size_t n, const char *name, img_image *img)
{
    size_t empty = 0;
    /* stb's guard first: it is what a file cut inside IDAT gets either way */
    if (png_scan(buf, n, &empty) < 0) {
        load_error(name, "file is truncated");
        return -1;
    }
    switch (imgpng_decode(buf, n, decode_limit, name, img)) {
    case IMGPNG_OK: /* (img->decoder says which: libdeflate or libspng) */
        return 0;
    case IMGPNG_FAILED:
        return -1;
    default:
        return load_stb(buf, n, name, img); /* stb decides (image_in_png.c) */
    }
}

static int load_jpeg(const void *buf, size_t n, const char *name, img_image *img)
{
    int rc, o;
    if (jpeg_decoder == IMG_JPEG_STB) {
        rc = load_stb(buf, n, name, img);
    } else {
        rc = imgjpg_decode(buf, n, decode_limit, name, img);
        if (rc == 0)
            img->decoder = "libjpeg-turbo";
    }
    if (rc != 0 || !auto_orient)
        return rc;
    o = imgjpg_exif_orientation(buf, n);
    if (imgjpg_orient(img, o)) {
        load_error(name, "out of memory");
        return -1;
    }
    return 0;
}

/* Which decoder reads a file is decided by its first bytes, never by its
 * name.  Formats only stb reads (PSD, HDR, PIC, GIF, PNM, BMP, TGA) and
 * anything unrecognised go to stb, which names what it cannot read. */
enum img_in { IMG_IN_STB, IMG_IN_PNG, IMG_IN_JPEG };

/* A JPEG to stb: FF, any number of FF fill bytes, D8 (stb's get_marker).
 * libjpeg-turbo wants FF D8 first and refuses the rest, so a file stb
 * would read as a JPEG never reaches stb's JPEG decoder unasked (a fuzz
 * finding: "FF FF D8" led there, into an undefined shift). */
static int jpeg_sig(const unsigned char *d, size_t n)
{
    size_t i = 1;
    if (n < 2 || d[0] != 0xff)
        return 0;
    while (i < n && d[i] == 0xff)
        i++;
    return i < n && d[i] == 0xd8;
}

static int sniff(const unsigned char *d, size_t n)
{
    static const unsigned char png_sig[8] = { 0x89, 'P', 'N', 'G', 0x0d, 0x0a, 0x1a, 0x0a };
    if (n >= 8 && !memcmp(d, png_sig, 8))
        return IMG_IN_PNG;
    if (jpeg_sig(d, n))
        return IMG_IN_JPEG;
    return IMG_IN_STB;
}

int img_load_mem(const void *buf, size_t n, const char *name, img_image *img)
{
    int rc;
    if (!img)
        return -1;
    memset(img, 0, sizeof *img);
    if (!name)
        name = "(memory)";
    if (!buf && n) {
        load_error(name, strerror(EINVAL));
        return -1;
    }
    /* What stb and the PNG/JPEG decoders do not read: libavcodec
     * (image_av.c), chosen by the file's first bytes. */
    if (imgav_sniff(buf, n))
        return imgav_load_mem(buf, n, name, decode_limit, img);
    switch (buf ? sniff(buf, n) : IMG_IN_STB) {
    case IMG_IN_PNG:
        rc = load_png(buf, n, name, img);
        break;
    case IMG_IN_JPEG:
        rc = load_jpeg(buf, n, name, img);
        break;
    default:
        rc = load_stb(buf, n, name, img);
        break;
    }
    if (rc != 0) {
        img_free(img);
        return -1;
    }
    return 0;
}

int img_load(const char *path, img_image *img)
{
    unsigned char *data = NULL;
    size_t size = 0;
    int rc;

    if (!img)
        return -1;
    memset(img, 0, sizeof *img);
    if (!path) {
        ge_fail("no input file name");
        return -1;
    }
    if (read_file(path, &data, &size) != 0) {
        load_error(path, ge_why()); /* read_file's reason */
        return -1;
    }
    rc = img_load_mem(data, size, path, img);
    bb_free(data);
    return rc;
}

void img_free(img_image *img)
{
    if (!img)
        return;
    bb_free(img->pixels); /* (stb's too: third_party/stb_impl.c) */
    memset(img, 0, sizeof *img);
}

ge_frame img_as_frame(const img_image *img)
{
    ge_frame f;
    memset(&f, 0, sizeof f);
    f.width = img->width;
    f.height = img->height;
    f.channels = img->channels;
    f.bytes_per_sample = img->bytes_per_sample;
    f.stride = (size_t)img->width * (size_t)img->channels *
               (size_t)img->bytes_per_sample;
    f.shift = 0;
    f.offset = 0;
    f.gain = img->bytes_per_sample == 2 ? GE_S16 : 1.0f;
    f.data = img->pixels;
    return f;
}

// ---------------------------------------------------------------------------
// Writing

/* so_write of nothing answers whether the file has failed so far. */
static int out_failed(so_file *out)
{
    return so_write(out, "", 0) != 0;
}

static int write_pgm(so_file *out, const uint8_t *grey, int width,
                     int height, int pitch)
{
    char hdr[64];
    int n = snprintf(hdr, sizeof hdr, "P5\n%d %d\n255\n", width, height);
    int y;
    so_write(out, hdr, (size_t)n);
    for (y = 0; y < height; y++)
        if (so_write(out, grey + (size_t)y * (size_t)pitch, (size_t)width))
            break;
    return out_failed(out) ? -1 : 0;
}

int img_write(so_file *out, int fmt, const uint8_t *grey, int width,
              int height, int pitch)
{
    const uint8_t *src = grey;
    uint8_t *packed = NULL;
    int ok = 0;

    if (!out)
        return -1;
    if (!grey || width <= 0 || height <= 0 || pitch < width ||
        (size_t)width * (size_t)height > (size_t)INT_MAX) {
        so_fail(out, EINVAL);
        return -1;
    }
    if (out_failed(out))
        return -1;
    if (fmt == IMG_FMT_PGM)
        return write_pgm(out, grey, width, height, pitch);
    if (fmt == IMG_FMT_TIFF || fmt == IMG_FMT_WEBP)
        return imgav_write(out, fmt == IMG_FMT_TIFF ? IMGAV_OUT_TIFF : IMGAV_OUT_WEBP,
                           grey, width, height, pitch);

    /* Only the PNG writer takes a stride; the others want packed rows. */
    if (fmt != IMG_FMT_PNG && pitch != width) {
        int y;
        packed = malloc((size_t)width * (size_t)height);
        if (!packed) {
            so_fail(out, ENOMEM);
            return -1;
        }
        for (y = 0; y < height; y++)
            memcpy(packed + (size_t)y * width, grey + (size_t)y * pitch,
                   (size_t)width);
        src = packed;
    }
    switch (fmt) {
    case IMG_FMT_PNG: /* ours: libdeflate, pieces on several threads */
        png_write(out, src, width, height, (size_t)pitch);
        ok = 1; /* png_write recorded any error in out */
        break;
    case IMG_FMT_BMP:
        ok = stbi_write_bmp_to_func(so_stb_writer, out, width, height, 1, src);
        break;
    case IMG_FMT_TGA:
        ok = stbi_write_tga_to_func(so_stb_writer, out, width, height, 1, src);
        break;
    case IMG_FMT_JPG:
        ok = stbi_write_jpg_to_func(so_stb_writer, out, width, height, 1, src,
                                    IMG_JPEG_QUALITY);
        break;
    default:
        so_fail(out, EINVAL);
        break;
    }
    free(packed);
    /* stb returns 0 only when it could not allocate. */
    if (!ok)
        so_fail(out, ENOMEM);
    return out_failed(out) ? -1 : 0;
}
