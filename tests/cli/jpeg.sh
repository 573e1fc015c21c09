#!/bin/sh
# JPEG in from the command line: --jpeg-decoder (turbo default, stb; nvjpeg
# only parsed here: tests/gpu covers it), EXIF
# orientation (--auto-orient default, --no-auto-orient), the decoder named
# by -v and by --cpu-ref's line, and refusals (truncated, 12-bit) with one
# line, exit 1 and nothing written.  The pixel-exact comparisons with djpeg,
# Pillow and cv2 are in tests/unit/test_image_in_jpeg.c.
. "$(dirname "$0")/lib.sh"

G="--backend=cpu"
pil_python
if [ -z "$PY" ]; then
    skip "no python3 with PIL to make JPEGs"
    finish
fi

# photo.jpg (600x400), and the same pixels tagged with EXIF orientation 6
# (rotate 90 degrees clockwise to display) and 3 (180 degrees)
"$PY" - "$SAMPLES/photo.png" <<'EOF' || not_ok "making JPEGs with Pillow"
import sys
from PIL import Image
im = Image.open(sys.argv[1]).convert("RGB")
im.save("photo.jpg", quality=90)
for o in (3, 6):
    ex = Image.Exif()
    ex[0x0112] = o
    im.save("orient%d.jpg" % o, quality=90, exif=ex.tobytes())
EOF

# the size of a PGM gpuedge wrote
pgm_size() { head -c 20 "$1" | tr '\n' ' ' | cut -d' ' -f2,3; }

# ---- --jpeg-decoder
fails "--jpeg-decoder=bogus" 2 "--jpeg-decoder 'bogus': expected turbo, nvjpeg or stb" \
    $G --jpeg-decoder=bogus photo.jpg out.pgm

ge $G -v photo.jpg turbo.pgm
[ "$RC" -eq 0 ] && grep -q '^gpuedge: photo\.jpg: 600x400, 3 channels, 8-bit, pixels decoded by libjpeg-turbo$' "$ERR" &&
    ok "default decoder is libjpeg-turbo (-v names it)" ||
    { not_ok "default decoder is libjpeg-turbo: exit $RC"; show_err; }

ge $G -v --jpeg-decoder=stb photo.jpg stb.pgm
[ "$RC" -eq 0 ] && grep -q 'photo\.jpg: .*pixels decoded by stb_image$' "$ERR" &&
    ok "--jpeg-decoder=stb decodes with stb_image" ||
    { not_ok "--jpeg-decoder=stb: exit $RC"; show_err; }
# the two decoders' pixels differ (DESIGN.md §1.9), so their edge maps do
if [ -f stb.pgm ] && [ -f turbo.pgm ] && ! cmp -s stb.pgm turbo.pgm; then
    ok "stb and libjpeg-turbo edge maps differ (different JPEG pixels)"
else
    not_ok "stb and libjpeg-turbo edge maps are identical: was the decoder switched?"
fi

ge $G --jpeg-decoder=turbo photo.jpg turbo2.pgm
[ "$RC" -eq 0 ] && cmp -s turbo.pgm turbo2.pgm && ok "--jpeg-decoder=turbo is the default" ||
    not_ok "--jpeg-decoder=turbo differs from the default (exit $RC)"

# nvjpeg parses (its GPU path is tested in tests/gpu; here it needs the GPU
# backend, which --backend=cpu refuses as a usage error)
ge $G --jpeg-decoder=nvjpeg photo.jpg nv.pgm
[ "$RC" -eq 2 ] && grep -q 'nvjpeg needs the GPU backend' "$ERR" && [ ! -e nv.pgm ] &&
    ok "--jpeg-decoder=nvjpeg parses (and wants the GPU backend)" ||
    { not_ok "--jpeg-decoder=nvjpeg with --backend=cpu: exit $RC"; show_err; }

ge $G --cpu-ref photo.jpg ref.pgm
[ "$RC" -eq 0 ] && grep -q '^cpu-ref: 1 frame checked, 0 with mismatches (pixels decoded by libjpeg-turbo)$' "$ERR" &&
    ok "--cpu-ref's line names the decoder" ||
    { not_ok "--cpu-ref's line: exit $RC"; show_err; }

# ---- EXIF orientation
ge $G orient6.jpg o6.pgm
[ "$RC" -eq 0 ] && [ "$(pgm_size o6.pgm)" = "400 600" ] &&
    ok "orientation 6 applied by default: 600x400 stored, 400x600 out" ||
    { not_ok "orientation 6: exit $RC, size $(pgm_size o6.pgm 2>/dev/null)"; show_err; }
ge $G --no-auto-orient orient6.jpg o6raw.pgm
[ "$RC" -eq 0 ] && [ "$(pgm_size o6raw.pgm)" = "600 400" ] && cmp -s o6raw.pgm turbo.pgm &&
    ok "--no-auto-orient: the stored pixels' edge map" ||
    { not_ok "--no-auto-orient: exit $RC, size $(pgm_size o6raw.pgm 2>/dev/null)"; show_err; }
ge $G --no-auto-orient --auto-orient orient6.jpg o6again.pgm
[ "$RC" -eq 0 ] && cmp -s o6again.pgm o6.pgm && ok "--auto-orient after --no-auto-orient wins" ||
    not_ok "--auto-orient after --no-auto-orient (exit $RC)"
# 180 degrees: the edge map is the stored one's turned round only up to
# float rounding of the separable passes, so compare sizes and that it moved
ge $G orient3.jpg o3.pgm
[ "$RC" -eq 0 ] && [ "$(pgm_size o3.pgm)" = "600 400" ] && ! cmp -s o3.pgm turbo.pgm &&
    ok "orientation 3 applied (same size, turned pixels)" ||
    not_ok "orientation 3 (exit $RC)"
ge $G --jpeg-decoder=stb orient6.jpg o6stb.pgm
[ "$RC" -eq 0 ] && [ "$(pgm_size o6stb.pgm)" = "400 600" ] &&
    ok "orientation applied to stb's decode too" ||
    not_ok "orientation with --jpeg-decoder=stb (exit $RC)"

# ---- refusals: one line, exit 1, nothing written
n=$(wc -c <photo.jpg)
head -c $((n / 2)) photo.jpg >cut.jpg
fails "truncated JPEG" 1 'cut\.jpg: cannot read image: file is truncated' $G cut.jpg out.png
"$PY" - <<'EOF'
d = bytearray(open("photo.jpg", "rb").read())
i = d.find(b"\xff\xc0")
d[i + 1] = 0xc1   # SOF1 (extended sequential), precision 12
d[i + 4] = 12
open("twelve.jpg", "wb").write(d)
EOF
fails "12-bit JPEG" 1 'twelve\.jpg: cannot read image: 12-bit JPEG is not supported' $G twelve.jpg out.png
head -c 400 /dev/urandom >noise.bin
{ printf '\377\330\377'; cat noise.bin; } >noise.jpg
fails "SOI then noise" 1 'noise\.jpg: cannot read image: .+' $G noise.jpg out.png

# a batch: the good one written, the bad one named, exit 1
mkdir outdir
ge $G -o outdir photo.jpg cut.jpg
[ "$RC" -eq 1 ] && [ -s outdir/photo.png ] && [ ! -e outdir/cut.png ] &&
    grep -q 'cut\.jpg: cannot read image: file is truncated' "$ERR" &&
    ok "batch: truncated JPEG fails alone (exit 1)" ||
    { not_ok "batch with a truncated JPEG: exit $RC"; show_err; }
no_stray_files outdir && ok "batch: nothing left behind" || not_ok "batch: $WHY"

finish
