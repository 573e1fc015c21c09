/*
 * cli.c — option parsing (DESIGN.md §3): getopt_long over options.c's table,
 * getopt's errors, and what no single option can say.  Returns a status;
 * never exits.
 */
#include "cli.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"
#include "util.h"
#include "video_io.h"

static void opts_init(cli_opts *o)
{
    memset(o, 0, sizeof *o);
    cli_opt_defaults(o);
    o->frames = -1;   /* all */
    o->progress = -1; /* on a terminal */
}

/* How many long options start with the name in "--name[=value]". */
static int long_matches(const char *word)
{
    size_t n = strcspn(word + 2, "=");
    int count = 0;
    for (const struct option *lo = cli_long_opts(); lo->name; lo++) {
        if (!strncmp(lo->name, word + 2, n)) {
            if (strlen(lo->name) == n)
                return 1;
            count++;
        }
    }
    return count;
}

/* The option a getopt error is about, as typed, into buf: "-X" for a short
 * option, else the "--long[=value]" word getopt has just passed.  optopt
 * alone cannot tell: it holds a short option's letter, but also the val of
 * a long option (a letter for --overwrite, >= 256 for --sigma) or 0. */
static const char *bad_option(char **argv, char *buf)
{
    const char *w = optind > 0 ? argv[optind - 1] : "";
    int is_long = !strncmp(w, "--", 2) && w[2];
    if (is_long && optopt > 0 && optopt < 256) {
        /* "--overwrite=1" (val 'y') or a cluster after it: "--invert -Zq" */
        size_t n = strcspn(w + 2, "=");
        is_long = 0;
        for (const struct option *lo = cli_long_opts(); lo->name; lo++)
            if (lo->val == optopt && !strncmp(lo->name, w + 2, n))
                is_long = 1;
    }
    if (is_long || optopt <= 0 || optopt >= 256)
        snprintf(buf, 256, "%s", w);
    else
        snprintf(buf, 256, "-%c", optopt);
    return buf;
}

/* What no single option can say: contradictions, and the operands. */
static int check_opts(int argc, char **argv, cli_opts *o, const unsigned char *seen)
{
    if (o->action == CLI_VERSION)
        return 0;
    if (o->p.canny && o->p.use_threshold)
        return cli_usage_error("%s", "--canny and --threshold contradict each other "
                           "(Canny's map is already binary)");
    if (o->quiet && o->verbose)
        return cli_usage_error("%s", "-q and -v contradict each other");
    if (seen[cli_opt_named("device") - cli_opt_table] &&
        seen[cli_opt_named("devices") - cli_opt_table])
        return cli_usage_error("%s", "--device and --devices: give one of them (--device N is "
                                 "--devices N)");
    if (o->jpeg_decoder == CLI_JPEG_NVJPEG && o->backend == CLI_BACKEND_CPU)
        return cli_usage_error("%s", "--jpeg-decoder=nvjpeg needs the GPU backend, not --backend=cpu");
    if (o->hwdec == CLI_HWDEC_NVDEC && o->backend == CLI_BACKEND_CPU)
        return cli_usage_error("%s", "--hwdec=nvdec needs the GPU backend (NVDEC frames stay on the GPU)");

    o->inputs = (const char **)(argv + optind);
    o->ninputs = argc - optind;
    if (o->null_list && !o->from_file)
        return cli_usage_error("%s", "-0 (--null) applies to --from-file's list");
    if (o->outdir) {
        if (o->ninputs < 1 && !o->from_file)
            return cli_usage_error("%s", "-o DIR needs at least one INPUT (or --from-file)");
    } else {
        if (o->from_file)
            return cli_usage_error("%s", "--from-file needs -o DIR");
        if (o->format)
            return cli_usage_error("%s", "--format applies to -o DIR batches; give OUTPUT's extension instead");
        if (o->skip_existing)
            return cli_usage_error("%s", "--skip-existing applies to -o DIR batches");
        if (o->ninputs != 2)
            return cli_usage_error("%s", o->ninputs < 2 ? "missing INPUT or OUTPUT"
                                                     : "too many arguments (use -o DIR for several inputs)");
        o->output = o->inputs[1];
        o->ninputs = 1;
    }
    if (o->report_file && !o->report)
        o->report = CLI_REPORT_TEXT;
    if (o->codec || o->preset || o->crf) {
        /* checked against the container before any work: the batch's
         * video format (--format, else mkv), or OUTPUT's extension */
        char buf[16];
        const char *e = o->outdir ? (o->format && venc_format_ok(o->format) ? o->format : "mkv")
                                  : ge_ext(o->output, buf, sizeof buf);
        if (!o->outdir && (vid_is_sequence(o->output) || !venc_format_ok(e)))
            return cli_usage_error("--codec, --preset and --crf apply to video outputs "
                               "(.mkv .mp4 .y4m), not '%s'", o->output);
        if (venc_codec_check(e, o->codec, o->preset, o->crf))
            return cli_usage_error("%s", ge_why());
    }
    return 0;
}

/* getopt's errors: a missing argument (':'), else an unknown, ambiguous
 * or argument-taking-none option. */
static int getopt_error(int c, char **argv)
{
    char bad[256];
    if (c == ':')
        return cli_usage_error("option '%s' needs an argument", bad_option(argv, bad));
    if (strncmp(bad_option(argv, bad), "--", 2))
        return cli_usage_error("unknown option '%s'", bad);
    if (optopt)
        return cli_usage_error("option '%s' takes no argument", bad);
    return cli_usage_error(long_matches(bad) > 1 ? "ambiguous option '%s'"
                                                 : "unknown option '%s'", bad);
}

int cli_parse(int argc, char **argv, cli_opts *o)
{
    unsigned char seen[CLI_OPT_MAX] = {0};
    const struct option *longs = cli_long_opts();
    const char *shorts = cli_short_opts();
    int c, r = 0;

    opts_init(o);
    optind = 0; /* glibc: full re-initialisation, so repeated calls work */
    opterr = 0;
    while (!r && (c = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
        const cli_opt *row = cli_opt_of(c);
        if (!row) {
            r = getopt_error(c, argv);
            break;
        }
        seen[row - cli_opt_table] = 1;
        r = cli_opt_apply(row, optarg, o);
    }
    if (r)
        return r == 1 ? 0 : r; /* 1: --help, the rest unread */
    return check_opts(argc, argv, o, seen);
}

void cli_free(cli_opts *o)
{
    (void)o; /* the --from-file list is owned by the batch module */
}
