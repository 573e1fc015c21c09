/*
 * test_vchain — files chained on one decoder (vid_opts.next_input,
 * vid_read.c chain; DESIGN.md §4): a run that hands each file's end on to
 * the next gives every file the frames, indexes and timestamps it gives
 * alone, chains exactly where the streams continue one another (the
 * same parameter sets, size, format and time base), and leaves the
 * others to open as usual; a damaged file ends the chain.  The engines
 * chain on NVDEC; here the same code runs with one-thread software
 * decoders.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "util.h"
#include "vid_internal.h"
#include "vsource.h"

#define MAXF 12
#define MAXN 128

/* What a file gave: its frames' luma, indexes and timestamps, hashed. */
typedef struct got {
    long n;
    uint64_t hash;
    long corrupt;
    int rc;
} got;

static void mix(uint64_t *h, const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++)
        *h = (*h ^ b[i]) * 1099511628211ull;
}

static void add_frame(got *g, const vsrc *s, const src_frame *fr)
{
    const uint8_t *p = fr->f.data;
    size_t row = (size_t)fr->f.width * fr->f.bytes_per_sample;
    int64_t ts, dur;
    vsrc_last_ts(s, &ts, &dur);
    for (int y = 0; y < fr->f.height; y++)
        mix(&g->hash, p + (size_t)y * fr->f.stride, row);
    mix(&g->hash, &fr->index, sizeof fr->index);
    mix(&g->hash, &fr->pts, sizeof fr->pts);
    mix(&g->hash, &ts, sizeof ts);
    mix(&g->hash, &dur, sizeof dur);
    g->n++;
}

/* The chain's state, as an engine keeps it (src_media.c). */
typedef struct run {
    const char **names;
    int n, next, taken, asked;
} run;

static const char *next_input(void *ctx)
{
    run *r = ctx;
    r->asked++;
    if (r->next >= r->n)
        return NULL;
    r->taken = r->next++;
    return r->names[r->taken];
}

/* Decodes names[] in order as an engine does (threads: the decoders'),
 * offering each file's end to the next; out[i] per file, *chained[i] 1
 * when file i continued the decoder of the file before.  Returns the
 * files chained. */
static int run_files(const char **names, int n, int threads, got *out, int *chained, int *asked)
{
    run r = {names, n, 0, -1, 0};
    vid_opts o = {.max_frames = -1, .threads = threads, .next_input = next_input, .next_opaque = &r};
    host_buf buf = {0};
    vsrc *s = NULL;
    int cur = -1, nchained = 0;
    memset(out, 0, (size_t)n * sizeof *out);
    for (int i = 0; i < n; i++) {
        out[i].hash = 1469598103934665603ull;
        chained[i] = 0;
    }
    for (;;) {
        src_frame fr;
        int rc;
        if (!s) {
            if (r.taken >= 0) {
                cur = r.taken; /* taken, not chained: opened now */
                r.taken = -1;
            } else if (r.next < n) {
                cur = r.next++;
            } else {
                break;
            }
            if (vsrc_open(names[cur], &o, &s)) {
                out[cur].rc = -1;
                continue;
            }
        }
        while ((rc = vsrc_next(s, &fr, &buf)) == 1)
            add_frame(&out[cur], s, &fr);
        out[cur].rc = rc;
        out[cur].corrupt = vsrc_corrupt_count(s);
        {
            vsrc *nx = r.taken >= 0 && rc == 0 ? vsrc_successor(s, names[r.taken]) : NULL;
            vsrc_close(&s);
            if (nx) {
                s = nx;
                cur = r.taken;
                r.taken = -1;
                chained[cur] = 1;
                nchained++;
            }
        }
    }
    host_buf_free(&buf);
    *asked = r.asked;
    return nchained;
}

static int make(const char *dir, const char *name, const char *src, const char *args)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "ffmpeg -nostdin -v error -f lavfi -i %s -c:v libx264 -preset veryfast -bf 3 "
             "-g 300 -pix_fmt yuv420p -threads 1 %s -y %s/%s", src, args, dir, name);
    return system(cmd) == 0 ? 0 : -1;
}

/* A copy of the first `keep` of every 1000 bytes of a file. */
static int cut_copy(const char *from, const char *to, long keep_per_mille)
{
    FILE *f = fopen(from, "rb"), *t = NULL;
    long size, n;
    char *b = NULL;
    int ok = 0;
    if (!f)
        return -1;
    if (fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (b = malloc((size_t)size)) && fread(b, 1, (size_t)size, f) == (size_t)size &&
        (t = fopen(to, "wb"))) {
        n = size * keep_per_mille / 1000;
        ok = fwrite(b, 1, (size_t)n, t) == (size_t)n;
    }
    if (t && fclose(t))
        ok = 0;
    fclose(f);
    free(b);
    return ok ? 0 : -1;
}

static void test_idr(void)
{
    /* avcC, 4-byte lengths: SEI then IDR; a P slice; Annex B */
    static const uint8_t avcc_idr[] = {0, 0, 0, 2, 0x06, 0x05, 0, 0, 0, 3, 0x65, 0x88, 0x84};
    static const uint8_t avcc_p[] = {0, 0, 0, 3, 0x41, 0x9a, 0x00};
    static const uint8_t avcc_bad[] = {0, 0, 0, 9, 0x65, 0x88};
    static const uint8_t annexb_idr[] = {0, 0, 0, 1, 0x09, 0xf0, 0, 0, 1, 0x65, 0x88};
    static const uint8_t annexb_i[] = {0, 0, 0, 1, 0x21, 0x88, 0, 0, 1, 0x06, 0x05};
    CHECK(vid_h264_idr(avcc_idr, sizeof avcc_idr, 4), "vchain: avcC access unit with an IDR",
          "not found");
    CHECK(!vid_h264_idr(avcc_p, sizeof avcc_p, 4), "vchain: avcC P slice: no IDR", "found");
    CHECK(!vid_h264_idr(avcc_bad, sizeof avcc_bad, 4),
          "vchain: avcC NAL longer than the packet: no IDR", "found");
    CHECK(vid_h264_idr(annexb_idr, sizeof annexb_idr, 0), "vchain: Annex B with an IDR",
          "not found");
    CHECK(!vid_h264_idr(annexb_i, sizeof annexb_i, 0),
          "vchain: Annex B non-IDR slice: no IDR", "found");
    CHECK(!vid_h264_idr(annexb_idr, 0, 0) && !vid_h264_idr(avcc_idr, 3, 4),
          "vchain: empty and short packets: no IDR", "found");
}

int main(void)
{
    char dir[] = "/tmp/gpuedge-vchain.XXXXXX";
    char path[MAXF][96];
    const char *names[MAXF];
    /* a, b, e: one encoder's settings and size (b other pictures, e two
     * frames); c the same stream in Matroska (another time base); d
     * another size; f no B-frames (other parameter sets); g = b cut */
    static const char *const files[] = {"a.mp4", "b.mp4", "e.mp4", "c.mkv", "a2.mp4",
                                        "d.mp4", "f.mp4", "b2.mp4", "g.mp4", "a3.mp4"};
    static const int want_chain[] = {0, 1, 1, 0, 0, 0, 0, 0, 1, 0};
    int n = (int)(sizeof files / sizeof files[0]), nch, asked, chained[MAXF], same = 1;
    got alone[MAXF], ch[MAXF];
    char detail[512] = "";

    test_idr();
    if (system("command -v ffmpeg >/dev/null 2>&1") != 0) {
        printf("skip vchain: no ffmpeg to make clips\n");
        CHECK_EXIT();
    }
    if (!mkdtemp(dir)) {
        CHECK(0, "vchain: temp dir", "%s", strerror(errno));
        CHECK_EXIT();
    }
    for (int i = 0; i < n; i++) {
        snprintf(path[i], sizeof path[i], "%s/%s", dir, files[i]);
        names[i] = path[i];
    }
    if (make(dir, "a.mp4", "testsrc2=size=320x240:rate=25", "-frames:v 40") ||
        make(dir, "b.mp4", "testsrc2=size=320x240:rate=25", "-vf negate -frames:v 31") ||
        make(dir, "e.mp4", "testsrc2=size=320x240:rate=25", "-vf hflip -frames:v 2") ||
        make(dir, "c.mkv", "testsrc2=size=320x240:rate=25", "-frames:v 20") ||
        make(dir, "a2.mp4", "testsrc2=size=320x240:rate=25", "-vf vflip -frames:v 25") ||
        make(dir, "d.mp4", "testsrc2=size=352x288:rate=25", "-frames:v 20") ||
        make(dir, "f.mp4", "testsrc2=size=320x240:rate=25", "-bf 0 -frames:v 20") ||
        make(dir, "b2.mp4", "testsrc2=size=320x240:rate=25",
             "-vf negate -frames:v 60 -movflags +faststart") ||
        make(dir, "a3.mp4", "testsrc2=size=320x240:rate=25", "-frames:v 33") ||
        cut_copy(path[7], path[8], 700)) {
        printf("skip vchain: ffmpeg could not make the clips (libx264?)\n");
        CHECK_EXIT();
    }
    /* each alone: no chaining offered */
    for (int i = 0; i < n; i++) {
        int a;
        run_files(&names[i], 1, 1, &alone[i], &chained[i], &a);
    }
    nch = run_files(names, n, 1, ch, chained, &asked);
    for (int i = 0; i < n && same; i++)
        if (ch[i].n != alone[i].n || ch[i].hash != alone[i].hash || ch[i].rc != alone[i].rc ||
            (ch[i].corrupt > 0) != (alone[i].corrupt > 0)) {
            snprintf(detail, sizeof detail,
                     "%s: chained %ld frames rc %d corrupt %ld, alone %ld rc %d corrupt %ld, "
                     "hash %s", files[i], ch[i].n, ch[i].rc, ch[i].corrupt, alone[i].n,
                     alone[i].rc, alone[i].corrupt, ch[i].hash == alone[i].hash ? "same" : "differs");
            same = 0;
        }
    CHECK(same && alone[0].n == 40 && alone[1].n == 31 && alone[2].n == 2 && alone[8].n > 0 &&
              alone[8].n < 60 && alone[8].corrupt > 0,
          "vchain: every file's frames, indexes and timestamps as alone (a damaged one too)",
          "%s", detail);
    detail[0] = '\0';
    for (int i = 0; i < n; i++)
        if (chained[i] != want_chain[i])
            snprintf(detail + strlen(detail), sizeof detail - strlen(detail), " %s:%d",
                     files[i], chained[i]);
    CHECK(nch == 3 && !detail[0],
          "vchain: chained where the stream continues (b after a, e after b, a cut b after b); "
          "not across a time base, a size, other parameter sets, or after damage",
          "%d chained; wrong:%s", nch, detail);
    /* a file that ends on a decoder of several threads does not chain */
    {
        got t[2];
        int tc[2];
        nch = run_files(names, 2, 2, t, tc, &asked);
        CHECK(nch == 0 && asked == 0 && t[0].hash == alone[0].hash && t[1].hash == alone[1].hash,
              "vchain: frame-threaded decoders never chain (same frames)", "%d chained, %d asked",
              nch, asked);
    }
    for (int i = 0; i < n; i++)
        unlink(path[i]);
    rmdir(dir);
    CHECK_EXIT();
}
