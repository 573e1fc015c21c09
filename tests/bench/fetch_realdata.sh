#!/bin/sh
# fetch_realdata.sh — the real-data benchmark media (issues #10 and #11),
# fetched with the ordinary package clients, never committed:
#   photos/   Debian's mate-backgrounds wallpapers (real photos, JPEG and
#             PNG, 1280x1024 .. 5640x3172), as they are in the package
#   webp/     gnome-backgrounds' WebP wallpapers (for WebP input)
#   video/bbb720.mp4   the Big Buck Bunny clip bundled in the
#             absolutely-not-scikit-video wheel (1280x720, 132 frames, H.264)
#   video/bbb1080.mp4  it looped and scaled to 1920x1080, 530 frames
#   video/bbb2160.mp4  3840x2160, 265 frames
#             (both by tests/bin/bench_mkclip: libx264 CRF 28, preset
#             medium, GOP 125, 8 threads, bitexact swscale; the GPU machine
#             makes the same files from bbb720.mp4 with the same program)
#   ffmpeg/ffmpeg.xz   the static ffmpeg 7.0 of the imageio-ffmpeg wheel
#             (80 MB, 21 MB xz'd: the form a device call carries), and
#             ffmpeg/ffmpeg itself (runs here too)
#   SHA256SUMS         of everything above
#
#   sh tests/bench/fetch_realdata.sh [DIR]      (default: $REALDATA or build/realdata)
#   sh tests/bench/fetch_realdata.sh --clips BBB720.mp4 OUTDIR
#       only the 1080p/4K clips, from the 720p one (what the GPU machine runs;
#       bench_mkclip from $BENCH_MKCLIP, else PATH, else tests/bin)
# Idempotent: what is there already is kept.  Needs apt-get, dpkg-deb,
# pip (or python3 -m pip), unzip (or python3), xz, and tests/bin/bench_mkclip
# (built here when missing: make tests/bin/bench_mkclip SMS=90).
set -eu
cd "$(dirname "$0")/../.."
# The clips: name, size, frames; libx264 CRF 28, preset medium, GOP 125 (5 s),
# 8 threads (x264's output depends on the thread count, not on the cores).
make_clips() { # SRC OUTDIR
    for c in "1080 1920x1080 530" "2160 3840x2160 265"; do
        set -- "$1" "$2" $c
        if [ ! -s "$2/bbb$3.mp4" ]; then
            echo "fetch_realdata: making bbb$3.mp4 ($4, $5 frames)"
            "$MK" -s "$4" -n "$5" -c 28 -p medium -g 125 -t 8 "$1" "$2/bbb$3.mp4"
        fi
        set -- "$1" "$2"
    done
}
if [ "${1:-}" = --clips ]; then
    [ $# = 3 ] || { echo "usage: fetch_realdata.sh --clips BBB720.mp4 OUTDIR" >&2; exit 2; }
    MK=${BENCH_MKCLIP:-$(command -v bench_mkclip || echo tests/bin/bench_mkclip)}
    mkdir -p "$3"
    make_clips "$2" "$3"
    exit 0
fi
D=${1:-${REALDATA:-build/realdata}}
mkdir -p "$D/deb" "$D/photos" "$D/webp" "$D/video" "$D/ffmpeg" "$D/wheels"
D=$(cd "$D" && pwd)
PIP=${PIP:-}
if [ -z "$PIP" ]; then
    if command -v pip3 >/dev/null 2>&1; then PIP=pip3; else PIP="python3 -m pip"; fi
fi
say() { echo "fetch_realdata: $*"; }
unzip1() { # WHEEL MEMBER DEST: one member of a zip (python3: no unzip needed)
    python3 - "$1" "$2" "$3" <<'EOF'
import os, shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, z.open(sys.argv[2]) as f, open(sys.argv[3] + ".tmp", "wb") as o:
    shutil.copyfileobj(f, o)
os.replace(sys.argv[3] + ".tmp", sys.argv[3])
EOF
}

# --- photos: apt-get download (no root needed, nothing installed) ---------
for pkg in mate-backgrounds gnome-backgrounds; do
    if ! ls "$D/deb/${pkg}_"*.deb >/dev/null 2>&1; then
        say "apt-get download $pkg"
        (cd "$D/deb" && apt-get download "$pkg")
    fi
done
if [ -z "$(ls "$D/photos")" ]; then
    rm -rf "$D/x" && mkdir "$D/x"
    dpkg-deb -x "$D/deb/"mate-backgrounds_*.deb "$D/x"
    # the files themselves (some names are links to others: -type f only);
    # the names are unique across the package's folders
    find "$D/x" -type f \( -iname '*.jpg' -o -iname '*.jpeg' -o -iname '*.png' \) \
        -exec cp {} "$D/photos/" \;
    rm -rf "$D/x"
fi
if [ -z "$(ls "$D/webp")" ]; then
    rm -rf "$D/x" && mkdir "$D/x"
    dpkg-deb -x "$D/deb/"gnome-backgrounds_*.deb "$D/x"
    # the photo-sized ones (the package also holds tiny VNC placeholders)
    find "$D/x" -type f -iname '*.webp' -size +100k -exec cp {} "$D/webp/" \;
    rm -rf "$D/x"
fi
say "photos: $(ls "$D/photos" | wc -l) files, $(du -sh "$D/photos" | cut -f1); webp: $(ls "$D/webp" | wc -l)"

# --- footage: the wheel's Big Buck Bunny clip ---------------------------------
if [ ! -s "$D/video/bbb720.mp4" ]; then
    ls "$D/wheels/"absolutely_not_scikit_video-*.whl >/dev/null 2>&1 ||
        $PIP download -q --no-deps --only-binary=:all: -d "$D/wheels" \
            absolutely-not-scikit-video==1.1.12
    unzip1 "$(ls "$D/wheels/"absolutely_not_scikit_video-*.whl | head -n 1)" \
        skvideo/datasets/data/bigbuckbunny.mp4 "$D/video/bbb720.mp4"
fi

# --- the static ffmpeg (for the GPU machine, which has none) --------------
if [ ! -s "$D/ffmpeg/ffmpeg.xz" ]; then
    ls "$D/wheels/"imageio_ffmpeg-*manylinux2014_x86_64.whl >/dev/null 2>&1 ||
        $PIP download -q --no-deps --only-binary=:all: --platform manylinux2014_x86_64 \
            -d "$D/wheels" imageio-ffmpeg==0.7.0
    whl=$(ls "$D/wheels/"imageio_ffmpeg-*manylinux2014_x86_64.whl | head -n 1)
    member=$(python3 -c 'import sys, zipfile
print([n for n in zipfile.ZipFile(sys.argv[1]).namelist() if "/binaries/ffmpeg-" in n][0])' "$whl")
    unzip1 "$whl" "$member" "$D/ffmpeg/ffmpeg"
    chmod +x "$D/ffmpeg/ffmpeg"
    say "xz the static ffmpeg ($(du -sh "$D/ffmpeg/ffmpeg" | cut -f1); a minute or more)"
    xz -6 -T0 -c "$D/ffmpeg/ffmpeg" >"$D/ffmpeg/ffmpeg.xz.tmp"
    mv "$D/ffmpeg/ffmpeg.xz.tmp" "$D/ffmpeg/ffmpeg.xz"
fi
if [ ! -x "$D/ffmpeg/ffmpeg" ]; then
    xz -dc "$D/ffmpeg/ffmpeg.xz" >"$D/ffmpeg/ffmpeg" && chmod +x "$D/ffmpeg/ffmpeg"
fi

# --- the 1080p and 4K clips (minutes on 2 cores) ----------------------------
MK=${BENCH_MKCLIP:-tests/bin/bench_mkclip}
[ -x "$MK" ] || make --no-print-directory SMS="${SMS:-90}" "$MK"
make_clips "$D/video/bbb720.mp4" "$D/video"

(cd "$D" && find photos webp video ffmpeg -type f ! -name ffmpeg | LC_ALL=C sort | xargs sha256sum) >"$D/SHA256SUMS"
say "done: $D ($(du -sh --exclude=deb --exclude=wheels "$D" | cut -f1) besides the downloads)"
ls -l "$D/video" "$D/ffmpeg" | sed 's/^/  /'
