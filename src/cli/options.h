/*
 * options.h — the option table (DESIGN.md §3) and cli_opts, what it fills.
 * Every option is written once, in options.c: its names, argument, range
 * or keywords, default, help lines and group.  getopt_long's tables, the
 * range checks, the defaults of cli_opts and --help are all made from it,
 * and tests/cli/help_man.sh checks the man page, docs/cli.md and the
 * Python binding against --help.  cli.c parses with it; nothing here
 * calls back into cli.c.
 */
#ifndef GPUEDGE_OPTIONS_H
#define GPUEDGE_OPTIONS_H

#include <stddef.h>
#include <stdio.h>
#include <getopt.h>

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
#define CLI_VIDEO_ENGINES_MAX 16
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

/* What an option's argument is, and so which checks apply. */
enum cli_kind {
    CLI_FLAG,    /* no argument: stores set (CLI_COUNT: adds 1) */
    CLI_INT,     /* a whole number in lo..hi */
    CLI_DOUBLE,  /* a finite number in min..max */
    CLI_KEYWORD, /* one of keys' names */
    CLI_STRING,  /* any text, kept as given */
    CLI_SPECIAL  /* fn parses it */
};

/* Where the value goes. */
enum cli_store { CLI_ST_INT, CLI_ST_LONG, CLI_ST_DOUBLE, CLI_ST_FLOAT, CLI_ST_STR };

/* flags */
#define CLI_ZERO_OK   1  /* CLI_DOUBLE: 0 is accepted beside min..max */
#define CLI_MIN_OPEN  2  /* CLI_DOUBLE: min itself is not */
#define CLI_HELP_ONLY 4  /* a second --help entry for the option above */
#define CLI_COUNT     8  /* CLI_FLAG: each use adds 1 */
#define CLI_STOP     16  /* parsing stops after it (--help) */

/* A keyword and its value; aliases follow the documented names. */
typedef struct cli_choice {
    const char *name;
    int val;
} cli_choice;

/* CLI_SPECIAL's parser: 0, or -1 (the row's err is printed). */
typedef int (*cli_parse_fn)(const char *arg, cli_opts *o);

typedef struct cli_opt {
    const char *name;        /* long name */
    char letter;             /* short option, or 0 */
    char arg;                /* no_argument, required_ or optional_argument */
    char kind;               /* enum cli_kind */
    char store;              /* enum cli_store */
    int flags;
    size_t field;            /* offsetof(cli_opts, ...) + 1; 0 for none */
    size_t given;            /* an int field set to 1 when given (+ 1), or 0 */
    int set;                 /* CLI_FLAG's value; a KEYWORD's or INT's without argument */
    long lo, hi;             /* CLI_INT's range */
    double min, max;         /* CLI_DOUBLE's range */
    const cli_choice *keys;  /* CLI_KEYWORD's names, NULL-terminated */
    cli_parse_fn fn;         /* CLI_SPECIAL */
    const char *err;         /* the usage error; %s is the argument */
    const char *group;       /* the --help heading this option starts, or NULL */
    const char *metavar;     /* "S", "MODE"; "[=N]" for an optional argument */
    const char *help;        /* --help's lines for it, '\n' between */
    const char *dflt;        /* the default as --help shows it, or NULL */
} cli_opt;

/* the table's rows at most (a static_assert checks) */
#define CLI_OPT_MAX 64

extern const cli_opt cli_opt_table[];
extern const size_t cli_opt_count;

/* getopt_long's long options (help-only rows left out; a row's val is its
 * letter, or 256 + its index) and short-option string, made once. */
const struct option *cli_long_opts(void);
const char *cli_short_opts(void);
/* The row getopt_long's c stands for, or NULL (an error: '?' or ':'). */
const cli_opt *cli_opt_of(int c);
/* The row named name (not a help-only one), or NULL. */
const cli_opt *cli_opt_named(const char *name);
/* Applies arg to o: 0, 1 (CLI_STOP: stop parsing, no error), or
 * GE_EXIT_USAGE after the usage lines. */
int cli_opt_apply(const cli_opt *row, const char *arg, cli_opts *o);
/* The defaults every row with a number or a keyword states. */
void cli_opt_defaults(cli_opts *o);
/* The --help text. */
void cli_usage(FILE *fp);
/* "Try 'gpuedge --help'...", the line after a usage error's (exit 2). */
void cli_usage_hint(void);
/* One usage error: the message (fmt with arg), the hint; GE_EXIT_USAGE. */
int cli_usage_error(const char *fmt, const char *arg);

#endif
