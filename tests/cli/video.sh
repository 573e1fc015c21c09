#!/bin/sh
# Video in and out (DESIGN.md §1.2, §3, §6): libav decode, the luma and RGB paths,
# .mkv / .mp4 / .y4m / image-sequence outputs, timestamps, --frames, --start,
# --rgb, --cpu-ref, --hist, batches mixing images and videos, broken inputs,
# interruptions.  Test clips are made here with ffmpeg's lavfi sources, small
# and short, so that the script stays well under 40 s even under ASan.
. "$(dirname "$0")/lib.sh"

if ! command -v ffmpeg >/dev/null 2>&1 || ! command -v ffprobe >/dev/null 2>&1; then
    skip "video: ffmpeg/ffprobe not installed (Debian package ffmpeg)"
    finish
fi

G="--backend=cpu -q"

# ---------------------------------------------------------------------------
# helpers

# mk ARGS...: ffmpeg, quiet, never reading our stdin; 0 when it worked
mk() { ffmpeg -nostdin -hide_banner -v error -y "$@" </dev/null >/dev/null 2>"$T/ff.err"; }
# frames FILE: frames in the (first) video stream, decoded and counted
frames() {
    ffprobe -v error -select_streams v:0 -count_frames -show_entries stream=nb_read_frames \
        -of default=nw=1:nk=1 "$1" 2>/dev/null
}
# pts FILE: every video frame's pts in seconds, one a line
pts() {
    ffprobe -v error -select_streams v:0 -show_entries frame=pts_time \
        -of default=nw=1:nk=1 "$1" 2>/dev/null
}
# prop FILE KEY[,KEY...]: stream properties of the first video stream, one a line
prop() {
    ffprobe -v error -select_streams v:0 -show_entries "stream=$2" \
        -of default=nw=1:nk=1 "$1" 2>/dev/null | tr '\n' ' ' | sed 's/ $//'
}
nstreams() {
    ffprobe -v error -show_entries stream=index -of csv=p=0 "$1" 2>/dev/null | wc -l | tr -d ' '
}
# same_pts A B [TOL]: the two pts lists have the same length and agree within
# TOL seconds (default 0.0006: Matroska's default unit is 1 ms)
same_pts() {
    pts "$1" >"$T/pts.a"
    pts "$2" >"$T/pts.b"
    WHY=
    if [ ! -s "$T/pts.a" ] || [ "$(nlines "$T/pts.a")" -ne "$(nlines "$T/pts.b")" ]; then
        WHY="$(nlines "$T/pts.a") frames in $1, $(nlines "$T/pts.b") in $2"
        return 1
    fi
    WHY=$(paste -d ' ' "$T/pts.a" "$T/pts.b" | awk -v tol="${3:-0.0006}" '
        { d = $1 - $2; if (d < 0) d = -d
          if ($1 == "N/A" || $2 == "N/A" || d > tol) { print "frame " NR - 1 ": " $1 " vs " $2; exit } }')
    [ -z "$WHY" ]
}
# check NAME WHY: ok when WHY is empty, else not_ok with stderr shown
check() {
    if [ -z "$2" ]; then ok "$1"; else not_ok "$1: $2"; show_err; fi
}
add() { why="${why:+$why; }$*"; }
have_pixels() { have_python && python3 "$ROOT/tests/cli/pixels.py" "$@" >/dev/null 2>&1; }
pix() { python3 "$ROOT/tests/cli/pixels.py" "$1" 2>/dev/null; }

# ---------------------------------------------------------------------------
# the clips

SRC=testsrc2=size=160x120:rate=25:duration=1
# H.264 with B-frames (reordered pts) plus an AAC track that must be dropped
mk -f lavfi -i "$SRC" -f lavfi -i sine=duration=1 -c:v libx264 -preset superfast \
    -pix_fmt yuv420p -c:a aac -shortest a.mp4 ||
    { not_ok "cannot make test clips with ffmpeg: $(head -n 2 "$T/ff.err")"; finish; }
mk -f lavfi -i testsrc2=size=128x96:rate=10:duration=1 -c:v ffv1 -pix_fmt yuv420p b.mkv
# grey 8-bit, tagged full range: g = Y exactly
mk -f lavfi -i testsrc2=size=160x120:rate=10:duration=1 -c:v ffv1 -pix_fmt gray -color_range pc grey.mkv
# 10-bit, limited range
mk -f lavfi -i testsrc2=size=160x120:rate=10:duration=1 -c:v ffv1 -pix_fmt yuv420p10le ten.mkv
# yuvj420p (full range) through MJPEG
mk -f lavfi -i testsrc2=size=160x120:rate=10:duration=1 -c:v mjpeg -q:v 3 -pix_fmt yuvj420p j.avi
# odd size (testsrc2 itself rounds sizes: scale afterwards)
mk -f lavfi -i testsrc2=size=160x120:rate=10:duration=1 -vf scale=161:121 -c:v ffv1 -pix_fmt yuv420p odd.mkv
# variable frame rate: 10 fps then 30 fps, in a 1/90000 time base
mk -f lavfi -i testsrc2=size=160x120:rate=10:duration=0.5 -f lavfi -i testsrc2=size=160x120:rate=30:duration=0.5 \
    -filter_complex '[0][1]concat=n=2:v=1[v]' -map '[v]' -c:v libx264 -preset ultrafast \
    -vsync vfr -video_track_timescale 90000 vfr.mp4
# RGB-family source (true rgb24)
mk -f lavfi -i testsrc2=size=160x120:rate=10:duration=1 -c:v qtrle -pix_fmt rgb24 rgb.mov
cp "$SAMPLES/photo.png" img.png
for f in b.mkv grey.mkv ten.mkv j.avi odd.mkv vfr.mp4 rgb.mov; do
    [ -s "$f" ] || not_ok "ffmpeg could not make $f (encoder missing?)"
done

[ "$(prop grey.mkv pix_fmt,color_range)" = "gray pc" ] || not_ok "grey.mkv is not gray/pc: $(prop grey.mkv pix_fmt,color_range)"
[ "$(prop j.avi pix_fmt)" = yuvj420p ] || not_ok "j.avi is not yuvj420p: $(prop j.avi pix_fmt)"
[ "$(prop ten.mkv pix_fmt)" = yuv420p10le ] || not_ok "ten.mkv is not yuv420p10le"
[ "$(prop odd.mkv width,height)" = "161 121" ] || not_ok "odd.mkv is not 161x121: $(prop odd.mkv width,height)"
[ "$(prop rgb.mov pix_fmt)" = rgb24 ] || not_ok "rgb.mov is not rgb24: $(prop rgb.mov pix_fmt)"
# the VFR clip has (at least) two different frame intervals
nint=$(pts vfr.mp4 | awk 'NR > 1 { printf "%.3f\n", $1 - p } { p = $1 }' | sort -u | wc -l)
[ "$nint" -ge 2 ] || not_ok "vfr.mp4 is not VFR ($nint frame interval)"
NA=$(frames a.mp4)

# ---------------------------------------------------------------------------
# mp4 -> mkv: every frame, every pts (the last one too), grey FFVHuff, no audio

ge $G a.mp4 a.mkv
why=
[ "$RC" -eq 0 ] || add "exit $RC"
[ -s "$ERR" ] && add "stderr not empty"
[ "$(frames a.mkv)" = "$NA" ] || add "$(frames a.mkv) frames, input has $NA"
same_pts a.mp4 a.mkv || add "pts: $WHY"
[ "$(pts a.mkv | tail -n 1)" = "$(pts a.mp4 | tail -n 1)" ] || add "last pts $(pts a.mkv | tail -n 1)"
[ "$(prop a.mkv codec_name,pix_fmt)" = "ffvhuff gray" ] || add "stream is $(prop a.mkv codec_name,pix_fmt)"
[ "$(nstreams a.mkv)" = 1 ] || add "$(nstreams a.mkv) streams (audio kept?)"
check "mp4 -> mkv: exit 0, $NA frames, every pts kept, gray FFVHuff (the default), audio dropped" "$why"

# the same input gives the same bytes (bit-exact muxing and encoding)
ge $G a.mp4 a2.mkv
if [ "$RC" -eq 0 ] && cmp -s a.mkv a2.mkv; then
    ok "mkv output is reproducible: a second run writes the same bytes"
else
    not_ok "mkv output differs between two runs (exit $RC)"
fi
ge $G a.mp4 b1.mp4 && ge $G a.mp4 b2.mp4
if [ "$RC" -eq 0 ] && cmp -s b1.mp4 b2.mp4; then
    ok "mp4 output is reproducible: a second run writes the same bytes"
else
    not_ok "mp4 output differs between two runs (exit $RC)"
fi
rm -f a2.mkv b1.mp4 b2.mp4

# frame-parallel encoders: from 2 threads on, several encoders code successive
# frames at once; nothing in the bytes depends on --threads, so the bytes
# must be those of --threads 1 (one encoder); and the frames are the exact
# edge maps (the y4m, written without an encoder, holds them too)
rawsum() { ffmpeg -nostdin -v error -i "$1" -f rawvideo -pix_fmt gray - 2>/dev/null | cksum; }
ge $G --threads 1 a.mp4 t1.mkv
why=
[ "$RC" -eq 0 ] || add "--threads 1: exit $RC"
for n in 2 3 4; do
    ge $G --threads $n a.mp4 t$n.mkv
    { [ "$RC" -eq 0 ] && cmp -s t1.mkv t$n.mkv; } || add "--threads $n: exit $RC or other bytes"
done
ge $G --threads 3 a.mp4 t3.y4m
s_mkv=$(rawsum t3.mkv)
s_y4m=$(rawsum t3.y4m)
{ [ "$RC" -eq 0 ] && [ "${s_mkv#* }" = "$((160 * 120 * NA))" ] && [ "$s_mkv" = "$s_y4m" ]; } ||
    add "mkv frames ($s_mkv) differ from the y4m's ($s_y4m)"
check "mkv --threads 2, 3, 4 (parallel encoders) == --threads 1, byte for byte; frames == the y4m's" "$why"
rm -f t1.mkv t2.mkv t3.mkv t4.mkv t3.y4m

ge $G vfr.mp4 vfr.mkv
why=
[ "$RC" -eq 0 ] || add "exit $RC"
same_pts vfr.mp4 vfr.mkv || add "pts: $WHY"
check "VFR -> mkv: every frame's pts kept (last included)" "$why"
ge $G vfr.mp4 vfr_out.mp4
why=
[ "$RC" -eq 0 ] || add "exit $RC"
same_pts vfr.mp4 vfr_out.mp4 0.00002 || add "pts: $WHY"
check "VFR -> mp4: every frame's pts kept (last included)" "$why"

# no pts at all (raw H.264): frames 1/fps apart, not squeezed into the first
# millisecond of a 1/1200000 time base
mk -i a.mp4 -map 0:v -c:v copy -bsf:v h264_mp4toannexb raw.h264
ge $G raw.h264 raw.mkv
why=
[ "$RC" -eq 0 ] || add "exit $RC"
same_pts a.mp4 raw.mkv || add "pts: $WHY"
check "raw H.264 (no pts) -> mkv: pts 1/25 s apart" "$why"

# ---------------------------------------------------------------------------
# .mp4: H.264, full range, odd sizes padded

ge $G odd.mkv odd.mp4
why=
[ "$RC" -eq 0 ] || add "exit $RC"
[ "$(prop odd.mp4 codec_name,width,height,color_range)" = "h264 162 122 pc" ] ||
    add "stream is $(prop odd.mp4 codec_name,width,height,color_range)"
[ "$(frames odd.mp4)" = "$(frames odd.mkv)" ] || add "$(frames odd.mp4) frames"
check "161x121 -> mp4: H.264 162x122, color_range pc, every frame" "$why"

# ---------------------------------------------------------------------------
# .y4m: to a file, and to stdout

ge $G a.mp4 a.y4m
why=
[ "$RC" -eq 0 ] || add "exit $RC"
[ "$(frames a.y4m)" = "$NA" ] || add "$(frames a.y4m) frames"
[ "$(prop a.y4m pix_fmt,r_frame_rate)" = "gray 25/1" ] || add "stream is $(prop a.y4m pix_fmt,r_frame_rate)"
check "mp4 -> y4m: every frame, gray, 25/1 kept" "$why"
n=$({ "$GPUEDGE" $G a.mp4 - 2>"$ERR"; echo $? >"$T/rc"; } |
    ffprobe -v error -count_frames -show_entries stream=nb_read_frames -of default=nw=1:nk=1 - 2>/dev/null)
why=
[ "$(cat "$T/rc")" = 0 ] || add "exit $(cat "$T/rc")"
[ "$n" = "$NA" ] || add "ffprobe read ${n:-no} frames"
check "mp4 -> - (y4m on stdout, piped into ffprobe)" "$why"
"$GPUEDGE" $G a.mp4 - 2>/dev/null >stdout.y4m
cmp -s stdout.y4m a.y4m && ok "y4m on stdout == y4m file, byte for byte" ||
    not_ok "y4m on stdout differs from the y4m file"
rm -f stdout.y4m

# a grey .y4m frame goes out as it is (venc.c put_y4m); one of another size
# (padded or cropped) through the muxer: both kinds in one file, in order.
# 20 frames at 160x120 then 20 at 128x96 (MPEG-TS, joined): the first 20
# are the 160x120 clip's own .y4m, and the file is 40 whole frames.
why=
if mk -f lavfi -i testsrc2=size=160x120:rate=25 -frames:v 20 -c:v libx264 -pix_fmt yuv420p big.ts &&
    mk -f lavfi -i testsrc2=size=128x96:rate=25 -frames:v 20 -c:v libx264 -pix_fmt yuv420p small.ts; then
    cat big.ts small.ts >sizes.ts
    ge $G big.ts big.y4m
    ge --backend=cpu sizes.ts sizes.y4m
    grep -q "frame size changed from 160x120 to 128x96" "$ERR" || add "no size note"
    hb=$(wc -c <big.y4m)
    hd=$(head -n 1 big.y4m | wc -c)
    [ "$(wc -c <sizes.y4m)" = "$((hd + 40 * (6 + 160 * 120)))" ] || add "$(wc -c <sizes.y4m) bytes"
    head -c "$hb" sizes.y4m | cmp -s - big.y4m || add "the first 20 frames differ from the 160x120 clip's"
    [ "$(frames sizes.y4m)" = 40 ] || add "$(frames sizes.y4m) frames"
else
    add "cannot make the clips: $(head -n 1 "$T/ff.err")"
fi
check "y4m with a size change: 40 whole frames, the first 20 the 160x120 clip's bytes" "$why"
rm -f big.ts small.ts sizes.ts big.y4m sizes.y4m

# ---------------------------------------------------------------------------
# image sequences, --frames, --start

count() { ls "$1" 2>/dev/null | wc -l | tr -d ' '; }
mkdir seq
ge $G a.mp4 seq/e_%05d.png
why=
[ "$RC" -eq 0 ] || add "exit $RC"
[ "$(count seq)" = "$NA" ] || add "$(count seq) files"
[ -s seq/e_00001.png ] && [ -s "seq/e_$(printf %05d "$NA").png" ] || add "not numbered 1..$NA"
check "mp4 -> seq/e_%05d.png: $NA numbered files" "$why"
rm -rf seq

mkdir seq
ge $G --frames 7 a.mp4 seq/f_%03d.png
[ "$RC" -eq 0 ] && [ "$(count seq)" = 7 ] && [ -s seq/f_007.png ] && ok "--frames 7: 7 files" ||
    { not_ok "--frames 7: exit $RC, $(count seq) files"; show_err; }
rm -rf seq
ge $G --frames 5 a.mp4 f5.mkv
[ "$RC" -eq 0 ] && [ "$(frames f5.mkv)" = 5 ] && ok "--frames 5 -> mkv: 5 frames" ||
    { not_ok "--frames 5 -> mkv: exit $RC, $(frames f5.mkv) frames"; show_err; }

# --start 0.5: the frames whose pts is at or after 0.5 s
want=$(pts a.mp4 | awk '$1 >= 0.5 - 1e-9' | wc -l | tr -d ' ')
mkdir seq
ge $G --start 0.5 a.mp4 seq/s_%03d.png
[ "$RC" -eq 0 ] && [ "$(count seq)" = "$want" ] && ok "--start 0.5: $want files" ||
    { not_ok "--start 0.5: exit $RC, $(count seq) files, expected $want"; show_err; }
rm -rf seq
ge $G --start 0.5 --frames 3 a.mp4 s.mkv
first=$(pts s.mkv | head -n 1)
[ "$RC" -eq 0 ] && [ "$(frames s.mkv)" = 3 ] &&
    awk -v p="$first" 'BEGIN { exit !(p >= 0.5 && p < 0.56) }' &&
    ok "--start 0.5 --frames 3 -> mkv: 3 frames from pts $first" ||
    { not_ok "--start 0.5 --frames 3: exit $RC, $(frames s.mkv) frames, first pts $first"; show_err; }
fails "--start past the end" 1 'a\.mp4: no video frames decoded' $G --start 5 a.mp4 late.mkv

# ---------------------------------------------------------------------------
# the luma path, --rgb, 10-bit, full range; video edge maps == image edge maps

ge $G --rgb a.mp4 rgbpath.mkv
[ "$RC" -eq 0 ] && [ "$(frames rgbpath.mkv)" = "$NA" ] && ok "--rgb on a YUV source" ||
    { not_ok "--rgb on a YUV source: exit $RC"; show_err; }
ge $G rgb.mov rgb.mkv
[ "$RC" -eq 0 ] && [ "$(frames rgb.mkv)" = "$(frames rgb.mov)" ] && ok "rgb24 source (RGB path)" ||
    { not_ok "rgb24 source: exit $RC"; show_err; }
ge $G --cpu-ref ten.mkv ten_out.mkv
[ "$RC" -eq 0 ] && [ "$(frames ten_out.mkv)" = "$(frames ten.mkv)" ] &&
    grep -q ' 0 with mismatches' "$ERR" && ok "10-bit yuv420p10le source, --cpu-ref clean" ||
    { not_ok "10-bit source: exit $RC"; show_err; }

# SAME NAME PNG SEQDIR N: gpuedge's edge map of the PNG equals frame N of the
# sequence in SEQDIR, pixel for pixel (decoded by pixels.py, not stb)
same_edges() {
    "$GPUEDGE" $G "$2" "$2.edge.png" 2>"$ERR"
    a=$(pix "$2.edge.png")
    b=$(pix "$(printf '%s/e_%03d.png' "$3" "$4")")
    if [ -n "$a" ] && [ "$a" = "$b" ]; then
        ok "$1"
    else
        not_ok "$1: '$a' vs '$b'"
        show_err
    fi
}
if have_python; then
    # grey full range: g = Y * 255/255 = Y
    mk -i grey.mkv -vf 'select=eq(n\,4)' -frames:v 1 -pix_fmt gray g5.png
    mkdir gseq && "$GPUEDGE" $G grey.mkv gseq/e_%03d.png 2>"$ERR"
    same_edges "gray8 full-range FFV1: frame 5 == edge map of the frame as PNG" g5.png gseq 5
    # yuvj420p: the Y plane, full range
    mk -i j.avi -vf 'select=eq(n\,4),extractplanes=y' -frames:v 1 j5.png
    mkdir jseq && "$GPUEDGE" $G j.avi jseq/e_%03d.png 2>"$ERR"
    same_edges "yuvj420p (full range): frame 5 == edge map of its Y plane as PNG" j5.png jseq 5
    # rgb24 with --rgb: swscale rgb24 -> rgb24 is the identity
    mk -i rgb.mov -vf 'select=eq(n\,7)' -frames:v 1 -pix_fmt rgb24 r8.png
    mkdir rseq && "$GPUEDGE" $G --rgb rgb.mov rseq/e_%03d.png 2>"$ERR"
    same_edges "rgb24 --rgb: frame 8 == edge map of the frame as PNG" r8.png rseq 8
    # the same with the sequence in PGM and the frames through an mkv
    ffmpeg -nostdin -v error -i a.mkv -f rawvideo -pix_fmt gray - 2>/dev/null | cksum >"$T/mkv.sum"
    mkdir aseq && "$GPUEDGE" $G a.mp4 aseq/e_%03d.pgm 2>"$ERR"
    for f in aseq/*.pgm; do tail -c 19200 "$f"; done | cksum >"$T/seq.sum"
    cmp -s "$T/mkv.sum" "$T/seq.sum" && ok "mkv frames == the sequence's PGM frames (FFV1 lossless)" ||
        not_ok "mkv frames differ from the PGM sequence"
    rm -rf gseq jseq rseq aseq
else
    skip "video edge maps == image edge maps: no python3"
fi

# rotation metadata is ignored: the edge map of the stored picture
mk -i a.mp4 -c copy -metadata:s:v rotate=90 rot.mp4
ge $G rot.mp4 rot.mkv
[ "$RC" -eq 0 ] && [ "$(prop rot.mkv width,height)" = "160 120" ] &&
    ok "rotation metadata ignored: 160x120 stays 160x120" ||
    { not_ok "rotated input: exit $RC, $(prop rot.mkv width,height)"; show_err; }

# stdin: a video stream when the output is a video
cat grey.mkv | "$GPUEDGE" $G - stdin.mkv >"$OUT" 2>"$ERR"
RC=$?
[ "$RC" -eq 0 ] && [ "$(frames stdin.mkv)" = "$(frames grey.mkv)" ] && ok "- (stdin) -> mkv" ||
    { not_ok "stdin -> mkv: exit $RC"; show_err; }

# ---------------------------------------------------------------------------
# --cpu-ref=N, --hist

ge --backend=cpu --cpu-ref=5 a.mp4 c.mkv
n=$(( (NA + 4) / 5 ))
[ "$RC" -eq 0 ] && grep -q "^cpu-ref: $n frames checked, 0 with mismatches" "$ERR" &&
    ok "--cpu-ref=5: $n of $NA frames checked, 0 mismatches, exit 0" ||
    { not_ok "--cpu-ref=5: exit $RC"; show_err; }

ge $G --hist h.csv a.mp4 hh.mkv
why=
[ "$RC" -eq 0 ] || add "exit $RC"
[ "$(head -n 1 h.csv | cut -d, -f1-4)" = "file,frame,pts,b0" ] || add "header $(head -c 40 h.csv)"
[ "$(head -n 1 h.csv | awk -F, '{ print NF }')" = 259 ] || add "header is not 259 columns"
[ "$(nlines h.csv)" = $((NA + 1)) ] || add "$(nlines h.csv) lines, expected $((NA + 1))"
bad=$(awk -F, 'NR > 1 { s = 0; for (i = 4; i <= NF; i++) s += $i
                        if (NF != 259 || s != 160 * 120 || $1 != "\"a.mp4\"" || $2 != NR - 2) { print NR; exit } }' h.csv)
[ -z "$bad" ] || add "line $bad: wrong columns or bins not summing to 19200"
tail -n +2 h.csv | cut -d, -f3 >"$T/hist.pts"
pts a.mp4 >"$T/src.pts"
cmp -s "$T/hist.pts" "$T/src.pts" || add "pts column differs from the input's pts"
check "--hist: one row per frame (file, frame, pts, 256 bins summing to W*H)" "$why"

# ---------------------------------------------------------------------------
# progress: on a terminal (or --progress) only

ge --backend=cpu a.mp4 p.mkv
[ "$RC" -eq 0 ] && [ ! -s "$ERR" ] && ok "no progress line when stderr is not a terminal" ||
    { not_ok "progress without a terminal: exit $RC"; show_err; }
ge --backend=cpu --progress -y a.mp4 p.mkv
[ "$RC" -eq 0 ] && grep -q 'a\.mp4: frame [0-9]' "$ERR" && ok "--progress: a progress line" ||
    { not_ok "--progress: exit $RC, no progress line"; show_err; }
# script(1) (util-linux) gives gpuedge a terminal, where there are ptys
if command -v script >/dev/null 2>&1 && script -qec true /dev/null >/dev/null 2>&1; then
    script -qec "'$GPUEDGE' --backend=cpu -y a.mp4 p.mkv" /dev/null >"$T/tty" 2>&1
    grep -q 'a\.mp4: frame [0-9]' "$T/tty" && ok "progress line on a terminal" ||
        not_ok "no progress line on a terminal: $(head -c 200 "$T/tty")"
    script -qec "'$GPUEDGE' --backend=cpu -q -y a.mp4 p.mkv" /dev/null >"$T/tty" 2>&1
    [ ! -s "$T/tty" ] && ok "-q: no progress line on a terminal" ||
        not_ok "-q on a terminal printed: $(head -c 200 "$T/tty")"
else
    skip "progress on a terminal: no script(1) or no pty"
fi
rm -f p.mkv

# ---------------------------------------------------------------------------
# batches mixing videos and images

names() { (cd "$1" && ls -A | LC_ALL=C sort | tr '\n' ' '); }
ge --backend=cpu -o out --format mkv a.mp4 b.mkv img.png
why=
[ "$RC" -eq 0 ] || add "exit $RC"
[ "$(names out)" = "a.mkv b.mkv img.png " ] || add "out holds: $(names out)"
[ "$(frames out/a.mkv)" = "$NA" ] || add "out/a.mkv has $(frames out/a.mkv) frames"
[ "$(grep -c ': ok (' "$ERR")" = 3 ] || add "not one status line per file"
grep -q '3 files: 3 ok, 0 failed, 0 skipped' "$ERR" || add "no summary line"
check "batch --format mkv: 2 videos + 1 image -> a.mkv b.mkv img.png, status lines, summary" "$why"

before=$(listing out)
ge --backend=cpu -o out --format mkv --skip-existing a.mp4 b.mkv img.png
why=
[ "$RC" -eq 0 ] || add "exit $RC"
[ "$(listing out)" = "$before" ] || add "out changed"
grep -q '3 files: 0 ok, 0 failed, 3 skipped' "$ERR" || add "no '3 skipped' summary"
check "batch re-run with --skip-existing: all skipped, nothing touched, exit 0" "$why"
rm -rf out

ge $G -o out --format pgm a.mp4 img.png
[ "$RC" -eq 0 ] && [ "$(names out)" = "a.mkv img.pgm " ] &&
    ok "--format pgm applies to images only: videos keep mkv" ||
    { not_ok "--format pgm with a video: exit $RC, out holds: $(names out)"; show_err; }
rm -rf out
ge $G -o out --format y4m a.mp4 img.png
[ "$RC" -eq 0 ] && [ "$(names out)" = "a.y4m img.png " ] &&
    ok "--format y4m applies to videos only: images keep png" ||
    { not_ok "--format y4m with an image: exit $RC, out holds: $(names out)"; show_err; }
rm -rf out

mkdir d
cp grey.mkv d/a.mkv
fails "batch collision a.mp4 + d/a.mkv -> out/a.mkv" 2 'out/a\.mkv: several inputs' $G -o out a.mp4 d/a.mkv
rm -rf d

# --from-file with videos (shards: the same list split two ways covers it all)
printf 'a.mp4\nimg.png\nb.mkv\n' >list
sed -n '1~2p' list | "$GPUEDGE" $G -o out --from-file - >"$OUT" 2>"$ERR" &&
    sed -n '2~2p' list | "$GPUEDGE" $G -o out --from-file - >"$OUT" 2>"$ERR"
RC=$?
[ "$RC" -eq 0 ] && [ "$(names out)" = "a.mkv b.mkv img.png " ] && ok "--from-file shards of a mixed list" ||
    { not_ok "--from-file shards: exit $RC, out holds: $(names out 2>&1)"; show_err; }
rm -rf out list

# runs started together into one new DIR (xargs -P, GNU parallel, a Slurm
# array): none fails for the directory another has just created
printf '%s\n' a.mp4 b.mkv img.png grey.mkv j.avi odd.mkv |
    xargs -P 6 -n 1 "$GPUEDGE" $G -o par --skip-existing >"$OUT" 2>"$ERR"
RC=$?
[ "$RC" -eq 0 ] && [ "$(names par)" = "a.mkv b.mkv grey.mkv img.png j.mkv odd.mkv " ] &&
    ok "6 runs at once into one new -o DIR (xargs -P 6)" ||
    { not_ok "parallel runs into one DIR: xargs exit $RC, par holds: $(names par 2>&1)"; show_err; }
rm -rf par

# ---------------------------------------------------------------------------
# broken videos: exit 1, one line, nothing left; a batch goes on

head -c 20000 a.mp4 >trunc.mp4
head -c 30000 /dev/urandom >rand.mp4
fails "truncated mp4 (head -c)" 1 'trunc\.mp4: .*(cannot|no video)' $G trunc.mp4 t.mkv
fails "random bytes named .mp4" 1 'rand\.mp4: .*(cannot|no video)' $G rand.mp4 r.mkv
fails "random bytes named .mp4 -> mp4" 1 'rand\.mp4: .*(cannot|no video)' $G rand.mp4 r.mp4

ge $G -o out a.mp4 trunc.mp4 img.png rand.mp4 b.mkv
why=
[ "$RC" -eq 1 ] || add "exit $RC, expected 1"
[ "$(names out)" = "a.mkv b.mkv img.png " ] || add "out holds: $(names out)"
[ "$(grep -c '^gpuedge: ' "$ERR")" = 2 ] || add "$(grep -c '^gpuedge: ' "$ERR") error lines, expected 2"
grep -q 'trunc\.mp4' "$ERR" && grep -q 'rand\.mp4' "$ERR" || add "errors do not name the files"
no_stray_files "$W" || add "$WHY"
check "batch with 2 broken videos: the 3 others written, exit 1" "$why"
rm -rf out

no_stray_files "$W" && ok "no temp or partial file anywhere" || not_ok "$WHY"

# ---------------------------------------------------------------------------
# interruptions during a long video: 130 / 143, no final output, no temp;
# --keep-partial keeps NAME.partial.mkv

if [ ! -r /proc/self/status ]; then
    skip "video interruptions: no /proc"
    finish
fi
mk -f lavfi -i testsrc2=size=1280x720:rate=25:duration=12 -c:v libx264 -preset ultrafast \
    -pix_fmt yuv420p long.mp4 || { not_ok "cannot make long.mp4"; finish; }

temp_exists() { # a named temp file, or an unnamed one (O_TMPFILE) open
    [ -n "$(find so -maxdepth 1 -name '.l.mkv.*.tmp' -print)" ] ||
        ls -l "/proc/$BGPID/fd" 2>/dev/null | grep -q "/so/#[0-9]* (deleted)\$"
}
# interrupt NAME SIGNAL RC [partial]
interrupt() {
    rm -rf so && mkdir so
    env --default-signal=INT "$GPUEDGE" --backend=cpu --threads 1 --sigma 8 $4 long.mp4 so/l.mkv \
        >"$OUT" 2>"$ERR" &
    BGPID=$!
    n=1200
    while ! temp_exists && our_child_alive "$BGPID" && [ "$n" -gt 0 ]; do
        sleep 0.05
        n=$((n - 1))
    done
    if ! temp_exists || ! our_child_alive "$BGPID"; then
        not_ok "$1: no temp file while gpuedge ran"
        kill -KILL "$BGPID" 2>/dev/null
        wait "$BGPID"
        BGPID=
        show_err
        return
    fi
    sleep 0.3
    kill "-$2" "$BGPID"
    n=1200
    while our_child_alive "$BGPID" && [ "$n" -gt 0 ]; do
        sleep 0.05
        n=$((n - 1))
    done
    if our_child_alive "$BGPID"; then
        kill -KILL "$BGPID"
        wait "$BGPID"
        BGPID=
        not_ok "$1: gpuedge did not stop within 60 s of SIG$2 (killed)"
        return
    fi
    wait "$BGPID"
    RC=$?
    BGPID=
    why=
    [ "$RC" -eq "$3" ] || add "exit $RC, expected $3"
    [ -e so/l.mkv ] && add "so/l.mkv exists"
    grep -q "^gpuedge: interrupted by SIG$2\$" "$ERR" || add "no 'interrupted by SIG$2' line"
    if [ -n "$4" ]; then
        [ -f so/l.partial.mkv ] || add "no so/l.partial.mkv"
        [ -n "$(find so -name '.*.tmp')" ] && add "temp file left"
    else
        no_stray_files so || add "$WHY"
    fi
    check "$1 (exit $3, no so/l.mkv${4:+, l.partial.mkv kept})" "$why"
}
interrupt "SIGINT during a long video" INT 130 ""
interrupt "SIGTERM during a long video" TERM 143 ""
interrupt "SIGINT during a long video, --keep-partial" INT 130 --keep-partial
rm -rf so

finish
