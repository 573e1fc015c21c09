#!/bin/sh
# The libavcodec image formats (src/io/image_av.c) through the command line:
#  - pixels equal an independent decoder's: Pillow for WebP (lossless and
#    lossy), TIFF (8/16-bit grey, grey+alpha, RGB, RGBA, palette, 1-bit;
#    raw, LZW, deflate, PackBits), JPEG 2000, PCX, SGI, Sun raster, DDS,
#    XBM, XPM and ASCII PNM; ffmpeg's own raw output for QOI, XWD and CMYK
#    TIFF; numpy for PFM, PHM, PGX and OpenEXR's float mapping
#    (tests/unit/test_image_av --dump shows what gpuedge decoded);
#  - edge maps of those files equal the edge maps of Pillow's pixels
#    written as PNG;
#  - bad inputs: one line, exit 1, nothing written;
#  - multi-page TIFF (first page, one notice), animated WebP (refused);
#  - .tiff/.webp outputs read back by Pillow equal the edge map, in single
#    runs, batches (--format) and image sequences; directories expand to
#    the new extensions;
#  - real WebP photos (tests/data/fetch_webp.sh, Debian's
#    gnome-backgrounds): Pillow's pixels, size and edge map.
. "$(dirname "$0")/lib.sh"

G="--backend=cpu -q"
TB=${TESTBIN:-tests/bin}
case $TB in
/*) ;;
*) TB=$ROOT/$TB ;;
esac
DUMP=$TB/test_image_av

# Debian's python3 has Pillow and numpy; another python3 first on PATH
# (pyenv) may not.
pil_python numpy

# ---------------------------------------------------------------------------
# Fixtures and what each must decode to ("W H C B\n" + samples, as --dump)

if [ -n "$PY" ] && command -v ffmpeg >/dev/null 2>&1; then
    mkdir fx
    "$PY" - fx <<'EOF' >"$T/py.log" 2>&1 || { echo "# fixture maker failed:"; sed 's/^/#   /' "$T/py.log"; }
import os, struct, subprocess, sys
import numpy as np
from PIL import Image
d = sys.argv[1]
rng = np.random.default_rng(7)
H, W = 29, 43
yy, xx = np.mgrid[0:H, 0:W]
def img8(c):
    # structure (edges) plus noise, so edge maps are not trivial
    base = ((xx * 7 + yy * 3) % 256)[..., None] + rng.integers(0, 60, (H, W, c))
    a = (base % 256).astype(np.uint8)
    return a[..., 0] if c == 1 else a
def want(a, name):
    a = np.asarray(a)
    h, w = a.shape[:2]
    c = 1 if a.ndim == 2 else a.shape[2]
    b = a.dtype.itemsize
    with open(os.path.join(d, name + ".want"), "wb") as f:
        f.write(b"%d %d %d %d\n" % (w, h, c, b))
        f.write(a.astype("<u2" if b == 2 else "u1").tobytes())
def pil_layout(im):
    m = im.mode
    if m == "P":
        if "transparency" in im.info:
            return np.asarray(im.convert("RGBA"))
        rgb = np.asarray(im.convert("RGB"))
        if (rgb[..., 0] == rgb[..., 1]).all() and (rgb[..., 1] == rgb[..., 2]).all():
            return rgb[..., 0]
        return rgb
    if m == "1":
        return np.asarray(im.convert("L"))
    if m.startswith("I;16"):
        return np.asarray(im).astype(np.uint16)
    return np.asarray(im)
def pil(im, name, **kw):
    path = os.path.join(d, name)
    im.save(path, **kw)
    want(pil_layout(Image.open(path)), name)
    # the same pixels as a PNG, for the edge-map comparison (8-bit only)
    back = pil_layout(Image.open(path))
    if back.dtype == np.uint8:
        Image.fromarray(back).save(os.path.join(d, name + ".png"))
def raw(name, data):
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)
FW, FH = 42, 28  # testsrc2 sizes are even
def ff(name, pix, *args):
    path = os.path.join(d, name)
    subprocess.run(["ffmpeg", "-loglevel", "error", "-y", "-f", "lavfi", "-i",
                    "testsrc2=s=%dx%d" % (FW, FH), "-frames:v", "1", "-pix_fmt", pix,
                    *args, path], check=True)
    return path
def ffraw(path, pix, dtype, c, h=FH, w=FW):
    out = subprocess.run(["ffmpeg", "-loglevel", "error", "-i", path, "-f", "rawvideo",
                          "-pix_fmt", pix, "-"], check=True, capture_output=True).stdout
    a = np.frombuffer(out, dtype).reshape(h, w, c)
    return a[..., 0] if c == 1 else a

rgb, rgba, g = Image.fromarray(img8(3)), Image.fromarray(img8(4)), Image.fromarray(img8(1))
g16 = Image.fromarray((img8(1).astype(np.uint16) * 257 + rng.integers(0, 256, (H, W))).astype(np.uint16))
# WebP
pil(rgb, "lossless.webp", lossless=True)
pil(rgba, "lossless_alpha.webp", lossless=True, exact=True)
pil(rgb, "lossy.webp", quality=70)
pil(rgba, "lossy_alpha.webp", quality=70)
# TIFF: every layout, every lossless compression Pillow writes
pil(g, "grey8.tif", compression="tiff_lzw")
pil(g16, "grey16.tif", compression="tiff_adobe_deflate")
pil(g.convert("LA"), "grey_alpha.tif", compression="packbits")
pil(rgb, "rgb.tif", compression="tiff_lzw")
pil(rgb, "rgb_raw.tif")
pil(rgba, "rgba.tif", compression="tiff_adobe_deflate")
pil(rgb.quantize(37), "palette.tif")
pil(g.point(lambda v: 255 if v > 128 else 0).convert("1"), "bilevel.tif", compression="group4")
# JPEG 2000 (Pillow and gpuedge both through OpenJPEG): lossless and lossy
pil(rgb, "lossless.jp2", irreversible=False)
pil(g, "lossless.j2k", irreversible=False)
pil(rgb, "lossy.jp2", irreversible=True, quality_mode="rates", quality_layers=[20])
# PCX, SGI, DDS, XBM
pil(rgb, "rgb.pcx"); pil(g, "grey.pcx"); pil(rgb.quantize(50), "palette.pcx")
pil(rgb, "rgb.sgi"); pil(rgba, "rgba.sgi"); pil(g, "grey.sgi")
pil(rgba, "rgba.dds"); pil(rgb, "rgb.dds")
# XBM: FFmpeg (like X11 and ImageMagick) draws set bits black; Pillow
# reads them as white
mono = g.point(lambda v: 255 if v > 128 else 0).convert("1")
mono.save(os.path.join(d, "mono.xbm"))
want(255 - np.asarray(Image.open(os.path.join(d, "mono.xbm")).convert("L")), "mono.xbm")
# ASCII PNM (P1, P2, P3) and PAM, written here, read by Pillow (P7 by numpy)
a8 = img8(3)
raw("ascii.ppm", b"P3\n%d %d\n255\n" % (W, H) + b" ".join(b"%d" % v for v in a8.ravel()) + b"\n")
want(a8, "ascii.ppm")
raw("ascii.pgm", b"P2\n# comment\n%d %d\n255\n" % (W, H) + b"\n".join(b"%d" % v for v in a8[..., 0].ravel()) + b"\n")
want(a8[..., 0], "ascii.pgm")
bits = (a8[..., 0] > 128).astype(np.uint8)
raw("ascii.pbm", b"P1\n%d %d\n" % (W, H) + b"\n".join(b" ".join(b"%d" % v for v in r) for r in bits) + b"\n")
want(np.where(bits == 1, 0, 255).astype(np.uint8), "ascii.pbm")
a4 = img8(4)
raw("rgba.pam", b"P7\nWIDTH %d\nHEIGHT %d\nDEPTH 4\nMAXVAL 255\nTUPLTYPE RGB_ALPHA\nENDHDR\n" % (W, H) + a4.tobytes())
want(a4, "rgba.pam")
# XPM (Pillow reads it)
cols = {0: b"#000000", 1: b"#ff8000", 2: b"#2040ff", 3: b"#ffffff"}
idx = ((xx // 5 + yy // 4) % 4)
rows = [b'"' + bytes(b"abcd"[v] for v in r) + b'"' for r in idx]
raw("four.xpm", b"/* XPM */\nstatic char *four[] = {\n\"%d %d 4 1\",\n" % (W, H) +
    b"".join(b'"%c c %s",\n' % (b"abcd"[k], cols[k]) for k in range(4)) + b",\n".join(rows) + b"\n};\n")
want(pil_layout(Image.open(os.path.join(d, "four.xpm")).convert("RGB")), "four.xpm")
# PFM / PHM (floats, bottom row first) and PGX, checked against numpy
f = rng.uniform(-0.3, 1.3, (H, W, 3)).astype(np.float32)
f[0, 0, 0] = np.nan
raw("rgb.pfm", b"PF\n%d %d\n-1.0\n" % (W, H) + f[::-1].astype("<f4").tobytes())
def f2u16(v):
    v = np.nan_to_num(v.astype(np.float32), nan=0.0)
    v = np.clip(v, np.float32(0), np.float32(1))
    return np.rint(v * np.float32(65535)).astype(np.uint16)
want(f2u16(f), "rgb.pfm")
fh = f.astype(np.float16)
raw("rgb.phm", b"PH\n%d %d\n-1.0\n" % (W, H) + fh[::-1].astype("<f2").tobytes())
want(f2u16(fh.astype(np.float32)), "rgb.phm")
p16 = (img8(1).astype(np.uint16) * 13) % 4096
raw("grey12.pgx", b"PG ML + 12 %d %d\n" % (W, H) + p16.astype(">u2").tobytes())
# FFmpeg's PGX decoder returns 16-bit samples, the 12 bits at the top
want((p16 << 4).astype(np.uint16), "grey12.pgx")
# made by ffmpeg; the reference is ffmpeg's raw output of the same file
q = ff("rgba.qoi", "rgba"); want(ffraw(q, "rgba", np.uint8, 4), "rgba.qoi")
q = ff("rgb.qoi", "rgb24"); want(ffraw(q, "rgb24", np.uint8, 3), "rgb.qoi")
q = ff("rgb.xwd", "bgr0"); want(ffraw(q, "rgb24", np.uint8, 3), "rgb.xwd")
q = ff("rgb.ras", "bgr24", "-c:v", "sunrast"); want(pil_layout(Image.open(q)), "rgb.ras")
q = ff("grey16.jls", "gray16le", "-c:v", "jpegls"); want(ffraw(q, "gray16le", "<u2", 1), "grey16.jls")
# CMYK TIFF: converted by FFmpeg's decoder; gpuedge must keep that RGB
Image.fromarray(a4, "RGBA").save(os.path.join(d, "c.tif"))
with open(os.path.join(d, "c.tif"), "rb") as fi:
    pass
cm = Image.frombytes("CMYK", (W, H), a4.tobytes())
cm.save(os.path.join(d, "cmyk.tif"))
want(ffraw(os.path.join(d, "cmyk.tif"), "rgb24", np.uint8, 3, H, W), "cmyk.tif")
os.remove(os.path.join(d, "c.tif"))
# OpenEXR (float, zip): the reference is ffmpeg's float output, mapped by numpy
q = ff("rgb.exr", "gbrpf32le", "-compression", "zip16", "-format", "float")
fl = subprocess.run(["ffmpeg", "-loglevel", "error", "-i", q, "-f", "rawvideo", "-pix_fmt",
                     "gbrpf32le", "-"], check=True, capture_output=True).stdout
gbr = np.frombuffer(fl, "<f4").reshape(3, FH, FW)
want(f2u16(np.stack([gbr[2], gbr[0], gbr[1]], axis=-1)), "rgb.exr")
# multi-page TIFF: page 1 is rgb, page 2 something else
rgb.save(os.path.join(d, "pages.tif"), save_all=True, append_images=[g.convert("RGB"), rgba])
want(np.asarray(rgb), "pages.tif")
rgb.save(os.path.join(d, "page1.png"))
# animated WebP
rgb.save(os.path.join(d, "anim.webp"), save_all=True, append_images=[rgba.convert("RGB")], duration=100)
EOF
fi

# ---------------------------------------------------------------------------
# Pixels

if [ -z "$PY" ]; then
    skip "pixels against Pillow: no python3 with PIL and numpy"
elif [ ! -x "$DUMP" ]; then
    skip "pixels against Pillow: $DUMP not built"
else
    n=0
    for wf in fx/*.want; do
        [ -f "$wf" ] || continue
        f=${wf%.want}
        n=$((n + 1))
        if "$DUMP" --dump "$f" "$T/got" 2>"$T/dump.err" && cmp -s "$T/got" "$wf"; then
            ok "$(basename "$f"): the same pixels as the reference ($(head -n 1 "$wf"))"
        else
            not_ok "$(basename "$f"): pixels differ from the reference ($(head -n 1 "$wf") want, $(head -n 1 "$T/got" 2>/dev/null) got; $(head -n 1 "$T/dump.err"))"
        fi
    done
    [ "$n" -ge 40 ] && ok "$n fixtures compared" || not_ok "only $n fixtures made (see the fixture maker's log above)"
fi

# ---------------------------------------------------------------------------
# Edge maps: the file == Pillow's pixels as PNG

if [ -n "$PY" ] && [ -f fx/lossy.webp.png ]; then
    for f in lossless.webp lossy.webp lossy_alpha.webp grey8.tif rgb.tif rgba.tif palette.tif \
        lossless.jp2 lossy.jp2 rgb.pcx rgb.sgi rgba.dds; do
        ge $G "fx/$f" a.pgm
        r1=$RC
        ge $G "fx/$f.png" b.pgm
        if [ "$r1" -eq 0 ] && [ "$RC" -eq 0 ] && cmp -s a.pgm b.pgm; then
            ok "$f: edge map equals the one of Pillow's pixels"
        else
            not_ok "$f: edge map differs from Pillow's pixels' (exit $r1/$RC)"
            show_err
        fi
        rm -f a.pgm b.pgm
    done
else
    skip "edge maps against Pillow's pixels: no fixtures"
fi

# ---------------------------------------------------------------------------
# Multi-page TIFF and animated WebP

if [ -f fx/pages.tif ]; then
    "$GPUEDGE" --backend=cpu fx/pages.tif pages.pgm >"$OUT" 2>"$T/pages.err"
    RC=$?
    ge $G fx/page1.png page1.pgm
    if [ -s pages.pgm ] && cmp -s pages.pgm page1.pgm && [ "$(wc -l <"$T/pages.err")" -eq 1 ] &&
        [ "$(grep -c '^gpuedge: fx/pages.tif: TIFF with 3 pages: using the first$' "$T/pages.err")" -eq 1 ]; then
        ok "multi-page TIFF: the first page, one notice"
    else
        not_ok "multi-page TIFF: exit $RC, $(cat "$T/pages.err")"
    fi
    "$GPUEDGE" --backend=cpu -q fx/pages.tif pages.pgm -y >"$OUT" 2>"$T/pages.err"
    [ ! -s "$T/pages.err" ] && ok "multi-page TIFF: no notice under -q" || not_ok "multi-page TIFF -q: $(cat "$T/pages.err")"
    rm -f pages.pgm page1.pgm
    fails "animated WebP refused" 1 "anim\.webp: cannot read image: animated WebP is not supported" \
        $G fx/anim.webp out.png
fi

# ---------------------------------------------------------------------------
# Bad inputs: one line, exit 1, nothing written

if [ -d fx ]; then
    mkdir bad
    for f in lossless.webp lossy.webp grey16.tif rgb.tif lossless.jp2 lossless.j2k rgb.exr \
        rgba.qoi rgb.pcx rgb.sgi rgb.ras rgb.xwd rgba.dds rgb.pfm grey16.jls mono.xbm four.xpm \
        rgba.pam grey12.pgx; do
        [ -f "fx/$f" ] || continue
        n=$(wc -c <"fx/$f")
        head -c $((n * 2 / 3)) "fx/$f" >"bad/cut_$f"
        fails "$f cut to 2/3" 1 "cut_$f: cannot read image: " $G "bad/cut_$f" out.png
        rm -f "bad/cut_$f"
    done
    # header only / damaged / zero size / huge declared size
    head -c 30 fx/lossless.webp >bad/head.webp
    fails "WebP header only" 1 "head\.webp: cannot read image: " $G bad/head.webp out.png
    { head -c 20 fx/lossy.webp; printf 'XXXXXXXXXXXXXXXXXXXXXXXX'; tail -c +45 fx/lossy.webp; } >bad/corrupt.webp
    fails "corrupt WebP" 1 "corrupt\.webp: cannot read image: " $G bad/corrupt.webp out.png
    { printf 'II*\0\377\377\377\177'; tail -c +9 fx/rgb.tif; } >bad/ifd.tif
    fails "TIFF with its IFD past the end" 1 "ifd\.tif: cannot read image: " $G bad/ifd.tif out.png
    printf 'qoif\000\020\000\000\000\020\000\000\003\000\000\000\000\000\000\000\000\001' >bad/huge.qoi
    fails "QOI declaring 1048576x1048576" 1 "huge\.qoi: cannot read image: image too large" $G bad/huge.qoi out.png
    printf 'qoif\000\000\000\000\000\000\000\020\003\000\000\000\000\000\000\000\000\001' >bad/zero.qoi
    fails "QOI of width 0" 1 "zero\.qoi: cannot read image: image has no pixels" $G bad/zero.qoi out.png
    printf 'RIFF\040\000\000\000WEBPVP8X\012\000\000\000\000\000\000\000\377\377\000\377\377\000' >bad/huge.webp
    fails "WebP canvas 65536x65536 without data" 1 "huge\.webp: cannot read image: " $G bad/huge.webp out.png
    printf 'II+\000\010\000\000\000' >bad/big.tif
    fails "BigTIFF refused" 1 "big\.tif: cannot read image: BigTIFF is not supported" $G bad/big.tif out.png
    : >bad/empty.webp
    fails "empty .webp" 1 "empty\.webp: cannot read image: file is empty" $G bad/empty.webp out.png
    rm -rf bad
fi

# ---------------------------------------------------------------------------
# Outputs: .tiff and .webp, lossless, read back by Pillow

# one failure, one line: a map wider than WebP allows
{ printf 'P5\n17000 20\n255\n' && head -c 340000 /dev/zero; } >wide.pgm
fails "WebP wider than 16383" 1 "wide\.webp: cannot write WebP: 17000x20 is larger than WebP's" \
    $G wide.pgm wide.webp
rm -f wide.pgm

ge $G "$SAMPLES/photo.png" ref.pgm
for e in tif tiff webp TIFF; do
    ge $G "$SAMPLES/photo.png" "photo.$e"
    [ "$RC" -eq 0 ] || not_ok "writing .$e: exit $RC"
done
if [ -n "$PY" ]; then
    for e in tif tiff webp TIFF; do
        got=$("$PY" - "photo.$e" ref.pgm <<'EOF' 2>&1
import sys
import numpy as np
from PIL import Image
im = Image.open(sys.argv[1])
ref = np.asarray(Image.open(sys.argv[2]))
a = np.asarray(im)
if im.format == "TIFF":
    comp = im.tag_v2.get(259)
    ok = im.mode == "L" and comp == 5 and np.array_equal(a, ref)  # 5: LZW
    print("ok" if ok else "mode %s compression %s equal %s" % (im.mode, comp, np.array_equal(a, ref) if a.shape == ref.shape else a.shape))
else:
    ok = im.format == "WEBP" and a.ndim == 3 and all(np.array_equal(a[..., c], ref) for c in range(3))
    print("ok" if ok else "format %s mode %s" % (im.format, im.mode))
EOF
)
        [ "$got" = ok ] && ok "photo.$e read back by Pillow equals the edge map" || not_ok "photo.$e: $got"
    done
else
    skip ".tiff/.webp read back: no python3 with PIL"
fi
ge $G "$SAMPLES/photo.png" again.tiff
cmp -s photo.tiff again.tiff && ok ".tiff output is byte-reproducible" || not_ok ".tiff output differs between runs"
# and gpuedge reads its own outputs back as the same edge map's input
ge $G photo.webp w.pgm
ge $G "$SAMPLES/odd_321x241.png" odd.pgm
[ -s w.pgm ] && ok "gpuedge reads its .webp output" || not_ok "gpuedge cannot read its .webp output"
rm -f photo.* again.tiff w.pgm

# batches: --format tiff|webp, directories expand to the new extensions
if [ -d fx ]; then
    mkdir in
    cp fx/lossless.webp fx/grey16.tif fx/rgba.qoi fx/lossy.jp2 in/
    ge $G -o outd --format tiff in
    n=$(ls outd 2>/dev/null | grep -c '\.tiff$')
    [ "$RC" -eq 0 ] && [ "$n" -eq 4 ] && ok "batch of a directory of .webp .tif .qoi .jp2 -> 4 .tiff" ||
        not_ok "batch --format tiff: exit $RC, $n .tiff files: $(ls outd 2>/dev/null | tr '\n' ' ')"
    ge $G -o outw --format webp in/lossless.webp in/grey16.tif
    [ "$RC" -eq 0 ] && [ -s outw/lossless.webp ] && [ -s outw/grey16.webp ] &&
        ok "batch --format webp" || not_ok "batch --format webp: exit $RC"
    ge $G in/lossless.webp single.pgm
    ge $G outd/lossless.tiff back.pgm
    r=$RC
    ge $G single.pgm single2.pgm
    # edges(tiff) == edges(single.pgm) when the .tiff holds single.pgm's pixels
    [ "$r" -eq 0 ] && [ -s back.pgm ] && cmp -s single2.pgm back.pgm && ok "a batch .tiff holds the single run's edge map" ||
        not_ok "the batch .tiff is not the single run's edge map"
    rm -rf in outd outw single*.pgm back*.pgm
fi
ge $G --format tif -o x "$SAMPLES/grey.png"
[ "$RC" -eq 0 ] && [ -s x/grey.tif ] && ok "--format tif" || not_ok "--format tif: exit $RC"
rm -rf x
fails "--format xyz is a usage error" 2 "expected png, jpg, jpeg, bmp, tga, pgm, tiff, webp" \
    --format xyz -o x "$SAMPLES/grey.png"

# image sequences
if command -v ffmpeg >/dev/null 2>&1; then
    ffmpeg -loglevel error -f lavfi -i testsrc2=s=64x48:r=10 -frames:v 3 -c:v ffv1 clip.mkv
    mkdir seq
    ge $G clip.mkv seq/e_%03d.tiff
    n=$(ls seq | grep -c '^e_00[0-9]\.tiff$')
    [ "$RC" -eq 0 ] && [ "$n" -eq 3 ] && ok "video -> e_%03d.tiff sequence (3 frames)" ||
        not_ok "tiff sequence: exit $RC, $n files"
    rm -rf seq clip.mkv
fi

# ---------------------------------------------------------------------------
# Real photos: gnome-backgrounds' WebP (lossy), Pillow's pixels

if [ -z "$PY" ]; then
    skip "real WebP photos: no python3 with PIL"
elif ! dir=$(sh "$ROOT/tests/data/fetch_webp.sh" 2>"$T/fetch.err"); then
    skip "real WebP photos: $(head -n 1 "$T/fetch.err")"
else
    # vnc-d (256x256): edge map == the edge map of Pillow's pixels as PNG;
    # both: gpuedge decodes it at Pillow's size, and the pixels are
    # Pillow's (libwebp's) exactly, which makes every edge map equal too
    # (cheaper than a 4096x4096 PNG round trip on CI's 2 cores)
    for f in vnc-d.webp symbolic-l.webp; do
        if [ ! -f "$dir/$f" ]; then
            skip "real WebP $f: not in the package"
            continue
        fi
        ge $G "$dir/$f" a.pgm
        r1=$RC
        size=$("$PY" -c 'import sys; from PIL import Image; print("%d %d" % Image.open(sys.argv[1]).size)' "$dir/$f")
        if [ "$r1" -eq 0 ] && [ "$(sed -n 2p a.pgm)" = "$size" ]; then
            ok "real WebP $f: decodes at Pillow's size ($size)"
        else
            not_ok "real WebP $f: exit $r1, size '$(sed -n 2p a.pgm)' vs Pillow '$size'"
            show_err
        fi
        if [ "$f" = vnc-d.webp ]; then
            "$PY" -c 'import sys; from PIL import Image; Image.open(sys.argv[1]).save(sys.argv[2])' \
                "$dir/$f" pil.png
            ge $G pil.png b.pgm
            [ "$RC" -eq 0 ] && cmp -s a.pgm b.pgm && ok "real WebP $f: edge map of Pillow's pixels" ||
                not_ok "real WebP $f: edge map differs from Pillow's pixels' (exit $RC)"
        fi
        if [ -x "$DUMP" ]; then
            "$DUMP" --dump "$dir/$f" got.raw
            "$PY" - got.raw "$dir/$f" <<'EOF' >"$T/cmp.out" 2>&1
import sys
import numpy as np
from PIL import Image
hdr, body = open(sys.argv[1], "rb").read().split(b"\n", 1)
w, h, c, b = map(int, hdr.split())
ref = np.asarray(Image.open(sys.argv[2]))
got = np.frombuffer(body, np.uint8).reshape(h, w, c)
d = np.abs(got.astype(int) - ref.astype(int)) if got.shape == ref.shape else None
print("ok" if d is not None and not d.any() else
      "shape %s vs %s" % (got.shape, ref.shape) if d is None else
      "%d samples differ, max %d" % ((d > 0).sum(), d.max()))
EOF
            [ "$(cat "$T/cmp.out")" = ok ] && ok "real WebP $f: the same pixels as Pillow (libwebp)" ||
                not_ok "real WebP $f: pixels differ from Pillow's: $(cat "$T/cmp.out")"
        fi
        rm -f a.pgm b.pgm pil.png got.raw
    done
fi

finish
