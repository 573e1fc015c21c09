/*
 * util.c — messages and small helpers shared by the host modules.
 *
 * Messages are formatted into one buffer and written with a single
 * write(2) so that lines from the decode, pipeline and signal threads never
 * interleave mid-line (stdio's stderr is unbuffered and would split a line
 * into several writes).
 */
#include "util.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <stdarg.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int ge_quiet;
int ge_verbose;
int ge_line_clear;

/* Long enough for a path and a reason; longer lines are cut, not lost. */
#define GE_MSG_MAX 4096
/* A longer file name is shown as its first and last ~1000 bytes, so the
 * reason after it still fits. */
#define GE_FILE_SHOWN 2048

// ---------------------------------------------------------------------------
// Output of one line

static void write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return; /* nowhere left to complain */
        }
        p += w;
        n -= (size_t)w;
    }
}

/* Appends s to buf[*len..cap-1], replacing control characters (a newline in
 * a file name would break the one-line rule) by '?'. */
static void append_clean(char *buf, size_t *len, size_t cap, const char *s)
{
    for (; *s && *len + 1 < cap; s++) {
        unsigned char c = (unsigned char)*s;
        buf[(*len)++] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
    }
    buf[*len] = '\0';
}

static void emit(const char *file, const char *fmt, va_list ap)
{
    char buf[GE_MSG_MAX];
    size_t len = 0, start;
    int saved = errno;

    buf[0] = '\0';
    if (ge_line_clear) {
        /* to column 0 and erase: the message replaces a progress line
         * instead of being glued to its end */
        memcpy(buf, "\r\033[K", 5);
        len = 4;
    }
    append_clean(buf, &len, sizeof buf, GE_PROG ": ");
    if (file) {
        size_t flen = strlen(file);
        if (flen > GE_FILE_SHOWN) {
            /* A path near PATH_MAX would push the reason off the line:
             * show its start and its end (cut between characters). */
            char part[GE_FILE_SHOWN / 2 + 1];
            size_t head = GE_FILE_SHOWN / 2 - 2, tail = flen - (GE_FILE_SHOWN / 2 - 2);
            while (head > 0 && ((unsigned char)file[head] & 0xC0) == 0x80)
                head--;
            while (tail < flen && ((unsigned char)file[tail] & 0xC0) == 0x80)
                tail++;
            memcpy(part, file, head);
            part[head] = '\0';
            append_clean(buf, &len, sizeof buf, part);
            append_clean(buf, &len, sizeof buf, "...");
            append_clean(buf, &len, sizeof buf, file + tail);
        } else {
            append_clean(buf, &len, sizeof buf, file);
        }
        append_clean(buf, &len, sizeof buf, ": ");
    }
    /* Leave room for the newline. */
    start = len;
    if (len + 1 < sizeof buf - 1) {
        int n = vsnprintf(buf + len, sizeof buf - 1 - len, fmt, ap);
        if (n > 0)
            len += (size_t)n < sizeof buf - 1 - len ? (size_t)n
                                                    : sizeof buf - 2 - len;
    }
    /* Strip trailing newlines the caller may have added, then add one. */
    while (len > start && buf[len - 1] == '\n')
        len--;
    /* File names also reach the message through its arguments ("%s -> %s:
     * ok", "kept as %s"): the same cleaning keeps it one line. */
    for (size_t i = start; i < len; i++) {
        unsigned char c = (unsigned char)buf[i];
        if (c < 0x20 || c == 0x7f)
            buf[i] = '?';
    }
    buf[len++] = '\n';
    write_all(STDERR_FILENO, buf, len);
    errno = saved;
}

void ge_err(const char *file, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit(file, fmt, ap);
    va_end(ap);
}

// ---------------------------------------------------------------------------
// The error record (DESIGN.md §9)

static __thread ge_why_rec t_why;
static __thread int t_why_file; /* t_why.file names the failed file */
static __thread int t_why_new;  /* recorded and not printed yet */

/* A name longer than the record's room keeps its start and its end, the
 * parts emit() shows of a long name (GE_FILE_SHOWN). */
static void keep_file(const char *file)
{
    size_t n = strlen(file), half = sizeof t_why.file / 2 - 4;
    if (n < sizeof t_why.file) {
        memcpy(t_why.file, file, n + 1);
        return;
    }
    memcpy(t_why.file, file, half);
    memcpy(t_why.file + half, "...", 3);
    memcpy(t_why.file + half + 3, file + n - half, half + 1);
}

/* Formatted aside first: the arguments may be the record itself
 * (ge_fail_in(path, "--hwdec=nvdec: %s", ge_why())). */
static int record(int code, const char *file, const char *fmt, va_list ap)
{
    int saved = errno;
    char text[sizeof t_why.text];
    vsnprintf(text, sizeof text, fmt, ap);
    memcpy(t_why.text, text, sizeof text);
    if (file && file != t_why.file)
        keep_file(file);
    t_why_file = file != NULL;
    t_why_new = 1;
    errno = saved;
    return code;
}

int ge_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = record(-1, NULL, fmt, ap);
    va_end(ap);
    return r;
}

int ge_fail_code(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = record(code, NULL, fmt, ap);
    va_end(ap);
    return r;
}

int ge_fail_in(const char *file, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = record(-1, file, fmt, ap);
    va_end(ap);
    return r;
}

const char *ge_why(void)
{
    return t_why.text;
}

const char *ge_why_file(void)
{
    return t_why_file ? t_why.file : NULL;
}

void ge_why_clear(void)
{
    t_why.text[0] = '\0';
    t_why_file = 0;
    t_why_new = 0;
}

void ge_err_why(const char *file)
{
    const char *f = ge_why_file();
    t_why_new = 0;
    ge_err(f ? f : file, "%s", t_why.text[0] ? t_why.text : "failed (no reason recorded)");
}

int ge_err_pending(const char *file)
{
    if (!t_why_new)
        return 0;
    ge_err_why(file);
    return 1;
}

void ge_why_save(ge_why_rec *r)
{
    memcpy(r->text, t_why.text, sizeof r->text);
    if (t_why_file)
        memcpy(r->file, t_why.file, sizeof r->file);
    else
        r->file[0] = '\0';
}

void ge_why_load(const ge_why_rec *r)
{
    memcpy(t_why.text, r->text, sizeof t_why.text);
    memcpy(t_why.file, r->file, sizeof t_why.file);
    t_why_file = r->file[0] != '\0';
    t_why_new = r->text[0] != '\0';
}

void ge_note(const char *fmt, ...)
{
    va_list ap;
    if (ge_quiet)
        return;
    va_start(ap, fmt);
    emit(NULL, fmt, ap);
    va_end(ap);
}

// ---------------------------------------------------------------------------
// Helpers

int ge_trace(const char *topic)
{
    const char *e = getenv("GPUEDGE_TRACE");
    size_t n = strlen(topic);
    while (e && *e) {
        size_t len = strcspn(e, ",");
        if ((len == n && strncmp(e, topic, n) == 0) || (len == 3 && strncmp(e, "all", 3) == 0))
            return 1;
        e += len + (e[len] == ',');
    }
    return 0;
}

double ge_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The extension is what follows the last '.' of the last path component,
 * unless that dot starts the name (".png" is a hidden file, not a PNG).  An
 * extension that does not fit in buf is reported as none: truncating it
 * could turn ".jpegs" into a known format. */
const char *ge_ext(const char *path, char *buf, size_t n)
{
    const char *base, *dot;
    size_t len, i;

    if (!buf || n == 0)
        return "";
    buf[0] = '\0';
    if (!path)
        return buf;
    base = strrchr(path, '/');
    base = base ? base + 1 : path;
    dot = strrchr(base, '.');
    if (!dot || dot == base)
        return buf;
    len = strlen(dot + 1);
    if (len >= n)
        return buf;
    for (i = 0; i < len; i++) {
        char c = dot[1 + i];
        buf[i] = (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
    }
    buf[len] = '\0';
    return buf;
}

// ---------------------------------------------------------------------------
// CPUs this process may use

/* The quota of one cgroup directory in CPUs, rounded up (1.5 CPUs of time
 * a period still keeps 2 threads busy part of the time); 0: none.  v2's
 * cpu.max is "max PERIOD" or "QUOTA PERIOD"; v1 splits it in two files,
 * quota -1 meaning none. */
static int cg_quota_dir(const char *dir, int v2)
{
    char path[4096 + 32];
    long long q = -1, per = 0;
    FILE *f;

    snprintf(path, sizeof path, "%s/%s", dir, v2 ? "cpu.max" : "cpu.cfs_quota_us");
    if (!(f = fopen(path, "r")))
        return 0;
    if (v2) {
        char qs[32];
        if (fscanf(f, "%31s %lld", qs, &per) == 2 && strcmp(qs, "max") != 0)
            q = strtoll(qs, NULL, 10);
    } else if (fscanf(f, "%lld", &q) != 1) {
        q = -1;
    }
    fclose(f);
    if (!v2) {
        snprintf(path, sizeof path, "%s/cpu.cfs_period_us", dir);
        if (!(f = fopen(path, "r")))
            return 0;
        if (fscanf(f, "%lld", &per) != 1)
            per = 0;
        fclose(f);
    }
    if (q <= 0 || per <= 0)
        return 0;
    q = (q + per - 1) / per;
    return q > 1 << 20 ? 1 << 20 : (int)q;
}

/* The tightest quota from the cgroup `cg` (a path inside the hierarchy
 * mounted at `mnt`) up to the hierarchy's root: a parent's limit binds its
 * children.  Inside a container the path may not exist under the mount
 * (the mount is the container's own cgroup): the walk then reaches it. */
static int cg_quota_walk(const char *mnt, const char *cg, int v2)
{
    char dir[4096];
    int best = 0;
    size_t n;

    if (snprintf(dir, sizeof dir, "%s%s", mnt, cg) >= (int)sizeof dir)
        return 0;
    n = strlen(mnt);
    for (;;) {
        int q = cg_quota_dir(dir, v2);
        char *slash;
        if (q > 0 && (best == 0 || q < best))
            best = q;
        slash = strrchr(dir + n, '/');
        if (!slash)
            break;
        *slash = 0;
    }
    return best;
}

/* Is `want` one of the comma-separated names in `list`? */
static int in_list(const char *list, const char *want)
{
    size_t n = strlen(want);
    for (const char *p = list; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
        if (strncmp(p, want, n) == 0 && (p[n] == ',' || p[n] == 0))
            return 1;
    return 0;
}

int ge_cpu_quota(const char *root)
{
    static const char *const v1_mounts[] = {"cpu", "cpu,cpuacct", "cpuacct,cpu"};
    char path[4096], line[4096], mnt[4096];
    int best = 0;
    FILE *f;

    snprintf(path, sizeof path, "%s/proc/self/cgroup", root);
    if (!(f = fopen(path, "r")))
        return 0;
    while (fgets(line, sizeof line, f)) {
        char *ctl = strchr(line, ':'), *cg;
        int q = 0;
        if (!ctl || !(cg = strchr(ctl + 1, ':')))
            continue;
        *cg++ = 0;
        *ctl++ = 0;
        cg[strcspn(cg, "\n")] = 0;
        if (strcmp(cg, "/") == 0)
            cg = "";
        if (strcmp(line, "0") == 0 && *ctl == 0) {
            /* v2: /sys/fs/cgroup, or .../unified in the hybrid layout */
            snprintf(mnt, sizeof mnt, "%s/sys/fs/cgroup", root);
            q = cg_quota_walk(mnt, cg, 1);
            snprintf(mnt, sizeof mnt, "%s/sys/fs/cgroup/unified", root);
            if (q == 0)
                q = cg_quota_walk(mnt, cg, 1);
        } else if (in_list(ctl, "cpu")) {
            for (size_t i = 0; i < sizeof v1_mounts / sizeof v1_mounts[0] && q == 0; i++) {
                snprintf(mnt, sizeof mnt, "%s/sys/fs/cgroup/%s", root, v1_mounts[i]);
                q = cg_quota_walk(mnt, cg, 0);
            }
        }
        if (q > 0 && (best == 0 || q < best))
            best = q;
    }
    fclose(f);
    return best;
}

int ge_cpu_count(void)
{
    cpu_set_t set;
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    int n = online > 0 ? (int)online : 1, q;

    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        n = CPU_COUNT(&set);
    q = ge_cpu_quota("");
    if (q > 0 && q < n)
        n = q;
    return n > 0 ? n : 1;
}
