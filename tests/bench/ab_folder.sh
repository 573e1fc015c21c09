#!/bin/bash
# ab_folder.sh — A/B of two gpuedge binaries on folders of videos (or any
# batch), whole process, interleaved as ab_env.sh (A B, then B A, ...):
# one line a run (wall, frames from the summary line, fps = frames /
# wall), then each binary's fps, and whether every output of every run is
# the same bytes as A's first.  With FFMPEG, ffmpeg decoding the folder
# alone (`ls | xargs -P P ffmpeg -i F -map 0:v:0 -f null -`) each round.
#
#   bash tests/bench/ab_folder.sh BIN_A BIN_B FOLDER...
# Env: GE_OPTS (-y -v), RUNS (3), FFMPEG (none), P (the cores), LOG (a
#   folder for the first run's stderr of each binary and folder).
# Exit 1 if a run failed or the outputs differ.
set -u
[ $# -ge 3 ] || { echo "usage: ab_folder.sh BIN_A BIN_B FOLDER..." >&2; exit 2; }
A=$1 B=$2; shift 2
GE_OPTS=${GE_OPTS:--y -v}
RUNS=${RUNS:-3}
FFMPEG=${FFMPEG:-none}
[ "$FFMPEG" = none ] || FFMPEG=$(realpath "$(command -v "$FFMPEG")") || exit 2
P=${P:-$(nproc)}
T=$(mktemp -d "${TMPDIR:-/tmp}/gpuedge-abf.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
[ -n "${LOG:-}" ] && mkdir -p "$LOG"
rc=0
now() { date +%s.%N; }
echo "# ab_folder $(date -u +%FT%TZ), $(nproc) CPUs; A: $A; B: $B; gpuedge $GE_OPTS -o OUT FOLDER"
for dir in "$@"; do
    d=$(basename "$dir")
    echo "## $d ($(ls "$dir" | wc -l) files)"
    declare -A fps=()
    for r in $(seq 1 "$RUNS"); do
        order="A B"; [ $((r % 2)) = 0 ] && order="B A"
        if [ "$FFMPEG" != none ]; then
            t0=$(now)
            (cd "$dir" && ls | xargs -P "$P" -I{} "$FFMPEG" -v error -i {} -map 0:v:0 -f null -)
            t1=$(now)
            echo "round $r ffmpeg decode alone: $(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f", b-a}') s"
            fps[ffmpeg]+="$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f", b-a}') "
        fi
        for w in $order; do
            bin=$A; [ $w = B ] && bin=$B
            out=$T/out-$w-$r
            t0=$(now)
            # shellcheck disable=SC2086
            "$bin" $GE_OPTS --report -o "$out" "$dir" >"$T/err" 2>&1
            st=$?
            t1=$(now)
            [ -n "${LOG:-}" ] && [ ! -f "$LOG/$d-$w.txt" ] && cp "$T/err" "$LOG/$d-$w.txt"
            n=$(sed -n 's/.*files: .* \([0-9][0-9]*\) frames in .*/\1/p' "$T/err" | tail -n 1)
            nv=$(grep -m1 'video frames decoded' "$T/err" | sed 's/^ *//')
            line=$(awk -v a="$t0" -v b="$t1" -v n="${n:-0}" 'BEGIN{printf "%.3f s, %d frames, %.0f fps", b-a, n, n/(b-a)}')
            echo "round $r $w: exit $st, $line; $nv"
            [ $st = 0 ] || rc=1
            fps[$w]+="$(awk -v a="$t0" -v b="$t1" -v n="${n:-0}" 'BEGIN{printf "%.0f", n/(b-a)}') "
            if [ -d "$T/first" ]; then
                diffs=$(cd "$out" && for f in *; do cmp -s "$f" "$T/first/$f" || echo "$f"; done | head -n 3)
                [ -z "$diffs" ] || { echo "  DIFFER from A's first: $diffs"; rc=1; }
                [ "$(ls "$out" | wc -l)" = "$(ls "$T/first" | wc -l)" ] || { echo "  output count differs"; rc=1; }
                rm -rf "$out"
            else
                mv "$out" "$T/first"
            fi
        done
    done
    echo "$d: A fps ${fps[A]}; B fps ${fps[B]}${fps[ffmpeg]:+; ffmpeg decode alone s ${fps[ffmpeg]}}"
    rm -rf "$T/first"
    unset fps
done
exit $rc
