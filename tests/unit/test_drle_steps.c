/*
 * test_drle_steps.c — the GPU PNG coder's order of work (kernels/png_gpu.cu),
 * run here step by step on the CPU with kernels/drle_core.h's functions,
 * gives drle_compress's bytes: each byte's stretch of equal bytes (two
 * scans), its token (drle_token), the counts and the tables, the header,
 * the tokens' bit offsets (an exclusive prefix sum) and their bits OR-ed
 * in at those offsets, then the end of block and the trailer.  Inputs:
 * random bytes with runs of every length around 3 and 258 and their
 * multiples, both kinds of block (final or joinable), lengths 1 .. 300,000.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "deflate_rle.h"
#include "drle_core.h"

static uint32_t rng_state = 20261205;
static uint32_t rng(void)
{
    rng_state = rng_state * 1103515245u + 12345u;
    return rng_state >> 8;
}

/* The GPU's steps, one after the other; the bytes written. */
static size_t steps(const uint8_t *in, size_t n, uint8_t *out, size_t cap, int final)
{
    size_t *s = malloc(n * sizeof *s), *e = malloc(n * sizeof *e);
    uint64_t *off = malloc((n + 1) * sizeof *off);
    uint32_t freq[DRLE_NLITLEN] = {0}, matches = 0;
    drle_tables t;
    drle_bits b = {out, 0, 0};
    uint64_t hbits;
    size_t len;
    memset(out, 0, cap);
    /* 1: each byte's stretch [s, e) (a scan from the left, one from the
     *    right; the piece's first byte starts one) */
    for (size_t j = 0; j < n; j++)
        s[j] = j == 0 || in[j] != in[j - 1] ? j : s[j - 1];
    for (size_t j = n; j-- > 0;)
        e[j] = j + 1 == n || in[j + 1] != in[j] ? j + 1 : e[j + 1];
    /* 2: tokens and their counts */
    for (size_t j = 0; j < n; j++) {
        int sym, l, k = drle_token(in, j, s[j], e[j], &sym, &l);
        if (k)
            freq[sym]++;
        matches += k == 2;
    }
    /* 3: the tables and the header (its last byte partly filled) */
    drle_make_tables(freq, matches, &t);
    drle_put_header(&b, &t, final);
    hbits = (uint64_t)(b.p - out) * 8 + (uint64_t)b.n;
    /* 4: every token's bits, their offsets by an exclusive prefix sum */
    off[0] = 0;
    for (size_t j = 0; j < n; j++) {
        int sym, l, bits = 0, k = drle_token(in, j, s[j], e[j], &sym, &l);
        if (k == 1)
            bits = t.llen[sym];
        else if (k == 2)
            drle_match_bits(&t, l, sym - 257, &bits);
        off[j + 1] = off[j] + (uint64_t)bits;
    }
    /* 5: each token's bits at its offset */
    for (size_t j = 0; j < n; j++) {
        int sym, l, bits, k = drle_token(in, j, s[j], e[j], &sym, &l);
        if (k == 1)
            drle_or_bits(out, hbits + off[j], t.lc[sym], t.llen[sym]);
        else if (k == 2) {
            uint64_t v = drle_match_bits(&t, l, sym - 257, &bits);
            drle_or_bits(out, hbits + off[j], v, bits);
        }
    }
    /* 6: the end of block, and the empty stored block of a joinable one */
    len = drle_put_tail(out, hbits + off[n], &t, final);
    free(s);
    free(e);
    free(off);
    return len;
}

int main(void)
{
    const size_t cap = 300000;
    uint8_t *in = malloc(cap), *a = malloc(drle_bound(cap) + 8), *b = malloc(drle_bound(cap) + 8);
    static const size_t runs[] = {1, 2, 3, 4, 5, 257, 258, 259, 260, 261, 262, 516, 517, 518, 519, 777};
    int bad = 0, cases = 0;
    char first[160] = "";

    for (int c = 0; c < 3000; c++) {
        size_t n = c < 40 ? (size_t)c + 1 : c < 2900 ? 1 + rng() % 5000 : 1 + rng() % cap;
        int style = c % 4;
        for (size_t i = 0; i < n;) {
            size_t l = style == 0 ? 1 + rng() % 6
                     : style == 1 ? runs[rng() % (sizeof runs / sizeof runs[0])]
                                  : 1 + rng() % (style == 2 ? 40 : 1200);
            uint8_t v = (uint8_t)(style == 3 ? rng() % 3 : rng());
            int run = rng() % 2;
            for (size_t k = 0; k < l && i < n; k++, i++)
                in[i] = run ? v : (uint8_t)(style == 3 ? rng() % 3 : rng());
        }
        for (int final = 0; final < 2; final++) {
            size_t la = drle_compress(in, n, a, final), lb = steps(in, n, b, drle_bound(n) + 8, final);
            cases++;
            if (la != lb || memcmp(a, b, la)) {
                if (!bad++)
                    snprintf(first, sizeof first, "input %d (%zu bytes, style %d, %s): %zu vs %zu bytes",
                             c, n, style, final ? "final" : "joinable", la, lb);
            }
        }
    }
    CHECK(!bad, "the GPU coder's steps give drle_compress's bytes", "%d of %d differ; first: %s", bad,
          cases, first);
    free(in);
    free(a);
    free(b);
    CHECK_EXIT();
}
