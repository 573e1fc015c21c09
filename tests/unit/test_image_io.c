/*
 * test_image_io.c — images in and out: every output format round-trips
 * through img_write/img_load (exact for PNG/BMP/TGA/PGM, close for JPEG);
 * grey, grey+alpha, RGB, RGBA and 16-bit inputs keep their native layout
 * (DESIGN.md §1.1); damaged and missing inputs fail with one message and no
 * crash.  Works in a mkdtemp directory under /tmp and removes it.
 */
#include "check.h"
#include "image_io.h"
#include "safeout.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <stb_image_write.h>

static char dir[64];

// ---------------------------------------------------------------------------
// Helpers

static const char *in_dir(const char *name)
{
    static char buf[4][512];
    static int k;
    k = (k + 1) & 3;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

static int write_bytes(const char *p, const void *d, size_t n)
{
    FILE *f = fopen(p, "wb");
    if (!f)
        return -1;
    if (n && fwrite(d, 1, n, f) != n) {
        fclose(f);
        return -1;
    }
    return fclose(f);
}

static unsigned char *read_bytes(const char *p, size_t *n)
{
    FILE *f = fopen(p, "rb");
    unsigned char *b;
    long len;
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    len = ftell(f);
    fseek(f, 0, SEEK_SET);
    b = malloc((size_t)len + 1);
    *n = fread(b, 1, (size_t)len, f);
    fclose(f);
    return b;
}

static void fwrite_cb(void *ctx, void *data, int size)
{
    fwrite(data, 1, (size_t)size, (FILE *)ctx);
}

/* Test fixtures through stb's own writer (its file writer is compiled out
 * on purpose: see third_party/stb_impl.c). */
static int stb_png(const char *p, int w, int h, int comp, const void *px)
{
    FILE *f = fopen(p, "wb");
    int ok;
    if (!f)
        return -1;
    ok = stbi_write_png_to_func(fwrite_cb, f, w, h, comp, px, w * comp);
    return (fclose(f) == 0 && ok) ? 0 : -1;
}


static void rm_entries(void)
{
    DIR *dp = opendir(dir);
    struct dirent *de;
    if (!dp)
        return;
    while ((de = readdir(dp))) {
        const char *p;
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        p = in_dir(de->d_name);
        if (rmdir(p) != 0)
            unlink(p);
    }
    closedir(dp);
}

/* Loads a file expected to fail; returns the message (or "" on success). */
static const char *load_fails(const char *p, int *rc)
{
    img_image img;
    const char *msg;
    check_capture_start();
    *rc = img_load(p, &img);
    msg = check_capture_end();
    if (*rc == 0)
        img_free(&img);
    else if (img.pixels || img.width || img.height)
        *rc = -2; /* not zeroed */
    return msg;
}

// ---------------------------------------------------------------------------
// Tests

static void test_names(void)
{
    char b[8];
    CHECK(img_format_from_path("a.png") == IMG_FMT_PNG &&
              img_format_from_path("dir.x/A.PNG") == IMG_FMT_PNG &&
              img_format_from_path("a.jpg") == IMG_FMT_JPG &&
              img_format_from_path("a.JPEG") == IMG_FMT_JPG &&
              img_format_from_path("a.bmp") == IMG_FMT_BMP &&
              img_format_from_path("a.Tga") == IMG_FMT_TGA &&
              img_format_from_path("a.pgm") == IMG_FMT_PGM,
          "img_format_from_path knows png jpg jpeg bmp tga pgm", " ");
    CHECK(img_format_from_path("a.mkv") == IMG_FMT_UNKNOWN &&
              img_format_from_path("png") == IMG_FMT_UNKNOWN &&
              img_format_from_path(".png") == IMG_FMT_UNKNOWN &&
              img_format_from_path("x.png/") == IMG_FMT_UNKNOWN &&
              img_format_from_path("a.pngx") == IMG_FMT_UNKNOWN &&
              img_format_from_path("") == IMG_FMT_UNKNOWN,
          "img_format_from_path rejects the rest", " ");
    CHECK(!strcmp(ge_ext("d.e/f", b, sizeof b), "") &&
              !strcmp(ge_ext("f.TaR.Gz", b, sizeof b), "gz") &&
              !strcmp(ge_ext("f.abcdefgh", b, sizeof b), ""),
          "ge_ext: last component, lower case, too long = none", "%s", b);
}

/* An odd-sized plane with a pitch wider than the row, padding poisoned. */
#define RW 37
#define RH 23
#define RP 40

static void make_plane(uint8_t *g, int smooth)
{
    int x, y;
    for (y = 0; y < RH; y++)
        for (x = 0; x < RP; x++)
            g[y * RP + x] = x >= RW ? 0xEE
                          : smooth ? (uint8_t)(x * 5 + y * 3)
                                   : (uint8_t)((x * 37 + y * 101) ^ (x * y));
}

static void test_round_trips(void)
{
    static const struct {
        const char *name;
        int fmt, exact;
    } cases[] = {
        { "rt.png", IMG_FMT_PNG, 1 }, { "rt.bmp", IMG_FMT_BMP, 1 },
        { "rt.tga", IMG_FMT_TGA, 1 }, { "rt.pgm", IMG_FMT_PGM, 1 },
        { "rt.jpg", IMG_FMT_JPG, 0 },
    };
    uint8_t g[RH * RP];
    so_opts o = { 0, 0 };
    size_t i;

    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *p = in_dir(cases[i].name);
        char name[64];
        so_file *f = NULL;
        img_image img;
        int rc, x, y, bad = 0, maxd = 0, channels_equal = 1;
        long sumd = 0;

        make_plane(g, !cases[i].exact);
        rc = so_open(&f, p, &o, NULL, 0);
        if (rc == 0)
            rc = img_write(f, cases[i].fmt, g, RW, RH, RP);
        rc |= so_commit(&f);
        snprintf(name, sizeof name, "write %s", cases[i].name);
        CHECK(rc == 0, name, "rc=%d", rc);
        rc = img_load(p, &img);
        snprintf(name, sizeof name, "read back %s", cases[i].name);
        CHECK(rc == 0 && img.width == RW && img.height == RH &&
                  img.bytes_per_sample == 1 && img.channels >= 1,
              name, "rc=%d %dx%d c%d", rc, img.width, img.height,
              img.channels);
        if (rc != 0)
            continue;
        for (y = 0; y < RH; y++)
            for (x = 0; x < RW; x++) {
                const uint8_t *px =
                    (const uint8_t *)img.pixels +
                    ((size_t)y * RW + x) * (size_t)img.channels;
                int d = abs((int)px[0] - (int)g[y * RP + x]), c;
                for (c = 1; c < img.channels && c < 3; c++)
                    if (px[c] != px[0] && cases[i].exact)
                        channels_equal = 0;
                if (d)
                    bad++;
                if (d > maxd)
                    maxd = d;
                sumd += d;
            }
        snprintf(name, sizeof name, "%s pixels %s", cases[i].name,
                 cases[i].exact ? "exact" : "close");
        if (cases[i].exact)
            CHECK(bad == 0 && channels_equal, name,
                  "%d differ, max %d, channels_equal %d", bad, maxd,
                  channels_equal);
        else
            CHECK(maxd <= 12 && sumd <= 2L * RW * RH, name,
                  "max %d, mean %.2f", maxd, (double)sumd / (RW * RH));
        img_free(&img);
    }
    {
        img_image a, b;
        int ra = img_load(in_dir("rt.png"), &a);
        int rb = img_load(in_dir("rt.pgm"), &b);
        CHECK(ra == 0 && a.channels == 1 && rb == 0 && b.channels == 1,
              "PNG and PGM outputs are one-channel grey", "c%d c%d",
              a.channels, b.channels);
        img_free(&a);
        img_free(&b);
    }
    {
        size_t n = 0;
        unsigned char *b = read_bytes(in_dir("rt.pgm"), &n);
        CHECK(b && n == strlen("P5\n37 23\n255\n") + RW * RH &&
                  !memcmp(b, "P5\n37 23\n255\n", 13),
              "PGM header and size", "n=%zu", n);
        free(b);
    }
}

static void test_native_layouts(void)
{
    static const char *names[5] = { "", "grey.png", "ga.png", "rgb.png",
                                    "rgba.png" };
    uint8_t px[5 * 3 * 4];
    int comp;

    for (comp = 1; comp <= 4; comp++) {
        img_image img;
        char name[64];
        size_t i, n = 5 * 3 * (size_t)comp;
        ge_frame fr;
        int rc;

        for (i = 0; i < n; i++)
            px[i] = (uint8_t)(i * 13 + comp);
        stb_png(in_dir(names[comp]), 5, 3, comp, px);
        rc = img_load(in_dir(names[comp]), &img);
        snprintf(name, sizeof name, "%s loads with %d channel(s), exact",
                 names[comp], comp);
        CHECK(rc == 0 && img.channels == comp && img.width == 5 &&
                  img.height == 3 && img.bytes_per_sample == 1 &&
                  !memcmp(img.pixels, px, n),
              name, "rc=%d c%d", rc, img.channels);
        fr = img_as_frame(&img);
        snprintf(name, sizeof name, "%s as frame", names[comp]);
        CHECK(fr.width == 5 && fr.height == 3 && fr.channels == comp &&
                  fr.bytes_per_sample == 1 && fr.stride == 5u * comp &&
                  fr.gain == 1.0f && fr.offset == 0 && fr.shift == 0 &&
                  fr.data == img.pixels,
              name, "stride %zu gain %g", fr.stride, (double)fr.gain);
        img_free(&img);
        CHECK(img.pixels == NULL, "img_free clears", " ");
    }
}

// --- 16-bit inputs ---------------------------------------------------------

static uint32_t crc32_(const unsigned char *p, size_t n, uint32_t c)
{
    size_t i;
    int k;
    c = ~c;
    for (i = 0; i < n; i++) {
        c ^= p[i];
        for (k = 0; k < 8; k++)
            c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1)));
    }
    return ~c;
}

static void put32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

static void chunk(FILE *f, const char *type, const unsigned char *d,
                  uint32_t n)
{
    unsigned char hdr[8], crc[4];
    uint32_t c;
    put32(hdr, n);
    memcpy(hdr + 4, type, 4);
    c = crc32_(hdr + 4, 4, 0);
    if (n)
        c = crc32_(d, n, c);
    put32(crc, c);
    fwrite(hdr, 1, 8, f);
    if (n)
        fwrite(d, 1, n, f);
    fwrite(crc, 1, 4, f);
}

/* A 16-bit grey PNG by hand: one stored (uncompressed) deflate block. */
static int png16(const char *p, int w, int h, const uint16_t *v)
{
    static const unsigned char sig[8] = { 137, 80, 78, 71, 13, 10, 26, 10 };
    unsigned char ihdr[13], *raw, *z;
    size_t rawlen = (size_t)h * (1 + 2 * (size_t)w), i, zlen;
    uint32_t a = 1, b = 0;
    int x, y;
    FILE *f = fopen(p, "wb");

    if (!f || rawlen > 65535)
        return -1;
    put32(ihdr, (uint32_t)w);
    put32(ihdr + 4, (uint32_t)h);
    ihdr[8] = 16; /* bit depth */
    ihdr[9] = 0;  /* grey */
    ihdr[10] = ihdr[11] = ihdr[12] = 0;
    raw = malloc(rawlen);
    for (y = 0, i = 0; y < h; y++) {
        raw[i++] = 0; /* filter none */
        for (x = 0; x < w; x++) {
            raw[i++] = (unsigned char)(v[y * w + x] >> 8);
            raw[i++] = (unsigned char)v[y * w + x];
        }
    }
    zlen = 2 + 5 + rawlen + 4;
    z = malloc(zlen);
    z[0] = 0x78;
    z[1] = 0x01;
    z[2] = 1; /* BFINAL, stored */
    z[3] = (unsigned char)rawlen;
    z[4] = (unsigned char)(rawlen >> 8);
    z[5] = (unsigned char)~rawlen;
    z[6] = (unsigned char)(~rawlen >> 8);
    memcpy(z + 7, raw, rawlen);
    for (i = 0; i < rawlen; i++) {
        a = (a + raw[i]) % 65521;
        b = (b + a) % 65521;
    }
    put32(z + 7 + rawlen, b << 16 | a);
    fwrite(sig, 1, 8, f);
    chunk(f, "IHDR", ihdr, 13);
    chunk(f, "IDAT", z, (uint32_t)zlen);
    chunk(f, "IEND", NULL, 0);
    free(raw);
    free(z);
    return fclose(f);
}

/* PNM P5/P6 with any maxval; samples big-endian when maxval > 255. */
static int pnm(const char *p, int magic, int w, int h, unsigned maxval,
               const uint16_t *v, size_t drop)
{
    char hdr[64];
    int c = magic == 6 ? 3 : 1, n, bps = maxval > 255 ? 2 : 1;
    size_t i, cnt = (size_t)w * h * c, len;
    unsigned char *b;
    int rc;

    n = snprintf(hdr, sizeof hdr, "P%d\n# comment\n%d %d\n%u\n", magic, w, h,
                 maxval);
    len = (size_t)n + cnt * bps;
    b = malloc(len);
    memcpy(b, hdr, (size_t)n);
    for (i = 0; i < cnt; i++) {
        if (bps == 2) {
            b[n + 2 * i] = (unsigned char)(v[i] >> 8);
            b[n + 2 * i + 1] = (unsigned char)v[i];
        } else {
            b[n + i] = (unsigned char)v[i];
        }
    }
    rc = write_bytes(p, b, len - drop);
    free(b);
    return rc;
}

static void test_16bit(void)
{
    static const uint16_t v[6] = { 0, 1, 255, 256, 40000, 65535 };
    uint16_t rgb[12];
    img_image img;
    ge_frame fr;
    int rc, i;

    png16(in_dir("g16.png"), 3, 2, v);
    rc = img_load(in_dir("g16.png"), &img);
    CHECK(rc == 0 && img.bytes_per_sample == 2 && img.channels == 1 &&
              img.width == 3 && img.height == 2 &&
              !memcmp(img.pixels, v, sizeof v),
          "16-bit PNG loads as native 16-bit samples", "rc=%d bps%d", rc,
          img.bytes_per_sample);
    fr = img_as_frame(&img);
    CHECK(fr.gain == GE_S16 && fr.stride == 6 && fr.bytes_per_sample == 2,
          "16-bit frame: gain S16, stride w*c*2", "gain %g stride %zu",
          (double)fr.gain, fr.stride);
    img_free(&img);
    CHECK(img_probe(in_dir("g16.png")) == 1, "img_probe on 16-bit PNG", " ");

    pnm(in_dir("g16.pgm"), 5, 3, 2, 65535, v, 0);
    rc = img_load(in_dir("g16.pgm"), &img);
    CHECK(rc == 0 && img.bytes_per_sample == 2 && img.channels == 1 &&
              !memcmp(img.pixels, v, sizeof v),
          "16-bit PGM: native byte order (stb 2.27 leaves it big-endian)",
          "rc=%d first %u", rc, rc == 0 ? ((uint16_t *)img.pixels)[1] : 0);
    img_free(&img);

    for (i = 0; i < 12; i++)
        rgb[i] = (uint16_t)(i * 5000 + 7);
    pnm(in_dir("c16.ppm"), 6, 2, 2, 65535, rgb, 0);
    rc = img_load(in_dir("c16.ppm"), &img);
    CHECK(rc == 0 && img.bytes_per_sample == 2 && img.channels == 3 &&
              !memcmp(img.pixels, rgb, sizeof rgb),
          "16-bit PPM loads as 3 native 16-bit channels", "rc=%d", rc);
    img_free(&img);

    {
        static const uint16_t t[4] = { 0, 1, 512, 1023 };
        pnm(in_dir("g10.pgm"), 5, 2, 2, 1023, t, 0);
        rc = img_load(in_dir("g10.pgm"), &img);
        CHECK(rc == 0 && img.bytes_per_sample == 2 &&
                  ((uint16_t *)img.pixels)[0] == 0 &&
                  ((uint16_t *)img.pixels)[1] == 64 &&
                  ((uint16_t *)img.pixels)[2] == 32800 &&
                  ((uint16_t *)img.pixels)[3] == 65535,
              "PGM maxval 1023 rescaled to 16-bit range", "rc=%d", rc);
        img_free(&img);
    }
    {
        static const uint16_t t[4] = { 0, 1, 8, 15 };
        pnm(in_dir("g4.pgm"), 5, 2, 2, 15, t, 0);
        rc = img_load(in_dir("g4.pgm"), &img);
        CHECK(rc == 0 && img.bytes_per_sample == 1 &&
                  ((uint8_t *)img.pixels)[1] == 17 &&
                  ((uint8_t *)img.pixels)[2] == 136 &&
                  ((uint8_t *)img.pixels)[3] == 255,
              "PGM maxval 15 rescaled to 8-bit range", "rc=%d", rc);
        img_free(&img);
    }
}

// --- Bad inputs -------------------------------------------------------------

static void test_bad_inputs(void)
{
    static const uint16_t v[6] = { 1, 2, 3, 4, 5, 6 };
    unsigned char junk[512];
    const char *msg;
    size_t n, i;
    unsigned char *png;
    int rc;

    msg = load_fails(in_dir("missing.png"), &rc);
    CHECK(rc == -1 && strstr(msg, "missing.png: cannot read image: No such "
                                  "file or directory\n") &&
              !strncmp(msg, "gpuedge: ", 9),
          "missing file", "rc=%d '%s'", rc, msg);

    write_bytes(in_dir("empty.png"), "", 0);
    msg = load_fails(in_dir("empty.png"), &rc);
    CHECK(rc == -1 && strstr(msg, "cannot read image: file is empty"),
          "empty file", "rc=%d '%s'", rc, msg);

    msg = load_fails(dir, &rc);
    CHECK(rc == -1 && strstr(msg, "cannot read image: Is a directory"),
          "directory as input", "rc=%d '%s'", rc, msg);

    for (i = 0; i < sizeof junk; i++)
        junk[i] = (unsigned char)(i * 2654435761u >> 13);
    write_bytes(in_dir("junk.png"), junk, sizeof junk);
    msg = load_fails(in_dir("junk.png"), &rc);
    CHECK(rc == -1 && strstr(msg, "not a supported image format"),
          "random bytes named .png", "rc=%d '%s'", rc, msg);
    CHECK(img_probe(in_dir("junk.png")) == 0 &&
              img_probe(in_dir("missing.png")) == 0 && img_probe(dir) == 0,
          "img_probe says no to junk, missing and directories", " ");

    /* Truncated PNGs at several cut points (header, mid-data). */
    {
        uint8_t g[64 * 64];
        for (i = 0; i < sizeof g; i++)
            g[i] = (uint8_t)(i * 31 ^ i >> 3);
        stb_png(in_dir("full.png"), 64, 64, 1, g);
    }
    png = read_bytes(in_dir("full.png"), &n);
    {
        size_t cuts[4] = { 8, 30, n / 2, n - 13 };
        int all = 1;
        for (i = 0; i < 4; i++) {
            write_bytes(in_dir("trunc.png"), png, cuts[i]);
            msg = load_fails(in_dir("trunc.png"), &rc);
            if (rc != -1 || !strstr(msg, "trunc.png: cannot read image: ") ||
                strchr(msg, '\n') != msg + strlen(msg) - 1)
                all = 0;
        }
        CHECK(all, "truncated PNG fails with one line", "'%s'", msg);
    }
    /* A flipped byte in the data (CRCs are not checked by stb). */
    if (png && n > 60) {
        png[n / 2] ^= 0x5a;
        png[n / 2 + 1] ^= 0xa5;
        write_bytes(in_dir("corrupt.png"), png, n);
        msg = load_fails(in_dir("corrupt.png"), &rc);
        CHECK(rc == 0 || rc == -1, "corrupted PNG data: no crash", "'%s'",
              msg);
    }
    free(png);

    pnm(in_dir("trunc.pgm"), 5, 3, 2, 255, v, 2);
    msg = load_fails(in_dir("trunc.pgm"), &rc);
    CHECK(rc == -1 && strstr(msg, "file is truncated"), "truncated PGM",
          "rc=%d '%s'", rc, msg);
    pnm(in_dir("trunc16.pgm"), 5, 3, 2, 65535, v, 1);
    msg = load_fails(in_dir("trunc16.pgm"), &rc);
    CHECK(rc == -1 && strstr(msg, "file is truncated"), "truncated 16-bit PGM",
          "rc=%d '%s'", rc, msg);

    write_bytes(in_dir("huge.pgm"), "P5\n99999999999 2\n255\nxx", 24);
    msg = load_fails(in_dir("huge.pgm"), &rc);
    CHECK(rc == -1, "PGM with an absurd width", "'%s'", msg);
    write_bytes(in_dir("big.pgm"), "P5\n1048576 1048576\n255\nxx", 26);
    msg = load_fails(in_dir("big.pgm"), &rc);
    CHECK(rc == -1 && strstr(msg, "too large"), "PGM too large to decode",
          "'%s'", msg);
    write_bytes(in_dir("zero.pgm"), "P5\n0 2\n255\n", 11);
    msg = load_fails(in_dir("zero.pgm"), &rc);
    CHECK(rc == -1, "PGM with zero width", "'%s'", msg);
    write_bytes(in_dir("m0.pgm"), "P5\n1 1\n0\nx", 10);
    msg = load_fails(in_dir("m0.pgm"), &rc);
    CHECK(rc == -1, "PGM with maxval 0", "'%s'", msg);

    if (geteuid() == 0) {
        SKIP("unreadable file", "running as root");
    } else {
        write_bytes(in_dir("noperm.png"), "x", 1);
        chmod(in_dir("noperm.png"), 0);
        msg = load_fails(in_dir("noperm.png"), &rc);
        CHECK(rc == -1 && strstr(msg, "Permission denied"), "unreadable file",
              "'%s'", msg);
    }
}

static void test_write_errors(void)
{
    uint8_t g[16 * 16];
    so_opts o = { 0, 0 };
    so_file *f = NULL;
    const char *msg;
    int rc, w;

    memset(g, 128, sizeof g);
    rc = so_open(&f, "/dev/full", &o, NULL, 0);
    w = img_write(f, IMG_FMT_PNG, g, 16, 16, 16);
    check_capture_start();
    rc |= so_commit(&f);
    msg = check_capture_end();
    CHECK(rc == -1 && strstr(msg, "/dev/full: cannot write: No space"),
          "img_write to /dev/full: commit fails with the reason",
          "w=%d rc=%d '%s'", w, rc, msg);

    rc = so_open(&f, "/dev/full", &o, NULL, 0);
    {
        static uint8_t big[512 * 512];
        w = img_write(f, IMG_FMT_PGM, big, 512, 512, 512);
    }
    check_capture_start();
    so_abort(&f);
    msg = check_capture_end();
    CHECK(w == -1 && strstr(msg, "No space"), "large PGM to /dev/full: "
          "img_write returns -1, abort reports", "w=%d '%s'", w, msg);

    rc = so_open(&f, in_dir("badfmt.xyz"), &o, NULL, 0);
    w = img_write(f, IMG_FMT_UNKNOWN, g, 16, 16, 16);
    check_capture_start();
    rc = so_commit(&f);
    check_capture_end();
    CHECK(w == -1 && rc == -1 && access(in_dir("badfmt.xyz"), F_OK) != 0,
          "unknown format: -1 and no file", "w=%d rc=%d", w, rc);

    rc = so_open(&f, in_dir("badarg.png"), &o, NULL, 0);
    w = img_write(f, IMG_FMT_PNG, g, 16, 16, 8);
    check_capture_start();
    so_abort(&f);
    check_capture_end();
    CHECK(w == -1, "pitch < width refused", "w=%d", w);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/gpuedge-test-img-XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_names();
    test_round_trips();
    test_native_layouts();
    test_16bit();
    test_bad_inputs();
    test_write_errors();
    rm_entries();
    rmdir(dir);
    CHECK_EXIT();
}
