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
 * Files: this one (bands, workers, scratch, the entry points and the
 * limited-memory sizing), cpu_rows.c (the row kernels), cpu_canny.c
 * (Canny's passes); cpu_internal.h holds what they share.
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
// Bands and workers

/* one row of e into the worker's four histogram copies (round robin, so
 * the runs of equal codes an edge map is made of don't chain) */
void cb_hist_row(cb_worker *wk, const uint8_t *e, int w)
{
    int x;

    for (x = 0; x + 4 <= w; x += 4) {
        wk->hist[0][e[x]]++;
        wk->hist[1][e[x + 1]]++;
        wk->hist[2][e[x + 2]]++;
        wk->hist[3][e[x + 3]]++;
    }
    for (; x < w; x++)
        wk->hist[0][e[x]]++;
}

/* row y (mapped) of the band's blurred rows, readable at [-1, w] */
const float *cb_brow(const cb_worker *wk, int y, int blo)
{
    const cb_job *j = wk->job;
    int m = cb_map(y, j->h, j->border);

    if (m < 0)
        return wk->zero + 1;
    return wk->brows + (size_t)(m - blo) * (j->w + 2) + 1;
}

/* Grey and horizontal blur of rows hlo..hhi, then the vertical blur of
 * rows blo..bhi into the band's scratch; the band's own rows [y0, y1) also
 * into the full planes that were asked for. */
void cb_blur_rows(cb_worker *wk, int y0, int y1, int hlo, int hhi,
                         int blo, int bhi)
{
    const cb_job *j = wk->job;
    const cb_kernels *k = j->k;
    const int w = j->w, h = j->h, r = j->r, bd = j->border;
    const int ntaps = 2 * r + 1;
    const size_t rowb = (size_t)w * sizeof(float);
    int y, i;

    for (y = hlo; y <= hhi; y++) {
        float *g = wk->pad + r;
        float *hr = wk->hrows + (size_t)(y - hlo) * w;
        int own = y >= y0 && y < y1;

        k->grey_row(j->f, y, g);
        if (own && j->grey_out)
            memcpy(j->grey_out + (size_t)y * w, g, rowb);
        if (r == 0) {
            memcpy(hr, g, rowb);
        } else {
            for (i = -r; i < 0; i++) {
                int m = cb_map(i, w, bd);
                g[i] = m < 0 ? 0.0f : g[m];
            }
            for (i = w; i < w + r; i++) {
                int m = cb_map(i, w, bd);
                g[i] = m < 0 ? 0.0f : g[m];
            }
            k->hblur(wk->pad, w, j->taps.w, ntaps, hr);
        }
        if (own && j->blur_h_out)
            memcpy(j->blur_h_out + (size_t)y * w, hr, rowb);
    }

    for (y = blo; y <= bhi; y++) {
        float *br = wk->brows + (size_t)(y - blo) * (w + 2) + 1;
        int ml, mr;

        if (r == 0) {
            memcpy(br, wk->hrows + (size_t)(y - hlo) * w, rowb);
        } else {
            for (i = 0; i < ntaps; i++) {
                int m = cb_map(y + i - r, h, bd);
                wk->rowp[i] = m < 0 ? wk->zero + 1
                                    : wk->hrows + (size_t)(m - hlo) * w;
            }
            k->vblur(wk->rowp, w, j->taps.w, ntaps, br);
        }
        ml = cb_map(-1, w, bd);
        mr = cb_map(w, w, bd);
        br[-1] = ml < 0 ? 0.0f : br[ml];
        br[w] = mr < 0 ? 0.0f : br[mr];
        if (y >= y0 && y < y1 && j->blur_out)
            memcpy(j->blur_out + (size_t)y * w, br, rowb);
    }
}

static void cb_band(cb_worker *wk, int band)
{
    const cb_job *j = wk->job;
    const int w = j->w, h = j->h, r = j->r, bd = j->border;
    const int y0 = band * j->band_rows;
    const int y1 = y0 + j->band_rows < h ? y0 + j->band_rows : h;
    int blo, bhi, hlo, hhi, y;

    /* Sobel reads blurred rows y0-1..y1, the vertical blur of those reads
     * horizontal rows r further out; both through the border mapping.  Row
     * y0 itself is always among them, so neither range is empty. */
    map_range(y0 - 1, y1, h, bd, &blo, &bhi);
    map_range(blo - r, bhi + r, h, bd, &hlo, &hhi);
    cb_blur_rows(wk, y0, y1, hlo, hhi, blo, bhi);

    for (y = y0; y < y1; y++) {
        uint8_t *e = j->edge + (size_t)y * w;

        j->k->sobel(cb_brow(wk, y - 1, blo), cb_brow(wk, y, blo),
                    cb_brow(wk, y + 1, blo), w, j->p, e);
        cb_hist_row(wk, e, w);
    }
}


static void *cb_worker_main(void *arg)
{
    cb_worker *wk = arg;
    cb_job *j = wk->job;

    for (;;) {
        int b;
        if (j->stop && *j->stop)
            break;
        b = atomic_fetch_add(&j->next_band, 1);
        if (b >= j->nbands)
            break;
        if (j->phase == CB_PH_SOBEL)
            cb_band(wk, b);
        else
            j->canny_band(wk, b); /* cpu_canny.c's passes */
        wk->bands_done++;
    }
    return NULL;
}

/* One pass over every band with nthreads workers (the calling thread is
 * worker 0; a thread that cannot be created leaves its bands to the
 * others).  Returns 0, or GE_STOPPED when stopped before every band was done. */
int cb_run_phase(cb_job *j, cb_worker *wk, int nthreads, int phase)
{
    int started = 0, done = 0, i;

    j->phase = phase;
    atomic_store(&j->next_band, 0);
    for (i = 0; i < nthreads; i++)
        wk[i].bands_done = 0;
    for (i = 1; i < nthreads; i++) {
        if (pthread_create(&wk[i].tid, NULL, cb_worker_main, &wk[i]) != 0)
            break;
        started = i;
    }
    cb_worker_main(&wk[0]);
    for (i = 1; i <= started; i++)
        pthread_join(wk[i].tid, NULL);
    for (i = 0; i < nthreads; i++)
        done += wk[i].bands_done;
    return done < j->nbands ? GE_STOPPED : 0; /* only a stop leaves bands undone */
}

/* the workers' histograms, summed into hist and cleared */
void cb_take_hist(cb_worker *wk, int nthreads, uint64_t *hist)
{
    int i, b;

    memset(hist, 0, GE_HIST_BINS * sizeof *hist);
    for (i = 0; i < nthreads; i++) {
        for (b = 0; b < GE_HIST_BINS; b++)
            hist[b] += wk[i].hist[0][b] + wk[i].hist[1][b] +
                       wk[i].hist[2][b] + wk[i].hist[3][b];
        memset(wk[i].hist, 0, sizeof wk[i].hist);
    }
}

// ---------------------------------------------------------------------------
// Scratch and the entry points

/* Hysteresis stack entries a worker gets: enough that pending passes are
 * rare (a fill's stack holds its front, not its area), fewer under
 * --mem-limit, never fewer than CB_STACK_MIN. */
#define CB_STACK_MAX ((size_t)1 << 16)
#define CB_STACK_MIN ((size_t)256)

/* Rows of horizontal blur (nh) and of blur (nb) a band of band_rows rows
 * holds: its rows plus the halos map_range gives (one more each side for
 * Canny's NMS), never more than the image has. */
static size_t cb_rows_nh(int height, int r, int band_rows, int canny)
{
    size_t nh = (size_t)band_rows + 2 + 2 * (size_t)canny + 2 * (size_t)r;
    return nh > (size_t)height ? (size_t)height : nh;
}

static size_t cb_rows_nb(int height, int band_rows, int canny)
{
    size_t nb = (size_t)band_rows + 2 + 2 * (size_t)canny;
    return nb > (size_t)height ? (size_t)height : nb;
}

/* Floats of scratch one worker needs: pad + hrows + brows + zero, and for
 * Canny three t rows (w + 2) and three sector-code rows (w bytes, counted
 * in floats); SIZE_MAX on overflow. */
static size_t cb_scratch_floats(int width, int height, int r, int band_rows,
                                int canny)
{
    const size_t w = (size_t)width;
    const size_t nh = cb_rows_nh(height, r, band_rows, canny);
    const size_t nb = cb_rows_nb(height, band_rows, canny);

    if (nh > SIZE_MAX / sizeof(float) / 8 / w ||
        nb > SIZE_MAX / sizeof(float) / 8 / (w + 2))
        return SIZE_MAX;
    return (w + 2 * (size_t)r) + nh * w + nb * (w + 2) + (w + 2) +
           (canny ? 3 * (w + 2) + (3 * w + 3) / 4 : 0);
}

/* all of one worker's bytes: scratch floats and the stack */
size_t cb_worker_bytes(const cb_job *j)
{
    size_t n = cb_scratch_floats(j->w, j->h, j->r, j->band_rows, j->canny);
    if (n == SIZE_MAX)
        return SIZE_MAX;
    return n * sizeof(float) + (j->canny ? j->stack_cap * sizeof(size_t) : 0);
}

size_t cpu_scratch_bytes(int width, int height, double sigma, int band_rows)
{
    ge_taps t;
    size_t n;
    if (width < 1 || height < 1 || band_rows < 1 || ge_taps_make(sigma, &t) < 0)
        return SIZE_MAX;
    n = cb_scratch_floats(width, height, t.radius, band_rows, 0);
    return n == SIZE_MAX ? SIZE_MAX : n * sizeof(float);
}

/* scratch for one worker; sizes from the band geometry */
static int cb_worker_init(cb_worker *wk, cb_job *j)
{
    const size_t w = (size_t)j->w;
    const size_t total = cb_scratch_floats(j->w, j->h, j->r, j->band_rows, j->canny);
    int i;

    memset(wk, 0, sizeof *wk);
    wk->job = j;
    if (total == SIZE_MAX)
        return -1;
    wk->mem = malloc(total * sizeof(float));
    if (!wk->mem)
        return -1;
    wk->pad = wk->mem;
    wk->hrows = wk->pad + w + 2 * (size_t)j->r;
    wk->brows = wk->hrows + cb_rows_nh(j->h, j->r, j->band_rows, j->canny) * w;
    wk->zero = wk->brows + cb_rows_nb(j->h, j->band_rows, j->canny) * (w + 2);
    memset(wk->zero, 0, (w + 2) * sizeof(float));
    if (j->canny) {
        uint8_t *d = (uint8_t *)(wk->zero + (w + 2) + 3 * (w + 2));
        for (i = 0; i < 3; i++) {
            wk->trow[i] = wk->zero + (w + 2) * (size_t)(i + 1);
            wk->trow[i][0] = wk->trow[i][w + 1] = 0.0f; /* outside: t = 0 */
            wk->dirrow[i] = d + (size_t)i * w;
        }
        wk->stack = malloc(j->stack_cap * sizeof *wk->stack);
        if (!wk->stack)
            return -1;
    }
    return 0;
}

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

