/*
 * test_nvjpeg.c — src/io/nvjpeg.c on a GPU (DESIGN.md §1.9, §4):
 *   - JPEGs made here with libjpeg-turbo from the sample PNGs and a synthetic
 *     1920x1080 scene, at 4:4:4, 4:2:2, 4:2:0, 4:4:0, 4:1:1 and grey, go
 *     through one nvj_decode batch (plus any JPEG files named on the command
 *     line: real photos);
 *   - each decoded image against libjpeg-turbo's decode of the same file:
 *     what the JPEG engines decoded (their IDCT, then kernels/jpeg_ycc.h's
 *     upsampling and colour) must be libjpeg-turbo's pixels byte for byte;
 *     what the hybrid backend decoded (its IDCT is its own, DESIGN.md §1.9)
 *     must be close (PSNR >= 30 dB, mean |d| < 2); max |d|, the share of
 *     differing samples and PSNR are printed for both;
 *   - the edge maps and histograms the kernels compute from nvJPEG's planes
 *     where they lie in device memory (fused and staged) equal the CPU
 *     reference run on those same planes downloaded, bit for bit;
 *   - a progressive JPEG, which the hardware engines refuse, is decoded by
 *     the hybrid backend instead;
 *   - refused and broken files come back "not decoded" with a reason, never
 *     a crash: CMYK, not a JPEG, truncated, garbled entropy data, header
 *     only; and the decoder decodes a good file identically after them.
 *   --bench [N]: times a batch of N (16) of the largest inputs: nvj_decode
 *     against libjpeg-turbo on one thread and on every core.
 * Without a CUDA device or without the library it prints one "skip" line
 * and exits 0.
 *
 * Usage: test_nvjpeg [--bench [N]] [FILE.jpg...]
 */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda_runtime_api.h>
#include <turbojpeg.h>

#include "../unit/check.h"
#include "gpu_test.h"
#include "edge.h"
#include "fused.h"
#include "image_io.h"
#include "kernels.h"
#include "nvjpeg.h"
#include "reference.h"

/* EXPECT_HYBRID: decoded, and by the hybrid backend where the hardware one
 * runs (the engines refuse it: progressive) */
/* EXPECT_MAYBE: a sampling nvJPEG may or may not take (compared when it
 * does); EXPECT_EITHER: broken data, anything but a crash */
enum { EXPECT_OK, EXPECT_EITHER, EXPECT_REFUSED, EXPECT_HYBRID, EXPECT_MAYBE };

typedef struct tcase {
    char name[160];
    unsigned char *jpg;
    size_t len;
    int expect;
} tcase;

static tcase cases[64];
static int ncases;

static void add_case(const char *name, unsigned char *jpg, size_t len, int expect)
{
    if (ncases == (int)(sizeof cases / sizeof cases[0])) {
        free(jpg);
        return;
    }
    snprintf(cases[ncases].name, sizeof cases[ncases].name, "%s", name);
    cases[ncases].jpg = jpg;
    cases[ncases].len = len;
    cases[ncases].expect = expect;
    ncases++;
}

static unsigned char *dup_bytes(const unsigned char *p, size_t n)
{
    unsigned char *q = xmalloc(n);
    memcpy(q, p, n);
    return q;
}

/* Encodes an RGB image with TurboJPEG; NULL on failure (printed). */
static unsigned char *encode(const unsigned char *rgb, int w, int h, int pf, int samp, int flags,
                             size_t *len)
{
    tjhandle tj = tjInitCompress();
    unsigned char *out = NULL, *copy;
    unsigned long n = 0;
    if (!tj || tjCompress2(tj, rgb, w, 0, h, pf, &out, &n, samp, 90, flags)) {
        printf("not ok encode: %s\n", tj ? tjGetErrorStr2(tj) : "tjInitCompress");
        check_failed_ = 1;
        if (tj)
            tjDestroy(tj);
        return NULL;
    }
    copy = dup_bytes(out, n);
    tjFree(out);
    tjDestroy(tj);
    *len = n;
    return copy;
}

/* libjpeg-turbo's pixels (OpenCV's and Pillow's): default flags, i.e. the
 * accurate integer IDCT and fancy upsampling. */
static unsigned char *turbo_decode(const unsigned char *jpg, size_t len, int channels, int *w,
                                   int *h)
{
    tjhandle tj = tjInitDecompress();
    int ss, cs;
    unsigned char *px = NULL;
    if (!tj)
        return NULL;
    if (tjDecompressHeader3(tj, jpg, len, w, h, &ss, &cs) == 0) {
        px = xmalloc((size_t)*w * *h * channels);
        if (tjDecompress2(tj, jpg, len, px, *w, 0, *h, channels == 1 ? TJPF_GRAY : TJPF_RGB,
                          0) && tjGetErrorCode(tj) == TJERR_FATAL) {
            free(px);
            px = NULL;
        }
    }
    tjDestroy(tj);
    return px;
}

static void make_corpus(void)
{
    /* the samples */
    static const char *const pngs[] = {"samples/photo.png", "samples/odd_321x241.png",
                                       "samples/grey.png"};
    static const struct { int samp; const char *name; int expect; } samps[] = {
        {TJSAMP_444, "444", EXPECT_OK}, {TJSAMP_422, "422", EXPECT_OK},
        {TJSAMP_420, "420", EXPECT_OK}, {TJSAMP_440, "440", EXPECT_MAYBE},
        {TJSAMP_411, "411", EXPECT_MAYBE}, {TJSAMP_GRAY, "grey", EXPECT_OK},
    };
    char name[160];
    for (size_t i = 0; i < sizeof pngs / sizeof pngs[0]; i++) {
        img_image im;
        unsigned char *rgb;
        size_t len;
        if (img_load(pngs[i], &im)) {
            printf("not ok corpus %s: cannot read it (run from the repository root)\n", pngs[i]);
            check_failed_ = 1;
            continue;
        }
        /* as RGB (grey sources replicated) */
        rgb = xmalloc((size_t)im.width * im.height * 3);
        for (size_t p = 0; p < (size_t)im.width * im.height; p++)
            for (int c = 0; c < 3; c++)
                rgb[3 * p + c] = ((unsigned char *)im.pixels)[p * im.channels +
                                                               (im.channels >= 3 ? c : 0)];
        for (size_t s = 0; s < sizeof samps / sizeof samps[0]; s++) {
            unsigned char *j = encode(rgb, im.width, im.height, TJPF_RGB, samps[s].samp, 0, &len);
            snprintf(name, sizeof name, "%s %dx%d %s", pngs[i] + 8, im.width, im.height,
                     samps[s].name);
            if (j)
                add_case(name, j, len, samps[s].expect);
        }
        if (i == 0) {
            unsigned char *j = encode(rgb, im.width, im.height, TJPF_RGB, TJSAMP_420,
                                      TJFLAG_PROGRESSIVE, &len);
            if (j)
                add_case("photo.png progressive 420", j, len, EXPECT_HYBRID);
            /* CMYK: four components (TurboJPEG writes Adobe YCCK) */
            unsigned char *cmyk = xmalloc((size_t)im.width * im.height * 4);
            for (size_t p = 0; p < (size_t)im.width * im.height; p++) {
                for (int c = 0; c < 3; c++)
                    cmyk[4 * p + c] = 255 - rgb[3 * p + c];
                cmyk[4 * p + 3] = 0;
            }
            j = encode(cmyk, im.width, im.height, TJPF_CMYK, TJSAMP_444, 0, &len);
            free(cmyk);
            if (j)
                add_case("photo.png CMYK", j, len, EXPECT_REFUSED);
            j = encode(rgb, im.width, im.height, TJPF_RGB, TJSAMP_420, 0, &len);
            if (j) {
                /* truncated in the middle of the entropy-coded data */
                add_case("photo.png truncated at 55%", dup_bytes(j, len * 55 / 100),
                         len * 55 / 100, EXPECT_REFUSED);
                /* garbled: every 97th byte of the second half flipped */
                unsigned char *g = dup_bytes(j, len);
                for (size_t k = len / 2; k + 2 < len; k += 97)
                    g[k] ^= 0x5A;
                add_case("photo.png garbled entropy data", g, len, EXPECT_EITHER);
                /* only the header */
                add_case("photo.png header only", dup_bytes(j, 600), 600, EXPECT_REFUSED);
                free(j);
            }
            {
                static const unsigned char png_sig[16] = {0x89, 'P', 'N', 'G', '\r', '\n',
                                                          0x1a, '\n'};
                add_case("a PNG signature", dup_bytes(png_sig, sizeof png_sig), sizeof png_sig,
                         EXPECT_REFUSED);
            }
        }
        free(rgb);
        img_free(&im);
    }
    /* a synthetic 1920x1080 scene: gradients, sharp colour bars, noise */
    {
        const int w = 1920, h = 1080;
        unsigned char *rgb = xmalloc((size_t)w * h * 3);
        size_t len;
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                unsigned char *p = rgb + ((size_t)y * w + x) * 3;
                int bar = (x / 120 + y / 135) % 4;
                p[0] = (unsigned char)(bar == 1 ? 230 : (x * 255) / w);
                p[1] = (unsigned char)(bar == 2 ? 20 : (y * 255) / h);
                p[2] = (unsigned char)((bar == 3 ? 200 : 60) + rnd_below(40));
            }
        unsigned char *j = encode(rgb, w, h, TJPF_RGB, TJSAMP_420, 0, &len);
        if (j)
            add_case("synthetic 1920x1080 420", j, len, EXPECT_OK);
        j = encode(rgb, w, h, TJPF_RGB, TJSAMP_444, 0, &len);
        if (j)
            add_case("synthetic 1920x1080 444", j, len, EXPECT_OK);
        free(rgb);
    }
}

static int load_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    long n;
    unsigned char *b;
    if (!f) {
        printf("not ok file %s: cannot open\n", path);
        return check_failed_ = 1, -1;
    }
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    b = xmalloc(n > 0 ? (size_t)n : 1);
    if (n <= 0 || fread(b, 1, (size_t)n, f) != (size_t)n) {
        printf("not ok file %s: cannot read\n", path);
        fclose(f);
        free(b);
        return check_failed_ = 1, -1;
    }
    fclose(f);
    /* a file named "*corrupt*" / "*progressive*" is expected to fall back
     * (or, corrupt, to decode to something); everything else to decode */
    add_case(path, b, (size_t)n,
             strstr(path, "trunc")                              ? EXPECT_REFUSED
             : strstr(path, "corrupt")                          ? EXPECT_EITHER
             : strstr(path, "progressive")                      ? EXPECT_HYBRID
             : strstr(path, "cmyk")                             ? EXPECT_REFUSED
                                                                : EXPECT_OK);
    return 0;
}

/* ------------------------------------------------------------------------ */

typedef struct diff_stats {
    int maxd;
    double pct, mean, psnr;
} diff_stats;

static diff_stats compare(const unsigned char *a, const unsigned char *b, size_t n)
{
    diff_stats s = {0, 0, 0, 0};
    size_t ndiff = 0;
    double sum = 0, sq = 0;
    for (size_t i = 0; i < n; i++) {
        int d = abs((int)a[i] - (int)b[i]);
        if (d) {
            ndiff++;
            sum += d;
            sq += (double)d * d;
            if (d > s.maxd)
                s.maxd = d;
        }
    }
    s.pct = n ? 100.0 * ndiff / n : 0;
    s.mean = n ? sum / n : 0;
    s.psnr = sq > 0 ? 10 * log10(255.0 * 255.0 / (sq / n)) : INFINITY;
    return s;
}

/* Edge map and histogram from the device planes (fused, then staged) ==
 * ref_process over the same planes on the host. */
static void check_edges(const char *cname, const nvj_pic *p, const unsigned char *host)
{
    const int w = p->width, h = p->height;
    const size_t n = (size_t)w * h;
    ge_params prm = {.sigma = 1.0, .border = GE_BORDER_REPLICATE, .scale = 1.0f};
    ge_taps taps;
    ge_frame df = {w, h, p->channels, 1, p->pitch, 0, 0, 1.0f, p->d_data};
    ge_frame hf = {w, h, p->channels, 1, (size_t)w * p->channels, 0, 0, 1.0f, host};
    ge_planes ref;
    uint8_t *d_edge = dmalloc(n), *h_edge = xmalloc(n);
    unsigned long long *d_hist = dmalloc(GE_HIST_BINS * 8), h_hist[GE_HIST_BINS];
    float *d_grey = dmalloc(n * 4), *d_bh = dmalloc(n * 4), *d_blur = dmalloc(n * 4);
    char name[512];
    int same;

    ge_taps_make(prm.sigma, &taps);
    memset(&ref, 0, sizeof ref);
    ref.edge = xmalloc(n);
    if (ref_process(&hf, &prm, &ref)) {
        printf("not ok edges %s: out of memory\n", cname);
        check_failed_ = 1;
        goto end;
    }
    MUST(fused_set_taps_gpu(&taps, 0));
    MUST(fused_gpu(&df, d_edge, w, &prm, taps.radius, d_hist, 0));
    MUST(cudaMemcpy(h_edge, d_edge, n, cudaMemcpyDeviceToHost));
    MUST(cudaMemcpy(h_hist, d_hist, sizeof h_hist, cudaMemcpyDeviceToHost));
    snprintf(name, sizeof name, "%.200s (fused, nvJPEG planes in device memory)", cname);
    same = cmp_u8("edges", name, h_edge, ref.edge, w, h);
    (void)same;
    snprintf(name, sizeof name, "histogram %.200s fused", cname);
    CHECK(!memcmp(h_hist, ref.hist, sizeof h_hist), name, "bins differ");

    MUST(gaussian_set_taps_gpu(&taps, 0));
    MUST(grey_gpu(&df, d_grey, w, 0));
    MUST(blur_h_gpu(d_grey, w, d_bh, w, w, h, prm.border, 0));
    MUST(blur_v_gpu(d_bh, w, w, h, 0, h, d_blur, w, 0, h, prm.border, 0));
    MUST(sobel_gpu(d_blur, w, w, h, 0, h, d_edge, w, 0, h, &prm, 0));
    MUST(cudaMemset(d_hist, 0, sizeof h_hist));
    MUST(histogram_gpu(d_edge, w, w, h, d_hist, 0));
    MUST(cudaMemcpy(h_edge, d_edge, n, cudaMemcpyDeviceToHost));
    MUST(cudaMemcpy(h_hist, d_hist, sizeof h_hist, cudaMemcpyDeviceToHost));
    snprintf(name, sizeof name, "%.200s (staged)", cname);
    cmp_u8("edges", name, h_edge, ref.edge, w, h);
    snprintf(name, sizeof name, "histogram %.200s staged", cname);
    CHECK(!memcmp(h_hist, ref.hist, sizeof h_hist), name, "bins differ");
end:
    free(ref.edge);
    free(h_edge);
    cudaFree(d_edge);
    cudaFree(d_hist);
    cudaFree(d_grey);
    cudaFree(d_bh);
    cudaFree(d_blur);
}

static unsigned char *download(const nvj_pic *p)
{
    size_t row = (size_t)p->width * p->channels;
    unsigned char *h = xmalloc(row * p->height);
    MUST(cudaMemcpy2D(h, row, p->d_data, p->pitch, row, p->height, cudaMemcpyDeviceToHost));
    return h;
}

/* ------------------------------------------------------------------------ */
/* --bench                                                                   */

typedef struct tj_job {
    const tcase *const *c;
    int n, stride, first;
    int channels;
} tj_job;

static void *tj_worker(void *arg)
{
    tj_job *j = arg;
    for (int i = j->first; i < j->n; i += j->stride) {
        int w, h;
        unsigned char *px = turbo_decode(j->c[i]->jpg, j->c[i]->len, 3, &w, &h);
        free(px);
    }
    return NULL;
}

static double turbo_batch(const tcase *const *c, int n, int threads)
{
    pthread_t th[128];
    tj_job jobs[128];
    double t0 = now_s();
    if (threads > 128)
        threads = 128;
    for (int t = 0; t < threads; t++) {
        jobs[t] = (tj_job){c, n, threads, t, 3};
        pthread_create(&th[t], NULL, tj_worker, &jobs[t]);
    }
    for (int t = 0; t < threads; t++)
        pthread_join(th[t], NULL);
    return now_s() - t0;
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void bench(nvj_dec *d, int nb)
{
    const tcase *pick[256];
    nvj_pic *pics = calloc((size_t)nb, sizeof *pics);
    double t[7], mpx = 0;
    int src[64], ns = 0, w, h, ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
    /* the decodable cases, largest first */
    for (int i = 0; i < ncases && ns < 64; i++)
        if (cases[i].expect == EXPECT_OK) /* baseline: what the engines take */
            src[ns++] = i;
    if (!ns || !pics) {
        SKIP("bench", "no decodable input");
        free(pics);
        return;
    }
    for (int a = 0; a < ns; a++)
        for (int b = a + 1; b < ns; b++)
            if (cases[src[b]].len > cases[src[a]].len) {
                int x = src[a];
                src[a] = src[b];
                src[b] = x;
            }
    /* the large ones (at least 3/4 of the largest file), cycled */
    for (int a = 1; a < ns; a++)
        if (cases[src[a]].len < cases[src[0]].len / 4 * 3) {
            ns = a;
            break;
        }
    for (int i = 0; i < nb; i++) {
        pick[i] = &cases[src[i % ns]];
        pics[i].data = pick[i]->jpg;
        pics[i].len = pick[i]->len;
    }
    for (int r = 0; r < 7; r++) {
        double t0 = now_s();
        if (nvj_decode(d, pics, nb)) {
            printf("not ok bench: nvj_decode failed\n");
            check_failed_ = 1;
            break;
        }
        t[r] = now_s() - t0;
        if (r == 0)
            for (int i = 0; i < nb; i++)
                mpx += pics[i].ok ? (double)pics[i].width * pics[i].height / 1e6 : 0;
        for (int i = 0; i < nb; i++)
            nvj_release(d, &pics[i]);
    }
    qsort(t + 1, 6, sizeof t[0], cmp_dbl); /* t[0]: the first call (allocations) */
    printf("bench nvjpeg (%s): %d JPEGs, %.1f Mpx: first call %.1f ms, median of 6 %.2f ms = "
           "%.2f Gpx/s (decoded into device memory)\n", nvj_backend(d), nb, mpx, t[0] * 1e3,
           t[3] * 1e3, mpx / 1e3 / t[3]);
    {
        double t1 = turbo_batch(pick, nb, 1);
        double tn = turbo_batch(pick, nb, ncpu), tn2 = turbo_batch(pick, nb, ncpu);
        tn = tn2 < tn ? tn2 : tn;
        (void)w;
        (void)h;
        printf("bench libjpeg-turbo: the same %d JPEGs to RGB in host memory: 1 thread %.1f ms "
               "= %.3f Gpx/s; %d threads %.1f ms = %.2f Gpx/s; nvJPEG %.1fx one thread, %.1fx "
               "%d threads\n", nb, t1 * 1e3, mpx / 1e3 / t1, ncpu, tn * 1e3, mpx / 1e3 / tn,
               t1 / t[3], tn / t[3], ncpu);
    }
    free(pics);
}

/* ------------------------------------------------------------------------ */

int main(int argc, char **argv)
{
    int ndev = 0, nbench = 0;
    char name[512];
    nvj_dec *d = NULL;
    nvj_pic *pics;
    unsigned char *first = NULL;
    int first_i = -1;

    rng_state = 20261201;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--bench")) {
            nbench = 16;
            if (i + 1 < argc && atoi(argv[i + 1]) > 0)
                nbench = atoi(argv[++i]);
        }
    }
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        SKIP("nvjpeg", "no CUDA device");
        return 0;
    }
    MUST(cudaSetDevice(0));
    {
        double t0 = now_s();
        MUST(cudaFree(NULL)); /* the CUDA context first: time nvJPEG alone */
        double t1 = now_s();
        if (nvj_open(64, &d)) {
            SKIP("nvjpeg", ge_why());
            return 0;
        }
        printf("# %s\n# CUDA context %.0f ms, nvj_open %.0f ms\n", nvj_describe(d),
               (t1 - t0) * 1e3, (now_s() - t1) * 1e3);
    }
    make_corpus();
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--bench")) {
            if (i + 1 < argc && atoi(argv[i + 1]) > 0)
                i++;
            continue;
        }
        load_file(argv[i]);
    }
    pics = calloc((size_t)ncases, sizeof *pics);
    for (int i = 0; i < ncases; i++) {
        pics[i].data = cases[i].jpg;
        pics[i].len = cases[i].len;
    }
    CHECK(nvj_decode(d, pics, ncases) == 0, "nvjpeg decode batch", "CUDA failure");
    for (int i = 0; i < ncases; i++) {
        const tcase *c = &cases[i];
        nvj_pic *p = &pics[i];
        int must = c->expect == EXPECT_OK || c->expect == EXPECT_HYBRID;
        int refuse = c->expect == EXPECT_REFUSED;
        if (p->ok)
            printf("# %s: decoded %dx%d, %d channel%s, %s backend\n", c->name, p->width,
                   p->height, p->channels, p->channels == 1 ? "" : "s",
                   p->hardware ? "hardware" : "hybrid");
        else
            printf("# %s: not decoded on the GPU (%s): falls back to the CPU\n", c->name, p->why);
        snprintf(name, sizeof name, "nvjpeg %.200s: %s", c->name,
                 must ? "decoded" : refuse ? "refused with a reason"
                 : c->expect == EXPECT_MAYBE ? "decoded or refused with a reason" : "no crash");
        CHECK(must ? p->ok : refuse ? !p->ok && p->why[0] : (p->ok || p->why[0]), name,
              "%s", p->ok ? "decoded" : p->why);
        if (c->expect == EXPECT_HYBRID && !strcmp(nvj_backend(d), "hardware")) {
            snprintf(name, sizeof name, "nvjpeg %.200s: by the hybrid backend", c->name);
            CHECK(p->ok && !p->hardware, name, "%s", p->ok ? "by the engines" : p->why);
        }
        if (p->ok && c->expect != EXPECT_EITHER) {
            int w = 0, h = 0;
            unsigned char *host = download(p), *tj = turbo_decode(c->jpg, c->len, p->channels,
                                                                  &w, &h);
            snprintf(name, sizeof name, "nvjpeg %.200s: size and pixels %s libjpeg-turbo's",
                     c->name, p->hardware ? "==" : "close to");
            if (!tj || w != p->width || h != p->height) {
                CHECK(0, name, "libjpeg-turbo: %dx%d", w, h);
            } else {
                diff_stats s = compare(host, tj, (size_t)w * h * p->channels);
                printf("# %s vs libjpeg-turbo: max |d| %d, %.2f%% of samples differ, mean |d| "
                       "%.3f, PSNR %.1f dB\n", c->name, s.maxd, s.pct, s.mean, s.psnr);
                CHECK(p->hardware ? s.maxd == 0 : s.psnr >= 30 && s.mean < 2, name,
                      "max |d| %d, mean %.3f, PSNR %.1f dB", s.maxd, s.mean, s.psnr);
            }
            check_edges(c->name, p, host);
            if (first_i < 0 && c->expect == EXPECT_OK) {
                first_i = i;
                first = host;
                host = NULL;
            }
            free(host);
            free(tj);
        }
    }
    for (int i = 0; i < ncases; i++)
        nvj_release(d, &pics[i]);
    /* after the broken files: the same good file again, the same pixels */
    if (first_i >= 0) {
        nvj_pic again;
        memset(&again, 0, sizeof again);
        again.data = cases[first_i].jpg;
        again.len = cases[first_i].len;
        int ok = nvj_decode(d, &again, 1) == 0 && again.ok;
        unsigned char *h2 = ok ? download(&again) : NULL;
        CHECK(ok && !memcmp(h2, first, (size_t)again.width * again.height * again.channels),
              "nvjpeg decodes a good file identically after the broken ones", "%s",
              ok ? "pixels differ" : again.why);
        nvj_release(d, &again);
        free(h2);
    }
    free(first);
    if (nbench)
        bench(d, nbench);
    free(pics);
    for (int i = 0; i < ncases; i++)
        free(cases[i].jpg);
    {
        double t0 = now_s();
        nvj_close(&d);
        printf("# nvj_close %.0f ms\n", (now_s() - t0) * 1e3);
    }
    CHECK(cudaDeviceSynchronize() == cudaSuccess, "nvjpeg no CUDA error left", "%s",
          cudaGetErrorString(cudaGetLastError()));
    CHECK_EXIT();
}
