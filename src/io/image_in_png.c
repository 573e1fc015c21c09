/*
 * image_in_png.c — PNG in through libspng (Debian's libspng 0.7.3 over
 * zlib), giving exactly the pixels stb_image v2.27 gives with req_comp = 0
 * (and stbi_load_16 for 16-bit files), which is what the rest of gpuedge
 * was built and tested on (DESIGN.md §1.1).  Faster than stb's own inflate and
 * unfilter; BENCHMARKS.md has the ratio.
 *
 * The layout stb chooses, which we ask libspng for by colour type:
 *   grey 1/2/4/8    G8 (stb scales 1/2/4-bit by 0xff/0x55/0x11, as spng)
 *   grey 16         native-endian 16-bit grey
 *   grey + tRNS     grey+alpha (GA8, GA16), alpha 0 where the key matches
 *   RGB 8/16        RGB, RGB + tRNS -> RGBA
 *   palette         RGB8, or RGBA8 when a tRNS chunk exists
 *   grey+alpha/RGBA as stored (host-endian when 16-bit)
 * No gamma, sBIT or colour management: stb does none.
 *
 * stb reads what libspng might refuse (CRC and Adler-32 errors: stb checks
 * neither, and neither do we, so the two agree; Apple's CgBI files; extra
 * data) and both refuse most corruption, with different words.  So every
 * libspng error hands the file back to stb (IMGPNG_FALLBACK), whose guards
 * in image_io.c stay in force: gpuedge decodes what it decoded before and
 * refuses the rest with stb's message.  Also handed back: tRNS keys that do
 * not fit the bit depth, where stb compares only the low byte (scaled) and
 * libspng the whole value, so their alpha would differ.
 *
 * The common case first, without libspng: an 8-bit, non-interlaced grey,
 * grey+alpha, RGB or RGBA file without tRNS, whose image data is one run
 * of IDAT chunks holding one zlib stream of exactly the filtered rows, is
 * inflated by libdeflate (about 2.5x zlib's speed on photos) and
 * unfiltered here (png_fast; RGB and RGBA rows in SSE2 registers).
 * Anything else about the file, or any error
 * there, and it goes to libspng as before, so what is refused, and with
 * which words, does not change.
 */
#include "image_in_png.h"
#include "bigbuf.h"
#include "util.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <libdeflate.h>
#include <spng.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* STBI_MAX_DIMENSIONS (third_party/stb_impl.c): the same files are too big. */
#define IMGPNG_MAX_SIDE (1u << 20)
/* Ancillary chunks libspng keeps (text, ICC profiles): no real PNG comes
 * near, and a corrupt length must not make us allocate gigabytes. */
#define IMGPNG_CHUNK_LIMIT ((size_t)64 << 20)

/* The decode budget from the header (`limit` bytes, and stb's INT_MAX
 * ceiling, so the same files fit): 0 with the image's bytes in *bytes, or
 * -1 with "image too large" recorded for name. */
static int fits_budget(unsigned w, unsigned h, int ch, int bps, size_t limit, const char *name,
                       size_t *bytes)
{
    size_t px = (size_t)w * h, per = (size_t)ch * (size_t)bps;
    if (px > (size_t)INT_MAX / per || px > limit / per) {
        ge_fail_in(name, "cannot read image: image too large (%ux%u)", w, h);
        return -1;
    }
    *bytes = px * per;
    return 0;
}

/* *img as decoded: px (owned from now on), w x h, ch channels of bps bytes. */
static void decoded(img_image *img, void *px, int w, int h, int ch, int bps, const char *by)
{
    img->width = w;
    img->height = h;
    img->channels = ch;
    img->bytes_per_sample = bps;
    img->pixels = px;
    img->decoder = by;
}

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* PNG's predictor (p = a + b - c, so |p - a| = |b - c|, |p - b| = |a -
 * c|, |p - c| = |a + b - 2c|), written for conditional moves: on noisy
 * rows its branches would mispredict half the time. */
static inline int paeth(int a, int b, int c)
{
    const int pa = abs(b - c), pb = abs(a - c), pc = abs(a + b - 2 * c);
    const int bc = pb <= pc ? b : c;
    return pa <= pb && pa <= pc ? a : bc;
}

#if defined(__SSE2__)
/* Rows of 3- and 4-byte pixels (RGB, RGBA: photos), the same bytes as
 * unfilter's loops (test_image_in_png compares them).
 * Average and Paeth a pixel at a time, its channels in the 16-bit lanes
 * of one register: each pixel depends on the one before, so the channels
 * are what runs in parallel.  A pixel's bytes come and go through a
 * general register: a 3-byte copy through memory would read back a word
 * written in pieces (a stalled store forward every pixel). */
static inline __m128i px_load(const unsigned char *p, int bpp)
{
    uint32_t v = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                 (bpp == 4 ? (uint32_t)p[3] << 24 : 0);
    return _mm_unpacklo_epi8(_mm_cvtsi32_si128((int)v), _mm_setzero_si128());
}

static inline void px_store(unsigned char *p, __m128i v, int bpp)
{
    uint32_t w = (uint32_t)_mm_cvtsi128_si32(_mm_packus_epi16(v, v));
    p[0] = (unsigned char)w;
    p[1] = (unsigned char)(w >> 8);
    p[2] = (unsigned char)(w >> 16);
    if (bpp == 4)
        p[3] = (unsigned char)(w >> 24);
}

static inline __m128i abs16(__m128i v)
{
    return _mm_max_epi16(v, _mm_sub_epi16(_mm_setzero_si128(), v));
}

static inline __m128i pick(__m128i mask, __m128i yes, __m128i no)
{
    return _mm_or_si128(_mm_and_si128(mask, yes), _mm_andnot_si128(mask, no));
}

static inline __attribute__((always_inline)) __m128i paeth16(__m128i a, __m128i b, __m128i c)
{
    /* paeth(): a unless |p - a| is not the least, then b unless |p - b| >
     * |p - c|.  Each absolute value is the larger of two differences
     * taken from a at once (the chain through a is what each pixel waits
     * for). */
    __m128i bc = _mm_sub_epi16(b, c), k = _mm_sub_epi16(bc, c); /* b - 2c */
    __m128i pa = abs16(bc);
    __m128i pb = _mm_max_epi16(_mm_sub_epi16(a, c), _mm_sub_epi16(c, a));
    __m128i pc = _mm_max_epi16(_mm_add_epi16(a, k),
                               _mm_sub_epi16(_mm_sub_epi16(_mm_setzero_si128(), k), a));
    __m128i not_a = _mm_or_si128(_mm_cmpgt_epi16(pa, pb), _mm_cmpgt_epi16(pa, pc));
    return pick(not_a, pick(_mm_cmpgt_epi16(pb, pc), c, b), a);
}

static inline __attribute__((always_inline)) void
unfilter_px(int type, const unsigned char *f, unsigned char *out, const unsigned char *prev,
            size_t rowb, int bpp)
{
    const __m128i low = _mm_set1_epi16(0xff);
    __m128i a = _mm_setzero_si128(), c = _mm_setzero_si128();
    for (size_t i = 0; i < rowb; i += (size_t)bpp) {
        __m128i x = px_load(f + i, bpp), b = px_load(prev + i, bpp), p;
        if (type == 3)
            p = _mm_srli_epi16(_mm_add_epi16(a, b), 1);
        else
            p = paeth16(a, b, c);
        a = _mm_and_si128(_mm_add_epi16(x, p), low);
        px_store(out + i, a, bpp);
        c = b;
    }
}

/* Two Paeth rows at once: row y (f0, into out0, above it prev) and row
 * y + 1 (f1, into tmp: its place still holds row y's unread bytes) a
 * pixel behind, the pair in one register (row y's pixel in the low lanes,
 * row y + 1's in the high ones).  Row y + 1's pixel above is the one row y
 * has just made, so the two chains wait on each other only through that,
 * and each step makes two pixels in about the time of one. */
static inline __attribute__((always_inline)) void
paeth_pair(const unsigned char *f0, const unsigned char *f1, unsigned char *out0,
           unsigned char *tmp, const unsigned char *prev, size_t rowb, int bpp)
{
    const __m128i z = _mm_setzero_si128(), low = _mm_set1_epi16(0xff);
    const size_t n = rowb / (size_t)bpp;
    __m128i a = z, c = z;
    for (size_t k = 0; k <= n; k++) {
        __m128i x0 = k < n ? px_load(f0 + k * (size_t)bpp, bpp) : z;
        __m128i b0 = k < n ? px_load(prev + k * (size_t)bpp, bpp) : z;
        __m128i x1 = k ? px_load(f1 + (k - 1) * (size_t)bpp, bpp) : z;
        __m128i b = _mm_unpacklo_epi64(b0, a); /* row y + 1's: row y's last */
        __m128i r = _mm_and_si128(_mm_add_epi16(_mm_unpacklo_epi64(x0, x1), paeth16(a, b, c)),
                                  low);
        if (k < n)
            px_store(out0 + k * (size_t)bpp, r, bpp);
        if (k)
            px_store(tmp + (k - 1) * (size_t)bpp, _mm_srli_si128(r, 8), bpp);
        c = b;
        a = r; /* (its high lanes 0 after k = 0: row y + 1 starts with a = c = 0) */
    }
}

static void unfilter_paeth2(const unsigned char *f0, const unsigned char *f1,
                            unsigned char *out0, unsigned char *tmp,
                            const unsigned char *prev, size_t rowb, int bpp)
{
    if (bpp == 3) /* a constant size for px_load's copies */
        paeth_pair(f0, f1, out0, tmp, prev, rowb, 3);
    else
        paeth_pair(f0, f1, out0, tmp, prev, rowb, 4);
}

/* A Sub row of 3- or 4-byte pixels: four pixels a step, each the sum of
 * the filtered ones up to it (two shifted adds) plus the last pixel of the
 * step before.  Returns how many bytes it did (whole steps; the caller
 * finishes the row).  Stores exactly the step's bytes: with the row
 * unfiltered in place, a wider store would reach filtered bytes not yet
 * read. */
static size_t unfilter_sub(const unsigned char *f, unsigned char *out, size_t rowb, int bpp)
{
    __m128i carry = _mm_setzero_si128();
    const __m128i px0 = _mm_cvtsi32_si128(0xffffff);
    size_t i = 0;
    if (bpp == 4) {
        for (; i + 16 <= rowb; i += 16) {
            __m128i v = _mm_loadu_si128((const __m128i *)(f + i));
            v = _mm_add_epi8(v, _mm_slli_si128(v, 4));
            v = _mm_add_epi8(v, _mm_slli_si128(v, 8));
            v = _mm_add_epi8(v, carry);
            _mm_storeu_si128((__m128i *)(out + i), v);
            carry = _mm_shuffle_epi32(v, 0xff);
        }
        return i;
    }
    for (; i + 16 <= rowb; i += 12) { /* 16 read, 12 used */
        __m128i v = _mm_loadu_si128((const __m128i *)(f + i)), t;
        v = _mm_add_epi8(v, _mm_slli_si128(v, 3));
        v = _mm_add_epi8(v, _mm_slli_si128(v, 6));
        v = _mm_add_epi8(v, carry);
        _mm_storel_epi64((__m128i *)(out + i), v);
        uint32_t w = (uint32_t)_mm_cvtsi128_si32(_mm_srli_si128(v, 8));
        memcpy(out + i + 8, &w, 4);
        t = _mm_and_si128(_mm_srli_si128(v, 9), px0); /* the last pixel */
        t = _mm_or_si128(t, _mm_slli_si128(t, 3));
        carry = _mm_or_si128(t, _mm_slli_si128(t, 6));
    }
    return i;
}
#endif

/* Row y of `rowb` bytes (bpp bytes a pixel) from its filter type and
 * filtered bytes f into out; prev is row y - 1's output (NULL for row 0).
 * out may overlap f from below (out <= f): each byte is read before any
 * write reaches it.  0, or -1 for a filter type PNG does not define. */
static int unfilter(int type, const unsigned char *f, unsigned char *out,
                    const unsigned char *prev, size_t rowb, int bpp)
{
    size_t i;
#if defined(__SSE2__)
    if ((type == 3 || type == 4) && prev && (bpp == 3 || bpp == 4)) {
        if (bpp == 3) /* a constant size for px_load's copies */
            unfilter_px(type, f, out, prev, rowb, 3);
        else
            unfilter_px(type, f, out, prev, rowb, 4);
        return 0;
    }
#endif
    switch (type) {
    case 0:
        memmove(out, f, rowb);
        return 0;
    case 1:
        i = 0;
#if defined(__SSE2__)
        if (bpp == 3 || bpp == 4)
            i = unfilter_sub(f, out, rowb, bpp);
#endif
        for (; i < (size_t)bpp && i < rowb; i++)
            out[i] = f[i];
        for (; i < rowb; i++)
            out[i] = (unsigned char)(f[i] + out[i - bpp]);
        return 0;
    case 2:
        if (!prev)
            memmove(out, f, rowb);
        else
            for (i = 0; i < rowb; i++)
                out[i] = (unsigned char)(f[i] + prev[i]);
        return 0;
    case 3:
        for (i = 0; i < rowb; i++) {
            int a = i >= (size_t)bpp ? out[i - bpp] : 0, b = prev ? prev[i] : 0;
            out[i] = (unsigned char)(f[i] + ((a + b) >> 1));
        }
        return 0;
    case 4:
        for (i = 0; i < rowb; i++) {
            int a = i >= (size_t)bpp ? out[i - bpp] : 0, b = prev ? prev[i] : 0;
            int c = prev && i >= (size_t)bpp ? prev[i - bpp] : 0;
            out[i] = (unsigned char)(f[i] + paeth(a, b, c));
        }
        return 0;
    }
    return -1;
}

/* The common case (see the top): IMGPNG_OK with *img filled, IMGPNG_FAILED
 * (too large, recorded), or IMGPNG_FALLBACK for libspng to decide. */
static int png_fast(const unsigned char *b, size_t n, size_t limit, const char *name,
                    img_image *img)
{
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    static const int chans[7] = {1, 0, 3, 0, 2, 0, 4};
    const unsigned char *z = NULL;
    unsigned char *zcopy = NULL, *px = NULL, *tmp = NULL;
    size_t zn = 0, pos, rowb, rawb, bytes, in_used = 0, out_used = 0;
    uint32_t w, h;
    int ch, idat_run = 0, ended = 0, nidat = 0, rc = IMGPNG_FALLBACK;
    struct libdeflate_decompressor *dz = NULL;

    if (n < 33 || memcmp(b, sig, 8) || be32(b + 8) != 13 || memcmp(b + 12, "IHDR", 4))
        return IMGPNG_FALLBACK;
    w = be32(b + 16);
    h = be32(b + 20);
    if (!w || !h || w > IMGPNG_MAX_SIDE || h > IMGPNG_MAX_SIDE || b[24] != 8 || b[25] > 6 ||
        !chans[b[25]] || b[26] || b[27] || b[28])
        return IMGPNG_FALLBACK;
    ch = chans[b[25]];
    /* the chunks: one run of IDATs, no tRNS, no unknown critical chunk, IEND */
    for (pos = 33; pos + 12 <= n && !ended;) {
        uint32_t len = be32(b + pos);
        const unsigned char *t = b + pos + 4;
        if (len > 0x7fffffffu || len > n - pos - 12)
            return IMGPNG_FALLBACK;
        if (!memcmp(t, "IDAT", 4)) {
            if (idat_run > 1)
                return IMGPNG_FALLBACK; /* IDATs apart */
            idat_run = 1;
            if (!nidat++)
                z = t + 4;
            else if (z + zn != t + 4)
                z = NULL; /* several IDATs: joined below */
            zn += len;
        } else {
            if (idat_run)
                idat_run = 2;
            if (!memcmp(t, "IEND", 4))
                ended = 1;
            else if (!memcmp(t, "tRNS", 4) || !memcmp(t, "IHDR", 4) ||
                     (!(t[0] & 0x20) && (memcmp(t, "PLTE", 4) || !(b[25] & 2))))
                return IMGPNG_FALLBACK;
        }
        pos += (size_t)len + 12;
    }
    if (!ended || !nidat || zn < 2)
        return IMGPNG_FALLBACK;

    if (fits_budget(w, h, ch, 1, limit, name, &bytes))
        return IMGPNG_FAILED;
    rowb = (size_t)w * ch;
    rawb = (rowb + 1) * h;
    if (!z) {
        /* several IDATs: their data joined, in order */
        unsigned char *q = zcopy = bb_alloc(zn);
        if (!q)
            return IMGPNG_FALLBACK;
        for (pos = 33; pos + 12 <= n;) {
            uint32_t len = be32(b + pos);
            if (!memcmp(b + pos + 4, "IDAT", 4)) {
                memcpy(q, b + pos + 8, len);
                q += len;
            } else if (!memcmp(b + pos + 4, "IEND", 4)) {
                break;
            }
            pos += (size_t)len + 12;
        }
        z = zcopy;
    }
    /* the filtered rows, then unfiltered in place, each row moving down
     * by its filter bytes: one buffer, touched once */
    px = bb_alloc(rawb);
    dz = libdeflate_alloc_decompressor();
    /* the whole stream, exactly the rows, its Adler-32 right (libdeflate
     * checks it; libspng, told to ignore it, takes the file otherwise) */
    if (!px || !dz ||
        libdeflate_zlib_decompress_ex(dz, z, zn, px, rawb, &in_used, &out_used) !=
            LIBDEFLATE_SUCCESS ||
        in_used != zn || out_used != rawb)
        goto end;
    for (uint32_t y = 0; y < h; y++) {
        const unsigned char *f = px + (size_t)y * (rowb + 1);
        unsigned char *out = px + (size_t)y * rowb;
#if defined(__SSE2__)
        if (y > 0 && y + 1 < h && f[0] == 4 && f[rowb + 1] == 4 && (ch == 3 || ch == 4) &&
            (tmp || (tmp = malloc(rowb)))) {
            unfilter_paeth2(f + 1, f + rowb + 2, out, tmp, out - rowb, rowb, ch);
            memcpy(out + rowb, tmp, rowb); /* row y's bytes are all read now */
            y++;
            continue;
        }
#endif
        if (unfilter(f[0], f + 1, out, y ? out - rowb : NULL, rowb, ch))
            goto end;
    }
    decoded(img, px, (int)w, (int)h, ch, 1, "libdeflate");
    px = NULL;
    rc = IMGPNG_OK;
end:
    libdeflate_free_decompressor(dz);
    bb_free(px);
    free(tmp);
    bb_free(zcopy);
    return rc;
}

int imgpng_decode(const void *buf, size_t n, size_t limit, const char *name,
                  img_image *img)
{
    spng_ctx *ctx = NULL;
    struct spng_ihdr ih;
    struct spng_trns trns;
    void *px = NULL;
    size_t bytes = 0;
    int rc = IMGPNG_FALLBACK, has_trns, fmt, channels, bps;

    memset(img, 0, sizeof *img);
    rc = png_fast(buf, n, limit, name, img);
    if (rc != IMGPNG_FALLBACK)
        return rc;
    ctx = spng_ctx_new(SPNG_CTX_IGNORE_ADLER32);
    if (!ctx)
        goto end;
    if (spng_set_png_buffer(ctx, buf, n) ||
        spng_set_crc_action(ctx, SPNG_CRC_USE, SPNG_CRC_USE) ||
        spng_set_image_limits(ctx, IMGPNG_MAX_SIDE, IMGPNG_MAX_SIDE) ||
        spng_set_chunk_limits(ctx, IMGPNG_CHUNK_LIMIT, IMGPNG_CHUNK_LIMIT) ||
        spng_get_ihdr(ctx, &ih))
        goto end;
    /* Reads the chunks before the first IDAT: an absent tRNS answers
     * SPNG_ECHUNKAVAIL, anything else is an error for stb to judge. */
    switch (spng_get_trns(ctx, &trns)) {
    case 0: has_trns = 1; break;
    case SPNG_ECHUNKAVAIL: has_trns = 0; break;
    default: goto end;
    }

    bps = ih.bit_depth == 16 ? 2 : 1;
    switch (ih.color_type) {
    case SPNG_COLOR_TYPE_GRAYSCALE:
        if (has_trns && ih.bit_depth < 16 &&
            trns.gray >= (1u << ih.bit_depth))
            goto end;
        channels = has_trns ? 2 : 1;
        fmt = has_trns ? (bps == 2 ? SPNG_FMT_GA16 : SPNG_FMT_GA8)
                       : (bps == 2 ? SPNG_FMT_PNG : SPNG_FMT_G8);
        break;
    case SPNG_COLOR_TYPE_TRUECOLOR:
        if (has_trns && ih.bit_depth < 16 &&
            (trns.red > 255 || trns.green > 255 || trns.blue > 255))
            goto end;
        channels = has_trns ? 4 : 3;
        fmt = has_trns ? (bps == 2 ? SPNG_FMT_RGBA16 : SPNG_FMT_RGBA8)
                       : SPNG_FMT_PNG;
        break;
    case SPNG_COLOR_TYPE_INDEXED:
        channels = has_trns ? 4 : 3;
        fmt = has_trns ? SPNG_FMT_RGBA8 : SPNG_FMT_RGB8;
        break;
    case SPNG_COLOR_TYPE_GRAYSCALE_ALPHA:
        channels = 2;
        fmt = SPNG_FMT_PNG;
        break;
    case SPNG_COLOR_TYPE_TRUECOLOR_ALPHA:
        channels = 4;
        fmt = SPNG_FMT_PNG;
        break;
    default:
        goto end;
    }

    /* the budget from the header, before libspng allocates anything big */
    if (fits_budget(ih.width, ih.height, channels, bps, limit, name, &bytes)) {
        rc = IMGPNG_FAILED;
        goto end;
    }
    {
        size_t want = 0;
        if (spng_decoded_image_size(ctx, fmt, &want) || want != bytes)
            goto end; /* a layout we did not expect: stb knows */
    }
    px = bb_alloc(bytes ? bytes : 1);
    if (!px)
        goto end; /* stb tries, and says "out of memory" if it fails too */
    /* Then the chunks up to IEND: stb insists on IEND (a file cut after its
     * image data is truncated to stb, and to us). */
    if (spng_decode_image(ctx, px, bytes, fmt, has_trns ? SPNG_DECODE_TRNS : 0) ||
        spng_decode_chunks(ctx))
        goto end;
    decoded(img, px, (int)ih.width, (int)ih.height, channels, bps, "libspng");
    px = NULL;
    rc = IMGPNG_OK;
end:
    bb_free(px);
    spng_ctx_free(ctx);
    return rc;
}

const char *imgpng_version(void)
{
    return spng_version_string();
}
