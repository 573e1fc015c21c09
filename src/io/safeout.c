/*
 * safeout.c — never lose data (DESIGN.md §6).
 *
 * Life of an output "dir/out.png":
 *   so_open    checks early (exists without -y, same file as an input,
 *              directory missing or unwritable) so no work is wasted, then
 *              creates an unnamed file in "dir" (O_TMPFILE, mode 0666 &
 *              ~umask): nothing is left to clean up whatever kills us, even
 *              SIGKILL.  Where the filesystem has no O_TMPFILE, it creates
 *              "dir/.out.png.XXXXXX.tmp" with mkostemps instead, and a later
 *              run names such a file it finds unlocked (stale_temps);
 *   so_write   buffers small writes, loops over partial writes and EINTR,
 *              and records the first errno (later writes are no-ops);
 *   so_commit  flushes, fsyncs, closes (all checked), then renames into
 *              place: renameat2(RENAME_NOREPLACE), or rename() with -y.  An
 *              unnamed file is linked instead (linkat, which never
 *              replaces), or with -y linked to a temp name renamed over;
 *   so_abort   removes the temp file, or renames (links) it to
 *              "dir/out.partial.png" with --keep-partial.
 * A final name that exists and is not a regular file (/dev/null, a FIFO, a
 * terminal) and "-" (stdout) are written directly: no temp, no fsync (it
 * fails with EINVAL on those), no rename over a device node.
 *
 * Every open so_file sits in a registry so that the signal thread can
 * remove the temp files when a second terminating signal forces an
 * immediate exit (a cleanup given to signals.h's sig_on_exit).  The first
 * signal only raises sig_stop; the work unwinds through so_abort on its
 * own.
 */
#include "safeout.h"
#include "signals.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif

/* stb's writers hand over 64-byte pieces for BMP/TGA/JPEG and PGM goes
 * row by row: gather them so a large image is not 10^5 syscalls. */
#define SO_BUF_SIZE (64 * 1024)
/* so_commit fsyncs (DESIGN.md §6): on a disk, writing a big output back at that
 * moment costs the run its tail (an .mkv of 1,590 FFVHuff 1080p frames is
 * 1.8 GB).  Writeback is started every SO_WB_STEP bytes instead
 * (sync_file_range, SYNC_FILE_RANGE_WRITE: starts it, waits for nothing),
 * so the fsync finds little left (measured: BENCHMARKS.md "Constants
 * chosen by measurement"). */
#define SO_WB_STEP ((off_t)32 << 20)
/* Room kept for ".", ".XXXXXX.tmp" and ".partial" within NAME_MAX (255):
 * longer final names have their temp name cut. */
#define SO_TMP_BASE_MAX 200

struct so_file {
    struct so_file *prev, *next; /* registry links */
    int fd;
    int direct;       /* written in place: device, FIFO or stdout */
    int is_stdout;
    int overwrite;
    int keep_partial;
    int err;          /* first errno, 0 while all is well */
    int reported;     /* err already recorded */
    char *final;      /* the name the user gave */
    char *tmp;        /* temp file name (NULL when direct; when anon, the
                         template of the name -y links it to) */
    int anon;         /* an O_TMPFILE: no name until so_commit links one */
    char fdpath[32];  /* anon: "/proc/self/fd/N", its name for linkat and libav */
    char *partial;    /* NAME.partial.EXT (NULL when direct) */
    size_t blen;
    off_t written;    /* bytes written through so_write */
    off_t wb;         /* writeback started up to here (so_writeback) */
    unsigned char buf[SO_BUF_SIZE];
};

// ---------------------------------------------------------------------------
// Registry of open outputs

static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;
static so_file *reg_head;

static void register_cleanup(void);
static pthread_once_t cleanup_once = PTHREAD_ONCE_INIT;

static void reg_add(so_file *f)
{
    pthread_once(&cleanup_once, register_cleanup); /* (so_init's, without so_init) */
    pthread_mutex_lock(&reg_mu);
    f->prev = NULL;
    f->next = reg_head;
    if (reg_head)
        reg_head->prev = f;
    reg_head = f;
    pthread_mutex_unlock(&reg_mu);
}

/* Caller holds reg_mu. */
static void reg_remove_locked(so_file *f)
{
    if (f->prev)
        f->prev->next = f->next;
    else if (reg_head == f)
        reg_head = f->next;
    if (f->next)
        f->next->prev = f->prev;
    f->prev = f->next = NULL;
}

// ---------------------------------------------------------------------------
// Small helpers

static const char *display_name(const so_file *f)
{
    return f->is_stdout ? "standard output" : f->final;
}

/* The process umask without umask()'s set-and-restore race: Linux >= 4.7
 * shows it in /proc/self/status (read every time, so a later umask() call
 * is honoured).  Without /proc, umask() twice, once: racy only against
 * another thread creating a file at that instant, and so_init (main's,
 * after sig_init) runs it before any other thread exists. */
static mode_t fallback_umask;
static pthread_once_t umask_once = PTHREAD_ONCE_INIT;

static void read_umask_fallback(void)
{
    fallback_umask = umask(022);
    umask(fallback_umask);
}

static int read_proc_umask(mode_t *m)
{
    char buf[4096], *p;
    size_t got = 0;
    int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    while (got < sizeof buf - 1) {
        ssize_t r = read(fd, buf + got, sizeof buf - 1 - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    buf[got] = '\0';
    p = strstr(buf, "\nUmask:");
    if (!p)
        return -1;
    *m = (mode_t)strtoul(p + 7, NULL, 8) & 0777;
    return 0;
}

static mode_t get_umask(void)
{
    mode_t m;
    if (read_proc_umask(&m) == 0)
        return m;
    pthread_once(&umask_once, read_umask_fallback);
    return fallback_umask;
}

static char *join3(const char *a, size_t alen, const char *b, size_t blen,
                   const char *c)
{
    size_t clen = strlen(c);
    char *s = malloc(alen + blen + clen + 1);
    if (!s)
        return NULL;
    memcpy(s, a, alen);
    memcpy(s + alen, b, blen);
    memcpy(s + alen + blen, c, clen + 1);
    return s;
}

/* n, or less so that s[0..n) ends on a UTF-8 character boundary: a cut
 * name never ends in half a character (filesystems that insist on valid
 * UTF-8 names, such as ZFS with utf8only, exFAT or SMB shares, refuse
 * those).  s[n] must exist.  At most 3 bytes back: other encodings are
 * cut where they are. */
static size_t utf8_cut(const char *s, size_t n)
{
    size_t i = n;
    while (i > 0 && n - i < 3 && ((unsigned char)s[i] & 0xC0) == 0x80)
        i--;
    return ((unsigned char)s[i] & 0xC0) == 0x80 ? n : i;
}

/* "dir/out.png" -> "dir/out.partial.png"; "dir/out" -> "dir/out.partial";
 * a leading dot of the name is not an extension (".cfg" -> ".cfg.partial").
 * The result must fit in NAME_MAX like the final name: a name near the
 * limit has its stem cut (else the rename fails with ENAMETOOLONG and the
 * data stays in a hidden temp file). */
static char *partial_name(const char *path)
{
    const char *base = strrchr(path, '/');
    const char *dot;
    size_t stem, extlen;
    base = base ? base + 1 : path;
    dot = strrchr(base, '.');
    if (!dot || dot == base)
        dot = base + strlen(base);
    stem = (size_t)(dot - base);
    extlen = strlen(dot);
    if (stem + 8 + extlen > NAME_MAX) {
        if (extlen + 8 >= NAME_MAX) { /* an absurd extension: cut it all */
            dot = base + strlen(base);
            extlen = 0;
        }
        stem = utf8_cut(base, NAME_MAX - 8 - extlen);
    }
    return join3(path, (size_t)(base - path) + stem, ".partial", 8, dot);
}

/* Temp template beside the final name: "dir/.out.png.XXXXXX.tmp". */
static char *temp_template(const char *path)
{
    const char *base = strrchr(path, '/');
    size_t dirlen, blen;
    char *s;
    base = base ? base + 1 : path;
    dirlen = (size_t)(base - path);
    blen = strlen(base);
    if (blen > SO_TMP_BASE_MAX)
        blen = utf8_cut(base, SO_TMP_BASE_MAX);
    s = malloc(dirlen + 1 + blen + sizeof ".XXXXXX.tmp");
    if (!s)
        return NULL;
    memcpy(s, path, dirlen);
    s[dirlen] = '.';
    memcpy(s + dirlen + 1, base, blen);
    memcpy(s + dirlen + 1 + blen, ".XXXXXX.tmp", sizeof ".XXXXXX.tmp");
    return s;
}

// ---------------------------------------------------------------------------
// Temp files: unnamed where the filesystem can, else named and locked

/* "dir" of "dir/name", "." of "name", "/" of "/name". */
static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return strdup(".");
    if (slash == path)
        return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

/* An unnamed file (O_TMPFILE) in path's directory, mode 0666 & ~umask
 * (open applies the umask).  0; 1 when there is none to be had (a kernel
 * before 3.11 sees O_DIRECTORY: EISDIR; a filesystem without it:
 * EOPNOTSUPP; no /proc, which linkat and libav name it through), the
 * caller then makes a named one; -1 with errno (EACCES, ENOENT ...). */
static int use_tmpfile = 1;

void so_use_tmpfile(int on)
{
    use_tmpfile = on != 0;
}

static int open_anon(so_file *f, const char *path)
{
    char *dir;
    int fd, e;

    if (!use_tmpfile)
        return 1;
    dir = dir_of(path);
    if (!dir) {
        errno = ENOMEM;
        return -1;
    }
    do { /* readable too, as mkstemp's: a shared mapping needs it (mkvw.c) */
        fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0666);
    } while (fd < 0 && errno == EINTR);
    e = errno;
    free(dir);
    if (fd < 0) {
        errno = e;
        return e == EOPNOTSUPP || e == EISDIR || e == EINVAL || e == ENOSYS ? 1 : -1;
    }
    snprintf(f->fdpath, sizeof f->fdpath, "/proc/self/fd/%d", fd);
    if (access(f->fdpath, F_OK) != 0) {
        close(fd);
        return 1;
    }
    f->fd = fd;
    f->anon = 1;
    return 0;
}

/* Gives the unnamed file the name `dest`, replacing what is there: linkat
 * never replaces, so it is linked to a fresh temp name (f->tmp's XXXXXX
 * filled in) renamed over dest.  0, or -1 with errno. */
static int link_over(so_file *f, const char *dest)
{
    static const char abc[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    char *x = f->tmp + strlen(f->tmp) - 10; /* "XXXXXX.tmp" */
    uint64_t r = (uint64_t)(uintptr_t)f ^ (uint64_t)getpid() << 32 ^ (uint64_t)f->fd;
    int tries, i, e;

    for (tries = 0; tries < 100; tries++) {
        r += (uint64_t)time(NULL) + 0x9e3779b97f4a7c15ull;
        for (i = 0; i < 6; i++) {
            r ^= r >> 29;
            r *= 0xbf58476d1ce4e5b9ull;
            x[i] = abc[(r >> 32) % 62];
        }
        if (linkat(AT_FDCWD, f->fdpath, AT_FDCWD, f->tmp, AT_SYMLINK_FOLLOW) == 0) {
            if (rename(f->tmp, dest) == 0)
                return 0;
            e = errno;
            unlink(f->tmp);
            errno = e;
            return -1;
        }
        if (errno != EEXIST)
            return -1;
    }
    return -1;
}

/* ".NAME.XXXXXX.tmp", our named temp files (temp_template). */
static int is_temp_name(const char *n)
{
    size_t len = strlen(n), i;
    if (len < 13 || n[0] != '.' || strcmp(n + len - 4, ".tmp") || n[len - 11] != '.')
        return 0;
    for (i = len - 10; i < len - 4; i++)
        if (!((n[i] >= '0' && n[i] <= '9') || (n[i] >= 'A' && n[i] <= 'Z') ||
              (n[i] >= 'a' && n[i] <= 'z')))
            return 0;
    return 1;
}

/* Named temp files a killed run left in path's directory: one line each
 * (at most SO_STALE_MAX), once a directory a run.  A live writer holds an
 * flock on its temp file (so_open), so one being written is not named. */
#define SO_STALE_MAX 5
#define SO_STALE_DIRS 64
static pthread_mutex_t stale_mu = PTHREAD_MUTEX_INITIALIZER;
static char *stale_seen[SO_STALE_DIRS];

static void stale_temps(const char *path)
{
    char *dir = dir_of(path);
    struct dirent *de;
    DIR *d;
    int i, shown = 0, more = 0, seen = 0;

    if (!dir)
        return;
    pthread_mutex_lock(&stale_mu);
    for (i = 0; i < SO_STALE_DIRS && stale_seen[i]; i++)
        if (!strcmp(stale_seen[i], dir))
            seen = 1;
    if (!seen && i < SO_STALE_DIRS)
        stale_seen[i] = strdup(dir);
    pthread_mutex_unlock(&stale_mu);
    if (seen || i == SO_STALE_DIRS || !(d = opendir(dir))) {
        free(dir);
        return;
    }
    while ((de = readdir(d)) != NULL) {
        struct stat st;
        int fd;
        if (!is_temp_name(de->d_name))
            continue;
        fd = openat(dirfd(d), de->d_name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
        if (fd < 0)
            continue;
        if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && flock(fd, LOCK_SH | LOCK_NB) == 0) {
            if (shown < SO_STALE_MAX)
                ge_note("%s%s%s: temp file of an interrupted run (remove it)",
                        strcmp(dir, ".") ? dir : "", strcmp(dir, ".") && strcmp(dir, "/") ? "/" : "",
                        de->d_name);
            else
                more++;
            shown++;
        }
        close(fd);
    }
    closedir(d);
    if (more)
        ge_note("%s: %d more temp files of interrupted runs", dir, more);
    free(dir);
}

static void so_free(so_file *f)
{
    if (!f)
        return;
    free(f->final);
    free(f->tmp);
    free(f->partial);
    free(f);
}

/* Which input (index) is the same file as `path`, or -1. */
static int same_file_index(const struct stat *out, const char *const *inputs,
                           int ninputs)
{
    int i;
    for (i = 0; i < ninputs; i++) {
        struct stat in;
        if (!inputs || !inputs[i] || strcmp(inputs[i], "-") == 0)
            continue;
        if (stat(inputs[i], &in) == 0 && in.st_dev == out->st_dev &&
            in.st_ino == out->st_ino)
            return i;
    }
    return -1;
}

int so_same_file(const char *path, const char *const *inputs, int ninputs)
{
    struct stat st;
    if (!path || strcmp(path, "-") == 0 || stat(path, &st) != 0)
        return 0;
    return same_file_index(&st, inputs, ninputs) >= 0;
}

// ---------------------------------------------------------------------------
// Open

int so_open(so_file **out, const char *path, const so_opts *opts,
            const char *const *inputs, int ninputs)
{
    so_file *f = NULL;
    struct stat st;
    const char *base;
    int e;

    if (!out)
        return -1;
    *out = NULL;
    if (!path || !*path) {
        ge_fail("empty output file name");
        return -1;
    }
    f = calloc(1, sizeof *f);
    if (!f || !(f->final = strdup(path))) {
        ge_fail_in(path, "cannot create output: %s", strerror(ENOMEM));
        goto fail;
    }
    f->fd = -1;
    f->overwrite = opts ? opts->overwrite : 0;
    f->keep_partial = opts ? opts->keep_partial : 0;

    if (strcmp(path, "-") == 0) {
        f->direct = 1;
        f->is_stdout = 1;
        f->fd = STDOUT_FILENO;
        goto done;
    }

    if (stat(path, &st) == 0) {
        int i = same_file_index(&st, inputs, ninputs);
        if (i >= 0) {
            ge_fail_in(path, "output is the same file as input %s", inputs[i]);
            goto fail;
        }
        if (S_ISDIR(st.st_mode)) {
            ge_fail_in(path, "cannot create output: %s", strerror(EISDIR));
            goto fail;
        }
        if (!S_ISREG(st.st_mode)) {
            /* A device or a pipe: nothing to replace, write in place. */
            do {
                f->fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
            } while (f->fd < 0 && errno == EINTR);
            if (f->fd < 0) {
                ge_fail_in(path, "cannot open output: %s", strerror(errno));
                goto fail;
            }
            f->direct = 1;
            goto done;
        }
        if (!f->overwrite) {
            ge_fail_in(path, "output exists (use -y to overwrite)");
            goto fail;
        }
    } else if (errno != ENOENT) {
        ge_fail_in(path, "cannot create output: %s", strerror(errno));
        goto fail;
    } else if (!f->overwrite && lstat(path, &st) == 0) {
        /* A dangling symlink is still a name we would replace. */
        ge_fail_in(path, "output exists (use -y to overwrite)");
        goto fail;
    }

    base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (!*base) {
        ge_fail_in(path, "cannot create output: %s", strerror(EISDIR));
        goto fail;
    }
    f->tmp = temp_template(path);
    f->partial = partial_name(path);
    if (!f->tmp || !f->partial) {
        ge_fail_in(path, "cannot create output: %s", strerror(ENOMEM));
        goto fail;
    }
    stale_temps(path);
    switch (open_anon(f, path)) {
    case 0:
        goto done;
    case 1:
        break;
    default:
        /* ENOENT: the directory is missing; EACCES: unwritable. */
        ge_fail_in(path, "cannot create output: %s", strerror(errno));
        goto fail;
    }
    f->fd = mkostemps(f->tmp, 4, O_CLOEXEC);
    if (f->fd < 0) {
        ge_fail_in(path, "cannot create output: %s", strerror(errno));
        goto fail;
    }
    /* Alive while locked (stale_temps); a filesystem without locks is
     * told apart by nothing, and gets its notes anyway. */
    (void)flock(f->fd, LOCK_EX | LOCK_NB);
    /* mkstemp made it 0600; give it the mode open(2) would have.  Some
     * filesystems (vfat, some FUSE) refuse modes: not worth failing for. */
    if (fchmod(f->fd, 0666 & ~get_umask()) != 0 && errno != EPERM &&
        errno != ENOTSUP && errno != EOPNOTSUPP) {
        e = errno;
        close(f->fd);
        unlink(f->tmp);
        ge_fail_in(path, "cannot create output: %s", strerror(e));
        goto fail;
    }

done:
    reg_add(f);
    *out = f;
    return 0;

fail:
    so_free(f);
    return -1;
}

// ---------------------------------------------------------------------------
// Writes

/* All n bytes at offset `at` (pwrite), or at the file's position when
 * at < 0; the first error is recorded. */
static void write_all(so_file *f, const unsigned char *p, size_t n, off_t at)
{
    while (n > 0 && !f->err) {
        ssize_t w = at < 0 ? write(f->fd, p, n) : pwrite(f->fd, p, n, at);
        if (w < 0) {
            if (errno != EINTR)
                f->err = errno;
            continue;
        }
        if (w == 0) {
            f->err = EIO;
            break;
        }
        p += w;
        n -= (size_t)w;
        if (at < 0)
            f->written += w;
        else
            at += w;
    }
}

static void raw_write(so_file *f, const unsigned char *p, size_t n)
{
    write_all(f, p, n, -1);
    so_writeback(f, f->written);
}

off_t so_writeback_started(const so_file *f)
{
    return f ? f->wb : 0;
}

void so_writeback(so_file *f, off_t upto)
{
    if (!f || f->direct || f->fd < 0 || f->err || upto - f->wb < SO_WB_STEP)
        return;
    /* a hint: an error here shows again at the fsync, which is checked */
    (void)sync_file_range(f->fd, f->wb, upto - f->wb, SYNC_FILE_RANGE_WRITE);
    f->wb = upto;
}

static void flush_buf(so_file *f)
{
    if (f->blen > 0 && f->fd >= 0)
        raw_write(f, f->buf, f->blen);
    f->blen = 0;
}

int so_write(so_file *f, const void *buf, size_t len)
{
    if (!f)
        return -1;
    if (f->err)
        return -1;
    if (len == 0)
        return 0;
    if (!buf) {
        f->err = EINVAL;
        return -1;
    }
    if (f->blen + len <= SO_BUF_SIZE) {
        memcpy(f->buf + f->blen, buf, len);
        f->blen += len;
        return 0;
    }
    flush_buf(f);
    if (len >= SO_BUF_SIZE) {
        raw_write(f, buf, len);
    } else if (!f->err) {
        memcpy(f->buf, buf, len);
        f->blen = len;
    }
    return f->err ? -1 : 0;
}

int so_pwrite(so_file *f, const void *buf, size_t len, off_t at)
{
    if (!f)
        return -1;
    flush_buf(f);
    if (f->direct && !f->err)
        f->err = ESPIPE;
    if (at < 0 && !f->err)
        f->err = EINVAL;
    write_all(f, buf, len, at);
    return f->err ? -1 : 0;
}

void so_stb_writer(void *context, void *data, int size)
{
    if (size > 0)
        so_write((so_file *)context, data, (size_t)size);
}

/* Whoever writes through the descriptor or the name (libav) must see the
 * bytes so_write buffered first, so both getters flush.  The object is
 * never const itself (so_open mallocs it); only the view is. */
int so_fd(const so_file *f)
{
    if (!f)
        return -1;
    flush_buf((so_file *)f);
    return f->fd;
}

const char *so_path(const so_file *f)
{
    if (!f)
        return NULL;
    flush_buf((so_file *)f);
    return f->direct ? f->final : f->anon ? f->fdpath : f->tmp;
}

const char *so_name(const so_file *f)
{
    return f ? f->final : NULL;
}

void so_fail(so_file *f, int err)
{
    if (f && !f->err)
        f->err = err > 0 ? err : EIO;
}

void so_fail_reported(so_file *f, int err)
{
    if (f && !f->err) {
        f->err = err > 0 ? err : EIO;
        f->reported = 1;
    }
}

// ---------------------------------------------------------------------------
// Commit and abort

static void report_error(so_file *f)
{
    if (f->err && !f->reported) {
        ge_fail_in(display_name(f), "cannot write: %s", strerror(f->err));
        f->reported = 1;
    }
}

static void close_fd(so_file *f)
{
    if (f->fd >= 0 && !f->is_stdout) {
        /* Linux closes the descriptor even when close reports EINTR. */
        if (close(f->fd) != 0 && errno != EINTR && !f->err)
            f->err = errno;
    }
    f->fd = -1;
}

/* Removes the temp file, or keeps it as NAME.partial.EXT; unregisters. */
static void discard(so_file *f)
{
    int kept = 0, e = 0;

    if (!f->anon)
        close_fd(f);
    pthread_mutex_lock(&reg_mu);
    if (f->anon) {
        /* Unnamed: nothing to remove; a partial is linked while the
         * descriptor still holds the file. */
        if (f->keep_partial && link_over(f, f->partial) == 0)
            kept = 1;
        else if (f->keep_partial)
            e = errno;
    } else if (f->tmp) {
        if (f->keep_partial) {
            /* An older .partial is by definition incomplete: replace it. */
            if (rename(f->tmp, f->partial) == 0)
                kept = 1;
            else
                e = errno;
        } else {
            unlink(f->tmp);
        }
    }
    reg_remove_locked(f);
    pthread_mutex_unlock(&reg_mu);
    close_fd(f);
    if (kept)
        ge_note("%s: partial output kept as %s", f->final, f->partial);
    else if (e && f->anon)
        ge_fail_in(f->final, "cannot keep partial output as %s: %s", f->partial, strerror(e));
    else if (e)
        ge_fail_in(f->final, "cannot keep partial output as %s: %s; it is in %s",
                   f->partial, strerror(e), f->tmp);
}

/* rename(from, to) that never replaces `to`.  renameat2 needs Linux 3.15
 * and filesystem support (EINVAL otherwise, e.g. some network and FUSE
 * filesystems); link()+unlink() is no-replace too; a filesystem without
 * hard links gets a last check-then-rename, racy but better than nothing. */
static int rename_noreplace(const char *from, const char *to)
{
    struct stat st;

    if (syscall(SYS_renameat2, AT_FDCWD, from, AT_FDCWD, to,
                RENAME_NOREPLACE) == 0)
        return 0;
    if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP &&
        errno != EOPNOTSUPP)
        return -1;
    if (link(from, to) == 0) {
        unlink(from);
        return 0;
    }
    if (errno != EPERM && errno != ENOTSUP && errno != EOPNOTSUPP &&
        errno != EMLINK)
        return -1;
    if (lstat(to, &st) == 0) {
        errno = EEXIST;
        return -1;
    }
    return rename(from, to);
}

int so_commit(so_file **pf)
{
    so_file *f;
    int rc, e;

    if (!pf || !*pf)
        return -1;
    f = *pf;
    *pf = NULL;

    flush_buf(f);
    /* fsync is meaningless (EINVAL) on devices and pipes. */
    if (!f->err && !f->direct && fsync(f->fd) != 0)
        f->err = errno;
    if (!f->anon)
        close_fd(f);
    if (f->err) {
        report_error(f);
        discard(f);
        so_free(f);
        return -1;
    }
    if (f->direct) {
        pthread_mutex_lock(&reg_mu);
        reg_remove_locked(f);
        pthread_mutex_unlock(&reg_mu);
        so_free(f);
        return 0;
    }

    /* Under the registry lock, so the signal thread either sees the temp
     * file or sees it committed, never a half-done cleanup. */
    pthread_mutex_lock(&reg_mu);
    if (f->anon)
        rc = f->overwrite ? link_over(f, f->final)
                          : linkat(AT_FDCWD, f->fdpath, AT_FDCWD, f->final, AT_SYMLINK_FOLLOW);
    else
        rc = f->overwrite ? rename(f->tmp, f->final)
                          : rename_noreplace(f->tmp, f->final);
    e = errno;
    if (rc == 0)
        reg_remove_locked(f);
    pthread_mutex_unlock(&reg_mu);
    if (rc == 0) {
        /* An unnamed file closes once named; fsync has already reported
         * what the writes did (O_TMPFILE filesystems are local ones,
         * whose close has nothing more to say). */
        close_fd(f);
        so_free(f);
        return 0;
    }
    if (e == EEXIST)
        ge_fail_in(f->final, "output exists (use -y to overwrite)");
    else
        ge_fail_in(f->final, "cannot move output into place: %s", strerror(e));
    f->reported = 1;
    discard(f);
    so_free(f);
    return -1;
}

void so_abort(so_file **pf)
{
    so_file *f;

    if (!pf || !*pf)
        return;
    f = *pf;
    *pf = NULL;
    /* Keep everything written so far in a partial; otherwise drop it. */
    if (f->keep_partial && !f->direct)
        flush_buf(f);
    else
        f->blen = 0;
    /* A write error nobody reported yet (the caller gave up on the first
     * failing write) still deserves its one line. */
    report_error(f);
    discard(f);
    so_free(f);
}

// ---------------------------------------------------------------------------
// The second signal

/* Called only by the signal thread on a second signal, right before
 * _exit (sig_on_exit): no message, no free, just the names on disk. */
static void remove_registered_temps(void)
{
    so_file *f;
    pthread_mutex_lock(&reg_mu);
    for (f = reg_head; f; f = f->next) {
        if (f->anon && f->keep_partial)
            link_over(f, f->partial);
        if (f->anon || !f->tmp)
            continue;
        if (f->keep_partial)
            rename(f->tmp, f->partial);
        else
            unlink(f->tmp);
    }
    pthread_mutex_unlock(&reg_mu);
}

static void register_cleanup(void)
{
    sig_on_exit(remove_registered_temps);
}

void so_init(void)
{
    /* Without /proc the umask is read now, while no other thread exists
     * but the signal thread (which creates no file). */
    pthread_once(&umask_once, read_umask_fallback);
    pthread_once(&cleanup_once, register_cleanup);
}
