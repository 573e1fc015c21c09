/*
 * nvjpeg.h — JPEG decoding on the GPU with NVIDIA's nvJPEG (DESIGN.md §1.9,
 * §4): batches of JPEGs decoded by the hardware JPEG engines (A100, H100,
 * H200; nvJPEG's GPU hybrid backend elsewhere) straight into device memory,
 * where the kernels read them.
 *
 * The library is not linked: it is loaded at run time (dlopen) from
 * $GPUEDGE_NVJPEG (a path to the library file) when set, else by its soname
 * libnvjpeg.so.13 through the dynamic linker's search (LD_LIBRARY_PATH,
 * ld.so.cache).  gpuedge runs without it; only --jpeg-decoder=nvjpeg needs it.
 *
 * Pixels: grey JPEGs (one component) give the Y plane (1 channel); colour
 * JPEGs interleaved RGB (3 channels), upsampled and converted from nvJPEG's
 * planes as libjpeg-turbo does (kernels/jpeg_ycc.h), so where nvJPEG's
 * IDCT is libjpeg-turbo's (the JPEG engines': the GPU tests compare them
 * file by file) the pixels are libjpeg-turbo's.
 *
 * What nvJPEG refuses (progressive and other files the hardware backend
 * does not take, CMYK, 12-bit, corrupt data, out of GPU memory) comes back
 * per image as not decoded, with a reason: the caller decodes those on the
 * CPU.  Files the hardware engines refuse but nvJPEG's hybrid backend
 * takes (progressive ones, mostly) are decoded by the hybrid backend.
 * Never a crash, never a partial image handed on.
 */
#ifndef GPUEDGE_NVJPEG_H
#define GPUEDGE_NVJPEG_H

#include <stddef.h>
#include "jpeg_ycc.h"

typedef struct nvj_dec nvj_dec;

/* One JPEG of a batch. */
typedef struct nvj_pic {
    /* in */
    const unsigned char *data; /* the whole file; read only during nvj_decode */
    size_t len;
    /* out */
    int ok;                /* 1: decoded on the GPU; 0: see why */
    int hardware;          /* decoded by the JPEG engines (else the GPU
                              hybrid backend: CUDA kernels) */
    int width, height;
    int channels;          /* 1 (grey) or 3 (RGB, interleaved) */
    unsigned char *d_data; /* device memory, `pitch` bytes a row; owned by
                              the decoder until nvj_release */
    size_t pitch;
    char why[128];         /* when !ok: "progressive JPEG", "bad JPEG data", ... */
    int buf_;              /* private: the pool buffer held */
    jycc_planes ycc_;      /* private: a colour file's planes, after its RGB
                              in the buffer */
} nvj_pic;

/* Loads the library (once a process; it stays loaded).  0, or -1 with one
 * phrase recorded (ge_fail, DESIGN.md §9) naming what is missing. */
int nvj_load(void);

/* Loads the library and creates a decoder on the current CUDA device (the
 * caller has made it current and checked it: gpu_probe).  The hardware
 * backend when the GPU has JPEG engines, else the GPU hybrid backend.
 * max_batch caps one nvj_decode call (>= 1).  Returns 0, or -1 with one
 * phrase recorded ("cannot load libnvjpeg.so.13: ...", "nvJPEG: no backend
 * works on this GPU (...)"). */
int nvj_open(int max_batch, nvj_dec **out);
/* "hardware" or "GPU hybrid". */
const char *nvj_backend(const nvj_dec *d);
/* "nvJPEG 13.2.3 (hardware, 1 engine x 7 cores) from PATH" or similar, for -v. */
const char *nvj_describe(const nvj_dec *d);

/* Decodes n (<= max_batch) JPEGs: what the hardware takes in one batch per
 * output format, the rest singly; sets each pic's ok, size and d_data, or
 * why.  Returns when the decoded pixels are in device memory (the decode
 * stream is synchronised, blocking), so any stream may read them.  Not
 * thread-safe (one caller at a time); nvj_release may be called from any
 * thread.  0, or -1 on a CUDA failure that leaves the device unusable
 * (the pics are marked not ok then too). */
int nvj_decode(nvj_dec *d, nvj_pic *pics, int n);
/* Hands a decoded picture's device buffer back to the pool (once the work
 * reading it has finished).  Safe on a pic that is not ok; idempotent. */
void nvj_release(nvj_dec *d, nvj_pic *p);
/* Frees everything; NULL-safe, sets *d to NULL. */
void nvj_close(nvj_dec **d);

/* Reads a whole file into *data (malloc'ed).  0, or -1 with why recorded. */
int nvj_read_file(const char *path, unsigned char **data, size_t *len);

/* Is the file a JPEG by its first bytes (FF D8 FF)? */
int nvj_is_jpeg(const unsigned char *data, size_t len);

#endif
