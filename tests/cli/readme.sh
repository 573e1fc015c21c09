#!/bin/sh
# Every command of the README's usage block runs: each line after the
# "usage: tests/cli/readme.sh" marker, as written, in a fresh directory that
# holds what the lines name, made from the samples: photo.jpg, photos/ (the
# sample PNGs and a JPEG), clip.mp4 (5 s, made with ffmpeg), videos/ (two
# short clips) and examples/ (the repository's).  `gpuedge` on PATH is the
# binary under test; the library and the Python module are those of a
# `make install` into a temporary PREFIX (pkg-config, LD_LIBRARY_PATH and
# PYTHONPATH point there), as a user has them after the README's set-up.
# Passes when a line exits 0 and leaves a new file or prints something.
# A line that needs what this machine lacks is a "skip" with the reason:
# a GPU (--backend=gpu, --hwdec=nvdec, --jpeg-decoder=nvjpeg, --devices),
# the network (a URL), a C compiler, NumPy.
. "$(dirname "$0")/lib.sh"

awk '/<!-- usage: tests\/cli\/readme.sh/ { on = 1; next } on && /^    / { sub(/^    /, ""); print; next }
     on { exit }' "$ROOT/README.md" >"$T/usage.txt"
doc_commands "README usage block" "$T/usage.txt" 8 || finish

# ---- the inputs the lines name
TPL=$T/tpl
mkdir -p "$TPL/photos" "$TPL/videos" || exit 1
cp "$SAMPLES"/photo.png "$SAMPLES"/grey.png "$SAMPLES"/odd_321x241.png "$TPL/photos/" || exit 1
ffmpeg -loglevel error -i "$SAMPLES/photo.png" -q:v 3 "$TPL/photo.jpg" &&
    cp "$TPL/photo.jpg" "$TPL/photos/beach.jpg" &&
    ffmpeg -loglevel error -f lavfi -i testsrc2=size=160x120:rate=15 -t 5 -pix_fmt yuv420p \
        -c:v libx264 -preset ultrafast "$TPL/clip.mp4" &&
    ffmpeg -loglevel error -f lavfi -i testsrc=size=128x96:rate=10 -t 2 -pix_fmt yuv420p \
        -c:v libx264 -preset ultrafast "$TPL/videos/a.mp4" &&
    ffmpeg -loglevel error -f lavfi -i mandelbrot=size=96x64:rate=10 -t 1 -c:v ffv1 \
        "$TPL/videos/b.mkv" || { not_ok "README inputs: ffmpeg could not make them"; finish; }
cp -R "$ROOT/examples" "$TPL/examples" || exit 1

# ---- PATH: gpuedge is the binary under test, python3 one that has NumPy
BIN=$T/bin
mkdir -p "$BIN"
printf '#!/bin/sh\nexec "%s" "$@"\n' "$GPUEDGE" >"$BIN/gpuedge"
chmod +x "$BIN/gpuedge"
PY=
for p in /usr/bin/python3 python3; do
    if "$p" -c 'import numpy' 2>/dev/null; then PY=$(command -v "$p"); break; fi
done
[ -n "$PY" ] && ln -s "$PY" "$BIN/python3"

# ---- the library and Python module as installed (only when a line needs them)
P=$T/prefix
need_install=0
grep -q -e 'pkg-config' -e 'import gpuedge' "$T/usage.txt" && need_install=1
installed=0
if [ "$need_install" = 1 ] && [ "${SANITIZE:-}" != 1 ]; then
    if make -s -C "$ROOT" ${SMS:+SMS="$SMS"} install PREFIX="$P" >"$T/make.log" 2>&1; then
        installed=1
    else
        not_ok "make install PREFIX (for the library and Python lines) failed"
        sed -n '1,6s/^/#   /p' "$T/make.log"
    fi
fi

# ---- each line, in a fresh copy of the inputs, with the installed library
export PATH="$BIN:$P/bin:$PATH" PKG_CONFIG_PATH="$P/lib/pkgconfig" LD_LIBRARY_PATH="$P/lib" \
    PYTHONPATH="$P/lib/python3/dist-packages" GPUEDGE_LIB=
i=0
while IFS= read -r line; do
    i=$((i + 1))
    cmd=$(printf '%s\n' "${line%%  #*}" | sed 's/[[:space:]]*$//') # without its comment
    why=
    case $cmd in
    *--backend=gpu* | *--backend\ gpu* | *--hwdec=nvdec* | *--jpeg-decoder=nvjpeg* | *--devices*)
        have_gpu || why="needs a GPU ($(gpu_why))" ;;
    esac
    case $cmd in *://*) why="needs the network" ;; esac
    case $cmd in
    *pkg-config*)
        command -v cc >/dev/null 2>&1 && command -v pkg-config >/dev/null 2>&1 ||
            why="needs cc and pkg-config"
        [ "$installed" = 1 ] || why="${why:-needs make install (the sanitizer build is not installed)}" ;;
    *'import gpuedge'*)
        [ -n "$PY" ] || why="needs python3 with NumPy"
        [ "$installed" = 1 ] || why="${why:-needs make install (the sanitizer build is not installed)}" ;;
    esac
    if [ -n "$why" ]; then
        skip "README line $i: $why: $cmd"
        continue
    fi
    doc_run "README line $i" "$cmd" "$TPL"
done <"$T/usage.txt"
finish
