/*
 * hfyu_enc.h — FFVHuff frames of 8-bit grey, coded here (the
 * encoder's CPU was the .mkv bound).
 *
 * What it writes is what FFmpeg's ffvhuff encoder writes for gray8 with
 * the median predictor, context 0 (fixed tables) and no interlacing — the
 * settings venc.c opens it with — byte for byte: libavcodec still
 * opens the encoder and makes the extradata (the tables), which
 * hfyu_parse reads; hfyu_code then codes each frame from those tables
 * alone.  A frame's bits depend on its pixels and the tables only, so any
 * number of threads may code frames at once.
 *
 * The bitstream (FFmpeg's huffyuvenc.c, version 3, one plane): row 0 left
 * predicted from 0; each later row median predicted from the row above,
 * the left and the top-left pixels (the left and top-left values running
 * on from the previous row's end; the top-left of row 1's first pixel is
 * row 0's first pixel); each residual (mod 256) written as its Huffman
 * code, most significant bit first; the stream padded to whole 32-bit
 * words, each stored little-endian.
 */
#ifndef GPUEDGE_HFYU_ENC_H
#define GPUEDGE_HFYU_ENC_H

#include <stddef.h>
#include <stdint.h>

typedef struct hfyu_tab {
    uint32_t code[256];
    uint8_t len[256]; /* 1..32 */
    int max_len;
    uint32_t cl[256]; /* code << 5 | len (max_len <= 16: hfyu_parse) */
} hfyu_tab;

/* Reads FFVHuff extradata.  0: version 3, 8-bit grey (no chroma, no
 * alpha), median predictor, no decorrelation, not interlaced, context 0,
 * and one complete table (a prefix code) of codes up to 16 bits; -1 for
 * anything else (the caller keeps libavcodec's encoder). */
int hfyu_parse(const uint8_t *extradata, int size, hfyu_tab *t);

/* Bytes a coded w x h frame can take at most (a multiple of 4). */
size_t hfyu_max_bytes(const hfyu_tab *t, int w, int h);

/* Codes a w x h frame (rows `stride` bytes apart) into out, which holds
 * hfyu_max_bytes.  Returns the packet's size in bytes. */
size_t hfyu_code(const hfyu_tab *t, const uint8_t *src, ptrdiff_t stride, int w, int h,
                 uint8_t *out);

#endif
