# tests/cli/lib.sh — helpers for the CLI tests; sourced, POSIX sh (dash).
#
# Every script starts with
#     . "$(dirname "$0")/lib.sh"
# and ends with `finish`.  tests/run runs each with `sh` from the repository
# root, with GPUEDGE=./gpuedge, and counts the lines that start with
# "ok ", "not ok " and "skip ".
#
# What a script gets:
#   $T                a fresh temporary directory, removed on exit (even after
#                     chmod 000 inside it)
#   $W                $T/w, the (empty) working directory the script starts in;
#                     gpuedge's stdout and stderr are kept outside it, in $T
#   $GPUEDGE          the binary, as an absolute path (or a bare name on PATH)
#   $ROOT, $SAMPLES   the repository and its samples/ directory
#   ge ARGS...        runs gpuedge: stdout in $OUT, stderr in $ERR, status in $RC
#   ok / not_ok / skip NAME...      the counted lines (prefixed with the script)
#   expect_rc NAME N                ok when $RC is N
#   error_line PATTERN              0 when stderr is ONE "gpuedge: ..." line
#                                   matching the ERE (plus, at most, the usage
#                                   hint "Try 'gpuedge --help'..."); else 1
#                                   and $WHY says what was wrong
#   listing DIR                     DIR's entries (recursive, hidden included)
#                                   with sizes, for before/after comparisons
#   no_stray_files DIR              0 when DIR holds no temp file
#                                   (.NAME.XXXXXX.tmp) and no NAME.partial.EXT
#   fails NAME RC PATTERN ARGS...   the usual error case: status RC, one error
#                                   line matching PATTERN, and the working
#                                   directory exactly as before (no output,
#                                   no temp file, nothing else)
#   is_root, have_gpu, have_python  conditions for skips
#   no_cuda, gpu_why                the CPU-only variant (make CUDA=0)?
#                                   why a GPU check skips
#   our_child_alive PID             a background gpuedge still running?
#   doc_commands WHAT FILE MIN      commands quoted in a document (one a line
#                                   in FILE): "ok" when at least MIN, and
#                                   ffmpeg is there to make inputs; else 1
#   doc_run WHAT CMD TEMPLATE       CMD as written (sh -c) in a fresh copy of
#                                   TEMPLATE: ok when it exits 0, writes a
#                                   file or prints, and leaves no temp file

# tests/run runs every tests/cli/*.sh, this file too: on its own it is no test.
case $0 in
lib.sh | */lib.sh) exit 0 ;;
esac

set -u

TEST=$(basename "$0" .sh)
ROOT=$(cd "$(dirname "$0")/../.." && pwd) || exit 1
SAMPLES=$ROOT/samples
GPUEDGE=${GPUEDGE:-$ROOT/gpuedge}
case $GPUEDGE in
/*) ;;
*/*) GPUEDGE=$(pwd)/$GPUEDGE ;;
esac
export GPUEDGE

T=$(mktemp -d "${TMPDIR:-/tmp}/gpuedge-$TEST.XXXXXX") || {
    echo "not ok $TEST: cannot create a temporary directory"
    exit 1
}
OUT=$T/.stdout
ERR=$T/.stderr
RC=0
WHY=
NFAIL=0
BGPID=

# Is PID a live child of this shell (not exited, not a zombie)?  The parent
# check matters: the shell may already have reaped an exited background job
# while it waited for another command, and its id may then be reused.
our_child_alive() {
    set -- $(awk '/^State:/ { s = $2 } /^PPid:/ { p = $2 } END { print s, p }' \
        "/proc/$1/status" 2>/dev/null)
    [ $# -eq 2 ] && [ "$1" != Z ] && [ "$2" = "$$" ]
}

cleanup() {
    # a background gpuedge a failed check left running (ours, by its id)
    if [ -n "$BGPID" ] && our_child_alive "$BGPID"; then
        kill -KILL "$BGPID" 2>/dev/null
        wait "$BGPID" 2>/dev/null
    fi
    chmod -R u+rwx "$T" 2>/dev/null
    rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# Interrupts the background gpuedge BGPID with SIGINT once the command
# "$@" succeeds (or after 400 ticks of 0.05 s) and waits for it: RC its
# exit status, WAITED the ticks it took (400: the command never succeeded).
int_when() {
    WAITED=0
    while [ "$WAITED" -lt 400 ] && ! "$@"; do
        sleep 0.05
        WAITED=$((WAITED + 1))
    done
    kill -INT "$BGPID" 2>/dev/null
    wait "$BGPID"
    RC=$?
    BGPID=
}

# stdout and stderr files live in $T but outside the working directory W.
W=$T/w
mkdir "$W" && cd "$W" || exit 1

# ---------------------------------------------------------------------------
# counted lines

ok() { echo "ok $TEST: $*"; }
skip() { echo "skip $TEST: $*"; }
not_ok() {
    echo "not ok $TEST: $*"
    NFAIL=$((NFAIL + 1))
}

# Shows the captured stderr under a failure (lines start with '#': not counted).
show_err() {
    if [ -s "$ERR" ]; then
        sed -n '1,8s/^/#   stderr: /p' "$ERR"
    fi
}

finish() {
    # tests/run counts our lines; a non-zero exit would add a duplicate failure.
    exit 0
}

# ---------------------------------------------------------------------------
# running gpuedge

ge() {
    "$GPUEDGE" "$@" >"$OUT" 2>"$ERR"
    RC=$?
}

expect_rc() {
    if [ "$RC" -eq "$2" ]; then
        ok "$1 (exit $RC)"
    else
        not_ok "$1: exit $RC, expected $2"
        show_err
    fi
}

nlines() {
    wc -l <"$1" | tr -d ' '
}

error_line() {
    n=$(nlines "$ERR")
    nerr=$(grep -c '^gpuedge: ' "$ERR")
    nhint=$(grep -c "^Try 'gpuedge --help' for more information\.\$" "$ERR")
    if [ "$nerr" -ne 1 ]; then
        WHY="$nerr 'gpuedge:' lines on stderr, expected 1"
    elif [ "$n" -ne $((1 + nhint)) ] || [ "$nhint" -gt 1 ]; then
        WHY="$n lines on stderr, expected 1 (plus the usage hint)"
    elif ! grep '^gpuedge: ' "$ERR" | grep -Eq -- "$1"; then
        WHY="error line does not match /$1/"
    elif [ -s "$ERR" ] && [ "$(tail -c 1 "$ERR" | od -An -c | tr -d ' ')" != '\n' ]; then
        WHY="error line is not terminated by a newline"
    else
        WHY=
        return 0
    fi
    return 1
}

listing() {
    (cd "$1" && find . -print | LC_ALL=C sort | while IFS= read -r f; do
        if [ -f "$f" ] && [ ! -L "$f" ]; then
            printf '%s %s\n' "$f" "$(wc -c <"$f" | tr -d ' ')"
        else
            printf '%s\n' "$f"
        fi
    done)
}

no_stray_files() {
    stray=$(cd "$1" && find . \( -name '.*.tmp' -o -name '*.partial.*' -o -name '*.partial' \) -print)
    if [ -n "$stray" ]; then
        WHY="left behind: $(echo $stray)"
        return 1
    fi
    return 0
}

# fails NAME RC PATTERN ARGS...: see the header.
fails() {
    name=$1 want=$2 pat=$3
    shift 3
    before=$(listing "$W")
    ge "$@"
    after=$(listing "$W")
    why=
    [ "$RC" -eq "$want" ] || why="exit $RC, expected $want"
    if ! error_line "$pat"; then
        why="${why:+$why; }$WHY"
    fi
    if [ "$before" != "$after" ]; then
        new=$(printf '%s\n' "$after" | grep -vxF -e "$before" | tr '\n' ' ')
        gone=$(printf '%s\n' "$before" | grep -vxF -e "$after" | tr '\n' ' ')
        why="${why:+$why; }files changed: +[${new% }] -[${gone% }]"
    fi
    if [ -z "$why" ]; then
        ok "$name (exit $RC, one error line, no files)"
    else
        not_ok "$name: $why"
        show_err
    fi
}

# Commands quoted in documentation (README.md, the man page's EXAMPLES):
# see the header.  The caller exports the environment the commands see.
doc_commands() {
    n=$(nlines "$2")
    if [ "$n" -lt "$3" ]; then
        not_ok "$1: $n commands found (expected at least $3)"
        return 1
    fi
    ok "$1: $n commands"
    if ! command -v ffmpeg >/dev/null 2>&1; then
        skip "$1: ffmpeg not installed (the inputs are made with it)"
        return 1
    fi
}
doc_run() {
    _d=$T/doc.run
    rm -rf "$_d"
    cp -R "$3" "$_d" || return 1
    (cd "$_d" && listing . >"$T/doc.before" && sh -c "$2" >"$OUT" 2>"$ERR" </dev/null)
    RC=$?
    (cd "$_d" && listing . >"$T/doc.after")
    if [ "$RC" -ne 0 ]; then
        not_ok "$1: exit $RC: $2"
        show_err
    elif cmp -s "$T/doc.before" "$T/doc.after" && [ ! -s "$OUT" ]; then
        not_ok "$1: wrote nothing: $2"
    elif ! no_stray_files "$_d"; then
        not_ok "$1: left a temporary or partial file: $2"
    else
        ok "$1: $2"
    fi
    rm -rf "$_d"
}

# ---------------------------------------------------------------------------
# conditions

is_root() { [ "$(id -u)" -eq 0 ]; }

# A usable GPU: --version names one with its compute capability.
have_gpu() {
    "$GPUEDGE" --version 2>/dev/null | grep -q '^  GPU .*compute capability'
}

# The CPU-only variant (make CUDA=0) says so in --version; its GPU checks
# skip "built without CUDA", a CUDA build's without a GPU "no CUDA device".
no_cuda() {
    "$GPUEDGE" --version 2>/dev/null | grep -q '^  CUDA .*built without CUDA'
}
gpu_why() {
    if no_cuda; then echo "built without CUDA"; else echo "no CUDA device"; fi
}

have_python() { command -v python3 >/dev/null 2>&1; }

# pil_python [MODULES]: sets PY to a python3 that imports Pillow and MODULES
# (Debian's python3 has them; another python3 first on PATH, pyenv say, may
# not), else to "".
pil_python() {
    PY=
    for p in python3 /usr/bin/python3; do
        if command -v "$p" >/dev/null 2>&1 && "$p" -c "import PIL${1:+, $1}" 2>/dev/null; then
            PY=$p
            return 0
        fi
    done
    return 1
}

# Checksum of a file (for "left untouched").
sum_of() { cksum <"$1"; }
