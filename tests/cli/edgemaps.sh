#!/bin/sh
# Edge maps through the command line: alpha is ignored, the lossless
# output formats carry the same pixels, and small known answers (DESIGN.md §1).
# The golden hashes of the samples are in golden.sh.
. "$(dirname "$0")/lib.sh"

G="--backend=cpu -q"

# pixels of a binary PGM that gpuedge wrote ("P5\nW H\n255\n"), as decimals
pgm_values() {
    set -- "$1" $(head -n 2 "$1" | tail -n 1)
    tail -c $(($2 * $3)) "$1" | od -An -v -tu1 | tr -s ' \n' '  ' | sed 's/^ //; s/ $//'
}
# the pixels' SHA-256 (header stripped), sh tools only
pgm_hash() {
    set -- "$1" $(head -n 2 "$1" | tail -n 1)
    tail -c $(($2 * $3)) "$1" | sha256sum | cut -d ' ' -f 1
}

# ---- rgba.png == photo.png bit for bit (alpha ignored), histogram included
ge $G --hist h1.csv "$SAMPLES/photo.png" photo.pgm
ge $G --hist h2.csv "$SAMPLES/rgba.png" rgba.pgm
if [ -s photo.pgm ] && cmp -s photo.pgm rgba.pgm; then
    ok "rgba.png gives photo.png's edge map bit for bit (alpha ignored)"
else
    not_ok "rgba.png's edge map differs from photo.png's"
fi
[ "$(tail -n 1 h1.csv | cut -d , -f 2-)" = "$(tail -n 1 h2.csv | cut -d , -f 2-)" ] &&
    ok "rgba.png gives photo.png's histogram" || not_ok "rgba.png's histogram differs from photo.png's"

# ---- the same pixels in every lossless format
want=$(pgm_hash photo.pgm)
for e in png bmp tga PNG; do
    ge $G "$SAMPLES/photo.png" "photo.$e"
    [ "$RC" -eq 0 ] || not_ok "writing .$e: exit $RC"
done
if have_python; then
    for e in png bmp tga PNG; do
        got=$(python3 "$ROOT/tests/cli/pixels.py" "photo.$e" 2>&1)
        [ "$got" = "600 400 $want" ] && ok "photo.$e has the same pixels as photo.pgm" ||
            not_ok "photo.$e: $got, expected 600 400 $want"
    done
    got=$(python3 "$ROOT/tests/cli/pixels.py" photo.pgm 2>&1)
    [ "$got" = "600 400 $want" ] && ok "pixels.py agrees with the sh PGM hash" ||
        not_ok "pixels.py photo.pgm: $got"
else
    skip "lossless formats carry the same pixels: python3 not installed"
fi
[ "$(head -c 4 photo.PNG | tail -c 3)" = PNG ] && ok "upper-case .PNG is written as PNG" ||
    not_ok "photo.PNG is not a PNG"
ge $G "$SAMPLES/photo.png" photo.jpg
[ "$RC" -eq 0 ] && [ "$(od -An -tx1 -N 3 photo.jpg | tr -d ' ')" = ffd8ff ] &&
    ok "photo.jpg is a JPEG" || not_ok "photo.jpg: exit $RC, not a JPEG"
ge $G "$SAMPLES/photo.png" photo.jpeg
cmp -s photo.jpg photo.jpeg && ok ".jpeg == .jpg" || not_ok ".jpeg differs from .jpg"

# ---- --invert is 255 - e; --threshold gives only 0 and 255
ge $G --invert "$SAMPLES/odd_321x241.png" inv.pgm
ge $G "$SAMPLES/odd_321x241.png" plain.pgm
pgm_values plain.pgm | tr ' ' '\n' >plain.txt
pgm_values inv.pgm | tr ' ' '\n' >inv.txt
bad=$(paste -d ' ' plain.txt inv.txt | awk '$1 + $2 != 255 { n++ } END { print n + 0 }')
[ "$bad" -eq 0 ] && [ -s plain.txt ] && ok "--invert: every pixel is 255 - e" ||
    not_ok "--invert: $bad pixels are not 255 - e"
ge $G --threshold 40 "$SAMPLES/odd_321x241.png" thr.pgm
vals=$(pgm_values thr.pgm | tr ' ' '\n' | sort -un | tr '\n' ' ')
[ "$vals" = "0 255 " ] && ok "--threshold 40: only 0 and 255" || not_ok "--threshold 40: values $vals"
n255=$(pgm_values thr.pgm | tr ' ' '\n' | grep -c '^255$')
n40=$(awk '$1 >= 40 { n++ } END { print n + 0 }' plain.txt)
# e >= 40 <=> m >= 39.5, threshold needs m >= 40: equal up to the [39.5, 40) band
[ "$n255" -le "$n40" ] && [ "$n255" -ge $((n40 - n40 / 10)) ] &&
    ok "--threshold 40: $n255 edge pixels, consistent with the plain map ($n40 >= 40)" ||
    not_ok "--threshold 40: $n255 pixels at 255, the plain map has $n40 >= 40"
rm -f plain.txt inv.txt

# ---- known answers on tiny images (sigma 0: no blur)
# a vertical step 10 -> 20 between columns 3 and 4 of an 8x3 image:
# gx = 4 * 10 at columns 3 and 4, 0 elsewhere, in every row (replicate)
printf 'P5\n8 3\n255\n' >step.pgm
for _ in 1 2 3; do printf '\012\012\012\012\024\024\024\024' >>step.pgm; done
row="0 0 0 40 40 0 0 0"
ge $G --sigma 0 step.pgm e.pgm
[ "$(pgm_values e.pgm)" = "$row $row $row" ] && ok "vertical step: Sobel gives 40 at the step" ||
    not_ok "vertical step: got $(pgm_values e.pgm)"
rm -f e.pgm
ge $G --sigma 0 --scale 2 step.pgm e.pgm
row2="0 0 0 80 80 0 0 0"
[ "$(pgm_values e.pgm)" = "$row2 $row2 $row2" ] && ok "vertical step, --scale 2: 80" ||
    not_ok "vertical step --scale 2: got $(pgm_values e.pgm)"
rm -f e.pgm
ge $G --sigma 0 --threshold 40 --invert step.pgm e.pgm
row3="255 255 255 0 0 255 255 255"
[ "$(pgm_values e.pgm)" = "$row3 $row3 $row3" ] && ok "vertical step, --threshold 40 --invert" ||
    not_ok "vertical step --threshold 40 --invert: got $(pgm_values e.pgm)"
rm -f e.pgm

# a constant image has no edges, except at the rim with --border zero
printf 'P5\n6 5\n255\n' >flat.pgm
head -c 30 /dev/zero | tr '\000' '\115' >>flat.pgm
zeros="0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0"
for b in replicate reflect101; do
    ge $G --sigma 2 --border $b flat.pgm e.pgm
    [ "$RC" -eq 0 ] && [ "$(pgm_values e.pgm)" = "$zeros" ] && ok "constant image, --border $b: all 0" ||
        not_ok "constant image, --border $b: exit $RC, got $(pgm_values e.pgm 2>/dev/null)"
    rm -f e.pgm
done
ge $G --sigma 0 --border zero flat.pgm e.pgm
v=$(pgm_values e.pgm)
inner=$(echo "$v" | awk '{ n = 0; for (y = 1; y < 4; y++) for (x = 1; x < 5; x++) n += $(y * 6 + x + 1); print n }')
rim=$(echo "$v" | awk '{ print ($1 > 0 && $6 > 0 && $25 > 0 && $30 > 0 && $3 > 0) }')
[ "$inner" = 0 ] && [ "$rim" = 1 ] && ok "constant image, --border zero: edges on the rim only" ||
    not_ok "constant image, --border zero: got $v"
rm -f e.pgm

# awkward sizes: 1x1, 1xN, Nx1, radius larger than the image
printf 'P5\n1 1\n255\n\177' >one.pgm
printf 'P5\n1 7\n255\n\001\002\003\004\005\006\007' >col.pgm
printf 'P5\n7 1\n255\n\001\002\003\004\005\006\007' >row.pgm
for f in one col row; do
    for b in replicate reflect101 zero; do
        ge $G --sigma 16 --border $b --cpu-ref "$f.pgm" "e_$f.pgm"
        [ "$RC" -eq 0 ] && [ -s "e_$f.pgm" ] ||
            { not_ok "$f.pgm --sigma 16 --border $b: exit $RC"; show_err; continue; }
        ok "$f.pgm --sigma 16 --border $b: exit 0, cpu-ref clean"
        rm -f "e_$f.pgm"
    done
done
ge $G --sigma 3 one.pgm e.pgm
[ "$(pgm_values e.pgm)" = 0 ] && ok "1x1 image, replicate: edge 0" || not_ok "1x1: got $(pgm_values e.pgm)"

no_stray_files "$W" && ok "no temp or partial file anywhere" || not_ok "$WHY"
finish
