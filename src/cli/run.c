/*
 * run.c — jobs, the image source and sink, and the run itself.
 */
#include "run.h"
#include "image_av.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpu.h"
#include "image_in_jpeg.h"
#include "image_io.h"
#include "nvjpeg.h"
#include "pipeline.h"
#include "png_out.h"
#include "refcheck.h"
#include "report.h"
#include "safeout.h"
#include "jobq.h"
#include "util.h"
#include "video_io.h"
#include "vsource.h"
#include "workpool.h"

#include <libavutil/avutil.h>

enum { JOB_PENDING, JOB_OK, JOB_FAILED, JOB_SKIPPED };
enum { OUT_IMAGE, OUT_VIDEO, OUT_SEQUENCE };

typedef struct job {
    char *input;
    char *output;
    int video_in;      /* decoded with libav (else stb) */
    int nvj;           /* a JPEG for nvJPEG (--jpeg-decoder=nvjpeg) */
    int out_kind;      /* OUT_* */
    int fmt;           /* image format (OUT_IMAGE, OUT_SEQUENCE) */
    char vext[8];      /* mkv / mp4 / y4m (OUT_VIDEO) */
    int state;         /* written by the sink thread */
    int src_failed;    /* written by the source thread (see media_put) */
    long frames;       /* written (sink thread) */
    long decoded;      /* decoded (source thread) */
    long total;        /* expected frames (progress), 0 unknown */
    double t_begin;    /* decoding began (source side) */
    double t_end;      /* output complete (sink side) */
    AVRational tb, fps;
    /* several engines (--devices): who took it, whether its image went to
     * the encode pool (that pool decides it), whether an engine's failure
     * abandoned it (then it may go to another), whether it already did;
     * and its --hist rows, kept to be written in the input order */
    int lane, encq, abandoned, retried;
    char *hist_rows;
    size_t hist_len, hist_cap;
} job;

/* What the engines of one run share (one run_shared; each engine has its
 * own run_ctx, a copy of the run's with its own source and sink state). */
typedef struct run_shared {
    jobq q;              /* the work queue (jobq.h) */
    pthread_mutex_t q_mu; /* the prefetcher's cursor and count */
    int pf_cursor;        /* next queue position to consider for decoding ahead */
    int pf_outstanding, pf_max;
    pthread_mutex_t pf_mu;
    pthread_cond_t pf_cv;
    pthread_mutex_t note_mu; /* decoded_by */
    char decoded_by[96]; /* image decoders used, for the --cpu-ref line */
    double t_first_decoded, t_first_written;
    int nlanes;           /* engines */
    int sorted;           /* the queue is larger first (not the input order) */
    int hist_buffered;    /* --hist rows kept per file (hist_out) */
    int engine_failed;    /* one of several engines failed (exit 1) */
    int fail_lane, fail_nth; /* GPUEDGE_FAIL_ENGINE=K[:N], tests only */
} run_shared;

typedef struct run_ctx {
    cli_opts *o;
    so_opts so;
    job *jobs;
    int njobs, cap;
    const char **inputs; /* every input name, for the same-file check */
    run_shared *sh;
    int lane;            /* this engine's index (0 with one engine) */
    int device;          /* its CUDA device */
    int claim[16];       /* jobs taken from the queue ahead for this engine
                            (early_open's, an nvJPEG group's), in order */
    int nclaim;
    long lane_files;     /* files it took */
    int dead;            /* its engine failed (several engines) */
    int fail_job;        /* GPUEDGE_FAIL_ENGINE: the job to fail, -1 none */
    so_file *hist;       /* --hist CSV */
    int batch;
    /* video source (decode thread) */
    vsrc *vr;          /* the video being decoded (vsource.h: segments at once) */
    int vr_job;
    /* sink state (writer thread) */
    int sink_job;        /* job whose output is open, -1 none */
    so_file *out;
    venc_writer *enc;
    int sink_failed;
    int progress;
    double last_progress, job_t0;
    /* images are decoded ahead and encoded behind by pools of threads
     * (stb works on one image per thread) */
    workpool *dec_pool, *enc_pool;
    struct prefetch *pf;  /* one per job; only image jobs are used */
    rep_stats *rep;
    int use_gpu;        /* the GPU engine runs (NVDEC frames allowed) */
    /* --jpeg-decoder=nvjpeg: JPEG jobs are decoded in batches on the GPU
     * (decode thread) and handed to the engine as device frames */
    nvj_dec *nvj;
    struct nvj_slot *nvs; /* one per job; only nvj jobs are used */
    int nvj_dev_set;      /* the decode thread made the device current */
    long nvj_hw, nvj_hybrid, nvj_cpu; /* who decoded the JPEGs (decode thread) */
    /* start-up (issue 11): an encoder opened before the first frame
     * (early_open) for early_w x early_h; when the first decoded frame
     * came (decode thread) and the first written (writer, encode pool) */
    int early_w, early_h;
    /* several engines: this one's options and figures */
    pipe_opts po;
    rep_stats lrep;
    chk_stats lchk;
    int lane_r;          /* what its pipe_run returned */
    double busy_s;
} run_ctx;

/* An image decoded ahead by the decode pool. */
typedef struct prefetch {
    run_ctx *c;
    int job;
    int state;        /* 0 not asked, 1 queued, 2 done (under pf_mu) */
    int ok;
    img_image img;
    double ms;
} prefetch;

/* ------------------------------------------------------------------------ */
/* the job list                                                              */

static int add_job(run_ctx *c, const char *input, const char *output)
{
    job *j;
    if (c->njobs == c->cap) {
        int cap = c->cap ? 2 * c->cap : 16;
        job *p = realloc(c->jobs, (size_t)cap * sizeof *p);
        if (!p)
            return -1;
        c->jobs = p;
        c->cap = cap;
    }
    j = &c->jobs[c->njobs];
    memset(j, 0, sizeof *j);
    j->lane = -1; /* no engine took it yet */
    j->input = strdup(input);
    j->output = output ? strdup(output) : NULL;
    if (!j->input || (output && !j->output)) {
        free(j->input);
        free(j->output);
        return -1;
    }
    c->njobs++;
    return 0;
}

/* Extensions a directory expands to (what stb_image reads, image_av's
 * formats, videos). */
static int is_media_name(const char *name)
{
    static const char *const ext[] = {"png", "jpg", "jpeg", "bmp", "tga", "gif", "psd",
                                      "hdr", "pnm", "ppm", "pgm", "pic",
                                      "mp4", "mkv", "mov", "avi", "webm", "y4m", "m4v",
                                      "ts", "mts", "m2ts", "mpg", "mpeg", "flv", "wmv",
                                      "nut", "ogv", "3gp", NULL};
    char buf[16];
    const char *e = ge_ext(name, buf, sizeof buf);
    for (int i = 0; ext[i]; i++)
        if (!strcmp(e, ext[i]))
            return 1;
    return imgav_is_image_ext(e); /* libavcodec's image formats */
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A directory INPUT stands for its media files (not recursive, sorted). */
static int add_dir(run_ctx *c, const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    char **names = NULL;
    size_t n = 0, cap = 0;
    int ret = 0;
    if (!d) {
        ge_err(dir, "cannot read directory: %s", strerror(errno));
        return -1;
    }
    while ((de = readdir(d))) {
        struct stat st;
        char *path;
        if (de->d_name[0] == '.' || !is_media_name(de->d_name))
            continue;
        if (asprintf(&path, "%s/%s", dir, de->d_name) < 0) {
            ret = -1;
            break;
        }
        if (stat(path, &st) || !S_ISREG(st.st_mode)) {
            free(path);
            continue;
        }
        if (n == cap) {
            cap = cap ? 2 * cap : 32;
            char **p = realloc(names, cap * sizeof *p);
            if (!p) {
                free(path);
                ret = -1;
                break;
            }
            names = p;
        }
        names[n++] = path;
    }
    closedir(d);
    if (names)
        qsort(names, n, sizeof *names, cmp_str);
    for (size_t i = 0; i < n; i++) {
        if (!ret && add_job(c, names[i], NULL))
            ret = -1;
        free(names[i]);
    }
    free(names);
    if (!ret && n == 0 && ge_verbose)
        ge_note("%s: no image or video files in this directory", dir);
    return ret;
}

static int add_input(run_ctx *c, const char *in)
{
    struct stat st;
    if (c->batch && stat(in, &st) == 0 && S_ISDIR(st.st_mode))
        return add_dir(c, in);
    return add_job(c, in, NULL);
}

/* --from-file LIST: one name a line ("-" = stdin); blank lines skipped. */
static int add_from_file(run_ctx *c, const char *list)
{
    FILE *fp = strcmp(list, "-") ? fopen(list, "r") : stdin;
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int ret = 0;
    if (!fp) {
        ge_err(list, "cannot open input list: %s", strerror(errno));
        return -1;
    }
    while ((len = getline(&line, &cap, fp)) >= 0) {
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = '\0';
        if (len == 0)
            continue;
        if (add_input(c, line)) {
            ret = -1;
            break;
        }
    }
    if (ferror(fp)) {
        ge_err(list, "cannot read input list: %s", strerror(errno));
        ret = -1;
    }
    free(line);
    if (fp != stdin)
        fclose(fp);
    return ret;
}

/* DIR/<stem>.<ext> for batch outputs. */
static char *batch_output(const char *dir, const char *input, const char *ext)
{
    const char *base = strrchr(input, '/');
    const char *dot;
    char *out;
    size_t dl = strlen(dir);
    base = base ? base + 1 : input;
    dot = strrchr(base, '.');
    if (!dot || dot == base)
        dot = base + strlen(base);
    while (dl > 1 && dir[dl - 1] == '/')
        dl--;
    if (asprintf(&out, "%.*s/%.*s.%s", (int)dl, dir, (int)(dot - base), base, ext) < 0)
        return NULL;
    return out;
}

/* What the output name asks for: an image, a video, or an image sequence
 * (a pattern such as frames/e_%05d.png).  Prints one line and returns -1
 * when the pair of input and output cannot work. */
static int classify_output(job *j)
{
    const char *out = j->output;
    char buf[16];
    const char *e = ge_ext(out, buf, sizeof buf);
    struct stat st;
    int special = !strcmp(out, "-") ||
                  (stat(out, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode));
    j->fmt = img_format_from_path(out);
    if (vid_is_sequence(out)) {
        if (j->fmt == IMG_FMT_UNKNOWN) {
            ge_err(out, "an image-sequence pattern needs an image extension (.png .jpg .bmp .tga .pgm .tiff .webp)");
            return -1;
        }
        j->out_kind = OUT_SEQUENCE;
        return 0;
    }
    if (venc_format_ok(e)) {
        j->out_kind = OUT_VIDEO;
        snprintf(j->vext, sizeof j->vext, "%s", e);
        return 0;
    }
    if (j->fmt == IMG_FMT_UNKNOWN && special) {
        /* stdout, /dev/null or a FIFO without a known extension: no name
         * to go by, written in place (DESIGN.md §6): y4m for video, PGM else. */
        if (j->video_in) {
            j->out_kind = OUT_VIDEO;
            snprintf(j->vext, sizeof j->vext, "y4m");
        } else {
            j->out_kind = OUT_IMAGE;
            j->fmt = IMG_FMT_PGM;
        }
        return 0;
    }
    if (j->fmt == IMG_FMT_UNKNOWN) {
        if (*e)
            ge_err(out, "unknown output format '.%s' (use .png .jpg .jpeg .bmp .tga .pgm .tiff .webp, "
                        ".mkv .mp4 .y4m, or a pattern like e_%%05d.png)", e);
        else
            ge_err(out, "no extension to choose the output format by (use .png .jpg .jpeg .bmp "
                        ".tga .pgm .tiff .webp, .mkv .mp4 .y4m, or a pattern like e_%%05d.png)");
        return -1;
    }
    if (j->video_in) {
        ge_err(out, "a video input needs a video output (.mkv .mp4 .y4m) or an image-sequence "
                    "pattern such as e_%%05d.png");
        return -1;
    }
    j->out_kind = OUT_IMAGE;
    return 0;
}

static int plan_jobs(run_ctx *c)
{
    cli_opts *o = c->o;
    c->batch = o->outdir != NULL;
    if (!c->batch) {
        if (add_job(c, o->inputs[0], o->output))
            goto oom;
        if (strcmp(o->inputs[0], "-")) {
            c->jobs[0].video_in = vid_probe(o->inputs[0]) == 1;
        } else {
            /* stdin cannot be probed twice: a video output means a video
             * stream (y4m, nut, ...), anything else an image */
            char buf[16];
            c->jobs[0].video_in = venc_format_ok(ge_ext(o->output, buf, sizeof buf)) ||
                                  vid_is_sequence(o->output);
        }
        if (classify_output(&c->jobs[0]))
            return GE_EXIT_USAGE;
    } else {
        struct stat st;
        for (int i = 0; i < o->ninputs; i++)
            if (add_input(c, o->inputs[i]))
                return GE_EXIT_FAIL;
        if (o->from_file && add_from_file(c, o->from_file))
            return GE_EXIT_FAIL;
        if (c->njobs <= 0) {
            ge_err(NULL, "no input files");
            return GE_EXIT_USAGE;
        }
        for (int i = 0; i < c->njobs; i++) {
            job *j = &c->jobs[i];
            /* --format applies to the inputs it fits: an image format to
             * images, a video format to videos; the others keep png / mkv. */
            int fmt_is_video = o->format && venc_format_ok(o->format);
            const char *ext;
            j->video_in = vid_probe(j->input) == 1;
            if (j->video_in)
                ext = fmt_is_video ? o->format : "mkv";
            else
                ext = o->format && !fmt_is_video ? o->format : "png";
            j->output = batch_output(o->outdir, j->input, ext);
            if (!j->output)
                goto oom;
            if (classify_output(j))
                return GE_EXIT_USAGE;
        }
        /* Collisions (a.png and a.jpg -> a.png) are an error before any work. */
        {
            char **names = malloc((size_t)c->njobs * sizeof *names);
            int bad = 0;
            if (!names)
                goto oom;
            for (int i = 0; i < c->njobs; i++)
                names[i] = c->jobs[i].output;
            qsort(names, (size_t)c->njobs, sizeof *names, cmp_str);
            for (int i = 1; i < c->njobs; i++)
                if (!strcmp(names[i], names[i - 1]) && (i < 2 || strcmp(names[i], names[i - 2]))) {
                    ge_err(names[i], "several inputs would write this output; rename one or use separate batches");
                    bad = 1;
                }
            free(names);
            if (bad)
                return GE_EXIT_USAGE;
        }
        /* Only now, with the plan known to be good, create the directory:
         * a usage error leaves nothing behind. */
        if (stat(o->outdir, &st) != 0) {
            /* Runs started together (GNU parallel, a Slurm array) race to
             * create it: one that finds it made meanwhile goes on. */
            if (errno != ENOENT || (mkdir(o->outdir, 0777) != 0 &&
                                    !(errno == EEXIST && stat(o->outdir, &st) == 0 &&
                                      S_ISDIR(st.st_mode)))) {
                ge_err(o->outdir, "cannot create output directory: %s", strerror(errno));
                return GE_EXIT_FAIL;
            }
        } else if (!S_ISDIR(st.st_mode)) {
            ge_err(o->outdir, "not a directory");
            return GE_EXIT_USAGE;
        }
    }
    c->inputs = malloc((size_t)c->njobs * sizeof *c->inputs);
    if (!c->inputs)
        goto oom;
    for (int i = 0; i < c->njobs; i++)
        c->inputs[i] = c->jobs[i].input;

    /* Refuse up front what would fail at the end: no work is wasted. */
    for (int i = 0; i < c->njobs; i++) {
        job *j = &c->jobs[i];
        struct stat st;
        if (so_same_file(j->output, c->inputs, c->njobs)) {
            ge_err(j->output, "output is the same file as an input; refusing to overwrite it");
            j->state = JOB_FAILED;
            continue;
        }
        if (j->out_kind != OUT_SEQUENCE && strcmp(j->output, "-") && stat(j->output, &st) == 0 &&
            S_ISREG(st.st_mode)) {
            if (o->skip_existing) {
                j->state = JOB_SKIPPED;
                if (!ge_quiet)
                    ge_note("%s: skipped (output %s exists)", j->input, j->output);
            } else if (!o->overwrite) {
                ge_err(j->output, "output exists (use -y to overwrite)");
                j->state = JOB_FAILED;
            }
        }
    }
    return 0;
oom:
    ge_err(NULL, "out of memory");
    return GE_EXIT_FAIL;
}

/* ------------------------------------------------------------------------ */
/* image source and sink                                                     */

static const char *job_name_cb(void *ctx, int j)
{
    run_ctx *c = ctx;
    return j >= 0 && j < c->njobs ? c->jobs[j].input : NULL;
}

/* Which decoder made an image's pixels: -v says so per file, --cpu-ref's
 * line lists them (DESIGN.md §1.9).  Source thread only. */
static void note_decoder_name(run_ctx *c, const char *input, int w, int h, int channels,
                              int bps, const char *d)
{
    char *by = c->sh->decoded_by;
    size_t n;
    if (ge_verbose)
        ge_note("%s: %dx%d, %d channel%s, %d-bit, pixels decoded by %s", input, w, h, channels,
                channels == 1 ? "" : "s", 8 * bps, d);
    pthread_mutex_lock(&c->sh->note_mu); /* (several engines' sources) */
    n = strlen(by);
    if (!strstr(by, d) && n + strlen(d) + 3 < sizeof c->sh->decoded_by)
        snprintf(by + n, sizeof c->sh->decoded_by - n, "%s%s", n ? ", " : "", d);
    pthread_mutex_unlock(&c->sh->note_mu);
}

static void note_decoder(run_ctx *c, const char *input, const img_image *img)
{
    note_decoder_name(c, input, img->width, img->height, img->channels, img->bytes_per_sample,
                      img->decoder ? img->decoder : "?");
}

/* Loads one image job into buf.  1 frame, 0 the job failed (reported). */
static int image_frame(run_ctx *c, job *j, int jobi, src_frame *fr, host_buf *buf)
{
    img_image img;
    double t0 = ge_now();
    size_t bytes;
    j->t_begin = t0;
    if (img_load(j->input, &img))
        return 0;
    note_decoder(c, j->input, &img);
    bytes = (size_t)img.width * img.height * img.channels * img.bytes_per_sample;
    if (host_buf_reserve(buf, bytes)) {
        ge_err(j->input, "out of memory for a %dx%d image", img.width, img.height);
        img_free(&img);
        return 0;
    }
    memcpy(buf->p, img.pixels, bytes);
    fr->f = img_as_frame(&img);
    fr->f.data = buf->p;
    img_free(&img);
    fr->job = jobi;
    fr->index = 0;
    fr->pts = -1;
    fr->ts = INT64_MIN;
    fr->duration = 0;
    fr->decode_ms = (ge_now() - t0) * 1e3;
    return 1;
}

static void decode_task(void *arg)
{
    prefetch *t = arg;
    run_ctx *c = t->c;
    double t0 = ge_now();
    int ok;
    c->jobs[t->job].t_begin = t0;
    ok = !sig_stopped() && img_load(c->jobs[t->job].input, &t->img) == 0;
    pthread_mutex_lock(&c->sh->pf_mu);
    t->ok = ok;
    t->ms = (ge_now() - t0) * 1e3;
    t->state = 2;
    pthread_cond_broadcast(&c->sh->pf_cv);
    pthread_mutex_unlock(&c->sh->pf_mu);
}

/* Keeps up to pf_max images decoding ahead of the queue's head, in the
 * queue's order (the engines' decode threads call it, under q_mu; no
 * decode task takes q_mu, and the pool's queue holds pf_max, so
 * wp_submit does not wait here). */
static void prefetch_more(run_ctx *c)
{
    run_shared *sh = c->sh;
    int head;
    if (!c->dec_pool)
        return;
    pthread_mutex_lock(&sh->q_mu);
    /* the head read under q_mu: a job popped meanwhile is never submitted
     * after its engine looked (image_job_frame looks under q_mu too) */
    head = jq_head(&sh->q);
    if (sh->pf_cursor < head)
        sh->pf_cursor = head;
    while (sh->pf_outstanding < sh->pf_max && sh->pf_cursor < c->njobs && !sig_stopped()) {
        int ji = jq_at(&sh->q, sh->pf_cursor++);
        job *j = &c->jobs[ji];
        prefetch *t = &c->pf[ji];
        if (j->state != JOB_PENDING || j->video_in || j->nvj)
            continue; /* (nvJPEG's files are decoded in batches, nvj_job_frame) */
        t->c = c;
        t->job = ji;
        t->state = 1; /* no worker has it yet: no lock needed */
        if (wp_submit(c->dec_pool, decode_task, t)) {
            t->state = 0;
            break;
        }
        sh->pf_outstanding++;
    }
    pthread_mutex_unlock(&sh->q_mu);
}

/* Image job ji as a frame: decoded ahead by the pool when there is one. */
static int image_job_frame(run_ctx *c, int ji, src_frame *fr, host_buf *buf)
{
    job *j = &c->jobs[ji];
    prefetch *t = c->pf ? &c->pf[ji] : NULL;
    size_t bytes;
    int ok, queued = 0;
    if (t) {
        pthread_mutex_lock(&c->sh->q_mu); /* (see prefetch_more) */
        pthread_mutex_lock(&c->sh->pf_mu);
        queued = t->state != 0;
        pthread_mutex_unlock(&c->sh->q_mu);
        while (t->state == 1)
            pthread_cond_wait(&c->sh->pf_cv, &c->sh->pf_mu);
        pthread_mutex_unlock(&c->sh->pf_mu);
    }
    if (!queued)
        return image_frame(c, j, ji, fr, buf);
    pthread_mutex_lock(&c->sh->q_mu);
    c->sh->pf_outstanding--;
    pthread_mutex_unlock(&c->sh->q_mu);
    t->state = 0;
    if (!t->ok)
        return 0;
    note_decoder(c, j->input, &t->img);
    bytes = (size_t)t->img.width * t->img.height * t->img.channels * t->img.bytes_per_sample;
    ok = host_buf_reserve(buf, bytes) == 0;
    if (ok) {
        memcpy(buf->p, t->img.pixels, bytes);
        fr->f = img_as_frame(&t->img);
        fr->f.data = buf->p;
        fr->job = ji;
        fr->index = 0;
        fr->pts = -1;
        fr->ts = INT64_MIN;
        fr->duration = 0;
        fr->decode_ms = t->ms;
    } else {
        ge_err(j->input, "out of memory for a %dx%d image", t->img.width, t->img.height);
    }
    img_free(&t->img);
    return ok;
}

/* ------------------------------------------------------------------------ */
/* nvJPEG: batches of JPEG jobs decoded into device memory                   */

/* JPEGs in one nvJPEG batch (the issue measured batches of 16 photos), and
 * a cap on their file bytes held at once. */
#define NVJ_GROUP 16
#define NVJ_GROUP_BYTES ((size_t)256 << 20)

typedef struct nvj_slot {
    nvj_dec *dec;
    nvj_pic pic;      /* pic.ok: the decoded planes wait in device memory */
    int state;        /* 0 not decoded yet, 1 decoded or refused */
    double ms;        /* the batch's time, shared out */
} nvj_slot;

static int is_jpeg_file(const char *path)
{
    unsigned char b[3];
    FILE *f = fopen(path, "rb");
    int r = f && fread(b, 1, 3, f) == 3 && nvj_is_jpeg(b, 3);
    if (f)
        fclose(f);
    return r;
}

/* Does this JPEG need turning upright (EXIF orientation 2..8, with
 * --auto-orient)?  nvJPEG's frames stay on the GPU unturned, so such a
 * file is decoded on the CPU, which applies it (image_in_jpeg.c).  The
 * Exif segment comes before the image: the first 128 KiB hold it. */
static int jpeg_needs_orient(const char *path)
{
    enum { HEAD = 128 << 10 };
    unsigned char *b = malloc(HEAD);
    FILE *f = b ? fopen(path, "rb") : NULL;
    size_t n = f ? fread(b, 1, HEAD, f) : 0;
    int o = n ? imgjpg_exif_orientation(b, n) : 1;
    if (f)
        fclose(f);
    free(b);
    return o != 1;
}

/* The engine calls it once the last kernel reading the planes finished. */
static void nvj_release_cb(void *ctx)
{
    nvj_slot *s = ctx;
    nvj_release(s->dec, &s->pic);
}

/* Queue helpers for an engine: jobs taken ahead (claim), served first. */
static void lane_claim(run_ctx *c, int ji)
{
    c->jobs[ji].lane = c->lane; /* (its failure hands them back too) */
    if (c->nclaim < (int)(sizeof c->claim / sizeof c->claim[0]))
        c->claim[c->nclaim++] = ji;
    else
        jq_retry(&c->sh->q, ji); /* (never: callers stay within it) */
}

static int nvj_pending(void *ctx, int ji)
{
    run_ctx *c = ctx;
    return c->jobs[ji].nvj && c->jobs[ji].state == JOB_PENDING && !c->nvs[ji].state;
}

/* Decodes job ji and the pending JPEG jobs after it as one batch.  Files
 * it cannot read are left to the CPU path (which reports the error). */
static void nvj_decode_group(run_ctx *c, int ji)
{
    nvj_pic pics[NVJ_GROUP];
    unsigned char *files[NVJ_GROUP];
    int idx[NVJ_GROUP], k = 0;
    size_t bytes = 0;
    double t0, ms;

    if (!c->nvj_dev_set) {
        /* the engine's decode thread has no current device of its own */
        gpu_set_device(c->device);
        c->nvj_dev_set = 1;
    }
    if (c->sh->nlanes > 1) {
        /* several engines: the group is this job and the JPEGs now at the
         * queue's head, taken for this engine (its device decodes them) */
        int more;
        while (c->nclaim < NVJ_GROUP - 1 && (more = jq_pop_if(&c->sh->q, nvj_pending, c)) >= 0)
            lane_claim(c, more);
    }
    for (int n = 0, i = ji; k < NVJ_GROUP && bytes < NVJ_GROUP_BYTES; n++, i++) {
        job *j;
        nvj_slot *s;
        char why[128];
        size_t len;
        if (c->sh->nlanes > 1) {
            /* (with one engine, every pending JPEG after it, as before) */
            if (n > c->nclaim)
                break;
            i = n ? c->claim[n - 1] : ji;
        } else if (i >= c->njobs) {
            break;
        }
        j = &c->jobs[i];
        s = &c->nvs[i];
        if (!j->nvj || j->state != JOB_PENDING || s->state)
            continue;
        s->state = 1;
        s->dec = c->nvj;
        memset(&s->pic, 0, sizeof s->pic);
        j->t_begin = ge_now();
        if (nvj_read_file(j->input, &files[k], &len, why, sizeof why))
            continue; /* pic.why empty: the CPU path says why */
        memset(&pics[k], 0, sizeof pics[k]);
        pics[k].data = files[k];
        pics[k].len = len;
        idx[k++] = i;
        bytes += len;
    }
    if (!k)
        return;
    t0 = ge_now();
    nvj_decode(c->nvj, pics, k); /* a CUDA failure marks every pic not ok */
    ms = (ge_now() - t0) * 1e3 / k;
    for (int m = 0; m < k; m++) {
        nvj_slot *s = &c->nvs[idx[m]];
        s->pic = pics[m];
        s->pic.data = NULL;
        s->ms = ms;
        free(files[m]);
    }
}

/* JPEG job ji through nvJPEG: a device frame, or on the CPU with a notice
 * when nvJPEG cannot decode it. */
static int nvj_job_frame(run_ctx *c, int ji, src_frame *fr, host_buf *buf)
{
    job *j = &c->jobs[ji];
    nvj_slot *s = &c->nvs[ji];
    if (!s->state)
        nvj_decode_group(c, ji);
    if (!s->pic.ok) {
        if (s->pic.why[0])
            ge_note("%s: nvJPEG could not decode it (%s); decoded on the CPU", j->input,
                    s->pic.why);
        c->nvj_cpu++;
        return image_frame(c, j, ji, fr, buf);
    }
    if (s->pic.hardware)
        c->nvj_hw++;
    else
        c->nvj_hybrid++;
    note_decoder_name(c, j->input, s->pic.width, s->pic.height, s->pic.channels, 1,
                      s->pic.hardware ? "nvJPEG (hardware)" : "nvJPEG (GPU hybrid)");
    memset(&fr->f, 0, sizeof fr->f);
    fr->f.width = s->pic.width;
    fr->f.height = s->pic.height;
    fr->f.channels = s->pic.channels;
    fr->f.bytes_per_sample = 1;
    fr->f.stride = s->pic.pitch;
    fr->f.gain = 1.0f;
    fr->f.data = s->pic.d_data;
    fr->on_device = 1;
    fr->ready = NULL; /* nvj_decode returned after its stream finished */
    fr->release = nvj_release_cb;
    fr->release_ctx = s;
    fr->job = ji;
    fr->index = 0;
    fr->pts = -1;
    fr->ts = INT64_MIN;
    fr->duration = 0;
    fr->decode_ms = s->ms;
    return 1;
}

/* Job ji's video is open in c->vr: its rates and expected frames. */
static void video_opened(run_ctx *c, int ji)
{
    job *j = &c->jobs[ji];
    vid_info vi;
    vsrc_get_info(c->vr, &vi);
    j->tb = vi.time_base;
    j->fps = vi.frame_rate;
    j->total = vi.nb_frames > 0 ? (long)vi.nb_frames
               : vi.duration > 0 && vi.frame_rate.num > 0
                   ? (long)(vi.duration * av_q2d(vi.frame_rate) + 0.5) : 0;
    if (c->o->start > 0 && j->total > 0 && vi.frame_rate.num > 0) {
        /* --start skips about start * fps of them */
        long skip = (long)(c->o->start * av_q2d(vi.frame_rate) + 0.5);
        j->total = j->total > skip ? j->total - skip : 0;
    }
    if (c->o->frames > 0 && (j->total == 0 || j->total > c->o->frames))
        j->total = c->o->frames;
    c->vr_job = ji;
    j->decoded = 0;
}

/* Start-up figure: the first frame decoded (any engine's decode thread). */
static void first_decoded(run_ctx *c)
{
    double zero = 0, now = ge_now();
    __atomic_compare_exchange(&c->sh->t_first_decoded, &zero, &now, 0, __ATOMIC_RELAXED,
                              __ATOMIC_RELAXED);
}

/* The next job for this engine: one it took ahead, else the queue's.
 * -1 when none is left. */
static int lane_take(run_ctx *c)
{
    run_shared *sh = c->sh;
    int ji, seq = -1;
    if (c->nclaim) {
        ji = c->claim[0];
        c->nclaim--;
        memmove(c->claim, c->claim + 1, (size_t)c->nclaim * sizeof *c->claim);
    } else if ((ji = jq_pop(&sh->q, &seq)) < 0) {
        return -1;
    }
    c->jobs[ji].lane = c->lane;
    c->lane_files++;
    if (sh->nlanes > 1 && ge_verbose) {
        if (seq >= 0)
            ge_note("%s: engine %d takes it (queue position %d)", c->jobs[ji].input, c->lane,
                    seq);
        else
            ge_note("%s: engine %d takes it", c->jobs[ji].input, c->lane);
    }
    if ((sh->fail_lane == c->lane || sh->fail_lane == INT_MAX) && c->lane_files == sh->fail_nth)
        c->fail_job = ji;
    return ji;
}

/* GPUEDGE_FAIL_ENGINE (tests): this engine fails now, as a lost device
 * would, in the middle of its file. */
static int lane_fail_now(run_ctx *c)
{
    ge_err(NULL, "engine %d: failing on purpose (GPUEDGE_FAIL_ENGINE, a test)", c->lane);
    c->fail_job = -1;
    return -1;
}

/* The source's options for a video of this run, decoded by `hwdec` on
 * `device` (media_next, early_open, early_to_software). */
static vid_opts video_opts(const cli_opts *o, int hwdec, int device)
{
    vid_opts vo = {o->start, o->frames, o->rgb, o->threads, 0, 0};
    vo.hwdec = hwdec;
    vo.device = device;
    return vo;
}

/* The frame source (decode thread): every pending job in order, images
 * through stb, videos through libav frame by frame.  A bad file is
 * reported, marked (src_failed) and skipped; the batch goes on. */
static int media_next(void *ctx, src_frame *fr, host_buf *buf)
{
    run_ctx *c = ctx;
    prefetch_more(c);
    for (;;) {
        if (sig_stopped()) {
            vsrc_close(&c->vr);
            return 0;
        }
        if (c->vr) {
            job *j = &c->jobs[c->vr_job];
            int r = vsrc_next(c->vr, fr, buf);
            if (r == 1 && c->vr_job == c->fail_job && j->decoded == 1)
                return lane_fail_now(c); /* its second frame */
            if (r == 1) {
                int64_t ts, dur;
                vsrc_last_ts(c->vr, &ts, &dur);
                fr->job = c->vr_job;
                fr->ts = ts == AV_NOPTS_VALUE ? INT64_MIN : ts;
                fr->duration = dur;
                j->decoded++;
                first_decoded(c);
                return 1;
            }
            if (r < 0 && !sig_stopped())
                j->src_failed = 1;
            else if (r == 0 && j->decoded == 0) {
                /* one line: vid_close adds no "decoding errors" notice
                 * for a file without frames, the count goes here */
                long nerr = vsrc_corrupt_count(c->vr);
                if (nerr > 0)
                    ge_err(j->input, "no video frames decoded (%ld decoding error%s)", nerr,
                           nerr == 1 ? "" : "s");
                else
                    ge_err(j->input, "no video frames decoded");
                j->src_failed = 1;
            }
            vsrc_close(&c->vr);
            continue;
        }
        int ji = lane_take(c);
        if (ji < 0)
            return 0;
        job *j = &c->jobs[ji];
        if (j->state != JOB_PENDING)
            continue;
        if (!j->video_in) {
            int got;
            if (ji == c->fail_job)
                return lane_fail_now(c);
            got = j->nvj && c->nvj ? nvj_job_frame(c, ji, fr, buf)
                                   : image_job_frame(c, ji, fr, buf);
            prefetch_more(c);
            if (got)
                first_decoded(c);
            if (got)
                return 1;
            j->src_failed = 1;
            continue;
        }
        /* NVDEC's frames stay on the device: only for the GPU engine, on
         * this engine's device (NVDEC sessions spread over the devices) */
        vid_opts vo = video_opts(c->o, c->use_gpu ? c->o->hwdec : CLI_HWDEC_NONE, c->device);
        j->t_begin = ge_now();
        if (vsrc_open(j->input, &vo, &c->vr)) {
            j->src_failed = 1;
            continue;
        }
        video_opened(c, ji);
    }
}

/* A piece of a --hist row.  With the queue in another order than the
 * input's (several engines), each file's rows are kept and written in the
 * input order at the end (hist_flush): the same CSV whatever the engines
 * (the rows wait in memory, about 1 KB a frame). */
static int hist_out(run_ctx *c, int ji, const char *p, size_t n)
{
    job *j = &c->jobs[ji];
    if (!c->sh->hist_buffered)
        return so_write(c->hist, p, n);
    if (j->hist_len + n > j->hist_cap) {
        size_t cap = j->hist_cap ? 2 * j->hist_cap : 2048;
        char *q;
        while (cap < j->hist_len + n)
            cap *= 2;
        if (!(q = realloc(j->hist_rows, cap))) {
            ge_err(c->o->hist_file, "out of memory for the histogram rows");
            return -1;
        }
        j->hist_rows = q;
        j->hist_cap = cap;
    }
    memcpy(j->hist_rows + j->hist_len, p, n);
    j->hist_len += n;
    return 0;
}

static int hist_flush(run_ctx *c)
{
    for (int i = 0; c->sh->hist_buffered && i < c->njobs; i++)
        if (c->jobs[i].hist_len && so_write(c->hist, c->jobs[i].hist_rows, c->jobs[i].hist_len))
            return -1;
    return 0;
}

static int hist_row(run_ctx *c, const sink_frame *fr)
{
    char line[256 * 21 + 64];
    int n;
    const char *name = c->jobs[fr->job].input;
    size_t len = 0;
    /* file name quoted as CSV: double the quotes */
    if (hist_out(c, fr->job, "\"", 1))
        return -1;
    for (const char *p = name; *p; p++)
        if ((*p == '"' && hist_out(c, fr->job, "\"\"", 2)) ||
            (*p != '"' && hist_out(c, fr->job, p, 1)))
            return -1;
    n = snprintf(line, sizeof line, "\",%ld,", fr->index);
    len = (size_t)n;
    if (fr->pts >= 0)
        len += (size_t)snprintf(line + len, sizeof line - len, "%.6f", fr->pts);
    for (int i = 0; i < GE_HIST_BINS; i++)
        len += (size_t)snprintf(line + len, sizeof line - len, ",%llu",
                                (unsigned long long)fr->hist[i]);
    line[len++] = '\n';
    return hist_out(c, fr->job, line, len);
}

/* Writes one image file (an image job, or one frame of a sequence).
 * An interruption (SIGINT/SIGTERM) that arrives while the image is being
 * encoded must not be followed by a commit: the run reports 130/143 and
 * leaves no new final file (the temp is removed, or kept as .partial).
 * Returns 0 written, 1 interrupted, -1 failed (reported). */
static int write_image(run_ctx *c, const char *path, int fmt, const sink_frame *fr)
{
    so_file *f = NULL;
    if (!sig_stopped() && so_open(&f, path, &c->so, c->inputs, c->njobs) == 0 &&
        img_write(f, fmt, fr->edge, fr->width, fr->height, fr->width) == 0 &&
        !sig_stopped() && so_commit(&f) == 0)
        return 0;
    so_abort(&f);
    return sig_stopped() ? 1 : -1;
}

static void progress(run_ctx *c, const job *j, long frames, int done)
{
    double now = ge_now();
    if (!c->progress || (!done && now - c->last_progress < 0.25))
        return;
    c->last_progress = now;
    double fps = now > c->job_t0 ? frames / (now - c->job_t0) : 0;
    if (j->total > 0 && fps > 0 && !done)
        fprintf(stderr, "\r\033[Kgpuedge: %s: frame %ld/%ld, %.1f fps, ETA %.0f s", j->input,
                frames, j->total, fps, (j->total - frames) / fps);
    else
        fprintf(stderr, "\r\033[Kgpuedge: %s: frame %ld, %.1f fps", j->input, frames, fps);
    if (done)
        fputs("\r\033[K", stderr);
    fflush(stderr);
}

/* Closes the output of the job the sink has open: commit when every frame
 * went in and nothing failed, else abandon (temp removed or .partial). */
static void close_output(run_ctx *c, int abandon)
{
    job *j;
    int failed;
    if (c->sink_job < 0)
        return;
    j = &c->jobs[c->sink_job];
    progress(c, j, j->frames, 1);
    /* src_failed is written by the decode thread before it produced any
     * later frame (or before it ended): the queues' locks order it. */
    failed = c->sink_failed || j->src_failed;
    if (abandon && !failed)
        j->abandoned = 1; /* not its own fault: another engine may redo it */
    if (j->out_kind == OUT_VIDEO) {
        int r = c->enc ? venc_close(&c->enc, abandon || failed) : -1;
        if (r == 0 && !abandon && !failed && !sig_stopped() && so_commit(&c->out) == 0) {
            j->state = JOB_OK;
        } else {
            so_abort(&c->out);
            if (!sig_stopped())
                j->state = JOB_FAILED;
        }
    } else if (j->out_kind == OUT_SEQUENCE) {
        if (!failed && !abandon && j->state == JOB_PENDING && j->frames > 0)
            j->state = JOB_OK;
        else if (!sig_stopped())
            j->state = JOB_FAILED;
    }
    if (j->state == JOB_OK)
        j->t_end = ge_now();
    if (c->batch && !ge_quiet && j->state == JOB_OK && j->out_kind != OUT_IMAGE)
        ge_note("%s -> %s: ok (%ld frame%s)", j->input, j->output, j->frames,
                j->frames == 1 ? "" : "s");
    c->sink_job = -1;
    c->sink_failed = 0;
}

/* An image encoded behind the sink by the encode pool. */
typedef struct enc_task {
    run_ctx *c;
    int job;
    int width, height;
    uint8_t edge[]; /* width * height */
} enc_task;

/* Start-up figure: the first output written (writer thread or the
 * encode pool's, hence the atomic). */
static void first_written(run_ctx *c)
{
    double zero = 0, now = ge_now();
    __atomic_compare_exchange(&c->sh->t_first_written, &zero, &now, 0, __ATOMIC_RELAXED,
                              __ATOMIC_RELAXED);
}

static void encode_task(void *arg)
{
    enc_task *t = arg;
    run_ctx *c = t->c;
    job *j = &c->jobs[t->job];
    sink_frame fr = {.job = t->job, .width = t->width, .height = t->height, .edge = t->edge};
    double t0 = ge_now();
    int r = write_image(c, j->output, j->fmt, &fr);
    /* each image job has one frame: no other thread touches this job */
    if (r == 0) {
        j->state = JOB_OK;
        j->frames = 1;
        j->t_end = ge_now();
        if (c->batch && !ge_quiet)
            ge_note("%s -> %s: ok (%dx%d)", j->input, j->output, t->width, t->height);
    } else if (r < 0) {
        j->state = JOB_FAILED;
    }
    if (c->rep)
        rep_add(c->rep, REP_WRITE, (ge_now() - t0) * 1e3);
    first_written(c);
    free(t);
}

/* Hands an image job's edge map to the encode pool (a copy: the engine's
 * slot goes back at once).  0 queued, -1 not (encode it here). */
static int encode_behind(run_ctx *c, const sink_frame *fr)
{
    size_t n = (size_t)fr->width * fr->height;
    enc_task *t;
    if (!c->enc_pool || !(t = malloc(sizeof *t + n)))
        return -1;
    t->c = c;
    t->job = fr->job;
    t->width = fr->width;
    t->height = fr->height;
    memcpy(t->edge, fr->edge, n);
    c->jobs[fr->job].encq = 1; /* the encode task decides it now */
    if (wp_submit(c->enc_pool, encode_task, t)) {
        c->jobs[fr->job].encq = 0;
        free(t);
        return -1;
    }
    return 0;
}

static void enc_opts(const run_ctx *c, venc_opts *vo)
{
    memset(vo, 0, sizeof *vo);
    vo->threads = c->o->threads;
    vo->mem_limit = (size_t)c->o->mem_limit; /* caps the parallel FFV1 encoders */
    vo->codec = c->o->codec; /* checked by cli_parse */
    vo->preset = c->o->preset;
    vo->crf = c->o->crf;
}

/* The frame sink (writer thread). */
static int media_put(void *ctx, const sink_frame *fr, double *write_ms)
{
    run_ctx *c = ctx;
    job *j = &c->jobs[fr->job];
    double t0 = ge_now();
    if (c->hist && hist_row(c, fr))
        return -1; /* the CSV is reported at its commit */
    if (fr->job != c->sink_job) {
        close_output(c, 0);
        c->sink_job = fr->job;
        c->sink_failed = 0;
        c->job_t0 = t0;
        j->frames = 0;
    }
    if (c->sink_failed) {
        *write_ms = 0;
        return 0; /* this file already failed: drain its frames */
    }
    switch (j->out_kind) {
    case OUT_IMAGE: {
        int r;
        if (encode_behind(c, fr) == 0) {
            c->sink_job = -1;
            *write_ms = -1; /* the encode task reports its own time */
            return 0;
        }
        r = write_image(c, j->output, j->fmt, fr);
        if (r == 0) {
            j->state = JOB_OK;
            j->frames = 1;
            j->t_end = ge_now();
            if (c->batch && !ge_quiet)
                ge_note("%s -> %s: ok (%dx%d)", j->input, j->output, fr->width, fr->height);
        } else if (r < 0) {
            j->state = JOB_FAILED;
        }
        c->sink_job = -1; /* nothing left open */
        break;
    }
    case OUT_SEQUENCE: {
        char name[4096];
        int r;
        if (vid_sequence_name(j->output, fr->index + 1, name, sizeof name)) {
            ge_err(j->output, "frame %ld: cannot make a file name from this pattern", fr->index + 1);
            c->sink_failed = 1;
            break;
        }
        r = write_image(c, name, j->fmt, fr);
        if (r == 0)
            j->frames++;
        else
            c->sink_failed = 1;
        break;
    }
    case OUT_VIDEO: {
        AVRational tb = j->tb.num > 0 ? j->tb : (AVRational){1, 25};
        AVRational fps = j->fps.num > 0 ? j->fps : (AVRational){25, 1};
        /* No pts (raw H.264, some AVI): the encoder continues from the
         * previous frame by its duration or 1/fps.  The frame index is no
         * pts: in a stream time base such as 1/1200000 it would squeeze
         * every frame into the first millisecond. */
        int64_t ts = fr->ts != INT64_MIN ? fr->ts : AV_NOPTS_VALUE;
        if (c->enc && c->early_w && j->frames == 0 &&
            (fr->width != c->early_w || fr->height != c->early_h)) {
            /* opened early for the header's size, but the first frame has
             * another: start again at the frame's, as without early_open */
            venc_close(&c->enc, 1);
            so_abort(&c->out);
        }
        c->early_w = c->early_h = 0;
        if (!c->enc) {
            venc_opts vo;
            enc_opts(c, &vo);
            vo.gpu_frames = fr->on_device; /* NVDEC: more encoder lanes */
            if (!j->video_in) {
                tb = (AVRational){1, 25}; /* an image: one frame of 1/25 s */
                fps = (AVRational){25, 1};
                ts = 0;
            }
            if (so_open(&c->out, j->output, &c->so, c->inputs, c->njobs) ||
                venc_open(c->out, j->vext, fr->width, fr->height, tb, fps, &vo, &c->enc)) {
                c->sink_failed = 1;
                break;
            }
        }
        if (venc_put_sized(c->enc, fr->edge, fr->width, fr->height, fr->width, ts,
                           fr->duration) == 0)
            j->frames++;
        else
            c->sink_failed = 1;
        if (!j->video_in)
            close_output(c, 0);
        break;
    }
    }
    if (c->sink_job >= 0)
        progress(c, j, j->frames, 0);
    if (!c->sink_failed)
        first_written(c);
    *write_ms = (ge_now() - t0) * 1e3;
    return 0;
}

static int media_finish(void *ctx, int abandon)
{
    run_ctx *c = ctx;
    close_output(c, abandon);
    if (c->enc_pool)
        wp_wait(c->enc_pool); /* every queued image written (or abandoned) */
    return 0;
}

/* ------------------------------------------------------------------------ */

/* Writes the report to --report-file (safely) or stderr. */
static int write_report(run_ctx *c, const rep_stats *r)
{
    cli_opts *o = c->o;
    int json = o->report == CLI_REPORT_JSON;
    if (!o->report_file) {
        rep_print(r, json, stderr);
        return 0;
    }
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    so_file *f = NULL;
    int ret = -1;
    if (!mem)
        return -1;
    rep_print(r, json, mem);
    fclose(mem);
    if (so_open(&f, o->report_file, &c->so, c->inputs, c->njobs) == 0 &&
        so_write(f, text, len) == 0 && so_commit(&f) == 0)
        ret = 0;
    so_abort(&f);
    free(text);
    return ret;
}

static int open_hist(run_ctx *c)
{
    static const char head[] = "file,frame,pts";
    char num[16];
    if (so_open(&c->hist, c->o->hist_file, &c->so, c->inputs, c->njobs))
        return -1;
    if (so_write(c->hist, head, sizeof head - 1))
        return -1;
    for (int i = 0; i < GE_HIST_BINS; i++) {
        int n = snprintf(num, sizeof num, ",b%d", i);
        if (so_write(c->hist, num, (size_t)n))
            return -1;
    }
    return so_write(c->hist, "\n", 1);
}

/* Whether early_open opens the first video on NVDEC (--hwdec auto or
 * nvdec) while CUDA initialises: the file's open and keyframe scan need
 * no device (vsrc_open opens it in software first), and the sessions
 * open as soon as the context exists instead of after the probe's
 * thread is joined.  Not for --devices (the engines' devices are planned
 * after the probe), nor without a CUDA driver (nothing to overlap:
 * the usual path says why); GPUEDGE_EARLY_NVDEC=0 turns it off (A/B). */
static int early_nvdec(const cli_opts *o, const gpu_probe_job *probe)
{
    int rt = 0, drv = 0;
    if (o->hwdec == CLI_HWDEC_NONE || o->backend == CLI_BACKEND_CPU || o->ndevices > 1 ||
        o->devices_all || gpu_probe_done(probe) || !ge_env_long("GPUEDGE_EARLY_NVDEC", 1))
        return 0;
    /* Is there a driver?  Asked of the loader, not of the CUDA runtime,
     * whose first call here waited for the probe thread's cuInit (the
     * video's open began ~0.12 s late on the H200, BENCHMARKS.md
     * "2026-12-02 (fourth session)"; GPUEDGE_EARLY_DRV_RT=1 asks the
     * runtime as before, for A/B).  A driver without a usable device is
     * the probe's to find: early_to_software then opens the video again. */
    if (!ge_env_long("GPUEDGE_EARLY_DRV_RT", 0))
        return gpu_driver_present();
    gpu_versions(&rt, &drv);
    return drv > 0;
}

/* Start-up (issue 11): while CUDA initialises on its own thread
 * (gpu_probe_start, ~0.35 s on the H200 machine), open the first job's
 * video and, for a video output, its encoder and muxer, which the decode
 * and writer threads would otherwise open only once the engine runs.
 * With NVDEC possible (--hwdec auto/nvdec) the video opens here too
 * (early_nvdec; its NVDEC sessions wait inside for the context the probe
 * is making), or, where early_nvdec says no, only its header is read (for
 * the encoder's size) and the source opens the video as before (reading
 * the header is skipped when the probe already ended: nothing to
 * overlap).  The encoder is opened for the header's
 * size; media_put opens it again if the first frame has another.  Only
 * for a final file written through a temp (never a pipe or a device,
 * where a header would already be out) and without --keep-partial: an
 * early output the run abandons (no GPU, a failed step) leaves nothing.
 * Errors are muted: what fails here is left to the usual path, which
 * opens it again and reports it, so every message stays as it was. */
static void early_open(run_ctx *c, const gpu_probe_job *probe)
{
    const cli_opts *o = c->o;
    vid_info vi;
    struct stat sb;
    int pos = 0, ji, have = 0;
    double t = ge_now();
    job *j;

    /* the queue's first pending file, taken for the first engine */
    while (pos < c->njobs && c->jobs[jq_at(&c->sh->q, pos)].state != JOB_PENDING)
        pos++;
    if (pos == c->njobs || !c->jobs[jq_at(&c->sh->q, pos)].video_in || sig_stopped())
        return;
    ji = jq_at(&c->sh->q, pos);
    jq_take_through(&c->sh->q, pos);
    j = &c->jobs[ji];
    ge_err_muted = 1;
    if (o->hwdec == CLI_HWDEC_NONE || early_nvdec(o, probe)) {
        /* the source's own open (media_next): in software whichever
         * backend runs, or, betting on the GPU backend, as it would open
         * there (the GPU engine's device: one, --device) */
        vid_opts vo = video_opts(o, o->hwdec, o->device);
        j->t_begin = ge_now();
        if (vsrc_open(j->input, &vo, &c->vr) == 0) {
            video_opened(c, ji);
            j->lane = c->lane; /* taken: the source goes on with it */
            c->lane_files++;
            vsrc_get_info(c->vr, &vi);
            have = 1;
        }
    } else if (!gpu_probe_done(probe)) {
        vid_opts vo = {0, -1, o->rgb, 1, 0, 0};
        vid_reader *hdr = NULL;
        if (vid_open(j->input, &vo, &hdr) == 0) {
            vid_get_info(hdr, &vi);
            vid_close(&hdr);
            have = 1;
        }
    }
    /* Where the encoder's lanes depend on the decoder (venc_opts.gpu_frames)
     * and --hwdec=auto may yet choose NVDEC for this file, it opens at the
     * first frame instead, when the decoder is known. */
    if (have && o->hwdec == CLI_HWDEC_AUTO && o->backend != CLI_BACKEND_CPU && !c->vr &&
        venc_lanes_follow_decoder(j->vext, o->codec, o->threads) &&
        vsrc_auto_may_nvdec(o->threads, vsrc_info_gpx(&vi)))
        have = 0;
    if (have && j->out_kind == OUT_VIDEO && !o->keep_partial && vi.width > 0 && vi.height > 0 &&
        strcmp(j->output, "-") && (stat(j->output, &sb) ? errno == ENOENT : S_ISREG(sb.st_mode))) {
        AVRational tb = vi.time_base.num > 0 ? vi.time_base : (AVRational){1, 25};
        AVRational fps = vi.frame_rate.num > 0 ? vi.frame_rate : (AVRational){25, 1};
        venc_opts eo;
        enc_opts(c, &eo);
        eo.gpu_frames = c->vr ? vsrc_nvdec(c->vr)
                              : o->hwdec == CLI_HWDEC_NVDEC && o->backend != CLI_BACKEND_CPU;
        if (so_open(&c->out, j->output, &c->so, c->inputs, c->njobs) == 0 &&
            venc_open(c->out, j->vext, vi.width, vi.height, tb, fps, &eo, &c->enc) == 0) {
            c->sink_job = ji;
            c->early_w = vi.width;
            c->early_h = vi.height;
            j->frames = 0;
        } else {
            venc_close(&c->enc, 1);
            so_abort(&c->out);
        }
    }
    ge_err_muted = 0;
    if (!c->vr)
        lane_claim(c, ji); /* the source opens it first */
    if (ge_verbose && have)
        ge_note("%s: %s%s opened in %.0f ms while CUDA initialises", j->input,
                c->vr ? "video" : "header", c->enc ? " and encoder" : "", (ge_now() - t) * 1e3);
}

/* early_open bet on the GPU backend (early_nvdec) and lost: the probe
 * failed and the CPU engine runs, which takes frames in host memory
 * only.  The video opens again in software, as media_next would have
 * opened it, and an early output goes (its encoder was sized for NVDEC's
 * frames): media_put opens it at the first frame. */
static void early_to_software(run_ctx *c)
{
    vid_opts vo = video_opts(c->o, CLI_HWDEC_NONE, c->o->device);
    job *j = &c->jobs[c->vr_job];
    vsrc_close(&c->vr);
    venc_close(&c->enc, 1);
    so_abort(&c->out);
    c->sink_job = -1;
    c->early_w = c->early_h = 0;
    j->t_begin = ge_now();
    if (vsrc_open(j->input, &vo, &c->vr))
        j->src_failed = 1;
    else
        video_opened(c, c->vr_job);
}

/* An early_open the run never used (it stopped before the engine). */
static void early_abandon(run_ctx *c)
{
    vsrc_close(&c->vr);
    venc_close(&c->enc, 1);
    so_abort(&c->out);
    c->sink_job = -1;
}

/* --backend=auto's start-up policy (issue #5, BENCHMARKS.md "Start-up").
 * Measured on the H200 machine: CUDA initialisation costs ~0.34 s of wall
 * time before the first frame (gpuedge in.png out.png, 1080p: CPU backend
 * 140 ms in all, GPU 483 ms), while the CPU backend computes ~150 Mpx/s a
 * core (400 Mpx RGB in 165 ms on 16).  So runs of images only whose pixels
 * the CPU computes in well under that time stay on the CPU:
 * AUTO_CPU_MPX_PER_CORE Mpx a core (a third of 0.34 s at 150 Mpx/s: a
 * margin for slower cores; 16 cores: 512 Mpx, 2 cores: 64 Mpx).  Videos,
 * stdin, and headers stb cannot read go to the GPU as before. */
#define AUTO_CPU_MPX_PER_CORE 32

static int auto_wants_gpu(const run_ctx *c)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    double px = 0, limit;
    int threads = c->o->threads > 0 ? c->o->threads : (int)(ncpu > 0 ? ncpu : 1);

    if (ncpu > 0 && threads > ncpu)
        threads = (int)ncpu;
    limit = (double)AUTO_CPU_MPX_PER_CORE * 1e6 * threads;
    for (int i = 0; i < c->njobs; i++) {
        int w, h;
        if (c->jobs[i].video_in || !img_probe_size(c->jobs[i].input, &w, &h))
            return 1;
        px += (double)w * h;
        if (px > limit)
            return 1;
    }
    return 0;
}


/* ------------------------------------------------------------------------ */
/* several engines (--devices, issue 14)                                     */

/* Engines a device runs for a batch with several videos: a video is one
 * work item, its decoder, engine and encoder in one engine's threads, so
 * more engines on one device decode and encode several videos at once
 * (several NVDEC sessions, several encoders).  Whether that pays depends on
 * what one file leaves idle: the intra encoders already code successive
 * frames on every thread (issue 11).  Measured on the 2-core machine with
 * the CPU backend, 4 videos of 1280x720 (BENCHMARKS.md "Several engines"):
 * no gain from a second engine.  Not measured on a GPU yet, so the default
 * stays one engine a device; GPUEDGE_VIDEO_ENGINES=N (at most 8) runs N,
 * for the A/B that tests/bench/multi_gpu.sh takes. */
#define VIDEO_ENGINES_MAX 8

static int video_engines(const run_ctx *c)
{
    const char *e = getenv("GPUEDGE_VIDEO_ENGINES");
    long n = e && *e ? strtol(e, NULL, 10) : 1;
    int videos = 0;
    if (n <= 1)
        return 1;
    for (int i = 0; i < c->njobs; i++)
        videos += c->jobs[i].state == JOB_PENDING && c->jobs[i].video_in;
    if (videos < 2)
        return 1;
    if (n > VIDEO_ENGINES_MAX)
        n = VIDEO_ENGINES_MAX;
    return n < videos ? (int)n : videos;
}

/* GPUEDGE_CPU_ENGINES=N (tests, and measuring the scheduler without GPUs):
 * the CPU backend runs N engines, as N devices would.  0 = unset. */
static int cpu_engines_env(void)
{
    const char *e = getenv("GPUEDGE_CPU_ENGINES");
    long n = e && *e ? strtol(e, NULL, 10) : 0;
    return n > 0 && n <= 64 ? (int)n : 0;
}

/* GPUEDGE_FAIL_ENGINE=K[:N] (tests): engine K (or every engine: "all")
 * fails at its N-th file (1st by default), as a lost or out-of-memory
 * device would: an image before it is computed, a video at its second
 * frame (its output open). */
static void fail_env(run_shared *sh)
{
    const char *e = getenv("GPUEDGE_FAIL_ENGINE");
    char *end;
    long k;
    sh->fail_lane = -1;
    sh->fail_nth = 1;
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
}

/* Could the run have several engines?  Then the queue goes largest first
 * (decided before CUDA counts the devices: the order is the same whatever
 * count it finds, and so are the outputs). */
static int may_have_lanes(const run_ctx *c)
{
    const cli_opts *o = c->o;
    if (!c->batch)
        return 0;
    return o->ndevices > 1 || o->devices_all || video_engines(c) > 1 || cpu_engines_env() > 1;
}

static int jq_setup(run_ctx *c)
{
    long long *size = NULL;
    int r;
    c->sh->sorted = may_have_lanes(c);
    if (c->sh->sorted) {
        size = calloc((size_t)c->njobs, sizeof *size);
        if (!size)
            return -1;
        for (int i = 0; i < c->njobs; i++) {
            struct stat st;
            size[i] = stat(c->jobs[i].input, &st) == 0 ? (long long)st.st_size : 0;
        }
    }
    c->sh->hist_buffered = c->sh->sorted && c->o->hist_file;
    r = jq_init(&c->sh->q, c->njobs, size);
    free(size);
    return r;
}

/* An engine failed: its unfinished files go back to the queue, first out,
 * for the other engines (once each; a file that fails a second engine as
 * well fails for good).  What counts as unfinished: taken by this engine,
 * no failure of its own (src_failed, a failed write: reported already),
 * not with the encode pool, and either never finished or abandoned. */
static void lane_hand_back(run_ctx *c)
{
    int n = 0;
    c->dead = 1;
    for (int ji = 0; ji < c->njobs; ji++) {
        job *j = &c->jobs[ji];
        if (j->lane != c->lane || j->src_failed || j->encq ||
            (j->state != JOB_PENDING && !j->abandoned))
            continue;
        if (j->retried) {
            ge_err(j->input, "failed on a second engine too; not retried again");
            j->state = JOB_FAILED;
            continue;
        }
        if (c->nvs) {
            nvj_slot *s = &c->nvs[ji];
            nvj_release(s->dec, &s->pic); /* decoded ahead on this device */
            memset(s, 0, sizeof *s);
        }
        j->state = JOB_PENDING;
        j->abandoned = 0;
        j->frames = j->decoded = 0;
        j->lane = -1;
        j->retried = 1;
        j->hist_len = 0; /* its rows come again from the next engine */
        jq_retry(&c->sh->q, ji);
        n++;
    }
    c->nclaim = 0;
    if (n)
        ge_err(NULL, "engine %d (%s) failed; its %d unfinished file%s go%s to the other engines",
               c->lane, c->lrep.device, n, n == 1 ? "" : "s", n == 1 ? "es" : "");
    else
        ge_err(NULL, "engine %d (%s) failed", c->lane, c->lrep.device);
}

static void *lane_thread(void *arg)
{
    run_ctx *c = arg;
    frame_source src = {c, media_next};
    frame_sink sink = {c, media_put, media_finish};
    double t0 = ge_now();
    c->lane_r = c->use_gpu ? pipe_run_gpu(&c->po, &src, &sink) : pipe_run_cpu(&c->po, &src, &sink);
    close_output(c, 1); /* (an early output its engine never reached) */
    vsrc_close(&c->vr);
    c->busy_s += ge_now() - t0;
    if (c->lane_r == -1)
        lane_hand_back(c);
    return NULL;
}

/* Runs the lanes (engines) on the shared queue until it is empty: rounds,
 * because a failing engine may hand files back after the others ended.
 * Returns 0, or -2 interrupted; an engine that failed sets
 * sh->engine_failed (exit 1), and its files are redone or failed one by one
 * like any failed file (so --hist is written). */
static int run_lanes(run_ctx *lanes, int n)
{
    run_shared *sh = lanes[0].sh;
    pthread_t *th = calloc((size_t)n, sizeof *th);
    char *started = calloc((size_t)n, 1);
    int ret = 0, any_dead = 0;
    if (!th || !started) {
        free(th);
        free(started);
        ge_err(NULL, "out of memory");
        return -1;
    }
    for (;;) {
        int alive = 0, left, ji;
        for (int i = 0; i < n; i++) {
            started[i] = !lanes[i].dead &&
                         pthread_create(&th[i], NULL, lane_thread, &lanes[i]) == 0;
            if (!lanes[i].dead && !started[i]) {
                ge_err(NULL, "engine %d: cannot start its thread", i);
                lanes[i].dead = 1;
            }
        }
        for (int i = 0; i < n; i++)
            if (started[i]) {
                pthread_join(th[i], NULL);
                if (lanes[i].lane_r == -2)
                    ret = ret ? ret : -2;
            }
        for (int i = 0; i < n; i++) {
            alive += !lanes[i].dead;
            any_dead |= lanes[i].dead;
        }
        pthread_mutex_lock(&sh->q.mu);
        left = (sh->q.n - sh->q.head) + (sh->q.nretry - sh->q.rhead);
        pthread_mutex_unlock(&sh->q.mu);
        if (sig_stopped() || ret == -2 || !left)
            break;
        if (alive)
            continue; /* files handed back after the others ended */
        while ((ji = jq_pop(&sh->q, NULL)) >= 0) {
            job *j = &lanes[0].jobs[ji];
            if (j->state != JOB_PENDING)
                continue;
            ge_err(j->input, "not processed: every engine failed");
            j->state = JOB_FAILED;
        }
        break;
    }
    free(th);
    free(started);
    sh->engine_failed = any_dead;
    return ret == -2 ? -2 : 0;
}

/* The devices of --devices into devs (use_gpu: `first` was probed already
 * and is current; the others are probed here, and `first` made current
 * again).  Returns how many, or -1 (reported). */
static int plan_devices(const cli_opts *o, int *devs, int max, int first)
{
    int want[64], nwant = 0, n = 0, count = 0;
    if (o->devices_all) {
        if ((count = gpu_count()) < 1)
            count = 1;
        for (int d = 0; d < count && nwant < 64; d++)
            want[nwant++] = d;
    } else if (o->ndevices > 0) {
        for (int i = 0; i < o->ndevices && nwant < 64; i++)
            want[nwant++] = o->devices[i];
    } else {
        want[nwant++] = first;
    }
    for (int i = 0; i < nwant && n < max; i++) {
        gpu_info gi;
        char why[256];
        if (want[i] == first) {
            devs[n++] = first;
            continue;
        }
        if (gpu_probe(want[i], &gi, why, sizeof why)) {
            if (!o->devices_all) {
                ge_err(NULL, "--devices: device %d: %s", want[i], why);
                gpu_set_device(first);
                return -1;
            }
            if (!ge_quiet)
                ge_note("device %d: %s; not used", want[i], why);
            continue;
        }
        if (ge_verbose)
            ge_note("device %d: %s (compute capability %d.%d)", want[i], gi.name, gi.cc_major,
                    gi.cc_minor);
        devs[n++] = want[i];
    }
    gpu_set_device(first);
    return n;
}

int run_main(cli_opts *o)
{
    run_ctx c, *lanes = NULL;
    run_shared sh;
    pipe_opts po;
    rep_stats rep;
    chk_stats chk;
    gpu_info gi;
    int status, use_gpu = 0, r, nok = 0, nfail = 0, nskip = 0, probe_gpu, nlanes = 1;
    int devs[64], ndev = 1;
    long long nframes = 0;
    double t0 = 0, t_run = ge_now(), t_cuda = 0, t_closed = 0, t_engine = 0;
    gpu_probe_job *probe = NULL;

    memset(&c, 0, sizeof c);
    memset(&sh, 0, sizeof sh);
    pthread_mutex_init(&sh.q_mu, NULL);
    pthread_mutex_init(&sh.pf_mu, NULL);
    pthread_cond_init(&sh.pf_cv, NULL);
    pthread_mutex_init(&sh.note_mu, NULL);
    sh.nlanes = 1;
    fail_env(&sh);
    c.sh = &sh;
    c.device = o->device;
    c.fail_job = -1;
    memset(&po, 0, sizeof po);
    memset(&chk, 0, sizeof chk);
    rep_init(&rep);
    c.o = o;
    c.sink_job = -1;
    c.progress = o->progress > 0 || (o->progress < 0 && !o->quiet && isatty(2));
    c.so.overwrite = o->overwrite;
    c.so.keep_partial = o->keep_partial;
    /* Decoders, before the first image is decoded (prefetch_more). */
    img_set_auto_orient(!o->no_auto_orient);
    /* (nvjpeg: the files nvJPEG cannot take come to the CPU: libjpeg-turbo) */
    img_set_jpeg_decoder(o->jpeg_decoder == CLI_JPEG_STB ? IMG_JPEG_STB : IMG_JPEG_TURBO);
    /* PNG out: the level, and how many threads one image may spread over */
    png_set_defaults(o->png_level, o->threads);

    if (!gpu_compiled()) {
        /* The CPU-only variant (make CUDA=0): what needs the GPU says so
         * before anything is opened or made. */
        const char *opt = o->backend == CLI_BACKEND_GPU ? "--backend=gpu"
                          : o->hwdec == CLI_HWDEC_NVDEC ? "--hwdec=nvdec"
                          : o->jpeg_decoder == CLI_JPEG_NVJPEG ? "--jpeg-decoder=nvjpeg"
                          /* (with --backend=cpu, ignored as in a CUDA build) */
                          : o->backend == CLI_BACKEND_CPU ? NULL
                          : o->ndevices || o->devices_all ? "--devices"
                          : o->device_given ? "--device" : NULL;
        if (opt) {
            ge_err(NULL, "%s: %s", opt, GPU_NONE_WHY);
            status = GE_EXIT_FAIL;
            goto end;
        }
    }
    if (o->jpeg_decoder == CLI_JPEG_NVJPEG) {
        /* the library first (before any output directory is made): it is
         * what a machine without nvJPEG lacks */
        char why[512];
        double t_load = ge_now();
        if (nvj_load(why, sizeof why)) {
            ge_err(NULL, "--jpeg-decoder=nvjpeg: %s", why);
            status = GE_EXIT_FAIL;
            goto end;
        }
        if (ge_verbose)
            ge_note("nvJPEG loaded in %.0f ms", (ge_now() - t_load) * 1e3);
    }
    status = plan_jobs(&c);
    if (status)
        goto end;
    if (jq_setup(&c)) {
        ge_err(NULL, "out of memory");
        status = GE_EXIT_FAIL;
        goto end;
    }

    if (o->jpeg_decoder == CLI_JPEG_NVJPEG) {
        c.nvs = calloc((size_t)c.njobs, sizeof *c.nvs);
        if (!c.nvs) {
            ge_err(NULL, "out of memory");
            status = GE_EXIT_FAIL;
            goto end;
        }
        for (int i = 0; i < c.njobs; i++)
            c.jobs[i].nvj = !c.jobs[i].video_in && is_jpeg_file(c.jobs[i].input) &&
                            (o->no_auto_orient || !jpeg_needs_orient(c.jobs[i].input));
    }

    po.params = o->p;
    if (ge_taps_make(o->p.sigma, &po.taps)) {
        ge_err(NULL, "--sigma %g: out of range", o->p.sigma);
        status = GE_EXIT_USAGE;
        goto end;
    }
    po.threads = o->threads;
    po.device = o->device;
    po.staged = o->staged;
    po.cpu_ref_every = o->cpu_ref_every;
    po.mem_limit = (size_t)o->mem_limit;
    po.job_name = job_name_cb;
    po.job_ctx = &c;
    po.report = o->report ? &rep : NULL;
    po.check = &chk;

    /* Backend: the GPU when usable; --backend=gpu insists.  auto keeps
     * small image-only runs on the CPU, where starting CUDA would cost more
     * than the whole computation (auto_wants_gpu).  The probe starts now,
     * on its own thread, before any other (gpu_probe_start's setenv). */
    probe_gpu = o->backend != CLI_BACKEND_CPU &&
                !(o->backend == CLI_BACKEND_AUTO && o->hwdec != CLI_HWDEC_NVDEC &&
                  o->jpeg_decoder != CLI_JPEG_NVJPEG && !auto_wants_gpu(&c));
    /* GPUEDGE_STARTUP=serial: probe first, open after, as before issue 11
     * (to measure what the overlap saves, in one binary) */
    if (probe_gpu && !(getenv("GPUEDGE_STARTUP") && !strcmp(getenv("GPUEDGE_STARTUP"), "serial")))
        probe = gpu_probe_start(o->device, o->jpeg_decoder != CLI_JPEG_NVJPEG);

    /* Several images: decode ahead and encode behind on all cores (stb is
     * single-threaded per image).  Best effort: without the pools (no
     * memory or threads) images are decoded and encoded in line. */
    if (c.njobs > 1) {
        int n = o->threads > 0 ? o->threads : (int)sysconf(_SC_NPROCESSORS_ONLN);
        n = n < 1 ? 1 : n > 32 ? 32 : n;
        c.pf = calloc((size_t)c.njobs, sizeof *c.pf);
        sh.pf_max = 2 * n;
        if (c.pf && (c.dec_pool = wp_create(n, sh.pf_max)))
            c.enc_pool = wp_create(n, 2 * n);
        /* The first images start decoding now, while CUDA initialises
         * (~0.35 s on the H200 machine): no decode thread runs yet, so this
         * thread may stand in for it. */
        prefetch_more(&c);
    }

    if (probe)
        early_open(&c, probe); /* while CUDA initialises */
    if (o->backend != CLI_BACKEND_CPU && !probe_gpu) {
        if (ge_verbose)
            ge_note("--backend=auto: a few small images, the CPU backend is quicker than "
                    "starting the GPU (--backend=gpu to insist)");
    } else if (o->backend != CLI_BACKEND_CPU) {
        char why[256];
        int pr = probe ? gpu_probe_wait(&probe, &gi, why, sizeof why, &t_cuda)
                       : gpu_probe(o->device, &gi, why, sizeof why);
        if (!t_cuda)
            t_cuda = ge_now();
        if (pr == 0) {
            use_gpu = 1;
            rep.startup_cuda_s = t_cuda - t_run;
            snprintf(rep.device, sizeof rep.device, "%.200s (device %d)", gi.name, o->device);
            if (ge_verbose)
                ge_note("using %s (compute capability %d.%d)", gi.name, gi.cc_major, gi.cc_minor);
        } else if (o->backend == CLI_BACKEND_GPU || o->hwdec == CLI_HWDEC_NVDEC ||
                   o->jpeg_decoder == CLI_JPEG_NVJPEG) {
            ge_err(NULL, "%s: %s", o->backend == CLI_BACKEND_GPU ? "--backend=gpu"
                                   : o->hwdec == CLI_HWDEC_NVDEC ? "--hwdec=nvdec"
                                   : "--jpeg-decoder=nvjpeg: no usable GPU", why);
            status = GE_EXIT_FAIL;
            goto end;
        } else if (!ge_quiet) {
            ge_note("%s; using the CPU backend", why);
        }
    }
    if (!use_gpu && vsrc_nvdec(c.vr))
        early_to_software(&c);

    if (use_gpu && c.nvs) {
        char why[512];
        int any = 0;
        for (int i = 0; i < c.njobs; i++)
            any |= c.jobs[i].nvj;
        double t_open = ge_now();
        if (any && nvj_open(NVJ_GROUP, &c.nvj, why, sizeof why)) {
            ge_err(NULL, "--jpeg-decoder=nvjpeg: %s", why);
            status = GE_EXIT_FAIL;
            goto end;
        }
        if (c.nvj && ge_verbose)
            ge_note("JPEGs: %s; ready in %.0f ms", nvj_describe(c.nvj),
                    (ge_now() - t_open) * 1e3);
    }

    if (o->hist_file && open_hist(&c)) {
        status = GE_EXIT_FAIL;
        goto end;
    }

    c.rep = po.report;

    c.use_gpu = use_gpu;
    if (c.batch) {
        /* engines: one a device (--devices), more for a batch of videos
         * (video_engines), or GPUEDGE_CPU_ENGINES on the CPU backend */
        int pending = 0, per_dev;
        if (use_gpu) {
            ndev = plan_devices(o, devs, 64, o->device);
            if (ndev < 0) {
                status = GE_EXIT_FAIL;
                goto end;
            }
        } else if (ge_verbose && (o->ndevices > 1 || o->devices_all)) {
            ge_note("--devices: the CPU backend runs; one engine");
        }
        per_dev = video_engines(&c);
        nlanes = use_gpu ? ndev * per_dev : cpu_engines_env() ? cpu_engines_env() : per_dev;
        for (int i = 0; i < c.njobs; i++)
            pending += c.jobs[i].state == JOB_PENDING;
        if (nlanes > pending)
            nlanes = pending > 0 ? pending : 1;
        if (!sh.sorted)
            nlanes = 1; /* (the queue was ordered for one engine) */
        if (use_gpu && ndev > 1) {
            size_t len = strlen(rep.device);
            char *paren = strstr(rep.device, " (device ");
            if (paren)
                len = (size_t)(paren - rep.device);
            for (int i = 0; i < ndev && len + 8 < sizeof rep.device; i++)
                len += (size_t)snprintf(rep.device + len, sizeof rep.device - len, "%s%d",
                                        i ? "," : " (devices ", devs[i]);
            if (len + 2 < sizeof rep.device)
                snprintf(rep.device + len, sizeof rep.device - len, ")");
        }
    }
    if (nlanes > 1) {
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        int share = (o->threads > 0 ? o->threads : (int)(ncpu > 0 ? ncpu : 1)) / nlanes;
        int any_nvj = 0;
        for (int i = 0; c.nvs && i < c.njobs; i++)
            any_nvj |= c.jobs[i].nvj;
        lanes = calloc((size_t)nlanes, sizeof *lanes);
        if (!lanes) {
            ge_err(NULL, "out of memory");
            status = GE_EXIT_FAIL;
            goto end;
        }
        sh.nlanes = nlanes;
        for (int i = 0; i < nlanes; i++) {
            run_ctx *l = &lanes[i];
            *l = c; /* lane 0 takes what early_open opened */
            if (i > 0) {
                l->vr = NULL;
                l->sink_job = -1;
                l->out = NULL;
                l->enc = NULL;
                l->nclaim = 0;
                l->early_w = l->early_h = 0;
                l->nvj = NULL;
                l->lane_files = 0;
                l->progress = 0; /* one progress line: the first engine's */
            }
            l->lane = i;
            l->device = use_gpu ? devs[i % ndev] : -1;
            l->fail_job = -1;
            l->nvj_dev_set = 0;
            rep_init(&l->lrep);
            memset(&l->lchk, 0, sizeof l->lchk);
            if (use_gpu)
                snprintf(l->lrep.device, sizeof l->lrep.device, "device %d", l->device);
            else
                snprintf(l->lrep.device, sizeof l->lrep.device, "cpu");
            l->po = po;
            l->po.device = use_gpu ? l->device : 0;
            l->po.report = o->report ? &l->lrep : NULL;
            l->po.check = &l->lchk;
            if (!use_gpu)
                l->po.threads = share > 0 ? share : 1; /* (the bytes do not depend on it) */
            l->rep = l->po.report;
            /* each engine its own libgpuedge context, on its device */
            l->po.ctx = NULL;
            if (api_ctx_for_engine(&l->po.ctx, &o->p, use_gpu ? GE_BACKEND_GPU : GE_BACKEND_CPU,
                                   use_gpu ? l->device : 0, l->po.threads) < 0) {
                ge_err(NULL, "%s", ge_last_error(NULL));
                status = GE_EXIT_FAIL;
                nlanes = i + 1;
                goto end;
            }
            if (use_gpu && i > 0 && any_nvj) {
                /* nvJPEG sessions spread over the devices: one decoder an
                 * engine, made on its device */
                char why[512];
                gpu_set_device(l->device);
                if (nvj_open(NVJ_GROUP, &l->nvj, why, sizeof why)) {
                    ge_err(NULL, "--jpeg-decoder=nvjpeg: device %d: %s", l->device, why);
                    status = GE_EXIT_FAIL;
                    nlanes = i + 1;
                    goto end;
                }
            }
        }
        if (use_gpu)
            gpu_set_device(o->device);
        c.vr = NULL; /* (lane 0's now) */
        c.sink_job = -1;
        c.out = NULL;
        c.enc = NULL;
        c.nclaim = 0;
        if (ge_verbose)
            ge_note("%d engines (%d device%s), one queue, largest files first", nlanes, ndev,
                    ndev == 1 ? "" : "s");
    }
    frame_source src = {&c, media_next};
    frame_sink sink = {&c, media_put, media_finish};
    t0 = ge_now();
    c.job_t0 = t0; /* (an early-opened output's progress line) */
    if (lanes) {
        for (int i = 0; i < nlanes; i++)
            lanes[i].job_t0 = t0;
        r = run_lanes(lanes, nlanes);
        /* every engine joined, and each waited for the encode pool after
         * its last image: the lanes' figures are complete */
        for (int i = 0; i < nlanes; i++) {
            run_ctx *l = &lanes[i];
            if (o->report) {
                rep_merge(&rep, &l->lrep);
                rep_add_engine(&rep, l->lrep.device, l->lane_files, l->lrep.frames, l->busy_s);
            }
            chk.frames += l->lchk.frames;
            chk.bad_frames += l->lchk.bad_frames;
            for (int k = 0; k < CHK_NSTAGES; k++) {
                chk.checked[k] += l->lchk.checked[k];
                chk.mismatches[k] += l->lchk.mismatches[k];
                if (l->lchk.maxdiff[k] > chk.maxdiff[k])
                    chk.maxdiff[k] = l->lchk.maxdiff[k];
            }
            if (i > 0) {
                c.nvj_hw += l->nvj_hw;
                c.nvj_hybrid += l->nvj_hybrid;
                c.nvj_cpu += l->nvj_cpu;
            } else {
                c.nvj_hw = l->nvj_hw;
                c.nvj_hybrid = l->nvj_hybrid;
                c.nvj_cpu = l->nvj_cpu;
            }
        }
    } else {
        /* Frames go through a libgpuedge context (include/gpuedge.h) made for
         * the backend chosen above; the engine keeps its fast paths (NVDEC
         * surfaces, strips, staged) around the context's per-frame entries. */
        if (api_ctx_for_engine(&po.ctx, &o->p, use_gpu ? GE_BACKEND_GPU : GE_BACKEND_CPU,
                               o->device, o->threads) < 0) {
            ge_err(NULL, "%s", ge_last_error(NULL));
            status = GE_EXIT_FAIL;
            goto end;
        }
        r = use_gpu ? pipe_run_gpu(&po, &src, &sink) : pipe_run_cpu(&po, &src, &sink);
    }
    wp_destroy(&c.enc_pool); /* (already drained by media_finish) */
    rep.wall_s = ge_now() - t0;
    t_engine = t0 + rep.wall_s;
    /* an engine that failed before its sink finished leaves an early
     * output open: abandoned (the writer thread is joined) */
    close_output(&c, 1);
    rep.startup_engine_s = t0 - t_run;
    if (sh.t_first_decoded > 0)
        rep.startup_decoded_s = sh.t_first_decoded - t_run;
    if (sh.t_first_written > 0)
        rep.startup_written_s = sh.t_first_written - t_run;
    /* An engine that stopped early (a signal, a failed sink) never asked
     * the source for the end of the video it was reading: close it here,
     * the decode thread is joined (it left the input open and ~1 MB of
     * decoder state allocated until exit). */
    vsrc_close(&c.vr);
    t_closed = ge_now();

    if (c.hist) {
        if (r == 0) {
            if (hist_flush(&c) || so_commit(&c.hist))
                r = -1;
        } else {
            so_abort(&c.hist);
        }
    }
    for (int i = 0; i < c.njobs; i++) {
        if (c.jobs[i].state == JOB_PENDING && c.jobs[i].src_failed)
            c.jobs[i].state = JOB_FAILED;
        nok += c.jobs[i].state == JOB_OK;
        nfail += c.jobs[i].state == JOB_FAILED;
        nskip += c.jobs[i].state == JOB_SKIPPED;
        nframes += c.jobs[i].frames;
    }
    if (o->report && c.njobs > 1) {
        for (int i = 0; i < c.njobs; i++)
            if (c.jobs[i].state == JOB_OK)
                rep_add_file(&rep, c.jobs[i].input, c.jobs[i].frames,
                             c.jobs[i].t_end - c.jobs[i].t_begin);
    }
    if (o->report && write_report(&c, &rep))
        r = r ? r : -1;
    if (o->cpu_ref_every) {
        snprintf(chk.decoded_by, sizeof chk.decoded_by, "%s", sh.decoded_by);
        chk_print(&chk, stderr);
    }
    if (o->cpu_ref_every && c.nvj)
        /* DESIGN.md §1.9: say whose pixels the exact checks started from */
        fprintf(stderr, "cpu-ref: pixels decoded by nvJPEG (hardware) for %ld JPEG%s, by nvJPEG "
                "(GPU hybrid) for %ld, on the CPU for %ld; the reference starts from those same "
                "pixels (nvJPEG's differ slightly from libjpeg-turbo's)\n", c.nvj_hw,
                c.nvj_hw == 1 ? "" : "s", c.nvj_hybrid, c.nvj_cpu);
    if (c.batch && !ge_quiet)
        ge_note("%d file%s: %d ok, %d failed, %d skipped; %lld frame%s in %.2f s", c.njobs,
                c.njobs == 1 ? "" : "s", nok, nfail, nskip, nframes, nframes == 1 ? "" : "s",
                rep.wall_s);

    if (r == -2 || sig_stopped()) {
        status = sig_exit_status();
        ge_err(NULL, "interrupted by %s", sig_name(status - 128));
    } else if (chk.bad_frames)
        status = GE_EXIT_MISMATCH;
    else if (r < 0 || nfail || sh.engine_failed)
        status = GE_EXIT_FAIL;
    else
        status = GE_EXIT_OK;
end:
    ge_ctx_free(&po.ctx);
    if (probe)
        gpu_probe_wait(&probe, &gi, (char[8]){0}, 8, NULL);
    early_abandon(&c);
    so_abort(&c.hist);
    wp_destroy(&c.enc_pool);
    wp_destroy(&c.dec_pool); /* images still decoding ahead finish first */
    for (int i = 0; c.pf && i < c.njobs; i++)
        if (c.pf[i].state == 2 && c.pf[i].ok)
            img_free(&c.pf[i].img);
    free(c.pf);
    for (int i = 0; c.nvs && i < c.njobs; i++)
        nvj_release(c.nvs[i].dec, &c.nvs[i].pic); /* decoded ahead, never served */
    free(c.nvs);
    for (int i = 0; lanes && i < nlanes; i++) {
        if (i > 0)
            nvj_close(&lanes[i].nvj); /* (lane 0's is c.nvj) */
        ge_ctx_free(&lanes[i].po.ctx);
        rep_free(&lanes[i].lrep);
    }
    free(lanes);
    if (c.nvj) {
        double t_close = ge_now();
        nvj_close(&c.nvj);
        if (ge_verbose)
            ge_note("nvJPEG closed in %.0f ms", (ge_now() - t_close) * 1e3);
    }
    jq_free(&sh.q);
    pthread_mutex_destroy(&sh.q_mu);
    pthread_mutex_destroy(&sh.pf_mu);
    pthread_cond_destroy(&sh.pf_cv);
    pthread_mutex_destroy(&sh.note_mu);
    for (int i = 0; i < c.njobs; i++) {
        free(c.jobs[i].hist_rows);
        free(c.jobs[i].input);
        free(c.jobs[i].output);
    }
    free(c.jobs);
    free(c.inputs);
    rep_free(&rep);
    if (ge_trace("pipe") && t_closed > 0) {
        /* what the process does after its engine: the rest of a timed
         * run's wall is the process's start and exit (H200: 0.13-0.15 s,
         * not CUDA's user-space teardown: BENCHMARKS.md "Exit"); the run's
         * start on the wall clock, so that a script that took the time
         * before exec and after the exit can split the two */
        struct timespec rt;
        double now = ge_now();
        clock_gettime(CLOCK_REALTIME, &rt);
        ge_note("exit trace (from the run's start): engine ended %.3f s, sources and outputs "
                "closed %.3f s, everything freed %.3f s; the run began at %.6f (epoch s)",
                t_engine - t_run, t_closed - t_run, now - t_run,
                (double)rt.tv_sec + rt.tv_nsec * 1e-9 - (now - t_run));
    }
    return status;
}
