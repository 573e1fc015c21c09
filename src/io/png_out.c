/*
 * png_out.c — PNG out for 8-bit grey planes, deflated by our run-length
 * coder (deflate_rle.h: level 1, the default) or libdeflate (the other
 * levels), one image on several threads.
 *
 * The file: signature, IHDR (grey, 8 bits, no interlace), one IDAT chunk
 * a piece, IEND.  The zlib stream inside the IDATs is ours: a 2-byte
 * header, the pieces' deflate data one after the other, the adler32 of all
 * the filtered bytes.
 *
 * Pieces.  The filtered scanlines are cut into pieces of whole rows,
 * about piece_bytes each; the cut depends on the width alone, so the
 * bytes are the same whatever the thread count.  Each piece is filtered,
 * summed (adler32) and deflated on its own by whichever thread takes it.
 * deflate_rle ends a piece ready to join (an empty stored block after it,
 * or the final block for the last piece).  A deflate stream made by
 * libdeflate always ends in a final block
 * (BFINAL = 1) and libdeflate has no flush, so to join the streams we walk
 * each piece's blocks (join_piece: a decoder that only skips symbols),
 * clear the final block's BFINAL bit and end the piece after that block
 * with an empty stored block, the marker zlib's Z_SYNC_FLUSH writes, so
 * the next piece starts on a byte boundary with a fresh block.  The last
 * piece keeps its final block.  A piece never refers back into the one
 * before it (each was deflated alone), which costs a little compression
 * at every cut (docs/bench-log.md, "PNG writer").  The adler32s of the pieces
 * are combined as zlib's adler32_combine does.
 *
 * Threads.  One encode may use up to o->threads threads (0: one per CPU),
 * the caller's included, never more than it has pieces; every thread that
 * encodes a PNG anywhere in the process counts against that budget, so a
 * batch whose encode pool already keeps the cores busy gets no helpers
 * (each image then runs on its caller's thread alone), while one large
 * image, or the last images of a batch, spread over the idle cores.
 */
#include "png_out.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libdeflate.h>

#include "deflate_rle.h"
#include "util.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "png_out.c's deflate walker loads the bit stream little-endian"
#endif

/* The measured choice (docs/bench-log.md, "PNG writer"). */
#define PNG_FILTER_CHOSEN PNG_FILTER_PAETH

/* Largest IDAT we write (PNG allows 2^31 - 1 bytes a chunk). */
#define PNG_IDAT_MAX ((size_t)1 << 30)

static int def_level = PNG_LEVEL_DEFAULT;
static int def_threads = 0;
/* Threads encoding PNG pieces right now, in the whole process. */
static atomic_int png_busy;

void png_set_defaults(int level, int threads)
{
    def_level = level < PNG_LEVEL_MIN || level > PNG_LEVEL_MAX ? PNG_LEVEL_DEFAULT : level;
    def_threads = threads < 0 ? 0 : threads;
}

// ---------------------------------------------------------------------------
// Filters (PNG spec §9; bpp = 1)
//
// GCC's generic vectors (SSE2 on x86-64, NEON on arm64): 16 bytes a step for
// Sub, Up and Avg; Paeth 16 a step in SSE2's unsigned byte operations, else 8
// in 16-bit lanes; -O2 does not vectorise the plain loops, which then cost
// as much as half of libdeflate's level 1.
// Each filter reads only the raw rows, so the result is the plain loop's.

typedef uint8_t v16b __attribute__((vector_size(16)));

static void filter_none(uint8_t *o, const uint8_t *c, const uint8_t *p, int w)
{
    (void)p;
    memcpy(o, c, (size_t)w);
}

static void filter_sub(uint8_t *o, const uint8_t *c, const uint8_t *p, int w)
{
    int i = 1;
    (void)p;
    o[0] = c[0];
    for (; i + 16 <= w; i += 16) {
        v16b x, a;
        memcpy(&x, c + i, 16);
        memcpy(&a, c + i - 1, 16);
        x -= a;
        memcpy(o + i, &x, 16);
    }
    for (; i < w; i++)
        o[i] = (uint8_t)(c[i] - c[i - 1]);
}

static void filter_up(uint8_t *o, const uint8_t *c, const uint8_t *p, int w)
{
    int i = 0;
    for (; i + 16 <= w; i += 16) {
        v16b x, b;
        memcpy(&x, c + i, 16);
        memcpy(&b, p + i, 16);
        x -= b;
        memcpy(o + i, &x, 16);
    }
    for (; i < w; i++)
        o[i] = (uint8_t)(c[i] - p[i]);
}

static void filter_avg(uint8_t *o, const uint8_t *c, const uint8_t *p, int w)
{
    int i = 1;
    o[0] = (uint8_t)(c[0] - (p[0] >> 1));
    for (; i + 16 <= w; i += 16) {
        v16b x, a, b;
        memcpy(&x, c + i, 16);
        memcpy(&a, c + i - 1, 16);
        memcpy(&b, p + i, 16);
        /* floor((a + b) / 2) without leaving 8 bits */
        x -= (a & b) + ((a ^ b) >> 1);
        memcpy(o + i, &x, 16);
    }
    for (; i < w; i++)
        o[i] = (uint8_t)(c[i] - ((c[i - 1] + p[i]) >> 1));
}

static inline int paeth(int a, int b, int c)
{
    int pa = abs(b - c), pb = abs(a - c), pc = abs(a + b - 2 * c);
    return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

#if defined(__SSE2__)
/* Paeth's predictor in byte lanes, sixteen pixels a step:
 * pa = |b - c| and pb = |a - c| as max - min; pc = |(a - c) + (b - c)|,
 * the sum of pa and pb where the two differences have one sign, else
 * their difference.  The sum saturates at 255, which none of the
 * comparisons can tell from the true sum (pa and pb are at most 255), so
 * every (a, b, c) gives the scalar paeth()'s byte (checked for all 2^24). */
static inline __m128i paeth_bytes(__m128i a, __m128i b, __m128i c)
{
    __m128i lo_bc = _mm_min_epu8(b, c), lo_ac = _mm_min_epu8(a, c);
    __m128i pa = _mm_sub_epi8(_mm_max_epu8(b, c), lo_bc);
    __m128i pb = _mm_sub_epi8(_mm_max_epu8(a, c), lo_ac);
    /* (b >= c) != (a >= c) */
    __m128i apart = _mm_xor_si128(_mm_cmpeq_epi8(lo_bc, c), _mm_cmpeq_epi8(lo_ac, c));
    __m128i pc = _mm_or_si128(
        _mm_andnot_si128(apart, _mm_adds_epu8(pa, pb)),
        _mm_and_si128(apart, _mm_sub_epi8(_mm_max_epu8(pa, pb), _mm_min_epu8(pa, pb))));
    /* the spec's order of ties: a, then b, then c (x <= y as min(x, y) == x) */
    __m128i use_a = _mm_and_si128(_mm_cmpeq_epi8(_mm_min_epu8(pa, pb), pa),
                                  _mm_cmpeq_epi8(_mm_min_epu8(pa, pc), pa));
    __m128i use_b = _mm_andnot_si128(use_a, _mm_cmpeq_epi8(_mm_min_epu8(pb, pc), pb));
    return _mm_or_si128(_mm_or_si128(_mm_and_si128(use_a, a), _mm_and_si128(use_b, b)),
                        _mm_andnot_si128(_mm_or_si128(use_a, use_b), c));
}

static void filter_paeth(uint8_t *o, const uint8_t *c, const uint8_t *p, int w)
{
    int i = 1;
    o[0] = (uint8_t)(c[0] - p[0]);
    for (; i + 16 <= w; i += 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(c + i));
        __m128i a = _mm_loadu_si128((const __m128i *)(const void *)(c + i - 1));
        __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
        __m128i cc = _mm_loadu_si128((const __m128i *)(const void *)(p + i - 1));
        _mm_storeu_si128((__m128i *)(void *)(o + i), _mm_sub_epi8(x, paeth_bytes(a, b, cc)));
    }
    for (; i < w; i++)
        o[i] = (uint8_t)(c[i] - paeth(c[i - 1], p[i], p[i - 1]));
}
#else
typedef uint8_t v8b __attribute__((vector_size(8)));
typedef int16_t v8s __attribute__((vector_size(16)));

static inline v8s vabs(v8s v)
{
    v8s m = v >> 15;
    return (v ^ m) - m;
}

static void filter_paeth(uint8_t *o, const uint8_t *c, const uint8_t *p, int w)
{
    int i = 1;
    o[0] = (uint8_t)(c[0] - p[0]);
    for (; i + 8 <= w; i += 8) {
        v8b X, A, B, C;
        v8s a, b, cc, pa, pb, pc, use_a, use_b, pred;
        memcpy(&X, c + i, 8);
        memcpy(&A, c + i - 1, 8);
        memcpy(&B, p + i, 8);
        memcpy(&C, p + i - 1, 8);
        a = __builtin_convertvector(A, v8s);
        b = __builtin_convertvector(B, v8s);
        cc = __builtin_convertvector(C, v8s);
        pa = vabs(b - cc);
        pb = vabs(a - cc);
        pc = vabs(a + b - cc - cc);
        /* the spec's order of ties: a, then b, then c */
        use_a = (pa <= pb) & (pa <= pc);
        use_b = ~use_a & (pb <= pc);
        pred = (use_a & a) | (use_b & b) | (~(use_a | use_b) & cc);
        X -= __builtin_convertvector(pred, v8b);
        memcpy(o + i, &X, 8);
    }
    for (; i < w; i++)
        o[i] = (uint8_t)(c[i] - paeth(c[i - 1], p[i], p[i - 1]));
}
#endif

typedef void (*filter_fn)(uint8_t *, const uint8_t *, const uint8_t *, int);
static const filter_fn filters[5] = {filter_none, filter_sub, filter_up, filter_avg, filter_paeth};

/* libpng's heuristic: the bytes as signed differences, smallest sum. */
static unsigned long row_cost(const uint8_t *o, int w)
{
    unsigned long s = 0;
    for (int i = 0; i < w; i++)
        s += o[i] < 128 ? o[i] : 256u - o[i];
    return s;
}

/* Writes the filter byte and the filtered row to out (w + 1 bytes).
 * prev is the row above, or a row of zeros for the first (PNG's rule).
 * scratch: w bytes, only for PNG_FILTER_MINSUM. */
static void filter_row(int f, uint8_t *out, const uint8_t *cur, const uint8_t *prev, int w,
                       uint8_t *scratch)
{
    if (f != PNG_FILTER_MINSUM) {
        out[0] = (uint8_t)f;
        filters[f](out + 1, cur, prev, w);
        return;
    }
    unsigned long best = 0;
    for (int k = 0; k < 5; k++) {
        uint8_t *dst = k == 0 ? out + 1 : scratch;
        filters[k](dst, cur, prev, w);
        unsigned long s = row_cost(dst, w);
        if (k == 0 || s < best) {
            if (k)
                memcpy(out + 1, scratch, (size_t)w);
            best = s;
            out[0] = (uint8_t)k;
        }
    }
}

// ---------------------------------------------------------------------------
// Joining deflate streams

/* Bits LSB first (RFC 1951 §3.1.1) from z[0..n), libdeflate's way: a
 * 64-bit buffer refilled 8 bytes at a time, so that one refill covers a
 * whole length/distance pair (<= 48 bits).  Bytes past the end read as 0;
 * the walker checks its position against the end. */
typedef struct bitrd {
    const uint8_t *z;
    size_t n, i;     /* bytes; next byte to load */
    uint64_t bb;     /* bits not consumed yet (and some loaded ahead) */
    unsigned bl;     /* how many of bb's low bits are counted */
} bitrd;

static inline void br_refill(bitrd *r)
{
    if (r->i + 8 <= r->n) {
        uint64_t v;
        memcpy(&v, r->z + r->i, 8);
        r->bb |= v << r->bl;
        r->i += (63 - r->bl) >> 3;
        r->bl |= 56;
    } else {
        for (; r->bl <= 56; r->bl += 8, r->i++)
            r->bb |= (uint64_t)(r->i < r->n ? r->z[r->i] : 0) << r->bl;
    }
}

static inline void br_drop(bitrd *r, unsigned k)
{
    r->bb >>= k;
    r->bl -= k;
}

/* Bits read so far. */
static inline size_t br_pos(const bitrd *r)
{
    return 8 * r->i - r->bl;
}

static inline void br_seek(bitrd *r, size_t bit)
{
    r->i = bit >> 3;
    r->bb = 0;
    r->bl = 0;
    br_refill(r);
    br_drop(r, (unsigned)(bit & 7));
}

/* Decode tables, libdeflate's shape: a primary table indexed by the next
 * pbits stream bits (at most WALK_PRIMARY_BITS, small enough to stay in
 * L1: the walk is one dependent lookup after another), and for longer
 * codes a subtable of 2^sbits entries (sbits = longest code - pbits),
 * indexed by the bits after those.  An entry is kind << 5 | the bits to
 * drop (the code and, for lengths and distances, its extra bits), plus
 * symbol << 8 for the code-length code; HT_SUB | offset << 8 points to a
 * subtable; 0 is where no code lands (invalid).  Only the code-length
 * symbols are needed: the walk skips the data symbols, knowing only their
 * kind and size. */
enum { K_LIT = 1, K_LEN = 2, K_EOB = 3 };
#define HT_SUB 0x80u
#define WALK_PRIMARY_BITS 10
#define WALK_MAX_BITS 15

typedef struct htab {
    unsigned pbits, sbits, used;
    uint32_t e[(1u << WALK_PRIMARY_BITS) * (1 + (1u << (WALK_MAX_BITS - WALK_PRIMARY_BITS)))];
} htab;

static inline uint32_t htab_look(const htab *t, uint64_t bb)
{
    uint32_t e = t->e[bb & ((1u << t->pbits) - 1)];
    if (e & HT_SUB)
        e = t->e[(e >> 8) + ((bb >> t->pbits) & ((1u << t->sbits) - 1))];
    return e;
}

/* Extra bits of length codes 257..285 and distance codes 0..29. */
static const uint8_t len_extra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                      2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
static const uint8_t dist_extra[30] = {0, 0, 0, 0, 1, 1, 2,  2,  3,  3,  4,  4,  5,  5,  6,
                                       6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};

/* what: 0 code lengths (no extra bits here), 1 literal/length, 2 distance */
static int htab_build(htab *t, const uint8_t *lens, int nsym, int what)
{
    int count[16] = {0}, next[16], maxl = 0, code = 0, left = 1;
    for (int s = 0; s < nsym; s++) {
        count[lens[s]]++;
        if (lens[s] > maxl)
            maxl = lens[s];
    }
    count[0] = 0;
    for (int l = 1; l <= 15; l++) {
        left = 2 * left - count[l];
        if (left < 0)
            return -1; /* over-subscribed */
    }
    t->pbits = maxl < WALK_PRIMARY_BITS ? (unsigned)maxl : WALK_PRIMARY_BITS;
    t->sbits = (unsigned)maxl - t->pbits;
    t->used = 1u << t->pbits;
    memset(t->e, 0, sizeof t->e[0] << t->pbits);
    for (int l = 1; l <= 15; l++) {
        code = (code + count[l - 1]) << 1;
        next[l] = code;
    }
    for (int s = 0; s < nsym; s++) {
        int l = lens[s], c, kind = K_LIT, extra = 0;
        unsigned r = 0, pl = t->pbits;
        uint32_t ent;
        if (!l)
            continue;
        c = next[l]++;
        if (what == 1 && s == 256)
            kind = K_EOB;
        else if (what == 1 && s > 256) {
            if (s > 285)
                continue; /* never valid: leave the entries 0 */
            kind = K_LEN;
            extra = len_extra[s - 257];
        } else if (what == 2) {
            if (s > 29)
                continue;
            extra = dist_extra[s];
        }
        for (int k = 0; k < l; k++)
            r |= (unsigned)((c >> k) & 1) << (l - 1 - k);
        ent = (what == 0 ? (uint32_t)s << 8 : 0) | (uint32_t)kind << 5 | (uint32_t)(l + extra);
        if ((unsigned)l <= pl) {
            for (unsigned i = r; i < 1u << pl; i += 1u << l)
                t->e[i] = ent;
        } else {
            /* the subtable of this code's first pl bits, made on first use */
            uint32_t *pe = &t->e[r & ((1u << pl) - 1)], off;
            if (!*pe) {
                off = t->used;
                t->used += 1u << t->sbits;
                memset(t->e + off, 0, sizeof t->e[0] << t->sbits);
                *pe = HT_SUB | off << 8;
            }
            off = *pe >> 8;
            for (unsigned i = r >> pl; i < 1u << t->sbits; i += 1u << (l - pl))
                t->e[off + i] = ent;
        }
    }
    /* Two literals in one lookup where both codes fit in the primary bits
     * (edge maps are mostly literals: this halves the walk's chain of
     * dependent lookups).  Downwards, so t->e[i >> l1] is still a single. */
    if (what == 1)
        for (unsigned i = 1u << t->pbits; i-- > 0;) {
            uint32_t e1 = t->e[i], e2;
            unsigned l1 = e1 & 31;
            if ((e1 >> 5 & 3) != K_LIT || (e1 & HT_SUB) || l1 >= t->pbits)
                continue;
            e2 = t->e[i >> l1];
            if ((e2 >> 5 & 3) == K_LIT && !(e2 & HT_SUB) && (e2 & 31) <= t->pbits - l1)
                t->e[i] = (uint32_t)K_LIT << 5 | (l1 + (e2 & 31));
        }
    return 0;
}

typedef struct walker {
    htab lit, dist, clen;
} walker;

/* Walks the deflate stream z[0..n) block by block, decoding only enough
 * to skip each block's symbols, up to the block with BFINAL set.  Sets
 * *final_bit to that block's header bit and *end_bit to the bit just past
 * its end-of-block code.  0, or -1 when the stream is not valid deflate. */
static int walk_deflate(walker *wk, const uint8_t *z, size_t n, size_t *final_bit,
                        size_t *end_bit)
{
    static const uint8_t clen_order[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5,
                                           11, 4, 12, 3, 13, 2, 14, 1, 15};
    const size_t nbits = 8 * n;
    bitrd r = {z, n, 0, 0, 0};
    for (;;) {
        size_t hdr = br_pos(&r);
        int final, type;
        br_refill(&r);
        final = (int)(r.bb & 1);
        type = (int)(r.bb >> 1 & 3);
        br_drop(&r, 3);
        if (type == 0) {
            unsigned len, nlen;
            br_drop(&r, r.bl & 7); /* to the byte boundary */
            br_refill(&r);
            len = (unsigned)(r.bb & 0xffff);
            nlen = (unsigned)(r.bb >> 16 & 0xffff);
            if ((len ^ 0xffffu) != nlen)
                return -1;
            br_seek(&r, br_pos(&r) + 32 + 8 * (size_t)len);
        } else if (type == 3) {
            return -1;
        } else {
            uint8_t lens[288 + 32];
            if (type == 1) {
                int s = 0;
                for (; s < 144; s++)
                    lens[s] = 8;
                for (; s < 256; s++)
                    lens[s] = 9;
                for (; s < 280; s++)
                    lens[s] = 7;
                for (; s < 288; s++)
                    lens[s] = 8;
                memset(lens + 288, 5, 32);
                if (htab_build(&wk->lit, lens, 288, 1) ||
                    htab_build(&wk->dist, lens + 288, 32, 2))
                    return -1;
            } else {
                int hlit = (int)(r.bb & 31) + 257, hdist = (int)(r.bb >> 5 & 31) + 1;
                int hclen = (int)(r.bb >> 10 & 15) + 4, k = 0;
                uint8_t cl[19] = {0};
                br_drop(&r, 14);
                for (int i = 0; i < hclen; i++) {
                    br_refill(&r);
                    cl[clen_order[i]] = (uint8_t)(r.bb & 7);
                    br_drop(&r, 3);
                }
                if (htab_build(&wk->clen, cl, 19, 0))
                    return -1;
                while (k < hlit + hdist) {
                    unsigned e;
                    int s, rep, val = 0;
                    br_refill(&r);
                    e = htab_look(&wk->clen, r.bb);
                    if (!e)
                        return -1;
                    br_drop(&r, e & 31);
                    s = (int)(e >> 8);
                    if (s < 16) {
                        lens[k++] = (uint8_t)s;
                        continue;
                    }
                    if (s == 16) {
                        if (k == 0)
                            return -1;
                        val = lens[k - 1];
                        rep = 3 + (int)(r.bb & 3);
                        br_drop(&r, 2);
                    } else if (s == 17) {
                        rep = 3 + (int)(r.bb & 7);
                        br_drop(&r, 3);
                    } else {
                        rep = 11 + (int)(r.bb & 127);
                        br_drop(&r, 7);
                    }
                    if (k + rep > hlit + hdist)
                        return -1;
                    memset(lens + k, val, (size_t)rep);
                    k += rep;
                }
                if (lens[256] == 0)
                    return -1;
                /* the distance lengths follow the literal/length ones */
                memmove(lens + 288, lens + hlit, (size_t)hdist);
                memset(lens + hlit, 0, (size_t)(288 - hlit));
                if (htab_build(&wk->lit, lens, 288, 1) ||
                    htab_build(&wk->dist, lens + 288, hdist, 2))
                    return -1;
            }
            for (;;) {
                unsigned e;
                if (r.i > n + 8)
                    return -1; /* ran far past the end (zeros decode forever?) */
                br_refill(&r);
                e = htab_look(&wk->lit, r.bb);
                br_drop(&r, e & 31);
                if (e >> 5 == K_LIT)
                    continue;
                if (e >> 5 == K_EOB)
                    break;
                if (!e)
                    return -1;
                e = htab_look(&wk->dist, r.bb);
                if (!e)
                    return -1;
                br_drop(&r, e & 31);
            }
        }
        if (br_pos(&r) > nbits)
            return -1;
        if (final) {
            *final_bit = hdr;
            *end_bit = br_pos(&r);
            return 0;
        }
    }
}

/* Makes the complete deflate stream z[0..*n) continuable: BFINAL cleared,
 * cut after the final block, an empty stored block appended (3 header
 * bits 000, zero bits to the byte, LEN 0000, NLEN ffff).  z has room for
 * *n + 5 bytes.  0, or -1 (not valid deflate). */
static int join_piece(walker *wk, uint8_t *z, size_t *n)
{
    size_t fb, eb, len;
    unsigned r;
    if (walk_deflate(wk, z, *n, &fb, &eb))
        return -1;
    z[fb >> 3] &= (uint8_t)~(1u << (fb & 7));
    len = eb >> 3;
    r = (unsigned)(eb & 7);
    if (r) /* the last byte: keep the block's bits, zero the rest */
        z[len] &= (uint8_t)((1u << r) - 1), len++;
    if (r == 0 || r > 5) /* the 3 header bits do not fit in that byte */
        z[len++] = 0;
    z[len++] = 0x00;
    z[len++] = 0x00;
    z[len++] = 0xff;
    z[len++] = 0xff;
    *n = len;
    return 0;
}

/* zlib's adler32_combine: the adler32 of A followed by B from adler(A),
 * adler(B) and B's length. */
static uint32_t adler32_combine(uint32_t a1, uint32_t a2, size_t len2)
{
    const uint64_t base = 65521;
    uint64_t rem = len2 % base;
    uint64_t s1 = a1 & 0xffff, s2 = (rem * s1) % base;
    s1 += (a2 & 0xffff) + base - 1;
    s2 += (a1 >> 16) + (a2 >> 16) + base - rem;
    s1 %= base;
    s2 %= base;
    return (uint32_t)(s1 | s2 << 16);
}

// ---------------------------------------------------------------------------
// Encoding

typedef struct piece {
    int y0, rows;
    uint8_t *z;     /* deflate data, joinable unless the last piece */
    size_t zlen;
    uint32_t adler; /* of the piece's filtered bytes */
    uint32_t crc;   /* of "IDAT", the zlib header for piece 0, and z */
} piece;

typedef struct enc {
    const uint8_t *grey;
    int w, h;
    size_t pitch;
    int level, filter;
    uint8_t zhdr[2];
    piece *pc;
    int npieces;
    atomic_int next;
    atomic_int failed; /* 0, ENOMEM, or -1 (a piece that did not walk) */
} enc;

/* The zlib header: deflate, 32 KiB window, FLEVEL as zlib says it for level. */
static void zlib_header(int level, uint8_t zhdr[2])
{
    zhdr[0] = 0x78;
    zhdr[1] = level < 2 ? 0x01 : level < 6 ? 0x5e : level == 6 ? 0x9c : 0xda;
}

/* A piece's IDAT CRC: of "IDAT", the zlib header (the first piece's only,
 * else NULL) and its data. */
static uint32_t idat_crc(const uint8_t *zhdr, const uint8_t *z, size_t zlen)
{
    uint32_t crc = libdeflate_crc32(0, "IDAT", 4);
    if (zhdr)
        crc = libdeflate_crc32(crc, zhdr, 2);
    return libdeflate_crc32(crc, z, zlen);
}

static void encode_pieces(enc *e)
{
    const int rle = e->level == PNG_LEVEL_RLE;
    struct libdeflate_compressor *c = rle ? NULL : libdeflate_alloc_compressor(e->level);
    size_t rowb = (size_t)e->w + 1;
    int maxrows = e->pc[0].rows;
    uint8_t *buf = malloc(rowb * (size_t)maxrows + 2 * (size_t)e->w);
    uint8_t *zero = buf ? buf + rowb * (size_t)maxrows : NULL, *scratch = zero ? zero + e->w : NULL;
    /* (libdeflate's pieces are joined by walking them; ours end joinable) */
    const int walk = !rle && e->npieces > 1;
    walker *wk = walk ? malloc(sizeof *wk) : NULL;
    int err = 0;

    if ((!c && !rle) || !buf || (walk && !wk)) {
        err = ENOMEM;
        goto end;
    }
    memset(zero, 0, (size_t)e->w);
    for (;;) {
        int i = atomic_fetch_add(&e->next, 1);
        piece *p;
        size_t n, bound;
        if (i >= e->npieces || atomic_load(&e->failed))
            break;
        p = &e->pc[i];
        for (int r = 0; r < p->rows; r++) {
            int y = p->y0 + r;
            const uint8_t *cur = e->grey + (size_t)y * e->pitch;
            const uint8_t *prev = y ? cur - e->pitch : zero;
            filter_row(e->filter, buf + (size_t)r * rowb, cur, prev, e->w, scratch);
        }
        n = rowb * (size_t)p->rows;
        p->adler = libdeflate_adler32(1, buf, n);
        bound = rle ? drle_bound(n) : libdeflate_deflate_compress_bound(c, n) + 8;
        if (!(p->z = malloc(bound))) {
            err = ENOMEM;
            break;
        }
        if (rle) {
            if (!(p->zlen = drle_compress(buf, n, p->z, i + 1 == e->npieces))) {
                err = ENOMEM;
                break;
            }
        } else {
            p->zlen = libdeflate_deflate_compress(c, buf, n, p->z, bound);
            if (p->zlen == 0 || (i + 1 < e->npieces && join_piece(wk, p->z, &p->zlen))) {
                err = -1;
                break;
            }
        }
        p->crc = idat_crc(i == 0 ? e->zhdr : NULL, p->z, p->zlen);
    }
end:
    if (err) {
        int zero_err = 0;
        atomic_compare_exchange_strong(&e->failed, &zero_err, err);
    }
    free(wk);
    free(buf);
    libdeflate_free_compressor(c);
}

static void *helper_main(void *arg)
{
    encode_pieces(arg);
    return NULL;
}

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* Where the file's bytes go: a buffer being filled, or a so_file. */
typedef struct sink {
    uint8_t *buf;
    size_t len;
    so_file *out;
} sink;

static int emit(sink *s, const void *p, size_t n)
{
    if (s->out)
        return so_write(s->out, p, n);
    memcpy(s->buf + s->len, p, n);
    s->len += n;
    return 0;
}

/* One chunk; the CRC is given (computed by the piece's thread) or,
 * when crc_known is 0, computed here. */
static int emit_chunk(sink *s, const char *type, const uint8_t *pre, size_t npre,
                      const uint8_t *data, size_t n, const uint8_t *post, size_t npost,
                      uint32_t crc, int crc_known)
{
    uint8_t b[8];
    put32(b, (uint32_t)(npre + n + npost));
    memcpy(b + 4, type, 4);
    if (!crc_known) {
        crc = libdeflate_crc32(0, type, 4);
        if (npre)
            crc = libdeflate_crc32(crc, pre, npre);
        if (n)
            crc = libdeflate_crc32(crc, data, n);
    }
    if (npost)
        crc = libdeflate_crc32(crc, post, npost);
    emit(s, b, 8);
    if (npre)
        emit(s, pre, npre);
    if (n)
        emit(s, data, n);
    if (npost)
        emit(s, post, npost);
    put32(b, crc);
    return emit(s, b, 4);
}

static void free_pieces(piece *pc, int n)
{
    for (int i = 0; pc && i < n; i++)
        free(pc[i].z);
    free(pc);
}

static int cpu_count(void)
{
    long n = ge_cpu_count();
    return n > 0 ? (int)(n > 1024 ? 1024 : n) : 1;
}

/* Encodes into pieces (e->pc), on up to o->threads threads.  0, or -1
 * with errno; a piece the walker refused (which a correct libdeflate
 * never makes) is errno EPROTO. */
static int encode(enc *e, const png_opts *o)
{
    int budget = o->threads > 0 ? o->threads : cpu_count();
    int want = budget < e->npieces ? budget : e->npieces, helpers = 0, started = 0, f;
    pthread_t *tid = NULL;

    atomic_fetch_add(&png_busy, 1);
    for (int b = atomic_load(&png_busy); want > 1;) {
        int h = budget - b < want - 1 ? budget - b : want - 1;
        if (h <= 0)
            break;
        if (atomic_compare_exchange_weak(&png_busy, &b, b + h)) {
            helpers = h;
            break;
        }
    }
    if (helpers && (tid = malloc(sizeof *tid * (size_t)helpers)))
        for (; started < helpers; started++)
            if (pthread_create(&tid[started], NULL, helper_main, e))
                break;
    encode_pieces(e);
    for (int i = 0; i < started; i++)
        pthread_join(tid[i], NULL);
    free(tid);
    atomic_fetch_sub(&png_busy, 1 + helpers);
    f = atomic_load(&e->failed);
    if (f) {
        errno = f < 0 ? EPROTO : f;
        return -1;
    }
    return 0;
}

/* The file from its pieces (each piece's crc that of "IDAT", the zlib
 * header for the first, and its data): signature, IHDR, the IDATs (the
 * last followed by the Adler-32 combined from the pieces'), IEND.  With
 * mem, into a buffer of the file's size (*mem, *memlen).  0, or -1 with
 * errno. */
static int emit_png(sink *s, int width, int height, const uint8_t zhdr[2], const piece *pc,
                    int npieces, uint8_t **mem, size_t *memlen)
{
    static const uint8_t sig[8] = {0x89, 'P', 'N', 'G', 0x0d, 0x0a, 0x1a, 0x0a};
    const size_t rowb = (size_t)width + 1;
    size_t total = 8 + 25 + 12;
    uint8_t ihdr[13], adler[4];
    uint32_t a = 1;
    for (int i = 0; i < npieces; i++) {
        size_t zl = pc[i].zlen;
        total += zl + 12 * (zl + 6 <= PNG_IDAT_MAX ? 1 : (zl + PNG_IDAT_MAX - 1) / PNG_IDAT_MAX);
        a = adler32_combine(a, pc[i].adler, rowb * (size_t)pc[i].rows);
    }
    total += 2 + 4;
    if (mem && !(s->buf = malloc(total))) {
        errno = ENOMEM;
        return -1;
    }
    put32(ihdr, (uint32_t)width);
    put32(ihdr + 4, (uint32_t)height);
    ihdr[8] = 8;  /* bit depth */
    ihdr[9] = 0;  /* grey */
    ihdr[10] = 0; /* deflate */
    ihdr[11] = 0; /* adaptive filtering */
    ihdr[12] = 0; /* no interlace */
    put32(adler, a);
    emit(s, sig, 8);
    emit_chunk(s, "IHDR", NULL, 0, ihdr, 13, NULL, 0, 0, 0);
    for (int i = 0; i < npieces; i++) {
        const piece *p = &pc[i];
        int first = i == 0, last = i + 1 == npieces;
        const uint8_t *post = last ? adler : NULL;
        size_t npost = last ? 4 : 0;
        if (p->zlen + 6 <= PNG_IDAT_MAX) {
            emit_chunk(s, "IDAT", first ? zhdr : NULL, first ? 2 : 0, p->z, p->zlen, post,
                       npost, p->crc, 1);
            continue;
        }
        /* only one huge piece gets here (piece_bytes beyond 1 GiB) */
        for (size_t off = 0; off < p->zlen; off += PNG_IDAT_MAX) {
            size_t n = p->zlen - off < PNG_IDAT_MAX ? p->zlen - off : PNG_IDAT_MAX;
            int lastpart = off + n == p->zlen;
            emit_chunk(s, "IDAT", first && off == 0 ? zhdr : NULL, first && off == 0 ? 2 : 0,
                       p->z + off, n, lastpart ? post : NULL, lastpart ? npost : 0, 0, 0);
        }
    }
    if (emit_chunk(s, "IEND", NULL, 0, NULL, 0, NULL, 0, 0, 0))
        return -1;
    if (mem) {
        *mem = s->buf;
        *memlen = s->len;
        s->buf = NULL;
    }
    return 0;
}

/* Encodes and sends the file to s (s->buf NULL: only sizes it). */
static int encode_to(const uint8_t *grey, int width, int height, size_t pitch,
                     const png_opts *o, sink *s, uint8_t **mem, size_t *memlen)
{
    png_opts d = {def_level, PNG_FILTER_DEFAULT, def_threads, 0};
    size_t pb, rowb = (size_t)width + 1;
    int rows, rc = -1;
    enc e;

    if (!o)
        o = &d;
    if (!grey || width <= 0 || height <= 0 || pitch < (size_t)width ||
        o->level < PNG_LEVEL_MIN || o->level > PNG_LEVEL_MAX || o->filter < PNG_FILTER_DEFAULT ||
        o->filter > PNG_FILTER_MINSUM || (size_t)width > (size_t)INT_MAX - 1) {
        errno = EINVAL;
        return -1;
    }
    memset(&e, 0, sizeof e);
    e.grey = grey;
    e.w = width;
    e.h = height;
    e.pitch = pitch;
    e.level = o->level;
    e.filter = o->filter == PNG_FILTER_DEFAULT ? PNG_FILTER_CHOSEN : o->filter;
    zlib_header(o->level, e.zhdr);
    pb = o->piece_bytes ? o->piece_bytes : PNG_PIECE_BYTES;
    rows = pb / rowb >= (size_t)height ? height : pb / rowb ? (int)(pb / rowb) : 1;
    e.npieces = (height + rows - 1) / rows;
    if (!(e.pc = calloc((size_t)e.npieces, sizeof *e.pc))) {
        errno = ENOMEM;
        return -1;
    }
    for (int i = 0; i < e.npieces; i++) {
        e.pc[i].y0 = i * rows;
        e.pc[i].rows = height - i * rows < rows ? height - i * rows : rows;
    }
    if (encode(&e, o)) {
        if (errno == EPROTO && e.npieces > 1) {
            /* cannot happen with a correct libdeflate; one piece needs no
             * join (and still gives the same bytes every time) */
            png_opts one = *o;
            one.piece_bytes = SIZE_MAX;
            free_pieces(e.pc, e.npieces);
            return encode_to(grey, width, height, pitch, &one, s, mem, memlen);
        }
        goto end;
    }

    rc = emit_png(s, width, height, e.zhdr, e.pc, e.npieces, mem, memlen);
end:
    free_pieces(e.pc, e.npieces);
    return rc;
}

int png_encode(const uint8_t *grey, int width, int height, size_t pitch, const png_opts *o,
               uint8_t **png, size_t *len)
{
    sink s = {NULL, 0, NULL};
    if (!png || !len) {
        errno = EINVAL;
        return -1;
    }
    *png = NULL;
    *len = 0;
    return encode_to(grey, width, height, pitch, o, &s, png, len);
}

int png_write(so_file *out, const uint8_t *grey, int width, int height, size_t pitch)
{
    sink s = {NULL, 0, out};
    if (!out)
        return -1;
    if (encode_to(grey, width, height, pitch, NULL, &s, NULL, NULL)) {
        so_fail(out, errno);
        return -1;
    }
    return so_write(out, "", 0) ? -1 : 0;
}

/* The pieces of image data coded elsewhere, back to back in z, as
 * encode_pieces leaves its own (their CRCs computed here). */
static int coded_to(sink *s, int width, int height, int rows, int npieces, const uint8_t *z,
                    const uint32_t *lens, const uint32_t *adler, uint8_t **mem, size_t *memlen)
{
    uint8_t zhdr[2];
    piece *pc;
    int rc;
    if (width <= 0 || height <= 0 || rows <= 0 || (size_t)width > (size_t)INT_MAX - 1 ||
        npieces != (height + rows - 1) / rows || !z || !lens || !adler) {
        errno = EINVAL;
        return -1;
    }
    if (!(pc = calloc((size_t)npieces, sizeof *pc))) {
        errno = ENOMEM;
        return -1;
    }
    zlib_header(PNG_LEVEL_RLE, zhdr); /* (the GPU codes at the default level) */
    for (int i = 0; i < npieces; i++) {
        pc[i].y0 = i * rows;
        pc[i].rows = height - i * rows < rows ? height - i * rows : rows;
        pc[i].z = (uint8_t *)(uintptr_t)z; /* (read only: emit_png) */
        pc[i].zlen = lens[i];
        pc[i].adler = adler[i];
        pc[i].crc = idat_crc(i == 0 ? zhdr : NULL, z, lens[i]);
        z += lens[i];
    }
    rc = emit_png(s, width, height, zhdr, pc, npieces, mem, memlen);
    free(pc);
    return rc;
}

int png_encode_coded(int width, int height, int rows, int npieces, const uint8_t *z,
                     const uint32_t *lens, const uint32_t *adler, uint8_t **png, size_t *len)
{
    sink s = {NULL, 0, NULL};
    if (!png || !len) {
        errno = EINVAL;
        return -1;
    }
    *png = NULL;
    *len = 0;
    return coded_to(&s, width, height, rows, npieces, z, lens, adler, png, len);
}

int png_write_coded(so_file *out, int width, int height, int rows, int npieces,
                    const uint8_t *z, const uint32_t *lens, const uint32_t *adler)
{
    sink s = {NULL, 0, out};
    if (!out)
        return -1;
    if (coded_to(&s, width, height, rows, npieces, z, lens, adler, NULL, NULL)) {
        so_fail(out, errno);
        return -1;
    }
    return so_write(out, "", 0) ? -1 : 0;
}
