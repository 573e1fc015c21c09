/*
 * test_image_in_png.c — libspng (image_in_png.c) gives stb_image's pixels:
 * the same width, height, channel count, sample size and bytes as
 * stbi_load(req_comp = 0) / stbi_load_16 (DESIGN.md §1.1, §1.9), over
 *   - every PNG in samples/ (and the fuzz regressions' PNGs: refused by
 *     both, one line),
 *   - a corpus written here by a small PNG encoder (libdeflate for the
 *     zlib stream, all five filters): every colour type and bit depth,
 *     palette with and without tRNS, tRNS on grey and RGB, Adam7, odd
 *     sizes, 1x1, several IDATs, bad CRCs (stb ignores them);
 * and img_load_mem's PNG path: the decode limit from the header, one
 * message for a corrupt file, and which decoder made the pixels.
 */
#include "check.h"
#include "image_in_png.h"
#include "image_io.h"

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libdeflate.h>
#include <stb_image.h>

// ---------------------------------------------------------------------------
// stderr capture (for the one-line messages)


static int one_line(const char *s)
{
    const char *nl = strchr(s, '\n');
    return nl && nl[1] == 0;
}

// ---------------------------------------------------------------------------
// The comparison

/* stb's decode of buf, as image_io.c asks for it (before the PIC/PNM
 * fix-ups, which do not concern PNG). */
static int stb_decode(const unsigned char *d, size_t n, img_image *s)
{
    int is16 = stbi_is_16_bit_from_memory(d, (int)n);
    memset(s, 0, sizeof *s);
    s->pixels = is16 ? (void *)stbi_load_16_from_memory(d, (int)n, &s->width, &s->height,
                                                         &s->channels, 0)
                     : (void *)stbi_load_from_memory(d, (int)n, &s->width, &s->height,
                                                     &s->channels, 0);
    s->bytes_per_sample = is16 ? 2 : 1;
    return s->pixels ? 0 : -1;
}

static size_t img_bytes(const img_image *m)
{
    return (size_t)m->width * m->height * m->channels * m->bytes_per_sample;
}

static int same(const img_image *a, const img_image *b, char *why, size_t wn)
{
    if (a->width != b->width || a->height != b->height || a->channels != b->channels ||
        a->bytes_per_sample != b->bytes_per_sample) {
        snprintf(why, wn, "layout %dx%d c%d b%d, stb %dx%d c%d b%d", a->width, a->height,
                 a->channels, a->bytes_per_sample, b->width, b->height, b->channels,
                 b->bytes_per_sample);
        return 0;
    }
    if (memcmp(a->pixels, b->pixels, img_bytes(a))) {
        size_t i, nb = img_bytes(a);
        const unsigned char *p = a->pixels, *q = b->pixels;
        for (i = 0; i < nb && p[i] == q[i]; i++)
            ;
        snprintf(why, wn, "pixels differ from byte %zu (%u, stb %u)", i, p[i], q[i]);
        return 0;
    }
    return 1;
}

/* Checks one PNG: libspng == stb when libspng decodes; img_load_mem ==
 * stb always.  must_spng: libspng is expected to decode it itself. */
static void check_png(const char *label, const unsigned char *d, size_t n, int must_spng)
{
    img_image s, p, m;
    char name[300], why[200] = "";
    int rs, rp, rm, ok;
    const char *msg;

    rs = stb_decode(d, n, &s);
    check_capture_start();
    rp = imgpng_decode(d, n, (size_t)-1, label, &p);
    rm = img_load_mem(d, n, label, &m);
    msg = check_capture_end();

    snprintf(name, sizeof name, "png %s: libspng decodes it as stb does", label);
    if (rp == IMGPNG_OK) {
        ok = rs == 0 && same(&p, &s, why, sizeof why);
        if (rs != 0)
            snprintf(why, sizeof why, "stb refuses it (%s)", stbi_failure_reason());
        CHECK(ok, name, "%s", why);
        img_free(&p);
    } else if (must_spng) {
        CHECK(0, name, "libspng handed it back (rc %d)", rp);
    }

    snprintf(name, sizeof name, "png %s: img_load_mem gives stb's pixels", label);
    if (rs == 0) {
        ok = rm == 0 && same(&m, &s, why, sizeof why);
        if (rm != 0)
            snprintf(why, sizeof why, "img_load_mem failed: %s", msg);
        CHECK(ok, name, "%s", why);
    } else {
        /* stb refuses it: so does gpuedge (one line), unless libspng reads
         * it, which is then its decode */
        CHECK((rm != 0 && one_line(msg)) || (rm == 0 && rp == IMGPNG_OK), name,
              "rc %d/%d, '%s'", rm, rp, msg);
    }
    if (rm == 0)
        img_free(&m);
    if (rs == 0)
        stbi_image_free(s.pixels);
}

// ---------------------------------------------------------------------------
// A small PNG encoder

typedef struct buf {
    unsigned char *p;
    size_t n, cap;
} buf;

static void put(buf *b, const void *d, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 64;
        b->p = realloc(b->p, b->cap);
        if (!b->p)
            abort();
    }
    memcpy(b->p + b->n, d, n);
    b->n += n;
}

static void put32(buf *b, uint32_t v)
{
    unsigned char c[4] = { (unsigned char)(v >> 24), (unsigned char)(v >> 16),
                           (unsigned char)(v >> 8), (unsigned char)v };
    put(b, c, 4);
}

static void chunk(buf *b, const char *type, const void *d, size_t n, int bad_crc)
{
    uint32_t crc;
    put32(b, (uint32_t)n);
    put(b, type, 4);
    if (n)
        put(b, d, n);
    crc = libdeflate_crc32(0, type, 4);
    crc = libdeflate_crc32(crc, d, n);
    put32(b, bad_crc ? ~crc : crc);
}

typedef struct spec {
    const char *label;
    int w, h, ct, depth, interlace;
    int trns;       /* 1: a tRNS chunk (grey/RGB: a key taken from the image) */
    int plte;       /* palette entries (ct 3) */
    int idats;      /* IDAT chunks the stream is cut into */
    int bad_crc;    /* corrupt every CRC: stb never checks them */
    unsigned seed;
    int filter;     /* every row this filter + 1 (0: each row's at random) */
} spec;

static int nch(int ct)
{
    return ct == 0 ? 1 : ct == 2 ? 3 : ct == 3 ? 1 : ct == 4 ? 2 : 4;
}

static unsigned lcg(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return *s >> 8;
}

/* One pixel row (xs: first x, dx: step, nx: pixels) of samples, packed as
 * PNG stores it. */
static void pack_row(const spec *sp, const uint16_t *smp, int y, int x0, int dx, int nx,
                     unsigned char *out)
{
    int c = nch(sp->ct), i, k, bit = 0;
    size_t rowlen = ((size_t)nx * c * sp->depth + 7) / 8;
    memset(out, 0, rowlen);
    for (i = 0; i < nx; i++) {
        const uint16_t *s = smp + ((size_t)y * sp->w + x0 + (size_t)i * dx) * c;
        for (k = 0; k < c; k++) {
            unsigned v = s[k];
            if (sp->depth == 16) {
                out[bit / 8] = (unsigned char)(v >> 8);
                out[bit / 8 + 1] = (unsigned char)v;
            } else if (sp->depth == 8) {
                out[bit / 8] = (unsigned char)v;
            } else {
                out[bit / 8] |= (unsigned char)(v << (8 - sp->depth - bit % 8));
            }
            bit += sp->depth;
        }
    }
}

static int paeth(int a, int b, int c)
{
    int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);
    return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/* Appends filter byte f and the filtered row (prev: the previous row of
 * the same pass, or NULL). */
static void filter_row(buf *raw, int f, const unsigned char *row,
                       const unsigned char *prev, size_t len, int bpp)
{
    unsigned char fb = (unsigned char)f;
    size_t i;
    put(raw, &fb, 1);
    for (i = 0; i < len; i++) {
        int a = i >= (size_t)bpp ? row[i - bpp] : 0;
        int b = prev ? prev[i] : 0;
        int c = prev && i >= (size_t)bpp ? prev[i - bpp] : 0;
        int v = row[i];
        unsigned char o;
        switch (f) {
        case 1: o = (unsigned char)(v - a); break;
        case 2: o = (unsigned char)(v - b); break;
        case 3: o = (unsigned char)(v - ((a + b) >> 1)); break;
        case 4: o = (unsigned char)(v - paeth(a, b, c)); break;
        default: o = (unsigned char)v; break;
        }
        put(raw, &o, 1);
    }
}

static buf encode(const spec *sp)
{
    static const int ax0[7] = { 0, 4, 0, 2, 0, 1, 0 }, ay0[7] = { 0, 0, 4, 0, 2, 0, 1 };
    static const int adx[7] = { 8, 8, 4, 4, 2, 2, 1 }, ady[7] = { 8, 8, 8, 4, 4, 2, 2 };
    buf png = { 0 }, raw = { 0 };
    int c = nch(sp->ct), maxv = (1 << sp->depth) - 1, pass, y, x, k;
    int bpp = (c * sp->depth + 7) / 8;
    unsigned s = sp->seed;
    size_t npx = (size_t)sp->w * sp->h, i;
    uint16_t *smp = malloc(npx * c * sizeof *smp);
    unsigned char *row = malloc((size_t)sp->w * 8 + 8), *prev = malloc((size_t)sp->w * 8 + 8);
    unsigned char ihdr[13];

    if (!smp || !row || !prev)
        abort();
    /* smooth-ish data with noise, so every filter sees varied input */
    for (y = 0; y < sp->h; y++)
        for (x = 0; x < sp->w; x++)
            for (k = 0; k < c; k++) {
                unsigned v = (lcg(&s) % 3 == 0) ? lcg(&s) : (unsigned)(x * 7 + y * 13 + k * 50);
                if (sp->ct == 3)
                    v %= (unsigned)sp->plte;
                smp[((size_t)y * sp->w + x) * c + k] = (uint16_t)(v & (unsigned)maxv);
            }

    put(&png, "\x89PNG\r\n\x1a\n", 8);
    ihdr[0] = (unsigned char)(sp->w >> 24); ihdr[1] = (unsigned char)(sp->w >> 16);
    ihdr[2] = (unsigned char)(sp->w >> 8);  ihdr[3] = (unsigned char)sp->w;
    ihdr[4] = (unsigned char)(sp->h >> 24); ihdr[5] = (unsigned char)(sp->h >> 16);
    ihdr[6] = (unsigned char)(sp->h >> 8);  ihdr[7] = (unsigned char)sp->h;
    ihdr[8] = (unsigned char)sp->depth;
    ihdr[9] = (unsigned char)sp->ct;
    ihdr[10] = 0; ihdr[11] = 0;
    ihdr[12] = (unsigned char)sp->interlace;
    chunk(&png, "IHDR", ihdr, 13, sp->bad_crc);
    if (sp->ct == 3) {
        unsigned char pl[768];
        for (i = 0; i < (size_t)sp->plte * 3; i++)
            pl[i] = (unsigned char)lcg(&s);
        chunk(&png, "PLTE", pl, (size_t)sp->plte * 3, sp->bad_crc);
    }
    if (sp->trns) {
        unsigned char t[256];
        size_t tn = 0;
        if (sp->ct == 3) {
            tn = (size_t)sp->plte / 2 + 1; /* shorter than the palette */
            for (i = 0; i < tn; i++)
                t[i] = (unsigned char)(i * 37);
        } else {
            /* the key: pixel (1,1) (or (0,0)), so some pixels match */
            size_t at = npx > (size_t)sp->w + 1 ? (size_t)sp->w + 1 : 0;
            for (k = 0; k < c; k++) {
                t[2 * k] = (unsigned char)(smp[at * c + k] >> 8);
                t[2 * k + 1] = (unsigned char)smp[at * c + k];
            }
            tn = 2 * (size_t)c;
        }
        chunk(&png, "tRNS", t, tn, sp->bad_crc);
    }
    /* the raw stream: rows of each pass, filters cycling 0..4 */
    for (pass = sp->interlace ? 0 : 6; pass < 7; pass++) {
        int x0 = sp->interlace ? ax0[pass] : 0, y0 = sp->interlace ? ay0[pass] : 0;
        int dx = sp->interlace ? adx[pass] : 1, dy = sp->interlace ? ady[pass] : 1;
        int nx = sp->w > x0 ? (sp->w - x0 + dx - 1) / dx : 0;
        size_t len = ((size_t)nx * c * sp->depth + 7) / 8;
        int first = 1;
        if (nx == 0)
            continue;
        for (y = y0; y < sp->h; y += dy) {
            pack_row(sp, smp, y, x0, dx, nx, row);
            filter_row(&raw, sp->filter ? sp->filter - 1 : (int)(lcg(&s) % 5), row,
                       first ? NULL : prev, len, bpp);
            memcpy(prev, row, len);
            first = 0;
        }
    }
    {
        struct libdeflate_compressor *z = libdeflate_alloc_compressor(6);
        size_t cap = libdeflate_zlib_compress_bound(z, raw.n), zn, at = 0;
        unsigned char *zd = malloc(cap);
        int part;
        if (!z || !zd)
            abort();
        zn = libdeflate_zlib_compress(z, raw.p, raw.n, zd, cap);
        for (part = 0; part < sp->idats; part++) {
            size_t end = part == sp->idats - 1 ? zn : zn * (size_t)(part + 1) / (size_t)sp->idats;
            chunk(&png, "IDAT", zd + at, end - at, sp->bad_crc);
            at = end;
        }
        libdeflate_free_compressor(z);
        free(zd);
    }
    chunk(&png, "IEND", "", 0, sp->bad_crc);
    free(smp);
    free(row);
    free(prev);
    free(raw.p);
    return png;
}

static void test_corpus(void)
{
    static const spec specs[] = {
        /* label              w    h  ct dep il trns plte idats crc seed filter */
        { "grey8",           37,  23, 0, 8,  0, 0, 0,   1, 0, 1, 0 },
        { "grey1",           33,  17, 0, 1,  0, 0, 0,   1, 0, 2, 0 },
        { "grey2",           31,  19, 0, 2,  0, 0, 0,   1, 0, 3, 0 },
        { "grey4",           29,  21, 0, 4,  0, 0, 0,   1, 0, 4, 0 },
        { "grey16",          41,  27, 0, 16, 0, 0, 0,   1, 0, 5, 0 },
        { "grey8-trns",      37,  23, 0, 8,  0, 1, 0,   1, 0, 6, 0 },
        { "grey1-trns",      33,  17, 0, 1,  0, 1, 0,   1, 0, 7, 0 },
        { "grey4-trns",      29,  21, 0, 4,  0, 1, 0,   1, 0, 8, 0 },
        { "grey16-trns",     41,  27, 0, 16, 0, 1, 0,   1, 0, 9, 0 },
        { "rgb8",            45,  31, 2, 8,  0, 0, 0,   1, 0, 10, 0 },
        { "rgb16",           43,  29, 2, 16, 0, 0, 0,   1, 0, 11, 0 },
        { "rgb8-trns",       45,  31, 2, 8,  0, 1, 0,   1, 0, 12, 0 },
        { "rgb16-trns",      43,  29, 2, 16, 0, 1, 0,   1, 0, 13, 0 },
        { "palette8",        39,  25, 3, 8,  0, 0, 256, 1, 0, 14, 0 },
        { "palette8-trns",   39,  25, 3, 8,  0, 1, 200, 1, 0, 15, 0 },
        { "palette4",        35,  23, 3, 4,  0, 0, 16,  1, 0, 16, 0 },
        { "palette2-trns",   35,  23, 3, 2,  0, 1, 4,   1, 0, 17, 0 },
        { "palette1",        35,  23, 3, 1,  0, 0, 2,   1, 0, 18, 0 },
        { "greyalpha8",      37,  23, 4, 8,  0, 0, 0,   1, 0, 19, 0 },
        { "greyalpha16",     37,  23, 4, 16, 0, 0, 0,   1, 0, 20, 0 },
        { "rgba8",           47,  33, 6, 8,  0, 0, 0,   1, 0, 21, 0 },
        { "rgba16",          47,  33, 6, 16, 0, 0, 0,   1, 0, 22, 0 },
        { "adam7-grey8",     37,  23, 0, 8,  1, 0, 0,   1, 0, 23, 0 },
        { "adam7-grey1",     33,  17, 0, 1,  1, 0, 0,   1, 0, 24, 0 },
        { "adam7-grey2-trns",31,  19, 0, 2,  1, 1, 0,   1, 0, 25, 0 },
        { "adam7-rgb16",     43,  29, 2, 16, 1, 0, 0,   1, 0, 26, 0 },
        { "adam7-rgb8-trns", 45,  31, 2, 8,  1, 1, 0,   1, 0, 27, 0 },
        { "adam7-palette4",  35,  23, 3, 4,  1, 1, 16,  1, 0, 28, 0 },
        { "adam7-ga16",      37,  23, 4, 16, 1, 0, 0,   1, 0, 29, 0 },
        { "adam7-rgba8",     47,  33, 6, 8,  1, 0, 0,   1, 0, 30, 0 },
        { "adam7-3x3",        3,   3, 2, 8,  1, 0, 0,   1, 0, 31, 0 },
        { "adam7-1x1",        1,   1, 6, 16, 1, 0, 0,   1, 0, 32, 0 },
        { "1x1-grey1",        1,   1, 0, 1,  0, 0, 0,   1, 0, 33, 0 },
        { "1x1-palette",      1,   1, 3, 8,  0, 1, 1,   1, 0, 34, 0 },
        { "1x1-rgb16-trns",   1,   1, 2, 16, 0, 1, 0,   1, 0, 35, 0 },
        { "1xN-grey4",        1,  57, 0, 4,  0, 0, 0,   1, 0, 36, 0 },
        { "Nx1-rgba8",       91,   1, 6, 8,  0, 0, 0,   1, 0, 37, 0 },
        /* narrow 8-bit RGB/RGBA: the fast path's pixel-at-a-time rows
         * (image_in_png.c unfilter_px) from one pixel wide */
        { "1xN-rgb8",         1,  29, 2, 8,  0, 0, 0,   1, 0, 43, 0 },
        { "2xN-rgb8",         2,  31, 2, 8,  0, 0, 0,   1, 0, 44, 0 },
        { "3xN-rgba8",        3,  27, 6, 8,  0, 0, 0,   1, 0, 45, 0 },
        { "1xN-rgba8",        1,  33, 6, 8,  0, 0, 0,   1, 0, 46, 0 },
        /* every row Paeth: the fast path's rows two at a time, an even and
         * an odd number of them */
        { "paeth-rgb8",      45,  31, 2, 8,  0, 0, 0,   1, 0, 47, 5 },
        { "paeth-rgba8",     47,  32, 6, 8,  0, 0, 0,   1, 0, 48, 5 },
        { "paeth-1xN-rgb8",   1,  30, 2, 8,  0, 0, 0,   1, 0, 49, 5 },
        { "paeth-2xN-rgba8",  2,  29, 6, 8,  0, 0, 0,   1, 0, 50, 5 },
        { "paeth-big-rgb8", 509, 307, 2, 8,  0, 0, 0,   2, 0, 51, 5 },
        { "many-idats",      64,  48, 2, 8,  0, 0, 0,   7, 0, 38, 0 },
        { "bad-crcs",        40,  30, 2, 8,  0, 1, 0,   2, 1, 39, 0 },
        { "big-rgb8",       509, 307, 2, 8,  0, 0, 0,   3, 0, 40, 0 },
        { "big-adam7-rgba16",257,131, 6, 16, 1, 0, 0,   2, 0, 41, 0 },
    };
    size_t i;
    for (i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        buf b = encode(&specs[i]);
        check_png(specs[i].label, b.p, b.n, 1);
        free(b.p);
    }
    /* a tRNS key beyond the bit depth: stb compares its low byte only, so
     * libspng must hand it back (and img_load_mem still gives stb's) */
    {
        spec sp = { "grey8-trns-key-0x1ff", 20, 10, 0, 8, 0, 1, 0, 1, 0, 42, 0 };
        buf b = encode(&sp);
        /* the tRNS payload follows IHDR: sig 8 + IHDR 25 + len/type 8 */
        b.p[8 + 25 + 8] = 0x01;
        check_png(sp.label, b.p, b.n, 0);
        free(b.p);
    }
}

// ---------------------------------------------------------------------------
// Files on disk

static void test_dir(const char *dir, int must)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int seen = 0;
    if (!d) {
        CHECK(0, "png files on disk", "cannot open %s", dir);
        return;
    }
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name), n;
        char path[512];
        unsigned char *data;
        if (l < 5 || strcmp(e->d_name + l - 4, ".png"))
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        data = check_slurp(path, &n);
        if (!data) {
            CHECK(0, path, "cannot read");
            continue;
        }
        check_png(path, data, n, must);
        free(data);
        seen++;
    }
    closedir(d);
    CHECK(seen > 0, "png files on disk", "no PNG in %s", dir);
}

/* The fuzz findings in PNGs are stb bugs (raw stb on them is what the
 * guards prevent, so no direct stb reference here): libspng must not
 * decode them either, and img_load_mem refuses them with one line. */
static void test_regressions(void)
{
    static const char *const files[] = { "image-png-empty-idat.png", "image-png-idat-past-end.png" };
    size_t i;
    for (i = 0; i < sizeof files / sizeof files[0]; i++) {
        char path[256], name[300];
        unsigned char *d;
        size_t n;
        img_image p, m;
        int rp, rm;
        const char *msg;
        snprintf(path, sizeof path, "tests/fuzz/regressions/%s", files[i]);
        snprintf(name, sizeof name, "png %s: refused by libspng and by img_load_mem, one line", files[i]);
        d = check_slurp(path, &n);
        if (!d) {
            CHECK(0, name, "cannot read %s", path);
            continue;
        }
        check_capture_start();
        rp = imgpng_decode(d, n, (size_t)-1, files[i], &p);
        rm = img_load_mem(d, n, files[i], &m);
        msg = check_capture_end();
        CHECK(rp == IMGPNG_FALLBACK && !p.pixels && rm == -1 && !m.pixels && one_line(msg), name,
              "rc %d/%d '%s'", rp, rm, msg);
        if (rp == IMGPNG_OK)
            img_free(&p);
        if (rm == 0)
            img_free(&m);
        free(d);
    }
}

// ---------------------------------------------------------------------------
// img_load_mem's PNG path

static void test_load_path(void)
{
    spec sp = { "limit", 100, 80, 2, 16, 0, 0, 0, 1, 0, 50, 0 };
    buf b = encode(&sp);
    img_image m;
    const char *msg;
    int rc;

    rc = img_load_mem(b.p, b.n, "rgb16.png", &m);
    CHECK(rc == 0 && m.decoder && !strcmp(m.decoder, "libspng") && m.channels == 3 &&
              m.bytes_per_sample == 2,
          "png: img_load_mem decodes with libspng", "rc %d decoder %s", rc,
          m.decoder ? m.decoder : "(none)");
    if (rc == 0)
        img_free(&m);

    /* 8-bit RGB, one IDAT: the libdeflate path; the same file with its
     * Adler-32 wrong: libspng's (which ignores it, as stb does), the same
     * pixels */
    {
        spec s8 = { "rgb8-fast", 61, 37, 2, 8, 0, 0, 0, 1, 0, 43, 0 };
        buf f = encode(&s8);
        img_image st, m2;
        char why[200] = "";
        int rs = stb_decode(f.p, f.n, &st);
        rc = img_load_mem(f.p, f.n, "rgb8.png", &m);
        CHECK(rs == 0 && rc == 0 && m.decoder && !strcmp(m.decoder, "libdeflate") &&
                  same(&m, &st, why, sizeof why),
              "png: an 8-bit RGB file is inflated by libdeflate, stb's pixels", "rc %d decoder %s %s",
              rc, rc == 0 && m.decoder ? m.decoder : "(none)", why);
        /* IEND is the last 12 bytes, the IDAT's CRC the 4 before: the
         * Adler-32 ends there */
        f.p[f.n - 17] ^= 0x55;
        rc = img_load_mem(f.p, f.n, "rgb8-adler.png", &m2);
        CHECK(rs == 0 && rc == 0 && m2.decoder && !strcmp(m2.decoder, "libspng") &&
                  same(&m2, &st, why, sizeof why),
              "png: a wrong Adler-32 goes to libspng, stb's pixels", "rc %d decoder %s %s", rc,
              rc == 0 && m2.decoder ? m2.decoder : "(none)", why);
        if (rc == 0)
            img_free(&m2);
        if (rs == 0)
            stbi_image_free(st.pixels);
        img_free(&m);
        free(f.p);
    }

    /* 100x80x3x2 = 48000 bytes: refused from the header at one byte less */
    img_set_decode_limit(47999);
    check_capture_start();
    rc = img_load_mem(b.p, b.n, "rgb16.png", &m);
    msg = check_capture_end();
    img_set_decode_limit(48000);
    CHECK(rc == -1 && one_line(msg) && strstr(msg, "rgb16.png: cannot read image: image too large (100x80)"),
          "png: decode limit enforced from the header", "rc %d '%s'", rc, msg);
    rc = img_load_mem(b.p, b.n, "rgb16.png", &m);
    CHECK(rc == 0, "png: decode limit is inclusive", "rc %d", rc);
    if (rc == 0)
        img_free(&m);
    img_set_decode_limit(0);

    /* corrupt image data: one line, nothing returned */
    {
        size_t at = 8 + 25 + 8 + 10; /* inside the zlib stream */
        b.p[at] ^= 0xff;
        b.p[at + 1] ^= 0x55;
        check_capture_start();
        rc = img_load_mem(b.p, b.n, "corrupt.png", &m);
        msg = check_capture_end();
        CHECK(rc == -1 && !m.pixels && one_line(msg) &&
                  strstr(msg, "corrupt.png: cannot read image: "),
              "png: corrupt data, one line", "rc %d '%s'", rc, msg);
    }
    /* truncated in the middle of IDAT (stb's guard: before any allocation) */
    check_capture_start();
    rc = img_load_mem(b.p, b.n / 2, "cut.png", &m);
    msg = check_capture_end();
    CHECK(rc == -1 && one_line(msg) && strstr(msg, "cut.png: cannot read image: file is truncated"),
          "png: truncated, one line", "rc %d '%s'", rc, msg);
    free(b.p);
}

int main(void)
{
    test_corpus();
    test_dir("samples", 1);
    test_regressions();
    test_load_path();
    CHECK_EXIT();
}
