/*
 * png_gpu.cu — an edge map's PNG image data coded on the GPU; see
 * png_gpu.h for the steps, kernels/drle_core.h for the code they share with
 * the CPU coder.
 *
 * Indices: the filtered stream is n = (w + 1) * h bytes, piece k the bytes
 * [k * pn, k * pn + pn) (pn = rows * (w + 1); the last piece shorter).
 * Steps 3, 5 and 6 run on a grid of (chunks of a piece, pieces), so that a
 * block never spans two pieces.
 */
#include <stdint.h>
#include <string.h>
#include <cuda_runtime.h>
/* no NVTX ranges in CUB's scans: their function-local statics would be
 * global (GNU unique) symbols of libgpuedge.a (tests/cli/library.sh) */
#define CCCL_DISABLE_NVTX
#include <cub/device/device_scan.cuh>

#include "drle_core.h"
#include "png_gpu.h"

#define PG_THREADS 256
#define PG_HIST 288 /* the counts' row of a piece (symbols 0..285, padded) */

typedef struct pg_dims {
    uint32_t w, h, rowb, n, pn, npieces;
    size_t cap;
} pg_dims;

static pg_dims dims_of(const png_gpu_geom *g)
{
    pg_dims d;
    d.w = (uint32_t)g->w;
    d.h = (uint32_t)g->h;
    d.rowb = d.w + 1;
    d.n = d.rowb * d.h;
    d.pn = d.rowb * (uint32_t)g->rows;
    d.npieces = (uint32_t)g->npieces;
    d.cap = g->cap;
    return d;
}

int png_gpu_geom_of(int w, int h, int rows, png_gpu_geom *g)
{
    size_t rowb = (size_t)w + 1, n = rowb * (size_t)h, pn;
    if (w <= 0 || h <= 0 || rows <= 0 || n >= ((size_t)1 << 31))
        return -1;
    if (rows > h)
        rows = h;
    pn = rowb * (size_t)rows;
    g->w = w;
    g->h = h;
    g->rows = rows;
    g->npieces = (h + rows - 1) / rows;
    if (g->npieces > 65535) /* (a grid's y) */
        return -1;
    g->cap = (pn / 8 * 15 + pn % 8 * 2 + 1024 + 8 + 7) / 8 * 8; /* drle_bound + slack */
    return 0;
}

size_t png_gpu_out_bytes(const png_gpu_geom *g)
{
    return (size_t)g->npieces * g->cap;
}

// ---------------------------------------------------------------------------
// Scratch: the filtered bytes, two buffers of n + 1 (the scans' inputs,
// then the bits and their offsets), the stretches' starts and (reversed)
// ends, the counts, the tables, the header lengths, the Adler sums, and
// the scans' temporary storage (every scan from one buffer into another).

typedef struct pg_scratch {
    uint8_t *f;
    /* a, b: the scans' inputs, then the bits and their offsets */
    uint32_t *a, *b, *start, *rend, *hist, *hbits;
    unsigned long long *adl;
    drle_tables *tab;
    void *tmp;
    size_t tmp_bytes;
} pg_scratch;

struct pg_max {
    __host__ __device__ __forceinline__ uint32_t operator()(uint32_t a, uint32_t b) const
    {
        return a > b ? a : b;
    }
};

struct pg_min {
    __host__ __device__ __forceinline__ uint32_t operator()(uint32_t a, uint32_t b) const
    {
        return a < b ? a : b;
    }
};

static size_t align256(size_t x)
{
    return (x + 255) / 256 * 256;
}

/* The scans' temporary bytes for n items (the largest of the three), or
 * 0 if CUDA cannot say (no device). */
static size_t scan_tmp_bytes(uint32_t n)
{
    size_t a = 0, b = 0, c = 0;
    uint32_t *p = NULL;
    if (cub::DeviceScan::InclusiveScan(NULL, a, p, p, pg_max(), (int)n) ||
        cub::DeviceScan::InclusiveScan(NULL, b, p, p, pg_min(), (int)n) ||
        cub::DeviceScan::ExclusiveSum(NULL, c, p, p, (int)n + 1))
        return 0;
    return a > b ? (a > c ? a : c) : (b > c ? b : c);
}

/* Lays the scratch out from base (s NULL: only sizes it); its bytes, or 0
 * if the scans' need is unknown. */
static size_t carve(const pg_dims &d, pg_scratch *s, uint8_t *base)
{
    size_t at = 0, tmp;
#define PG_TAKE(field, type, count)                                                             \
    do {                                                                                         \
        if (s)                                                                                   \
            s->field = (type *)(void *)(base + at);                                              \
        at += align256(sizeof(type) * (size_t)(count));                                          \
    } while (0)
    PG_TAKE(f, uint8_t, d.n);
    PG_TAKE(a, uint32_t, (size_t)d.n + 1);
    PG_TAKE(b, uint32_t, (size_t)d.n + 1);
    PG_TAKE(start, uint32_t, d.n);
    PG_TAKE(rend, uint32_t, d.n);
    PG_TAKE(hist, uint32_t, (size_t)d.npieces * PG_HIST);
    PG_TAKE(hbits, uint32_t, d.npieces);
    PG_TAKE(adl, unsigned long long, 2 * (size_t)d.npieces);
    PG_TAKE(tab, drle_tables, d.npieces);
#undef PG_TAKE
    tmp = scan_tmp_bytes(d.n);
    if (s) {
        s->tmp = base + at;
        s->tmp_bytes = tmp;
    }
    return tmp ? at + align256(tmp) : 0;
}

size_t png_gpu_scratch_bytes(const png_gpu_geom *g)
{
    return carve(dims_of(g), NULL, NULL);
}

// ---------------------------------------------------------------------------
// Kernels

__device__ __forceinline__ int paeth_pred(int a, int b, int c)
{
    int pa = abs(b - c), pb = abs(a - c), pc = abs(a + b - 2 * c);
    return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/* 1: filtered byte j of the stream (png_out.c's filter_row, Paeth). */
__global__ void __launch_bounds__(PG_THREADS)
pg_filter(const uint8_t *__restrict__ edge, int pitch, pg_dims d, uint8_t *__restrict__ f)
{
    const uint32_t j = blockIdx.x * PG_THREADS + threadIdx.x;
    if (j >= d.n)
        return;
    const uint32_t y = j / d.rowb, i = j - y * d.rowb;
    if (i == 0) {
        f[j] = 4;
        return;
    }
    const uint8_t *cur = edge + (size_t)y * pitch;
    const int x = (int)i - 1, c = cur[x];
    const int up = y ? cur[x - pitch] : 0;
    const int left = x ? cur[x - 1] : 0, ul = x && y ? cur[x - 1 - pitch] : 0;
    f[j] = (uint8_t)(c - paeth_pred(left, up, ul));
}

/* 2a: where a stretch may start (j itself at a break, else 0), and where
 * one may end, from the right: position i holds byte j = n - 1 - i's
 * candidate end (j + 1 if a stretch starts there or the stream ends). */
__global__ void __launch_bounds__(PG_THREADS)
pg_breaks(const uint8_t *__restrict__ f, pg_dims d, uint32_t *__restrict__ start,
          uint32_t *__restrict__ rend)
{
    const uint32_t j = blockIdx.x * PG_THREADS + threadIdx.x;
    if (j >= d.n)
        return;
    const uint32_t nx = j + 1;
    start[j] = j % d.pn == 0 || f[j] != f[j - 1] ? j : 0;
    rend[d.n - 1 - j] = nx == d.n || nx % d.pn == 0 || f[nx] != f[j] ? nx : UINT32_MAX;
}

/* The token of byte j of piece k (base = k * pn, pieces' local indices). */
__device__ __forceinline__ int token_at(const uint8_t *f, const uint32_t *start,
                                        const uint32_t *rend, const pg_dims &d, uint32_t base,
                                        uint32_t j, int *sym, int *len)
{
    const uint32_t s = start[j], e = rend[d.n - 1 - j];
    return drle_token(f + base, j - base, s - base, e - base, sym, len);
}

__device__ __forceinline__ uint32_t piece_len(const pg_dims &d, uint32_t k)
{
    return k + 1 == d.npieces ? d.n - k * d.pn : d.pn;
}

/* 3: each piece's tokens counted, and its Adler-32 sums (s1 of the bytes,
 * s2 of each byte times how many bytes from it to the end). */
__global__ void __launch_bounds__(PG_THREADS)
pg_count(const uint8_t *__restrict__ f, const uint32_t *__restrict__ start,
         const uint32_t *__restrict__ rend, pg_dims d, uint32_t *__restrict__ hist,
         unsigned long long *__restrict__ adl)
{
    __shared__ uint32_t h[PG_HIST];
    __shared__ unsigned long long s1, s2;
    const uint32_t k = blockIdx.y, base = k * d.pn, len = piece_len(d, k);
    const uint32_t i = blockIdx.x * PG_THREADS + threadIdx.x;
    for (int t = threadIdx.x; t < PG_HIST; t += PG_THREADS)
        h[t] = 0;
    if (threadIdx.x == 0)
        s1 = s2 = 0;
    __syncthreads();
    if (i < len) {
        int sym, l;
        const uint32_t j = base + i;
        const unsigned v = f[j];
        if (token_at(f, start, rend, d, base, j, &sym, &l))
            atomicAdd(&h[sym], 1u);
        atomicAdd(&s1, (unsigned long long)v);
        atomicAdd(&s2, (unsigned long long)v * (len - i));
    }
    __syncthreads();
    for (int t = threadIdx.x; t < PG_HIST; t += PG_THREADS)
        if (h[t])
            atomicAdd(&hist[(size_t)k * PG_HIST + t], h[t]);
    if (threadIdx.x == 0) {
        atomicAdd(&adl[2 * k], s1);
        atomicAdd(&adl[2 * k + 1], s2);
    }
}

/* 4: one thread a piece: the tables, and the header at the piece's start
 * (its last byte partly filled, the rest of the piece zero). */
__global__ void pg_tables(uint32_t *__restrict__ hist, pg_dims d, drle_tables *__restrict__ tab,
                          uint8_t *__restrict__ out, uint32_t *__restrict__ hbits)
{
    const uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= d.npieces)
        return;
    uint32_t *freq = hist + (size_t)k * PG_HIST, matches = 0;
    for (int s = 257; s < DRLE_NLITLEN; s++)
        matches += freq[s];
    drle_make_tables(freq, matches, &tab[k]);
    drle_bits b = {out + k * d.cap, 0, 0};
    drle_put_header(&b, &tab[k], k + 1 == d.npieces);
    hbits[k] = (uint32_t)(b.p - (out + k * d.cap)) * 8 + (uint32_t)b.n;
}

/* 5: each byte's token's bits (0 for a byte inside a match); bits[n] = 0. */
__global__ void __launch_bounds__(PG_THREADS)
pg_bits(const uint8_t *__restrict__ f, const uint32_t *__restrict__ start,
        const uint32_t *__restrict__ rend, pg_dims d, const drle_tables *__restrict__ tab,
        uint32_t *__restrict__ bits)
{
    const uint32_t k = blockIdx.y, base = k * d.pn, i = blockIdx.x * PG_THREADS + threadIdx.x;
    int sym, l, nb = 0, kind;
    if (k == 0 && i == 0)
        bits[d.n] = 0;
    if (i >= piece_len(d, k))
        return;
    kind = token_at(f, start, rend, d, base, base + i, &sym, &l);
    if (kind == 1)
        nb = tab[k].llen[sym];
    else if (kind == 2)
        drle_match_bits(&tab[k], l, sym - 257, &nb);
    bits[base + i] = (uint32_t)nb;
}

/* 6: each token's bits OR-ed in at the header's end plus its offset in
 * the piece (64-bit words: a token's at most 35 bits span two). */
__global__ void __launch_bounds__(PG_THREADS)
pg_pack(const uint8_t *__restrict__ f, const uint32_t *__restrict__ start,
        const uint32_t *__restrict__ rend, pg_dims d, const drle_tables *__restrict__ tab,
        const uint32_t *__restrict__ off, const uint32_t *__restrict__ hbits,
        uint8_t *__restrict__ out)
{
    const uint32_t k = blockIdx.y, base = k * d.pn, i = blockIdx.x * PG_THREADS + threadIdx.x;
    int sym, l, nb, kind;
    uint64_t v;
    if (i >= piece_len(d, k))
        return;
    kind = token_at(f, start, rend, d, base, base + i, &sym, &l);
    if (!kind)
        return;
    if (kind == 1) {
        v = tab[k].lc[sym];
        nb = tab[k].llen[sym];
    } else {
        v = drle_match_bits(&tab[k], l, sym - 257, &nb);
    }
    const uint64_t pos = (uint64_t)hbits[k] + (uint32_t)(off[base + i] - off[base]);
    unsigned long long *w = (unsigned long long *)(void *)(out + k * d.cap) + (pos >> 6);
    const unsigned sh = (unsigned)(pos & 63);
    atomicOr(w, (unsigned long long)(v << sh));
    if (sh + (unsigned)nb > 64)
        atomicOr(w + 1, (unsigned long long)(v >> (64 - sh)));
}

/* 7: one thread a piece: the end of block and trailer, the length, the
 * Adler-32. */
__global__ void pg_tail(pg_dims d, const drle_tables *__restrict__ tab,
                        const uint32_t *__restrict__ off, const uint32_t *__restrict__ hbits,
                        const unsigned long long *__restrict__ adl, uint8_t *__restrict__ out,
                        uint32_t *__restrict__ lens, uint32_t *__restrict__ adler)
{
    const uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= d.npieces)
        return;
    const uint32_t base = k * d.pn, len = piece_len(d, k);
    const uint64_t bit = (uint64_t)hbits[k] + (uint32_t)(off[base + len] - off[base]);
    lens[k] = (uint32_t)drle_put_tail(out + k * d.cap, bit, &tab[k], k + 1 == d.npieces);
    const uint32_t a = (uint32_t)((1 + adl[2 * k]) % 65521u);
    const uint32_t b = (uint32_t)((len + adl[2 * k + 1]) % 65521u);
    adler[k] = a | b << 16;
}

/* The pieces back to back: piece k's bytes at the sum of the lengths
 * before it, those past dst_cap left out. */
__global__ void __launch_bounds__(PG_THREADS)
pg_compact(pg_dims d, const uint8_t *__restrict__ out, const uint32_t *__restrict__ lens,
           uint8_t *__restrict__ dst, size_t dst_cap)
{
    const uint32_t k = blockIdx.y;
    __shared__ size_t at;
    if (threadIdx.x == 0) {
        size_t a = 0;
        for (uint32_t q = 0; q < k; q++)
            a += lens[q];
        at = a;
    }
    __syncthreads();
    for (size_t i = (size_t)blockIdx.x * PG_THREADS + threadIdx.x; i < lens[k];
         i += (size_t)gridDim.x * PG_THREADS)
        if (at + i < dst_cap)
            dst[at + i] = out[k * d.cap + i];
}

// ---------------------------------------------------------------------------

cudaError_t png_gpu_compact(const png_gpu_geom *g, const uint8_t *out, const uint32_t *lens,
                            uint8_t *dst, size_t dst_cap, cudaStream_t stream)
{
    const pg_dims d = dims_of(g);
    pg_compact<<<dim3(64, d.npieces), PG_THREADS, 0, stream>>>(d, out, lens, dst, dst_cap);
    return cudaGetLastError();
}

size_t png_gpu_stack_bytes(void)
{
    cudaFuncAttributes at;
    if (cudaFuncGetAttributes(&at, pg_tables) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return (at.localSizeBytes + 255) / 256 * 256;
}

cudaError_t png_gpu_code(const uint8_t *edge, int pitch, const png_gpu_geom *g, void *scratch,
                         size_t scratch_bytes, uint8_t *out, uint32_t *lens, uint32_t *adler,
                         cudaStream_t stream)
{
    const pg_dims d = dims_of(g);
    pg_scratch s;
    const unsigned nb = (d.n + PG_THREADS - 1) / PG_THREADS;
    const dim3 per_piece((d.pn + PG_THREADS - 1) / PG_THREADS, d.npieces);
    const unsigned tb = (d.npieces + 31) / 32;
    cudaError_t e;
    const size_t need = carve(d, &s, (uint8_t *)scratch);
    if (!need || need > scratch_bytes)
        return cudaErrorInvalidValue;
    if ((e = cudaMemsetAsync(out, 0, png_gpu_out_bytes(g), stream)) ||
        (e = cudaMemsetAsync(s.hist, 0, sizeof(uint32_t) * (size_t)d.npieces * PG_HIST, stream)) ||
        (e = cudaMemsetAsync(s.adl, 0, sizeof(unsigned long long) * 2 * (size_t)d.npieces, stream)))
        return e;
    pg_filter<<<nb, PG_THREADS, 0, stream>>>(edge, pitch, d, s.f);
    pg_breaks<<<nb, PG_THREADS, 0, stream>>>(s.f, d, s.a, s.b);
    size_t tmp = s.tmp_bytes;
    if ((e = cub::DeviceScan::InclusiveScan(s.tmp, tmp, s.a, s.start, pg_max(), (int)d.n,
                                            stream)))
        return e;
    tmp = s.tmp_bytes;
    if ((e = cub::DeviceScan::InclusiveScan(s.tmp, tmp, s.b, s.rend, pg_min(), (int)d.n,
                                            stream)))
        return e;
    pg_count<<<per_piece, PG_THREADS, 0, stream>>>(s.f, s.start, s.rend, d, s.hist, s.adl);
    pg_tables<<<tb, 32, 0, stream>>>(s.hist, d, s.tab, out, s.hbits);
    pg_bits<<<per_piece, PG_THREADS, 0, stream>>>(s.f, s.start, s.rend, d, s.tab, s.a);
    tmp = s.tmp_bytes;
    if ((e = cub::DeviceScan::ExclusiveSum(s.tmp, tmp, s.a, s.b, (int)d.n + 1, stream)))
        return e;
    pg_pack<<<per_piece, PG_THREADS, 0, stream>>>(s.f, s.start, s.rend, d, s.tab, s.b, s.hbits,
                                                   out);
    pg_tail<<<tb, 32, 0, stream>>>(d, s.tab, s.b, s.hbits, s.adl, out, lens, adler);
    return cudaGetLastError();
}
