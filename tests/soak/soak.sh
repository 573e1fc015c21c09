#!/bin/sh
# tests/soak/soak.sh — one long batch, memory watched (docs/RELIABILITY.md).
#
#   sh tests/soak/soak.sh                       CPU backend (about 1 min)
#   BACKEND=gpu sh tests/soak/soak.sh           on the GPU machine
#
# CLIPS=DIR takes the clips from DIR's .mkv and .mp4 files, cycled, instead
# of ffmpeg (for the GPU machine, which has none).
# Makes FILES inputs (default 1000): every 10th a video clip of 10 frames
# (half FFV1 .mkv, half H.264 .mp4, cut from one ffmpeg run by the segment
# muxer), the rest small images (PGM and grey/RGB/RGBA PNG, 16..MAXSIDE
# pixels a side, tests/soak/make_inputs.py, python3 standard library), so
# images and videos alternate through the sorted batch.  Then runs once
#     gpuedge -v --backend=$BACKEND -o OUT --hist H.csv IN
# sampling VmRSS (and VmHWM) from /proc/PID/status every 0.1 s into rss.csv
# with the files taken and the outputs so far (and, with BACKEND=gpu and
# nvidia-smi, the process's GPU memory, time-stamped, into gpu.csv), and
# checks:
#   - exit 0, one output per input (fNNNN.png / fNNNN.mkv), no temp file,
#     H.csv with 1 row per image and 10 per clip;
#   - SPOT random inputs (default 20, seeded) run again one by one: their
#     outputs equal byte for byte (images, and videos too: .mkv muxing is
#     bit-exact), their H.csv rows identical;
#   - memory flat: the warm-up is judged by the files taken, not the clock
#     (a fast machine runs the whole batch in the time a slow one warms
#     up): the samples taken while WARMUP_PCT % of the files (default 40:
#     the kept buffers and the rings grow to the batch's sizes over its
#     first third) were not yet taken; of the samples after it, max RSS
#     over the last third <= 1.1 x max RSS over the first third +
#     SLACK_KB (default 8192); the same for GPU memory (+ 64 MiB).  Fewer
#     than 3 samples a third is a failure: too short to judge.  "Taken":
#     the files engines have taken, from -v's "engine N takes it" lines,
#     where a batch runs several engines (they take the queue largest
#     first, and the outputs, committed in the inputs' order, trail them);
#     else the outputs written.
# Prints the curve summary (start, after warm-up, end, max) and writes it,
# with rss.csv, gpu.csv and gpuedge's stderr, to SOAK_DIR (build/soak).
# Exit 0 when every check passed.  Inputs are removed unless KEEP=1, the
# outputs too unless KEEP=1 or a check failed.
cd "$(dirname "$0")/../.." || exit 1
ROOT=$(pwd)
GPUEDGE=${GPUEDGE:-./gpuedge}
case $GPUEDGE in /*) ;; */*) GPUEDGE=$ROOT/$GPUEDGE ;; esac
BACKEND=${BACKEND:-cpu}
FILES=${FILES:-1000}
MAXSIDE=${MAXSIDE:-1024}
CLIP_SIZE=${CLIP_SIZE:-640x360}
SEED=${SEED:-20261129}
SPOT=${SPOT:-20}
WARMUP_PCT=${WARMUP_PCT:-40}
SLACK_KB=${SLACK_KB:-8192}
GPU_SLACK_MB=${GPU_SLACK_MB:-64}
D=${SOAK_DIR:-build/soak}
case $D in /*) ;; *) D=$ROOT/$D ;; esac

NFAIL=0
ok() { echo "ok soak: $*"; }
not_ok() {
    echo "not ok soak: $*"
    NFAIL=$((NFAIL + 1))
}
# CLIPS=DIR: take the video inputs from DIR's .mkv/.mp4 files (cycled)
# instead of making them with ffmpeg (the GPU machine has no ffmpeg).
CLIPS=${CLIPS:-}
case $CLIPS in "" | /*) ;; *) CLIPS=$ROOT/$CLIPS ;; esac
need="python3 awk"
[ -n "$CLIPS" ] || need="$need ffmpeg"
for tool in $need; do
    command -v $tool >/dev/null 2>&1 || { echo "skip soak: no $tool"; exit 0; }
done
[ -x "$GPUEDGE" ] || { not_ok "no $GPUEDGE (make first)"; exit 1; }
[ -r /proc/self/status ] || { echo "skip soak: no /proc to sample"; exit 0; }

IN=$D/in OUT=$D/out CHK=$D/check
rm -rf "$IN" "$OUT" "$CHK" "$D"/*.csv "$D"/summary.txt "$D"/gpuedge.log
mkdir -p "$IN" "$CHK" || exit 1
GEPID= SMIPID=
cleanup() {
    [ -n "$GEPID" ] && kill "$GEPID" 2>/dev/null
    [ -n "$SMIPID" ] && kill "$SMIPID" 2>/dev/null
    [ "${KEEP:-0}" = 1 ] || rm -rf "$IN" "$CHK"
    # the outputs stay for a look when a check failed
    [ "${KEEP:-0}" = 1 ] || [ "$NFAIL" -ne 0 ] || rm -rf "$OUT"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

T0=$(date +%s)
# ---- inputs
nimg=$(python3 tests/soak/make_inputs.py "$IN" "$FILES" "$SEED" "$MAXSIDE") ||
    { not_ok "make_inputs.py failed"; exit 1; }
nvid=$((FILES / 10))
nmkv=$((nvid / 2))
nmp4=$((nvid - nmkv))
seg() { # N CODEC-ARGS... : N clips of 10 frames into $D/seg_%03d.EXT
    n=$1 ext=$2
    shift 2
    [ "$n" -gt 0 ] || return 0
    cuts=$(awk -v n="$n" 'BEGIN { for (i = 1; i < n; i++) printf "%s%d", (i > 1 ? "," : ""), 10 * i }')
    ffmpeg -nostdin -v error -f lavfi \
        -i "testsrc2=s=$CLIP_SIZE:r=25,noise=alls=20:allf=t+u" -frames:v $((10 * n)) "$@" \
        -f segment ${cuts:+-segment_frames "$cuts"} -reset_timestamps 1 "$D/seg_%03d.$ext"
}
if [ -n "$CLIPS" ]; then
    # the carried clips, cycled, under the names the generated ones get
    set -- "$CLIPS"/*.mkv
    [ -f "$1" ] || { not_ok "no .mkv clip in $CLIPS"; exit 1; }
    i=0
    while [ $i -lt "$nmkv" ]; do
        k=$((i % $# + 1))
        eval "cp \"\${$k}\" \"$IN/$(printf 'f%04d.mkv' $((20 * i + 9)))\""
        i=$((i + 1))
    done
    set -- "$CLIPS"/*.mp4
    [ -f "$1" ] || { not_ok "no .mp4 clip in $CLIPS"; exit 1; }
    i=0
    while [ $i -lt "$nmp4" ]; do
        k=$((i % $# + 1))
        eval "cp \"\${$k}\" \"$IN/$(printf 'f%04d.mp4' $((20 * i + 19)))\""
        i=$((i + 1))
    done
    nmkv=0 nmp4=0 # nothing left to generate
fi
seg "$nmkv" mkv -c:v ffv1 -g 1 || { not_ok "ffmpeg (mkv clips) failed"; exit 1; }
i=0
for f in "$D"/seg_*.mkv; do
    [ -f "$f" ] || continue
    mv "$f" "$IN/$(printf 'f%04d.mkv' $((20 * i + 9)))"
    i=$((i + 1))
done
seg "$nmp4" mp4 -c:v libx264 -g 10 -keyint_min 10 -sc_threshold 0 -bf 0 -pix_fmt yuv420p ||
    { not_ok "ffmpeg (mp4 clips) failed"; exit 1; }
i=0
for f in "$D"/seg_*.mp4; do
    [ -f "$f" ] || continue
    mv "$f" "$IN/$(printf 'f%04d.mp4' $((20 * i + 19)))"
    i=$((i + 1))
done
ninputs=$(ls "$IN" | wc -l)
T1=$(date +%s)
echo "# soak: $ninputs inputs ($nimg images up to ${MAXSIDE}px, $nvid clips of 10 frames at $CLIP_SIZE) in $((T1 - T0)) s"
[ "$ninputs" -eq "$FILES" ] || not_ok "$ninputs inputs made, expected $FILES"

# ---- the run, sampled
# seconds since midnight of "[date ]HH:MM:SS.frac": nvidia-smi's time
# stamps are placed against tod0, the time of day read with up0
TOD='function tod(s,  a) { sub(/^.* /, "", s); split(s, a, ":"); return a[1] * 3600 + a[2] * 60 + a[3] }'
if [ "$BACKEND" = gpu ] && command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi --query-compute-apps=timestamp,pid,used_memory --format=csv,noheader,nounits \
        -lms 50 >"$D/gpu.raw" 2>/dev/null &
    SMIPID=$!
fi
read up0 _ </proc/uptime
tod0=$(date +%T.%N)
"$GPUEDGE" -v --backend="$BACKEND" -o "$OUT" --hist "$D/H.csv" "$IN" 2>"$D/gpuedge.log" &
GEPID=$!
RUNPID=$GEPID
echo "t_s,rss_kb,hwm_kb,outputs,taken" >"$D/rss.csv"
while :; do
    s=$(awk '/^VmRSS:/ { r = $2 } /^VmHWM:/ { h = $2 } END { if (r != "") print r "," h }' \
        "/proc/$GEPID/status" 2>/dev/null)
    [ -n "$s" ] || break # exited (a zombie has no VmRSS)
    read up _ </proc/uptime
    set -- "$OUT"/*
    n=$#
    [ -e "$1" ] || n=0
    k=$(grep -c ': engine [0-9]* takes it' "$D/gpuedge.log")
    echo "$(awk -v a="$up" -v b="$up0" 'BEGIN { printf "%.2f", a - b }'),$s,$n,$k" >>"$D/rss.csv"
    sleep 0.1
done
wait "$GEPID"
rc=$?
GEPID=
read up1 _ </proc/uptime
wall=$(awk -v a="$up1" -v b="$up0" 'BEGIN { printf "%.1f", a - b }')
if [ -n "$SMIPID" ]; then
    kill "$SMIPID" 2>/dev/null
    wait "$SMIPID" 2>/dev/null
    SMIPID=
fi
# the axis: files taken where several engines took them, else outputs
axis=5
[ "$(tail -n 1 "$D/rss.csv" | cut -d, -f5)" -gt 0 ] 2>/dev/null || axis=4

# ---- checks
[ "$rc" -eq 0 ] && ok "gpuedge exit 0 over $ninputs files in $wall s" ||
    { not_ok "gpuedge exit $rc (see $D/gpuedge.log)"; tail -n 3 "$D/gpuedge.log" | sed 's/^/#   /'; }

missing=0
for f in "$IN"/*; do
    b=${f##*/}
    case $b in *.mkv | *.mp4) o=${b%.*}.mkv ;; *) o=${b%.*}.png ;; esac
    [ -s "$OUT/$o" ] || missing=$((missing + 1))
done
stray=$(find "$OUT" -name '.*.tmp' -o -name '*.partial*' | wc -l)
nout=$(ls "$OUT" | wc -l)
[ "$missing" -eq 0 ] && [ "$stray" -eq 0 ] && [ "$nout" -eq "$ninputs" ] &&
    ok "$nout outputs, one per input, no temp file" ||
    not_ok "outputs: $missing missing, $stray temp/partial, $nout in $OUT"

rows=$(awk '
    FNR == 1 { next }
    { n[$0 ~ /\.(mkv|mp4)",/ ? "v" : "i"]++ }
    END { printf "%d %d", n["i"], n["v"] }' "$D/H.csv")
want="$nimg $((nvid * 10))"
[ "$rows" = "$want" ] && ok "H.csv: $nimg image rows and $((nvid * 10)) video rows" ||
    not_ok "H.csv rows (images videos): $rows, expected $want"

# spot checks: SPOT inputs picked with the seed, each run alone
ls "$IN" | awk -v n="$SPOT" -v seed="$SEED" '
    { f[NR] = $0 }
    END { srand(seed); for (k = 0; k < n && k < NR; ) { i = int(rand() * NR) + 1
          if (!(i in u)) { u[i] = 1; print f[i]; k++ } } }' >"$D/spot.txt"
bad=
while IFS= read -r b; do
    case $b in *.mkv | *.mp4) o=${b%.*}.mkv ;; *) o=${b%.*}.png ;; esac
    rm -f "$CHK/h.csv"
    if ! "$GPUEDGE" --backend="$BACKEND" -q --hist "$CHK/h.csv" "$IN/$b" "$CHK/$o" 2>>"$D/gpuedge.log"; then
        bad="$bad $b(exit)"
        continue
    fi
    # .mkv outputs are reproducible byte for byte (bit-exact muxing)
    cmp -s "$OUT/$o" "$CHK/$o" || bad="$bad $b(bytes)"
    h1=$(grep -F "\"$IN/$b\"," "$D/H.csv")
    h2=$(sed 1d "$CHK/h.csv")
    [ -n "$h1" ] && [ "$h1" = "$h2" ] || bad="$bad $b(hist)"
    rm -f "$CHK/$o"
done <"$D/spot.txt"
[ -z "$bad" ] && ok "$(wc -l <"$D/spot.txt" | tr -d ' ') random outputs equal a one-file run (bytes, and H.csv rows)" ||
    not_ok "spot checks differ:$bad"

# flatness: CSV COLUMN SLACK UNIT; the CSV's column $axis is the files
# taken (or the outputs written) by the sample's time (of $ninputs).  The
# samples after the warm-up are cut in thirds by time, not by files: a
# batch taken largest first ends with its smallest files, too fast to
# sample, and a leak grows with the files taken, so with the clock too.
flat() {
    awk -F, -v col="$2" -v wp="$WARMUP_PCT" -v slack="$3" -v unit="$4" -v total="$ninputs" -v ax="$axis" '
        NR == 1 { next }
        { v[++n] = $col; t[n] = $1; f[n] = 100 * $ax / total }
        END {
            w = 0
            for (i = 1; i <= n; i++) {
                if (v[i] > mx) mx = v[i]
                if (f[i] < wp) w = i
            }
            k = int((n - w) / 3); lo1 = lo2 = -1
            for (i = w + 1; i <= w + k; i++) { if (v[i] > q1) q1 = v[i]; if (lo1 < 0 || v[i] < lo1) lo1 = v[i] }
            for (i = n - k + 1; i <= n; i++) { if (v[i] > h2) h2 = v[i]; if (lo2 < 0 || v[i] < lo2) lo2 = v[i] }
            if (k < 3) {
                printf "FEW %d samples, %d after the warm-up (%d %% of the files): too short to judge\n", n, n - w, wp
                exit
            }
            lim = 1.1 * q1 + slack
            # the floors (minima) are shown, not judged: a slow leak lifts
            # them even while the working set swings with the image sizes
            printf "%s %d samples; start %d, after warm-up (%d %% of the files, t=%.1f s) %d, end %d, max %d %s; " \
                   "first third after it (%d samples, to t=%.1f s): max %d (min %d), last third: max %d (min %d), limit %d\n",
                   (h2 <= lim ? "FLAT" : "GROWS"), n, v[1], wp, t[w + 1], v[w + 1], v[n], mx, unit,
                   k, t[w + k], q1, lo1, h2, lo2, lim
        }' "$1"
}
r=$(flat "$D/rss.csv" 2 "$SLACK_KB" KiB)
echo "# RSS: ${r#* }"
case $r in
FLAT*) ok "RSS flat after warm-up (${r#* })" ;;
*) not_ok "RSS: $r" ;;
esac
gline=
if [ -f "$D/gpu.raw" ]; then
    # nvidia-smi lists every compute process: gpuedge's rows by its pid,
    # each at its time stamp's second of the run (a run over midnight adds
    # a day), with the files taken (outputs) of the last RSS sample at or
    # before it
    awk -F', *' -v p="$RUNPID" -v t0="$tod0" "$TOD"'
        BEGIN { print "t_s,gpu_mib,-,outputs,taken"; s0 = tod(t0) }
        FNR == NR { if (FNR > 1) { m++; rt[m] = $1; ro[m] = $4; rk[m] = $5 } next }
        $2 == p && $3 ~ /^[0-9]+$/ {
            d = tod($1) - s0
            if (d < -43200) d += 86400
            while (j < m && rt[j + 1] <= d) j++
            if (j) printf "%.2f,%d,,%d,%d\n", d, $3, ro[j], rk[j]
        }' "$D/rss.csv" "$D/gpu.raw" >"$D/gpu.csv"
    g=$(flat "$D/gpu.csv" 2 "$GPU_SLACK_MB" MiB)
    gline="GPU memory: ${g#* }"
    echo "# $gline"
    case $g in
    FLAT*) ok "GPU memory flat after warm-up (${g#* })" ;;
    *) not_ok "GPU memory: $g" ;;
    esac
elif [ "$BACKEND" = gpu ]; then
    echo "skip soak: GPU memory: no nvidia-smi"
fi

T2=$(date +%s)
{
    os=$(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME")
    echo "soak $(date -u +%Y-%m-%d), ${os:-$(uname -s)} (kernel $(uname -r)), $(nproc) CPUs, backend $BACKEND"
    echo "inputs: $ninputs ($nimg images up to ${MAXSIDE}px, $nvid clips x 10 frames at $CLIP_SIZE), made in $((T1 - T0)) s"
    echo "gpuedge: exit $rc, $wall s"
    echo "warm-up judged by the $([ "$axis" = 5 ] && echo "files taken (several engines)" || echo "outputs written")"
    echo "RSS: ${r#* }"
    [ -n "$gline" ] && echo "$gline"
    echo "script total: $((T2 - T0)) s; checks failed: $NFAIL"
} >"$D/summary.txt"
echo "# summary in $D/summary.txt; samples in $D/rss.csv"
[ "$NFAIL" -eq 0 ]
