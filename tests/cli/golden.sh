#!/bin/sh
# Golden regression: tests/golden.csv holds, for every samples/*.png and a few
# option sets, the edge map's width, height, frame count and the SHA-256 of
# its pixels (written as PGM, header stripped).  The CPU backend is checked
# against it, and the GPU too when one is usable.  A change in any edge map
# fails here and shows in `git diff tests/golden.csv` once regenerated:
#
#     sh tests/cli/golden.sh --update        (or GOLDEN_UPDATE=1 sh tests/cli/golden.sh)
#
# Regenerate only for an intended change of the math (DESIGN.md §1), and say why
# in the commit.
. "$(dirname "$0")/lib.sh"

CSV=$ROOT/tests/golden.csv
HEADER=sample,options,width,height,frames,sha256_of_edge_map
update=${GOLDEN_UPDATE:-0}
[ "${1:-}" = --update ] && update=1

# One option set a line; "default" means none.
OPTION_SETS='default
--sigma 2.5 --border reflect101
--sigma 0 --border zero
--threshold 40 --invert'

# row BACKEND SAMPLE OPTIONS: prints the CSV row (or nothing on failure,
# with the reason in $T/row.err)
row() {
    backend=$1 sample=$2 opts=$3
    rm -f e.pgm r.json
    set --
    [ "$opts" = default ] || set -- $opts
    if ! "$GPUEDGE" -q --backend="$backend" --report=json --report-file r.json "$@" \
        "$SAMPLES/$sample" e.pgm 2>"$T/row.err"; then
        return 1
    fi
    set -- $(head -n 2 e.pgm | tail -n 1)
    w=$1 h=$2
    size=$(wc -c <e.pgm | tr -d ' ')
    hdr=$(printf 'P5\n%s %s\n255\n' "$w" "$h" | wc -c | tr -d ' ')
    if [ "$(head -c 2 e.pgm)" != P5 ] || [ "$size" -ne $((hdr + w * h)) ]; then
        echo "e.pgm is not a ${w}x${h} binary PGM ($size bytes)" >"$T/row.err"
        return 1
    fi
    frames=$(sed -n 's/.*"frames":\([0-9]*\).*/\1/p' r.json)
    sum=$(tail -c $((w * h)) e.pgm | sha256sum | cut -d ' ' -f 1)
    echo "$sample,$opts,$w,$h,${frames:-?},$sum"
}

# Every sample x option set, in a stable order.
for s in "$SAMPLES"/*.png; do
    b=$(basename "$s")
    echo "$OPTION_SETS" | while IFS= read -r o; do
        printf '%s\t%s\n' "$b" "$o"
    done
done >"$T/cases"

if [ "$update" = 1 ]; then
    echo "$HEADER" >"$T/golden.csv"
    while IFS='	' read -r b o; do
        if ! row cpu "$b" "$o" >>"$T/golden.csv"; then
            not_ok "--update: $b [$o]: $(head -n 1 "$T/row.err")"
            finish
        fi
    done <"$T/cases"
    mv "$T/golden.csv" "$CSV.tmp" && mv "$CSV.tmp" "$CSV" || {
        not_ok "--update: cannot write $CSV"
        finish
    }
    ok "wrote $(($(nlines "$CSV") - 1)) rows to tests/golden.csv (see git diff)"
    finish
fi

if [ ! -f "$CSV" ]; then
    not_ok "no tests/golden.csv (run sh tests/cli/golden.sh --update)"
    finish
fi
[ "$(head -n 1 "$CSV")" = "$HEADER" ] && ok "tests/golden.csv header" ||
    not_ok "tests/golden.csv header is '$(head -n 1 "$CSV")', expected '$HEADER'"

check_backend() {
    backend=$1
    while IFS='	' read -r b o; do
        want=$(awk -F , -v b="$b" -v o="$o" '$1 == b && $2 == o { print; exit }' "$CSV")
        if [ -z "$want" ]; then
            not_ok "$backend: $b [$o]: no row in tests/golden.csv (new sample? run --update)"
            continue
        fi
        got=$(row "$backend" "$b" "$o")
        if [ -z "$got" ]; then
            not_ok "$backend: $b [$o]: gpuedge failed: $(head -n 1 "$T/row.err")"
        elif [ "$got" = "$want" ]; then
            ok "$backend: $b [$o]"
        else
            not_ok "$backend: $b [$o]: got ${got#"$b,$o,"}, expected ${want#"$b,$o,"}"
        fi
    done <"$T/cases"
}

check_backend cpu
if have_gpu; then
    check_backend gpu
else
    skip "gpu: $(gpu_why)"
fi

# Rows for samples or option sets that no longer exist are stale.
tail -n +2 "$CSV" | while IFS=, read -r b o rest; do
    grep -q -F -x "$(printf '%s\t%s' "$b" "$o")" "$T/cases" || echo "$b [$o]"
done >"$T/stale"
[ ! -s "$T/stale" ] && ok "no stale rows" ||
    not_ok "rows without a sample/option set: $(tr '\n' ' ' <"$T/stale")(run --update)"

finish
