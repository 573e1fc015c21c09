/*
 * cuda_check.h — checked CUDA runtime calls for C host code (pipeline.c,
 * tests, benchmarks).  Plain C99 plus the CUDA runtime API; also compiles
 * as C++ under nvcc.
 *
 * On failure every macro prints one line on stderr
 *     gpuedge: CUDA: <call text> at <file>:<line>: <cudaGetErrorString>
 * (cuda-samples' checkCudaErrors(#val) with llm.c's file:line), or, where
 * the includer defines GE_CUDA_RECORD first (the engine, which never
 * prints: DESIGN.md §9), records "CUDA: ..." in the error record
 * (ge_fail) for its caller to report, then:
 *
 *   CUDA_CHECK(call)   is an expression: the cudaError_t of the call
 *                      (cudaSuccess or the error, already reported);
 *   CUDA_TRY(call)     FFmpeg's `goto end` shape: sets `ret` to
 *                      GE_CUDA_FAILED and jumps to the label `end`; the
 *                      caller declares `int ret` and `end:`;
 *   CUDA_TRY_TO(call, status, label)  the same with the names chosen by
 *                      the caller (status = GE_CUDA_FAILED; goto label);
 *   CUDA_QUIET(call)   runs a call whose failure is not worth a message
 *                      (cleanup paths: cudaFree, cudaStreamDestroy) and
 *                      clears the non-sticky error it may have left.
 *
 * A failed kernel launch shows up in the launcher's return value (every
 * launcher returns cudaGetLastError()), so CUDA_TRY(sobel_gpu(...)) names
 * the launcher; a fault inside a kernel surfaces at the next synchronising
 * call (event synchronise, cudaMemcpy), which is where it is reported.
 */
#ifndef GPUEDGE_CUDA_CHECK_H
#define GPUEDGE_CUDA_CHECK_H

#include <stdio.h>
#include <cuda_runtime_api.h>

/* The value CUDA_TRY stores in `ret` (module convention: 0 or negative). */
#ifndef GE_CUDA_FAILED
#define GE_CUDA_FAILED (-1)
#endif

#ifdef GE_CUDA_RECORD
#include "util.h"
#endif

static inline cudaError_t ge_cuda_check_(cudaError_t err, const char *call,
                                         const char *file, int line)
{
#ifdef GE_CUDA_RECORD
    if (err != cudaSuccess)
        ge_fail("CUDA: %s at %s:%d: %s", call, file, line, cudaGetErrorString(err));
#else
    if (err != cudaSuccess)
        fprintf(stderr, "gpuedge: CUDA: %s at %s:%d: %s\n", call, file, line,
                cudaGetErrorString(err));
#endif
    return err;
}

#define CUDA_CHECK(call) ge_cuda_check_((call), #call, __FILE__, __LINE__)

#define CUDA_TRY_TO(call, status, label)                                   \
    do {                                                                   \
        if (ge_cuda_check_((call), #call, __FILE__, __LINE__) !=           \
            cudaSuccess) {                                                 \
            (status) = GE_CUDA_FAILED;                                     \
            goto label;                                                    \
        }                                                                  \
    } while (0)

#define CUDA_TRY(call) CUDA_TRY_TO(call, ret, end)

#define CUDA_QUIET(call)                                                   \
    do {                                                                   \
        if ((call) != cudaSuccess)                                         \
            (void)cudaGetLastError();                                      \
    } while (0)

#endif
