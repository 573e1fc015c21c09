/*
 * test_deflate_rle — src/io/deflate_rle.c's streams decode, with zlib's
 * inflate (what libpng, and so most PNG readers, use) and with
 * libdeflate's, to the bytes given: empty and 1..3-byte inputs, all one
 * byte, runs just under, at and over deflate's 258 limit, noise, edge-map
 * -like rows (small values around 0 and flat stretches), every byte value,
 * and skewed counts that need the 15-bit length limit; as a final block
 * and as a sync-flushed block followed by another stream's blocks.  And
 * the size: runs cost far less than their bytes, noise barely more than
 * its bytes.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libdeflate.h>
#include <zlib.h>

#include "check.h"
#include "deflate_rle.h"

static unsigned lcg(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return *s >> 16;
}

/* inflate (raw deflate) with zlib; the bytes out, -1 on an error */
static long zlib_inflate(const uint8_t *z, size_t zn, uint8_t *out, size_t cap)
{
    z_stream s;
    int r;
    memset(&s, 0, sizeof s);
    if (inflateInit2(&s, -15) != Z_OK)
        return -1;
    s.next_in = (Bytef *)z;
    s.avail_in = (uInt)zn;
    s.next_out = out;
    s.avail_out = (uInt)cap;
    r = inflate(&s, Z_FINISH);
    inflateEnd(&s);
    return r == Z_STREAM_END && s.avail_in == 0 ? (long)s.total_out : -1;
}

/* in compressed as one final block, and as a sync-flushed block followed
 * by a second stream's final block (of in again): both decoders give the
 * bytes back.  *zlen: the final block's size. */
static int round_trip(const char *what, const uint8_t *in, size_t n, size_t *zlen)
{
    size_t cap = 2 * drle_bound(n) + 16;
    uint8_t *z = malloc(cap), *out = malloc(2 * n + 16);
    struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
    size_t got = 0, a, b;
    long zl;
    int ok = 1;
    char name[160];
    a = drle_compress(in, n, z, 1);
    *zlen = a;
    ok &= a > 0 && a <= drle_bound(n);
    zl = ok ? zlib_inflate(z, a, out, 2 * n + 16) : -1;
    ok &= zl == (long)n && !memcmp(out, in, n);
    ok &= libdeflate_deflate_decompress(d, z, a, out, n, &got) == LIBDEFLATE_SUCCESS &&
          got == n && !memcmp(out, in, n);
    snprintf(name, sizeof name, "drle %s (%zu bytes): a final block, zlib and libdeflate", what, n);
    CHECK(ok, name, "compressed %zu, zlib %ld", a, zl);
    /* joined: this block sync-flushed, then the same bytes as the final one */
    a = drle_compress(in, n, z, 0);
    b = a ? drle_compress(in, n, z + a, 1) : 0;
    ok = a && b;
    zl = ok ? zlib_inflate(z, a + b, out, 2 * n + 16) : -1;
    ok &= zl == (long)(2 * n) && !memcmp(out, in, n) && !memcmp(out + n, in, n);
    ok &= libdeflate_deflate_decompress(d, z, a + b, out, 2 * n, &got) == LIBDEFLATE_SUCCESS &&
          got == 2 * n && !memcmp(out, in, n) && !memcmp(out + n, in, n);
    snprintf(name, sizeof name, "drle %s: sync-flushed, another stream after it", what);
    CHECK(ok, name, "%zu + %zu bytes, zlib %ld", a, b, zl);
    libdeflate_free_decompressor(d);
    free(out);
    free(z);
    return ok;
}

int main(void)
{
    enum { N = 300000 };
    uint8_t *buf = calloc(N, 1);
    unsigned seed = 7;
    size_t zl;
    static const size_t runs[] = {257, 258, 259, 260, 516, 517, 100000};

    round_trip("empty", buf, 0, &zl);
    for (size_t n = 1; n <= 3; n++) {
        memset(buf, 'a', n);
        round_trip(n == 1 ? "1 byte" : n == 2 ? "2 equal bytes" : "3 equal bytes", buf, n, &zl);
    }
    memcpy(buf, "aab", 3);
    round_trip("aab", buf, 3, &zl);
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        char what[64];
        memset(buf, 0, runs[i]);
        buf[0] = 9;
        snprintf(what, sizeof what, "a byte then a run of %zu", runs[i] - 1);
        round_trip(what, buf, runs[i], &zl);
    }
    memset(buf, 0, N);
    round_trip("all zero", buf, N, &zl);
    CHECK(zl < N / 100, "drle: a run costs far less than its bytes", "%zu bytes for %d", zl, N);
    for (size_t i = 0; i < N; i++)
        buf[i] = (uint8_t)lcg(&seed);
    round_trip("noise", buf, N, &zl);
    CHECK(zl < (size_t)N + N / 50, "drle: noise costs barely more than its bytes", "%zu for %d", zl,
          N);
    for (size_t i = 0; i < 256 * 3; i++)
        buf[i] = (uint8_t)(i % 256);
    round_trip("every byte value", buf, 256 * 3, &zl);
    /* an edge map's filtered rows: small values around 0, flat stretches */
    for (size_t i = 0; i < N; i++) {
        unsigned r = lcg(&seed);
        buf[i] = (i / 1000) % 3 == 0 ? 0 : (uint8_t)((r % 7) - 3);
    }
    round_trip("edge-map-like rows", buf, N, &zl);
    /* counts skewed as 2^k: a Huffman code would need 20+ bits */
    {
        size_t n = 0;
        for (int k = 0; k < 24 && n < N; k++)
            for (size_t r = 0; r < ((size_t)1 << (k > 17 ? 17 : k)) && n < N; r++)
                buf[n++] = (uint8_t)(k * 7 + (r & 1)); /* (r & 1: no runs) */
        round_trip("skewed counts (the 15-bit limit)", buf, n, &zl);
    }
    free(buf);
    return check_failed_;
}
