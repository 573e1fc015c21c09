/*
 * coded_cuda.c — FFVHuff packets coded on the GPU for an output slot; see
 * coded.h.
 */
#include "coded.h"

#include <string.h>

#include "hostbuf.h"
#include "util.h"

#define GE_CUDA_RECORD /* CUDA failures are recorded, not printed (DESIGN.md §9) */
#include "cuda_check.h"

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
    c->h.pinned = 1;
    /* (the slot came back from the writer after its download: nothing in
     * flight uses its buffers) */
    if (dev_reserve((void **)&c->d_out, &c->d_cap, max, 0, name) ||
        dev_reserve(&c->d_scratch, &c->scratch_cap, hfyu_gpu_scratch_bytes(w, h), 0, name))
        return -1;
    if (host_buf_reserve(&c->h, npx))
        return ge_fail_in(name, "out of host memory for a %dx%d frame", w, h);
    CUDA_TRY(hfyu_gpu(d_edge, w, w, h, codes, c->d_out, c->d_scratch, c->d_bytes, comp));
    CUDA_TRY(cudaEventRecord(c->done, comp));
    CUDA_TRY(cudaStreamWaitEvent(dl, c->done, 0));
    CUDA_TRY(cudaMemcpyAsync(c->h_bytes, c->d_bytes, sizeof *c->h_bytes,
                             cudaMemcpyDeviceToHost, dl));
    c->got = npx < max ? npx : max;
    CUDA_TRY(cudaMemcpyAsync(c->h.p, c->d_out, c->got, cudaMemcpyDeviceToHost, dl));
    c->on = 1;
end:
    return ret;
}

const uint8_t *coded_packet(const pipe_coded *c, size_t *n)
{
    if (!c->on || *c->h_bytes > c->got)
        return NULL;
    *n = (size_t)*c->h_bytes;
    return c->h.p;
}

void coded_free(pipe_coded *c)
{
    if (c->d_out) CUDA_QUIET(cudaFree(c->d_out));
    if (c->d_scratch) CUDA_QUIET(cudaFree(c->d_scratch));
    if (c->d_bytes) CUDA_QUIET(cudaFree(c->d_bytes));
    if (c->h_bytes) CUDA_QUIET(cudaFreeHost(c->h_bytes));
    if (c->done) CUDA_QUIET(cudaEventDestroy(c->done));
    host_buf_free(&c->h);
    memset(c, 0, sizeof *c);
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
    p->got = npx;
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
    if (total > p->got)
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
