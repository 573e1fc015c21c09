/*
 * vscan.h — the plan of a video decoded in segments (vsource.c): a
 * demux-only scan for the pts of every frame and the clean cuts, and the
 * cut of the frames a run delivers into segments for its decoders.
 */
#ifndef GPUEDGE_VSCAN_H
#define GPUEDGE_VSCAN_H

#include <stddef.h>
#include <stdint.h>

/* No segment shorter than this (frames). */
#define VS_MIN_SEG 24

/* What the scan found: every frame's pts (sorted), the clean cuts' pts
 * (sorted), the stream's start (s0, ticks), and the frames the run
 * delivers (pts[first .. first+limit)) from ustart (INT64_MIN: the
 * start). */
typedef struct vs_scan {
    int64_t *pts, *keys, ustart, s0;
    size_t npts, nkeys, first, limit;
} vs_scan;

/* A segment: the pts range [start, end) (start INT64_MIN: from the first
 * frame delivered; end INT64_MAX: to the last). */
typedef struct vs_cut_seg {
    int64_t start, end;
} vs_cut_seg;

/* Reads every packet of the best video stream of the regular file `path`
 * (the one vid_open takes) without decoding; start (seconds, 0: none) and
 * max_frames (-1: all) as vid_opts has them.  0 with *sc filled, or -1:
 * not segmentable (nothing recorded: the file is then decoded in one go,
 * and vid_open records what is wrong with it). */
int vs_scan_file(const char *path, double start, long max_frames, vs_scan *sc);
void vs_scan_free(vs_scan *sc);

/* Cuts the delivered frames into `want` segments of about equal length,
 * each cut at the clean cut nearest its share (fewer where the keyframes
 * are too far apart).  0 with *segs (malloc'd, *nseg >= 2), or -1. */
int vs_cut(const vs_scan *sc, size_t want, vs_cut_seg **segs, int *nseg);

#endif
