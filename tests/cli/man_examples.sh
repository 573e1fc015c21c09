#!/bin/sh
# Every command of man/gpuedge.1's EXAMPLES runs: each "$ " line of its
# literal blocks (a line ending in "|" or "&&" continues on the next), as
# written, in a fresh directory holding what the commands name, made from
# the samples: photo.jpg, in.png, photos/ (JPEGs), clip.mp4, clip.mov,
# clip.mkv, videos/, in/.  `gpuedge` on PATH is the binary under test.
# Passes when a command exits 0 and writes a file (or prints).  Commands that need
# what this machine lacks are a "skip" with the reason: a GPU (--devices),
# the network (a URL), a display (ffplay), GNU parallel.
. "$(dirname "$0")/lib.sh"

MAN=$ROOT/man/gpuedge.1
awk '/^\.Sh EXAMPLES/ { on = 1; next } /^\.Sh / { on = 0 }
     on && /^\.Bd -literal/ { lit = 1; next } on && /^\.Ed/ { lit = 0; next }
     on && lit {
         if (cont != "") { sub(/^[ \t]+/, ""); cont = cont " " $0 }
         else if (/^\$ /) { cont = substr($0, 3) }
         else next
         if (cont ~ /(\||&&)[ \t]*$/) next
         print cont; cont = "" }' "$MAN" >"$T/examples.txt"
doc_commands "man page EXAMPLES" "$T/examples.txt" 10 || finish

# ---- the inputs the commands name
TPL=$T/tpl
mkdir -p "$TPL/photos" "$TPL/videos" "$TPL/in" || exit 1
cp "$SAMPLES/photo.png" "$TPL/in.png" && cp "$SAMPLES"/*.png "$TPL/in/" || exit 1
mk() { ffmpeg -loglevel error "$@" </dev/null; }
mk -i "$SAMPLES/photo.png" -q:v 3 "$TPL/photo.jpg" &&
    mk -i "$SAMPLES/grey.png" -q:v 3 "$TPL/photos/grey.jpg" &&
    cp "$TPL/photo.jpg" "$TPL/photos/photo.jpg" &&
    mk -f lavfi -i testsrc2=size=160x120:rate=10 -t 3 -pix_fmt yuv420p -c:v libx264 \
        -preset ultrafast "$TPL/clip.mp4" &&
    mk -f lavfi -i testsrc2=size=96x64:rate=5 -t 64 -pix_fmt yuv420p -c:v libx264 \
        -preset ultrafast "$TPL/clip.mov" &&
    mk -f lavfi -i testsrc=size=128x96:rate=10 -t 2 -c:v ffv1 "$TPL/clip.mkv" &&
    cp "$TPL/clip.mp4" "$TPL/videos/a.mp4" && cp "$TPL/clip.mkv" "$TPL/videos/b.mkv" &&
    cp "$TPL/clip.mp4" "$TPL/in/c.mp4" ||
    { not_ok "EXAMPLES inputs: ffmpeg could not make them"; finish; }

BIN=$T/bin
mkdir -p "$BIN"
printf '#!/bin/sh\nexec "%s" "$@"\n' "$GPUEDGE" >"$BIN/gpuedge"
chmod +x "$BIN/gpuedge"
export PATH="$BIN:$PATH"

i=0
while IFS= read -r cmd; do
    i=$((i + 1))
    why=
    case $cmd in
    *--devices*) have_gpu || why="needs a GPU ($(gpu_why))" ;;
    esac
    case $cmd in *://*) why="needs the network (a stream URL)" ;; esac
    case $cmd in *ffplay*) why="needs a display (ffplay)" ;; esac
    case $cmd in
    *parallel*)
        parallel --version 2>/dev/null | grep -q 'GNU parallel' ||
            why="needs GNU parallel (Debian package parallel; make deps)" ;;
    esac
    if [ -n "$why" ]; then
        skip "EXAMPLES command $i: $why: $cmd"
        continue
    fi
    doc_run "EXAMPLES command $i" "$cmd" "$TPL"
done <"$T/examples.txt"
finish
