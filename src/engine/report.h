/*
 * report.h — per-stage timing (DESIGN.md §5) and the --cpu-ref tallies.
 */
#ifndef GPUEDGE_REPORT_H
#define GPUEDGE_REPORT_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

enum rep_stage {
    REP_DECODE, REP_UPLOAD, REP_GREY, REP_BLUR_H, REP_BLUR_V, REP_SOBEL,
    REP_HIST, REP_DOWNLOAD, REP_WRITE, REP_COMPUTE, REP_CHECK,
    REP_NMS, REP_HYST, /* --canny on the GPU: NMS (+ tile labels), hysteresis */
    REP_NSTAGES
};

typedef struct rep_stats {
    double *ms[REP_NSTAGES];
    size_t n[REP_NSTAGES], cap[REP_NSTAGES];
    long long frames, pixels;
    double wall_s;
    /* start-up: seconds from the run's start (run_main) to CUDA
     * ready, the engine started, the first frame decoded (handed to the
     * engine) and the first written; < 0 = not measured (no CUDA: "n/a").
     * Printed when startup_engine_s >= 0. */
    double startup_cuda_s, startup_engine_s, startup_decoded_s, startup_written_s;
    const char *backend;   /* "gpu" / "cpu" */
    const char *path;      /* "staged" / "fused" / "cpu" */
    char device[256];
    pthread_mutex_t mu; /* rep_add is called from several threads */
    /* per file of a batch: frames and seconds from its decoding's start
     * to its output's commit (files overlap in the pipeline), and whether
     * it was a damaged video (its frames decoded stand) */
    struct rep_file { char *name; long frames; double seconds; int damaged; } *files;
    size_t nfiles, capfiles;
    long damaged_files; /* damaged videos written, batch or not */
    /* video frames decoded on NVDEC and in software (printed when any) */
    long long video_nvdec, video_sw;
    /* videos decoded on by the decoder of the file before (DESIGN.md §4) */
    long video_chained;
    /* per engine (--devices): the files it took, the frames it
     * computed and the seconds its engine ran; none with one engine */
    struct rep_engine { char name[64]; long files; long long frames; double busy_s; } *engines;
    size_t nengines;
} rep_stats;

void rep_init(rep_stats *r);
void rep_free(rep_stats *r);
/* Thread-safe. */
void rep_add(rep_stats *r, int stage, double ms);
/* Adds a file's line (batches); name is copied. */
void rep_add_file(rep_stats *r, const char *name, long frames, double seconds, int damaged);
/* Adds an engine's line (several engines). */
void rep_add_engine(rep_stats *r, const char *name, long files, long long frames, double busy_s);
/* Adds src's stage samples, frames and pixels to dst (an engine's own
 * figures into the run's); path: src's when dst has none or src's names
 * strips. */
void rep_merge(rep_stats *dst, const rep_stats *src);
/* Writes the report (text or JSON, C locale numbers) to fp. */
void rep_print(const rep_stats *r, int json, FILE *fp);

/* --cpu-ref: stage-by-stage tallies. */
enum ref_stage { CHK_GREY, CHK_BLUR_H, CHK_BLUR, CHK_EDGE, CHK_HIST, CHK_NSTAGES };
typedef struct chk_stats {
    long long frames, bad_frames;
    long long checked[CHK_NSTAGES];    /* frames where the stage was checked */
    long long mismatches[CHK_NSTAGES]; /* elements */
    double maxdiff[CHK_NSTAGES];
    char decoded_by[96];  /* image decoders that made the pixels, "" if none */
} chk_stats;

#endif
