#!/bin/sh
# Bad inputs and unsafe outputs (DESIGN.md §3 errors, §6 never lose data): each
# gives its exit status, one "gpuedge: FILE: what: why" line, and leaves the
# directory as it was: no output, no temp file, nothing touched.
. "$(dirname "$0")/lib.sh"

G="--backend=cpu"
cp "$SAMPLES/photo.png" in.png

# ---- inputs that cannot be read
fails "missing input" 1 'nofile\.png: cannot read image: No such file' $G nofile.png out.png
: >empty.png
fails "empty file" 1 'empty\.png: cannot read image: .+' $G empty.png out.png
head -c 5000 "$SAMPLES/photo.png" >trunc.png
fails "truncated PNG" 1 'trunc\.png: cannot read image: .+' $G trunc.png out.png
head -c 100 "$SAMPLES/photo.png" >header_only.png
fails "PNG cut inside the header chunks" 1 'header_only\.png: cannot read image: .+' \
    $G header_only.png out.png
head -c 20000 /dev/urandom >random.png
fails "random bytes named .png" 1 'random\.png: cannot read image: .+' $G random.png out.png
printf 'P5\n3 3\n255\nab' >short.pgm
fails "PGM with too few pixels" 1 'short\.pgm: cannot read image: .+' $G short.pgm out.png
printf 'P5\n60000 60000\n255\nabc' >huge.pgm
fails "absurd dimensions (60000x60000 header)" 1 'huge\.pgm: cannot read image: .+' $G huge.pgm out.png
printf 'P5\n16000 16000\n255\nabc' >claims.pgm
fails "256 MP header, 3 bytes of pixels" 1 'claims\.pgm: cannot read image: .+' $G claims.pgm out.png
# stb's formats: cut after the header, or a bare header claiming 20000x20000
# (test_image_cut checks that no image of that size is allocated)
ge $G in.png edges.bmp
ge $G in.png edges.tga
for f in edges.bmp edges.tga; do
    n=$(wc -c <"$f")
    head -c $((n / 2)) "$f" >"cut_$f"
    fails "$f cut in half" 1 "cut_$f: cannot read image: file is truncated" $G "cut_$f" out.png
done
rm -f edges.bmp edges.tga cut_edges.bmp cut_edges.tga
printf '\000\000\002\000\000\000\000\000\000\000\000\000\040\116\040\116\030\000' >bomb.tga
printf 'BM\066\000\000\000\000\000\000\000\066\000\000\000\050\000\000\000\040\116\000\000\040\116\000\000\001\000\030\000' >bomb.bmp
head -c 24 /dev/zero >>bomb.bmp
for f in bomb.tga bomb.bmp; do
    fails "$f: a header claiming 20000x20000, no pixels" 1 "$f: cannot read image: file is truncated" \
        $G "$f" out.png
done
mkdir adir
fails "a directory as INPUT" 1 'adir: cannot read image: .+' $G adir out.png
if is_root; then
    skip "unreadable input: running as root, which reads anything"
else
    cp in.png locked.png && chmod 000 locked.png
    fails "unreadable input (mode 000)" 1 'locked\.png: cannot read image: Permission denied' \
        $G locked.png out.png
    chmod 644 locked.png && rm -f locked.png
fi

# ---- outputs that cannot be written
fails "unknown output extension" 2 "out\.xyz: unknown output format '\.xyz'" $G in.png out.xyz
fails "missing output directory" 1 'nodir/out\.png: cannot create output: No such file' \
    $G in.png nodir/out.png
[ ! -e nodir ] && ok "missing output directory is not created" || not_ok "nodir was created"
mkdir dir.png
fails "output is a directory" 1 'dir\.png: cannot create output: Is a directory' $G in.png dir.png
fails "output is a directory, trailing slash" 2 'adir/: no extension' $G in.png adir/
mkdir ro
if is_root; then
    skip "unwritable output directory: running as root, which writes anywhere"
else
    chmod 555 ro
    fails "unwritable output directory" 1 'ro/out\.png: cannot create output: Permission denied' \
        $G in.png ro/out.png
    chmod 755 ro
fi

# ---- output == input, whatever the path
sum=$(sum_of in.png)
fails "output == input (same path)" 1 'in\.png: output is the same file as an input' \
    $G in.png in.png
fails "output == input (./ prefix)" 1 '\./in\.png: output is the same file' $G in.png ./in.png
fails "output == input (absolute path)" 1 'output is the same file' $G in.png "$W/in.png"
fails "output == input (.. path)" 1 'output is the same file' $G in.png "../w/in.png"
ln -s in.png link.png
fails "output == input (symlink)" 1 'link\.png: output is the same file' $G in.png link.png
ln in.png hard.png
fails "output == input (hard link)" 1 'hard\.png: output is the same file' $G in.png hard.png
fails "output == input, even with -y" 1 'in\.png: output is the same file' $G -y in.png in.png
[ "$(sum_of in.png)" = "$sum" ] && [ -L link.png ] && [ "$(readlink link.png)" = in.png ] &&
    ok "input, symlink and hard link untouched" || not_ok "input or its links were modified"
rm -f link.png hard.png

# ---- an existing output: untouched without -y, replaced with it
printf 'keep me\n' >exists.png
sum=$(sum_of exists.png)
fails "existing output without -y" 1 'exists\.png: output exists \(use -y' $G in.png exists.png
[ "$(sum_of exists.png)" = "$sum" ] && ok "existing output untouched (same checksum)" ||
    not_ok "existing output was modified without -y"
ln -s nowhere dangling.png
fails "dangling symlink as output without -y" 1 'dangling\.png: output exists' \
    $G in.png dangling.png
rm -f dangling.png
ge $G -y in.png exists.png
if [ "$RC" -eq 0 ] && [ ! -s "$ERR" ] && [ "$(sum_of exists.png)" != "$sum" ] &&
    [ "$(head -c 4 exists.png | tail -c 3)" = PNG ] && no_stray_files "$W"; then
    ok "existing output with -y: replaced by a PNG, exit 0, no temp file"
else
    not_ok "existing output with -y: exit $RC ${WHY:-}"
    show_err
fi
rm -f exists.png
umask 027
ge $G in.png mode.png
umask 022
m=$(stat -c %a mode.png 2>/dev/null)
[ "$RC" -eq 0 ] && [ "$m" = 640 ] && ok "output mode is 0666 & ~umask (640 under umask 027)" ||
    not_ok "output mode $m under umask 027, expected 640 (exit $RC)"
rm -f mode.png

# ---- a full disk: ulimit -f makes writes fail with EFBIG (gpuedge ignores
# SIGXFSZ); the 600x400 BMP is 720 KB, the limit 100 blocks of 512 bytes.
before=$(listing "$W")
(ulimit -f 100 && exec "$GPUEDGE" $G in.png big.bmp) >"$OUT" 2>"$ERR"
RC=$?
why=
[ "$RC" -eq 1 ] || why="exit $RC, expected 1"
error_line 'big\.bmp: cannot write: File too large' || why="${why:+$why; }$WHY"
[ "$before" = "$(listing "$W")" ] || why="${why:+$why; }files changed: $(ls -A | tr '\n' ' ')"
[ -z "$why" ] && ok "write fails (file size limit): exit 1, one line, no output, no temp" ||
    { not_ok "file size limit: $why"; show_err; }

(ulimit -f 100 && exec "$GPUEDGE" $G --keep-partial in.png big.bmp) >"$OUT" 2>"$ERR"
RC=$?
why=
[ "$RC" -eq 1 ] || why="exit $RC, expected 1"
[ "$(grep -c '^gpuedge: big\.bmp: cannot write: File too large' "$ERR")" -eq 1 ] ||
    why="${why:+$why; }no single 'cannot write' line"
grep -q 'partial output kept as big\.partial\.bmp' "$ERR" || why="${why:+$why; }no note naming the partial file"
[ "$(nlines "$ERR")" -eq 2 ] || why="${why:+$why; }$(nlines "$ERR") lines on stderr, expected 2"
[ -e big.bmp ] && why="${why:+$why; }big.bmp exists"
[ -s big.partial.bmp ] || why="${why:+$why; }no big.partial.bmp"
[ -z "$(find . -name '.*.tmp')" ] || why="${why:+$why; }temp file left"
[ -z "$why" ] && ok "--keep-partial on a failed write: big.partial.bmp kept, nothing under big.bmp" ||
    { not_ok "--keep-partial: $why"; show_err; }
rm -f big.partial.bmp

# ---- outputs that are not regular files are written in place
ge $G in.png /dev/null
[ "$RC" -eq 0 ] && [ ! -s "$ERR" ] && [ -c /dev/null ] && ok "/dev/null as output: exit 0, still a device" ||
    { not_ok "/dev/null as output: exit $RC"; show_err; }
if [ -c /dev/full ]; then
    fails "/dev/full as output (ENOSPC)" 1 '/dev/full: cannot write: No space left' $G in.png /dev/full
    [ -c /dev/full ] && ok "/dev/full is still a device" || not_ok "/dev/full was replaced"
else
    skip "/dev/full as output: no /dev/full"
fi
ge $G in.png - >/dev/null
if [ "$RC" -eq 0 ] && [ "$(head -c 2 "$OUT")" = P5 ] && [ ! -s "$ERR" ]; then
    ok "'-' as output: a PGM on stdout"
else
    not_ok "'-' as output: exit $RC, starts with '$(head -c 2 "$OUT")'"
fi
# a reader that goes away: EPIPE (SIGPIPE is ignored), one line, exit 1
{
    "$GPUEDGE" $G in.png - 2>"$ERR"
    echo $? >"$T/rc"
} | head -c 10 >/dev/null
RC=$(cat "$T/rc")
error_line '^gpuedge: standard output: cannot write: Broken pipe' && [ "$RC" -eq 1 ] &&
    ok "stdout closed early: exit 1, one 'Broken pipe' line" ||
    { not_ok "stdout closed early: exit $RC; ${WHY:-}"; show_err; }
"$GPUEDGE" $G - stdin.png <in.png >"$OUT" 2>"$ERR"
RC=$?
[ "$RC" -eq 0 ] && [ ! -s "$ERR" ] && [ -s stdin.png ] && ok "'-' as input: reads standard input" ||
    { not_ok "'-' as input: exit $RC"; show_err; }
rm -f stdin.png
if command -v mkfifo >/dev/null 2>&1; then
    mkfifo fifo
    cat fifo >"$T/fifo.out" &
    catpid=$!
    ge $G in.png fifo
    wait $catpid
    [ "$RC" -eq 0 ] && [ -p fifo ] && [ "$(head -c 2 "$T/fifo.out")" = P5 ] &&
        ok "named pipe as output: written in place (PGM), still a FIFO" ||
        { not_ok "named pipe as output: exit $RC"; show_err; }
    rm -f fifo
fi
no_stray_files "$W" && ok "no temp or partial file anywhere" || not_ok "$WHY"

finish
