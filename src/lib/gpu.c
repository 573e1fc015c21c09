/*
 * gpu.c — probing the CUDA runtime without noise.
 */
#include "gpu.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "util.h"

cudaError_t kernels_probe_gpu(void); /* kernels/probe.cu */

void gpu_versions(int *runtime_version, int *driver_version)
{
    *runtime_version = 0;
    *driver_version = 0;
    cudaRuntimeGetVersion(runtime_version);
    cudaDriverGetVersion(driver_version); /* 0 when no driver is installed */
}

int gpu_driver_present(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (!h)
        return 0;
    dlclose(h);
    return 1;
}

int gpu_compiled(void) { return 1; }

int gpu_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return n;
}

int gpu_set_device(int device)
{
    if (cudaSetDevice(device) != cudaSuccess) {
        cudaGetLastError();
        return -1;
    }
    return 0;
}

void *gpu_host_alloc(size_t n)
{
    void *p = NULL;
    if (cudaMallocHost(&p, n) != cudaSuccess) {
        cudaGetLastError();
        return NULL;
    }
    return p;
}

void gpu_host_free(void *p)
{
    /* as CUDA_QUIET: a failure here has nothing left to undo */
    if (cudaFreeHost(p) != cudaSuccess)
        cudaGetLastError();
}

static void ver(char *buf, size_t n, int v)
{
    snprintf(buf, n, "%d.%d", v / 1000, (v % 1000) / 10);
}

int gpu_probe(int device, gpu_info *info)
{
    int count = 0;
    cudaError_t e;
    char rt[16], drv[16];

    memset(info, 0, sizeof *info);
    info->device = device;
    gpu_versions(&info->runtime_version, &info->driver_version);
    ver(rt, sizeof rt, info->runtime_version);
    ver(drv, sizeof drv, info->driver_version);

    if (info->driver_version == 0)
        return ge_fail("no CUDA driver found");
    if (info->driver_version < info->runtime_version)
        return ge_fail("CUDA driver %s is older than the runtime %s this build needs", drv, rt);
    /* Host threads block in waits instead of spinning (DESIGN.md §4); must be
     * set before the primary context is created. */
    cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync);
    e = cudaGetDeviceCount(&count);
    if (e == cudaErrorInsufficientDriver)
        return ge_fail("CUDA driver %s is too old for runtime %s", drv, rt);
    if (e == cudaErrorNoDevice || (e == cudaSuccess && count == 0)) {
        cudaGetLastError();
        return ge_fail("no CUDA device found");
    }
    if (e != cudaSuccess) {
        cudaGetLastError();
        return ge_fail("CUDA unavailable: %s", cudaGetErrorString(e));
    }
    if (device < 0 || device >= count)
        return ge_fail("no CUDA device %d (%d found)", device, count);
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
        return ge_fail("CUDA device %d unusable: %s", device, cudaGetErrorString(e));
    }
    cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync);
    e = kernels_probe_gpu();
    if (e != cudaSuccess) {
        cudaGetLastError();
        if (e == cudaErrorNoKernelImageForDevice || e == cudaErrorInvalidDeviceFunction)
            return ge_fail("no kernel image for %s (compute capability %d.%d); rebuild with "
                           "SMS=%d%d", info->name, info->cc_major, info->cc_minor,
                           info->cc_major, info->cc_minor);
        return ge_fail("cannot load kernels on %s: %s", info->name, cudaGetErrorString(e));
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* the probe on a thread of its own (start-up)                               */

#include <pthread.h>
#include <stdlib.h>

struct gpu_probe_job {
    pthread_t th;
    int device, rc;
    gpu_info info;
    ge_why_rec why; /* the probe's record, for the waiting thread */
    double t_ready; /* ge_now() when the probe ended */
    int done;       /* set (atomically) when it ended */
};

static void *probe_main(void *arg)
{
    gpu_probe_job *j = arg;
    j->rc = gpu_probe(j->device, &j->info);
    ge_why_save(&j->why);
    if (j->rc == 0)
        /* the primary context exists now (cudaSetDevice); cudaFree(0) is
         * the documented way to finish creating it before anyone waits */
        cudaFree(0);
    j->t_ready = ge_now();
    __atomic_store_n(&j->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

gpu_probe_job *gpu_probe_start(int device, int eager)
{
    gpu_probe_job *j = calloc(1, sizeof *j);
    if (!j)
        return NULL;
    j->device = device;
    /* CUDA 12.2+ loads each kernel lazily at its first launch, i.e. on
     * the first frame, on the critical path.  Loading our few kernels
     * with the context moves that cost into this thread, which runs while
     * the input and the encoder open.  A user's setting wins (and lets
     * the two be compared: CUDA_MODULE_LOADING=LAZY).  Not with nvJPEG
     * (eager: false): its library holds many kernels we never launch.
     * setenv races with getenv in other threads: hence "before any other
     * thread starts" (the signal thread calls neither). */
    if (eager)
        setenv("CUDA_MODULE_LOADING", "EAGER", 0);
    if (pthread_create(&j->th, NULL, probe_main, j)) {
        free(j);
        return NULL;
    }
    return j;
}

int gpu_probe_done(const gpu_probe_job *j)
{
    return __atomic_load_n(&j->done, __ATOMIC_ACQUIRE);
}

int gpu_probe_wait(gpu_probe_job **jp, gpu_info *info, double *t_ready)
{
    gpu_probe_job *j = *jp;
    int rc;
    *jp = NULL;
    pthread_join(j->th, NULL);
    /* the thread's current device does not carry over: make it current
     * here too, as gpu_probe would have (cheap: the context exists) */
    if (j->rc != 0)
        ge_why_load(&j->why);
    if (j->rc == 0 && cudaSetDevice(j->device) != cudaSuccess) {
        cudaGetLastError();
        j->rc = ge_fail("CUDA device %d unusable", j->device);
    }
    *info = j->info;
    if (t_ready)
        *t_ready = j->t_ready;
    rc = j->rc;
    free(j);
    return rc;
}
