#!/bin/sh
# make_corpus.sh — seed corpora for the fuzz harnesses (make fuzz).
#
#   tests/fuzz/make_corpus.sh [DIR]     (default build/fuzz/seed)
#
# Writes DIR/image (small images in every format stb reads, made from
# samples/ downscaled, plus hand-built PSD/HDR/PNM/PIC files), DIR/video
# (tiny clips from ffmpeg's lavfi sources, the containers and codecs the
# video tests use), DIR/cli (option lines, words separated by NUL) and adds
# tests/fuzz/regressions/* (past findings) to the matching directory.
# Needs python3-pil (Debian's /usr/bin/python3) and ffmpeg; a missing one
# only leaves that part of the corpus out.  Idempotent: files are rewritten.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${1:-$root/build/fuzz/seed}
PYTHON=${PYTHON:-/usr/bin/python3}
mkdir -p "$out/image" "$out/video" "$out/cli" || exit 1
out=$(cd "$out" && pwd)

# ---------------------------------------------------------------------------
# Images
if "$PYTHON" -c 'import PIL' 2>/dev/null; then
"$PYTHON" - "$root/samples" "$out/image" <<'PY'
import io, os, struct, sys
from PIL import Image
src, dst = sys.argv[1], sys.argv[2]
def save(im, name, **kw):
    im.save(os.path.join(dst, name), **kw)
def raw(name, data):
    with open(os.path.join(dst, name), "wb") as f:
        f.write(data)

photo = Image.open(os.path.join(src, "photo.png")).convert("RGB")
small = photo.resize((24, 16))
odd = Image.open(os.path.join(src, "odd_321x241.png")).convert("RGB").resize((13, 7))
grey = Image.open(os.path.join(src, "grey.png")).convert("L").resize((16, 12))
rgba = Image.open(os.path.join(src, "rgba.png")).convert("RGBA").resize((12, 10))
g16 = Image.open(os.path.join(src, "grey16.png"))
g16 = g16.resize((10, 8))

# PNG: every colour type, 16-bit, interlaced, palette, 1-pixel
save(small, "rgb.png"); save(grey, "grey.png"); save(rgba, "rgba.png")
save(rgba.convert("LA"), "grey_alpha.png")
save(g16, "grey16.png")
save(small.convert("P", palette=Image.ADAPTIVE, colors=16), "palette.png")
save(grey.convert("1"), "bilevel.png")
save(small.resize((1, 1)), "one_px.png")
save(odd, "odd.png", optimize=True)
# JPEG: baseline, progressive, grey, subsampling variants, restart markers
save(small, "base.jpg", quality=80)
save(small, "progressive.jpg", quality=80, progressive=True)
save(grey, "grey.jpg", quality=70)
save(odd, "odd444.jpg", quality=90, subsampling=0)
save(odd, "odd422.jpg", quality=60, subsampling=1)
save(small.convert("CMYK"), "cmyk.jpg", quality=75)
# libjpeg-turbo / libspng paths: EXIF orientation, tRNS on grey and RGB
ex = Image.Exif(); ex[0x0112] = 6
save(odd, "exif6.jpg", quality=80, exif=ex.tobytes())
save(grey, "grey_trns.png", transparency=0)
save(small, "rgb_trns.png", transparency=(0, 0, 0))
save(small.convert("P", palette=Image.ADAPTIVE, colors=8), "palette_trns.png", transparency=2)
# BMP: 24-bit, 8-bit palette, 1-bit, 32-bit RGBA
save(small, "rgb.bmp"); save(small.convert("P"), "pal8.bmp")
save(grey.convert("1"), "bilevel.bmp"); save(rgba, "rgba.bmp")
# TGA: plain and RLE, grey, RGBA
save(small, "rgb.tga"); save(small, "rle.tga", compression="tga_rle")
save(grey, "grey.tga"); save(rgba, "rgba_rle.tga", compression="tga_rle")
# GIF: still and two frames
save(small.convert("P"), "still.gif")
save(small.convert("P"), "anim.gif", save_all=True,
     append_images=[odd.resize((24, 16)).convert("P")], duration=100, loop=0)
# PNM: P5, P6, maxval 100 and a 16-bit P5 (our fix-ups)
save(grey, "grey.pgm"); save(odd, "odd.ppm")
w, h = grey.size
px = grey.tobytes()
raw("maxval100.pgm", b"P5\n# comment\n%d %d\n100\n" % (w, h) + bytes(p * 100 // 255 for p in px))
raw("grey16.pgm", b"P5 %d %d 65535\n" % (w, h) + b"".join(struct.pack(">H", p * 257) for p in px))
raw("rgb16.ppm", b"P6\n4 2\n1023\n" + b"".join(struct.pack(">H", (i * 97) % 1024) for i in range(24)))
# PSD: raw and RLE (PackBits), 3 channels, 8-bit
def psd(w, h, chans, planes, rle):
    hdr = b"8BPS" + struct.pack(">H6xHIIHH", 1, chans, h, w, 8, 3 if chans >= 3 else 1)
    body = struct.pack(">I", 0) * 3
    if not rle:
        return hdr + body + struct.pack(">H", 0) + b"".join(planes)
    rows, counts = [], []
    for pl in planes:
        for y in range(h):
            row = pl[y * w:(y + 1) * w]
            enc = bytes([w - 1]) + row   # one literal run per row
            rows.append(enc); counts.append(len(enc))
    return hdr + body + struct.pack(">H", 1) + b"".join(struct.pack(">H", c) for c in counts) + b"".join(rows)
r, g, b = small.resize((6, 4)).split()
planes = [r.tobytes(), g.tobytes(), b.tobytes()]
raw("raw.psd", psd(6, 4, 3, planes, False))
raw("rle.psd", psd(6, 4, 3, planes, True))
# Radiance HDR: flat (narrow, so not RLE) and new-style RLE for width 8
def rgbe(rgb):
    m = max(rgb)
    if m < 1e-32: return b"\0\0\0\0"
    import math
    e = math.frexp(m)[1]
    s = 256.0 / (2.0 ** e)
    return bytes([int(c * s) for c in rgb] + [e + 128])
head = b"#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n"
pix = small.resize((4, 3)).tobytes()
flat = b"".join(rgbe([pix[i] / 255.0, pix[i + 1] / 255.0, pix[i + 2] / 255.0]) for i in range(0, len(pix), 3))
raw("flat.hdr", head + b"-Y 3 +X 4\n" + flat)
w8 = 8
line = b"\x02\x02\x00\x08"
for c in range(4):
    line += bytes([w8]) + bytes([(c * 40 + x * 9) & 0xff if c < 3 else 129 for x in range(w8)])
raw("rle.hdr", head + b"-Y 2 +X 8\n" + line * 2)
# Softimage PIC: uncompressed RGB channel packet
pic = struct.pack(">I", 0x5380F634) + b"\0" * 84 + b"PICT" + struct.pack(">HHfHH", 2, 2, 1.0, 0, 0)
pic += bytes([0, 8, 0, 0xe0])  # last packet, 8 bits, uncompressed, R|G|B
pic += bytes(range(12))
raw("tiny.pic", pic)
PY
else
    echo "make_corpus.sh: python3-pil missing: no image seeds from samples/" >&2
fi
# arithmetic-coded and restart-marker JPEGs (libjpeg-turbo-progs)
if command -v jpegtran >/dev/null 2>&1 && [ -f "$out/image/base.jpg" ]; then
    jpegtran -arithmetic -outfile "$out/image/arith.jpg" "$out/image/base.jpg"
    jpegtran -restart 1B -outfile "$out/image/restart.jpg" "$out/image/base.jpg"
fi

# Cut files of stb's formats (header only, half, all but the last bytes)
# and bare headers claiming 20000x20000 (10000x10000 for GIF and HDR): what
# image_in_stb.c refuses before stb allocates or after it runs off the end
for f in rgb.bmp pal8.bmp bilevel.bmp rgb.tga rle.tga rgba_rle.tga still.gif anim.gif \
    raw.psd rle.psd flat.hdr rle.hdr tiny.pic; do
    [ -f "$out/image/$f" ] || continue
    n=$(wc -c <"$out/image/$f")
    for k in 18 $((n / 2)) $((n * 99 / 100)); do
        [ "$k" -lt "$n" ] && head -c "$k" "$out/image/$f" >"$out/image/cut${k}_$f"
    done
done
printf '\000\000\002\000\000\000\000\000\000\000\000\000\040\116\040\116\030\000' >"$out/image/bomb.tga"
printf '\000\000\012\000\000\000\000\000\000\000\000\000\040\116\040\116\030\000' >"$out/image/bomb_rle.tga"
{ printf 'BM\066\000\000\000\000\000\000\000\066\000\000\000\050\000\000\000'
  printf '\040\116\000\000\040\116\000\000\001\000\030\000'; head -c 24 /dev/zero; } >"$out/image/bomb.bmp"
printf 'GIF89a\020\047\020\047\000\000\000,\000\000\000\000\020\047\020\047\000\010' >"$out/image/bomb.gif"
{ printf '8BPS\000\001\000\000\000\000\000\000\000\003\000\000\116\040\000\000\116\040'
  printf '\000\010\000\003'; head -c 14 /dev/zero; } >"$out/image/bomb.psd"
printf '#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y 10000 +X 10000\n' >"$out/image/bomb.hdr"
printf '\211PNG\r\n\032\n\000\000\000\rIHDR\000\000\116\040\000\000\116\040\010\002\000\000\000\000\000\000\000\000\000\000\000IEND\000\000\000\000' \
    >"$out/image/bomb.png"

# ---------------------------------------------------------------------------
# Images for libavcodec's decoders (src/io/image_av.c): tiny files of each
if "$PYTHON" -c 'import PIL' 2>/dev/null; then
"$PYTHON" - "$out/image" <<'PY'
import os, struct, sys
from PIL import Image
dst = sys.argv[1]
rgb = Image.new("RGB", (12, 8))
rgb.putdata([((x * 21) & 255, (y * 31) & 255, (x * y * 7) & 255) for y in range(8) for x in range(12)])
rgba = rgb.convert("RGBA"); grey = rgb.convert("L")
def save(im, name, **kw):
    im.save(os.path.join(dst, "av_" + name), **kw)
save(rgb, "lossless.webp", lossless=True); save(rgb, "lossy.webp", quality=50)
save(rgba, "alpha.webp", quality=50)
save(rgb, "anim.webp", save_all=True, append_images=[grey.convert("RGB")])
save(rgb, "lzw.tif", compression="tiff_lzw"); save(grey, "grey.tif")
save(rgba, "rgba.tif", compression="tiff_adobe_deflate")
save(rgb.quantize(8), "pal.tif", compression="packbits")
save(rgb, "pages.tif", save_all=True, append_images=[grey])
save(rgb.convert("CMYK"), "cmyk.tif")
save(rgb, "lossless.jp2", irreversible=False); save(grey, "tiny.j2k")
save(rgb, "rgb.pcx"); save(rgb.quantize(8), "pal.pcx")
save(rgb, "rle.sgi"); save(rgba, "rgba.dds")
save(grey.convert("1"), "mono.xbm")
with open(os.path.join(dst, "av_four.xpm"), "wb") as f:
    f.write(b'/* XPM */\nstatic char *x[] = {\n"4 2 2 1",\n"a c #ff0000",\n"b c None",\n"abab",\n"baba"\n};\n')
with open(os.path.join(dst, "av_rgb.pfm"), "wb") as f:
    f.write(b"PF\n3 2\n-1.0\n" + struct.pack("<18f", *[i / 17.0 for i in range(18)]))
with open(os.path.join(dst, "av_grey.phm"), "wb") as f:
    f.write(b"Ph\n3 2\n-1.0\n" + struct.pack("<6e", *[i / 5.0 for i in range(6)]))
with open(os.path.join(dst, "av_rgba.pam"), "wb") as f:
    f.write(b"P7\nWIDTH 2\nHEIGHT 2\nDEPTH 4\nMAXVAL 255\nTUPLTYPE RGB_ALPHA\nENDHDR\n" + bytes(range(16)))
with open(os.path.join(dst, "av_ascii.ppm"), "wb") as f:
    f.write(b"P3\n2 2\n255\n1 2 3 4 5 6 7 8 9 10 11 12\n")
with open(os.path.join(dst, "av_ascii.pbm"), "wb") as f:
    f.write(b"P1\n3 2\n1 0 1\n0 1 0\n")
with open(os.path.join(dst, "av_grey.pgx"), "wb") as f:
    f.write(b"PG ML + 12 3 2\n" + struct.pack(">6H", 0, 100, 1000, 2000, 3000, 4095))
PY
fi
if command -v ffmpeg >/dev/null 2>&1; then
    for spec in "qoi rgba" "exr gbrpf32le" "ras bgr24" "xwd bgr0" "jls gray16le" "dpx rgb48be"; do
        set -- $spec
        c=
        [ "$1" = ras ] && c="-c:v sunrast"
        [ "$1" = jls ] && c="-c:v jpegls"
        ffmpeg -nostdin -v error -y -f lavfi -i testsrc2=size=12x8 -frames:v 1 -pix_fmt "$2" \
            $c "$out/image/av_tiny.$1" </dev/null >/dev/null 2>&1
    done
fi

# ---------------------------------------------------------------------------
# Videos: 3 tiny frames each
mk() { ffmpeg -nostdin -hide_banner -v error -y "$@" </dev/null >/dev/null 2>&1; }
if command -v ffmpeg >/dev/null 2>&1; then
    S="testsrc2=size=32x24:rate=10:duration=0.3"
    (cd "$out/video" &&
    mk -f lavfi -i "$S" -c:v ffv1 -pix_fmt yuv420p ffv1.mkv
    mk -f lavfi -i "$S" -c:v ffv1 -pix_fmt gray -color_range pc grey.mkv
    mk -f lavfi -i "$S" -c:v ffv1 -pix_fmt yuv420p10le ten.mkv
    mk -f lavfi -i "$S" -c:v libx264 -preset ultrafast -pix_fmt yuv420p h264.mp4
    mk -f lavfi -i "$S" -f lavfi -i sine=duration=0.3 -c:v libx264 -preset ultrafast \
       -c:a aac -shortest audio.mp4
    mk -f lavfi -i "$S" -c:v libvpx -b:v 100k vp8.webm
    mk -f lavfi -i "$S" -c:v libvpx-vp9 -b:v 100k vp9.webm
    mk -f lavfi -i "$S" -c:v mjpeg -q:v 5 -pix_fmt yuvj420p mjpeg.avi
    mk -f lavfi -i "$S" -c:v mpeg4 mpeg4.avi
    mk -f lavfi -i "$S" -c:v rawvideo -pix_fmt rgb24 raw.nut
    mk -f lavfi -i "$S" -c:v rawvideo -pix_fmt pal8 pal8.nut
    mk -f lavfi -i "$S" -pix_fmt yuv420p clip.y4m
    mk -f lavfi -i "$S" -pix_fmt gray mono.y4m
    mk -f lavfi -i "$S" -c:v qtrle -pix_fmt rgb24 rle.mov
    mk -f lavfi -i "$S" -c:v mpeg2video mpeg2.ts
    mk -f lavfi -i "$S" -c:v flv flv.flv
    mk -f lavfi -i "$S" -c:v gif anim.gif
    mk -f lavfi -i "testsrc2=size=33x25:rate=10:duration=0.2" -c:v ffv1 -pix_fmt yuv444p odd.mkv
    )
    # stb reads Adam7 PNGs, which PIL cannot write
    mk -f lavfi -i "testsrc2=size=17x11" -frames:v 1 -flags +ilme "$out/image/interlaced.png"
    mk -f lavfi -i "testsrc2=size=9x7" -frames:v 1 -pix_fmt rgb48be -flags +ilme "$out/image/interlaced16.png"
else
    echo "make_corpus.sh: ffmpeg missing: no video seeds" >&2
fi

# ---------------------------------------------------------------------------
# Option lines: one file each, words separated by NUL
i=0
while IFS= read -r line; do
    [ -n "$line" ] || continue
    i=$((i + 1))
    printf '%s' "$line" | tr '|' '\000' >"$out/cli/opts_$i"
done <<'OPTS'
in.png|out.png
-y|--sigma|2.5|--border|reflect101|in.png|out.pgm
--sigma=0|--scale=4|--threshold=32|--invert|a.jpg|b.png
--backend|cpu|--threads|3|--report=json|--report-file|r.json|x.png|y.png
--cpu-ref|--hist|h.csv|in.mkv|out.mkv
--cpu-ref=5|--frames|10|--start|1.5|--rgb|in.mp4|out.mp4
-o|dir|--format|jpg|--skip-existing|a.png|b.png|c.mp4
--output-dir=dir|--from-file|-|--format=.mkv
-qy|--no-progress|in.png|out.png
-v|-v|--progress|--staged|--device|1|in.png|out.png
--mem-limit|512M|in.png|out.png
--keep-partial|--overwrite|in|out.tga
--help
-h
--version
-V|extra
--sig|1|in|out
--rep|in|out
--invert=1|in|out
--sigma|in
-Z|in|out
--|-in.png|-out.png
-q|-v|a|b
--border|constant|--backend|cuda|a|b
--report=text|--report-file=r.txt|a|b
--mem-limit=1.5GiB|a|b
--threshold=255|--scale=1e-40|a|b
--sigma|0x1p-3|a|b
--sigma|nan|a|b
--frames|9223372036854775807|a|b
-o
a|b|c
OPTS
printf 'in.png\nout.png' >"$out/cli/newline_sep"

# ---------------------------------------------------------------------------
# Past findings: regression inputs seed their harness too
for f in "$here"/regressions/*; do
    [ -f "$f" ] || continue
    case $(basename "$f") in
        image-*) cp "$f" "$out/image/" ;;
        cli-*) cp "$f" "$out/cli/" ;;
        video-*) cp "$f" "$out/video/" ;;
    esac
done
echo "make_corpus.sh: $(ls "$out/image" | wc -l) image, $(ls "$out/video" | wc -l) video, $(ls "$out/cli" | wc -l) option seeds in $out"
