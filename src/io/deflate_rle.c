/*
 * deflate_rle.c — see deflate_rle.h.  Two passes over the input: the runs
 * (3..258 copies of the byte before: a match at distance 1), found
 * sixteen bytes at a time and kept as a sparse list, and the counts of the
 * literals between them; then one dynamic block, the literals read from
 * the input again and stored three at a time.  The
 * Huffman code lengths come from the counts by Moffat and Katajainen's
 * in-place method, limited to deflate's 15 bits (7 for the code-length
 * code) by moving the overflow down as miniz does, and every code gets
 * two symbols at least, as zlib does, so that no decoder sees an
 * incomplete code.
 */
#include "deflate_rle.h"

#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "drle_core.h" /* the tables and the header, shared with the GPU coder */

static void flush_byte(drle_bits *b)
{
    while (b->n > 0) {
        *b->p++ = (uint8_t)b->buf;
        b->buf >>= 8;
        b->n -= 8;
    }
    b->n = 0;
    b->buf = 0;
}

size_t drle_bound(size_t n)
{
    return n / 8 * 15 + n % 8 * 2 + 1024;
}

/* A run: it starts at input position pos and is len bytes long. */
typedef struct run {
    uint32_t pos;
    uint16_t len;
} run;

/* The first p in [i, n) where a run starts: in[p] repeats in[p - 1], and
 * in[p + 1] and in[p + 2] repeat it; n when none does (i >= 1). */
static size_t next_run(const uint8_t *in, size_t i, size_t n)
{
#if defined(__SSE2__)
    for (; i + 16 <= n; i += 14) {
        /* bit k: in[i + k] == in[i + k - 1]; a run at k needs k, k + 1
         * and k + 2 (so k <= 13 here) */
        unsigned m = (unsigned)_mm_movemask_epi8(
            _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(in + i)),
                           _mm_loadu_si128((const __m128i *)(in + i - 1))));
        unsigned r3 = m & m >> 1 & m >> 2 & 0x3fffu;
        if (r3)
            return i + (size_t)__builtin_ctz(r3);
    }
#else
    for (; i + 8 <= n; i += 6) {
        /* the same eight bytes at a time: 0x80 in each byte of eq where
         * in[i + k] == in[i + k - 1] (exact: no borrow runs from byte to
         * byte), a run at k for k <= 5 */
        const uint64_t m = 0x7f7f7f7f7f7f7f7full;
        uint64_t cur, prev, x, eq, r3;
        memcpy(&cur, in + i, 8);
        memcpy(&prev, in + i - 1, 8);
        x = cur ^ prev;
        eq = ~(((x & m) + m) | x | m);
        r3 = eq & eq >> 8 & eq >> 16 & 0x0000808080808080ull;
        if (r3)
            return i + (size_t)(__builtin_ctzll(r3) >> 3);
    }
#endif
    for (; i + 2 < n; i++)
        if (in[i] == in[i - 1] && in[i + 1] == in[i] && in[i + 2] == in[i])
            return i;
    return n;
}

/* Where the run of in[p] from p ends (the first other byte), lim at most. */
static size_t run_end(const uint8_t *in, size_t p, size_t lim)
{
    const uint8_t v = in[p];
    size_t j = p + 3;
#if defined(__SSE2__)
    const __m128i vv = _mm_set1_epi8((char)v);
    for (; j + 16 <= lim; j += 16) {
        unsigned m = (unsigned)_mm_movemask_epi8(
            _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(in + j)), vv));
        if (m != 0xffffu)
            return j + (size_t)__builtin_ctz(~m);
    }
#endif
    while (j < lim && in[j] == v)
        j++;
    return j;
}

/* Counts in[0..n) into four tables (repeated bytes do not wait on one
 * counter). */
static void count_bytes(uint32_t h4[4][256], const uint8_t *in, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t x;
        memcpy(&x, in + i, 8);
        h4[0][x & 0xff]++;
        h4[1][x >> 8 & 0xff]++;
        h4[2][x >> 16 & 0xff]++;
        h4[3][x >> 24 & 0xff]++;
        h4[0][x >> 32 & 0xff]++;
        h4[1][x >> 40 & 0xff]++;
        h4[2][x >> 48 & 0xff]++;
        h4[3][x >> 56]++;
    }
    for (; i < n; i++)
        h4[i & 3][in[i]]++;
}

size_t drle_compress(const uint8_t *in, size_t n, uint8_t *out, int final)
{
    /* a run takes 3 bytes at least: at most n / 3 of them */
    run *runs = malloc((n / 3 + 1) * sizeof *runs);
    uint32_t h4[4][256];
    uint8_t lcode[DRLE_MAX_MATCH + 1];
    uint32_t freq[DRLE_NLITLEN] = {0}, lit[256];
    drle_tables t;
    size_t nr = 0, i = 0;
    drle_bits b = {out, 0, 0};

    if (!runs || n > UINT32_MAX)
        goto fail;
    memset(h4, 0, sizeof h4);
    for (int l = 3; l <= DRLE_MAX_MATCH; l++)
        lcode[l] = (uint8_t)drle_len_code(l);
    /* pass 1: the runs, and the counts of the literals between them */
    if (n) {
        h4[0][in[0]]++;
        i = 1;
    }
    while (i < n) {
        const size_t p = next_run(in, i, n);
        count_bytes(h4, in + i, p - i);
        if (p == n)
            break;
        {
            const size_t j = run_end(in, p, n - p > DRLE_MAX_MATCH ? p + DRLE_MAX_MATCH : n);
            runs[nr].pos = (uint32_t)p;
            runs[nr++].len = (uint16_t)(j - p);
            freq[257 + lcode[j - p]]++;
            i = j;
        }
    }
    for (int v = 0; v < 256; v++)
        freq[v] = h4[0][v] + h4[1][v] + h4[2][v] + h4[3][v];
    drle_make_tables(freq, (uint32_t)nr, &t);

    /* pass 2: the block */
    drle_put_header(&b, &t, final);
    for (int s = 0; s < 256; s++)
        lit[s] = t.lc[s] | (uint32_t)t.llen[s] << 16;
    i = 0;
    for (size_t r = 0; r <= nr; r++) {
        const size_t end = r < nr ? runs[r].pos : n;
        /* the literals before run r (or the end): three a put (3 x 15 bits) */
        for (; i + 3 <= end; i += 3) {
            const uint32_t a = lit[in[i]], c = lit[in[i + 1]], d = lit[in[i + 2]];
            const int la = (int)(a >> 16), lc = (int)(c >> 16);
            drle_put(&b, (uint64_t)(a & 0xffff) | (uint64_t)(c & 0xffff) << la |
                             (uint64_t)(d & 0xffff) << (la + lc),
                     la + lc + (int)(d >> 16));
        }
        for (; i < end; i++)
            drle_put(&b, lit[in[i]] & 0xffff, (int)(lit[in[i]] >> 16));
        if (r < nr) { /* its length's code and extra bits, distance 1 */
            int bits;
            const uint64_t v = drle_match_bits(&t, runs[r].len, lcode[runs[r].len], &bits);
            drle_put(&b, v, bits);
            i += runs[r].len;
        }
    }
    drle_put(&b, t.lc[256], t.llen[256]);
    if (!final) {
        /* an empty stored block: the next bytes start a new block */
        drle_put(&b, 0, 3);
        flush_byte(&b);
        *b.p++ = 0x00;
        *b.p++ = 0x00;
        *b.p++ = 0xff;
        *b.p++ = 0xff;
    } else {
        flush_byte(&b);
    }
    free(runs);
    return (size_t)(b.p - out);
fail:
    free(runs);
    return 0;
}
