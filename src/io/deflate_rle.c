/*
 * deflate_rle.c — see deflate_rle.h.  Two passes over the input: the runs
 * (3..258 copies of the byte before: a match at distance 1), kept as a
 * sparse list, and every symbol's count, eight bytes at a time where no
 * byte repeats its neighbour; then one dynamic block, the literals
 * between runs read from the input again and sent two a word.  The
 * Huffman code lengths come from the counts by Moffat and Katajainen's
 * in-place method, limited to deflate's 15 bits (7 for the code-length
 * code) by moving the overflow down as miniz does, and every code gets
 * two symbols at least, as zlib does, so that no decoder sees an
 * incomplete code.
 */
#include "deflate_rle.h"

#include <stdlib.h>
#include <string.h>

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

/* (little-endian: the low bytes of buf go first; drle_bound leaves the
 * 8 bytes of slack the whole-word store needs) */
static inline void put(bits *b, uint32_t v, int n)
{
    b->buf |= (uint64_t)v << b->n;
    b->n += n;
    if (b->n >= 32) {
        memcpy(b->p, &b->buf, 8);
        b->p += 4;
        b->buf >>= 32;
        b->n -= 32;
    }
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

/* 0x80 in each byte of x that is zero, 0 in the others (exact: no
 * borrow runs from byte to byte) */
static inline uint64_t zero_bytes(uint64_t x)
{
    const uint64_t m = 0x7f7f7f7f7f7f7f7full;
    return ~(((x & m) + m) | x | m);
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
    /* pass 1: the runs and the counts (four tables, so that repeated
     * bytes do not wait on one counter) */
    if (n) {
        h4[0][in[0]]++;
        i = 1;
    }
    while (i < n) {
        if (i + 8 <= n) {
            /* where, in the next six bytes, do three in a row repeat the
             * byte before them (a run starts)?  The literals before it
             * are counted at once */
            uint64_t cur, prev, eq, r3;
            int k;
            memcpy(&cur, in + i, 8);
            memcpy(&prev, in + i - 1, 8);
            eq = zero_bytes(cur ^ prev);
            r3 = eq & (eq >> 8) & (eq >> 16) & 0x0000808080808080ull;
            k = r3 ? __builtin_ctzll(r3) >> 3 : 6;
            for (int q = 0; q < k; q++)
                h4[q & 3][(uint8_t)(cur >> (8 * q))]++;
            i += (size_t)k;
            if (k == 6)
                continue;
        }
        if (in[i] == in[i - 1] && i + 2 < n && in[i + 1] == in[i] && in[i + 2] == in[i]) {
            const uint8_t v = in[i];
            size_t j = i + 3, lim = n - i > 258 ? i + 258 : n;
            while (j < lim && in[j] == v)
                j++;
            runs[nr].pos = (uint32_t)i;
            runs[nr++].len = (uint16_t)(j - i);
            freq[257 + lcode[j - i]]++;
            dfreq[0]++;
            i = j;
        } else {
            h4[0][in[i]]++;
            i++;
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
        /* the literals before run r (or the end): two a put (15 + 15 bits) */
        for (; i + 2 <= end; i += 2) {
            const uint32_t a = lit[in[i]], c = lit[in[i + 1]];
            put(&b, (a & 0xffff) | (c & 0xffff) << (a >> 16), (int)((a >> 16) + (c >> 16)));
        }
        if (i < end) {
            put(&b, lit[in[i]] & 0xffff, (int)(lit[in[i]] >> 16));
            i++;
        }
        if (r < nr) {
            const int l = runs[r].len, c = lcode[l];
            put(&b, lc[257 + c], llen[257 + c]);
            if (len_extra[c])
                put(&b, (uint32_t)(l - len_base[c]), len_extra[c]);
            put(&b, dc[0], dlen[0]);
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
