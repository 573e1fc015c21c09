/*
 * check.h — the unit tests' tiny harness.  Every check prints one line:
 *   "ok NAME", "not ok NAME: detail", or "skip NAME: reason"
 * which tests/run counts; a binary exits 1 if anything failed, else 0.
 */
#ifndef GPUEDGE_CHECK_H
#define GPUEDGE_CHECK_H

#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

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

/* A fresh directory $TMPDIR/PREFIX.XXXXXX (/tmp without TMPDIR), its
 * path in dir; 0, or -1. */
static int check_tmpdir(char *dir, size_t n, const char *prefix) __attribute__((unused));
static int check_tmpdir(char *dir, size_t n, const char *prefix)
{
    const char *t = getenv("TMPDIR");
    snprintf(dir, n, "%s/%s.XXXXXX", t && *t ? t : "/tmp", prefix);
    return mkdtemp(dir) ? 0 : -1;
}

/* Removes directory d and the files in it. */
static void check_rm_dir(const char *d) __attribute__((unused));
static void check_rm_dir(const char *d)
{
    DIR *dp = opendir(d);
    char p[4096];
    for (struct dirent *de; dp && (de = readdir(dp));)
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
            snprintf(p, sizeof p, "%s/%s", d, de->d_name);
            unlink(p);
        }
    if (dp)
        closedir(dp);
    rmdir(d);
}

/* The whole of a file, malloc'd (one byte more, so an empty file gives a
 * buffer too), its length in *n; NULL when it cannot be opened or the
 * memory is not there. */
static unsigned char *check_slurp(const char *path, size_t *n) __attribute__((unused));
static unsigned char *check_slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    unsigned char *b = NULL;
    long len;
    *n = 0;
    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 0 &&
        fseek(f, 0, SEEK_SET) == 0 && (b = malloc((size_t)len + 1)))
        *n = fread(b, 1, (size_t)len, f);
    fclose(f);
    return b;
}

/* stderr captured while a call runs, so its one-line messages can be
 * checked: check_capture_start(), the call, then check_capture_end() gives
 * what it printed (static buffer, up to 4095 bytes), and the line the CLI
 * would print for what the call left in the error record (ge_err_why,
 * DESIGN.md §9): the layers below the CLI record and do not print.  The
 * calling thread's record, cleared at the start.  One anonymous temp file,
 * reused. */
static int check_cap_fd_ = -1, check_saved_err_ = -1;
static void check_capture_start(void) __attribute__((unused));
static void check_capture_start(void)
{
    fflush(stderr);
    if (check_cap_fd_ < 0) {
        char p[] = "/tmp/gpuedge-check-stderr.XXXXXX";
        if ((check_cap_fd_ = mkstemp(p)) < 0)
            return;
        unlink(p);
    }
    if (ftruncate(check_cap_fd_, 0) != 0 || lseek(check_cap_fd_, 0, SEEK_SET) != 0)
        return;
    check_saved_err_ = dup(2);
    dup2(check_cap_fd_, 2);
    ge_why_clear();
}
static const char *check_capture_end(void) __attribute__((unused));
static const char *check_capture_end(void)
{
    static char buf[4096];
    ssize_t n;
    if (ge_why()[0])
        ge_err_why(NULL);
    fflush(stderr);
    if (check_saved_err_ >= 0) {
        dup2(check_saved_err_, 2);
        close(check_saved_err_);
        check_saved_err_ = -1;
    }
    buf[0] = 0;
    if (check_cap_fd_ >= 0 && lseek(check_cap_fd_, 0, SEEK_SET) == 0 &&
        (n = read(check_cap_fd_, buf, sizeof buf - 1)) > 0)
        buf[n] = 0;
    return buf;
}

/* CHECK(cond, name, fmt, ...): one named assertion with a failure detail. */
#define CHECK(cond, name, ...) check_report_(!!(cond), (name), __VA_ARGS__)
#define SKIP(name, reason) (printf("skip %s: %s\n", (name), (reason)), fflush(stdout))
#define CHECK_EXIT() return check_failed_ ? 1 : 0

#endif
