/*
 * strips.c — the strip planner (strips.h).
 */
#include "strips.h"

#include <limits.h>
#include <stdint.h>

#include "border.h"

void strip_window(int y0, int y1, int h, int r, int border, int *lo, int *hi)
{
    /* The rows inside the image map to themselves; only the r + 1 virtual
     * rows past each edge need the mapping (each maps inside or to "0"). */
    long a = (long)y0 - 1 - r, b = (long)y1 + r;
    long l = a < 0 ? 0 : a, u = b > h - 1 ? h - 1 : b;
    long v;

    for (v = a; v < 0 && v <= b; v++) {
        int m = map_border((int)v, h, border);
        if (m >= 0 && m < l)
            l = m;
        if (m > u)
            u = m;
    }
    for (v = b; v >= h && v >= a; v--) {
        int m = map_border((int)v, h, border);
        if (m >= 0 && m < l)
            l = m;
        if (m > u)
            u = m;
    }
    *lo = (int)l;
    *hi = (int)u;
}

size_t strip_bytes(int rows, int r, size_t in_row, size_t out_row, int bufs)
{
    const size_t win = (size_t)rows + 2 * (size_t)r + 2;
    size_t a, b;

    if (rows < 0 || r < 0 || bufs < 1)
        return SIZE_MAX;
    if (in_row && win > SIZE_MAX / in_row)
        return SIZE_MAX;
    a = win * in_row;
    if (out_row && (size_t)rows > SIZE_MAX / out_row)
        return SIZE_MAX;
    b = (size_t)rows * out_row;
    if (a > SIZE_MAX - b || a + b > SIZE_MAX / (size_t)bufs)
        return SIZE_MAX;
    return (a + b) * (size_t)bufs;
}

int strip_rows(int h, int r, size_t in_row, size_t out_row, int bufs,
               size_t budget)
{
    int lo = 1, hi = h;

    if (h < 1 || strip_bytes(1, r, in_row, out_row, bufs) > budget)
        return 0;
    /* strip_bytes grows with rows: the largest that fits */
    while (lo < hi) {
        int mid = lo + (hi - lo + 1) / 2;
        if (strip_bytes(mid, r, in_row, out_row, bufs) <= budget)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}
