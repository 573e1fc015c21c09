/*
 * border.h — the border rule of SPEC §1.5 for the fast implementations: the
 * staged and fused kernels and the CPU backend (one copy, so they cannot
 * drift apart).  The CPU reference and the GPU tests keep their own,
 * written independently, and the tests compare them.  C and CUDA.
 *
 * Returns the in-image index for position i of a row or column of n, or -1
 * for "the value is 0" (zero border, outside).  Any i, any n >= 1:
 *   replicate   clamp to [0, n-1];
 *   reflect101  n = 1 -> 0, else |i| mod (2n-2), then 2n-2-i past the end;
 *   zero        -1 outside.
 */
#ifndef GPUEDGE_BORDER_H
#define GPUEDGE_BORDER_H

#include "edge.h"

#ifdef __CUDACC__
#define GE_BORDER_FN static __host__ __device__ __forceinline__
#else
#define GE_BORDER_FN static inline
#endif

GE_BORDER_FN int map_border(int i, int n, int border)
{
    if ((unsigned)i < (unsigned)n)
        return i;
    if (border == GE_BORDER_REPLICATE)
        return i < 0 ? 0 : n - 1;
    if (border == GE_BORDER_REFLECT101) {
        if (n == 1)
            return 0;
        const unsigned p = 2u * (unsigned)n - 2u;
        unsigned a = i < 0 ? 0u - (unsigned)i : (unsigned)i;
        a %= p;
        if (a >= (unsigned)n)
            a = p - a;
        return (int)a;
    }
    return -1;
}

#endif
