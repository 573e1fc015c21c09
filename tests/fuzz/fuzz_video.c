/*
 * fuzz_video.c — libFuzzer harness for the video open/decode path:
 * vid_open_mem (our AVIOContext over the input bytes), vid_get_info, then
 * vid_next for up to FUZZ_VIDEO_FRAMES frames (frame conversion, luma and
 * RGB paths chosen by the first byte) with the CPU reference over small
 * frames, and vid_close.  Debian's libav is not instrumented: coverage
 * comes from our code only, so this harness is run for a time, not an
 * execution count (make fuzz).  Links no CUDA: host_buf is plain malloc
 * here (pipeline.c's version can pin memory with CUDA).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <libavutil/mem.h>

#include "frames.h"
#include "fuzz_common.h"
#include "util.h"
#include "video_io.h"

#define FUZZ_VIDEO_FRAMES 8

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int host_buf_reserve(host_buf *b, size_t n)
{
    void *p;
    if (n <= b->cap)
        return 0;
    p = malloc(n);
    if (!p)
        return -1;
    free(b->p);
    b->p = p;
    b->cap = n;
    return 0;
}

void host_buf_free(host_buf *b)
{
    free(b->p);
    b->p = NULL;
    b->cap = 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    ge_quiet = 1;
    /* one allocation above 512 MiB is refused by libav (as by a real
     * memory limit) instead of tripping libFuzzer's malloc limit */
    av_max_alloc(512u << 20);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    vid_opts o;
    vid_reader *r = NULL;
    host_buf buf = {0};
    src_frame fr;
    vid_info info;
    uint8_t ctl = size ? data[0] : 0;
    int i;

    memset(&o, 0, sizeof o);
    o.max_frames = FUZZ_VIDEO_FRAMES;
    o.rgb = ctl & 1;
    o.threads = 1;
    if (vid_open_mem(data, size, "fuzz", &o, &r) != 0) {
        if (r)
            abort();
        return 0;
    }
    vid_get_info(r, &info);
    for (i = 0; i < FUZZ_VIDEO_FRAMES; i++) {
        memset(&fr, 0, sizeof fr);
        int rc = vid_next(r, &fr, &buf);
        if (rc < 0 || rc == 0)
            break;
        if (rc != 1 || !fr.f.data || fr.f.width < 1 || fr.f.height < 1)
            abort();
        fuzz_reference(&fr.f, ctl);
    }
    vid_close(&r);
    host_buf_free(&buf);
    return 0;
}
