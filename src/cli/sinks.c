/*
 * sinks.c — the frame sink an engine's writer thread calls: image files
 * (encoded behind by a pool), image sequences and videos, each written
 * through a temp file and committed only when complete (DESIGN.md §6);
 * the --hist CSV and the --report file.  The progress line: progress.c.
 */
#include "run_int.h"

#include "bigbuf.h"
#include "png_out.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libavutil/avutil.h>

#include "util.h"

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

int hist_flush(run_ctx *c)
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

int open_hist(run_ctx *c)
{
    static const char head[] = "file,frame,pts";
    char num[16];
    if (so_open(&c->hist, c->o->hist_file, &c->so, c->inputs, c->njobs)) {
        ge_err_why(c->o->hist_file);
        return -1;
    }
    if (so_write(c->hist, head, sizeof head - 1))
        return -1;
    for (int i = 0; i < GE_HIST_BINS; i++) {
        int n = snprintf(num, sizeof num, ",b%d", i);
        if (so_write(c->hist, num, (size_t)n))
            return -1;
    }
    return so_write(c->hist, "\n", 1);
}

/* Writes one image file (an image job, or one frame of a sequence).
 * An interruption (SIGINT/SIGTERM) that arrives while the image is being
 * encoded must not be followed by a commit: the run reports 128+N and
 * leaves no new final file (the temp is removed, or kept as .partial).
 * Returns 0 written, 1 interrupted, -1 failed (reported). */
static int write_image(run_ctx *c, const char *path, int fmt, const sink_frame *fr)
{
    so_file *f = NULL;
    ge_why_clear();
    const sink_png *p = fmt == IMG_FMT_PNG ? fr->png : NULL;
    if (!sig_stopped() && so_open(&f, path, &c->so, c->inputs, c->njobs) == 0 &&
        (p ? png_write_coded(f, fr->width, fr->height, p->rows, p->npieces, p->z, p->lens,
                             p->adler)
           : img_write(f, fmt, fr->edge, fr->width, fr->height, fr->width)) == 0) {
        hook_hold_write(); /* (test build: a signal before the commit) */
        if (!sig_stopped() && so_commit(&f) == 0)
            return 0;
    }
    ge_err_pending(path); /* the open's, the encoder's or the commit's (DESIGN.md §9) */
    so_abort(&f);
    ge_err_pending(path); /* a write error that only the abort reports */
    return sig_stopped() ? 1 : -1;
}

/* --strict failed a damaged video written as an image sequence: its
 * frames, committed one by one, go too (no output kept). */
static void remove_sequence(const job *j)
{
    char name[4096];
    for (long k = 1; k <= j->frames; k++)
        if (vid_sequence_name(j->output, k, name, sizeof name) == 0)
            unlink(name);
}

/* Closes the output of the job the sink has open: commit when every frame
 * went in and nothing failed, else abandon (temp removed or .partial). */
void close_output(run_ctx *c, int abandon)
{
    job *j;
    int failed;
    if (c->sink_job < 0)
        return;
    j = &c->jobs[c->sink_job];
    /* src_failed is written by the decode thread before it produced any
     * later frame (or before it ended): the queues' locks order it. */
    failed = c->sink_failed || j->src_failed;
    if (abandon && !failed)
        j->abandoned = 1; /* not its own fault: another engine may redo it */
    if (j->out_kind == OUT_VIDEO) {
        int r;
        double t0;
        ge_why_clear();
        r = c->enc ? venc_close(&c->enc, abandon || failed) : -1;
        t0 = ge_now();
        if (r == 0 && !abandon && !failed && !sig_stopped() && so_commit(&c->out) == 0) {
            j->state = JOB_OK;
            /* (over an existing file the commit frees its pages, on a
             * file system in RAM at once) */
            if (ge_trace("venc"))
                ge_note("venc trace: %s committed (fsync, rename) in %.1f ms", j->output,
                        (ge_now() - t0) * 1e3);
        } else {
            ge_err_pending(j->output); /* the encoder's or the commit's (DESIGN.md §9) */
            so_abort(&c->out);
            ge_err_pending(j->output); /* a write error that only the abort reports */
            if (!sig_stopped())
                j->state = JOB_FAILED;
        }
    } else if (j->out_kind == OUT_SEQUENCE) {
        if (!failed && !abandon && j->state == JOB_PENDING && j->frames > 0) {
            j->state = JOB_OK;
        } else if (!sig_stopped()) {
            j->state = JOB_FAILED;
            if (j->src_failed && c->o->strict && j->damage[0])
                remove_sequence(j);
        }
    }
    if (j->state == JOB_OK)
        j->t_end = ge_now();
    prog_draw(c, j, j->frames, 1); /* before the note: it erases the line */
    if (c->batch && !ge_quiet && j->state == JOB_OK && j->out_kind != OUT_IMAGE) {
        if (j->damaged)
            ge_note("%s -> %s: %s", j->input, j->output, j->damage);
        else
            ge_note("%s -> %s: ok (%ld frame%s)", j->input, j->output, j->frames,
                    j->frames == 1 ? "" : "s");
    }
    c->sink_job = -1;
    c->sink_failed = 0;
}

/* An image encoded behind the sink by the encode pool: its edge map, or
 * the PNG image data the GPU coded (lens, adler, then the bytes). */
typedef struct enc_task {
    run_ctx *c;
    int job;
    int width, height;
    int png_rows, png_npieces; /* 0: edge[] is the edge map */
    uint8_t edge[]; /* width * height, or the PNG's image data */
} enc_task;

/* Start-up figure: the first output written (writer thread or the
 * encode pool's, hence the atomic). */
static void first_written(run_ctx *c)
{
    double zero = 0, now = ge_now();
    __atomic_compare_exchange(&c->sh->t_first_written, &zero, &now, 0, __ATOMIC_RELAXED,
                              __ATOMIC_RELAXED);
}

/* An image job's one frame to its file; the job decided. */
static void image_done(run_ctx *c, job *j, const sink_frame *fr)
{
    int r = write_image(c, j->output, j->fmt, fr);
    if (r == 0) {
        j->state = JOB_OK;
        j->frames = 1;
        j->t_end = ge_now();
        if (c->batch && !ge_quiet)
            ge_note("%s -> %s: ok (%dx%d)", j->input, j->output, fr->width, fr->height);
    } else if (r < 0) {
        j->state = JOB_FAILED;
    }
}

static void encode_task(void *arg)
{
    enc_task *t = arg;
    run_ctx *c = t->c;
    sink_frame fr = {.job = t->job, .width = t->width, .height = t->height, .edge = t->edge};
    sink_png png;
    double t0 = ge_now();
    if (t->png_npieces) {
        png.lens = (const uint32_t *)(const void *)t->edge;
        png.adler = png.lens + t->png_npieces;
        png.z = (const uint8_t *)(png.adler + t->png_npieces);
        png.rows = t->png_rows;
        png.npieces = t->png_npieces;
        fr.png = &png;
        fr.edge = NULL;
    }
    /* each image job has one frame: no other thread touches this job */
    image_done(c, &c->jobs[t->job], &fr);
    if (c->rep)
        rep_add(c->rep, REP_WRITE, (ge_now() - t0) * 1e3);
    first_written(c);
    bb_free(t);
}

/* Hands an image job's edge map to the encode pool (a copy: the engine's
 * slot goes back at once).  0 queued, -1 not (encode it here). */
static int encode_behind(run_ctx *c, const sink_frame *fr)
{
    const sink_png *p = fr->png;
    size_t n = (size_t)fr->width * fr->height, meta = 0;
    enc_task *t;
    if (p) { /* (smaller than the edge map: png_coded) */
        meta = 2 * sizeof *p->lens * (size_t)p->npieces;
        n = 0;
        for (int k = 0; k < p->npieces; k++)
            n += p->lens[k];
    }
    if (!c->enc_pool || !(t = bb_alloc(sizeof *t + meta + n)))
        return -1;
    t->c = c;
    t->job = fr->job;
    t->width = fr->width;
    t->height = fr->height;
    t->png_rows = p ? p->rows : 0;
    t->png_npieces = p ? p->npieces : 0;
    if (p) {
        memcpy(t->edge, p->lens, meta / 2);
        memcpy(t->edge + meta / 2, p->adler, meta / 2);
        memcpy(t->edge + meta, p->z, n);
    } else {
        memcpy(t->edge, fr->edge, n);
    }
    c->jobs[fr->job].encq = 1; /* the encode task decides it now */
    if (wp_submit(c->enc_pool, encode_task, t)) {
        c->jobs[fr->job].encq = 0;
        bb_free(t);
        return -1;
    }
    return 0;
}

void enc_opts(const run_ctx *c, venc_opts *vo)
{
    memset(vo, 0, sizeof *vo);
    vo->threads = c->threads;
    vo->mem_limit = (size_t)c->o->mem_limit; /* caps the parallel FFV1 encoders */
    vo->codec = c->o->codec; /* checked by cli_parse */
    vo->preset = c->o->preset;
    vo->crf = c->o->crf;
    vo->mkv_crc = c->o->mkv_crc;
}

/* One frame of an image sequence: its own numbered file. */
static void put_sequence(run_ctx *c, job *j, const sink_frame *fr)
{
    char name[4096];
    if (vid_sequence_name(j->output, fr->index + 1, name, sizeof name)) {
        ge_err(j->output, "frame %ld: cannot make a file name from this pattern", fr->index + 1);
        c->sink_failed = 1;
        return;
    }
    if (write_image(c, name, j->fmt, fr) == 0)
        j->frames++;
    else
        c->sink_failed = 1;
}

/* One frame of a video output, its encoder opened at the first. */
static void put_video(run_ctx *c, job *j, const sink_frame *fr)
{
    AVRational tb = j->tb.num > 0 ? j->tb : (AVRational){1, 25};
    AVRational fps = j->fps.num > 0 ? j->fps : (AVRational){25, 1};
    /* No pts (raw H.264, some AVI): the encoder continues from the
     * previous frame by its duration or 1/fps.  The frame index is no
     * pts: in a stream time base such as 1/1200000 it would squeeze every
     * frame into the first millisecond. */
    int64_t ts = fr->ts != INT64_MIN ? fr->ts : AV_NOPTS_VALUE;
    if (c->enc && c->early_w && j->frames == 0 &&
        (fr->width != c->early_w || fr->height != c->early_h)) {
        /* opened early for the header's size, but the first frame has
         * another: start again at the frame's, as without early_open */
        ge_why_clear();
        venc_close(&c->enc, 1);
        so_abort(&c->out);
        ge_err_pending(j->output);
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
            ge_err_why(j->output);
            c->sink_failed = 1;
            return;
        }
    }
    ge_why_clear();
    /* the packet the GPU coded, when the writer takes it; else the pixels */
    int r = fr->coded ? venc_put_coded(c->enc, fr->coded, fr->coded_bytes, fr->codes,
                                       fr->width, fr->height, ts, fr->duration,
                                       fr->lend_coded, fr->lend_ctx)
                      : 1;
    if (r == 1)
        r = venc_put_sized(c->enc, fr->edge, fr->width, fr->height, fr->width, ts, fr->duration);
    if (r == 0) {
        j->frames++;
    } else {
        ge_err_pending(j->output); /* (a write error: at the abort) */
        c->sink_failed = 1;
    }
    if (!j->video_in)
        close_output(c, 0);
}

int media_put(void *ctx, const sink_frame *fr, double *write_ms)
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
    case OUT_IMAGE:
        c->sink_job = -1; /* nothing left open */
        if (c->batch)
            prog_draw(c, j, fr->index + 1, 0); /* which file of how many */
        if (encode_behind(c, fr) == 0) {
            *write_ms = -1; /* the encode task reports its own time */
            return 0;
        }
        image_done(c, j, fr);
        break;
    case OUT_SEQUENCE:
        put_sequence(c, j, fr);
        break;
    case OUT_VIDEO:
        put_video(c, j, fr);
        break;
    }
    if (c->sink_job >= 0)
        prog_draw(c, j, j->frames, 0);
    if (!c->sink_failed)
        first_written(c);
    *write_ms = (ge_now() - t0) * 1e3;
    return 0;
}

int media_finish(void *ctx, int abandon)
{
    run_ctx *c = ctx;
    close_output(c, abandon);
    if (c->enc_pool)
        wp_wait(c->enc_pool); /* every queued image written (or abandoned) */
    return 0;
}

/* Writes the report to --report-file (safely) or stderr. */
int write_report(run_ctx *c, const rep_stats *r)
{
    cli_opts *o = c->o;
    int json = o->report == CLI_REPORT_JSON;
    char *text = NULL;
    size_t len = 0;
    FILE *mem;
    so_file *f = NULL;
    int ret = -1;
    if (!o->report_file) {
        rep_print(r, json, stderr);
        return 0;
    }
    if (!(mem = open_memstream(&text, &len)))
        return -1;
    rep_print(r, json, mem);
    fclose(mem);
    ge_why_clear();
    if (so_open(&f, o->report_file, &c->so, c->inputs, c->njobs) == 0 &&
        so_write(f, text, len) == 0 && so_commit(&f) == 0)
        ret = 0;
    else
        ge_err_pending(o->report_file);
    so_abort(&f);
    ge_err_pending(o->report_file);
    free(text);
    return ret;
}
