/*
 * ahead.c — an engine's next video opened ahead (DESIGN.md §4).  While the
 * engine's current video decodes, a thread takes the engine's next job
 * from the queue, opens it (vsrc_open: the keyframe scan, the decoder) and
 * decodes its first frame, where an NVDEC session starts (0.1-0.4 s): in a
 * batch of short videos a file boundary then leaves no engine idle.  The
 * frame goes on when the current video ends; a failure is reported then,
 * in the order the files are taken, as if opened there.
 */
#include "run_int.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

struct vahead {
    pthread_t th;
    int ji;          /* its job */
    char *path;
    vid_opts vo;
    int device;      /* the engine's CUDA device, -1 the CPU backend */
    vsrc *vr;        /* open (NULL: vsrc_open failed) */
    src_frame fr;    /* its first frame when rc == 1 */
    host_buf buf;    /* ... a host frame's pixels */
    int rc;          /* vsrc_next's: 1 a frame, 0 none, -1 failed */
    ge_why_rec why;  /* what failed, for the decode thread to report */
    double t_begin;
    int joined;      /* the thread is done: its frame is held */
};

static void *ahead_main(void *arg)
{
    vahead *a = arg;
    if (a->device >= 0)
        gpu_set_device(a->device); /* (the ready events of NVDEC frames) */
    ge_why_clear();
    if (vsrc_open(a->path, &a->vo, &a->vr)) {
        a->rc = -1;
        ge_why_save(&a->why);
        return NULL;
    }
    src_frame_host(&a->fr);
    a->rc = vsrc_next(a->vr, &a->fr, &a->buf);
    if (a->rc < 0)
        ge_why_save(&a->why);
    return NULL;
}

/* Job ji back to the front of what this engine takes next. */
static void put_back(run_ctx *c, int ji)
{
    int n = (int)(sizeof c->claim / sizeof c->claim[0]);
    c->lane_files--; /* (counted again when taken) */
    if (c->nclaim == n) {
        jq_retry(&c->sh->q, ji); /* (never: claims are few) */
        return;
    }
    memmove(c->claim + 1, c->claim, (size_t)c->nclaim * sizeof *c->claim);
    c->claim[0] = ji;
    c->nclaim++;
}

void ahead_start(run_ctx *c)
{
    vahead *a;
    job *j;
    int ji;
    if (c->ahead || !c->batch || sig_stopped() || (ji = lane_take(c)) < 0)
        return;
    j = &c->jobs[ji];
    if (j->state != JOB_PENDING || !j->video_in || !(a = calloc(1, sizeof *a))) {
        put_back(c, ji);
        return;
    }
    a->ji = ji;
    a->path = j->input;
    a->vo = video_opts(c->o, c->use_gpu ? c->hwdec : CLI_HWDEC_NONE, c->device);
    a->vo.threads = c->threads;
    a->vo.mem_budget = c->mem_budget;
    a->device = c->use_gpu ? c->device : -1;
    a->t_begin = ge_now();
    if (pthread_create(&a->th, NULL, ahead_main, a)) {
        free(a);
        put_back(c, ji);
        return;
    }
    if (ge_verbose)
        ge_note("%s: opened ahead by engine %d", j->input, c->lane);
    c->ahead = a;
}

int ahead_take(run_ctx *c)
{
    vahead *a = c->ahead;
    job *j;
    if (!a)
        return -1;
    pthread_join(a->th, NULL);
    a->joined = 1;
    j = &c->jobs[a->ji];
    j->t_begin = a->t_begin;
    if (!a->vr) {
        ge_why_load(&a->why);
        ge_err_why(j->input);
        j->src_failed = 1;
        c->ahead = NULL;
        free(a);
        return -2;
    }
    c->vr = a->vr;
    a->vr = NULL;
    video_opened(c, a->ji);
    return a->ji;
}

int ahead_frame(run_ctx *c, src_frame *fr, host_buf *buf)
{
    vahead *a = c->ahead;
    int rc = a->rc;
    c->ahead = NULL;
    if (rc == 1 && a->fr.on_device) {
        *fr = a->fr; /* (its release goes with it) */
    } else if (rc == 1) {
        size_t n = a->fr.f.stride * (size_t)a->fr.f.height;
        if (host_buf_reserve(buf, n ? n : 1)) {
            ge_fail_in(a->path, "cannot decode video: out of memory");
            rc = -1;
        } else {
            memcpy(buf->p, a->buf.p, n);
            *fr = a->fr;
            fr->f.data = buf->p;
        }
    } else if (rc < 0) {
        ge_why_load(&a->why);
    }
    host_buf_free(&a->buf);
    free(a);
    return rc;
}

int ahead_held(const run_ctx *c)
{
    return c->ahead && c->ahead->joined;
}

void ahead_drop(run_ctx *c)
{
    vahead *a = c->ahead;
    if (!a)
        return;
    c->ahead = NULL;
    if (!a->joined)
        pthread_join(a->th, NULL);
    if (a->rc == 1)
        src_frame_release(&a->fr);
    vsrc_close(&a->vr);
    host_buf_free(&a->buf);
    free(a);
}
