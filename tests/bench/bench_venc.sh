#!/bin/sh
# bench_venc.sh — the lossless encoders for .mkv side by side on edge maps
# (issue 11): each codec setting codes the same gray8 edge-map clips with
# ffmpeg's libavcodec (the one gpuedge links), with 1 thread and with every
# thread, and prints seconds, frames/s and bytes in one table, so that the
# ratios are measured in one run on one machine.
#
#   sh tests/bench/bench_venc.sh [EDGE.y4m ...]
#
# Without arguments it makes the clips: three 1080p sources (ffmpeg's
# testsrc2 and mandelbrot, a panning crop of samples/photo.png), each run
# through gpuedge (GPUEDGE, default ./gpuedge, CPU backend) into a y4m of
# edge maps.  FRAMES (default 60) frames each; THREADS (default nproc).
set -eu
GPUEDGE=${GPUEDGE:-./gpuedge}
FRAMES=${FRAMES:-60}
THREADS=${THREADS:-$(nproc)}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/bench_venc.XXXXXX")
trap 'rm -rf "$TMP"' EXIT INT TERM

if [ $# -eq 0 ]; then
    here=$(dirname "$0")
    photo=$here/../../samples/photo.png
    for src in testsrc2 mandelbrot photo; do
        if [ $src = photo ]; then
            ffmpeg -nostdin -hide_banner -loglevel error -y -loop 1 -framerate 30 -i "$photo" \
                -vf "scale=2400:1600,crop=1920:1080:x='t*200':y='t*80',format=yuv420p" \
                -frames:v "$FRAMES" -c:v libx264 -preset ultrafast -crf 18 "$TMP/$src.mp4"
        else
            ffmpeg -nostdin -hide_banner -loglevel error -y -f lavfi \
                -i "$src=size=1920x1080:rate=30" -frames:v "$FRAMES" \
                -c:v libx264 -preset ultrafast -crf 18 "$TMP/$src.mp4"
        fi
        "$GPUEDGE" -q --backend=cpu -y "$TMP/$src.mp4" "$TMP/$src.y4m"
        set -- "$@" "$TMP/$src.y4m"
    done
fi

# name | ffmpeg output options
CONFIGS='ffv1-range-ctx0-s4|-c:v ffv1 -level 3 -coder range_def -context 0 -slices 4 -slicecrc 1 -g 1
ffv1-range-ctx1-s4|-c:v ffv1 -level 3 -coder range_def -context 1 -slices 4 -slicecrc 1 -g 1
ffv1-rice-ctx0-s4|-c:v ffv1 -level 3 -coder rice -context 0 -slices 4 -slicecrc 1 -g 1
ffv1-rice-ctx0-s16|-c:v ffv1 -level 3 -coder rice -context 0 -slices 16 -slicecrc 1 -g 1
ffvhuff-left|-c:v ffvhuff -pred left
ffvhuff-plane|-c:v ffvhuff -pred plane
ffvhuff-median|-c:v ffvhuff -pred median
ffvhuff-median-ctx1|-c:v ffvhuff -pred median -context 1
magicyuv-left|-c:v magicyuv -pred left
magicyuv-gradient|-c:v magicyuv -pred gradient
magicyuv-median|-c:v magicyuv -pred median
rawvideo|-c:v rawvideo'

printf '%-22s %-12s %8s %8s %8s %6s %12s %6s\n' codec clip s_1thr fps_1 s_all fps_all bytes ratio
for clip in "$@"; do
    name=$(basename "$clip" .y4m)
    raw=$(ffprobe -v error -select_streams v:0 -show_entries stream=width,height \
        -of csv=p=0 "$clip" | awk -F, '{print $1*$2}')
    nf=$(ffprobe -v error -count_frames -select_streams v:0 \
        -show_entries stream=nb_read_frames -of csv=p=0 "$clip")
    cat "$clip" >/dev/null # in the page cache for every run alike
    echo "$CONFIGS" | while IFS='|' read -r cname opts; do
        t1=0 tn=0 bytes=0
        for th in 1 "$THREADS"; do
            # shellcheck disable=SC2086
            t=$( { /usr/bin/env time -f %e ffmpeg -nostdin -hide_banner -loglevel error \
                -threads 1 -i "$clip" -threads "$th" $opts -f matroska -y "$TMP/o.mkv" ; } 2>&1 | tail -1)
            if [ "$th" = 1 ]; then t1=$t; else tn=$t; fi
            bytes=$(stat -c %s "$TMP/o.mkv")
        done
        awk -v c="$cname" -v n="$name" -v t1="$t1" -v tn="$tn" -v nf="$nf" -v b="$bytes" \
            -v raw="$raw" 'BEGIN { printf "%-22s %-12s %8.2f %8.1f %8.2f %6.1f %12d %6.3f\n",
            c, n, t1, nf / t1, tn, nf / tn, b, b / (raw * nf) }'
    done
done
