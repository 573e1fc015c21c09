/*
 * startup.c — from the job list to a chosen backend.  CUDA's start-up
 * (gpu_probe_start, about a third of a second) runs on its own thread
 * while this one opens the first input and its output (early_open) and
 * the first images decode ahead; --backend=auto keeps small image-only
 * runs on the CPU, where starting CUDA would cost more than the work.
 */
#include "run_int.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

/* What needs the GPU says so before anything is opened or made: in the
 * CPU-only variant (make CUDA=0) every GPU option, and nvJPEG's library
 * (what a machine without nvJPEG lacks).  0, or the exit status. */
int startup_checks(const cli_opts *o)
{
    if (!gpu_compiled()) {
        const char *opt = o->backend == CLI_BACKEND_GPU ? "--backend=gpu"
                          : o->hwdec == CLI_HWDEC_NVDEC ? "--hwdec=nvdec"
                          : o->jpeg_decoder == CLI_JPEG_NVJPEG ? "--jpeg-decoder=nvjpeg"
                          /* (with --backend=cpu, ignored as in a CUDA build) */
                          : o->backend == CLI_BACKEND_CPU ? NULL
                          : o->ndevices || o->devices_all ? "--devices"
                          : o->device_given ? "--device" : NULL;
        if (opt) {
            ge_err(NULL, "%s: %s", opt, GPU_NONE_WHY);
            return GE_EXIT_FAIL;
        }
    }
    if (o->jpeg_decoder == CLI_JPEG_NVJPEG) {
        double t_load = ge_now();
        if (nvj_load()) {
            ge_err(NULL, "--jpeg-decoder=nvjpeg: %s", ge_why());
            return GE_EXIT_FAIL;
        }
        if (ge_verbose)
            ge_note("nvJPEG loaded in %.0f ms", (ge_now() - t_load) * 1e3);
    }
    return 0;
}

/* Whether early_open opens the first video on NVDEC (--hwdec auto or
 * nvdec) while CUDA initialises: the file's open and keyframe scan need
 * no device (vsrc_open opens it in software first), and the sessions
 * open as soon as the context exists instead of after the probe's
 * thread is joined.  Not for --devices (the engines' devices are planned
 * after the probe), nor without a CUDA driver (nothing to overlap: the
 * usual path says why). */
static int early_nvdec(const cli_opts *o, const gpu_probe_job *probe)
{
    if (o->hwdec == CLI_HWDEC_NONE || o->backend == CLI_BACKEND_CPU || o->ndevices > 1 ||
        o->devices_all || gpu_probe_done(probe))
        return 0;
    /* Is there a driver?  Asked of the loader, not of the CUDA runtime,
     * whose first call here would wait for the probe thread's cuInit
     * (measured: BENCHMARKS.md).  A driver without a usable device is the
     * probe's to find: early_to_software then opens the video again. */
    return gpu_driver_present();
}

/* The first job's video opened (or only its header read) for early_open:
 * 1 with its header in *vi, 0 not. */
static int early_source(run_ctx *c, job *j, int ji, const gpu_probe_job *probe, vid_info *vi)
{
    const cli_opts *o = c->o;
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
            vsrc_get_info(c->vr, vi);
            return 1;
        }
    } else if (!gpu_probe_done(probe)) {
        vid_opts vo = {.start = 0, .max_frames = -1, .rgb = o->rgb, .threads = 1};
        vid_reader *hdr = NULL;
        if (vid_open(j->input, &vo, &hdr) == 0) {
            vid_get_info(hdr, vi);
            vid_close(&hdr);
            return 1;
        }
    }
    return 0;
}

/* The first job's encoder and muxer, for the header's size. */
static void early_output(run_ctx *c, job *j, int ji, const vid_info *vi)
{
    const cli_opts *o = c->o;
    AVRational tb = vi->time_base.num > 0 ? vi->time_base : (AVRational){1, 25};
    AVRational fps = vi->frame_rate.num > 0 ? vi->frame_rate : (AVRational){25, 1};
    venc_opts eo;
    enc_opts(c, &eo);
    eo.gpu_frames = c->vr ? vsrc_nvdec(c->vr)
                          : o->hwdec == CLI_HWDEC_NVDEC && o->backend != CLI_BACKEND_CPU;
    if (so_open(&c->out, j->output, &c->so, c->inputs, c->njobs) == 0 &&
        venc_open(c->out, j->vext, vi->width, vi->height, tb, fps, &eo, &c->enc) == 0) {
        c->sink_job = ji;
        c->early_w = vi->width;
        c->early_h = vi->height;
        j->frames = 0;
    } else {
        venc_close(&c->enc, 1);
        so_abort(&c->out);
    }
}

/* While CUDA initialises, open the first job's video and, for a video
 * output, its encoder and muxer, which the decode and writer threads
 * would otherwise open only once the engine runs.  With NVDEC possible
 * the video opens here too (early_nvdec; its NVDEC sessions wait inside
 * for the context the probe is making), or, where early_nvdec says no,
 * only its header is read (for the encoder's size) and the source opens
 * the video as before.  media_put opens the encoder again if the first
 * frame has another size.  Only for a final file written through a temp
 * (never a pipe or a device, where a header would already be out) and
 * without --keep-partial: an early output the run abandons leaves
 * nothing.  Nothing is printed here: what fails leaves a record nobody
 * prints (DESIGN.md §9), and the usual path opens it again and reports it,
 * so every message stays as it was. */
static void early_open(run_ctx *c, const gpu_probe_job *probe)
{
    const cli_opts *o = c->o;
    vid_info vi;
    struct stat sb;
    int pos = 0, ji, have;
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
    have = early_source(c, j, ji, probe, &vi);
    /* Where the encoder's lanes depend on the decoder (venc_opts.gpu_frames)
     * and --hwdec=auto may yet choose NVDEC for this file, it opens at the
     * first frame instead, when the decoder is known. */
    if (have && o->hwdec == CLI_HWDEC_AUTO && o->backend != CLI_BACKEND_CPU && !c->vr &&
        venc_encoders_follow_decoder(j->vext, o->codec, o->threads) &&
        vsrc_auto_may_nvdec(o->threads, vsrc_info_gpx(&vi)))
        have = 0;
    if (have && j->out_kind == OUT_VIDEO && !o->keep_partial && vi.width > 0 && vi.height > 0 &&
        strcmp(j->output, "-") && (stat(j->output, &sb) ? errno == ENOENT : S_ISREG(sb.st_mode)))
        early_output(c, j, ji, &vi);
    ge_why_clear(); /* what failed is left to the usual path (DESIGN.md §9) */
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
    if (vsrc_open(j->input, &vo, &c->vr)) {
        ge_err_why(j->input);
        j->src_failed = 1;
    } else
        video_opened(c, c->vr_job);
}

/* An early_open the run never used (it stopped before the engine). */
void early_abandon(run_ctx *c)
{
    vsrc_close(&c->vr);
    venc_close(&c->enc, 1);
    so_abort(&c->out);
    c->sink_job = -1;
}

/* --backend=auto: CUDA's initialisation costs about 0.34 s before the
 * first frame while the CPU backend computes about 150 Mpx/s a core, so
 * runs of images only whose pixels the CPU computes in well under that
 * time stay on the CPU (a third of it, a margin for slower cores).
 * Videos, stdin, and headers that cannot be read go to the GPU.
 * measured: BENCHMARKS.md */
#define AUTO_CPU_MPX_PER_CORE 32

static int auto_wants_gpu(const run_ctx *c)
{
    long ncpu = ge_cpu_count();
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

/* Starts the GPU probe (when the GPU may run) on its own thread, before
 * any other (gpu_probe_start's setenv), then the images' pools and the
 * first video's early open while it runs. */
void startup_begin(run_ctx *c, run_start *st)
{
    const cli_opts *o = c->o;
    st->probe_gpu = o->backend != CLI_BACKEND_CPU &&
                    !(o->backend == CLI_BACKEND_AUTO && o->hwdec != CLI_HWDEC_NVDEC &&
                      o->jpeg_decoder != CLI_JPEG_NVJPEG && !auto_wants_gpu(c));
    if (st->probe_gpu)
        st->probe = gpu_probe_start(o->device, o->jpeg_decoder != CLI_JPEG_NVJPEG);
    src_image_start_pools(c);
    if (st->probe)
        early_open(c, st->probe);
}

/* The backend: the GPU when usable; --backend=gpu, --hwdec=nvdec and
 * --jpeg-decoder=nvjpeg insist.  0, or the exit status. */
int startup_backend(run_ctx *c, run_start *st, rep_stats *rep)
{
    const cli_opts *o = c->o;
    if (o->backend != CLI_BACKEND_CPU && !st->probe_gpu) {
        if (ge_verbose)
            ge_note("--backend=auto: a few small images, the CPU backend is quicker than "
                    "starting the GPU (--backend=gpu to insist)");
    } else if (o->backend != CLI_BACKEND_CPU) {
        int pr = st->probe ? gpu_probe_wait(&st->probe, &st->gi, &st->t_cuda)
                           : gpu_probe(o->device, &st->gi);
        if (!st->t_cuda)
            st->t_cuda = ge_now();
        if (pr == 0) {
            st->use_gpu = 1;
            rep->startup_cuda_s = st->t_cuda - st->t_run;
            snprintf(rep->device, sizeof rep->device, "%.200s (device %d)", st->gi.name,
                     o->device);
            if (ge_verbose)
                ge_note("using %s (compute capability %d.%d)", st->gi.name, st->gi.cc_major,
                        st->gi.cc_minor);
        } else if (o->backend == CLI_BACKEND_GPU || o->hwdec == CLI_HWDEC_NVDEC ||
                   o->jpeg_decoder == CLI_JPEG_NVJPEG) {
            ge_err(NULL, "%s: %s", o->backend == CLI_BACKEND_GPU ? "--backend=gpu"
                                   : o->hwdec == CLI_HWDEC_NVDEC ? "--hwdec=nvdec"
                                   : "--jpeg-decoder=nvjpeg: no usable GPU", ge_why());
            return GE_EXIT_FAIL;
        } else if (!ge_quiet) {
            ge_note("%s; using the CPU backend", ge_why());
        }
    }
    if (!st->use_gpu && vsrc_nvdec(c->vr))
        early_to_software(c);
    if (st->use_gpu && src_image_open_nvj(c))
        return GE_EXIT_FAIL;
    c->use_gpu = st->use_gpu;
    return 0;
}

/* The end of the run: a probe still running is waited for. */
void startup_end(run_start *st)
{
    if (st->probe)
        gpu_probe_wait(&st->probe, &st->gi, NULL);
}
