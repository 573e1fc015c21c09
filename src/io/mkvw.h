/*
 * mkvw.h — an FFVHuff .mkv written here rather than by libavformat's
 * Matroska muxer (DESIGN.md §4, "The .mkv file").
 *
 * Why: that muxer copies each packet three times on its one thread (into
 * the cluster's buffer, into the file's 32 KiB buffer, into the kernel),
 * which bound a long video's writer; and even one write a packet waits
 * for the kernel's copies into the file, one at a time (BENCHMARKS.md).
 * Here each packet is copied once, by one of several threads, into the
 * file's pages.
 *
 * The bytes are FFmpeg 5.1's, for the file venc.c opens: one video track
 * in VFW mode (timestamps are dts), every packet a keyframe, bit-exact
 * headers, no CRC-32 elements, a seekable regular file.  libavformat still
 * writes the header (venc.c, into memory); mkvw_open finds in it the
 * placeholders its trailer fills.  Then, as that muxer does:
 *   - timestamps are in the track's unit (1 ms); a packet without a
 *     duration has the default one; the first negative dts shifts every
 *     timestamp up to 0;
 *   - a cluster ends before a packet when it holds more than 4 KiB (each
 *     packet being a video keyframe) or the packet comes more than 5 s
 *     after it began; one SimpleBlock a packet;
 *   - a cue point a timestamp (the first packet's of equal ones);
 *   - at the end: Cues, the segment's size, the SeekHead (Info, Tracks,
 *     Tags, Cues), the Duration and the track's DURATION tag.
 * A cluster of more than 4 KiB is therefore complete with its first
 * packet: its place in the file is known, and writer threads copy it
 * there at once, into a shared mapping of a file in RAM (each packet's
 * pages populated first, so a full file system is an error, not a
 * SIGBUS), or with pwritev (MKVW_*); a smaller one is held until it
 * ends.
 * tests/unit/test_mkvw.c compares the files with libavformat's, byte for
 * byte.  Errors: the functions return 0 or a negative errno.
 */
#ifndef GPUEDGE_MKVW_H
#define GPUEDGE_MKVW_H

#include <stddef.h>
#include <stdint.h>

#include "safeout.h"

typedef struct mkvw mkvw;

/* How the writers write.  MKVW_MAP_IN_RAM: copying into a mapping of a
 * file in RAM (tmpfs) whose first packet came coded by the GPU
 * (mkvw_cores_free), pwrite otherwise: on a disk file system the
 * mapping's page faults cost more than the kernel's copy, and where the
 * cores code the frames the mapping's extra work (every page zeroed and
 * faulted in) is theirs (BENCHMARKS.md).  MKVW_MAP and MKVW_PWRITE:
 * either everywhere (tests).  A mapping needs a file system that can
 * reserve space (fallocate: the writers' way on a kernel without
 * MADV_POPULATE_WRITE): where it cannot, the writers pwrite. */
enum { MKVW_MAP_IN_RAM, MKVW_MAP, MKVW_PWRITE };

/* Writes `header` (libavformat's, hdr_n bytes) to f.  tb_num/tb_den: the
 * track's time base; def_dur: the duration of a packet that has none
 * (libavformat's guess from the frame rate); how: MKVW_*.  -EINVAL when
 * the header is not laid out as FFmpeg 5.1 lays it out, -ENOMEM, or
 * another -errno (f's error recorded for a write's). */
int mkvw_open(mkvw **out, so_file *f, const uint8_t *header, size_t hdr_n, int tb_num,
              int tb_den, int64_t def_dur, int how);

/* One keyframe packet of n bytes, dts and duration in the track's time
 * base (dur <= 0: none).  The packet goes out on a writer thread, at the
 * place the layout gives it; release(arg) is called once its bytes are no
 * longer needed (on this thread, now or in a later call), whatever the
 * outcome.  -EINVAL for a dts before the previous one; a writer's error
 * (-errno) comes back from a later call. */
int mkvw_put(mkvw *m, const uint8_t *data, size_t n, int64_t dts, int64_t dur,
             void (*release)(void *), void *arg);

/* The packets come coded by the GPU: the cores are free (MKVW_MAP_IN_RAM).
 * Any thread; it counts when called before the first packet of more than
 * 4 KiB reaches mkvw_put. */
void mkvw_cores_free(mkvw *m);

/* Waits for the writers, then the held cluster and the trailer; the file
 * is complete. */
int mkvw_finish(mkvw *m);

/* Also stops the writers (what they have not taken is dropped). */
void mkvw_free(mkvw **m);

#endif
