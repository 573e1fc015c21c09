#!/bin/bash
# tests/gpu/test_nvseg.sh CLIPDIR — one video decoded in segments on several
# NVDEC sessions at once (src/io/vsource.c), on a GPU machine.
# CLIPDIR holds test_nvseg_clips.sh's clips (made where ffmpeg is).  Prints
# ok / not ok / skip lines, then timings; logs under $OUT/nvseg.
#   nvsurf    tests/bin/test_nvsurf on two clips (4 sessions holding frames)
#   equal     each clip (H.264 with B-frames, H.264 VFR, HEVC Main10) and
#             --start / --frames / --threads 3 variants: --hwdec=nvdec in
#             segments (-v must say "N segments on K NVDEC decoders", K >= 2,
#             and "NVDEC decoding") == --hwdec=none --threads 1 (one
#             software decoder): the .y4m edge maps and --hist byte for
#             byte; the whole-file runs end with the last frame (frame
#             counts from ffprobe in frames.txt); one .mkv as well, also
#             with the video opened on NVDEC while CUDA starts
#   no GPU    CUDA_VISIBLE_DEVICES empty: --hwdec=nvdec fails in one line;
#             the defaults run the CPU backend == software
#   auto      --hwdec=auto's rule: software segments with 16 threads, NVDEC
#             segments with 4, both == software; the same from a pipe (read
#             once: one session)
#   batch     -o DIR over segmented and short clips and a bad file, NVDEC:
#             each output == its one-at-a-time software run, the bad file
#             fails alone with one line (exit 1), nothing partial left;
#             --skip-existing remakes only the missing output
#   memcheck  compute-sanitizer memcheck and racecheck over a segmented NVDEC run
#   timing    seg_1080p.mp4 (1080p H.264, 540 frames) -> /dev/null and
#             -> .mkv with --report: NVDEC in segments, one NVDEC session
#             (--threads 1), software (--hwdec=none)
set -u
D=${1:?usage: test_nvseg.sh CLIPDIR}
OUT=${OUT:-/tmp/gpuedge-gpu}
GPUEDGE=${GPUEDGE:-$(command -v gpuedge || echo ./gpuedge)}
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
TO=${NVSEG_TIMEOUT:-120}
L=$OUT/nvseg
mkdir -p "$L"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
ok() { echo "ok nvseg: $*"; }
not_ok() { echo "not ok nvseg: $*"; fails=$((fails + 1)); }
skip() { echo "skip nvseg: $*"; }
# ge LOG ARGS...: gpuedge under a timeout, stderr+stdout to LOG; sets RC
ge() { local log=$1; shift; timeout "$TO" "$GPUEDGE" "$@" >"$log" 2>&1; RC=$?; }
nframes() { awk -v c="$1" '$1 == c { print $2 }' "$D/frames.txt"; }
segs() { grep -m1 -o '[0-9]* segments on [0-9]* NVDEC decoders' "$1"; }

if ! nvidia-smi -L >/dev/null 2>&1; then skip "no CUDA device"; exit 0; fi
[ -f "$D/frames.txt" ] || { not_ok "no clips in $D (tests/gpu/test_nvseg_clips.sh makes them)"; exit 1; }

# ---- surfaces: 4 sessions at once holding 60 frames each, detached (the
# fix) == software luma; held as libavcodec gives them (the old failure):
# information lines (tests/gpu/test_nvsurf.c)
NVSURF=${NVSURF:-$(command -v test_nvsurf || ls "$(dirname "$0")/../bin/test_nvsurf" 2>/dev/null)}
if [ -z "$NVSURF" ]; then
    skip "test_nvsurf not found"
else
    for c in h264_seg.mp4 hevc10_seg.mkv; do
        NVSURF_FRAMES=60 timeout 60 "$NVSURF" "$D/$c" 0 2 4 8 >"$L/nvsurf.$c.log" 2>&1
        rc=$?
        grep -E '^(ok|not ok|skip) ' "$L/nvsurf.$c.log" | sed 's/^\(not ok\|ok\|skip\) nvsurf/\1 nvseg: nvsurf/'
        fails=$((fails + $(grep -c '^not ok' "$L/nvsurf.$c.log")))
        [ $rc = 0 ] || grep -q '^not ok' "$L/nvsurf.$c.log" || not_ok "test_nvsurf $c: exit $rc"
        grep -m1 -o 'hold .*@2.0: .*' "$L/nvsurf.$c.log" | sed 's/^/# /'
    done
fi

# ---- equal: NVDEC in segments == one software decoder
n_var=0
for clip in h264_seg.mp4 h264_vfr.mkv hevc10_seg.mkv; do
    f=$D/$clip
    [ -f "$f" ] || { not_ok "$clip: not carried"; continue; }
    b=${clip%.*}
    for v in "" "--start 1.3" "--frames 97" "--start 2.1 --frames 150" "--threads 3"; do
        n_var=$((n_var + 1))
        k=$b.$n_var
        name="$clip${v:+ $v}"
        ref_v=${v/--threads 3/}
        ge "$L/$k.sw.log" -y -v --backend=gpu --hwdec=none --threads 1 $ref_v --hist "$T/$k.sw.csv" "$f" "$T/$k.sw.y4m"
        src=$RC
        ge "$L/$k.hw.log" -y -v --backend=gpu --hwdec=nvdec $v --hist "$T/$k.hw.csv" "$f" "$T/$k.hw.y4m"
        hrc=$RC
        n=$(($(wc -l <"$T/$k.sw.csv" 2>/dev/null || echo 1) - 1))
        if [ $src != 0 ] || [ $hrc != 0 ]; then
            not_ok "$name: software exit $src, NVDEC exit $hrc ($(tail -1 "$L/$k.hw.log"))"
            continue
        fi
        sg=$(segs "$L/$k.hw.log")
        if [ -z "$sg" ] || [ "$(echo "$sg" | awk '{print $4}')" -lt 2 ] || grep -q 'segments on' "$L/$k.sw.log"; then
            not_ok "$name: not segmented on NVDEC, or the reference was ($(grep -m1 'segments\|decoding' "$L/$k.hw.log"))"
            continue
        fi
        if ! grep -q 'NVDEC decoding' "$L/$k.hw.log" || grep -q 'NVDEC does not take' "$L/$k.hw.log"; then
            not_ok "$name: segments not all on NVDEC ($(grep -m1 'NVDEC does not\|software' "$L/$k.hw.log"))"
            continue
        fi
        if cmp -s "$T/$k.sw.y4m" "$T/$k.hw.y4m" && cmp -s "$T/$k.sw.csv" "$T/$k.hw.csv" && [ "$n" -gt 0 ]; then
            ok "$name: $sg == one software decoder, $n frames, edge maps and --hist byte for byte"
        else
            not_ok "$name: $sg != one software decoder ($n frames; $(cmp "$T/$k.sw.y4m" "$T/$k.hw.y4m" 2>&1 | head -1); $(cmp "$T/$k.sw.csv" "$T/$k.hw.csv" 2>&1 | head -1))"
        fi
        if [ -z "$v" ] || [ "$v" = "--threads 3" ]; then
            want=$(nframes "$clip")
            [ "$n" = "$want" ] && ok "$name: every frame to the last ($n of $want, last row $(tail -1 "$T/$k.hw.csv" | cut -d, -f2,3))" ||
                not_ok "$name: $n frames, the clip has $want"
        fi
        rm -f "$T/$k".*.y4m
    done
done
# one .mkv (the default codec; the same --threads both ways)
f=$D/h264_seg.mp4
ge "$L/mkv.sw.log" -y --backend=gpu --hwdec=none "$f" "$T/sw.mkv"; src=$RC
ge "$L/mkv.hw.log" -y -v --backend=gpu --hwdec=nvdec "$f" "$T/hw.mkv"; hrc=$RC
{ [ $src = 0 ] && [ $hrc = 0 ] && [ -n "$(segs "$L/mkv.hw.log")" ] && cmp -s "$T/sw.mkv" "$T/hw.mkv"; } &&
    ok "h264_seg.mp4 -> .mkv: $(segs "$L/mkv.hw.log") == software, byte for byte" ||
    not_ok "h264_seg.mp4 -> .mkv: exit $src/$hrc, $(segs "$L/mkv.hw.log"), $(cmp "$T/sw.mkv" "$T/hw.mkv" 2>&1 | head -1)"
# the default run opened the video, on NVDEC, while CUDA initialised
# (startup.c early_open): the bytes above are those of software decoding
{ [ $hrc = 0 ] && grep -q 'video and encoder opened in .* while CUDA initialises' "$L/mkv.hw.log"; } &&
    ok "h264_seg.mp4 -> .mkv: opened on NVDEC while CUDA initialises" ||
    not_ok "h264_seg.mp4 -> .mkv early open: exit $hrc, $(grep -m1 -o 'video.*opened in.*' "$L/mkv.hw.log")"
rm -f "$T"/*.mkv

# ---- no usable GPU (CUDA_VISIBLE_DEVICES empty: the driver is there, no
# device): --hwdec=nvdec fails with one line, exit 1, no output; the
# default (--backend auto, --hwdec auto) opens the video early betting on
# the GPU, then runs the CPU backend in software: == --hwdec=none
ge "$L/nogpu.ref.log" -y --backend=cpu --hwdec=none --frames 40 "$f" "$T/ref.mkv"
CUDA_VISIBLE_DEVICES= ge "$L/nogpu.nv.log" -y --hwdec=nvdec --frames 40 "$f" "$T/nv.mkv"; nrc=$RC
CUDA_VISIBLE_DEVICES= ge "$L/nogpu.auto.log" -y -v --frames 40 "$f" "$T/auto.mkv"; arc=$RC
{ [ $nrc = 1 ] && [ "$(wc -l <"$L/nogpu.nv.log")" = 1 ] && grep -q -- '--hwdec=nvdec' "$L/nogpu.nv.log" &&
  [ -z "$(ls -A "$T" | grep nv.mkv)" ]; } &&
    ok "no usable GPU, --hwdec=nvdec: exit 1, one line ($(cut -c1-70 "$L/nogpu.nv.log")...), nothing written" ||
    not_ok "no usable GPU, --hwdec=nvdec: exit $nrc, $(wc -l <"$L/nogpu.nv.log") lines ($(head -2 "$L/nogpu.nv.log" | tr '\n' ' ')), $(ls -A "$T" | tr '\n' ' ')"
{ [ $arc = 0 ] && grep -q 'using the CPU backend' "$L/nogpu.auto.log" && cmp -s "$T/ref.mkv" "$T/auto.mkv"; } &&
    ok "no usable GPU, defaults: the CPU backend, == --hwdec=none, byte for byte" ||
    not_ok "no usable GPU, defaults: exit $arc, $(grep -m1 'CPU backend\|gpuedge:' "$L/nogpu.auto.log"), $(cmp "$T/ref.mkv" "$T/auto.mkv" 2>&1 | head -1)"
rm -f "$T"/*.mkv

# ---- --hwdec=auto's rule (src/io/vsource.c vsrc_auto_nvdec) on a segmented clip:
# 0.09 Gpx with 16 threads -> software segments; with 4 threads -> NVDEC
# segments; both == the software reference
f=$D/h264_seg.mp4
ge "$L/auto.sw.log" -y --backend=gpu --hwdec=none --threads 1 "$f" "$T/auto.ref.y4m"
ge "$L/auto16.log" -y -v --backend=gpu --threads 16 "$f" "$T/auto16.y4m"; a16=$RC
ge "$L/auto4.log" -y -v --backend=gpu --threads 4 "$f" "$T/auto4.y4m"; a4=$RC
{ [ $a16 = 0 ] && grep -q -- '--hwdec=auto: decoding in software' "$L/auto16.log" &&
  grep -q 'segments on [0-9]* decoders' "$L/auto16.log" && ! grep -q 'NVDEC decoding' "$L/auto16.log" &&
  cmp -s "$T/auto.ref.y4m" "$T/auto16.y4m"; } &&
    ok "h264_seg.mp4 --hwdec=auto --threads 16: software segments ($(grep -m1 -o -- '--hwdec=auto: .*' "$L/auto16.log" | cut -c1-60)...), same bytes" ||
    not_ok "h264_seg.mp4 --hwdec=auto --threads 16: exit $a16, $(grep -m1 -- '--hwdec=auto\|segments on' "$L/auto16.log")"
{ [ $a4 = 0 ] && grep -q -- '--hwdec=auto: NVDEC' "$L/auto4.log" && [ -n "$(segs "$L/auto4.log")" ] &&
  cmp -s "$T/auto.ref.y4m" "$T/auto4.y4m"; } &&
    ok "h264_seg.mp4 --hwdec=auto --threads 4: $(segs "$L/auto4.log"), same bytes" ||
    not_ok "h264_seg.mp4 --hwdec=auto --threads 4: exit $a4, $(grep -m1 -- '--hwdec=auto\|segments on' "$L/auto4.log")"
rm -f "$T"/auto*.y4m
# a pipe is read once (no software-first open, no reopen): --hwdec=auto
# with 4 threads decodes on NVDEC, with 16 in software, both == software
f=$D/h264_vfr.mkv
ge "$L/pipe.ref.log" -y --backend=gpu --hwdec=none --threads 1 "$f" "$T/pipe.ref.y4m"
ge "$L/pipe4.log" -y -v --backend=gpu --threads 4 - "$T/pipe4.y4m" <"$f"; p4=$RC
ge "$L/pipe16.log" -y -v --backend=gpu --threads 16 - "$T/pipe16.y4m" <"$f"; p16=$RC
{ [ $p4 = 0 ] && grep -q 'NVDEC decoding' "$L/pipe4.log" && cmp -s "$T/pipe.ref.y4m" "$T/pipe4.y4m"; } &&
    ok "h264_vfr.mkv from a pipe, --hwdec=auto --threads 4: NVDEC, same bytes" ||
    not_ok "h264_vfr.mkv from a pipe, --threads 4: exit $p4, $(grep -m1 'NVDEC\|software' "$L/pipe4.log"), $(cmp "$T/pipe.ref.y4m" "$T/pipe4.y4m" 2>&1 | head -1)"
{ [ $p16 = 0 ] && grep -q 'a stream read once' "$L/pipe16.log" && ! grep -q 'NVDEC decoding' "$L/pipe16.log" &&
  cmp -s "$T/pipe.ref.y4m" "$T/pipe16.y4m"; } &&
    ok "h264_vfr.mkv from a pipe, --hwdec=auto --threads 16: software ($(grep -m1 -o 'a stream read once[^;]*' "$L/pipe16.log")), same bytes" ||
    not_ok "h264_vfr.mkv from a pipe, --threads 16: exit $p16, $(grep -m1 'NVDEC\|software' "$L/pipe16.log"), $(cmp "$T/pipe.ref.y4m" "$T/pipe16.y4m" 2>&1 | head -1)"
rm -f "$T"/pipe*.y4m

# ---- batch: NVDEC over several files == each alone in software; a bad file fails alone
batch=(h264_seg.mp4 short_a.mp4 bad.mp4 hevc10_seg.mkv short_b.mkv)
in=(); for c in "${batch[@]}"; do in+=("$D/$c"); done
mkdir -p "$T/one"
for c in "${batch[@]}"; do
    [ "$c" = bad.mp4 ] && continue
    ge "$L/one.$c.log" -y --backend=gpu --hwdec=none --threads 1 "$D/$c" "$T/one/${c%.*}.y4m"
    [ $RC = 0 ] || not_ok "batch: $c alone in software: exit $RC"
done
ge "$L/batch.log" -v --backend=gpu --hwdec=nvdec --format y4m -o "$T/bat" "${in[@]}"
brc=$RC
# (-v's "engine N takes it" notes name it too: several engines a batch)
errs=$(grep '^gpuedge: .*bad.mp4' "$L/batch.log" | grep -vc ': engine [0-9]* takes it')
same=0
for c in "${batch[@]}"; do
    [ "$c" = bad.mp4 ] && continue
    cmp -s "$T/one/${c%.*}.y4m" "$T/bat/${c%.*}.y4m" && same=$((same + 1))
done
left=$(ls -A "$T/bat" | grep -v -x -e h264_seg.y4m -e short_a.y4m -e hevc10_seg.y4m -e short_b.y4m | tr '\n' ' ')
{ [ $brc = 1 ] && [ "$errs" = 1 ] && [ $same = 4 ] && [ -z "$left" ] && [ -n "$(segs "$L/batch.log")" ]; } &&
    ok "batch of 5 on NVDEC ($(grep -c 'segments on' "$L/batch.log") segmented): 4 outputs == one at a time in software, bad.mp4 fails alone ($(grep -m1 'bad.mp4' "$L/batch.log" | cut -c1-70)), exit 1, nothing else left" ||
    not_ok "batch: exit $brc, $errs lines about bad.mp4, $same of 4 equal, left over: $left ($(tail -1 "$L/batch.log"))"
rm -f "$T/bat/short_a.y4m"
i0=$(stat -c %i:%Y "$T/bat/h264_seg.y4m")
ge "$L/skip.log" -q --backend=gpu --hwdec=nvdec --format y4m --skip-existing -o "$T/bat" "${in[@]}"
{ [ $RC = 1 ] && cmp -s "$T/one/short_a.y4m" "$T/bat/short_a.y4m" && [ "$(stat -c %i:%Y "$T/bat/h264_seg.y4m")" = "$i0" ]; } &&
    ok "batch --skip-existing on NVDEC: remade the missing output (== software), left the others" ||
    not_ok "batch --skip-existing: exit $RC ($(tail -1 "$L/skip.log"))"
rm -rf "$T/bat" "$T/one"

# ---- compute-sanitizer memcheck and racecheck over a segmented NVDEC run
if [ -z "$SAN" ]; then
    skip "compute-sanitizer not found"
else
    # NVSEG_SAN_TIMEOUT: seconds a sanitizer run may take (300).
    # Racecheck runs over 2 segments on 2 sessions (NVSEG_RACE_SESSIONS):
    # over 4 sessions it stopped making progress inside compute-sanitizer
    # on the H200 twice on 2026-12-02 (once after "Internal Sanitizer
    # Error: Detected a failure to track a kernel launch"), while 30 plain
    # runs of the same command all ended and 2 sessions passed in 10 s.
    # The kernels (racecheck's subject: shared-memory hazards) are the
    # same whatever the session count; memcheck keeps 4.
    for tool in memcheck racecheck; do
        t0=$(date +%s.%N)
        ses=
        [ $tool = racecheck ] && ses=${NVSEG_RACE_SESSIONS:-2}
        # --threads N caps the NVDEC sessions at N
        setsid timeout -k 5 "${NVSEG_SAN_TIMEOUT:-300}" "$SAN" --tool $tool \
            --error-exitcode 99 "$GPUEDGE" -y -v --backend=gpu --hwdec=nvdec ${ses:+--threads $ses} \
            --frames 100 --cpu-ref=8 "$D/h264_seg.mp4" "$T/san.y4m" >"$L/san-$tool.log" 2>&1
        rc=$?
        dt=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}')
        sum=$(grep -m1 'ERROR SUMMARY\|RACECHECK SUMMARY' "$L/san-$tool.log")
        { [ $rc = 0 ] && [ -n "$(segs "$L/san-$tool.log")" ] && [ -s "$T/san.y4m" ]; } &&
            ok "compute-sanitizer $tool over $(segs "$L/san-$tool.log") (${dt} s): $sum" ||
            not_ok "compute-sanitizer $tool: exit $rc ($sum; $(segs "$L/san-$tool.log"); $(grep -v '^=' "$L/san-$tool.log" | tail -2 | tr '\n' ' '))"
        rm -f "$T/san.y4m"
    done
fi

# ---- timings: 1080p H.264
f=$D/seg_1080p.mp4
if [ -f "$f" ]; then
    echo "# timings: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader), $(date -u +%F), $(nproc) CPUs, $(nframes seg_1080p.mp4) frames"
    for rep in 1 2; do
        for h in "--hwdec=nvdec" "--hwdec=nvdec --threads 1" "--hwdec=none"; do
            for o in /dev/null "$T/bench.mkv"; do
                lg="$L/bench.$rep.$(echo "$h" | tr -dc 'a-z0-9').$(basename "$o").log"
                t0=$(date +%s.%N)
                timeout "$TO" "$GPUEDGE" -v -y --backend=gpu $h --report "$f" "$o" >"$lg" 2>&1
                rc=$?
                w=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.3f", b-a}')
                fl=$(grep -m1 'frames ' "$lg" | sed 's/^ *//')
                sg=$(grep -m1 -o '[0-9]* segments on .*' "$lg")
                echo "# run $rep $h -> $(basename "$o"): rc=$rc wall $w s ($(awk -v w="$w" -v n="$(nframes seg_1080p.mp4)" 'BEGIN{printf "%.0f", n/w}') fps whole process); ${sg:-not segmented}; $fl"
            done
        done
    done
fi
echo "# test_nvseg: $fails failures"
[ $fails = 0 ]
