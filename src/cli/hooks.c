/*
 * hooks.c — test hooks, read from the environment only in the test build
 * of gpuedge ($(TBIN)/gpuedge_hooks, this file compiled with
 * GE_TEST_HOOKS); the release binary has none.
 *
 *   GPUEDGE_CPU_ENGINES=N     the CPU backend runs N engines, as N devices
 *                             would: the scheduler tested without GPUs
 *   GPUEDGE_FAIL_ENGINE=K[:N] engine K (or "all") fails at its N-th file
 *                             (1st by default) as a lost device would: an
 *                             image before it is computed, a video at its
 *                             second frame (its output open)
 *   GPUEDGE_HOLD_WRITE_MS=N   an image output, written into its temp file,
 *                             waits up to N ms (until a signal stops the
 *                             run) before its commit: a signal "while
 *                             writing" tested however fast the writer is
 */
#include "run_int.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "signals.h"

int hook_cpu_engines(void)
{
#ifdef GE_TEST_HOOKS
    const char *e = getenv("GPUEDGE_CPU_ENGINES");
    long n = e && *e ? strtol(e, NULL, 10) : 0;
    return n > 0 && n <= 64 ? (int)n : 0;
#else
    return 0;
#endif
}

void hook_fail_engine(run_shared *sh)
{
    sh->fail_lane = -1;
    sh->fail_nth = 1;
#ifdef GE_TEST_HOOKS
    const char *e = getenv("GPUEDGE_FAIL_ENGINE");
    char *end;
    long k;
    if (!e || !*e)
        return;
    if (!strncmp(e, "all", 3)) {
        k = INT_MAX; /* every engine */
        end = (char *)e + 3;
    } else {
        k = strtol(e, &end, 10);
        if (end == e || k < 0 || k >= INT_MAX)
            return;
    }
    sh->fail_lane = (int)k;
    if (*end == ':' && atoi(end + 1) > 0)
        sh->fail_nth = atoi(end + 1);
#endif
}

void hook_hold_write(void)
{
#ifdef GE_TEST_HOOKS
    const char *e = getenv("GPUEDGE_HOLD_WRITE_MS");
    long ms = e && *e ? strtol(e, NULL, 10) : 0;
    const struct timespec tick = {0, 10 * 1000 * 1000};
    for (; ms > 0 && !sig_stopped(); ms -= 10)
        nanosleep(&tick, NULL);
#endif
}
