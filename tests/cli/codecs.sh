#!/bin/sh
# Video encoders: --codec, --preset, --crf.  Every lossless .mkv
# codec decodes back, frame for frame, to the edge maps (those of a y4m
# output, which holds them exactly); each output is byte-reproducible
# between two runs and the same whatever --threads (frame-parallel
# encoders; FFV1's slice count follows the frame size only); libx264 gets
# the preset and CRF asked for; codecs a container cannot hold, and x264
# options for other codecs, are refused before any work.
. "$(dirname "$0")/lib.sh"

if ! command -v ffmpeg >/dev/null 2>&1 || ! command -v ffprobe >/dev/null 2>&1; then
    skip "codecs: ffmpeg/ffprobe not installed (Debian package ffmpeg)"
    finish
fi

G="--backend=cpu -q"
mk() { ffmpeg -nostdin -hide_banner -v error -y "$@" </dev/null >/dev/null 2>"$T/ff.err"; }
prop() {
    ffprobe -v error -select_streams v:0 -show_entries "stream=$2" \
        -of default=nw=1:nk=1 "$1" 2>/dev/null | tr '\n' ' ' | sed 's/ $//'
}
# rawsum FILE: checksum and size of every frame decoded to gray8
# (passthrough: no frame dropped or repeated for VFR)
rawsum() { ffmpeg -nostdin -v error -i "$1" -vsync passthrough -f rawvideo -pix_fmt gray - 2>/dev/null | cksum; }
add() { why="${why:+$why; }$*"; }
check() { if [ -z "$2" ]; then ok "$1"; else not_ok "$1: $2"; show_err; fi; }

# an odd-sized clip with texture and motion (16 frames), and a VFR one
mk -f lavfi -i testsrc2=size=160x120:rate=10 -vf scale=161:121 -frames:v 16 -c:v ffv1 \
    -pix_fmt yuv420p in.mkv || { not_ok "cannot make the test clip: $(head -n 1 "$T/ff.err")"; finish; }
mk -f lavfi -i mandelbrot=size=96x64:rate=30 -frames:v 24 -vf "select='lt(mod(n\\,5)\\,3)'" \
    -vsync vfr -c:v libx264 -preset ultrafast -pix_fmt yuv420p vfr.mkv ||
    { not_ok "cannot make the VFR clip: $(head -n 1 "$T/ff.err")"; finish; }

ge $G in.mkv ref.y4m
REF=$(rawsum ref.y4m)
[ "$RC" -eq 0 ] && [ "${REF#* }" = "$((161 * 121 * 16))" ] ||
    { not_ok "the reference y4m (exit $RC, $REF)"; finish; }
ge $G vfr.mkv vref.y4m
VREF=$(rawsum vref.y4m)
nint=$(ffprobe -v error -select_streams v:0 -show_entries frame=pts_time -of csv=p=0 vfr.mkv |
    sed 's/,*$//' | grep . | awk 'NR > 1 { printf "%.3f\n", $1 - p } { p = $1 }' | sort -u | wc -l)
[ "$nint" -ge 2 ] || not_ok "vfr.mkv is not VFR ($nint frame interval)"

# ---------------------------------------------------------------------------
# lossless .mkv codecs: name in the file, exact frames, same bytes twice and
# with any --threads

for c in default ffvhuff magicyuv ffv1 rawvideo; do
    opt=
    want=$c
    if [ $c = default ]; then want=ffvhuff; else opt="--codec $c"; fi
    why=
    ge $G $opt --threads 1 in.mkv $c.1.mkv
    [ "$RC" -eq 0 ] || add "exit $RC"
    [ "$(prop $c.1.mkv codec_name,pix_fmt)" = "$want gray" ] ||
        add "stream is $(prop $c.1.mkv codec_name,pix_fmt)"
    [ "$(rawsum $c.1.mkv)" = "$REF" ] || add "decoded frames differ from the edge maps"
    ge $G $opt --threads 1 in.mkv $c.again.mkv
    cmp -s $c.1.mkv $c.again.mkv || add "a second run wrote other bytes"
    for n in 2 3 5; do
        ge $G $opt --threads $n in.mkv $c.$n.mkv
        { [ "$RC" -eq 0 ] && cmp -s $c.1.mkv $c.$n.mkv; } || add "--threads $n: exit $RC or other bytes"
    done
    # VFR: every frame and every timestamp (the last one too)
    ge $G $opt vfr.mkv v.$c.mkv
    [ "$(rawsum v.$c.mkv)" = "$VREF" ] || add "VFR: decoded frames differ"
    ffprobe -v error -select_streams v:0 -show_entries frame=pts_time -of csv=p=0 vfr.mkv |
        sed 's/,*$//' | grep . >"$T/p.in"
    ffprobe -v error -select_streams v:0 -show_entries frame=pts_time -of csv=p=0 v.$c.mkv |
        sed 's/,*$//' | grep . >"$T/p.out"
    cmp -s "$T/p.in" "$T/p.out" || add "VFR: timestamps differ"
    check "mkv $c: $want gray, every frame == the edge map (VFR too), same bytes twice and with --threads 1/2/3/5" "$why"
    rm -f $c.*.mkv v.$c.mkv
done

# y4m names its only codec
ge $G --codec rawvideo in.mkv r.y4m
{ [ "$RC" -eq 0 ] && cmp -s r.y4m ref.y4m; } && ok "y4m --codec rawvideo: the default's bytes" ||
    not_ok "y4m --codec rawvideo: exit $RC or other bytes"

# ---------------------------------------------------------------------------
# libx264: preset and CRF reach the encoder (its option string is in the
# stream's SEI); .mkv holds H.264 too

x264opts() { strings "$1" | grep -m 1 'x264 - core' | sed 's/.*options: //'; }
ge $G in.mkv d.mp4
o=$(x264opts d.mp4)
why=
[ "$RC" -eq 0 ] || add "exit $RC"
case " $o " in *" crf=18.0 "*) ;; *) add "no crf=18.0 in the SEI" ;; esac
# superfast: subme=1, me=dia
case " $o " in *" subme=1 "*" me=dia "* | *" me=dia "*" subme=1 "*) ;;
*) case " $o " in *" me=dia "*) ;; *) add "not the superfast preset ($o)" ;; esac ;; esac
check "mp4 default: libx264, CRF 18, preset superfast" "$why"

ge $G --preset ultrafast --crf 30 in.mkv u.mp4
o=$(x264opts u.mp4)
why=
[ "$RC" -eq 0 ] || add "exit $RC"
case " $o " in *" crf=30.0 "*) ;; *) add "no crf=30.0" ;; esac
case " $o " in *" cabac=0 "*) ;; *) add "CABAC on: not ultrafast" ;; esac
check "mp4 --preset ultrafast --crf 30 reach x264" "$why"

ge $G --crf 23.5 --preset medium in.mkv m.mp4
o=$(x264opts m.mp4)
why=
[ "$RC" -eq 0 ] || add "exit $RC"
case " $o " in *" crf=23.5 "*) ;; *) add "no crf=23.5" ;; esac
case " $o " in *" subme=7 "*) ;; *) add "not medium (subme)" ;; esac
ge $G --crf 23.5 --preset medium in.mkv m2.mp4
cmp -s m.mp4 m2.mp4 || add "a second run wrote other bytes"
check "mp4 --crf 23.5 --preset medium: fractional CRF, medium, same bytes twice" "$why"

ge $G --codec libx264 --crf 0 in.mkv x.mkv
why=
[ "$RC" -eq 0 ] || add "exit $RC"
[ "$(prop x.mkv codec_name)" = h264 ] || add "stream is $(prop x.mkv codec_name)"
check "mkv --codec libx264 --crf 0: H.264 in Matroska" "$why"

# ---------------------------------------------------------------------------
# refused before any work: exit 2, one line, nothing written

fails "mkv --codec bogus" 2 "--codec 'bogus': .mkv holds" --codec bogus in.mkv o.mkv
fails "mp4 --codec ffvhuff" 2 "--codec 'ffvhuff': .mp4 holds libx264 only" --codec ffvhuff in.mkv o.mp4
fails "y4m --codec libx264" 2 "--codec 'libx264': .y4m holds rawvideo only" --codec libx264 in.mkv o.y4m
fails "mkv --crf (lossless codec)" 2 "--crf applies to libx264" --crf 20 in.mkv o.mkv
fails "mkv --codec ffv1 --preset" 2 "--preset applies to libx264" --codec ffv1 --preset fast in.mkv o.mkv
fails "mp4 --preset bogus" 2 "--preset 'bogus': expected ultrafast" --preset bogus in.mkv o.mp4
fails "mp4 --crf 52" 2 "--crf '52': expected a number from 0 to 51" --crf 52 in.mkv o.mp4
fails "mp4 --crf 1e" 2 "--crf '1e': expected a number" --crf 1e in.mkv o.mp4
fails "mp4 --crf -1" 2 "--crf '-1': expected a number" --crf -1 in.mkv o.mp4
fails "--codec for an image output" 2 "apply to video outputs" --codec ffv1 in.mkv o.png
fails "--codec for an image sequence" 2 "apply to video outputs" --codec ffv1 in.mkv e_%03d.png
mkdir out
fails "batch --format mp4 --codec ffv1" 2 "--codec 'ffv1': .mp4 holds" -o out --format mp4 --codec ffv1 in.mkv
fails "batch (mkv) --codec libx265" 2 "--codec 'libx265': .mkv holds" -o out --codec libx265 in.mkv
[ -z "$(ls out)" ] && ok "refused batches wrote nothing" || not_ok "out/ holds $(ls out)"

# a batch with a codec: every video gets it
ge $G -o out --codec magicyuv in.mkv vfr.mkv
why=
[ "$RC" -eq 0 ] || add "exit $RC"
for f in out/in.mkv out/vfr.mkv; do
    [ "$(prop $f codec_name)" = magicyuv ] || add "$f is $(prop $f codec_name)"
done
check "batch --codec magicyuv: every video output is MagicYUV" "$why"
# Matroska CRC-32 elements: none in the clusters by default (the muxer's
# checksum was most of the writer's time, docs/bench-log.md "The .mkv bound");
# one opening each cluster with --mkv-crc; same frames either way
# crc_clusters FILE: "CLUSTERS WITH_CRC" (a Cluster, 1F 43 B6 75, its size,
# then a CRC-32 element, BF 84, as its first child)
crc_clusters() {
    python3 - "$1" <<'PY'
import sys
d = open(sys.argv[1], "rb").read()
n = c = 0
i = d.find(b"\x1f\x43\xb6\x75")
while i >= 0:
    j = i + 4
    first = d[j]
    ln = 1
    while ln <= 8 and not (first & (0x80 >> (ln - 1))):
        ln += 1
    j += ln
    n += 1
    c += d[j:j + 2] == b"\xbf\x84"
    i = d.find(b"\x1f\x43\xb6\x75", j)
print(n, c)
PY
}
if command -v python3 >/dev/null 2>&1; then
    ge $G -y in.mkv nocrc.mkv
    ge $G -y --mkv-crc in.mkv crc.mkv
    a=$(crc_clusters nocrc.mkv); b=$(crc_clusters crc.mkv)
    why=
    [ "${a% *}" -ge 1 ] && [ "${a#* }" = 0 ] || add "default: clusters, with CRC: $a"
    [ "${b% *}" -ge 1 ] && [ "${b#* }" = "${b% *}" ] || add "--mkv-crc: clusters, with CRC: $b"
    [ "$(rawsum nocrc.mkv)" = "$REF" ] && [ "$(rawsum crc.mkv)" = "$REF" ] || add "frames differ"
    check "mkv: no CRC-32 element in a cluster by default ($a), one in each with --mkv-crc ($b); same frames" "$why"
else
    skip "mkv CRC elements: no python3"
fi
no_stray_files "$W" && ok "no temp or partial file" || not_ok "$WHY"
finish
