/*
 * vid_seq.c — image-sequence names ("frames/e_%05d.png") through
 * libavformat's av_get_frame_filename2, so that a pattern means what it
 * means to FFmpeg's image2 muxer.
 */
#include "video_io.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <libavformat/avformat.h>

int vid_is_sequence(const char *pattern)
{
    char buf[4096];
    return pattern && av_get_frame_filename2(buf, sizeof buf, pattern, 1, 0) == 0;
}

int vid_sequence_name(const char *pattern, long index, char *buf, size_t size)
{
    size_t need;
    char *tmp;
    int ret;

    if (buf && size)
        buf[0] = '\0';
    if (!pattern || !buf || size < 2 || index < 0 || index > INT_MAX)
        return -1;
    /* av_get_frame_filename2 cuts a name that does not fit and still says
     * 0: expand into room for the longest result (a %d is at most 19
     * digits there), then check the length.  flags 0: exactly one %d; the
     * pattern never goes through printf. */
    need = strlen(pattern) + 32;
    if (need > INT_MAX || !(tmp = malloc(need)))
        return -1;
    ret = av_get_frame_filename2(tmp, (int)need, pattern, (int)index, 0);
    if (ret == 0 && strlen(tmp) < size)
        memcpy(buf, tmp, strlen(tmp) + 1);
    else
        ret = -1;
    free(tmp);
    return ret < 0 ? -1 : 0;
}

