/*
 * imgav_internal.h — what image_av.c's decoder shares with the format
 * probes (imgav_probe.c) and the pixel conversion (imgav_pixels.c); not
 * for other callers.
 */
#ifndef GPUEDGE_IMGAV_INTERNAL_H
#define GPUEDGE_IMGAV_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <libavcodec/avcodec.h>
#include <libavutil/pixdesc.h>

/* TIFF pages counted for the notice; a longer chain is "many". */
#define IMGAV_MAX_PAGES 100000

enum imgav_kind {
    K_NONE = 0, K_WEBP, K_TIFF, K_BIGTIFF, K_JP2, K_J2K, K_EXR, K_QOI,
    K_JPEGLS, K_PCX, K_SGI, K_SUN, K_XBM, K_XPM, K_XWD, K_DDS, K_PFM, K_PHM,
    K_PAM, K_PBM, K_PGM, K_PPM, K_DPX, K_PGX
};

typedef struct kind_info {
    const char *name;      /* for messages */
    enum AVCodecID id;
    const char *decoder;   /* preferred decoder by name, else by id */
    /* Bytes a pixel the decoder may hold besides the frame it returns
     * (its working buffers), for the decode limit. */
    unsigned work_per_px;
    /* AV_EF_EXPLODE off: the TIFF decoder fails every tag it does not
     * know under it (ExtraSamples, which Pillow writes for alpha). */
    int no_explode;
} kind_info;

extern const kind_info imgav_kinds[];

/* Random access to the bytes: memory, or a file through pread. */
typedef struct src {
    const unsigned char *d;
    size_t n;   /* bytes at d (the whole file for memory) */
    int fd;     /* -1: memory only */
    size_t fsize;
} src;

// ---------------------------------------------------------------------------
// imgav_probe.c

/* The format of the first n bytes by the signatures libavformat's image
 * pipe demuxers probe for; K_NONE for none (and for what stb reads). */
enum imgav_kind imgav_sniff_kind(const unsigned char *d, size_t n);
/* Size from the header for the formats that say it at a fixed place.
 * Returns 0 or -1 (unknown).  *pages: TIFF's page count (else 1), *anim:
 * an animated WebP. */
int imgav_header_size(enum imgav_kind k, const src *s, int *w, int *h,
                      long *pages, int *anim);
/* Does the WebP say it has alpha (VP8X's flag, VP8L's alpha_is_used bit)?
 * 1 / 0. */
int imgav_webp_has_alpha(const unsigned char *d, size_t n);
/* NULL when a file of kind k ends where its structure says, else why it
 * is cut (for the decoders that conceal a cut file without an error). */
const char *imgav_check_complete(enum imgav_kind k, const src *s);

// ---------------------------------------------------------------------------
// imgav_pixels.c

enum conv_path { P_COPY, P_SCALE, P_PAL, P_FLOAT, P_SWS, P_WEBP };

/* swscale's vector code may store a little past a plane's end: the output
 * of P_SWS needs this much room after it. */
#define IMGAV_SWS_SLACK 64

/* What a decoded pixel format becomes: channels, bytes a sample, and how.
 * Returns 0, or -1 for a format we cannot take (hardware, Bayer...). */
int imgav_out_layout(enum AVPixelFormat fmt, int *ch, int *bps, enum conv_path *path);
/* Converts fr (described by desc) along `path` into out (ch x bps bytes a
 * pixel, rows packed).  Returns the channels written (a palette decides
 * them), or -1 with the reason recorded (ge_fail, DESIGN.md §9). */
int imgav_convert(const AVFrame *fr, const AVPixFmtDescriptor *desc, enum conv_path path,
                  int ch, int bps, void *out);

#endif
