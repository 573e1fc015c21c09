#!/bin/sh
# PNG out (src/io/png_out.c): every PNG gpuedge writes is read back by readers
# that share nothing with it: pngcheck (chunks, CRCs, zlib stream), Python's
# zlib (tests/cli/pixels.py) and Pillow, and must hold the pixels of the
# same edge map written as PGM.  The bytes do not depend on --threads and
# are the same run after run; --png-level; batches and image sequences.
. "$(dirname "$0")/lib.sh"

G="--backend=cpu -q -y"

# A Python with Pillow and NumPy (the inputs are made with them).
pil_python numpy
if [ -z "$PY" ]; then
    skip "PNG out: no python3 with PIL and numpy (python3-pil, python3-numpy)"
    finish
fi
HAVE_PNGCHECK=0
command -v pngcheck >/dev/null 2>&1 && HAVE_PNGCHECK=1
[ $HAVE_PNGCHECK -eq 1 ] || skip "pngcheck checks: pngcheck not installed (Debian package pngcheck)"

# Inputs: sizes 1x1, 1xN, Nx1, odd, tall (many pieces), a constant image
# (all-zero edges), noise; an all-255 map comes from --threshold 0.
"$PY" - <<'EOF' || not_ok "cannot make the inputs"
import numpy as np
from PIL import Image
rng = np.random.default_rng(20261201)
def photo(w, h):
    y, x = np.mgrid[0:h, 0:w]
    v = 128 + 60 * np.sin(x / 7.0) * np.cos(y / 11.0) + rng.normal(0, 6, (h, w))
    v[(x + y) % 97 < 3] = 250
    return np.clip(v, 0, 255).astype(np.uint8)
Image.fromarray(photo(1, 1)).save("p1x1.png")
Image.fromarray(photo(1, 500)).save("p1x500.png")
Image.fromarray(photo(700, 1)).save("p700x1.png")
Image.fromarray(photo(333, 211)).save("odd.png")
Image.fromarray(photo(120, 36000)).save("tall.png")
Image.fromarray(np.full((90, 130), 77, np.uint8)).save("flat.png")
Image.fromarray(rng.integers(0, 256, (257, 259, 3), dtype=np.uint8)).save("noise.png")
EOF

# pngcheck, pixels.py (zlib) and Pillow agree with the PGM's pixels.
# $1 the PNG, $2 the PGM of the same map; sets WHY.
same_pixels() {
    WHY=
    if [ $HAVE_PNGCHECK -eq 1 ] && ! pngcheck -q "$1" >"$T/pc.out" 2>&1; then
        WHY="pngcheck: $(head -n 1 "$T/pc.out")"
        return 1
    fi
    "$PY" - "$1" "$2" >"$T/py.out" 2>&1 <<'EOF' || { WHY=$(tail -n 1 "$T/py.out"); return 1; }
import sys, subprocess
import numpy as np
from PIL import Image
png, pgm = sys.argv[1], sys.argv[2]
a = np.array(Image.open(png))
b = np.array(Image.open(pgm))
im = Image.open(png)
if im.mode != "L" or a.shape != b.shape or not (a == b).all():
    sys.exit("Pillow: %s %s is not the PGM's %s" % (im.mode, a.shape, b.shape))
EOF
    a=$("$PY" "$ROOT/tests/cli/pixels.py" "$1" 2>&1)
    b=$("$PY" "$ROOT/tests/cli/pixels.py" "$2" 2>&1)
    if [ "$a" != "$b" ]; then
        WHY="pixels.py (zlib): '$a' against the PGM's '$b'"
        return 1
    fi
    return 0
}

for f in p1x1 p1x500 p700x1 odd tall flat noise; do
    ge $G "$f.png" "$f.e.pgm"
    ge $G "$f.png" "$f.e.png"
    if [ "$RC" -ne 0 ]; then
        not_ok "$f: exit $RC"
        show_err
    elif same_pixels "$f.e.png" "$f.e.pgm"; then
        ok "$f: a valid PNG with the edge map's pixels (pngcheck, zlib, Pillow)"
    else
        not_ok "$f: $WHY"
    fi
done

# all 255: every magnitude is >= 0
ge $G --threshold 0 odd.png full.pgm
ge $G --threshold 0 odd.png full.png
if same_pixels full.png full.pgm && [ "$(od -An -tu1 -j 15 -N 1 full.pgm | tr -d ' ')" = 255 ]; then
    ok "an all-255 map: valid PNG, same pixels"
else
    not_ok "an all-255 map: ${WHY:-the PGM is not all 255}"
fi

# flat input: its map is all zero
if [ "$(tail -c +15 flat.e.pgm | tr -d '\000' | wc -c)" -eq 0 ]; then
    ok "the constant image's map is all zero (the all-zero PNG case above)"
else
    not_ok "the constant image's map is not all zero"
fi

# ---- the tall image is written in many pieces: many IDAT chunks
n=$("$PY" - tall.e.png <<'EOF'
import struct, sys
d = open(sys.argv[1], "rb").read()
pos, n = 8, 0
while pos < len(d):
    size, kind = struct.unpack(">I4s", d[pos:pos + 8])
    n += kind == b"IDAT"
    pos += 12 + size
print(n)
EOF
)
[ "${n:-0}" -ge 8 ] && ok "120x36000: $n pieces (IDAT chunks) in one zlib stream" ||
    not_ok "120x36000: ${n:-no} IDAT chunks, expected many"

# ---- the same bytes whatever --threads, and run after run
for f in tall noise odd; do
    ge $G --threads 1 "$f.png" "$f.t1.png"
    ge $G --threads 2 "$f.png" "$f.t2.png"
    ge $G --threads 7 "$f.png" "$f.t7.png"
    ge $G --threads 1 "$f.png" "$f.t1b.png"
    if cmp -s "$f.t1.png" "$f.t2.png" && cmp -s "$f.t1.png" "$f.t7.png" &&
        cmp -s "$f.t1.png" "$f.t1b.png" && cmp -s "$f.t1.png" "$f.e.png"; then
        ok "$f: the same bytes with --threads 1, 2, 7 and 0, and on a second run"
    else
        not_ok "$f: the bytes depend on --threads or on the run"
    fi
done

# ---- --png-level
ge $G --png-level 0 tall.png l0.png
r0=$RC
ge $G --png-level 12 tall.png l12.png
r12=$RC
s0=$(wc -c <l0.png 2>/dev/null || echo 0)
s1=$(wc -c <tall.e.png)
s12=$(wc -c <l12.png 2>/dev/null || echo 0)
if [ $r0 -eq 0 ] && [ $r12 -eq 0 ] && same_pixels l0.png tall.e.pgm && same_pixels l12.png tall.e.pgm &&
    [ "$s0" -gt $((121 * 36000)) ] && [ "$s1" -lt "$s0" ] && ! cmp -s l12.png tall.e.png; then
    # (12 is not always smaller: on this noisy map it is not)
    ok "--png-level 0 stores ($s0 B), 1 (the default) compresses ($s1 B), 12 differs ($s12 B); same pixels"
else
    not_ok "--png-level 0/1/12: exit $r0/$r12, sizes $s0/$s1/$s12 ${WHY:+($WHY)}"
fi
ge $G --png-level 1 tall.png l1.png
cmp -s l1.png tall.e.png && ok "--png-level 1 is the default" || not_ok "--png-level 1 is not the default"
fails "--png-level 13 refused" 2 "--png-level '13': expected 0 .* to 12" $G --png-level 13 odd.png x.png
fails "--png-level -1 refused" 2 "--png-level '-1'" $G --png-level -1 odd.png x.png
fails "--png-level x refused" 2 "--png-level 'x'" $G --png-level x odd.png x.png

# ---- a batch: every output valid (the encode pool and the pieces together)
mkdir -p b
ge --backend=cpu -q -y --png-level 3 -o b tall.png odd.png noise.png p1x500.png
bad=
for f in tall odd noise p1x500; do
    ge $G --png-level 3 "$f.png" "$f.l3.png"
    cmp -s "b/$f.png" "$f.l3.png" || bad="$bad $f(differs from a single run)"
    same_pixels "b/$f.png" "$f.e.pgm" || bad="$bad $f($WHY)"
done
[ -z "$bad" ] && ok "batch -o DIR --png-level 3: valid PNGs, the same bytes as one at a time" ||
    not_ok "batch:$bad"

# ---- an image sequence from a video
if command -v ffmpeg >/dev/null 2>&1 &&
    ffmpeg -v error -f lavfi -i testsrc=size=96x64:rate=5 -frames:v 3 -pix_fmt yuv420p clip.mkv; then
    mkdir -p seq
    ge $G clip.mkv seq/e_%03d.png
    ge $G clip.mkv seq/e_%03d.pgm
    bad=
    for i in 001 002 003; do
        same_pixels "seq/e_$i.png" "seq/e_$i.pgm" || bad="$bad $i($WHY)"
    done
    [ "$RC" -eq 0 ] && [ -z "$bad" ] && ok "video to e_%03d.png: 3 valid PNG frames, same pixels" ||
        not_ok "video to an image sequence: exit $RC$bad"
else
    skip "image sequence: ffmpeg cannot make a clip"
fi

# ---- disk full: nothing left behind
if [ -c /dev/full ]; then
    fails "tall PNG to /dev/full" 1 '/dev/full: cannot write: No space left' $G tall.png /dev/full
else
    skip "PNG to /dev/full: no /dev/full"
fi

finish
