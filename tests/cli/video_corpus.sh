#!/bin/sh
# A video corpus through the CPU backend (DESIGN.md §1.2, §3, §6): one small clip
# per codec / container / pixel format that users bring (H.264 with and
# without faststart, HEVC 10-bit, VP9, AV1, MPEG-4 part 2 with B-frames in
# AVI, FFV1 4:4:4 and grey, raw RGB in NUT, Y4M, full-range H.264, VFR with
# B-frames), each converted with --cpu-ref: every frame, every timestamp,
# no mismatch, no notice.  Then damaged inputs (truncated, bit noise,
# overwritten bytes, empty, garbage): never a crash, one or two clear lines,
# no temp, no final output when the file fails.  Then a batch of 50 files
# with one bad one, and its --skip-existing re-runs.
# video.sh covers the rest (mp4 with audio, raw H.264, --start/--frames,
# --hist, progress, signals); this script does not repeat it.
# The clips are 0.6 s of 160x120 or 321x241 with the encoders' fastest
# settings: the script takes about 17 s on 2 cores, about the same under
# ASan (ffmpeg and ffprobe's start-up dominate: one probe pass per file).
. "$(dirname "$0")/lib.sh"

if ! command -v ffmpeg >/dev/null 2>&1 || ! command -v ffprobe >/dev/null 2>&1; then
    skip "video corpus: ffmpeg/ffprobe not installed (Debian package ffmpeg)"
    finish
fi

G=--backend=cpu

# ---------------------------------------------------------------------------
# helpers (ffprobe starts in ~80 ms: one pass per file gives everything)

# mk ARGS...: ffmpeg, quiet, never reading our stdin; 0 when it worked
mk() { ffmpeg -nostdin -hide_banner -v error -y "$@" </dev/null >/dev/null 2>"$T/ff.err"; }
ffmpeg -hide_banner -encoders </dev/null >"$T/encoders" 2>/dev/null
have_enc() { grep -q "^ V[^ ]* $1 " "$T/encoders"; }
# probe FILE TAG [FFPROBE-OPTS]: one ffprobe pass over FILE's first video
# stream into $T/TAG: its properties and every frame decoded, with its
# best-effort timestamp (the pts where the container has them; AVI with
# B-frames lacks some, and then it is what ffmpeg itself uses)
probe() {
    p_file=$1 p_tag=$2
    shift 2
    ffprobe -v error "$@" -select_streams v:0 -count_frames -show_entries \
        stream=codec_name,width,height,pix_fmt,color_range,nb_read_frames:frame=best_effort_timestamp_time \
        -of default=nw=1 "$p_file" >"$T/$p_tag" 2>/dev/null
}
# pv TAG KEY: a property from the last probe into TAG
pv() { sed -n "s/^$2=//p" "$T/$1" | head -n 1; }
# desc TAG: "codec pix_fmt WxH"
desc() { echo "$(pv "$1" codec_name) $(pv "$1" pix_fmt) $(pv "$1" width)x$(pv "$1" height)"; }
# nframes TAG: frames decoded (0 when none could be)
nframes() { case $(pv "$1" nb_read_frames) in '' | *[!0-9]*) echo 0 ;; *) pv "$1" nb_read_frames ;; esac; }
# same_ts A B TOL: probes A and B have the same number of frames and every
# timestamp (the last one included) within TOL seconds
same_ts() {
    sed -n 's/^best_effort_timestamp_time=//p' "$T/$1" >"$T/ts.a"
    sed -n 's/^best_effort_timestamp_time=//p' "$T/$2" >"$T/ts.b"
    WHY=
    if [ ! -s "$T/ts.a" ] || [ "$(nlines "$T/ts.a")" -ne "$(nlines "$T/ts.b")" ]; then
        WHY="$(nlines "$T/ts.a") timestamps vs $(nlines "$T/ts.b")"
        return 1
    fi
    WHY=$(paste -d ' ' "$T/ts.a" "$T/ts.b" | awk -v tol="$3" '
        { d = $1 - $2; if (d < 0) d = -d
          if ($1 == "N/A" || $2 == "N/A" || d > tol) { print "frame " NR - 1 ": " $1 " vs " $2; exit } }')
    [ -z "$WHY" ]
}
has_na() { grep -q '^best_effort_timestamp_time=N/A' "$T/$1"; }
# packets FILE: packets of the first video stream (FFV1 / y4m: one a frame)
packets() {
    ffprobe -v error -select_streams v:0 -count_packets -show_entries stream=nb_read_packets \
        -of default=nw=1:nk=1 "$1" 2>/dev/null
}
# check NAME WHY: ok when WHY is empty, else not_ok with stderr shown
check() {
    if [ -z "$2" ]; then ok "$1"; else not_ok "$1: $2"; show_err; fi
}
add() { why="${why:+$why; }$*"; }
# offset FILE WORD: byte offset of the first WORD in FILE (GNU grep -abo)
offset() { grep -abo -m 1 "$2" "$1" 2>/dev/null | head -n 1 | cut -d: -f1; }
# Deterministic "random" bytes: compressed PNG data from the samples.
junk() { dd if="$SAMPLES/photo.png" bs=1024 skip=2 count="$1" 2>/dev/null; }
# overwrite FILE AT KB: KB kilobytes of junk over FILE from byte AT
overwrite() { junk "$3" | dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null; }
# stderr lines that are not the --cpu-ref report
other_lines() { grep -v -e '^cpu-ref: ' -e '^  [a-z-]* *[0-9]* mismatching' "$ERR"; }

# ---------------------------------------------------------------------------
# the corpus: 15 frames each (0.6 s at 25 fps)

S=testsrc2=size=160x120:rate=25:duration=0.6
MANDEL="-f lavfi -i mandelbrot=size=160x120:rate=25 -t 0.6"
ODD="-vf scale=321:241"
CORPUS=
: >"$T/expect"
# clip NAME "CODEC PIX_FMT WxH" ENCODER ARGS...: make NAME (ffmpeg ARGS...
# NAME) into the corpus, expected to be that; a skip line when this ffmpeg
# lacks ENCODER
clip() {
    name=$1 what=$2 enc=$3
    shift 3
    if ! have_enc "$enc"; then
        skip "$name: this ffmpeg has no $enc encoder"
        return 1
    fi
    if ! mk "$@" "$name" || [ ! -s "$name" ]; then
        not_ok "$name: ffmpeg could not make it: $(head -n 2 "$T/ff.err" | tr '\n' ' ')"
        return 1
    fi
    CORPUS="$CORPUS $name"
    echo "$name $what" >>"$T/expect"
}

X264="-c:v libx264 -preset ultrafast -pix_fmt yuv420p"
clip h264.mp4 "h264 yuv420p 160x120" libx264 -f lavfi -i $S $X264 &&
    { [ "$(offset h264.mp4 mdat)" -lt "$(offset h264.mp4 moov)" ] ||
        not_ok "h264.mp4: moov is not after mdat"; }
clip h264_faststart.mp4 "h264 yuv420p 160x120" libx264 -f lavfi -i $S $X264 -movflags +faststart &&
    { [ "$(offset h264_faststart.mp4 moov)" -lt "$(offset h264_faststart.mp4 mdat)" ] ||
        not_ok "h264_faststart.mp4: moov is not before mdat"; }
clip hevc10.mp4 "hevc yuv420p10le 160x120" libx265 -f lavfi -i $S -c:v libx265 -preset ultrafast \
    -pix_fmt yuv420p10le -x265-params log-level=error -tag:v hvc1
clip vp9.webm "vp9 yuv420p 321x241" libvpx-vp9 -f lavfi -i $S $ODD -pix_fmt yuv420p \
    -c:v libvpx-vp9 -deadline realtime -cpu-used 8
clip av1.mkv "av1 yuv420p 321x241" libaom-av1 $MANDEL $ODD -pix_fmt yuv420p \
    -c:v libaom-av1 -cpu-used 8 -row-mt 1
# B-frames in AVI: packed, some frames without a pts
clip mpeg4.avi "mpeg4 yuv420p 160x120" mpeg4 -f lavfi -i $S -c:v mpeg4 -q:v 5 -bf 2
clip ffv1_444.mkv "ffv1 yuv444p 321x241" ffv1 $MANDEL $ODD -c:v ffv1 -pix_fmt yuv444p
clip ffv1_gray.mkv "ffv1 gray 321x241" ffv1 -f lavfi -i $S $ODD -c:v ffv1 -pix_fmt gray
clip rgb24.nut "rawvideo rgb24 321x241" rawvideo -f lavfi -i $S $ODD -c:v rawvideo -pix_fmt rgb24
clip odd420.y4m "rawvideo yuv420p 321x241" wrapped_avframe -f lavfi -i $S $ODD -pix_fmt yuv420p
# full range H.264 (decoded as yuvj420p)
clip full.mp4 "h264 yuvj420p 160x120" libx264 -f lavfi -i $S $X264 -color_range pc
# VFR with B-frames in Matroska: 30 fps with 2 frames of every 5 dropped
clip vfr.mkv "h264 yuv420p 160x120" libx264 -f lavfi -i testsrc2=size=160x120:rate=30:duration=1 \
    -vf "select='lt(mod(n\,5)\,3)'" -vsync vfr -c:v libx264 -preset ultrafast -bf 2

# ---------------------------------------------------------------------------
# each clip -> mkv with --cpu-ref: exit 0, every frame, every timestamp
# (Matroska keeps milliseconds), grey FFV1 of the same size, 0 mismatches,
# no other line (a clean file has no "damaged" notice)

mkdir o
for f in $CORPUS; do
    out=o/$f.mkv
    probe "$f" in
    want=$(sed -n "s/^$f //p" "$T/expect")
    n=$(nframes in)
    ge $G --cpu-ref "$f" "$out"
    probe "$out" out
    why=
    [ "$(desc in)" = "$want" ] || add "ffmpeg made $(desc in), not $want"
    [ "$RC" -eq 0 ] || add "exit $RC"
    [ "$n" -gt 0 ] || add "ffprobe decodes no frame of the input"
    [ "$(nframes out)" = "$n" ] || add "$(nframes out) frames, input has $n"
    ref=in
    if has_na in; then
        # timestamps the container lacks: those ffmpeg makes of it
        mk -i "$f" -c:v ffv1 -pix_fmt gray "$T/ref.mkv" && probe "$T/ref.mkv" ref && ref=ref
    fi
    same_ts "$ref" out 0.0011 || add "timestamps: $WHY"
    [ "$(desc out)" = "ffvhuff gray $(pv in width)x$(pv in height)" ] || add "output is $(desc out)"
    grep -q "^cpu-ref: $n frames checked, 0 with mismatches\$" "$ERR" || add "no clean cpu-ref line"
    [ -z "$(other_lines)" ] || add "other stderr: $(other_lines | head -n 1)"
    check "$f ($want) -> mkv: $n frames, timestamps kept${ref#in}, --cpu-ref clean" "$why"
done
no_stray_files "$W" && ok "corpus: no temp or partial file" || not_ok "corpus: $WHY"

# the full-range clip is tagged so
if [ -s full.mp4 ]; then
    probe full.mp4 in
    [ "$(pv in color_range)" = pc ] && ok "full.mp4 is tagged full range (pc)" ||
        not_ok "full.mp4 color_range is $(pv in color_range)"
fi
# the VFR clip has (at least) two different frame intervals
if [ -s vfr.mkv ]; then
    probe vfr.mkv in
    nint=$(sed -n 's/^best_effort_timestamp_time=//p' "$T/in" |
        awk 'NR > 1 { printf "%.3f\n", $1 - p } { p = $1 }' | sort -u | wc -l)
    [ "$nint" -ge 2 ] && ok "vfr.mkv is VFR ($nint frame intervals)" ||
        not_ok "vfr.mkv is not VFR ($nint frame interval)"
fi

# one clip to .mp4, .y4m and an image sequence: the odd-sized VP9
if [ -s vp9.webm ]; then
    probe vp9.webm in
    N=$(nframes in)
    ge $G vp9.webm o/vp9.mp4
    probe o/vp9.mp4 out
    why=
    [ "$RC" -eq 0 ] || add "exit $RC"
    [ "$(nframes out)" = "$N" ] || add "$(nframes out) frames, input has $N"
    [ "$(desc out)" = "h264 yuvj420p 322x242" ] || add "output is $(desc out)"
    same_ts in out 0.00002 || add "timestamps: $WHY"
    check "vp9.webm 321x241 -> mp4: $N frames, H.264 full range padded to 322x242, timestamps kept" "$why"

    ge $G vp9.webm o/vp9.y4m
    probe o/vp9.y4m out
    why=
    [ "$RC" -eq 0 ] || add "exit $RC"
    [ "$(nframes out)" = "$N" ] || add "$(nframes out) frames, input has $N"
    [ "$(desc out)" = "rawvideo gray 321x241" ] || add "output is $(desc out)"
    check "vp9.webm 321x241 -> y4m: $N gray 321x241 frames" "$why"

    mkdir o/seq
    ge $G vp9.webm o/seq/e_%03d.pgm
    why=
    [ "$RC" -eq 0 ] || add "exit $RC"
    [ "$(ls o/seq | wc -l | tr -d ' ')" = "$N" ] || add "$(ls o/seq | wc -l | tr -d ' ') files"
    [ -s o/seq/e_001.pgm ] && [ -s "o/seq/e_$(printf %03d "$N").pgm" ] || add "not numbered 1..$N"
    [ "$(head -c 15 o/seq/e_001.pgm | tr '\n' ' ')" = "P5 321 241 255 " ] ||
        add "e_001.pgm header: $(head -c 15 o/seq/e_001.pgm | tr '\n' ' ')"
    # the sequence's pixels are the mkv's frames (FFVHuff is lossless)
    if [ -s o/vp9.webm.mkv ]; then
        ffmpeg -nostdin -v error -i o/vp9.webm.mkv -f rawvideo -pix_fmt gray - 2>/dev/null | cksum >"$T/a"
        for p in o/seq/*.pgm; do tail -c $((321 * 241)) "$p"; done | cksum >"$T/b"
        cmp -s "$T/a" "$T/b" || add "PGM frames differ from the mkv's frames"
    fi
    check "vp9.webm -> seq/e_%03d.pgm: $N numbered 321x241 PGMs, the mkv's pixels" "$why"
fi

# VFR with B-frames -> mp4: the timestamps survive the H.264 encoder's reordering
if [ -s vfr.mkv ]; then
    probe vfr.mkv in
    ge $G vfr.mkv o/vfr.mp4
    probe o/vfr.mp4 out
    why=
    [ "$RC" -eq 0 ] || add "exit $RC"
    same_ts in out 0.00002 || add "timestamps: $WHY"
    check "vfr.mkv -> mp4: every frame's timestamp kept (last included)" "$why"
fi

# 10-bit HEVC as a NUT stream on stdin (not seekable; NUT has no edit list:
# its timestamps start after the B-frame delay)
if [ -s hevc10.mp4 ] && mk -i hevc10.mp4 -c copy o/hevc10.nut; then
    probe o/hevc10.nut in
    "$GPUEDGE" $G - o/stdin.mkv <o/hevc10.nut >"$OUT" 2>"$ERR"
    RC=$?
    probe o/stdin.mkv out
    why=
    [ "$RC" -eq 0 ] || add "exit $RC"
    [ -s "$ERR" ] && add "stderr not empty"
    same_ts in out 0.0011 || add "timestamps: $WHY"
    check "HEVC 10-bit as NUT on stdin -> mkv: every frame and timestamp" "$why"
fi

# a video file without an extension: found by its contents
if [ -s vp9.webm ]; then
    cp vp9.webm noext
    ge $G noext o/noext.mkv
    [ "$RC" -eq 0 ] && [ "$(packets o/noext.mkv)" = 15 ] &&
        ok "WebM named 'noext' (no extension): probed as a video, every frame" ||
        { not_ok "WebM without an extension: exit $RC, $(packets o/noext.mkv) frames"; show_err; }
    rm -f noext
fi

# full range: frame 5's edge map == the edge map of its Y plane as a PNG
# (PGM outputs compared byte for byte); the same bitstream tagged limited
# range gives a different one (the range flag is honoured)
if [ -s full.mp4 ]; then
    mk -i full.mp4 -vf 'select=eq(n\,4),extractplanes=y' -frames:v 1 o/y5.png
    "$GPUEDGE" $G o/y5.png o/y5.pgm 2>"$ERR"
    mkdir o/fseq
    ge $G full.mp4 o/fseq/e_%02d.pgm
    if [ "$RC" -eq 0 ] && [ -s o/y5.pgm ] && cmp -s o/y5.pgm o/fseq/e_05.pgm; then
        ok "full-range H.264: frame 5 == edge map of its Y plane as a PNG"
    else
        not_ok "full-range H.264: exit $RC, frame 5 differs from the PNG's edge map"
        show_err
    fi
    if mk -i full.mp4 -c copy -bsf:v h264_metadata=video_full_range_flag=0 o/limited.mp4; then
        mkdir o/lseq
        ge $G o/limited.mp4 o/lseq/e_%02d.pgm
        [ "$RC" -eq 0 ] && [ -s o/lseq/e_05.pgm ] && ! cmp -s o/lseq/e_05.pgm o/fseq/e_05.pgm &&
            ok "the same H.264 tagged limited range: a different edge map" ||
            { not_ok "limited-range tag ignored: exit $RC, same edge map"; show_err; }
    else
        skip "range flag: ffmpeg cannot retag H.264 (h264_metadata)"
    fi
fi
rm -rf o

# ---------------------------------------------------------------------------
# damaged inputs

# damaged NAME FILE OUT [stdin]: whatever gpuedge makes of FILE (or of
# its bytes on stdin, as -): no crash, exit 0 or 1.  Exit 0: OUT holds the
# frames that were decodable: as many as ffprobe decodes from FILE with the
# same decoder threads (--threads 1: deterministic; with DT=0, the default
# frame threads, how many survive depends on the threads: 1..15 then),
# and when that is fewer than the 15 of the intact clip, one "damaged: N
# of M frames decoded" notice says so (else that notice or nothing).
# Exit 1: one error line naming the input, no OUT.  Never a temp file.
DT=1
damaged() {
    d_name=$1 in=$2 out=$3 label=$2
    if [ "${4:-}" = stdin ]; then
        label=-
        "$GPUEDGE" $G --threads $DT - "$out" <"$in" >"$OUT" 2>"$ERR"
        RC=$?
    else
        ge $G --threads $DT "$in" "$out"
    fi
    ere=$(printf '%s' "$label" | sed 's/[.[\*^$+?(){}|]/\\&/g')
    why= what=
    nerr=$(nlines "$ERR")
    if [ "$RC" -ge 128 ]; then
        add "crashed (exit $RC)"
    elif [ "$RC" -eq 0 ]; then
        probe "$out" out
        got=$(nframes out)
        what="exit 0, $got frames"
        if [ "$DT" = 1 ] && [ "$label" != - ]; then
            probe "$in" ref -threads 1
            [ "$got" = "$(nframes ref)" ] || add "$got frames, ffprobe decodes $(nframes ref)"
        fi
        [ "$got" -gt 0 ] && [ "$got" -le 15 ] || add "$got frames in $out"
        if [ "$nerr" -gt 1 ] || { [ "$nerr" -eq 1 ] &&
            ! grep -Eq "^gpuedge: $ere: damaged: $got( of (about )?[0-9]+)? frames? decoded \(corrupt or missing data skipped or concealed\)\$" "$ERR"; }; then
            add "stderr is not (at most) the damaged-input notice"
        elif [ "$got" -lt 15 ] && [ "$nerr" -ne 1 ]; then
            add "$got of 15 frames without a notice"
        fi
        [ "$nerr" -eq 1 ] && what="$what, notice '$(sed 's/^gpuedge: [^:]*: damaged: //; s/ (.*//' "$ERR")'"
    elif [ "$RC" -eq 1 ]; then
        what="exit 1, '$(sed 's/^gpuedge: //' "$ERR" | head -n 1)'"
        error_line "^gpuedge: $ere: " || add "$WHY"
        [ -e "$out" ] && add "$out exists"
    else
        add "exit $RC"
    fi
    no_stray_files "$W" || add "$WHY"
    check "$d_name: $what" "$why"
    rm -f "$out"
}

# truncated in the middle, moov at the end: nothing to go by
if [ -s h264.mp4 ]; then
    sz=$(wc -c <h264.mp4)
    head -c $((sz / 2)) h264.mp4 >cut_moov_end.mp4
    fails "mp4 cut in the middle, moov at the end -> mkv" 1 'cut_moov_end\.mp4: cannot open video: ' \
        $G cut_moov_end.mp4 x.mkv
    fails "mp4 cut in the middle, moov at the end -> mp4" 1 'cut_moov_end\.mp4: cannot open video: ' \
        $G cut_moov_end.mp4 x.mp4
    rm -f cut_moov_end.mp4
fi
# faststart cut in the middle: the frames that are there (or a clean failure)
if [ -s h264_faststart.mp4 ]; then
    sz=$(wc -c <h264_faststart.mp4)
    head -c $((sz / 2)) h264_faststart.mp4 >cut_fs.mp4
    damaged "faststart mp4 cut in the middle -> mkv" cut_fs.mp4 x.mkv
    damaged "faststart mp4 cut in the middle -> mp4" cut_fs.mp4 x.mp4
    damaged "faststart mp4 cut in the middle -> y4m" cut_fs.mp4 x.y4m
    # cut right after the moov: an index and no frame data
    head -c $(($(offset h264_faststart.mp4 mdat) + 20)) h264_faststart.mp4 >cut_nodata.mp4
    fails "faststart mp4 cut after its moov (no frame data) -> mkv" 1 \
        'cut_nodata\.mp4: no video frames decoded' $G cut_nodata.mp4 x.mkv
    fails "faststart mp4 cut after its moov (no frame data) -> mp4" 1 \
        'cut_nodata\.mp4: no video frames decoded' $G cut_nodata.mp4 x.mp4
    rm -f cut_fs.mp4 cut_nodata.mp4
fi
# Matroska and NUT-on-a-pipe cut short
if [ -s ffv1_444.mkv ]; then
    sz=$(wc -c <ffv1_444.mkv)
    head -c $((sz * 6 / 10)) ffv1_444.mkv >cut.mkv
    damaged "FFV1 mkv cut at 60%" cut.mkv x.mkv
    rm -f cut.mkv
fi
if [ -s vp9.webm ] && mk -i vp9.webm -c copy vp9.nut; then
    head -c $(($(wc -c <vp9.nut) / 2)) vp9.nut >cut.nut
    damaged "VP9 NUT stream on stdin, cut in half" cut.nut x.mkv stdin
    rm -f vp9.nut cut.nut
fi

# bit noise in the packets (the noise bitstream filter: deterministic);
# then the same with the decoders' default threads (frame threads: the
# error paths between threads)
for f in h264.mp4 hevc10.mp4 vp9.webm av1.mkv mpeg4.avi; do
    [ -s "$f" ] || continue
    n=noisy_${f%.*}.${f##*.}
    if mk -i "$f" -c copy -bsf:v noise=amount=200 "$n"; then
        damaged "$f with bit noise (noise=amount=200)" "$n" x.mkv
        DT=0
        damaged "$f with bit noise, default threads" "$n" x.mkv
        DT=1
    else
        not_ok "cannot make $n: $(head -n 1 "$T/ff.err")"
    fi
    rm -f "$n"
done

# 4 KiB overwritten in the middle of the file (container structures too)
for f in ffv1_gray.mkv h264_faststart.mp4 hevc10.mp4 vp9.webm av1.mkv mpeg4.avi odd420.y4m rgb24.nut; do
    [ -s "$f" ] || continue
    d=dd_$f
    cp "$f" "$d"
    overwrite "$d" $(($(wc -c <"$f") / 2)) 4
    damaged "$f with 4 KiB overwritten in the middle" "$d" x.mkv
    rm -f "$d"
done

# nothing usable at all
: >empty.mp4
fails "empty file named .mp4" 1 'empty\.mp4: cannot open video: file is empty' $G empty.mp4 x.mkv
junk 16 >garbage.mkv
fails "garbage bytes named .mkv -> mkv" 1 'garbage\.mkv: cannot open video: ' $G garbage.mkv x.mkv
fails "garbage bytes named .mkv -> mp4" 1 'garbage\.mkv: cannot open video: ' $G garbage.mkv x.mp4
rm -f empty.mp4 garbage.mkv
no_stray_files "$W" && ok "damaged inputs: no temp or partial file anywhere" || not_ok "$WHY"

# ---------------------------------------------------------------------------
# a batch of 50: 40 tiny videos (3 clips under 40 names), 9 PNGs, and one
# mp4 cut in the middle (moov lost) as the 25th

mkdir batch
cd batch || exit 1
T5=testsrc2=size=96x72:rate=25:duration=0.2
mk -f lavfi -i $T5 $X264 c1.mp4 &&
    mk -f lavfi -i $T5 -c:v ffv1 c2.mkv &&
    mk -f lavfi -i testsrc2=size=64x48 -frames:v 1 c4.png ||
    { not_ok "batch: cannot make the clips: $(head -n 1 "$T/ff.err")"; finish; }
if have_enc libvpx-vp9 && mk -f lavfi -i $T5 -c:v libvpx-vp9 -deadline realtime -cpu-used 8 c3.webm; then
    e3=webm
else
    cp c2.mkv c3.mkv
    e3=mkv
fi
mkdir in
set --
i=0
: >"$T/want"
while [ $i -lt 50 ]; do
    i=$((i + 1))
    s=f$(printf %02d $i)
    if [ $i -eq 25 ]; then
        head -c $(($(wc -c <c1.mp4) / 2)) c1.mp4 >in/$s.mp4
        set -- "$@" in/$s.mp4
        continue
    fi
    case $i in
    5 | 10 | 15 | 20 | 30 | 35 | 40 | 45 | 50) f=in/$s.png && cp c4.png "$f" && echo "$s.png" >>"$T/want" ;;
    *)
        case $((i % 3)) in
        0) f=in/$s.mp4 && cp c1.mp4 "$f" ;;
        1) f=in/$s.mkv && cp c2.mkv "$f" ;;
        2) f=in/$s.$e3 && cp "c3.$e3" "$f" ;;
        esac
        echo "$s.mkv" >>"$T/want"
        ;;
    esac
    set -- "$@" "$f"
done
rm -f c1.mp4 c2.mkv c3.* c4.png
LC_ALL=C sort "$T/want" >"$T/want.s"
names() { (cd "$1" && ls -A | LC_ALL=C sort); }

ge $G -o out "$@"
why=
[ "$RC" -eq 1 ] || add "exit $RC, expected 1"
names out >"$T/got"
cmp -s "$T/got" "$T/want.s" || add "out holds $(nlines "$T/got") files: $(diff "$T/want.s" "$T/got" | grep '^[<>]' | head -n 3 | tr '\n' ' ')"
[ -e out/f25.mkv ] && add "out/f25.mkv exists"
grep -q '^gpuedge: 50 files: 49 ok, 1 failed, 0 skipped; 209 frames in ' "$ERR" ||
    add "summary: $(grep 'files:' "$ERR")"
[ "$(grep -c ': ok (' "$ERR")" = 49 ] || add "$(grep -c ': ok (' "$ERR") status lines"
grep -v -e ': ok (' -e ' files: ' "$ERR" >"$T/errs"
[ "$(nlines "$T/errs")" = 1 ] && grep -q '^gpuedge: in/f25\.mp4: cannot open video: ' "$T/errs" ||
    add "error lines: $(head -n 3 "$T/errs" | tr '\n' ' ')"
[ "$(grep -c '^gpuedge: in/f[0-9]*\.[a-z0-9]* -> out/f[0-9]*\.mkv: ok (5 frames)$' "$ERR")" = 40 ] ||
    add "not 40 'ok (5 frames)' lines"
[ "$(grep -c '^gpuedge: in/f[0-9]*\.png -> out/f[0-9]*\.png: ok (64x48)$' "$ERR")" = 9 ] ||
    add "not 9 'ok (64x48)' lines"
# one output of each clip, read back
for f in out/f01.mkv out/f02.mkv out/f03.mkv; do
    [ "$(packets "$f")" = 5 ] || add "$f has $(packets "$f") frames"
done
no_stray_files . || add "$WHY"
check "batch of 50 (40 videos, 9 PNGs, 1 cut mp4): 49 outputs of 5 frames / 1 image, 1 error line, summary, exit 1" "$why"

# re-run with --skip-existing: no work (the 49 are untouched), the bad file
# has no output, so it is tried again and fails again: exit 1
touch "$T/stamp"
ls -il out >"$T/before"
ge $G -o out --skip-existing "$@"
why=
[ "$RC" -eq 1 ] || add "exit $RC, expected 1"
ls -il out >"$T/after"
cmp -s "$T/before" "$T/after" || add "out changed (inode, size or names)"
[ -z "$(find out -newer "$T/stamp" -print)" ] || add "rewritten: $(find out -newer "$T/stamp" -print | head -n 3 | tr '\n' ' ')"
grep -q '^gpuedge: 50 files: 0 ok, 1 failed, 49 skipped; 0 frames in ' "$ERR" ||
    add "summary: $(grep 'files:' "$ERR")"
[ "$(grep -c '^gpuedge: in/f[0-9]*\.[a-z0-9]*: skipped (output out/f[0-9]*\.[a-z]* exists)$' "$ERR")" = 49 ] ||
    add "not 49 'skipped' lines"
[ "$(grep -c '^gpuedge: in/f25\.mp4: cannot open video: ' "$ERR")" = 1 ] || add "no error line for in/f25.mp4"
[ "$(nlines "$ERR")" = 51 ] || add "$(nlines "$ERR") stderr lines, expected 51"
check "batch re-run, --skip-existing: 49 skipped and untouched, the bad file fails again, exit 1" "$why"

# the bad file repaired: the resume does just that one
cp in/f24.mp4 in/f25.mp4
ge $G -o out --skip-existing "$@"
why=
[ "$RC" -eq 0 ] || add "exit $RC"
[ "$(names out | wc -l | tr -d ' ')" = 50 ] || add "$(names out | wc -l | tr -d ' ') outputs"
[ "$(packets out/f25.mkv)" = 5 ] || add "out/f25.mkv has $(packets out/f25.mkv) frames"
[ -z "$(find out -type f ! -name f25.mkv -newer "$T/stamp" -print)" ] || add "other outputs rewritten"
grep -q '^gpuedge: 50 files: 1 ok, 0 failed, 49 skipped; 5 frames in ' "$ERR" ||
    add "summary: $(grep 'files:' "$ERR")"
no_stray_files . || add "$WHY"
check "batch resumed after repairing the bad file: only f25 done, exit 0" "$why"
cd "$W" || exit 1
rm -rf batch

finish
