/*
 * test_vauto — --hwdec=auto's rule (vsrc_auto_nvdec, src/io/vsource.c):
 * the cases measured on the H200 (docs/bench-log.md "NVDEC in segments") get
 * the faster decoder, and the rule's edges sit where vsource.c says; and
 * vsrc_open applies it (-v says which and why) with the frames unchanged.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "hwdec.h"
#include "util.h"
#include "vsource.h"

/* A host frame's luma into an FNV-1a hash, row by row (not the padding). */
static void hash_luma(const src_frame *fr, uint64_t *hash)
{
    const uint8_t *p = fr->f.data;
    size_t row = (size_t)fr->f.width * fr->f.bytes_per_sample;
    for (int y = 0; y < fr->f.height; y++)
        for (size_t x = 0; x < row; x++)
            *hash = (*hash ^ p[(size_t)y * fr->f.stride + x]) * 1099511628211ull;
}

/* Every frame's luma of a vsrc run, hashed (FNV-1a over rows), and the
 * frame count; -1 on failure. */
static long run_vsrc(const char *path, int threads, int hwdec, uint64_t *hash)
{
    vid_opts o = {.start = 0, .max_frames = -1, .threads = threads, .hwdec = hwdec};
    vsrc *s = NULL;
    src_frame fr;
    host_buf buf = {0};
    long n = 0;
    int rc;
    *hash = 1469598103934665603ull;
    if (vsrc_open(path, &o, &s))
        return -1;
    while ((rc = vsrc_next(s, &fr, &buf)) == 1) {
        if (fr.on_device) {
            src_frame_release(&fr);
            rc = -1;
            break;
        }
        hash_luma(&fr, hash);
        n++;
    }
    vsrc_close(&s);
    host_buf_free(&buf);
    return rc < 0 ? -1 : n;
}

/* Standard input read as a video ("-"): once, without the software-first
 * open and reopen a file gets (which would lose what the first open read):
 * --hwdec=auto decides for one session (16 threads: software, and -v says
 * why; 4 threads: the reader's own NVDEC attempt); every frame as from the
 * file. */
static void test_pipe(const char *dir, const char *mp4)
{
    char mkv[64], cmd[512];
    uint64_t h_ref, h;
    long n_ref, n;
    const char *err;
    int in = dup(0);
    snprintf(mkv, sizeof mkv, "%s/c.mkv", dir);
    snprintf(cmd, sizeof cmd, "ffmpeg -nostdin -v error -i %s -c copy %s", mp4, mkv);
    if (in < 0 || system(cmd) != 0) {
        CHECK(0, "vauto: pipe: a Matroska copy of the clip", "ffmpeg failed");
        return;
    }
    n_ref = run_vsrc(mkv, 1, VID_HWDEC_NONE, &h_ref);
    for (int threads = 16; threads >= 4; threads -= 12) {
        int fd = open(mkv, O_RDONLY);
        if (fd < 0 || dup2(fd, 0) < 0) {
            CHECK(0, "vauto: pipe: stdin from the clip", "%s", strerror(errno));
            break;
        }
        close(fd);
        ge_verbose = 1;
        check_capture_start();
        n = run_vsrc("-", threads, VID_HWDEC_AUTO, &h);
        err = check_capture_end();
        ge_verbose = 0;
        dup2(in, 0);
        if (threads == 16)
            CHECK(n_ref == 200 && n == n_ref && h == h_ref && strstr(err, "a stream read once"),
                  "vauto: auto from a pipe, 16 threads: software (one session), every frame",
                  "%ld of %ld frames, hash %s; stderr: %.300s", n, n_ref,
                  h == h_ref ? "same" : "differs", err);
        else
            CHECK(n == n_ref && h == h_ref && !strstr(err, "a stream read once"),
                  "vauto: auto from a pipe, 4 threads: the reader's NVDEC attempt (here "
                  "software), read once, every frame",
                  "%ld of %ld frames, hash %s; stderr: %.300s", n, n_ref,
                  h == h_ref ? "same" : "differs", err);
    }
    close(in);
    unlink(mkv);
}

/* The segment being handed on decodes ahead within the budget, not only
 * VS_HEAD_QUEUE (4) frames ahead of the consumer: with the consumer
 * stopped after one frame, segment 0 (25 frames) gets queued to its end.
 * The frames are the same as a plain decode's. */
static long head_ahead(const char *clip, int *most, uint64_t *hash)
{
    vid_opts o = {.start = 0, .max_frames = -1, .threads = 4, .hwdec = VID_HWDEC_NONE};
    vsrc *s = NULL;
    src_frame fr;
    host_buf buf = {0};
    long n = 0;
    int rc;
    rc = vsrc_open(clip, &o, &s);
    *most = -1;
    *hash = 1469598103934665603ull;
    if (rc)
        return -1;
    while ((rc = vsrc_next(s, &fr, &buf)) == 1) {
        if (n++ == 0 && vsrc_segments(s) >= 2) {
            /* up to 5 s for segment 0's other 24 frames (it has 25) */
            for (int t = 0; t < 500 && *most < 24; t++) {
                int q = vsrc_head_queued(s);
                *most = q > *most ? q : *most;
                usleep(10000);
            }
        }
        hash_luma(&fr, hash);
    }
    vsrc_close(&s);
    host_buf_free(&buf);
    return rc < 0 ? -1 : n;
}

static void test_head_ahead(const char *clip, long n_ref, uint64_t h_ref)
{
    int most;
    uint64_t h;
    long n = head_ahead(clip, &most, &h);
    CHECK(n == n_ref && h == h_ref && most == 24,
          "vauto: the head segment decodes ahead within the budget (24 frames queued behind a "
          "stopped consumer), same frames",
          "%ld frames, hash %s, at most %d queued", n, h == h_ref ? "same" : "differs", most);
}

/* vsrc_open under --hwdec=auto on this machine (no GPU needed): the rule
 * runs on a software open; software -> software segments, NVDEC -> the
 * reader's own NVDEC attempt (which, without a device, says so and decodes
 * in software).  Same frames as --hwdec=none either way. */
static void test_open(void)
{
    char dir[] = "/tmp/gpuedge-vauto.XXXXXX", clip[64], cmd[512];
    uint64_t h_ref, h;
    long n_ref, n;
    const char *err;
    if (system("command -v ffmpeg >/dev/null 2>&1") != 0) {
        printf("skip vauto: vsrc_open: no ffmpeg to make a clip\n");
        return;
    }
    if (!mkdtemp(dir)) {
        CHECK(0, "vauto: temp dir", "%s", strerror(errno));
        return;
    }
    snprintf(clip, sizeof clip, "%s/c.mp4", dir);
    snprintf(cmd, sizeof cmd,
             "ffmpeg -nostdin -v error -f lavfi -i testsrc2=size=320x240:rate=25 -frames:v 200 "
             "-c:v libx264 -preset ultrafast -g 25 -keyint_min 25 -sc_threshold 0 "
             "-pix_fmt yuv420p -threads 1 %s", clip);
    if (system(cmd) != 0) {
        printf("skip vauto: vsrc_open: ffmpeg could not make a clip\n");
        rmdir(dir);
        return;
    }
    n_ref = run_vsrc(clip, 1, VID_HWDEC_NONE, &h_ref);
    CHECK(n_ref == 200, "vauto: reference decode", "%ld frames", n_ref);
    ge_verbose = 1;
    check_capture_start();
    n = run_vsrc(clip, 16, VID_HWDEC_AUTO, &h);
    err = check_capture_end();
    CHECK(n == n_ref && h == h_ref && strstr(err, "--hwdec=auto: decoding in software (") &&
          strstr(err, "segments on") && !strstr(err, "NVDEC decoding"),
          "vauto: auto, 16 threads, 0.02 Gpx: software segments, same frames",
          "%ld frames, hash %s; stderr: %.300s", n, h == h_ref ? "same" : "differs", err);
    check_capture_start();
    n = run_vsrc(clip, 4, VID_HWDEC_AUTO, &h);
    err = check_capture_end();
    CHECK(n == n_ref && h == h_ref && strstr(err, "--hwdec=auto: NVDEC (") &&
          !strstr(err, "decoding in software ("),
          "vauto: auto, 4 threads: NVDEC chosen (here: no device, the reader decodes in "
          "software), same frames",
          "%ld frames, hash %s; stderr: %.300s", n, h == h_ref ? "same" : "differs", err);
    ge_verbose = 0;
    test_head_ahead(clip, n_ref, h_ref);
    test_pipe(dir, clip);
    unlink(clip);
    rmdir(dir);
}

int main(void)
{
    /* measured (16 threads, 2026-12-02, with slab buffers): NVDEC won on
     * every clip of 2 sessions and more; one session still loses */
    CHECK(vsrc_auto_nvdec(5, 16, 1.10), "vauto: bbb 1080p, 530 frames, 5 sessions: NVDEC", "software");
    CHECK(vsrc_auto_nvdec(2, 16, 2.20), "vauto: bbb 4K, 265 frames, 2 sessions: NVDEC", "software");
    CHECK(!vsrc_auto_nvdec(1, 16, 1.10), "vauto: one session, 16 threads: software", "NVDEC");
    CHECK(vsrc_auto_nvdec(7, 16, 3.30), "vauto: 1080p, 1590 frames, 7 sessions: NVDEC", "software");
    CHECK(vsrc_auto_nvdec(7, 16, 4.40), "vauto: 4K, 530 frames, 7 sessions: NVDEC", "software");
    /* edges */
    CHECK(vsrc_auto_nvdec(2, 16, 1.0), "vauto: 2 sessions and 1.0 Gpx: NVDEC", "software");
    CHECK(!vsrc_auto_nvdec(2, 16, 0.99), "vauto: just under 1.0 Gpx: software", "NVDEC");
    CHECK(!vsrc_auto_nvdec(1, 16, 100), "vauto: 1 session, however long: software", "NVDEC");
    CHECK(vsrc_auto_nvdec(1, 8, 0.01), "vauto: 8 threads: NVDEC even for one session", "software");
    CHECK(vsrc_auto_nvdec(1, 1, 0), "vauto: one thread: NVDEC", "software");
    CHECK(!vsrc_auto_nvdec(1, 9, 0.01), "vauto: 9 threads, one session: software", "NVDEC");
    CHECK(vsrc_auto_may_nvdec(16, 1.0) && !vsrc_auto_may_nvdec(16, 0.99) && vsrc_auto_may_nvdec(8, 0),
          "vauto: before the scan, NVDEC possible from 1.0 Gpx or at 8 threads", "no");
    /* Software engines beside NVDEC's (vsrc_mix_sw): the threads past
     * VS_MIX_KEEP, VS_MIX_SW_THREADS each, VS_MIX_MAX at most; none where
     * the run has VS_AUTO_FEW_THREADS threads or fewer */
    {
        int t = 0, n;
        n = vsrc_mix_sw(16, &t);
        CHECK(n == 6 && t == 2, "vauto: mix, 16 threads: 6 software engines of 2 threads",
              "%d of %d", n, t);
        CHECK(vsrc_mix_sw(8, &t) == 0 && vsrc_mix_sw(2, &t) == 0 && vsrc_mix_sw(1, &t) == 0,
              "vauto: mix, 8 threads or fewer: none (the cores are the run's)", "some");
        n = vsrc_mix_sw(9, &t);
        CHECK(n == 2, "vauto: mix, 9 threads: 2 software engines", "%d", n);
        n = vsrc_mix_sw(128, &t);
        CHECK(n == 9, "vauto: mix, 128 threads: 9 at most",
              "%d", n);
    }
    /* NVDEC's device budget (vsrc_dev_budget): an eighth of the free
     * memory within [2, 8] GiB; a small GPU keeps a quarter at most */
    {
        const size_t G = (size_t)1 << 30, M = (size_t)1 << 20;
        CHECK(vsrc_dev_budget(139 * G) == 8 * G, "vauto: budget, H200 (139 GiB free): 8 GiB", "other");
        CHECK(vsrc_dev_budget(40 * G) == 5 * G, "vauto: budget, 40 GiB free: 5 GiB", "other");
        CHECK(vsrc_dev_budget(16 * G) == 2 * G, "vauto: budget, 16 GiB free: 2 GiB", "other");
        CHECK(vsrc_dev_budget(10 * G) == 2 * G, "vauto: budget, 10 GiB free: 2 GiB (from 2)", "other");
        CHECK(vsrc_dev_budget(6 * G) == 6 * G / 4, "vauto: budget, 6 GiB free: a quarter", "other");
        CHECK(vsrc_dev_budget(100 * M) == 64 * M && vsrc_dev_budget(0) == 64 * M,
              "vauto: budget, almost nothing free (or unknown): 64 MiB", "other");
    }
    /* Software segments' host budget (vsrc_host_budget): a sixteenth of
     * RAM within [1, 8] GiB, a quarter of a small RAM at most; shared by
     * the engines, 256 MiB each at least (never more than one source's) */
    {
        const size_t G = (size_t)1 << 30, M = (size_t)1 << 20;
        CHECK(vsrc_host_budget(128 * G, 1) == 8 * G, "vauto: host budget, 128 GiB RAM: 8 GiB", "other");
        CHECK(vsrc_host_budget(24 * G, 1) == 3 * G / 2, "vauto: host budget, 24 GiB RAM: 1.5 GiB", "other");
        CHECK(vsrc_host_budget(1024 * G, 1) == 8 * G, "vauto: host budget, 1 TiB RAM: 8 GiB (cap)", "other");
        CHECK(vsrc_host_budget(16 * G, 1) == G && vsrc_host_budget(8 * G, 1) == G,
              "vauto: host budget, 16 and 8 GiB RAM: 1 GiB (floor)", "other");
        CHECK(vsrc_host_budget(2 * G, 1) == 512 * M, "vauto: host budget, 2 GiB RAM: a quarter", "other");
        CHECK(vsrc_host_budget(0, 1) == G, "vauto: host budget, RAM unknown: 1 GiB", "other");
        CHECK(vsrc_host_budget(128 * G, 4) == 2 * G && vsrc_host_budget(1024 * G, 16) == 512 * M,
              "vauto: host budget, 128 GiB / 4 engines: 2 GiB; 1 TiB / 16: 512 MiB", "other");
        CHECK(vsrc_host_budget(24 * G, 4) == 384 * M, "vauto: host budget, 24 GiB / 4 engines: 384 MiB",
              "other");
        CHECK(vsrc_host_budget(24 * G, 8) == 256 * M && vsrc_host_budget(2 * G, 4) == 256 * M,
              "vauto: host budget, many engines: 256 MiB each at least", "other");
        CHECK(vsrc_host_budget(512 * M, 4) == 128 * M,
              "vauto: host budget, 512 MiB RAM / 4 engines: no more than one source's", "other");
        CHECK(vsrc_host_budget(128 * G, 0) == 8 * G, "vauto: host budget, 0 engines: as one", "other");
        CHECK(vsrc_phys_bytes() > 0, "vauto: this machine's RAM is known", "unknown");
    }
    test_open();
    CHECK_EXIT();
}
