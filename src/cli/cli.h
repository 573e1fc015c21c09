/*
 * cli.h — the command line (DESIGN.md §3).  cli_parse returns a status instead
 * of exiting, so main alone exits and the parser can be tested and fuzzed.
 */
#ifndef GPUEDGE_CLI_H
#define GPUEDGE_CLI_H

#include <stdio.h>
#include "edge.h"

enum cli_backend { CLI_BACKEND_AUTO, CLI_BACKEND_GPU, CLI_BACKEND_CPU };
/* --hwdec; the values are hwdec.h's VID_HWDEC_* (options.c checks) */
enum cli_hwdec { CLI_HWDEC_NONE = 0, CLI_HWDEC_AUTO = 1, CLI_HWDEC_NVDEC = 2 };
enum cli_report { CLI_REPORT_NONE, CLI_REPORT_TEXT, CLI_REPORT_JSON };
enum cli_action { CLI_RUN, CLI_HELP, CLI_VERSION };
/* --devices' bound: more GPUs than one host holds. */
#define CLI_MAX_DEVICES 64

/* --video-engines' bound: each engine holds its own decoder, encoder and
 * threads. */
#define CLI_VIDEO_ENGINES_MAX 8
/* --start's bound in seconds (about 31 years): checked before it becomes
 * microseconds or a frame count in 64 bits. */
#define CLI_START_MAX 1e9
/* --jpeg-decoder (DESIGN.md §1.9): which library's pixels a JPEG starts from */
enum cli_jpeg_decoder { CLI_JPEG_TURBO, CLI_JPEG_NVJPEG, CLI_JPEG_STB };

typedef struct cli_opts {
    ge_params p;
    int action;              /* enum cli_action */
    const char *output;      /* OUTPUT (single-input form) */
    const char *outdir;      /* -o DIR (batch form) */
    const char **inputs;     /* argv slice, or strings read by --from-file */
    int ninputs;
    int report;              /* enum cli_report */
    const char *report_file; /* NULL: stderr */
    const char *hist_file;
    int cpu_ref_every;       /* 0 off; N: every N-th frame */
    int backend;             /* enum cli_backend */
    int device;              /* --device N, or the first of --devices */
    int device_given;        /* --device or --devices given (the CPU-only variant refuses them) */
    /* --devices LIST|all: one engine per device (CLI_MAX_DEVICES at most);
     * ndevices 0 = --device alone (one engine), devices_all = "all" (the
     * list is made once CUDA counts them) */
    int devices[CLI_MAX_DEVICES];
    int ndevices;
    int devices_all;
    int mkv_crc;             /* --mkv-crc: Matroska CRC-32 elements */
    int video_engines;       /* --video-engines: engines a device for a batch of videos */
    int threads;             /* 0 = one per CPU */
    long frames;             /* -1 = all */
    double start;            /* seconds */
    const char *format;      /* output extension for batch mode */
    int skip_existing;
    const char *from_file;
    int null_list;           /* -0: --from-file's names end with NUL */
    unsigned long long mem_limit; /* 0 = none */
    int keep_partial;
    int strict;              /* --strict: a damaged video fails */
    int overwrite;
    int quiet, verbose;
    int progress;            /* -1 auto (TTY), 0 off, 1 on */
    int rgb;
    int staged;              /* GPU: per-stage kernels, not the fused one */
    int jpeg_decoder;        /* enum cli_jpeg_decoder */
    int no_auto_orient;      /* keep JPEGs' stored pixels, ignore EXIF orientation */
    int hwdec;               /* enum cli_hwdec (default auto) */
    const char *codec;       /* --codec: video encoder; NULL = the format's */
    const char *preset;      /* --preset: libx264 preset; NULL = default */
    const char *crf;         /* --crf: libx264 CRF (checked text); NULL = default */
    int png_level;           /* --png-level, libdeflate's 0..12 */
} cli_opts;

/* Parses argv.  Returns 0 (ok, see o->action), or 2 after printing one
 * error line and "Try 'gpuedge --help'" to stderr.  Resets getopt's state
 * first, so it can be called repeatedly. */
int cli_parse(int argc, char **argv, cli_opts *o);
/* Frees what cli_parse allocated (the --from-file list). */
void cli_free(cli_opts *o);
/* "Try 'gpuedge --help'...", the line after a usage error's (exit 2). */
void cli_usage_hint(void);
/* The --help text. */
void cli_usage(FILE *fp);
/* --version text (library, CUDA and GPU versions). */
void cli_version(FILE *fp);

#endif
