/*
 * probe.cu — "is there a kernel image for this GPU?"
 *
 * cudaGetDeviceCount succeeding is not enough: a binary built without a
 * cubin or PTX the device can run fails only at the first launch.  Asking
 * for a kernel's attributes loads the module and reports
 * cudaErrorNoKernelImageForDevice up front, so --backend=auto can fall back
 * cleanly.  One trivial kernel: no launch, no memory.
 */
#include "kernels.h"

static __global__ void probe_kernel(int *p)
{
    if (p)
        *p = 1;
}

extern "C" cudaError_t kernels_probe_gpu(void)
{
    cudaFuncAttributes attr;
    return cudaFuncGetAttributes(&attr, probe_kernel);
}
