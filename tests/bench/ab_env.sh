#!/bin/bash
# ab_env.sh — A/B of gpuedge under two environments (a GPUEDGE_* knob
# against its default), whole process, interleaved: RUNS rounds, A then B
# in odd rounds and B then A in even ones (the position effect,
# docs/bench-log.md "2026-12-02 (later)").  One line a run: the wall and fps
# (frames / wall), the report's engine wall, and with GPUEDGE_TRACE=vsrc the
# segments' count and the last one's end (s after the video's open); then
# each configuration's fps, and whether every output (not /dev/null) is
# the same bytes as A's first.  Each run writes a new file (the one before
# removed first, outside the timing).  With FFMPEG, ffmpeg decoding the
# input alone each round (tests/bench/ff_decode.sh).
#
#   bash tests/bench/ab_env.sh "A=1 ... [-- OPTION...]" "B=1 ... [-- OPTION...]" CLIP:OUT...
#     OUT: null (/dev/null), an extension (mkv, mp4: OUTDIR/ab.EXT), or
#     dir for a folder of videos, a batch (-o OUTDIR/ab.dir CLIP);
#     after " -- ", gpuedge options of that configuration alone (after
#     GE_OPTS), e.g. "X=1 -- --threads 1"; "-" for no environment;
#     GE_BIN=PATH in a configuration's environment runs that binary
#     instead of GPUEDGE (two builds: "GE_BIN=/tmp/gpuedge.old" "-")
# Env: GPUEDGE (./gpuedge), GE_OPTS (-y --backend=gpu --hwdec=nvdec), RUNS
#   (3), OUTDIR (/tmp), LOG (a folder for every run's stderr; default none),
#   FFMPEG (none), P (ffmpeg's processes for a folder: the cores).
# Exit 1 if a run failed or the outputs differ.
set -u
cd "$(dirname "$0")/../.." || exit 1
GPUEDGE=${GPUEDGE:-$PWD/gpuedge}
GE_OPTS=${GE_OPTS:--y --backend=gpu --hwdec=nvdec}
RUNS=${RUNS:-3}
OUTDIR=${OUTDIR:-/tmp}
FFMPEG=${FFMPEG:-none}
P=${P:-$(nproc)}
[ $# -ge 3 ] || { echo "usage: ab_env.sh \"A_ENV\" \"B_ENV\" CLIP:OUT..." >&2; exit 2; }
A=$1 B=$2; shift 2
T=$(mktemp -d "${TMPDIR:-/tmp}/gpuedge-ab.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
[ -n "${LOG:-}" ] && mkdir -p "$LOG"
rc=0
now() { date +%s.%N; }
echo "# ab_env $(date -u +%FT%TZ), $(nproc) CPUs; A: $A; B: $B; gpuedge $GE_OPTS"

for pair in "$@"; do
    clip=${pair%:*} o=${pair##*:}
    c=$(basename "$clip"); c=${c%.*}
    case $o in null) out=/dev/null ;; *) out=$OUTDIR/ab.$o ;; esac
    to=("$out"); [ "$o" = dir ] && to=(-o "$out")
    echo "## $c -> $o"
    declare -A fps=()
    same=yes
    for r in $(seq 1 "$RUNS"); do
        order=(A B)
        [ $((r % 2)) = 0 ] && order=(B A)
        if [ "$FFMPEG" != none ]; then
            t0=$(now)
            FFMPEG=$FFMPEG P=$P sh tests/bench/ff_decode.sh "$clip"
            echo "  round $r ffmpeg decode alone: $(awk -v a="$t0" -v b="$(now)" 'BEGIN{printf "%.3f", b-a}') s"
        fi
        for k in "${order[@]}"; do
            [ "$k" = A ] && e=$A || e=$B
            x=""
            case $e in *" -- "*) x=${e#* -- }; e=${e%% -- *} ;; esac
            [ "$e" = - ] && e=""
            bin=$GPUEDGE
            case " $e " in *" GE_BIN="*)
                bin=${e#*GE_BIN=}; bin=${bin%% *}
                e=$(echo " $e " | sed 's| GE_BIN=[^ ]*||; s|^ *||; s| *$||') ;;
            esac
            # a new file each run, as a user's output: writing over the run
            # before's would add the kernel's freeing of its pages to the
            # wall (the rename over it frees them: 0.7 s for 5.85 GB in RAM)
            [ "$o" = null ] || rm -rf "$out"
            t0=$(now)
            # shellcheck disable=SC2086
            env GPUEDGE_TRACE=vsrc $e "$bin" $GE_OPTS $x -v --report --report-file "$T/rep" \
                "$clip" "${to[@]}" >"$T/err" 2>&1
            st=$?
            t1=$(now)
            [ -n "${LOG:-}" ] && cat "$T/err" "$T/rep" >"$LOG/$c.$o.$k.$r.log" 2>/dev/null
            if [ $st != 0 ]; then
                echo "not ok ab_env $c -> $o $k: rc=$st: $(tail -n 1 "$T/err")"
                rc=1; continue
            fi
            if [ "$o" != null ]; then
                if [ "$k" = A ] && [ ! -e "$T/ref" ]; then cp -r "$out" "$T/ref"
                elif [ -e "$T/ref" ] && ! diff -r -q "$out" "$T/ref" >/dev/null; then same=no; fi
            fi
            line=$(cat "$T/rep" "$T/err" | awk -v t0="$t0" -v t1="$t1" '
                /^ *frames [0-9]+,/ { fr = $2 + 0; for (i = 1; i <= NF; i++) if ($i == "wall") ew = $(i + 1) }
                /video frames decoded:/ { sub(/^ */, ""); dec = "; " $0 }
                /trace segment/ { n++; for (i = 1; i <= NF; i++) if ($i == "end" && $(i + 1) + 0 > last) last = $(i + 1) + 0 }
                END { w = t1 - t0
                      printf "%.1f|wall %.3f s, %.1f fps; engine wall %s s; %d segments, the last ended %.3f s after the open%s",
                             (w > 0 ? fr / w : 0), w, (w > 0 ? fr / w : 0), ew, n, last, dec }')
            fps[$k]="${fps[$k]:-}${fps[$k]:+, }${line%%|*}"
            echo "  round $r $k: ${line#*|}"
        done
    done
    echo "  fps A: ${fps[A]:-}; B: ${fps[B]:-}; outputs the same bytes: $same"
    [ "$same" = yes ] || { echo "not ok ab_env $c -> $o: A and B wrote different bytes"; rc=1; }
    rm -rf "$T/ref" "$OUTDIR/ab.$o"
    unset fps
done
echo "# ab_env rc=$rc"
exit $rc
