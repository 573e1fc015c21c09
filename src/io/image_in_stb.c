/*
 * image_in_stb.c — the end of the data, for stb_image v2.27's decoders
 * (image_in_stb.h says why).  Two checks, each for what the other cannot
 * see:
 *  - imgstb_short, before decoding: the size the header implies, counted
 *    the way stb reads the file (BMP and plain TGA: exact sizes; RLE TGA:
 *    its packets walked; GIF: its blocks walked; PSD: its sections and a
 *    floor for PackBits; PIC: a byte a row and channel packet).  This is
 *    what keeps a bare header from costing an allocation of the claimed
 *    size.
 *  - imgstb_load, while decoding: the bytes reach stb through its
 *    callbacks, and a read asked for once every byte was handed over means
 *    the decoder ran off the end (compressed data that ends early, HDR and
 *    PIC payloads).  stb's callback reader prefetches into a buffer inside
 *    its context: such refills may come back short, as stb expects of
 *    fread; a read into any other buffer (stbi__getn: a TGA row, an HDR
 *    pixel) asks for bytes the decoder will use, so a short one is
 *    running off the end too.  Past the end the reader says end of file
 *    (stb then reads zeros, as from memory) or, to stbi__getn, hands out
 *    zeros: the pixels are what stb's memory reader gives; only now we
 *    know.
 */
#include "image_in_stb.h"

#include <stdint.h>
#include <string.h>

#include <stb_image.h>

/* STBI_MAX_DIMENSIONS (third_party/stb_impl.c): stb refuses larger sides,
 * and below it no product here can overflow 64 bits. */
#define STB_MAX_SIDE (1u << 20)

static uint32_t le16(const unsigned char *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t le32(const unsigned char *p) { return le16(p) | le16(p + 2) << 16; }
static uint32_t be16(const unsigned char *p) { return (uint32_t)p[0] << 8 | p[1]; }
static uint32_t be32(const unsigned char *p) { return be16(p) << 16 | be16(p + 2); }

// ---------------------------------------------------------------------------
// Size floors, from the header

/* Uncompressed BMP (stb refuses RLE and the JPEG/PNG kinds): rows of
 * ceil(w * bpp / 8) bytes padded to 4, from the pixel offset; the last
 * row's padding is not required. */
static int bmp_short(const unsigned char *d, size_t n)
{
    uint64_t w, h, bpp, row, pad, need;
    uint32_t off, hsz;
    int32_t sh;

    if (n < 2 || d[0] != 'B' || d[1] != 'M')
        return 0;
    if (n < 18)
        return 1;
    off = le32(d + 10);
    hsz = le32(d + 14);
    if (hsz != 12 && hsz != 40 && hsz != 56 && hsz != 108 && hsz != 124)
        return 0; /* stb refuses it */
    if (n < 14 + (size_t)hsz)
        return 1;
    if (hsz == 12) {
        w = le16(d + 18);
        h = le16(d + 20);
        bpp = le16(d + 24);
    } else {
        uint32_t compress = le32(d + 30);
        if (compress != 0 && compress != 3)
            return 0;
        w = le32(d + 18);
        sh = (int32_t)le32(d + 22);
        h = sh < 0 ? (uint64_t)(-(int64_t)sh) : (uint64_t)sh;
        bpp = le16(d + 28);
    }
    if (w == 0 || h == 0 || w > STB_MAX_SIDE || h > STB_MAX_SIDE || bpp == 0 || bpp > 32)
        return 0;
    row = (w * bpp + 7) / 8;
    pad = (4 - row % 4) % 4;
    need = (uint64_t)off + (row + pad) * (h - 1) + row;
    return need > n;
}

/* TGA as stbi__tga_test accepts it.  Pixel data follows the 18-byte
 * header, the ID field and (indexed) the palette; plain data is w*h pixels,
 * RLE data packets of a header byte and one pixel (repeat) or up to 128
 * pixels (raw), walked here without decoding anything. */
static int tga_short(const unsigned char *d, size_t n)
{
    uint64_t px, got = 0, pos, pb, palb;
    int cmap, type, bpp, rle;

    if (n < 18)
        return 0; /* not enough for stb's test either */
    cmap = d[1];
    type = d[2];
    bpp = d[16];
    if (cmap > 1)
        return 0;
    if (cmap == 1 ? (type != 1 && type != 9) || (bpp != 8 && bpp != 16)
                  : type != 2 && type != 3 && type != 10 && type != 11)
        return 0;
    if (bpp != 8 && bpp != 15 && bpp != 16 && bpp != 24 && bpp != 32)
        return 0;
    if (le16(d + 12) < 1 || le16(d + 14) < 1)
        return 0;
    px = (uint64_t)le16(d + 12) * le16(d + 14);
    pb = ((uint64_t)bpp + 7) / 8;
    pos = 18 + (uint64_t)d[0];
    if (cmap == 1) {
        palb = ((uint64_t)d[7] + 7) / 8;
        pos += le16(d + 3) + le16(d + 5) * palb;
    }
    rle = type >= 9;
    if (!rle)
        return pos + px * pb > n;
    while (got < px) {
        unsigned h;
        if (pos >= n)
            return 1;
        h = d[pos++];
        got += (h & 127) + 1;
        pos += h & 128 ? pb : ((h & 127) + 1) * pb;
    }
    return pos > n;
}

/* Sub-blocks from d[*pos]: sizes then data, up to a 0 size.  0, or 1 when
 * the file ends first. */
static int gif_skip_blocks(const unsigned char *d, size_t n, size_t *pos)
{
    for (;;) {
        size_t len;
        if (*pos >= n)
            return 1;
        len = d[(*pos)++];
        if (len == 0)
            return 0;
        if (n - *pos < len)
            return 1;
        *pos += len;
    }
}

/* GIF: header, screen descriptor, colour tables, extensions and frames,
 * walked to the trailer.  A file may lack the trailer (stb does not read
 * it), but it must end between blocks and hold at least one frame. */
static int gif_short(const unsigned char *d, size_t n)
{
    size_t pos = 13;
    int frames = 0;

    if (n < 6 || (memcmp(d, "GIF87a", 6) && memcmp(d, "GIF89a", 6)))
        return 0;
    if (n < 13)
        return 1;
    if (d[10] & 0x80)
        pos += (size_t)3 << ((d[10] & 7) + 1);
    for (;;) {
        if (pos >= n)
            return frames == 0 || pos > n;
        switch (d[pos++]) {
        case 0x21: /* extension: label, sub-blocks */
            if (pos >= n)
                return 1;
            pos++;
            if (gif_skip_blocks(d, n, &pos))
                return 1;
            break;
        case 0x2c: /* frame: descriptor, local table, LZW code size, data */
            if (n - pos < 10)
                return 1;
            if (d[pos + 8] & 0x80)
                pos += (size_t)3 << ((d[pos + 8] & 7) + 1);
            pos += 10;
            if (pos > n || gif_skip_blocks(d, n, &pos))
                return 1;
            frames++;
            break;
        case 0x3b:
            return frames == 0;
        default:
            return 0; /* stb says what is wrong */
        }
    }
}

/* PSD as stb reads it (8BPS version 1, RGB): three length-prefixed
 * sections, a compression word, then min(channels, 4) planes: raw, or
 * PackBits after 2 bytes a row and channel of counts (at least 2 bytes a
 * packet of at most 128 samples). */
static int psd_short(const unsigned char *d, size_t n)
{
    uint64_t pos = 26, w, h, ch, planes, need;
    int i, comp, depth;

    if (n < 4 || memcmp(d, "8BPS", 4))
        return 0;
    if (n < 26)
        return 1;
    if (be16(d + 4) != 1 || be16(d + 24) != 3)
        return 0;
    ch = be16(d + 12);
    h = be32(d + 14);
    w = be32(d + 18);
    depth = (int)be16(d + 22);
    if (ch > 16 || w == 0 || h == 0 || w > STB_MAX_SIDE || h > STB_MAX_SIDE ||
        (depth != 8 && depth != 16))
        return 0;
    for (i = 0; i < 3; i++) {
        if (n < pos + 4)
            return 1;
        pos += 4 + (uint64_t)be32(d + pos);
    }
    if (n < pos + 2)
        return 1;
    comp = (int)be16(d + pos);
    pos += 2;
    planes = ch < 4 ? ch : 4;
    if (comp == 0)
        need = planes * w * h * (uint64_t)(depth / 8);
    else if (comp == 1)
        need = h * ch * 2 + planes * ((w * h + 127) / 128) * 2;
    else
        return 0;
    return pos + need > n;
}

/* Softimage PIC: a 104-byte header, channel packets of 4 bytes (at most
 * 10, the last unchained), then each row of each packet takes a byte at
 * least (an RLE count, or a raw sample). */
static int pic_short(const unsigned char *d, size_t n)
{
    size_t pos = 104, npk = 0;

    if (n < 92 || memcmp(d, "\x53\x80\xf6\x34", 4) || memcmp(d + 88, "PICT", 4))
        return 0;
    if (n < pos)
        return 1;
    for (;;) {
        if (n - pos < 4)
            return 1;
        npk++;
        pos += 4;
        if (!d[pos - 4])
            break;
        if (npk == 10)
            return 0; /* stb refuses it */
    }
    return (uint64_t)be16(d + 94) * npk > n - pos;
}

int imgstb_short(const unsigned char *d, size_t n)
{
    if (!d)
        return 0;
    /* TGA has no signature; its second byte (0 or 1) tells it from every
     * other format stb reads, whose signatures have a larger one there. */
    return bmp_short(d, n) || gif_short(d, n) || psd_short(d, n) || pic_short(d, n) ||
           tga_short(d, n);
}

// ---------------------------------------------------------------------------
// Decoding through callbacks

typedef struct stb_reader {
    const unsigned char *d;
    size_t n, pos;
    char *refill;   /* stb's own buffer: the first read fills it */
    int ran_off;
} stb_reader;

static int rd_read(void *user, char *data, int size)
{
    stb_reader *r = user;
    size_t want = size > 0 ? (size_t)size : 0, have = r->n - r->pos;

    if (!r->refill)
        r->refill = data;
    if (have == 0) {
        /* The end, as stb's memory reader has it: stb stops reading from
         * us, its get8 gives zeros and stbi__at_eof is true (decoders
         * that loop until it, such as PIC's, stop). */
        r->ran_off = 1;
        return 0;
    }
    if (have >= want || data == r->refill) {
        size_t k = have < want ? have : want;
        memcpy(data, r->d + r->pos, k);
        r->pos += k;
        return (int)k;
    }
    /* stbi__getn into the image: what there is, then zeros */
    memcpy(data, r->d + r->pos, have);
    memset(data + have, 0, want - have);
    r->pos = r->n;
    r->ran_off = 1;
    return size;
}

static void rd_skip(void *user, int k)
{
    stb_reader *r = user;
    /* Skipping past the end is not yet reading there (a BMP's last row
     * padding); the next read is. */
    if (k < 0)
        r->pos = r->pos < (size_t)-k ? 0 : r->pos - (size_t)-k;
    else
        r->pos = r->n - r->pos < (size_t)k ? r->n : r->pos + (size_t)k;
}

static int rd_eof(void *user)
{
    stb_reader *r = user;
    return r->pos >= r->n;
}

void *imgstb_load(const unsigned char *d, size_t n, int is16, int req_comp,
                  int *w, int *h, int *comp, int *ran_off)
{
    static const stbi_io_callbacks cb = { rd_read, rd_skip, rd_eof };
    stb_reader r = { d, n, 0, NULL, 0 };
    void *px = is16 ? (void *)stbi_load_16_from_callbacks(&cb, &r, w, h, comp, req_comp)
                    : (void *)stbi_load_from_callbacks(&cb, &r, w, h, comp, req_comp);
    *ran_off = r.ran_off;
    return px;
}

const char *imgstb_format(const unsigned char *d, size_t n)
{
    static const struct {
        const char *sig, *name;
        size_t len;
    } sigs[] = {
        { "\x89PNG", "PNG", 4 }, { "BM", "BMP", 2 }, { "GIF8", "GIF", 4 },
        { "8BPS", "PSD", 4 }, { "\x53\x80\xf6\x34", "PIC", 4 }, { "\xff", "JPEG", 1 },
        { "P5", "PNM", 2 }, { "P6", "PNM", 2 }, { "#?", "HDR", 2 },
    };
    size_t i;
    for (i = 0; d && i < sizeof sigs / sizeof sigs[0]; i++)
        if (n >= sigs[i].len && !memcmp(d, sigs[i].sig, sigs[i].len))
            return sigs[i].name;
    return "TGA";
}
