/*
 * coded_cuda.c — FFVHuff packets coded on the GPU for an output slot; see
 * coded.h.
 */
#include "coded.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"
#include "hostbuf.h"
#include "util.h"

#define GE_CUDA_RECORD /* CUDA failures are recorded, not printed (DESIGN.md §9) */
#include "cuda_check.h"

/* At most this many bytes of an engine's packet buffers lent at once (what
 * the .mkv writer holds: its encoder ring and the packets its writer
 * threads have not written yet); past it the sink copies, as it does
 * without lending. */
#define CODED_LEND_BYTES ((size_t)256 << 20)

struct coded_blk {
    buf_loan loan; /* first: a lent buffer is its loan */
    coded_blk *next;
    coded_pool *pool;
    uint8_t *p;
    size_t cap;
    int pinned;
};

struct coded_pool {
    pthread_mutex_t mu;
    coded_blk *free;
    size_t lent;   /* bytes */
    int nlent;
    int closed;
    /* GPUEDGE_TRACE=venc: buffers made (and their seconds), most lent at once */
    int trace, made, lent_max;
    double t_made;
};

static void blk_free(coded_blk *b)
{
    if (b->pinned)
        gpu_host_free(b->p);
    else
        free(b->p);
    free(b);
}

static void pool_destroy(coded_pool *p)
{
    pthread_mutex_destroy(&p->mu);
    free(p);
}

coded_pool *coded_pool_new(void)
{
    coded_pool *p = calloc(1, sizeof *p);
    if (p && pthread_mutex_init(&p->mu, NULL)) {
        free(p);
        p = NULL;
    }
    if (p)
        p->trace = ge_trace("venc");
    return p;
}

void coded_pool_close(coded_pool *p)
{
    coded_blk *b, *list;
    int last;
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    if (p->trace && p->made)
        ge_note("venc trace: the engine's packet buffers: %d made (%.1f ms, pinned), at most %d "
                "lent at once", p->made, p->t_made * 1e3, p->lent_max);
    list = p->free;
    p->free = NULL;
    p->closed = 1;
    last = p->nlent == 0;
    pthread_mutex_unlock(&p->mu);
    while ((b = list)) {
        list = b->next;
        blk_free(b);
    }
    if (last)
        pool_destroy(p);
}

/* b back into its pool (or freed, with the pool when it was the last one
 * out and the engine has ended).  lent: it comes back from the sink. */
static void blk_put(coded_blk *b, int lent)
{
    coded_pool *p = b->pool;
    int gone, last = 0;
    pthread_mutex_lock(&p->mu);
    if (lent) {
        p->lent -= b->cap;
        p->nlent--;
    }
    gone = p->closed;
    if (gone)
        last = p->nlent == 0;
    else {
        b->next = p->free;
        p->free = b;
    }
    pthread_mutex_unlock(&p->mu);
    if (gone) {
        blk_free(b);
        if (last)
            pool_destroy(p);
    }
}

static void give_back(buf_loan *l)
{
    blk_put((coded_blk *)l, 1);
}

/* A buffer of at least n bytes: a free one of the pool (smaller ones are
 * freed: the frames grew), else a new one, pinned where possible. */
static coded_blk *blk_get(coded_pool *p, size_t n)
{
    coded_blk *b;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        if ((b = p->free))
            p->free = b->next;
        pthread_mutex_unlock(&p->mu);
        if (!b || b->cap >= n)
            break;
        blk_free(b);
    }
    if (b)
        return b;
    double t0 = ge_now();
    if (!(b = calloc(1, sizeof *b)))
        return NULL;
    b->loan.give_back = give_back;
    b->pool = p;
    b->cap = n;
    b->pinned = (b->p = gpu_host_alloc(n)) != NULL;
    if (!b->p && !(b->p = malloc(n))) {
        free(b);
        return NULL;
    }
    pthread_mutex_lock(&p->mu);
    p->made++;
    p->t_made += ge_now() - t0;
    pthread_mutex_unlock(&p->mu);
    return b;
}

buf_loan *coded_lend(void *ctx)
{
    pipe_coded *c = ctx;
    coded_blk *b = c->blk;
    coded_pool *p;
    if (!b)
        return NULL;
    p = b->pool;
    pthread_mutex_lock(&p->mu);
    if (p->lent + b->cap > CODED_LEND_BYTES) {
        b = NULL;
    } else {
        p->lent += b->cap;
        p->nlent++;
        if (p->nlent > p->lent_max)
            p->lent_max = p->nlent;
        c->blk = NULL;
    }
    pthread_mutex_unlock(&p->mu);
    return b ? &b->loan : NULL;
}

int coded_enqueue(pipe_coded *c, const uint8_t *d_edge, int w, int h,
                  const uint32_t *codes, cudaStream_t comp, cudaStream_t dl,
                  const char *name)
{
    const size_t npx = (size_t)w * (size_t)h, max = hfyu_gpu_max_bytes(w, h);
    int ret = 0;
    c->on = 0;
    if (!c->done)
        CUDA_TRY(cudaEventCreateWithFlags(&c->done, cudaEventDisableTiming));
    if (!c->d_bytes)
        CUDA_TRY(cudaMalloc((void **)&c->d_bytes, sizeof *c->d_bytes));
    if (!c->h_bytes)
        CUDA_TRY(cudaMallocHost((void **)&c->h_bytes, sizeof *c->h_bytes));
    /* (the slot came back from the writer after its download: nothing in
     * flight uses its buffers; a lent host buffer is the sink's now) */
    if (dev_reserve((void **)&c->d_out, &c->d_cap, max, 0, name) ||
        dev_reserve(&c->d_scratch, &c->scratch_cap, hfyu_gpu_scratch_bytes(w, h), 0, name))
        return -1;
    if (c->blk && c->blk->cap < npx) {
        blk_put(c->blk, 0);
        c->blk = NULL;
    }
    if (!c->blk && !(c->blk = blk_get(c->pool, npx)))
        return ge_fail_in(name, "out of host memory for a %dx%d frame", w, h);
    CUDA_TRY(hfyu_gpu(d_edge, w, w, h, codes, c->d_out, c->d_scratch, c->d_bytes, comp));
    CUDA_TRY(cudaEventRecord(c->done, comp));
    CUDA_TRY(cudaStreamWaitEvent(dl, c->done, 0));
    CUDA_TRY(cudaMemcpyAsync(c->h_bytes, c->d_bytes, sizeof *c->h_bytes,
                             cudaMemcpyDeviceToHost, dl));
    c->got = npx < max ? npx : max;
    CUDA_TRY(cudaMemcpyAsync(c->blk->p, c->d_out, c->got, cudaMemcpyDeviceToHost, dl));
    c->on = 1;
end:
    return ret;
}

const uint8_t *coded_packet(const pipe_coded *c, size_t *n)
{
    if (!c->on || !c->blk || *c->h_bytes > c->got)
        return NULL;
    *n = (size_t)*c->h_bytes;
    return c->blk->p;
}

void coded_free(pipe_coded *c)
{
    if (c->d_out) CUDA_QUIET(cudaFree(c->d_out));
    if (c->d_scratch) CUDA_QUIET(cudaFree(c->d_scratch));
    if (c->d_bytes) CUDA_QUIET(cudaFree(c->d_bytes));
    if (c->h_bytes) CUDA_QUIET(cudaFreeHost(c->h_bytes));
    if (c->done) CUDA_QUIET(cudaEventDestroy(c->done));
    if (c->blk)
        blk_put(c->blk, 0);
    coded_pool *pool = c->pool;
    memset(c, 0, sizeof *c);
    c->pool = pool;
}

int png_enqueue(pipe_png *p, const uint8_t *d_edge, int w, int h, size_t piece_bytes,
                cudaStream_t comp, cudaStream_t dl, const char *name)
{
    const size_t npx = (size_t)w * (size_t)h;
    size_t meta, rows;
    int ret = 0;
    p->on = 0;
    rows = piece_bytes / ((size_t)w + 1);
    if (png_gpu_geom_of(w, h, rows < 1 ? 1 : rows > (size_t)h ? h : (int)rows, &p->g))
        return 0; /* beyond the GPU coder: the cores write it */
    meta = 2 * sizeof(uint32_t) * (size_t)p->g.npieces;
    if (!p->done)
        CUDA_TRY(cudaEventCreateWithFlags(&p->done, cudaEventDisableTiming));
    p->h.pinned = 1;
    /* (the slot came back from the writer after its download: nothing in
     * flight uses its buffers) */
    if (dev_reserve((void **)&p->d_out, &p->d_cap, png_gpu_out_bytes(&p->g), 0, name) ||
        dev_reserve((void **)&p->d_z, &p->dz_cap, npx, 0, name) ||
        dev_reserve((void **)&p->d_meta, &p->dm_cap, meta, 0, name) ||
        dev_reserve(&p->d_scratch, &p->scratch_cap, png_gpu_scratch_bytes(&p->g), 0, name))
        return -1;
    if (host_buf_reserve(&p->h, meta + npx))
        return ge_fail_in(name, "out of host memory for a %dx%d frame", w, h);
    CUDA_TRY(png_gpu_code(d_edge, w, &p->g, p->d_scratch, p->scratch_cap, p->d_out, p->d_meta,
                          p->d_meta + p->g.npieces, comp));
    CUDA_TRY(png_gpu_compact(&p->g, p->d_out, p->d_meta, p->d_z, npx, comp));
    CUDA_TRY(cudaEventRecord(p->done, comp));
    CUDA_TRY(cudaStreamWaitEvent(dl, p->done, 0));
    CUDA_TRY(cudaMemcpyAsync(p->h.p, p->d_meta, meta, cudaMemcpyDeviceToHost, dl));
    CUDA_TRY(cudaMemcpyAsync((uint8_t *)p->h.p + meta, p->d_z, npx, cudaMemcpyDeviceToHost, dl));
    p->on = 1;
end:
    return ret;
}

const sink_png *png_coded(const pipe_png *p, sink_png *out)
{
    const uint32_t *lens = p->h.p;
    size_t total = 0;
    if (!p->on)
        return NULL;
    for (int k = 0; k < p->g.npieces; k++)
        total += lens[k];
    if (total > (size_t)p->g.w * (size_t)p->g.h) /* only that much came back */
        return NULL;
    out->lens = lens;
    out->adler = lens + p->g.npieces;
    out->z = (const uint8_t *)(lens + 2 * p->g.npieces);
    out->rows = p->g.rows;
    out->npieces = p->g.npieces;
    return out;
}

void png_free(pipe_png *p)
{
    if (p->d_out) CUDA_QUIET(cudaFree(p->d_out));
    if (p->d_z) CUDA_QUIET(cudaFree(p->d_z));
    if (p->d_meta) CUDA_QUIET(cudaFree(p->d_meta));
    if (p->d_scratch) CUDA_QUIET(cudaFree(p->d_scratch));
    if (p->done) CUDA_QUIET(cudaEventDestroy(p->done));
    host_buf_free(&p->h);
    memset(p, 0, sizeof *p);
}
