/*
 * util.h — messages and small helpers shared by the host modules.
 */
#ifndef GPUEDGE_UTIL_H
#define GPUEDGE_UTIL_H

#include <stddef.h>
#include <stdio.h>

#define GE_PROG "gpuedge"

/* Exit statuses (DESIGN.md §3). */
enum {
    GE_EXIT_OK = 0,
    GE_EXIT_FAIL = 1,
    GE_EXIT_USAGE = 2,
    GE_EXIT_MISMATCH = 3
};

/* "gpuedge: FILE: message\n" on stderr (FILE omitted when NULL), one line,
 * written with one write(2) so lines from threads do not interleave.  The
 * CLI's only: the layers below record errors instead (ge_fail). */
void ge_err(const char *file, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Informational line on stderr unless quiet ("gpuedge: message"). */
void ge_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
extern int ge_quiet;   /* -q */
extern int ge_verbose; /* -v */
/* Set (by the CLI) while a progress line may stand on stderr's terminal:
 * each message then starts with "\r\033[K", erasing it. */
extern int ge_line_clear;

/* The error record (DESIGN.md §9): one a thread.  Code below the CLI
 * (src/io, src/lib, src/engine) never prints an error: it records what
 * failed and why, and returns; the CLI, which knows the file, prints the
 * record as the user's one line with ge_err_why.  ge_fail records
 * "what: why" text (printf format) and returns -1. */
int ge_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The same, returning `code` (a ge_result, or a public ge_status in
 * src/lib) instead of -1. */
int ge_fail_code(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Records and names the file, for a layer that knows which of several
 * files failed and its caller does not (the engine's jobs, an output's
 * kept partial); returns -1. */
int ge_fail_in(const char *file, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The record's text ("" when nothing failed since ge_why_clear), and
 * the file it names (NULL: the caller's). */
const char *ge_why(void);
const char *ge_why_file(void);
void ge_why_clear(void); /* "" and nothing new */
/* The user's one line for the record: "gpuedge: FILE: record", FILE the
 * record's own if it names one, else `file` (omitted when NULL). */
void ge_err_why(const char *file);
/* The same only when something was recorded since the last ge_err_why or
 * ge_why_clear: for a run of calls that each may fail and record (open,
 * write, commit), the caller clears first and prints what is new after.
 * 1 printed, 0 nothing new. */
int ge_err_pending(const char *file);

/* A record carried to another thread (a worker's failure that the
 * thread which owns the user's line reports). */
typedef struct ge_why_rec {
    char file[4096];
    char text[2048];
} ge_why_rec;
void ge_why_save(ge_why_rec *r);
void ge_why_load(const ge_why_rec *r);

/* What internal calls return besides 0 and -1 (failed, and recorded why
 * with ge_fail): far from the public ge_status codes (-1..-5,
 * include/gpuedge.h), so that neither can pass for the other where the
 * library maps one to the other. */
enum ge_result {
    GE_STOPPED = -100,     /* a stop was asked (a signal): nothing failed */
    GE_OVER_BUDGET = -101  /* --mem-limit is too small for even one row band */
};

/* Monotonic clock in seconds (CLOCK_MONOTONIC). */
double ge_now(void);

/* Why every GPU entry point of the CPU-only variant (make CUDA=0) fails. */
#define GPU_NONE_WHY "built without CUDA"

/* Whether GPUEDGE_TRACE (a comma list: pipe, vsrc, venc, or all) names
 * `topic`: the one switch for the stderr traces of the pipeline, the
 * video source and the encoder threads. */
int ge_trace(const char *topic);

/* Lower-case extension of path without the dot ("" if none); points into
 * a static-free caller buffer of size n. */
const char *ge_ext(const char *path, char *buf, size_t n);

/* CPUs this process may use: its affinity mask (sched_getaffinity), capped
 * by the cgroup CPU quota (v2 cpu.max, v1 cpu.cfs_quota_us over
 * cpu.cfs_period_us, rounded up; the tightest from its cgroup up to the
 * root), at least 1.  The default thread count of the CPU backend. */
int ge_cpu_count(void);

/* The cgroup CPU quota in whole CPUs (rounded up) that /proc/self/cgroup
 * and /sys/fs/cgroup under `root` give ("" for this process; a test's own
 * tree otherwise), or 0 when there is none. */
int ge_cpu_quota(const char *root);

#endif
