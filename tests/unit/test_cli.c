/*
 * test_cli.c — cli_parse (DESIGN.md §3): valid and invalid values for every
 * option, the operand rules of both forms, the not-yet-available options,
 * repeated calls (getopt's state is reset each time), and that errors are a
 * return value of 2 with exactly two lines on stderr (the error and the
 * "Try 'gpuedge --help'" hint), never an exit.
 */
#include "check.h"
#include "cli.h"
#include "options.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

static cli_opts o;
static int rc;
static char err[8192];     /* what cli_parse wrote to stderr */
static int in_parse;       /* set while cli_parse runs: see on_exit_check */

/* The argv of the last call: getopt permutes it and cli_parse keeps
 * pointers into it, so it lives until the next call. */
static char *argv_buf[64];
static int argc_buf;
static char args_line[240]; /* the arguments as given, for test names */
static const char *ctx = ""; /* prefix of test names */

static const char *argv_line(void)
{
    return args_line;
}

static void free_argv(void)
{
    for (int i = 0; i < argc_buf; i++)
        free(argv_buf[i]);
    argc_buf = 0;
}

/* cli_parse must return its status; an exit() from inside it is a failure. */
static void on_exit_check(void)
{
    if (in_parse) {
        printf("not ok cli_parse called exit() instead of returning\n");
        fflush(stdout);
        _exit(1);
    }
}

/* P("--sigma", "2", "a.png", "b.png", NULL): runs cli_parse on
 * "gpuedge ARGS..." with stderr captured into err; returns the status. */
static int P(const char *first, ...)
{
    va_list ap;
    const char *a;
    FILE *tmp = tmpfile();
    int saved;
    size_t n;

    free_argv();
    argv_buf[argc_buf++] = strdup("gpuedge");
    va_start(ap, first);
    for (a = first; a && argc_buf < 63; a = va_arg(ap, const char *))
        argv_buf[argc_buf++] = strdup(a);
    va_end(ap);
    argv_buf[argc_buf] = NULL;
    {
        size_t len = (size_t)snprintf(args_line, sizeof args_line, "%s", ctx);
        for (int i = 1; i < argc_buf && len < sizeof args_line - 1; i++)
            len += (size_t)snprintf(args_line + len, sizeof args_line - len, "%s'%s'",
                                    i > 1 ? " " : "", argv_buf[i]);
    }

    fflush(stderr);
    saved = dup(STDERR_FILENO);
    if (!tmp || saved < 0 || dup2(fileno(tmp), STDERR_FILENO) < 0) {
        printf("not ok test_cli: cannot capture stderr\n");
        exit(1);
    }
    in_parse = 1;
    rc = cli_parse(argc_buf, argv_buf, &o);
    in_parse = 0;
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    rewind(tmp);
    n = fread(err, 1, sizeof err - 1, tmp);
    err[n] = '\0';
    fclose(tmp);
    return rc;
}

static int nlines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

static void one_line_err(char *out, size_t n)
{
    const char *nl = strchr(err, '\n');
    size_t len = nl ? (size_t)(nl - err) : strlen(err);
    snprintf(out, n, "%.*s", (int)len, err);
}

/* A usage error: status 2; stderr "gpuedge: ...WANT..." then the hint. */
static int usage_ok(const char *want)
{
    static const char hint[] = "\nTry 'gpuedge --help' for more information.\n";
    const char *nl = strchr(err, '\n');
    return rc == 2 && nlines(err) == 2 && !strncmp(err, "gpuedge: ", 9) && nl &&
           strstr(err, want) && strstr(err, want) < nl && !strcmp(nl, hint);
}

#define BAD(want, ...)                                                          \
    do {                                                                        \
        char name_[256], line_[256];                                            \
        P(__VA_ARGS__, NULL);                                                   \
        one_line_err(line_, sizeof line_);                                      \
        snprintf(name_, sizeof name_, "rejects %.230s", argv_line());               \
        CHECK(usage_ok(want), name_, "status %d, stderr %d lines: '%s' (want '%s')", \
              rc, nlines(err), line_, want);                                    \
    } while (0)

/* A clean parse: status 0, nothing on stderr, and COND. */
#define GOOD(cond, ...)                                                         \
    do {                                                                        \
        char name_[256], line_[256];                                            \
        P(__VA_ARGS__, NULL);                                                   \
        one_line_err(line_, sizeof line_);                                      \
        snprintf(name_, sizeof name_, "accepts %.230s", argv_line());               \
        CHECK(rc == 0 && !err[0] && (cond), name_, "status %d, stderr '%s', or %s false", \
              rc, line_, #cond);                                                \
    } while (0)


// ---------------------------------------------------------------------------

static void test_defaults(void)
{
    GOOD(o.action == CLI_RUN && o.p.sigma == 1.0 && o.p.border == GE_BORDER_REPLICATE &&
             o.p.scale == 1.0f && !o.p.use_threshold && !o.p.invert && o.report == CLI_REPORT_NONE &&
             !o.report_file && !o.hist_file && !o.cpu_ref_every && o.backend == CLI_BACKEND_AUTO &&
             o.device == 0 && o.threads == 0 && o.frames == -1 && o.start == 0 && !o.format &&
             !o.skip_existing && !o.from_file && !o.mem_limit && !o.keep_partial && !o.overwrite &&
             !o.quiet && !o.verbose && o.progress == -1 && !o.rgb && !o.outdir,
         "in.png", "out.png");
    CHECK(o.ninputs == 1 && o.inputs && !strcmp(o.inputs[0], "in.png") && o.output &&
              !strcmp(o.output, "out.png"),
          "single form: one input, OUTPUT", "ninputs %d", o.ninputs);
}

static void test_sigma(void)
{
    GOOD(o.frames == 10, "--frames", "10", "a", "b.mkv");
    GOOD(o.start == 1.5, "--start", "1.5", "a", "b.mkv");
    GOOD(o.rgb == 1, "--rgb", "a", "b.mkv");
    GOOD(o.format && !strcmp(o.format, "mkv"), "--format", "mkv", "-o", "d", "a");
    GOOD(o.p.sigma == 0, "--sigma", "0", "a", "b.png");
    GOOD(o.p.sigma == 0.1, "--sigma", "0.1", "a", "b.png");
    GOOD(o.p.sigma == 2.5, "--sigma", "2.5", "a", "b.png");
    GOOD(o.p.sigma == 2.5, "--sigma=2.5", "a", "b.png");
    GOOD(o.p.sigma == 16, "--sigma", "16", "a", "b.png");
    GOOD(o.p.sigma == 10, "--sigma", "1e1", "a", "b.png");
    GOOD(o.p.sigma == 3, "--sig", "3", "a", "b.png"); /* unambiguous prefix */
    BAD("--sigma '0.05'", "--sigma", "0.05", "a", "b.png");
    BAD("--sigma '0.0999'", "--sigma", "0.0999", "a", "b.png");
    BAD("--sigma '16.001'", "--sigma", "16.001", "a", "b.png");
    BAD("--sigma '17'", "--sigma", "17", "a", "b.png");
    BAD("--sigma '-1'", "--sigma", "-1", "a", "b.png");
    BAD("--sigma 'abc'", "--sigma", "abc", "a", "b.png");
    BAD("--sigma 'nan'", "--sigma", "nan", "a", "b.png");
    BAD("--sigma 'inf'", "--sigma", "inf", "a", "b.png");
    BAD("--sigma ''", "--sigma", "", "a", "b.png");
    BAD("--sigma '2x'", "--sigma", "2x", "a", "b.png");
    BAD("--sigma '1e999'", "--sigma", "1e999", "a", "b.png");
    BAD("option '--sigma' needs an argument", "a", "b.png", "--sigma");
}

static void test_border(void)
{
    GOOD(o.p.border == GE_BORDER_REPLICATE, "--border", "replicate", "a", "b.png");
    GOOD(o.p.border == GE_BORDER_REFLECT101, "--border", "reflect101", "a", "b.png");
    GOOD(o.p.border == GE_BORDER_REFLECT101, "--border=reflect_101", "a", "b.png");
    GOOD(o.p.border == GE_BORDER_ZERO, "--border", "zero", "a", "b.png");
    GOOD(o.p.border == GE_BORDER_ZERO, "--border", "constant", "a", "b.png");
    BAD("--border 'wrap'", "--border", "wrap", "a", "b.png");
    BAD("--border ''", "--border", "", "a", "b.png");
}

static void test_scale_threshold_invert(void)
{
    GOOD(o.p.scale == 0.5f, "--scale", "0.5", "a", "b.png");
    GOOD(o.p.scale == 1000.0f, "--scale", "1000", "a", "b.png");
    GOOD(o.p.scale == 1e-3f, "--scale", "1e-3", "a", "b.png");
    BAD("--scale '0'", "--scale", "0", "a", "b.png");
    BAD("--scale '-1'", "--scale", "-1", "a", "b.png");
    BAD("--scale 'abc'", "--scale", "abc", "a", "b.png");
    BAD("--scale 'nan'", "--scale", "nan", "a", "b.png");
    BAD("--scale 'inf'", "--scale", "inf", "a", "b.png");
    BAD("--scale '1e39'", "--scale", "1e39", "a", "b.png");    /* not a float */
    BAD("--scale '1e-50'", "--scale", "1e-50", "a", "b.png");  /* 0 as a float */

    GOOD(o.p.use_threshold && o.p.threshold == 0, "--threshold", "0", "a", "b.png");
    GOOD(o.p.use_threshold && o.p.threshold == 40, "--threshold", "40", "a", "b.png");
    GOOD(o.p.use_threshold && o.p.threshold == 12.5f, "--threshold=12.5", "a", "b.png");
    GOOD(o.p.use_threshold && o.p.threshold == 255, "--threshold", "255", "a", "b.png");
    BAD("--threshold '256'", "--threshold", "256", "a", "b.png");
    BAD("--threshold '255.5'", "--threshold", "255.5", "a", "b.png");
    BAD("--threshold '-1'", "--threshold", "-1", "a", "b.png");
    BAD("--threshold 'abc'", "--threshold", "abc", "a", "b.png");
    BAD("--threshold 'nan'", "--threshold", "nan", "a", "b.png");

    GOOD(o.p.invert == 1, "--invert", "a", "b.png");
    BAD("option '--invert=1' takes no argument", "--invert=1", "a", "b.png");

    /* --canny (issue 12) */
    GOOD(o.p.canny == GE_CANNY_OFF, "a", "b.png");
    GOOD(o.p.canny == GE_CANNY_ON && o.p.canny_low == 20 && o.p.canny_high == 50,
         "--canny", "20,50", "a", "b.png");
    GOOD(o.p.canny == GE_CANNY_ON && o.p.canny_low == 0.5f && o.p.canny_high == 0.5f,
         "--canny=0.5,0.5", "a", "b.png");
    GOOD(o.p.canny == GE_CANNY_ON && o.p.canny_low == 0 && o.p.canny_high == 1000,
         "--canny", "0,1e3", "a", "b.png");
    GOOD(o.p.canny == GE_CANNY_AUTO && o.p.invert, "--canny", "auto", "--invert", "a", "b.png");
    BAD("--canny '50,20'", "--canny", "50,20", "a", "b.png");
    BAD("--canny '20'", "--canny", "20", "a", "b.png");
    BAD("--canny '20,50,60'", "--canny", "20,50,60", "a", "b.png");
    BAD("--canny '-1,5'", "--canny", "-1,5", "a", "b.png");
    BAD("--canny 'x,5'", "--canny", "x,5", "a", "b.png");
    BAD("--canny '5,nan'", "--canny", "5,nan", "a", "b.png");
    BAD("--canny 'Auto'", "--canny", "Auto", "a", "b.png");
    BAD("--canny and --threshold contradict", "--canny", "auto", "--threshold", "9", "a", "b.png");
    BAD("--canny and --threshold contradict", "--threshold", "9", "--canny", "1,2", "a", "b.png");
}

static void test_report_hist_cpuref(void)
{
    GOOD(o.report == CLI_REPORT_TEXT && !o.report_file, "--report", "a", "b.png");
    GOOD(o.report == CLI_REPORT_TEXT, "--report=text", "a", "b.png");
    GOOD(o.report == CLI_REPORT_JSON, "--report=json", "a", "b.png");
    BAD("--report=xml: expected text or json", "--report=xml", "a", "b.png");
    BAD("--report=: expected text or json", "--report=", "a", "b.png");
    /* an optional argument only after '=': "json" is an operand here */
    BAD("too many arguments", "--report", "json", "a", "b.png");
    GOOD(o.report == CLI_REPORT_TEXT && o.report_file && !strcmp(o.report_file, "r.txt"),
         "--report-file", "r.txt", "a", "b.png");
    GOOD(o.report == CLI_REPORT_JSON && !strcmp(o.report_file, "r.json"),
         "--report-file=r.json", "--report=json", "a", "b.png");
    BAD("option '--report-file' needs an argument", "a", "b.png", "--report-file");

    GOOD(o.hist_file && !strcmp(o.hist_file, "h.csv"), "--hist", "h.csv", "a", "b.png");
    BAD("option '--hist' needs an argument", "a", "b.png", "--hist");

    GOOD(o.cpu_ref_every == 1, "--cpu-ref", "a", "b.png");
    GOOD(o.cpu_ref_every == 5, "--cpu-ref=5", "a", "b.png");
    BAD("--cpu-ref=0", "--cpu-ref=0", "a", "b.png");
    BAD("--cpu-ref=-2", "--cpu-ref=-2", "a", "b.png");
    BAD("--cpu-ref=x", "--cpu-ref=x", "a", "b.png");
    BAD("--cpu-ref=99999999999", "--cpu-ref=99999999999", "a", "b.png");
}

static void test_backend_device_threads(void)
{
    GOOD(o.backend == CLI_BACKEND_AUTO, "--backend", "auto", "a", "b.png");
    GOOD(o.backend == CLI_BACKEND_GPU, "--backend", "gpu", "a", "b.png");
    GOOD(o.backend == CLI_BACKEND_GPU, "--backend=cuda", "a", "b.png");
    GOOD(o.backend == CLI_BACKEND_CPU, "--backend=cpu", "a", "b.png");
    BAD("--backend 'opencl'", "--backend", "opencl", "a", "b.png");
    BAD("--backend 'GPU'", "--backend", "GPU", "a", "b.png");

    GOOD(o.device == 0, "--device", "0", "a", "b.png");
    GOOD(o.device == 3, "--device", "3", "a", "b.png");
    GOOD(o.device == 1023, "--device", "1023", "a", "b.png");
    BAD("--device '-1'", "--device", "-1", "a", "b.png");
    BAD("--device '1024'", "--device", "1024", "a", "b.png");
    BAD("--device 'x'", "--device", "x", "a", "b.png");

    GOOD(o.threads == 0, "--threads", "0", "a", "b.png");
    GOOD(o.threads == 1, "--threads", "1", "a", "b.png");
    GOOD(o.threads == 1024, "--threads", "1024", "a", "b.png");
    BAD("--threads '-1'", "--threads", "-1", "a", "b.png");
    BAD("--threads '1025'", "--threads", "1025", "a", "b.png");
    BAD("--threads '1.5'", "--threads", "1.5", "a", "b.png");
    BAD("--threads 'x'", "--threads", "x", "a", "b.png");
}

/* Values checked by the parser: sizes, frame counts, times. */
static void test_values(void)
{
    BAD("--frames '0': expected a positive number", "--frames", "0", "a", "b.png");
    BAD("--frames 'x'", "--frames", "x", "a", "b.png");
    BAD("--start '-1': expected seconds from 0 to 1e9", "--start", "-1", "a", "b.png");
    BAD("--start '1e13': expected seconds from 0 to 1e9", "--start", "1e13", "a", "b.mkv");
    BAD("--start '1e300'", "--start", "1e300", "a", "b.mkv");
    GOOD(o.start == 1e9, "--start", "1e9", "a", "b.mkv");
    GOOD(o.video_engines == 0, "-o", "d", "a");
    GOOD(o.video_engines == 8, "--video-engines", "8", "-o", "d", "a");
    GOOD(o.video_engines == 0, "--video-engines", "0", "-o", "d", "a");
    BAD("--video-engines '17': expected 0 (auto) to 16", "--video-engines", "17", "-o", "d", "a");
    BAD("--video-engines '-1': expected 0 (auto) to 16", "--video-engines", "-1", "-o", "d", "a");
    GOOD(o.mem_limit == 512ull << 20, "--mem-limit", "512M", "a", "b.png");
    GOOD(o.mem_limit == 2ull << 30, "--mem-limit", "2GiB", "a", "b.png");
    GOOD(o.mem_limit == 1048576, "--mem-limit", "1048576", "a", "b.png");
    GOOD(o.mem_limit == 1536ull << 20, "--mem-limit=1.5G", "a", "b.png");
    GOOD(o.mem_limit == 64ull << 10, "--mem-limit", "64kB", "a", "b.png");
    BAD("--mem-limit '0'", "--mem-limit", "0", "a", "b.png");
    BAD("--mem-limit '-5M'", "--mem-limit", "-5M", "a", "b.png");
    BAD("--mem-limit '12Q'", "--mem-limit", "12Q", "a", "b.png");
    BAD("--mem-limit ''", "--mem-limit", "", "a", "b.png");
    /* the value error comes before the missing operands */
    BAD("--mem-limit '12Q'", "--mem-limit", "12Q");
}

static void test_files_and_batches(void)
{
    GOOD(o.outdir && !strcmp(o.outdir, "d") && o.ninputs == 3 && !o.output &&
             !strcmp(o.inputs[0], "a") && !strcmp(o.inputs[2], "c"),
         "-o", "d", "a", "b", "c");
    GOOD(o.outdir && !strcmp(o.outdir, "d") && o.ninputs == 1, "--output-dir=d", "a");
    GOOD(o.outdir && o.ninputs == 0 && o.from_file && !strcmp(o.from_file, "list"),
         "-o", "d", "--from-file", "list");
    GOOD(o.from_file && !strcmp(o.from_file, "-"), "-o", "d", "--from-file", "-");
    GOOD(o.null_list && o.from_file, "-0", "-o", "d", "--from-file", "-");
    GOOD(o.null_list && o.from_file, "-o", "d", "--null", "--from-file", "l");
    GOOD(!o.null_list, "-o", "d", "--from-file", "l");
    GOOD(o.format && !strcmp(o.format, "pgm"), "-o", "d", "--format", "pgm", "a");
    GOOD(o.format && !strcmp(o.format, "pgm"), "-o", "d", "--format", ".pgm", "a");
    GOOD(o.format && !strcasecmp(o.format, "jpg"), "-o", "d", "--format", "JPG", "a");
    GOOD(o.format && !strcmp(o.format, "jpeg"), "-o", "d", "--format=jpeg", "a");
    BAD("--format 'xyz'", "-o", "d", "--format", "xyz", "a");
    BAD("--format 'gif'", "-o", "d", "--format", "gif", "a");
    BAD("--format ''", "-o", "d", "--format", "", "a");
    GOOD(o.skip_existing == 1, "-o", "d", "--skip-existing", "a");
    GOOD(o.keep_partial == 1, "--keep-partial", "a", "b.png");
    GOOD(o.overwrite == 1, "-y", "a", "b.png");
    GOOD(o.overwrite == 1, "--overwrite", "a", "b.png");
    BAD("option '--overwrite=1' takes no argument", "--overwrite=1", "a", "b.png");

    BAD("-o DIR needs at least one INPUT", "-o", "d");
    BAD("option '-o' needs an argument", "a", "-o");
    BAD("option '--output-dir' needs an argument", "a", "--output-dir");
    BAD("--format applies to -o DIR", "--format", "pgm", "a", "b.png");
    BAD("--skip-existing applies to -o DIR", "--skip-existing", "a", "b.png");
    BAD("--from-file needs -o DIR", "--from-file", "l", "a", "b.png");
    BAD("-0 (--null) applies to --from-file's list", "-0", "-o", "d", "a");
    BAD("-0 (--null) applies to --from-file's list", "--null", "a", "b.png");
}

static void test_operands(void)
{
    BAD("missing INPUT or OUTPUT", "--invert", NULL);
    BAD("missing INPUT or OUTPUT", "a.png");
    BAD("too many arguments", "a.png", "b.png", "c.png");
    GOOD(o.p.invert && o.ninputs == 1 && !strcmp(o.inputs[0], "a.png") &&
             !strcmp(o.output, "b.png"),
         "a.png", "b.png", "--invert"); /* options after the operands */
    GOOD(o.ninputs == 1 && !strcmp(o.inputs[0], "-x.png") && !strcmp(o.output, "--y.png"),
         "--", "-x.png", "--y.png");    /* "--" ends the options */
    GOOD(o.ninputs == 1 && !strcmp(o.inputs[0], "-") && !strcmp(o.output, "-"), "-", "-");
}

static void test_general(void)
{
    GOOD(o.quiet == 1, "-q", "a", "b.png");
    GOOD(o.quiet == 1, "--quiet", "a", "b.png");
    GOOD(o.verbose == 1, "-v", "a", "b.png");
    GOOD(o.verbose == 3, "-vvv", "a", "b.png");
    GOOD(o.verbose == 2, "--verbose", "-v", "a", "b.png");
    BAD("-q and -v contradict", "-q", "-v", "a", "b.png");
    GOOD(o.progress == 1, "--progress", "a", "b.png");
    GOOD(o.progress == 0, "--no-progress", "a", "b.png");
    GOOD(o.progress == 0, "--progress", "--no-progress", "a", "b.png"); /* last wins */
    GOOD(o.quiet && o.overwrite, "-qy", "a", "b.png");                   /* a cluster */

    GOOD(o.action == CLI_HELP, "-h", NULL);
    GOOD(o.action == CLI_HELP, "--help", NULL);
    GOOD(o.action == CLI_HELP, "--help", "--bogus"); /* help wins, stops there */
    GOOD(o.action == CLI_VERSION, "-V", NULL);
    GOOD(o.action == CLI_VERSION, "--version", NULL);
    GOOD(o.action == CLI_VERSION, "--version", "--frames", "3"); /* no "not yet" */

    BAD("unknown option '--bogus'", "--bogus", "a", "b.png");
    BAD("unknown option '--bogus=1'", "--bogus=1", "a", "b.png");
    BAD("unknown option '-Z'", "-Z", "a", "b.png");
    BAD("unknown option '-Z'", "-qZ", "a", "b.png");
    BAD("unknown option '-Z'", "-Zq", "a", "b.png");
    BAD("unknown option '-Z'", "--invert", "-Zq", "a", "b.png");
    BAD("ambiguous option '--re'", "--re", "a", "b.png");
}

/* Every call starts from the defaults and from a fresh getopt. */
static void test_repeated_calls(void)
{
    ctx = "after other calls: ";
    P("--invert", "--sigma", "3", "-y", "--backend=cpu", "a", "b.png", NULL);
    GOOD(!o.p.invert && o.p.sigma == 1.0 && !o.overwrite && o.backend == CLI_BACKEND_AUTO,
         "a", "b.png");
    /* an error in the middle of a short-option cluster leaves getopt inside
     * the cluster; the next call must not resume there */
    P("-qZy", "a", "b.png", NULL);
    GOOD(!o.quiet && !o.overwrite && o.ninputs == 1 && !strcmp(o.inputs[0], "x.png"),
         "x.png", "y.png");
    P("-o", "d", "a", "b", NULL);
    GOOD(!o.outdir && o.output && !strcmp(o.output, "y.png"), "x.png", "y.png");
    /* the same arguments twice give the same answer */
    P("--sigma", "2", "a", "b.png", NULL);
    int first = rc;
    double s1 = o.p.sigma;
    P("--sigma", "2", "a", "b.png", NULL);
    CHECK(rc == first && o.p.sigma == s1 && s1 == 2.0, "the same argv twice, the same result",
          "rc %d/%d sigma %g/%g", first, rc, s1, o.p.sigma);
    for (int i = 0; i < 50; i++) {
        P("--sigma", "17", "a", "b.png", NULL);
        P("-qv", "a", "b.png", NULL);
        P("--sigma", "0.5", "-q", "a", "b.png", NULL);
        if (rc != 0 || o.p.sigma != 0.5 || !o.quiet)
            break;
        if (i == 49)
            CHECK(1, "150 alternating good and bad calls", " ");
    }
    if (rc != 0 || o.p.sigma != 0.5)
        CHECK(0, "150 alternating good and bad calls", "rc %d sigma %g", rc, o.p.sigma);
    ctx = "";
}

/* options.c's table, row by row: getopt knows each option and --help shows
 * it; each default passes the row's own check and is what cli_parse gives
 * without the option; each range's ends are taken and the values just
 * outside refused with the row's message; each keyword stores its value. */
static const char *table_word(const cli_opt *r, const char *v, char *buf, size_t n)
{
    snprintf(buf, n, r->arg == optional_argument ? "--%s=%s" : "--%s", r->name, v);
    return buf;
}

/* "--name VALUE" (or "--name=VALUE") and two operands */
static int table_parse(const cli_opt *r, const char *v)
{
    char w[128];
    if (r->arg == optional_argument)
        return P(table_word(r, v, w, sizeof w), "a", "b.mkv", NULL);
    return P(table_word(r, v, w, sizeof w), v, "a", "b.mkv", NULL);
}

static size_t field_size(const cli_opt *r)
{
    switch (r->store) {
    case CLI_ST_LONG: return sizeof(long);
    case CLI_ST_DOUBLE: return sizeof(double);
    case CLI_ST_FLOAT: return sizeof(float);
    case CLI_ST_STR: return sizeof(char *);
    default: return sizeof(int);
    }
}

static int refused(const cli_opt *r, const char *v)
{
    char want[256];
    table_parse(r, v);
    snprintf(want, sizeof want, r->err, v);
    return usage_ok(want);
}

static void table_row_values(const cli_opt *r)
{
    char lo[40], hi[40], below[40], above[40], name[256];
    const char *f = (const char *)&o + r->field - 1;
    if (r->kind == CLI_KEYWORD) {
        for (const cli_choice *k = r->keys; k->name; k++) {
            snprintf(name, sizeof name, "table: --%s %s stores %d", r->name, k->name, k->val);
            CHECK(table_parse(r, k->name) == 0 && *(const int *)f == k->val, name, "rc %d", rc);
        }
        snprintf(name, sizeof name, "table: --%s refuses a keyword it lacks", r->name);
        CHECK(refused(r, "nonesuch"), name, "stderr '%s'", err);
        return;
    }
    if (r->kind == CLI_INT) {
        snprintf(lo, sizeof lo, "%ld", r->lo);
        snprintf(hi, sizeof hi, "%ld", r->hi);
        snprintf(below, sizeof below, "%lld", (long long)r->lo - 1);
        if (r->hi == LONG_MAX)
            snprintf(above, sizeof above, "9223372036854775808");
        else
            snprintf(above, sizeof above, "%ld", r->hi + 1);
    } else {
        snprintf(lo, sizeof lo, "%.17g", r->min);
        snprintf(hi, sizeof hi, "%.17g", r->max);
        snprintf(below, sizeof below, "%.17g", r->min - 1);
        snprintf(above, sizeof above, "%.17g", r->max * 2 + 1);
    }
    snprintf(name, sizeof name, "table: --%s takes %s and %s, refuses %s and %s%s", r->name,
             lo, hi, below, above, r->flags & CLI_MIN_OPEN ? " (and its open end)" : "");
    CHECK((r->flags & CLI_MIN_OPEN ? refused(r, lo) : table_parse(r, lo) == 0) &&
              table_parse(r, hi) == 0 && refused(r, below) && refused(r, above),
          name, "rc %d, stderr '%s'", rc, err);
}

static void test_table(void)
{
    cli_opts none;
    char *help = NULL, name[256];
    size_t helplen = 0;
    FILE *fp = open_memstream(&help, &helplen);
    const struct option *lo = cli_long_opts();
    const char *so = cli_short_opts();

    cli_usage(fp);
    fclose(fp);
    P("a", "b.mkv", NULL);
    none = o;
    for (size_t i = 0; i < cli_opt_count; i++) {
        const cli_opt *r = &cli_opt_table[i];
        const struct option *l = lo;
        char w[64];
        int needs_err = r->kind != CLI_FLAG && r->kind != CLI_STRING;
        snprintf(w, sizeof w, "--%s", r->name);
        snprintf(name, sizeof name, "table: --%s%s is in --help, with help text%s", r->name,
                 r->flags & CLI_HELP_ONLY ? " (its second entry)" : "",
                 needs_err ? " and a usage message" : "");
        CHECK(help && strstr(help, w) && r->help && r->help[0] &&
                  (!needs_err || (r->err && strstr(r->err, w) == r->err)) &&
                  (r->flags & CLI_HELP_ONLY || r->field || r->kind == CLI_SPECIAL),
              name, "help %p, err '%s'", (const void *)r->help, r->err ? r->err : "(none)");
        if (r->flags & CLI_HELP_ONLY)
            continue;
        while (l->name && strcmp(l->name, r->name))
            l++;
        if (r->letter)
            snprintf(name, sizeof name, "table: getopt knows --%s and -%c", r->name, r->letter);
        else
            snprintf(name, sizeof name, "table: getopt knows --%s", r->name);
        CHECK(l->name && l->has_arg == r->arg && cli_opt_of(l->val) == r &&
                  (!r->letter || strchr(so, r->letter)),
              name, "long %s, short '%s'", l->name ? l->name : "(missing)", so);
        if (r->dflt && (r->kind == CLI_INT || r->kind == CLI_DOUBLE || r->kind == CLI_KEYWORD)) {
            snprintf(name, sizeof name, "table: --%s's default %s is what no option gives",
                     r->name, r->dflt);
            CHECK(table_parse(r, r->dflt) == 0 &&
                      !memcmp((const char *)&o + r->field - 1,
                              (const char *)&none + r->field - 1, field_size(r)),
                  name, "rc %d", rc);
        }
        if (r->kind == CLI_INT || r->kind == CLI_DOUBLE || r->kind == CLI_KEYWORD)
            table_row_values(r);
    }
    free(help);
}

int main(void)
{
    atexit(on_exit_check);
    test_defaults();
    test_sigma();
    test_border();
    test_scale_threshold_invert();
    test_report_hist_cpuref();
    test_backend_device_threads();
    test_values();
    test_files_and_batches();
    test_operands();
    test_general();
    test_repeated_calls();
    test_table();
    free_argv();
    cli_free(&o);
    CHECK_EXIT();
}
