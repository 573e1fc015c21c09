#!/usr/bin/env python3
"""make_inputs.py DIR COUNT SEED [MAXSIDE] — small images for tests/soak/soak.sh.

Writes DIR/fNNNN.pgm / .png (python3 standard library only: zlib, struct,
random) for every index 0..COUNT-1 except those ending in 9, which soak.sh
fills with video clips, so images and videos alternate through the sorted
batch.  Deterministic for a SEED: sizes 16..MAXSIDE (default 320) on each
side, four kinds in turn: 8-bit PGM, grey PNG, RGB PNG, RGBA PNG; content a
gradient, a bright rectangle and a run of noise on every row (edges for
Sobel to find).
"""
import os
import random
import struct
import sys
import zlib


def png_chunk(kind, data):
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)


def write_png(path, w, h, channels, rows):
    ctype = {1: 0, 3: 2, 4: 6}[channels]
    raw = b"".join(b"\x00" + r for r in rows)  # filter 0 on every row
    data = (b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, ctype, 0, 0, 0))
            + png_chunk(b"IDAT", zlib.compress(raw, 1)) + png_chunk(b"IEND", b""))
    with open(path, "wb") as f:
        f.write(data)


def write_pgm(path, w, h, rows):
    with open(path, "wb") as f:
        f.write(b"P5\n%d %d\n255\n" % (w, h))
        f.write(b"".join(rows))


def plane(rng, w, h):
    """One 8-bit plane: a gradient, a bright rectangle, a run of noise on
    every row (bytes.translate and slices: no per-pixel Python)."""
    x0, x1 = sorted(rng.randrange(w) for _ in range(2))
    y0, y1 = sorted(rng.randrange(h) for _ in range(2))
    grad = bytes(x * 255 // max(1, w - 1) for x in range(w))
    run = max(1, w // 8)
    rows = []
    for y in range(h):
        row = bytearray(grad.translate(SHIFT[y & 0xFF]))
        if y0 <= y <= y1:
            row[x0:x1 + 1] = b"\xf0" * (x1 + 1 - x0)
        a = rng.randrange(w)
        row[a:a + run] = rng.randbytes(len(row[a:a + run]))
        rows.append(bytes(row))
    return rows


SHIFT = [bytes((v + s) & 0xFF for v in range(256)) for s in range(256)]


def interleave(planes, w):
    rows = []
    for parts in zip(*planes):
        row = bytearray(len(parts) * w)
        for c, p in enumerate(parts):
            row[c::len(parts)] = p
        rows.append(bytes(row))
    return rows


def main():
    out, count, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    maxside = int(sys.argv[4]) if len(sys.argv) > 4 else 320
    rng = random.Random(seed)
    os.makedirs(out, exist_ok=True)
    n = 0
    for i in range(count):
        if i % 10 == 9:
            continue
        w, h = rng.randint(16, maxside), rng.randint(16, maxside)
        kind = n % 4
        name = os.path.join(out, "f%04d.%s" % (i, "pgm" if kind == 0 else "png"))
        if kind == 0:
            write_pgm(name, w, h, plane(rng, w, h))
        else:
            channels = {1: 1, 2: 3, 3: 4}[kind]
            write_png(name, w, h, channels, interleave([plane(rng, w, h) for _ in range(channels)], w))
        n += 1
    print(n)


if __name__ == "__main__":
    main()
