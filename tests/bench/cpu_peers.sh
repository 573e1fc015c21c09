#!/bin/bash
# gpuedge's CPU backend against its CPU peers on the same cores:
#   - OpenCV (tests/bench/cpu_peers.py): the same float32 pipeline, and the
#     fastest usual 8-bit chain for reference; processing time only;
#   - FFmpeg: y4m → extractplanes=y,convolution (row + column passes with
#     gpuedge's taps in integer form),sobel → rawvideo, minus a no-filter run.
# gpuedge's figure is the median of its --report=json "compute" stage (the
# CPU backend's compute, no PNG decode/encode).  Inputs: ffmpeg testsrc2.
#
#   bash tests/bench/cpu_peers.sh            # THREADS=2 RUNS=15 SIGMA=1
# Env: GPUEDGE (binary), PY (python with cv2; default /usr/bin/python3),
#      FFMPEG, THREADS, RUNS, SIGMA, SIZES ("1920x1080 3840x2160"), FRAMES (10),
#      WORK (scratch dir, default a mktemp dir, removed at the end).
# A missing peer prints "SKIP <peer>: why" and the rest still runs.
set -u
cd "$(dirname "$0")/../.." || exit 1
ROOT=$PWD
GPUEDGE=${GPUEDGE:-$ROOT/gpuedge}
[ -x "$GPUEDGE" ] || GPUEDGE=$ROOT/build/rel/gpuedge
PY=${PY:-/usr/bin/python3}
FFMPEG=${FFMPEG:-ffmpeg}
THREADS=${THREADS:-2}
RUNS=${RUNS:-15}
SIGMA=${SIGMA:-1}
SIZES=${SIZES:-"1920x1080 3840x2160"}
FRAMES=${FRAMES:-10}
if [ -n "${WORK:-}" ]; then mkdir -p "$WORK"; else
    WORK=$(mktemp -d /tmp/cpu_peers.XXXXXX); trap 'rm -rf "$WORK"' EXIT; fi

if [ ! -x "$GPUEDGE" ]; then echo "cpu_peers: no gpuedge binary (make, or set GPUEDGE)" >&2; exit 1; fi
if ! command -v "$FFMPEG" >/dev/null 2>&1; then
    echo "cpu_peers: ffmpeg is needed to make the inputs" >&2; exit 1; fi
[ -x "$PY" ] || PY=python3

median() { sort -g | awk '{a[NR]=$1} END {if (NR) print a[int((NR+1)/2)]}'; }
# median compute ms of RUNS separate runs (one frame each: no pool contention)
json_compute() { "$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["stages"]["compute"]["median_ms"])' "$1"; }

declare -A T NOTE   # T[tool,size] = ms/frame, NOTE[tool,size]
ROWS=()
echo "# machine: $(nproc) cores, $(uname -m), threads=$THREADS, sigma=$SIGMA"
echo "# gpuedge: $GPUEDGE ($("$GPUEDGE" --version 2>/dev/null | head -1))"

for S in $SIZES; do
    W=${S%x*}; H=${S#*x}
    png=$WORK/t$S.png
    "$FFMPEG" -loglevel error -nostdin -y -f lavfi -i "testsrc2=size=$S:rate=25" \
        -frames:v 1 "$png" || exit 1
    # --- gpuedge CPU backend -------------------------------------------
    for i in $(seq 1 "$RUNS"); do
        "$GPUEDGE" -q -y --backend=cpu --threads "$THREADS" --sigma "$SIGMA" \
            --report=json --report-file "$WORK/r.json" "$png" "$WORK/e$S.png" || exit 1
        json_compute "$WORK/r.json"
    done > "$WORK/g$S.txt"
    T[gpuedge,$S]=$(median < "$WORK/g$S.txt")
    ROWS+=("gpuedge-cpu $S")
    # --- OpenCV ---------------------------------------------------------
    out=$("$PY" tests/bench/cpu_peers.py --threads "$THREADS" --runs "$RUNS" \
          --sigma "$SIGMA" "$png" "$WORK/e$S.png"); rc=$?
    echo "$out" | grep -E '^(INFO|SKIP)' | sed "s/^/# $S /"
    if [ $rc -eq 0 ]; then
        while read -r _ tool _ ms rest; do
            T[$tool,$S]=$ms; ROWS+=("$tool $S"); NOTE[$tool,$S]=$rest
        done < <(echo "$out" | grep '^RESULT')
    fi
    # --- FFmpeg ---------------------------------------------------------
    y4m=$WORK/c$S.y4m
    "$FFMPEG" -loglevel error -nostdin -y -f lavfi -i "testsrc2=size=$S:rate=25" \
        -frames:v "$FRAMES" -pix_fmt yuv420p "$y4m" || exit 1
    # gpuedge's taps as integers over 4096 (convolution takes integer matrices)
    M=$("$PY" - "$SIGMA" <<'EOF'
import math, sys
s = float(sys.argv[1]); r = max(1, math.ceil(2 * s))
phi = lambda x: 0.5 * (1 + math.erf(x / math.sqrt(2)))
w = [phi((k + .5) / s) - phi((k - .5) / s) for k in range(-r, r + 1)]
print(" ".join(str(round(4096 * x / sum(w))) for x in w))
EOF
)
    RD=$("$PY" -c "import sys; print(1/sum(int(x) for x in sys.argv[1:]))" $M)
    VF="extractplanes=y,convolution=0m='$M':0rdiv=$RD:0mode=row,convolution=0m='$M':0rdiv=$RD:0mode=column,sobel"
    FF=("$FFMPEG" -hide_banner -nostdin -benchmark -threads "$THREADS" -i "$y4m" -filter_threads "$THREADS")
    ffrt() { "${FF[@]}" "$@" -f rawvideo -y /dev/null 2>&1 | sed -n 's/.*rtime=\([0-9.]*\)s.*/\1/p'; }
    [ "$S" = "${SIZES%% *}" ] && echo "# ffmpeg: ${FF[*]} -vf \"$VF\" -f rawvideo -y /dev/null"
    base=$(for i in 1 2 3 4 5; do ffrt; done | median)
    filt=$(for i in 1 2 3 4 5; do ffrt -vf "$VF"; done | median)
    if [ -n "$base" ] && [ -n "$filt" ]; then
        T[ffmpeg,$S]=$(awk -v a="$filt" -v b="$base" -v n="$FRAMES" 'BEGIN{printf "%.3f", (a-b)*1000/n}')
        ROWS+=("ffmpeg $S"); NOTE[ffmpeg,$S]="(filtered ${filt}s - plain ${base}s)/$FRAMES"
        # edge-map difference on frame 1 (Y plane) against gpuedge on the same clip;
        # gpuedge expands limited-range Y by 255/219 (DESIGN.md §1.2), so the check
        # gives sobel the same scale; "inner" leaves out the 2-pixel rim.
        if "$GPUEDGE" -q -y --backend=cpu --threads "$THREADS" --sigma "$SIGMA" --frames 1 \
               "$y4m" "$WORK/ge$S.y4m" 2>/dev/null &&
           "$FFMPEG" -loglevel error -nostdin -y -i "$WORK/ge$S.y4m" -f rawvideo -pix_fmt gray "$WORK/ge$S.raw" &&
           "$FFMPEG" -loglevel error -nostdin -y -i "$y4m" -frames:v 1 -vf "${VF%sobel}sobel=scale=1.164384" -f rawvideo -pix_fmt gray "$WORK/fe$S.raw"; then
            NOTE[ffmpeg,$S]+=$("$PY" -c 'import sys
a=open(sys.argv[1],"rb").read(); b=open(sys.argv[2],"rb").read()
d=[abs(x-y) for x,y in zip(a,b)] if len(a)==len(b) else None
W,H=int(sys.argv[3]),int(sys.argv[4])
inner=max(d[y*W+x] for y in range(2,H-2) for x in range(2,W-2)) if d else 0
print(" maxdiff=%d inner-maxdiff=%d ndiff=%d (vs gpuedge, same Y plane)" % (max(d), inner, sum(1 for x in d if x)) if d else " (sizes differ)")' \
                "$WORK/ge$S.raw" "$WORK/fe$S.raw" "$W" "$H")
        fi
    else
        echo "SKIP ffmpeg $S: no -benchmark rtime in its output"
    fi
done

echo
printf '| %-11s | %-9s | %9s | %13s | %s\n' tool size ms/frame "× gpuedge-cpu" notes
echo '|---|---|---:|---:|---|'
for row in "${ROWS[@]}"; do
    set -- $row; tool=$1; S=$2
    ms=${T[${tool%-cpu},$S]:-${T[$tool,$S]}}
    g=${T[gpuedge,$S]}
    printf '| %-11s | %-9s | %9.2f | %13.2f | %s\n' "$tool" "$S" "$ms" \
        "$(awk -v a="$ms" -v b="$g" 'BEGIN{print a/b}')" "${NOTE[$tool,$S]:-median of $RUNS runs}"
done
