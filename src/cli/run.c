/*
 * run.c — run_main, the outline of a run: set up (the job list, the
 * start-up, the backend), the engines, the summary, the cleanup.  Each
 * step lives in its own file (run_int.h).
 */
#include "run.h"
#include "run_int.h"

#include <signal.h>
#include <string.h>
#include <time.h>

#include "png_out.h"
#include "util.h"

static void run_init(run_ctx *c, run_shared *sh, run_start *st, cli_opts *o)
{
    memset(c, 0, sizeof *c);
    memset(sh, 0, sizeof *sh);
    memset(st, 0, sizeof *st);
    st->t_run = ge_now();
    pthread_mutex_init(&sh->q_mu, NULL);
    pthread_mutex_init(&sh->pf_mu, NULL);
    pthread_cond_init(&sh->pf_cv, NULL);
    pthread_mutex_init(&sh->note_mu, NULL);
    sh->nlanes = 1;
    hook_fail_engine(sh);
    c->sh = sh;
    c->o = o;
    c->device = o->device;
    c->fail_job = -1;
    c->chain_job = c->chain_back = -1;
    c->sink_job = -1;
    c->threads = o->threads;
    c->hwdec = o->hwdec;
    prog_init(c);
    c->so.overwrite = o->overwrite;
    c->so.keep_partial = o->keep_partial;
    /* Decoders, before the first image is decoded (prefetch_more). */
    img_set_auto_orient(!o->no_auto_orient);
    /* (nvjpeg: the files nvJPEG cannot take come to the CPU: libjpeg-turbo) */
    img_set_jpeg_decoder(o->jpeg_decoder == CLI_JPEG_STB ? IMG_JPEG_STB : IMG_JPEG_TURBO);
    /* PNG out: the level, and how many threads one image may spread over */
    png_set_defaults(o->png_level, o->threads);
}

/* The engine's options.  0, or the exit status. */
static int engine_opts(run_ctx *c, pipe_opts *po, rep_stats *rep, chk_stats *chk)
{
    const cli_opts *o = c->o;
    po->params = o->p;
    if (ge_taps_make(o->p.sigma, &po->taps)) {
        ge_err(NULL, "--sigma %g: out of range", o->p.sigma);
        return GE_EXIT_USAGE;
    }
    po->threads = o->threads;
    po->device = o->device;
    po->staged = o->staged;
    po->cpu_ref_every = o->cpu_ref_every;
    po->mem_limit = (size_t)o->mem_limit;
    po->job_name = job_name_cb;
    po->job_ctx = c;
    /* .mkv frames coded on the GPU: the writers' codes (without them the
     * cores code, the same bytes) */
    po->code_job = code_job_cb;
    for (int i = 0; i < c->njobs; i++)
        if (code_job_cb(c, i)) {
            po->hfyu = venc_ffvhuff_codes(c->sh->hfyu) == 0 ? c->sh->hfyu : NULL;
            ge_why_clear();
            break;
        }
    /* PNG files' image data coded on the GPU: the writer's own bytes at
     * its defaults (level 1, Paeth rows; kernels/png_gpu.h) */
    po->png_job = png_job_cb;
    po->png_piece_bytes = 0;
    for (int i = 0; o->png_level == PNG_LEVEL_RLE && i < c->njobs; i++)
        if (png_job_cb(c, i)) {
            po->png_piece_bytes = PNG_PIECE_BYTES;
            break;
        }
    po->report = o->report ? rep : NULL;
    po->check = chk;
    po->stop = &sig_stop; /* the engine stops where a signal asks (DESIGN.md §6) */
    c->rep = po->report;
    return 0;
}

/* Everything before the engines.  0, or the exit status. */
static int run_setup(run_ctx *c, run_start *st, pipe_opts *po, rep_stats *rep, chk_stats *chk)
{
    int status;
    if ((status = startup_checks(c->o)) || (status = plan_jobs(c)))
        return status;
    if (jq_setup(c)) {
        ge_err(NULL, "out of memory");
        return GE_EXIT_FAIL;
    }
    if (src_image_setup(c))
        return GE_EXIT_FAIL;
    if ((status = engine_opts(c, po, rep, chk)))
        return status;
    startup_begin(c, st);
    if ((status = startup_backend(c, st, rep)))
        return status;
    if (c->o->hist_file && open_hist(c))
        return GE_EXIT_FAIL;
    return 0;
}

/* The lines after the engines: --report, --cpu-ref's, the batch's count;
 * then the exit status from r (what the engines returned). */
static int summary(run_ctx *c, rep_stats *rep, chk_stats *chk, int r)
{
    const cli_opts *o = c->o;
    int nok = 0, nfail = 0, nskip = 0, ndmg = 0, status;
    long long nframes = 0;
    char dmg[32] = "";
    for (int i = 0; i < c->njobs; i++) {
        if (c->jobs[i].state == JOB_PENDING && c->jobs[i].src_failed)
            c->jobs[i].state = JOB_FAILED;
        nok += c->jobs[i].state == JOB_OK;
        nfail += c->jobs[i].state == JOB_FAILED;
        nskip += c->jobs[i].state == JOB_SKIPPED;
        ndmg += c->jobs[i].state == JOB_OK && c->jobs[i].damaged;
        nframes += c->jobs[i].frames;
    }
    rep->damaged_files = ndmg;
    rep->video_nvdec = c->dec_nvdec;
    rep->video_sw = c->dec_sw;
    rep->video_chained = __atomic_load_n(&c->sh->chained, __ATOMIC_RELAXED);
    if (ge_verbose && c->dec_nvdec && c->dec_sw)
        ge_note("video frames decoded: %lld on NVDEC, %lld in software", c->dec_nvdec,
                c->dec_sw);
    if (ndmg)
        snprintf(dmg, sizeof dmg, " (%d damaged)", ndmg);
    for (int i = 0; o->report && c->njobs > 1 && i < c->njobs; i++)
        if (c->jobs[i].state == JOB_OK)
            rep_add_file(rep, c->jobs[i].input, c->jobs[i].frames,
                         c->jobs[i].t_end - c->jobs[i].t_begin, c->jobs[i].damaged);
    if (o->report && write_report(c, rep))
        r = r ? r : -1;
    if (o->cpu_ref_every) {
        snprintf(chk->decoded_by, sizeof chk->decoded_by, "%s", c->sh->decoded_by);
        chk_print(chk, stderr);
    }
    if (o->cpu_ref_every && c->nvj)
        /* DESIGN.md §1.9: say whose pixels the exact checks started from */
        fprintf(stderr, "cpu-ref: pixels decoded by nvJPEG (hardware) for %ld JPEG%s, by nvJPEG "
                "(GPU hybrid) for %ld, on the CPU for %ld; the reference starts from those same "
                "pixels (the hardware's are libjpeg-turbo's, the GPU hybrid's differ slightly)\n",
                c->nvj_hw, c->nvj_hw == 1 ? "" : "s", c->nvj_hybrid, c->nvj_cpu);
    if (c->batch && !ge_quiet)
        ge_note("%d file%s: %d ok%s, %d failed, %d skipped; %lld frame%s in %.2f s", c->njobs,
                c->njobs == 1 ? "" : "s", nok, dmg, nfail, nskip, nframes,
                nframes == 1 ? "" : "s", rep->wall_s);
    if (r == GE_STOPPED || sig_stopped()) {
        status = sig_exit_status();
        ge_err(NULL, "interrupted by %s", sig_name(status - 128));
    } else if (chk->bad_frames)
        status = GE_EXIT_MISMATCH;
    else if (r < 0 || nfail || c->sh->engine_failed)
        status = GE_EXIT_FAIL;
    else
        status = GE_EXIT_OK;
    return status;
}

/* GPUEDGE_TRACE=pipe: what the process does after its engine (the rest
 * of a timed run's wall is the process's start and exit: BENCHMARKS.md);
 * the run's start on the wall clock, so that a script that took the time
 * before exec and after the exit can split the two. */
static void exit_trace(double t_run, double t_engine, double t_closed)
{
    struct timespec rt;
    double now = ge_now();
    clock_gettime(CLOCK_REALTIME, &rt);
    ge_note("exit trace (from the run's start): engine ended %.3f s, sources and outputs "
            "closed %.3f s, everything freed %.3f s; the run began at %.6f (epoch s)",
            t_engine - t_run, t_closed - t_run, now - t_run,
            (double)rt.tv_sec + rt.tv_nsec * 1e-9 - (now - t_run));
}

static void run_free(run_ctx *c, run_shared *sh, run_start *st, pipe_opts *po)
{
    ge_ctx_free(&po->ctx);
    startup_end(st);
    early_abandon(c);
    ge_why_clear();
    so_abort(&c->hist);
    ge_err_pending(c->o->hist_file); /* a write error only the abort reports */
    src_image_free(c);
    if (c->nvj) {
        double t_close = ge_now();
        nvj_close(&c->nvj);
        if (ge_verbose)
            ge_note("nvJPEG closed in %.0f ms", (ge_now() - t_close) * 1e3);
    }
    jq_free(&sh->q);
    pthread_mutex_destroy(&sh->q_mu);
    pthread_mutex_destroy(&sh->pf_mu);
    pthread_cond_destroy(&sh->pf_cv);
    pthread_mutex_destroy(&sh->note_mu);
    jobs_free(c);
}

int run_main(cli_opts *o)
{
    run_ctx c;
    run_shared sh;
    run_start st;
    pipe_opts po;
    rep_stats rep;
    chk_stats chk;
    int status, r = 0;
    double t0 = 0, t_engine = 0, t_closed = 0;

    run_init(&c, &sh, &st, o);
    memset(&po, 0, sizeof po);
    memset(&chk, 0, sizeof chk);
    rep_init(&rep);
    if ((status = run_setup(&c, &st, &po, &rep, &chk)) == 0)
        status = run_engines(&c, &po, &rep, &chk, &t0, &r);
    prog_end(&c); /* the terminal's line erased before the summary */
    if (status) {
        if (status == GE_EXIT_USAGE)
            cli_usage_hint(); /* after the error's line(s) */
        goto end;
    }

    wp_destroy(&c.enc_pool); /* (already drained by media_finish) */
    rep.wall_s = ge_now() - t0;
    t_engine = t0 + rep.wall_s;
    /* an engine that failed before its sink finished leaves an early
     * output open: abandoned (the writer thread is joined) */
    close_output(&c, 1);
    rep.startup_engine_s = t0 - st.t_run;
    if (sh.t_first_decoded > 0)
        rep.startup_decoded_s = sh.t_first_decoded - st.t_run;
    if (sh.t_first_written > 0)
        rep.startup_written_s = sh.t_first_written - st.t_run;
    /* An engine that stopped early (a signal, a failed sink) never asked
     * the source for the end of the video it was reading: close it here,
     * the decode thread is joined. */
    vsrc_close(&c.vr);
    t_closed = ge_now();
    if (c.hist) {
        ge_why_clear();
        if (r == 0 && (hist_flush(&c) || so_commit(&c.hist)))
            r = -1;
        ge_err_pending(c.o->hist_file); /* the commit's (DESIGN.md §9) */
        so_abort(&c.hist);
        ge_err_pending(c.o->hist_file); /* a write error only the abort reports */
    }
    status = summary(&c, &rep, &chk, r);
end:
    run_free(&c, &sh, &st, &po);
    rep_free(&rep);
    if (ge_trace("pipe") && t_closed > 0)
        exit_trace(st.t_run, t_engine, t_closed);
    return status;
}
