#!/bin/sh
# Files chained on one decoder (DESIGN.md §4), end to end on the CPU
# backend: --video-engines 2 --threads 2 gives each engine a one-thread
# decoder, whose H.264 files chain as the NVDEC engines' do on a GPU (the
# GPU's own check: tests/gpu/run chain).  A batch of H.264 clips with an
# MPEG-4 file, another size and a broken file between gives each file's
# output as it is alone, one line for the broken one; --skip-existing; an
# engine failing at a chained file (the test build's GPUEDGE_FAIL_ENGINE);
# SIGINT in the middle: exit 130, the finished outputs kept and exact,
# nothing partial.
. "$(dirname "$0")/lib.sh"

if ! command -v ffmpeg >/dev/null 2>&1 ||
    ! ffmpeg -hide_banner -encoders 2>/dev/null | grep -q libx264; then
    skip "chained files: needs ffmpeg with libx264"
    finish
fi
HOOKS=${TESTBIN:-tests/bin}/gpuedge_hooks
case $HOOKS in /*) ;; *) HOOKS=$ROOT/$HOOKS ;; esac
G="--backend=cpu -q --video-engines 2 --threads 2"
GV="--backend=cpu -v --video-engines 2 --threads 2"

x264() { # NAME FRAMES SIZE HUE: an H.264 clip, one encoder's settings
    ffmpeg -nostdin -v error -y -f lavfi -i "testsrc2=size=$3:rate=25" -vf "hue=h=$4" \
        -frames:v "$2" -c:v libx264 -preset veryfast -pix_fmt yuv420p "$1" </dev/null ||
        not_ok "making $1"
}
mkdir in
i=0
for n in 27 34 41 48 55 62 30 45; do
    i=$((i + 1))
    x264 "in/c$i.mp4" "$n" 160x96 $((i * 40))
done
x264 in/d_size.mp4 20 176x96 0
ffmpeg -nostdin -v error -y -f lavfi -i "testsrc2=size=160x96:rate=25" -frames:v 15 \
    -c:v mpeg4 in/e_mpeg4.mkv </dev/null || not_ok "making in/e_mpeg4.mkv"
printf 'not a video\n' >in/b_broken.mp4

alone() { # IN REF: each file of IN run alone into REF (the broken one skipped)
    mkdir "$2"
    for f in "$1"/*; do
        case $f in *broken*) continue ;; esac
        stem=$(basename "$f")
        "$GPUEDGE" --backend=cpu -q "$f" "$2/${stem%.*}.mkv" || not_ok "alone: $f"
    done
}
alone in ref

# ---- the batch: chained where the streams continue, each output as alone
ge $GV --report -o out in
why=
[ "$RC" -eq 1 ] || why="exit $RC, not 1"
diff -r ref out >/dev/null 2>&1 || why="${why:+$why; }outputs differ from each file's alone"
[ "$(grep 'b_broken.mp4: ' "$ERR" | grep -vc 'takes it')" -eq 1 ] ||
    why="${why:+$why; }not one line for the broken file"
nch=$(grep -c ': decoded on by the decoder that decoded ' "$ERR")
[ "$nch" -ge 3 ] || why="${why:+$why; }$nch files chained, expected 3 at least"
grep -q "^  videos chained: $nch (decoded on by the decoder of the file before)\$" "$ERR" ||
    why="${why:+$why; }--report does not count the $nch chained"
grep -q 'd_size.mp4: decoded on\|e_mpeg4.mkv: decoded on' "$ERR" &&
    why="${why:+$why; }another size or codec chained"
no_stray_files "$W" || why="${why:+$why; }$WHY"
[ -z "$why" ] && ok "a batch on 2 one-thread engines: $nch files chained, each output as alone, one line for the broken file" ||
    { not_ok "chained batch: $why"; show_err; }

# ---- --skip-existing: the missing ones redone, the existing untouched
rm -f out/c2.mkv out/c5.mkv
touch -d 2001-01-01 out/c3.mkv
ge $G -o out --skip-existing --report=json --report-file r.json in
[ "$RC" -eq 1 ] && diff -r ref out >/dev/null && [ "$(stat -c %Y out/c3.mkv)" -lt 1000000000 ] &&
    grep -q '"video_chained":[01],' r.json &&
    ok "--skip-existing: the missing outputs redone as alone, an existing one untouched; --report=json's video_chained" ||
    { not_ok "--skip-existing with chaining: exit $RC"; show_err; }

# ---- an engine fails at its N-th file (which may have come by a chain):
# that file and the rest of its engine's go to the other, all exact
if [ -x "$HOOKS" ]; then
    for spec in 0:2 1:3; do
        for try in 1 2 3; do
            rm -rf fo
            GPUEDGE_CPU_ENGINES=2 GPUEDGE_FAIL_ENGINE=$spec "$HOOKS" --backend=cpu -q --threads 2 \
                -o fo in >"$OUT" 2>"$ERR"
            RC=$?
            grep -q "^gpuedge: engine ${spec%%:*}: failing on purpose" "$ERR" && break
        done
        why=
        [ "$RC" -eq 1 ] || why="exit $RC, expected 1"
        diff -r ref fo >/dev/null 2>&1 || why="${why:+$why; }outputs differ from each file's alone"
        grep -q "^gpuedge: engine ${spec%%:*}: failing on purpose" "$ERR" || why="${why:+$why; }no failure line"
        no_stray_files "$W" || why="${why:+$why; }$WHY"
        [ -z "$why" ] && ok "engine ${spec%%:*} fails at its file ${spec#*:}: redone on the other, all exact" ||
            { not_ok "GPUEDGE_FAIL_ENGINE=$spec with chaining: $why"; show_err; }
    done
else
    not_ok "no test build at $HOOKS (make builds it with the unit tests)"
fi

# ---- SIGINT in the middle of a chained batch
mkdir sin
for i in 1 2 3 4 5 6 7 8; do
    x264 "sin/s$i.mp4" 300 320x240 $((i * 30))
done
alone sin sref
env --default-signal=INT "$GPUEDGE" $G -o sig sin >"$OUT" 2>"$ERR" &
BGPID=$!
output_seen() { ls sig 2>/dev/null | grep -q '\.mkv$'; }
int_when output_seen
why=
[ "$RC" -eq 130 ] || why="exit $RC, expected 130"
nkept=0
for o in sig/*.mkv; do
    [ -e "$o" ] || continue
    nkept=$((nkept + 1))
    cmp -s "$o" "sref/$(basename "$o")" || why="${why:+$why; }$o differs from its run alone"
done
[ "$nkept" -ge 1 ] && [ "$nkept" -lt 8 ] || why="${why:+$why; }$nkept outputs kept"
no_stray_files "$W" || why="${why:+$why; }$WHY"
[ -z "$why" ] && ok "SIGINT in a chained batch: exit 130, $nkept finished outputs kept and exact, nothing partial" ||
    { not_ok "SIGINT with chaining: $why"; show_err; }

finish
