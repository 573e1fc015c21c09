/*
 * gpu.h — is a GPU usable, and which (SPEC §3 --backend, --device).
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
 * device current.  Returns 0, or -1 with a one-phrase reason in `why`
 * ("no CUDA device found", "CUDA driver too old (...)", ...). */
int gpu_probe(int device, gpu_info *info, char *why, size_t n);

/* Versions only (for --version); never fails. */
void gpu_versions(int *runtime_version, int *driver_version);

#endif
