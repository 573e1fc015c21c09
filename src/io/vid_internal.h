/*
 * vid_internal.h — what the video reader (vid_read.c) and the writer
 * (venc*.c) share inside src/io; not for other callers.
 */
#ifndef GPUEDGE_VID_INTERNAL_H
#define GPUEDGE_VID_INTERNAL_H

#include <stdint.h>
#include <stdio.h>
#include <libavutil/error.h>
#include <libavutil/rational.h>

#include "signals.h"

/* Installs the av_log callback that counts readers' decoding errors and
 * sets libav's level (once; see vid_read.c). */
void vid_log_init(void);

/* 1 when an H.264 access unit (n bytes at p) holds an IDR slice;
 * lensize: avcC's NAL length bytes, 0 for Annex B start codes (vid_read.c
 * chains a file only onto one that starts so). */
int vid_h264_idr(const uint8_t *p, int n, int lensize);

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
