/*
 * cpu_internal.h — the CPU backend's parts (cpu_backend.c: the entry
 * points; cpu_canny.c: Canny's passes; cpu_bands.c: bands, workers,
 * scratch; cpu_rows.c: the row kernels; each calls only those after it)
 * and what they share; not for other callers.
 */
#ifndef GPUEDGE_CPU_INTERNAL_H
#define GPUEDGE_CPU_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "border.h"
#include "cpu_backend.h"
#include "edge.h"

// Borders (DESIGN.md §1.5)

/* cb_map: i mapped into [0, n-1], or -1 where the value is 0 (zero
 * border) — the rule the kernels use too (kernels/border.h). */
#define cb_map map_border


/* What the edge plane holds while a Canny frame is in flight: the NMS
 * classes, then the hysteresis states; only the final pass writes 0/255. */
enum { CB_NONE = 0, CB_WEAK = 1, CB_STRONG = 2, CB_JOINED = 3, CB_PENDING = 4 };

/* The row kernels one frame runs: portable C or AVX2+FMA (cpu_rows.c),
 * the same bits either way. */
typedef struct cb_kernels {
    void (*grey_row)(const ge_frame *f, int y, float *g);
    void (*hblur)(const float *pad, int w, const float *wt, int ntaps,
                  float *out);
    void (*vblur)(const float *const *rows, int w, const float *wt,
                  int ntaps, float *out);
    void (*sobel)(const float *a, const float *b, const float *c, int w,
                  const ge_params *p, uint8_t *e);
    void (*grad)(const float *a, const float *b, const float *c, int w,
                 float scale, float *t, uint8_t *dir);
    void (*nms)(const float *tp, const float *tc, const float *tn,
                const uint8_t *dir, int w, float low, float high,
                uint8_t *cls);
    size_t (*final)(uint8_t *e, size_t n, uint8_t inv);
} cb_kernels;

/* AVX2+FMA where the CPU has them (and cpu_hook_no_simd is 0), else the
 * portable kernels. */
const cb_kernels *cb_pick_kernels(void);

struct cb_worker;

typedef struct cb_job {
    const ge_frame *f;
    const ge_params *p;
    const cb_kernels *k;
    ge_taps taps;
    int w, h, r, border;
    int band_rows, nbands;
    float *grey_out, *blur_h_out, *blur_out; /* full planes or NULL */
    uint8_t *edge;
    volatile const int *stop;
    atomic_int next_band;
    int phase;            /* enum cb_phase: what a band means now */
    /* a band of any pass but CB_PH_SOBEL (cpu_canny.c's, set by cb_canny) */
    void (*canny_band)(struct cb_worker *wk, int band);
    int canny;            /* scratch laid out for Canny bands */
    float low, high;      /* Canny thresholds of this frame */
    size_t stack_cap;     /* hysteresis stack entries per worker */
    size_t mem_limit;     /* --mem-limit (0 none): may auto keep a t plane? */
    float *tplane;        /* auto: t of the frame, rows of w + 2 (0 at the
                             ends), or NULL */
    ge_params q;          /* auto: step 6's parameters (no threshold, no
                             invert) for the histogram the thresholds use */
    atomic_int pending;   /* a fill left CB_PENDING pixels behind */
} cb_job;

/* The passes over the bands.  Sobel frames take one; Canny frames four
 * (auto adds the Sobel pass first, for the histogram its thresholds come
 * from), each finished by every worker before the next starts. */
enum cb_phase {
    CB_PH_SOBEL,    /* DESIGN.md §1.1-1.7 */
    CB_PH_NMS,      /* grey .. blur, then t, NMS, classes into the edge plane */
    CB_PH_HYST,     /* flood fills from the strong pixels of each band */
    CB_PH_PENDING,  /* the same from pixels a full stack left pending */
    CB_PH_FINAL,    /* 0/255, --invert, histogram */
    CB_PH_GRAD,     /* auto: grey .. t into the t plane, sector codes into
                       the edge plane, histogram of step 6's e */
    CB_PH_NMS_PLANE /* auto: NMS from the t plane, classes in place */
};

typedef struct cb_worker {
    cb_job *job;
    float *mem;   /* the block below */
    float *pad;   /* grey row with r mapped values each side: w + 2r */
    float *hrows; /* horizontal blur of rows hlo..hhi: nh_max * w */
    float *brows; /* blur of rows blo..bhi, 1 mapped value each side */
    float *zero;  /* w + 2 zeros: the rows outside, zero border */
    float *trow[3];     /* Canny: t of three rows, 0 at [-1] and [w] */
    uint8_t *dirrow[3]; /* Canny: their sector codes */
    size_t *stack;      /* Canny: hysteresis stack, stack_cap entries */
    const float *rowp[GE_MAX_TAPS];
    uint64_t hist[4][GE_HIST_BINS]; /* 4 copies: no store-forward chains */
    int bands_done;
    pthread_t tid;
} cb_worker;


/* cpu_bands.c: bands, workers and their scratch (cpu_backend.c and
 * cpu_canny.c call them) */
void cb_hist_row(cb_worker *wk, const uint8_t *e, int w);
const float *cb_brow(const cb_worker *wk, int y, int blo);
void cb_blur_rows(cb_worker *wk, int y0, int y1, int hlo, int hhi, int blo, int bhi);
int cb_run_phase(cb_job *j, cb_worker *wk, int nthreads, int phase);
void cb_take_hist(cb_worker *wk, int nthreads, uint64_t *hist);
size_t cb_worker_bytes(const cb_job *j);
/* Scratch for one worker, sized from the job's band geometry: 0, or -1
 * (out of memory; what was allocated is freed by the caller). */
int cb_worker_init(cb_worker *wk, cb_job *j);

/* cpu_canny.c: a whole Canny frame (its passes' bands reach the workers
 * through cb_job.canny_band) */
int cb_canny(cb_job *j, cb_worker *wk, int nthreads, ge_planes *planes);

#endif
