/*
 * bench_venc.c — the video writer's codecs side by side on edge maps
 * (issue 11, "Fast encoders"): the frames of EDGES (a gray y4m that gpuedge
 * wrote, e.g. `gpuedge clip.mp4 edges.y4m`) are read into memory untimed,
 * then written through venc_open/venc_put/venc_close (the project's writer,
 * encoder threads and all) once a configuration, with 1 thread and with -t threads,
 * into a temp file that is measured and dropped (no fsync: the disk is
 * not what is compared).
 *
 *   bench_venc [-t THREADS] [-r REPEAT] [-c CODEC[,CODEC...]] [-f EXT] [-o DIR] EDGES
 *   bench_venc -g FRAMES [-r REPEAT] [-o DIR] EDGES
 *
 *   -t  threads for the second column (default: one per CPU)
 *   -r  the clip is written REPEAT times over as one video (default 2)
 *   -c  codecs (--codec names; default magicyuv,ffvhuff,ffv1,rawvideo)
 *   -f  container (default mkv; mp4 for libx264)
 *   -p  libx264 presets to try, comma-separated (with -c libx264)
 *   -d  decode mode (issue 11, "Many decoders at once"): EDGES is any
 *       video; it is decoded -r times with -t threads by one vid_reader
 *       and by vsrc (segments on several decoders), alternately; prints
 *       wall and CPU seconds of each and the ratio
 *   -g  the .mkv writer alone, as the GPU engine drives it: every frame
 *       coded as FFVHuff first (untimed, hfyu_code: the GPU's bytes), then
 *       FRAMES packets (the clip's, round and round) written -r times
 *       through venc_put_coded, each packet lent
 *       (given back once written) as the engine lends its packet pool;
 *       prints wall, CPU and fps for each of -r runs, each into a new file
 *   -o  the directory the output is written into (default /tmp; the .mkv
 *       writer maps a file in RAM, e.g. /dev/shm, and writes others)
 *
 * One line a configuration: CPU ms a frame (user + system, the whole
 * process: what a frame costs the machine whatever the load), wall fps
 * with 1 and with T threads, bytes and the ratio to raw gray8.  Per-core
 * throughput is 1000 / cpu_ms; wall figures on a shared machine are only
 * comparable within one run.
 */
#include <getopt.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <libavutil/avutil.h>

#include "frames.h"
#include "hfyu_enc.h"
#include "safeout.h"
#include "util.h"
#include "video_io.h"
#include "vsource.h"

static const char *outdir = "/tmp";

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

static double cpu_s(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)u.ru_utime.tv_sec + u.ru_utime.tv_usec * 1e-6 +
           (double)u.ru_stime.tv_sec + u.ru_stime.tv_usec * 1e-6;
}

typedef struct clip {
    uint8_t *px; /* n frames of w*h */
    int w, h;
    long n;
} clip;

static int load(const char *path, clip *c)
{
    vid_reader *r = NULL;
    vid_opts vo = {.max_frames = -1};
    host_buf buf = {0};
    src_frame fr;
    int rc = -1, k;

    if (vid_open(path, &vo, &r))
        return -1;
    while ((k = vid_next(r, &fr, &buf)) == 1) {
        const ge_frame *f = &fr.f;
        uint8_t *p;
        if (f->channels != 1 || f->bytes_per_sample != 1) {
            fprintf(stderr, "bench_venc: %s: not a gray8 edge-map video\n", path);
            goto end;
        }
        if (!c->n) {
            c->w = f->width;
            c->h = f->height;
        } else if (f->width != c->w || f->height != c->h) {
            fprintf(stderr, "bench_venc: %s: the size changes\n", path);
            goto end;
        }
        p = realloc(c->px, (size_t)(c->n + 1) * c->w * c->h);
        if (!p)
            goto end;
        c->px = p;
        for (int y = 0; y < c->h; y++)
            memcpy(p + (size_t)c->n * c->w * c->h + (size_t)y * c->w,
                   (const uint8_t *)f->data + (size_t)y * f->stride, (size_t)c->w);
        c->n++;
    }
    rc = k < 0 || !c->n ? -1 : 0;
end:
    host_buf_free(&buf);
    vid_close(&r);
    return rc;
}

/* One video: the clip `rep` times.  *bytes, *wall, *cpu.  0 / -1. */
static int run(const clip *c, const char *ext, const venc_opts *vo, int rep,
               long long *bytes, double *wall, double *cpu)
{
    char name[300];
    so_opts so = {1, 0};
    so_file *out = NULL;
    venc_writer *wr = NULL;
    struct stat st;
    double t0, c0;
    int rc = -1;

    snprintf(name, sizeof name, "%s/bench_venc.%d.%s", outdir, (int)getpid(), ext);
    if (so_open(&out, name, &so, NULL, 0))
        return -1;
    t0 = now_s();
    c0 = cpu_s();
    if (venc_open(out, ext, c->w, c->h, (AVRational){1, 30}, (AVRational){30, 1}, vo, &wr))
        goto end;
    for (long i = 0; i < c->n * rep; i++)
        if (venc_put(wr, c->px + (size_t)(i % c->n) * c->w * c->h, c->w, i, 1))
            goto end;
    if (venc_close(&wr, 0))
        goto end;
    *wall = now_s() - t0;
    *cpu = cpu_s() - c0;
    if (stat(so_path(out), &st))
        goto end;
    *bytes = (long long)st.st_size;
    rc = 0;
end:
    venc_close(&wr, 1);
    so_abort(&out);
    return rc;
}

/* -g: the clip's frames coded once, as the GPU codes them; each packet
 * lent to the writer and waited for before it is lent again. */
typedef struct gpkt {
    buf_loan l;
    uint8_t *p;
    size_t n;
    int out; /* lent, not yet given back */
} gpkt;

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_back = PTHREAD_COND_INITIALIZER;

static void g_give_back(buf_loan *l)
{
    gpkt *k = (gpkt *)l;
    pthread_mutex_lock(&g_mu);
    k->out = 0;
    pthread_cond_broadcast(&g_back);
    pthread_mutex_unlock(&g_mu);
}

static buf_loan *g_lend(void *ctx)
{
    gpkt *k = ctx;
    k->out = 1;
    return &k->l;
}

static int coded_run(const clip *c, gpkt *pk, const hfyu_tab *t, long frames,
                     double *wall, double *cpu, long long *bytes)
{
    char name[300];
    so_opts so = {1, 0};
    so_file *out = NULL;
    venc_writer *wr = NULL;
    venc_opts vo = {.codec = "ffvhuff"};
    struct stat st;
    double t0 = now_s(), c0 = cpu_s();
    int rc = -1;

    snprintf(name, sizeof name, "%s/bench_venc.%d.mkv", outdir, (int)getpid());
    if (so_open(&out, name, &so, NULL, 0))
        return -1;
    if (venc_open(out, "mkv", c->w, c->h, (AVRational){1, 30}, (AVRational){30, 1}, &vo, &wr))
        goto end;
    for (long i = 0; i < frames; i++) {
        gpkt *k = &pk[i % c->n];
        pthread_mutex_lock(&g_mu);
        while (k->out)
            pthread_cond_wait(&g_back, &g_mu);
        pthread_mutex_unlock(&g_mu);
        if (venc_put_coded(wr, k->p, k->n, t->cl, c->w, c->h, i, 1, g_lend, k))
            goto end;
    }
    if (venc_close(&wr, 0) || so_commit(&out))
        goto end;
    *wall = now_s() - t0;
    *cpu = cpu_s() - c0;
    rc = stat(name, &st);
    *bytes = (long long)st.st_size;
    unlink(name);
end:
    venc_close(&wr, 1);
    so_abort(&out);
    return rc;
}

static int coded_mode(const clip *c, int rep, long frames)
{
    hfyu_tab t = {0};
    gpkt *pk = calloc((size_t)c->n, sizeof *pk);
    long long total = 0, bytes = 0;
    int rc = 1;

    if (!pk || venc_ffvhuff_codes(t.cl))
        goto end;
    for (int i = 0; i < 256; i++) {
        t.code[i] = t.cl[i] >> 5;
        t.len[i] = (uint8_t)(t.cl[i] & 31);
        t.max_len = t.len[i] > t.max_len ? t.len[i] : t.max_len;
    }
    for (long i = 0; i < c->n; i++) {
        if (!(pk[i].p = malloc(hfyu_max_bytes(&t, c->w, c->h))))
            goto end;
        pk[i].l.give_back = g_give_back;
        pk[i].n = hfyu_code(&t, c->px + (size_t)i * c->w * c->h, c->w, c->w, c->h, pk[i].p);
        total += (long long)pk[i].n;
    }
    printf("bench_venc -g: %dx%d, %ld frames a run (%ld distinct, %.2f MB a packet), into %s\n",
           c->w, c->h, frames, c->n, total / 1e6 / (double)c->n, outdir);
    for (int r = 0; r < rep; r++) {
        double w, cp;
        if (coded_run(c, pk, &t, frames, &w, &cp, &bytes))
            goto end;
        printf("  run %d: %7.3f s wall %7.3f s cpu  %8.1f fps  %lld bytes\n", r + 1, w, cp,
               frames / w, bytes);
        fflush(stdout);
    }
    rc = 0;
end:
    for (long i = 0; pk && i < c->n; i++)
        free(pk[i].p);
    free(pk);
    return rc;
}

/* Decodes `path` to the end: through one vid_reader (seg 0) or vsrc. */
static int decode_all(const char *path, int threads, int seg, long *frames, double *wall,
                      double *cpu, int *nseg)
{
    vid_opts vo = {.max_frames = -1, .threads = threads};
    host_buf buf = {0};
    src_frame fr;
    double t0 = now_s(), c0 = cpu_s();
    int k;
    *frames = 0;
    *nseg = 1;
    if (seg) {
        vsrc *s = NULL;
        if (vsrc_open(path, &vo, &s))
            return -1;
        *nseg = vsrc_segments(s);
        while ((k = vsrc_next(s, &fr, &buf)) == 1)
            ++*frames;
        vsrc_close(&s);
    } else {
        vid_reader *r = NULL;
        if (vid_open(path, &vo, &r))
            return -1;
        while ((k = vid_next(r, &fr, &buf)) == 1)
            ++*frames;
        vid_close(&r);
    }
    host_buf_free(&buf);
    *wall = now_s() - t0;
    *cpu = cpu_s() - c0;
    return k < 0 ? -1 : 0;
}

static int decode_mode(const char *path, int threads, int rep)
{
    double w[2] = {0, 0}, c[2] = {0, 0};
    long n = 0;
    int nseg = 1;
    for (int i = 0; i < rep; i++)
        for (int seg = 0; seg < 2; seg++) {
            double wt, ct;
            if (decode_all(path, threads, seg, &n, &wt, &ct, seg ? &nseg : &(int){0}))
                return 1;
            w[seg] += wt;
            c[seg] += ct;
        }
    printf("bench_venc -d: %s, %ld frames, threads %d, %d runs each\n", path, n, threads, rep);
    printf("  one decoder:             %7.3f s wall %7.3f s cpu  %8.1f fps\n", w[0] / rep,
           c[0] / rep, n * rep / w[0]);
    printf("  %2d segments (vsource):   %7.3f s wall %7.3f s cpu  %8.1f fps  (x%.2f)\n",
           nseg, w[1] / rep, c[1] / rep, n * rep / w[1], w[0] / w[1]);
    return 0;
}

int main(int argc, char **argv)
{
    const char *codecs = "magicyuv,ffvhuff,ffv1,rawvideo", *ext = "mkv", *presets = NULL;
    int threads = 0, rep = 2, opt, dmode = 0, gmode = 0;
    long gframes = 0;
    clip c = {0};
    char list[256], plist[256];

    while ((opt = getopt(argc, argv, "t:r:c:f:p:dg:o:")) != -1)
        switch (opt) {
        case 'd': dmode = 1; break;
        case 'g': gmode = 1; gframes = atol(optarg); break;
        case 'o': outdir = optarg; break;
        case 't': threads = atoi(optarg); break;
        case 'r': rep = atoi(optarg); break;
        case 'c': codecs = optarg; break;
        case 'f': ext = optarg; break;
        case 'p': presets = optarg; break;
        default:
            fprintf(stderr, "usage: bench_venc [-t T] [-r R] [-c CODECS] [-f EXT] [-p PRESETS] "
                            "[-o DIR] EDGES\n"
                            "       bench_venc -g FRAMES [-r R] [-o DIR] EDGES\n");
            return 2;
        }
    if (optind != argc - 1 || rep < 1)
        return 2;
    if (threads <= 0)
        threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (dmode)
        return decode_mode(argv[optind], threads, rep);
    if (load(argv[optind], &c))
        return 1;
    if (gmode) {
        int rc = gframes > 0 ? coded_mode(&c, rep, gframes) : 2;
        free(c.px);
        return rc;
    }
    printf("bench_venc: %s %dx%d, %ld frames x %d, threads 1 and %d\n", argv[optind], c.w,
           c.h, c.n, rep, threads);
    printf("%-22s %9s %9s %9s %9s %12s %7s\n", "codec", "cpu_ms/f", "fps_1", "fps_T",
           "T/1", "bytes", "of_raw");
    snprintf(list, sizeof list, "%s", codecs);
    for (char *sv = NULL, *cod = strtok_r(list, ",", &sv); cod; cod = strtok_r(NULL, ",", &sv)) {
        snprintf(plist, sizeof plist, "%s", presets && strstr(cod, "264") ? presets : "-");
        for (char *sp = NULL, *pr = strtok_r(plist, ",", &sp); pr; pr = strtok_r(NULL, ",", &sp)) {
            venc_opts vo = {0};
            long long b1 = 0, bt = 0;
            double w1, wt, c1, ct;
            char label[64];
            vo.codec = cod;
            vo.preset = strcmp(pr, "-") ? pr : NULL;
            vo.threads = 1;
            if (run(&c, ext, &vo, rep, &b1, &w1, &c1))
                return 1;
            vo.threads = threads;
            if (run(&c, ext, &vo, rep, &bt, &wt, &ct))
                return 1;
            snprintf(label, sizeof label, "%s%s%s", cod, vo.preset ? "/" : "",
                     vo.preset ? vo.preset : "");
            printf("%-22s %9.2f %9.1f %9.1f %9.2f %12lld %7.3f%s\n", label,
                   1000.0 * c1 / (double)(c.n * rep), (double)(c.n * rep) / w1,
                   (double)(c.n * rep) / wt, w1 / wt, bt,
                   (double)bt / ((double)c.w * c.h * c.n * rep),
                   b1 == bt ? "" : "  (bytes differ with threads)");
        }
    }
    free(c.px);
    return 0;
}
