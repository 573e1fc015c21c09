#!/bin/sh
# PNG writer benchmark (issue 10): gpuedge's writer (tests/bin/bench_png)
# against cv2.imencode (tests/bench/bench_png_cv.py) and stb_image_write on
# the same edge maps, side by side in one run.
#   sh tests/bench/bench_png.sh [MAP.pgm ...]
# Without maps it makes one: samples/photo.png resized to 5120x2880 (14.7
# Mpx, bench_png --upscale), through gpuedge --backend=cpu.  Env: THREADS
# (bench_png -t list, default 1,2,4,8,16 capped at the CPUs), REPS (9),
# TESTBIN (tests/bin), GPUEDGE (./gpuedge), PY (python3), STB=0 to skip
# the slow stb column.
cd "$(dirname "$0")/../.." || exit 1
B=${TESTBIN:-tests/bin}
GPUEDGE=${GPUEDGE:-./gpuedge}
PY=${PY:-python3}
REPS=${REPS:-9}
T=$(mktemp -d "${TMPDIR:-/tmp}/gpuedge-bench-png.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
ncpu=$(nproc 2>/dev/null || echo 1)
if [ -z "${THREADS:-}" ]; then
    THREADS=1
    for t in 2 4 8 16; do [ "$t" -le "$ncpu" ] && THREADS="$THREADS,$t"; done
fi
if [ $# -eq 0 ]; then
    "$B/bench_png" --upscale 5120 2880 samples/photo.png "$T/photo5120.ppm" &&
        "$GPUEDGE" --backend=cpu -q -y "$T/photo5120.ppm" "$T/photo5120.pgm" || exit 1
    rm -f "$T/photo5120.ppm"
    set -- "$T/photo5120.pgm"
fi
echo "## PNG writer: $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -n), $ncpu CPUs"
rc=0
stb=--stb
[ "${STB:-1}" = 0 ] && stb=
"$B/bench_png" -t "$THREADS" -r "$REPS" $stb "$@" || rc=1
if "$PY" -c 'import cv2' >/dev/null 2>&1; then
    "$PY" tests/bench/bench_png_cv.py -r "$REPS" "$@" || rc=1
else
    echo "skip cv2.imencode: $PY cannot import cv2"
fi
exit $rc
