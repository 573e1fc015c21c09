/*
 * test_image_cut.c — a file cut anywhere after its header is refused as
 * truncated, in every format stb_image reads (BMP, TGA plain and RLE, GIF,
 * PSD raw and PackBits, HDR, PIC, PNM) and the PNG and JPEG decoders: each is
 * made whole here, loads, then is cut at its header, 1 %, 50 % and 99 %
 * and must fail with one message.  A bare header claiming 20000x20000 (or
 * 10000x10000) pixels must fail as truncated in a child whose address
 * space allows 256 MiB more than it uses: allocating the claimed image
 * first would fail there as "out of memory" (or not at all, and load).
 * And the other way round: a PNG or JPEG that does not fit in such a child
 * fails as "PNG: out of memory" / "JPEG: out of memory", naming its own
 * decoder (not a reason left over from another format's test).
 */
#include "check.h"
#include "image_io.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <libdeflate.h>
#include <stb_image_write.h>
#include <turbojpeg.h>

#define W 97
#define H 61

typedef struct buf {
    unsigned char *d;
    size_t n, cap;
} buf;

static void put(buf *b, const void *p, size_t n)
{
    if (b->n + n > b->cap) {
        size_t cap = (b->n + n) * 2;
        unsigned char *d = realloc(b->d, cap);
        if (!d) {
            perror("realloc");
            exit(1);
        }
        b->d = d;
        b->cap = cap;
    }
    memcpy(b->d + b->n, p, n);
    b->n += n;
}

static void put8(buf *b, unsigned v) { unsigned char c = (unsigned char)v; put(b, &c, 1); }
static void le16(buf *b, unsigned v) { put8(b, v & 255); put8(b, v >> 8 & 255); }
static void be16(buf *b, unsigned v) { put8(b, v >> 8 & 255); put8(b, v & 255); }
static void be32(buf *b, unsigned long v) { be16(b, (unsigned)(v >> 16)); be16(b, (unsigned)(v & 0xffff)); }

static void put_cb(void *ctx, void *data, int size)
{
    put(ctx, data, (size_t)size);
}

/* Pixels that compress poorly, so that 1 % of the file is past its header. */
static uint8_t px(int x, int y, int c)
{
    uint32_t v = (uint32_t)(x * 73 + y * 151 + c * 29) * 2654435761u;
    v ^= v >> 15;
    v *= 2246822519u;
    return (uint8_t)(v >> 24);
}

static void rgb_image(uint8_t *p)
{
    int x, y, c;
    for (y = 0; y < H; y++)
        for (x = 0; x < W; x++)
            for (c = 0; c < 3; c++)
                p[(y * W + x) * 3 + c] = px(x, y, c);
}

// ---------------------------------------------------------------------------
// Whole files, one per format

/* GIF with a 256-grey palette and LZW data that never grows past 9-bit
 * codes: a clear code every 250 pixels. */
static void make_gif(buf *b, const uint8_t *rgb)
{
    unsigned long acc = 0;
    int bits = 0, i, run = 0;
    unsigned char blk[255];
    size_t bn = 0;

    put(b, "GIF89a", 6);
    le16(b, W);
    le16(b, H);
    put8(b, 0xf7);
    put8(b, 0);
    put8(b, 0);
    for (i = 0; i < 256; i++) {
        put8(b, (unsigned)i);
        put8(b, (unsigned)i);
        put8(b, (unsigned)i);
    }
    put8(b, 0x2c);
    le16(b, 0);
    le16(b, 0);
    le16(b, W);
    le16(b, H);
    put8(b, 0);
    put8(b, 8);
#define EMIT(code)                                                            \
    do {                                                                      \
        acc |= (unsigned long)(code) << bits;                                 \
        bits += 9;                                                            \
        while (bits >= 8) {                                                   \
            blk[bn++] = (unsigned char)(acc & 255);                           \
            acc >>= 8;                                                        \
            bits -= 8;                                                        \
            if (bn == 255) {                                                  \
                put8(b, 255);                                                 \
                put(b, blk, 255);                                             \
                bn = 0;                                                       \
            }                                                                 \
        }                                                                     \
    } while (0)
    EMIT(256);
    for (i = 0; i < W * H; i++) {
        EMIT(rgb[3 * i]);
        if (++run == 250) {
            EMIT(256);
            run = 0;
        }
    }
    EMIT(257);
    if (bits > 0)
        EMIT(0); /* flush the last bits (the decoder stops at 257) */
#undef EMIT
    if (bn) {
        put8(b, (unsigned)bn);
        put(b, blk, bn);
    }
    put8(b, 0);
    put8(b, 0x3b);
}

static void make_psd(buf *b, const uint8_t *rgb, int rle)
{
    int c, y, x;
    put(b, "8BPS", 4);
    be16(b, 1);
    put(b, "\0\0\0\0\0\0", 6);
    be16(b, 3);
    be32(b, H);
    be32(b, W);
    be16(b, 8);
    be16(b, 3);
    be32(b, 0);
    be32(b, 0);
    be32(b, 0);
    be16(b, (unsigned)rle);
    if (rle)
        for (c = 0; c < 3 * H; c++)
            be16(b, W + 1);
    for (c = 0; c < 3; c++)
        for (y = 0; y < H; y++) {
            if (rle)
                put8(b, W - 1); /* one literal run a row */
            for (x = 0; x < W; x++)
                put8(b, rgb[(y * W + x) * 3 + c]);
        }
}

static void make_bmp8(buf *b, const uint8_t *rgb)
{
    int row = (W + 3) & ~3, i, x, y;
    unsigned long off = 14 + 40 + 256 * 4, size = off + (unsigned long)row * H;
    put(b, "BM", 2);
    le16(b, size & 0xffff);
    le16(b, (unsigned)(size >> 16));
    le16(b, 0);
    le16(b, 0);
    le16(b, (unsigned)off);
    le16(b, 0);
    le16(b, 40);
    le16(b, 0);
    le16(b, W);
    le16(b, 0);
    le16(b, H);
    le16(b, 0);
    le16(b, 1);
    le16(b, 8);
    for (i = 0; i < 6; i++)
        le16(b, 0), le16(b, 0);
    for (i = 0; i < 256; i++) {
        put8(b, (unsigned)i);
        put8(b, (unsigned)i);
        put8(b, (unsigned)i);
        put8(b, 0);
    }
    for (y = H - 1; y >= 0; y--)
        for (x = 0; x < row; x++)
            put8(b, x < W ? rgb[(y * W + x) * 3] : 0);
}

enum { F_BMP24, F_BMP8, F_TGA, F_TGA_RLE, F_GIF, F_PSD, F_PSD_RLE, F_HDR,
       F_PIC, F_PPM, F_PNG, F_JPG, F_COUNT };

static const struct {
    const char *name;
    size_t header; /* bytes before any pixel data */
} fmts[F_COUNT] = {
    { "BMP 24-bit", 54 }, { "BMP 8-bit", 54 + 1024 }, { "TGA", 18 },
    { "TGA RLE", 18 }, { "GIF", 13 + 768 + 10 }, { "PSD", 40 },
    { "PSD PackBits", 40 + 6 * H }, { "HDR", 48 }, { "PIC", 108 }, { "PPM", 13 },
    { "PNG", 33 }, { "JPEG", 300 },
};

static void make(int f, buf *b, const uint8_t *rgb)
{
    int i;
    b->n = 0;
    switch (f) {
    case F_BMP24:
        stbi_write_bmp_to_func(put_cb, b, W, H, 3, rgb);
        break;
    case F_BMP8:
        make_bmp8(b, rgb);
        break;
    case F_TGA:
    case F_TGA_RLE:
        stbi_write_tga_with_rle = f == F_TGA_RLE;
        stbi_write_tga_to_func(put_cb, b, W, H, 3, rgb);
        stbi_write_tga_with_rle = 1;
        break;
    case F_GIF:
        make_gif(b, rgb);
        break;
    case F_PSD:
    case F_PSD_RLE:
        make_psd(b, rgb, f == F_PSD_RLE);
        break;
    case F_HDR: { /* flat RGBE (a first byte of 2 would start RLE) */
        static const char hdr[] = "#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y 61 +X 97\n";
        put(b, hdr, sizeof hdr - 1);
        for (i = 0; i < W * H; i++) {
            put8(b, rgb[3 * i] | 128u);
            put8(b, rgb[3 * i + 1]);
            put8(b, rgb[3 * i + 2]);
            put8(b, 129);
        }
        break;
    }
    case F_PIC: /* one uncompressed RGB packet */
        put(b, "\x53\x80\xf6\x34", 4);
        for (i = 0; i < 84; i++)
            put8(b, 0);
        put(b, "PICT", 4);
        be16(b, W);
        be16(b, H);
        for (i = 0; i < 8; i++)
            put8(b, 0);
        put8(b, 0), put8(b, 8), put8(b, 0), put8(b, 0xe0);
        put(b, rgb, W * H * 3);
        break;
    case F_PPM: {
        char hdr[32];
        int k = snprintf(hdr, sizeof hdr, "P6\n%d %d\n255\n", W, H);
        put(b, hdr, (size_t)k);
        put(b, rgb, W * H * 3);
        break;
    }
    case F_PNG:
        stbi_write_png_to_func(put_cb, b, W, H, 3, rgb, W * 3);
        break;
    case F_JPG:
        stbi_write_jpg_to_func(put_cb, b, W, H, 3, rgb, 95);
        break;
    }
}

// ---------------------------------------------------------------------------
// Cuts

static void test_cuts(void)
{
    static uint8_t rgb[W * H * 3];
    buf b = { 0 };
    int f, k;

    rgb_image(rgb);
    for (f = 0; f < F_COUNT; f++) {
        img_image img;
        size_t cuts[4];
        char name[96];
        int rc;

        make(f, &b, rgb);
        rc = img_load_mem(b.d, b.n, fmts[f].name, &img);
        CHECK(rc == 0 && img.width == W && img.height == H, fmts[f].name,
              "whole file (%zu bytes) does not load: rc=%d %dx%d", b.n, rc, img.width,
              img.height);
        img_free(&img);
        cuts[0] = fmts[f].header;
        cuts[1] = b.n / 100;
        cuts[2] = b.n / 2;
        cuts[3] = b.n * 99 / 100;
        for (k = 0; k < 4; k++) {
            const char *msg;
            snprintf(name, sizeof name, "%s cut at %zu of %zu bytes (%s)", fmts[f].name,
                     cuts[k], b.n, k == 0 ? "header" : k == 1 ? "1 %" : k == 2 ? "50 %" : "99 %");
            check_capture_start();
            rc = img_load_mem(b.d, cuts[k], "cut", &img);
            msg = check_capture_end();
            CHECK(rc == -1 && !strncmp(msg, "gpuedge: cut: cannot read image: ", 33) &&
                      strchr(msg, '\n') == msg + strlen(msg) - 1,
                  name, "rc=%d '%s'", rc, msg);
            img_free(&img);
        }
    }
    free(b.d);
}

// ---------------------------------------------------------------------------
// Header bombs

/* Bytes of address space in use (/proc/self/statm, pages). */
static size_t vm_bytes(void)
{
    unsigned long pages = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        if (fscanf(f, "%lu", &pages) != 1)
            pages = 0;
        fclose(f);
    }
    return pages * (size_t)sysconf(_SC_PAGESIZE);
}

/* Loads b in a child under RLIMIT_AS = in use + 256 MiB; 0 when it failed
 * with "file is truncated", else 1 with what it said in msg. */
static int bomb_child(const buf *b, char *msg, size_t msz, long *rss_kb)
{
    int pfd[2], st = 0;
    pid_t pid;
    ssize_t r;

    if (pipe(pfd) != 0)
        return 1;
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid == 0) {
        struct rlimit rl;
        struct rusage ru0, ru1;
        img_image img;
        int rc;
        close(pfd[0]);
        dup2(pfd[1], 2);
        rl.rlim_cur = rl.rlim_max = vm_bytes() + ((size_t)256 << 20);
        setrlimit(RLIMIT_AS, &rl);
        getrusage(RUSAGE_SELF, &ru0);
        rc = img_load_mem(b->d, b->n, "bomb", &img);
        getrusage(RUSAGE_SELF, &ru1);
        if (rc)
            ge_err_why(NULL); /* as the CLI would (DESIGN.md §9) */
        fprintf(stderr, "@%ld\n", ru1.ru_maxrss - ru0.ru_maxrss);
        _exit(rc == -1 ? 0 : 3);
    }
    close(pfd[1]);
    {
        size_t got = 0;
        while (got < msz - 1 && (r = read(pfd[0], msg + got, msz - 1 - got)) > 0)
            got += (size_t)r;
        msg[got] = 0;
    }
    close(pfd[0]);
    if (pid < 0 || waitpid(pid, &st, 0) != pid)
        return 1;
    {
        char *at = strrchr(msg, '@');
        *rss_kb = at ? atol(at + 1) : -1;
        if (at)
            *at = 0;
    }
    if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0))
        snprintf(msg + strlen(msg), msz - strlen(msg), " [status %#x]", st);
    return !(WIFEXITED(st) && WEXITSTATUS(st) == 0 && strstr(msg, "file is truncated"));
}

static void test_bombs(void)
{
    static const struct {
        const char *name;
        int kind;
    } bombs[] = {
        { "TGA header, 20000x20000 RGB, no data", 0 },
        { "TGA RLE header, 20000x20000 RGB, no data", 1 },
        { "BMP header, 20000x20000 24-bit, no data", 2 },
        { "GIF header, 10000x10000, no frame", 3 },
        { "GIF header and frame descriptor, 10000x10000, no data", 4 },
        { "PSD header, 20000x20000 RGB, no data", 5 },
        { "HDR header, 10000x10000, no data", 6 },
        { "PIC header, 16000x16000 RGB, 3 bytes of data", 7 },
        { "JPEG of 16x16 whose header claims 20000x20000", 8 },
        { "progressive JPEG of 16x16 whose header claims 20000x20000", 10 },
        { "PNG header, 20000x20000 RGB, empty IDAT", 9 },
    };
    size_t i;

#if defined(__SANITIZE_ADDRESS__)
    SKIP("header bombs under an address-space limit", "AddressSanitizer reserves terabytes");
    return;
#endif
    for (i = 0; i < sizeof bombs / sizeof bombs[0]; i++) {
        buf b = { 0 };
        char msg[512];
        long rss = 0;
        int j;
        switch (bombs[i].kind) {
        case 0:
        case 1:
            put(&b, "\0\0", 2);
            put8(&b, bombs[i].kind ? 10 : 2);
            for (j = 0; j < 9; j++)
                put8(&b, 0);
            le16(&b, 20000);
            le16(&b, 20000);
            put8(&b, 24);
            put8(&b, 0);
            break;
        case 2:
            put(&b, "BM", 2);
            for (j = 0; j < 4; j++)
                le16(&b, 0);
            le16(&b, 54), le16(&b, 0), le16(&b, 40), le16(&b, 0);
            le16(&b, 20000), le16(&b, 0), le16(&b, 20000), le16(&b, 0);
            le16(&b, 1), le16(&b, 24);
            for (j = 0; j < 12; j++)
                le16(&b, 0);
            break;
        case 3:
        case 4:
            put(&b, "GIF89a", 6);
            le16(&b, 10000), le16(&b, 10000);
            put8(&b, 0), put8(&b, 0), put8(&b, 0);
            if (bombs[i].kind == 4) {
                put8(&b, 0x2c);
                le16(&b, 0), le16(&b, 0), le16(&b, 10000), le16(&b, 10000);
                put8(&b, 0), put8(&b, 8);
            }
            break;
        case 5:
            put(&b, "8BPS", 4), be16(&b, 1), put(&b, "\0\0\0\0\0\0", 6), be16(&b, 3);
            be32(&b, 20000), be32(&b, 20000), be16(&b, 8), be16(&b, 3);
            be32(&b, 0), be32(&b, 0), be32(&b, 0), be16(&b, 0);
            break;
        case 6:
        {
            static const char hdr[] = "#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y 10000 +X 10000\n";
            put(&b, hdr, sizeof hdr - 1);
        }
            break;
        case 7: /* one uncompressed RGB packet */
            put(&b, "\x53\x80\xf6\x34", 4);
            for (j = 0; j < 84; j++)
                put8(&b, 0);
            put(&b, "PICT", 4), be16(&b, 16000), be16(&b, 16000);
            for (j = 0; j < 8; j++)
                put8(&b, 0);
            put8(&b, 0), put8(&b, 8), put8(&b, 0), put8(&b, 0xe0);
            put(&b, "abc", 3); /* stb's info refuses none at all */
            break;
        case 8:
        case 10: {
            static const uint8_t grey[16 * 16];
            unsigned char *jpg = NULL;
            unsigned long jn = 0, k;
            int prog = bombs[i].kind == 10;
            tjhandle t = tjInitCompress();
            if (t && tjCompress2(t, grey, 16, 16, 16, TJPF_GRAY, &jpg, &jn, TJSAMP_GRAY, 90,
                                 prog ? TJFLAG_PROGRESSIVE : 0) == 0) {
                for (k = 0; k + 8 < jn; k++)
                    if (jpg[k] == 0xff && jpg[k + 1] == (prog ? 0xc2 : 0xc0)) { /* SOF: h, w */
                        jpg[k + 5] = 0x4e, jpg[k + 6] = 0x20, jpg[k + 7] = 0x4e, jpg[k + 8] = 0x20;
                        break;
                    }
                put(&b, jpg, jn);
            }
            tjFree(jpg);
            if (t)
                tjDestroy(t);
            break;
        }
        case 9: {
            static const unsigned char png[] = {
                0x89, 'P', 'N', 'G', 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 'I', 'H', 'D', 'R',
                0, 0, 0x4e, 0x20, 0, 0, 0x4e, 0x20, 8, 2, 0, 0, 0, 0, 0, 0, 0,
                0, 0, 0, 0, 'I', 'D', 'A', 'T', 0, 0, 0, 0, 0, 0, 0, 0, 'I', 'E', 'N', 'D', 0, 0, 0, 0,
            };
            put(&b, png, sizeof png);
            break;
        }
        }
        CHECK(bomb_child(&b, msg, sizeof msg, &rss) == 0, bombs[i].name,
              "'%s' (peak RSS grew %ld KiB)", msg, rss);
        if (rss > 64 * 1024)
            CHECK(0, bombs[i].name, "peak RSS grew %ld KiB", rss);
        free(b.d);
    }
}

// ---------------------------------------------------------------------------
// Out of memory, said so

/* A 20000x20000 grey PNG of zeros (400 MB of pixels, 400 KB of file). */
static void big_png(buf *b)
{
    const size_t w = 20000, h = 20000, raw = (w + 1) * h;
    unsigned char *rows = calloc(raw, 1), *z;
    struct libdeflate_compressor *c = libdeflate_alloc_compressor(1);
    size_t zn = 0;
    static const unsigned char sig[8] = { 0x89, 'P', 'N', 'G', 0x0d, 0x0a, 0x1a, 0x0a };
    static const unsigned char ihdr[17] = { 'I', 'H', 'D', 'R', 0, 0, 0x4e, 0x20, 0, 0, 0x4e,
                                            0x20, 8, 0, 0, 0, 0 };

    z = malloc(raw / 100 + 4096);
    if (rows && c && z)
        zn = libdeflate_zlib_compress(c, rows, raw, z, raw / 100 + 4096);
    put(b, sig, 8);
    be32(b, 13);
    put(b, ihdr, 17);
    be32(b, libdeflate_crc32(0, ihdr, 17));
    be32(b, zn);
    put(b, "IDAT", 4);
    put(b, z, zn);
    {
        uint32_t crc = libdeflate_crc32(0, "IDAT", 4);
        be32(b, libdeflate_crc32(crc, z, zn));
    }
    be32(b, 0);
    put(b, "IEND", 4);
    be32(b, libdeflate_crc32(0, "IEND", 4));
    free(rows);
    free(z);
    libdeflate_free_compressor(c);
}

/* A 20000x20000 grey JPEG of zeros (400 MB of pixels). */
static int big_jpeg(buf *b)
{
    const int w = 20000, h = 20000;
    unsigned char *px = calloc((size_t)w * h, 1), *jpg = NULL;
    unsigned long jn = 0;
    tjhandle t = tjInitCompress();
    int rc = -1;
    if (px && t && tjCompress2(t, px, w, w, h, TJPF_GRAY, &jpg, &jn, TJSAMP_GRAY, 50, 0) == 0) {
        put(b, jpg, jn);
        rc = 0;
    }
    tjFree(jpg);
    if (t)
        tjDestroy(t);
    free(px);
    return rc;
}

static void test_oom(void)
{
    buf b = { 0 };
    char msg[512];
    long rss;

#if defined(__SANITIZE_ADDRESS__)
    SKIP("out of memory under an address-space limit", "AddressSanitizer reserves terabytes");
    return;
#endif
    big_png(&b);
    bomb_child(&b, msg, sizeof msg, &rss);
    CHECK(strstr(msg, "gpuedge: bomb: cannot read image: PNG: out of memory\n") &&
              !strstr(msg, "JPEG"),
          "a PNG too big for the memory: \"PNG: out of memory\"", "'%s'", msg);
    b.n = 0;
    if (big_jpeg(&b) == 0) {
        bomb_child(&b, msg, sizeof msg, &rss);
        CHECK(strstr(msg, "gpuedge: bomb: cannot read image: JPEG: out of memory\n"),
              "a JPEG too big for the memory: \"JPEG: out of memory\"", "'%s'", msg);
    } else {
        CHECK(0, "a JPEG too big for the memory", "cannot make the JPEG: %s", tjGetErrorStr());
    }
    free(b.d);
}

int main(void)
{
    test_cuts();
    test_bombs();
    test_oom();
    CHECK_EXIT();
}
