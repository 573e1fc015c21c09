#!/bin/sh
# docs/scale-out.md's GNU parallel recipe, run as written (the lines after its
# "recipe: parallel" marker), with Debian's `parallel`: the batch is shared
# out over several runs, the outputs are complete and equal one run's, and
# after a run killed midway the same command redoes only what is missing.
. "$(dirname "$0")/lib.sh"

if ! command -v parallel >/dev/null 2>&1 || ! parallel --version 2>/dev/null | grep -q 'GNU parallel'; then
    skip "GNU parallel recipe: GNU parallel not installed (Debian package parallel; make deps)"
    finish
fi
if ! command -v ffmpeg >/dev/null 2>&1; then
    skip "GNU parallel recipe: ffmpeg not installed"
    finish
fi

# the recipe, as docs/scale-out.md has it
awk '/<!-- recipe: parallel/ { on = 1; next } on && /^    / { sub(/^    /, ""); print; next }
     on { exit }' "$ROOT/docs/scale-out.md" >recipe.sh
if ! grep -q 'parallel' recipe.sh; then
    not_ok "no GNU parallel recipe found in docs/scale-out.md"
    finish
fi

# gpuedge on PATH for the recipe: a wrapper that logs each run's file count
mkdir bin
cat >bin/gpuedge <<EOF
#!/bin/sh
n=0
for a in "\$@"; do case \$a in in/*) n=\$((n + 1)) ;; esac; done
echo "\$n" >>"$T/runs.log"
exec "$GPUEDGE" --backend=cpu "\$@"
EOF
chmod +x bin/gpuedge
PATH=$W/bin:$PATH
export PATH

mkdir in
for i in 0 1 2 3 4 5 6 7; do
    cp "$SAMPLES/photo.png" "in/p$i.png"
done
cp "$SAMPLES/grey.png" in/g.png
cp "$SAMPLES/odd_321x241.png" "in/odd name.png" # a space: -print0 / -0
ffmpeg -nostdin -v error -y -f lavfi -i "testsrc=size=400x300:rate=25" -frames:v 600 \
    -pix_fmt yuv420p in/long.mp4 </dev/null || not_ok "making in/long.mp4"
NIN=$(ls in | wc -l | tr -d ' ')

# the reference: one run over everything
"$GPUEDGE" --backend=cpu -q -o ref in/ || not_ok "reference run"

sh recipe.sh >"$OUT" 2>"$ERR"
RC=$?
runs=$(wc -l <"$T/runs.log" | tr -d ' ')
files=$(awk '{ s += $1 } END { print s + 0 }' "$T/runs.log")
why=
[ "$RC" -eq 0 ] || why="exit $RC"
diff -r ref out >/dev/null 2>&1 || why="${why:+$why; }outputs differ from one run's"
[ "$files" -eq "$NIN" ] || why="${why:+$why; }the runs got $files files, expected $NIN"
[ "$runs" -ge 2 ] || why="${why:+$why; }one run only: the recipe does not share the batch out"
no_stray_files "$W" || why="${why:+$why; }$WHY"
[ -z "$why" ] && ok "GNU parallel recipe: $NIN files over $runs runs, outputs equal one run's" ||
    { not_ok "GNU parallel recipe: $why"; show_err; }

# killed midway: SIGTERM to the run that has the video, once its temp
# output exists; then the same command completes the batch
rm -rf out "$T/runs.log"
sh recipe.sh >"$OUT" 2>"$ERR" &
BGPID=$!
killed=
i=0
while [ $i -lt 400 ]; do
    if ls out/.long.mkv.*.tmp >/dev/null 2>&1 ||
        ls -l /proc/[0-9]*/fd 2>/dev/null | grep -qF "$(pwd -P)/out/#"; then
        # our own gpuedge: the one whose arguments name in/long.mp4
        for f in $(grep -lsxz 'in/long.mp4' /proc/[0-9]*/cmdline); do
            p=${f#/proc/}
            p=${p%/cmdline}
            first=$({ tr '\0' '\n' <"$f" | head -n 1; } 2>/dev/null)
            if [ "$first" = "$GPUEDGE" ] && kill -TERM "$p" 2>/dev/null; then
                killed=$p
                break
            fi
        done
        [ -n "$killed" ] && break
    fi
    sleep 0.05
    i=$((i + 1))
done
wait "$BGPID"
RC=$?
BGPID=
if [ -z "$killed" ]; then
    skip "GNU parallel, killed run: the video's run finished before it could be killed"
else
    why=
    [ "$RC" -ne 0 ] || why="the killed run's parallel exited 0"
    [ ! -e out/long.mkv ] || why="${why:+$why; }out/long.mkv exists after the kill"
    no_stray_files "$W" || why="${why:+$why; }$WHY"
    [ -z "$why" ] && ok "GNU parallel: a run killed midway leaves no output and no temp file" ||
        { not_ok "killed run: $why"; show_err; }
    find out -type f -printf '%i %T@ %s %p\n' | LC_ALL=C sort >before
    sh recipe.sh >"$OUT" 2>"$ERR"
    RC=$?
    find out -type f -printf '%i %T@ %s %p\n' | LC_ALL=C sort >after
    why=
    [ "$RC" -eq 0 ] || why="exit $RC"
    diff -r ref out >/dev/null 2>&1 || why="${why:+$why; }outputs differ from one run's"
    # what the killed run had written stays as it was (same inode, time)
    [ -s before ] && [ -z "$(grep -vxF -f after before)" ] ||
        why="${why:+$why; }outputs of the first run were rewritten"
    [ "$(nlines after)" -gt "$(nlines before)" ] || why="${why:+$why; }nothing was left to redo"
    [ -z "$why" ] || { echo "# before:"; sed 's/^/#   /' before; echo "# after:"; sed 's/^/#   /' after; }
    [ -z "$why" ] && ok "GNU parallel: the same command again redoes only what is missing (--skip-existing)" ||
        { not_ok "rerun after the kill: $why"; show_err; }
fi

finish
