#!/bin/bash
# make bench, the batch-of-videos step: a folder of N copies of a short
# 1080p clip (Big Buck Bunny, 132 frames, made from the 720p clip by
# bench_mkclip) through
#   - ffmpeg decode alone, one process a file, P at a time:
#       ls | xargs -P P -I{} ffmpeg -i {} -map 0:v:0 -f null -
#   - gpuedge -o OUT/ FOLDER to .mkv with --video-engines 1 2 4 8 (ENGINES)
#     and each --hwdec of HWDECS
# fps = all frames / whole wall.  The outputs of every gpuedge run are
# compared with the first one's (byte for byte): a schedule must not change
# them.  A table comes last; with BENCH_RESULTS=FILE the rows are appended
# to that results file (tests/bench/plot.py's format).
#
#   bash tests/bench/video_batch.sh
# Env: REALDATA (build/realdata: video/bbb720.mp4), GPUEDGE (./gpuedge),
#   MKCLIP (tests/bin/bench_mkclip), FFMPEG (ffmpeg; "none" to skip),
#   COPIES (48), FRAMES (132), ENGINES ("1 2 4 8"), HWDECS ("auto"),
#   P (parallel ffmpeg processes: the cores), WORK (a temporary folder).
set -u
cd "$(dirname "$0")/../.." || exit 1
RD=${REALDATA:-build/realdata}
GPUEDGE=${GPUEDGE:-$PWD/gpuedge}
MKCLIP=${MKCLIP:-$(command -v bench_mkclip || echo tests/bin/bench_mkclip)}
FFMPEG=${FFMPEG:-ffmpeg}
COPIES=${COPIES:-48}
FRAMES=${FRAMES:-132}
ENGINES=${ENGINES:-1 2 4 8}
HWDECS=${HWDECS:-auto}
P=${P:-$(nproc)}
W=${WORK:-$(mktemp -d)}
[ -n "${WORK:-}" ] || trap 'rm -rf "$W"' EXIT
mkdir -p "$W/in"
rows=()
row() { rows+=("$(printf '%-44s %8s %8s  %s' "$1" "$2" "$3" "$4")"); }
now() { date +%s.%N; }
fps() { awk -v f="$1" -v a="$2" -v b="$3" 'BEGIN { printf "%.0f", f / (b - a) }'; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
result() { # CASE TOOL FPS COMMAND
    [ -n "${BENCH_RESULTS:-}" ] || return 0
    local m
    m=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | sed -n '1s/^NVIDIA //p')
    printf '%s,%s %s cores,video batch,%s,%s,%s,fps,"%s"\n' "$(date -u +%F)" "${m:-$(uname -n)}" \
        "$(nproc)" "$1" "$2" "$3" "$4" >>"$BENCH_RESULTS"
}

src=$RD/video/bbb720.mp4
[ -s "$src" ] || { echo "skip video_batch: no $src (tests/bench/fetch_realdata.sh)"; exit 0; }
clip=$W/clip1080.mp4
"$MKCLIP" -s 1920x1080 -n "$FRAMES" -p veryfast -t 16 "$src" "$clip" >/dev/null 2>&1 ||
    { echo "not ok video_batch: bench_mkclip failed"; exit 1; }
for i in $(seq -w 1 "$COPIES"); do cp "$clip" "$W/in/c$i.mp4"; done
total=$((COPIES * FRAMES))
case_name="$COPIES x $FRAMES frames of 1080p H.264"
echo "video_batch: $case_name, $total frames, $(nproc) cores"

if [ "$FFMPEG" != none ] && command -v "$FFMPEG" >/dev/null 2>&1; then
    t0=$(now)
    (cd "$W/in" && ls | xargs -P "$P" -I{} "$FFMPEG" -v error -i {} -map 0:v:0 -f null -)
    t1=$(now)
    row "ffmpeg decode alone (xargs -P$P)" "$(fps $total $t0 $t1)" "$(secs $t0 $t1)" ""
    result "$case_name" "ffmpeg decode alone" "$(fps $total $t0 $t1)" "xargs -P$P ffmpeg -i F -map 0:v:0 -f null -"
else
    echo "skip video_batch: ffmpeg decode alone: no $FFMPEG"
fi

first=
for hw in $HWDECS; do
    for n in $ENGINES; do
        out=$W/out-$hw-$n
        rm -rf "$out"
        t0=$(now)
        "$GPUEDGE" -q -y --hwdec="$hw" --video-engines "$n" -o "$out" "$W/in" 2>"$W/err"
        rc=$?
        t1=$(now)
        same=
        if [ $rc = 0 ] && [ -n "$first" ]; then
            same=$(cd "$out" && for f in *; do cmp -s "$f" "$first/$f" || echo "$f"; done | head -n 3)
            [ -z "$same" ] && same="same bytes as $(basename "$first")" || same="DIFFER: $same"
        fi
        [ $rc = 0 ] && [ -z "$first" ] && first=$out
        [ $rc = 0 ] || same="exit $rc: $(head -c 200 "$W/err")"
        row "gpuedge -> .mkv --hwdec=$hw --video-engines $n" "$(fps $total $t0 $t1)" "$(secs $t0 $t1)" "$same"
        [ $rc = 0 ] && result "$case_name" "gpuedge .mkv hwdec=$hw engines=$n" "$(fps $total $t0 $t1)" \
            "gpuedge -q -y --hwdec=$hw --video-engines $n -o OUT/ FOLDER"
    done
done
echo
printf '%-44s %8s %8s  %s\n' "video batch" fps s "outputs"
printf '%s\n' "${rows[@]}"
