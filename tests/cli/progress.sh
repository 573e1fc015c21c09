#!/bin/sh
# The progress line (DESIGN.md §3), on a pseudo-terminal of a set width
# (tests/cli/pty_progress.py): never wider than the terminal less a column
# (UTF-8 names counted in columns), at widths 20, 40 and 80 and after a
# SIGWINCH to a narrower one; "[i/N]" in a batch; no rate before it means
# something; messages never glued to it, nothing left standing at the end.
# Off the terminal: plain lines with --progress, nothing without.  The video
# is a YUV4MPEG2 clip written into a FIFO at a set pace, so that the line is
# redrawn while the test watches (about 10 s in all, no ffmpeg, no GPU).
. "$(dirname "$0")/lib.sh"

if ! have_python || ! python3 -c 'import pty; pty.openpty()' 2>/dev/null; then
    skip "progress: no python3 or no pseudo-terminal"
    finish
fi
if ! command -v mkfifo >/dev/null 2>&1; then
    skip "progress: no mkfifo"
    finish
fi

PP=$ROOT/tests/cli/pty_progress.py
G="--backend=cpu"
LONG="ph-日本語-très-long-nom-de-fichier-pour-voir-la-coupe.png"
FIFO="f-vidéo-日本語-un-nom-assez-long.y4m"
cp "$SAMPLES/grey.png" grey.png
cp "$SAMPLES/photo.png" "$LONG"
cp "$SAMPLES/odd_321x241.png" odd.png
python3 "$PP" y4m v.y4m 30 || { not_ok "cannot write the test clip"; finish; }

# tty COLS NAME [pty_progress.py run options]: the batch (the FIFO is the
# 4th of 5) on a pty COLS wide; the redraws in $T/NAME.lines
tty() {
    cols=$1 name=$2
    shift 2
    rm -rf out "$FIFO"
    mkfifo "$FIFO"
    python3 "$PP" run "$cols" "$T/$name" --fifo "$FIFO" "$@" -- "$GPUEDGE" $G --progress \
        -o out grey.png "$LONG" v.y4m "$FIFO" odd.png
    RC=$?
    python3 "$PP" lines "$T/$name" >"$T/$name.lines"
}

for w in 20 40 80; do
    tty $w w$w --frames 8
    why=
    [ "$RC" -eq 0 ] || why="exit $RC"
    bad=$(python3 "$PP" check $w "$T/w$w") || why="$why $bad"
    n=$(grep -c 'frame' "$T/w$w.lines")
    [ "$n" -ge 3 ] || why="$why; $n redraws of the video"
    grep -q '\[4/5\] ' "$T/w$w.lines" || why="$why; no [4/5] for the video"
    [ $w -lt 40 ] || grep -q '\[[0-9]/5\] .*png' "$T/w$w.lines" || why="$why; no [i/5] for an image"
    [ -z "$why" ] && ok "width $w: $n redraws, none wider than $((w - 1)) columns, [i/N], no glued message" ||
        { not_ok "width $w:$why"; head -c 3000 "$T/w$w.lines"; }
done

# the rate: not at frame 2 (0.35 s into the file), then shown (80 columns)
why=
grep -q '\[4/5\] .*: frame 2$' "$T/w80.lines" || why="no bare 'frame 2' line"
grep -q '\[4/5\] .*: frame [0-9]*, [0-9.]* fps$' "$T/w80.lines" || why="$why; no rate later"
! grep 'v\.y4m' "$T/w80.lines" | grep -q fps || why="$why; a rate for v.y4m (30 frames in well under 0.5 s)"
[ -z "$why" ] && ok "no rate before 0.5 s of a file, then one" ||
    { not_ok "rate: $why"; cat "$T/w80.lines"; }

# a long UTF-8 name is shortened in its middle, its end kept
grep -q '^\[4/5\] f-vid[^ ]*\.\.\.[^ ]*-long\.y4m: frame' "$T/w40.lines" &&
    ! grep -q "$FIFO" "$T/w40.lines" &&
    ok "a long UTF-8 name is cut in the middle at 40 columns" ||
    { not_ok "no long name cut in the middle"; cat "$T/w40.lines"; }

# a hostile name (escape, CR, LF, tab, a C1 CSI, a bidi override, bytes that
# are no UTF-8) at small widths: shown with '?', never wider
HOSTILE=$(printf 'a\033[31m\r\n\tb\302\233c\342\200\256日本語\377\376-long-name-to-cut.png')
cp "$SAMPLES/grey.png" "$HOSTILE"
why=
for w in 2 5 12 30 60; do
    rm -rf out
    python3 "$PP" run $w "$T/h$w" -- "$GPUEDGE" $G --progress -q -o out "$HOSTILE" v.y4m ||
        why="$why; $w: exit $?"
    bad=$(python3 "$PP" check $w "$T/h$w") || why="$why; $w: $bad"
    python3 "$PP" lines "$T/h$w" | LC_ALL=C grep -q '[[:cntrl:]]' && why="$why; $w: a control character"
done
python3 "$PP" lines "$T/h60" | grep -q '^gpuedge: \[1/2\] a?\[31m???b?c?' ||
    why="$why; 60: not as expected"
[ -z "$why" ] && ok "a hostile name at widths 2 to 60: '?' for control characters, never wider" ||
    { not_ok "hostile name:$why"; python3 "$PP" lines "$T/h60"; }
rm -f "$HOSTILE"

# SIGWINCH: 40 columns, then 20: every redraw after the resize fits 20
tty 40 winch --frames 3,8 --resize 20
mark=$(cat "$T/winch.mark" 2>/dev/null || echo 0)
python3 "$PP" lines "$T/winch" "$mark" >"$T/after.lines"
n=$(grep -c 'frame' "$T/after.lines")
why=
[ "$RC" -eq 0 ] || why="exit $RC"
[ "$mark" -gt 0 ] || why="$why; no mark"
[ "$n" -ge 2 ] || why="$why; $n redraws after the resize"
bad=$(python3 "$PP" check 20 "$T/winch" "$mark") || why="$why $bad"
grep -q 'f-vid' "$T/winch.lines" || why="$why; the name was not shown at 40 columns"
[ -z "$why" ] && ok "SIGWINCH to 20 columns: the $n redraws after it fit" ||
    { not_ok "SIGWINCH:$why"; cat "$T/winch.lines"; }

# a SIGWINCH after a SIGINT is no second signal: the run stops with 130
tty 40 intr --frames 3,5 --interrupt 1
[ "$RC" -eq 130 ] && grep -q 'interrupted by SIGINT' "$T/intr" &&
    ok "SIGINT then SIGWINCH: exit 130, not cut short" ||
    { not_ok "SIGINT then SIGWINCH: exit $RC"; head -c 1000 "$T/intr"; }

# -q or --no-progress on the terminal: no progress line
rm -rf out
python3 "$PP" run 80 "$T/quiet" -- "$GPUEDGE" $G -q -o out grey.png v.y4m odd.png
RC=$?
[ "$RC" -eq 0 ] && [ ! -s "$T/quiet" ] && ok "-q on a terminal: nothing" ||
    not_ok "-q on a terminal: exit $RC: $(head -c 300 "$T/quiet")"
rm -rf out
python3 "$PP" run 80 "$T/nop" -- "$GPUEDGE" $G --no-progress -o out grey.png v.y4m odd.png
RC=$?
[ "$RC" -eq 0 ] && ! grep -q 'frame [0-9]*/' "$T/nop" && ! grep -q '\[1/3\]' "$T/nop" &&
    grep -q 'v\.y4m -> out/v\.mkv: ok' "$T/nop" &&
    ok "--no-progress on a terminal: the notes only" ||
    not_ok "--no-progress on a terminal: exit $RC: $(head -c 300 "$T/nop")"

# stderr a file: nothing without --progress; plain lines with it
rm -rf out
ge $G -o out grey.png v.y4m odd.png
why=
[ "$RC" -eq 0 ] || why="exit $RC"
! grep -q "$(printf '\r')" "$ERR" || why="$why; a carriage return"
! grep -q 'frame [0-9]*/\|\[[0-9]/3\]' "$ERR" || why="$why; a progress line"
[ "$(grep -c -- ' -> out/' "$ERR")" -eq 3 ] || why="$why; not the 3 notes"
[ -z "$why" ] && ok "stderr not a terminal: no progress" || { not_ok "no terminal:$why"; show_err; }
rm -rf out
ge $G -q --progress -o out grey.png v.y4m odd.png
why=
[ "$RC" -eq 0 ] || why="exit $RC"
! grep -q "$(printf '\r\|\033')" "$ERR" || why="$why; a carriage return or an escape"
# (a rate shows once the video ran 0.5 s: a loaded machine)
grep -q '^gpuedge: \[2/3\] v\.y4m: frame 30/30, \([0-9.]* fps, \)\?done in [0-9.]* s$' "$ERR" ||
    why="$why; no last line for v.y4m"
grep -q '^gpuedge: \[1/3\] grey\.png$' "$ERR" || why="$why; no line for grey.png"
[ -z "$why" ] && ok "--progress, stderr a file: plain lines, a last one per video" ||
    { not_ok "--progress to a file:$why"; show_err; }

finish
