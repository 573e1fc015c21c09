/*
 * engines.c — the engines of a run and the one queue they share.
 *
 * One engine (a decode thread, the pipeline, a writer thread: pipe_run)
 * runs a single file or a batch.  A batch may run several: one a device
 * with --devices, and --video-engines N a device for a batch of videos
 * (each video is one work item: its decoder, engine and encoder in one
 * engine's threads, so several engines decode and encode several videos
 * at once; an NVDEC engine chains its files on one session, src_media.c;
 * under --hwdec=auto some engines stand by to decode in software beside
 * those on NVDEC: mix_lanes).  Then the queue goes largest file first,
 * so that the long jobs start early, and an engine that fails hands its
 * unfinished files to the others (jobq.h).  The outputs are the same
 * whatever the engines.
 */
#include "run_int.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

/* --video-engines 0: the engines a GPU runs for a batch of videos.  One
 * video leaves NVDEC engines, and cores between its decoder and its
 * encoder threads, idle.  With .mkv frames coded on the GPU, 8 beat 4 and
 * 16 on a folder of short 1080p clips (1,258 / 1,103 / 931 fps) and of 4K
 * clips (802 / 627) (BENCHMARKS.md "Video batches").  The CPU backend's
 * one engine already uses every core. */
#define VIDEO_ENGINES_GPU 8

static int engines_asked(const cli_opts *o, int gpu)
{
    return o->video_engines > 0 ? o->video_engines : gpu ? VIDEO_ENGINES_GPU : 1;
}

static int pending_videos(const run_ctx *c)
{
    int videos = 0;
    for (int i = 0; i < c->njobs; i++)
        videos += c->jobs[i].state == JOB_PENDING && c->jobs[i].video_in;
    return videos;
}

/* Engines a device runs for this batch: --video-engines for two videos
 * or more (at most one a video), else one. */
static int video_engines(const run_ctx *c)
{
    int n = engines_asked(c->o, c->use_gpu), videos;
    if (n <= 1)
        return 1;
    videos = pending_videos(c);
    if (videos < 2)
        return 1;
    return n < videos ? n : videos;
}

/* Engines that decode in software beside those on NVDEC, for a GPU
 * batch of videos under --hwdec=auto whose outputs all leave the cores
 * free (job_mix_decoders): as many as vsrc_mix_sw gives for the run's
 * threads (vplan.h), *sw_threads each.  All engines take files from the
 * one queue, largest first, so each kind decodes in proportion to its
 * speed; these only while the NVDEC engines' files do not chain
 * (src_media.c sw_lane_go). */
static int mix_lanes(const run_ctx *c, int *sw_threads)
{
    long threads = c->o->threads > 0 ? c->o->threads : ge_cpu_count();
    if (!c->use_gpu || c->o->hwdec != CLI_HWDEC_AUTO)
        return 0;
    for (int i = 0; i < c->njobs; i++)
        if (c->jobs[i].state == JOB_PENDING &&
            (!c->jobs[i].video_in || !job_mix_decoders(c, i)))
            return 0;
    return vsrc_mix_sw(threads, sw_threads);
}

/* Could the run have several engines?  Then the queue goes largest first
 * (decided before CUDA counts the devices: the order is the same whatever
 * count it finds, and so are the outputs). */
static int may_have_lanes(const run_ctx *c)
{
    const cli_opts *o = c->o;
    if (!c->batch)
        return 0;
    /* --video-engines 0 asks for several where the GPU backend may run */
    int gpu = o->backend != CLI_BACKEND_CPU && gpu_driver_present();
    return o->ndevices > 1 || o->devices_all ||
           (engines_asked(o, gpu) > 1 && pending_videos(c) > 1) ||
           hook_cpu_engines() > 1;
}

int jq_setup(run_ctx *c)
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
        nvj_slot_drop(c, ji); /* decoded ahead on this device */
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
    c->chain_job = c->chain_back = -1;
    if (n)
        ge_err(NULL, "engine %d (%s) failed; its %d unfinished file%s go%s to the other engines",
               c->lane, c->lrep.device, n, n == 1 ? "" : "s", n == 1 ? "es" : "");
    else
        ge_err(NULL, "engine %d (%s) failed", c->lane, c->lrep.device);
}

/* An engine's own fatal error is in the record (pipeline.h); a source's or
 * sink's was reported where it happened (DESIGN.md §9). */
static void engine_failed(int r)
{
    if (r == -1 && ge_why()[0])
        ge_err_why(NULL);
}

static void *lane_thread(void *arg)
{
    run_ctx *c = arg;
    frame_source src = {c, media_next};
    frame_sink sink = {c, media_put, media_finish};
    double t0 = ge_now();
    c->lane_r = c->use_gpu ? pipe_run_gpu(&c->po, &src, &sink) : pipe_run_cpu(&c->po, &src, &sink);
    engine_failed(c->lane_r);
    if (c->hwdec != CLI_HWDEC_NONE)
        __atomic_add_fetch(&c->sh->nvdec_done, 1, __ATOMIC_RELAXED);
    close_output(c, 1); /* (an early output its engine never reached) */
    vsrc_close(&c->vr);
    c->busy_s += ge_now() - t0;
    if (c->lane_r == -1)
        lane_hand_back(c);
    return NULL;
}

/* Runs the lanes (engines) on the shared queue until it is empty: rounds,
 * because a failing engine may hand files back after the others ended.
 * Returns 0, or GE_STOPPED interrupted; an engine that failed sets
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
        int alive = 0, ji;
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
                if (lanes[i].lane_r == GE_STOPPED)
                    ret = ret ? ret : GE_STOPPED;
            }
        for (int i = 0; i < n; i++) {
            alive += !lanes[i].dead;
            any_dead |= lanes[i].dead;
        }
        if (sig_stopped() || ret == GE_STOPPED || !jq_left(&sh->q))
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
    return ret == GE_STOPPED ? GE_STOPPED : 0;
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
        if (want[i] == first) {
            devs[n++] = first;
            continue;
        }
        if (gpu_probe(want[i], &gi)) {
            if (!o->devices_all) {
                ge_err(NULL, "--devices: device %d: %s", want[i], ge_why());
                gpu_set_device(first);
                return -1;
            }
            if (!ge_quiet)
                ge_note("device %d: %s; not used", want[i], ge_why());
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

/* How many engines a batch runs: one a device (--devices), more for a
 * batch of videos (video_engines), or the CPU-engines test hook on the
 * CPU backend; the devices in devs, the report's device line naming them.
 * Returns the count, or -1 (reported). */
static int count_lanes(run_ctx *c, rep_stats *rep, int *devs, int *ndev)
{
    const cli_opts *o = c->o;
    int pending = 0, per_dev, nlanes, sw = 0;
    *ndev = 1;
    if (c->use_gpu) {
        if ((*ndev = plan_devices(o, devs, 64, o->device)) < 0)
            return -1;
    } else if (ge_verbose && (o->ndevices > 1 || o->devices_all)) {
        ge_note("--devices: the CPU backend runs; one engine");
    }
    per_dev = video_engines(c);
    nlanes = c->use_gpu ? *ndev * per_dev : hook_cpu_engines() ? hook_cpu_engines() : per_dev;
    for (int i = 0; i < c->njobs; i++)
        pending += c->jobs[i].state == JOB_PENDING;
    /* software engines where the batch gives every engine two files at
     * least: one takes a whole file, and a slower one's last file must
     * not be most of the run */
    if (per_dev > 1 && (sw = mix_lanes(c, &c->sh->sw_threads)) > 0 &&
        pending >= 2 * (nlanes + sw) && c->sh->sorted)
        nlanes += sw;
    else
        sw = 0;
    if (nlanes > pending)
        nlanes = pending > 0 ? pending : 1;
    if (!c->sh->sorted)
        nlanes = 1; /* (the queue was ordered for one engine) */
    c->sh->sw_lanes = sw;
    /* Engines chain their files on one decoder (media_next) where the
     * batch gives every engine two files at least; a few long files keep
     * their segments' several decoders */
    c->sh->chain = (c->use_gpu ? o->hwdec != CLI_HWDEC_NONE : 1) && nlanes > 1 &&
                   pending >= 2 * nlanes;
    if (sw && ge_verbose)
        ge_note("--hwdec=auto: %d engine%s on NVDEC, %d decoding in software (%d threads "
                "each), one queue", nlanes - sw, nlanes - sw == 1 ? "" : "s", sw,
                c->sh->sw_threads);
    if (c->use_gpu && *ndev > 1) {
        size_t len = strlen(rep->device);
        char *paren = strstr(rep->device, " (device ");
        if (paren)
            len = (size_t)(paren - rep->device);
        for (int i = 0; i < *ndev && len + 8 < sizeof rep->device; i++)
            len += (size_t)snprintf(rep->device + len, sizeof rep->device - len, "%s%d",
                                    i ? "," : " (devices ", devs[i]);
        if (len + 2 < sizeof rep->device)
            snprintf(rep->device + len, sizeof rep->device - len, ")");
    }
    return nlanes;
}

/* Engine i's context: a copy of the run's (engine 0 takes what early_open
 * opened), its own device, options, figures and libgpuedge context.
 * 0, or -1 (reported). */
static int make_lane(run_ctx *c, run_ctx *l, int i, const pipe_opts *po, int share,
                     const int *devs, int ndev)
{
    const cli_opts *o = c->o;
    int use_gpu = c->use_gpu;
    *l = *c;
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
    l->chain_job = l->chain_back = -1;
    l->nvj_dev_set = 0;
    rep_init(&l->lrep);
    memset(&l->lchk, 0, sizeof l->lchk);
    l->hwdec = i >= c->sh->nlanes - c->sh->sw_lanes ? CLI_HWDEC_NONE : c->hwdec;
    l->dec_nvdec = l->dec_sw = 0;
    if (use_gpu)
        snprintf(l->lrep.device, sizeof l->lrep.device, "device %d%s", l->device,
                 l->hwdec == c->hwdec ? "" : ", software decoding");
    else
        snprintf(l->lrep.device, sizeof l->lrep.device, "cpu");
    l->po = *po;
    l->po.device = use_gpu ? l->device : 0;
    l->po.report = o->report ? &l->lrep : NULL;
    l->po.check = &l->lchk;
    /* the engines share the cores: decoders, encoders and the CPU
     * backend's bands, and the memory for a long file's frames decoded
     * ahead (each may decode one in segments at once; the bytes do not
     * depend on either) */
    l->threads = share > 0 ? share : 1;
    l->mem_budget = vsrc_host_budget(vsrc_phys_bytes(), c->sh->nlanes);
    if (!use_gpu)
        l->po.threads = l->threads;
    l->rep = l->po.report;
    /* each engine its own libgpuedge context, on its device */
    l->po.ctx = NULL;
    if (api_ctx_for_engine(&l->po.ctx, &o->p, use_gpu ? GE_BACKEND_GPU : GE_BACKEND_CPU,
                           use_gpu ? l->device : 0, l->po.threads) < 0) {
        ge_err_why(NULL);
        return -1;
    }
    if (use_gpu && i > 0 && any_nvj_job(c)) {
        /* nvJPEG sessions spread over the devices: one decoder an engine,
         * made on its device */
        gpu_set_device(l->device);
        if (src_image_open_nvj(l))
            return -1;
    }
    return 0;
}

static void free_lanes(run_ctx *lanes, int n)
{
    for (int i = 0; lanes && i < n; i++) {
        if (i > 0)
            nvj_close(&lanes[i].nvj); /* (lane 0's is the run's) */
        ge_ctx_free(&lanes[i].po.ctx);
        rep_free(&lanes[i].lrep);
    }
    free(lanes);
}

/* The engines' figures into the run's (every engine joined, and each
 * waited for the encode pool after its last image). */
static void merge_lanes(run_ctx *c, run_ctx *lanes, int n, rep_stats *rep, chk_stats *chk)
{
    c->nvj_hw = c->nvj_hybrid = c->nvj_cpu = 0;
    c->dec_nvdec = c->dec_sw = 0;
    for (int i = 0; i < n; i++) {
        run_ctx *l = &lanes[i];
        if (c->o->report) {
            rep_merge(rep, &l->lrep);
            rep_add_engine(rep, l->lrep.device, l->lane_files, l->lrep.frames, l->busy_s);
        }
        chk->frames += l->lchk.frames;
        chk->bad_frames += l->lchk.bad_frames;
        for (int k = 0; k < CHK_NSTAGES; k++) {
            chk->checked[k] += l->lchk.checked[k];
            chk->mismatches[k] += l->lchk.mismatches[k];
            if (l->lchk.maxdiff[k] > chk->maxdiff[k])
                chk->maxdiff[k] = l->lchk.maxdiff[k];
        }
        c->dec_nvdec += l->dec_nvdec;
        c->dec_sw += l->dec_sw;
        c->nvj_hw += l->nvj_hw;
        c->nvj_hybrid += l->nvj_hybrid;
        c->nvj_cpu += l->nvj_cpu;
    }
}

/* Several engines: made, run on the queue, their figures merged. */
static int run_several(run_ctx *c, const pipe_opts *po, int nlanes, const int *devs, int ndev,
                       rep_stats *rep, chk_stats *chk, double *t0, int *r)
{
    long ncpu = ge_cpu_count();
    int nsw = c->sh->sw_lanes;
    int share = (c->o->threads > 0 ? c->o->threads : (int)(ncpu > 0 ? ncpu : 1)) / (nlanes - nsw);
    run_ctx *lanes = calloc((size_t)nlanes, sizeof *lanes);
    if (!lanes) {
        ge_err(NULL, "out of memory");
        return GE_EXIT_FAIL;
    }
    c->sh->nlanes = nlanes;
    for (int i = 0; i < nlanes; i++)
        if (make_lane(c, &lanes[i], i, po, i < nlanes - nsw ? share : c->sh->sw_threads, devs,
                      ndev)) {
            free_lanes(lanes, i + 1);
            return GE_EXIT_FAIL;
        }
    if (c->use_gpu)
        gpu_set_device(c->o->device);
    c->vr = NULL; /* (lane 0's now) */
    c->sink_job = -1;
    c->out = NULL;
    c->enc = NULL;
    c->nclaim = 0;
    if (ge_verbose)
        ge_note("%d engines (%d device%s), one queue, largest files first", nlanes, ndev,
                ndev == 1 ? "" : "s");
    *t0 = ge_now();
    c->job_t0 = *t0;
    for (int i = 0; i < nlanes; i++)
        lanes[i].job_t0 = *t0;
    *r = run_lanes(lanes, nlanes);
    merge_lanes(c, lanes, nlanes, rep, chk);
    free_lanes(lanes, nlanes);
    return 0;
}

/* Runs the run's engines to the end of the queue: *r what they returned
 * (0, -1 failed, GE_STOPPED interrupted), *t0 when they started.  0, or the exit
 * status of a set-up failure (reported; nothing ran). */
int run_engines(run_ctx *c, pipe_opts *po, rep_stats *rep, chk_stats *chk, double *t0, int *r)
{
    const cli_opts *o = c->o;
    int devs[64], ndev = 1, nlanes = 1;
    frame_source src = {c, media_next};
    frame_sink sink = {c, media_put, media_finish};
    if (c->batch && (nlanes = count_lanes(c, rep, devs, &ndev)) < 0)
        return GE_EXIT_FAIL;
    if (nlanes > 1)
        return run_several(c, po, nlanes, devs, ndev, rep, chk, t0, r);
    /* Frames go through a libgpuedge context (include/gpuedge.h) made for
     * the backend chosen; the engine keeps its fast paths (NVDEC surfaces,
     * strips, staged) around the context's per-frame entries. */
    *t0 = ge_now();
    c->job_t0 = *t0; /* (an early-opened output's progress line) */
    if (api_ctx_for_engine(&po->ctx, &o->p, c->use_gpu ? GE_BACKEND_GPU : GE_BACKEND_CPU,
                           o->device, o->threads) < 0) {
        ge_err_why(NULL);
        return GE_EXIT_FAIL;
    }
    *r = c->use_gpu ? pipe_run_gpu(po, &src, &sink) : pipe_run_cpu(po, &src, &sink);
    engine_failed(*r);
    return 0;
}
