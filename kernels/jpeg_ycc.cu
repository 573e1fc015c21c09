/*
 * jpeg_ycc.cu — jycc_rgb_gpu (jpeg_ycc_gpu.h): one thread a pixel, every
 * pixel by jpeg_ycc.h's jycc_pixel, the function the CPU test proves
 * against libjpeg-turbo.  Memory-bound and small beside the decode: a
 * 14.7 Mpx photo reads ~22 MB and writes ~44 MB.
 */
#include "jpeg_ycc_gpu.h"

__global__ void jycc_rgb_kernel(jycc_planes p, uint8_t *rgb, size_t rgb_pitch)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= p.width || y >= p.height)
        return;
    jycc_pixel(&p, x, y, rgb + (size_t)y * rgb_pitch + 3 * (size_t)x);
}

extern "C" cudaError_t jycc_rgb_gpu(const jycc_planes *p, uint8_t *rgb, size_t rgb_pitch,
                                    cudaStream_t stream)
{
    const dim3 block(64, 4);
    const dim3 grid((p->width + block.x - 1) / block.x, (p->height + block.y - 1) / block.y);
    jycc_rgb_kernel<<<grid, block, 0, stream>>>(*p, rgb, rgb_pitch);
    return cudaGetLastError();
}
