/*
 * hostbuf.h — growing the engine's buffers: a size with headroom (a quarter
 * more, rounded up to 2 MiB, so that a batch of equal frames grows once),
 * and frames.h's host_buf_reserve / host_buf_free, defined in hostbuf.c
 * (pinned memory comes from the library's gpu_host_alloc).
 */
#ifndef GPUEDGE_HOSTBUF_H
#define GPUEDGE_HOSTBUF_H

#include <stddef.h>

#include "frames.h"

size_t buf_headroom(size_t n);

#endif
