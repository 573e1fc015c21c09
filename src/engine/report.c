/*
 * report.c — the --report table (DESIGN.md §5): per stage count, total, median,
 * p10, p90 in ms; then frames, pixels, wall, fps, Mpx/s and the stage that
 * bounds throughput.  Text or one JSON object (C locale numbers: we never
 * call setlocale, so printf uses '.').
 */
#include "report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const stage_names[REP_NSTAGES] = {
    "decode", "upload", "grey", "blur_h", "blur_v", "sobel", "histogram",
    "download", "write", "compute", "cpu_ref", "nms", "hysteresis"
};

void rep_init(rep_stats *r)
{
    memset(r, 0, sizeof *r);
    r->startup_cuda_s = r->startup_engine_s = r->startup_decoded_s = r->startup_written_s = -1;
    pthread_mutex_init(&r->mu, NULL);
}

void rep_free(rep_stats *r)
{
    for (int i = 0; i < REP_NSTAGES; i++)
        free(r->ms[i]);
    for (size_t i = 0; i < r->nfiles; i++)
        free(r->files[i].name);
    free(r->files);
    free(r->engines);
    pthread_mutex_destroy(&r->mu);
    memset(r, 0, sizeof *r);
}

void rep_add(rep_stats *r, int stage, double ms)
{
    pthread_mutex_lock(&r->mu);
    if (r->n[stage] == r->cap[stage]) {
        size_t cap = r->cap[stage] ? 2 * r->cap[stage] : 64;
        double *p = realloc(r->ms[stage], cap * sizeof *p);
        if (!p) {
            pthread_mutex_unlock(&r->mu);
            return; /* a report short of samples beats a failed run */
        }
        r->ms[stage] = p;
        r->cap[stage] = cap;
    }
    r->ms[stage][r->n[stage]++] = ms;
    pthread_mutex_unlock(&r->mu);
}

void rep_add_file(rep_stats *r, const char *name, long frames, double seconds, int damaged)
{
    char *n;
    pthread_mutex_lock(&r->mu);
    if (r->nfiles == r->capfiles) {
        size_t cap = r->capfiles ? 2 * r->capfiles : 16;
        struct rep_file *p = realloc(r->files, cap * sizeof *p);
        if (!p)
            goto end;
        r->files = p;
        r->capfiles = cap;
    }
    if ((n = strdup(name))) {
        r->files[r->nfiles].name = n;
        r->files[r->nfiles].frames = frames;
        r->files[r->nfiles].seconds = seconds;
        r->files[r->nfiles].damaged = damaged;
        r->nfiles++;
    }
end:
    pthread_mutex_unlock(&r->mu);
}

void rep_add_engine(rep_stats *r, const char *name, long files, long long frames, double busy_s)
{
    struct rep_engine *p;
    pthread_mutex_lock(&r->mu);
    p = realloc(r->engines, (r->nengines + 1) * sizeof *p);
    if (p) {
        r->engines = p;
        p += r->nengines++;
        snprintf(p->name, sizeof p->name, "%s", name);
        p->files = files;
        p->frames = frames;
        p->busy_s = busy_s;
    }
    pthread_mutex_unlock(&r->mu);
}

void rep_merge(rep_stats *dst, const rep_stats *src)
{
    for (int st = 0; st < REP_NSTAGES; st++)
        for (size_t i = 0; i < src->n[st]; i++)
            rep_add(dst, st, src->ms[st][i]);
    dst->frames += src->frames;
    dst->pixels += src->pixels;
    if (!dst->backend)
        dst->backend = src->backend;
    if (src->path && (!dst->path || strstr(src->path, "strips")))
        dst->path = src->path;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct summary {
    size_t n;
    double total, median, p10, p90;
} summary;

/* Nearest-rank percentiles over a sorted copy. */
static summary summarise(const rep_stats *r, int stage)
{
    summary s = {0};
    size_t n = r->n[stage];
    double *v;
    if (!n || !(v = malloc(n * sizeof *v)))
        return s;
    memcpy(v, r->ms[stage], n * sizeof *v);
    qsort(v, n, sizeof *v, cmp_double);
    s.n = n;
    for (size_t i = 0; i < n; i++)
        s.total += v[i];
    s.median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    s.p10 = v[(size_t)(0.10 * (double)(n - 1) + 0.5)];
    s.p90 = v[(size_t)(0.90 * (double)(n - 1) + 0.5)];
    free(v);
    return s;
}

/* The stage with the largest total bounds throughput: in a pipeline the
 * stages overlap, so the slowest one sets the pace.  `compute` is the sum
 * of the GPU kernel stages, so it competes instead of them. */
static int bounding_stage(const summary *s)
{
    /* cpu_ref runs in the writer thread, so it competes as part of it */
    static const int cand[] = {REP_DECODE, REP_UPLOAD, REP_COMPUTE, REP_DOWNLOAD, REP_WRITE,
                               REP_CHECK};
    int best = -1;
    for (size_t i = 0; i < sizeof cand / sizeof cand[0]; i++)
        if (s[cand[i]].n && (best < 0 || s[cand[i]].total > s[best].total))
            best = cand[i];
    return best;
}

/* A start-up figure: seconds, or null / "n/a" when not measured. */
static void startup_value(FILE *fp, int json, double v)
{
    if (v >= 0)
        fprintf(fp, json ? "%.6f" : "%.3f s", v);
    else
        fputs(json ? "null" : "n/a", fp);
}

/* Start-up: what a short clip pays before its frames flow. */
static void startup_print(const rep_stats *r, int json, FILE *fp)
{
    static const char *const name[2][4] = {
        {"CUDA ready", "engine started", "first frame decoded", "first frame written"},
        {"cuda_ready_s", "engine_start_s", "first_decoded_s", "first_written_s"}};
    const double v[4] = {r->startup_cuda_s, r->startup_engine_s, r->startup_decoded_s,
                         r->startup_written_s};
    if (r->startup_engine_s < 0)
        return;
    fputs(json ? ",\"startup\":{" : "  start-up (from the run's start): ", fp);
    for (int i = 0; i < 4; i++) {
        fprintf(fp, json ? "%s\"%s\":" : "%s%s ", i ? (json ? "," : ", ") : "", name[json][i]);
        startup_value(fp, json, v[i]);
    }
    if (json)
        fprintf(fp, ",\"engine_wall_s\":%.6f}", r->wall_s);
    else
        fprintf(fp, "; engine wall %.3f s\n", r->wall_s);
}

static void json_string(FILE *fp, const char *s)
{
    fputc('"', fp);
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(fp, "\\%c", c);
        else if (c < 0x20)
            fprintf(fp, "\\u%04x", c);
        else
            fputc(c, fp);
    }
    fputc('"', fp);
}

void rep_print(const rep_stats *r, int json, FILE *fp)
{
    summary s[REP_NSTAGES];
    double sum = 0, fps, mpx;
    int bound;
    for (int i = 0; i < REP_NSTAGES; i++)
        s[i] = summarise(r, i);
    /* compute is the sum of the kernel stages when those were timed (GPU);
     * on the CPU backend it is the only compute figure */
    for (int i = 0; i < REP_NSTAGES; i++)
        if (i != REP_COMPUTE || !s[REP_GREY].n)
            sum += s[i].total;
    /* fused Canny: compute already holds its NMS and hysteresis */
    if (!s[REP_GREY].n)
        sum -= s[REP_NMS].total + s[REP_HYST].total;
    bound = bounding_stage(s);
    fps = r->wall_s > 0 ? (double)r->frames / r->wall_s : 0;
    mpx = r->wall_s > 0 ? (double)r->pixels / r->wall_s / 1e6 : 0;
    if (json) {
        int first = 1;
        fprintf(fp, "{\"backend\":");
        json_string(fp, r->backend);
        fprintf(fp, ",\"path\":");
        json_string(fp, r->path);
        fprintf(fp, ",\"device\":");
        json_string(fp, r->device);
        fprintf(fp, ",\"stages\":{");
        for (int i = 0; i < REP_NSTAGES; i++) {
            if (!s[i].n)
                continue;
            fprintf(fp, "%s\"%s\":{\"count\":%zu,\"total_ms\":%.6f,\"median_ms\":%.6f,"
                        "\"p10_ms\":%.6f,\"p90_ms\":%.6f}",
                    first ? "" : ",", stage_names[i], s[i].n, s[i].total, s[i].median,
                    s[i].p10, s[i].p90);
            first = 0;
        }
        fprintf(fp, "},\"frames\":%lld,\"pixels\":%lld,\"wall_s\":%.6f,"
                    "\"stage_sum_ms\":%.6f,\"fps\":%.3f,\"mpx_per_s\":%.3f,\"bound_by\":",
                r->frames, r->pixels, r->wall_s, sum, fps, mpx);
        json_string(fp, bound >= 0 ? stage_names[bound] : "");
        fprintf(fp, ",\"damaged_files\":%ld", r->damaged_files);
        if (r->video_nvdec || r->video_sw)
            fprintf(fp, ",\"video_decoded\":{\"nvdec\":%lld,\"software\":%lld},"
                        "\"video_chained\":%ld",
                    r->video_nvdec, r->video_sw, r->video_chained);
        startup_print(r, 1, fp);
        if (r->nfiles) {
            fprintf(fp, ",\"files\":[");
            for (size_t i = 0; i < r->nfiles; i++) {
                const struct rep_file *f = &r->files[i];
                fprintf(fp, "%s{\"file\":", i ? "," : "");
                json_string(fp, f->name);
                fprintf(fp, ",\"frames\":%ld,\"seconds\":%.6f,\"fps\":%.3f,\"status\":\"%s\"}",
                        f->frames, f->seconds, f->seconds > 0 ? f->frames / f->seconds : 0,
                        f->damaged ? "damaged" : "ok");
            }
            fprintf(fp, "]");
        }
        if (r->nengines) {
            fprintf(fp, ",\"engines\":[");
            for (size_t i = 0; i < r->nengines; i++) {
                const struct rep_engine *e = &r->engines[i];
                fprintf(fp, "%s{\"engine\":%zu,\"device\":", i ? "," : "", i);
                json_string(fp, e->name);
                fprintf(fp, ",\"files\":%ld,\"frames\":%lld,\"busy_s\":%.6f}", e->files,
                        e->frames, e->busy_s);
            }
            fprintf(fp, "]");
        }
        fprintf(fp, "}\n");
        return;
    }
    fprintf(fp, "gpuedge report: backend %s, %s path%s%s\n", r->backend ? r->backend : "?",
            r->path ? r->path : "?", r->device[0] ? ", " : "", r->device);
    fprintf(fp, "  %-10s %7s %12s %10s %10s %10s\n", "stage", "count", "total ms",
            "median", "p10", "p90");
    for (int i = 0; i < REP_NSTAGES; i++) {
        if (!s[i].n)
            continue;
        fprintf(fp, "  %-10s %7zu %12.3f %10.4f %10.4f %10.4f%s\n", stage_names[i], s[i].n,
                s[i].total, s[i].median, s[i].p10, s[i].p90,
                i == REP_COMPUTE && s[REP_GREY].n ? "  (the kernel stages above, end to end)"
                : i == REP_COMPUTE && r->path && !strcmp(r->path, "fused") && s[REP_NMS].n
                    ? "  (fused kernel, nms, hysteresis)"
                : i == REP_COMPUTE && r->path && !strcmp(r->path, "fused") ? "  (one fused kernel)"
                : "");
    }
    fprintf(fp, "  frames %lld, pixels %lld, wall %.3f s (stages sum %.3f s), "
                "%.2f fps, %.2f Mpx/s\n",
            r->frames, r->pixels, r->wall_s, sum / 1e3, fps, mpx);
    if (bound >= 0)
        fprintf(fp, "  bound by: %s\n", stage_names[bound]);
    if (r->damaged_files)
        fprintf(fp, "  damaged videos: %ld (their frames decoded stand)\n", r->damaged_files);
    if (r->video_nvdec || r->video_sw)
        fprintf(fp, "  video frames decoded: %lld on NVDEC, %lld in software\n", r->video_nvdec,
                r->video_sw);
    if (r->video_chained)
        fprintf(fp, "  videos chained: %ld (decoded on by the decoder of the file before)\n",
                r->video_chained);
    startup_print(r, 0, fp);
    if (r->nfiles) {
        fprintf(fp, "  per file (decode start to output committed; files overlap):\n");
        fprintf(fp, "  %8s %10s %10s  %s\n", "frames", "seconds", "fps", "file");
        for (size_t i = 0; i < r->nfiles; i++) {
            const struct rep_file *f = &r->files[i];
            fprintf(fp, "  %8ld %10.4f %10.2f  %s%s\n", f->frames, f->seconds,
                    f->seconds > 0 ? f->frames / f->seconds : 0, f->name,
                    f->damaged ? "  (damaged)" : "");
        }
    }
    if (r->nengines) {
        fprintf(fp, "  per engine (files taken from one queue, largest first):\n");
        fprintf(fp, "  %6s %6s %8s %10s  %s\n", "engine", "files", "frames", "busy s", "device");
        for (size_t i = 0; i < r->nengines; i++) {
            const struct rep_engine *e = &r->engines[i];
            fprintf(fp, "  %6zu %6ld %8lld %10.3f  %s\n", i, e->files, e->frames, e->busy_s,
                    e->name);
        }
    }
}
