/*
 * gpu_none.c — the CPU-only variant's GPU entry points (make CUDA=0, or
 * automatically when the Makefile finds no nvcc).
 *
 * Compiled instead of the CUDA-only sources (the Makefile's CUDA_C_SRCS:
 * gpu.c, hwdec.c, nvjpeg.c, the kernels' .cu files) and pipeline.c's GPU engine
 * (#if GE_CUDA), so the build needs no nvcc, no CUDA headers and no
 * libcudart.  Every entry point that would start the GPU fails with
 * GPU_NONE_WHY ("built without CUDA"); the callers then behave as on a
 * machine without a GPU: --backend=auto takes the CPU backend, and
 * --backend=gpu, --hwdec=nvdec and --jpeg-decoder=nvjpeg fail with that
 * reason (run.c).  A new CUDA-only module adds its stubs here.
 */
#include "gpu.h"

#include <stdio.h>
#include <string.h>

#include "hwdec.h"
#include "nvjpeg.h"
#include "pipeline.h"
#include "util.h"

// ---------------------------------------------------------------------------
// gpu.h

int gpu_compiled(void) { return 0; }

int gpu_driver_present(void) { return 0; }

void gpu_versions(int *runtime_version, int *driver_version)
{
    *runtime_version = 0;
    *driver_version = 0;
}

int gpu_probe(int device, gpu_info *info, char *why, size_t n)
{
    memset(info, 0, sizeof *info);
    info->device = device;
    snprintf(why, n, "%s", GPU_NONE_WHY);
    return -1;
}

/* No thread to start: NULL sends the caller to gpu_probe (gpu.h). */
gpu_probe_job *gpu_probe_start(int device, int eager)
{
    (void)device;
    (void)eager;
    return NULL;
}

int gpu_probe_done(const gpu_probe_job *j)
{
    (void)j;
    return 1;
}

int gpu_probe_wait(gpu_probe_job **jp, gpu_info *info, char *why, size_t n, double *t_ready)
{
    *jp = NULL;
    if (t_ready)
        *t_ready = ge_now();
    return gpu_probe(0, info, why, n);
}

int gpu_count(void) { return 0; }

int gpu_set_device(int device)
{
    (void)device;
    return -1;
}

/* host_buf falls back to malloc */
void *gpu_host_alloc(size_t n)
{
    (void)n;
    return NULL;
}

void gpu_host_free(void *p) { (void)p; }

// ---------------------------------------------------------------------------
// pipeline.h: never reached through run.c (no GPU is ever found)

int pipe_run_gpu(const pipe_opts *o, frame_source *src, frame_sink *sink)
{
    (void)o;
    (void)src;
    (void)sink;
    ge_err(NULL, "the GPU engine: %s", GPU_NONE_WHY);
    return -1;
}

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

int hw_open(AVCodecContext *dec, int device, hw_dec **out, char *why, size_t n)
{
    (void)dec;
    (void)device;
    *out = NULL;
    snprintf(why, n, "%s", GPU_NONE_WHY);
    return -1;
}

AVBufferRef *hw_device_ref(hw_dec *h)
{
    (void)h;
    return NULL;
}

void hw_close(hw_dec **h) { *h = NULL; }

int hw_describe(const AVFrame *frame, enum AVPixelFormat sw_fmt, ge_frame *g, const char **why)
{
    (void)frame;
    (void)sw_fmt;
    (void)g;
    *why = GPU_NONE_WHY;
    return -1;
}

int hw_take(hw_dec *h, AVFrame *frame, src_frame *fr, const char **why)
{
    (void)h;
    (void)frame;
    (void)fr;
    *why = GPU_NONE_WHY;
    return -1;
}

size_t hw_frame_bytes(const src_frame *fr)
{
    (void)fr;
    return 0;
}

int hw_detach(src_frame *fr, const char **why)
{
    (void)fr;
    *why = GPU_NONE_WHY;
    return -1;
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

int nvj_load(char *why, size_t n)
{
    snprintf(why, n, "%s", GPU_NONE_WHY);
    return -1;
}

int nvj_open(int max_batch, nvj_dec **out, char *why, size_t n)
{
    (void)max_batch;
    *out = NULL;
    return nvj_load(why, n);
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

int nvj_read_file(const char *path, unsigned char **data, size_t *len, char *why, size_t n)
{
    (void)path;
    *data = NULL;
    *len = 0;
    snprintf(why, n, "%s", GPU_NONE_WHY);
    return -1;
}

int nvj_is_jpeg(const unsigned char *data, size_t len)
{
    return len >= 3 && data[0] == 0xFF && data[1] == 0xD8 && data[2] == 0xFF;
}
