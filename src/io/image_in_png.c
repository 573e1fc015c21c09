/*
 * image_in_png.c — PNG in through libspng (Debian's libspng 0.7.3 over
 * zlib), giving exactly the pixels stb_image v2.27 gives with req_comp = 0
 * (and stbi_load_16 for 16-bit files), which is what the rest of gpuedge
 * was built and tested on (DESIGN.md §1.1).  Faster than stb's own inflate and
 * unfilter; BENCHMARKS.md has the ratio.
 *
 * The layout stb chooses, which we ask libspng for by colour type:
 *   grey 1/2/4/8    G8 (stb scales 1/2/4-bit by 0xff/0x55/0x11, as spng)
 *   grey 16         native-endian 16-bit grey
 *   grey + tRNS     grey+alpha (GA8, GA16), alpha 0 where the key matches
 *   RGB 8/16        RGB, RGB + tRNS -> RGBA
 *   palette         RGB8, or RGBA8 when a tRNS chunk exists
 *   grey+alpha/RGBA as stored (host-endian when 16-bit)
 * No gamma, sBIT or colour management: stb does none.
 *
 * stb reads what libspng might refuse (CRC and Adler-32 errors: stb checks
 * neither, and neither do we, so the two agree; Apple's CgBI files; extra
 * data) and both refuse most corruption, with different words.  So every
 * libspng error hands the file back to stb (IMGPNG_FALLBACK), whose guards
 * in image_io.c stay in force: gpuedge decodes what it decoded before and
 * refuses the rest with stb's message.  Also handed back: tRNS keys that do
 * not fit the bit depth, where stb compares only the low byte (scaled) and
 * libspng the whole value, so their alpha would differ.
 */
#include "image_in_png.h"
#include "util.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <spng.h>

/* STBI_MAX_DIMENSIONS (third_party/stb_impl.c): the same files are too big. */
#define IMGPNG_MAX_SIDE (1u << 20)
/* Ancillary chunks libspng keeps (text, ICC profiles): no real PNG comes
 * near, and a corrupt length must not make us allocate gigabytes. */
#define IMGPNG_CHUNK_LIMIT ((size_t)64 << 20)

int imgpng_decode(const void *buf, size_t n, size_t limit, const char *name,
                  img_image *img)
{
    spng_ctx *ctx = NULL;
    struct spng_ihdr ih;
    struct spng_trns trns;
    void *px = NULL;
    size_t bytes = 0;
    int rc = IMGPNG_FALLBACK, has_trns, fmt, channels, bps;

    memset(img, 0, sizeof *img);
    ctx = spng_ctx_new(SPNG_CTX_IGNORE_ADLER32);
    if (!ctx)
        goto end;
    if (spng_set_png_buffer(ctx, buf, n) ||
        spng_set_crc_action(ctx, SPNG_CRC_USE, SPNG_CRC_USE) ||
        spng_set_image_limits(ctx, IMGPNG_MAX_SIDE, IMGPNG_MAX_SIDE) ||
        spng_set_chunk_limits(ctx, IMGPNG_CHUNK_LIMIT, IMGPNG_CHUNK_LIMIT) ||
        spng_get_ihdr(ctx, &ih))
        goto end;
    /* Reads the chunks before the first IDAT: an absent tRNS answers
     * SPNG_ECHUNKAVAIL, anything else is an error for stb to judge. */
    switch (spng_get_trns(ctx, &trns)) {
    case 0: has_trns = 1; break;
    case SPNG_ECHUNKAVAIL: has_trns = 0; break;
    default: goto end;
    }

    bps = ih.bit_depth == 16 ? 2 : 1;
    switch (ih.color_type) {
    case SPNG_COLOR_TYPE_GRAYSCALE:
        if (has_trns && ih.bit_depth < 16 &&
            trns.gray >= (1u << ih.bit_depth))
            goto end;
        channels = has_trns ? 2 : 1;
        fmt = has_trns ? (bps == 2 ? SPNG_FMT_GA16 : SPNG_FMT_GA8)
                       : (bps == 2 ? SPNG_FMT_PNG : SPNG_FMT_G8);
        break;
    case SPNG_COLOR_TYPE_TRUECOLOR:
        if (has_trns && ih.bit_depth < 16 &&
            (trns.red > 255 || trns.green > 255 || trns.blue > 255))
            goto end;
        channels = has_trns ? 4 : 3;
        fmt = has_trns ? (bps == 2 ? SPNG_FMT_RGBA16 : SPNG_FMT_RGBA8)
                       : SPNG_FMT_PNG;
        break;
    case SPNG_COLOR_TYPE_INDEXED:
        channels = has_trns ? 4 : 3;
        fmt = has_trns ? SPNG_FMT_RGBA8 : SPNG_FMT_RGB8;
        break;
    case SPNG_COLOR_TYPE_GRAYSCALE_ALPHA:
        channels = 2;
        fmt = SPNG_FMT_PNG;
        break;
    case SPNG_COLOR_TYPE_TRUECOLOR_ALPHA:
        channels = 4;
        fmt = SPNG_FMT_PNG;
        break;
    default:
        goto end;
    }

    /* The budget from the header, before libspng allocates anything big;
     * stb's own ceiling (INT_MAX bytes) too, so the same files fit. */
    bytes = (size_t)ih.width * (size_t)ih.height;
    if (bytes > (size_t)INT_MAX / (size_t)channels / (size_t)bps ||
        bytes > limit / ((size_t)channels * (size_t)bps)) {
        ge_fail_in(name, "cannot read image: image too large (%ux%u)", ih.width,
                   ih.height);
        rc = IMGPNG_FAILED;
        goto end;
    }
    bytes *= (size_t)channels * (size_t)bps;
    {
        size_t want = 0;
        if (spng_decoded_image_size(ctx, fmt, &want) || want != bytes)
            goto end; /* a layout we did not expect: stb knows */
    }
    px = malloc(bytes ? bytes : 1);
    if (!px)
        goto end; /* stb tries, and says "out of memory" if it fails too */
    /* Then the chunks up to IEND: stb insists on IEND (a file cut after its
     * image data is truncated to stb, and to us). */
    if (spng_decode_image(ctx, px, bytes, fmt, has_trns ? SPNG_DECODE_TRNS : 0) ||
        spng_decode_chunks(ctx))
        goto end;
    img->width = (int)ih.width;
    img->height = (int)ih.height;
    img->channels = channels;
    img->bytes_per_sample = bps;
    img->pixels = px;
    px = NULL;
    rc = IMGPNG_OK;
end:
    free(px);
    spng_ctx_free(ctx);
    return rc;
}

const char *imgpng_version(void)
{
    return spng_version_string();
}
