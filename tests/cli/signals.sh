#!/bin/sh
# SIGINT / SIGTERM during a large image (DESIGN.md §6): exit 130 / 143, one line,
# no output under the final name, no temp file; --keep-partial keeps
# NAME.partial.EXT instead.
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
# 4000x4000: encoding its noisy edge map as PNG takes ~1 s (the temp file
# exists all that time).
{ printf 'P5\n4000 4000\n255\n' && head -c 16000000 /dev/urandom; } >mid.pgm

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

temp_exists() {
    [ -n "$(find . -maxdepth 1 -name '.out.png.*.tmp' -print)" ]
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
    "$GPUEDGE" "$@" >"$OUT" 2>"$ERR" &
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
run_case "SIGTERM while writing" TERM 143 'interrupted by SIGTERM' temp - \
    -- $CPU mid.pgm out.png
run_case "SIGINT while writing, --keep-partial" INT 130 '^gpuedge: interrupted by SIGINT' temp partial \
    -- $CPU --keep-partial mid.pgm out.png

# A second signal means "now": the signal thread removes the temp files and
# exits at once with 128 + signal.
start $CPU mid.pgm out.png
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
