/*
 * src_image.c — image jobs as frames: decoded ahead of the engine by a
 * pool of threads (stb and the codecs work on one image a thread), or,
 * with --jpeg-decoder=nvjpeg, JPEGs decoded in groups on the GPU and
 * handed over as device frames (DESIGN.md §1.9).
 */
#include "run_int.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bigbuf.h"
#include "image_in_jpeg.h"
#include "util.h"

/* An image decoded ahead by the decode pool. */
typedef struct prefetch {
    run_ctx *c;
    int job;
    int state;        /* 0 not asked, 1 queued, 2 done (under pf_mu) */
    int ok;
    img_image img;
    double ms;
} prefetch;

/* A cap on the JPEG file bytes one nvJPEG group holds at once. */
#define NVJ_GROUP_BYTES ((size_t)256 << 20)

typedef struct nvj_slot {
    nvj_dec *dec;
    nvj_pic pic;      /* pic.ok: the decoded planes wait in device memory */
    int state;        /* 0 not decoded yet, 1 decoded or refused */
    double ms;        /* the group's time, shared out */
} nvj_slot;

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

static void free_pixels(void *pixels)
{
    bb_free(pixels);
}

/* The decoded image *img as job ji's one frame, *img emptied.  Either
 * engine reads the decoder's own buffer (the GPU engine uploads from it:
 * pageable, staged by the driver on the engine's submitting thread, off
 * the thread that collects decoded images) and gives it back by
 * fr->release once the frame is done with (frames.h). */
static void image_to_frame(int ji, img_image *img, double ms, src_frame *fr)
{
    fr->f = img_as_frame(img);
    fr->job = ji;
    fr->index = 0;
    fr->pts = -1;
    fr->ts = INT64_MIN;
    fr->duration = 0;
    fr->decode_ms = ms;
    fr->release = free_pixels;
    fr->release_ctx = img->pixels;
    memset(img, 0, sizeof *img);
}

/* Loads one image job as a frame.  1 frame, 0 the job failed (reported). */
static int image_frame(run_ctx *c, job *j, int jobi, src_frame *fr)
{
    img_image img;
    double t0 = ge_now();
    j->t_begin = t0;
    if (img_load(j->input, &img)) {
        ge_err_why(j->input);
        return 0;
    }
    note_decoder(c, j->input, &img);
    image_to_frame(jobi, &img, (ge_now() - t0) * 1e3, fr);
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
    if (!ok && !sig_stopped())
        ge_err_why(c->jobs[t->job].input); /* the file's one line, from this thread */
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
void prefetch_more(run_ctx *c)
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
            continue; /* (nvJPEG's files are decoded in groups, nvj_job_frame) */
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
int image_job_frame(run_ctx *c, int ji, src_frame *fr)
{
    job *j = &c->jobs[ji];
    prefetch *t = c->pf ? &c->pf[ji] : NULL;
    int queued = 0;
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
        return image_frame(c, j, ji, fr);
    pthread_mutex_lock(&c->sh->q_mu);
    c->sh->pf_outstanding--;
    pthread_mutex_unlock(&c->sh->q_mu);
    t->state = 0;
    if (!t->ok)
        return 0;
    note_decoder(c, j->input, &t->img);
    image_to_frame(ji, &t->img, t->ms, fr);
    return 1;
}

/* ------------------------------------------------------------------------ */
/* nvJPEG: groups of JPEG jobs decoded into device memory                    */

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

static int nvj_pending(void *ctx, int ji)
{
    run_ctx *c = ctx;
    return c->jobs[ji].nvj && c->jobs[ji].state == JOB_PENDING && !c->nvs[ji].state;
}

/* Reads job i's file into the group (files[k], pics[k]) unless it is not
 * pending or cannot be read (the CPU path then says why).  The bytes
 * added. */
static size_t nvj_group_add(run_ctx *c, int i, nvj_pic *pics, unsigned char **files, int *idx,
                            int *k)
{
    job *j = &c->jobs[i];
    nvj_slot *s = &c->nvs[i];
    size_t len;
    if (!j->nvj || j->state != JOB_PENDING || s->state)
        return 0;
    s->state = 1;
    s->dec = c->nvj;
    memset(&s->pic, 0, sizeof s->pic);
    j->t_begin = ge_now();
    if (nvj_read_file(j->input, &files[*k], &len)) {
        ge_why_clear(); /* pic.why empty: the CPU path says why */
        return 0;
    }
    memset(&pics[*k], 0, sizeof pics[*k]);
    pics[*k].data = files[*k];
    pics[*k].len = len;
    idx[(*k)++] = i;
    return len;
}

/* Decodes job ji and the pending JPEG jobs after it as one group. */
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
        while (c->nclaim < NVJ_GROUP - 1 && (more = jq_pop_if(&c->sh->q, nvj_pending, c, NULL)) >= 0)
            lane_claim(c, more);
    }
    for (int n = 0, i = ji; k < NVJ_GROUP && bytes < NVJ_GROUP_BYTES; n++, i++) {
        if (c->sh->nlanes > 1) {
            /* (with one engine, every pending JPEG after it) */
            if (n > c->nclaim)
                break;
            i = n ? c->claim[n - 1] : ji;
        } else if (i >= c->njobs) {
            break;
        }
        bytes += nvj_group_add(c, i, pics, files, idx, &k);
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
int nvj_job_frame(run_ctx *c, int ji, src_frame *fr)
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
        return image_frame(c, j, ji, fr);
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

/* An engine failed: what it decoded ahead on its device goes. */
void nvj_slot_drop(run_ctx *c, int ji)
{
    if (c->nvs) {
        nvj_slot *s = &c->nvs[ji];
        nvj_release(s->dec, &s->pic);
        memset(s, 0, sizeof *s);
    }
}

int any_nvj_job(const run_ctx *c)
{
    for (int i = 0; c->nvs && i < c->njobs; i++)
        if (c->jobs[i].nvj)
            return 1;
    return 0;
}

/* --jpeg-decoder=nvjpeg: which jobs nvJPEG takes (JPEGs that need no
 * turning).  0, or -1 out of memory (reported). */
int src_image_setup(run_ctx *c)
{
    const cli_opts *o = c->o;
    if (o->jpeg_decoder != CLI_JPEG_NVJPEG)
        return 0;
    c->nvs = calloc((size_t)c->njobs, sizeof *c->nvs);
    if (!c->nvs) {
        ge_err(NULL, "out of memory");
        return -1;
    }
    for (int i = 0; i < c->njobs; i++)
        c->jobs[i].nvj = !c->jobs[i].video_in && is_jpeg_file(c->jobs[i].input) &&
                         (o->no_auto_orient || !jpeg_needs_orient(c->jobs[i].input));
    return 0;
}

/* Several images: decode ahead and encode behind on all cores.  Best
 * effort: without the pools (no memory or threads) images are decoded
 * and encoded in line. */
void src_image_start_pools(run_ctx *c)
{
    size_t keep;
    int n;
    if (c->njobs <= 1)
        return;
    n = c->o->threads > 0 ? c->o->threads : ge_cpu_count();
    n = n < 1 ? 1 : n > 32 ? 32 : n;
    c->pf = calloc((size_t)c->njobs, sizeof *c->pf);
    c->sh->pf_max = 2 * n;
    /* Freed large buffers kept for the next images (bigbuf.h): about a
     * large photo's file and pixels a decode thread, within --mem-limit. */
    keep = (size_t)(n + 4) * (64u << 20);
    if (c->o->mem_limit && keep > c->o->mem_limit / 4)
        keep = (size_t)(c->o->mem_limit / 4);
    bb_keep(keep);
    if (c->pf && (c->dec_pool = wp_create(n, c->sh->pf_max)))
        c->enc_pool = wp_create(n, 2 * n);
    /* The first images start decoding now, while CUDA initialises: no
     * decode thread runs yet, so this thread may stand in for it. */
    prefetch_more(c);
}

/* The GPU runs: nvJPEG's decoder, on the current device (c->device).
 * 0, or -1 (reported). */
int src_image_open_nvj(run_ctx *c)
{
    double t_open = ge_now();
    if (!c->nvs || !any_nvj_job(c))
        return 0;
    if (nvj_open(NVJ_GROUP, &c->nvj)) {
        if (c->lane > 0)
            ge_err(NULL, "--jpeg-decoder=nvjpeg: device %d: %s", c->device, ge_why());
        else
            ge_err(NULL, "--jpeg-decoder=nvjpeg: %s", ge_why());
        return -1;
    }
    if (c->lane == 0 && ge_verbose)
        ge_note("JPEGs: %s; ready in %.0f ms", nvj_describe(c->nvj), (ge_now() - t_open) * 1e3);
    return 0;
}

/* After the engines: the pools joined (images still decoding ahead finish
 * first), what was decoded ahead and never served freed. */
void src_image_free(run_ctx *c)
{
    wp_destroy(&c->enc_pool);
    wp_destroy(&c->dec_pool);
    for (int i = 0; c->pf && i < c->njobs; i++)
        if (c->pf[i].state == 2 && c->pf[i].ok)
            img_free(&c->pf[i].img);
    free(c->pf);
    c->pf = NULL;
    bb_keep(0);
    for (int i = 0; c->nvs && i < c->njobs; i++)
        nvj_release(c->nvs[i].dec, &c->nvs[i].pic);
    free(c->nvs);
    c->nvs = NULL;
}
