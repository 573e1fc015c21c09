#!/bin/bash
# same_bytes.sh OLD NEW: two gpuedge binaries over the real-data media
# (build/realdata: tests/bench/fetch_realdata.sh) give the same bytes: the
# photos and WebP wallpapers to PNG (one batch each), the three Big Buck
# Bunny clips to .mkv and, with --hist, the histogram CSV; the CPU backend
# unless BACKEND says otherwise.  For a change that must not change any
# output (a refactor); prints one line a case and "N same, N differ".
# Env: REALDATA (build/realdata), BACKEND (cpu), WORK (a temporary folder).
set -u
[ $# = 2 ] || { echo "usage: same_bytes.sh OLD_GPUEDGE NEW_GPUEDGE" >&2; exit 2; }
OLD=$1 NEW=$2
RD=${REALDATA:-build/realdata}
BACKEND=${BACKEND:-cpu}
W=${WORK:-$(mktemp -d)}
[ -n "${WORK:-}" ] || trap 'rm -rf "$W"' EXIT
same=0 differ=0
check() { # NAME FILE_OLD FILE_NEW
    if cmp -s "$2" "$3"; then same=$((same + 1)); echo "same   $1"
    else differ=$((differ + 1)); echo "DIFFER $1"; fi
}
for set in photos webp; do
    [ -d "$RD/$set" ] || { echo "skip $set: no $RD/$set"; continue; }
    for k in old new; do
        g=$OLD; [ $k = new ] && g=$NEW
        mkdir -p "$W/$k-$set"
        "$g" -q -y --backend="$BACKEND" --format png --hist "$W/$k-$set.csv" \
            -o "$W/$k-$set" "$RD/$set" || echo "exit $? ($k $set)"
    done
    for f in "$W/old-$set"/*; do check "$set/$(basename "$f")" "$f" "$W/new-$set/$(basename "$f")"; done
    [ "$(ls "$W/old-$set" | wc -l)" = "$(ls "$W/new-$set" | wc -l)" ] || { differ=$((differ + 1)); echo "DIFFER $set: file counts"; }
    check "$set --hist CSV" "$W/old-$set.csv" "$W/new-$set.csv"
done
for v in bbb720 bbb1080 bbb2160; do
    [ -s "$RD/video/$v.mp4" ] || { echo "skip $v: no $RD/video/$v.mp4"; continue; }
    for k in old new; do
        g=$OLD; [ $k = new ] && g=$NEW
        "$g" -q -y --backend="$BACKEND" --hist "$W/$k-$v.csv" "$RD/video/$v.mp4" "$W/$k-$v.mkv" ||
            echo "exit $? ($k $v)"
    done
    check "video/$v.mp4 -> .mkv" "$W/old-$v.mkv" "$W/new-$v.mkv"
    check "video/$v.mp4 --hist CSV" "$W/old-$v.csv" "$W/new-$v.csv"
done
echo "$same same, $differ differ"
[ $differ = 0 ]
