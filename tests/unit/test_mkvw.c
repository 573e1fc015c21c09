/*
 * test_mkvw.c — an FFVHuff .mkv written by mkvw (src/io/mkvw.h), its
 * writers copying into a mapping of the file or pwriting, is byte for
 * byte the file libavformat's Matroska muxer writes for the same frames
 * (venc_opts.mkv_via), across what decides its layout: packets
 * from a few bytes (clusters of many blocks, the 4 KiB rule) to 10 MB
 * (4-byte lengths), the 5 s and 32,767 ms cluster rules, time bases finer
 * than the track's millisecond (equal timestamps, one cue), negative first
 * timestamps, packets without a duration (the frame rate's), zero frames,
 * encoder threads, a mapping of more than one chunk (64 MiB).  Then the
 * file reads back; a full file system is an error, not a SIGBUS; mkvw_open
 * refuses a header it does not know; and, as on a kernel without
 * MADV_POPULATE_WRITE, the mapped writers fall back to fallocate.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <libavutil/rational.h>

#include "check.h"
#include "frames.h"
#include "hfyu_enc.h"
#include "mkvw.h"
#include "safeout.h"
#include "venc.h"
#include "video_io.h"

static char dir[256];

static const char *tpath(const char *name)
{
    static char buf[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

static uint32_t rng = 12345;
static unsigned rnd(void)
{
    rng = rng * 1664525u + 1013904223u;
    return rng >> 8;
}

/* Frame content: 0 flat (the smallest packets), 1 noise (the largest),
 * 2 noise in a random number of rows (sizes spread across the 4 KiB
 * rule), 3 a gradient. */
static void fill(uint8_t *e, int w, int h, int kind)
{
    int rows = kind == 2 ? (int)(rnd() % (unsigned)(h + 1)) : h;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            e[(size_t)y * w + x] = kind == 0 ? 0
                                   : kind == 3 ? (uint8_t)(x * 3 + y)
                                   : y < rows ? (uint8_t)rnd() : 7;
}

typedef struct mcase {
    const char *name;
    int w, h, n;
    AVRational tb, fps;
    int kind;
    int threads;
    int64_t (*pts)(int i); /* NULL: 0, 1, 2, ... */
    int64_t (*dur)(int i); /* NULL: none (the writer's rule) */
} mcase;

/* FFVHuff's tables as the writer holds them (venc_ffvhuff_codes: code <<
 * 5 | length), for packets coded here as the GPU codes them. */
static int coded_tab(hfyu_tab *t)
{
    memset(t, 0, sizeof *t);
    if (venc_ffvhuff_codes(t->cl))
        return -1;
    for (int i = 0; i < 256; i++) {
        t->code[i] = t->cl[i] >> 5;
        t->len[i] = (uint8_t)(t->cl[i] & 31);
        if (t->len[i] > t->max_len)
            t->max_len = t->len[i];
    }
    return 0;
}

/* Packets lent to the writer as the GPU engine lends them (its pool,
 * coded_cuda.c): each in its own buffer; every fifth lend refused (the
 * writer then copies).  Counted: every lent one must come back once. */
typedef struct tloan {
    buf_loan l;
    uint8_t *p;
} tloan;
static int n_lent, n_back, n_refused;

static void tloan_free(tloan *t)
{
    if (t)
        free(t->p);
    free(t);
}

static void t_give_back(buf_loan *l)
{
    tloan_free((tloan *)l);
    __atomic_add_fetch(&n_back, 1, __ATOMIC_RELAXED);
}

static buf_loan *t_lend(void *ctx)
{
    tloan **cur = ctx, *t = *cur;
    if ((n_lent + n_refused) % 5 == 4) {
        n_refused++;
        return NULL;
    }
    *cur = NULL;
    n_lent++;
    return &t->l;
}

/* The packets lent since the last call all came back? */
static int loans_back(void)
{
    int ok = __atomic_load_n(&n_back, __ATOMIC_RELAXED) == n_lent;
    n_lent = n_back = n_refused = 0;
    return ok;
}

enum { PIXELS, CODED, LENT };

/* Writes case c with venc: as pixels, as packets coded here (CODED,
 * venc_put_coded, the GPU engine's way), or those lent (LENT); 0, or -1.
 * *muxer: who wrote it. */
static int write_case_as(const mcase *c, const char *name, int via, int coded,
                         const char **muxer)
{
    so_file *out = NULL;
    venc_writer *wr = NULL;
    so_opts so = {1, 0};
    venc_opts vo = {.threads = c->threads, .codec = "ffvhuff", .mkv_via = via};
    uint8_t *e = malloc((size_t)c->w * c->h), *pkt = NULL;
    hfyu_tab t;
    int rc = 0;
    rng = 777;
    if (coded && (coded_tab(&t) || !(pkt = malloc(hfyu_max_bytes(&t, c->w, c->h)))))
        rc = -1;
    if (rc || !e || so_open(&out, name, &so, NULL, 0)) {
        free(e);
        free(pkt);
        return -1;
    }
    if (venc_open(out, "mkv", c->w, c->h, c->tb, c->fps, &vo, &wr)) {
        so_abort(&out);
        free(e);
        return -1;
    }
    *muxer = venc_muxer(wr);
    for (int i = 0; i < c->n && !rc; i++) {
        int64_t pts = c->pts ? c->pts(i) : i, dur = c->dur ? c->dur(i) : 0;
        tloan *cur = NULL;
        fill(e, c->w, c->h, c->kind);
        if (coded == LENT && (!(cur = calloc(1, sizeof *cur)) ||
                              !(cur->p = malloc(hfyu_max_bytes(&t, c->w, c->h))))) {
            tloan_free(cur);
            rc = -1;
            break;
        }
        if (cur) {
            cur->l.give_back = t_give_back;
            rc = venc_put_coded(wr, cur->p, hfyu_code(&t, e, c->w, c->w, c->h, cur->p), t.cl,
                                c->w, c->h, pts, dur, t_lend, &cur);
            tloan_free(cur); /* not lent: copied */
        } else {
            rc = coded ? venc_put_coded(wr, pkt, hfyu_code(&t, e, c->w, c->w, c->h, pkt), t.cl,
                                        c->w, c->h, pts, dur, NULL, NULL)
                       : venc_put(wr, e, c->w, pts, dur);
        }
    }
    free(e);
    free(pkt);
    if (venc_close(&wr, rc != 0) || rc) {
        so_abort(&out);
        return -1;
    }
    return so_commit(&out);
}

static int write_case(const mcase *c, const char *name, int via, const char **muxer)
{
    return write_case_as(c, name, via, 0, muxer);
}

static int64_t ms40(int i) { return 40LL * i; }
/* a cluster's time: 5,001 ms after it began (the 5 s rule is "more
 * than"), then jumps past 32,767 ms */
static int64_t jumps(int i)
{
    return i < 4 ? 10LL * i : i == 4 ? 5001 : i < 8 ? 40000LL + 10 * i
           : i < 15 ? 100000LL + 7000LL * i : 3725500; /* 1:02:05.5 */
}
/* 90 kHz, half-millisecond and irregular steps: equal millisecond dts */
static int64_t fine(int i) { return 45LL * i + (i % 3) * 17; }
static int64_t neg(int i) { return -2000 + 40LL * i; }
static int64_t vfr(int i) { return (int64_t)i * i * 90; }
static int64_t vfr_dur(int i) { return i % 4 ? 90LL * (2 * i + 1) : 0; }

static const mcase cases[] = {
    {"1080p noise (3-byte lengths)", 1920, 1080, 3, {1, 25}, {25, 1}, 1, 1, NULL, NULL},
    {"4K noise (4-byte lengths)", 4096, 2304, 1, {1, 25}, {25, 1}, 1, 1, NULL, NULL},
    {"1080p gradient, 16 threads", 1920, 1080, 6, {1, 25}, {25, 1}, 3, 16, NULL, NULL},
    {"16x16 flat, 300 frames (clusters of many blocks, the 5 s rule)", 16, 16, 300,
     {1, 1000}, {25, 1}, 0, 1, ms40, NULL},
    {"4x4 flat (a cluster 5,000 ms long, then the next)", 4, 4, 300, {1, 1000}, {25, 1}, 0,
     1, ms40, NULL},
    {"64x64 sizes across 4 KiB, 200 frames", 64, 64, 200, {1, 1000}, {25, 1}, 2, 1, ms40,
     NULL},
    {"64x64 across 4 KiB, 16 threads", 64, 64, 120, {1, 1000}, {25, 1}, 2, 16, ms40, NULL},
    {"8x8: 5,001 ms into a cluster, jumps past 32,767 ms and an hour", 8, 8, 16, {1, 1000}, {25, 1}, 2, 1, jumps, NULL},
    {"90 kHz steps under a millisecond (equal timestamps)", 32, 32, 60, {1, 90000},
     {30, 1}, 2, 1, fine, NULL},
    {"negative first timestamps", 48, 32, 40, {1, 1000}, {25, 1}, 2, 1, neg, NULL},
    {"VFR with and without durations", 96, 64, 50, {1, 90000}, {24000, 1001}, 2, 1, vfr,
     vfr_dur},
    {"30000/1001 without durations", 640, 360, 20, {1001, 30000}, {30000, 1001}, 2, 1,
     NULL, NULL},
    {"zero frames", 320, 240, 0, {1, 25}, {25, 1}, 0, 1, NULL, NULL},
    {"4K noise, 8 frames (past the first 64 MiB mapped)", 4096, 2304, 8, {1, 25}, {25, 1}, 1,
     1, NULL, NULL},
};

static void test_same_bytes(void)
{
    static const char *const via[] = {"mapped", "pwrite"};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const mcase *c = &cases[k];
        const char *m2 = "?";
        int r2 = write_case(c, tpath("b.mkv"), VENC_MKV_LIBAV, &m2);
        size_t n2 = 0;
        unsigned char *b = check_slurp(tpath("b.mkv"), &n2);
        for (int v = 0; v < 2; v++) {
            const char *m1 = "?";
            char what[160];
            size_t n1 = 0, at = 0;
            int r1 = write_case(c, tpath("a.mkv"), v ? VENC_MKV_PWRITE : VENC_MKV_MAP, &m1);
            unsigned char *a = check_slurp(tpath("a.mkv"), &n1);
            while (a && b && at < n1 && at < n2 && a[at] == b[at])
                at++;
            snprintf(what, sizeof what, "mkvw (%s): %s == libavformat's file", via[v],
                     c->name);
            CHECK(r1 == 0 && r2 == 0 && !strcmp(m1, "mkvw") && !strcmp(m2, "libavformat") &&
                      a && b && n1 == n2 && at == n1 && n1 > 0,
                  what, "rc %d %d, muxers %s %s, %zu vs %zu bytes, first difference at %zu",
                  r1, r2, m1, m2, n1, n2, at);
            free(a);
        }
        free(b);
    }
}

/* The frames read back: count, pixels and timestamps (the VFR case). */
static void test_reads_back(void)
{
    const mcase *c = &cases[10];
    const char *m = "?";
    vid_reader *r = NULL;
    vid_opts o = {.max_frames = -1};
    host_buf buf = {0};
    src_frame fr;
    uint8_t *e = malloc((size_t)c->w * c->h);
    int k = 0, bad = write_case(c, tpath("v.mkv"), VENC_MKV_AUTO, &m) || !e, rc = 0;
    if (!bad && vid_open(tpath("v.mkv"), &o, &r))
        bad = 1;
    rng = 777;
    while (!bad && (rc = vid_next(r, &fr, &buf)) == 1) {
        int64_t pts, dur;
        fill(e, c->w, c->h, c->kind);
        vid_last_ts(r, &pts, &dur);
        for (int y = 0; y < c->h && !bad; y++)
            bad = memcmp(fr.f.data + (size_t)y * fr.f.stride, e + (size_t)y * c->w,
                         (size_t)c->w) != 0;
        /* 90 kHz ticks, read back in milliseconds */
        bad |= k >= c->n || pts != (vfr(k) + 45) / 90;
        k++;
    }
    CHECK(!bad && rc == 0 && k == c->n, "mkvw: the VFR file reads back (frames, pixels, pts)",
          "%d of %d frames, rc %d, bad %d", k, c->n, rc, bad);
    vid_close(&r);
    host_buf_free(&buf);
    free(e);
}

/* In RAM (tmpfs) the default writes packets the GPU coded through a
 * mapping, frames coded on the cores with pwrite: either equals
 * libavformat's file, with one encoder and with encoder threads; packets
 * lent come back once written. */
static void test_in_ram(void)
{
    char a[300], b[300];
    if (access("/dev/shm", W_OK)) {
        SKIP("mkvw (default, in RAM) == libavformat's file", "no writable /dev/shm");
        return;
    }
    snprintf(a, sizeof a, "/dev/shm/test_mkvw.%d.a.mkv", (int)getpid());
    snprintf(b, sizeof b, "/dev/shm/test_mkvw.%d.b.mkv", (int)getpid());
    static const char *const what[] = {
        "mkvw (default, in RAM, frames coded on the cores) == libavformat's file",
        "mkvw (default, in RAM, packets coded as the GPU codes them) == libavformat's file",
        "mkvw (default, in RAM, those packets lent, every fifth copied) == libavformat's "
        "file, each lent one given back"};
    for (int k = 0; k < 6; k++) {
        const mcase *c = &cases[k < 3 ? 5 : 6]; /* one encoder, 16 threads */
        int coded = k % 3;
        const char *m1 = "?", *m2 = "?";
        char name[200];
        size_t n1 = 0, n2 = 0;
        int r1 = write_case_as(c, a, VENC_MKV_AUTO, coded, &m1), lent = n_lent;
        int back = loans_back();
        int r2 = write_case(c, b, VENC_MKV_LIBAV, &m2);
        unsigned char *x = check_slurp(a, &n1), *y = check_slurp(b, &n2);
        snprintf(name, sizeof name, "%s: %s", c->name, what[coded]);
        CHECK(r1 == 0 && r2 == 0 && !strcmp(m1, "mkvw") && x && y && n1 == n2 && n1 > 0 &&
                  !memcmp(x, y, n1) && back && (coded != LENT || lent > c->n / 2),
              name, "rc %d %d, %s, %zu vs %zu bytes, %d lent, back %d", r1, r2, m1, n1, n2,
              lent, back);
        free(x);
        free(y);
    }
    unlink(a);
    unlink(b);
}

/* A full file system: the write fails with "No space left on device"
 * (an error, not a SIGBUS through the mapping) and nothing is left,
 * either way of writing; full at the first packet (1 MiB) or at the third
 * (8 MiB: two 3.2 MB packets fit).  Needs a small tmpfs (mount(2), root). */
static void test_full(const char *how)
{
    static const char *const via[] = {"mapped", "pwrite"}, *const size[] = {"1m", "8m"};
    char d[300], name[340], opt[20];
    snprintf(d, sizeof d, "%s/full", dir);
    snprintf(name, sizeof name, "%s/f.mkv", d);
    if (mkdir(d, 0700)) {
        SKIP("mkvw: a full file system fails cleanly", "cannot make a directory here");
        return;
    }
    for (int k = 0; k < 4; k++) {
        const char *m = "?", *msg;
        char what[160];
        int rc, v = k % 2;
        DIR *dp;
        int left = 0;
        snprintf(opt, sizeof opt, "size=%s", size[k / 2]);
        if (mount("tmpfs", d, "tmpfs", 0, opt)) {
            SKIP("mkvw: a full file system fails cleanly", "cannot mount a tmpfs here");
            break;
        }
        check_capture_start();
        rc = write_case_as(&cases[0], name, v ? VENC_MKV_PWRITE : VENC_MKV_MAP, LENT, &m);
        msg = check_capture_end();
        int lent = n_lent, back = loans_back();
        if ((dp = opendir(d))) {
            for (struct dirent *de; (de = readdir(dp));)
                left += de->d_name[0] != '.';
            closedir(dp);
        }
        umount(d);
        snprintf(what, sizeof what,
                 "mkvw (%s%s, %s tmpfs): a full file system fails (ENOSPC), nothing left, "
                 "every lent packet back", via[v], how, size[k / 2]);
        CHECK(rc != 0 && !strcmp(m, "mkvw") && strstr(msg, "No space left on device") &&
                  left == 0 && lent > 0 && back,
              what, "rc %d, %s, %d files left, %d lent, back %d, said: %s", rc, m, left, lent,
              back, msg);
    }
    rmdir(d);
}

/* From here on, for the rest of the process, madvise(MADV_POPULATE_WRITE)
 * fails with EINVAL as on a kernel before 5.14 (a seccomp filter; the
 * threads started later inherit it; the filter looks at native system
 * calls only, the test making no others).  0, or -1 where seccomp is not
 * available. */
static int no_populate(void)
{
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_madvise, 0, 3),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, MADV_POPULATE_WRITE, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EINVAL),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {sizeof f / sizeof f[0], f};
    return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
                   prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)
               ? -1
               : 0;
}

/* Without MADV_POPULATE_WRITE the mapped writers reserve each packet with
 * fallocate instead: the same bytes, in RAM (the default, packets coded as
 * the GPU codes them) and in the test's directory (mapped). */
static void test_no_populate(void)
{
    char a[300];
    snprintf(a, sizeof a, "/dev/shm/test_mkvw.%d.a.mkv", (int)getpid());
    for (int k = 0; k < 4; k++) {
        const mcase *c = &cases[k % 2 ? 0 : 6];
        int ram = k < 2 && !access("/dev/shm", W_OK);
        const char *m1 = "?", *m2 = "?", *name = ram ? a : tpath("a.mkv");
        char what[200];
        size_t n1 = 0, n2 = 0;
        int r1 = write_case_as(c, name, ram ? VENC_MKV_AUTO : VENC_MKV_MAP, CODED, &m1);
        int r2 = write_case(c, tpath("b.mkv"), VENC_MKV_LIBAV, &m2);
        unsigned char *x = check_slurp(name, &n1), *y = check_slurp(tpath("b.mkv"), &n2);
        snprintf(what, sizeof what,
                 "mkvw (mapped, no MADV_POPULATE_WRITE, %s): %s == libavformat's file",
                 ram ? "in RAM" : "the test's directory", c->name);
        CHECK(r1 == 0 && r2 == 0 && !strcmp(m1, "mkvw") && x && y && n1 == n2 && n1 > 0 &&
                  !memcmp(x, y, n1),
              what, "rc %d %d, %s, %zu vs %zu bytes", r1, r2, m1, n1, n2);
        free(x);
        free(y);
    }
    unlink(a);
}

/* mkvw_open takes only the header layout it knows. */
static void test_refuses(void)
{
    static const uint8_t junk[] = {0x1A, 0x45, 0xDF, 0xA3, 0x80, 0x18, 0x53, 0x80, 0x67,
                                   0x81, 0x00};
    so_file *out = NULL;
    so_opts so = {1, 0};
    mkvw *m = NULL;
    int rc = -1;
    if (so_open(&out, tpath("r.mkv"), &so, NULL, 0) == 0) {
        rc = mkvw_open(&m, out, junk, sizeof junk, 1, 1000, 40, MKVW_MAP);
        so_abort(&out);
    }
    CHECK(rc == -EINVAL && !m, "mkvw: refuses a header it does not know", "rc %d", rc);
}

int main(void)
{
    if (check_tmpdir(dir, sizeof dir, "test_mkvw")) {
        perror("mkdtemp");
        return 1;
    }
    test_same_bytes();
    test_reads_back();
    test_in_ram();
    test_full("");
    test_refuses();
    /* last: what follows runs as on an older kernel */
    if (no_populate()) {
        SKIP("mkvw: without MADV_POPULATE_WRITE", "no seccomp filter here");
    } else {
        test_no_populate();
        test_full(", no MADV_POPULATE_WRITE");
    }
    check_rm_dir(dir);
    CHECK_EXIT();
}
