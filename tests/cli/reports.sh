#!/bin/sh
# --cpu-ref, --report[=json], --report-file, --hist (DESIGN.md §2, §5, §1.7).
. "$(dirname "$0")/lib.sh"

G="--backend=cpu"

# ---- --cpu-ref on every sample: exit 0 and a summary with no mismatch
for s in "$SAMPLES"/*.png; do
    b=$(basename "$s")
    ge $G --cpu-ref "$s" out.png
    if [ "$RC" -eq 0 ] && grep -q '^cpu-ref: 1 frame checked, 0 with mismatches' "$ERR" &&
        grep -q '^  edge  *0 mismatching pixels' "$ERR" &&
        grep -q '^  histogram  *0 mismatching bins' "$ERR" && [ -s out.png ]; then
        ok "--cpu-ref $b: exit 0, every stage 0 mismatches"
    else
        not_ok "--cpu-ref $b: exit $RC"
        show_err
    fi
    rm -f out.png
done
ge $G --cpu-ref=2 -q -o out "$SAMPLES/photo.png" "$SAMPLES/grey.png" "$SAMPLES/rgba.png"
[ "$RC" -eq 0 ] && grep -q '^cpu-ref: 2 frames checked, 0 with mismatches' "$ERR" &&
    ok "--cpu-ref=2 over 3 images checks 2 frames" || { not_ok "--cpu-ref=2: exit $RC"; show_err; }
rm -rf out
for o in "--sigma 0" "--sigma 16 --border zero" "--border reflect101 --threshold 30 --invert" "--scale 7.5"; do
    ge $G --cpu-ref $o "$SAMPLES/odd_321x241.png" out.pgm
    [ "$RC" -eq 0 ] && grep -q '0 with mismatches' "$ERR" && ok "--cpu-ref $o: exit 0" ||
        { not_ok "--cpu-ref $o: exit $RC"; show_err; }
    rm -f out.pgm
done

# ---- --report (text, to stderr)
ge $G --report "$SAMPLES/photo.png" out.png
[ "$RC" -eq 0 ] && grep -q '^gpuedge report' "$ERR" && grep -q 'decode' "$ERR" &&
    grep -q 'frames 1, pixels 240000' "$ERR" && grep -q 'bound by' "$ERR" && [ ! -s "$OUT" ] &&
    ok "--report: text on stderr (stages, frames, pixels, bound by)" ||
    { not_ok "--report: exit $RC"; show_err; }
rm -f out.png

# ---- --report=json: valid JSON with the numbers
json_ok() { # FILE: valid JSON object with frames 1 and pixels 240000
    python3 - "$1" <<'EOF'
import json, sys
with open(sys.argv[1]) as f:
    r = json.load(f)
assert isinstance(r, dict), "not an object"
assert r["frames"] == 1 and r["pixels"] == 240000, (r["frames"], r["pixels"])
assert "stages" in r and "decode" in r["stages"], "no stages.decode"
assert r["backend"] == "cpu"
EOF
}
ge $G --report=json "$SAMPLES/photo.png" out.png
if ! have_python; then
    skip "--report=json: python3 not installed"
elif [ "$RC" -eq 0 ] && python3 -m json.tool "$ERR" >/dev/null 2>&1 && json_ok "$ERR" 2>"$T/py.err"; then
    ok "--report=json: one JSON object on stderr (python3 -m json.tool), frames 1, pixels 240000"
else
    not_ok "--report=json: exit $RC; $(tail -n 1 "$T/py.err" 2>/dev/null)"
    show_err
fi
rm -f out.png

# ---- --report-file FILE (text by default, json when asked); stderr stays quiet
ge $G --report-file rep.txt "$SAMPLES/photo.png" out.png
[ "$RC" -eq 0 ] && [ ! -s "$ERR" ] && grep -q '^gpuedge report' rep.txt &&
    ok "--report-file: text report in the file, stderr empty" ||
    { not_ok "--report-file: exit $RC"; show_err; }
rm -f out.png rep.txt
ge $G --report=json --report-file rep.json "$SAMPLES/photo.png" out.png
if ! have_python; then
    skip "--report=json --report-file: python3 not installed"
elif [ "$RC" -eq 0 ] && [ ! -s "$ERR" ] && json_ok rep.json 2>"$T/py.err"; then
    ok "--report=json --report-file: valid JSON in the file"
else
    not_ok "--report=json --report-file: exit $RC; $(tail -n 1 "$T/py.err" 2>/dev/null)"
    show_err
fi
rm -f out.png
printf 'old\n' >rep.json
sum=$(sum_of rep.json)
ge $G --report=json --report-file rep.json "$SAMPLES/photo.png" out.png
[ "$RC" -eq 1 ] && grep -q 'rep\.json: output exists' "$ERR" && [ "$(sum_of rep.json)" = "$sum" ] &&
    ok "--report-file that exists: exit 1, file untouched (no -y)" ||
    { not_ok "--report-file exists: exit $RC"; show_err; }
rm -f out.png rep.json
no_stray_files "$W" && ok "reports: no temp file left" || not_ok "$WHY"

# ---- --hist FILE: header + one row per image, 256 bins summing to W*H
ge $G -q --hist h.csv -o out "$SAMPLES/photo.png" "$SAMPLES/grey.png" "$SAMPLES/odd_321x241.png"
if [ "$RC" -ne 0 ] || [ ! -s h.csv ]; then
    not_ok "--hist: exit $RC, no h.csv"
    show_err
else
    ok "--hist h.csv: exit 0"
    head -n 1 h.csv | grep -q '^file,frame,pts,b0,b1,.*,b255$' &&
        [ "$(head -n 1 h.csv | tr ',' '\n' | wc -l)" -eq 259 ] &&
        ok "--hist header: file,frame,pts,b0..b255" || not_ok "--hist header: $(head -c 60 h.csv)"
    [ "$(nlines h.csv)" -eq 4 ] && ok "--hist: one row per image" ||
        not_ok "--hist: $(nlines h.csv) lines, expected 4"
    # name -> W*H; each row: 256 bins summing to it
    bad=$(awk -F, 'NR == 1 { next }
        { n = 0; s = 0; for (i = 4; i <= NF; i++) { n++; s += $i }
          want = ($1 ~ /photo/) ? 240000 : ($1 ~ /grey/) ? 262144 : ($1 ~ /odd_321x241/) ? 77361 : -1
          if (n != 256 || s != want) print $1 ": " n " bins, sum " s ", expected " want }' h.csv)
    [ -z "$bad" ] && ok "--hist: 256 bins per row, summing to W*H" || not_ok "--hist: $bad"
fi
rm -rf out h.csv
# a file name that needs CSV quoting
cp "$SAMPLES/grey.png" 'we,ird"name.png'
ge $G --hist h.csv 'we,ird"name.png' out.png
if ! have_python; then
    skip "--hist CSV quoting: python3 not installed"
elif [ "$RC" -eq 0 ] && python3 - h.csv <<'EOF'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
assert len(rows) == 2 and len(rows[1]) == 259, [len(r) for r in rows]
assert rows[1][0] == 'we,ird"name.png', rows[1][0]
assert sum(int(x) for x in rows[1][3:]) == 512 * 512
EOF
then
    ok "--hist: a name with a comma and a quote is quoted as CSV"
else
    not_ok "--hist CSV quoting: exit $RC"
    show_err
fi
rm -f h.csv out.png

# ---- a batch report has one line per file (JSON: a "files" array)
cp "$SAMPLES/grey.png" g1.png
cp "$SAMPLES/odd_321x241.png" g2.png
ge --backend=cpu -q --report=json --report-file r.json -o rb g1.png g2.png
if [ "$RC" -eq 0 ] && have_python && python3 - r.json <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
files = {f["file"]: f for f in r["files"]}
assert set(files) == {"g1.png", "g2.png"}, files
assert all(f["frames"] == 1 and f["seconds"] > 0 for f in files.values()), files
EOF
then
    ok "--report=json of a batch lists every file with frames and seconds"
else
    not_ok "batch report per file: exit $RC"
    show_err
fi
ge --backend=cpu -q -y --report -o rb g1.png g2.png
if [ "$RC" -eq 0 ] && grep -q 'per file' "$ERR" && grep -q ' g1\.png$' "$ERR" && grep -q ' g2\.png$' "$ERR"; then
    ok "--report of a batch has a per-file table"
else
    not_ok "batch text report per file: exit $RC"
    show_err
fi
rm -rf rb r.json g1.png g2.png

finish
