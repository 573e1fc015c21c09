#!/usr/bin/env python3
"""pixels.py FILE... -- print "WIDTH HEIGHT SHA256" of each 8-bit grey image.

A decoder for what gpuedge writes, independent of stb (Python's standard
library only): PNG (grey, 8 bit, any filter), BMP (8-bit paletted grey or
24-bit BGR with R == G == B, bottom-up or top-down), TGA (grey or
true-colour, raw or RLE, either origin) and binary PGM.  The CLI tests use
it to show that the lossless formats carry the same pixels.  Exit 1 with a
message for anything else.
"""
import hashlib
import struct
import sys
import zlib


def png(d):
    if d[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, w = 8, b"", None
    while pos < len(d):
        n, kind = struct.unpack(">I4s", d[pos:pos + 8])
        body = d[pos + 8:pos + 8 + n]
        if zlib.crc32(kind + body) != struct.unpack(">I", d[pos + 8 + n:pos + 12 + n])[0]:
            raise ValueError("bad CRC in %r" % kind)
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or ctype != 0 or interlace:
                raise ValueError("PNG is not 8-bit grey, non-interlaced")
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
        pos += 12 + n
    raw = zlib.decompress(idat)
    out, prev = bytearray(), bytearray(w)
    for y in range(h):
        f, row = raw[y * (w + 1)], bytearray(raw[y * (w + 1) + 1:(y + 1) * (w + 1)])
        for x in range(w):
            a = row[x - 1] if x else 0
            b = prev[x]
            c = prev[x - 1] if x else 0
            if f == 1:
                row[x] = (row[x] + a) & 255
            elif f == 2:
                row[x] = (row[x] + b) & 255
            elif f == 3:
                row[x] = (row[x] + ((a + b) >> 1)) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pr = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                row[x] = (row[x] + pr) & 255
            elif f != 0:
                raise ValueError("bad PNG filter %d" % f)
        out += row
        prev = row
    return w, h, bytes(out)


def bmp(d):
    if d[:2] != b"BM":
        raise ValueError("not a BMP")
    off = struct.unpack("<I", d[10:14])[0]
    w, h, _, bpp, comp = struct.unpack("<iiHHI", d[18:34])
    if comp != 0 or bpp not in (8, 24):
        raise ValueError("BMP: only uncompressed 8/24-bit")
    top_down, h = h < 0, abs(h)
    stride = (w * bpp // 8 + 3) & ~3
    rows = []
    for y in range(h):
        r = d[off + y * stride:off + y * stride + w * bpp // 8]
        if bpp == 24:
            if r[0::3] != r[1::3] or r[1::3] != r[2::3]:
                raise ValueError("BMP pixel is not grey")
            r = r[0::3]
        else:
            pal = d[14 + struct.unpack("<I", d[14:18])[0]:off]
            r = bytes(pal[4 * v] for v in r)
        rows.append(r)
    if not top_down:
        rows.reverse()
    return w, h, b"".join(rows)


def tga(d):
    idlen, cmtype, itype = d[0], d[1], d[2]
    w, h, bpp, desc = struct.unpack("<HHBB", d[12:18])
    if cmtype or itype not in (2, 3, 10, 11) or bpp not in (8, 24, 32):
        raise ValueError("TGA: only grey or true-colour")
    pos, n, px, size = 18 + idlen, w * h, bytearray(), bpp // 8

    def grey(p):
        if size > 1 and not (p[0] == p[1] == p[2]):
            raise ValueError("TGA pixel is not grey")
        return p[0]

    if itype in (2, 3):
        for i in range(n):
            px.append(grey(d[pos + i * size:pos + (i + 1) * size]))
    else:
        while len(px) < n:
            hdr = d[pos]
            pos += 1
            count = (hdr & 127) + 1
            if hdr & 128:
                px += bytes([grey(d[pos:pos + size])]) * count
                pos += size
            else:
                for _ in range(count):
                    px.append(grey(d[pos:pos + size]))
                    pos += size
    rows = [bytes(px[y * w:(y + 1) * w]) for y in range(h)]
    if not desc & 0x20:  # bottom-left origin
        rows.reverse()
    if desc & 0x10:
        rows = [r[::-1] for r in rows]
    return w, h, b"".join(rows)


def pgm(d):
    fields, pos = [], 2
    if d[:2] != b"P5":
        raise ValueError("not a binary PGM")
    while len(fields) < 3:
        while d[pos:pos + 1].isspace():
            pos += 1
        if d[pos:pos + 1] == b"#":
            pos = d.index(b"\n", pos)
            continue
        start = pos
        while not d[pos:pos + 1].isspace():
            pos += 1
        fields.append(int(d[start:pos]))
    w, h, maxval = fields
    if maxval != 255:
        raise ValueError("PGM maxval is not 255")
    data = d[pos + 1:pos + 1 + w * h]
    if len(data) != w * h:
        raise ValueError("PGM is short")
    return w, h, data


def main():
    readers = {"png": png, "bmp": bmp, "tga": tga, "pgm": pgm}
    status = 0
    for name in sys.argv[1:]:
        try:
            with open(name, "rb") as f:
                w, h, px = readers[name.rsplit(".", 1)[-1].lower()](f.read())
            if len(px) != w * h:
                raise ValueError("%d pixels for %dx%d" % (len(px), w, h))
            print(w, h, hashlib.sha256(px).hexdigest())
        except (KeyError, ValueError, IndexError, struct.error, zlib.error) as e:
            print("pixels.py: %s: %s" % (name, e or type(e).__name__), file=sys.stderr)
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
