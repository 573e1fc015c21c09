/*
 * vplan.h — how a video is decoded: NVDEC or software or both, how many
 * decoders, how much decoded ahead (the policy; vsource.c is the
 * mechanism).  Every constant here was chosen by measurement:
 * BENCHMARKS.md "Constants chosen by measurement".
 *
 * --hwdec=auto (vsrc_auto_nvdec): NVDEC when the file keeps at least
 * VS_AUTO_SESSIONS sessions busy and holds at least VS_AUTO_GPX gigapixels
 * to decode, or when the run has at most VS_AUTO_FEW_THREADS threads; else
 * software: a session starts its first frame later than software does, so
 * one or two sessions over a short clip lose to many software threads.
 * NVDEC runs VS_HW_DECODERS sessions at most, one libav thread each (more
 * gave nothing).  More sessions than the GPU has NVDEC engines: a session
 * alone does not keep its engine busy, and a long file's segments come
 * shorter, so the last one ends sooner (figures: BENCHMARKS.md).
 *
 * Both at once (vsrc_mix_sw, DESIGN.md §4): in a batch of videos whose
 * writers leave the cores free, engines that decode in software run
 * beside the engines on NVDEC, on the threads NVDEC's leave, each taking
 * the batch's next file when done with its last: each kind decodes in
 * proportion to its speed.  Not within one file: software decoders
 * taking a long file's segments from its end beside the sessions gained
 * 5-10 % to /dev/null at 4K, lost 5 % to .mkv (the writer binds it) and
 * nothing at 1080p (BENCHMARKS.md).
 *
 * Frames decoded ahead of their turn, all segments together: host frames
 * within vid_opts.mem_budget (vsrc_host_budget: a 1/VS_HOST_RAM_SHARE of
 * physical memory within VS_HOST_BUDGET_MIN..MAX, a quarter of it at most,
 * shared by the engines that decode videos at once, VS_HOST_ENGINE_MIN
 * each at least: 16 single-thread decoders of 1080p segments of 125
 * frames need about 4 GB, and 1 GiB kept 5 of them busy), device frames
 * within vsrc_dev_budget (an eighth of the free GPU memory, within
 * VS_DEV_BUDGET_MIN..MAX).
 */
#ifndef GPUEDGE_VPLAN_H
#define GPUEDGE_VPLAN_H

#include <stddef.h>

#include "video_io.h"

#define VS_AUTO_SESSIONS 2
#define VS_AUTO_GPX 1.0
#define VS_AUTO_FEW_THREADS 8
#define VS_HW_DECODERS 10
#define VS_DEV_BUDGET_MIN ((size_t)2 << 30)
#define VS_DEV_BUDGET_MAX ((size_t)8 << 30)
#define VS_HOST_RAM_SHARE 16
#define VS_HOST_BUDGET_MIN ((size_t)1 << 30)
#define VS_HOST_BUDGET_MAX ((size_t)8 << 30)
#define VS_HOST_ENGINE_MIN ((size_t)256 << 20)
/* Both kinds at once: the threads kept for the NVDEC engines (their
 * sessions' threads, pipelines and writers); the threads of each software
 * engine's decoder. */
#define VS_MIX_KEEP 4
#define VS_MIX_SW_THREADS 2
/* ... and at most this many software engines (each a pipeline, with its
 * buffers on the device) */
#define VS_MIX_MAX 9

/* --hwdec=auto's rule: NVDEC (1) or software (0) for a video whose
 * segments would run on `sessions` NVDEC sessions (1: not segmented),
 * `gpx` gigapixels to decode, `threads` CPU threads. */
int vsrc_auto_nvdec(int sessions, long threads, double gpx);
/* Whether that rule may choose NVDEC for a file of `gpx` gigapixels
 * (sessions unknown: before the keyframe scan). */
int vsrc_auto_may_nvdec(long threads, double gpx);
/* Software engines to run beside NVDEC's over `threads` CPU threads (0 at
 * VS_AUTO_FEW_THREADS or fewer: the cores are the rest of the run's);
 * *sw_threads: the threads of each. */
int vsrc_mix_sw(long threads, int *sw_threads);
/* Gigapixels a video holds (its frames, from the container's count or
 * its duration and rate; 0 when neither is known) x width x height. */
double vsrc_info_gpx(const vid_info *vi);
/* GPU bytes NVDEC segments may hold decoded ahead, on a device with
 * `free_bytes` free (an eighth, from 2 GiB or a quarter of what is free
 * if less, to 8 GiB; 64 MiB at least). */
size_t vsrc_dev_budget(size_t free_bytes);
/* Host bytes a source's software segments may hold decoded ahead, on a
 * machine of `phys_bytes` of memory (0: unknown) where `engines` sources
 * decode at once (a sixteenth of it, from 1 GiB or a quarter of it if
 * less, to 8 GiB; 1 GiB when unknown; that divided by the engines,
 * 256 MiB each at least, never more than one source's). */
size_t vsrc_host_budget(size_t phys_bytes, int engines);
/* This machine's physical memory in bytes (0: unknown). */
size_t vsrc_phys_bytes(void);

#endif
