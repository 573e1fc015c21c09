#!/bin/sh
# Hostile names and streams (DESIGN.md §3, §6): no output is lost to its
# name, and usage errors say so once, with the hint.
# - A batch's outputs are literal names (DIR/stem.ext): an input called
#   x%d.png beside x1.png gives out/x%d.png and out/x1.png, never a
#   sequence pattern; the status line names the real file; --skip-existing
#   finds it; a literal collision is still caught before any work.
# - --from-file: -0/--null for find -print0 lists (names with a newline or
#   a '#'); a NUL byte in a newline list is exit 2, nothing made; blank
#   lines skipped; '#' starts no comment.
# - Standard output carries one output, standard input is read once:
#   OUTPUT -, --hist - and --report-file - (or /dev/stdout on a pipe) two at
#   a time, and '-' read twice, are exit 2 with nothing written; so are
#   --hist and --report-file naming one file, or an output's.
# - Usage errors found after parsing (no extension, a collision, a video
#   into an image, no input files, a NUL in the list) end with the
#   "Try 'gpuedge --help'" line; --start is range-checked (1e13 never wraps).
. "$(dirname "$0")/lib.sh"

G="--backend=cpu"
HINT="^Try 'gpuedge --help' for more information\.\$"

# usage NAME PATTERN ARGS...: exit 2, one error line matching PATTERN, the
# hint line after it, and the working directory unchanged.
usage() {
    name=$1 pat=$2
    shift 2
    fails "$name" 2 "$pat" "$@"
    if [ "$(grep -c "$HINT" "$ERR")" -eq 1 ] && [ "$(tail -n 1 "$ERR" | grep -c "$HINT")" -eq 1 ]; then
        ok "$name: ends with the usage hint"
    else
        not_ok "$name: no \"Try 'gpuedge --help'\" line after the error"
        show_err
    fi
}

# ---- batch outputs are literal names
mkdir in
cp "$SAMPLES/grey.png" 'in/x%d.png'
cp "$SAMPLES/photo.png" in/x1.png
ge $G -y -o out 'in/x%d.png' in/x1.png
why=
[ "$RC" -eq 0 ] || why="exit $RC"
[ -s 'out/x%d.png' ] && [ -s out/x1.png ] || why="${why:+$why; }outputs: $(ls out 2>/dev/null | tr '\n' ' ')"
[ "$(ls out | wc -l)" -eq 2 ] || why="${why:+$why; }$(ls out | wc -l) files in out/"
grep -qF 'in/x%d.png -> out/x%d.png: ok (512x512)' "$ERR" || why="${why:+$why; }no status line naming out/x%d.png"
[ -z "$why" ] && ok "batch: x%d.png beside x1.png gives out/x%d.png and out/x1.png (literal names)" ||
    { not_ok "batch x%d.png: $why"; show_err; }
"$GPUEDGE" $G "$SAMPLES/grey.png" ref.png 2>/dev/null
cmp -s ref.png 'out/x%d.png' && ok "out/x%d.png holds x%d.png's edge map" ||
    not_ok "out/x%d.png differs from the single run's output"
ge $G -o out --skip-existing 'in/x%d.png' in/x1.png
[ "$RC" -eq 0 ] && grep -q '2 files: 0 ok, 0 failed, 2 skipped' "$ERR" &&
    grep -qF 'in/x%d.png: skipped (output out/x%d.png exists)' "$ERR" &&
    ok "--skip-existing finds out/x%d.png" || { not_ok "--skip-existing with x%d.png: exit $RC"; show_err; }
cp "$SAMPLES/grey.png" 'in/y%d.png'
cp "$SAMPLES/grey.png" 'in/y%d.bmp'
usage "literal collision y%d.png + y%d.bmp" 'out2/y%d\.png: several inputs would write this output' \
    $G -o out2 'in/y%d.png' 'in/y%d.bmp'
if command -v ffmpeg >/dev/null 2>&1; then
    ffmpeg -nostdin -v error -f lavfi -i testsrc=size=64x48:rate=10:duration=3 -pix_fmt yuv420p \
        'in/v%03d.mp4' </dev/null || not_ok "making in/v%03d.mp4"
    ge $G -o vout 'in/v%03d.mp4'
    [ "$RC" -eq 0 ] && [ -s 'vout/v%03d.mkv' ] && [ "$(ls vout | wc -l)" -eq 1 ] &&
        grep -qF 'in/v%03d.mp4 -> vout/v%03d.mkv: ok (30 frames)' "$ERR" &&
        ok "batch: a video named v%03d.mp4 gives vout/v%03d.mkv" ||
        { not_ok "batch video v%03d.mp4: exit $RC, $(ls vout 2>/dev/null | tr '\n' ' ')"; show_err; }
    # the single-output form still takes a pattern
    ge $G 'in/v%03d.mp4' 'seq_%02d.png'
    [ "$RC" -eq 0 ] && [ -s seq_01.png ] && [ -s seq_30.png ] && ok "single form: OUTPUT e_%02d.png is a sequence" ||
        { not_ok "single-form sequence: exit $RC"; show_err; }
    rm -f seq_*.png
    mv 'in/v%03d.mp4' clip.mp4
else
    skip "videos named with %: ffmpeg not installed"
fi
rm -rf out out2 vout

# ---- --from-file: -0, NUL bytes, blank lines, '#'
NL='
'
mkdir l
cp "$SAMPLES/grey.png" l/a.png
cp "$SAMPLES/rgba.png" "l/b${NL}c.png"
cp "$SAMPLES/odd_321x241.png" 'l/#d.png'
find l -name '*.png' -print0 >list0
ge $G -q -0 -o o0 --from-file list0
[ "$RC" -eq 0 ] && [ -s o0/a.png ] && [ -s "o0/b${NL}c.png" ] && [ -s 'o0/#d.png' ] &&
    [ "$(find o0 -type f -exec printf x \; | wc -c)" -eq 3 ] && ok "-0: a find -print0 list, a newline and a # in names: 3 outputs" ||
    { not_ok "-0 list: exit $RC, $(ls -A o0 2>/dev/null | tr '\n' '|')"; show_err; }
ge $G -q --null -o o1 --from-file - <list0
[ "$RC" -eq 0 ] && diff -r o0 o1 >/dev/null && ok "--null --from-file - (stdin): the same outputs" ||
    { not_ok "--null from stdin: exit $RC"; show_err; }
usage "a NUL byte in a newline list" '^gpuedge: list0: line 1: a NUL byte .*use -0' \
    $G -o o2 --from-file list0
find l -name '*.png' -print0 >"$T/list0"
before=$(listing "$W")
"$GPUEDGE" $G -o o3 --from-file - <"$T/list0" >"$OUT" 2>"$ERR"
RC=$?
[ "$RC" -eq 2 ] && [ "$before" = "$(listing "$W")" ] && error_line '^gpuedge: -: line 1: a NUL byte' &&
    ok "find -print0 | --from-file - without -0: exit 2, nothing made (no name lost)" ||
    { not_ok "-print0 list on stdin without -0: exit $RC $WHY"; show_err; }
printf 'l/a.png\n\n\r\n#missing.png\nl/#d.png\n' >list1
ge $G -q -o o4 --from-file list1
[ "$RC" -eq 1 ] && grep -q '^gpuedge: #missing.png: cannot read image' "$ERR" && [ -s o4/a.png ] &&
    [ -s 'o4/#d.png' ] && [ "$(grep -c '^gpuedge: ' "$ERR")" -eq 1 ] &&
    ok "newline list: blank lines skipped, '#missing.png' and 'l/#d.png' are names (no comments)" ||
    { not_ok "blank lines and #: exit $RC"; show_err; }
usage "-0 without --from-file" '-0 \(--null\) applies to --from-file' $G -0 -o o5 l/a.png
usage "-0 in the single form" '-0 \(--null\) applies to --from-file' $G -0 l/a.png o5.png
rm -rf o0 o1 o4 l list0 list1

# ---- one stdout, one stdin
img=$SAMPLES/grey.png
usage "--hist - with OUTPUT -" '^gpuedge: -: standard output is named for OUTPUT and --hist' \
    $G --hist - "$img" -
usage "--hist - with --report-file -" 'standard output is named for --hist and --report-file' \
    $G --hist - --report-file - "$img" e.png
usage "OUTPUT - with --report-file -" 'standard output is named for OUTPUT and --report-file' \
    $G --report-file - "$img" -
if [ -f clip.mp4 ]; then
    usage "--hist - with a video on stdout (.y4m)" 'standard output is named for OUTPUT and --hist' \
        $G --hist - clip.mp4 -
fi
# /dev/stdout on a pipe is the same stream as '-'
"$GPUEDGE" $G --hist /dev/stdout "$img" - 2>"$ERR" | cat >"$T/piped"
[ ! -s "$T/piped" ] && error_line 'standard output is named for OUTPUT and --hist' &&
    ok "--hist /dev/stdout with OUTPUT - on a pipe: refused, nothing on the pipe" ||
    { not_ok "--hist /dev/stdout on a pipe: $WHY, $(wc -c <"$T/piped") bytes out"; show_err; }
# one output on stdout is fine
ge $G --hist h.csv "$img" -
[ "$RC" -eq 0 ] && [ -s "$OUT" ] && [ "$(nlines h.csv)" -eq 2 ] && ok "OUTPUT - with --hist FILE: allowed" ||
    { not_ok "OUTPUT - with --hist FILE: exit $RC"; show_err; }
rm -f h.csv
usage "'-' twice as input" 'standard input is named 2 times \(as inputs\)' $G -o o6 - - <"$img"
usage "--from-file - and '-' as input" 'standard input is named 2 times \(as --from-file.s list and as an input\)' \
    $G -o o6 --from-file - - <"$img"
printf -- '-\n-\n' >list2
usage "'-' twice in a list" 'standard input is named 2 times' $G -o o6 --from-file list2 <"$img"
rm -f list2

# one file for two outputs: the later commit would replace the other
usage "--hist naming OUTPUT's file" "^gpuedge: e\\.png: named for both --hist and .*grey\\.png's output" \
    $G --hist e.png "$img" e.png
usage "--hist and --report-file naming one file" 'h\.txt: named for both --hist and --report-file' \
    $G --hist h.txt --report-file h.txt "$img" e.png
usage "--hist naming a batch output" 'o8/grey\.png: named for both --hist' $G -o o8 --hist o8/grey.png "$img"
cp "$img" ex.png
exsum=$(sum_of ex.png)
usage "--hist ./ex.png with OUTPUT ex.png (-y)" 'named for both --hist' $G -y --hist ./ex.png "$img" ex.png
[ "$(sum_of ex.png)" = "$exsum" ] && ok "ex.png untouched" || not_ok "ex.png changed"
rm -f ex.png
ge $G -q --hist /dev/null --report-file /dev/null "$img" /dev/null
[ "$RC" -eq 0 ] && ok "--hist, --report-file and OUTPUT all /dev/null: allowed" ||
    { not_ok "/dev/null three times: exit $RC"; show_err; }

# ---- usage errors found after parsing end with the hint
usage "no extension" 'noext: no extension to choose the output format' $G "$img" noext
mkdir empty
usage "no input files (an empty directory)" 'no input files' $G -o o7 empty
usage "no input files (an empty list)" 'no input files' $G -o o7 --from-file /dev/null
if [ -f clip.mp4 ]; then
    usage "a video into an image" 'e\.png: a video input needs a video output' $G clip.mp4 e.png
    # --start: range-checked before conversion, never wrapped around
    usage "--start 1e13" "--start '1e13': expected seconds from 0 to 1e9" $G --start 1e13 clip.mp4 e.mkv
    fails "--start 1e9 on a 3 s clip: past the end" 1 'clip\.mp4' $G --start 1e9 clip.mp4 e.mkv
fi
usage "--start 1e300" "--start '1e300': expected seconds from 0 to 1e9" $G --start 1e300 "$img" e.png

finish
