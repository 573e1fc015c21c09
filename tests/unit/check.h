/*
 * check.h — the unit tests' tiny harness.  Every check prints one line:
 *   "ok NAME", "not ok NAME: detail", or "skip NAME: reason"
 * which tests/run counts; a binary exits 1 if anything failed, else 0.
 */
#ifndef GPUEDGE_CHECK_H
#define GPUEDGE_CHECK_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static int check_failed_;

static void check_report_(int ok, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4), unused));
static void check_report_(int ok, const char *name, const char *fmt, ...)
{
    if (ok) {
        printf("ok %s\n", name);
    } else {
        va_list ap;
        check_failed_ = 1;
        printf("not ok %s", name);
        if (fmt && *fmt) {
            printf(": ");
            va_start(ap, fmt);
            vprintf(fmt, ap);
            va_end(ap);
        }
        printf("\n");
    }
    fflush(stdout);
}

/* CHECK(cond, name, fmt, ...): one named assertion with a failure detail. */
#define CHECK(cond, name, ...) check_report_(!!(cond), (name), __VA_ARGS__)
#define SKIP(name, reason) (printf("skip %s: %s\n", (name), (reason)), fflush(stdout))
#define CHECK_EXIT() return check_failed_ ? 1 : 0

#endif
