/*
 * reference.c — the CPU gold (DESIGN.md §1, §2).
 *
 * Plain loops, one function a stage, every expression in the order DESIGN.md §1
 * writes it, fmaf only where DESIGN.md §1 writes fma (the build passes
 * -ffp-contract=off, so the compiler adds none).  Every neighbour of the
 * blur and of the Sobel stage goes through ref_border_index(), which is the
 * whole border policy (DESIGN.md §1.5).  Nothing here is shared with the CPU
 * backend or the kernels except the tap table (taps.c) and edge.h.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reference.h"

// ---------------------------------------------------------------------------
// Borders (DESIGN.md §1.5)

/* Maps index i (any int) into [0, n-1] per the border mode, or returns -1
 * when the value there is 0 (zero border, outside the image). */
int ref_border_index(int i, int n, int border)
{
    if (i >= 0 && i < n)
        return i;
    switch (border) {
    case GE_BORDER_ZERO:
        return -1;
    case GE_BORDER_REFLECT101:
        if (n == 1)
            return 0;
        i = abs(i) % (2 * n - 2);
        if (i >= n)
            i = 2 * n - 2 - i;
        return i;
    case GE_BORDER_REPLICATE:
    default:
        return i < 0 ? 0 : n - 1;
    }
}

/* plane value at (y, x) with both coordinates border-mapped */
static float ref_at(const float *p, int w, int h, int y, int x, int border)
{
    int yy = ref_border_index(y, h, border);
    int xx = ref_border_index(x, w, border);

    if (yy < 0 || xx < 0)
        return 0.0f;
    return p[(size_t)yy * w + xx];
}

// ---------------------------------------------------------------------------
// Stages

/* one channel value, DESIGN.md §1.1 via ge_frame's shift/offset/gain */
static float ref_channel(const ge_frame *f, int y, int x, int ch)
{
    const unsigned char *row = (const unsigned char *)f->data +
                               (size_t)y * f->stride;
    size_t i = (size_t)x * f->channels + ch;
    unsigned v;

    if (f->bytes_per_sample == 2) {
        uint16_t s;
        memcpy(&s, row + 2 * i, sizeof s); /* rows need not be aligned */
        v = s;
    } else {
        v = row[i];
    }
    return (float)((int)(v >> f->shift) - f->offset) * f->gain;
}

void ref_grey(const ge_frame *f, float *grey)
{
    int x, y;

    for (y = 0; y < f->height; y++) {
        for (x = 0; x < f->width; x++) {
            float g;
            if (f->channels >= 3) {
                float r = ref_channel(f, y, x, 0);
                float gr = ref_channel(f, y, x, 1);
                float b = ref_channel(f, y, x, 2);
                g = fmaf(0.114f, b, fmaf(0.587f, gr, 0.299f * r));
            } else {
                g = ref_channel(f, y, x, 0); /* grey or grey+alpha */
            }
            grey[(size_t)y * f->width + x] = g;
        }
    }
}

/* One pass of the separable blur along (dy, dx): taps from -r to r, the
 * first product, then fmaf in tap order (DESIGN.md §1.3). */
static void ref_blur(const float *in, int w, int h, const ge_taps *t, int border, int dy,
                     int dx, float *out)
{
    const int r = t->radius;
    int x, y, k;

    if (r == 0) {
        memcpy(out, in, (size_t)w * h * sizeof *out);
        return;
    }
    for (y = 0; y < h; y++) {
        for (x = 0; x < w; x++) {
            float acc = t->w[0] * ref_at(in, w, h, y - r * dy, x - r * dx, border);
            for (k = -r + 1; k <= r; k++)
                acc = fmaf(t->w[k + r], ref_at(in, w, h, y + k * dy, x + k * dx, border), acc);
            out[(size_t)y * w + x] = acc;
        }
    }
}

void ref_blur_h(const float *in, int w, int h, const ge_taps *t, int border, float *out)
{
    ref_blur(in, w, h, t, border, 0, 1, out);
}

void ref_blur_v(const float *in, int w, int h, const ge_taps *t, int border, float *out)
{
    ref_blur(in, w, h, t, border, 1, 0, out);
}

/* DESIGN.md §1.6: magnitude -> 8-bit edge value */
static uint8_t ref_quantise(float m, const ge_params *p)
{
    uint8_t e;

    if (p->use_threshold) {
        e = (m * p->scale >= p->threshold) ? 255 : 0;
    } else {
        float t = fmaf(m, p->scale, 0.5f);
        e = t >= 255.0f ? 255 : (uint8_t)floorf(t);
    }
    if (p->invert)
        e = (uint8_t)(255 - e);
    return e;
}

/* DESIGN.md §1.4's gx, gy at (y, x), border-mapped: the one place the
 * reference's Sobel and its Canny gradients take them from. */
static void ref_grad_at(const float *blur, int w, int h, int y, int x, int bd,
                        float *gx, float *gy)
{
    /* b(dy, dx) */
    float nw = ref_at(blur, w, h, y - 1, x - 1, bd);
    float n = ref_at(blur, w, h, y - 1, x, bd);
    float ne = ref_at(blur, w, h, y - 1, x + 1, bd);
    float wv = ref_at(blur, w, h, y, x - 1, bd);
    float ev = ref_at(blur, w, h, y, x + 1, bd);
    float sw = ref_at(blur, w, h, y + 1, x - 1, bd);
    float s = ref_at(blur, w, h, y + 1, x, bd);
    float se = ref_at(blur, w, h, y + 1, x + 1, bd);

    float L = (nw + 2.0f * wv) + sw;
    float R = (ne + 2.0f * ev) + se;
    float T = (nw + 2.0f * n) + ne;
    float D = (sw + 2.0f * s) + se;
    *gx = R - L;
    *gy = D - T;
}

void ref_sobel(const float *blur, int w, int h, const ge_params *p,
               uint8_t *edge)
{
    const int bd = p->border;
    int x, y;

    for (y = 0; y < h; y++) {
        for (x = 0; x < w; x++) {
            float gx, gy;

            ref_grad_at(blur, w, h, y, x, bd, &gx, &gy);
            float m = sqrtf(fmaf(gx, gx, gy * gy));

            edge[(size_t)y * w + x] = ref_quantise(m, p);
        }
    }
}

void ref_histogram(const uint8_t *edge, size_t n, uint64_t hist[GE_HIST_BINS])
{
    size_t i;

    memset(hist, 0, GE_HIST_BINS * sizeof *hist);
    for (i = 0; i < n; i++)
        hist[edge[i]]++;
}

// ---------------------------------------------------------------------------
// Canny (DESIGN.md §1.8)

void ref_gradients(const float *blur, int w, int h, int border, float *gx,
                   float *gy)
{
    int x, y;

    for (y = 0; y < h; y++) {
        for (x = 0; x < w; x++) {
            ref_grad_at(blur, w, h, y, x, border, &gx[(size_t)y * w + x],
                        &gy[(size_t)y * w + x]);
        }
    }
}

/* t = m * scale at (y, x); 0 outside the image in every border mode */
static float ref_canny_t(const float *gx, const float *gy, int w, int h,
                         int y, int x, float scale)
{
    size_t i;
    float a, b;

    if (y < 0 || y >= h || x < 0 || x >= w)
        return 0.0f;
    i = (size_t)y * w + x;
    a = gx[i];
    b = gy[i];
    return sqrtf(fmaf(a, a, b * b)) * scale;
}

void ref_canny_nms(const float *gx, const float *gy, int w, int h,
                   float scale, float low, float high, uint8_t *cls)
{
    const float t1 = (float)(sqrt(2.0) - 1.0);
    const float t2 = (float)(sqrt(2.0) + 1.0);
    int x, y;

    for (y = 0; y < h; y++) {
        for (x = 0; x < w; x++) {
            size_t i = (size_t)y * w + x;
            float ax = fabsf(gx[i]), ay = fabsf(gy[i]);
            float t = ref_canny_t(gx, gy, w, h, y, x, scale);
            int pass;

            if (ay < t1 * ax) {
                /* gradient near horizontal: left and right neighbours */
                pass = t > ref_canny_t(gx, gy, w, h, y, x - 1, scale) &&
                       t >= ref_canny_t(gx, gy, w, h, y, x + 1, scale);
            } else if (ay > t2 * ax) {
                /* near vertical: above and below */
                pass = t > ref_canny_t(gx, gy, w, h, y - 1, x, scale) &&
                       t >= ref_canny_t(gx, gy, w, h, y + 1, x, scale);
            } else if ((gx[i] < 0) != (gy[i] < 0)) {
                /* diagonal, signs differ: (-1,+1) and (+1,-1), both strict */
                pass = t > ref_canny_t(gx, gy, w, h, y - 1, x + 1, scale) &&
                       t > ref_canny_t(gx, gy, w, h, y + 1, x - 1, scale);
            } else {
                pass = t > ref_canny_t(gx, gy, w, h, y - 1, x - 1, scale) &&
                       t > ref_canny_t(gx, gy, w, h, y + 1, x + 1, scale);
            }
            if (pass && t > low)
                cls[i] = t > high ? REF_CANNY_STRONG : REF_CANNY_WEAK;
            else
                cls[i] = REF_CANNY_NONE;
        }
    }
}

int ref_canny_hysteresis(const uint8_t *cls, int w, int h, uint8_t *out)
{
    const size_t n = (size_t)w * h;
    size_t *stack = NULL, cap = 0, top = 0, i;

    /* out doubles as the visited set: 255 = joined (pushed once) */
    memset(out, 0, n);
    for (i = 0; i < n; i++) {
        if (cls[i] != REF_CANNY_STRONG || out[i])
            continue;
        out[i] = 255;
        top = 0;
        if (top == cap) {
            size_t *s = realloc(stack, (cap = cap ? 2 * cap : 1024) * sizeof *s);
            if (!s) {
                free(stack);
                return -1;
            }
            stack = s;
        }
        stack[top++] = i;
        while (top > 0) {
            size_t j = stack[--top];
            int y = (int)(j / (size_t)w), x = (int)(j % (size_t)w), dy, dx;

            for (dy = -1; dy <= 1; dy++) {
                for (dx = -1; dx <= 1; dx++) {
                    int yy = y + dy, xx = x + dx;
                    size_t k;

                    if (yy < 0 || yy >= h || xx < 0 || xx >= w)
                        continue;
                    k = (size_t)yy * w + xx;
                    if (cls[k] == REF_CANNY_NONE || out[k])
                        continue;
                    out[k] = 255;
                    if (top == cap) {
                        size_t *s = realloc(stack, 2 * cap * sizeof *s);
                        if (!s) {
                            free(stack);
                            return -1;
                        }
                        stack = s;
                        cap *= 2;
                    }
                    stack[top++] = k;
                }
            }
        }
    }
    free(stack);
    return 0;
}

int ref_canny(const float *gx, const float *gy, int w, int h, float scale,
              float low, float high, uint8_t *out)
{
    uint8_t *cls = malloc((size_t)w * h);
    int ret;

    if (!cls)
        return -1;
    ref_canny_nms(gx, gy, w, h, scale, low, high, cls);
    ret = ref_canny_hysteresis(cls, w, h, out);
    free(cls);
    return ret;
}

int ref_canny_thresholds(const float *blur, int w, int h, const ge_params *p,
                         uint8_t *e, float *low, float *high)
{
    if (p->canny == GE_CANNY_ON) {
        *low = p->canny_low;
        *high = p->canny_high;
        return 0;
    }
    if (p->canny == GE_CANNY_AUTO) {
        ge_params q = *p;
        uint64_t hist[GE_HIST_BINS];

        q.canny = GE_CANNY_OFF;
        q.use_threshold = 0;
        q.invert = 0;
        ref_sobel(blur, w, h, &q, e);
        ref_histogram(e, (size_t)w * h, hist);
        ge_canny_auto(hist, (uint64_t)w * (uint64_t)h, low, high);
        return 0;
    }
    return -1;
}

int ref_canny_edge(const float *blur, int w, int h, const ge_params *p,
                   uint8_t *edge)
{
    const size_t n = (size_t)w * h;
    float *gx = malloc(n * sizeof *gx);
    float *gy = malloc(n * sizeof *gy);
    float low, high;
    size_t i;
    int ret = -1;

    if (!gx || !gy)
        goto end;
    if (ref_canny_thresholds(blur, w, h, p, edge, &low, &high) < 0)
        goto end;
    ref_gradients(blur, w, h, p->border, gx, gy);
    if (ref_canny(gx, gy, w, h, p->scale, low, high, edge) < 0)
        goto end;
    if (p->invert)
        for (i = 0; i < n; i++)
            edge[i] = (uint8_t)(255 - edge[i]);
    ret = 0;
end:
    free(gx);
    free(gy);
    return ret;
}

// ---------------------------------------------------------------------------

int ref_process(const ge_frame *f, const ge_params *p, ge_planes *planes)
{
    ge_taps taps;
    float *own[3] = { NULL, NULL, NULL };
    float *grey, *blur_h, *blur;
    size_t n;
    int ret = -1;

    if (!f || !p || !planes || !planes->edge || !f->data)
        return -1;
    if (f->width < 1 || f->height < 1 || f->channels < 1 || f->channels > 4 ||
        (f->bytes_per_sample != 1 && f->bytes_per_sample != 2))
        return -1;
    /* a row must hold its samples; a shift past the sample is meaningless */
    if (f->stride / f->bytes_per_sample / f->channels < (size_t)f->width ||
        f->shift < 0 || f->shift >= 8 * f->bytes_per_sample ||
        p->border < GE_BORDER_REPLICATE || p->border > GE_BORDER_ZERO)
        return -1;
    if (ge_taps_make(p->sigma, &taps) < 0)
        return -1;
    if (p->canny < GE_CANNY_OFF || p->canny > GE_CANNY_AUTO ||
        (p->canny == GE_CANNY_ON && !(p->canny_low >= 0 && p->canny_low <= p->canny_high)))
        return -1;
    if ((size_t)f->width > SIZE_MAX / sizeof(float) / (size_t)f->height)
        return -1;
    n = (size_t)f->width * f->height;

    grey = planes->grey;
    blur_h = planes->blur_h;
    blur = planes->blur;
    if (!grey && !(grey = own[0] = malloc(n * sizeof *grey)))
        goto end;
    if (!blur_h && !(blur_h = own[1] = malloc(n * sizeof *blur_h)))
        goto end;
    if (!blur && !(blur = own[2] = malloc(n * sizeof *blur)))
        goto end;

    ref_grey(f, grey);
    ref_blur_h(grey, f->width, f->height, &taps, p->border, blur_h);
    ref_blur_v(blur_h, f->width, f->height, &taps, p->border, blur);
    if (p->canny) {
        if (ref_canny_edge(blur, f->width, f->height, p, planes->edge) < 0)
            goto end;
    } else {
        ref_sobel(blur, f->width, f->height, p, planes->edge);
    }
    ref_histogram(planes->edge, n, planes->hist);
    ret = 0;
end:
    free(own[0]);
    free(own[1]);
    free(own[2]);
    return ret;
}
