/*
 * test_safeout.c — DESIGN.md §6 "never lose data": temp + rename, no-replace,
 * -y, abort, --keep-partial, same-file refusal, direct outputs (/dev/null,
 * /dev/full, FIFO, stdout), recorded write errors, and the signal thread
 * (signals.h, with safeout's cleanup on the second signal).
 * Most tests run on named temp files (so_use_tmpfile(0), what a filesystem
 * without O_TMPFILE gets); test_tmpfile runs the unnamed ones' commit paths
 * where /tmp has O_TMPFILE.  Works in a mkdtemp directory under /tmp and
 * removes it.
 */
#include "check.h"
#include "safeout.h"
#include "signals.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

static char dir[64];

// ---------------------------------------------------------------------------
// Helpers

static void path_in(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/%s", dir, name);
}

/* Number of entries in d (without . and ..); the first name into first. */
static int count_entries(const char *d, char *first, size_t n)
{
    DIR *dp = opendir(d);
    struct dirent *de;
    int count = 0;
    if (first && n)
        first[0] = '\0';
    if (!dp)
        return -1;
    while ((de = readdir(dp))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        if (count == 0 && first)
            snprintf(first, n, "%s", de->d_name);
        count++;
    }
    closedir(dp);
    return count;
}

static void rm_rf_entries(const char *d)
{
    DIR *dp = opendir(d);
    struct dirent *de;
    char p[512];
    if (!dp)
        return;
    while ((de = readdir(dp))) {
        struct stat st;
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        snprintf(p, sizeof p, "%s/%s", d, de->d_name);
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
            chmod(p, 0700);
            rm_rf_entries(p);
            rmdir(p);
        } else {
            unlink(p);
        }
    }
    closedir(dp);
}

static void clear_dir(void)
{
    rm_rf_entries(dir);
}

static int write_file(const char *p, const char *s)
{
    FILE *f = fopen(p, "wb");
    if (!f)
        return -1;
    fputs(s, f);
    return fclose(f);
}

/* Reads up to n-1 bytes as a string; returns the length or -1. */
static long read_file(const char *p, char *buf, size_t n)
{
    FILE *f = fopen(p, "rb");
    size_t got;
    if (!f)
        return -1;
    got = fread(buf, 1, n - 1, f);
    buf[got] = '\0';
    fclose(f);
    return (long)got;
}


static int open_close(const char *p, const so_opts *o, const char *data)
{
    so_file *f = NULL;
    if (so_open(&f, p, o, NULL, 0) != 0)
        return -1;
    so_write(f, data, strlen(data));
    return so_commit(&f);
}

/* Someone else creates p between so_open and so_commit: *rc is the
 * commit's, and what it printed is returned. */
static const char *commit_raced(const char *p, const so_opts *o, int *rc)
{
    so_file *f = NULL;
    if (so_open(&f, p, o, NULL, 0) != 0) {
        *rc = -2;
        return "";
    }
    write_file(p, "theirs");
    so_write(f, "mine", 4);
    check_capture_start();
    *rc = so_commit(&f);
    return check_capture_end();
}

// ---------------------------------------------------------------------------
// Tests

static void test_commit(mode_t um)
{
    char p[256], got[256], first[256];
    so_file *f = NULL;
    so_opts o = { 0, 0 };
    struct stat st;
    int rc;

    clear_dir();
    path_in(p, sizeof p, "out.png");
    rc = so_open(&f, p, &o, NULL, 0);
    CHECK(rc == 0 && f, "so_open new file", "rc=%d", rc);
    if (!f)
        return;
    CHECK(strcmp(so_name(f), p) == 0, "so_name is the final name", "%s",
          so_name(f));
    CHECK(count_entries(dir, first, sizeof first) == 1 &&
              strncmp(first, ".out.png.", 9) == 0 &&
              strlen(first) == strlen(".out.png.XXXXXX.tmp") &&
              strcmp(first + strlen(first) - 4, ".tmp") == 0,
          "temp file is .NAME.XXXXXX.tmp beside the final", "%s", first);
    CHECK(strstr(so_path(f), "/.out.png.") != NULL, "so_path is the temp",
          "%s", so_path(f));
    CHECK(stat(p, &st) != 0, "no final name before commit", " ");
    so_write(f, "hello ", 6);
    so_stb_writer(f, "world", 5);
    rc = so_commit(&f);
    CHECK(rc == 0 && f == NULL, "so_commit", "rc=%d", rc);
    CHECK(read_file(p, got, sizeof got) == 11 && !strcmp(got, "hello world"),
          "committed content", "'%s'", got);
    CHECK(stat(p, &st) == 0 && (st.st_mode & 07777) == (0666 & ~um),
          "mode is 0666 & ~umask", "mode %o want %o", st.st_mode & 07777,
          0666 & ~um);
    CHECK(count_entries(dir, NULL, 0) == 1, "no temp left after commit",
          "%d entries", count_entries(dir, NULL, 0));
}

static void test_exists(void)
{
    char p[256], got[256];
    so_file *f = (so_file *)1;
    so_opts o = { 0, 0 }, y = { 1, 0 };
    const char *msg;
    int rc;

    clear_dir();
    path_in(p, sizeof p, "keep.png");
    write_file(p, "original");
    check_capture_start();
    rc = so_open(&f, p, &o, NULL, 0);
    msg = check_capture_end();
    CHECK(rc == -1 && f == NULL, "existing final refused without -y",
          "rc=%d", rc);
    CHECK(strstr(msg, "keep.png: output exists (use -y to overwrite)") &&
              !strncmp(msg, "gpuedge: ", 9),
          "exists message", "'%s'", msg);
    CHECK(read_file(p, got, sizeof got) > 0 && !strcmp(got, "original") &&
              count_entries(dir, NULL, 0) == 1,
          "original untouched, no temp", "'%s'", got);

    rc = open_close(p, &y, "replaced");
    CHECK(rc == 0 && read_file(p, got, sizeof got) > 0 &&
              !strcmp(got, "replaced") && count_entries(dir, NULL, 0) == 1,
          "-y replaces", "rc=%d '%s'", rc, got);

    /* Someone else creates the final while we work: no-replace rename. */
    clear_dir();
    path_in(p, sizeof p, "race.png");
    msg = commit_raced(p, &o, &rc);
    CHECK(rc == -1 && read_file(p, got, sizeof got) > 0 &&
              !strcmp(got, "theirs"),
          "commit never replaces a file that appeared meanwhile",
          "rc=%d '%s'", rc, got);
    CHECK(strstr(msg, "output exists") != NULL, "race message", "'%s'", msg);
    CHECK(count_entries(dir, NULL, 0) == 1, "race: temp removed", "%d",
          count_entries(dir, NULL, 0));

    /* A dangling symlink is a name we would replace too. */
    clear_dir();
    path_in(p, sizeof p, "dangling.png");
    symlink("nowhere", p);
    check_capture_start();
    rc = so_open(&f, p, &o, NULL, 0);
    check_capture_end();
    CHECK(rc == -1, "dangling symlink counts as existing", "rc=%d", rc);
}

static void test_abort(void)
{
    char p[256], pp[256], got[256];
    so_file *f = NULL;
    so_opts o = { 0, 0 }, k = { 0, 1 };
    int rc;

    clear_dir();
    path_in(p, sizeof p, "out.png");
    rc = so_open(&f, p, &o, NULL, 0);
    so_write(f, "abc", 3);
    CHECK(rc == 0 && count_entries(dir, NULL, 0) == 1, "temp exists", " ");
    so_abort(&f);
    CHECK(f == NULL && count_entries(dir, NULL, 0) == 0,
          "abort removes the temp", "%d entries", count_entries(dir, NULL, 0));
    so_abort(&f); /* twice is fine */
    so_abort(NULL);
    CHECK(1, "abort twice and NULL are safe", " ");

    rc = so_open(&f, p, &k, NULL, 0);
    so_write(f, "part", 4);
    check_capture_start();
    so_abort(&f);
    check_capture_end();
    path_in(pp, sizeof pp, "out.partial.png");
    CHECK(rc == 0 && read_file(pp, got, sizeof got) == 4 &&
              !strcmp(got, "part") && count_entries(dir, NULL, 0) == 1,
          "--keep-partial leaves NAME.partial.EXT with the data", "'%s'",
          got);

    clear_dir();
    path_in(p, sizeof p, "noext");
    rc = so_open(&f, p, &k, NULL, 0);
    so_write(f, "x", 1);
    check_capture_start();
    so_abort(&f);
    check_capture_end();
    path_in(pp, sizeof pp, "noext.partial");
    CHECK(rc == 0 && access(pp, F_OK) == 0, "partial of a name without "
          "extension is NAME.partial", " ");

    /* A write error makes commit fail, keep nothing under the final name. */
    clear_dir();
    path_in(p, sizeof p, "err.png");
    rc = so_open(&f, p, &o, NULL, 0);
    so_write(f, "abc", 3);
    so_fail(f, ENOSPC);
    CHECK(so_write(f, "def", 3) == -1, "writes after a failure return -1",
          " ");
    {
        const char *msg;
        check_capture_start();
        rc = so_commit(&f);
        msg = check_capture_end();
        CHECK(rc == -1 && f == NULL && count_entries(dir, NULL, 0) == 0,
              "failed commit removes the temp", "rc=%d entries=%d", rc,
              count_entries(dir, NULL, 0));
        CHECK(strstr(msg, "err.png: cannot write: No space left on device") !=
                  NULL,
              "write error message", "'%s'", msg);
    }
    /* The error reported once even if the caller aborts instead. */
    rc = so_open(&f, p, &o, NULL, 0);
    so_fail(f, EIO);
    {
        const char *msg;
        check_capture_start();
        so_abort(&f);
        msg = check_capture_end();
        CHECK(strstr(msg, "cannot write: Input/output error") != NULL &&
                  strchr(msg, '\n') == msg + strlen(msg) - 1,
              "abort reports an unreported write error, one line", "'%s'",
              msg);
    }
}

static void test_big_writes(void)
{
    char p[256];
    so_file *f = NULL;
    so_opts o = { 0, 0 };
    static unsigned char ref[300000], got[300001];
    size_t i, off = 0;
    long n;
    int rc;

    clear_dir();
    for (i = 0; i < sizeof ref; i++)
        ref[i] = (unsigned char)(i * 7 + i / 251);
    path_in(p, sizeof p, "big.bin");
    rc = so_open(&f, p, &o, NULL, 0);
    while (off < 100000) { /* small pieces, as stb's writers send them */
        size_t k = off + 7 <= 100000 ? 7 : 100000 - off;
        so_write(f, ref + off, k);
        off += k;
    }
    so_write(f, ref + off, 150000); /* larger than the buffer */
    off += 150000;
    so_write(f, ref + off, sizeof ref - off);
    rc |= so_commit(&f);
    n = read_file(p, (char *)got, sizeof got);
    CHECK(rc == 0 && n == (long)sizeof ref && !memcmp(ref, got, sizeof ref),
          "mixed small and large writes arrive in order", "rc=%d n=%ld", rc,
          n);
}

/* so_writeback: started every 32 MiB written (not for 10 MiB, not for a
 * direct output), and the bytes arrive the same */
static void test_writeback(void)
{
    const size_t piece = (size_t)1 << 20;
    unsigned char *buf = malloc(piece), *back = malloc(piece);
    char p[256];
    so_file *f = NULL;
    so_opts o = { 0, 0 };
    off_t small = -1, big = -1, dev = -1;
    int rc, same = 1;
    FILE *fp;

    if (!buf || !back) {
        CHECK(0, "writeback: buffers", "out of memory");
        free(buf);
        free(back);
        return;
    }
    clear_dir();
    path_in(p, sizeof p, "wb.bin");
    rc = so_open(&f, p, &o, NULL, 0);
    for (int i = 0; rc == 0 && i < 100; i++) {
        memset(buf, i, piece);
        so_write(f, buf, piece);
        if (i == 9)
            small = so_writeback_started(f);
    }
    big = so_writeback_started(f);
    rc |= so_commit(&f);
    fp = fopen(p, "rb");
    for (int i = 0; fp && i < 100 && same; i++) {
        memset(buf, i, piece);
        same = fread(back, 1, piece, fp) == piece && !memcmp(buf, back, piece);
    }
    same = same && fp && fgetc(fp) == EOF;
    if (fp)
        fclose(fp);
    if (so_open(&f, "/dev/null", &o, NULL, 0) == 0) {
        for (int i = 0; i < 40; i++)
            so_write(f, buf, piece);
        dev = so_writeback_started(f);
        so_commit(&f);
    }
    CHECK(rc == 0 && same, "writeback: 100 MiB in 1 MiB pieces arrive intact", "rc=%d same=%d",
          rc, same);
    CHECK(small == 0 && big == (off_t)96 << 20, "writeback: started at 32, 64 and 96 MiB, not by 10",
          "at 10 MiB %lld, at 100 MiB %lld", (long long)small, (long long)big);
    CHECK(dev == 0, "writeback: never for a direct output (/dev/null)", "%lld", (long long)dev);
    free(buf);
    free(back);
}

static void test_same_file(void)
{
    char in[256], link_[256], dot[256], hard[256], out[256], cwd[512];
    const char *inputs[2];
    so_file *f = NULL;
    so_opts y = { 1, 0 };
    const char *msg;
    int rc;

    clear_dir();
    path_in(in, sizeof in, "in.png");
    path_in(link_, sizeof link_, "link.png");
    path_in(hard, sizeof hard, "hard.png");
    path_in(out, sizeof out, "other.png");
    write_file(in, "input");
    symlink("in.png", link_);
    link(in, hard);
    inputs[0] = "/nonexistent/zzz.png";
    inputs[1] = in;

    check_capture_start();
    rc = so_open(&f, link_, &y, inputs, 2);
    msg = check_capture_end();
    CHECK(rc == -1 && f == NULL, "output through a symlink to the input "
          "refused (even with -y)", "rc=%d", rc);
    CHECK(strstr(msg, "link.png: output is the same file as input") != NULL,
          "same-file message", "'%s'", msg);
    CHECK(so_same_file(hard, inputs, 2) == 1, "hard link is the same file",
          " ");
    CHECK(so_same_file(out, inputs, 2) == 0, "missing output is not the "
          "same file", " ");
    CHECK(so_same_file("-", inputs, 2) == 0, "stdout is not an input", " ");

    if (getcwd(cwd, sizeof cwd) && chdir(dir) == 0) {
        const char *rel[1] = { "in.png" };
        snprintf(dot, sizeof dot, "./in.png");
        check_capture_start();
        rc = so_open(&f, dot, &y, rel, 1);
        check_capture_end();
        CHECK(rc == -1, "./in.png is the same file as in.png", "rc=%d", rc);
        check_capture_start();
        rc = so_open(&f, "in.png", &y, inputs, 2);
        check_capture_end();
        CHECK(rc == -1, "relative output vs absolute input", "rc=%d", rc);
        if (chdir(cwd) != 0)
            perror("chdir");
    }
    {
        char got[64];
        CHECK(read_file(in, got, sizeof got) > 0 && !strcmp(got, "input"),
              "input untouched", "'%s'", got);
    }
}

static void test_dirs(void)
{
    char p[256];
    so_file *f = NULL;
    so_opts o = { 0, 0 }, y = { 1, 0 };
    const char *msg;
    int rc;

    clear_dir();
    path_in(p, sizeof p, "nodir/x.png");
    check_capture_start();
    rc = so_open(&f, p, &o, NULL, 0);
    msg = check_capture_end();
    CHECK(rc == -1 && f == NULL, "missing directory refused", "rc=%d", rc);
    CHECK(strstr(msg, "nodir/x.png: cannot create output: No such file or "
                      "directory\n") != NULL,
          "missing directory message", "'%s'", msg);

    check_capture_start();
    rc = so_open(&f, dir, &y, NULL, 0);
    msg = check_capture_end();
    CHECK(rc == -1 && strstr(msg, "Is a directory"), "a directory as output "
          "refused", "'%s'", msg);

    path_in(p, sizeof p, "ro");
    mkdir(p, 0555);
    if (geteuid() == 0) {
        SKIP("unwritable directory refused", "running as root");
    } else {
        path_in(p, sizeof p, "ro/x.png");
        check_capture_start();
        rc = so_open(&f, p, &o, NULL, 0);
        msg = check_capture_end();
        CHECK(rc == -1 && strstr(msg, "Permission denied"),
              "unwritable directory refused", "'%s'", msg);
    }
}

static void test_direct(void)
{
    char p[256], got[64];
    so_file *f = NULL;
    so_opts o = { 0, 0 };
    static char big[1 << 20];
    struct stat st;
    int rc;

    rc = so_open(&f, "/dev/null", &o, NULL, 0);
    CHECK(rc == 0, "/dev/null opens without -y", "rc=%d", rc);
    CHECK(f && !strcmp(so_path(f), "/dev/null"), "/dev/null written "
          "directly", "%s", f ? so_path(f) : "");
    so_write(f, big, sizeof big);
    rc = so_commit(&f);
    CHECK(rc == 0 && stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode),
          "/dev/null commit (no fsync error, still a device)", "rc=%d", rc);

    rc = so_open(&f, "/dev/full", &o, NULL, 0);
    so_write(f, "x", 1);
    {
        const char *msg;
        check_capture_start();
        rc |= so_commit(&f);
        msg = check_capture_end();
        CHECK(rc == -1 && strstr(msg, "/dev/full: cannot write: No space"),
              "/dev/full: write error recorded, commit fails", "rc=%d '%s'",
              rc, msg);
    }

    /* A FIFO is written in place, not renamed over. */
    clear_dir();
    path_in(p, sizeof p, "fifo");
    if (mkfifo(p, 0600) == 0) {
        int rd = open(p, O_RDONLY | O_NONBLOCK);
        rc = so_open(&f, p, &o, NULL, 0);
        so_write(f, "through", 7);
        rc |= so_commit(&f);
        memset(got, 0, sizeof got);
        CHECK(rc == 0 && read(rd, got, sizeof got - 1) == 7 &&
                  !strcmp(got, "through") && stat(p, &st) == 0 &&
                  S_ISFIFO(st.st_mode) && count_entries(dir, NULL, 0) == 1,
              "FIFO written directly", "rc=%d '%s'", rc, got);
        close(rd);
    } else {
        SKIP("FIFO written directly", "mkfifo failed");
    }

    /* "-" is stdout. */
    {
        int saved = dup(1), fd;
        path_in(p, sizeof p, "stdout.txt");
        fflush(stdout);
        fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2(fd, 1);
        close(fd);
        rc = so_open(&f, "-", &o, NULL, 0);
        so_write(f, "to stdout", 9);
        rc |= so_commit(&f);
        dup2(saved, 1);
        close(saved);
        CHECK(rc == 0 && read_file(p, got, sizeof got) == 9 &&
                  !strcmp(got, "to stdout"),
              "\"-\" writes to stdout", "rc=%d '%s'", rc, got);
    }
}

/* Needs SIGPIPE ignored (sig_init). */
static void test_epipe(void)
{
    int pfd[2], saved;
    so_file *f = NULL;
    so_opts o = { 0, 0 };
    const char *msg;
    int rc;

    if (pipe(pfd) != 0) {
        SKIP("EPIPE reported", "pipe failed");
        return;
    }
    close(pfd[0]);
    fflush(stdout);
    saved = dup(1);
    dup2(pfd[1], 1);
    close(pfd[1]);
    rc = so_open(&f, "-", &o, NULL, 0);
    so_write(f, "x", 1);
    check_capture_start();
    rc |= so_commit(&f);
    msg = check_capture_end();
    dup2(saved, 1);
    close(saved);
    CHECK(rc == -1 && strstr(msg, "standard output: cannot write: Broken pipe"),
          "closed pipe: EPIPE reported, not killed by SIGPIPE", "rc=%d '%s'",
          rc, msg);
}

/* In a child (one thread, before the parent's sig_init): sig_init, an
 * output p written, then `sig` twice.  The first must only raise sig_stop
 * (exit 51 otherwise), the second exit 128+sig at once; returns the
 * child's wait status. */
static int signalled_twice(const char *p, const so_opts *o, int sig)
{
    pid_t pid;
    int status = 0;

    fflush(stdout);
    pid = fork();
    if (pid == 0) {
        so_file *f = NULL;
        struct timespec ts = { 0, 10 * 1000 * 1000 };
        int i;
        if (sig_init() != 0 || so_open(&f, p, o, NULL, 0) != 0)
            _exit(50);
        so_write(f, "data", 4);
        so_fd(f);
        kill(getpid(), sig);
        for (i = 0; i < 200 && !sig_stopped(); i++)
            nanosleep(&ts, NULL);
        if (sig_stop != sig || sig_exit_status() != 128 + sig)
            _exit(51);
        kill(getpid(), sig);
        for (i = 0; i < 200; i++)
            nanosleep(&ts, NULL);
        _exit(52);
    }
    waitpid(pid, &status, 0);
    return status;
}

/* Second signal: temp files removed, immediate exit 128+sig. */
static void test_second_signal(void)
{
    char p[256];
    so_opts o = { 0, 0 };
    int status;

    clear_dir();
    path_in(p, sizeof p, "sig.png");
    status = signalled_twice(p, &o, SIGTERM);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 143,
          "first signal sets sig_stop, second exits 143",
          "status 0x%x", status);
    CHECK(count_entries(dir, NULL, 0) == 0, "second signal removed the temp",
          "%d entries", count_entries(dir, NULL, 0));
}

static void test_signals(void)
{
    struct sigaction sa;
    struct timespec ts = { 0, 10 * 1000 * 1000 };
    int i;

    CHECK(sig_init() == 0 && sig_init() == 0, "sig_init (twice is fine)",
          " ");
    sigaction(SIGPIPE, NULL, &sa);
    CHECK(sa.sa_handler == SIG_IGN, "SIGPIPE ignored", " ");
    sigaction(SIGXFSZ, NULL, &sa);
    CHECK(sa.sa_handler == SIG_IGN, "SIGXFSZ ignored", " ");
    kill(getpid(), SIGINT);
    for (i = 0; i < 200 && !sig_stopped(); i++)
        nanosleep(&ts, NULL);
    CHECK(sig_stop == SIGINT && sig_exit_status() == 130,
          "SIGINT raises sig_stop, exit status 130", "sig_stop=%d",
          sig_stop);
}

/* Valid UTF-8 (each lead byte followed by its continuation bytes)? */
static int valid_utf8(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        int n = *p < 0x80 ? 0 : (*p & 0xE0) == 0xC0 ? 1 : (*p & 0xF0) == 0xE0 ? 2
                : (*p & 0xF8) == 0xF0 ? 3 : -1;
        if (n < 0)
            return 0;
        p++;
        for (; n > 0; n--, p++)
            if ((*p & 0xC0) != 0x80)
                return 0;
    }
    return 1;
}

/* Names near NAME_MAX (255 bytes): the temp name and NAME.partial.EXT
 * must fit too, and a cut never splits a UTF-8 character. */
static void test_long_names(void)
{
    char name[300], p[600], first[300];
    so_file *f = NULL;
    so_opts o = { 0, 0 }, k = { 0, 1 };
    const char *msg;
    int rc, n;

    /* 251 bytes + ".png" = 255: the longest name a filesystem allows */
    clear_dir();
    memset(name, 'a', 251);
    memcpy(name + 251, ".png", 5);
    path_in(p, sizeof p, name);
    rc = so_open(&f, p, &o, NULL, 0);
    n = count_entries(dir, first, sizeof first);
    CHECK(rc == 0 && n == 1 && strlen(first) <= 255 && first[0] == '.',
          "255-byte name: temp name fits", "rc=%d entries=%d len=%zu", rc, n,
          strlen(first));
    so_write(f, "x", 1);
    rc = so_commit(&f);
    CHECK(rc == 0 && access(p, F_OK) == 0 && count_entries(dir, NULL, 0) == 1,
          "255-byte name: committed", "rc=%d", rc);

    /* --keep-partial: "NAME.partial.png" would be 263 bytes */
    clear_dir();
    rc = so_open(&f, p, &k, NULL, 0);
    so_write(f, "part", 4);
    check_capture_start();
    so_abort(&f);
    msg = check_capture_end();
    n = count_entries(dir, first, sizeof first);
    CHECK(rc == 0 && n == 1 && strlen(first) == 255 &&
              !strcmp(first + 255 - 12, ".partial.png") && first[0] == 'a',
          "255-byte name, --keep-partial: stem cut, NAME.partial.png kept",
          "entries=%d '%.20s...' (%zu bytes)", n, first, strlen(first));
    CHECK(strstr(msg, "partial output kept as") && !strstr(msg, "cannot keep"),
          "255-byte name, --keep-partial: one note", "'%.80s'", msg);

    /* "x", 82 three-byte characters, ".png" = 251 bytes: the temp name is
     * cut at 200 bytes and the partial's stem at 243, both inside a
     * character */
    clear_dir();
    strcpy(name, "x");
    for (int i = 0; i < 82; i++)
        strcat(name, "\xe6\x97\xa5"); /* U+65E5 */
    strcat(name, ".png");
    path_in(p, sizeof p, name);
    rc = so_open(&f, p, &k, NULL, 0);
    n = count_entries(dir, first, sizeof first);
    CHECK(rc == 0 && n == 1 && valid_utf8(first),
          "long UTF-8 name: temp name cut on a character boundary",
          "rc=%d entries=%d", rc, n);
    so_write(f, "part", 4);
    check_capture_start();
    so_abort(&f);
    check_capture_end();
    n = count_entries(dir, first, sizeof first);
    CHECK(n == 1 && valid_utf8(first) && strlen(first) <= 255 &&
              strstr(first, ".partial.png"),
          "long UTF-8 name, --keep-partial: partial name cut on a character "
          "boundary", "entries=%d len=%zu", n, strlen(first));
    clear_dir();
}

// ---------------------------------------------------------------------------
// Unnamed temp files (O_TMPFILE)

static void test_tmpfile(mode_t um)
{
    char p[256], q[256], got[64];
    so_file *f = NULL;
    so_opts o = { 0, 0 }, y = { 1, 0 }, k = { 0, 1 };
    const char *msg;
    struct stat st;
    pid_t pid;
    int fd, rc, n, status = 0;

    fd = open(dir, O_TMPFILE | O_WRONLY, 0600);
    if (fd < 0) {
        SKIP("O_TMPFILE outputs", strerror(errno));
        return;
    }
    close(fd);
    so_use_tmpfile(1);

    clear_dir();
    path_in(p, sizeof p, "out.png");
    rc = so_open(&f, p, &o, NULL, 0);
    n = count_entries(dir, NULL, 0);
    CHECK(rc == 0 && n == 0 && !strncmp(so_path(f), "/proc/self/fd/", 14),
          "O_TMPFILE: no name while writing, so_path is /proc/self/fd/N",
          "rc=%d entries=%d '%s'", rc, n, f ? so_path(f) : "");
    so_write(f, "hello", 5);
    rc = so_commit(&f);
    CHECK(rc == 0 && read_file(p, got, sizeof got) == 5 && !strcmp(got, "hello") &&
              stat(p, &st) == 0 && (st.st_mode & 0777) == (0666 & ~um) &&
              count_entries(dir, NULL, 0) == 1,
          "O_TMPFILE: linked into place with mode 0666 & ~umask", "rc=%d '%s' mode %o",
          rc, got, (unsigned)(st.st_mode & 0777));

    /* no-replace: a file appearing under the name meanwhile is kept */
    path_in(q, sizeof q, "race.png");
    msg = commit_raced(q, &o, &rc);
    CHECK(rc == -1 && strstr(msg, "race.png: output exists (use -y to overwrite)") &&
              read_file(q, got, sizeof got) == 6 && !strcmp(got, "theirs") &&
              count_entries(dir, NULL, 0) == 2,
          "O_TMPFILE: linkat never replaces (EEXIST: output exists)", "rc=%d '%s' '%s'", rc,
          msg, got);

    /* -y: replaced through a temp name, none left */
    rc = so_open(&f, p, &y, NULL, 0);
    so_write(f, "new", 3);
    n = count_entries(dir, NULL, 0);
    rc = so_commit(&f) || rc;
    CHECK(rc == 0 && n == 2 && read_file(p, got, sizeof got) == 3 && !strcmp(got, "new") &&
              count_entries(dir, NULL, 0) == 2,
          "O_TMPFILE, -y: replaced, no temp name left", "rc=%d entries %d '%s'", rc, n, got);

    /* --keep-partial: linked as NAME.partial.EXT, an older one replaced */
    clear_dir();
    path_in(q, sizeof q, "k.partial.png");
    write_file(q, "older");
    path_in(p, sizeof p, "k.png");
    rc = so_open(&f, p, &k, NULL, 0);
    so_write(f, "part", 4);
    check_capture_start();
    so_abort(&f);
    msg = check_capture_end();
    CHECK(rc == 0 && read_file(q, got, sizeof got) == 4 && !strcmp(got, "part") &&
              count_entries(dir, NULL, 0) == 1 && strstr(msg, "partial output kept as"),
          "O_TMPFILE, --keep-partial: NAME.partial.EXT linked over the older one",
          "rc=%d '%s' '%s'", rc, got, msg);

    /* SIGKILL: nothing to clean up */
    clear_dir();
    path_in(p, sizeof p, "killed.png");
    fflush(stdout);
    pid = fork();
    if (pid == 0) {
        if (so_open(&f, p, &o, NULL, 0) != 0)
            _exit(50);
        so_write(f, "data", 4);
        so_fd(f);
        kill(getpid(), SIGKILL);
        _exit(51);
    }
    waitpid(pid, &status, 0);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL && count_entries(dir, NULL, 0) == 0,
          "O_TMPFILE: SIGKILL while writing leaves nothing", "status 0x%x, %d entries", status,
          count_entries(dir, NULL, 0));

    /* a second SIGHUP exits at once, the partial linked */
    path_in(p, sizeof p, "hup.png");
    path_in(q, sizeof q, "hup.partial.png");
    status = signalled_twice(p, &k, SIGHUP);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 129 &&
              read_file(q, got, sizeof got) == 4 && count_entries(dir, NULL, 0) == 1,
          "O_TMPFILE, --keep-partial: second SIGHUP exits 129 with the partial linked",
          "status 0x%x, %d entries", status, count_entries(dir, NULL, 0));
    clear_dir();
    so_use_tmpfile(0);
}

/* A named temp file no one holds is named once, one line; one a live
 * writer holds (flock) is not. */
static void test_stale(void)
{
    char sub[128], p[256], q[256];
    so_file *f = NULL;
    so_opts o = { 0, 0 };
    const char *msg;
    int live, rc;

    clear_dir();
    path_in(sub, sizeof sub, "stale");
    mkdir(sub, 0700);
    snprintf(p, sizeof p, "%s/.out.png.Ab12Cd.tmp", sub);
    write_file(p, "old");
    snprintf(q, sizeof q, "%s/.out.png.Zz99Yy.tmp", sub);
    write_file(q, "live");
    live = open(q, O_RDONLY);
    flock(live, LOCK_EX);
    snprintf(p, sizeof p, "%s/out.png", sub);
    check_capture_start();
    rc = so_open(&f, p, &o, NULL, 0);
    msg = check_capture_end();
    CHECK(rc == 0 && strstr(msg, "stale/.out.png.Ab12Cd.tmp: temp file of an interrupted run") &&
              !strstr(msg, "Zz99Yy") && strchr(msg, '\n') == msg + strlen(msg) - 1,
          "a stale temp file is named in one line, a locked one is not", "'%s'", msg);
    so_abort(&f);
    snprintf(p, sizeof p, "%s/other.png", sub);
    check_capture_start();
    rc = so_open(&f, p, &o, NULL, 0);
    msg = check_capture_end();
    CHECK(rc == 0 && !*msg, "named once a directory", "'%s'", msg);
    so_abort(&f);
    close(live);
    clear_dir();
}

/* sig_on_exit: the second signal runs the cleanups in the order given,
 * then exits 128+N; a ninth is refused.  In a child, before the parent's
 * sig_init; the cleanups write to a pipe. */
static int cleanup_fd = -1;
static void cleanup_a(void) { (void)!write(cleanup_fd, "a", 1); }
static void cleanup_b(void) { (void)!write(cleanup_fd, "b", 1); }
static void cleanup_none(void) {}

static void test_sig_on_exit(void)
{
    int pfd[2], status = 0;
    char got[8] = {0};
    ssize_t n;
    pid_t pid;

    if (pipe(pfd) != 0) {
        CHECK(0, "sig_on_exit: a pipe", "%s", strerror(errno));
        return;
    }
    fflush(stdout);
    pid = fork();
    if (pid == 0) {
        struct timespec ts = { 0, 10 * 1000 * 1000 };
        int i;
        close(pfd[0]);
        cleanup_fd = pfd[1];
        if (sig_init() != 0 || sig_on_exit(cleanup_a) || sig_on_exit(cleanup_b))
            _exit(50);
        for (i = 2; i < 8; i++)
            if (sig_on_exit(cleanup_none))
                _exit(51);
        if (sig_on_exit(cleanup_none) != -1)
            _exit(52);
        kill(getpid(), SIGUSR1);
        for (i = 0; i < 200 && !sig_stopped(); i++)
            nanosleep(&ts, NULL);
        kill(getpid(), SIGUSR1);
        for (i = 0; i < 200; i++)
            nanosleep(&ts, NULL);
        _exit(53);
    }
    close(pfd[1]);
    for (n = 0; n < (ssize_t)sizeof got - 1;) { /* until the child's exit closes it */
        ssize_t r = read(pfd[0], got + n, sizeof got - 1 - (size_t)n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        n += r;
    }
    close(pfd[0]);
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 128 + SIGUSR1 && n == 2 &&
          !strcmp(got, "ab"),
          "sig_on_exit: the second signal runs the cleanups in order, exits 138; a ninth refused",
          "status 0x%x (50 init, 51 register, 52 ninth), cleanups wrote '%s'", status, got);
}

/* Every terminating signal stops the work; one the parent ignored stays
 * ignored.  In a child, before the parent's sig_init. */
static void test_signal_set(void)
{
    pid_t pid;
    int status = 0;

    fflush(stdout);
    pid = fork();
    if (pid == 0) {
        struct timespec ts = { 0, 10 * 1000 * 1000 };
        sigset_t blocked;
        int i;
        signal(SIGHUP, SIG_IGN);
        if (sig_init() != 0)
            _exit(50);
        pthread_sigmask(SIG_BLOCK, NULL, &blocked);
        if (sigismember(&blocked, SIGHUP) || !sigismember(&blocked, SIGQUIT) ||
            !sigismember(&blocked, SIGUSR1) || !sigismember(&blocked, SIGALRM) ||
            !sigismember(&blocked, SIGRTMIN + 1))
            _exit(51);
        kill(getpid(), SIGHUP);
        nanosleep(&ts, NULL);
        if (sig_stopped())
            _exit(52);
        kill(getpid(), SIGUSR2);
        for (i = 0; i < 200 && !sig_stopped(); i++)
            nanosleep(&ts, NULL);
        if (sig_stop != SIGUSR2 || sig_exit_status() != 140 ||
            strcmp(sig_name(SIGUSR2), "SIGUSR2") || strcmp(sig_name(SIGRTMIN + 2), "SIGRTMIN+2"))
            _exit(53);
        _exit(0);
    }
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
          "SIGQUIT/USR1/ALRM/RTMIN+1 waited for, inherited SIG_IGN SIGHUP stays ignored, "
          "SIGUSR2 exits 140", "child status 0x%x (50 init, 51 mask, 52 SIGHUP, 53 SIGUSR2)",
          status);
}

int main(void)
{
    mode_t um;

    /* A umask that tells 0666 & ~umask apart from mkstemp's 0600. */
    um = 027;
    umask(um);
    snprintf(dir, sizeof dir, "/tmp/gpuedge-test-so-XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    so_use_tmpfile(0);
    test_signal_set();
    test_sig_on_exit();
    test_tmpfile(um);
    test_stale();
    test_second_signal();
    test_commit(um);
    test_exists();
    test_abort();
    test_long_names();
    test_big_writes();
    test_writeback();
    test_same_file();
    test_dirs();
    test_direct();
    test_signals();
    test_epipe();
    clear_dir();
    rmdir(dir);
    CHECK_EXIT();
}
