/*
 * cpu_canny.c — Canny on the CPU backend (DESIGN.md §1.8): NMS over row
 * bands (from recomputed rows, or from a t plane kept by --canny auto's
 * first pass), hysteresis as flood fills from each band's strong pixels
 * with pending passes when a worker's stack fills, then the 0/255 pass.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpu_internal.h"
#include "util.h"

size_t cpu_hook_canny_stack;

/* NMS needs t of the rows above and below its own, so a band computes t
 * for rows y0-1..y1 (the image's rows only: outside, t is 0) from blurred
 * rows y0-2..y1+1, keeping three rows of t in a ring.  The classes go into
 * the edge plane; nothing whole-frame is allocated. */
static void cb_band_nms(cb_worker *wk, int band)
{
    const cb_job *j = wk->job;
    const int w = j->w, h = j->h, r = j->r, bd = j->border;
    const int y0 = band * j->band_rows;
    const int y1 = y0 + j->band_rows < h ? y0 + j->band_rows : h;
    const float *tp[3];
    int blo, bhi, hlo, hhi, y;

    map_range(y0 - 2, y1 + 1, h, bd, &blo, &bhi);
    map_range(blo - r, bhi + r, h, bd, &hlo, &hhi);
    cb_blur_rows(wk, y0, y1, hlo, hhi, blo, bhi);

    for (y = y0 - 1; y <= y1; y++) {
        const int s = (y - y0 + 1) % 3;

        if (y < 0 || y >= h) {
            tp[s] = wk->zero + 1;
        } else {
            j->k->grad(cb_brow(wk, y - 1, blo), cb_brow(wk, y, blo),
                       cb_brow(wk, y + 1, blo), w, j->p->scale,
                       wk->trow[s] + 1, wk->dirrow[s]);
            tp[s] = wk->trow[s] + 1;
        }
        if (y > y0) {
            /* row y-1 has both neighbours now */
            const int c = (y - y0) % 3;
            j->k->nms(tp[(y - y0 + 2) % 3], tp[c], tp[s], wk->dirrow[c], w,
                      j->low, j->high, j->edge + (size_t)(y - 1) * w);
        }
    }
}

/* --canny auto with a t plane (cb_canny): the thresholds depend on the
 * whole frame's histogram, so the first pass keeps t for the second
 * instead of the second recomputing grey .. Sobel. */
static float *cb_trow(const cb_worker *wk, int y)
{
    const cb_job *j = wk->job;

    if (y < 0 || y >= j->h)
        return wk->zero + 1;
    return j->tplane + (size_t)y * (j->w + 2) + 1;
}

static void cb_band_grad(cb_worker *wk, int band)
{
    const cb_job *j = wk->job;
    const int w = j->w, h = j->h, r = j->r, bd = j->border;
    const int y0 = band * j->band_rows;
    const int y1 = y0 + j->band_rows < h ? y0 + j->band_rows : h;
    uint8_t *e = wk->dirrow[0]; /* the t ring is idle in this pass */
    int blo, bhi, hlo, hhi, y;

    map_range(y0 - 1, y1, h, bd, &blo, &bhi);
    map_range(blo - r, bhi + r, h, bd, &hlo, &hhi);
    cb_blur_rows(wk, y0, y1, hlo, hhi, blo, bhi);
    for (y = y0; y < y1; y++) {
        const float *a = cb_brow(wk, y - 1, blo), *b = cb_brow(wk, y, blo);
        const float *c = cb_brow(wk, y + 1, blo);
        float *t = cb_trow(wk, y);

        t[-1] = t[w] = 0.0f;
        j->k->grad(a, b, c, w, j->p->scale, t, j->edge + (size_t)y * w);
        j->k->sobel(a, b, c, w, &j->q, e);
        cb_hist_row(wk, e, w);
    }
}

static void cb_band_nms_plane(cb_worker *wk, int band)
{
    const cb_job *j = wk->job;
    const int w = j->w;
    const int y0 = band * j->band_rows;
    const int y1 = y0 + j->band_rows < j->h ? y0 + j->band_rows : j->h;

    /* each row's sector codes are read before its classes overwrite them */
    for (int y = y0; y < y1; y++)
        j->k->nms(cb_trow(wk, y - 1), cb_trow(wk, y), cb_trow(wk, y + 1),
                  j->edge + (size_t)y * w, w, j->low, j->high,
                  j->edge + (size_t)y * w);
}

/* Hysteresis over the whole frame, on the edge plane in place: every
 * worker starts fills from the seeds of its bands, and a fill crosses
 * bands freely.  A pixel is claimed by one compare-and-swap (weak, strong
 * or pending -> joined) and only its claimer pushes it, so each joined
 * pixel is expanded exactly once whichever thread gets there first: the
 * final set is the 8-connected closure of the strong pixels, the same for
 * any thread count or timing.  When a stack is full the pixel is claimed
 * as pending instead, and a later pass starts fills from those: bounded
 * memory for any image. */
static inline int cb_claim(uint8_t *e, uint8_t want, uint8_t to)
{
    return __atomic_compare_exchange_n(e, &want, to, 0, __ATOMIC_RELAXED,
                                       __ATOMIC_RELAXED);
}

static void cb_fill(cb_worker *wk, size_t start)
{
    cb_job *j = wk->job;
    uint8_t *e = j->edge;
    const size_t w = (size_t)j->w, h = (size_t)j->h, cap = j->stack_cap;
    size_t *st = wk->stack, top = 0;

    st[top++] = start;
    while (top > 0) {
        const size_t i = st[--top], y = i / w, x = i - y * w;
        const size_t ya = y > 0 ? y - 1 : y, yb = y + 1 < h ? y + 1 : y;
        const size_t xa = x > 0 ? x - 1 : x, xb = x + 1 < w ? x + 1 : x;
        size_t yy, xx;

        for (yy = ya; yy <= yb; yy++) {
            for (xx = xa; xx <= xb; xx++) {
                const size_t k = yy * w + xx;
                uint8_t v = __atomic_load_n(&e[k], __ATOMIC_RELAXED);

                if (v != CB_WEAK && v != CB_STRONG && v != CB_PENDING)
                    continue;
                if (top < cap) {
                    if (cb_claim(&e[k], v, CB_JOINED))
                        st[top++] = k;
                } else if (v != CB_PENDING && cb_claim(&e[k], v, CB_PENDING)) {
                    atomic_store_explicit(&j->pending, 1, memory_order_relaxed);
                }
            }
        }
    }
}

static void cb_band_hyst(cb_worker *wk, int band, uint8_t seed)
{
    cb_job *j = wk->job;
    const size_t w = (size_t)j->w;
    const int y0 = band * j->band_rows;
    const int y1 = y0 + j->band_rows < j->h ? y0 + j->band_rows : j->h;
    uint8_t *e = j->edge;
    size_t i, end = (size_t)y1 * w;

    for (i = (size_t)y0 * w; i < end; i++)
        if (__atomic_load_n(&e[i], __ATOMIC_RELAXED) == seed &&
            cb_claim(&e[i], seed, CB_JOINED))
            cb_fill(wk, i);
}

/* joined -> 255, everything else -> 0, then --invert; the histogram has
 * two bins */
static void cb_band_final(cb_worker *wk, int band)
{
    const cb_job *j = wk->job;
    const size_t w = (size_t)j->w;
    const int y0 = band * j->band_rows;
    const int y1 = y0 + j->band_rows < j->h ? y0 + j->band_rows : j->h;
    const uint8_t inv = j->p->invert ? 255 : 0;
    const size_t n = (size_t)(y1 - y0) * w;
    const size_t on = j->k->final(j->edge + (size_t)y0 * w, n, inv);

    wk->hist[0][inv ^ 255] += on;
    wk->hist[0][inv] += n - on;
}


static _Thread_local double cb_canny_ms[8];

void cpu_canny_times(double ms[8])
{
    memcpy(ms, cb_canny_ms, sizeof cb_canny_ms);
}

static double cb_thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Pass `pass` ended now: its wall and thread-CPU ms since *t and *c, which
 * then restart (cpu_canny_times). */
static void cb_lap(int pass, double *t, double *c)
{
    double tn = ge_now(), cn = cb_thread_cpu();
    cb_canny_ms[pass] = (tn - *t) * 1e3;
    cb_canny_ms[pass + 4] = (cn - *c) * 1e3;
    *t = tn;
    *c = cn;
}

/* One band of the Canny pass j->phase names: cb_run_phase's workers call
 * it through cb_job.canny_band, so they never call into this file. */
static void cb_canny_band(cb_worker *wk, int b)
{
    switch (wk->job->phase) {
    case CB_PH_NMS: cb_band_nms(wk, b); break;
    case CB_PH_HYST: cb_band_hyst(wk, b, CB_STRONG); break;
    case CB_PH_PENDING: cb_band_hyst(wk, b, CB_PENDING); break;
    case CB_PH_GRAD: cb_band_grad(wk, b); break;
    case CB_PH_NMS_PLANE: cb_band_nms_plane(wk, b); break;
    default: cb_band_final(wk, b); break;
    }
}

/* A Canny frame: (auto: the Sobel pass for the thresholds,) NMS, the
 * fills, the pending passes while any are left, the final pass. */
int cb_canny(cb_job *j, cb_worker *wk, int nthreads, ge_planes *planes)
{
    const ge_params *p = j->p;
    double t = ge_now(), c = cb_thread_cpu();
    int ret;

    memset(cb_canny_ms, 0, sizeof cb_canny_ms);
    j->canny_band = cb_canny_band;

    if (p->canny == GE_CANNY_AUTO) {
        /* The thresholds come from DESIGN.md §1.6's map of this frame (no
         * --threshold, no --invert).  With room for a t plane (4 bytes a
         * pixel, within --mem-limit beside the workers' scratch), one pass
         * keeps t and the sector codes and counts the histogram, and NMS
         * follows from the plane; without, a Sobel pass counts the
         * histogram and the NMS pass recomputes everything.  The bits are
         * the same either way. */
        const size_t row = (size_t)j->w + 2;
        size_t tbytes = SIZE_MAX, used = cb_worker_bytes(j);

        if ((size_t)j->h <= SIZE_MAX / sizeof(float) / row)
            tbytes = (size_t)j->h * row * sizeof(float);
        j->q = *p;
        j->q.canny = GE_CANNY_OFF;
        j->q.use_threshold = 0;
        j->q.invert = 0;
        if (tbytes != SIZE_MAX && used != SIZE_MAX &&
            (!j->mem_limit || (used <= j->mem_limit / (size_t)nthreads &&
                               tbytes <= j->mem_limit - used * (size_t)nthreads)))
            j->tplane = malloc(tbytes);
        if (j->tplane) {
            ret = cb_run_phase(j, wk, nthreads, CB_PH_GRAD);
        } else {
            const ge_params *keep = j->p;
            float *grey = j->grey_out, *bh = j->blur_h_out, *bl = j->blur_out;

            j->p = &j->q;
            j->grey_out = j->blur_h_out = j->blur_out = NULL;
            ret = cb_run_phase(j, wk, nthreads, CB_PH_SOBEL);
            j->p = keep;
            j->grey_out = grey;
            j->blur_h_out = bh;
            j->blur_out = bl;
        }
        if (ret < 0)
            goto end;
        cb_take_hist(wk, nthreads, planes->hist);
        ge_canny_auto(planes->hist, (uint64_t)j->w * (uint64_t)j->h, &j->low, &j->high);
    } else {
        j->low = p->canny_low;
        j->high = p->canny_high;
    }
    cb_lap(0, &t, &c);
    ret = cb_run_phase(j, wk, nthreads, j->tplane ? CB_PH_NMS_PLANE : CB_PH_NMS);
    free(j->tplane);
    j->tplane = NULL;
    if (ret < 0)
        return ret;
    cb_lap(1, &t, &c);
    if ((ret = cb_run_phase(j, wk, nthreads, CB_PH_HYST)) < 0)
        return ret;
    while (atomic_load(&j->pending)) {
        atomic_store(&j->pending, 0);
        if ((ret = cb_run_phase(j, wk, nthreads, CB_PH_PENDING)) < 0)
            return ret;
    }
    cb_lap(2, &t, &c);
    if ((ret = cb_run_phase(j, wk, nthreads, CB_PH_FINAL)) < 0)
        return ret;
    cb_take_hist(wk, nthreads, planes->hist);
    cb_lap(3, &t, &c);
    return 0;
end:
    free(j->tplane);
    j->tplane = NULL;
    return ret;
}

