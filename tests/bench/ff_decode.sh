#!/bin/sh
# ff_decode.sh — ffmpeg decoding alone, the peer the video benchmarks set
# gpuedge against: a file as one process, a folder one process a file, P
# at a time (ls | xargs -P P ffmpeg -i F -map 0:v:0 -f null -).
#
#   sh tests/bench/ff_decode.sh FILE|FOLDER
# Env: FFMPEG (ffmpeg), P (the cores).
set -u
FFMPEG=${FFMPEG:-ffmpeg}
case $FFMPEG in */*) FFMPEG=$(realpath "$FFMPEG") || exit 2 ;; esac
if [ -d "$1" ]; then
    cd "$1" && ls | xargs -P "${P:-$(nproc)}" -I{} "$FFMPEG" -nostdin -v error -i {} -map 0:v:0 -f null -
else
    exec "$FFMPEG" -nostdin -v error -i "$1" -map 0:v:0 -f null -
fi
