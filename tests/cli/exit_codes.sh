#!/bin/sh
# Exit statuses (DESIGN.md §3): 0 success, 1 runtime failure, 2 usage error;
# --help and --version.  Every usage error is one "gpuedge: ..." line plus
# the "Try 'gpuedge --help'" hint, and leaves no file behind.
. "$(dirname "$0")/lib.sh"

cp "$SAMPLES/photo.png" in.png

# ---- 0
ge --backend=cpu in.png out.png
if [ "$RC" -eq 0 ] && [ ! -s "$ERR" ] && [ -s out.png ] && no_stray_files "$W"; then
    ok "success: exit 0, silent, out.png written"
else
    not_ok "success: exit $RC, stderr $(nlines "$ERR") lines, out.png $(ls out.png 2>&1) ${WHY:-}"
    show_err
fi
rm -f out.png

# ---- 2: usage errors (nothing is read or written)
fails "no arguments" 2 'missing INPUT or OUTPUT'
fails "one argument" 2 'missing INPUT or OUTPUT' in.png
fails "three arguments" 2 'too many arguments' in.png a.png b.png
fails "unknown long option" 2 "unknown option '--bogus'" --bogus in.png out.png
fails "unknown short option" 2 "unknown option '-Z'" -Z in.png out.png
fails "unknown short option in a cluster" 2 "unknown option '-Z'" -qZy in.png out.png
fails "missing option argument (long)" 2 "option '--sigma' needs an argument" in.png out.png --sigma
fails "missing option argument (short)" 2 "option '-o' needs an argument" in.png out.png -o
fails "argument to a flag" 2 "option '--invert=1' takes no argument" --invert=1 in.png out.png
fails "argument to a lettered flag" 2 "option '--overwrite=1' takes no argument" --overwrite=1 in.png out.png
for s in 0.05 17 abc nan inf -1 '' 1x; do
    fails "--sigma '$s'" 2 "--sigma '$s': expected" --sigma "$s" in.png out.png
done
fails "--sigma=16.5" 2 "--sigma '16.5'" --sigma=16.5 in.png out.png
fails "--border diagonal" 2 "--border 'diagonal': expected" --border diagonal in.png out.png
for s in 0 -1 abc nan 1e39; do
    fails "--scale '$s'" 2 "--scale '$s'" --scale "$s" in.png out.png
done
for s in 256 -1 abc; do
    fails "--threshold '$s'" 2 "--threshold '$s': expected" --threshold "$s" in.png out.png
done
fails "--backend quantum" 2 "--backend 'quantum'" --backend quantum in.png out.png
fails "--report=xml" 2 '--report=xml: expected text or json' --report=xml in.png out.png
fails "--cpu-ref=0" 2 '--cpu-ref=0: expected' --cpu-ref=0 in.png out.png
fails "--threads -1" 2 "--threads '-1'" --threads -1 in.png out.png
fails "--device x" 2 "--device 'x'" --device x in.png out.png
fails "--format xyz" 2 "--format 'xyz'" -o outdir --format xyz in.png
fails "-q with -v" 2 '-q and -v contradict' -q -v in.png out.png
fails "--format without -o" 2 '--format applies to -o DIR' --format pgm in.png out.png
fails "--skip-existing without -o" 2 '--skip-existing applies to -o DIR' --skip-existing in.png out.png
fails "--from-file without -o" 2 '--from-file needs -o DIR' --from-file list in.png out.png
fails "-o without inputs" 2 '-o DIR needs at least one INPUT' -o outdir
fails "unknown output extension .xyz" 2 "out\.xyz: unknown output format '\.xyz'" in.png out.xyz
fails "output without extension" 2 'out: no extension' in.png out
fails "unknown output extension, missing input" 2 "out\.xyz: unknown output format" missing.png out.xyz
fails "--frames 0" 2 "--frames '0': expected a positive number" --frames 0 in.png out.png
fails "--start -1" 2 "--start '-1': expected seconds from 0 to 1e9" --start -1 in.png out.png
fails "video input to an image output" 2 "a video input needs a video output" in.mkv out.png
fails "--mem-limit bad size" 2 "--mem-limit '12Q'" --mem-limit 12Q in.png out.png

# ---- 1: runtime failure
fails "missing input" 1 'missing\.png: cannot read image: No such file or directory' \
    --backend=cpu missing.png out.png

# ---- --help: stdout, exit 0, nothing on stderr; -h the same text
ge --help
if [ "$RC" -eq 0 ] && [ ! -s "$ERR" ] && head -n 1 "$OUT" | grep -q '^Usage: gpuedge ' &&
    grep -q -- '--sigma' "$OUT" && grep -q 'Exit status' "$OUT"; then
    ok "--help: usage on stdout, exit 0, stderr empty"
else
    not_ok "--help: exit $RC, stderr $(nlines "$ERR") lines, stdout starts '$(head -n 1 "$OUT")'"
fi
cp "$OUT" "$T/help.txt"
ge -h
if [ "$RC" -eq 0 ] && [ ! -s "$ERR" ] && cmp -s "$OUT" "$T/help.txt"; then
    ok "-h: same as --help"
else
    not_ok "-h: exit $RC or text differs from --help"
fi
ge --help --bogus-after-help
if [ "$RC" -eq 0 ] && [ ! -s "$ERR" ] && cmp -s "$OUT" "$T/help.txt"; then
    ok "--help wins over a later bad option"
else
    not_ok "--help then --bogus: exit $RC"
    show_err
fi
[ -z "$(find "$W" -newer "$T/help.txt" ! -path "$W")" ] &&
    ok "--help writes no file" || not_ok "--help wrote files"

# ---- --version
ge --version
if [ "$RC" -eq 0 ] && [ ! -s "$ERR" ] && head -n 1 "$OUT" | grep -q '^gpuedge [0-9]' &&
    grep -q 'libavformat' "$OUT" && grep -q 'CUDA' "$OUT" && grep -q 'stb' "$OUT" &&
    { grep -q '^  GPU' "$OUT" || { no_cuda && grep -q '^  CUDA  *none: built without CUDA' "$OUT"; }; }; then
    ok "--version: gpuedge, libavformat, stb, CUDA, GPU (or built without CUDA) lines; exit 0"
else
    not_ok "--version: exit $RC; stdout: $(tr '\n' '|' <"$OUT")"
    show_err
fi
ge -V
expect_rc "-V" 0

# ---- option spellings the man page promises
ge --backend=cpu --sigma=2 --border=reflect_101 --scale 2.5 --threshold=40 --invert \
    -q in.png out.png
[ "$RC" -eq 0 ] && [ -s out.png ] && ok "'=' and separate-word option arguments" ||
    { not_ok "option spellings: exit $RC"; show_err; }
rm -f out.png
ge --backend=cpu --sig 2 --bord zero in.png out.png
[ "$RC" -eq 0 ] && [ -s out.png ] && ok "unambiguous abbreviations (--sig, --bord)" ||
    { not_ok "abbreviations: exit $RC"; show_err; }
rm -f out.png
fails "ambiguous abbreviation --re" 2 "ambiguous option '--re'" --re in.png out.png
ge --backend=cpu in.png out.png --sigma 0
[ "$RC" -eq 0 ] && [ -s out.png ] && ok "options after the operands" ||
    { not_ok "options after operands: exit $RC"; show_err; }
rm -f out.png

finish
