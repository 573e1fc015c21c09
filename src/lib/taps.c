/*
 * taps.c — the Gaussian tap table (DESIGN.md §1.3), the one thing the reference,
 * the CPU backend and the kernels share.
 *
 * w_k = Phi((k+1/2)/sigma) - Phi((k-1/2)/sigma), k = -r..r, r = max(1,
 * ceil(2 sigma)), in double, normalised to sum 1 in double, rounded once to
 * float.  sigma 0 means "no blur": radius 0, w[0] = 1.
 */
#include <math.h>

#include "edge.h"

/* Phi(b) - Phi(a) for 0 <= a < b, written with erfc of the positive
 * arguments: by symmetry it equals Phi(-a) - Phi(-b), and the upper-tail
 * form keeps full relative precision in the tails where 1 - Phi would
 * cancel.  Computing only k >= 0 and mirroring makes the table exactly
 * symmetric, which the formula is mathematically. */
static double tap_mass(double a, double b, double sigma)
{
    const double s = sigma * sqrt(2.0);
    return 0.5 * (erfc(a / s) - erfc(b / s));
}

int ge_taps_make(double sigma, ge_taps *t)
{
    double w[GE_MAX_RADIUS + 1];
    double sum;
    int r, k;

    if (!t)
        return -1;
    if (sigma == 0.0) {
        t->radius = 0;
        for (k = 0; k < GE_MAX_TAPS; k++)
            t->w[k] = 0.0f;
        t->w[0] = 1.0f;
        return 0;
    }
    /* written so that NaN fails too */
    if (!(sigma >= GE_SIGMA_MIN && sigma <= GE_SIGMA_MAX))
        return -1;

    r = (int)ceil(2.0 * sigma);
    if (r < 1)
        r = 1;
    if (r > GE_MAX_RADIUS)
        r = GE_MAX_RADIUS;

    /* k = 0: Phi(1/2s) - Phi(-1/2s) = erf(1/(2 s sqrt 2)) */
    w[0] = erf(0.5 / (sigma * sqrt(2.0)));
    for (k = 1; k <= r; k++)
        w[k] = tap_mass(k - 0.5, k + 0.5, sigma);

    /* sum from the smallest terms up, in one fixed order */
    sum = 0.0;
    for (k = r; k >= 1; k--)
        sum += 2.0 * w[k];
    sum += w[0];

    t->radius = r;
    for (k = 0; k < GE_MAX_TAPS; k++)
        t->w[k] = 0.0f;
    for (k = 0; k <= r; k++) {
        float v = (float)(w[k] / sum);
        t->w[r + k] = v;
        t->w[r - k] = v;
    }
    return 0;
}

/* DESIGN.md §1.8's --canny auto (edge.h): integer cumulative test, then two
 * float operations, so every backend that calls this gets the same pair. */
void ge_canny_auto(const uint64_t hist[GE_HIST_BINS], uint64_t n,
                   float *low, float *high)
{
    uint64_t cum = 0;
    int c = GE_HIST_BINS - 1;
    for (int i = 0; i < GE_HIST_BINS; i++) {
        cum += hist[i];
        if (cum * 10 >= n * 7) {
            c = i;
            break;
        }
    }
    *high = (float)c + 0.5f;
    *low = 0.4f * *high;
}
