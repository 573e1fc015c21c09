/*
 * devbuf_cuda.c — growing a device buffer (hostbuf.h's dev_reserve): the
 * engine's frame buffers and an output slot's coded packet.
 */
#include "hostbuf.h"

#include "util.h"

#define GE_CUDA_RECORD /* CUDA failures are recorded, not printed (DESIGN.md §9) */
#include "cuda_check.h"

int dev_reserve(void **p, size_t *cap, size_t n, int exact, const char *name)
{
    size_t c;
    void *q = NULL;
    cudaError_t err;
    if (n <= *cap)
        return 0;
    c = exact ? n : buf_headroom(n);
    /* free first: the budget counts what is held, not old + new */
    if (*p) {
        CUDA_QUIET(cudaFree(*p));
        *p = NULL;
        *cap = 0;
    }
    err = cudaMalloc(&q, c);
    if (err != cudaSuccess) {
        cudaGetLastError();
        return ge_fail_in(name, "out of GPU memory (%zu MiB more needed): %s", c >> 20,
                          cudaGetErrorString(err));
    }
    /* Zeroed once: a coded buffer's download takes the most it may hold
     * before the host knows the length, and then copies no uninitialised
     * byte (compute-sanitizer initcheck).  Waited for here: the engine's
     * streams do not wait for the default stream. */
    if ((err = cudaMemsetAsync(q, 0, c, cudaStreamLegacy)) != cudaSuccess ||
        (err = cudaStreamSynchronize(cudaStreamLegacy)) != cudaSuccess) {
        cudaGetLastError();
        CUDA_QUIET(cudaFree(q));
        return ge_fail_in(name, "cannot clear GPU memory: %s", cudaGetErrorString(err));
    }
    *p = q;
    *cap = c;
    return 0;
}
