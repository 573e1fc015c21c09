#!/bin/sh
# Damaged videos (DESIGN.md §6; man page "Damaged input"): an MP4 cut in
# half (its index still counts every frame), a Matroska file cut in half,
# one with 4 KiB overwritten in the middle, one with bit noise in its
# packets (damaged frames repeat a pts and go back in pts: the fallback to
# one decoder must count frames, not compare pts), a .y4m cut inside a
# frame.  Each: exit 0, the frames decoded kept, ONE notice naming what was
# lost (frames expected vs decoded where the container knows), the same
# notice and the same output bytes with --threads 1, 2 and 4 (2 and 4 cut
# the Matroska and MP4 files into segments).  Then a batch (the file's
# line, the summary and the JSON report say damaged), and --strict (exit
# 1, no output, the batch's good file still written; an image sequence's
# frames removed).  The clips are 100 frames of 128x72 (about 1 s to make).
. "$(dirname "$0")/lib.sh"

if ! command -v ffmpeg >/dev/null 2>&1; then
    skip "damaged: ffmpeg not installed (Debian package ffmpeg)"
    finish
fi

G=--backend=cpu
mk() { ffmpeg -nostdin -hide_banner -v error -y "$@" </dev/null >/dev/null 2>"$T/ff.err"; }
add() { why="${why:+$why; }$*"; }
check() { if [ -z "$2" ]; then ok "$1"; else not_ok "$1: $2"; show_err; fi; }
size() { wc -c <"$1" | tr -d ' '; }
# Deterministic junk: compressed PNG data from the samples.
junk() { dd if="$SAMPLES/photo.png" bs=1024 skip=2 count="$1" 2>/dev/null; }

SRC=testsrc2=size=128x72:rate=25
mk -f lavfi -i $SRC -frames:v 100 -c:v libx264 -preset veryfast -g 25 -pix_fmt yuv420p \
    -movflags +faststart clean.mp4 &&
    mk -f lavfi -i $SRC -frames:v 100 -c:v libx264 -preset veryfast -g 25 -pix_fmt yuv420p \
        clean.mkv &&
    mk -i clean.mkv -c copy -bsf:v noise=amount=100 noisy.mkv &&
    mk -f lavfi -i testsrc2=size=64x48:rate=10 -frames:v 20 -pix_fmt yuv420p clean.y4m ||
    { not_ok "cannot make the test clips: $(head -n 1 "$T/ff.err")"; finish; }
head -c $(($(size clean.mp4) / 2)) clean.mp4 >cut.mp4
head -c $(($(size clean.mkv) / 2)) clean.mkv >cut.mkv
cp clean.mkv mid.mkv
junk 4 | dd of=mid.mkv bs=1 seek=$(($(size clean.mkv) / 2)) conv=notrunc 2>/dev/null
# 20 frames of 64x48 4:2:0 (4608 bytes and "FRAME\n" each): 9 whole
# frames and a part of the tenth (the notice counts it: "of 10")
head -c $(($(size clean.y4m) / 2)) clean.y4m >cut.y4m

NOTICE_TAIL='frames? decoded \(corrupt or missing data skipped or concealed\)$'

# damaged NAME FILE OF: FILE with --threads 1, 2 and 4: exit 0, an output,
# stderr one notice "FILE: damaged: D OF frames decoded (...)" (OF an ERE:
# "of 100", "of about 100" or empty), the same notice and bytes each time
damaged() {
    d_name=$1 in=$2 of=$3 why= notice=
    ere=$(printf '%s' "$in" | sed 's/[.[\*^$+?(){}|]/\\&/g')
    for n in 1 2 4; do
        ge $G --threads $n "$in" "out$n.mkv"
        [ "$RC" -eq 0 ] || add "--threads $n: exit $RC"
        [ -s "out$n.mkv" ] || add "--threads $n: no output"
        if [ "$(nlines "$ERR")" -ne 1 ] ||
            ! grep -Eq "^gpuedge: $ere: damaged: [0-9]+${of:+ $of} $NOTICE_TAIL" "$ERR"; then
            add "--threads $n: stderr is not one notice: $(head -n 3 "$ERR" | tr '\n' '|')"
        fi
        if [ "$n" = 1 ]; then
            notice=$(cat "$ERR")
        else
            [ "$(cat "$ERR")" = "$notice" ] || add "--threads $n: another notice than --threads 1's"
            cmp -s out1.mkv "out$n.mkv" || add "--threads $n: other bytes than --threads 1"
        fi
    done
    no_stray_files "$W" || add "$WHY"
    check "$d_name: exit 0, one notice ('${notice#gpuedge: }'), --threads 1/2/4 the same bytes" "$why"
    rm -f out1.mkv out2.mkv out4.mkv
}

damaged "MP4 cut in half" cut.mp4 "of 100"
damaged "Matroska cut in half" cut.mkv "of about 100"
damaged "Matroska with 4 KiB overwritten in the middle" mid.mkv "of about 100"
damaged "Matroska with bit noise in its packets" noisy.mkv "of about 100"
damaged ".y4m cut inside a frame" cut.y4m "of 10"

# the two ways --threads 2 went there (-v): the damaged Matroska files in
# segments, then one decoder from the damage on; the cut MP4 (its scan
# stops at the cut: not segmented) in one decoder of 2 threads, then one
# of one thread
why=
for f in mid.mkv noisy.mkv cut.mp4; do
    ge $G -v --threads 2 "$f" v.mkv
    case $f in
    *.mkv) grep -q "segments on" "$ERR" || add "$f: not segmented" ;;
    *) grep -q "segments on" "$ERR" && add "$f: segmented" ;;
    esac
    grep -q "damaged data after frame [0-9]*: the rest from one decoder" "$ERR" ||
        add "$f: no fallback to one decoder"
    rm -f v.mkv
done
check "--threads 2: segments or frame threads, then one decoder of one thread" "$why"

# intact clips: no notice (and --strict changes nothing)
why=
for f in clean.mp4 clean.mkv clean.y4m; do
    ge $G --strict --threads 2 "$f" c.mkv
    [ "$RC" -eq 0 ] && [ -s c.mkv ] || add "$f: exit $RC"
    [ -s "$ERR" ] && add "$f: $(head -n 1 "$ERR")"
    rm -f c.mkv
done
check "intact MP4, Matroska and .y4m: no notice, --strict passes them" "$why"

# a batch: the damaged file's line takes the place of "ok", once; the
# summary and the report say damaged
why=
ge $G -o out --report=json --report-file r.json clean.mkv cut.mp4
[ "$RC" -eq 0 ] || add "exit $RC"
[ -s out/clean.mkv ] && [ -s out/cut.mkv ] || add "outputs missing: $(ls out | tr '\n' ' ')"
grep -Eq "^gpuedge: cut\.mp4 -> out/cut\.mkv: damaged: 47 of 100 $NOTICE_TAIL" "$ERR" ||
    add "no 'damaged: 47 of 100' line for cut.mp4"
[ "$(grep -c 'cut\.mp4' "$ERR")" -eq 1 ] || add "cut.mp4 named on $(grep -c 'cut\.mp4' "$ERR") lines"
grep -q '^gpuedge: clean\.mkv -> out/clean\.mkv: ok (100 frames)$' "$ERR" || add "no ok line for clean.mkv"
grep -q '^gpuedge: 2 files: 2 ok (1 damaged), 0 failed, 0 skipped; ' "$ERR" || add "summary"
[ "$(nlines "$ERR")" -eq 3 ] || add "$(nlines "$ERR") lines on stderr"
tr -d '\n' <r.json >r1.json
grep -q '"damaged_files":1[,}]' r1.json || add "report: no damaged_files 1"
grep -q '"file":"cut\.mp4","frames":47,[^}]*"status":"damaged"}' r1.json || add "report: cut.mp4 not damaged"
grep -q '"file":"clean\.mkv","frames":100,[^}]*"status":"ok"}' r1.json || add "report: clean.mkv not ok"
check "batch: 'damaged: 47 of 100' in place of ok, summary '2 ok (1 damaged)', report status damaged" "$why"
rm -rf out r.json r1.json

# --strict: one error line, exit 1, no output; a good file beside it is
# written
fails "--strict: MP4 cut in half" 1 \
    "^gpuedge: cut\.mp4: damaged: 47 of 100 frames decoded \(corrupt or missing data skipped or concealed\); --strict$" \
    $G --strict --threads 2 cut.mp4 s.mkv
fails "--strict: Matroska with bit noise, --threads 4" 1 '^gpuedge: noisy\.mkv: damaged: .*; --strict$' \
    $G --strict --threads 4 noisy.mkv s.mkv
fails "--strict: .y4m cut inside a frame" 1 '^gpuedge: cut\.y4m: damaged: .*; --strict$' \
    $G --strict cut.y4m s.mkv
mkdir seq
fails "--strict: .y4m cut, to an image sequence: no frame left" 1 '^gpuedge: cut\.y4m: damaged: .*; --strict$' \
    $G --strict cut.y4m seq/f_%03d.pgm
rmdir seq
why=
ge $G --strict -o out clean.mkv mid.mkv
[ "$RC" -eq 1 ] || add "exit $RC"
[ -s out/clean.mkv ] || add "clean.mkv not written"
[ -e out/mid.mkv ] && add "out/mid.mkv kept"
grep -Eq '^gpuedge: mid\.mkv: damaged: [0-9]+ of about 100 frames decoded .*; --strict$' "$ERR" ||
    add "no --strict line for mid.mkv"
grep -q '^gpuedge: 2 files: 1 ok, 1 failed, 0 skipped; ' "$ERR" || add "summary"
[ "$(nlines "$ERR")" -eq 3 ] || add "$(nlines "$ERR") lines on stderr"
no_stray_files "$W" || add "$WHY"
check "--strict batch: the damaged file fails (exit 1, no output), the good one is written" "$why"
rm -rf out

finish
