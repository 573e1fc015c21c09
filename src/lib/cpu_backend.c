/*
 * cpu_backend.c — DESIGN.md §1 on the CPU, bit for bit the reference's result,
 * written for speed.
 *
 * Work split: the image is cut into bands of rows; worker threads (the
 * calling thread is one of them) take bands from a shared counter.  A band
 * is fused: it computes grey + horizontal blur for every row its vertical
 * blur needs (its own rows plus r+1 halo rows each side, recomputed rather
 * than shared, so bands never wait for each other), then the vertical blur
 * of its rows plus one halo row each side, then Sobel + quantisation +
 * histogram of its own rows.  All of that lives in band-local scratch, so a
 * band's planes stay in cache; full planes are written only when asked for.
 *
 * Borders: rows are never padded in memory.  Each grey row is written into
 * a buffer with r extra slots each side that hold the border-mapped values
 * (or 0 for the zero border), so the horizontal pass has no border case at
 * all; the vertical pass and Sobel take row pointers chosen through the
 * same mapping (a row of zeros for the zero border), and blurred rows carry
 * one mapped value each side for Sobel.  So every tap sees exactly the value
 * DESIGN.md §1.5 gives it, for any radius and any size.
 *
 * Arithmetic: each output is computed with the same operations in the same
 * order as the reference (DESIGN.md §1), one value per SIMD lane; vectorising
 * changes which lane does the work, never the rounding.  fmaf is a single
 * rounding on every path (libm call, scalar vfmadd or packed vfmadd), and
 * -ffp-contract=off keeps the compiler from adding any.  On x86-64 with
 * AVX2+FMA the hot loops use intrinsics (chosen at run time); elsewhere, or
 * with cpu_hook_no_simd set (a test hook that exercises the portable path),
 * plain C.
 *
 * Files: this one (the entry points and the limited-memory sizing),
 * cpu_canny.c (Canny's passes), cpu_bands.c (bands, workers, scratch),
 * cpu_rows.c (the row kernels), each calling only those after it;
 * cpu_internal.h holds what they share.
 */
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpu_internal.h"
#include "util.h"

/* Rows per band at least; grown with the radius so that the recomputed
 * halo (2r+2 rows of grey + horizontal blur) stays a small fraction. */
#define CPU_BAND_ROWS 64
#define CPU_BAND_HALO_FACTOR 8
/* more threads than this is certainly a mistake */
#define CPU_MAX_THREADS 1024

// ---------------------------------------------------------------------------
// The entry points

/* Hysteresis stack entries a worker gets: enough that pending passes are
 * rare (a fill's stack holds its front, not its area), fewer under
 * --mem-limit, never fewer than CB_STACK_MIN. */
#define CB_STACK_MAX ((size_t)1 << 16)
#define CB_STACK_MIN ((size_t)256)

int cpu_process(const ge_frame *f, const ge_params *p, int threads,
                ge_planes *planes, volatile const int *stop)
{
    return cpu_process_limited(f, p, threads, 0, planes, stop);
}


int cpu_process_limited(const ge_frame *f, const ge_params *p, int threads,
                        size_t mem_limit, ge_planes *planes,
                        volatile const int *stop)
{
    cb_job job;
    cb_worker *wk = NULL;
    int nthreads, i, ret = -1;

    if (!f || !p || !planes || !planes->edge || !f->data)
        return -1;
    if (f->width < 1 || f->height < 1 || f->channels < 1 || f->channels > 4 ||
        (f->bytes_per_sample != 1 && f->bytes_per_sample != 2) ||
        f->width > INT_MAX - 2 * GE_MAX_RADIUS - 2)
        return -1;
    /* a row must hold its samples; a shift past the sample is meaningless */
    if (f->stride / f->bytes_per_sample / f->channels < (size_t)f->width ||
        f->shift < 0 || f->shift >= 8 * f->bytes_per_sample ||
        p->border < GE_BORDER_REPLICATE || p->border > GE_BORDER_ZERO)
        return -1;
    if (p->canny < GE_CANNY_OFF || p->canny > GE_CANNY_AUTO ||
        (p->canny == GE_CANNY_ON && !(p->canny_low >= 0 && p->canny_low <= p->canny_high)))
        return -1;

    memset(&job, 0, sizeof job);
    if (ge_taps_make(p->sigma, &job.taps) < 0)
        return -1;
    job.f = f;
    job.p = p;
    job.k = cb_pick_kernels();
    job.w = f->width;
    job.h = f->height;
    job.r = job.taps.radius;
    job.border = p->border;
    job.canny = p->canny != GE_CANNY_OFF;
    job.stack_cap = CB_STACK_MAX;
    job.mem_limit = mem_limit;
    if (cpu_hook_canny_stack > 0 && cpu_hook_canny_stack < job.stack_cap)
        job.stack_cap = cpu_hook_canny_stack;
    job.band_rows = CPU_BAND_HALO_FACTOR * (job.r + 1);
    if (job.band_rows < CPU_BAND_ROWS)
        job.band_rows = CPU_BAND_ROWS;
    job.nbands = (job.h + job.band_rows - 1) / job.band_rows;
    job.grey_out = planes->grey;
    job.blur_h_out = planes->blur_h;
    job.blur_out = planes->blur;
    job.edge = planes->edge;
    job.stop = stop;
    atomic_init(&job.next_band, 0);
    atomic_init(&job.pending, 0);

    nthreads = threads;
    if (nthreads <= 0) {
        long n = ge_cpu_count();
        nthreads = n > 0 ? (int)(n < CPU_MAX_THREADS ? n : CPU_MAX_THREADS) : 1;
    }
    if (nthreads > CPU_MAX_THREADS)
        nthreads = CPU_MAX_THREADS;
    if (nthreads > job.nbands)
        nthreads = job.nbands;
    if (mem_limit > 0) {
        /* --mem-limit: every worker's scratch together within the budget.
         * Shorter bands first (down to 16 rows), then smaller hysteresis
         * stacks, then fewer threads, then bands down to one row; the
         * result does not depend on any of them. */
        size_t per;
        for (;;) {
            per = cb_worker_bytes(&job);
            if (per != SIZE_MAX && per <= mem_limit / (size_t)nthreads)
                break;
            if (job.band_rows > 16)
                job.band_rows = job.band_rows / 2 > 16 ? job.band_rows / 2 : 16;
            else if (job.canny && job.stack_cap > CB_STACK_MIN)
                job.stack_cap = job.stack_cap / 4 > CB_STACK_MIN ? job.stack_cap / 4
                                                                 : CB_STACK_MIN;
            else if (nthreads > 1)
                nthreads--;
            else if (job.band_rows > 1)
                job.band_rows /= 2;
            else
                return GE_OVER_BUDGET;
        }
        job.nbands = (job.h + job.band_rows - 1) / job.band_rows;
        if (nthreads > job.nbands)
            nthreads = job.nbands;
    }

    wk = calloc((size_t)nthreads, sizeof *wk);
    if (!wk)
        return -1;
    for (i = 0; i < nthreads; i++) {
        if (cb_worker_init(&wk[i], &job) < 0)
            goto end;
    }

    if (job.canny) {
        ret = cb_canny(&job, wk, nthreads, planes);
    } else if ((ret = cb_run_phase(&job, wk, nthreads, CB_PH_SOBEL)) == 0) {
        cb_take_hist(wk, nthreads, planes->hist);
    }
end:
    for (i = 0; i < nthreads; i++) {
        free(wk[i].mem);
        free(wk[i].stack);
    }
    free(wk);
    return ret;
}

