/*
 * cli.h — the command line (DESIGN.md §3): cli_parse over options.h's table
 * (which also holds cli_opts).  cli_parse returns a status instead of
 * exiting, so main alone exits and the parser can be tested and fuzzed.
 */
#ifndef GPUEDGE_CLI_H
#define GPUEDGE_CLI_H

#include <stdio.h>

#include "options.h"

/* Parses argv.  Returns 0 (ok, see o->action), or 2 after printing one
 * error line and "Try 'gpuedge --help'" to stderr.  Resets getopt's state
 * first, so it can be called repeatedly. */
int cli_parse(int argc, char **argv, cli_opts *o);
/* Frees what cli_parse allocated (the --from-file list). */
void cli_free(cli_opts *o);
/* --version text (library, CUDA and GPU versions). */
void cli_version(FILE *fp);

#endif
