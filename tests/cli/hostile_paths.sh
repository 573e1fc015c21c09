#!/bin/sh
# Hostile paths and hostile filesystems (DESIGN.md §3 errors, §6 never lose data):
# spaces, UTF-8, a leading dash, names near NAME_MAX (255 bytes) and paths
# past PATH_MAX, newlines and escape characters in names, an immutable
# directory (chattr +i), a read-only filesystem, and a full disk (a 1 MiB
# tmpfs; `ulimit -f` where mounting is not allowed) for images and for a
# video (.mkv).  Every failure: its exit status, one "gpuedge: FILE: why"
# line, nothing left behind, the inputs untouched (checksums at the end).
# What bad_inputs.sh already covers (missing directory, mode 555 as non-root,
# ulimit -f on a BMP, /dev/full, same file) is not repeated.
. "$(dirname "$0")/lib.sh"

G="--backend=cpu"
NL='
'
ESC=$(printf '\033')

# Mounts and immutable files made here are undone before lib.sh removes $T.
hp_cleanup() {
    chattr -i "$W/imm" "$W/imm.png" 2>/dev/null
    umount "$W/full" 2>/dev/null
    umount "$W/rofs" 2>/dev/null
    cleanup
}
trap hp_cleanup EXIT

# check NAME: ok when $why is empty, else not ok with the reason.
check() {
    if [ -z "$why" ]; then
        ok "$1"
    else
        not_ok "$1: $why"
        show_err
    fi
}
addwhy() { why="${why:+$why; }$*"; }

# The whole of stderr is N lines starting "gpuedge: ".
stderr_lines() {
    [ "$(nlines "$ERR")" -eq "$1" ] && [ "$(grep -c '^gpuedge: ' "$ERR")" -eq "$1" ]
}

# ---- inputs (checksums compared at the end)
mkdir "ä ö"
cp "$SAMPLES/photo.png" "ä ö/ü 日本.png"
cp "$SAMPLES/grey.png" "sp ace.png"
cp "$SAMPLES/grey.png" " lead and trail .png"
cp "$SAMPLES/grey.png" ./-x.png
cp "$SAMPLES/grey.png" "a${NL}b.png"
cp "$SAMPLES/grey.png" "e${ESC}[31mred.png"
cp "$SAMPLES/grey.png" 'q "x", y.png'
L251=$(printf '%0251d' 0 | tr 0 b)
cp "$SAMPLES/grey.png" "$L251.jpg"
HAVE_FF=0
if command -v ffmpeg >/dev/null 2>&1; then
    HAVE_FF=1
    ffmpeg -nostdin -v error -f lavfi -i testsrc=s=64x48:r=10 -frames:v 10 -c:v ffv1 \
        "v ä ö.mkv" || HAVE_FF=0
fi
# noise for the full disk: a 1200x1000 PGM (1.2 MB out as PGM), a 320x240
# video (~1.8 MB out as FFV1), five 600x500 PGMs (300 KB out each)
{ printf 'P5\n1200 1000\n255\n' && head -c 1200000 /dev/urandom; } >noise.pgm
[ "$HAVE_FF" -eq 1 ] && ffmpeg -nostdin -v error -f lavfi \
    -i "nullsrc=s=320x240:r=25,geq=lum='random(1)*255':cb=128:cr=128" -frames:v 30 \
    -c:v ffv1 noise.mkv
mkdir b5
for i in 1 2 3 4 5; do
    { printf 'P5\n600 500\n255\n' && head -c 300000 /dev/urandom; } >"b5/n$i.pgm"
done
inputs_sum() {
    for f in "ä ö/ü 日本.png" "sp ace.png" " lead and trail .png" ./-x.png "a${NL}b.png" \
        "e${ESC}[31mred.png" 'q "x", y.png' "$L251.jpg" "v ä ö.mkv" noise.pgm noise.mkv \
        b5/n1.pgm b5/n5.pgm "$SAMPLES/photo.png" "$SAMPLES/grey.png"; do
        [ -f "$f" ] && cksum <"$f"
    done
}
SUMS=$(inputs_sum)
mkdir ref
ge $G "$SAMPLES/photo.png" ref/photo.png
ge $G "$SAMPLES/grey.png" ref/grey.png
[ -s ref/photo.png ] && [ -s ref/grey.png ] || not_ok "reference outputs: exit $RC"

# ---------------------------------------------------------------------------
# spaces and UTF-8

ge $G "ä ö/ü 日本.png" "ä ö/ü 日本 edges.png"
why=
[ "$RC" -eq 0 ] || addwhy "exit $RC"
[ -s "$ERR" ] && addwhy "stderr not empty"
cmp -s "ä ö/ü 日本 edges.png" ref/photo.png || addwhy "output differs from the plain-name run"
check "spaces and UTF-8 in input, directory and output: the same bytes as a plain name"

ge $G -o "out dir 日本 ü" "ä ö/ü 日本.png" "sp ace.png"
why=
[ "$RC" -eq 0 ] || addwhy "exit $RC"
cmp -s "out dir 日本 ü/ü 日本.png" ref/photo.png || addwhy "out dir 日本 ü/ü 日本.png missing or different"
cmp -s "out dir 日本 ü/sp ace.png" ref/grey.png || addwhy "out dir 日本 ü/sp ace.png missing or different"
stderr_lines 3 || addwhy "stderr is not 2 notes + summary"
grep -q '^gpuedge: ä ö/ü 日本\.png -> out dir 日本 ü/ü 日本\.png: ok (600x400)$' "$ERR" ||
    addwhy "no note naming the UTF-8 file"
check "batch -o DIR with spaces and UTF-8: outputs, one note per file"

printf '%s\n' " lead and trail .png" "ä ö/ü 日本.png" >list
ge $G -o out1 --from-file list
why=
[ "$RC" -eq 0 ] || addwhy "exit $RC"
cmp -s "out1/ lead and trail .png" ref/grey.png || addwhy "leading/trailing spaces not kept"
cmp -s "out1/ü 日本.png" ref/photo.png || addwhy "UTF-8 name from the list not written"
check "--from-file keeps spaces (leading and trailing) and UTF-8 in names"

if [ "$HAVE_FF" -eq 1 ]; then
    ge $G "v ä ö.mkv" "out ü 日本.mkv"
    why=
    [ "$RC" -eq 0 ] || addwhy "exit $RC"
    n=$(ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames \
        -of csv=p=0 "out ü 日本.mkv" 2>/dev/null)
    [ "$n" = 10 ] || addwhy "output has '$n' frames, expected 10"
    no_stray_files "$W" || addwhy "$WHY"
    check "video to .mkv with spaces and UTF-8 in both names (10 frames)"

    mkdir "seq dir ü" "100% dir"
    ge $G "v ä ö.mkv" "seq dir ü/e_%03d.png"
    [ "$RC" -eq 0 ] && [ -s "seq dir ü/e_001.png" ] && [ -s "seq dir ü/e_010.png" ] &&
        ok "image-sequence pattern in a directory with a space and UTF-8" ||
        { not_ok "sequence in 'seq dir ü': exit $RC"; show_err; }
    # As with FFmpeg's image2 muxer, a literal '%' in a pattern is written %%.
    ge $G "v ä ö.mkv" "100%% dir/e_%03d.png"
    [ "$RC" -eq 0 ] && [ -s "100% dir/e_001.png" ] && [ -s "100% dir/e_010.png" ] &&
        ok "a '%' in the directory of a sequence pattern, written %% (as FFmpeg)" ||
        { not_ok "sequence in '100%% dir': exit $RC"; show_err; }
else
    skip "video with UTF-8 names: no ffmpeg to make a clip"
fi

ge $G --hist "h ü.csv" -o out2 'q "x", y.png'
why=
[ "$RC" -eq 0 ] || addwhy "exit $RC"
[ -s 'out2/q "x", y.png' ] || addwhy "no output"
if have_python; then
    python3 - "h ü.csv" 'q "x", y.png' <<'EOF' || addwhy "the CSV does not read back"
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="", encoding="utf-8")))
assert len(rows) == 2 and rows[1][0] == sys.argv[2] and len(rows[1]) == 259, rows[1][:3]
EOF
else
    sed -n 2p "h ü.csv" | grep -q '^"q ""x"", y\.png",0,' || addwhy "file field not quoted"
fi
check "--hist: a name with a comma and quotes is one CSV field"

# ---------------------------------------------------------------------------
# a leading dash

ge $G ./-x.png ./-y.png
[ "$RC" -eq 0 ] && cmp -s ./-y.png ref/grey.png && ok "./-x.png ./-y.png" ||
    { not_ok "./-x.png: exit $RC"; show_err; }
ge $G -- -x.png -z.png
[ "$RC" -eq 0 ] && cmp -s ./-z.png ref/grey.png && ok "-- -x.png -z.png" ||
    { not_ok "-- -x.png: exit $RC"; show_err; }
rm -f ./-y.png ./-z.png
fails "-x.png without ./ or --: an unknown option" 2 "unknown option '-x'" $G -x.png out.png
ge $G -o out3 -- -x.png
[ "$RC" -eq 0 ] && cmp -s out3/-x.png ref/grey.png && ok "batch: -o DIR -- -x.png" ||
    { not_ok "batch -- -x.png: exit $RC"; show_err; }

# ---------------------------------------------------------------------------
# names near NAME_MAX (255 bytes) and paths past PATH_MAX

L246=$(printf '%0246d' 0 | tr 0 a)
ge $G "$SAMPLES/grey.png" "$L246.png"
why=
[ "$RC" -eq 0 ] || addwhy "exit $RC"
cmp -s "$L246.png" ref/grey.png || addwhy "output missing or different"
no_stray_files "$W" || addwhy "$WHY"
check "250-byte output name (the temp name is cut to fit)"
rm -f "$L246.png"

ge $G "$SAMPLES/grey.png" "$L251.png"
[ "$RC" -eq 0 ] && cmp -s "$L251.png" ref/grey.png && ok "255-byte output name (NAME_MAX)" ||
    { not_ok "255-byte name: exit $RC"; show_err; }
rm -f "$L251.png"
fails "256-byte output name" 1 ': cannot create output: File name too long$' \
    $G "$SAMPLES/grey.png" "${L251}c.png"

# --keep-partial on a 255-byte name: NAME.partial.EXT would be 263 bytes, so
# the stem is cut; no hidden temp file is left (ulimit -f: 2 KiB).
(ulimit -f 4 && exec "$GPUEDGE" $G --keep-partial "$SAMPLES/photo.png" "$L251.bmp") \
    >"$OUT" 2>"$ERR"
RC=$?
why=
[ "$RC" -eq 1 ] || addwhy "exit $RC, expected 1"
part=$(find . -maxdepth 1 -name '*.partial.bmp' -print)
[ -n "$part" ] && [ "$(basename "$part" | wc -c)" -le 256 ] || addwhy "no partial file of <= 255 bytes"
[ -z "$(find . -maxdepth 1 -name '.*.tmp' -print)" ] || addwhy "hidden temp file left"
stderr_lines 2 && grep -q 'cannot write: File too large$' "$ERR" &&
    grep -q 'partial output kept as ' "$ERR" || addwhy "stderr is not 'cannot write' + 'kept as'"
[ -e "$L251.bmp" ] && addwhy "final name exists"
check "--keep-partial on a 255-byte name: stem cut, partial kept, no temp"
find . -maxdepth 1 \( -name '*.partial.bmp' -o -name '.*.tmp' \) -exec rm -f {} +

U=x
i=0
while [ $i -lt 82 ]; do U="${U}日"; i=$((i + 1)); done
ge $G "$SAMPLES/grey.png" "$U.png"
[ "$RC" -eq 0 ] && cmp -s "$U.png" ref/grey.png && no_stray_files "$W" &&
    ok "251-byte UTF-8 name (82 three-byte characters)" ||
    { not_ok "long UTF-8 name: exit $RC ${WHY:-}"; show_err; }
rm -f "$U.png"

ge $G -o out4 "$L251.jpg"
[ "$RC" -eq 0 ] && cmp -s "out4/$L251.png" ref/grey.png && ok "batch: 255-byte input name -> 255-byte output" ||
    { not_ok "batch 255-byte name: exit $RC"; show_err; }
ge $G -o out5 --format jpeg "$L251.jpg"
why=
[ "$RC" -eq 1 ] || addwhy "exit $RC, expected 1"
stderr_lines 2 && grep -q "^gpuedge: out5/$L251\.jpeg: cannot create output: File name too long$" "$ERR" ||
    addwhy "stderr is not one error + summary"
[ -z "$(ls -A out5)" ] || addwhy "out5 not empty"
check "batch: an output name over 255 bytes fails that file with one line"

# a path past PATH_MAX (4096): the reason still ends the (one) line
D200=$(printf '%0200d' 0 | tr 0 d)
deep=.
i=0
while [ $i -lt 21 ]; do deep="$deep/$D200"; i=$((i + 1)); done
if mkdir -p "$deep" 2>/dev/null; then
    ge $G "$SAMPLES/grey.png" "$deep/out.png"
    why=
    [ "$RC" -eq 1 ] || addwhy "exit $RC, expected 1"
    error_line 'out\.png: cannot create output: File name too long$' || addwhy "$WHY"
    [ "$(wc -c <"$ERR")" -lt 2300 ] || addwhy "error line $(wc -c <"$ERR") bytes"
    check "output path of 4.2 KB (> PATH_MAX): one line, shortened, reason kept"
    rm -rf "./$D200"
else
    skip "path past PATH_MAX: cannot make the directories"
fi

# ---------------------------------------------------------------------------
# newlines and escape characters in names

ge $G "a${NL}b.png" "o${NL}p.png"
[ "$RC" -eq 0 ] && cmp -s "o${NL}p.png" ref/grey.png && ok "newline in input and output names" ||
    { not_ok "newline names: exit $RC"; show_err; }
rm -f "o${NL}p.png"

ge $G --hist hist.csv -o out6 "a${NL}b.png" "e${ESC}[31mred.png"
why=
[ "$RC" -eq 0 ] || addwhy "exit $RC"
cmp -s "out6/a${NL}b.png" ref/grey.png || addwhy "out6/a<NL>b.png missing or different"
cmp -s "out6/e${ESC}[31mred.png" ref/grey.png || addwhy "out6/e<ESC>... missing or different"
stderr_lines 3 || addwhy "stderr: $(nlines "$ERR") lines, expected 2 notes + summary (one line each)"
grep -q "$ESC" "$ERR" && addwhy "raw ESC on stderr"
grep -q '^gpuedge: a?b\.png -> out6/a?b\.png: ok' "$ERR" || addwhy "the note does not show a?b.png"
if have_python; then
    python3 - hist.csv "a${NL}b.png" <<'EOF' || addwhy "the CSV does not read back"
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="", encoding="utf-8")))
assert len(rows) == 3 and rows[1][0] == sys.argv[2], [r[:2] for r in rows]
EOF
fi
check "batch: newline and ESC in names: outputs, notes one line each ('?'), CSV quoted"

# --from-file is line-based: it cannot carry a newline.  "a<NL>b.png" in a
# list is two names, "a" and "b.png" (neither exists): exit 1, one line each.
printf 'a\nb.png\n' >nl.list
ge $G -o out7 --from-file nl.list
why=
[ "$RC" -eq 1 ] || addwhy "exit $RC, expected 1"
grep -q '^gpuedge: a: cannot read image: No such file' "$ERR" &&
    grep -q '^gpuedge: b\.png: cannot read image: No such file' "$ERR" || addwhy "no error for 'a' and 'b.png'"
[ -z "$(ls -A out7 2>/dev/null)" ] || addwhy "something written in out7"
check "--from-file cannot carry a newline: read as two names, both fail, nothing written"

# ---------------------------------------------------------------------------
# an immutable directory and file (root ignores permissions, not chattr +i)

mkdir imm
if chattr +i imm 2>/dev/null; then
    fails "immutable output directory (chattr +i)" 1 \
        'imm/out\.png: cannot create output: Operation not permitted' $G "$SAMPLES/grey.png" imm/out.png
    ge $G -o imm "$SAMPLES/grey.png" "sp ace.png"
    why=
    [ "$RC" -eq 1 ] || addwhy "exit $RC, expected 1"
    [ "$(grep -c 'cannot create output: Operation not permitted$' "$ERR")" -eq 2 ] &&
        stderr_lines 3 || addwhy "stderr is not 2 errors + summary"
    [ -z "$(ls -A imm)" ] || addwhy "imm not empty"
    check "batch into an immutable directory: each file fails with one line"
    chattr -i imm
    cp "$SAMPLES/grey.png" imm.png
    chattr +i imm.png
    sum=$(sum_of imm.png)
    fails "-y over an immutable file" 1 'imm\.png: cannot move output into place: Operation not permitted' \
        $G -y "$SAMPLES/photo.png" imm.png
    [ "$(sum_of imm.png)" = "$sum" ] && ok "the immutable file is untouched" ||
        not_ok "the immutable file changed"
    chattr -i imm.png
    rm -f imm.png
else
    skip "immutable directory: chattr +i not possible here (needs root and ext2/3/4, XFS, btrfs)"
fi
rmdir imm

# ---------------------------------------------------------------------------
# a read-only filesystem and a full disk

mkdir rofs full
if mount -t tmpfs -o ro,size=64k tmpfs rofs 2>/dev/null; then
    fails "read-only filesystem" 1 'rofs/o\.png: cannot create output: Read-only file system' \
        $G "$SAMPLES/grey.png" rofs/o.png
    umount rofs
else
    skip "read-only filesystem: mount not permitted here"
fi
rmdir rofs

if mount -t tmpfs -o size=1m tmpfs full 2>/dev/null; then
    FULL="tmpfs of 1 MiB" REASON='No space left on device' LIM=
else
    # no mount: the file size limit (EFBIG) stands in for the full disk
    FULL="ulimit -f 512 KiB" REASON='File too large' LIM=1024
fi
# full_run ARGS...: gpuedge under the limit (if any); RC, $OUT, $ERR
full_run() {
    if [ -n "$LIM" ]; then
        (ulimit -f "$LIM" && exec "$GPUEDGE" "$@") >"$OUT" 2>"$ERR"
    else
        "$GPUEDGE" "$@" >"$OUT" 2>"$ERR"
    fi
    RC=$?
}
# full_case NAME OUTPUT ARGS...: exit 1, one line, nothing in full/
full_case() {
    name=$1 out=$2
    shift 2
    full_run "$@"
    why=
    [ "$RC" -eq 1 ] || addwhy "exit $RC, expected 1"
    error_line "$(printf '%s' "$out" | sed 's/[.[*^$]/\\&/g'): cannot write: $REASON\$" || addwhy "$WHY"
    [ -z "$(ls -A full)" ] || addwhy "left in full/: $(ls -A full | tr '\n' ' ')"
    check "$name ($FULL): exit 1, one line, nothing left"
}
full_case "image, disk full" "full/ü 日本.pgm" $G noise.pgm "full/ü 日本.pgm"
if [ "$HAVE_FF" -eq 1 ]; then
    full_case "video .mkv, disk full" "full/v ü.mkv" $G noise.mkv "full/v ü.mkv"
    full_run $G --keep-partial noise.mkv "full/v ü.mkv"
    [ "$RC" -eq 1 ] && [ -s "full/v ü.partial.mkv" ] && [ ! -e "full/v ü.mkv" ] &&
        [ "$(ls -A full)" = "v ü.partial.mkv" ] &&
        ok "video .mkv, disk full, --keep-partial: only v ü.partial.mkv" ||
        { not_ok "video --keep-partial on a full disk: exit $RC, full/: $(ls -A full | tr '\n' ' ')"; show_err; }
    rm -f full/*
else
    skip "video on a full disk: no ffmpeg to make a clip"
fi
if [ -z "$LIM" ]; then
    # A batch that fills the disk: 5 noise images of 300 KB out, at most 3
    # fit.  Which ones depends on the encode pool's threads writing at once
    # (a failed file's space comes free again for the next): every file
    # written is complete, every other one has its one error line and
    # leaves nothing.
    ge $G --format pgm -o b5ref b5
    ge $G --format pgm -o full b5
    why=
    [ "$RC" -eq 1 ] || addwhy "exit $RC, expected 1"
    nw=0
    for i in 1 2 3 4 5; do
        if [ -e "full/n$i.pgm" ]; then
            nw=$((nw + 1))
            cmp -s "full/n$i.pgm" "b5ref/n$i.pgm" || addwhy "full/n$i.pgm differs"
        else
            [ "$(grep -c "full/n$i.pgm: cannot write: $REASON\$" "$ERR")" -eq 1 ] ||
                addwhy "no one error line for n$i.pgm"
        fi
    done
    [ "$nw" -ge 1 ] && [ "$nw" -le 3 ] || addwhy "$nw files written"
    [ "$(grep -c "cannot write: $REASON\$" "$ERR")" -eq $((5 - nw)) ] || addwhy "not $((5 - nw)) 'cannot write' lines"
    [ -z "$(ls -A full | grep -v '^n[1-5]\.pgm$')" ] || addwhy "full/ holds: $(ls -A full | tr '\n' ' ')"
    check "batch filling the disk: the files written are complete, the others leave nothing"
    rm -f full/*
    umount full
fi
rmdir full 2>/dev/null

# ---------------------------------------------------------------------------

[ "$(inputs_sum)" = "$SUMS" ] && ok "every input untouched (checksums before and after)" ||
    not_ok "an input changed"
no_stray_files "$W" && ok "no temp or partial file anywhere" || not_ok "$WHY"
finish
