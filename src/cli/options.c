/*
 * options.c — the option table and what is made from it (options.h,
 * DESIGN.md §3): the generic checks, the defaults, getopt's tables and
 * --help.  An option is added here, in the man page and in docs/cli.md
 * (tests/cli/help_man.sh checks the last two against --help).
 */
#include "options.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "hwdec.h"
#include "png_out.h"
#include "util.h"
#include "venc.h"

#define STR_(x) #x
#define STR(x) STR_(x)
/* a cli_opts field for .field and .given (0 means none) */
#define F(m) (offsetof(cli_opts, m) + 1)

static const cli_choice borders[] = {
    {"replicate", GE_BORDER_REPLICATE}, {"reflect101", GE_BORDER_REFLECT101},
    {"reflect_101", GE_BORDER_REFLECT101}, {"zero", GE_BORDER_ZERO},
    {"constant", GE_BORDER_ZERO}, {NULL, 0}};
static const cli_choice reports[] = {{"text", CLI_REPORT_TEXT}, {"json", CLI_REPORT_JSON},
                                     {NULL, 0}};
static const cli_choice backends[] = {{"auto", CLI_BACKEND_AUTO}, {"gpu", CLI_BACKEND_GPU},
                                      {"cuda", CLI_BACKEND_GPU}, {"cpu", CLI_BACKEND_CPU},
                                      {NULL, 0}};
static const cli_choice hwdecs[] = {{"auto", CLI_HWDEC_AUTO}, {"none", CLI_HWDEC_NONE},
                                    {"no", CLI_HWDEC_NONE}, {"nvdec", CLI_HWDEC_NVDEC},
                                    {"cuda", CLI_HWDEC_NVDEC}, {NULL, 0}};
/* --hwdec's value goes to the video reader as it is */
_Static_assert((int)CLI_HWDEC_NONE == VID_HWDEC_NONE &&
                   (int)CLI_HWDEC_AUTO == VID_HWDEC_AUTO &&
                   (int)CLI_HWDEC_NVDEC == VID_HWDEC_NVDEC,
               "enum cli_hwdec is hwdec.h's VID_HWDEC_*");
static const cli_choice jpeg_decoders[] = {{"turbo", CLI_JPEG_TURBO},
                                           {"libjpeg-turbo", CLI_JPEG_TURBO},
                                           {"nvjpeg", CLI_JPEG_NVJPEG}, {"stb", CLI_JPEG_STB},
                                           {NULL, 0}};

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

/* --mem-limit: SIZE with optional K/M/G/T suffix (powers of 1024; a
 * trailing B or iB is accepted). */
static int parse_size(const char *s, cli_opts *o)
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
    o->mem_limit = (unsigned long long)(v * mul);
    return 0;
}

/* --canny LOW,HIGH or auto: exactly two finite numbers >= 0, one comma,
 * LOW <= HIGH (compared as the floats they become). */
static int parse_canny(const char *s, cli_opts *o)
{
    char buf[128];
    const char *comma = strchr(s, ',');
    double lo, hi;

    if (!strcmp(s, "auto")) {
        o->p.canny = GE_CANNY_AUTO;
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
    o->p.canny = GE_CANNY_ON;
    o->p.canny_low = (float)lo;
    o->p.canny_high = (float)hi;
    return 0;
}

/* --format: an output extension, any case, with or without the dot. */
static int parse_format(const char *s, cli_opts *o)
{
    static const char *const ok[] = {"png", "jpg", "jpeg", "bmp", "tga", "pgm", "tif", "tiff",
                                     "webp", "mkv", "mp4", "y4m", NULL};
    const char *f = s[0] == '.' ? s + 1 : s;
    for (int i = 0; ok[i]; i++)
        if (!strcasecmp(f, ok[i])) {
            o->format = f;
            return 0;
        }
    return -1;
}

/* The options, in --help's order.  err keeps each message as users and
 * tests know it. */
const cli_opt cli_opt_table[] = {
    {.name = "sigma", .arg = required_argument, .kind = CLI_DOUBLE, .store = CLI_ST_DOUBLE,
     .field = F(p.sigma), .flags = CLI_ZERO_OK, .min = GE_SIGMA_MIN, .max = GE_SIGMA_MAX,
     .err = "--sigma '%s': expected 0 or a number from 0.1 to 16", .group = "Edge map",
     .metavar = "S", .help = "Gaussian sigma: 0 (no blur) or 0.1..16", .dflt = "1.0"},
    {.name = "border", .arg = required_argument, .kind = CLI_KEYWORD, .store = CLI_ST_INT,
     .field = F(p.border), .keys = borders,
     .err = "--border '%s': expected replicate, reflect101 or zero",
     .metavar = "MODE", .help = "replicate, reflect101 or zero", .dflt = "replicate"},
    {.name = "scale", .arg = required_argument, .kind = CLI_DOUBLE, .store = CLI_ST_FLOAT,
     .field = F(p.scale), .flags = CLI_MIN_OPEN, .min = 0, .max = 3.4e38,
     .err = "--scale '%s': expected a number greater than 0",
     .metavar = "K", .help = "multiply the magnitude by K (> 0)", .dflt = "1"},
    {.name = "threshold", .arg = required_argument, .kind = CLI_DOUBLE, .store = CLI_ST_FLOAT,
     .field = F(p.threshold), .given = F(p.use_threshold), .min = 0, .max = 255,
     .err = "--threshold '%s': expected a number from 0 to 255",
     .metavar = "T", .help = "binary map: 255 where magnitude*scale >= T (0..255)"},
    {.name = "canny", .arg = required_argument, .kind = CLI_SPECIAL, .fn = parse_canny,
     .err = "--canny '%s': expected LOW,HIGH (numbers, 0 <= LOW <= HIGH) or auto",
     .metavar = "LOW,HIGH", .help = "Canny edges (0 or 255): non-maximum suppression,\n"
                                    "then hysteresis on magnitude*scale with\n"
                                    "0 <= LOW <= HIGH, e.g. 20,50"},
    {.name = "canny", .flags = CLI_HELP_ONLY, .metavar = "auto",
     .help = "the same with LOW and HIGH from each frame's own\n"
             "histogram (see gpuedge(1))"},
    {.name = "invert", .kind = CLI_FLAG, .field = F(p.invert), .set = 1,
     .help = "dark edges on white (255 - e; after --canny too)"},
    {.name = "rgb", .kind = CLI_FLAG, .field = F(rgb), .set = 1,
     .help = "video: grey from RGB (libswscale) instead of the\nluma plane"},

    {.name = "auto-orient", .kind = CLI_FLAG, .field = F(no_auto_orient), .set = 0,
     .group = "Decoding",
     .help = "turn JPEGs upright by their EXIF orientation, as\n"
             "cv2.imread and image viewers do [default]"},
    {.name = "no-auto-orient", .kind = CLI_FLAG, .field = F(no_auto_orient), .set = 1,
     .help = "keep JPEGs' pixels as stored (stb's old behaviour)"},

    {.name = "backend", .arg = required_argument, .kind = CLI_KEYWORD, .store = CLI_ST_INT,
     .field = F(backend), .keys = backends, .err = "--backend '%s': expected auto, gpu or cpu",
     .group = "Backend", .metavar = "B", .help = "auto, gpu or cpu", .dflt = "auto"},
    {.name = "device", .arg = required_argument, .kind = CLI_INT, .store = CLI_ST_INT,
     .field = F(device), .given = F(device_given), .lo = 0, .hi = 1023,
     .err = "--device '%s': expected a device index (0, 1, ...)",
     .metavar = "N", .help = "CUDA device index", .dflt = "0"},
    {.name = "devices", .arg = required_argument, .kind = CLI_SPECIAL, .fn = parse_devices,
     .given = F(device_given),
     .err = "--devices '%s': expected all or a list of distinct device indexes such as 0,1,3",
     .metavar = "LIST", .help = "several GPUs at once: a list such as 0,1,3 or all;\n"
                                "one engine a device, the batch's files shared out\n"
                                "largest first (same outputs as one device)"},
    {.name = "video-engines", .arg = required_argument, .kind = CLI_INT, .store = CLI_ST_INT,
     .field = F(video_engines), .lo = 0, .hi = CLI_VIDEO_ENGINES_MAX,
     .err = "--video-engines '%s': expected 0 (auto) to 16",
     .metavar = "N", .help = "batch of videos: N engines a device (1..16), each\n"
                             "decoding and encoding its own video on its share\n"
                             "of the threads; 0: 8 on the GPU backend, 1 on the\n"
                             "CPU backend", .dflt = "0"},
    {.name = "hwdec", .arg = required_argument, .kind = CLI_KEYWORD, .store = CLI_ST_INT,
     .field = F(hwdec), .keys = hwdecs, .err = "--hwdec '%s': expected auto, none or nvdec",
     .metavar = "MODE", .help = "video decoding: auto (with the GPU backend, NVDEC\n"
                                "for H.264, HEVC, VP9 and AV1 where it is faster:\n"
                                ">= 2 sessions and >= 1 Gpx, or <= 8 threads;\n"
                                "frames kept on the GPU), none (software) or nvdec\n"
                                "(every codec NVDEC has; needs the GPU)", .dflt = "auto"},
    {.name = "staged", .kind = CLI_FLAG, .field = F(staged), .set = 1,
     .help = "GPU: one kernel per stage (per-stage timing, every\n"
             "plane checked by --cpu-ref) instead of the fused one"},
    {.name = "threads", .arg = required_argument, .kind = CLI_INT, .store = CLI_ST_INT,
     .field = F(threads), .lo = 0, .hi = 1024,
     .err = "--threads '%s': expected 0 (one per CPU) to 1024",
     .metavar = "N", .help = "CPU threads, 0 = one per CPU this process may\n"
                             "use (affinity, cgroup quota)", .dflt = "0"},
    {.name = "jpeg-decoder", .arg = required_argument, .kind = CLI_KEYWORD, .store = CLI_ST_INT,
     .field = F(jpeg_decoder), .keys = jpeg_decoders,
     .err = "--jpeg-decoder '%s': expected turbo, nvjpeg or stb",
     .metavar = "D", .help = "turbo (libjpeg-turbo: OpenCV's and Pillow's pixels),\n"
                             "stb (stb_image), or nvjpeg: batches of\n"
                             "JPEGs on the GPU's JPEG engines (needs the GPU\n"
                             "backend and libnvjpeg.so.13; the engines'\n"
                             "pixels are libjpeg-turbo's)", .dflt = "turbo"},
    {.name = "mem-limit", .arg = required_argument, .kind = CLI_SPECIAL, .fn = parse_size,
     .err = "--mem-limit '%s': expected a size such as 512M or 2G",
     .metavar = "SIZE", .help = "GPU/pinned memory and CPU scratch budget,\n"
                                "e.g. 512M; bigger frames go in strips"},

    {.name = "cpu-ref", .arg = optional_argument, .kind = CLI_INT, .store = CLI_ST_INT,
     .field = F(cpu_ref_every), .set = 1, .lo = 1, .hi = INT_MAX,
     .err = "--cpu-ref=%s: expected a positive frame interval",
     .group = "Checking and reporting",
     .metavar = "[=N]", .help = "check every (N-th) frame bit for bit against the\n"
                                "CPU reference; exit 3 on any mismatch"},
    {.name = "report", .arg = optional_argument, .kind = CLI_KEYWORD, .store = CLI_ST_INT,
     .field = F(report), .set = CLI_REPORT_TEXT, .keys = reports,
     .err = "--report=%s: expected text or json",
     .metavar = "[=FMT]", .help = "per-stage timing report, text or json"},
    {.name = "report-file", .arg = required_argument, .kind = CLI_STRING, .store = CLI_ST_STR,
     .field = F(report_file),
     .metavar = "FILE", .help = "write the report to FILE instead of stderr"},
    {.name = "hist", .arg = required_argument, .kind = CLI_STRING, .store = CLI_ST_STR,
     .field = F(hist_file), .metavar = "FILE",
     .help = "write per-frame histograms as CSV to FILE\n(file,frame,pts,b0..b255)"},

    {.name = "output-dir", .letter = 'o', .arg = required_argument, .kind = CLI_STRING,
     .store = CLI_ST_STR, .field = F(outdir), .group = "Files and batches",
     .metavar = "DIR", .help = "batch mode: write DIR/<name>.<format> per input\n"
                               "(<name> literally: a % in it is no pattern)"},
    {.name = "format", .arg = required_argument, .kind = CLI_SPECIAL, .fn = parse_format,
     .err = "--format '%s': expected png, jpg, jpeg, bmp, tga, pgm, tiff, webp, mkv, mp4 or y4m",
     .metavar = "EXT", .help = "batch output format for the inputs it fits (an\n"
                               "image format: png jpg bmp tga pgm tiff webp; or\n"
                               "mkv/mp4/y4m for videos)",
     .dflt = "png for images, mkv for videos"},
    {.name = "png-level", .arg = required_argument, .kind = CLI_INT, .store = CLI_ST_INT,
     .field = F(png_level), .lo = PNG_LEVEL_MIN, .hi = PNG_LEVEL_MAX,
     .err = "--png-level '%s': expected 0 (stored) to 12 (smallest)",
     .metavar = "N", .help = "PNG compression: 0 stored, 1 runs and Huffman\n"
                             "codes (the fastest), 2 .. 12 libdeflate's\n"
                             "levels (12 the slowest)", .dflt = STR(PNG_LEVEL_DEFAULT)},
    {.name = "from-file", .arg = required_argument, .kind = CLI_STRING, .store = CLI_ST_STR,
     .field = F(from_file),
     .metavar = "LIST", .help = "read input names from LIST, one a line (- = stdin;\n"
                                "blank lines skipped, no comments)"},
    {.name = "null", .letter = '0', .kind = CLI_FLAG, .field = F(null_list), .set = 1,
     .help = "--from-file's names end with a NUL byte, not a\n"
             "newline (find -print0, xargs -0)"},
    {.name = "skip-existing", .kind = CLI_FLAG, .field = F(skip_existing), .set = 1,
     .help = "batch: skip inputs whose output already exists"},
    {.name = "overwrite", .letter = 'y', .kind = CLI_FLAG, .field = F(overwrite), .set = 1,
     .help = "replace existing outputs"},
    {.name = "keep-partial", .kind = CLI_FLAG, .field = F(keep_partial), .set = 1,
     .help = "keep a failed output as NAME.partial.EXT"},
    {.name = "strict", .kind = CLI_FLAG, .field = F(strict), .set = 1,
     .help = "video: a damaged input (decoding errors, a file\n"
             "cut short) fails: exit 1, its output removed"},
    {.name = "frames", .arg = required_argument, .kind = CLI_INT, .store = CLI_ST_LONG,
     .field = F(frames), .lo = 1, .hi = LONG_MAX,
     .err = "--frames '%s': expected a positive number",
     .metavar = "N", .help = "video: stop after N frames"},
    /* bounded before any conversion: start * 1e6 (microseconds) and
     * start * fps must fit in 64 bits */
    {.name = "start", .arg = required_argument, .kind = CLI_DOUBLE, .store = CLI_ST_DOUBLE,
     .field = F(start), .min = 0, .max = CLI_START_MAX,
     .err = "--start '%s': expected seconds from 0 to 1e9",
     .metavar = "T", .help = "video: start at T seconds (from the first frame;\n0 to 1e9)"},
    {.name = "codec", .arg = required_argument, .kind = CLI_STRING, .store = CLI_ST_STR,
     .field = F(codec),
     .metavar = "NAME", .help = "video encoder: .mkv ffvhuff (default, lossless),\n"
                                "magicyuv, ffv1 (smallest, slowest), rawvideo or\n"
                                "libx264; .mp4 libx264; .y4m rawvideo"},
    {.name = "preset", .arg = required_argument, .kind = CLI_STRING, .store = CLI_ST_STR,
     .field = F(preset),
     .metavar = "P", .help = "libx264 preset, ultrafast..placebo", .dflt = VENC_DEFAULT_PRESET},
    {.name = "crf", .arg = required_argument, .kind = CLI_STRING, .store = CLI_ST_STR,
     .field = F(crf),
     .metavar = "N", .help = "libx264 quality, 0 (lossless) to 51", .dflt = VENC_DEFAULT_CRF},
    {.name = "mkv-crc", .kind = CLI_FLAG, .field = F(mkv_crc), .set = 1,
     .help = ".mkv: a CRC-32 element in each cluster (off by\n"
             "default: it costs most of the writer's time)"},

    {.name = "quiet", .letter = 'q', .kind = CLI_FLAG, .field = F(quiet), .set = 1,
     .group = "General", .help = "no notices, no progress"},
    {.name = "verbose", .letter = 'v', .kind = CLI_FLAG, .field = F(verbose),
     .flags = CLI_COUNT, .help = "more detail on stderr"},
    {.name = "progress", .kind = CLI_FLAG, .field = F(progress), .set = 1,
     .help = "show a progress line on stderr (default: on a\nterminal)"},
    {.name = "no-progress", .kind = CLI_FLAG, .field = F(progress), .set = 0,
     .help = "never show progress"},
    {.name = "help", .letter = 'h', .kind = CLI_FLAG, .field = F(action), .set = CLI_HELP,
     .flags = CLI_STOP, .help = "show this help and exit"},
    {.name = "version", .letter = 'V', .kind = CLI_FLAG, .field = F(action),
     .set = CLI_VERSION, .help = "show versions (libraries, CUDA, GPU) and exit"},
};

const size_t cli_opt_count = sizeof cli_opt_table / sizeof cli_opt_table[0];
_Static_assert(sizeof cli_opt_table / sizeof cli_opt_table[0] <= CLI_OPT_MAX,
               "CLI_OPT_MAX: cli_parse's seen[] holds a flag a row");

static struct option long_opts[sizeof cli_opt_table / sizeof cli_opt_table[0] + 1];
static char short_opts[2 * sizeof cli_opt_table / sizeof cli_opt_table[0] + 2];

/* getopt's tables from the rows, once ("':'" first: a missing argument is
 * told apart from an unknown option). */
static void make_getopt_tables(void)
{
    size_t nl = 0, ns = 0;
    if (long_opts[0].name)
        return;
    short_opts[ns++] = ':';
    for (size_t i = 0; i < cli_opt_count; i++) {
        const cli_opt *r = &cli_opt_table[i];
        if (r->flags & CLI_HELP_ONLY)
            continue;
        long_opts[nl++] = (struct option){r->name, r->arg, NULL,
                                          r->letter ? r->letter : 256 + (int)i};
        if (r->letter) {
            short_opts[ns++] = r->letter;
            if (r->arg == required_argument)
                short_opts[ns++] = ':';
        }
    }
    long_opts[nl] = (struct option){NULL, 0, NULL, 0};
    short_opts[ns] = '\0';
}

const struct option *cli_long_opts(void)
{
    make_getopt_tables();
    return long_opts;
}

const char *cli_short_opts(void)
{
    make_getopt_tables();
    return short_opts;
}

const cli_opt *cli_opt_of(int c)
{
    if (c >= 256 && (size_t)(c - 256) < cli_opt_count)
        return &cli_opt_table[c - 256];
    for (size_t i = 0; c > 0 && c < 256 && i < cli_opt_count; i++)
        if (cli_opt_table[i].letter == c)
            return &cli_opt_table[i];
    return NULL;
}

const cli_opt *cli_opt_named(const char *name)
{
    for (size_t i = 0; i < cli_opt_count; i++)
        if (!(cli_opt_table[i].flags & CLI_HELP_ONLY) && !strcmp(cli_opt_table[i].name, name))
            return &cli_opt_table[i];
    return NULL;
}

void cli_usage_hint(void)
{
    fputs("Try 'gpuedge --help' for more information.\n", stderr);
}

int cli_usage_error(const char *fmt, const char *arg)
{
    char msg[512];
    snprintf(msg, sizeof msg, fmt, arg);
    ge_err(NULL, "%s", msg);
    cli_usage_hint();
    return GE_EXIT_USAGE;
}

/* The value of a number or keyword row (its range checked) into *l or *d:
 * 0, or -1. */
static int check_value(const cli_opt *r, const char *arg, long *l, double *d)
{
    switch (r->kind) {
    case CLI_INT:
        if (!arg) {
            *l = r->set;
            return 0;
        }
        return parse_long(arg, r->lo, r->hi, l);
    case CLI_DOUBLE:
        if (parse_double(arg, d))
            return -1;
        if ((r->flags & CLI_ZERO_OK) && *d == 0)
            return 0;
        if (r->flags & CLI_MIN_OPEN ? !(*d > r->min) : !(*d >= r->min))
            return -1;
        return *d <= r->max ? 0 : -1;
    case CLI_KEYWORD:
        if (!arg) {
            *l = r->set;
            return 0;
        }
        for (const cli_choice *k = r->keys; k->name; k++)
            if (!strcmp(arg, k->name)) {
                *l = k->val;
                return 0;
            }
        return -1;
    default:
        return -1;
    }
}

/* The row's value into its field: 0, or -1 (a float that rounds to 0). */
static int store(const cli_opt *r, cli_opts *o, long l, double d, const char *s)
{
    char *f = (char *)o + r->field - 1;
    switch (r->store) {
    case CLI_ST_INT: *(int *)f = (int)l; break;
    case CLI_ST_LONG: *(long *)f = l; break;
    case CLI_ST_DOUBLE: *(double *)f = d; break;
    case CLI_ST_FLOAT:
        *(float *)f = (float)d;
        if (d != 0 && *(float *)f == 0)
            return -1;
        break;
    case CLI_ST_STR: *(const char **)f = s; break;
    }
    return 0;
}

int cli_opt_apply(const cli_opt *r, const char *arg, cli_opts *o)
{
    long l = 0;
    double d = 0;
    if (r->kind == CLI_FLAG) {
        int *f = (int *)((char *)o + r->field - 1);
        *f = r->flags & CLI_COUNT ? *f + 1 : r->set;
        return r->flags & CLI_STOP ? 1 : 0;
    }
    if (r->kind == CLI_SPECIAL ? r->fn(arg, o) : r->kind != CLI_STRING && check_value(r, arg, &l, &d))
        return cli_usage_error(r->err, arg);
    if (r->kind != CLI_SPECIAL && store(r, o, l, d, arg)) {
        char fmt[64];
        snprintf(fmt, sizeof fmt, "--%s '%%s': too small", r->name);
        return cli_usage_error(fmt, arg);
    }
    if (r->given)
        *(int *)((char *)o + r->given - 1) = 1;
    return 0;
}

void cli_opt_defaults(cli_opts *o)
{
    for (size_t i = 0; i < cli_opt_count; i++) {
        const cli_opt *r = &cli_opt_table[i];
        long l = 0;
        double d = 0;
        if (!r->dflt || (r->kind != CLI_INT && r->kind != CLI_DOUBLE && r->kind != CLI_KEYWORD))
            continue;
        /* the table's own default failing its own check is a build mistake
         * test_cli catches; the field then keeps 0 */
        if (!check_value(r, r->dflt, &l, &d))
            store(r, o, l, d, NULL);
    }
}

/* One row's --help entry: the names in a 26-column field, then the help
 * lines; the default after the last line, or on its own where the line
 * would pass 79 columns. */
static void print_row(FILE *fp, const cli_opt *r)
{
    char left[64];
    const char *h = r->help;
    int n = r->letter ? snprintf(left, sizeof left, "  -%c, --%s", r->letter, r->name)
                      : snprintf(left, sizeof left, "      --%s", r->name);
    if (r->metavar)
        snprintf(left + n, sizeof left - (size_t)n, "%s%s",
                 r->arg == optional_argument ? "" : " ", r->metavar);
    fprintf(fp, "%-26s", left);
    for (;;) {
        size_t len = strcspn(h, "\n");
        fwrite(h, 1, len, fp);
        if (!h[len])
            break;
        fputs("\n                          ", fp);
        h += len + 1;
    }
    if (r->dflt && 26 + strlen(h) + 3 + strlen(r->dflt) > 79)
        fprintf(fp, "\n                          [%s]", r->dflt);
    else if (r->dflt)
        fprintf(fp, " [%s]", r->dflt);
    fputc('\n', fp);
}

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
"PCX, SGI, Sun raster, XBM, XPM, XWD, DDS, PFM, PHM, PAM, DPX, PGX.\n", fp);
    for (size_t i = 0; i < cli_opt_count; i++) {
        if (cli_opt_table[i].group)
            fprintf(fp, "\n%s:\n", cli_opt_table[i].group);
        print_row(fp, &cli_opt_table[i]);
    }
    fputs(
"\n"
"Exit status: 0 ok, 1 runtime failure, 2 usage error, 3 --cpu-ref mismatch,\n"
"128+N stopped by signal N (130 SIGINT, 143 SIGTERM).  See gpuedge(1).\n", fp);
}
