#!/bin/sh
# tests/gpu/test_nvseg_clips.sh DIR — makes the clips tests/gpu/test_nvseg.sh
# decodes in segments on NVDEC, with Debian's ffmpeg, here (the GPU machine
# has no ffmpeg).  Keyframes every 25 frames, closed GOPs (IDR / no open-gop),
# so src/io/vsource.c cuts them into segments; B-frames; one VFR clip; sizes
# not multiples of 16 (the decoders crop).  DIR/frames.txt: each clip's
# frame count (ffprobe), so the GPU test can tell that the last frame came.
set -eu
D=${1:?usage: test_nvseg_clips.sh DIR}
mkdir -p "$D"
mk() { ffmpeg -nostdin -hide_banner -v error -y "$@" </dev/null; }
src() { echo "testsrc2=size=$1:rate=25,noise=alls=2"; }
mk -f lavfi -i "$(src 642x362)" -frames:v 400 -c:v libx264 -preset fast -crf 30 -bf 3 \
    -g 25 -keyint_min 25 -sc_threshold 0 -pix_fmt yuv420p "$D/h264_seg.mp4"
# VFR: 3 of every 5 frames kept
mk -f lavfi -i "$(src 480x272)" -frames:v 400 -vf "select='lt(mod(n\,5)\,3)'" -fps_mode vfr \
    -c:v libx264 -preset fast -crf 30 -bf 2 -g 15 -keyint_min 15 -sc_threshold 0 \
    -pix_fmt yuv420p "$D/h264_vfr.mkv"
# HEVC Main10 (P010 surfaces), closed GOPs
mk -f lavfi -i "$(src 354x290)" -frames:v 300 -c:v libx265 -preset fast -crf 30 \
    -x265-params log-level=error:keyint=25:min-keyint=25:open-gop=0:scenecut=0:bframes=3 \
    -pix_fmt yuv420p10le "$D/hevc10_seg.mkv"
# short clips for the batch (one segment each) and a file that is not a video
mk -f lavfi -i "$(src 320x240)" -frames:v 30 -c:v libx264 -preset fast -crf 30 \
    -pix_fmt yuv420p "$D/short_a.mp4"
mk -f lavfi -i "$(src 256x144)" -frames:v 20 -c:v libx265 -preset fast -crf 30 \
    -x265-params log-level=error -pix_fmt yuv420p10le "$D/short_b.mkv"
head -c 3000 /dev/urandom >"$D/bad.mp4"
# the 1080p timing clip: 540 frames, a keyframe a second (plain testsrc2:
# small to carry)
mk -f lavfi -i "testsrc2=size=1920x1080:rate=30" -frames:v 540 -c:v libx264 -preset veryfast \
    -crf 32 -g 30 -keyint_min 30 -sc_threshold 0 -pix_fmt yuv420p "$D/seg_1080p.mp4"
: >"$D/frames.txt"
for f in h264_seg.mp4 h264_vfr.mkv hevc10_seg.mkv short_a.mp4 short_b.mkv seg_1080p.mp4; do
    echo "$f $(ffprobe -v error -select_streams v:0 -count_frames -show_entries \
        stream=nb_read_frames -of default=nw=1:nk=1 "$D/$f")" >>"$D/frames.txt"
done
ls -l "$D"; cat "$D/frames.txt"
