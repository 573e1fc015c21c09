/*
 * strips.c — the strip planner (strips.h).
 */
#include "strips.h"

#include <stdint.h>

#include "border.h"

void strip_window(int y0, int y1, int h, int r, int border, int *lo, int *hi)
{
    /* row y0 is in the image: the range is never empty */
    map_range((long)y0 - 1 - r, (long)y1 + r, h, border, lo, hi);
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
