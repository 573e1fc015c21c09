/*
 * refcheck.c — stage-by-stage, bit-for-bit comparison with the reference.
 */
#include "refcheck.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reference.h"
#include "util.h"

static const char *const chk_names[CHK_NSTAGES] = {
    "grey", "blur-h", "blur", "edge", "histogram"
};

/* Bitwise float comparison: -0 vs +0 or two NaN payloads differ too. */
static long long cmp_float(const float *a, const float *b, size_t n, double *maxd)
{
    long long bad = 0;
    for (size_t i = 0; i < n; i++) {
        if (memcmp(&a[i], &b[i], sizeof(float))) {
            double d = fabs((double)a[i] - (double)b[i]);
            bad++;
            if (!(d <= *maxd)) /* NaN-aware: a NaN difference becomes inf */
                *maxd = isnan(d) ? INFINITY : d;
        }
    }
    return bad;
}

static long long cmp_u8(const uint8_t *a, const uint8_t *b, size_t n, double *maxd)
{
    long long bad = 0;
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i]) {
            double d = abs((int)a[i] - (int)b[i]);
            bad++;
            if (d > *maxd)
                *maxd = d;
        }
    return bad;
}

static int tally(chk_stats *st, int stage, long long bad, double maxd,
                 const char *name, long index, const char *unit)
{
    st->checked[stage]++;
    st->mismatches[stage] += bad;
    if (maxd > st->maxdiff[stage])
        st->maxdiff[stage] = maxd;
    if (bad) {
        ge_err(name, "frame %ld: cpu-ref: %s: %lld %s differ, max |d| %g",
               index, chk_names[stage], bad, unit, maxd);
        return 1;
    }
    return 0;
}

int chk_frame(chk_stats *st, const ge_frame *in, const ge_params *p,
              const ge_taps *t, const float *grey, const float *blur_h,
              const float *blur, const uint8_t *edge, const uint64_t *hist,
              const char *name, long index)
{
    const int w = in->width, h = in->height;
    const size_t n = (size_t)w * h;
    float *rf = malloc(n * sizeof *rf);
    float *rb = malloc(n * sizeof *rb);
    uint8_t *re = malloc(n);
    uint64_t rh[GE_HIST_BINS];
    int bad = 0;
    double d;

    if (!rf || !rb || !re) {
        free(rf);
        free(rb);
        free(re);
        return -1;
    }
    /* grey from the input frame */
    ref_grey(in, rf);
    if (grey) {
        d = 0;
        bad |= tally(st, CHK_GREY, cmp_float(grey, rf, n, &d), d, name, index, "pixels");
    }
    const float *g = grey ? grey : rf;
    /* horizontal pass from the checked grey plane */
    ref_blur_h(g, w, h, t, p->border, rb);
    if (blur_h) {
        d = 0;
        bad |= tally(st, CHK_BLUR_H, cmp_float(blur_h, rb, n, &d), d, name, index, "pixels");
    }
    const float *bh = blur_h ? blur_h : rb;
    /* vertical pass from the checked horizontal plane */
    ref_blur_v(bh, w, h, t, p->border, rf);
    if (blur) {
        d = 0;
        bad |= tally(st, CHK_BLUR, cmp_float(blur, rf, n, &d), d, name, index, "pixels");
    }
    const float *b = blur ? blur : rf;
    if (!p->canny) {
        ref_sobel(b, w, h, p, re);
    } else if (ref_canny_edge(b, w, h, p, re) < 0) {
        /* DESIGN.md §1.8 from the checked blur: the 0/255 map, whole frame */
        free(rf);
        free(rb);
        free(re);
        return -1;
    }
    d = 0;
    bad |= tally(st, CHK_EDGE, cmp_u8(edge, re, n, &d), d, name, index, "pixels");
    ref_histogram(edge, n, rh);
    {
        long long hb = 0;
        double hd = 0;
        for (int i = 0; i < GE_HIST_BINS; i++)
            if (rh[i] != hist[i]) {
                double dd = fabs((double)rh[i] - (double)hist[i]);
                hb++;
                if (dd > hd)
                    hd = dd;
            }
        bad |= tally(st, CHK_HIST, hb, hd, name, index, "bins");
    }
    st->frames++;
    if (bad)
        st->bad_frames++;
    free(rf);
    free(rb);
    free(re);
    return bad ? 1 : 0;
}

void chk_print(const chk_stats *st, FILE *fp)
{
    /* The check starts from the decoded pixels: say whose they are (JPEG
     * decoders differ, DESIGN.md §1.9). */
    fprintf(fp, "cpu-ref: %lld frame%s checked, %lld with mismatches%s%s%s\n",
            st->frames, st->frames == 1 ? "" : "s", st->bad_frames,
            st->decoded_by[0] ? " (pixels decoded by " : "", st->decoded_by,
            st->decoded_by[0] ? ")" : "");
    for (int s = 0; s < CHK_NSTAGES; s++) {
        if (!st->checked[s])
            fprintf(fp, "  %-10s not materialised (checked through the next stage)\n", chk_names[s]);
        else
            fprintf(fp, "  %-10s %lld mismatching %s, max |d| %g\n", chk_names[s],
                    st->mismatches[s], s == CHK_HIST ? "bins" : "pixels", st->maxdiff[s]);
    }
}
