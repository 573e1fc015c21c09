#!/bin/sh
# The Python module (python/gpuedge) from the build tree: its pytest suite
# (python/tests: the host path against the CLI, batches, layouts, channel
# orders, outputs, threads, the docstrings' examples) on the CPU backend,
# each pytest result one counted line.
# GPUEDGE_TEST_BACKEND=gpu runs the host-path tests on the GPU; the device
# path's tests (CuPy, PyTorch) skip themselves without those modules or a GPU.
. "$(dirname "$0")/lib.sh"

if [ "${SANITIZE:-}" = 1 ]; then
    # an ASan-built library cannot be loaded into a plain python3
    skip "python: the sanitizer build has no shared library"
    finish
fi
if ! pil_python "numpy, pytest"; then
    skip "python: no python3 with numpy and pytest (python3-numpy, python3-pytest)"
    finish
fi
# make check passes its own; else the CUDA build's, or the CPU-only one's
LIBSO=${GPUEDGE_LIB:-$ROOT/build/rel/lib/libgpuedge.so.0}
[ -n "${GPUEDGE_LIB:-}" ] || [ -f "$LIBSO" ] || LIBSO=$ROOT/build/nocuda/lib/libgpuedge.so.0
case $LIBSO in /*) ;; *) LIBSO=$ROOT/$LIBSO ;; esac
if [ ! -f "$LIBSO" ]; then
    not_ok "python: $LIBSO not built (make lib)"
    finish
fi
(cd "$ROOT/python/tests" && GPUEDGE_LIB=$LIBSO GPUEDGE=$GPUEDGE "$PY" -m pytest -v \
    -p no:cacheprovider --rootdir=. --basetemp="$T/pytest" .) >"$T/pytest.log" 2>&1
rc=$?
# "python/tests/test_host.py::test_x[a] PASSED   [ 10%]" -> one line each
n=0
while IFS= read -r line; do
    case $line in
    *::*" PASSED"*) ok "pytest ${line%% PASSED*}"; n=$((n + 1)) ;;
    *::*" FAILED"* | *::*" ERROR"*) not_ok "pytest ${line%% [EF][RA]*}"; n=$((n + 1)) ;;
    *::*" SKIPPED"*) skip "pytest ${line%% SKIPPED*}"; n=$((n + 1)) ;;
    esac
done <"$T/pytest.log"
if [ $rc -ne 0 ] && [ $rc -ne 5 ]; then
    # a failure pytest did not attribute to a test (collection, import)
    grep -q ' FAILED\| ERROR' "$T/pytest.log" ||
        { not_ok "python: pytest exited with $rc"; sed -n '1,30s/^/#   /p' "$T/pytest.log"; }
    grep -E '^(E |FAILED|ERROR)' "$T/pytest.log" | sed -n '1,20s/^/#   /p'
fi
[ $n -gt 0 ] || not_ok "python: no test ran"
finish
