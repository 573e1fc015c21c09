/*
 * main.c — gpuedge's entry point: signals first, then options, then the
 * run.  The only place that exits.
 */
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/avutil.h>
#include <libswscale/swscale.h>
#include <stdio.h>

#include "cli.h"
#include "gpu.h"
#include "image_io.h"
#include "run.h"
#include "safeout.h"
#include "signals.h"
#include "util.h"

#ifndef GE_VERSION
#define GE_VERSION "0.1.0"
#endif

static void print_lib(FILE *fp, const char *name, unsigned v)
{
    fprintf(fp, "  %-12s %u.%u.%u\n", name, v >> 16, (v >> 8) & 0xff, v & 0xff);
}

void cli_version(FILE *fp)
{
    int rt, drv;
    gpu_info gi;

    fprintf(fp, "gpuedge %s\n", GE_VERSION);
    print_lib(fp, "libavformat", avformat_version());
    print_lib(fp, "libavcodec", avcodec_version());
    print_lib(fp, "libavutil", avutil_version());
    print_lib(fp, "libswscale", swscale_version());
    fprintf(fp, "  %-12s stb_image 2.27, stb_image_write 1.16 (Debian libstb-dev)\n", "stb");
    {
        char v[160];
        img_versions(v, sizeof v);
        fprintf(fp, "  %-12s %s\n", "image in", v);
    }
    if (!gpu_compiled()) {
        /* the CPU-only variant (make CUDA=0): no runtime, driver or GPU */
        fprintf(fp, "  %-12s none: %s (the CPU backend only)\n", "CUDA", GPU_NONE_WHY);
        return;
    }
    gpu_versions(&rt, &drv);
    fprintf(fp, "  %-12s runtime %d.%d (linked statically), built for sm %s\n", "CUDA",
            rt / 1000, (rt % 1000) / 10, GE_SMS);
    if (drv)
        fprintf(fp, "  %-12s driver supports CUDA %d.%d\n", "driver", drv / 1000, (drv % 1000) / 10);
    else
        fprintf(fp, "  %-12s none found\n", "driver");
    if (gpu_probe(0, &gi) == 0)
        fprintf(fp, "  %-12s %s, compute capability %d.%d, %d SMs, %zu MiB\n", "GPU", gi.name,
                gi.cc_major, gi.cc_minor, gi.sm_count, gi.total_mem >> 20);
    else
        fprintf(fp, "  %-12s %s\n", "GPU", ge_why());
}

int main(int argc, char **argv)
{
    cli_opts o;
    int status;

    /* Before anything can start a thread (CUDA, libav): signals blocked in
     * every thread, one thread sigwait()s. */
    if (sig_init()) {
        ge_err(NULL, "cannot set up signal handling");
        return GE_EXIT_FAIL;
    }
    so_init(); /* likewise: the umask, and the temp files' removal on a second signal */
    status = cli_parse(argc, argv, &o);
    if (status)
        return status;
    switch (o.action) {
    case CLI_HELP:
        cli_usage(stdout);
        return fflush(stdout) ? GE_EXIT_FAIL : GE_EXIT_OK;
    case CLI_VERSION:
        cli_version(stdout);
        return fflush(stdout) ? GE_EXIT_FAIL : GE_EXIT_OK;
    default:
        break;
    }
    ge_quiet = o.quiet;
    ge_verbose = o.verbose;
    status = run_main(&o);
    cli_free(&o);
    return status;
}
