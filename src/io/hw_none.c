/*
 * hw_none.c — the CPU-only variant's GPU decoders (make CUDA=0): compiled
 * instead of hwdec.c and nvjpeg.c.  Every attempt fails with GPU_NONE_WHY,
 * and the callers decode in software as on a machine without a GPU.
 */
#include "hwdec.h"

#include <stdio.h>
#include <string.h>

#include "nvjpeg.h"
#include "util.h"

// ---------------------------------------------------------------------------
// hwdec.h: every NVDEC attempt fails in hw_open (the reader decodes in
// software, as on a machine without a GPU)

/* sw itself, so that the reader's attempt fails in hw_open with the reason,
 * as on a machine without a GPU */
const AVCodec *hw_find_decoder(const AVCodec *sw, int *hw_only)
{
    *hw_only = 0;
    return sw;
}

int hw_open(AVCodecContext *dec, int device, hw_dec **out)
{
    (void)dec;
    (void)device;
    *out = NULL;
    return ge_fail("%s", GPU_NONE_WHY);
}

AVBufferRef *hw_device_ref(hw_dec *h)
{
    (void)h;
    return NULL;
}

void hw_close(hw_dec **h) { *h = NULL; }

int hw_describe(const AVFrame *frame, enum AVPixelFormat sw_fmt, ge_frame *g)
{
    (void)frame;
    (void)sw_fmt;
    (void)g;
    return ge_fail("%s", GPU_NONE_WHY);
}

int hw_take(hw_dec *h, AVFrame *frame, src_frame *fr)
{
    (void)h;
    (void)frame;
    (void)fr;
    return ge_fail("%s", GPU_NONE_WHY);
}

size_t hw_frame_bytes(const src_frame *fr)
{
    (void)fr;
    return 0;
}

int hw_detach(src_frame *fr)
{
    (void)fr;
    return ge_fail("%s", GPU_NONE_WHY);
}

int hw_on_surface(const src_frame *fr)
{
    (void)fr;
    return 0;
}

void hw_detach_stats(long *mallocs, double *seconds, size_t *cached)
{
    *mallocs = 0;
    *seconds = 0;
    *cached = 0;
}

size_t hw_mem_free(int device)
{
    (void)device;
    return 0;
}

// ---------------------------------------------------------------------------
// nvjpeg.h: nvj_load fails first (run.c), so nothing else is reached

int nvj_load(void)
{
    return ge_fail("%s", GPU_NONE_WHY);
}

int nvj_open(int max_batch, nvj_dec **out)
{
    (void)max_batch;
    *out = NULL;
    return nvj_load();
}

const char *nvj_backend(const nvj_dec *d)
{
    (void)d;
    return "none";
}

const char *nvj_describe(const nvj_dec *d)
{
    (void)d;
    return "nvJPEG: " GPU_NONE_WHY;
}

int nvj_decode(nvj_dec *d, nvj_pic *pics, int n)
{
    (void)d;
    for (int i = 0; i < n; i++) {
        pics[i].ok = 0;
        snprintf(pics[i].why, sizeof pics[i].why, "%s", GPU_NONE_WHY);
    }
    return -1;
}

void nvj_release(nvj_dec *d, nvj_pic *p)
{
    (void)d;
    (void)p;
}

void nvj_close(nvj_dec **d) { *d = NULL; }

int nvj_read_file(const char *path, unsigned char **data, size_t *len)
{
    (void)path;
    *data = NULL;
    *len = 0;
    return ge_fail("%s", GPU_NONE_WHY);
}

int nvj_is_jpeg(const unsigned char *data, size_t len)
{
    return len >= 3 && data[0] == 0xFF && data[1] == 0xD8 && data[2] == 0xFF;
}
