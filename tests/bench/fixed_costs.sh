#!/bin/bash
# fixed_costs.sh — where a short video run's wall goes on the GPU (issue
# #11: the 530-frame 1080p and 265-frame 4K targets), whole process:
#   - the process alone: `gpuedge --help` (exec, loading, exit; no CUDA)
#     and `gpuedge --version` (the same with CUDA's start: it probes the GPU)
#   - NVDEC sessions in one process (bench_nvdec CLIP 1 K): when each
#     session's first frame comes and its rate after it
#   - gpuedge --backend=gpu --hwdec=nvdec, each run split by its traces
#     (GPUEDGE_TRACE=pipe, GPUEDGE_TRACE=vsrc, --report's start-up line) into
#     before main (exec to the run's start), CUDA ready, the segments'
#     first and last frames (from the video's open), the engine's end,
#     everything freed, and the exit (freed to the shell's clock):
#       one1    --frames 1 -> /dev/null          (the fixed part alone)
#       null    all frames -> /dev/null
#       mkv     all frames -> OUTDIR/fc.mkv
#       sess1   all frames -> /dev/null, --threads 1 (one NVDEC
#               session: one engine's rate inside gpuedge)
#     RUNS rounds, the configurations' order reversed every other round
#     (the position effect, BENCHMARKS "2026-12-02 (later)").
#
#   bash tests/bench/fixed_costs.sh CLIP...
# Env: GPUEDGE (./gpuedge), BENCH_NVDEC (tests/bin/bench_nvdec; "none" to
#   skip), RUNS (3), OUTDIR (/tmp), KS (bench_nvdec's K list: "1 2 5 7"),
#   GE_OPTS (gpuedge's options: "--backend=gpu --hwdec=nvdec"; a check of
#   the script on a machine without a GPU: "--backend=cpu"), LOG (a folder
#   for every run's stderr and report).
# A run that fails prints "not ok ..." and the script exits 1.
set -u
cd "$(dirname "$0")/../.." || exit 1
GPUEDGE=${GPUEDGE:-$PWD/gpuedge}
BENCH_NVDEC=${BENCH_NVDEC:-$PWD/tests/bin/bench_nvdec}
RUNS=${RUNS:-3}
OUTDIR=${OUTDIR:-/tmp}
KS=${KS:-1 2 5 7}
GE_OPTS=${GE_OPTS:---backend=gpu --hwdec=nvdec}
[ $# -gt 0 ] || { echo "usage: fixed_costs.sh CLIP..." >&2; exit 2; }
T=$(mktemp -d "${TMPDIR:-/tmp}/gpuedge-fc.XXXXXX") || exit 1
trap 'rm -rf "$T" "$OUTDIR/fc.mkv"' EXIT
rc=0
now() { date +%s.%N; }

echo "# fixed_costs $(date -u +%FT%TZ), $(nproc) CPUs, $(nvidia-smi -L 2>/dev/null | head -n 1)"
# shellcheck disable=SC2086
if ! msg=$("$GPUEDGE" -q -y $GE_OPTS --frames 1 "$1" /dev/null 2>&1); then
    echo "skip fixed_costs: gpuedge $GE_OPTS: $(echo "$msg" | tail -n 1)"
    exit 0
fi
for a in --help --version; do
    ts=()
    for _ in 1 2 3 4 5; do
        t0=$(now); "$GPUEDGE" "$a" >/dev/null 2>&1; t1=$(now)
        ts+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", 1e3 * (b - a) }')")
    done
    [ "$a" = --help ] && what="no CUDA" || what="CUDA started, the GPU probed"
    echo "gpuedge $a (exec to exit, $what): ${ts[*]} ms"
done

# one gpuedge run, split: NAME CLIP OUT [ENV...]
split_run() {
    local name=$1 clip=$2 out=$3 t0 t1 w; shift 3
    # shellcheck disable=SC2206
    local args=(-v -y $GE_OPTS --report --report-file "$T/rep")
    [ "$name" = one1 ] && args+=(--frames 1)
    [ "$out" = /dev/null ] || rm -f "$out" # (a new file each run: not the freeing of the last)
    t0=$(now)
    env GPUEDGE_TRACE=pipe,vsrc "$GPUEDGE" "${args[@]}" "$@" "$clip" "$out" \
        >"$T/err" 2>&1
    w=$?
    t1=$(now)
    if [ $w != 0 ]; then
        echo "not ok fixed_costs $(basename "$clip") $name: rc=$w: $(tail -n 1 "$T/err")"
        rc=1; return
    fi
    cat "$T/rep" >>"$T/err"
    awk -v name="$name" -v t0="$t0" -v t1="$t1" '
        /exit trace/ {
            for (i = 1; i <= NF; i++) {
                if ($i == "ended") eng = $(i + 1)
                if ($i == "freed") freed = $(i + 1)
                if ($i == "at") began = $(i + 1)
            } }
        /trace segment/ {
            for (i = 1; i <= NF; i++) {
                if ($i == "first") fi_ = fi_ sep $(i + 1)
                if ($i == "end") en = en sep $(i + 1)
                if ($i == "waited") { wt = wt sep $(i + 1); sep = " " }
            }
            nseg++ }
        /^ *frames [0-9]+,/ { fr = $2 + 0 }
        /start-up \(from/ { for (i = 1; i <= NF; i++) if ($i == "ready") { cuda = $(i + 1); sub(/,$/, "", cuda) } }
        END {
            wall = t1 - t0
            pre = began - t0
            ex = t1 - (began + freed)
            printf "  %-5s wall %.3f s (%.0f fps): before main %.0f ms, CUDA ready %s s, " \
                   "engine ended %.3f, freed %.3f, exit %.0f ms; %d segments, first frames [%s], " \
                   "ends [%s] s after the open, waited for room [%s] s\n", name, wall,
                   (wall > 0 ? fr / wall : 0), 1e3 * pre, cuda, eng, freed, 1e3 * ex, nseg, fi_,
                   en, wt }' "$T/err"
    [ -z "${LOG:-}" ] || { mkdir -p "$LOG" && cp "$T/err" "$LOG/fc.$(basename "$clip" .mp4).$name.$t0.log"; }
}

for clip in "$@"; do
    c=$(basename "$clip" .mp4)
    [ -r "$clip" ] || { echo "not ok fixed_costs $c: no $clip"; rc=1; continue; }
    echo
    echo "## $c: $(wc -c <"$clip") bytes"
    if [ "$BENCH_NVDEC" != none ]; then
        # shellcheck disable=SC2086
        "$BENCH_NVDEC" "$clip" $KS || { echo "not ok fixed_costs $c: bench_nvdec"; rc=1; }
    fi
    cfgs=(one1 null mkv sess1)
    for r in $(seq 1 "$RUNS"); do
        echo "round $r"
        order=("${cfgs[@]}")
        [ $((r % 2)) = 0 ] && order=(sess1 mkv null one1)
        for k in "${order[@]}"; do
            case $k in
            one1|null) split_run "$k" "$clip" /dev/null ;;
            mkv) split_run mkv "$clip" "$OUTDIR/fc.mkv" ;;
            sess1) split_run sess1 "$clip" /dev/null --threads 1 ;;
            esac
        done
    done
done
echo "# fixed_costs rc=$rc"
exit $rc
