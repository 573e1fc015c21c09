#!/bin/bash
# tests/gpu/test_nvdec.sh CLIPDIR — NVDEC against software decoding, on a
# GPU machine (DESIGN.md §1.9, §4).  CLIPDIR holds test_nvdec_clips.sh's clips
# (made where ffmpeg is; the GPU machine has none).  Prints ok / not ok /
# skip lines, then the timings; logs under $OUT (default /tmp/gpuedge-gpu).
#   equal      every clip decoded with --hwdec=none and --hwdec=nvdec: the
#              Y4M edge maps and the --hist CSV byte for byte equal (H.264
#              8-bit limited/full range, HEVC Main10 limited/full, VP9
#              profile 0, AV1, 322x242 sizes the decoders crop, a mid-stream
#              size change), and stderr under -v must say NVDEC decoded it
#              (else the comparison would prove nothing); also auto (its
#              rule: NVDEC with --threads 4, software with --threads 16 on
#              these one-session clips), --staged, strips (--mem-limit)
#              and --cpu-ref=3 on NVDEC frames
#   policy     MPEG-2: auto stays in software (-v says so), nvdec forces it
#   corrupt    damaged H.264 under NVDEC: exit 0 (decoding errors noted) or
#              exit 1 with one line and no output; never a hang (timeout)
#   sanitizer  compute-sanitizer memcheck and racecheck over an NVDEC batch
#   timing     bench_1080p.mp4 through --hwdec=nvdec and --hwdec=none to
#              /dev/null and to .mkv, with --report; bench_nvdec with 1, 4
#              and 7 NVDEC sessions at once (every frame from NVDEC)
set -u
D=${1:?usage: test_nvdec.sh CLIPDIR}
OUT=${OUT:-/tmp/gpuedge-gpu}
GPUEDGE=${GPUEDGE:-$(command -v gpuedge || echo ./gpuedge)}
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
TO=${NVDEC_TIMEOUT:-60}
mkdir -p "$OUT/nvdec"
L=$OUT/nvdec
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
ok() { echo "ok nvdec: $*"; }
not_ok() { echo "not ok nvdec: $*"; fails=$((fails + 1)); }
skip() { echo "skip nvdec: $*"; }
# ge LOG ARGS...: gpuedge under a timeout, stderr+stdout to LOG; sets RC
ge() { local log=$1; shift; timeout "$TO" "$GPUEDGE" "$@" >"$log" 2>&1; RC=$?; }

if ! nvidia-smi -L >/dev/null 2>&1; then skip "no CUDA device"; exit 0; fi
[ -d "$D" ] || { not_ok "no clip directory $D"; exit 1; }

# ---- equal: software vs NVDEC, frame for frame
for clip in h264_322x242.mp4 h264_full_640x360.mkv hevc10_322x242.mkv \
            hevc10_full_352x288.mkv vp9_322x242.webm av1_322x242.mkv av1_640x360.mkv \
            av1svt_640x360.mkv h264_sizechange.h264; do
    f=$D/$clip
    [ -f "$f" ] || { skip "$clip: not carried"; continue; }
    b=${clip%.*}
    ge "$L/$b.sw.log" -y -v --backend=gpu --hwdec=none --hist "$T/$b.sw.csv" "$f" "$T/$b.sw.y4m"
    src=$RC
    ge "$L/$b.hw.log" -y -v --backend=gpu --hwdec=nvdec --hist "$T/$b.hw.csv" "$f" "$T/$b.hw.y4m"
    hrc=$RC
    n=$(($(wc -l <"$T/$b.sw.csv" 2>/dev/null || echo 1) - 1))
    if [ $src != 0 ] || [ $hrc != 0 ]; then
        not_ok "$clip: software exit $src, NVDEC exit $hrc ($(tail -1 "$L/$b.hw.log"))"
        continue
    fi
    if ! grep -q 'NVDEC decoding' "$L/$b.hw.log" && grep -q 'NVDEC does not take' "$L/$b.hw.log"; then
        # refused (the GPU's caps): the fallback must be software, same bytes
        cmp -s "$T/$b.sw.y4m" "$T/$b.hw.y4m" &&
            ok "$clip: NVDEC refused it, the software fallback gives the same bytes ($n frames)" ||
            not_ok "$clip: NVDEC refused it and the fallback's bytes differ"
        skip "$clip: NVDEC == software not shown: $(grep -m1 -E 'lacking|not take' "$L/$b.hw.log")"
        continue
    fi
    if ! grep -q 'NVDEC decoding' "$L/$b.hw.log"; then
        not_ok "$clip: --hwdec=nvdec did not decode on NVDEC ($(grep -m1 . "$L/$b.hw.log"))"
        continue
    fi
    if cmp -s "$T/$b.sw.y4m" "$T/$b.hw.y4m" && cmp -s "$T/$b.sw.csv" "$T/$b.hw.csv" && [ "$n" -gt 0 ]; then
        ok "$clip: NVDEC == software, $n frames, edge maps and histograms byte for byte"
    else
        not_ok "$clip: NVDEC != software ($n frames; $(cmp "$T/$b.sw.y4m" "$T/$b.hw.y4m" 2>&1 | head -1))"
        continue
    fi
    # the same through auto, staged, strips and --cpu-ref.  auto's rule
    # (src/io/vsource.c vsrc_auto_nvdec): a short clip (one session) with
    # more than 8 threads decodes in software, with 8 or fewer on NVDEC
    ge "$L/$b.auto.log" -y -v --backend=gpu --threads 4 "$f" "$T/$b.auto.y4m"
    { [ $RC = 0 ] && grep -q 'NVDEC decoding' "$L/$b.auto.log" && grep -q -- '--hwdec=auto: NVDEC' "$L/$b.auto.log" &&
      cmp -s "$T/$b.sw.y4m" "$T/$b.auto.y4m"; } &&
        ok "$clip: --hwdec=auto --threads 4 picks NVDEC ($(grep -m1 -o -- '--hwdec=auto: NVDEC.*' "$L/$b.auto.log")), same bytes" ||
        not_ok "$clip: --hwdec=auto --threads 4 exit $RC or not NVDEC or bytes differ ($(grep -m1 -- '--hwdec=auto' "$L/$b.auto.log"))"
    ge "$L/$b.auto16.log" -y -v --backend=gpu --threads 16 "$f" "$T/$b.auto16.y4m"
    { [ $RC = 0 ] && ! grep -q 'NVDEC decoding' "$L/$b.auto16.log" &&
      grep -q -- '--hwdec=auto: decoding in software (1 NVDEC session' "$L/$b.auto16.log" &&
      cmp -s "$T/$b.sw.y4m" "$T/$b.auto16.y4m"; } &&
        ok "$clip: --hwdec=auto --threads 16 on a short clip decodes in software and says why, same bytes" ||
        not_ok "$clip: --hwdec=auto --threads 16 exit $RC or NVDEC or bytes differ ($(grep -m1 -- '--hwdec=auto' "$L/$b.auto16.log"))"
    ge "$L/$b.staged.log" -y --backend=gpu --staged --hwdec=nvdec "$f" "$T/$b.st.y4m"
    { [ $RC = 0 ] && cmp -s "$T/$b.sw.y4m" "$T/$b.st.y4m"; } &&
        ok "$clip: NVDEC --staged, same bytes" || not_ok "$clip: NVDEC --staged exit $RC or bytes differ"
    ge "$L/$b.strips.log" -y -v --backend=gpu --mem-limit 128K --hwdec=nvdec "$f" "$T/$b.sp.y4m"
    { [ $RC = 0 ] && cmp -s "$T/$b.sw.y4m" "$T/$b.sp.y4m"; } &&
        ok "$clip: NVDEC in strips (--mem-limit 128K; $(grep -c 'strips of' "$L/$b.strips.log") strip notes), same bytes" ||
        not_ok "$clip: NVDEC strips exit $RC or bytes differ ($(tail -1 "$L/$b.strips.log"))"
    ge "$L/$b.ref.log" -y --backend=gpu --hwdec=nvdec --cpu-ref=3 "$f" "$T/$b.ref.y4m"
    [ $RC = 0 ] && ok "$clip: --cpu-ref=3 on NVDEC frames: exit 0" ||
        not_ok "$clip: --cpu-ref=3 on NVDEC frames: exit $RC ($(tail -1 "$L/$b.ref.log"))"
    ge "$L/$b.staged_ref.log" -y --backend=gpu --staged --hwdec=nvdec --cpu-ref "$f" "$T/$b.sr.y4m"
    [ $RC = 0 ] && ok "$clip: --staged --cpu-ref on NVDEC frames: exit 0" ||
        not_ok "$clip: --staged --cpu-ref on NVDEC frames: exit $RC ($(tail -1 "$L/$b.staged_ref.log"))"
done

# ---- policy: MPEG-2 stays in software under auto; nvdec forces NVDEC
f=$D/mpeg2_320x240.mpg
if [ -f "$f" ]; then
    ge "$L/mpeg2.auto.log" -y -v --backend=gpu "$f" "$T/m.auto.y4m"
    { [ $RC = 0 ] && ! grep -q 'NVDEC decoding' "$L/mpeg2.auto.log" && grep -q 'software' "$L/mpeg2.auto.log"; } &&
        ok "mpeg2: --hwdec=auto decodes in software and says so" ||
        not_ok "mpeg2: --hwdec=auto exit $RC or used NVDEC ($(grep -m1 . "$L/mpeg2.auto.log"))"
    ge "$L/mpeg2.hw.log" -y -v --backend=gpu --hwdec=nvdec "$f" "$T/m.hw.y4m"
    if [ $RC = 0 ] && grep -q 'NVDEC decoding' "$L/mpeg2.hw.log"; then
        ok "mpeg2: --hwdec=nvdec decodes on NVDEC ($(cmp -s "$T/m.auto.y4m" "$T/m.hw.y4m" && echo "same bytes as software" || echo "bytes differ from software, as DESIGN.md §1.9 allows"))"
    else
        not_ok "mpeg2: --hwdec=nvdec exit $RC or not NVDEC ($(tail -1 "$L/mpeg2.hw.log"))"
    fi
fi

# ---- corrupt data under NVDEC: continue or one line; never a hang or a partial file
f=$D/h264_corrupt.h264
if [ -f "$f" ]; then
    rm -f "$T/corrupt.mkv"
    ge "$L/corrupt.log" --backend=gpu --hwdec=nvdec "$f" "$T/corrupt.mkv"
    nl=$(grep -c . "$L/corrupt.log")
    if [ $RC = 124 ] || [ $RC -gt 128 ]; then
        not_ok "corrupt H.264 under NVDEC: exit $RC (hang or crash)"
    elif [ $RC = 0 ] && [ -s "$T/corrupt.mkv" ] && [ "$nl" -le 1 ]; then
        ok "corrupt H.264 under NVDEC: exit 0, $(cat "$L/corrupt.log")"
    elif [ $RC = 1 ] && [ ! -e "$T/corrupt.mkv" ] && [ "$nl" = 1 ]; then
        ok "corrupt H.264 under NVDEC: one line, exit 1, no output: $(cat "$L/corrupt.log")"
    else
        not_ok "corrupt H.264 under NVDEC: exit $RC, $nl stderr lines, output $(ls "$T"/corrupt* 2>/dev/null)"
    fi
    ge "$L/corrupt.sw.log" --backend=gpu --hwdec=none "$f" "$T/corrupt.sw.mkv"
    echo "# corrupt clip: software exit $RC ($(cat "$L/corrupt.sw.log")); outputs $(cmp -s "$T/corrupt.mkv" "$T/corrupt.sw.mkv" && echo equal || echo differ) (concealment is the decoder's)"
fi

# ---- compute-sanitizer over an NVDEC batch
if [ -z "$SAN" ]; then
    skip "compute-sanitizer not found"
else
    batch=()
    for c in h264_322x242.mp4 hevc10_322x242.mkv vp9_322x242.webm av1_322x242.mkv; do
        [ -f "$D/$c" ] && batch+=("$D/$c")
    done
    for tool in memcheck racecheck; do
        rm -rf "$T/san"
        t0=$(date +%s.%N)
        timeout 150 "$SAN" --tool $tool --error-exitcode 99 "$GPUEDGE" -q --backend=gpu --hwdec=nvdec \
            --frames 12 --cpu-ref=4 -o "$T/san" "${batch[@]}" >"$L/san-$tool.log" 2>&1
        rc=$?
        dt=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}')
        sum=$(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$L/san-$tool.log")
        [ $rc = 0 ] && [ "$(ls "$T/san" 2>/dev/null | wc -l)" = ${#batch[@]} ] &&
            ok "compute-sanitizer $tool over an NVDEC batch of ${#batch[@]} clips (${dt} s): $sum" ||
            not_ok "compute-sanitizer $tool: exit $rc ($sum; $(tail -2 "$L/san-$tool.log" | tr '\n' ' '))"
    done
fi

# ---- timings: 1080p H.264, NVDEC vs software decoding
f=$D/bench_1080p.mp4
if [ -f "$f" ]; then
    echo "# timings: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader), $(date -u +%F)"
    for rep in 1 2; do
        for h in nvdec none; do
            for o in /dev/null "$T/bench.mkv"; do
                t0=$(date +%s.%N)
                timeout "$TO" "$GPUEDGE" -q -y --backend=gpu --hwdec=$h --report "$f" "$o" >"$L/bench.$h.$rep.$(basename "$o").log" 2>&1
                rc=$?
                w=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.3f", b-a}')
                fl=$(grep -m1 'frames ' "$L/bench.$h.$rep.$(basename "$o").log" | sed 's/^ *//')
                bound=$(grep -m1 'bound by' "$L/bench.$h.$rep.$(basename "$o").log" | sed 's/^ *//')
                dec=$(grep -m1 '^ *decode ' "$L/bench.$h.$rep.$(basename "$o").log" | awk '{print "decode median " $5 " ms"}')
                echo "# run $rep --hwdec=$h -> $(basename "$o"): rc=$rc process wall $w s; $fl; $bound; $dec"
            done
        done
    done
fi
# decoder threads with NVDEC (--threads sets them; /dev/null has no encoder)
if [ -f "$f" ]; then
    for th in 1 2 4 8; do
        timeout "$TO" "$GPUEDGE" -q -y --backend=gpu --hwdec=nvdec --threads $th --report "$f" /dev/null >"$L/bench.th$th.log" 2>&1
        echo "# --hwdec=nvdec --threads $th -> null: rc=$? $(grep -m1 'frames ' "$L/bench.th$th.log" | sed 's/^ *//'); $(grep -m1 '^ *decode ' "$L/bench.th$th.log" | awk '{print "decode median " $5 " ms"}')"
    done
fi
# several NVDEC sessions at once in one process (tests/bench/bench_nvdec.c)
BN=$(command -v bench_nvdec || echo tests/bin/bench_nvdec)
if [ -f "$f" ] && [ -x "$BN" ]; then
    if timeout "$TO" "$BN" "$f" 1 4 7 >"$L/bench_nvdec.log" 2>&1; then
        ok "NVDEC sessions at once: $(grep -o 'K=[0-9]*:.*fps,' "$L/bench_nvdec.log" | tr '\n' ' ')"
    else
        not_ok "bench_nvdec: $(tail -2 "$L/bench_nvdec.log" | tr '\n' ' ')"
    fi
fi
echo "# test_nvdec: $fails failures"
[ $fails = 0 ]
