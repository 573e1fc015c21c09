#!/bin/sh
# Huge frames in strips: with a --mem-limit too small for the
# whole frame's buffers, the GPU runs the frame as horizontal strips and
# the CPU backend holds its row bands within the limit — either way the
# edge map and the histogram must be bit for bit those of the unlimited
# run, for every border, small and large radii, luma and RGB; a limit too
# small for even one row is one clear error line, exit 1, nothing written.
# On a GPU machine every case runs on both backends.
. "$(dirname "$0")/lib.sh"

if ! have_python; then
    skip "python3 is needed to write the big test images"
    finish
fi
# 20000 x 2500 grey (PGM, 50 MB) and 20000 x 400 RGB (PPM): not noise —
# diagonal ramps, blocks and a sprinkle of hash noise, so every edge value
# and every part of the histogram shows up.
python3 - <<'PY' || not_ok "cannot write the test images"
import sys
def img(path, w, h, ch):
    with open(path, "wb") as f:
        f.write(b"P%d\n%d %d\n255\n" % (5 if ch == 1 else 6, w, h))
        base = bytes(((x * 7) ^ (x >> 6) * 37) & 255 for x in range(w * ch))
        for y in range(h):
            s = (y * 13) % (w * ch)
            row = bytearray(base[s:] + base[:s])
            blk = ((y >> 7) * 53) & 255
            for x0 in range((y >> 5) % 97, w * ch, 997):
                row[x0:x0 + 64] = bytes([blk]) * len(row[x0:x0 + 64])
            for x in range((y * 31) % 11, w * ch, 11):
                row[x] = (row[x] + ((x * 2654435761 + y * 40503) >> 13 & 63)) & 255
            f.write(row)
img("big.pgm", 20000, 2500, 1)
img("wide.ppm", 20000, 400, 3)
PY

backends=cpu
have_gpu && backends="cpu gpu"

# whole-frame result, once per input/options (CPU backend, no limit)
check() { # NAME LIMIT INPUT OPTIONS...
    name=$1 lim=$2 in=$3
    shift 3
    "$GPUEDGE" -q --backend=cpu "$@" --hist ref.csv "$in" ref.pgm ||
        { not_ok "$name: the unlimited CPU run failed"; return; }
    for b in $backends; do
        rm -f out.pgm out.csv
        ge -q --backend=$b --mem-limit "$lim" "$@" --hist out.csv "$in" out.pgm
        if [ "$RC" -eq 0 ] && cmp -s out.pgm ref.pgm && cmp -s out.csv ref.csv; then
            ok "$name, $b backend, --mem-limit $lim: edge map and histogram == whole frame"
        else
            not_ok "$name, $b backend, --mem-limit $lim: exit $RC or output differs"
            show_err
        fi
    done
    rm -f ref.pgm ref.csv out.pgm out.csv
}

check "20000x2500 grey" 2M big.pgm
check "20000x2500 grey, reflect101, sigma 2.5" 3M big.pgm --border reflect101 --sigma 2.5
check "20000x2500 grey, zero border, sigma 16 (radius 32)" 12M big.pgm --border zero --sigma 16
check "20000x2500 grey, sigma 0, threshold, invert" 1M big.pgm --sigma 0 --threshold 40 --invert
check "20000x400 RGB, replicate" 4M wide.ppm
check "20000x400 RGB, reflect101, sigma 4" 8M wide.ppm --border reflect101 --sigma 4
if have_gpu; then
    # the staged path hands a frame that does not fit to the fused strips
    check "20000x400 RGB, --staged" 4M wide.ppm --staged
fi

# --cpu-ref checks the stripped result against the reference (exit 0)
for b in $backends; do
    ge -q --backend=$b --mem-limit 2M --cpu-ref big.pgm out.pgm
    expect_rc "--cpu-ref, $b backend, 20000x2500 in strips" 0
    rm -f out.pgm
done

# a batch of ordinary images with a tiny budget: strips of a few rows
mkdir b1 b2
for b in $backends; do
    "$GPUEDGE" -q --backend=cpu -o b1 "$SAMPLES"/*.png
    ge -q --backend=$b --mem-limit 512K -o b2 "$SAMPLES"/*.png
    same=1
    for f in b1/*; do cmp -s "$f" "b2/${f#b1/}" || same=0; done
    [ "$RC" -eq 0 ] && [ "$same" -eq 1 ] &&
        ok "samples batch, $b backend, --mem-limit 512K: every output == unlimited" ||
        { not_ok "samples batch, $b backend, --mem-limit 64K: exit $RC or outputs differ"; show_err; }
    rm -f b1/* b2/*
done

# too small for one row: one line, exit 1, nothing written
for b in $backends; do
    fails "--mem-limit below one row ($b)" 1 \
        '^gpuedge: big\.pgm: a 20000x2500 frame does not fit the memory budget .*raise --mem-limit$' \
        --backend=$b --mem-limit 100K big.pgm out.pgm
done

finish
