/*
 * hostbuf.h — growing the engine's buffers: a size with headroom (a quarter
 * more, rounded up to 2 MiB, so that a batch of equal frames grows once),
 * and frames.h's host_buf_reserve / host_buf_free, defined in hostbuf.c
 * (pinned memory comes from the library's gpu_host_alloc); device buffers
 * grow with dev_reserve (devbuf_cuda.c, CUDA builds only).
 */
#ifndef GPUEDGE_HOSTBUF_H
#define GPUEDGE_HOSTBUF_H

#include <stddef.h>

#include "frames.h"

size_t buf_headroom(size_t n);
/* Grows a device buffer *p of *cap bytes to hold n (exact: no headroom;
 * --mem-limit counts what is held), freeing the old one first; the caller
 * has made sure nothing in flight uses it.  Returns 0 or -1 (recorded). */
int dev_reserve(void **p, size_t *cap, size_t n, int exact, const char *name);

#endif
