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

#define NLITLEN 286 /* 0..255 literals, 256 end of block, 257..285 lengths */
#define NDIST 2     /* distance codes written: 0 (distance 1) and 1, unused */
#define NPRE 19     /* the code-length code's symbols */

/* RFC 1951 3.2.5: the length codes' base lengths and extra bits */
static const uint16_t len_base[29] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                                      31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
static const uint8_t len_extra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                      2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
/* the order the code-length code's lengths are sent in (3.2.7) */
static const uint8_t pre_order[NPRE] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5,
                                        11, 4, 12, 3, 13, 2, 14, 1, 15};

typedef struct bits {
    uint8_t *p;
    uint64_t buf;
    int n;
} bits;

/* n <= 56 bits of v: the whole bytes go out at once, fewer than 8 bits
 * stay in buf (little-endian: its low bytes go first; drle_bound leaves
 * the 8 bytes of slack the whole-word store needs) */
static inline void put(bits *b, uint64_t v, int n)
{
    b->buf |= v << b->n;
    b->n += n;
    memcpy(b->p, &b->buf, 8);
    b->p += b->n >> 3;
    b->buf >>= b->n & ~7;
    b->n &= 7;
}

static void flush_byte(bits *b)
{
    while (b->n > 0) {
        *b->p++ = (uint8_t)b->buf;
        b->buf >>= 8;
        b->n -= 8;
    }
    b->n = 0;
    b->buf = 0;
}

/* Moffat-Katajainen: a[0..n) weights in ascending order become the code
 * lengths of those symbols (longest first). */
static void mk_lengths(uint32_t *a, int n)
{
    int root, leaf, next, avbl, used, dpth;
    if (n == 1) {
        a[0] = 1;
        return;
    }
    a[0] += a[1];
    root = 0;
    leaf = 2;
    for (next = 1; next < n - 1; next++) {
        if (leaf >= n || a[root] < a[leaf]) {
            a[next] = a[root];
            a[root++] = (uint32_t)next;
        } else {
            a[next] = a[leaf++];
        }
        if (leaf >= n || (root < next && a[root] < a[leaf])) {
            a[next] += a[root];
            a[root++] = (uint32_t)next;
        } else {
            a[next] += a[leaf++];
        }
    }
    a[n - 2] = 0;
    for (next = n - 3; next >= 0; next--)
        a[next] = a[a[next]] + 1;
    avbl = 1;
    used = dpth = 0;
    root = n - 2;
    next = n - 1;
    while (avbl > 0) {
        while (root >= 0 && (int)a[root] == dpth) {
            used++;
            root--;
        }
        while (avbl > used) {
            a[next--] = (uint32_t)dpth;
            avbl--;
        }
        avbl = 2 * used;
        dpth++;
        used = 0;
    }
}

/* Code lengths (at most maxlen) for symbols 0..n) from their counts; at
 * least two symbols get a code (the first ones with none take it). */
static void code_lengths(const uint32_t *freq, int n, int maxlen, uint8_t *len)
{
    uint32_t w[NLITLEN] = {0}, cnt[NLITLEN + 1];
    uint16_t sym[NLITLEN];
    int m = 0, extra = 0;
    memset(len, 0, (size_t)n);
    for (int s = 0; s < n; s++)
        if (freq[s])
            sym[m++] = (uint16_t)s;
    for (int s = 0; m < 2 && s < n; s++)
        if (!freq[s]) {
            /* (weight 0 sorts first: it gets a longest code) */
            memmove(sym + 1, sym, (size_t)m * sizeof *sym);
            sym[0] = (uint16_t)s;
            m++;
            extra++;
        }
    /* by weight, ascending; equal weights by symbol (insertion sort: at
     * most 286 symbols, most already apart) */
    for (int i = 1 + extra; i < m; i++) {
        uint16_t s = sym[i];
        int j = i;
        while (j > extra && freq[sym[j - 1]] > freq[s]) {
            sym[j] = sym[j - 1];
            j--;
        }
        sym[j] = s;
    }
    for (int i = 0; i < m; i++)
        w[i] = i < extra ? 0 : freq[sym[i]];
    mk_lengths(w, m);
    /* limit to maxlen: the overflow to maxlen, then codes split until the
     * Kraft sum is exact */
    memset(cnt, 0, sizeof cnt);
    for (int i = 0; i < m; i++)
        cnt[w[i] < (uint32_t)maxlen ? w[i] : (uint32_t)maxlen]++;
    {
        uint32_t total = 0;
        for (int l = maxlen; l > 0; l--)
            total += cnt[l] << (maxlen - l);
        while (total != (1u << maxlen)) {
            cnt[maxlen]--;
            for (int l = maxlen - 1; l > 0; l--)
                if (cnt[l]) {
                    cnt[l]--;
                    cnt[l + 1] += 2;
                    break;
                }
            total--;
        }
    }
    /* the longest codes to the lightest symbols */
    for (int l = maxlen, i = 0; l > 0; l--)
        for (uint32_t k = 0; k < cnt[l]; k++)
            len[sym[i++]] = (uint8_t)l;
}

/* Canonical codes (3.2.2), bit-reversed for the LSB-first stream. */
static void make_codes(const uint8_t *len, int n, uint16_t *code)
{
    uint16_t count[16] = {0}, next[16];
    uint32_t c = 0;
    for (int s = 0; s < n; s++)
        count[len[s]]++;
    count[0] = 0;
    for (int l = 1; l < 16; l++) {
        c = (c + count[l - 1]) << 1;
        next[l] = (uint16_t)c;
    }
    for (int s = 0; s < n; s++) {
        uint32_t v, r = 0;
        if (!len[s])
            continue;
        v = next[len[s]]++;
        for (int b = 0; b < len[s]; b++)
            r |= ((v >> b) & 1u) << (len[s] - 1 - b);
        code[s] = (uint16_t)r;
    }
}

size_t drle_bound(size_t n)
{
    return n / 8 * 15 + n % 8 * 2 + 1024;
}

/* The code-length sequence of lens[0..n) as code-length symbols (0..18)
 * with their extra bits' values; returns how many. */
static int pre_symbols(const uint8_t *lens, int n, uint8_t *sy, uint8_t *ex)
{
    int k = 0;
    for (int i = 0; i < n;) {
        int v = lens[i], run = 1;
        while (i + run < n && lens[i + run] == v)
            run++;
        i += run;
        if (v == 0) {
            while (run >= 11) {
                int r = run < 138 ? run : 138;
                sy[k] = 18, ex[k++] = (uint8_t)(r - 11);
                run -= r;
            }
            if (run >= 3) {
                sy[k] = 17, ex[k++] = (uint8_t)(run - 3);
                run = 0;
            }
        } else {
            sy[k] = (uint8_t)v, ex[k++] = 0;
            run--;
            while (run >= 3) {
                int r = run < 6 ? run : 6;
                sy[k] = 16, ex[k++] = (uint8_t)(r - 3);
                run -= r;
            }
        }
        while (run-- > 0)
            sy[k] = (uint8_t)v, ex[k++] = 0;
    }
    return k;
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
    uint8_t lcode[259];
    uint32_t freq[NLITLEN] = {0}, dfreq[NDIST] = {0}, pfreq[NPRE] = {0};
    uint8_t llen[NLITLEN], dlen[NDIST], plen[NPRE], all[NLITLEN + NDIST];
    uint8_t psy[NLITLEN + NDIST], pex[NLITLEN + NDIST];
    uint16_t lc[NLITLEN] = {0}, dc[NDIST] = {0}, pc[NPRE] = {0};
    uint32_t lit[256];
    size_t nr = 0, i = 0;
    int hlit, hclen, np;
    bits b = {out, 0, 0};

    if (!runs || n > UINT32_MAX)
        goto fail;
    memset(h4, 0, sizeof h4);
    for (int c = 0, l = 3; l <= 258; l++) {
        while (c < 28 && len_base[c + 1] <= l && l != 258)
            c++;
        lcode[l] = (uint8_t)(l == 258 ? 28 : c);
    }
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
            const size_t j = run_end(in, p, n - p > 258 ? p + 258 : n);
            runs[nr].pos = (uint32_t)p;
            runs[nr++].len = (uint16_t)(j - p);
            freq[257 + lcode[j - p]]++;
            dfreq[0]++;
            i = j;
        }
    }
    for (int v = 0; v < 256; v++)
        freq[v] = h4[0][v] + h4[1][v] + h4[2][v] + h4[3][v];
    freq[256] = 1;
    code_lengths(freq, NLITLEN, 15, llen);
    code_lengths(dfreq, NDIST, 15, dlen);
    make_codes(llen, NLITLEN, lc);
    make_codes(dlen, NDIST, dc);
    for (hlit = NLITLEN; hlit > 257 && !llen[hlit - 1]; hlit--)
        ;
    memcpy(all, llen, (size_t)hlit);
    memcpy(all + hlit, dlen, NDIST);
    np = pre_symbols(all, hlit + NDIST, psy, pex);
    for (int k = 0; k < np; k++)
        pfreq[psy[k]]++;
    code_lengths(pfreq, NPRE, 7, plen);
    make_codes(plen, NPRE, pc);
    for (hclen = NPRE; hclen > 4 && !plen[pre_order[hclen - 1]]; hclen--)
        ;

    /* pass 2: the block */
    put(&b, final ? 1 : 0, 1);
    put(&b, 2, 2); /* dynamic Huffman codes */
    put(&b, (uint32_t)(hlit - 257), 5);
    put(&b, NDIST - 1, 5);
    put(&b, (uint32_t)(hclen - 4), 4);
    for (int k = 0; k < hclen; k++)
        put(&b, plen[pre_order[k]], 3);
    for (int k = 0; k < np; k++) {
        put(&b, pc[psy[k]], plen[psy[k]]);
        if (psy[k] >= 16)
            put(&b, pex[k], psy[k] == 16 ? 2 : psy[k] == 17 ? 3 : 7);
    }
    for (int s = 0; s < 256; s++)
        lit[s] = lc[s] | (uint32_t)llen[s] << 16;
    i = 0;
    for (size_t r = 0; r <= nr; r++) {
        const size_t end = r < nr ? runs[r].pos : n;
        /* the literals before run r (or the end): three a put (3 x 15 bits) */
        for (; i + 3 <= end; i += 3) {
            const uint32_t a = lit[in[i]], c = lit[in[i + 1]], d = lit[in[i + 2]];
            const int la = (int)(a >> 16), lc = (int)(c >> 16);
            put(&b, (uint64_t)(a & 0xffff) | (uint64_t)(c & 0xffff) << la |
                        (uint64_t)(d & 0xffff) << (la + lc),
                la + lc + (int)(d >> 16));
        }
        for (; i < end; i++)
            put(&b, lit[in[i]] & 0xffff, (int)(lit[in[i]] >> 16));
        if (r < nr) { /* its length's code and extra bits, distance 1 */
            const int l = runs[r].len, c = lcode[l], ll = llen[257 + c], le = len_extra[c];
            put(&b, lc[257 + c] | (uint64_t)(l - len_base[c]) << ll | (uint64_t)dc[0] << (ll + le),
                ll + le + dlen[0]);
            i += (size_t)l;
        }
    }
    put(&b, lc[256], llen[256]);
    if (!final) {
        /* an empty stored block: the next bytes start a new block */
        put(&b, 0, 3);
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
