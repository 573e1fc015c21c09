#!/bin/bash
# tests/gpu/startup_clip.sh — what a short clip pays before its frames flow
# (start-up), on the GPU machine.  Builds nothing.
#
#   here:  sh tests/gpu/startup_inputs.sh .device-NAME     (the clips)
#   there: . .device-NAME/env.sh; bash tests/gpu/startup_clip.sh .device-NAME [RUNS]
#
# One binary, two start-ups, alternated RUNS times (default 7), medians
# of the whole command's wall time (the serial order, CUDA first and the
# input and encoder after, is gone: docs/bench-log.md "Start-up"):
#   overlap  the default: CUDA on its own thread while they open, kernels
#            loaded with the context (CUDA_MODULE_LOADING=EAGER)
#   lazy     the overlap with CUDA's lazy kernel loading (first launch)
# for each clip, with NVDEC (--hwdec=auto) and without (--hwdec=none), to
# .mkv; then one --report a mode (its start-up line) and bench_pipeline's
# 8K/4K whole-vs-steady with its start-up timeline, LAZY and EAGER.
set -u
D=${1:-.device}
RUNS=${2:-7}
OUT=${OUT:-/tmp/gpuedge-gpu}
mkdir -p "$OUT"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
GE=$(command -v gpuedge 2>/dev/null || echo "$PWD/gpuedge")
BP=$(command -v bench_pipeline 2>/dev/null || echo "$PWD/tests/bin/bench_pipeline")
LOG=$OUT/startup-clip.log
: >"$LOG"

mode_env() { # MODE: the environment of a start-up mode
    case $1 in
    overlap) ;;
    lazy) echo "CUDA_MODULE_LOADING=LAZY" ;;
    esac
}
ms() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.1f", (b-a)*1e3}'; }
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

table=()
for clip in "$D"/clip*.mp4; do
    [ -e "$clip" ] || { echo "no $D/clip*.mp4 (tests/gpu/startup_inputs.sh)"; exit 1; }
    c=$(basename "$clip" .mp4)
    for hw in auto none; do
        for i in $(seq "$RUNS"); do
            for m in overlap lazy; do
                t0=$(date +%s.%N)
                env $(mode_env $m) "$GE" -q -y --hwdec=$hw "$clip" "$T/o.mkv" 2>>"$LOG"
                rc=$?
                echo "time $c $hw $m $rc $(ms "$t0" "$(date +%s.%N)")" >>"$LOG"
            done
        done
        row="$c hwdec=$hw:"
        for m in overlap lazy; do
            med=$(awk -v c=$c -v h=$hw -v m=$m '$1=="time" && $2==c && $3==h && $4==m {print $6}' "$LOG" | median)
            bad=$(awk -v c=$c -v h=$hw -v m=$m '$1=="time" && $2==c && $3==h && $4==m && $5!=0' "$LOG" | wc -l)
            row="$row $m ${med} ms$([ "$bad" = 0 ] || echo " ($bad FAILED)");"
        done
        table+=("$row")
        for m in overlap lazy; do
            env $(mode_env $m) "$GE" -y -v --report --hwdec=$hw "$clip" "$T/o.mkv" >"$T/r" 2>&1
            echo "report $c $hw $m: $(grep -E 'start-up|while CUDA' "$T/r" | tr '\n' ' ')" >>"$LOG"
            table+=("  $m: $(grep 'start-up' "$T/r" | sed 's/^ *start-up (from the run.s start): //')")
        done
    done
done
for m in LAZY EAGER; do
    for sz in "7680 4320 300 3" "3840 2160 1000 3"; do
        CUDA_MODULE_LOADING=$m "$BP" $sz >"$T/b" 2>&1
        echo "bench $m $sz" >>"$LOG"
        cat "$T/b" >>"$LOG"
        table+=("bench_pipeline $sz $m: $(grep -E '^(pipeline|startup)' "$T/b" | sed 's/ (checksum.*//; s/, H2D.*GB.s;/;/' | tr '\n' ' ')")
    done
done
printf '%s\n' "${table[@]}" | tee "$OUT/startup-clip.txt"
