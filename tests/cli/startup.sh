#!/bin/sh
# Start-up: the GPU probe on its own thread while the first
# video and its encoder open (startup.c early_open), and --report's start-up
# figures.  On a machine without a GPU, --backend=auto runs the probe (it
# fails) and the early opens, then the CPU backend: the outputs and the
# messages must be those of --backend=cpu and of the usual path.
. "$(dirname "$0")/lib.sh"

if ! command -v ffmpeg >/dev/null 2>&1; then
    skip "ffmpeg not installed (makes the clip)"
    finish
fi
ffmpeg -loglevel error -f lavfi -i testsrc2=size=320x240:rate=25:duration=0.4 \
    -c:v libx264 -pix_fmt yuv420p "$T/clip.mp4" || { not_ok "cannot make the clip"; finish; }
CLIP=$T/clip.mp4

# ---- --report (text): the start-up line; CUDA n/a on the CPU backend
ge --backend=cpu --report "$CLIP" out.mkv
line=$(grep "^  start-up (from the run's start): " "$ERR")
if [ "$RC" -eq 0 ] && [ -s out.mkv ] &&
    echo "$line" | grep -Eq 'CUDA ready n/a, engine started [0-9.]+ s, first frame decoded [0-9.]+ s, first frame written [0-9.]+ s; engine wall [0-9.]+ s$'; then
    ok "--report: start-up line (CUDA ready n/a on the CPU backend)"
else
    not_ok "--report: exit $RC, start-up line '$line'"
    show_err
fi
rm -f out.mkv

# ---- --report=json: the startup object, in order, inside the engine's wall
check_json() { # FILE CUDA(null|number) MIN_FIRST_WRITTEN(null|number)
    python3 - "$1" "$2" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
s = r["startup"]
if sys.argv[2] == "null":
    assert s["cuda_ready_s"] is None, s
else:
    assert s["cuda_ready_s"] >= 0 and s["cuda_ready_s"] <= s["engine_start_s"] + 1e-6, s
e, d, w = s["engine_start_s"], s["first_decoded_s"], s["first_written_s"]
assert e >= 0 and d is not None and w is not None, s
assert e <= d + 1e-6 and d <= w + 1e-6, s
assert w <= e + s["engine_wall_s"] + 1e-3, s
assert abs(s["engine_wall_s"] - r["wall_s"]) < 1e-6, s
PY
}
if ! have_python; then
    skip "--report=json startup: python3 not installed"
else
    ge --backend=cpu --report=json --report-file rep.json "$CLIP" out.mkv
    [ "$RC" -eq 0 ] && check_json rep.json null 2>"$T/py.err" &&
        ok "--report=json: startup {cuda_ready_s null, engine <= decoded <= written <= wall}" ||
        { not_ok "--report=json video: exit $RC; $(tail -n 1 "$T/py.err")"; show_err; }
    rm -f out.mkv rep.json
    # images: the first is written by the encode pool
    mkdir o
    ge --backend=cpu --report=json --report-file rep.json -o o "$SAMPLES/photo.png" "$SAMPLES/grey.png"
    [ "$RC" -eq 0 ] && check_json rep.json null 2>"$T/py.err" &&
        ok "--report=json: startup figures for a batch of images" ||
        { not_ok "--report=json images: exit $RC; $(tail -n 1 "$T/py.err")"; show_err; }
    rm -rf o rep.json
    if have_gpu; then
        ge --backend=gpu --report=json --report-file rep.json "$CLIP" out.mkv
        [ "$RC" -eq 0 ] && check_json rep.json number 2>"$T/py.err" &&
            ok "--report=json --backend=gpu: cuda_ready_s before the engine starts" ||
            { not_ok "--report=json gpu: exit $RC; $(tail -n 1 "$T/py.err")"; show_err; }
        rm -f out.mkv rep.json
    else
        skip "--report=json --backend=gpu: $(gpu_why)"
    fi
fi

# ---- early opens: the same bytes as --backend=cpu (the kernels are
# bit-exact, so this holds with a GPU too), for every video format, with
# the source opened early (--hwdec=none) or only its header (auto)
for ext in mkv mp4 y4m; do
    ge --backend=cpu --threads 2 "$CLIP" ref.$ext
    for hw in none auto; do
        ge --threads 2 --hwdec=$hw "$CLIP" out.$ext
        [ "$RC" -eq 0 ] && cmp -s ref.$ext out.$ext &&
            ok "auto --hwdec=$hw .$ext: bytes equal --backend=cpu's" ||
            { not_ok "auto --hwdec=$hw .$ext: exit $RC or bytes differ"; show_err; }
        rm -f out.$ext
    done
    rm -f ref.$ext
done

# ---- -v says what opened while CUDA initialised
if no_cuda; then
    skip "-v early-open note: built without CUDA (no probe to overlap)"
else
    ge -v --hwdec=none "$CLIP" out.mkv
    grep -q 'clip\.mp4: video and encoder opened in [0-9]* ms while CUDA initialises' "$ERR" &&
        ok "-v: video and encoder opened while CUDA initialises" ||
        { not_ok "-v: no early-open note (exit $RC)"; show_err; }
fi
rm -f out.mkv

# ---- failures: the usual messages, once, and nothing left behind
if have_gpu; then
    skip "--backend=gpu without a GPU: a GPU is here"
else
    for hw in none auto; do
        fails "--backend=gpu --hwdec=$hw, no GPU: one line, the early encoder abandoned" 1 \
            '--backend=gpu: ' --backend=gpu --hwdec=$hw "$CLIP" out.mkv
    done
    ge --backend=gpu --hwdec=none "$CLIP" -
    [ "$RC" -eq 1 ] && [ ! -s "$OUT" ] && ok "--backend=gpu to stdout, no GPU: nothing on stdout" ||
        not_ok "--backend=gpu to stdout: exit $RC, $(wc -c <"$OUT") bytes out"
fi
printf 'old\n' >out.mkv
sum=$(sum_of out.mkv)
ge --hwdec=none "$CLIP" out.mkv
n=$(grep -c 'out\.mkv: output exists' "$ERR")
[ "$RC" -eq 1 ] && [ "$n" -eq 1 ] && [ "$(sum_of out.mkv)" = "$sum" ] && no_stray_files "$W" &&
    ok "existing output: one 'output exists' line, the file untouched" ||
    { not_ok "existing output: exit $RC, $n lines"; show_err; }
rm -f out.mkv
ge --hwdec=none "$T/missing.mp4" out.mkv
n=$(grep -c 'missing\.mp4' "$ERR")
[ "$RC" -eq 1 ] && [ "$n" -eq 1 ] && [ ! -e out.mkv ] && no_stray_files "$W" &&
    ok "missing input: its error once, no output" ||
    { not_ok "missing input: exit $RC, $n lines"; show_err; }

finish
