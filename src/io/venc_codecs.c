/*
 * venc_codecs.c — which codecs each video container takes (--codec,
 * --preset, --crf checked before any work); no libav calls, so the CLI's
 * parser (and its fuzz harness) can use it alone.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util.h"
#include "venc_internal.h"

const char *venc_ext_of(const char *s, char *buf, size_t n)
{
    if (s && *s == '.')
        s++;
    if (!s)
        s = "";
    snprintf(buf, n, "%s", s);
    for (char *p = buf; *p; p++)
        if (*p >= 'A' && *p <= 'Z')
            *p = (char)(*p - 'A' + 'a');
    return buf;
}

int venc_format_ok(const char *ext)
{
    char b[16];
    venc_ext_of(ext, b, sizeof b);
    return !strcmp(b, "mkv") || !strcmp(b, "mp4") || !strcmp(b, "y4m");
}

static const venc_codec venc_codecs[] = {
    /* the first of a container is its default (docs/bench-log.md, "Video
     * encoders"): FFVHuff codes an edge map in the least CPU of the
     * lossless codecs, frames stand alone (encoder threads), and its files
     * say full range; MagicYUV's are smaller on sparse edges but FFmpeg 5.1
     * decodes its grey as limited range (tv), so a reader would stretch
     * the edge values */
    {"ffvhuff", "ffvhuff", VC_FFVHUFF, 1u << VENC_MKV, 1},
    {"magicyuv", "magicyuv", VC_MAGICYUV, 1u << VENC_MKV, 1},
    {"ffv1", "ffv1", VC_FFV1, 1u << VENC_MKV, 1},
    {"rawvideo", "rawvideo", VC_RAW, 1u << VENC_MKV, 0},
    {"libx264", "libx264", VC_X264, 1u << VENC_MKV | 1u << VENC_MP4, 0},
    {"h264", "libx264", VC_X264, 1u << VENC_MKV | 1u << VENC_MP4, 0},
    /* y4m's raw frames go through wrapped_avframe (what the muxer takes) */
    {"rawvideo", "wrapped_avframe", VC_WRAPPED, 1u << VENC_Y4M, 0},
};

static const char *const x264_presets[] = {
    "ultrafast", "superfast", "veryfast", "faster", "fast", "medium",
    "slow", "slower", "veryslow", "placebo", NULL};

int venc_kind(const char *ext)
{
    char b[16];
    venc_ext_of(ext, b, sizeof b);
    return !strcmp(b, "mkv") ? VENC_MKV : !strcmp(b, "mp4") ? VENC_MP4
           : !strcmp(b, "y4m") ? VENC_Y4M : -1;
}

/* The entry for `name` (NULL: the default) in container `kind`, or NULL. */
const venc_codec *venc_codec_find(int kind, const char *name)
{
    size_t n = sizeof venc_codecs / sizeof venc_codecs[0];
    for (size_t i = 0; kind >= 0 && i < n; i++)
        if ((venc_codecs[i].in & (1u << kind)) &&
            (!name || !strcasecmp(name, venc_codecs[i].name)))
            return &venc_codecs[i];
    return NULL;
}

int venc_codec_check(const char *ext, const char *codec, const char *preset,
                     const char *crf)
{
    int kind = venc_kind(ext);
    const venc_codec *c = venc_codec_find(kind, codec);
    char b[16];
    const char *e = venc_ext_of(ext, b, sizeof b);

    if (kind < 0)
        return ge_fail("--codec, --preset and --crf apply to video outputs "
                       "(.mkv, .mp4, .y4m), not '.%s'", e);
    if (!c)
        return ge_fail("--codec '%s': .%s holds %s", codec, e,
                       kind == VENC_MKV ? "ffvhuff, magicyuv, ffv1, rawvideo or libx264"
                       : kind == VENC_MP4 ? "libx264 only" : "rawvideo only");
    if ((preset || crf) && c->id != VC_X264)
        return ge_fail("--%s applies to libx264 (.mp4, or .mkv with --codec "
                       "libx264), not %s", preset ? "preset" : "crf", c->name);
    if (preset) {
        int i;
        for (i = 0; x264_presets[i] && strcmp(preset, x264_presets[i]); i++)
            ;
        if (!x264_presets[i])
            return ge_fail("--preset '%s': expected ultrafast, superfast, veryfast, "
                           "faster, fast, medium, slow, slower, veryslow or placebo", preset);
    }
    if (crf) {
        char *end;
        double v;
        errno = 0;
        v = strtod(crf, &end);
        /* x264's range for 8-bit video (0 is lossless) */
        if (errno || end == crf || *end || !(v >= 0 && v <= 51))
            return ge_fail("--crf '%s': expected a number from 0 to 51", crf);
    }
    return 0;
}
