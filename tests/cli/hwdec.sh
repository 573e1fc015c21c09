#!/bin/sh
# --hwdec=auto|none|nvdec (DESIGN.md §1.9, §3): parsing; nvdec without a usable
# GPU is one line and exit 1 (nothing written); with the CPU backend it is a
# usage error; auto and none on the CPU backend decode in software and give
# the same bytes as no option at all.  (NVDEC == software frame for frame is
# the GPU test tests/gpu/test_nvdec.sh.)
. "$(dirname "$0")/lib.sh"

if ! command -v ffmpeg >/dev/null 2>&1; then
    skip "hwdec: ffmpeg not installed (Debian package ffmpeg)"
    finish
fi
ffmpeg -nostdin -hide_banner -v error -y -f lavfi -i testsrc2=size=96x64:rate=10 -frames:v 5 \
    -c:v libx264 -pix_fmt yuv420p clip.mp4 </dev/null >/dev/null 2>"$T/ff.err" ||
    { not_ok "cannot make a test clip"; finish; }

fails "--hwdec with a bad mode" 2 "^gpuedge: --hwdec 'vaapi': expected auto, none or nvdec$" \
    --hwdec=vaapi clip.mp4 out.mkv
fails "--hwdec without its argument" 2 "^gpuedge: option '--hwdec' needs an argument$" \
    clip.mp4 out.mkv --hwdec
fails "--hwdec=nvdec with --backend=cpu" 2 '^gpuedge: --hwdec=nvdec needs the GPU backend' \
    --hwdec=nvdec --backend=cpu clip.mp4 out.mkv

"$GPUEDGE" -q --backend=cpu clip.mp4 ref.y4m || not_ok "cannot make the reference output"
for m in none auto; do
    ge --hwdec=$m --backend=cpu clip.mp4 $m.y4m
    [ "$RC" -eq 0 ] && [ ! -s "$ERR" ] && cmp -s $m.y4m ref.y4m &&
        ok "--hwdec=$m on the CPU backend: software decoding, same bytes" ||
        { not_ok "--hwdec=$m on the CPU backend: exit $RC or bytes differ"; show_err; }
    rm -f $m.y4m
done
# the report says who decoded the video frames (here: software, all 5;
# NVDEC and software side by side: tests/gpu/run mix)
cp clip.mp4 clip2.mp4
ge --backend=cpu --report=json --report-file r.json -o rj clip.mp4 clip2.mp4
grep -q '"video_decoded":{"nvdec":0,"software":10}' r.json &&
    ok "--report=json: video_decoded counts 10 frames of two files, in software" ||
    { not_ok "--report=json: no video_decoded 0/10: $(grep -o '"video_decoded[^}]*}' r.json)"; show_err; }
ge --backend=cpu --report clip.mp4 rt.y4m
grep -q '^  video frames decoded: 0 on NVDEC, 5 in software$' "$ERR" &&
    ok "--report: video frames decoded: 0 on NVDEC, 5 in software" ||
    { not_ok "--report: no 'video frames decoded' line"; show_err; }
rm -rf rj r.json rt.y4m clip2.mp4
ge --hwdec=none --hwdec=auto --backend=cpu clip.mp4 last.y4m
expect_rc "--hwdec given twice: the last one counts" 0
rm -f last.y4m

# nvdec without a GPU (none here, or hidden on a GPU machine): one line,
# exit 1, no output file
if have_gpu; then
    export CUDA_VISIBLE_DEVICES=
fi
fails "--hwdec=nvdec without a GPU" 1 '^gpuedge: --hwdec=nvdec: .+' --hwdec=nvdec clip.mp4 out.mkv
fails "--hwdec=cuda (alias) without a GPU" 1 '^gpuedge: --hwdec=nvdec: .+' --hwdec=cuda clip.mp4 out.mkv
fails "--hwdec=nvdec without a GPU, -q" 1 '^gpuedge: --hwdec=nvdec: .+' -q --hwdec=nvdec clip.mp4 out.mkv
# auto without a GPU: the CPU backend, software decoding, exit 0
ge --hwdec=auto clip.mp4 auto.y4m
[ "$RC" -eq 0 ] && cmp -s auto.y4m ref.y4m &&
    ok "--hwdec=auto without a GPU: CPU backend, same bytes" ||
    { not_ok "--hwdec=auto without a GPU: exit $RC or bytes differ"; show_err; }
finish
