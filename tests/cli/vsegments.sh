#!/bin/sh
# One video decoded in segments at once (src/io/vsource.c): with
# --threads 2 and more a long file is cut at keyframes and its segments are
# decoded by several decoders; the frames are put back in order.  The
# output must be byte for byte the sequential run's (--threads 1: one
# decoder; the .mkv encoder's bytes do not depend on --threads), with
# B-frames, open GOPs, variable frame rate, MP4 edit lists, --start inside a
# GOP, --frames ending inside a segment, and the last frame; --hist shows the
# frame numbers and pts are the sequential ones too.
. "$(dirname "$0")/lib.sh"

if ! command -v ffmpeg >/dev/null 2>&1 || ! command -v ffprobe >/dev/null 2>&1; then
    skip "vsegments: ffmpeg/ffprobe not installed (Debian package ffmpeg)"
    finish
fi

G="--backend=cpu"
mk() { ffmpeg -nostdin -hide_banner -v error -y "$@" </dev/null >/dev/null 2>"$T/ff.err"; }
add() { why="${why:+$why; }$*"; }
check() { if [ -z "$2" ]; then ok "$1"; else not_ok "$1: $2"; show_err; fi; }
nframes() {
    ffprobe -v error -select_streams v:0 -count_frames -show_entries stream=nb_read_frames \
        -of default=nw=1:nk=1 "$1" 2>/dev/null
}

# 300 frames, a keyframe every 12, B-frames; VFR (3 of every 5 frames kept)
SEL="select='lt(mod(n\\,5)\\,3)'"
mk -f lavfi -i mandelbrot=size=96x64:rate=30 -frames:v 300 -vf "$SEL" -vsync vfr \
    -c:v libx264 -preset ultrafast -bf 2 -g 12 -pix_fmt yuv420p vfr.mkv &&
    mk -f lavfi -i testsrc2=size=128x72:rate=25 -frames:v 300 -c:v libx264 -preset veryfast \
        -bf 3 -g 25 -keyint_min 5 -x264-params open-gop=1 -pix_fmt yuv420p open.mp4 &&
    mk -f lavfi -i testsrc2=size=128x72:rate=25 -frames:v 300 -c:v libx264 -preset veryfast \
        -bf 3 -g 25 -keyint_min 5 -pix_fmt yuv420p closed.mp4 &&
    mk -f lavfi -i testsrc2=size=64x48:rate=24 -frames:v 200 -c:v mpeg4 -g 20 -bf 2 mp4v.avi ||
    { not_ok "cannot make the test clips: $(head -n 1 "$T/ff.err")"; finish; }

# run NAME SEG CLIP ARGS...: --threads 1 (reference) vs 2, 3 and 4
# (segmented when SEG is 1: -v must say so; else one decoder), .mkv and
# --hist byte for byte, and no segment decoded again from the file's start
# (a seek that missed).  H.264 segments on one-thread decoders go on in
# the decoder of the segment before (vid_skip_to): -v must say so for one
# of the three at least.
run() {
    name=$1 seg=$2 clip=$3
    shift 3
    why= kept=0
    ge $G -q --threads 1 --hist ref.csv "$@" "$clip" ref.mkv
    [ "$RC" -eq 0 ] || add "--threads 1: exit $RC"
    nref=$(nframes ref.mkv)
    for n in 2 3 4; do
        ge $G -v -y --threads $n --hist seg.csv "$@" "$clip" seg.mkv
        [ "$RC" -eq 0 ] || add "--threads $n: exit $RC"
        if [ "$seg" = 1 ]; then
            grep -q "segments on [0-9]* decoders" "$ERR" || add "--threads $n: not segmented"
        else
            grep -q "segments on" "$ERR" && add "--threads $n: segmented"
        fi
        grep -q "segments decoded on by the decoder of the segment before" "$ERR" &&
            kept=$((kept + 1))
        grep -q "the seek missed its keyframe" "$ERR" &&
            add "--threads $n: a segment decoded again from the start"
        cmp -s ref.mkv seg.mkv || add "--threads $n: other bytes ($(nframes seg.mkv) frames, want $nref)"
        cmp -s ref.csv seg.csv || add "--threads $n: other --hist rows"
    done
    case "$seg:$clip" in
    1:vfr.mkv | 1:closed.mp4) [ "$kept" -gt 0 ] || add "no segment went on in a kept decoder" ;;
    esac
    if [ "$seg" = 1 ]; then
        check "$name: $nref frames, --threads 2/3/4 in segments == --threads 1, bytes and --hist" "$why"
    else
        check "$name: $nref frames, not segmented, --threads 2/3/4 == --threads 1" "$why"
    fi
    rm -f ref.mkv seg.mkv ref.csv seg.csv
}

run "VFR H.264 mkv, B-frames, GOP 12, every frame" 1 vfr.mkv
run "VFR H.264 mkv, --start 1.9 (inside a GOP)" 1 vfr.mkv --start 1.9
run "VFR H.264 mkv, --frames 97 (ends inside a segment)" 1 vfr.mkv --frames 97
run "VFR H.264 mkv, --start 0.5 --frames 130" 1 vfr.mkv --start 0.5 --frames 130
run "open-GOP H.264 mp4 (edit list, B-pyramid), one IDR" 0 open.mp4
run "open-GOP H.264 mp4, --start 3.3 --frames 150" 0 open.mp4 --start 3.3 --frames 150
run "closed-GOP H.264 mp4 (edit list, B-pyramid), every frame" 1 closed.mp4
run "closed-GOP H.264 mp4, --start 3.3 --frames 150" 1 closed.mp4 --start 3.3 --frames 150
# AVI keeps no pts (only the decode order), MPEG-TS seeks by bytes (a
# segment's seek would miss its keyframe), x264's open GOPs have recovery
# points but one IDR: one decoder
run "MPEG-4 Part 2 avi with B-frames (no pts)" 0 mp4v.avi
mk -i vfr.mkv -c copy vfr.ts
run "MPEG-TS, --start 2 --frames 60" 0 vfr.ts --start 2 --frames 60

# HEVC (B-frames, closed GOPs) in Matroska and VP9 (hidden frames) in WebM,
# where this ffmpeg has the encoders
if mk -f lavfi -i testsrc2=size=96x64:rate=25 -frames:v 150 -c:v libx265 -preset ultrafast \
    -x265-params keyint=15:min-keyint=15:bframes=2:open-gop=0:log-level=error -pix_fmt yuv420p hevc.mkv; then
    run "HEVC mkv, B-frames, --start 0.9" 1 hevc.mkv --start 0.9
else
    skip "HEVC: no libx265 encoder"
fi
if mk -f lavfi -i testsrc2=size=96x64:rate=25 -frames:v 150 -c:v libvpx-vp9 -g 15 \
    -deadline realtime -cpu-used 8 vp9.webm; then
    run "VP9 webm, every frame" 1 vp9.webm
else
    skip "VP9: no libvpx-vp9 encoder"
fi

# damaged data (bit noise in the packets): from the first frame decoded
# after an error the rest comes from one single-threaded decoder over the
# whole file, so the output is --threads 1's (libavcodec's frame threads
# conceal damaged H.264 differently from run to run: no other reference)
mk -f lavfi -i testsrc2=size=128x72:rate=25 -frames:v 300 -c:v libx264 -preset veryfast -g 25 \
    -pix_fmt yuv420p clean.mkv && mk -i clean.mkv -c copy -bsf:v noise=amount=3000 noisy.mkv ||
    not_ok "cannot make the noisy clip: $(head -n 1 "$T/ff.err")"
why=
ge $G -q --threads 1 noisy.mkv ref.mkv
[ "$RC" -eq 0 ] || add "--threads 1: exit $RC"
for n in 2 4; do
    ge $G -v -y --threads $n noisy.mkv seg.mkv
    [ "$RC" -eq 0 ] || add "--threads $n: exit $RC"
    grep -q "segments on" "$ERR" || add "--threads $n: not segmented"
    grep -q "damaged data after frame" "$ERR" || add "--threads $n: no fallback"
    cmp -s ref.mkv seg.mkv || add "--threads $n: other bytes"
done
rm -f ref.mkv seg.mkv
check "damaged H.264: segments, then one decoder: the bytes of --threads 1" "$why"

# engines that decode videos at once share the memory for frames decoded
# ahead (vsrc_host_budget): with 2 engines each file gets half of what one
# engine's gets (256 MiB at least), and the bytes stay the same
budget() { sed -n 's/.* segments on .*, at most \([0-9]*\) MiB decoded ahead$/\1/p' "$ERR" | sort -u; }
mkdir vin && cp closed.mp4 vin/a.mp4 && cp closed.mp4 vin/b.mp4
why=
ge $G -v --threads 4 closed.mp4 one.mkv
[ "$RC" -eq 0 ] || add "one engine: exit $RC"
one=$(budget)
ge $G -v --threads 8 --video-engines 2 -o vout vin
[ "$RC" -eq 0 ] || add "2 engines: exit $RC"
grep -q "^gpuedge: 2 engines" "$ERR" || add "not 2 engines"
two=$(budget)
want=$((${one:-0} / 2))
[ "$want" -lt 256 ] && want=$((${one:-0} < 256 ? ${one:-0} : 256))
[ -n "$one" ] && [ "$two" = "$want" ] || add "2 engines: '$two' MiB each, one engine '$one' (want $want)"
cmp -s one.mkv vout/a.mkv && cmp -s one.mkv vout/b.mkv || add "other bytes"
rm -rf vin vout one.mkv
check "2 engines: each decodes ahead within its share ($two of $one MiB), the same bytes" "$why"

ge $G -q --threads 4 vfr.mkv all.mkv
why=
[ "$RC" -eq 0 ] || add "exit $RC"
[ "$(nframes all.mkv)" = "$(nframes vfr.mkv)" ] || add "$(nframes all.mkv) frames, input $(nframes vfr.mkv)"
last_in=$(ffprobe -v error -select_streams v:0 -show_entries frame=pts_time -of csv=p=0 vfr.mkv |
    sed 's/,*$//' | grep . | tail -n 1)
last_out=$(ffprobe -v error -select_streams v:0 -show_entries frame=pts_time -of csv=p=0 all.mkv |
    sed 's/,*$//' | grep . | tail -n 1)
[ -n "$last_in" ] && [ "$last_in" = "$last_out" ] || add "last pts $last_out, input $last_in"
check "segmented: every frame to the last (pts $last_in)" "$why"

# a short clip, stdin, --threads 1: not segmented (one decoder, as before)
mk -f lavfi -i testsrc2=size=64x48:rate=10 -frames:v 20 -c:v libx264 -g 5 short.mp4
ge $G -v --threads 4 short.mp4 s.mkv
{ [ "$RC" -eq 0 ] && ! grep -q "segments on" "$ERR"; } && ok "20 frames: one decoder" ||
    not_ok "20 frames: exit $RC or segmented"
"$GPUEDGE" $G -v --threads 4 - s2.mkv <vfr.mkv >"$OUT" 2>"$ERR"
RC=$?
{ [ "$RC" -eq 0 ] && ! grep -q "segments on" "$ERR"; } && ok "stdin: one decoder" ||
    not_ok "stdin: exit $RC or segmented"
no_stray_files "$W" && ok "no temp or partial file" || not_ok "$WHY"
finish
