#!/bin/bash
# make bench, the batch-of-videos step (BENCHMARKS.md "Video batches"): the
# Big Buck Bunny clips of build/realdata joined or cut by stream copy
# (bench_mkclip -j: the same packets as ffmpeg's concat demuxer with -c copy)
#   folder1080  COPIES copies of its first 132 frames at 1080p
#   folder2160  COPIES4K copies of the 265-frame 4K clip
#   long1080    the 530-frame 1080p clip joined 10 times (5,300 frames)
#   long2160    the 4K clip joined 4 times (1,060 frames)
# through
#   - ffmpeg decode alone (tests/bench/ff_decode.sh): a folder one process
#     a file, P at a time, a long file as one process; and ffmpeg's own
#     edge chain (format=gray,gblur=sigma=1,sobel -> FFV1) the same way on
#     the cases of CHAIN (skipped without FFMPEG)
#   - gpuedge to .mkv (folders: -o OUT/ FOLDER, with --video-engines of
#     ENGINES on folder1080), and a long file to /dev/null as well, with
#     each --hwdec of HWDECS
# fps = all frames / whole wall.  Every folder run's outputs are compared
# with the first one's (byte for byte): a schedule must not change them.  A
# table comes last; with BENCH_RESULTS=FILE the rows are appended to that
# results file (tests/bench/plot.py's format).
#
#   bash tests/bench/video_batch.sh [CASE...]     (default: all four)
# Env: REALDATA (build/realdata: video/bbb1080.mp4, bbb2160.mp4), GPUEDGE
#   (./gpuedge), MKCLIP (tests/bin/bench_mkclip), FFMPEG (ffmpeg; "none" to
#   skip), CHAIN (the cases ffmpeg's edge chain runs on: all; it takes
#   minutes on the 4K ones), COPIES (48), COPIES4K (16), ENGINES ("0 1 8":
#   0 is the default),
#   HWDECS ("auto none nvdec" for long files), P (the cores), WORK (a
#   temporary folder).
set -u
cd "$(dirname "$0")/../.." || exit 1
RD=${REALDATA:-build/realdata}
GPUEDGE=${GPUEDGE:-$PWD/gpuedge}
MKCLIP=${MKCLIP:-$(command -v bench_mkclip || echo tests/bin/bench_mkclip)}
FFMPEG=${FFMPEG:-ffmpeg}
COPIES=${COPIES:-48}
COPIES4K=${COPIES4K:-16}
ENGINES=${ENGINES:-0 1 8}
HWDECS=${HWDECS:-auto none nvdec}
P=${P:-$(nproc)}
W=${WORK:-$(mktemp -d)}
[ -n "${WORK:-}" ] || trap 'rm -rf "$W"' EXIT
CASES=${*:-folder1080 folder2160 long1080 long2160}
CHAIN=${CHAIN-$CASES}
rows=()
row() { rows+=("$(printf '%-12s %-42s %7s %7s  %s' "$1" "$2" "$3" "$4" "$5")"); }
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
in_chain() { case " $CHAIN " in *" $1 "*) return 0 ;; esac; return 1; }
have_ffmpeg() { [ "$FFMPEG" != none ] && command -v "$FFMPEG" >/dev/null 2>&1; }

for f in bbb1080 bbb2160; do
    [ -s "$RD/video/$f.mp4" ] || { echo "skip video_batch: no $RD/video/$f.mp4 (tests/bench/fetch_realdata.sh)"; exit 0; }
done
mk() { "$MKCLIP" "$@" >/dev/null || { echo "not ok video_batch: bench_mkclip $*"; exit 1; }; }
# CASE -> its input (a folder or a file), its frames and a label
setup() {
    case $1 in
    folder1080)
        mkdir -p "$W/folder1080"
        mk -j 1 -n 132 "$RD/video/bbb1080.mp4" "$W/c132.mp4"
        for i in $(seq -w 1 "$COPIES"); do cp "$W/c132.mp4" "$W/folder1080/c$i.mp4"; done
        in=$W/folder1080 frames=$((COPIES * 132)) label="$COPIES x 132 frames of 1080p H.264" ;;
    folder2160)
        mkdir -p "$W/folder2160"
        for i in $(seq -w 1 "$COPIES4K"); do cp "$RD/video/bbb2160.mp4" "$W/folder2160/d$i.mp4"; done
        in=$W/folder2160 frames=$((COPIES4K * 265)) label="$COPIES4K x 265 frames of 4K H.264" ;;
    long1080)
        mk -j 10 "$RD/video/bbb1080.mp4" "$W/long1080.mp4"
        in=$W/long1080.mp4 frames=5300 label="one 1080p H.264 file, 5300 frames" ;;
    long2160)
        mk -j 4 "$RD/video/bbb2160.mp4" "$W/long2160.mp4"
        in=$W/long2160.mp4 frames=1060 label="one 4K H.264 file, 1060 frames" ;;
    *) echo "video_batch: unknown case $1 (folder1080 folder2160 long1080 long2160)" >&2; exit 2 ;;
    esac
}
# NAME TOOL COMMAND...: one timed run, its row and result
timed() {
    local name=$1 tool=$2 t0 t1 rc
    shift 2
    t0=$(now)
    "$@" >/dev/null 2>"$W/err"
    rc=$?
    t1=$(now)
    if [ $rc = 0 ]; then
        row "$name" "$tool" "$(fps "$frames" "$t0" "$t1")" "$(secs "$t0" "$t1")" "${note:-}"
        result "$label" "$tool" "$(fps "$frames" "$t0" "$t1")" "$*"
    else
        row "$name" "$tool" - - "exit $rc: $(head -c 160 "$W/err" | tr '\n' ' ')"
    fi
    return $rc
}
echo "video_batch: $CASES; $(nproc) cores"
for c in $CASES; do
    setup "$c"
    note=
    if have_ffmpeg; then
        chain="-vf format=gray,gblur=sigma=1,sobel -c:v ffv1"
        mkdir -p "$W/ff"
        if [ -d "$in" ]; then
            timed "$c" "ffmpeg decode alone (xargs -P$P)" env FFMPEG="$FFMPEG" P="$P" \
                sh tests/bench/ff_decode.sh "$in"
            in_chain "$c" && timed "$c" "ffmpeg gblur+sobel -> ffv1 (xargs -P$P)" sh -c \
                "cd '$in' && ls | xargs -P '$P' -I{} '$FFMPEG' -v error -y -i {} -map 0:v:0 $chain '$W/ff/{}.mkv'"
        else
            timed "$c" "ffmpeg decode alone" env FFMPEG="$FFMPEG" sh tests/bench/ff_decode.sh "$in"
            in_chain "$c" && timed "$c" "ffmpeg gblur+sobel -> ffv1" "$FFMPEG" -v error -y -i "$in" -map 0:v:0 $chain "$W/ff/out.mkv"
        fi
        rm -rf "$W/ff"
    fi
    if [ -d "$in" ]; then
        first=
        engines=0
        [ "$c" = folder1080 ] && engines=$ENGINES
        for n in $engines; do
            out=$W/out-$c-$n
            note=
            if timed "$c" "gpuedge -> .mkv --video-engines $n" \
                "$GPUEDGE" -q -y --video-engines "$n" -o "$out" "$in" && [ -n "$first" ]; then
                d=$(cd "$out" && for f in *; do cmp -s "$f" "$first/$f" || echo "$f"; done | head -n 3)
                [ -z "$d" ] && d="same bytes as --video-engines $(basename "$first" | sed 's/.*-//')" ||
                    d="DIFFER: $d"
                rows[${#rows[@]}-1]="${rows[${#rows[@]}-1]}  $d"
            fi
            [ -z "$first" ] && [ -d "$out" ] && first=$out
            [ "$out" = "$first" ] || rm -rf "$out"
        done
    else
        for hw in $HWDECS; do
            rm -f "$W/out.mkv" # (a run writing over the one before's would pay its freeing)
            timed "$c" "gpuedge -> .mkv --hwdec=$hw" "$GPUEDGE" -q -y --hwdec="$hw" "$in" "$W/out.mkv"
            timed "$c" "gpuedge -> /dev/null --hwdec=$hw" "$GPUEDGE" -q -y --hwdec="$hw" "$in" /dev/null
        done
        rm -f "$W/out.mkv"
    fi
done
echo
printf '%-12s %-42s %7s %7s  %s\n' case tool fps s outputs
printf '%s\n' "${rows[@]}"
