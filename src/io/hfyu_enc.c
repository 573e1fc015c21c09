/*
 * hfyu_enc.c — FFVHuff gray8 frames, coded here; see hfyu_enc.h.
 */
#include "hfyu_enc.h"

#include <string.h>

/* The extradata header of FFmpeg's huffyuvenc.c (version 3): byte 0 the
 * predictor (| decorrelate << 6), byte 1 (bit depth - 1) << 4 | chroma
 * shifts, byte 2 0x20 (0x10 interlaced) | 0x40 context | 1 yuv chroma / 2
 * rgb planes | 4 alpha, byte 3 the version flag (1).  Then the tables. */
#define HFYU_MEDIAN 2

/* Codes for lengths as huffyuv assigns them (ff_huffyuv_generate_bits_table):
 * longest first, in symbol order within a length, each length's codes
 * halved into the next shorter one.  -1 when the lengths are no prefix
 * code. */
static int make_codes(hfyu_tab *t)
{
    uint32_t bits = 0;
    t->max_len = 0;
    for (int len = 32; len > 0; len--) {
        for (int i = 0; i < 256; i++)
            if (t->len[i] == len) {
                t->code[i] = bits++;
                if (len > t->max_len)
                    t->max_len = len;
            }
        if (bits & 1)
            return -1;
        bits >>= 1;
    }
    /* two codes must fit one 32-bit append (put_row); FFVHuff's fixed
     * gray8 tables have at most 15 bits */
    if (bits != 1 || t->max_len > 16)
        return -1; /* a complete code ends at exactly one root */
    for (int i = 0; i < 256; i++)
        t->cl[i] = t->code[i] << 5 | t->len[i];
    return 0;
}

int hfyu_parse(const uint8_t *ex, int size, hfyu_tab *t)
{
    int i = 0, pos = 4;
    if (!ex || size < 5 || !t)
        return -1;
    if (ex[0] != HFYU_MEDIAN || ex[1] != (7 << 4) || ex[2] != 0x20 || ex[3] != 1)
        return -1;
    memset(t, 0, sizeof *t);
    /* one table: runs of lengths, val | repeat << 5 (repeat 1..7) or
     * val, repeat */
    while (i < 256) {
        int val, rep;
        if (pos >= size)
            return -1;
        val = ex[pos] & 31;
        rep = ex[pos++] >> 5;
        if (rep == 0) {
            if (pos >= size)
                return -1;
            rep = ex[pos++];
        }
        if (val == 0 || rep == 0 || i + rep > 256)
            return -1;
        for (; rep > 0; rep--)
            t->len[i++] = (uint8_t)val;
    }
    return make_codes(t);
}

size_t hfyu_max_bytes(const hfyu_tab *t, int w, int h)
{
    size_t bits = (size_t)w * (size_t)h * (size_t)t->max_len;
    return (bits + 31) / 32 * 4 + 4; /* + the word put_row may store ahead */
}

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

static inline void store_le32(uint8_t *o, uint32_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(o, &v, 4);
#else
    o[0] = (uint8_t)v;
    o[1] = (uint8_t)(v >> 8);
    o[2] = (uint8_t)(v >> 16);
    o[3] = (uint8_t)(v >> 24);
#endif
}

/* Residuals of one piece of a row (x0 > 0: the piece's left neighbours
 * are cur[-1], top[-1]); median prediction, r = cur - median(l, t, l + t -
 * lt) mod 256, which is the same in 8-bit lanes: mid3(l, t, g) = max(min(l,
 * t), min(max(l, t), g)). */
static void median_row(const uint8_t *cur, const uint8_t *top, int n, uint8_t *r)
{
    int x = 0;
#if defined(__SSE2__)
    for (; x + 16 <= n; x += 16) {
        __m128i l = _mm_loadu_si128((const __m128i *)(cur + x - 1));
        __m128i t = _mm_loadu_si128((const __m128i *)(top + x));
        __m128i lt = _mm_loadu_si128((const __m128i *)(top + x - 1));
        __m128i c = _mm_loadu_si128((const __m128i *)(cur + x));
        __m128i g = _mm_sub_epi8(_mm_add_epi8(l, t), lt);
        __m128i mn = _mm_min_epu8(l, t), mx = _mm_max_epu8(l, t);
        __m128i med = _mm_max_epu8(mn, _mm_min_epu8(mx, g));
        _mm_storeu_si128((__m128i *)(r + x), _mm_sub_epi8(c, med));
    }
#endif
    for (; x < n; x++) {
        int l = cur[x - 1], t = top[x], g = (l + t - top[x - 1]) & 0xFF;
        int mn = l < t ? l : t, mx = l < t ? t : l;
        int med = g < mn ? mn : g > mx ? mx : g;
        r[x] = (uint8_t)(cur[x] - med);
    }
}

/* The bit writer: acc holds the last n bits written (n < 32 between
 * appends, so up to 32 more fit); each full 32-bit word leaves
 * little-endian (FFmpeg writes the stream most significant bit first,
 * then swaps the bytes of every 32-bit word). */
typedef struct bitw {
    uint64_t acc;
    int n;
    uint8_t *o;
} bitw;

/* Writes the codes of r[0..w-1], two at a time (hfyu_parse keeps codes
 * to 16 bits, so a pair fits one append). */
static void put_row(const hfyu_tab *t, const uint8_t *r, int w, bitw *b)
{
    uint64_t acc = b->acc;
    int n = b->n, x = 0;
    uint8_t *o = b->o;
    for (; x + 2 <= w; x += 2) {
        uint32_t e0 = t->cl[r[x]], e1 = t->cl[r[x + 1]];
        int l0 = (int)(e0 & 31), l1 = (int)(e1 & 31);
        uint64_t c = (uint64_t)(e0 >> 5) << l1 | (e1 >> 5);
        int full;
        acc = acc << (l0 + l1) | c;
        n += l0 + l1;
        /* without a branch (where the words fall depends on the data):
         * the word is stored whether or not it is full, and kept only
         * when it is; a partial one is written over later */
        full = n >= 32;
        n -= full << 5;
        store_le32(o, (uint32_t)(acc >> n));
        o += full << 2;
    }
    if (x < w) { /* an odd count: the last code */
        int l0 = t->len[r[x]];
        acc = acc << l0 | t->code[r[x]];
        n += l0;
        if (n >= 32) {
            n -= 32;
            store_le32(o, (uint32_t)(acc >> n));
            o += 4;
        }
    }
    b->acc = acc;
    b->n = n;
    b->o = o;
}

size_t hfyu_code(const hfyu_tab *t, const uint8_t *src, ptrdiff_t stride, int w, int h,
                 uint8_t *out)
{
    enum { PIECE = 4096 };
    uint8_t r[PIECE];
    bitw b = {0, 0, out};
    int left = 0, lefttop = 0;

    /* rows wider than the buffer are coded in pieces of it */
    for (int y = 0; y < h; y++) {
        const uint8_t *cur = src + (ptrdiff_t)y * stride;
        const uint8_t *top = cur - stride;
        for (int x0 = 0; x0 < w; x0 += PIECE) {
            int n = w - x0 < PIECE ? w - x0 : PIECE;
            if (y == 0) {
                /* row 0: from the left, starting at 0 */
                r[0] = (uint8_t)(cur[x0] - (x0 ? cur[x0 - 1] : 0));
                for (int x = 1; x < n; x++)
                    r[x] = (uint8_t)(cur[x0 + x] - cur[x0 + x - 1]);
            } else {
                /* at x 0 the left and top-left run on from the row
                 * above's end (row 1: top-left is row 0's first pixel) */
                int l = x0 ? cur[x0 - 1] : left, lt = x0 ? top[x0 - 1] : lefttop;
                int tp = top[x0], g = (l + tp - lt) & 0xFF;
                int mn = l < tp ? l : tp, mx = l < tp ? tp : l;
                r[0] = (uint8_t)(cur[x0] - (g < mn ? mn : g > mx ? mx : g));
                median_row(cur + x0 + 1, top + x0 + 1, n - 1, r + 1);
            }
            put_row(t, r, n, &b);
        }
        lefttop = y == 0 ? cur[0] : top[w - 1];
        left = cur[w - 1];
    }
    /* the last bits, padded with zeros to a whole 32-bit word */
    if (b.n > 0) {
        store_le32(b.o, (uint32_t)(b.acc << (32 - b.n)));
        b.o += 4;
    }
    return (size_t)(b.o - out);
}
