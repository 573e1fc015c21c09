#!/bin/sh
# tests/gpu/startup_inputs.sh DIR — the short clips tests/gpu/startup_clip.sh
# times (made here: the GPU machine has no ffmpeg): 2 s of 1080p and 1 s of
# 4K, H.264 (testsrc2), as a short real clip would be.
set -eu
D=${1:-.device}
mkdir -p "$D"
ffmpeg -loglevel error -y -f lavfi -i testsrc2=size=1920x1080:rate=25:duration=2 \
    -c:v libx264 -pix_fmt yuv420p "$D/clip1080.mp4"
ffmpeg -loglevel error -y -f lavfi -i testsrc2=size=3840x2160:rate=25:duration=1 \
    -c:v libx264 -pix_fmt yuv420p "$D/clip4k.mp4"
ls -l "$D"/clip*.mp4
