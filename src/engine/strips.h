/*
 * strips.h — huge frames in horizontal strips (DESIGN.md §4's row
 * windows).  An output strip of rows [y0, y1) reads the input rows that
 * its Sobel and blur taps reach: virtual rows y0-1-r .. y1+r, border-mapped
 * against the full height (DESIGN.md §1.5).  Processed with that window, a
 * strip's edge rows and histogram are bit for bit those of the whole frame.
 * Plain C, no CUDA: the planner is tested without a GPU.
 */
#ifndef GPUEDGE_STRIPS_H
#define GPUEDGE_STRIPS_H

#include <stddef.h>

/* Input rows [*lo, *hi] (inclusive) that output rows [y0, y1) read, for
 * radius r and `border` on an image h rows high.  0 <= y0 < y1 <= h.  The
 * window has at most (y1 - y0) + 2r + 2 rows. */
void strip_window(int y0, int y1, int h, int r, int border, int *lo, int *hi);

/* Output rows a strip may have so that `bufs` copies of one strip's
 * buffers — its input window (rows + 2r + 2 rows of in_row bytes) and its
 * edge rows (out_row bytes each) — fit in `budget` bytes: at most h, at
 * least 1, or 0 when not even a one-row strip fits. */
int strip_rows(int h, int r, size_t in_row, size_t out_row, int bufs,
               size_t budget);

/* Bytes `bufs` copies of the buffers of a strip of `rows` rows take
 * (SIZE_MAX on overflow). */
size_t strip_bytes(int rows, int r, size_t in_row, size_t out_row, int bufs);

#endif
