#!/bin/sh
# Batch mode: gpuedge [OPTIONS] -o DIR INPUT...  (DESIGN.md §3, §6).
. "$(dirname "$0")/lib.sh"

G="--backend=cpu -q"
cp "$SAMPLES/photo.png" a.png
cp "$SAMPLES/grey.png" b.png
cp "$SAMPLES/odd_321x241.png" c.png

# names of DIR's entries, one line, sorted (hidden ones included)
names() { (cd "$1" && ls -A | LC_ALL=C sort | tr '\n' ' '); }

# ---- the plain case; outputs equal the single-file mode's, byte for byte
ge $G -o out a.png b.png
if [ "$RC" -eq 0 ] && [ ! -s "$ERR" ] && [ "$(names out)" = "a.png b.png " ]; then
    ok "-o out a.png b.png: out/a.png out/b.png, exit 0"
else
    not_ok "-o out a.png b.png: exit $RC, out holds: $(names out 2>&1)"
    show_err
fi
"$GPUEDGE" $G a.png single.png
cmp -s single.png out/a.png && ok "batch output == single-file output, byte for byte" ||
    not_ok "out/a.png differs from the single-file output"
rm -rf out single.png

# notes: one line per file and a summary (without -q)
ge --backend=cpu -o out a.png b.png
[ "$RC" -eq 0 ] && [ "$(grep -c ' -> out/.*: ok ([0-9]*x[0-9]*)$' "$ERR")" -eq 2 ] &&
    grep -q '2 files: 2 ok, 0 failed, 0 skipped' "$ERR" && [ "$(nlines "$ERR")" -eq 3 ] &&
    ok "batch notes: one per file and a summary" ||
    { not_ok "batch notes: exit $RC"; show_err; }
rm -rf out

# ---- a failed file does not stop the batch; the status is 1
: >bad.png
ge $G -o out a.png bad.png b.png
why=
[ "$RC" -eq 1 ] || why="exit $RC, expected 1"
error_line 'bad\.png: cannot read image: .+' || why="${why:+$why; }$WHY"
[ "$(names out)" = "a.png b.png " ] || why="${why:+$why; }out holds: $(names out)"
no_stray_files "$W" || why="${why:+$why; }$WHY"
[ -z "$why" ] && ok "a failed file: the others are written, exit 1, one line" ||
    { not_ok "failed file in a batch: $why"; show_err; }
rm -rf out bad.png

# ---- name collisions: exit 2 before any work, nothing written, DIR not made
mkdir d
cp a.png d/a.bmp
fails "collision a.png + d/a.bmp -> out/a.png" 2 'out/a\.png: several inputs would write this output' \
    $G -o out a.png b.png d/a.bmp
mkdir out
fails "collision with an existing DIR: nothing written in it" 2 'out/a\.png: several inputs' \
    $G -o out a.png d/a.bmp b.png
fails "the same input twice" 2 'out/b\.png: several inputs' $G -o out b.png b.png
rm -rf d out

# ---- --skip-existing; existing outputs without it; -y
mkdir out
printf 'keep\n' >out/a.png
sum=$(sum_of out/a.png)
ge $G -o out --skip-existing a.png b.png
[ "$RC" -eq 0 ] && [ ! -s "$ERR" ] && [ "$(sum_of out/a.png)" = "$sum" ] && [ -s out/b.png ] &&
    ok "--skip-existing: a.png skipped (untouched), b.png written, exit 0" ||
    { not_ok "--skip-existing: exit $RC"; show_err; }
ge --backend=cpu -o out --skip-existing a.png b.png c.png
grep -q 'a\.png: skipped (output out/a\.png exists)' "$ERR" &&
    grep -q '3 files: 1 ok, 0 failed, 2 skipped' "$ERR" &&
    ok "--skip-existing notes the skipped files" || { not_ok "--skip-existing notes"; show_err; }
rm -f out/b.png out/c.png
ge $G -o out a.png b.png
why=
[ "$RC" -eq 1 ] || why="exit $RC, expected 1"
error_line 'out/a\.png: output exists \(use -y' || why="${why:+$why; }$WHY"
[ "$(sum_of out/a.png)" = "$sum" ] || why="${why:+$why; }out/a.png modified"
[ -s out/b.png ] || why="${why:+$why; }out/b.png missing"
[ -z "$why" ] && ok "existing output without -y: that file fails (untouched), the rest is written" ||
    { not_ok "existing output in a batch: $why"; show_err; }
ge $G -y -o out a.png b.png
[ "$RC" -eq 0 ] && [ "$(sum_of out/a.png)" != "$sum" ] && ok "-y replaces existing outputs in a batch" ||
    { not_ok "-y in a batch: exit $RC"; show_err; }
rm -rf out

# ---- --from-file LIST, and "-" for stdin (blank lines skipped, CRLF ok)
printf 'a.png\n\nb.png\r\n' >list
ge $G -o out --from-file list
[ "$RC" -eq 0 ] && [ "$(names out)" = "a.png b.png " ] && ok "--from-file LIST" ||
    { not_ok "--from-file LIST: exit $RC, out holds: $(names out 2>&1)"; show_err; }
rm -rf out
printf 'b.png\nc.png\n' | "$GPUEDGE" $G -o out --from-file - >"$OUT" 2>"$ERR"
RC=$?
[ "$RC" -eq 0 ] && [ "$(names out)" = "b.png c.png " ] && ok "--from-file - (stdin)" ||
    { not_ok "--from-file -: exit $RC, out holds: $(names out 2>&1)"; show_err; }
rm -rf out
ge $G -o out --from-file list c.png
[ "$RC" -eq 0 ] && [ "$(names out)" = "a.png b.png c.png " ] && ok "--from-file plus INPUT operands" ||
    { not_ok "--from-file + operands: exit $RC, out holds: $(names out 2>&1)"; show_err; }
rm -rf out
fails "--from-file missing list" 1 'nolist: cannot open input list: No such file' \
    $G -o out --from-file nolist
fails "--from-file empty list" 2 'no input files' $G -o out --from-file /dev/null
rm -f list

# ---- a directory INPUT stands for its images (not recursive, sorted)
mkdir -p imgs/sub
cp a.png imgs/
cp b.png imgs/x.PNG
cp c.png imgs/sub/
cp a.png imgs/.hidden.png
printf 'not an image\n' >imgs/notes.txt
ge $G -o out imgs
[ "$RC" -eq 0 ] && [ "$(names out)" = "a.png x.png " ] &&
    ok "directory input: its images only (no subdirectory, hidden file or .txt)" ||
    { not_ok "directory input: exit $RC, out holds: $(names out 2>&1)"; show_err; }
rm -rf out
mkdir emptydir
fails "empty directory input" 2 'no input files' $G -o out emptydir
rm -rf imgs emptydir

# ---- --format
ge $G -o out --format pgm a.png b.png
[ "$RC" -eq 0 ] && [ "$(names out)" = "a.pgm b.pgm " ] && [ "$(head -c 2 out/a.pgm)" = P5 ] &&
    ok "--format pgm: out/a.pgm out/b.pgm, binary PGM" ||
    { not_ok "--format pgm: exit $RC, out holds: $(names out 2>&1)"; show_err; }
rm -rf out
for f in bmp tga jpg .jpeg; do
    ge $G -o out --format "$f" a.png
    [ "$RC" -eq 0 ] && [ -s "out/a.${f#.}" ] && ok "--format $f" ||
        { not_ok "--format $f: exit $RC, out holds: $(names out 2>&1)"; show_err; }
    rm -rf out
done

# ---- -o onto a file is a usage error
: >afile
fails "-o onto a regular file" 2 'afile: not a directory' $G -o afile a.png
rm -f afile

# ---- the output directory is created (one level), a missing parent is an error
ge $G -o newdir a.png
[ "$RC" -eq 0 ] && [ -s newdir/a.png ] && ok "-o creates a missing DIR" ||
    { not_ok "-o newdir: exit $RC"; show_err; }
rm -rf newdir
fails "-o with a missing parent" 1 'no/such/dir: cannot create output directory: No such file' \
    $G -o no/such/dir a.png

no_stray_files "$W" && ok "no temp or partial file anywhere" || not_ok "$WHY"
finish
