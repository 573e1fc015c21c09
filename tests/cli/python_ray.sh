#!/bin/sh
# examples/ray_edges.py, the Ray Data recipe, in a one-process local Ray on
# the CPU backend over a few images (two of one size: a batch call; others
# mixed: one call each): every map equals the gpuedge command's.  Ray comes
# from the package index into a venv kept in build/venv-ray (made once,
# reused; RAY_VENV= to put it elsewhere); when it cannot be installed the
# test says skip, with the reason.
. "$(dirname "$0")/lib.sh"

if [ "${SANITIZE:-}" = 1 ]; then
    skip "the sanitizer build has no shared library"
    finish
fi
if ! pil_python "numpy"; then
    skip "no python3 with Pillow and numpy (python3-pil, python3-numpy)"
    finish
fi
LIBSO=${GPUEDGE_LIB:-$ROOT/build/rel/lib/libgpuedge.so.0}
[ -n "${GPUEDGE_LIB:-}" ] || [ -f "$LIBSO" ] || LIBSO=$ROOT/build/nocuda/lib/libgpuedge.so.0
case $LIBSO in /*) ;; *) LIBSO=$ROOT/$LIBSO ;; esac
if [ ! -f "$LIBSO" ]; then
    not_ok "$LIBSO not built (make lib)"
    finish
fi
VENV=${RAY_VENV:-$ROOT/build/venv-ray}
if ! "$VENV/bin/python" -c 'import ray.data, PIL' 2>/dev/null; then
    # the system site for Pillow; ray[data] brings pyarrow, pandas, numpy
    rm -rf "$VENV"
    if ! { "$PY" -m venv --system-site-packages "$VENV" && "$VENV/bin/pip" install -q "ray[data]"; } \
        >"$T/pip.log" 2>&1; then
        skip "ray[data] cannot be installed: $(grep -iE 'error|could not|no matching' "$T/pip.log" | head -1 | cut -c1-200)"
        rm -rf "$VENV"
        finish
    fi
fi

mkdir -p "$T/in"
cp "$SAMPLES/photo.png" "$SAMPLES/odd_321x241.png" "$T/in/"
"$PY" -c "
from PIL import Image
im = Image.open('$SAMPLES/photo.png').convert('RGB')
im.crop((0, 0, 321, 241)).save('$T/in/a_crop.png')
im.crop((100, 50, 421, 291)).save('$T/in/b_crop.png')
" || { not_ok "making the inputs"; finish; }
# batches of 2 in name order: a_crop + b_crop (one size), odd + photo (mixed)
RAY_TMPDIR=$T/r PYTHONPATH=$ROOT/python GPUEDGE_LIB=$LIBSO timeout 600 \
    "$VENV/bin/python" "$ROOT/examples/ray_edges.py" "$T/in" "$T/out" --local --backend cpu \
    --batch-size 2 >"$T/ray.log" 2>&1
rc=$?
if [ $rc -ne 0 ]; then
    not_ok "examples/ray_edges.py exited with $rc"
    tail -n 12 "$T/ray.log" | sed 's/^/#   /'
    finish
fi
n=0
for f in "$T"/in/*.png; do
    name=$(basename "$f")
    "$GPUEDGE" -q -y --backend cpu "$f" "$T/cli_$name.pgm" 2>"$T/cli.err" ||
        { not_ok "gpuedge $name: $(cat "$T/cli.err")"; continue; }
    if "$PY" - "$T/out/$name.pgm" "$T/cli_$name.pgm" <<'EOF'
import sys
import numpy as np

def pgm(path):
    d = open(path, "rb").read()
    magic, w, h, top, px = d.split(maxsplit=4)
    assert magic == b"P5" and top == b"255"
    return np.frombuffer(px[:int(w) * int(h)], np.uint8).reshape(int(h), int(w))

sys.exit(0 if np.array_equal(pgm(sys.argv[1]), pgm(sys.argv[2])) else 1)
EOF
    then
        n=$((n + 1))
    else
        not_ok "$name: the recipe's map differs from the CLI's (or is missing)"
    fi
done
[ $n -eq 4 ] && ok "ray.data map_batches (callable class, local Ray, CPU backend): 4 maps == the CLI's"
finish
