#!/bin/bash
# tests/gpu/test_python.sh — the Python package on a GPU machine: the
# device path (torch CUDA tensors, CuPy arrays: single frames and batches,
# layout="chw", channels="bgr", out=/hist_out=, stream= objects and
# handles) against the CPU backend, and every host-path test with
# backend "gpu" (GPUEDGE_TEST_BACKEND=gpu; the comparisons with the CLI run
# where the gpuedge binary is), then tests/bench/python_bench.py's table.
# Prints ok / not ok / skip lines; logs under $OUT (default /tmp/gpuedge-gpu).
# Needs the CUDA build's libgpuedge.so.0 (GPUEDGE_LIB, default
# build/rel/lib/libgpuedge.so.0) and a python3 with numpy and pytest
# (torch and CuPy for the device path; the GPU machine's python3 has them).
set -u
cd "$(dirname "$0")/../.." || exit 1
OUT=${OUT:-/tmp/gpuedge-gpu}
mkdir -p "$OUT"
LIBSO=${GPUEDGE_LIB:-$PWD/build/rel/lib/libgpuedge.so.0}
case $LIBSO in /*) ;; *) LIBSO=$PWD/$LIBSO ;; esac
if [ ! -f "$LIBSO" ]; then
    echo "not ok python: $LIBSO not built (make lib)"
    exit 1
fi
if ! python3 -c 'import numpy, pytest' 2>/dev/null; then
    echo "skip python: no python3 with numpy and pytest"
    exit 0
fi
if ! GPUEDGE_LIB=$LIBSO PYTHONPATH=python python3 -c '
import numpy, gpuedge
gpuedge.edges(numpy.zeros((4, 4), numpy.uint8), backend="gpu")' 2>"$OUT/python-probe.log"; then
    echo "skip python: no CUDA device usable: $(tail -n 1 "$OUT/python-probe.log")"
    exit 0
fi
# tests/cli/python.sh's suite (its ok / not ok / skip lines), on the GPU backend
GPUEDGE_LIB=$LIBSO GPUEDGE_TEST_BACKEND=gpu sh tests/cli/python.sh | tee "$OUT/python-pytest.log"
# the device tests must have run here, not skipped
if ! grep -q '^ok python: pytest test_device.py::' "$OUT/python-pytest.log"; then
    echo "not ok python: no device-path test ran on a GPU machine (torch, CuPy?)"
fi
GPUEDGE_LIB=$LIBSO PYTHONUNBUFFERED=1 timeout 600 python3 tests/bench/python_bench.py \
    >"$OUT/python-bench.log" 2>&1 || echo "not ok python: python_bench.py exited with $?"
cat "$OUT/python-bench.log"
