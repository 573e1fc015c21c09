/*
 * border.h — the border rule of DESIGN.md §1.5 for the fast implementations: the
 * staged and fused kernels and the CPU backend (one copy, so they cannot
 * drift apart).  The CPU reference and the GPU tests keep their own,
 * written independently, and the tests compare them.  C and CUDA.
 *
 * map_border returns the in-image index for position i of a row or column of n, or -1
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

/* The smallest (*lo) and largest (*hi) in-image index that the virtual
 * indices a..b map to, for an image n long.  The indices inside map to
 * themselves; only those past an edge are mapped one by one (a caller's
 * a..b reaches at most a halo past either edge).  The mappings are
 * 1-Lipschitz, so the result is a run no longer than b - a + 1.  Returns 0
 * when every index falls outside (zero border): *lo, *hi are then n, -1. */
GE_BORDER_FN int map_range(long a, long b, int n, int border, int *lo, int *hi)
{
    long l = n, h = -1, v;
    const long ia = a < 0 ? 0 : a, ib = b > n - 1 ? n - 1 : b;
    if (ia <= ib) {
        l = ia;
        h = ib;
    }
    for (v = a; v <= b && v < 0; v++) {
        const int m = map_border((int)v, n, border);
        if (m >= 0 && m < l) l = m;
        if (m > h) h = m;
    }
    for (v = b; v >= a && v >= n; v--) {
        const int m = map_border((int)v, n, border);
        if (m >= 0 && m < l) l = m;
        if (m > h) h = m;
    }
    *lo = (int)l;
    *hi = (int)h;
    return h >= 0;
}

/* The row-window check of the launchers (kernels.h, fused.h): outputs
 * [y0, y0 + rows) of an image H rows high, input window [in_y0, in_y0 +
 * in_rows), and every row the outputs read — `reach` rows above and below,
 * border-mapped against H — inside the window.  Nothing is read for
 * rows == 0. */
GE_BORDER_FN int window_holds(int H, int in_y0, int in_rows, int y0, int rows,
                              int reach, int border)
{
    int lo, hi;
    if (H <= 0 || y0 < 0 || rows < 0 || y0 > H - rows || in_rows < 0 ||
        in_y0 < 0 || in_y0 > H - in_rows)
        return 0;
    if (rows == 0 ||
        !map_range((long)y0 - reach, (long)y0 + rows - 1 + reach, H, border, &lo, &hi))
        return 1;
    return lo >= in_y0 && hi < in_y0 + in_rows;
}

#endif
