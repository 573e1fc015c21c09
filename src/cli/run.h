/*
 * run.h — from parsed options to an exit status: the job list (single
 * file or -o DIR batch), backend choice, the engine run, reports.
 */
#ifndef GPUEDGE_RUN_H
#define GPUEDGE_RUN_H

#include "cli.h"

/* Returns the process exit status (DESIGN.md §3). */
int run_main(cli_opts *o);

#endif
