/*
 * gpu.h — is a GPU usable, and which (DESIGN.md §3 --backend, --device).
 */
#ifndef GPUEDGE_GPU_H
#define GPUEDGE_GPU_H

#include <stddef.h>

typedef struct gpu_info {
    int device;
    char name[256];
    int cc_major, cc_minor;
    int runtime_version, driver_version; /* 13000 = 13.0; 0 = none */
    size_t total_mem;
    int sm_count;
} gpu_info;

/* Checks device `device`: a driver, new enough, the device exists, and a
 * kernel image loads for it.  Sets blocking-sync scheduling and makes the
 * device current.  Returns 0, or -1 with a one-phrase reason recorded
 * (ge_fail, DESIGN.md §9: "no CUDA device found", "CUDA driver too old
 * (...)", ...). */
int gpu_probe(int device, gpu_info *info);

/* The same probe on a thread of its own, so that CUDA initialises while
 * the caller opens its input and output (start-up).  Call
 * gpu_probe_start before the process starts other threads (it may setenv
 * CUDA_MODULE_LOADING=EAGER when eager and the variable is unset) and
 * with signals already blocked (DESIGN.md §6: the thread and CUDA's inherit
 * the mask); NULL
 * when no thread could start (then call gpu_probe).  gpu_probe_wait joins
 * it, makes the device current on the calling thread and returns what
 * gpu_probe would have (its record too), with the time the probe ended (ge_now) in
 * *t_ready (may be NULL); it frees the job and sets *jp to NULL.  Every
 * started job must be waited for. */
typedef struct gpu_probe_job gpu_probe_job;
gpu_probe_job *gpu_probe_start(int device, int eager);
/* Has it ended (without waiting)?  1 / 0. */
int gpu_probe_done(const gpu_probe_job *j);
int gpu_probe_wait(gpu_probe_job **jp, gpu_info *info, double *t_ready);

/* Versions only (for --version); never fails. */
void gpu_versions(int *runtime_version, int *driver_version);
/* Whether a CUDA driver library can be loaded (libcuda.so.1), without
 * the runtime: its calls wait while another thread initialises CUDA
 * (cudaDriverGetVersion waits for the probe's cuInit).
 * 1 / 0; says nothing about the devices. */
int gpu_driver_present(void);

/* How many CUDA devices the runtime shows (CUDA_VISIBLE_DEVICES); 0 when
 * none or on any error. */
int gpu_count(void);

/* Makes `device` current on the calling thread (after gpu_probe said it
 * works).  0, or -1. */
int gpu_set_device(int device);

/* Pinned host memory (cudaMallocHost) for host_buf: NULL when CUDA cannot
 * give it (the caller falls back to malloc).  gpu_host_free takes only
 * what gpu_host_alloc gave. */
void *gpu_host_alloc(size_t n);
void gpu_host_free(void *p);

/* 1 in a CUDA build (gpu.c); 0 in the CPU-only variant (make CUDA=0:
 * gpu_none.c, where every GPU entry point fails with GPU_NONE_WHY, util.h). */
int gpu_compiled(void);

#endif
