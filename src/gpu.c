/*
 * gpu.c — probing the CUDA runtime without noise.
 */
#include "gpu.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <string.h>

cudaError_t kernels_probe_gpu(void); /* kernels/probe.cu */

void gpu_versions(int *runtime_version, int *driver_version)
{
    *runtime_version = 0;
    *driver_version = 0;
    cudaRuntimeGetVersion(runtime_version);
    cudaDriverGetVersion(driver_version); /* 0 when no driver is installed */
}

static void ver(char *buf, size_t n, int v)
{
    snprintf(buf, n, "%d.%d", v / 1000, (v % 1000) / 10);
}

int gpu_probe(int device, gpu_info *info, char *why, size_t n)
{
    int count = 0;
    cudaError_t e;
    char rt[16], drv[16];

    memset(info, 0, sizeof *info);
    info->device = device;
    gpu_versions(&info->runtime_version, &info->driver_version);
    ver(rt, sizeof rt, info->runtime_version);
    ver(drv, sizeof drv, info->driver_version);

    if (info->driver_version == 0) {
        snprintf(why, n, "no CUDA driver found");
        return -1;
    }
    if (info->driver_version < info->runtime_version) {
        snprintf(why, n, "CUDA driver %s is older than the runtime %s this build needs", drv, rt);
        return -1;
    }
    /* Host threads block in waits instead of spinning (SPEC §4); must be
     * set before the primary context is created. */
    cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync);
    e = cudaGetDeviceCount(&count);
    if (e == cudaErrorInsufficientDriver) {
        snprintf(why, n, "CUDA driver %s is too old for runtime %s", drv, rt);
        return -1;
    }
    if (e == cudaErrorNoDevice || (e == cudaSuccess && count == 0)) {
        cudaGetLastError();
        snprintf(why, n, "no CUDA device found");
        return -1;
    }
    if (e != cudaSuccess) {
        cudaGetLastError();
        snprintf(why, n, "CUDA unavailable: %s", cudaGetErrorString(e));
        return -1;
    }
    if (device < 0 || device >= count) {
        snprintf(why, n, "no CUDA device %d (%d found)", device, count);
        return -1;
    }
    e = cudaSetDevice(device);
    if (e == cudaSuccess) {
        struct cudaDeviceProp prop;
        e = cudaGetDeviceProperties(&prop, device);
        if (e == cudaSuccess) {
            snprintf(info->name, sizeof info->name, "%s", prop.name);
            info->cc_major = prop.major;
            info->cc_minor = prop.minor;
            info->total_mem = prop.totalGlobalMem;
            info->sm_count = prop.multiProcessorCount;
        }
    }
    if (e != cudaSuccess) {
        cudaGetLastError();
        snprintf(why, n, "CUDA device %d unusable: %s", device, cudaGetErrorString(e));
        return -1;
    }
    cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync);
    e = kernels_probe_gpu();
    if (e != cudaSuccess) {
        cudaGetLastError();
        if (e == cudaErrorNoKernelImageForDevice || e == cudaErrorInvalidDeviceFunction)
            snprintf(why, n, "no kernel image for %s (compute capability %d.%d); rebuild with SMS=%d%d",
                     info->name, info->cc_major, info->cc_minor, info->cc_major, info->cc_minor);
        else
            snprintf(why, n, "cannot load kernels on %s: %s", info->name, cudaGetErrorString(e));
        return -1;
    }
    return 0;
}
