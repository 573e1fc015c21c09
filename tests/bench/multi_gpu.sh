#!/bin/sh
# Several GPUs: the photo batch and the video batch of the codec
# issues (tests/bench/REALDATA.md) on 1 GPU and on 2 (--devices 0 and
# --devices 0,1), median of RUNS runs each, side by side in one run; the
# outputs of both must be byte-identical.  Prints a table with the
# speedups (issue target: >= 1.8x with 2 GPUs where the codecs allow) and
# the 2-GPU run's per-engine report lines; then, on one GPU, the video
# batch with --video-engines 2 and 4 against one engine.  Needs 2 or more GPUs (counted
# with nvidia-smi -L), else "skip" with the reason.
#   sh tests/bench/multi_gpu.sh [REALDATA]     (default build/realdata)
# Env: GPUEDGE (default ./gpuedge), RUNS (default 3), EXTRA (more gpuedge
# options for every run, e.g. "--jpeg-decoder=nvjpeg").
cd "$(dirname "$0")/../.." || exit 1
RD=${1:-${REALDATA:-build/realdata}}
GPUEDGE=${GPUEDGE:-./gpuedge}
RUNS=${RUNS:-3}

echo
echo "## several GPUs: photo and video batches on 1 GPU and on 2 (tests/bench/multi_gpu.sh)"
if ! command -v nvidia-smi >/dev/null 2>&1; then
    echo "skip multigpu: cannot count the GPUs (no nvidia-smi)"
    exit 0
fi
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
if [ "$ngpu" -lt 2 ]; then
    echo "skip multigpu: $ngpu GPU(s) here; this step needs 2 or more"
    exit 0
fi
if [ -z "$(ls "$RD/photos" 2>/dev/null)" ] || [ ! -r "$RD/video/bbb1080.mp4" ]; then
    echo "skip multigpu: no media in $RD (run tests/bench/fetch_realdata.sh)"
    exit 0
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/gpuedge-multigpu.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# the video batch: the 1080p and 4K clips, 4 and 2 of them (links with
# their own names), so that two GPUs have work to share
mkdir "$T/videos"
for i in 1 2 3 4; do ln -s "$(cd "$RD/video" && pwd)/bbb1080.mp4" "$T/videos/hd$i.mp4"; done
for i in 1 2; do
    [ -r "$RD/video/bbb2160.mp4" ] &&
        ln -s "$(cd "$RD/video" && pwd)/bbb2160.mp4" "$T/videos/uhd$i.mp4"
done

rc=0
# one DEVICES BATCH: seconds of the median of RUNS runs (the outputs of the
# last run stay in $T/out-DEVICES-BATCH; its report in $T/rep-...)
one() {
    dir="$T/out-$1-$(basename "$2")"
    for r in $(seq "$RUNS"); do
        rm -rf "$dir"
        t0=$(date +%s.%N)
        # shellcheck disable=SC2086
        "$GPUEDGE" -q -y --backend=gpu --devices "$1" ${EXTRA:-} --report \
            --report-file "$T/rep-$1-$(basename "$2").txt" -o "$dir" "$2" || {
            echo "bench: gpuedge --devices $1 on $2 failed" >&2
            rc=1
        }
        t1=$(date +%s.%N)
        echo "$t0 $t1" | awk '{ printf "%.4f\n", $2 - $1 }'
    done | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

for batch in "$RD/photos" "$T/videos"; do
    name=$(basename "$batch")
    s1=$(one 0 "$batch")
    s2=$(one 0,1 "$batch")
    if diff -r "$T/out-0-$name" "$T/out-0,1-$name" >/dev/null; then same=yes; else same=NO; rc=1; fi
    echo "$name $s1 $s2 $same" >>"$T/table"
    echo "### $name, 2 GPUs: per engine"
    sed -n '/per engine/,$p' "$T/rep-0,1-$name.txt"
done
# several engines on ONE GPU for the video batch (--video-engines):
# does decoding and encoding several videos at once pay?
for n in 2 4; do
    sv=$(EXTRA="${EXTRA:-} --video-engines $n" one 0 "$T/videos")
    echo "videos-1gpu-${n}engines $(awk '$1 == "videos" { print $2 }' "$T/table") $sv -" >>"$T/table.1"
done
echo
echo "| batch | 1 GPU s | 2 GPUs s | speedup | outputs identical |"
echo "|---|---:|---:|---:|---|"
awk '{ printf "| %s | %.3f | %.3f | %.2fx | %s |\n", $1, $2, $3, $2 / $3, $4 }' "$T/table"
echo
echo "| one GPU, video batch | 1 engine s | N engines s | speedup |"
echo "|---|---:|---:|---:|"
awk '{ printf "| %s | %.3f | %.3f | %.2fx |\n", $1, $2, $3, $2 / $3 }' "$T/table.1"
echo "(median of $RUNS runs each; $(nproc) CPU cores, $ngpu GPUs: $(nvidia-smi -L | head -n 1 | sed 's/ (UUID.*//'))"
exit $rc
