/*
 * vid_internal.h — what the video reader (vid_read.c) and the writer
 * (venc*.c) share inside src/io; not for other callers.
 */
#ifndef GPUEDGE_VID_INTERNAL_H
#define GPUEDGE_VID_INTERNAL_H

#include <stdio.h>
#include <libavutil/error.h>
#include <libavutil/rational.h>

#include "signals.h"

/* Installs the av_log callback that counts readers' decoding errors and
 * sets libav's level (once; see vid_read.c). */
void vid_log_init(void);

static inline const char *vid_err_str(int err, char *buf, size_t n)
{
    if (av_strerror(err, buf, n) < 0)
        snprintf(buf, n, "error %d", err);
    return buf;
}

/* libav reads and writes poll this (DESIGN.md §6: interrupt_callback). */
static inline int vid_interrupt_cb(void *opaque)
{
    (void)opaque;
    return sig_stop != 0;
}

static inline int vid_valid_q(AVRational q)
{
    return q.num > 0 && q.den > 0;
}

#endif
