#!/bin/sh
# The CPU-only variant (make CUDA=0; automatic when the Makefile finds no
# nvcc): what needs the GPU (--backend=gpu, --hwdec=nvdec,
# --jpeg-decoder=nvjpeg, --device, --devices; the last two are ignored with
# --backend=cpu, as in a CUDA build) fails in one line "built without
# CUDA", exit 1, nothing written; --version says so; --backend=auto runs the CPU
# backend with the one notice a machine without a GPU prints, and the same
# pixels as --backend=cpu.  A CUDA build's --version names its runtime.
# The Makefile's choice (make -n, nothing built): NVCC=/nonexistent and
# CUDA=0 plan the CPU-only variant, without nvcc, CUDA headers or libcudart.
. "$(dirname "$0")/lib.sh"

cp "$SAMPLES/photo.png" in.png
"$GPUEDGE" --backend=cpu -q in.png ref.pgm || not_ok "cannot make the CPU reference output"

if no_cuda; then
    w='built without CUDA$'
    fails "--backend=gpu" 1 "^gpuedge: --backend=gpu: $w" --backend=gpu in.png out.pgm
    fails "--backend=cuda (alias)" 1 "^gpuedge: --backend=gpu: $w" --backend=cuda in.png out.pgm
    fails "--hwdec=nvdec" 1 "^gpuedge: --hwdec=nvdec: $w" --hwdec=nvdec in.png out.pgm
    fails "--jpeg-decoder=nvjpeg" 1 "^gpuedge: --jpeg-decoder=nvjpeg: $w" \
        --jpeg-decoder=nvjpeg in.png out.pgm
    fails "--device 0" 1 "^gpuedge: --device: $w" --device 0 in.png out.pgm
    fails "--devices 0,1" 1 "^gpuedge: --devices: $w" --devices 0,1 in.png out.pgm
    fails "--devices all" 1 "^gpuedge: --devices: $w" --devices all in.png out.pgm
    ge --device 1 --backend=cpu in.png out.pgm
    [ "$RC" -eq 0 ] && [ ! -s "$ERR" ] && cmp -s out.pgm ref.pgm &&
        ok "--device 1 --backend=cpu: ignored, as in a CUDA build" ||
        { not_ok "--device 1 --backend=cpu: exit $RC"; show_err; }
    rm -f out.pgm
    fails "--backend=gpu, batch" 1 "^gpuedge: --backend=gpu: $w" --backend=gpu -o outdir in.png

    ge --version
    [ "$RC" -eq 0 ] && grep -q '^  CUDA  *none: built without CUDA' "$OUT" &&
        ! grep -q 'runtime\|driver' "$OUT" &&
        ok "--version: CUDA none, built without CUDA; no runtime or driver line" ||
        { not_ok "--version: exit $RC; $(tr '\n' '|' <"$OUT")"; show_err; }

    # A video makes --backend=auto ask for the GPU (small images stay on
    # the CPU without asking: backend.sh).
    if command -v ffmpeg >/dev/null 2>&1 &&
        ffmpeg -loglevel error -f lavfi -i testsrc2=size=96x64:rate=25:duration=0.2 \
            -pix_fmt yuv420p "$T/clip.y4m"; then
        ge --backend=cpu "$T/clip.y4m" ref.y4m
        for b in --backend=auto ""; do
            ge $b "$T/clip.y4m" out.y4m
            [ "$RC" -eq 0 ] && [ "$(nlines "$ERR")" -eq 1 ] &&
                grep -qx 'gpuedge: built without CUDA; using the CPU backend' "$ERR" &&
                cmp -s out.y4m ref.y4m &&
                ok "${b:-no --backend}, a video: the CPU backend, one notice, same bytes" ||
                { not_ok "${b:-no --backend}, a video: exit $RC, notice or bytes"; show_err; }
            rm -f out.y4m
        done
        ge -q "$T/clip.y4m" out.y4m
        [ "$RC" -eq 0 ] && [ ! -s "$ERR" ] && cmp -s out.y4m ref.y4m &&
            ok "-q, a video: no notice" || { not_ok "-q, a video: exit $RC"; show_err; }
        rm -f out.y4m ref.y4m
    else
        skip "--backend=auto on a video: no ffmpeg to make one"
    fi
    ge in.png out.pgm
    [ "$RC" -eq 0 ] && [ ! -s "$ERR" ] && cmp -s out.pgm ref.pgm &&
        ok "a small image: the CPU backend, silent, same pixels" ||
        { not_ok "a small image: exit $RC or pixels differ"; show_err; }
    rm -f out.pgm

    # What the compiler read (its .d files): no CUDA header, even where
    # the toolkit's headers sit on the default include path
    # (/usr/local/include links them on some machines).
    bdir=$(dirname "$GPUEDGE")
    if [ -n "$(find "$bdir" -name '*.d' 2>/dev/null | head -n 1)" ]; then
        used=$(find "$bdir" -name '*.d' -exec grep -l 'cuda[_a-z]*\.h\|/cuda' {} + 2>/dev/null | head -n 3)
        [ -z "$used" ] && ok "the CPU-only build read no CUDA header (its .d files)" ||
            not_ok "CUDA headers in the CPU-only build: $used"
    else
        skip "the CPU-only build's headers: no .d files beside $GPUEDGE"
    fi
    if command -v nm >/dev/null 2>&1; then
        n=$(nm "$GPUEDGE" 2>/dev/null | grep -c ' cuda\| __cuda')
        [ "$n" -eq 0 ] && ok "the CPU-only binary holds no CUDA runtime symbol" ||
            not_ok "the CPU-only binary: $n CUDA runtime symbols"
    else
        skip "the CPU-only binary's symbols: no nm"
    fi
else
    ge --version
    [ "$RC" -eq 0 ] && grep -q '^  CUDA  *runtime [0-9]' "$OUT" &&
        ! grep -q 'built without CUDA' "$OUT" &&
        ok "--version of a CUDA build: the CUDA runtime line" ||
        { not_ok "--version: exit $RC; $(tr '\n' '|' <"$OUT")"; show_err; }
fi

# ---- the Makefile's choice, dry run (make -n -B: commands listed, none run)
plan() {
    env -u MAKEFLAGS -u MAKELEVEL -u CUDA make -n -B -C "$ROOT" "$@" >"$T/plan" 2>&1
}
cpu_only_plan() {
    why=
    grep -q -- '-DGE_CUDA=0' "$T/plan" || why="no -DGE_CUDA=0"
    grep -q 'build/nocuda/libgpuedge\.a' "$T/plan" || why="${why:+$why; }not in build/nocuda"
    grep -q 'src/lib/gpu_none\.c' "$T/plan" || why="${why:+$why; }no gpu_none.c"
    grep -q 'nvcc\|\.cu\b\|cudart\|cuda/include\|src/lib/gpu\.c\|hwdec\.c\|nvjpeg\.c' "$T/plan" &&
        why="${why:+$why; }nvcc, CUDA headers, libcudart or a CUDA-only source in the plan"
}
if ! command -v make >/dev/null 2>&1; then
    skip "the Makefile's CUDA choice: no make"
    finish
fi
plan NVCC=/nonexistent
rc=$?
cpu_only_plan
[ $rc -eq 0 ] && [ -z "$why" ] &&
    ok "make NVCC=/nonexistent: the CPU-only variant, automatically" ||
    { not_ok "make NVCC=/nonexistent: exit $rc; $why"; sed -n '1,3s/^/#   /p' "$T/plan"; }
plan CUDA=0
rc=$?
cpu_only_plan
[ $rc -eq 0 ] && [ -z "$why" ] && ok "make CUDA=0: the CPU-only variant" ||
    { not_ok "make CUDA=0: exit $rc; $why"; sed -n '1,3s/^/#   /p' "$T/plan"; }
plan CUDA=yes
rc=$?
[ $rc -ne 0 ] && grep -q 'CUDA=yes: expected 0' "$T/plan" &&
    ok "make CUDA=yes: refused (exit $rc)" || not_ok "make CUDA=yes: exit $rc"
plan CUDA=1 NVCC=/nonexistent
rc=$?
[ $rc -ne 0 ] && grep -q 'CUDA=1 but /nonexistent is not an executable' "$T/plan" &&
    ok "make CUDA=1 NVCC=/nonexistent: refused (exit $rc)" || not_ok "make CUDA=1 NVCC=/nonexistent: exit $rc"
finish
