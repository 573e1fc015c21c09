#!/bin/sh
# tests/gpu/test_nvdec_clips.sh DIR — makes the clips tests/gpu/test_nvdec.sh
# decodes both ways (software and NVDEC), with Debian's ffmpeg, here (the
# GPU machine has no ffmpeg): small (tens to a few hundred KB each) except
# the 1080p benchmark clip (300 frames, CRF 23).  Sizes not multiples of 16
# (322x242) exercise the decoders' cropping; 4:2:0 cannot code odd sizes.
set -eu
D=${1:?usage: test_nvdec_clips.sh DIR}
mkdir -p "$D"
mk() { ffmpeg -nostdin -hide_banner -v error -y "$@" </dev/null; }
src() { echo "testsrc2=size=$1:rate=25,noise=alls=10"; }
# H.264 8-bit, limited range (the default) and full range (yuvj420p: the
# VUI full-range flag), B-frames and several references
mk -f lavfi -i "$(src 322x242)" -frames:v 60 -c:v libx264 -preset fast -crf 20 -bf 3 \
    -pix_fmt yuv420p "$D/h264_322x242.mp4"
mk -f lavfi -i "$(src 640x360)" -frames:v 40 -c:v libx264 -preset fast -crf 22 \
    -pix_fmt yuvj420p "$D/h264_full_640x360.mkv"
# HEVC Main10 (P010 surfaces: shift 6), limited and full range
mk -f lavfi -i "$(src 322x242)" -frames:v 40 -c:v libx265 -preset fast -crf 22 \
    -x265-params log-level=error -pix_fmt yuv420p10le "$D/hevc10_322x242.mkv"
mk -f lavfi -i "$(src 352x288)" -frames:v 30 -c:v libx265 -preset fast -crf 22 \
    -x265-params log-level=error:range=full -color_range pc -pix_fmt yuv420p10le \
    "$D/hevc10_full_352x288.mkv"
# VP9 profile 0
mk -f lavfi -i "$(src 322x242)" -frames:v 40 -c:v libvpx-vp9 -b:v 400k -deadline realtime \
    -cpu-used 8 -pix_fmt yuv420p "$D/vp9_322x242.webm"
# AV1 (libaom; libsvtav1 is the other encoder Debian has)
mk -f lavfi -i "$(src 322x242)" -frames:v 30 -c:v libaom-av1 -cpu-used 8 -crf 35 \
    -pix_fmt yuv420p "$D/av1_322x242.mkv"
mk -f lavfi -i "$(src 640x360)" -frames:v 30 -c:v libaom-av1 -cpu-used 8 -crf 35 \
    -pix_fmt yuv420p "$D/av1_640x360.mkv"
mk -f lavfi -i "$(src 640x360)" -frames:v 30 -c:v libsvtav1 -preset 12 -crf 40 \
    -pix_fmt yuv420p "$D/av1svt_640x360.mkv"
# a mid-stream size change: two H.264 elementary streams back to back
mk -f lavfi -i "$(src 320x240)" -frames:v 20 -c:v libx264 -preset fast -bsf:v h264_mp4toannexb \
    -f h264 "$D/a.h264"
mk -f lavfi -i "$(src 480x272)" -frames:v 20 -c:v libx264 -preset fast -bsf:v h264_mp4toannexb \
    -f h264 "$D/b.h264"
cat "$D/a.h264" "$D/b.h264" >"$D/h264_sizechange.h264"
rm -f "$D/a.h264" "$D/b.h264"
# corrupt: an H.264 clip with slices overwritten by noise from the middle on
mk -f lavfi -i "$(src 640x360)" -frames:v 60 -c:v libx264 -preset fast -bsf:v h264_mp4toannexb \
    -f h264 "$D/c.h264"
python3 - "$D/c.h264" "$D/h264_corrupt.h264" <<'EOF'
import random, sys
b = bytearray(open(sys.argv[1], 'rb').read())
r = random.Random(11)
for k in range(40):  # 40 bursts of 64 noise bytes in the second half
    o = len(b) // 2 + r.randrange(len(b) // 2 - 64)
    b[o:o + 64] = bytes(r.randrange(256) for _ in range(64))
open(sys.argv[2], 'wb').write(b)
EOF
rm -f "$D/c.h264"
# MPEG-2: auto keeps it in software; --hwdec=nvdec forces NVDEC
mk -f lavfi -i "$(src 320x240)" -frames:v 30 -c:v mpeg2video -q:v 4 "$D/mpeg2_320x240.mpg"
# the 1080p benchmark clip
mk -f lavfi -i "testsrc2=size=1920x1080:rate=30" -frames:v 300 -c:v libx264 -preset medium \
    -crf 23 -pix_fmt yuv420p "$D/bench_1080p.mp4"
ls -l "$D"
