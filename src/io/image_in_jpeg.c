/*
 * image_in_jpeg.c — JPEG in through libjpeg-turbo's libjpeg API (Debian's
 * libjpeg62-turbo 2.1.5), and EXIF orientation.
 *
 * Why libjpeg-turbo: JPEG decoders differ by ±1–2 codes (IDCT, chroma
 * upsampling); OpenCV, Pillow, ImageMagick and libvips all decode with
 * libjpeg-turbo at its defaults (JDCT_ISLOW, fancy upsampling), so with the
 * same we get their pixels exactly (tests/cli/jpeg_decode.sh compares with
 * djpeg and Pillow).  The libjpeg API rather than TurboJPEG's: it tells
 * warnings apart by code (a truncated file from a harmless "extraneous
 * bytes"), caps libjpeg's own memory (max_memory_to_use) and counts scans
 * (a progress monitor), which TurboJPEG 2.1 exposes only partly.
 *
 * Decisions (README "Images in", gpuedge(1)):
 *  - Truncated (libjpeg's "Premature end of JPEG file", after which it
 *    would fill the rest with grey): refused, as Pillow refuses it.
 *    OpenCV keeps the grey; an edge map of invented grey is not data.
 *  - Other corrupt-data warnings (extraneous bytes before a marker, a bad
 *    Huffman code mid-scan): decoded, as both Pillow and OpenCV do; the
 *    warning is a notice under -v.
 *  - 12-bit (libjpeg-turbo 2.1's 8-bit API cannot) and lossless/
 *    hierarchical JPEGs: refused with one line.
 *  - CMYK/YCCK: converted to RGB the way cv2.imread does (libjpeg gives
 *    CMYK; then c' = k - (255 - c)·k / 256, for Adobe's inverted files).
 *  - More than IMGJPG_MAX_SCANS scans: refused (TurboJPEG's
 *    TJFLAG_LIMITSCANS bound: a small progressive file with thousands of
 *    scans would otherwise take minutes).
 *  - Thread-safety: every call owns its decompressor and error state;
 *    libjpeg has no globals.  Decode pool threads call this at once.
 */
#include "image_in_jpeg.h"
#include "bigbuf.h"
#include "util.h"

#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <jerror.h>

#define IMGJPG_MAX_SCANS 500

// ---------------------------------------------------------------------------
// Errors: libjpeg calls error_exit (fatal: we longjmp out) and
// emit_message (warnings at level -1).

typedef struct jerr {
    struct jpeg_error_mgr pub;
    jmp_buf jb;
    int eof;                 /* JWRN_JPEG_EOF seen: the data ran out */
    int warnings;
    char first_warning[JMSG_LENGTH_MAX];
    int too_many_scans;
} jerr;

static void jerr_exit(j_common_ptr cinfo)
{
    jerr *e = (jerr *)cinfo->err;
    longjmp(e->jb, 1);
}

static void jerr_emit(j_common_ptr cinfo, int level)
{
    jerr *e = (jerr *)cinfo->err;
    if (level >= 0)
        return; /* trace messages */
    if (cinfo->err->msg_code == JWRN_JPEG_EOF)
        e->eof = 1;
    if (e->warnings++ == 0)
        cinfo->err->format_message(cinfo, e->first_warning);
    cinfo->err->num_warnings++;
}

/* Not a message of libjpeg's: the scan count. */
static void jerr_progress(j_common_ptr cinfo)
{
    j_decompress_ptr d = (j_decompress_ptr)cinfo;
    if (cinfo->is_decompressor && d->input_scan_number > IMGJPG_MAX_SCANS) {
        ((jerr *)cinfo->err)->too_many_scans = 1;
        longjmp(((jerr *)cinfo->err)->jb, 1);
    }
}

/* The one line for a fatal libjpeg error. */
static void jpeg_fail(j_decompress_ptr d, jerr *e, const char *name)
{
    char msg[JMSG_LENGTH_MAX];
    int code = e->pub.msg_code;

    if (e->too_many_scans) {
        ge_fail_in(name, "cannot read image: corrupt JPEG (more than %d scans)",
                   IMGJPG_MAX_SCANS);
        return;
    }
    if (e->eof) {
        ge_fail_in(name, "cannot read image: file is truncated");
        return;
    }
    switch (code) {
    case JERR_BAD_PRECISION:
        ge_fail_in(name, "cannot read image: %d-bit JPEG is not supported "
                   "(libjpeg-turbo decodes 8-bit JPEGs)", e->pub.msg_parm.i[0]);
        return;
    case JERR_SOF_UNSUPPORTED:
        ge_fail_in(name, "cannot read image: unsupported JPEG process "
                   "(lossless or hierarchical, SOF 0x%02x)", e->pub.msg_parm.i[0]);
        return;
    case JERR_OUT_OF_MEMORY:
    case JERR_NO_BACKING_STORE:
        /* over the budget (max_memory_to_use), or malloc failed (ENOMEM:
         * errno is cleared before decoding) */
        if (code == JERR_OUT_OF_MEMORY && errno == ENOMEM)
            ge_fail_in(name, "cannot read image: JPEG: out of memory");
        else
            ge_fail_in(name, "cannot read image: image too large (%ux%u)",
                       d->image_width, d->image_height);
        return;
    default:
        break;
    }
    e->pub.format_message((j_common_ptr)d, msg);
    ge_fail_in(name, "cannot read image: corrupt JPEG (%s)", msg);
}

// ---------------------------------------------------------------------------
// Decoding

int imgjpg_is_jpeg(const void *buf, size_t n)
{
    const unsigned char *d = buf;
    return n >= 3 && d[0] == 0xff && d[1] == 0xd8 && d[2] == 0xff;
}

/* cv2.imread's CMYK -> BGR (OpenCV 4.6, icvCvt_CMYK2BGR_8u_C4C3R), into
 * RGB order, in place (3 bytes out for every 4 in). */
static void cmyk_to_rgb(unsigned char *p, size_t npx)
{
    size_t i;
    for (i = 0; i < npx; i++) {
        int c = p[4 * i], m = p[4 * i + 1], y = p[4 * i + 2], k = p[4 * i + 3];
        p[3 * i] = (unsigned char)(k - ((255 - c) * k >> 8));
        p[3 * i + 1] = (unsigned char)(k - ((255 - m) * k >> 8));
        p[3 * i + 2] = (unsigned char)(k - ((255 - y) * k >> 8));
    }
}

/* The first scan, which jpeg_read_header stops at, gives every block of
 * its components a DC code of a bit at least when it is sequential or a
 * progressive DC-first scan (a valid progressive file starts with one):
 * a file of fewer bytes than those blocks / 8 cannot hold its image (a
 * header claiming more than the file holds) and is refused before
 * anything of the claimed size is allocated (a progressive decoder clears
 * whole-image coefficient buffers first).  Arithmetic coding, and an AC
 * scan first, can spend less than a bit a block: no floor for those. */
static int too_short(const struct jpeg_decompress_struct *d, size_t n)
{
    size_t blocks = 0;
    int i;
    if (d->arith_code || (d->progressive_mode && (d->Ss != 0 || d->Ah != 0)))
        return 0;
    for (i = 0; i < d->comps_in_scan; i++)
        blocks += (size_t)d->cur_comp_info[i]->width_in_blocks *
                  d->cur_comp_info[i]->height_in_blocks;
    return blocks / 8 > n;
}

/* libjpeg keeps the decompressor's state across the longjmp; only these
 * are touched after setjmp, so they are volatile-qualified per C11 7.13.2. */
int imgjpg_decode(const void *buf, size_t n, size_t limit, const char *name,
                  img_image *img)
{
    struct jpeg_decompress_struct d;
    struct jpeg_progress_mgr prog;
    jerr e;
    unsigned char *volatile px = NULL;
    volatile int created = 0, rc = -1, cmyk = 0;
    size_t bytes, out_bytes;
    int out_ch;

    memset(img, 0, sizeof *img);
    memset(&e, 0, sizeof e);
    d.err = jpeg_std_error(&e.pub);
    e.pub.error_exit = jerr_exit;
    e.pub.emit_message = jerr_emit;
    errno = 0; /* jpeg_fail tells a failed malloc from the budget by ENOMEM */
    if (setjmp(e.jb)) {
        jpeg_fail(&d, &e, name);
        goto end;
    }
    jpeg_create_decompress(&d);
    created = 1;
    prog.progress_monitor = jerr_progress;
    d.progress = &prog;
    jpeg_mem_src(&d, buf, (unsigned long)n);
    if (jpeg_read_header(&d, TRUE) != JPEG_HEADER_OK) {
        ge_fail_in(name, "cannot read image: corrupt JPEG (no image)");
        goto end;
    }
    if (e.eof || too_short(&d, n)) {
        ge_fail_in(name, "cannot read image: file is truncated");
        goto end;
    }
    switch (d.jpeg_color_space) {
    case JCS_GRAYSCALE:
        d.out_color_space = JCS_GRAYSCALE;
        out_ch = 1;
        break;
    case JCS_YCbCr:
    case JCS_RGB:
        d.out_color_space = JCS_RGB;
        out_ch = 3;
        break;
    case JCS_CMYK:
    case JCS_YCCK:
        d.out_color_space = JCS_CMYK;
        out_ch = 4;
        cmyk = 1;
        break;
    default:
        ge_fail_in(name, "cannot read image: unsupported JPEG colour space "
                   "(%d components)", d.num_components);
        goto end;
    }
    /* The budget, before anything big: the image (4 bytes a pixel while
     * CMYK), then what is left for libjpeg's whole-image coefficient
     * buffers (progressive files), which its memory manager enforces. */
    bytes = (size_t)d.image_width * (size_t)d.image_height;
    if (bytes == 0) {
        ge_fail_in(name, "cannot read image: image has no pixels");
        goto end;
    }
    if (bytes > (size_t)INT_MAX / (size_t)out_ch ||
        bytes > limit / (size_t)out_ch) {
        ge_fail_in(name, "cannot read image: image too large (%ux%u)",
                   d.image_width, d.image_height);
        goto end;
    }
    out_bytes = bytes * (size_t)out_ch;
    {
        size_t left = limit - out_bytes;
        d.mem->max_memory_to_use = left > (size_t)LONG_MAX ? LONG_MAX
                                   : left ? (long)left : 1;
    }
    /* libjpeg's defaults, said out loud: what djpeg, Pillow and OpenCV use */
    d.dct_method = JDCT_ISLOW;
    d.do_fancy_upsampling = TRUE;
    d.do_block_smoothing = TRUE;
    jpeg_start_decompress(&d);
    if (d.output_width != d.image_width || d.output_height != d.image_height ||
        d.output_components != out_ch) {
        ge_fail_in(name, "cannot read image: damaged or unsupported image data");
        goto end;
    }
    px = bb_alloc(out_bytes);
    if (!px) {
        ge_fail_in(name, "cannot read image: JPEG: out of memory");
        goto end;
    }
    while (d.output_scanline < d.output_height) {
        JSAMPROW row = px + (size_t)d.output_scanline * d.output_width * (size_t)out_ch;
        if (jpeg_read_scanlines(&d, &row, 1) != 1)
            break; /* suspension cannot happen with a memory source */
        if (e.eof)
            break;
    }
    if (e.eof || d.output_scanline < d.output_height) {
        ge_fail_in(name, "cannot read image: file is truncated");
        goto end;
    }
    /* Past the last scanline: a truncated tail of a progressive file or
     * trailing garbage shows here; the image itself is complete. */
    jpeg_finish_decompress(&d);
    if (cmyk) {
        cmyk_to_rgb(px, bytes); /* (in place: the buffer stays a quarter too large) */
        out_ch = 3;
    }
    if (e.warnings && ge_verbose)
        ge_note("%s: libjpeg-turbo: %s (%d warning%s; decoded anyway, as "
                "OpenCV and Pillow do)", name, e.first_warning, e.warnings,
                e.warnings == 1 ? "" : "s");
    img->width = (int)d.output_width;
    img->height = (int)d.output_height;
    img->channels = out_ch;
    img->bytes_per_sample = 1;
    img->pixels = px;
    px = NULL;
    rc = 0;
end:
    if (created)
        jpeg_destroy_decompress(&d);
    bb_free(px);
    return rc;
}

#define IMGJPG_STR_(x) #x
#define IMGJPG_STR(x) IMGJPG_STR_(x)
const char *imgjpg_version(void)
{
    return IMGJPG_STR(LIBJPEG_TURBO_VERSION);
}

// ---------------------------------------------------------------------------
// EXIF orientation

static unsigned rd16(const unsigned char *p, int le)
{
    return le ? (unsigned)p[0] | (unsigned)p[1] << 8
              : (unsigned)p[0] << 8 | (unsigned)p[1];
}

static uint32_t rd32(const unsigned char *p, int le)
{
    return le ? (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                    (uint32_t)p[3] << 24
              : (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
                    (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

/* The orientation tag in a TIFF structure of n bytes (IFD0 only). */
static int tiff_orientation(const unsigned char *t, size_t n)
{
    uint32_t ifd;
    unsigned count, i;
    int le;

    if (n < 8)
        return 1;
    if (t[0] == 'I' && t[1] == 'I')
        le = 1;
    else if (t[0] == 'M' && t[1] == 'M')
        le = 0;
    else
        return 1;
    if (rd16(t + 2, le) != 42)
        return 1;
    ifd = rd32(t + 4, le);
    if (ifd > n || n - ifd < 2)
        return 1;
    count = rd16(t + ifd, le);
    for (i = 0; i < count; i++) {
        size_t at = (size_t)ifd + 2 + (size_t)i * 12;
        unsigned tag, type, v;
        if (at > n || n - at < 12)
            return 1;
        tag = rd16(t + at, le);
        if (tag != 0x0112)
            continue;
        type = rd16(t + at + 2, le);
        if (rd32(t + at + 4, le) < 1)
            return 1;
        if (type == 3)          /* SHORT: in the first two value bytes */
            v = rd16(t + at + 8, le);
        else if (type == 4)     /* LONG, which some writers use */
            v = rd32(t + at + 8, le) > 8 ? 0 : (unsigned)rd32(t + at + 8, le);
        else
            return 1;
        return v >= 1 && v <= 8 ? (int)v : 1;
    }
    return 1;
}

int imgjpg_exif_orientation(const void *buf, size_t n)
{
    const unsigned char *d = buf;
    size_t pos = 2;

    if (!imgjpg_is_jpeg(buf, n))
        return 1;
    /* Segments up to the first scan: FF, fill FFs, marker, 16-bit length
     * that counts itself, payload. */
    while (pos < n) {
        unsigned m;
        size_t len;
        if (d[pos] != 0xff)
            return 1;
        while (pos < n && d[pos] == 0xff)
            pos++;
        if (pos >= n)
            return 1;
        m = d[pos++];
        if (m == 0x01 || (m >= 0xd0 && m <= 0xd8))
            continue;              /* no length */
        if (m == 0xd9 || m == 0xda)
            return 1;              /* EOI, SOS: no Exif before the image */
        if (n - pos < 2)
            return 1;
        len = (size_t)d[pos] << 8 | d[pos + 1];
        if (len < 2 || len > n - pos)
            return 1;
        if (m == 0xe1 && len >= 2 + 6 && !memcmp(d + pos + 2, "Exif\0\0", 6))
            return tiff_orientation(d + pos + 8, len - 8);
        pos += len;
    }
    return 1;
}

int imgjpg_orient(img_image *img, int o)
{
    size_t psz, w, h, dw, dh, row, x, y;
    const unsigned char *s;
    unsigned char *out, *dst;
    ptrdiff_t step;

    if (o < 2 || o > 8 || !img->pixels)
        return 0;
    psz = (size_t)img->channels * (size_t)img->bytes_per_sample;
    w = (size_t)img->width;
    h = (size_t)img->height;
    row = w * psz;
    dw = o >= 5 ? h : w;
    dh = o >= 5 ? w : h;
    out = bb_alloc(w * h * psz);
    if (!out)
        return -1;
    s = img->pixels;
    dst = out;
    /* Destination row y is a line through the source: its first pixel and
     * the step to the next (PIL's names: 2 FLIP_LEFT_RIGHT, 3 ROTATE_180,
     * 4 FLIP_TOP_BOTTOM, 5 TRANSPOSE, 6 ROTATE_270, 7 TRANSVERSE,
     * 8 ROTATE_90). */
    for (y = 0; y < dh; y++) {
        ptrdiff_t at; /* an offset, not a pointer: it steps past the ends */
        switch (o) {
        case 2: at = (ptrdiff_t)(y * row + (w - 1) * psz);           step = -(ptrdiff_t)psz; break;
        case 3: at = (ptrdiff_t)((h - 1 - y) * row + (w - 1) * psz); step = -(ptrdiff_t)psz; break;
        case 4: at = (ptrdiff_t)((h - 1 - y) * row);                 step = (ptrdiff_t)psz; break;
        case 5: at = (ptrdiff_t)(y * psz);                           step = (ptrdiff_t)row; break;
        case 6: at = (ptrdiff_t)((h - 1) * row + y * psz);           step = -(ptrdiff_t)row; break;
        case 7: at = (ptrdiff_t)((h - 1) * row + (w - 1 - y) * psz); step = -(ptrdiff_t)row; break;
        default: at = (ptrdiff_t)((w - 1 - y) * psz);                step = (ptrdiff_t)row; break;
        }
        if (step == (ptrdiff_t)psz) {
            memcpy(dst, s + at, dw * psz);
            dst += dw * psz;
            continue;
        }
#define ORIENT_ROW(N)                                    \
        for (x = 0; x < dw; x++, at += step, dst += (N)) \
            memcpy(dst, s + at, (N));
        switch (psz) {
        case 1: ORIENT_ROW(1); break;
        case 3: ORIENT_ROW(3); break;
        case 4: ORIENT_ROW(4); break;
        default: ORIENT_ROW(psz); break;
        }
#undef ORIENT_ROW
    }
    bb_free(img->pixels);
    img->pixels = out;
    img->width = (int)dw;
    img->height = (int)dh;
    return 0;
}
