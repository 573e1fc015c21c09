/*
 * cli.c — option parsing (DESIGN.md §3).  Returns a status; never exits.
 */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "png_out.h"
#include "util.h"
#include "video_io.h"

enum {
    OPT_SIGMA = 256, OPT_BORDER, OPT_SCALE, OPT_THRESHOLD, OPT_INVERT,
    OPT_RGB, OPT_REPORT, OPT_REPORT_FILE, OPT_HIST, OPT_CPU_REF,
    OPT_BACKEND, OPT_DEVICE, OPT_THREADS, OPT_FRAMES, OPT_START,
    OPT_FORMAT, OPT_SKIP_EXISTING, OPT_FROM_FILE, OPT_MEM_LIMIT,
    OPT_KEEP_PARTIAL, OPT_PROGRESS, OPT_NO_PROGRESS, OPT_STAGED,
    OPT_JPEG_DECODER, OPT_AUTO_ORIENT, OPT_NO_AUTO_ORIENT,
    OPT_CODEC, OPT_PRESET, OPT_CRF,
    OPT_PNG_LEVEL,
    OPT_HWDEC,
    OPT_CANNY, OPT_DEVICES, OPT_VIDEO_ENGINES, OPT_MKV_CRC
};

static const struct option long_opts[] = {
    {"sigma", required_argument, NULL, OPT_SIGMA},
    {"border", required_argument, NULL, OPT_BORDER},
    {"scale", required_argument, NULL, OPT_SCALE},
    {"threshold", required_argument, NULL, OPT_THRESHOLD},
    {"invert", no_argument, NULL, OPT_INVERT},
    {"canny", required_argument, NULL, OPT_CANNY},
    {"rgb", no_argument, NULL, OPT_RGB},
    {"report", optional_argument, NULL, OPT_REPORT},
    {"report-file", required_argument, NULL, OPT_REPORT_FILE},
    {"hist", required_argument, NULL, OPT_HIST},
    {"cpu-ref", optional_argument, NULL, OPT_CPU_REF},
    {"backend", required_argument, NULL, OPT_BACKEND},
    {"device", required_argument, NULL, OPT_DEVICE},
    {"devices", required_argument, NULL, OPT_DEVICES},
    {"video-engines", required_argument, NULL, OPT_VIDEO_ENGINES},
    {"threads", required_argument, NULL, OPT_THREADS},
    {"frames", required_argument, NULL, OPT_FRAMES},
    {"start", required_argument, NULL, OPT_START},
    {"format", required_argument, NULL, OPT_FORMAT},
    {"skip-existing", no_argument, NULL, OPT_SKIP_EXISTING},
    {"from-file", required_argument, NULL, OPT_FROM_FILE},
    {"mem-limit", required_argument, NULL, OPT_MEM_LIMIT},
    {"keep-partial", no_argument, NULL, OPT_KEEP_PARTIAL},
    {"progress", no_argument, NULL, OPT_PROGRESS},
    {"no-progress", no_argument, NULL, OPT_NO_PROGRESS},
    {"staged", no_argument, NULL, OPT_STAGED},
    {"jpeg-decoder", required_argument, NULL, OPT_JPEG_DECODER},
    {"auto-orient", no_argument, NULL, OPT_AUTO_ORIENT},
    {"no-auto-orient", no_argument, NULL, OPT_NO_AUTO_ORIENT},
    {"codec", required_argument, NULL, OPT_CODEC},
    {"mkv-crc", no_argument, NULL, OPT_MKV_CRC},
    {"preset", required_argument, NULL, OPT_PRESET},
    {"crf", required_argument, NULL, OPT_CRF},
    {"png-level", required_argument, NULL, OPT_PNG_LEVEL},
    {"hwdec", required_argument, NULL, OPT_HWDEC},
    {"null", no_argument, NULL, '0'},
    {"output-dir", required_argument, NULL, 'o'},
    {"overwrite", no_argument, NULL, 'y'},
    {"quiet", no_argument, NULL, 'q'},
    {"verbose", no_argument, NULL, 'v'},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0}
};

void cli_usage(FILE *fp)
{
    fputs(
"Usage: gpuedge [OPTIONS] INPUT OUTPUT\n"
"       gpuedge [OPTIONS] -o DIR INPUT...\n"
"Turn images and videos into edge maps: greyscale, separable Gaussian blur,\n"
"Sobel magnitude, 8-bit edge map and a 256-bin histogram, on the GPU (CUDA)\n"
"or on the CPU backend.  The output format follows OUTPUT's extension:\n"
"images .png .jpg .jpeg .bmp .tga .pgm .tif/.tiff .webp (lossless); videos\n"
".mkv (FFVHuff, lossless) .mp4 (H.264) .y4m; image sequences as a pattern\n"
"such as e_%05d.png.  Image inputs: PNG, JPEG, BMP, TGA, GIF, PSD, HDR, PIC,\n"
"PNM, and through libavcodec WebP, TIFF, JPEG 2000, OpenEXR, QOI, JPEG-LS,\n"
"PCX, SGI, Sun raster, XBM, XPM, XWD, DDS, PFM, PHM, PAM, DPX, PGX.\n"
"\n"
"Edge map:\n"
"      --sigma S           Gaussian sigma: 0 (no blur) or 0.1..16 [1.0]\n"
"      --border MODE       replicate, reflect101 or zero [replicate]\n"
"      --scale K           multiply the magnitude by K (> 0) [1]\n"
"      --threshold T       binary map: 255 where magnitude*scale >= T (0..255)\n"
"      --canny LOW,HIGH    Canny edges (0 or 255): non-maximum suppression,\n"
"                          then hysteresis on magnitude*scale with\n"
"                          0 <= LOW <= HIGH, e.g. 20,50\n"
"      --canny auto        the same with LOW and HIGH from each frame's own\n"
"                          histogram (see gpuedge(1))\n"
"      --invert            dark edges on white (255 - e; after --canny too)\n"
"      --rgb               video: grey from RGB (libswscale) instead of the\n"
"                          luma plane\n"
"\n"
"Decoding:\n"
"      --auto-orient       turn JPEGs upright by their EXIF orientation, as\n"
"                          cv2.imread and image viewers do [default]\n"
"      --no-auto-orient    keep JPEGs' pixels as stored (stb's old behaviour)\n"
"\n"
"Backend:\n"
"      --backend B         auto, gpu or cpu [auto]\n"
"      --device N          CUDA device index [0]\n"
"      --devices LIST      several GPUs at once: a list such as 0,1,3 or all;\n"
"                          one engine a device, the batch's files shared out\n"
"                          largest first (same outputs as one device)\n"
"      --video-engines N   batch of videos: N engines a device (1..8), each\n"
"                          decoding and encoding its own video [1]\n"
"      --hwdec MODE        video decoding: auto (with the GPU backend, NVDEC\n"
"                          for H.264, HEVC, VP9 and AV1 where it is faster:\n"
"                          >= 2 sessions and >= 1 Gpx, or <= 8 threads;\n"
"                          frames kept on the GPU), none (software) or nvdec\n"
"                          (every codec NVDEC has; needs the GPU) [auto]\n"
"      --staged            GPU: one kernel per stage (per-stage timing, every\n"
"                          plane checked by --cpu-ref) instead of the fused one\n"
"      --threads N         CPU threads, 0 = one per CPU this process may\n"
"                          use (affinity, cgroup quota) [0]\n"
"      --jpeg-decoder D    turbo (libjpeg-turbo: OpenCV's and Pillow's pixels),\n"
"                          stb (stb_image), or nvjpeg: batches of\n"
"                          JPEGs on the GPU's JPEG engines (needs the GPU\n"
"                          backend and libnvjpeg.so.13; pixels differ\n"
"                          slightly from libjpeg-turbo's) [turbo]\n"
"      --mem-limit SIZE    GPU/pinned memory and CPU scratch budget,\n"
"                          e.g. 512M; bigger frames go in strips\n"
"\n"
"Checking and reporting:\n"
"      --cpu-ref[=N]       check every (N-th) frame bit for bit against the\n"
"                          CPU reference; exit 3 on any mismatch\n"
"      --report[=FMT]      per-stage timing report, text or json\n"
"      --report-file FILE  write the report to FILE instead of stderr\n"
"      --hist FILE         write per-frame histograms as CSV to FILE\n"
"                          (file,frame,pts,b0..b255)\n"
"\n"
"Files and batches:\n"
"  -o, --output-dir DIR    batch mode: write DIR/<name>.<format> per input\n"
"                          (<name> literally: a % in it is no pattern)\n"
"      --format EXT        batch output format for the inputs it fits (an\n"
"                          image format: png jpg bmp tga pgm tiff webp; or\n"
"                          mkv/mp4/y4m for videos)\n"
"                          [png for images, mkv for videos]\n"
"      --png-level N       PNG compression, 0 (stored) .. 12 (smallest,\n"
"                          slowest); libdeflate's levels [1]\n"
"      --from-file LIST    read input names from LIST, one a line (- = stdin;\n"
"                          blank lines skipped, no comments)\n"
"  -0, --null              --from-file's names end with a NUL byte, not a\n"
"                          newline (find -print0, xargs -0)\n"
"      --skip-existing     batch: skip inputs whose output already exists\n"
"  -y, --overwrite         replace existing outputs\n"
"      --keep-partial      keep a failed output as NAME.partial.EXT\n"
"      --frames N          video: stop after N frames\n"
"      --start T           video: start at T seconds (from the first frame;\n"
"                          0 to 1e9)\n"
"      --codec NAME        video encoder: .mkv ffvhuff (default, lossless),\n"
"                          magicyuv, ffv1 (smallest, slowest), rawvideo or\n"
"                          libx264; .mp4 libx264; .y4m rawvideo\n"
"      --preset P          libx264 preset, ultrafast..placebo [" VENC_DEFAULT_PRESET "]\n"
"      --crf N             libx264 quality, 0 (lossless) to 51 [" VENC_DEFAULT_CRF "]\n"
"      --mkv-crc           .mkv: a CRC-32 element in each cluster (off by\n"
"                          default: it costs most of the writer's time)\n"
"\n"
"General:\n"
"  -q, --quiet             no notices, no progress\n"
"  -v, --verbose           more detail on stderr\n"
"      --progress          show a progress line on stderr (default: on a\n"
"                          terminal)\n"
"      --no-progress       never show progress\n"
"  -h, --help              show this help and exit\n"
"  -V, --version           show versions (libraries, CUDA, GPU) and exit\n"
"\n"
"Exit status: 0 ok, 1 runtime failure, 2 usage error, 3 --cpu-ref mismatch,\n"
"128+N stopped by signal N (130 SIGINT, 143 SIGTERM).  See gpuedge(1).\n", fp);
}

void cli_usage_hint(void)
{
    fputs("Try 'gpuedge --help' for more information.\n", stderr);
}

static int usage_error(const char *fmt, const char *arg)
{
    char msg[512];
    snprintf(msg, sizeof msg, fmt, arg);
    ge_err(NULL, "%s", msg);
    cli_usage_hint();
    return GE_EXIT_USAGE;
}

/* Keyword values (aliases beside the documented names). */
typedef struct choice {
    const char *name;
    int val;
} choice;

static const choice borders[] = {
    {"replicate", GE_BORDER_REPLICATE}, {"reflect101", GE_BORDER_REFLECT101},
    {"reflect_101", GE_BORDER_REFLECT101}, {"zero", GE_BORDER_ZERO},
    {"constant", GE_BORDER_ZERO}, {NULL, 0}};
static const choice reports[] = {{"text", CLI_REPORT_TEXT}, {"json", CLI_REPORT_JSON}, {NULL, 0}};
static const choice backends[] = {{"auto", CLI_BACKEND_AUTO}, {"gpu", CLI_BACKEND_GPU},
                                  {"cuda", CLI_BACKEND_GPU}, {"cpu", CLI_BACKEND_CPU}, {NULL, 0}};
static const choice hwdecs[] = {{"auto", CLI_HWDEC_AUTO}, {"none", CLI_HWDEC_NONE},
                                {"no", CLI_HWDEC_NONE}, {"nvdec", CLI_HWDEC_NVDEC},
                                {"cuda", CLI_HWDEC_NVDEC}, {NULL, 0}};
static const choice jpeg_decoders[] = {{"turbo", CLI_JPEG_TURBO}, {"libjpeg-turbo", CLI_JPEG_TURBO},
                                       {"nvjpeg", CLI_JPEG_NVJPEG}, {"stb", CLI_JPEG_STB},
                                       {NULL, 0}};

/* arg's value in ch into *out: 0, or -1 (not one of the names). */
static int pick(const char *arg, const choice *ch, int *out)
{
    for (; ch->name; ch++)
        if (!strcmp(arg, ch->name)) {
            *out = ch->val;
            return 0;
        }
    return -1;
}

/* Strict number parsers: the whole argument, finite, in range. */
static int parse_double(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

static int parse_long(const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

/* --devices: "all", or distinct indexes 0..1023 separated by commas. */
static int parse_devices(const char *s, cli_opts *o)
{
    const int max = (int)(sizeof o->devices / sizeof o->devices[0]);
    o->ndevices = 0;
    o->devices_all = !strcmp(s, "all");
    if (o->devices_all)
        return 0;
    for (;;) {
        char *end;
        long v;
        if (*s < '0' || *s > '9')
            return -1;
        errno = 0;
        v = strtol(s, &end, 10);
        if (errno || v > 1023 || o->ndevices == max || (*end && *end != ','))
            return -1;
        for (int i = 0; i < o->ndevices; i++)
            if (o->devices[i] == v)
                return -1;
        o->devices[o->ndevices++] = (int)v;
        if (!*end)
            break;
        s = end + 1;
    }
    o->device = o->devices[0];
    return 0;
}

/* SIZE with optional K/M/G/T suffix (powers of 1024; a trailing B or iB
 * is accepted). */
static int parse_size(const char *s, unsigned long long *out)
{
    char *end;
    errno = 0;
    if (*s == '-' || *s == '\0')
        return -1;
    double v = strtod(s, &end);
    if (errno || end == s || !isfinite(v) || v <= 0)
        return -1;
    double mul = 1;
    switch (*end) {
    case 'k': case 'K': mul = 1024.0; end++; break;
    case 'm': case 'M': mul = 1024.0 * 1024; end++; break;
    case 'g': case 'G': mul = 1024.0 * 1024 * 1024; end++; break;
    case 't': case 'T': mul = 1024.0 * 1024 * 1024 * 1024; end++; break;
    default: break;
    }
    if (*end == 'i')
        end++;
    if (*end == 'B' || *end == 'b')
        end++;
    if (*end || v * mul > 1.8e19 || v * mul < 1)
        return -1;
    *out = (unsigned long long)(v * mul);
    return 0;
}

/* --canny LOW,HIGH or auto: exactly two finite numbers >= 0, one comma,
 * LOW <= HIGH (compared as the floats they become). */
static int parse_canny(const char *s, ge_params *p)
{
    char buf[128];
    const char *comma = strchr(s, ',');
    double lo, hi;

    if (!strcmp(s, "auto")) {
        p->canny = GE_CANNY_AUTO;
        return 0;
    }
    if (!comma || strchr(comma + 1, ',') || (size_t)(comma - s) >= sizeof buf)
        return -1;
    memcpy(buf, s, (size_t)(comma - s));
    buf[comma - s] = '\0';
    /* strtod skips leading blanks: " 5" would pass, so no blanks at all */
    if (strpbrk(s, " \t\n\v\f\r") || parse_double(buf, &lo) || parse_double(comma + 1, &hi))
        return -1;
    if (!(lo >= 0) || !(hi >= 0) || lo > 3.4e38 || hi > 3.4e38 ||
        (float)lo > (float)hi)
        return -1;
    p->canny = GE_CANNY_ON;
    p->canny_low = (float)lo;
    p->canny_high = (float)hi;
    return 0;
}

static void opts_init(cli_opts *o)
{
    memset(o, 0, sizeof *o);
    o->p.sigma = 1.0;
    o->p.border = GE_BORDER_REPLICATE;
    o->p.scale = 1.0f;
    o->backend = CLI_BACKEND_AUTO;
    o->hwdec = CLI_HWDEC_AUTO;
    o->frames = -1;
    o->progress = -1;
    o->png_level = PNG_LEVEL_DEFAULT;
    o->video_engines = 1;
}

/* How many long options start with the name in "--name[=value]". */
static int long_matches(const char *word)
{
    size_t n = strcspn(word + 2, "=");
    int count = 0;
    for (const struct option *lo = long_opts; lo->name; lo++) {
        if (!strncmp(lo->name, word + 2, n)) {
            if (strlen(lo->name) == n)
                return 1;
            count++;
        }
    }
    return count;
}

/* The option a getopt error is about, as typed, into buf: "-X" for a short
 * option, else the "--long[=value]" word getopt has just passed.  optopt
 * alone cannot tell: it holds a short option's letter, but also the val of
 * a long option (a letter for --overwrite, >= 256 for --sigma) or 0. */
static const char *bad_option(char **argv, char *buf)
{
    const char *w = optind > 0 ? argv[optind - 1] : "";
    int is_long = !strncmp(w, "--", 2) && w[2];
    if (is_long && optopt > 0 && optopt < 256) {
        /* "--overwrite=1" (val 'y') or a cluster after it: "--invert -Zq" */
        size_t n = strcspn(w + 2, "=");
        is_long = 0;
        for (const struct option *lo = long_opts; lo->name; lo++)
            if (lo->val == optopt && !strncmp(lo->name, w + 2, n))
                is_long = 1;
    }
    if (is_long || optopt <= 0 || optopt >= 256)
        snprintf(buf, 256, "%s", w);
    else
        snprintf(buf, 256, "-%c", optopt);
    return buf;
}

/* The options of one group (getopt_long's c and optarg): 0 taken, -1 not
 * this group's, or GE_EXIT_USAGE after the usage lines. */
static int parse_edge_opt(int c, cli_opts *o)
{
    double d;
    switch (c) {
    case OPT_SIGMA:
        if (parse_double(optarg, &d) ||
            !(d == 0 || (d >= GE_SIGMA_MIN && d <= GE_SIGMA_MAX)))
            return usage_error("--sigma '%s': expected 0 or a number from 0.1 to 16", optarg);
        o->p.sigma = d;
        break;
    case OPT_BORDER:
        if (pick(optarg, borders, &o->p.border))
            return usage_error("--border '%s': expected replicate, reflect101 or zero", optarg);
        break;
    case OPT_SCALE:
        if (parse_double(optarg, &d) || !(d > 0) || d > 3.4e38)
            return usage_error("--scale '%s': expected a number greater than 0", optarg);
        o->p.scale = (float)d;
        if (!(o->p.scale > 0))
            return usage_error("--scale '%s': too small", optarg);
        break;
    case OPT_THRESHOLD:
        if (parse_double(optarg, &d) || d < 0 || d > 255)
            return usage_error("--threshold '%s': expected a number from 0 to 255", optarg);
        o->p.use_threshold = 1;
        o->p.threshold = (float)d;
        break;
    case OPT_INVERT: o->p.invert = 1; break;
    case OPT_CANNY:
        if (parse_canny(optarg, &o->p))
            return usage_error("--canny '%s': expected LOW,HIGH (numbers, "
                               "0 <= LOW <= HIGH) or auto", optarg);
        break;
    case OPT_RGB: o->rgb = 1; break;
    default:
        return -1;
    }
    return 0;
}

/* (seen[0]: --device given, seen[1]: --devices) */
static int parse_backend_opt(int c, cli_opts *o, int *seen)
{
    long l;
    switch (c) {
    case OPT_REPORT:
        if (!optarg)
            o->report = CLI_REPORT_TEXT;
        else if (pick(optarg, reports, &o->report))
            return usage_error("--report=%s: expected text or json", optarg);
        break;
    case OPT_REPORT_FILE: o->report_file = optarg; break;
    case OPT_HIST: o->hist_file = optarg; break;
    case OPT_CPU_REF:
        if (!optarg)
            o->cpu_ref_every = 1;
        else if (parse_long(optarg, 1, INT_MAX, &l))
            return usage_error("--cpu-ref=%s: expected a positive frame interval", optarg);
        else
            o->cpu_ref_every = (int)l;
        break;
    case OPT_BACKEND:
        if (pick(optarg, backends, &o->backend))
            return usage_error("--backend '%s': expected auto, gpu or cpu", optarg);
        break;
    case OPT_HWDEC:
        if (pick(optarg, hwdecs, &o->hwdec))
            return usage_error("--hwdec '%s': expected auto, none or nvdec", optarg);
        break;
    case OPT_DEVICE:
        if (parse_long(optarg, 0, 1023, &l))
            return usage_error("--device '%s': expected a device index (0, 1, ...)", optarg);
        o->device = (int)l;
        o->device_given = 1;
        seen[0] = 1;
        break;
    case OPT_DEVICES:
        if (parse_devices(optarg, o))
            return usage_error("--devices '%s': expected all or a list of distinct device "
                               "indexes such as 0,1,3", optarg);
        seen[1] = 1;
        o->device_given = 1;
        break;
    case OPT_VIDEO_ENGINES:
        if (parse_long(optarg, 1, CLI_VIDEO_ENGINES_MAX, &l))
            return usage_error("--video-engines '%s': expected 1 to 8", optarg);
        o->video_engines = (int)l;
        break;
    case OPT_THREADS:
        if (parse_long(optarg, 0, 1024, &l))
            return usage_error("--threads '%s': expected 0 (one per CPU) to 1024", optarg);
        o->threads = (int)l;
        break;
    default:
        return -1;
    }
    return 0;
}

static int parse_file_opt(int c, cli_opts *o)
{
    double d;
    long l;
    switch (c) {
    case OPT_FRAMES:
        if (parse_long(optarg, 1, LONG_MAX, &l))
            return usage_error("--frames '%s': expected a positive number", optarg);
        o->frames = l;
        break;
    case OPT_START:
        /* bounded before any conversion: start * 1e6 (microseconds) and
         * start * fps must fit in 64 bits */
        if (parse_double(optarg, &d) || !(d >= 0 && d <= CLI_START_MAX))
            return usage_error("--start '%s': expected seconds from 0 to 1e9", optarg);
        o->start = d;
        break;
    case OPT_FORMAT: {
        const char *f = optarg[0] == '.' ? optarg + 1 : optarg;
        static const char *const ok[] = {"png", "jpg", "jpeg", "bmp", "tga", "pgm",
                                         "tif", "tiff", "webp",
                                         "mkv", "mp4", "y4m", NULL};
        int i;
        for (i = 0; ok[i] && strcasecmp(f, ok[i]); i++)
            ;
        if (!ok[i])
            return usage_error("--format '%s': expected png, jpg, jpeg, bmp, tga, pgm, tiff, webp, mkv, mp4 or y4m", optarg);
        o->format = f;
        break;
    }
    case OPT_SKIP_EXISTING: o->skip_existing = 1; break;
    case OPT_FROM_FILE: o->from_file = optarg; break;
    case OPT_MEM_LIMIT: {
        unsigned long long v;
        if (parse_size(optarg, &v))
            return usage_error("--mem-limit '%s': expected a size such as 512M or 2G", optarg);
        o->mem_limit = v;
        break;
    }
    case OPT_KEEP_PARTIAL: o->keep_partial = 1; break;
    case OPT_PROGRESS: o->progress = 1; break;
    case OPT_NO_PROGRESS: o->progress = 0; break;
    case OPT_STAGED: o->staged = 1; break;
    case OPT_JPEG_DECODER:
        if (pick(optarg, jpeg_decoders, &o->jpeg_decoder))
            return usage_error("--jpeg-decoder '%s': expected turbo, nvjpeg or stb", optarg);
        break;
    case OPT_AUTO_ORIENT: o->no_auto_orient = 0; break;
    case OPT_NO_AUTO_ORIENT: o->no_auto_orient = 1; break;
    case OPT_CODEC: o->codec = optarg; break;
    case OPT_PRESET: o->preset = optarg; break;
    case OPT_MKV_CRC: o->mkv_crc = 1; break;
    case OPT_CRF: o->crf = optarg; break;
    case OPT_PNG_LEVEL:
        if (parse_long(optarg, PNG_LEVEL_MIN, PNG_LEVEL_MAX, &l))
            return usage_error("--png-level '%s': expected 0 (stored) to 12 (smallest)",
                               optarg);
        o->png_level = (int)l;
        break;
    default:
        return -1;
    }
    return 0;
}

/* The short options and getopt's errors; 1 for --help (stop there). */
static int parse_general_opt(int c, char **argv, cli_opts *o)
{
    char bad[256];
    switch (c) {
    case '0': o->null_list = 1; break;
    case 'o': o->outdir = optarg; break;
    case 'y': o->overwrite = 1; break;
    case 'q': o->quiet = 1; break;
    case 'v': o->verbose++; break;
    case 'h': o->action = CLI_HELP; return 1;
    case 'V': o->action = CLI_VERSION; break;
    case ':':
        return usage_error("option '%s' needs an argument", bad_option(argv, bad));
    default:
        if (strncmp(bad_option(argv, bad), "--", 2))
            return usage_error("unknown option '%s'", bad);
        if (optopt)
            return usage_error("option '%s' takes no argument", bad);
        return usage_error(long_matches(bad) > 1 ? "ambiguous option '%s'"
                                                 : "unknown option '%s'", bad);
    }
    return 0;
}

/* What no single option can say: contradictions, and the operands. */
static int check_opts(int argc, char **argv, cli_opts *o, const int *seen)
{
    if (o->action == CLI_VERSION)
        return 0;
    if (o->p.canny && o->p.use_threshold)
        return usage_error("%s", "--canny and --threshold contradict each other "
                           "(Canny's map is already binary)");
    if (o->quiet && o->verbose)
        return usage_error("%s", "-q and -v contradict each other");
    if (seen[0] && seen[1])
        return usage_error("%s", "--device and --devices: give one of them (--device N is "
                                 "--devices N)");
    if (o->jpeg_decoder == CLI_JPEG_NVJPEG && o->backend == CLI_BACKEND_CPU)
        return usage_error("%s", "--jpeg-decoder=nvjpeg needs the GPU backend, not --backend=cpu");
    if (o->hwdec == CLI_HWDEC_NVDEC && o->backend == CLI_BACKEND_CPU)
        return usage_error("%s", "--hwdec=nvdec needs the GPU backend (NVDEC frames stay on the GPU)");

    o->inputs = (const char **)(argv + optind);
    o->ninputs = argc - optind;
    if (o->null_list && !o->from_file)
        return usage_error("%s", "-0 (--null) applies to --from-file's list");
    if (o->outdir) {
        if (o->ninputs < 1 && !o->from_file)
            return usage_error("%s", "-o DIR needs at least one INPUT (or --from-file)");
    } else {
        if (o->from_file)
            return usage_error("%s", "--from-file needs -o DIR");
        if (o->format)
            return usage_error("%s", "--format applies to -o DIR batches; give OUTPUT's extension instead");
        if (o->skip_existing)
            return usage_error("%s", "--skip-existing applies to -o DIR batches");
        if (o->ninputs != 2)
            return usage_error("%s", o->ninputs < 2 ? "missing INPUT or OUTPUT"
                                                     : "too many arguments (use -o DIR for several inputs)");
        o->output = o->inputs[1];
        o->ninputs = 1;
    }
    if (o->report_file && !o->report)
        o->report = CLI_REPORT_TEXT;
    if (o->codec || o->preset || o->crf) {
        /* checked against the container before any work: the batch's
         * video format (--format, else mkv), or OUTPUT's extension */
        char buf[16], why[256];
        const char *e = o->outdir ? (o->format && venc_format_ok(o->format) ? o->format : "mkv")
                                  : ge_ext(o->output, buf, sizeof buf);
        if (!o->outdir && (vid_is_sequence(o->output) || !venc_format_ok(e)))
            return usage_error("--codec, --preset and --crf apply to video outputs "
                               "(.mkv .mp4 .y4m), not '%s'", o->output);
        if (venc_codec_check(e, o->codec, o->preset, o->crf, why, sizeof why))
            return usage_error("%s", why);
    }
    return 0;
}

int cli_parse(int argc, char **argv, cli_opts *o)
{
    int c, seen[2] = {0, 0};
    opts_init(o);
    optind = 0; /* glibc: full re-initialisation, so repeated calls work */
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:yqvhV0", long_opts, NULL)) != -1) {
        int r = parse_edge_opt(c, o);
        if (r < 0)
            r = parse_backend_opt(c, o, seen);
        if (r < 0)
            r = parse_file_opt(c, o);
        if (r < 0)
            r = parse_general_opt(c, argv, o);
        if (r)
            return r == 1 ? 0 : r;
    }
    return check_opts(argc, argv, o, seen);
}

void cli_free(cli_opts *o)
{
    (void)o; /* the --from-file list is owned by the batch module */
}
