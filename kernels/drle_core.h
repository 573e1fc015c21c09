/*
 * drle_core.h — the PNG writer's run-length deflate (src/io/deflate_rle.h)
 * as pieces that C and CUDA share: the Huffman tables and the block header
 * from the symbols' counts, and which token each input byte starts.  One
 * copy: src/io/deflate_rle.c codes a piece with them on the cores, the
 * GPU coder (kernels/png_gpu.cu) with them on the device, and
 * tests/unit/test_drle_steps.c proves the GPU's data-parallel order of
 * work against drle_compress byte for byte on the CPU.
 *
 * Tokens.  drle_compress parses a piece greedily from its second byte: a
 * run is 3..258 copies of the byte before it (a match at distance 1).  So
 * the parse splits at every byte unlike the one before (and at the
 * piece's first byte): within a stretch [s, e) of equal bytes, s is a
 * literal; if e - s - 1 >= 3, the bytes from s + 1 are matches of 258
 * bytes and a last one of the rest, which is two literals or one if the
 * rest is under 3; else the stretch is literals.  Each byte's token then
 * depends only on its stretch (drle_token), whatever came before.
 */
#ifndef GPUEDGE_DRLE_CORE_H
#define GPUEDGE_DRLE_CORE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define DRLE_FN static __host__ __device__ __forceinline__
#define DRLE_FN_BIG static inline __host__ __device__
#else
#define DRLE_FN static inline
#define DRLE_FN_BIG static inline
#endif

#define DRLE_NLITLEN 286 /* 0..255 literals, 256 end of block, 257..285 lengths */
#define DRLE_NDIST 2     /* distance codes written: 0 (distance 1) and 1, unused */
#define DRLE_NPRE 19     /* the code-length code's symbols */
#define DRLE_MAX_MATCH 258

/* RFC 1951 3.2.5: length code c (0..28, symbol 257 + c): its extra bits,
 * its base length, and the code of a length l (3..258). */
DRLE_FN int drle_len_extra(int c)
{
    return c < 8 || c == 28 ? 0 : (c - 4) >> 2;
}

DRLE_FN int drle_len_base(int c)
{
    return c < 8 ? 3 + c : c == 28 ? 258 : ((4 | (c & 3)) << ((c - 4) >> 2)) + 3;
}

DRLE_FN int drle_len_code(int l)
{
    int v = l - 3, e = 0;
    if (l == DRLE_MAX_MATCH)
        return 28;
    if (v < 8)
        return v;
    while (v >> (e + 3)) /* e: 1 for 8..15, ..., 5 for 128..254 */
        e++;
    return 4 + 4 * e + ((v >> e) & 3);
}

/* 3.2.7: the order the code-length code's lengths are sent in. */
DRLE_FN int drle_pre_order(int k)
{
    const uint8_t order[DRLE_NPRE] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5,
                                      11, 4, 12, 3, 13, 2, 14, 1, 15};
    return order[k];
}

/* Bits LSB first: whole bytes stored at each put (8-byte stores: the
 * output has 8 bytes of slack, drle_bound), fewer than 8 bits kept. */
typedef struct drle_bits {
    uint8_t *p;
    uint64_t buf;
    int n;
} drle_bits;

/* n <= 56 bits of v. */
DRLE_FN void drle_put(drle_bits *b, uint64_t v, int n)
{
    b->buf |= v << b->n;
    b->n += n;
    memcpy(b->p, &b->buf, 8);
    b->p += b->n >> 3;
    b->buf >>= b->n & ~7;
    b->n &= 7;
}

/* Moffat-Katajainen: a[0..n) weights in ascending order become the code
 * lengths of those symbols (longest first). */
DRLE_FN_BIG void drle_mk_lengths(uint32_t *a, int n)
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

/* Code lengths (at most maxlen) for symbols 0..n) (n <= DRLE_NLITLEN) from
 * their counts; at least two symbols get a code (the first ones with none
 * take it). */
DRLE_FN_BIG void drle_code_lengths(const uint32_t *freq, int n, int maxlen, uint8_t *len)
{
    uint32_t w[DRLE_NLITLEN] = {0}, cnt[16];
    uint16_t sym[DRLE_NLITLEN];
    int m = 0, extra = 0;
    for (int s = 0; s < n; s++) {
        len[s] = 0;
        if (freq[s])
            sym[m++] = (uint16_t)s;
    }
    for (int s = 0; m < 2 && s < n; s++)
        if (!freq[s]) {
            /* (weight 0 sorts first: it gets a longest code) */
            for (int i = m; i > 0; i--)
                sym[i] = sym[i - 1];
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
    drle_mk_lengths(w, m);
    /* limit to maxlen: the overflow to maxlen, then codes split until the
     * Kraft sum is exact */
    for (int l = 0; l < 16; l++)
        cnt[l] = 0;
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
DRLE_FN_BIG void drle_make_codes(const uint8_t *len, int n, uint16_t *code)
{
    uint16_t count[16], next[16];
    uint32_t c = 0;
    for (int l = 0; l < 16; l++)
        count[l] = 0;
    for (int s = 0; s < n; s++)
        count[len[s]]++;
    count[0] = 0;
    next[0] = 0;
    for (int l = 1; l < 16; l++) {
        c = (c + count[l - 1]) << 1;
        next[l] = (uint16_t)c;
    }
    for (int s = 0; s < n; s++) {
        uint32_t v, r = 0;
        code[s] = 0;
        if (!len[s])
            continue;
        v = next[len[s]]++;
        for (int b = 0; b < len[s]; b++)
            r |= ((v >> b) & 1u) << (len[s] - 1 - b);
        code[s] = (uint16_t)r;
    }
}

/* The code-length sequence of lens[0..n) as code-length symbols (0..18)
 * with their extra bits' values; returns how many. */
DRLE_FN_BIG int drle_pre_symbols(const uint8_t *lens, int n, uint8_t *sy, uint8_t *ex)
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

/* A block's codes, from its symbols' counts (freq[256], the end of block,
 * is set here) and how many matches it has (all at distance 1). */
typedef struct drle_tables {
    uint8_t llen[DRLE_NLITLEN], dlen[DRLE_NDIST], plen[DRLE_NPRE];
    uint16_t lc[DRLE_NLITLEN], dc[DRLE_NDIST], pc[DRLE_NPRE];
    uint8_t psy[DRLE_NLITLEN + DRLE_NDIST], pex[DRLE_NLITLEN + DRLE_NDIST];
    int hlit, hclen, np;
} drle_tables;

DRLE_FN_BIG void drle_make_tables(uint32_t *freq, uint32_t matches, drle_tables *t)
{
    uint32_t dfreq[DRLE_NDIST] = {matches, 0}, pfreq[DRLE_NPRE];
    uint8_t all[DRLE_NLITLEN + DRLE_NDIST];
    freq[256] = 1;
    drle_code_lengths(freq, DRLE_NLITLEN, 15, t->llen);
    drle_code_lengths(dfreq, DRLE_NDIST, 15, t->dlen);
    drle_make_codes(t->llen, DRLE_NLITLEN, t->lc);
    drle_make_codes(t->dlen, DRLE_NDIST, t->dc);
    for (t->hlit = DRLE_NLITLEN; t->hlit > 257 && !t->llen[t->hlit - 1]; t->hlit--)
        ;
    for (int s = 0; s < t->hlit; s++)
        all[s] = t->llen[s];
    for (int s = 0; s < DRLE_NDIST; s++)
        all[t->hlit + s] = t->dlen[s];
    t->np = drle_pre_symbols(all, t->hlit + DRLE_NDIST, t->psy, t->pex);
    for (int k = 0; k < DRLE_NPRE; k++)
        pfreq[k] = 0;
    for (int k = 0; k < t->np; k++)
        pfreq[t->psy[k]]++;
    drle_code_lengths(pfreq, DRLE_NPRE, 7, t->plen);
    drle_make_codes(t->plen, DRLE_NPRE, t->pc);
    for (t->hclen = DRLE_NPRE; t->hclen > 4 && !t->plen[drle_pre_order(t->hclen - 1)]; t->hclen--)
        ;
}

/* The block's header: BFINAL, dynamic codes, and the code lengths. */
DRLE_FN_BIG void drle_put_header(drle_bits *b, const drle_tables *t, int final)
{
    drle_put(b, final ? 1 : 0, 1);
    drle_put(b, 2, 2); /* dynamic Huffman codes */
    drle_put(b, (uint32_t)(t->hlit - 257), 5);
    drle_put(b, DRLE_NDIST - 1, 5);
    drle_put(b, (uint32_t)(t->hclen - 4), 4);
    for (int k = 0; k < t->hclen; k++)
        drle_put(b, t->plen[drle_pre_order(k)], 3);
    for (int k = 0; k < t->np; k++) {
        int s = t->psy[k];
        drle_put(b, t->pc[s], t->plen[s]);
        if (s >= 16)
            drle_put(b, t->pex[k], s == 16 ? 2 : s == 17 ? 3 : 7);
    }
}

/* A match of l bytes (distance 1; c = drle_len_code(l)): its code, extra
 * bits and distance code as one value of *bits bits (at most 15 + 5 + 15). */
DRLE_FN uint64_t drle_match_bits(const drle_tables *t, int l, int c, int *bits)
{
    const int ll = t->llen[257 + c], le = drle_len_extra(c);
    *bits = ll + le + t->dlen[0];
    return t->lc[257 + c] | (uint64_t)(l - drle_len_base(c)) << ll |
           (uint64_t)t->dc[0] << (ll + le);
}

/* ORs the n (<= 50) low bits of v into out at bit `bit`, LSB first, a
 * byte at a time (one writer: the CPU, or one GPU thread). */
DRLE_FN void drle_or_bits(uint8_t *out, uint64_t bit, uint64_t v, int n)
{
    v <<= bit & 7;
    n += (int)(bit & 7);
    out += bit >> 3;
    for (; n > 0; n -= 8, v >>= 8)
        *out++ |= (uint8_t)v;
}

/* The end of block at bit `bit` of out (after the header and the tokens,
 * the bits past them zero), then for a joinable block the empty stored
 * block (3 bits, to the byte, 00 00 ff ff); returns the block's bytes. */
DRLE_FN size_t drle_put_tail(uint8_t *out, uint64_t bit, const drle_tables *t, int final)
{
    size_t len;
    drle_or_bits(out, bit, t->lc[256], t->llen[256]);
    bit += (uint64_t)t->llen[256] + (final ? 0 : 3);
    len = (size_t)((bit + 7) >> 3);
    if (!final) {
        out[len] = 0x00;
        out[len + 1] = 0x00;
        out[len + 2] = 0xff;
        out[len + 3] = 0xff;
        len += 4;
    }
    return len;
}

/* The token at in[j] of a piece, where [s, e) is the stretch of equal
 * bytes holding j (see the top): 0 none (j is inside a match), 1 a
 * literal (*sym = in[j]), 2 a match of *len bytes (*sym = 257 + its code). */
DRLE_FN int drle_token(const uint8_t *in, size_t j, size_t s, size_t e, int *sym, int *len)
{
    size_t cs, cl;
    if (j > s) { /* in the 258-byte match holding j, or its short rest */
        cs = s + 1 + (j - s - 1) / DRLE_MAX_MATCH * DRLE_MAX_MATCH;
        cl = e - cs < DRLE_MAX_MATCH ? e - cs : DRLE_MAX_MATCH;
        if (cl >= 3) {
            if (j != cs)
                return 0;
            *len = (int)cl;
            *sym = 257 + drle_len_code((int)cl);
            return 2;
        }
    }
    *sym = in[j];
    return 1;
}

#endif
