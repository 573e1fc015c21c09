#!/bin/bash
# device_payload.sh — the two device calls of the real-data benchmarks
# (issues #10 and #11; plan and byte counts in tests/bench/REALDATA.md):
#   .device-bench-peers/    the static ffmpeg (xz), the photo subset, the
#                           1080p/4K clips made here: ffmpeg's baselines and
#                           the OpenCV scripts
#   .device-bench-gpuedge/  gpuedge and bench_mkclip (stripped, xz) with
#                           FFmpeg's libraries (../shared/device/pack), the
#                           same photos, the 720p clip (the 1080p/4K clips
#                           are remade there by bench_mkclip: no room for them)
# each checked to fit (with the tree that travels) under LIMIT_MIB (60), and
# prints the two `run` command lines.
#
#   bash tests/bench/device_payload.sh [peers] [gpuedge] [big]
#     big: a third, optional payload .device-bench-big/ (gpuedge + the one
#          5640x3172 JPEG only) for the "one photo as a whole process" target
#     photobatch: .device-bench-photobatch/ for device_run.sh photobatch
#          (a large photo batch): gpuedge and $BENCH_PROGS with their libraries
#          (stubbed), nvJPEG's library, and the source photos of
#          tests/bench/photo_batch.py (the JPEGs of at least 2560x1600 but
#          the 5640x3172 one, and two PNGs), plus $NVJPEG_CORPUS when set
#     videobatch: .device-bench-videobatch/ for device_run.sh videobatch
#          (tests/bench/video_batch.sh): gpuedge and bench_mkclip (stubbed
#          libraries), the static ffmpeg, bbb1080.mp4 and bbb2160.mp4
#     gputests: .device/ for tests/gpu/run's video steps (nvseg, nvdec):
#          gpuedge, test_nvsurf and $GPUTEST_PROGS (more tests/bin programs),
#          the clips test_nvseg_clips.sh / test_nvdec_clips.sh make here
#          (kept in build/device-clips) but test_nvdec.sh's timing clip,
#          and the soak's clips (soak, vidsan; one as clip.mp4);
#          no photos, no real clips
# Env: MAIN (the checkout that travels: /work/main), REALDATA (its media,
#   default build/realdata of this checkout; fetch_realdata.sh makes it),
#   GPUEDGE ($MAIN/gpuedge), MKCLIP ($MAIN/tests/bin/bench_mkclip, built
#   with make SMS=90 when missing), PHOTO_MB (photo budget, 13),
#   BENCH_PROGS (more programs for the gpuedge and big payloads, e.g.
#   tests/bin/bench_nvdec for device_run.sh's FIXED_COSTS=1; with
#   PHOTO_MB=0 to make room), LIMIT_MIB (60), PACK (../shared/device/pack), NVJPEG_XZ (libnvjpeg.so.13.xz
#   for the gpuedge call; default: one in $MAIN/.device*/, if any),
#   STUB_LIBS (1: stub the libraries gpuedge never calls, stub_libs.py).
set -euo pipefail
cd "$(dirname "$0")/../.."
MAIN=${MAIN:-/work/main}
RD=$(cd "${REALDATA:-build/realdata}" && pwd)
GPUEDGE=${GPUEDGE:-$MAIN/gpuedge}
MKCLIP=${MKCLIP:-$MAIN/tests/bin/bench_mkclip}
PHOTO_MB=${PHOTO_MB:-13}
LIMIT_MIB=${LIMIT_MIB:-60}
PACK=${PACK:-/work/shared/device/pack}
what=${*:-peers gpuedge}

die() { echo "device_payload: $*" >&2; exit 1; }
[ "$what" = gputests ] || { [ -d "$RD/photos" ] && [ -s "$RD/video/bbb720.mp4" ]; } ||
    die "no media in $RD (run tests/bench/fetch_realdata.sh)"
grep -q '^/\.device\*/' "$MAIN/.git/info/exclude" 2>/dev/null ||
    grep -q '^/\.device\*/' "$(git -C "$MAIN" rev-parse --git-common-dir)/info/exclude" 2>/dev/null ||
    die "$MAIN does not ignore /.device*/ (.git/info/exclude): the payloads would travel as tracked-looking files"
tree_bytes=$(cd "$MAIN" && git ls-files -z --cached --others --exclude-standard | du -cb --files0-from=- 2>/dev/null | tail -n 1 | cut -f1)

# The photo subset both calls carry: smallest first while the budget lasts
# (deterministic; a mix of JPEG and PNG, 1280x1024 .. 2560x1920).
photo_list() {
    local budget=$((PHOTO_MB * 1000000)) t=0 s f
    for f in $(cd "$RD/photos" && ls -S -r); do
        s=$(stat -c %s "$RD/photos/$f")
        [ $((t + s)) -le $budget ] || break
        t=$((t + s)); echo "$f"
    done
}
fresh() { # DIR: empty it but keep pack's library cache
    mkdir -p "$1"
    find "$1" -mindepth 1 -maxdepth 1 ! -name libs.tar.xz ! -name libs.key -exec rm -rf {} +
}
check_size() { # DIR [LIMIT_MIB]: what travels is the tree (tracked + untracked, not ignored) and DIR
    local b lim=${2:-$LIMIT_MIB}
    b=$(du -sb "$1" | cut -f1)
    awk -v b="$b" -v t="$tree_bytes" -v n="$(basename "$1")" -v lim="$lim" 'BEGIN {
        tot = (b + t) / 1048576
        printf "device_payload: %s: %.1f MB + the tree %.1f MB = %.1f MiB (limit %d MiB)\n", n, b / 1e6, t / 1e6, tot, lim
        exit (tot < lim ? 0 : 1) }' || die "$(basename "$1") is too big"
}
stripped() { # BIN DIR: a stripped copy in DIR
    cp "$1" "$2/" && strip "$2/$(basename "$1")"
}
programs_payload() { # DIR PROGRAM... : the programs (stripped, xz'd) + their libs
    local d=$1 p; shift
    [ -x "$GPUEDGE" ] || die "no $GPUEDGE (make -C $MAIN SMS=90)"
    fresh "$d"
    # pack's library cache from a sibling payload (pack rebuilds it if the
    # set of libraries differs): compressing them takes minutes here
    local c
    for c in "$MAIN"/.device-bench-*/libs.key; do
        [ -f "$d/libs.key" ] || [ ! -f "$c" ] || cp "$c" "$(dirname "$c")/libs.tar.xz" "$d/"
    done
    local tmp; tmp=$(mktemp -d)
    for p in "$@"; do
        [ -x "$p" ] || die "no $p (make -C $MAIN SMS=90 gpu-tests)"
        stripped "$p" "$tmp"
    done
    "$PACK" -o "$d" "$tmp"/* >&2
    rm -rf "$tmp"
    # STUB_LIBS=1: the libraries gpuedge never calls as stubs (42 -> 14 MB:
    # room for the static ffmpeg and the clips in one call; stub_libs.py)
    if [ "${STUB_LIBS:-0}" = 1 ]; then
        python3 "$(dirname "$0")/stub_libs.py" "$d/libs.tar.xz" "$@" -o "$d/libs.stub.tar.xz" >&2 &&
            mv "$d/libs.stub.tar.xz" "$d/libs.tar.xz"
    fi
    # the binaries travel xz'd (gpuedge: 9 MB -> 2 MB) and are unpacked by env.sh
    for b in "$d"/bin/*; do xz -6 -f "$b"; done
    cat >>"$d/env.sh" <<'ENV'
# bench payload: unpack the xz'd programs onto PATH
mkdir -p /tmp/bench-bin
for _f in "$_d"/bin/*.xz; do
  _n=$(basename "$_f" .xz); xz -dc "$_f" >/tmp/bench-bin/"$_n" && chmod +x /tmp/bench-bin/"$_n"
done
export PATH=/tmp/bench-bin:$PATH GPUEDGE=/tmp/bench-bin/gpuedge BENCH_PAYLOAD=$_d
ENV
}
gpuedge_payload() { # DIR PHOTO... : gpuedge + mkclip + libs + photos
    local d=$1; shift
    [ -x "$MKCLIP" ] || make -C "$(dirname "$(dirname "$(dirname "$MKCLIP")")")" --no-print-directory SMS=90 tests/bin/bench_mkclip >&2
    # shellcheck disable=SC2086
    programs_payload "$d" "$GPUEDGE" "$MKCLIP" ${BENCH_PROGS:-}
    mkdir -p "$d/photos" "$d/video"
    for f in "$@"; do cp "$RD/photos/$f" "$d/photos/"; done
}

out_cmds=()
for w in $what; do case $w in
peers)
    d=$MAIN/.device-bench-peers
    fresh "$d"
    mkdir -p "$d/photos" "$d/video"
    for f in $(photo_list); do cp "$RD/photos/$f" "$d/photos/"; done
    echo "device_payload: photos (both calls): $(ls "$d/photos" | wc -l), $(du -sb "$d/photos" | cut -f1) bytes: $(ls "$d/photos" | tr '\n' ' ')" >&2
    cp "$RD/ffmpeg/ffmpeg.xz" "$d/"
    cp "$RD/video/bbb1080.mp4" "$RD/video/bbb2160.mp4" "$d/video/"
    (cd "$d" && sha256sum video/*.mp4 >SHA256SUMS)
    cat >"$d/env.sh" <<'ENV'
# sourced on the GPU machine: the static ffmpeg onto PATH (xz'd to travel)
_d=$(cd "$(dirname "${BASH_SOURCE[0]:-$0}")" && pwd)
mkdir -p /tmp/bench-bin
[ -x /tmp/bench-bin/ffmpeg ] || { xz -dc "$_d/ffmpeg.xz" >/tmp/bench-bin/ffmpeg.tmp && chmod +x /tmp/bench-bin/ffmpeg.tmp && mv /tmp/bench-bin/ffmpeg.tmp /tmp/bench-bin/ffmpeg; }
export PATH=/tmp/bench-bin:$PATH FFMPEG=/tmp/bench-bin/ffmpeg BENCH_PAYLOAD=$_d
ENV
    check_size "$d"
    out_cmds+=("call A (peers): carry [\".device-bench-peers\"], timeout_s 600, command:
  . .device-bench-peers/env.sh; bash tests/bench/device_run.sh peers") ;;
gpuedge)
    d=$MAIN/.device-bench-gpuedge
    # shellcheck disable=SC2046
    gpuedge_payload "$d" $(photo_list)
    cp "$RD/video/bbb720.mp4" "$d/video/"
    # nvJPEG's library (tests/gpu/nvjpeg_inputs.sh fetches it; 3.6 MB xz'd)
    # when one is at hand: a --jpeg-decoder=nvjpeg row in the photo table
    lim=$LIMIT_MIB
    nvj=${NVJPEG_XZ:-}
    if [ -z "$nvj" ]; then
        for f in "$MAIN"/.device*/libnvjpeg.so.13.xz; do
            case $f in */.device-bench-*) ;; *) [ -f "$f" ] && nvj=$f && break ;; esac
        done
    fi
    if [ -n "$nvj" ] && [ -f "$nvj" ]; then
        cp "$nvj" "$d/libnvjpeg.so.13.xz"
        cat >>"$d/env.sh" <<'ENV'
xz -dc "$_d/libnvjpeg.so.13.xz" >/tmp/bench-bin/libnvjpeg.so.13 && export GPUEDGE_NVJPEG=/tmp/bench-bin/libnvjpeg.so.13
ENV
        lim=${LIMIT_MIB_NVJPEG:-63} # over the 60 MiB margin, under the call's 64
        echo "device_payload: with $nvj" >&2
    fi
    # the clips' hashes as made here, to tell whether the GPU machine's match
    (cd "$RD" && sha256sum video/bbb1080.mp4 video/bbb2160.mp4) >"$d/SHA256SUMS"
    check_size "$d" "$lim"
    out_cmds+=("call B (gpuedge): carry [\".device-bench-gpuedge\"], timeout_s 600, command:
  . .device-bench-gpuedge/env.sh; bash tests/bench/device_run.sh gpuedge") ;;
big)
    d=$MAIN/.device-bench-big
    gpuedge_payload "$d" Elephants_5640x3172.jpg
    # 16.4 MB of JPEG beside 44 MB of programs: over the 60 MiB margin,
    # under the call's 64 MiB
    check_size "$d" "${LIMIT_MIB_BIG:-63}"
    out_cmds+=("call C (optional, one 5640x3172 JPEG): carry [\".device-bench-big\"], timeout_s 300, command:
  . .device-bench-big/env.sh; bash tests/bench/device_run.sh big") ;;
photobatch)
    d=$MAIN/.device-bench-photobatch
    # shellcheck disable=SC2046
    STUB_LIBS=1 gpuedge_payload "$d" $(python3 tests/bench/photo_batch.py --list)
    nvj=${NVJPEG_XZ:-}
    [ -n "$nvj" ] || nvj=$(ls "$MAIN"/.device-nvj/libnvjpeg.so.13.xz 2>/dev/null || true)
    [ -f "$nvj" ] || die "no libnvjpeg.so.13.xz (tests/gpu/nvjpeg_inputs.sh DIR; xz DIR/libnvjpeg.so.13)"
    cp "$nvj" "$d/libnvjpeg.so.13.xz"
    cat >>"$d/env.sh" <<'ENV'
xz -dc "$_d/libnvjpeg.so.13.xz" >/tmp/bench-bin/libnvjpeg.so.13 && export GPUEDGE_NVJPEG=/tmp/bench-bin/libnvjpeg.so.13
ENV
    [ -z "${NVJPEG_CORPUS:-}" ] || cp -r "$NVJPEG_CORPUS" "$d/corpus"
    check_size "$d" "${LIMIT_MIB_NVJPEG:-63}"
    out_cmds+=("photo batch: carry [\".device-bench-photobatch\"], command:
  . .device-bench-photobatch/env.sh; bash tests/bench/device_run.sh photobatch") ;;
videobatch)
    d=$MAIN/.device-bench-videobatch
    STUB_LIBS=1 gpuedge_payload "$d"
    cp "$RD/ffmpeg/ffmpeg.xz" "$d/"
    cp "$RD/video/bbb1080.mp4" "$RD/video/bbb2160.mp4" "$d/video/"
    cat >>"$d/env.sh" <<'ENV'
xz -dc "$_d/ffmpeg.xz" >/tmp/bench-bin/ffmpeg && chmod +x /tmp/bench-bin/ffmpeg && export FFMPEG=/tmp/bench-bin/ffmpeg
ENV
    check_size "$d" "${LIMIT_MIB_VIDEO:-63}"
    out_cmds+=("video batches: carry [\".device-bench-videobatch\"], command:
  . .device-bench-videobatch/env.sh; bash tests/bench/device_run.sh videobatch") ;;
gputests)
    d=$MAIN/.device
    C=$MAIN/build/device-clips
    [ -s "$C/nvseg/frames.txt" ] || sh tests/gpu/test_nvseg_clips.sh "$C/nvseg"
    [ -n "$(ls "$C/nvclips" 2>/dev/null)" ] || sh tests/gpu/test_nvdec_clips.sh "$C/nvclips"
    # the soak's and vidsan's clips (10 frames of 640x360: FFV1 .mkv and
    # H.264 .mp4, one name each), one of them also as .device/clip.mp4 for
    # the cpuref and mixbatch steps
    if [ ! -d "$C/soakclips" ]; then
        rm -rf "$C/soakclips.tmp" && mkdir -p "$C/soakclips.tmp"
        src="testsrc2=s=640x360:r=25,noise=alls=20:allf=t+u"
        for i in 0 1; do
            ffmpeg -nostdin -v error -f lavfi -i "$src" -ss "$i" -frames:v 10 -c:v ffv1 -g 1 \
                "$C/soakclips.tmp/mkv_$i.mkv" &&
            ffmpeg -nostdin -v error -f lavfi -i "$src" -ss "$i" -frames:v 10 -c:v libx264 -g 10 \
                -bf 0 -pix_fmt yuv420p "$C/soakclips.tmp/mp4_$i.mp4" ||
                die "ffmpeg could not make the soak clips"
        done
        mv "$C/soakclips.tmp" "$C/soakclips" # whole or not at all
    fi
    # shellcheck disable=SC2086
    programs_payload "$d" "$GPUEDGE" "${TESTBIN:-$MAIN/tests/bin}/test_nvsurf" ${GPUTEST_PROGS:-}
    # test_nvdec.sh's 1080p timing clip (7.7 MB) does not fit beside the
    # rest: its timing rows skip (test_nvseg.sh times its own 1080p clip)
    cp -r "$C/nvseg" "$C/nvclips" "$C/soakclips" "$d/"
    cp "$C/soakclips/mp4_0.mp4" "$d/clip.mp4"
    rm -f "$d/nvclips/bench_1080p.mp4"
    check_size "$d" "${LIMIT_MIB_TESTS:-63}"
    out_cmds+=("GPU tests: carry [\".device\"], command:
  . .device/env.sh; bash tests/gpu/run info nvseg nvdec") ;;
*) die "unknown payload $w (peers, gpuedge, big, photobatch, videobatch, gputests)" ;;
esac; done
echo
for c in "${out_cmds[@]}"; do echo "$c"; echo; done
