/*
 * image_io.c — images in through stb_image (every format it reads, native
 * channel count, 16-bit kept as 16-bit: SPEC §1.1) and out through
 * stb_image_write's *_to_func writers into safeout's checked writer, plus a
 * PGM writer of our own (stb has none).
 *
 * Loading reads the file ourselves and decodes from memory: open/read give
 * the real errno ("Permission denied", "Is a directory") where stb would only
 * say "can't fopen", and a short read is an error rather than stb's silent
 * end of data.  stb's reasons are terse keys ("bad png sig"); we translate
 * the common ones and quote the rest.
 *
 * Works around stb v2.27's PNM reader (VERSIONS.md): 16-bit samples come
 * back big-endian, maxval is ignored, and a truncated payload leaves the
 * pixels uninitialised.  We parse the PNM header ourselves to fix all three.
 */
#include "image_io.h"
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
    return IMG_FMT_UNKNOWN;
}

/* Header only (stbi_info reads a few bytes through stdio): cheap enough to
 * ask of every file of a batch, videos included. */
int img_probe(const char *path)
{
    int w, h, c;
    if (!path || strcmp(path, "-") == 0)
        return 0;
    return stbi_info(path, &w, &h, &c) ? 1 : 0;
}

// ---------------------------------------------------------------------------
// Reading the file

/* Reads the whole file (or stdin for "-").  On failure returns -1 with a
 * reason in *why (static text). */
static int read_file(const char *path, unsigned char **data, size_t *size,
                     const char **why)
{
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
        if (fd < 0) {
            *why = strerror(errno);
            return -1;
        }
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
            *why = "file is empty";
            goto end;
        }
        /* stb takes the length as int. */
        if (st.st_size > INT_MAX) {
            *why = "file too large";
            goto end;
        }
        cap = (size_t)st.st_size;
    } else {
        cap = 1 << 16; /* a pipe: grow as it comes */
    }
    buf = malloc(cap);
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
                *why = "file too large";
                goto end;
            }
            cap = cap * 2 > (size_t)INT_MAX ? (size_t)INT_MAX : cap * 2;
            nb = realloc(buf, cap);
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
        *why = "file is empty";
        goto end;
    }
    *data = buf;
    *size = len;
    buf = NULL;
end:
    if (e)
        *why = strerror(e);
    free(buf);
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
        { "too large", "image too large" },
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
    ge_err(path, "cannot read image: %s", why);
}

static void stb_error(const char *path)
{
    const char *r = stbi_failure_reason();
    const char *t = friendly_reason(r);
    if (t)
        load_error(path, t);
    else
        ge_err(path, "cannot read image: damaged or unsupported image data "
               "(%s)", r);
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
// Loading

int img_load(const char *path, img_image *img)
{
    unsigned char *data = NULL;
    size_t size = 0, bytes;
    const char *why = NULL;
    pnm_info pnm;
    int w = 0, h = 0, comp = 0, is16, rc = -1, len;

    if (!img)
        return -1;
    memset(img, 0, sizeof *img);
    if (!path) {
        ge_err(NULL, "no input file name");
        return -1;
    }
    if (read_file(path, &data, &size, &why) != 0) {
        load_error(path, why ? why : "read failed");
        return -1;
    }
    len = (int)size;

    switch (pnm_parse(data, size, &pnm)) {
    case -1:
        load_error(path, "corrupt PNM header");
        goto end;
    case 1:
        if (pnm.maxval == 0 || pnm.width <= 0 || pnm.height <= 0) {
            load_error(path, "corrupt PNM header");
            goto end;
        }
        break;
    default:
        break;
    }

    if (!stbi_info_from_memory(data, len, &w, &h, &comp)) {
        stb_error(path);
        goto end;
    }
    is16 = stbi_is_16_bit_from_memory(data, len);
    if (w <= 0 || h <= 0 || comp < 1 || comp > 4) {
        load_error(path, "image has no pixels");
        goto end;
    }
    /* stb's own ceiling is INT_MAX bytes; refuse before it allocates. */
    bytes = (size_t)w * (size_t)h;
    if (bytes > (size_t)INT_MAX / (size_t)comp / (is16 ? 2u : 1u)) {
        ge_err(path, "cannot read image: image too large (%dx%d)", w, h);
        goto end;
    }
    bytes *= (size_t)comp * (is16 ? 2u : 1u);
    if (pnm.is_pnm && size - pnm.data_off < bytes) {
        load_error(path, "file is truncated");
        goto end;
    }

    if (is16)
        img->pixels = stbi_load_16_from_memory(data, len, &img->width,
                                               &img->height, &img->channels, 0);
    else
        img->pixels = stbi_load_from_memory(data, len, &img->width,
                                            &img->height, &img->channels, 0);
    if (!img->pixels) {
        stb_error(path);
        goto end;
    }
    img->bytes_per_sample = is16 ? 2 : 1;
    if (img->width != w || img->height != h || img->channels != comp) {
        /* info and load disagreeing means a decoder bug; do not trust it. */
        load_error(path, "damaged or unsupported image data");
        goto end;
    }
    if (pnm.is_pnm)
        pnm_fix(&pnm, img);
    rc = 0;
end:
    free(data);
    if (rc != 0)
        img_free(img);
    return rc;
}

void img_free(img_image *img)
{
    if (!img)
        return;
    stbi_image_free(img->pixels);
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
    case IMG_FMT_PNG:
        ok = stbi_write_png_to_func(so_stb_writer, out, width, height, 1,
                                    src, pitch);
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
