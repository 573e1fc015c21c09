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
