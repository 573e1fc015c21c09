/*
 * vsource.h — one video decoded by several decoders at once, over the
 * public vid_* API (video_io.h).
 *
 * A long file is cut at keyframes into segments; K decoder threads each
 * decode a different segment (vid_open seeking to the segment's keyframe,
 * stopping at the next segment's first frame), and vsrc_next hands the
 * frames on in order, segment after segment: the frames, timestamps and
 * durations a single vid_reader gives, so an output's bytes equal a
 * sequential run's.  NVDEC sessions are the K decoders when the reader
 * decodes on NVDEC (DESIGN.md §4).
 *
 * When it segments: a regular seekable file (not "-", not a URL), host
 * frames, K >= 2 (from vid_opts.threads: one decoder a thread, at most
 * VS_MAX_DECODERS), and a demux-only scan that finds every packet of the
 * stream with a pts, no two equal, and keyframes far enough apart to give
 * at least two segments of VS_MIN_SEG frames.  Anything else: one
 * vid_reader, exactly as before (vsrc_* then pass straight through).
 * Decoded frames wait for their turn in memory, at most vid_opts.mem_budget
 * bytes of them (0: vsrc_host_budget's for one engine; the segment being
 * handed on always proceeds).
 */
#ifndef GPUEDGE_VSOURCE_H
#define GPUEDGE_VSOURCE_H

#include <stdint.h>

#include "frames.h"
#include "video_io.h"
#include "vplan.h"

typedef struct vsrc vsrc;

/* Opens `path` as vid_open does (same records, same failures); plans
 * the segments.  0, or -1 (why recorded, *out NULL). */
int vsrc_open(const char *path, const vid_opts *o, vsrc **out);
/* vid_next's contract: 1 a frame (fr->index counts the file's frames
 * from 0), 0 the end, -1 failed (why recorded, also a decoder thread's;
 * none on sig_stop). */
int vsrc_next(vsrc *s, src_frame *fr, host_buf *buf);
/* After vsrc_next returned 0: the next file (`path`) when its packets
 * followed this one's into the same decoder (vid_opts.next_input: only
 * a file not segmented), open and decoding; else NULL. */
vsrc *vsrc_successor(vsrc *s, const char *path);
/* Joins the decoders, frees everything.  NULL-safe; *s = NULL. */
void vsrc_close(vsrc **s);

void vsrc_get_info(const vsrc *s, vid_info *info);
void vsrc_last_ts(const vsrc *s, int64_t *pts, int64_t *duration);
long vsrc_corrupt_count(const vsrc *s);
/* Segments planned (1: not segmented). */
int vsrc_segments(const vsrc *s);
/* Frames the segment being handed on holds decoded ahead (0 when not
 * segmented): it decodes ahead within the budget (test_vauto). */
int vsrc_head_queued(vsrc *s);
/* 1 when the source decodes on NVDEC (its frames may be on the device). */
int vsrc_nvdec(const vsrc *s);

#endif
