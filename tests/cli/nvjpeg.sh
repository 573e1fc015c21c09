#!/bin/sh
# --jpeg-decoder=nvjpeg (DESIGN.md §1.9, §3): nvJPEG is loaded at run time, so
# without the library, with a file that is not nvJPEG, or without a usable
# GPU, gpuedge says in one line what is missing and exits 1, writing
# nothing; with --backend=cpu it is a usage error (exit 2).  With the
# library and a GPU (the GPU machine: tests/gpu/run's nvjpeg step sets
# GPUEDGE_NVJPEG) JPEGs decode on the GPU, --cpu-ref passes and says whose
# pixels it checked, a broken JPEG falls back to the CPU with a notice, and
# what the JPEG engines decode gives libjpeg-turbo's edge maps byte for
# byte.
. "$(dirname "$0")/lib.sh"

"$GPUEDGE" -q --backend=cpu "$SAMPLES/photo.png" in.jpg || not_ok "cannot make a JPEG"
LIB=${GPUEDGE_NVJPEG:-}
unset GPUEDGE_NVJPEG

# ---- usage
fails "--jpeg-decoder=nvjpeg with --backend=cpu" 2 \
    '^gpuedge: --jpeg-decoder=nvjpeg needs the GPU backend, not --backend=cpu$' \
    --jpeg-decoder=nvjpeg --backend=cpu in.jpg out.png
fails "--jpeg-decoder=bogus" 2 "^gpuedge: --jpeg-decoder 'bogus': expected turbo, nvjpeg or stb$" \
    --jpeg-decoder=bogus in.jpg out.png

# ---- the CPU-only variant (make CUDA=0): one line, nothing written
if no_cuda; then
    fails "--jpeg-decoder=nvjpeg, the CPU-only variant" 1 \
        '^gpuedge: --jpeg-decoder=nvjpeg: built without CUDA$' --jpeg-decoder=nvjpeg in.jpg out.png
    skip "nvJPEG loading and decoding: built without CUDA"
    finish
fi

# ---- the library missing or wrong
export GPUEDGE_NVJPEG="$T/nowhere/libnvjpeg.so.13"
fails "GPUEDGE_NVJPEG naming no file" 1 \
    '^gpuedge: --jpeg-decoder=nvjpeg: cannot load nvJPEG from GPUEDGE_NVJPEG=.*nowhere/libnvjpeg\.so\.13: .+' \
    --jpeg-decoder=nvjpeg in.jpg out.png
# a real shared library that is not nvJPEG: the C library gpuedge runs with
libc=$(ldd "$GPUEDGE" 2>/dev/null | awk '$1 ~ /^libc\.so/ {print $3}')
if [ -f "$libc" ]; then
    export GPUEDGE_NVJPEG="$libc"
    fails "GPUEDGE_NVJPEG naming another library" 1 \
        '^gpuedge: --jpeg-decoder=nvjpeg: .*libc\.so.* is not nvJPEG \(no nvjpegDecodeBatched\)$' \
        --jpeg-decoder=nvjpeg in.jpg out.png
else
    skip "GPUEDGE_NVJPEG naming another library: no libc path from ldd"
fi
unset GPUEDGE_NVJPEG
if [ -z "$LIB" ] && ! ldconfig -p 2>/dev/null | grep -q 'libnvjpeg\.so\.13 '; then
    fails "no libnvjpeg.so.13 on the library path" 1 \
        '^gpuedge: --jpeg-decoder=nvjpeg: cannot load libnvjpeg\.so\.13 .+' \
        --jpeg-decoder=nvjpeg in.jpg out.png
    fails "no libnvjpeg.so.13, batch form" 1 '^gpuedge: --jpeg-decoder=nvjpeg: cannot load libnvjpeg\.so\.13 .+' \
        --jpeg-decoder=nvjpeg -o outdir in.jpg "$SAMPLES/photo.png"
else
    skip "no libnvjpeg.so.13 on the library path: this machine has one"
fi

# ---- the library, no usable GPU (hidden on a GPU machine)
if [ -n "$LIB" ]; then
    export GPUEDGE_NVJPEG="$LIB"
    saved_cvd=${CUDA_VISIBLE_DEVICES-unset}
    export CUDA_VISIBLE_DEVICES=
    fails "nvJPEG without a usable GPU" 1 '^gpuedge: --jpeg-decoder=nvjpeg: no usable GPU: .+' \
        --jpeg-decoder=nvjpeg in.jpg out.png
    fails "nvJPEG with --backend=auto, no usable GPU" 1 '^gpuedge: --jpeg-decoder=nvjpeg: no usable GPU: .+' \
        --backend=auto --jpeg-decoder=nvjpeg in.jpg out.png
    if [ "$saved_cvd" = unset ]; then unset CUDA_VISIBLE_DEVICES; else export CUDA_VISIBLE_DEVICES="$saved_cvd"; fi
else
    skip "nvJPEG without a usable GPU: no library (GPUEDGE_NVJPEG) to load"
fi

# ---- the library and a GPU
if [ -n "$LIB" ] && have_gpu; then
    cp "$SAMPLES/photo.png" "$SAMPLES/grey.png" .
    "$GPUEDGE" -q --backend=cpu photo.png photo.jpg && "$GPUEDGE" -q --backend=cpu grey.png grey.jpg ||
        not_ok "cannot make JPEGs"
    # a colour JPEG: the edge map of the edge map, as a JPEG, is grey; make
    # colour from the PNG through python when it is there
    if have_python && python3 -c 'import PIL' 2>/dev/null; then
        python3 -c 'from PIL import Image; im = Image.open("photo.png").convert("RGB"); im.save("c420.jpg", quality=90); im.save("c444.jpg", quality=90, subsampling=0); im.save("cprog.jpg", quality=90, progressive=True)'
    fi
    ge -v --jpeg-decoder=nvjpeg --cpu-ref in.jpg out.png
    [ "$RC" -eq 0 ] && [ -s out.png ] && grep -q 'pixels decoded by nvJPEG (hardware) for 1 JPEG,' "$ERR" &&
        grep -q '^cpu-ref: 1 frame checked, 0 with mismatches (pixels decoded by nvJPEG (hardware))$' "$ERR" &&
        grep -q '^gpuedge: in\.jpg: 600x400, 3 channels, 8-bit, pixels decoded by nvJPEG (hardware)$' "$ERR" &&
        grep -q 'JPEGs: nvJPEG' "$ERR" &&
        ok "one JPEG through nvJPEG: exit 0, --cpu-ref passes and names the decoder, -v names the backend" ||
        { not_ok "one JPEG through nvJPEG: exit $RC"; show_err; }
    rm -f out.png
    head -c 3000 photo.jpg >trunc.jpg
    printf 'not a jpeg' >bad.jpg
    set -- in.jpg photo.jpg grey.jpg trunc.jpg
    for f in c420.jpg c444.jpg cprog.jpg; do [ -f "$f" ] && set -- "$@" "$f"; done
    n=$#
    ge --jpeg-decoder=nvjpeg --cpu-ref --report -o outdir "$@"
    nout=$(ls outdir 2>/dev/null | wc -l)
    # the truncated file: nvJPEG may refuse it (a notice, then the CPU
    # decoder decides) or decode what is there; either way no crash, and
    # every other file has its edge map
    [ "$RC" -le 1 ] && [ "$nout" -ge $((n - 1)) ] && ! grep -q "internal error" "$ERR" &&
        ok "a batch of $n JPEGs (one truncated) through nvJPEG: $nout outputs, --cpu-ref clean" ||
        { not_ok "a batch through nvJPEG: exit $RC, $nout of $n outputs"; show_err; }
    grep 'nvJPEG could not decode' "$ERR" | sed 's/^/# /'
    grep 'pixels decoded by' "$ERR" | sed 's/^/# /'
    rm -rf outdir
    ge --jpeg-decoder=nvjpeg bad.jpg out.png
    [ "$RC" -eq 1 ] && [ ! -e out.png ] && grep -q '^gpuedge: bad.jpg: ' "$ERR" &&
        ok "not a JPEG (by its bytes) under --jpeg-decoder=nvjpeg: the CPU decoders' error, exit 1" ||
        { not_ok "not a JPEG under nvjpeg: exit $RC"; show_err; }
    rm -f out.png
    # the JPEG engines' pixels are libjpeg-turbo's: the same edge maps
    for f in in.jpg photo.jpg grey.jpg c420.jpg c444.jpg; do
        [ -f "$f" ] || continue
        ge -v --jpeg-decoder=nvjpeg "$f" nv.pgm
        "$GPUEDGE" -q --backend=gpu "$f" cpu.pgm
        [ "$RC" -eq 0 ] && grep -q 'pixels decoded by nvJPEG (hardware)' "$ERR" && cmp -s nv.pgm cpu.pgm &&
            ok "$f through the JPEG engines: libjpeg-turbo's edge map, byte for byte" ||
            { not_ok "$f through the JPEG engines: exit $RC, or another edge map"; show_err; }
        rm -f nv.pgm cpu.pgm
    done
else
    skip "nvJPEG decoding: needs the library (GPUEDGE_NVJPEG) and a GPU"
fi
finish
