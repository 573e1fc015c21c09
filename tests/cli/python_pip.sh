#!/bin/sh
# The Python package as a user installs it: from a fresh copy of the source
# tree (its tracked and unignored files, as a clone gives),
#   python3 -m venv v && v/bin/pip install . &&
#   v/bin/python -c 'import gpuedge, numpy; print(gpuedge.edges(numpy.zeros((4, 8, 8, 3), numpy.uint8))[0].shape)'
# prints (4, 8, 8); then `pip wheel .` gives a py3-none-<platform> wheel
# that installs into another venv after the source tree is gone, whose
# module loads the library inside the package and equals the CLI.
#
# GPUEDGE_BUILD_CUDA=0 (the CPU-only library) keeps this quick: the CUDA
# build compiles the kernels for every GPU architecture.  Set
# PIP_TEST_CUDA=1 to build what a plain `pip install .` builds here.  pip
# fetches setuptools (build isolation) and numpy from the package index
# (or its cache); without them the test says skip, with pip's reason.
. "$(dirname "$0")/lib.sh"

if [ "${SANITIZE:-}" = 1 ]; then
    skip "the sanitizer build is not packaged"
    finish
fi
if ! command -v python3 >/dev/null 2>&1 || ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
    skip "no python3 with venv and ensurepip (python3-venv)"
    finish
fi
if ! git -C "$ROOT" rev-parse --git-dir >/dev/null 2>&1; then
    skip "$ROOT is not a git checkout (the test copies its tracked files)"
    finish
fi
[ "${PIP_TEST_CUDA:-0}" = 1 ] || export GPUEDGE_BUILD_CUDA=0
# a make running this test must not hand its jobserver to the package's make
unset MAKEFLAGS MFLAGS MAKELEVEL
# the package must load its own library, not the one a test run points at
unset GPUEDGE_LIB

SRC=$T/src
mkdir -p "$SRC"
(cd "$ROOT" && git ls-files -co --exclude-standard -z | xargs -0 cp --parents -t "$SRC") ||
    { not_ok "copying the source tree"; finish; }

# skip (not fail) when pip cannot reach an index; else the log's tail
pip_failed() { # NAME LOG
    if grep -qiE 'No matching distribution found|Failed to establish a new connection|Could not find a version that satisfies|Temporary failure in name resolution|Network is unreachable' "$2"; then
        skip "$1: pip cannot get what it needs: $(grep -iE 'No matching|Failed to establish|Could not find|name resolution|unreachable' "$2" | head -1 | cut -c1-160)"
    else
        not_ok "$1"
        tail -n 15 "$2" | sed 's/^/#   /'
    fi
}

cd "$SRC" || exit 1
python3 -m venv v >"$T/venv.log" 2>&1 && v/bin/pip install . >"$T/pip.log" 2>&1
rc=$?
if [ $rc -ne 0 ]; then
    pip_failed "python3 -m venv v && v/bin/pip install ." "$T/pip.log"
    finish
fi
got=$(cd "$T" && "$SRC/v/bin/python" -c 'import gpuedge, numpy; print(gpuedge.edges(numpy.zeros((4, 8, 8, 3), numpy.uint8))[0].shape)' 2>&1)
if [ "$got" = "(4, 8, 8)" ]; then
    ok "fresh copy, venv, pip install ., edges(zeros((4, 8, 8, 3)))[0].shape == (4, 8, 8)"
else
    not_ok "the issue's command printed '$got'"
fi
where=$(cd "$T" && "$SRC/v/bin/python" -c 'import gpuedge; print(gpuedge.library_path, gpuedge.__version__)' 2>&1)
want_v=$(sed -n 's/^#define GE_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)/\2/p' "$ROOT/include/gpuedge.h" | paste -sd.)
case $where in
"$SRC"/v/lib/python3*/site-packages/gpuedge/libgpuedge.so.0" $want_v")
    ok "the installed module loads the library inside its package; __version__ $want_v" ;;
*) not_ok "library and version: '$where' (want the package's, $want_v)" ;;
esac

v/bin/pip wheel --no-deps -w "$T/wheel" . >"$T/wheel.log" 2>&1
rc=$?
whl=$(ls "$T"/wheel/gpuedge-*.whl 2>/dev/null | head -n 1)
case $rc:$whl in
0:*-py3-none-linux_*.whl) ok "pip wheel . -> $(basename "$whl")" ;;
0:*) not_ok "pip wheel made '$(basename "$whl")', want a py3-none-linux_* wheel" ;;
*) pip_failed "pip wheel ." "$T/wheel.log"; finish ;;
esac

# the wheel, without the source tree: the CLI's map of a sample first
if pil_python; then
    "$PY" -c "from PIL import Image; Image.open('$SAMPLES/photo.png').convert('RGB').save('$T/in.ppm')"
fi
if [ ! -s "$T/in.ppm" ]; then
    not_ok "could not make a PPM from samples/photo.png (python3-pil)"
    finish
fi
"$GPUEDGE" -q -y --backend cpu "$T/in.ppm" "$T/cli.pgm" 2>"$T/cli.err" ||
    not_ok "gpuedge in.ppm: $(cat "$T/cli.err")"
cd "$T" && rm -rf "$SRC"
python3 -m venv w >>"$T/venv.log" 2>&1 && w/bin/pip install "$whl" >"$T/pip2.log" 2>&1
rc=$?
if [ $rc -ne 0 ]; then
    pip_failed "pip install the wheel into a new venv" "$T/pip2.log"
    finish
fi
w/bin/python - "$T/in.ppm" "$T/cli.pgm" >"$T/wheel_run.log" 2>&1 <<'EOF'
import sys
import numpy as np
import gpuedge

def read_pnm(path, ch):
    d = open(path, "rb").read()
    parts = d.split(maxsplit=4)          # magic, width, height, maxval, pixels
    w, h = int(parts[1]), int(parts[2])
    px = np.frombuffer(parts[4][:w * h * ch], np.uint8)
    return px.reshape((h, w, ch) if ch > 1 else (h, w))

e, _ = gpuedge.edges(read_pnm(sys.argv[1], 3), backend="cpu")
print("site-packages" in gpuedge.library_path, np.array_equal(e, read_pnm(sys.argv[2], 1)))
EOF
if [ "$(tail -n 1 "$T/wheel_run.log")" = "True True" ]; then
    ok "the wheel in a new venv, source tree gone: its library, map == the CLI's"
else
    not_ok "the wheel's module: $(tail -n 3 "$T/wheel_run.log" | tr '\n' ' ' | cut -c1-300)"
fi
finish
