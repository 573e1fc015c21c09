#!/bin/sh
# --backend (DESIGN.md §3): gpu insists (exit 1 with the reason when no GPU is
# usable), auto falls back to the CPU backend with exactly one notice line,
# -q silences the notice, cpu never prints one.
. "$(dirname "$0")/lib.sh"

cp "$SAMPLES/photo.png" in.png
"$GPUEDGE" --backend=cpu -q in.png ref.pgm || not_ok "cannot make the CPU reference output"

if have_gpu; then
    ge --backend=gpu in.png out.pgm
    [ "$RC" -eq 0 ] && [ ! -s "$ERR" ] && cmp -s out.pgm ref.pgm &&
        ok "--backend=gpu with a GPU: exit 0, same pixels as the CPU backend" ||
        { not_ok "--backend=gpu with a GPU: exit $RC or pixels differ"; show_err; }
    rm -f out.pgm
    ge --backend=auto in.png out.pgm
    [ "$RC" -eq 0 ] && [ ! -s "$ERR" ] && cmp -s out.pgm ref.pgm &&
        ok "--backend=auto with a GPU: no notice, same pixels" ||
        { not_ok "--backend=auto with a GPU: exit $RC"; show_err; }
    rm -f out.pgm
    # hiding every GPU is how a GPU machine can test the fallback
    export CUDA_VISIBLE_DEVICES=
fi

# ---- no usable GPU (none here, or hidden by CUDA_VISIBLE_DEVICES="")
fails "--backend=gpu without a GPU" 1 '^gpuedge: --backend=gpu: .+' --backend=gpu in.png out.pgm
fails "--backend=cuda (alias) without a GPU" 1 '^gpuedge: --backend=gpu: .+' --backend=cuda in.png out.pgm
fails "--backend=gpu, even with -q" 1 '^gpuedge: --backend=gpu: .+' -q --backend=gpu in.png out.pgm

# --backend=auto's start-up policy: images only, fewer pixels than the
# CPU computes in a fraction of CUDA's start-up (32 Mpx a thread) -> the
# CPU backend, silently (no GPU probe at all); anything bigger, or a video,
# probes the GPU and, without one, says so once.
printf 'P5\n6000 6000\n255\n' >big.pgm
head -c 36000000 /dev/urandom >>big.pgm
for b in "--backend=auto" ""; do
    ge $b in.png out.pgm
    [ "$RC" -eq 0 ] && [ ! -s "$ERR" ] && cmp -s out.pgm ref.pgm &&
        ok "${b:-no --backend}, one small image: the CPU backend without a notice, same pixels" ||
        { not_ok "${b:-no --backend}, small image: exit $RC or a notice or other pixels"; show_err; }
    rm -f out.pgm
    ge $b --threads 1 big.pgm out.pgm
    why=
    [ "$RC" -eq 0 ] || why="exit $RC"
    [ "$(nlines "$ERR")" -eq 1 ] || why="${why:+$why; }$(nlines "$ERR") lines on stderr, expected 1"
    grep -q '^gpuedge: .*using the CPU backend$' "$ERR" || why="${why:+$why; }no 'using the CPU backend' notice"
    [ -z "$why" ] && ok "${b:-no --backend}, 36 Mpx on 1 thread (over the 32 Mpx policy): GPU probed, one notice line" ||
        { not_ok "${b:-no --backend}, 36 Mpx: $why"; show_err; }
    rm -f out.pgm
done
ge -v --backend=auto in.png out.pgm
grep -q 'the CPU backend is quicker than starting the GPU' "$ERR" &&
    ok "-v says why auto kept a small image on the CPU" || { not_ok "-v: no policy line"; show_err; }
rm -f out.pgm

ge -q --backend=auto in.png out.pgm
[ "$RC" -eq 0 ] && [ ! -s "$ERR" ] && cmp -s out.pgm ref.pgm && ok "-q: no notice, exit 0" ||
    { not_ok "-q --backend=auto: exit $RC"; show_err; }
rm -f out.pgm
ge --backend=cpu in.png out.pgm
[ "$RC" -eq 0 ] && [ ! -s "$ERR" ] && ok "--backend=cpu: no notice" ||
    { not_ok "--backend=cpu: exit $RC"; show_err; }
rm -f out.pgm
ge --backend=auto --threads 1 -o out in.png big.pgm
[ "$RC" -eq 0 ] && [ "$(grep -c 'using the CPU backend' "$ERR")" -eq 1 ] &&
    ok "batch: the notice once, not per file" || { not_ok "batch notice: exit $RC"; show_err; }
rm -rf out

# --threads changes nothing in the result
for n in 1 2 3 7; do
    ge --backend=cpu --threads "$n" in.png "t$n.pgm"
done
same=1
for n in 1 2 3 7; do cmp -s "t$n.pgm" ref.pgm || same=0; done
[ "$same" -eq 1 ] && ok "--threads 1, 2, 3, 7: the same pixels" || not_ok "--threads changes the pixels"

finish
