/*
 * fuzz_cli.c — libFuzzer harness for the option parser.  The input is
 * split into argv words at NUL or newline bytes (argv[0] is "gpuedge"),
 * cli_parse runs (it resets getopt itself), its result is checked against
 * the contract in cli.h, and cli_free runs.  cli_parse only parses: it
 * opens no files, so nothing is written.  Usage errors go to stderr (run
 * with -close_fd_mask=2 to keep them off the terminal).
 */
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "util.h"

#define FUZZ_MAX_ARGS 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_opts(const cli_opts *o, int argc, char **argv)
{
    const ge_params *p = &o->p;
    if (o->action == CLI_HELP || o->action == CLI_VERSION)
        return;
    if (o->action != CLI_RUN)
        abort();
    if (!(p->sigma == 0 || (p->sigma >= GE_SIGMA_MIN && p->sigma <= GE_SIGMA_MAX)))
        abort();
    if (p->border < GE_BORDER_REPLICATE || p->border > GE_BORDER_ZERO)
        abort();
    if (!(p->scale > 0) || !isfinite(p->scale))
        abort();
    if (p->use_threshold && !(p->threshold >= 0 && p->threshold <= 255))
        abort();
    if (o->device < 0 || o->threads < 0 || o->threads > 1024 ||
        o->cpu_ref_every < 0 || o->start < 0 || o->frames == 0 ||
        o->frames < -1)
        abort();
    if (o->quiet && o->verbose)
        abort();
    if (o->ninputs < 0 || o->ninputs > argc)
        abort();
    if (o->ninputs > 0 && !o->inputs)
        abort();
    for (int i = 0; i < o->ninputs; i++) {
        /* every input is one of our words */
        int found = 0;
        for (int j = 1; j < argc && !found; j++)
            found = o->inputs[i] == argv[j];
        if (!found || !o->inputs[i])
            abort();
    }
    if (!o->outdir) {
        if (o->ninputs != 1 || !o->output || o->from_file || o->format ||
            o->skip_existing)
            abort();
    } else if (o->ninputs < 1 && !o->from_file) {
        abort();
    }
    if (o->report_file && o->report == CLI_REPORT_NONE)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf, *argv[FUZZ_MAX_ARGS + 2], *words[FUZZ_MAX_ARGS + 2];
    int argc = 1, rc;
    size_t i, start = 0;
    cli_opts o;

    /* one copy, every separator a NUL: the words point into it */
    buf = malloc(size + 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    buf[size] = '\0';
    argv[0] = "gpuedge";
    for (i = 0; i <= size && argc <= FUZZ_MAX_ARGS; i++) {
        if (i == size || buf[i] == '\0' || buf[i] == '\n') {
            buf[i] = '\0';
            if (i > start || i < size) /* empty words count too ("") */
                argv[argc++] = buf + start;
            start = i + 1;
        }
    }
    argv[argc] = NULL;
    /* getopt permutes argv: keep the original pointers to check against */
    memcpy(words, argv, sizeof(char *) * (size_t)(argc + 1));

    rc = cli_parse(argc, argv, &o);
    if (rc != 0 && rc != GE_EXIT_USAGE)
        abort();
    if (rc == 0)
        check_opts(&o, argc, words);
    cli_free(&o);
    free(buf);
    return 0;
}
