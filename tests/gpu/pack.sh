#!/bin/bash
# tests/gpu/pack.sh — one device call's payload in .device (what the GPU
# machine runs: ../shared/device/README.md), checked to fit the carry limit.
#
#   bash tests/gpu/pack.sh [--nv] [--video] SCRIPT [PROGRAM...]
#
#   SCRIPT     copied to .device/go.sh; the call's command is then
#                . .device/env.sh; OUT=$OUT bash .device/go.sh
#   PROGRAM    more programs to carry (tests/bin/...), stripped like gpuedge
#   --nv       the clips of tests/gpu/test_nvseg.sh and test_nvdec.sh, made
#              here with Debian's ffmpeg (.device/nvseg, .device/nvclips)
#   --video    the Big Buck Bunny clips of tests/bench/fetch_realdata.sh
#              (.device/video: bbb720.mp4, and bbb1080/bbb2160.mp4 when made
#              here) and bench_mkclip, to make longer clips there
# gpuedge and the programs must be built for sm_90 first:
#   make -j2 SMS=90 gpuedge gpu-tests
# Env: REALDATA (build/realdata), LIMIT_MIB (63), PACK (../shared/device/pack).
# The libraries' pack is cached in .device (libs.key); the clips are kept in
# build/device-clips between calls.
set -euo pipefail
cd "$(dirname "$0")/../.."
nv=0 video=0
while [ $# -gt 0 ]; do
    case $1 in
    --nv) nv=1 ;;
    --video) video=1 ;;
    *) break ;;
    esac
    shift
done
script=${1:?usage: pack.sh [--nv] [--video] SCRIPT [PROGRAM...]}
shift
LIMIT_MIB=${LIMIT_MIB:-63}
PACK=${PACK:-$(cd .. && pwd)/shared/device/pack}
RD=${REALDATA:-build/realdata}
die() { echo "pack.sh: $*" >&2; exit 1; }
[ -f "$script" ] || die "no $script"
[ -x gpuedge ] || die "no ./gpuedge (make -j2 SMS=90 gpuedge gpu-tests)"
grep -qx '/.device/' .git/info/exclude 2>/dev/null ||
    grep -qx '/.device/' "$(git rev-parse --git-common-dir)/info/exclude" 2>/dev/null ||
    echo /.device/ >>"$(git rev-parse --git-common-dir)/info/exclude"

progs=(gpuedge "$@")
[ $video = 0 ] || progs+=(tests/bin/bench_mkclip)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
stripped=()
for p in "${progs[@]}"; do
    [ -x "$p" ] || die "no $p (make -j2 SMS=90 gpuedge gpu-tests)"
    cp "$p" "$tmp/" && strip "$tmp/$(basename "$p")"
    stripped+=("$tmp/$(basename "$p")")
done
extras=()
if [ $nv = 1 ]; then
    C=build/device-clips
    [ -s $C/nvseg/frames.txt ] || sh tests/gpu/test_nvseg_clips.sh $C/nvseg
    [ -d $C/nvclips ] && [ -n "$(ls $C/nvclips)" ] || sh tests/gpu/test_nvdec_clips.sh $C/nvclips
    extras+=($C/nvseg $C/nvclips)
fi
if [ $video = 1 ]; then
    [ -s "$RD/video/bbb720.mp4" ] || die "no $RD/video/bbb720.mp4 (sh tests/bench/fetch_realdata.sh)"
    mkdir -p "$tmp/video"
    cp "$RD/video/bbb720.mp4" "$tmp/video/"
    for c in bbb1080 bbb2160; do # made here when there (else there, by bench_mkclip)
        [ ! -s "$RD/video/$c.mp4" ] || cp "$RD/video/$c.mp4" "$tmp/video/"
    done
    extras+=("$tmp/video")
fi
mkdir -p .device
find .device -mindepth 1 -maxdepth 1 ! -name libs.tar.xz ! -name libs.key -exec rm -rf {} +
"$PACK" -o .device "${stripped[@]}" ${extras[@]+-- "${extras[@]}"} >&2
cp "$script" .device/go.sh
tree=$(git ls-files -z --cached --others --exclude-standard | du -cb --files0-from=- 2>/dev/null | tail -n 1 | cut -f1)
dev=$(du -sb .device | cut -f1)
awk -v d="$dev" -v t="$tree" -v lim="$LIMIT_MIB" 'BEGIN {
    tot = (d + t) / 1048576
    printf "pack.sh: .device %.1f MB + the tree %.1f MB = %.1f MiB (limit %d MiB)\n", d / 1e6, t / 1e6, tot, lim
    exit (tot < lim ? 0 : 1) }' || die "too big to carry"
echo 'run: carry [".device"], command: . .device/env.sh; OUT=$OUT bash .device/go.sh'
