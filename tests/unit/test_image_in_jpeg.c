/*
 * test_image_in_jpeg.c — libjpeg-turbo (image_in_jpeg.c) decodes JPEGs to
 * exactly the pixels of the reference decoders (DESIGN.md §1.9):
 *   - djpeg (libjpeg-turbo-progs) at its defaults, over JPEGs made here by
 *     cjpeg/jpegtran: 4:4:4, 4:2:2, 4:2:0, 4:1:1, grey, progressive,
 *     restart markers, arithmetic coding, odd sizes, 1x1;
 *   - Pillow's decode of the same files and of Pillow's own JPEGs;
 *   - cv2.imread for CMYK (Adobe inverted, as Pillow writes it);
 *   - the 8 EXIF orientations against PIL's ImageOps.exif_transpose (and
 *     --no-auto-orient's stored pixels);
 * and refusals with one line: 12-bit (a SOF1 with P = 12 patched in),
 * truncated, corrupt, over the decode limit.  Decoding from several
 * threads at once gives the same pixels.  A missing tool is "skip".
 * Works in a mkdtemp directory under /tmp and removes it.
 */
#include "check.h"
#include "image_in_jpeg.h"
#include "image_io.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64];
static const char *py; /* a python3 with PIL, or NULL */
static int py_cv2;      /* ... that also has cv2 (OpenCV) */
static int have_cjpeg;

// ---------------------------------------------------------------------------
// Helpers

static const char *in_dir(const char *name)
{
    static char buf[8][512];
    static int k;
    k = (k + 1) & 7;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

static int spit(const char *path, const void *d, size_t n)
{
    FILE *f = fopen(path, "wb");
    int ok = f && fwrite(d, 1, n, f) == n;
    if (f && fclose(f))
        ok = 0;
    return ok ? 0 : -1;
}

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    return system(cmd);
}


static int one_line(const char *s)
{
    const char *nl = strchr(s, '\n');
    return nl && nl[1] == 0;
}

/* A binary PNM (P5/P6, maxval 255) as an image. */
static int read_pnm(const char *path, img_image *m)
{
    size_t n, pos = 2;
    unsigned char *d = check_slurp(path, &n);
    long v[3];
    int i;
    memset(m, 0, sizeof *m);
    if (!d || n < 2 || d[0] != 'P' || (d[1] != '5' && d[1] != '6')) {
        free(d);
        return -1;
    }
    for (i = 0; i < 3; i++) {
        while (pos < n && (d[pos] == ' ' || d[pos] == '\n' || d[pos] == '\t' || d[pos] == '\r'))
            pos++;
        v[i] = 0;
        while (pos < n && d[pos] >= '0' && d[pos] <= '9')
            v[i] = v[i] * 10 + (d[pos++] - '0');
    }
    pos++; /* the one whitespace byte */
    m->width = (int)v[0];
    m->height = (int)v[1];
    m->channels = d[1] == '6' ? 3 : 1;
    m->bytes_per_sample = 1;
    if (v[2] != 255 || n - pos < (size_t)m->width * m->height * m->channels) {
        free(d);
        return -1;
    }
    m->pixels = malloc((size_t)m->width * m->height * m->channels);
    memcpy(m->pixels, d + pos, (size_t)m->width * m->height * m->channels);
    free(d);
    return 0;
}

/* Python's answer: "W H C\n" then the raw bytes, in `path`. */
static int read_raw(const char *path, img_image *m)
{
    size_t n;
    unsigned char *d = check_slurp(path, &n);
    char *nl;
    memset(m, 0, sizeof *m);
    if (!d || !(nl = memchr(d, '\n', n < 64 ? n : 64))) {
        free(d);
        return -1;
    }
    if (sscanf((char *)d, "%d %d %d", &m->width, &m->height, &m->channels) != 3 ||
        (size_t)(nl + 1 - (char *)d) + (size_t)m->width * m->height * m->channels != n) {
        free(d);
        return -1;
    }
    m->bytes_per_sample = 1;
    m->pixels = malloc(n);
    memcpy(m->pixels, nl + 1, (size_t)m->width * m->height * m->channels);
    free(d);
    return 0;
}

static int same(const img_image *a, const img_image *b, char *why, size_t wn)
{
    size_t nb, i, diff = 0;
    const unsigned char *p = a->pixels, *q = b->pixels;
    int maxd = 0;
    if (a->width != b->width || a->height != b->height || a->channels != b->channels ||
        a->bytes_per_sample != b->bytes_per_sample) {
        snprintf(why, wn, "layout %dx%d c%d, reference %dx%d c%d", a->width, a->height,
                 a->channels, b->width, b->height, b->channels);
        return 0;
    }
    nb = (size_t)a->width * a->height * a->channels;
    for (i = 0; i < nb; i++)
        if (p[i] != q[i]) {
            int dd = abs(p[i] - q[i]);
            diff++;
            if (dd > maxd)
                maxd = dd;
        }
    if (diff)
        snprintf(why, wn, "%zu of %zu samples differ, max |d| %d", diff, nb, maxd);
    return diff == 0;
}

static int load_file(const char *path, img_image *m, const char **msg)
{
    size_t n;
    unsigned char *d = check_slurp(path, &n);
    int rc;
    check_capture_start();
    rc = d ? img_load_mem(d, n, path, m) : -1;
    *msg = check_capture_end();
    free(d);
    return rc;
}

// ---------------------------------------------------------------------------
// Sources: a PPM/PGM with gradients, edges and noise (chroma varies, so
// subsampling and upsampling matter)

static void write_source(const char *path, int w, int h, int grey)
{
    int c = grey ? 1 : 3, x, y, k;
    unsigned s = (unsigned)(w * 131 + h);
    size_t hdr;
    char head[64];
    unsigned char *d;
    hdr = (size_t)snprintf(head, sizeof head, "P%c\n%d %d\n255\n", grey ? '5' : '6', w, h);
    d = malloc(hdr + (size_t)w * h * c);
    memcpy(d, head, hdr);
    for (y = 0; y < h; y++)
        for (x = 0; x < w; x++)
            for (k = 0; k < c; k++) {
                int v = (x * (3 + k) + y * (5 - k)) & 255;
                s = s * 1103515245u + 12345u;
                if (((x / 7 + y / 5) & 1) == 0)
                    v = 255 - v;
                v += (int)((s >> 16) % 21) - 10;
                d[hdr + ((size_t)y * w + x) * c + k] = (unsigned char)(v < 0 ? 0 : v > 255 ? 255 : v);
            }
    spit(path, d, hdr + (size_t)w * h * c);
    free(d);
}

// ---------------------------------------------------------------------------
// libjpeg-turbo against djpeg and Pillow

static void compare_with_refs(const char *label, const char *jpg)
{
    img_image a, r;
    const char *msg;
    char name[256], why[200] = "";
    int rc = load_file(jpg, &a, &msg);

    snprintf(name, sizeof name, "jpeg %s: decoded by libjpeg-turbo", label);
    CHECK(rc == 0 && a.decoder && !strcmp(a.decoder, "libjpeg-turbo"), name, "rc %d '%s'", rc, msg);
    if (rc != 0)
        return;
    snprintf(name, sizeof name, "jpeg %s: pixels equal djpeg's", label);
    if (sh("djpeg -pnm -outfile '%s' '%s' 2>/dev/null", in_dir("ref.pnm"), jpg) == 0 &&
        read_pnm(in_dir("ref.pnm"), &r) == 0) {
        CHECK(same(&a, &r, why, sizeof why), name, "%s", why);
        free(r.pixels);
    } else {
        CHECK(0, name, "djpeg failed");
    }
    snprintf(name, sizeof name, "jpeg %s: pixels equal Pillow's", label);
    if (!py) {
        SKIP(name, "no python3 with PIL");
    } else if (sh("%s -c 'import sys\nfrom PIL import Image\nim=Image.open(sys.argv[1])\n"
                  "im.load()\nsys.stdout.buffer.write(b\"%%d %%d %%d\\n\" %% (im.width, im.height, len(im.getbands())) + im.tobytes())' "
                  "'%s' > '%s'", py, jpg, in_dir("ref.raw")) == 0 &&
               read_raw(in_dir("ref.raw"), &r) == 0) {
        CHECK(same(&a, &r, why, sizeof why), name, "%s", why);
        free(r.pixels);
    } else {
        CHECK(0, name, "Pillow failed");
    }
    img_free(&a);
}

static void test_cjpeg_corpus(void)
{
    static const struct {
        const char *label, *opts;
        int w, h, grey;
        const char *jpegtran; /* then rewritten by jpegtran with these */
    } cases[] = {
        { "444",              "-quality 90 -sample 1x1",                67, 45, 0, NULL },
        { "422",              "-quality 90 -sample 2x1",                65, 43, 0, NULL },
        { "420",              "-quality 85 -sample 2x2",                63, 41, 0, NULL },
        { "411",              "-quality 85 -sample 4x1",                61, 37, 0, NULL },
        { "440",              "-quality 85 -sample 1x2",                59, 35, 0, NULL },
        { "grey",             "-quality 90 -grayscale",                 61, 39, 1, NULL },
        { "grey-source",      "-quality 75",                            57, 33, 1, NULL },
        { "progressive-420",  "-quality 90 -progressive",               71, 47, 0, NULL },
        { "progressive-grey", "-quality 90 -progressive",               53, 29, 1, NULL },
        { "restart-rows",     "-quality 90 -restart 1",                 73, 49, 0, NULL },
        { "restart-blocks",   "-quality 90 -restart 3B -sample 1x1",    66, 38, 0, NULL },
        { "arithmetic",       "-quality 90 -arithmetic",                69, 43, 0, NULL },
        { "arithmetic-prog",  "-quality 90 -arithmetic -progressive",   55, 31, 0, NULL },
        { "arith-jpegtran",   "-quality 90",                            51, 27, 0, "-arithmetic" },
        { "optimized",        "-quality 95 -optimize",                  77, 51, 0, NULL },
        { "q100-444",         "-quality 100 -sample 1x1",               33, 17, 0, NULL },
        { "1x1",              "-quality 90",                             1,  1, 0, NULL },
        { "1x1-grey",         "-quality 90",                             1,  1, 1, NULL },
        { "17x9-420",         "-quality 90",                            17,  9, 0, NULL },
        { "1x31-422",         "-quality 90 -sample 2x1",                 1, 31, 0, NULL },
        { "big-420",          "-quality 90",                           803, 601, 0, NULL },
    };
    size_t i;
    if (!have_cjpeg) {
        SKIP("jpeg cjpeg corpus", "cjpeg/djpeg not installed (libjpeg-turbo-progs)");
        return;
    }
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *src = in_dir(cases[i].grey ? "src.pgm" : "src.ppm");
        const char *jpg = in_dir("t.jpg");
        char name[128];
        write_source(src, cases[i].w, cases[i].h, cases[i].grey);
        if (sh("cjpeg %s -outfile '%s' '%s'", cases[i].opts, jpg, src) != 0 ||
            (cases[i].jpegtran &&
             (sh("jpegtran %s -outfile '%s' '%s'", cases[i].jpegtran, in_dir("t2.jpg"), jpg) != 0 ||
              rename(in_dir("t2.jpg"), jpg) != 0))) {
            snprintf(name, sizeof name, "jpeg %s: made by cjpeg", cases[i].label);
            CHECK(0, name, "cjpeg %s failed", cases[i].opts);
            continue;
        }
        compare_with_refs(cases[i].label, jpg);
    }
}

static void test_pillow_corpus(void)
{
    static const struct {
        const char *label, *save;
    } cases[] = {
        { "pillow-420", "quality=90" },
        { "pillow-444", "quality=90, subsampling=0" },
        { "pillow-422", "quality=80, subsampling=1" },
        { "pillow-progressive", "quality=90, progressive=True" },
        { "pillow-grey", "quality=90" },
    };
    size_t i;
    if (!py) {
        SKIP("jpeg Pillow corpus", "no python3 with PIL");
        return;
    }
    write_source(in_dir("src.ppm"), 97, 61, 0);
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *jpg = in_dir("p.jpg");
        char name[128];
        if (sh("%s -c 'import sys\nfrom PIL import Image\nim=Image.open(sys.argv[1])\n"
               "im=im.convert(\"L\") if \"grey\" in sys.argv[3] else im\n"
               "im.save(sys.argv[2], \"JPEG\", %s)' '%s' '%s' '%s'",
               py, cases[i].save, in_dir("src.ppm"), jpg, cases[i].label) != 0) {
            snprintf(name, sizeof name, "jpeg %s: made by Pillow", cases[i].label);
            CHECK(0, name, "Pillow failed");
            continue;
        }
        compare_with_refs(cases[i].label, jpg);
    }
}

/* CMYK (Pillow writes Adobe's inverted CMYK): cv2.imread's conversion. */
static void test_cmyk(void)
{
    img_image a, r;
    const char *msg, *jpg = in_dir("cmyk.jpg");
    char why[200] = "";
    int rc;
    if (!py || !py_cv2) {
        SKIP("jpeg cmyk: pixels equal cv2.imread's", "no python3 with PIL and cv2");
        return;
    }
    write_source(in_dir("src.ppm"), 45, 29, 0);
    if (sh("%s -c 'import sys\nfrom PIL import Image\n"
           "Image.open(sys.argv[1]).convert(\"CMYK\").save(sys.argv[2], quality=90)' '%s' '%s'",
           py, in_dir("src.ppm"), jpg) != 0 ||
        sh("%s -c 'import sys, cv2\nim=cv2.imread(sys.argv[1])[:, :, ::-1].copy()\n"
           "sys.stdout.buffer.write(b\"%%d %%d 3\\n\" %% (im.shape[1], im.shape[0]) + im.tobytes())' "
           "'%s' > '%s'", py, jpg, in_dir("ref.raw")) != 0 ||
        read_raw(in_dir("ref.raw"), &r) != 0) {
        CHECK(0, "jpeg cmyk: pixels equal cv2.imread's", "python failed");
        return;
    }
    rc = load_file(jpg, &a, &msg);
    CHECK(rc == 0 && same(&a, &r, why, sizeof why), "jpeg cmyk: pixels equal cv2.imread's",
          "rc %d %s %s", rc, why, msg);
    if (rc == 0)
        img_free(&a);
    free(r.pixels);
}

// ---------------------------------------------------------------------------
// EXIF orientation

static void test_orientation(void)
{
    int o;
    if (!py) {
        SKIP("jpeg exif orientation", "no python3 with PIL");
        return;
    }
    write_source(in_dir("src.ppm"), 23, 13, 0);
    for (o = 1; o <= 8; o++) {
        const char *jpg = in_dir("o.jpg");
        img_image a, b, r, s;
        const char *msg;
        char name[128], why[200] = "";
        int rc, rb;
        if (sh("%s -c 'import sys\nfrom PIL import Image, ImageOps\n"
               "im=Image.open(sys.argv[1])\nex=Image.Exif()\nex[0x0112]=int(sys.argv[3])\n"
               "im.save(sys.argv[2], quality=90, exif=ex.tobytes())\n"
               "t=ImageOps.exif_transpose(Image.open(sys.argv[2]))\n"
               "sys.stdout.buffer.write(b\"%%d %%d 3\\n\" %% (t.width, t.height) + t.tobytes())' "
               "'%s' '%s' %d > '%s'", py, in_dir("src.ppm"), jpg, o, in_dir("ref.raw")) != 0 ||
            read_raw(in_dir("ref.raw"), &r) != 0) {
            snprintf(name, sizeof name, "jpeg exif orientation %d", o);
            CHECK(0, name, "python failed");
            continue;
        }
        rc = load_file(jpg, &a, &msg);
        snprintf(name, sizeof name, "jpeg exif orientation %d: as ImageOps.exif_transpose", o);
        CHECK(rc == 0 && same(&a, &r, why, sizeof why), name, "rc %d %s %s", rc, why, msg);

        /* --no-auto-orient: the stored pixels, whatever the tag */
        img_set_auto_orient(0);
        rb = load_file(jpg, &b, &msg);
        img_set_auto_orient(1);
        snprintf(name, sizeof name, "jpeg exif orientation %d: --no-auto-orient keeps 23x13", o);
        CHECK(rb == 0 && b.width == 23 && b.height == 13, name, "rc %d %dx%d", rb, b.width, b.height);
        /* the stb decoder is oriented the same way */
        img_set_jpeg_decoder(IMG_JPEG_STB);
        rc = load_file(jpg, &s, &msg);
        img_set_jpeg_decoder(IMG_JPEG_TURBO);
        snprintf(name, sizeof name, "jpeg exif orientation %d: stb decoder oriented too", o);
        CHECK(rc == 0 && s.decoder && !strcmp(s.decoder, "stb_image") && s.width == r.width &&
                  s.height == r.height,
              name, "rc %d %dx%d", rc, s.width, s.height);
        if (rc == 0)
            img_free(&s);
        if (rb == 0)
            img_free(&b);
        img_free(&a);
        free(r.pixels);
    }
}

/* Hostile Exif: every length and offset out of range gives orientation 1
 * and no out-of-bounds read (ASan watches). */
static void test_exif_parser(void)
{
    /* SOI, APP1 Exif II, IFD0 with one entry: orientation 6 */
    static const unsigned char good[] = {
        0xff, 0xd8, 0xff, 0xe1, 0x00, 0x22, 'E', 'x', 'i', 'f', 0, 0,
        'I', 'I', 42, 0, 8, 0, 0, 0,
        1, 0, 0x12, 0x01, 3, 0, 1, 0, 0, 0, 6, 0, 0, 0,
        0, 0, 0, 0, 0xff, 0xd9 };
    unsigned char b[sizeof good];
    size_t cut;
    int ok = 1, i;
    CHECK(imgjpg_exif_orientation(good, sizeof good) == 6, "jpeg exif parser: orientation 6 read",
          "%d", imgjpg_exif_orientation(good, sizeof good));
    for (cut = 0; cut < sizeof good; cut++) {
        unsigned char *c = malloc(cut ? cut : 1);
        memcpy(c, good, cut);
        if (imgjpg_exif_orientation(c, cut) != (cut >= 38 ? 6 : 1))
            ok = 0;
        free(c);
    }
    CHECK(ok, "jpeg exif parser: every truncation is bounds-checked", "%s", "");
    ok = 1;
    for (i = 4; i < 34; i++) {
        int v;
        memcpy(b, good, sizeof b);
        b[i] = 0xff;
        v = imgjpg_exif_orientation(b, sizeof b);
        if (v < 1 || v > 8)
            ok = 0;
    }
    memcpy(b, good, sizeof b);
    b[30] = 9; /* out of range: ignored */
    CHECK(ok && imgjpg_exif_orientation(b, sizeof b) == 1,
          "jpeg exif parser: corrupt fields give 1..8", "%s", "");
    memcpy(b, good, sizeof b);
    b[12] = 'M'; b[13] = 'M'; /* big-endian: 42 reads as 0x2a00, not TIFF */
    CHECK(imgjpg_exif_orientation(b, sizeof b) == 1, "jpeg exif parser: byte order checked", "%s", "");
}

// ---------------------------------------------------------------------------
// Refusals

static void test_refusals(void)
{
    const char *jpg = in_dir("r.jpg"), *msg;
    unsigned char *d;
    size_t n, i, sof;
    img_image m;
    int rc;

    if (!have_cjpeg) {
        SKIP("jpeg refusals", "cjpeg not installed");
        return;
    }
    write_source(in_dir("src.ppm"), 64, 48, 0);
    if (sh("cjpeg -quality 90 -outfile '%s' '%s'", jpg, in_dir("src.ppm")) != 0 ||
        !(d = check_slurp(jpg, &n))) {
        CHECK(0, "jpeg refusals", "cjpeg failed");
        return;
    }

    /* 12-bit: the SOF0 marker turned into SOF1 with P = 12 (header only:
     * libjpeg-turbo refuses at the header, before any scan) */
    for (i = 2; i + 4 < n; i++)
        if (d[i] == 0xff && d[i + 1] == 0xc0)
            break;
    sof = i;
    {
        unsigned char *c = malloc(n);
        memcpy(c, d, n);
        if (i + 4 < n) {
            c[i + 1] = 0xc1;
            c[i + 4] = 12;
        }
        check_capture_start();
        rc = img_load_mem(c, n, "twelve.jpg", &m);
        msg = check_capture_end();
        CHECK(i + 4 < n && rc == -1 && !m.pixels && one_line(msg) &&
                  strstr(msg, "twelve.jpg: cannot read image: 12-bit JPEG is not supported"),
              "jpeg 12-bit: refused with one line", "rc %d '%s'", rc, msg);
        /* and a lossless SOF3 */
        if (i + 4 < n) {
            c[i + 1] = 0xc3;
            c[i + 4] = 8;
        }
        check_capture_start();
        rc = img_load_mem(c, n, "lossless.jpg", &m);
        msg = check_capture_end();
        CHECK(rc == -1 && one_line(msg) && strstr(msg, "lossless.jpg: cannot read image: unsupported JPEG process"),
              "jpeg lossless: refused with one line", "rc %d '%s'", rc, msg);
        free(c);
    }

    /* truncated at every tenth of the file: one line, never pixels */
    {
        int ok = 1;
        char bad[4096] = "";
        for (i = 1; i < 10; i++) {
            size_t cut = n * i / 10;
            check_capture_start();
            rc = img_load_mem(d, cut, "cut.jpg", &m);
            msg = check_capture_end();
            if (rc != -1 || m.pixels || !one_line(msg) || !strstr(msg, "cut.jpg: cannot read image: ")) {
                ok = 0;
                snprintf(bad, sizeof bad, "cut at %zu: rc %d '%s'", cut, rc, msg);
            }
            if (rc == 0)
                img_free(&m);
        }
        CHECK(ok, "jpeg truncated: one line, no pixels", "%s", bad);
        check_capture_start();
        rc = img_load_mem(d, n - 200, "cut.jpg", &m);
        msg = check_capture_end();
        CHECK(rc == -1 && strstr(msg, "cut.jpg: cannot read image: file is truncated"),
              "jpeg truncated in the scan: 'file is truncated'", "rc %d '%s'", rc, msg);
    }

    /* a corrupt header: a frame of 0x0 pixels */
    {
        unsigned char *c = malloc(n);
        memcpy(c, d, n);
        c[sof + 5] = 0;
        c[sof + 6] = 0; /* height 0 */
        c[sof + 7] = 0;
        c[sof + 8] = 0; /* width 0 */
        check_capture_start();
        rc = img_load_mem(c, n, "zero.jpg", &m);
        msg = check_capture_end();
        CHECK(rc == -1 && one_line(msg) && strstr(msg, "zero.jpg: cannot read image: "),
              "jpeg zero size: one line", "rc %d '%s'", rc, msg);
        free(c);
    }

    /* fuzz finding: FF fill bytes before SOI (stb reads that as a JPEG and
     * hit an undefined shift on this file's data): libjpeg-turbo's, one line */
    {
        size_t fn;
        unsigned char *f = check_slurp("tests/fuzz/regressions/image-jpeg-fill-before-soi.jpg", &fn);
        check_capture_start();
        rc = f ? img_load_mem(f, fn, "fill.jpg", &m) : -2;
        msg = check_capture_end();
        CHECK(rc == -1 && !m.pixels && one_line(msg) &&
                  strstr(msg, "fill.jpg: cannot read image: corrupt JPEG"),
              "jpeg fuzz regression image-jpeg-fill-before-soi.jpg: libjpeg-turbo refuses it",
              "rc %d '%s'", rc, msg);
        free(f);
    }

    /* the decode limit, from the header: 64x48x3 = 9216 bytes */
    img_set_decode_limit(9215);
    check_capture_start();
    rc = img_load_mem(d, n, "limit.jpg", &m);
    msg = check_capture_end();
    img_set_decode_limit(0);
    CHECK(rc == -1 && one_line(msg) && strstr(msg, "limit.jpg: cannot read image: image too large (64x48)"),
          "jpeg decode limit enforced from the header", "rc %d '%s'", rc, msg);

    /* recoverable corruption (extraneous bytes before a marker): decoded,
     * as Pillow and OpenCV do */
    {
        unsigned char *c = malloc(n + 3);
        memcpy(c, d, n - 2);
        c[n - 2] = 0x12; c[n - 1] = 0x34; c[n] = 0x56; /* junk before EOI */
        c[n + 1] = 0xff; c[n + 2] = 0xd9;
        check_capture_start();
        rc = img_load_mem(c, n + 3, "junk.jpg", &m);
        msg = check_capture_end();
        CHECK(rc == 0 && m.width == 64 && !msg[0], "jpeg extraneous bytes: decoded, quietly", "rc %d '%s'", rc, msg);
        if (rc == 0)
            img_free(&m);
        free(c);
    }
    free(d);
}

// ---------------------------------------------------------------------------
// Threads: the decode pool calls the decoder from many threads at once

typedef struct tjob {
    const unsigned char *d;
    size_t n;
    img_image m;
    int rc;
} tjob;

static void *decode_thread(void *arg)
{
    tjob *j = arg;
    int k;
    for (k = 0; k < 4; k++) {
        if (k)
            img_free(&j->m);
        j->rc = imgjpg_decode(j->d, j->n, (size_t)1 << 30, "thread", &j->m);
        if (j->rc)
            break;
    }
    return NULL;
}

static void test_threads(void)
{
    tjob j[6];
    pthread_t t[6];
    unsigned char *d;
    size_t n;
    int i, ok = 1;
    if (!have_cjpeg) {
        SKIP("jpeg threads", "cjpeg not installed");
        return;
    }
    write_source(in_dir("src.ppm"), 311, 199, 0);
    if (sh("cjpeg -quality 90 -progressive -outfile '%s' '%s'", in_dir("t.jpg"), in_dir("src.ppm")) ||
        !(d = check_slurp(in_dir("t.jpg"), &n))) {
        CHECK(0, "jpeg threads", "cjpeg failed");
        return;
    }
    for (i = 0; i < 6; i++) {
        j[i].d = d;
        j[i].n = n;
        if (pthread_create(&t[i], NULL, decode_thread, &j[i]))
            ok = 0, j[i].rc = -2;
    }
    for (i = 0; i < 6; i++)
        if (j[i].rc != -2)
            pthread_join(t[i], NULL);
    for (i = 0; i < 6; i++) {
        if (j[i].rc != 0 || (i && memcmp(j[i].m.pixels, j[0].m.pixels, 311 * 199 * 3)))
            ok = 0;
    }
    for (i = 5; i >= 0; i--)
        if (j[i].rc == 0)
            img_free(&j[i].m);
    CHECK(ok, "jpeg: six threads decode the same pixels", "%s", "");
    free(d);
}

// ---------------------------------------------------------------------------

static void find_python(void)
{
    static const char *const cands[] = { "/usr/bin/python3", "python3" };
    size_t i;
    for (i = 0; i < sizeof cands / sizeof cands[0]; i++)
        if (sh("%s -c 'import PIL' >/dev/null 2>&1", cands[i]) == 0) {
            py = cands[i];
            py_cv2 = sh("%s -c 'import cv2' >/dev/null 2>&1", py) == 0;
            return;
        }
}

static void rm_dir(void)
{
    DIR *dd = opendir(dir);
    struct dirent *e;
    if (!dd)
        return;
    while ((e = readdir(dd)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            unlink(in_dir(e->d_name));
    closedir(dd);
    rmdir(dir);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/test_image_in_jpeg.XXXXXX");
    if (!mkdtemp(dir)) {
        CHECK(0, "jpeg tests: temporary directory", "mkdtemp failed");
        CHECK_EXIT();
    }
    have_cjpeg = sh("command -v cjpeg >/dev/null && command -v djpeg >/dev/null && "
                    "command -v jpegtran >/dev/null") == 0;
    find_python();
    test_exif_parser();
    test_cjpeg_corpus();
    test_pillow_corpus();
    test_cmyk();
    test_orientation();
    test_refusals();
    test_threads();
    rm_dir();
    CHECK_EXIT();
}
