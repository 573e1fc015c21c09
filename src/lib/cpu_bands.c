/*
 * cpu_bands.c — the CPU backend's bands and workers (the design is in
 * cpu_backend.c's opening comment): a band's grey, blur and Sobel rows in
 * its worker's scratch, the passes over every band on the worker threads,
 * the histograms, and the workers' scratch and its size.  cpu_backend.c
 * (the entry points) and cpu_canny.c (Canny's passes) call it; it calls
 * only the row kernels (cpu_rows.c), and Canny's bands through
 * cb_job.canny_band.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_internal.h"
#include "util.h"

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
// The workers' scratch

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
int cb_worker_init(cb_worker *wk, cb_job *j)
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
