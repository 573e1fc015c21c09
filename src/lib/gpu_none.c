/*
 * gpu_none.c — the CPU-only variant's GPU entry points (make CUDA=0, or
 * automatically when the Makefile finds no nvcc).
 *
 * Compiled instead of the CUDA-only sources (the Makefile's CUDA_C_SRCS:
 * gpu.c, hwdec.c, nvjpeg.c, the kernels' .cu files), so the build needs no nvcc, no CUDA headers and no
 * libcudart.  Every entry point that would start the GPU fails with
 * GPU_NONE_WHY ("built without CUDA"); the callers then behave as on a
 * machine without a GPU: --backend=auto takes the CPU backend, and
 * --backend=gpu, --hwdec=nvdec and --jpeg-decoder=nvjpeg fail with that
 * reason.  A new CUDA-only module adds its stubs beside its own layer's:
 * here for src/lib, src/io/hw_none.c for the GPU decoders, pipeline.c's
 * #else branch for the GPU engine.
 */
#include "gpu.h"

#include <stdio.h>
#include <string.h>

#include "util.h"

// ---------------------------------------------------------------------------
// gpu.h

int gpu_compiled(void) { return 0; }

int gpu_driver_present(void) { return 0; }

void gpu_versions(int *runtime_version, int *driver_version)
{
    *runtime_version = 0;
    *driver_version = 0;
}

int gpu_probe(int device, gpu_info *info)
{
    memset(info, 0, sizeof *info);
    info->device = device;
    return ge_fail("%s", GPU_NONE_WHY);
}

/* No thread to start: NULL sends the caller to gpu_probe (gpu.h). */
gpu_probe_job *gpu_probe_start(int device, int eager)
{
    (void)device;
    (void)eager;
    return NULL;
}

int gpu_probe_done(const gpu_probe_job *j)
{
    (void)j;
    return 1;
}

int gpu_probe_wait(gpu_probe_job **jp, gpu_info *info, double *t_ready)
{
    *jp = NULL;
    if (t_ready)
        *t_ready = ge_now();
    return gpu_probe(0, info);
}

int gpu_count(void) { return 0; }

int gpu_set_device(int device)
{
    (void)device;
    return -1;
}

/* host_buf falls back to malloc */
void *gpu_host_alloc(size_t n)
{
    (void)n;
    return NULL;
}

void gpu_host_free(void *p) { (void)p; }
