#!/bin/bash
# device_run.sh — the real-data benchmark steps on the GPU machine, one
# call each (payloads from tests/bench/device_payload.sh; REALDATA.md):
#   peers    static ffmpeg + OpenCV: photos.py (OpenCV script, ffmpeg one
#            job per core), video_real.sh (decode alone, the ffmpeg command
#            with and without 16 slices, the OpenCV video script)
#   gpuedge  remakes the 1080p/4K clips from the 720p one (bench_mkclip;
#            checks their sha256 against the carried clips'), then
#            photos.py (gpuedge GPU and CPU backends, the OpenCV script
#            again for |delta| and a same-run ratio) and video_real.sh
#            (gpuedge GPU with/without NVDEC, CPU backend; mkv, mp4, null;
#            the OpenCV video script on 100 frames a clip for a same-call ratio)
#   big      one 5640x3172 JPEG to PNG as a whole process, five times a
#            backend, and the OpenCV script on it
#   photobatch  a large photo batch: tests/bench/photo_batch.py makes COUNT
#            (200) photos of 2560x1600 .. 5120x2880 from the carried ones
#            (FORMATS: jpg,png; jpg for JPEGs only),
#            then photos.py times the OpenCV script and gpuedge's
#            $PB_BACKENDS (default: gpu, cpu), and a --report -v run of each
#            GPU entry goes to the log; with a corpus/ in the payload,
#            test_nvjpeg runs on it and the carried JPEGs first
#   videobatch  tests/bench/video_batch.sh in RAM (/dev/shm), VB_ROUNDS (2)
#            rounds of its cases (VB_CASES, default all), ffmpeg decoding
#            alone in each and its edge chain on the 1080p folder in the
#            first; then a --report -v run of each long file to .mkv and
#            to /dev/null with NVDEC's load beside it (nvidia-smi, 100 ms;
#            the mean of the samples while it decoded), those logs in
#            $OUT/videobatch.tgz
# Env: PHOTOS=0 skips the photo steps (peers, gpuedge); FIXED_COSTS=1
# (gpuedge) runs tests/bench/fixed_costs.sh on the clips first (with
# bench_nvdec when the payload has it: device_payload.sh's BENCH_PROGS).
# Runs after `. .device-bench-NAME/env.sh` (BENCH_PAYLOAD, PATH).  Logs and
# the whole output go to $OUT (at most 8 files come back).
set -u
cd "$(dirname "$0")/../.." || exit 1
mode=${1:?usage: device_run.sh peers|gpuedge|big}
P=${BENCH_PAYLOAD:?source .device-bench-$mode/env.sh first}
OUT=${OUT:-/tmp/bench-out}
mkdir -p "$OUT"
JOBS=${JOBS:-$(nproc)}
RUNS=${RUNS:-3}
exec > >(tee "$OUT/run-$mode.txt") 2>&1
echo "# device_run $mode $(date -u +%FT%TZ), $(nproc) CPUs, $(nvidia-smi -L 2>/dev/null | head -n 1)"
python3 -c 'import cv2, numpy; print("# python3", __import__("sys").version.split()[0], "cv2", cv2.__version__, "numpy", numpy.__version__)' 2>&1
rc=0
case $mode in
peers)
    "$FFMPEG" -hide_banner -version | head -n 1
    (cd "$P" && sha256sum -c --quiet SHA256SUMS) && echo "clips: carried intact" || rc=1
    if [ "${PHOTOS:-1}" != 0 ]; then
        echo; echo "## photos (OpenCV script, ffmpeg)"
        python3 tests/bench/photos.py --backends "" --ffmpeg "$FFMPEG" --jobs "$JOBS" --runs "$RUNS" \
            --log "$OUT" "$P/photos" || rc=1
    fi
    echo; echo "## video (ffmpeg, OpenCV script)"
    BACKENDS="" PY=python3 LOG=$OUT bash tests/bench/video_real.sh \
        "$P/video/bbb1080.mp4" "$P/video/bbb2160.mp4" || rc=1 ;;
gpuedge)
    "$GPUEDGE" --version 2>&1 | head -n 4
    # BENCH_MEDIA: clips made already (a test run); else made afresh
    M=${BENCH_MEDIA:-/tmp/bench-media/video}
    [ -n "${BENCH_MEDIA:-}" ] || rm -rf "$M"
    mkdir -p "$M"
    t0=$(date +%s.%N)
    sh tests/bench/fetch_realdata.sh --clips "$P/video/bbb720.mp4" "$M" || rc=1
    echo "clips made in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}') s"
    if (cd "$M/.." && sha256sum -c --quiet "$P/SHA256SUMS" 2>/dev/null); then
        echo "clips: the same bytes as made on the CPU machine (and carried in the peers call)"
    else
        echo "note: the clips differ from the CPU machine's (x264/swscale on this CPU): the" \
             "peers call's ffmpeg figures are on other bytes of the same footage"
    fi
    if [ "${FIXED_COSTS:-0}" = 1 ]; then
        echo; echo "## fixed costs (fixed_costs.sh)"
        nv=none
        command -v bench_nvdec >/dev/null 2>&1 && nv=$(command -v bench_nvdec)
        BENCH_NVDEC=$nv RUNS=$RUNS bash tests/bench/fixed_costs.sh "$M/bbb1080.mp4" "$M/bbb2160.mp4" ||
            rc=1
    fi
    if [ "${PHOTOS:-1}" != 0 ]; then
        echo; echo "## photos (gpuedge GPU and CPU backends, OpenCV script)"
        bes=gpu,cpu
        # nvJPEG when the payload carries its library (GPUEDGE_NVJPEG, env.sh)
        if [ -n "${GPUEDGE_NVJPEG:-}" ] && "$GPUEDGE" --help 2>&1 | grep -q -- --jpeg-decoder; then
            bes=gpu,gpu:--jpeg-decoder=nvjpeg,cpu
        fi
        python3 tests/bench/photos.py --gpuedge "$GPUEDGE" --ffmpeg none --jobs "$JOBS" \
            --runs "$RUNS" --backends "$bes" --log "$OUT" "$P/photos" || rc=1
    fi
    echo; echo "## video (gpuedge)"
    # the OpenCV script again on 100 frames a clip: a same-call ratio
    FFMPEG=none PY=python3 CV_FRAMES=${CV_FRAMES:-100} LOG=$OUT bash tests/bench/video_real.sh \
        "$M/bbb1080.mp4" "$M/bbb2160.mp4" || rc=1 ;;
big)
    "$GPUEDGE" --version 2>&1 | head -n 4
    ph=$(ls "$P"/photos/* | head -n 1)
    echo "## one photo as a whole process: $(basename "$ph"), $(wc -c <"$ph") bytes"
    for be in gpu cpu; do
        ts=()
        for _ in 1 2 3 4 5; do
            t0=$(date +%s.%N)
            "$GPUEDGE" -q -y --backend=$be "$ph" /tmp/big.png || rc=1
            ts+=("$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.3f", b-a}')")
        done
        echo "gpuedge --backend=$be: ${ts[*]} s; PNG $(wc -c </tmp/big.png) bytes"
        "$GPUEDGE" -q -y --backend=$be --report "$ph" /tmp/big.png
    done
    python3 tests/bench/photos.py --gpuedge "$GPUEDGE" --ffmpeg none --jobs 1 --runs 5 \
        --log "$OUT" "$ph" || rc=1 ;;
photobatch)
    "$GPUEDGE" --version 2>&1 | head -n 2
    if [ -d "$P/corpus" ] && command -v test_nvjpeg >/dev/null; then
        echo "## test_nvjpeg (nvJPEG against libjpeg-turbo)"
        test_nvjpeg "$P"/corpus/*.jpg "$P"/photos/*.jpg >"$OUT/test_nvjpeg.txt" 2>&1 || rc=1
        grep -c '^ok' "$OUT/test_nvjpeg.txt" | sed 's/^/ok lines: /'
        grep '^not ok\|^skip\|vs libjpeg-turbo' "$OUT/test_nvjpeg.txt" | head -n 40
    fi
    B=/tmp/photobatch
    rm -rf "$B"
    python3 tests/bench/photo_batch.py --count "${COUNT:-200}" --formats "${FORMATS:-jpg,png}" \
        "$B" "$P"/photos/* || rc=1
    echo "## photos.py on the batch"
    python3 tests/bench/photos.py --gpuedge "$GPUEDGE" --ffmpeg none --jobs "$JOBS" \
        --runs "$RUNS" --backends "${PB_BACKENDS:-gpu,cpu}" --log "$OUT" "$B" || rc=1
    IFS=, read -r -a entries <<<"${PB_BACKENDS:-gpu,cpu}"
    for e in "${entries[@]}"; do
        be=${e%%:*} more=; [ "$e" = "$be" ] || more=${e#*:}
        tag=$(printf '%s' "$e" | tr -c 'A-Za-z0-9' -)
        # shellcheck disable=SC2086
        "$GPUEDGE" -y -v --report --backend="$be" $more -o /tmp/pb-rep "$B"/* \
            >"$OUT/report-$tag.txt" 2>&1 || rc=1
        rm -rf /tmp/pb-rep
    done ;;
videobatch)
    "$GPUEDGE" --version 2>&1 | head -n 2
    "$FFMPEG" -hide_banner -version | head -n 1
    W=/dev/shm/videobatch
    rm -rf "$W"
    for r in $(seq 1 "${VB_ROUNDS:-2}"); do
        echo; echo "## video_batch.sh, round $r"
        chain=; [ "$r" = 1 ] && chain=folder1080
        mkdir -p "$W/r$r"
        REALDATA=$P CHAIN=$chain WORK=$W/r$r BENCH_RESULTS=$OUT/results.csv \
            bash tests/bench/video_batch.sh ${VB_CASES:-} || rc=1
        [ "$r" = 1 ] || rm -rf "$W/r$r"
    done
    L=$W/logs
    mkdir -p "$L"
    for f in long1080 long2160; do
        [ -s "$W/r1/$f.mp4" ] || continue
        for sink in mkv null; do
            o=/dev/null; [ $sink = null ] || o=$W/$f.mkv
            nvidia-smi --query-gpu=timestamp,utilization.decoder,utilization.gpu --format=csv,noheader \
                -lms 100 >"$L/nvdec-$f-$sink.csv" 2>&1 &
            smi=$!
            "$GPUEDGE" -y -v --report "$W/r1/$f.mp4" "$o" >"$L/report-$f-$sink.txt" 2>&1 || rc=1
            kill $smi 2>/dev/null; wait $smi 2>/dev/null
            rm -f "$W/$f.mkv"
            echo "## $f -> $sink: $(grep -i 'bound by\|fps' "$L/report-$f-$sink.txt" | head -n 3 | tr '\n' ' ')"
            awk -F', ' '{ gsub(/ %/, ""); if ($2 + 0 > 0) { n++; d += $2; g += $3 } }
                END { if (n) printf "   NVDEC load %.0f %%, SM %.0f %% over %d samples of 100 ms\n", d / n, g / n, n }' \
                "$L/nvdec-$f-$sink.csv"
        done
    done
    tar -C "$L" -czf "$OUT/videobatch.tgz" .
    rm -rf "$W" ;;
*) echo "device_run: unknown mode $mode" >&2; exit 2 ;;
esac
echo "# device_run $mode rc=$rc"
exit $rc
