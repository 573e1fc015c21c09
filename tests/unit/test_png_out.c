/*
 * test_png_out.c — the PNG writer (src/io/png_out.c).  Every PNG it makes is
 * read back by two decoders that share nothing with the writer: stb_image
 * (its own inflate) for the pixels, and libdeflate's zlib decompressor,
 * which also checks the stream's adler32; the chunk layout and every CRC
 * are checked here.  tests/cli/png_out.sh adds Pillow (zlib) and pngcheck.
 *
 * Cases: 1x1, 1xN, Nx1, odd sizes, a tall image cut into many pieces,
 * all 0, all 255, noise, a photo-like map; every filter; levels 0..12 with
 * pieces of one row (stored, fixed and dynamic blocks all get joined);
 * the same bytes whatever the thread count; a pitch wider than the row;
 * bad arguments.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libdeflate.h>
#include <stb_image.h>

#include "check.h"
#include "deflate_rle.h"
#include "png_out.h"

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Structure: signature, IHDR (w, h, 8-bit grey), IDATs, IEND last, every
 * CRC right; the IDATs inflate (libdeflate, adler32 checked) to exactly
 * h rows of 1 + w bytes.  Then stb decodes the same pixels as `img`.
 * Returns NULL or what was wrong. */
static const char *verify(const uint8_t *png, size_t len, const uint8_t *img, int w, int h,
                          size_t pitch)
{
    static const uint8_t sig[8] = {0x89, 'P', 'N', 'G', 0x0d, 0x0a, 0x1a, 0x0a};
    static char why[128];
    size_t pos = 8, zn = 0, raw_n = ((size_t)w + 1) * (size_t)h, got = 0;
    uint8_t *z = malloc(len), *raw = malloc(raw_n + 1);
    struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
    const char *bad = NULL;
    int chunks = 0, seen_iend = 0, x, y, n;
    unsigned char *px = NULL;

    if (!z || !raw || !d) {
        bad = "out of memory";
        goto end;
    }
    if (len < 8 + 25 + 12 || memcmp(png, sig, 8)) {
        bad = "no PNG signature";
        goto end;
    }
    while (pos < len) {
        uint32_t n32, crc;
        if (len - pos < 12 || (n32 = rd32(png + pos)) > len - pos - 12) {
            bad = "a chunk runs past the end";
            goto end;
        }
        crc = libdeflate_crc32(0, png + pos + 4, 4 + (size_t)n32);
        if (crc != rd32(png + pos + 8 + n32)) {
            bad = "bad CRC";
            goto end;
        }
        if (seen_iend) {
            bad = "bytes after IEND";
            goto end;
        }
        if (chunks == 0) {
            const uint8_t *i = png + pos + 8;
            if (memcmp(png + pos + 4, "IHDR", 4) || n32 != 13 || rd32(i) != (uint32_t)w ||
                rd32(i + 4) != (uint32_t)h || i[8] != 8 || i[9] != 0 || i[10] || i[11] ||
                i[12]) {
                bad = "IHDR is not the first chunk, or not 8-bit grey WxH";
                goto end;
            }
        } else if (!memcmp(png + pos + 4, "IDAT", 4)) {
            memcpy(z + zn, png + pos + 8, n32);
            zn += n32;
        } else if (!memcmp(png + pos + 4, "IEND", 4)) {
            seen_iend = 1;
        } else {
            bad = "an unexpected chunk";
            goto end;
        }
        chunks++;
        pos += 12 + (size_t)n32;
    }
    if (!seen_iend) {
        bad = "no IEND";
        goto end;
    }
    if (libdeflate_zlib_decompress(d, z, zn, raw, raw_n + 1, &got) != LIBDEFLATE_SUCCESS ||
        got != raw_n) {
        snprintf(why, sizeof why, "libdeflate cannot inflate the IDATs (%zu of %zu bytes)", got,
                 raw_n);
        bad = why;
        goto end;
    }
    px = stbi_load_from_memory(png, (int)len, &x, &y, &n, 0);
    if (!px || x != w || y != h || n != 1) {
        bad = "stb_image does not decode it as WxH grey";
        goto end;
    }
    for (int r = 0; r < h; r++)
        if (memcmp(px + (size_t)r * w, img + (size_t)r * pitch, (size_t)w)) {
            snprintf(why, sizeof why, "row %d differs from the image", r);
            bad = why;
            goto end;
        }
end:
    stbi_image_free(px);
    libdeflate_free_decompressor(d);
    free(z);
    free(raw);
    return bad;
}

enum { PAT_ZERO, PAT_FULL, PAT_NOISE, PAT_PHOTO };

static uint8_t *make(int w, int h, size_t pitch, int pat)
{
    uint8_t *p = malloc(pitch * (size_t)h);
    uint32_t s = 12345u + (uint32_t)w * 31u + (uint32_t)h;
    if (!p)
        return NULL;
    for (int y = 0; y < h; y++)
        for (size_t x = 0; x < pitch; x++) {
            uint8_t v;
            s = s * 1664525u + 1013904223u;
            switch (pat) {
            case PAT_ZERO: v = 0; break;
            case PAT_FULL: v = 255; break;
            case PAT_NOISE: v = (uint8_t)(s >> 24); break;
            default: /* an edge map: mostly near 0, some lines, some grain */
                v = (uint8_t)((s >> 28) & 3);
                if ((x + (size_t)y) % 37 < 2 || (size_t)y % 53 == 0)
                    v = (uint8_t)(120 + (s >> 26));
                break;
            }
            p[(size_t)y * pitch + x] = x < (size_t)w ? v : 0xa5; /* padding: never read */
        }
    return p;
}

static const char *pat_name[] = {"zeros", "255s", "noise", "photo-like"};

/* Encodes with o, verifies; the PNG in *out (caller frees) when wanted. */
static int one(const char *label, const uint8_t *img, int w, int h, size_t pitch,
               const png_opts *o, uint8_t **out, size_t *outlen)
{
    uint8_t *png = NULL;
    size_t len = 0;
    const char *bad;
    char name[256];
    int rc = png_encode(img, w, h, pitch, o, &png, &len);
    snprintf(name, sizeof name, "%s: valid PNG, same pixels", label);
    bad = rc ? strerror(errno) : verify(png, len, img, w, h, pitch);
    CHECK(!bad, name, "%s", bad ? bad : "");
    if (out && !bad) {
        *out = png;
        *outlen = len;
    } else {
        free(png);
    }
    return bad ? -1 : 0;
}

static void test_sizes(void)
{
    static const struct {
        int w, h;
    } sz[] = {{1, 1}, {1, 700}, {5000, 1}, {321, 241}, {2, 3}, {1000, 1000}};
    for (size_t i = 0; i < sizeof sz / sizeof sz[0]; i++)
        for (int pat = 0; pat < 4; pat++) {
            int w = sz[i].w, h = sz[i].h, f;
            uint8_t *img = make(w, h, (size_t)w, pat);
            char label[128];
            if (!img)
                continue;
            /* one line a size and pattern: the first filter that fails, or ok */
            for (f = PNG_FILTER_NONE; f <= PNG_FILTER_MINSUM; f++) {
                png_opts o = {PNG_LEVEL_DEFAULT, f, 2, 0};
                uint8_t *png = NULL;
                size_t len = 0;
                int bad = png_encode(img, w, h, (size_t)w, &o, &png, &len) ||
                          verify(png, len, img, w, h, (size_t)w);
                free(png);
                if (bad) {
                    snprintf(label, sizeof label, "%dx%d %s, filter %d", w, h, pat_name[pat], f);
                    one(label, img, w, h, (size_t)w, &o, NULL, NULL);
                    break;
                }
            }
            snprintf(label, sizeof label, "%dx%d %s: valid PNG, same pixels, every filter", w, h,
                     pat_name[pat]);
            if (f > PNG_FILTER_MINSUM)
                CHECK(1, label, "%s", "");
            free(img);
        }
}

/* Pieces of one row each at every level: every kind of deflate block
 * (stored for noise at level 0, fixed and dynamic Huffman for the rest)
 * ends a piece that is joined to the next. */
static void test_joins(void)
{
    for (int pat = 0; pat < 4; pat++) {
        int w = 97, h = 61, bad = 0;
        uint8_t *img = make(w, h, (size_t)w, pat);
        char label[128];
        if (!img)
            continue;
        for (int level = PNG_LEVEL_MIN; level <= PNG_LEVEL_MAX && !bad; level++) {
            for (size_t pb = 1; pb <= 4096 && !bad; pb *= 8) {
                png_opts o = {level, PNG_FILTER_DEFAULT, 3, pb};
                uint8_t *png = NULL;
                size_t len = 0;
                bad = png_encode(img, w, h, (size_t)w, &o, &png, &len) ||
                      verify(png, len, img, w, h, (size_t)w);
                free(png);
                if (bad) {
                    snprintf(label, sizeof label, "%s %dx%d, level %d, pieces of %zu bytes",
                             pat_name[pat], w, h, level, pb);
                    one(label, img, w, h, (size_t)w, &o, NULL, NULL);
                }
            }
        }
        snprintf(label, sizeof label, "%s %dx%d: pieces of 1..4096 bytes joined, levels 0..12",
                 pat_name[pat], w, h);
        if (!bad)
            CHECK(1, label, "%s", "");
        free(img);
    }
}

/* A tall image with the default piece size: many pieces, several threads;
 * the same bytes with 1, 2, 3 and 8 threads, and twice over. */
static void test_tall_and_reproducible(void)
{
    const int w = 300, h = 20000; /* 6 MB filtered: 12 pieces of 512 KiB */
    uint8_t *img = make(w, h, (size_t)w, PAT_PHOTO), *ref = NULL;
    size_t reflen = 0;
    int same = 1, thr[] = {2, 3, 8, 1, 0};
    png_opts o = {PNG_LEVEL_DEFAULT, PNG_FILTER_DEFAULT, 1, 0};
    if (!img)
        return;
    if (one("300x20000 photo-like, 1 thread", img, w, h, (size_t)w, &o, &ref, &reflen) == 0) {
        for (size_t i = 0; i < sizeof thr / sizeof thr[0]; i++) {
            uint8_t *png = NULL;
            size_t len = 0;
            o.threads = thr[i];
            if (png_encode(img, w, h, (size_t)w, &o, &png, &len) || len != reflen ||
                memcmp(png, ref, len)) {
                same = 0;
                printf("# threads %d: %zu bytes against %zu\n", thr[i], len, reflen);
            }
            free(png);
        }
        CHECK(same, "300x20000: the same bytes with 1, 2, 3, 8 and all threads", "%s", "");
        /* it is really cut: more than one IDAT */
        {
            int idats = 0;
            for (size_t pos = 8; pos + 12 <= reflen; pos += 12 + rd32(ref + pos))
                idats += !memcmp(ref + pos + 4, "IDAT", 4);
            CHECK(idats >= 10, "300x20000: written as many pieces", "%d IDATs", idats);
        }
    }
    free(ref);
    free(img);
}

static void test_pitch(void)
{
    const int w = 123, h = 77;
    size_t pitch = 160;
    uint8_t *img = make(w, h, pitch, PAT_PHOTO);
    png_opts o = {PNG_LEVEL_DEFAULT, PNG_FILTER_DEFAULT, 2, 1000};
    if (img)
        one("123x77 with a 160-byte pitch, pieces", img, w, h, pitch, &o, NULL, NULL);
    free(img);
}

static void test_levels_shrink(void)
{
    const int w = 640, h = 480;
    uint8_t *img = make(w, h, (size_t)w, PAT_PHOTO), *a = NULL, *b = NULL, *c = NULL;
    size_t la = 0, lb = 0, lc = 0;
    png_opts o0 = {0, PNG_FILTER_DEFAULT, 0, 0}, o1 = o0, o12 = o0;
    o1.level = 1;
    o12.level = 12;
    if (img && !one("640x480 level 0", img, w, h, (size_t)w, &o0, &a, &la) &&
        !one("640x480 level 1", img, w, h, (size_t)w, &o1, &b, &lb) &&
        !one("640x480 level 12", img, w, h, (size_t)w, &o12, &c, &lc))
        CHECK(la > (size_t)w * h && lb < la / 2 && lc < la / 2 && (lb != lc || memcmp(b, c, lb)),
              "level 0 stores, 1 (runs) and 12 (libdeflate's smallest) compress, differently",
              "%zu %zu %zu", la, lb, lc);
    free(a);
    free(b);
    free(c);
    free(img);
}

static void test_bad_args(void)
{
    uint8_t g[16] = {0}, *png = (uint8_t *)1;
    size_t len = 1;
    png_opts bad_level = {13, PNG_FILTER_DEFAULT, 0, 0}, bad_filter = {1, 6, 0, 0};
    int r1, r2, r3, r4, r5;
    errno = 0;
    r1 = png_encode(g, 0, 4, 4, NULL, &png, &len);
    r2 = png_encode(g, 4, 4, 3, NULL, &png, &len);
    r3 = png_encode(g, 4, 4, 4, &bad_level, &png, &len);
    r4 = png_encode(g, 4, 4, 4, &bad_filter, &png, &len);
    r5 = png_encode(NULL, 4, 4, 4, NULL, &png, &len);
    CHECK(r1 == -1 && r2 == -1 && r3 == -1 && r4 == -1 && r5 == -1 && errno == EINVAL &&
              png == NULL && len == 0,
          "zero width, pitch < width, level 13, filter 6, no pixels: -1 EINVAL",
          "%d %d %d %d %d errno %d", r1, r2, r3, r4, r5, errno);
}

static int paeth(int a, int b, int c)
{
    int pa = abs(b - c), pb = abs(a - c), pc = abs(a + b - 2 * c);
    return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/* png_encode_coded from pieces made as the GPU's coder makes them (Paeth
 * rows, drle_compress a piece, joinable but the last, their Adler-32s):
 * the file png_encode writes at the defaults, byte for byte. */
static void test_coded(void)
{
    static const int sz[][2] = {{1, 1}, {7, 3}, {640, 360}, {300, 2000}, {5000, 300}};
    for (size_t c = 0; c < sizeof sz / sizeof sz[0]; c++)
        for (int pat = 0; pat < 4; pat++) {
            const int w = sz[c][0], h = sz[c][1];
            const size_t rowb = (size_t)w + 1, pitch = (size_t)w + 3;
            const size_t pb = PNG_PIECE_BYTES / rowb;
            const int rows = pb >= (size_t)h ? h : pb ? (int)pb : 1;
            const int np = (h + rows - 1) / rows;
            uint8_t *img = make(w, h, pitch, pat), *flt = malloc(rowb * (size_t)rows);
            uint8_t *z = malloc(drle_bound(rowb * (size_t)rows) * (size_t)np), *a = NULL, *b = NULL;
            uint32_t *lens = malloc(sizeof *lens * (size_t)np), *adl = malloc(sizeof *adl * (size_t)np);
            size_t at = 0, la = 0, lb = 0;
            png_opts o = {PNG_LEVEL_DEFAULT, PNG_FILTER_DEFAULT, 1, 0};
            char name[96];
            for (int k = 0; img && flt && z && lens && adl && k < np; k++) {
                const int y0 = k * rows, nr = h - y0 < rows ? h - y0 : rows;
                for (int r = 0; r < nr; r++) {
                    const uint8_t *cu = img + (size_t)(y0 + r) * pitch;
                    const uint8_t *pr = y0 + r ? cu - pitch : NULL;
                    uint8_t *f = flt + (size_t)r * rowb;
                    f[0] = 4;
                    for (int x = 0; x < w; x++)
                        f[1 + x] = (uint8_t)(cu[x] - paeth(x ? cu[x - 1] : 0, pr ? pr[x] : 0,
                                                           x && pr ? pr[x - 1] : 0));
                }
                lens[k] = (uint32_t)drle_compress(flt, rowb * (size_t)nr, z + at, k + 1 == np);
                adl[k] = libdeflate_adler32(1, flt, rowb * (size_t)nr);
                at += lens[k];
            }
            snprintf(name, sizeof name, "png_encode_coded == png_encode: %dx%d %s, %d pieces", w,
                     h, pat_name[pat], np);
            CHECK(img && z && png_encode(img, w, h, pitch, &o, &a, &la) == 0 &&
                      png_encode_coded(w, h, rows, np, z, lens, adl, &b, &lb) == 0 && la == lb &&
                      !memcmp(a, b, la),
                  name, "%zu vs %zu bytes", la, lb);
            free(img);
            free(flt);
            free(z);
            free(lens);
            free(adl);
            free(a);
            free(b);
        }
    {
        uint8_t *png = NULL;
        size_t len = 0;
        uint32_t l = 0, ad = 1;
        errno = 0;
        CHECK(png_encode_coded(4, 4, 3, 1, (const uint8_t *)"", &l, &ad, &png, &len) == -1 &&
                  errno == EINVAL,
              "png_encode_coded: a piece count that does not fit the rows -> EINVAL", "errno %d",
              errno);
    }
}

int main(void)
{
    test_coded();
    test_sizes();
    test_joins();
    test_tall_and_reproducible();
    test_pitch();
    test_levels_shrink();
    test_bad_args();
    CHECK_EXIT();
}
