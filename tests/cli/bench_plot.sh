#!/bin/sh
# make bench-plot's script (tests/bench/plot.py) on a small sample results
# file and a --report=json made here: both charts are written as SVG and
# PNG, each a real picture (PNG signature and a size that only drawn bars
# give; SVG with its bars and every tool's name); a results file with a bad
# row fails with one line and exit 1.  The committed results file and
# report parse too.  Needs python3-matplotlib (make deps), else "skip".
. "$(dirname "$0")/lib.sh"

PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3
if ! "$PY" -c 'import matplotlib' 2>/dev/null; then
    skip "bench plot: python3-matplotlib not installed (make deps)"
    finish
fi
PLOT=$ROOT/tests/bench/plot.py

cat >res.csv <<'EOF'
date,machine,job,case,tool,value,unit,command
2026-01-01,test box,video,1080p to .mkv,gpuedge,400,fps,gpuedge clip.mp4 e.mkv
2026-01-01,test box,video,1080p to .mkv,gpuedge,500,fps,gpuedge clip.mp4 e.mkv
2026-01-01,test box,video,1080p to .mkv,ffmpeg filter chain,60,fps,ffmpeg -i clip.mp4 ...
2026-01-01,test box,video,1080p to .mkv,OpenCV script,13,fps,python3 cv_video.py
2026-01-01,test box,photos,30 photos to PNG,gpuedge,0.2,s,gpuedge -o out/ photos/
2026-01-01,test box,photos,30 photos to PNG,OpenCV script,0.7,s,python3 cv_photos.py
EOF
ge --backend=cpu -q --report=json --report-file rep.json "$SAMPLES/photo.png" e.png
[ "$RC" -eq 0 ] && [ -s rep.json ] || { not_ok "gpuedge --report=json: exit $RC"; show_err; finish; }

"$PY" "$PLOT" --results res.csv --report rep.json --stages-label "test" --out img >"$OUT" 2>"$ERR"
RC=$?
[ "$RC" -eq 0 ] && ok "plot.py on a sample results file: exit 0" ||
    { not_ok "plot.py: exit $RC"; show_err; }
for n in throughput stages; do
    why=
    [ -s "img/$n.svg" ] || why="no img/$n.svg"
    [ -s "img/$n.png" ] || why="${why:+$why; }no img/$n.png"
    if [ -z "$why" ]; then
        sig=$(od -An -tx1 -N8 "img/$n.png" | tr -d ' \n')
        [ "$sig" = 89504e470d0a1a0a ] || why="img/$n.png is not a PNG"
        [ "$(wc -c <"img/$n.png")" -gt 8000 ] || why="${why:+$why; }img/$n.png is only $(wc -c <"img/$n.png") bytes"
        grep -q '<svg' "img/$n.svg" || why="${why:+$why; }img/$n.svg is not SVG"
        [ "$(grep -c '<path' "img/$n.svg")" -ge 10 ] || why="${why:+$why; }img/$n.svg has too few paths"
    fi
    [ -z "$why" ] && ok "$n chart written as SVG and PNG" || not_ok "$n chart: $why"
done
# Text is drawn as glyph paths with its string in a comment: every tool named.
missing=
for t in gpuedge 'ffmpeg filter chain' 'OpenCV script'; do
    grep -q "$t" img/throughput.svg || missing="$missing '$t'"
done
[ -z "$missing" ] && ok "throughput chart names every tool" || not_ok "throughput chart lacks:$missing"
grep -q 'compute\|write' img/stages.svg && ok "stages chart names the report's stages" ||
    not_ok "stages chart names no stage of the report"

# A bad row: one line naming the file and the line, exit 1.
sed 's/,13,fps,/,thirteen,fps,/' res.csv >bad.csv
"$PY" "$PLOT" --results bad.csv --out img2 >"$OUT" 2>"$ERR"
RC=$?
if [ "$RC" -eq 1 ] && [ "$(wc -l <"$ERR")" -eq 1 ] && grep -q 'bad.csv:5: value' "$ERR"; then
    ok "a bad value: one line naming file and line, exit 1"
else
    not_ok "a bad value: exit $RC"; show_err
fi

# The committed sources of docs/img parse and draw.
"$PY" "$PLOT" --results "$ROOT/tests/bench/results.csv" --report "$ROOT/tests/bench/stages.json" \
    --out img3 >"$OUT" 2>"$ERR"
RC=$?
[ "$RC" -eq 0 ] && [ -s img3/throughput.svg ] && [ -s img3/stages.svg ] &&
    ok "tests/bench/results.csv and stages.json draw" ||
    { not_ok "committed results: exit $RC"; show_err; }
finish
