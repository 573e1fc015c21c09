#!/bin/bash
# make bench, the video step on real footage (issue #11 part 5): Big Buck
# Bunny at 1080p (530 frames) and 4K (265 frames), H.264, made by
# tests/bench/fetch_realdata.sh, through
#   - ffmpeg decode alone:  ffmpeg -i CLIP -map 0:v:0 -f null -
#   - the ffmpeg command:   ffmpeg -i CLIP -vf format=gray,gblur=sigma=1,sobel -c:v ffv1 out.mkv
#     and the same with -slices 16 -threads 16
#   - the OpenCV script tests/bench/cv_video.py (decode -> float32 pipeline -> FFV1)
#   - gpuedge --backend=gpu (with --hwdec=nvdec and --hwdec=none where
#     gpuedge has --hwdec) and --backend=cpu, each to .mkv (the default
#     codec), .mp4 and /dev/null, with --report (logs)
# Every figure is a whole process timed from outside: fps = frames / wall.
# A missing tool or GPU prints "skip ..."; a failed run "not ok ...".
# A table comes last.
#
#   bash tests/bench/video_real.sh [CLIP...]   (default: $REALDATA/video/bbb{1080,2160}.mp4)
# Env: REALDATA (build/realdata), GPUEDGE (./gpuedge), FFMPEG (ffmpeg; "none"
#   to skip), PY (python3 with cv2; "none" to skip the OpenCV script),
#   BACKENDS ("gpu cpu"), OUTS ("mkv mp4 null"), HWDECS ("nvdec none" when
#   gpuedge has --hwdec), CV_FRAMES (OpenCV: stop after N frames; 0 = all),
#   LOG (folder for the logs; default a temporary one), GE_ARGS (extra
#   gpuedge options).
set -u
cd "$(dirname "$0")/../.." || exit 1
ROOT=$PWD
RD=${REALDATA:-build/realdata}
GPUEDGE=${GPUEDGE:-$ROOT/gpuedge}
FFMPEG=${FFMPEG:-ffmpeg}
PY=${PY:-}
if [ -z "$PY" ]; then
    for p in python3 /usr/bin/python3; do
        if "$p" -c 'import cv2, numpy' >/dev/null 2>&1; then PY=$p; break; fi
    done
fi
BACKENDS=${BACKENDS-gpu cpu}
OUTS=${OUTS:-mkv mp4 null}
CV_FRAMES=${CV_FRAMES:-0}
T=$(mktemp -d "${TMPDIR:-/tmp}/gpuedge-videoreal.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
LOG=${LOG:-$T}
mkdir -p "$LOG"
L=$LOG/videoreal.log
if [ $# -eq 0 ]; then
    set -- "$RD/video/bbb1080.mp4" "$RD/video/bbb2160.mp4"
fi
rc=0
rows=()

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }'; }
row() { # clip run seconds frames
    rows+=("$(awk -v c="$1" -v r="$2" -v s="$3" -v n="$4" 'BEGIN {
        printf "%s\t%s\t%.3f\t%d\t%.1f", c, r, s, n, (s > 0 ? n / s : 0) }')")
}
run() { # name cmd...: runs with output to the log; sets DT (s) and RC
    echo "== $1" >>"$L"; shift
    echo "\$ $*" >>"$L"
    local t0; t0=$(now)
    "$@" >>"$L" 2>&1
    RC=$?
    DT=$(since "$t0")
    echo "rc=$RC wall=$DT" >>"$L"
}
have_ffmpeg=0
if [ "$FFMPEG" != none ] && command -v "$FFMPEG" >/dev/null 2>&1; then have_ffmpeg=1
else echo "skip videoreal ffmpeg: ${FFMPEG} not found"; fi
have_ge=0
if [ -n "$BACKENDS" ] && [ -x "$GPUEDGE" ]; then have_ge=1
elif [ -n "$BACKENDS" ]; then echo "skip videoreal gpuedge: no $GPUEDGE"; fi
hwdecs=""
if [ $have_ge = 1 ] && "$GPUEDGE" --help 2>&1 | grep -q -- '--hwdec'; then
    hwdecs=${HWDECS:-nvdec none}
fi
{ echo "# videoreal $(date -u +%FT%TZ) on $(uname -n), $(nproc) CPUs"
  [ $have_ge = 1 ] && "$GPUEDGE" --version 2>&1 | head -3
  [ $have_ffmpeg = 1 ] && "$FFMPEG" -hide_banner -version 2>&1 | head -1; } >>"$L"

for clip in "$@"; do
    c=$(basename "$clip" .mp4)
    if [ ! -r "$clip" ]; then
        echo "skip videoreal $c: no media (run tests/bench/fetch_realdata.sh)"
        continue
    fi
    echo "# $c: $(wc -c <"$clip") bytes, sha256 $(sha256sum "$clip" | cut -c1-16)" | tee -a "$L"
    frames=""
    if [ $have_ffmpeg = 1 ]; then
        # decode alone, on every core (ffmpeg's default threads); the frame
        # count comes from its own statistics line
        run "$c decode alone" "$FFMPEG" -hide_banner -nostdin -i "$clip" -map 0:v:0 -f null -
        if [ $RC = 0 ]; then
            frames=$(tail -n 40 "$L" | tr '\r' '\n' | sed -n 's/^frame= *\([0-9]*\).*/\1/p' | tail -n 1)
            row "$c" "ffmpeg decode alone (-f null)" "$DT" "${frames:-0}"
        else echo "not ok videoreal $c: ffmpeg decode rc=$RC"; rc=1; fi
        run "$c ffmpeg command" "$FFMPEG" -v error -nostdin -y -i "$clip" \
            -vf format=gray,gblur=sigma=1,sobel -c:v ffv1 "$T/ff.mkv"
        if [ $RC = 0 ]; then row "$c" "ffmpeg gblur,sobel -> ffv1" "$DT" "${frames:-0}"
        else echo "not ok videoreal $c: ffmpeg command rc=$RC"; rc=1; fi
        rm -f "$T/ff.mkv" # (each run writes a new file, as gpuedge's do)
        run "$c ffmpeg command, 16 slices" "$FFMPEG" -v error -nostdin -y -i "$clip" \
            -vf format=gray,gblur=sigma=1,sobel -c:v ffv1 -slices 16 -threads 16 "$T/ff.mkv"
        if [ $RC = 0 ]; then row "$c" "ffmpeg ... -slices 16 -threads 16" "$DT" "${frames:-0}"
        else echo "not ok videoreal $c: ffmpeg command (slices) rc=$RC"; rc=1; fi
        rm -f "$T/ff.mkv"
    fi
    if [ $have_ge = 1 ]; then
        for be in $BACKENDS; do
            hw=("")
            [ "$be" = gpu ] && [ -n "$hwdecs" ] && read -r -a hw <<<"$hwdecs"
            for h in "${hw[@]}"; do
                for o in $OUTS; do
                    case $o in null) out=/dev/null ;; *) out=$T/ge.$o ;; esac
                    opts=(-q -y "--backend=$be")
                    [ -n "$h" ] && opts+=("--hwdec=$h")
                    name="gpuedge ${opts[*]:2} -> $o"
                    rep=$T/rep.txt
                    # shellcheck disable=SC2086
                    run "$c $name" "$GPUEDGE" "${opts[@]}" ${GE_ARGS:-} --report \
                        --report-file "$rep" "$clip" "$out"
                    cat "$rep" >>"$L" 2>/dev/null
                    if [ $RC != 0 ]; then
                        if [ "$be" = gpu ] &&
                           ! msg=$("$GPUEDGE" -q -y --backend=gpu --frames 1 "$clip" /dev/null 2>&1); then
                            # no GPU here (the CPU machine): skip, not fail
                            echo "skip videoreal $c: gpuedge --backend=gpu: $(echo "$msg" | tail -n 1)"
                            continue 3
                        fi
                        echo "not ok videoreal $c: $name rc=$RC"; rc=1; continue
                    fi
                    n=$(sed -n 's/^ *frames \([0-9]*\),.*/\1/p' "$rep" | tail -n 1)
                    [ -z "$frames" ] && frames=$n
                    [ -n "$frames" ] && [ -n "$n" ] && [ "$n" != "$frames" ] &&
                        echo "note videoreal $c: $name made $n frames, ffmpeg decoded $frames"
                    row "$c" "$name" "$DT" "${n:-0}"
                    rm -f "$T/ge.$o"
                done
            done
        done
    fi
    if [ "${PY:-none}" != none ]; then
        cvargs=()
        [ "$CV_FRAMES" != 0 ] && cvargs=(--frames "$CV_FRAMES")
        run "$c OpenCV script" "$PY" tests/bench/cv_video.py "${cvargs[@]}" "$clip" "$T/cv.mkv"
        cvs=$(tail -n 5 "$L" | sed -n 's/^RESULT cv_video frames=\([0-9]*\) seconds=\([0-9.]*\).*/\1 \2/p')
        if [ $RC = 0 ] && [ -n "$cvs" ]; then
            read -r cvn cvt <<<"$cvs"
            row "$c" "OpenCV script (cv_video.py, open to release)" "$cvt" "$cvn"
        elif [ $RC = 77 ]; then echo "skip videoreal $c: OpenCV script: no cv2"
        else echo "not ok videoreal $c: OpenCV script rc=$RC"; rc=1; fi
        rm -f "$T/cv.mkv"
    else
        echo "skip videoreal OpenCV script: ${PY:+PY=$PY}${PY:-no python3 with cv2 and numpy}"
    fi
done

[ ${#rows[@]} -gt 0 ] || { echo "skip videoreal: nothing ran"; exit $rc; }
echo
echo "| clip | run | wall s | frames | fps | x ffmpeg command | x decode alone | x OpenCV |"
echo "|---|---|---:|---:|---:|---:|---:|---:|"
printf '%s\n' "${rows[@]}" | awk -F'\t' '
    { c[NR] = $1; r[NR] = $2; s[NR] = $3; n[NR] = $4; f[NR] = $5
      if ($2 == "ffmpeg gblur,sobel -> ffv1") cmd[$1] = $5
      if ($2 == "ffmpeg decode alone (-f null)") dec[$1] = $5
      if ($2 ~ /^OpenCV script/) cv[$1] = $5 }
    END { for (i = 1; i <= NR; i++)
        printf "| %s | %s | %.3f | %d | %.1f | %s | %s | %s |\n", c[i], r[i], s[i], n[i], f[i],
            (cmd[c[i]] > 0 ? sprintf("%.2f", f[i] / cmd[c[i]]) : "-"),
            (dec[c[i]] > 0 ? sprintf("%.2f", f[i] / dec[c[i]]) : "-"),
            (cv[c[i]] > 0 ? sprintf("%.1f", f[i] / cv[c[i]]) : "-") }'
echo "# log: $L"
# BENCH_RESULTS=FILE: the rows appended to that results file (the CSV
# format tests/bench/plot.py describes), one per run.
if [ -n "${BENCH_RESULTS:-}" ]; then
    [ -s "$BENCH_RESULTS" ] ||
        echo "date,machine,job,case,tool,value,unit,command" >"$BENCH_RESULTS"
    printf '%s\n' "${rows[@]}" | awk -F'\t' -v d="$(date -u +%F)" \
        -v m="$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1 |
                sed 's/^NVIDIA //') $(nproc) cores" '
        function q(x) { gsub(/"/, "\"\"", x); return "\"" x "\"" }
        { printf "%s,%s,video,%s,%s,%s,fps,%s\n", d, q(m), q($1), q($2), $5,
              q("tests/bench/video_real.sh") }' >>"$BENCH_RESULTS"
fi
exit $rc
