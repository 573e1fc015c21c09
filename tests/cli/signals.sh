#!/bin/sh
# Signals during a large image (DESIGN.md §6): SIGINT, SIGTERM and every other
# signal whose default is to terminate (SIGHUP, SIGQUIT, SIGUSR1/2, SIGALRM, a
# real-time one) exit 128 + N with one line, no output under the final name,
# no temp file; --keep-partial keeps NAME.partial.EXT instead.  A signal the
# parent left ignored stays ignored.  SIGKILL leaves nothing where the
# filesystem has O_TMPFILE; a temp file an earlier run left is named.
#
# A non-interactive shell starts `cmd &` with SIGINT and SIGQUIT ignored, and
# gpuedge keeps what it inherits: the runs that get those signals start under
# env --default-signal.
#
# Timing without guesswork: gpuedge blocks SIGINT and SIGTERM in sig_init()
# before anything else, so the test waits until /proc/PID/status shows them
# blocked (a signal sent earlier would hit a process that has not set up its
# handling yet), then lets it work a moment.  The "during the write" cases
# wait for the temp file to appear instead.  Every wait has a deadline, and
# a gpuedge that does not stop is killed and reported, so the script cannot
# hang, also under ASan (about 3x slower).
. "$(dirname "$0")/lib.sh"

if [ ! -r /proc/self/status ]; then
    skip "signals: no /proc to see when gpuedge is ready"
    finish
fi

# An 8000x8000 grey PGM (64 MB of noise; read by stb): with --sigma 16 and
# one thread it takes seconds, so a signal always lands mid-work.
{ printf 'P5\n8000 8000\n255\n' && head -c 64000000 /dev/urandom; } >big.pgm
# 4000x4000, for the runs caught while writing.  The writer is quicker
# than a poll of the temp file can catch reliably, so those runs use the
# test build, whose finished image waits in its temp file before the
# commit until the signal comes (GPUEDGE_HOLD_WRITE_MS, src/cli/hooks.c).
{ printf 'P5\n4000 4000\n255\n' && head -c 16000000 /dev/urandom; } >mid.pgm
HOOKS=${TESTBIN:-tests/bin}/gpuedge_hooks
case $HOOKS in /*) ;; *) HOOKS=$ROOT/$HOOKS ;; esac
if [ ! -x "$HOOKS" ]; then
    not_ok "signals: no test build at $HOOKS (make builds it with the unit tests)"
    finish
fi
# hold / nohold: the next start()s run the test build holding its write
# (at most a minute), or the release binary
hold() { BIN=$HOOKS HOLD=GPUEDGE_HOLD_WRITE_MS=60000; }
nohold() { BIN=$GPUEDGE HOLD=GPUEDGE_HOLD_WRITE_MS=0; }
nohold

if ! env --default-signal=INT true 2>/dev/null; then
    skip "signals: env has no --default-signal (coreutils 8.31) to undo the shell's SIG_IGN"
    finish
fi

alive() { our_child_alive "$1"; }

# Has PID (the main thread) SIGINT (bit 0x2) and SIGTERM (bit 0x4000) blocked?
sigs_blocked() {
    m=$(sed -n 's/^SigBlk:[[:space:]]*//p' "/proc/$1/status" 2>/dev/null)
    [ ${#m} -ge 4 ] || return 1
    last=${m#"${m%?}"}
    fourth=${m#"${m%????}"}
    fourth=${fourth%???}
    case $last in [2367abefABEF]) ;; *) return 1 ;; esac
    case $fourth in [4567cdefCDEF]) ;; *) return 1 ;; esac
}

# wait_for TENTHS COMMAND...: polls every 0.05 s until COMMAND succeeds or
# the background gpuedge has exited; 1 on timeout or exit.
wait_for() {
    n=$(($1 * 2))
    shift
    while [ "$n" -gt 0 ]; do
        "$@" && return 0
        alive "$BGPID" || return 1
        sleep 0.05
        n=$((n - 1))
    done
    return 1
}

# Is the output being written: a named temp file, or the background
# gpuedge holding an unnamed one (O_TMPFILE: "DIR/#INODE (deleted)")?
temp_exists() {
    [ -n "$(find . -maxdepth 1 -name '.out.png.*.tmp' -print)" ] || anon_open
}
anon_open() {
    ls -l "/proc/$BGPID/fd" 2>/dev/null | grep -q "/#[0-9]* (deleted)\$"
}

# stop SIGNAL: sends it to the background gpuedge, waits (at most 60 s) and
# sets RC; a gpuedge still running then is killed and RC is 999.
stop() {
    alive "$BGPID" && kill "-$1" "$BGPID"
    n=1200
    while alive "$BGPID" && [ "$n" -gt 0 ]; do
        sleep 0.05
        n=$((n - 1))
    done
    if alive "$BGPID"; then
        kill -KILL "$BGPID"
        wait "$BGPID"
        RC=999
    else
        wait "$BGPID"
        RC=$?
    fi
    BGPID=
}

start() {
    env --default-signal=INT,QUIT "$HOLD" "$BIN" "$@" >"$OUT" 2>"$ERR" &
    BGPID=$!
}

# verdict NAME RC PATTERN [partial]: the usual checks after an interruption.
verdict() {
    why=
    [ "$RC" -eq "$2" ] || why="exit $RC, expected $2"
    if [ "${4:-}" = partial ]; then
        grep -q 'partial output kept as out\.partial\.png' "$ERR" ||
            why="${why:+$why; }no note about out.partial.png"
        [ "$(grep -c "$3" "$ERR")" -eq 1 ] || why="${why:+$why; }no single /$3/ line"
        [ "$(nlines "$ERR")" -eq 2 ] || why="${why:+$why; }$(nlines "$ERR") lines on stderr, expected 2"
        [ -f out.partial.png ] || why="${why:+$why; }no out.partial.png"
        rm -f out.partial.png
    else
        error_line "$3" || why="${why:+$why; }$WHY"
    fi
    [ -e out.png ] && why="${why:+$why; }out.png exists"
    no_stray_files "$W" || why="${why:+$why; }$WHY"
    if [ -z "$why" ]; then
        ok "$1 (exit $RC, one line, no output, no temp file)"
    else
        not_ok "$1: $why"
        show_err
    fi
    rm -f out.png out.partial.png
}

run_case() { # NAME SIGNAL RC PATTERN WAIT-FOR [partial] -- gpuedge args after "--"
    name=$1 sig=$2 want=$3 pat=$4 what=$5 partial=$6
    shift 7
    start "$@"
    if [ "$what" = temp ]; then
        wait_for 600 temp_exists || { not_ok "$name: no temp file appeared (gpuedge exited?)"; stop KILL; return; }
    else
        wait_for 600 sigs_blocked "$BGPID" || { not_ok "$name: gpuedge never blocked SIGINT/SIGTERM"; stop KILL; return; }
        sleep 0.3
    fi
    if ! alive "$BGPID"; then
        not_ok "$name: gpuedge finished before the signal (make the image bigger)"
        wait "$BGPID"
        BGPID=
        rm -f out.png
        return
    fi
    stop "$sig"
    if [ "$RC" -eq 999 ]; then
        not_ok "$name: gpuedge did not stop within 60 s of SIG$sig (killed)"
        return
    fi
    verdict "$name" "$want" "$pat" "$partial"
}

CPU="--backend=cpu --threads 1"
run_case "SIGINT while computing" INT 130 'interrupted by SIGINT' ready - \
    -- $CPU --sigma 16 big.pgm out.png
run_case "SIGTERM while computing" TERM 143 'interrupted by SIGTERM' ready - \
    -- $CPU --sigma 16 big.pgm out.png
hold
run_case "SIGTERM while writing" TERM 143 'interrupted by SIGTERM' temp - \
    -- $CPU mid.pgm out.png
run_case "SIGINT while writing, --keep-partial" INT 130 '^gpuedge: interrupted by SIGINT' temp partial \
    -- $CPU --keep-partial mid.pgm out.png
nohold
# 35: SIGRTMIN+1 under glibc (which keeps 32 and 33 for itself)
for s in HUP:129:HUP QUIT:131:QUIT USR1:138:USR1 USR2:140:USR2 ALRM:142:ALRM 35:163:RTMIN+1; do
    sig=${s%%:*} rc=${s#*:} name=${s##*:}
    rc=${rc%:*}
    run_case "SIG$name while computing" "$sig" "$rc" "interrupted by SIG${name%+1}" ready - \
        -- $CPU --sigma 16 big.pgm out.png
done
hold
run_case "SIGHUP while writing" HUP 129 'interrupted by SIGHUP' temp - \
    -- $CPU mid.pgm out.png
run_case "SIGUSR1 while writing, --keep-partial" USR1 138 '^gpuedge: interrupted by SIGUSR1' temp partial \
    -- $CPU --keep-partial mid.pgm out.png
nohold

# --hist's file is an output like the others
start $CPU --sigma 16 --hist h.csv big.pgm out.png
if wait_for 600 sigs_blocked "$BGPID" && sleep 0.3 && alive "$BGPID"; then
    stop HUP
    [ "$RC" -eq 129 ] && [ ! -e h.csv ] && [ ! -e out.png ] && no_stray_files "$W" &&
        ok "SIGHUP with --hist: exit 129, no CSV, no temp file" ||
        { not_ok "SIGHUP with --hist: exit $RC; $(ls -A)"; show_err; }
else
    not_ok "SIGHUP with --hist: gpuedge never got ready"
    stop KILL
fi
rm -f h.csv out.png

# Inherited SIG_IGN stays: SIGHUP under env --ignore-signal (nohup's way) does
# nothing; SIGTERM still stops it.
env --default-signal=INT,QUIT --ignore-signal=HUP "$GPUEDGE" $CPU --sigma 16 big.pgm out.png >"$OUT" 2>"$ERR" &
BGPID=$!
if wait_for 600 sigs_blocked "$BGPID"; then
    sleep 0.3
    kill -HUP "$BGPID"
    sleep 0.5
    if alive "$BGPID"; then
        stop TERM
        [ "$RC" -eq 143 ] && ok "inherited SIG_IGN for SIGHUP: still running after it, SIGTERM then 143" ||
            not_ok "inherited SIG_IGN: exit $RC after SIGTERM"
    else
        wait "$BGPID"
        not_ok "inherited SIG_IGN for SIGHUP: gpuedge exited $? on SIGHUP"
        BGPID=
    fi
else
    not_ok "inherited SIG_IGN: gpuedge never got ready"
    stop KILL
fi
rm -f out.png

# SIGKILL: nothing to clean up where the temp file has no name (O_TMPFILE)
hold
start $CPU mid.pgm out.png
nohold
if wait_for 600 temp_exists; then
    if anon_open; then
        stop KILL
        [ ! -e out.png ] && no_stray_files "$W" && ok "SIGKILL while writing: nothing left (O_TMPFILE)" ||
            not_ok "SIGKILL while writing: $(ls -A)"
    else
        stop KILL
        skip "SIGKILL while writing: no O_TMPFILE on this filesystem ($(stat -f -c %T . 2>/dev/null)): a named temp file"
    fi
else
    not_ok "SIGKILL case: no temp file appeared"
    stop KILL
fi
# What a killed run leaves where O_TMPFILE is missing is named by the next one
find . -maxdepth 1 -name '.out.png.*.tmp' -exec rm -f {} +
rm -f out.png
: >.out.png.Zq3xW9.tmp
ge $CPU --sigma 0 mid.pgm out.png
if [ "$RC" -eq 0 ] && [ "$(nlines "$ERR")" -eq 1 ] &&
    grep -q '^gpuedge: \.out\.png\.Zq3xW9\.tmp: temp file of an interrupted run (remove it)$' "$ERR"; then
    ok "a stale temp file is named in one line"
else
    not_ok "stale temp file: exit $RC"
    show_err
fi
rm -f out.png .out.png.Zq3xW9.tmp

# A second signal means "now": the signal thread removes the temp files and
# exits at once with 128 + signal.
hold
start $CPU mid.pgm out.png
nohold
if wait_for 600 temp_exists; then
    kill -INT "$BGPID"
    sleep 0.05
    stop INT
    why=
    [ "$RC" -eq 130 ] || why="exit $RC, expected 130"
    [ -e out.png ] && why="${why:+$why; }out.png exists"
    no_stray_files "$W" || why="${why:+$why; }$WHY"
    [ -z "$why" ] && ok "second SIGINT: exit 130, no output, no temp file" ||
        { not_ok "second SIGINT: $why"; show_err; }
else
    not_ok "second SIGINT: no temp file appeared"
    stop KILL
fi
rm -f out.png

# A finished run is not affected by the machinery: exit 0, no message.
ge $CPU --sigma 0 mid.pgm out.pgm
[ "$RC" -eq 0 ] && [ ! -s "$ERR" ] && [ -s out.pgm ] && ok "the same image, uninterrupted: exit 0" ||
    { not_ok "uninterrupted run: exit $RC"; show_err; }

finish
