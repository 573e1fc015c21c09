/*
 * run_int.h — what the files of one run share (private to src/cli).
 *
 * run.c's run_main is the outline: the job list (jobs.c), the start-up and
 * backend choice (startup.c), the engines (engines.c) that pull frames from
 * the sources (src_media.c, src_image.c) and push edge maps to the sinks
 * (sinks.c), then the summary.  One run_ctx per engine, a copy of the
 * run's with its own source and sink state; one run_shared for them all.
 */
#ifndef GPUEDGE_RUN_INT_H
#define GPUEDGE_RUN_INT_H

#include <pthread.h>

#include <libavutil/rational.h>

#include "cli.h"
#include "gpu.h"
#include "image_io.h"
#include "jobq.h"
#include "nvjpeg.h"
#include "pipeline.h"
#include "refcheck.h"
#include "report.h"
#include "safeout.h"
#include "signals.h"
#include "video_io.h"
#include "vsource.h"
#include "workpool.h"

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
    long expect;       /* frames the container says the run gets, 0 unknown */
    int total_exact;   /* ... counted by the container (else from its duration) */
    /* damaged video (source thread, before its later frames, as
     * src_failed): what was lost, for the notice and the batch line */
    int damaged;
    char damage[112];
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

/* What the engines of one run share. */
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
    int sw_lanes;         /* the last sw_lanes of them decode videos in
                             software (beside NVDEC's: vplan.h) */
    int sw_threads;       /* threads of each of those */
    int sorted;           /* the queue is larger first (not the input order) */
    int chain;            /* engines chain files on one decoder */
    /* atomic: files the engines chained onto the next (--report's
     * "videos chained"), and ended without (where offered); NVDEC
     * engines that ended (sw_lane_go) */
    int chained, unchained, nvdec_done;
    int hist_buffered;    /* --hist rows kept per file (hist_out) */
    int engine_failed;    /* one of several engines failed (exit 1) */
    int fail_lane, fail_nth; /* the failing-engine test hook (hooks.c); -1 none */
    uint32_t hfyu[256];   /* the FFVHuff codes the GPU codes .mkv frames with */
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
    int chain_job;       /* the job its video's reader took to chain onto
                            (chain_next), -1 none */
    int chain_back;      /* one taken so but not chained: served next */
    int vr_offered;      /* the open video was offered chain_next */
    long lane_files;     /* files it took */
    int dead;            /* its engine failed (several engines) */
    int fail_job;        /* the failing-engine test hook's job, -1 none */
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
    int progress;        /* PROG_* (progress.c) */
    double last_progress, job_t0;
    /* images are decoded ahead and encoded behind by pools of threads
     * (stb works on one image per thread) */
    workpool *dec_pool, *enc_pool;
    struct prefetch *pf;  /* one per job; only image jobs are used */
    rep_stats *rep;
    int use_gpu;        /* the GPU engine runs (NVDEC frames allowed) */
    int hwdec;          /* its videos' decoder (CLI_HWDEC_*): --hwdec, or none
                           for an engine that decodes in software beside
                           those on NVDEC */
    long long dec_nvdec, dec_sw; /* video frames NVDEC and software decoded */
    int threads;        /* its decoders' and encoders' threads (0: every
                           core; several engines: their share) */
    size_t mem_budget;  /* host bytes its video's segments may decode ahead
                           (0: one engine, vsource's default; several
                           engines: their share, vsrc_host_budget) */
    /* --jpeg-decoder=nvjpeg: JPEG jobs are decoded in batches on the GPU
     * (decode thread) and handed to the engine as device frames */
    nvj_dec *nvj;
    struct nvj_slot *nvs; /* one per job; only nvj jobs are used */
    int nvj_dev_set;      /* the decode thread made the device current */
    long nvj_hw, nvj_hybrid, nvj_cpu; /* who decoded the JPEGs (decode thread) */
    /* start-up: an encoder opened before the first frame (early_open) for
     * early_w x early_h */
    int early_w, early_h;
    /* several engines: this one's options and figures */
    pipe_opts po;
    rep_stats lrep;
    chk_stats lchk;
    int lane_r;          /* what its pipe_run returned */
    double busy_s;
} run_ctx;

/* What the start-up decided, for the engines and the summary. */
typedef struct run_start {
    double t_run;         /* the run's start (ge_now) */
    double t_cuda;        /* CUDA ready, 0 not used */
    int probe_gpu;        /* the GPU was (or is being) probed */
    int use_gpu;          /* the GPU engine runs */
    gpu_probe_job *probe; /* the probe's thread, while it runs */
    gpu_info gi;
} run_start;

/* jobs.c: the job list and the output names; an engine's claims on
 * jobs it takes ahead (src_image.c's nvJPEG groups, startup.c's
 * early_open), which src_media.c serves first. */
int plan_jobs(run_ctx *c);
const char *job_name_cb(void *ctx, int j);
int code_job_cb(void *ctx, int j);
int png_job_cb(void *ctx, int j);
int job_mix_decoders(const run_ctx *c, int j);
void jobs_free(run_ctx *c);
void lane_claim(run_ctx *c, int ji);

/* src_image.c: images, decoded ahead by a pool, or by nvJPEG in groups. */
#define NVJ_GROUP 16 /* JPEGs in one nvJPEG group (decoded as one batch) */
int src_image_setup(run_ctx *c);
void src_image_start_pools(run_ctx *c);
int src_image_open_nvj(run_ctx *c);
void prefetch_more(run_ctx *c);
int image_job_frame(run_ctx *c, int ji, src_frame *fr);
int nvj_job_frame(run_ctx *c, int ji, src_frame *fr);
void nvj_slot_drop(run_ctx *c, int ji);
int any_nvj_job(const run_ctx *c);
void src_image_free(run_ctx *c);

/* src_media.c: the frame source every engine's decode thread calls. */
int media_next(void *ctx, src_frame *fr, host_buf *buf);
vid_opts video_opts(const cli_opts *o, int hwdec, int device);
void video_opened(run_ctx *c, int ji);

/* sinks.c: the frame sink (writer thread), --hist, the report. */
int media_put(void *ctx, const sink_frame *fr, double *write_ms);
int media_finish(void *ctx, int abandon);
void close_output(run_ctx *c, int abandon);
void enc_opts(const run_ctx *c, venc_opts *vo);
int open_hist(run_ctx *c);
int hist_flush(run_ctx *c);
int write_report(run_ctx *c, const rep_stats *r);

/* progress.c: the progress line (the writer thread of the first engine). */
enum { PROG_OFF, PROG_TTY, PROG_PLAIN };
void prog_init(run_ctx *c);
void prog_draw(run_ctx *c, const job *j, long frames, int done);
void prog_end(run_ctx *c);

/* startup.c: the backend, CUDA's start-up overlapped with opening the
 * first input, the devices. */
int startup_checks(const cli_opts *o);
void startup_begin(run_ctx *c, run_start *st);
int startup_backend(run_ctx *c, run_start *st, rep_stats *rep);
void early_abandon(run_ctx *c);
void startup_end(run_start *st);

/* engines.c: the queue, the engines' threads, their figures. */
int jq_setup(run_ctx *c);
int run_engines(run_ctx *c, pipe_opts *po, rep_stats *rep, chk_stats *chk, double *t0, int *r);

/* hooks.c: test hooks, read only in test builds (GE_TEST_HOOKS). */
int hook_cpu_engines(void);
void hook_fail_engine(run_shared *sh);
void hook_hold_write(void);

#endif
