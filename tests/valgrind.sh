#!/bin/sh
# tests/valgrind.sh — gpuedge under Valgrind's memcheck (docs/RELIABILITY.md).
#
#   sh tests/valgrind.sh            (or `make valgrind`; slow, not in `make test`)
#   GPUEDGE=path/to/gpuedge BACKEND=cpu VALGRIND_LOGS=build/valgrind sh tests/valgrind.sh
#
# Every case runs
#   valgrind --leak-check=full --error-exitcode=9
#            --errors-for-leak-kinds=definite,indirect --track-fds=yes
#            --suppressions=tests/valgrind.supp gpuedge --backend=$BACKEND ...
# and passes when gpuedge's own exit status is the expected one (9 = memcheck
# found an error: invalid read/write, uninitialised value, a definite or
# indirect leak) and no file descriptor opened by gpuedge is still open at
# exit.  "Possibly lost" and "still reachable" are listed, not counted (the
# detached sigwait thread's TLS is "possibly lost" by design).  One log per
# case in $VALGRIND_LOGS/NAME.log, and a table at the end.
#
# Cases: (a) a batch of samples/*.png plus a generated H.264 clip to .mkv,
# with --hist; video to .mp4, .y4m on stdout and a PNG sequence; --version
# and the default --backend=auto (the CUDA runtime's probe);
# (b) --cpu-ref on an image and on the clip; (c) a batch with bad files among
# good ones (exit 1), a usage error (exit 2), a video onto a full disk (exit
# 1); (d) SIGINT and SIGTERM in the middle of a video (exit 130/143), one
# with --keep-partial.
cd "$(dirname "$0")/.." || exit 1
ROOT=$(pwd)
GPUEDGE=${GPUEDGE:-./gpuedge}
case $GPUEDGE in /*) ;; */*) GPUEDGE=$ROOT/$GPUEDGE ;; esac
BACKEND=${BACKEND:-cpu}
LOGS=${VALGRIND_LOGS:-build/valgrind}
case $LOGS in /*) ;; *) LOGS=$ROOT/$LOGS ;; esac
SUPP=$ROOT/tests/valgrind.supp

if ! command -v valgrind >/dev/null 2>&1; then
    echo "skip valgrind: valgrind is not installed (apt-get install valgrind)"
    exit 0
fi
[ -x "$GPUEDGE" ] || { echo "not ok valgrind: no $GPUEDGE (make first)"; exit 1; }
mkdir -p "$LOGS" && rm -f "$LOGS"/*.log
W=$(mktemp -d "${TMPDIR:-/tmp}/gpuedge-valgrind.XXXXXX") || exit 1
BGPID=
cleanup() {
    [ -n "$BGPID" ] && kill -KILL "$BGPID" 2>/dev/null
    umount "$W/full" 2>/dev/null
    rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
cd "$W" || exit 1

VG="valgrind --leak-check=full --error-exitcode=9 --errors-for-leak-kinds=definite,indirect
    --track-fds=yes --suppressions=$SUPP"
NFAIL=0
TABLE=$W/.table
: >"$TABLE"

# leaked_fds LOG: descriptors open at exit that gpuedge opened itself
leaked_fds() {
    awk '/Open file descriptor [0-9]+:/ { fd = $0; sub(/.*Open file descriptor /, "", fd); getline nxt
             if (nxt !~ /inherited from parent/) printf "%s ", fd }' "$1"
}
lost() { # LOG KIND: bytes, or 0
    v=$(sed -n "s/.*$2: \([0-9,]*\) bytes.*/\1/p" "$1" | tail -n 1 | tr -d ,)
    echo "${v:-0}"
}

# verdict NAME WANT RC: reads $LOGS/NAME.log, prints ok / not ok and a row
verdict() {
    name=$1 want=$2 rc=$3 log=$LOGS/$1.log
    errs=$(sed -n 's/.*ERROR SUMMARY: \([0-9]*\) errors.*/\1/p' "$log" | tail -n 1)
    def=$(lost "$log" 'definitely lost') ind=$(lost "$log" 'indirectly lost')
    pos=$(lost "$log" 'possibly lost') rea=$(lost "$log" 'still reachable')
    fds=$(leaked_fds "$log")
    why=
    [ "$rc" -eq "$want" ] || why="exit $rc, expected $want (9: memcheck errors)"
    [ "${errs:-x}" = 0 ] || why="${why:+$why; }${errs:-no} memcheck errors"
    [ -z "$fds" ] || why="${why:+$why; }descriptors left open: $fds"
    if [ -z "$why" ]; then
        echo "ok valgrind: $name (exit $rc)"
    else
        echo "not ok valgrind: $name: $why (see $log)"
        NFAIL=$((NFAIL + 1))
    fi
    printf '%-24s %4s %6s %9s %9s %9s %10s\n' "$name" "$rc" "${errs:-?}" "$def" "$ind" "$pos" "$rea" >>"$TABLE"
}

# vg NAME WANT ARGS...: gpuedge under valgrind in the foreground
vg() {
    name=$1 want=$2
    shift 2
    $VG --log-file="$LOGS/$name.log" "$GPUEDGE" --backend="$BACKEND" "$@" >"$W/.out" 2>"$W/.err"
    verdict "$name" "$want" $?
}

# vg_signal NAME SIGNAL WANT TEMP-GLOB ARGS...: started in the background,
# SIGNAL once the temp file of the output exists (the run is mid-video): named,
# or unnamed (O_TMPFILE) and open; SIGINT not left ignored by the shell's `&`
vg_signal() {
    name=$1 sig=$2 want=$3 glob=$4
    shift 4
    env --default-signal=INT $VG --log-file="$LOGS/$name.log" "$GPUEDGE" --backend="$BACKEND" "$@" \
        >"$W/.out" 2>"$W/.err" &
    BGPID=$!
    n=0
    while [ $n -lt 1200 ] && [ -z "$(find . -maxdepth 1 -name "$glob" -print)" ] &&
        ! ls -l "/proc/$BGPID/fd" 2>/dev/null | grep -q "/#[0-9]* (deleted)\$" &&
        kill -0 "$BGPID" 2>/dev/null; do
        sleep 0.1
        n=$((n + 1))
    done
    sleep 0.5
    kill "-$sig" "$BGPID" 2>/dev/null
    wait "$BGPID"
    rc=$?
    BGPID=
    verdict "$name" "$want" "$rc"
    left=$(find . -maxdepth 1 \( -name '.*.tmp' -o -name 'sig.mkv' \) -print)
    if [ -n "$left" ]; then
        echo "not ok valgrind: $name: left behind: $left"
        NFAIL=$((NFAIL + 1))
    fi
}

# ---- inputs
HAVE_FF=0
if command -v ffmpeg >/dev/null 2>&1; then
    HAVE_FF=1
    ffmpeg -nostdin -v error -f lavfi -i testsrc=s=160x120:r=10 -frames:v 20 -c:v libx264 \
        -pix_fmt yuv420p clip.mp4 &&
        ffmpeg -nostdin -v error -f lavfi -i testsrc=s=320x240:r=25 -frames:v 400 -c:v ffv1 \
            long.mkv &&
        ffmpeg -nostdin -v error -f lavfi \
            -i "nullsrc=s=320x240:r=25,geq=lum='random(1)*255':cb=128:cr=128" -frames:v 30 \
            -c:v ffv1 noise.mkv || HAVE_FF=0
fi
cp "$ROOT/samples/photo.png" good.png
head -c 5000 good.png >trunc.png
head -c 20000 /dev/urandom >garbage.mkv

# ---- (a) batches that succeed
vg batch-images 0 -o out --hist hist.csv "$ROOT"/samples/*.png
if [ "$HAVE_FF" -eq 1 ]; then
    vg batch-images+video 0 -y -o out --hist hist.csv "$ROOT"/samples/*.png clip.mp4
    vg video-mp4 0 clip.mp4 out.mp4
    vg video-y4m-stdout 0 clip.mp4 -
    mkdir seq
    vg video-sequence 0 clip.mp4 seq/e_%03d.png
fi
# the CUDA runtime's probe (no driver here: it fails fast, CPU fallback)
$VG --log-file="$LOGS/version.log" "$GPUEDGE" --version >"$W/.out" 2>"$W/.err"
verdict version 0 $?
$VG --log-file="$LOGS/backend-auto.log" "$GPUEDGE" good.png auto.png >"$W/.out" 2>"$W/.err"
verdict backend-auto 0 $?
# ---- (b) the differential check
vg cpu-ref-image 0 --cpu-ref good.png ref.png
[ "$HAVE_FF" -eq 1 ] && vg cpu-ref-video 0 --cpu-ref=1 clip.mp4 ref.mkv
# ---- (c) failures
vg failed-batch 1 -o bad good.png trunc.png garbage.mkv "$ROOT/samples/grey.png"
vg usage-error 2 -o col good.png good.png
if [ "$HAVE_FF" -eq 1 ]; then
    mkdir full
    if mount -t tmpfs -o size=512k tmpfs full 2>/dev/null; then
        vg video-disk-full 1 noise.mkv full/out.mkv
        umount full
    else
        # no mount: the file size limit stands in (EFBIG)
        (ulimit -f 1024 && exec $VG --log-file="$LOGS/video-file-too-large.log" "$GPUEDGE" \
            --backend="$BACKEND" noise.mkv full/out.mkv) >"$W/.out" 2>"$W/.err"
        verdict video-file-too-large 1 $?
    fi
fi
# ---- (d) interrupted
if [ "$HAVE_FF" -eq 1 ]; then
    vg_signal sigint INT 130 '.sig.mkv.*.tmp' --threads 1 long.mkv sig.mkv
    vg_signal sigterm TERM 143 '.sig.mkv.*.tmp' --threads 1 long.mkv sig.mkv
    vg_signal sigint-keep-partial INT 130 '.sig.mkv.*.tmp' --threads 1 --keep-partial long.mkv sig.mkv
    rm -f sig.partial.mkv
fi

echo
echo "valgrind $(valgrind --version | sed 's/valgrind-//'), gpuedge --backend=$BACKEND; bytes lost per case (logs in $LOGS):"
printf '%-24s %4s %6s %9s %9s %9s %10s\n' case exit errors definite indirect possibly reachable
cat "$TABLE"
[ "$NFAIL" -eq 0 ]
