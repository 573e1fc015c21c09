/*
 * jobs.c — the job list: the single-output form or a -o DIR batch (named
 * inputs, directories, --from-file), each job's output name and kind, and
 * what is refused before any work (DESIGN.md §3, §6); and an engine's
 * claims on jobs it takes ahead (lane_claim: src_image.c and startup.c
 * claim, src_media.c serves them first).
 */
#include "run_int.h"
#include "image_av.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util.h"

static int add_job(run_ctx *c, const char *input, const char *output)
{
    job *j;
    if (c->njobs == c->cap) {
        int cap = c->cap ? 2 * c->cap : 16;
        job *p = realloc(c->jobs, (size_t)cap * sizeof *p);
        if (!p)
            return -1;
        c->jobs = p;
        c->cap = cap;
    }
    j = &c->jobs[c->njobs];
    memset(j, 0, sizeof *j);
    j->lane = -1; /* no engine took it yet */
    j->input = strdup(input);
    j->output = output ? strdup(output) : NULL;
    if (!j->input || (output && !j->output)) {
        free(j->input);
        free(j->output);
        return -1;
    }
    c->njobs++;
    return 0;
}

/* Extensions a directory expands to (what stb_image reads, image_av's
 * formats, videos). */
static int is_media_name(const char *name)
{
    static const char *const ext[] = {"png", "jpg", "jpeg", "bmp", "tga", "gif", "psd",
                                      "hdr", "pnm", "ppm", "pgm", "pic",
                                      "mp4", "mkv", "mov", "avi", "webm", "y4m", "m4v",
                                      "ts", "mts", "m2ts", "mpg", "mpeg", "flv", "wmv",
                                      "nut", "ogv", "3gp", NULL};
    char buf[16];
    const char *e = ge_ext(name, buf, sizeof buf);
    for (int i = 0; ext[i]; i++)
        if (!strcmp(e, ext[i]))
            return 1;
    return imgav_is_image_ext(e); /* libavcodec's image formats */
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A directory INPUT stands for its media files (not recursive, sorted). */
static int add_dir(run_ctx *c, const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    char **names = NULL;
    size_t n = 0, cap = 0;
    int ret = 0;
    if (!d) {
        ge_err(dir, "cannot read directory: %s", strerror(errno));
        return -1;
    }
    while ((de = readdir(d))) {
        struct stat st;
        char *path;
        if (de->d_name[0] == '.' || !is_media_name(de->d_name))
            continue;
        if (asprintf(&path, "%s/%s", dir, de->d_name) < 0) {
            ret = -1;
            break;
        }
        if (stat(path, &st) || !S_ISREG(st.st_mode)) {
            free(path);
            continue;
        }
        if (n == cap) {
            cap = cap ? 2 * cap : 32;
            char **p = realloc(names, cap * sizeof *p);
            if (!p) {
                free(path);
                ret = -1;
                break;
            }
            names = p;
        }
        names[n++] = path;
    }
    closedir(d);
    if (names)
        qsort(names, n, sizeof *names, cmp_str);
    for (size_t i = 0; i < n; i++) {
        if (!ret && add_job(c, names[i], NULL))
            ret = -1;
        free(names[i]);
    }
    free(names);
    if (!ret && n == 0 && ge_verbose)
        ge_note("%s: no image or video files in this directory", dir);
    return ret;
}

static int add_input(run_ctx *c, const char *in)
{
    struct stat st;
    if (c->batch && stat(in, &st) == 0 && S_ISDIR(st.st_mode))
        return add_dir(c, in);
    return add_job(c, in, NULL);
}

/* --from-file LIST ("-" = stdin): one name a line, or with -0 one name a
 * NUL-terminated record, as find -print0 writes them (a name may then hold
 * a newline).  Empty names are skipped; '#' is no comment (a file may be
 * named so).  A NUL byte in a newline list means a -print0 list read
 * without -0: refused, or every name after the first would be lost.
 * 0, or the exit status (reported). */
static int add_from_file(run_ctx *c, const char *list, int nul)
{
    FILE *fp = strcmp(list, "-") ? fopen(list, "r") : stdin;
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    long n = 0;
    int ret = 0;
    if (!fp) {
        ge_err(list, "cannot open input list: %s", strerror(errno));
        return GE_EXIT_FAIL;
    }
    while ((len = getdelim(&line, &cap, nul ? '\0' : '\n', fp)) >= 0) {
        n++;
        if (nul) {
            if (len > 0 && line[len - 1] == '\0')
                len--;
        } else if (memchr(line, '\0', (size_t)len)) {
            ge_err(list, "line %ld: a NUL byte in a list of one name a line (use -0 for "
                         "NUL-separated names, as find -print0 writes)", n);
            ret = GE_EXIT_USAGE;
            break;
        } else {
            while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
                len--;
        }
        line[len] = '\0';
        if (len == 0)
            continue;
        if (add_input(c, line)) {
            ret = GE_EXIT_FAIL;
            break;
        }
    }
    if (!ret && ferror(fp)) {
        ge_err(list, "cannot read input list: %s", strerror(errno));
        ret = GE_EXIT_FAIL;
    }
    free(line);
    if (fp != stdin)
        fclose(fp);
    return ret;
}

/* DIR/<stem>.<ext> for batch outputs. */
static char *batch_output(const char *dir, const char *input, const char *ext)
{
    const char *base = strrchr(input, '/');
    const char *dot;
    char *out;
    size_t dl = strlen(dir);
    base = base ? base + 1 : input;
    dot = strrchr(base, '.');
    if (!dot || dot == base)
        dot = base + strlen(base);
    while (dl > 1 && dir[dl - 1] == '/')
        dl--;
    if (asprintf(&out, "%.*s/%.*s.%s", (int)dl, dir, (int)(dot - base), base, ext) < 0)
        return NULL;
    return out;
}

/* What the output name asks for: an image, a video, or an image sequence
 * (a pattern such as frames/e_%05d.png; never for a `literal` name, a
 * batch's DIR/<stem>.<ext>, whose stem is a file's own name).  Prints one
 * line and returns -1 when the pair of input and output cannot work. */
static int classify_output(job *j, int literal)
{
    const char *out = j->output;
    char buf[16];
    const char *e = ge_ext(out, buf, sizeof buf);
    struct stat st;
    int special = !strcmp(out, "-") ||
                  (stat(out, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode));
    j->fmt = img_format_from_path(out);
    if (!literal && vid_is_sequence(out)) {
        if (j->fmt == IMG_FMT_UNKNOWN) {
            ge_err(out, "an image-sequence pattern needs an image extension (.png .jpg .bmp .tga .pgm .tiff .webp)");
            return -1;
        }
        j->out_kind = OUT_SEQUENCE;
        return 0;
    }
    if (venc_format_ok(e)) {
        j->out_kind = OUT_VIDEO;
        snprintf(j->vext, sizeof j->vext, "%s", e);
        return 0;
    }
    if (j->fmt == IMG_FMT_UNKNOWN && special) {
        /* stdout, /dev/null or a FIFO without a known extension: no name
         * to go by, written in place (DESIGN.md §6): y4m for video, PGM else. */
        if (j->video_in) {
            j->out_kind = OUT_VIDEO;
            snprintf(j->vext, sizeof j->vext, "y4m");
        } else {
            j->out_kind = OUT_IMAGE;
            j->fmt = IMG_FMT_PGM;
        }
        return 0;
    }
    if (j->fmt == IMG_FMT_UNKNOWN) {
        if (*e)
            ge_err(out, "unknown output format '.%s' (use .png .jpg .jpeg .bmp .tga .pgm .tiff .webp, "
                        ".mkv .mp4 .y4m, or a pattern like e_%%05d.png)", e);
        else
            ge_err(out, "no extension to choose the output format by (use .png .jpg .jpeg .bmp "
                        ".tga .pgm .tiff .webp, .mkv .mp4 .y4m, or a pattern like e_%%05d.png)");
        return -1;
    }
    if (j->video_in) {
        ge_err(out, "a video input needs a video output (.mkv .mp4 .y4m) or an image-sequence "
                    "pattern such as e_%%05d.png");
        return -1;
    }
    j->out_kind = OUT_IMAGE;
    return 0;
}

/* INPUT OUTPUT: one job. */
static int plan_single(run_ctx *c)
{
    cli_opts *o = c->o;
    if (add_job(c, o->inputs[0], o->output))
        return -1;
    if (strcmp(o->inputs[0], "-")) {
        c->jobs[0].video_in = vid_probe(o->inputs[0]) == 1;
    } else {
        /* stdin cannot be probed twice: a video output means a video
         * stream (y4m, nut, ...), anything else an image */
        char buf[16];
        c->jobs[0].video_in = venc_format_ok(ge_ext(o->output, buf, sizeof buf)) ||
                              vid_is_sequence(o->output);
    }
    return classify_output(&c->jobs[0], 0) ? GE_EXIT_USAGE : 0;
}

/* Collisions (a.png and a.jpg -> a.png) are an error before any work. */
static int batch_collisions(run_ctx *c)
{
    char **names = malloc((size_t)c->njobs * sizeof *names);
    int bad = 0;
    if (!names)
        return -1;
    for (int i = 0; i < c->njobs; i++)
        names[i] = c->jobs[i].output;
    qsort(names, (size_t)c->njobs, sizeof *names, cmp_str);
    for (int i = 1; i < c->njobs; i++)
        if (!strcmp(names[i], names[i - 1]) && (i < 2 || strcmp(names[i], names[i - 2]))) {
            ge_err(names[i], "several inputs would write this output; rename one or use separate batches");
            bad = 1;
        }
    free(names);
    return bad ? GE_EXIT_USAGE : 0;
}

/* Only with the plan known to be good is the directory made: a usage
 * error leaves nothing behind. */
static int make_outdir(const char *dir)
{
    struct stat st;
    if (stat(dir, &st) != 0) {
        /* Runs started together (GNU parallel, a Slurm array) race to
         * create it: one that finds it made meanwhile goes on. */
        if (errno != ENOENT || (mkdir(dir, 0777) != 0 &&
                                !(errno == EEXIST && stat(dir, &st) == 0 &&
                                  S_ISDIR(st.st_mode)))) {
            ge_err(dir, "cannot create output directory: %s", strerror(errno));
            return GE_EXIT_FAIL;
        }
    } else if (!S_ISDIR(st.st_mode)) {
        ge_err(dir, "not a directory");
        return GE_EXIT_USAGE;
    }
    return 0;
}

/* Does name stand for this process's standard stream fd (0 or 1): "-", or
 * a path to the same pipe or socket (/dev/stdout, /proc/self/fd/1)?
 * (Not /dev/null and the like: several outputs may go there.) */
static int names_stream(const char *name, int fd)
{
    struct stat a, b;
    if (!name)
        return 0;
    if (!strcmp(name, "-"))
        return 1;
    return fstat(fd, &a) == 0 && (S_ISFIFO(a.st_mode) || S_ISSOCK(a.st_mode)) &&
           stat(name, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* Standard input named n times (list: once as --from-file's list). */
static int stdin_twice(int n, int list)
{
    ge_err("-", "standard input is named %d times (%s); it can be read only once", n,
           list ? "as --from-file's list and as an input" : "as inputs");
    return GE_EXIT_USAGE;
}

/* -o DIR INPUT...: one job an input file, DIR/<stem>.<ext> each. */
static int plan_batch(run_ctx *c)
{
    cli_opts *o = c->o;
    /* --format applies to the inputs it fits: an image format to images,
     * a video format to videos; the others keep png / mkv. */
    int fmt_is_video = o->format && venc_format_ok(o->format);
    int r;
    for (int i = 0; i < o->ninputs; i++)
        if (add_input(c, o->inputs[i]))
            return GE_EXIT_FAIL;
    if (o->from_file && names_stream(o->from_file, 0))
        for (int i = 0; i < c->njobs; i++)
            if (names_stream(c->jobs[i].input, 0))
                return stdin_twice(2, 1); /* (before the list consumes it) */
    if (o->from_file && (r = add_from_file(c, o->from_file, o->null_list)))
        return r;
    if (c->njobs <= 0) {
        ge_err(NULL, "no input files");
        return GE_EXIT_USAGE;
    }
    for (int i = 0; i < c->njobs; i++) {
        job *j = &c->jobs[i];
        const char *ext;
        j->video_in = vid_probe(j->input) == 1;
        if (j->video_in)
            ext = fmt_is_video ? o->format : "mkv";
        else
            ext = o->format && !fmt_is_video ? o->format : "png";
        j->output = batch_output(o->outdir, j->input, ext);
        if (!j->output)
            return -1;
        if (classify_output(j, 1))
            return GE_EXIT_USAGE;
    }
    return 0;
}

/* One writer on standard output (an image or video there and --hist's CSV
 * would interleave into one stream), one reader of standard input (the
 * second would find it consumed).  0, or GE_EXIT_USAGE (reported). */
static int check_streams(const run_ctx *c)
{
    const cli_opts *o = c->o;
    char outs[64] = "";
    int nout = 0, nin = o->from_file && names_stream(o->from_file, 0);
    const char *out_names[] = {c->batch ? NULL : c->jobs[0].output, o->hist_file,
                               o->report_file};
    const char *labels[] = {"OUTPUT", "--hist", "--report-file"};
    for (int i = 0; i < 3; i++)
        if (names_stream(out_names[i], 1)) {
            size_t len = strlen(outs);
            snprintf(outs + len, sizeof outs - len, "%s%s", nout ? " and " : "", labels[i]);
            nout++;
        }
    if (nout > 1) {
        ge_err("-", "standard output is named for %s; give all but one a file name", outs);
        return GE_EXIT_USAGE;
    }
    for (int i = 0; i < c->njobs; i++)
        nin += names_stream(c->jobs[i].input, 0);
    if (nin > 1)
        return stdin_twice(nin, o->from_file && names_stream(o->from_file, 0));
    return 0;
}

/* Two names for one file: the same path, or two paths to one existing
 * regular file (devices and pipes such as /dev/null may take several). */
static int same_file_name(const char *a, const char *b)
{
    struct stat sa, sb;
    if (!a || !b || !strcmp(a, "-") || !strcmp(b, "-"))
        return 0;
    if (stat(a, &sa) == 0)
        return S_ISREG(sa.st_mode) && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
               sa.st_ino == sb.st_ino;
    return !strcmp(a, b);
}

/* --hist and --report-file each need a file of their own: written to the
 * same name as each other or as an output, one would replace the other at
 * its commit.  0, or GE_EXIT_USAGE (reported). */
static int check_side_files(const run_ctx *c)
{
    const cli_opts *o = c->o;
    const char *side[] = {o->hist_file, o->report_file};
    const char *labels[] = {"--hist", "--report-file"};
    if (same_file_name(side[0], side[1])) {
        ge_err(side[0], "named for both --hist and --report-file; each needs a file of its own");
        return GE_EXIT_USAGE;
    }
    for (int k = 0; k < 2; k++)
        for (int i = 0; side[k] && i < c->njobs; i++)
            if (c->jobs[i].out_kind != OUT_SEQUENCE && same_file_name(side[k], c->jobs[i].output)) {
                ge_err(side[k], "named for both %s and %s's output; each needs a file of its own",
                       labels[k], c->jobs[i].input);
                return GE_EXIT_USAGE;
            }
    return 0;
}

/* Refuse up front what would fail at the end: no work is wasted. */
static void refuse_existing(run_ctx *c)
{
    const cli_opts *o = c->o;
    for (int i = 0; i < c->njobs; i++) {
        job *j = &c->jobs[i];
        struct stat st;
        if (so_same_file(j->output, c->inputs, c->njobs)) {
            ge_err(j->output, "output is the same file as an input; refusing to overwrite it");
            j->state = JOB_FAILED;
            continue;
        }
        if (j->out_kind != OUT_SEQUENCE && strcmp(j->output, "-") && stat(j->output, &st) == 0 &&
            S_ISREG(st.st_mode)) {
            if (o->skip_existing) {
                j->state = JOB_SKIPPED;
                if (!ge_quiet)
                    ge_note("%s: skipped (output %s exists)", j->input, j->output);
            } else if (!o->overwrite) {
                ge_err(j->output, "output exists (use -y to overwrite)");
                j->state = JOB_FAILED;
            }
        }
    }
}

/* The jobs of the run.  0, or the exit status after one line. */
int plan_jobs(run_ctx *c)
{
    int r;
    c->batch = c->o->outdir != NULL;
    r = c->batch ? plan_batch(c) : plan_single(c);
    if (!r && !(r = check_streams(c)))
        r = check_side_files(c);
    if (!r && c->batch && !(r = batch_collisions(c)))
        r = make_outdir(c->o->outdir);
    if (r > 0)
        return r;
    if (r == 0 && (c->inputs = malloc((size_t)c->njobs * sizeof *c->inputs))) {
        for (int i = 0; i < c->njobs; i++)
            c->inputs[i] = c->jobs[i].input;
        refuse_existing(c);
        return 0;
    }
    ge_err(NULL, "out of memory");
    return GE_EXIT_FAIL;
}

const char *job_name_cb(void *ctx, int j)
{
    run_ctx *c = ctx;
    return j >= 0 && j < c->njobs ? c->jobs[j].input : NULL;
}

/* Does job j's output take frames coded as FFVHuff on the GPU (a video
 * whose codec is FFVHuff)?  (pipe_opts.code_job) */
int code_job_cb(void *ctx, int j)
{
    const run_ctx *c = ctx;
    const job *jb = &c->jobs[j];
    return jb->out_kind == OUT_VIDEO && venc_is_ffvhuff(jb->vext, c->o->codec);
}

/* Does job j write PNG files (an image, or a video's frames as a PNG
 * sequence), whose image data the GPU may code (pipe_opts.png_job)? */
int png_job_cb(void *ctx, int j)
{
    const run_ctx *c = ctx;
    const job *jb = &c->jobs[j];
    return (jb->out_kind == OUT_IMAGE || jb->out_kind == OUT_SEQUENCE) &&
           jb->fmt == IMG_FMT_PNG;
}

/* May job j go to an engine that decodes in software beside NVDEC's
 * (engines.c mix_lanes)?  Where its writer leaves the cores free: frames
 * coded on the GPU (.mkv) or written raw (.y4m).  Other writers (H.264,
 * FFV1, image sequences) need the cores themselves. */
int job_mix_decoders(const run_ctx *c, int j)
{
    const job *jb = &c->jobs[j];
    return jb->out_kind == OUT_VIDEO &&
           (code_job_cb((void *)c, j) || !strcmp(jb->vext, "y4m"));
}

void jobs_free(run_ctx *c)
{
    for (int i = 0; i < c->njobs; i++) {
        free(c->jobs[i].hist_rows);
        free(c->jobs[i].input);
        free(c->jobs[i].output);
    }
    free(c->jobs);
    free(c->inputs);
    c->jobs = NULL;
    c->inputs = NULL;
    c->njobs = 0;
}

/* A job taken from the queue ahead for this engine (early_open's, an
 * nvJPEG group's): served before the queue's next. */
void lane_claim(run_ctx *c, int ji)
{
    c->jobs[ji].lane = c->lane; /* (its failure hands them back too) */
    if (c->nclaim < (int)(sizeof c->claim / sizeof c->claim[0]))
        c->claim[c->nclaim++] = ji;
    else
        jq_retry(&c->sh->q, ji); /* (never: callers stay within it) */
}
