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
#include <stdlib.h>
#include <stdarg.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int ge_quiet;
__thread int ge_err_muted;
int ge_verbose;

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
    if (ge_err_muted)
        return;
    va_start(ap, fmt);
    emit(file, fmt, ap);
    va_end(ap);
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

long ge_env_long(const char *name, long dflt)
{
    const char *e = getenv(name);
    char *end;
    long v;
    if (!e || !*e)
        return dflt;
    v = strtol(e, &end, 10);
    return end == e ? dflt : v;
}

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
