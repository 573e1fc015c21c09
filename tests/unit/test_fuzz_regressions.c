/*
 * test_fuzz_regressions.c — what the fuzz harnesses (tests/fuzz) found
 * stays fixed, and the in-memory entry points they drive behave like the
 * file ones:
 *   - every tests/fuzz/regressions/image-* input fails to load with one
 *     message line, under an alarm (a hang fails the test), and the
 *     valid-* files next to them still load (the guards in image_io.c
 *     refuse only what stb v2.27 mishandles);
 *   - img_load_mem == img_load; img_set_decode_limit;
 *   - vid_open_mem reads a clip from memory frame for frame as vid_open
 *     reads the same bytes from a file, and fails cleanly on junk.
 * Runs from the repository root (tests/run does); works in a mkdtemp
 * directory under /tmp and removes it.
 */
#include "check.h"
#include "image_io.h"
#include "util.h"
#include "video_io.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <stb_image_write.h>

#define REG_DIR "tests/fuzz/regressions/"

static char dir[64];

// ---------------------------------------------------------------------------
// Helpers

static int spill(const char *p, const void *d, size_t n)
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


static int one_line(const char *msg)
{
    const char *nl = strchr(msg, '\n');
    return !strncmp(msg, "gpuedge: ", 9) && nl && nl[1] == '\0';
}

static void on_alarm(int sig)
{
    static const char m[] = "not ok fuzz regression: hung (alarm)\n";
    (void)sig;
    if (write(1, m, sizeof m - 1) < 0)
        _exit(1);
    _exit(1);
}

// ---------------------------------------------------------------------------
// Images

/* The findings: file, and what the one message must say. */
static const struct {
    const char *file, *why;
} findings[] = {
    /* stb#1289/#1291: DHT counts above 256 overflow stbi__huffman */
    { "image-jpeg-dht-overflow.jpg", "corrupt JPEG (bad Huffman table)" },
    /* a scan using a Huffman table no DHT defined: stb decodes with the
     * uninitialised table and asserts (or reads out of bounds) */
    { "image-jpeg-undefined-huffman.jpg", "corrupt JPEG (undefined Huffman table)" },
    /* an IDAT length past the end: stb grew its buffer to it (2 GiB) */
    { "image-png-idat-past-end.png", "file is truncated" },
    /* CVE-2021-42715, stb#1224: a cut RLE scanline loops forever */
    { "image-hdr-rle-hang.hdr", "file is truncated" },
    /* 10 bytes asking stb for 2.3 GB of GIF working buffers */
    { "image-gif-huge-alloc.gif", "image too large (17993x14136)" },
    /* CVE-2023-43898, stb#1452: failed PIC decode -> NULL dereference */
    { "image-pic-null-convert.pic", "cannot read image: " },
    /* PIC through stb's callbacks: zeros past the end kept its decoder
     * from ever seeing the end of the file (a hang) */
    { "image-pic-callback-eof-hang.pic", "cannot read image: " },
    /* an ancillary chunk longer than 2^31 before an empty IDAT: stb's
     * callbacks skip only to the end of their buffer, then read that IDAT
     * into no buffer (UBSan: memcpy to NULL) */
    { "image-png-chunk-past-end.png", "file is truncated" },
    /* image_av: a 17-byte DPX header read at offset 16..19 before the
     * length was checked (heap overflow) */
    { "image-dpx-short-header.dpx", "file is truncated" },
};

static void test_image_findings(void)
{
    size_t i;
    for (i = 0; i < sizeof findings / sizeof findings[0]; i++) {
        char path[256], name[300];
        img_image img;
        const char *msg;
        size_t n;
        unsigned char *d;
        int rc, rc2;

        snprintf(path, sizeof path, REG_DIR "%s", findings[i].file);
        snprintf(name, sizeof name, "fuzz regression %s", findings[i].file);
        d = check_slurp(path, &n);
        if (!d) {
            CHECK(0, name, "cannot read %s: %s", path, strerror(errno));
            continue;
        }
        /* The JPEG findings are stb's: its guards still serve
         * --jpeg-decoder=stb.  libjpeg-turbo (the default) refuses them
         * too, in its own words. */
        if (strstr(findings[i].file, "jpeg")) {
            char tname[300];
            check_capture_start();
            rc = img_load_mem(d, n, findings[i].file, &img);
            msg = check_capture_end();
            snprintf(tname, sizeof tname, "fuzz regression %s: libjpeg-turbo refuses it",
                     findings[i].file);
            CHECK(rc == -1 && !img.pixels && one_line(msg) &&
                      strstr(msg, "cannot read image: corrupt JPEG"),
                  tname, "rc=%d '%s'", rc, msg);
            img_set_jpeg_decoder(IMG_JPEG_STB);
        }
        alarm(20);
        check_capture_start();
        rc = img_load(path, &img);
        if (rc)
            ge_err_why(path); /* as the CLI would (DESIGN.md §9) */
        rc2 = img_load_mem(d, n, findings[i].file, &img);
        msg = check_capture_end();
        alarm(0);
        img_set_jpeg_decoder(IMG_JPEG_TURBO);
        CHECK(rc == -1 && rc2 == -1 && !img.pixels && !img.width &&
                  strstr(msg, findings[i].why) &&
                  strstr(msg, path) && strstr(msg, "\ngpuedge: ") &&
                  one_line(strstr(msg, "\ngpuedge: ") + 1),
              name, "rc=%d/%d '%s'", rc, rc2, msg);
        free(d);
    }
}

static void test_image_valid(void)
{
    static const struct {
        const char *file;
        int w, h, c;
    } ok[] = {
        { "valid-progressive.jpg", 24, 16, 3 }, /* DHTs between scans */
        { "valid-rle.hdr", 8, 2, 3 },           /* RLE scanlines to the end */
        { "valid-rgb.pic", 2, 2, 3 },           /* RGB through the RGBA path */
        /* stb un-mattes its partial alpha with an out-of-range float to
         * uchar conversion (clang's UBSan; fuzz finding 2026-12-01): it
         * still decodes, to stb's pixels */
        { "valid-psd-unmatte.psd", 6, 4, 4 },
    };
    size_t i;
    for (i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        char path[256], name[300];
        img_image img;
        int rc;
        snprintf(path, sizeof path, REG_DIR "%s", ok[i].file);
        snprintf(name, sizeof name, "guards let %s through", ok[i].file);
        rc = img_load(path, &img);
        CHECK(rc == 0 && img.width == ok[i].w && img.height == ok[i].h &&
                  img.channels == ok[i].c && img.bytes_per_sample == 1,
              name, "rc=%d %dx%d c%d", rc, img.width, img.height, img.channels);
        if (rc == 0 && i == 2) {
            /* make_corpus.sh's PIC: bytes 0..11 as R,G,B of 4 pixels */
            const unsigned char *p = img.pixels;
            int j, same = 1;
            for (j = 0; j < 12; j++)
                same &= p[j] == j;
            CHECK(same, "PIC RGB pixels kept in order", "%d %d %d / %d %d %d",
                  p[0], p[1], p[2], p[9], p[10], p[11]);
        }
        img_free(&img);
    }
}

/* stb_image_write into a growing buffer */
typedef struct membuf {
    unsigned char *p;
    size_t n;
} membuf;

static void mem_put(void *ctx, void *data, int size)
{
    membuf *m = ctx;
    unsigned char *np = realloc(m->p, m->n + (size_t)size);
    if (!np)
        return;
    memcpy(np + m->n, data, (size_t)size);
    m->p = np;
    m->n += (size_t)size;
}

/* An IDAT of length 0 before the data (stb: memcpy to NULL) decodes as
 * the same file without it. */
static void test_png_empty_idat(void)
{
    static const unsigned char empty_idat[12] = { 0, 0, 0, 0, 'I', 'D', 'A', 'T',
                                                  0x35, 0xaf, 0x06, 0x1e };
    unsigned char px[7 * 5 * 3];
    membuf m = { NULL, 0 };
    unsigned char *with;
    img_image a, b;
    int ra = -1, rb = -1, i;
    size_t at = 8 + 25; /* after the signature and IHDR */

    for (i = 0; i < (int)sizeof px; i++)
        px[i] = (unsigned char)(i * 37 + 11);
    stbi_write_png_to_func(mem_put, &m, 7, 5, 3, px, 7 * 3);
    with = malloc(m.n + 24);
    if (m.p && with) {
        memcpy(with, m.p, at);
        memcpy(with + at, empty_idat, 12);          /* one before the data */
        memcpy(with + at + 12, m.p + at, m.n - at - 12);
        memcpy(with + m.n, empty_idat, 12);         /* one before IEND */
        memcpy(with + m.n + 12, m.p + m.n - 12, 12);
        ra = img_load_mem(m.p, m.n, "plain.png", &a);
        rb = img_load_mem(with, m.n + 24, "empty-idat.png", &b);
    }
    CHECK(ra == 0 && rb == 0 && a.width == 7 && b.width == 7 && b.channels == 3 &&
              !memcmp(a.pixels, b.pixels, sizeof px) && !memcmp(b.pixels, px, sizeof px),
          "PNG with empty IDAT chunks decodes as without them", "rc=%d/%d", ra, rb);
    if (ra == 0)
        img_free(&a);
    if (rb == 0)
        img_free(&b);
    /* the first IDAT claiming 2 GiB: refused before stb allocates */
    if (m.p && m.n > at + 8 && !memcmp(m.p + at + 4, "IDAT", 4)) {
        const char *msg;
        m.p[at] = 0x7f;
        m.p[at + 1] = m.p[at + 2] = m.p[at + 3] = 0xff;
        check_capture_start();
        ra = img_load_mem(m.p, m.n, "long-idat.png", &a);
        msg = check_capture_end();
        CHECK(ra == -1 && strstr(msg, "long-idat.png: cannot read image: file is truncated") &&
                  one_line(msg),
              "PNG IDAT longer than the file: truncated", "rc=%d '%s'", ra, msg);
    } else {
        CHECK(0, "PNG IDAT longer than the file: truncated", "no IDAT after IHDR");
    }
    free(with);
    free(m.p);

    /* the fuzzer's file: an empty first IDAT, and an unknown critical
     * chunk later, which stb refuses (the reason quotes the chunk's bytes;
     * ge_err keeps them on one line) */
    {
        const char *msg;
        check_capture_start();
        rb = img_load(REG_DIR "image-png-empty-idat.png", &b);
        msg = check_capture_end();
        CHECK(rb == -1 && !b.pixels && one_line(msg) &&
                  strstr(msg, "image-png-empty-idat.png: cannot read image: "),
              "fuzz regression image-png-empty-idat.png", "rc=%d '%s'", rb, msg);
        if (rb == 0)
            img_free(&b);
    }
}

static void test_image_mem(void)
{
    img_image a, b;
    unsigned char *d;
    size_t n;
    const char *msg;
    int ra, rb;

    d = check_slurp("samples/grey.png", &n);
    ra = img_load("samples/grey.png", &a);
    rb = d ? img_load_mem(d, n, "grey.png", &b) : -1;
    CHECK(ra == 0 && rb == 0 && a.width == b.width && a.height == b.height &&
              a.channels == b.channels &&
              !memcmp(a.pixels, b.pixels, (size_t)a.width * a.height * a.channels),
          "img_load_mem decodes as img_load", "rc=%d/%d", ra, rb);
    if (ra == 0)
        img_free(&a);
    if (rb == 0)
        img_free(&b);

    check_capture_start();
    ra = img_load_mem("", 0, NULL, &a);
    if (ra)
        ge_err_why(NULL); /* each failure's line, as the CLI prints it */
    rb = img_load_mem(NULL, 5, "null", &b);
    msg = check_capture_end();
    CHECK(ra == -1 && rb == -1 && strstr(msg, "(memory): cannot read image: file is empty") &&
              strstr(msg, "null: cannot read image: "),
          "img_load_mem: empty and NULL buffers fail", "'%s'", msg);

    /* the decode limit: grey.png needs w*h bytes */
    if (d) {
        img_set_decode_limit(1000);
        check_capture_start();
        ra = img_load_mem(d, n, "grey.png", &a);
        msg = check_capture_end();
        img_set_decode_limit(0);
        rb = img_load_mem(d, n, "grey.png", &b);
        CHECK(ra == -1 && strstr(msg, "image too large") && rb == 0,
              "img_set_decode_limit refuses, 0 restores", "rc=%d/%d '%s'", ra, rb, msg);
        if (rb == 0)
            img_free(&b);
    }
    free(d);
}

// ---------------------------------------------------------------------------
// Video from memory

/* A 6x4 grey y4m of 3 frames, pixel (x, y) of frame i = 40 i + 7 y + x. */
static size_t make_y4m(unsigned char *buf, size_t cap)
{
    size_t n = (size_t)snprintf((char *)buf, cap,
                                "YUV4MPEG2 W6 H4 F25:1 Ip A1:1 Cmono XCOLORRANGE=FULL\n");
    int i, x, y;
    for (i = 0; i < 3; i++) {
        memcpy(buf + n, "FRAME\n", 6);
        n += 6;
        for (y = 0; y < 4; y++)
            for (x = 0; x < 6; x++)
                buf[n++] = (unsigned char)(40 * i + 7 * y + x);
    }
    return n;
}

static int read_all(vid_reader *r, unsigned char *out, size_t cap, int *frames)
{
    host_buf hb = {0};
    src_frame fr;
    size_t used = 0;
    int rc;
    *frames = 0;
    while ((rc = vid_next(r, &fr, &hb)) == 1) {
        int y;
        size_t row = (size_t)fr.f.width * fr.f.channels * fr.f.bytes_per_sample;
        for (y = 0; y < fr.f.height && used + row <= cap; y++, used += row)
            memcpy(out + used, (const unsigned char *)fr.f.data + y * fr.f.stride, row);
        (*frames)++;
    }
    host_buf_free(&hb);
    return rc;
}

static void test_video_mem(void)
{
    unsigned char clip[512], a[512], b[512];
    char path[128];
    size_t n = make_y4m(clip, sizeof clip);
    vid_opts o = {.max_frames = -1, .threads = 1};
    vid_reader *r = NULL;
    const char *msg;
    int fa = 0, fb = 0, ra = -1, rb = -1, x, good = 1;

    snprintf(path, sizeof path, "%s/clip.y4m", dir);
    spill(path, clip, n);
    memset(a, 0, sizeof a);
    memset(b, 0, sizeof b);
    if (vid_open(path, &o, &r) == 0) {
        ra = read_all(r, a, sizeof a, &fa);
        vid_close(&r);
    }
    if (vid_open_mem(clip, n, "clip.y4m", &o, &r) == 0) {
        vid_info info;
        vid_get_info(r, &info);
        good = info.width == 6 && info.height == 4;
        rb = read_all(r, b, sizeof b, &fb);
        vid_close(&r);
    }
    for (x = 0; x < 72; x++)
        good &= b[x] == (unsigned char)(40 * (x / 24) + 7 * (x % 24 / 6) + x % 6);
    CHECK(ra == 0 && rb == 0 && fa == 3 && fb == 3 && !memcmp(a, b, 72) && good,
          "vid_open_mem reads a clip as vid_open does", "rc=%d/%d frames %d/%d",
          ra, rb, fa, fb);

    /* --frames through memory too, and a reader that is closed early */
    o.max_frames = 2;
    if (vid_open_mem(clip, n, NULL, &o, &r) == 0) {
        rb = read_all(r, b, sizeof b, &fb);
        vid_close(&r);
        CHECK(rb == 0 && fb == 2 && r == NULL, "vid_open_mem with --frames 2",
              "rc=%d frames %d", rb, fb);
    } else {
        CHECK(0, "vid_open_mem with --frames 2", "open failed");
    }
    o.max_frames = -1;

    {
        unsigned char junk[300];
        int rj, re, rn;
        for (x = 0; x < (int)sizeof junk; x++)
            junk[x] = (unsigned char)(x * 2654435761u >> 11);
        check_capture_start();
        rj = vid_open_mem(junk, sizeof junk, "junk.bin", &o, &r);
        if (rj)
            ge_err_why(NULL); /* each failure's line, as the CLI prints it */
        re = vid_open_mem(clip, 0, "empty.y4m", &o, &r);
        if (re)
            ge_err_why(NULL);
        rn = vid_open_mem(NULL, 0, NULL, &o, &r);
        msg = check_capture_end();
        CHECK(rj == -1 && re == -1 && rn == -1 && r == NULL &&
                  strstr(msg, "junk.bin: cannot ") &&
                  strstr(msg, "empty.y4m: cannot open video: file is empty") &&
                  strstr(msg, "(memory): cannot open video: file is empty"),
              "vid_open_mem: junk, empty and NULL fail with a message", "'%s'", msg);
    }

    /* a clip cut short: the frames that are there, no crash */
    if (vid_open_mem(clip, n - 30, "cut.y4m", &o, &r) == 0) {
        check_capture_start();
        rb = read_all(r, b, sizeof b, &fb);
        vid_close(&r);
        msg = check_capture_end();
        CHECK(rb >= -1 && fb == 2, "vid_open_mem: truncated clip", "rc=%d frames %d '%s'",
              rb, fb, msg);
    } else {
        CHECK(0, "vid_open_mem: truncated clip", "open failed");
    }
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/gpuedge-test-fuzz-XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    signal(SIGALRM, on_alarm);
    test_image_findings();
    test_image_valid();
    test_image_mem();
    test_png_empty_idat();
    test_video_mem();
    {
        char p[128];
        snprintf(p, sizeof p, "%s/clip.y4m", dir);
        unlink(p);
    }
    rmdir(dir);
    CHECK_EXIT();
}
