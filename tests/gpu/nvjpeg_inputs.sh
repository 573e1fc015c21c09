#!/bin/sh
# tests/gpu/nvjpeg_inputs.sh DIR — what tests/gpu/run's nvjpeg step needs,
# made on the build machine (the GPU machine has no package registry):
#   DIR/libnvjpeg.so.13  from NVIDIA's nvidia-nvjpeg wheel (pip download;
#                        the platform flags matter: without them pip picks
#                        a placeholder that holds nothing)
#   DIR/corpus/*.jpg     photo-sized JPEGs made with PIL from Debian's
#                        mate-backgrounds photos (apt-get download): 4:2:0,
#                        4:4:4, 4:2:2, grey, progressive, and a truncated one
# About 10 MB of JPEGs and a 6 MB library (xz it to ~3.6 MB to carry).
# Then carry DIR and run:  GPUEDGE_NVJPEG=DIR/libnvjpeg.so.13
#   NVJPEG_CORPUS=DIR/corpus bash tests/gpu/run nvjpeg
set -eu
[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
out=$1
mkdir -p "$out/corpus"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

pip download --no-deps --only-binary=:all: --platform manylinux2014_x86_64 \
    --python-version 3.12 nvidia-nvjpeg==13.2.3.58 -d "$tmp/whl" >/dev/null
/usr/bin/python3 -m zipfile -e "$tmp"/whl/nvidia_nvjpeg-*.whl "$tmp/x"
cp "$tmp/x/nvidia/cu13/lib/libnvjpeg.so.13" "$out/"

(cd "$tmp" && apt-get download mate-backgrounds >/dev/null 2>&1)
dpkg-deb -x "$tmp"/mate-backgrounds_*.deb "$tmp/mbg"
/usr/bin/python3 - "$tmp/mbg/usr/share/backgrounds/mate" "$out/corpus" <<'PY'
import sys
from PIL import Image
src, dst = sys.argv[1], sys.argv[2]
def rgb(name):
    return Image.open(f"{src}/{name}").convert("RGB")
rgb("abstract/Elephants_5640x3172.jpg").save(f"{dst}/elephants_5640x3172_420.jpg", quality=88, subsampling=2)
rgb("abstract/Elephants_3840x2160.jpg").save(f"{dst}/elephants_3840x2160_444.jpg", quality=85, subsampling=0)
rgb("nature/Wood.jpg").save(f"{dst}/wood_2560x1920_420.jpg", quality=90, subsampling=2)
rgb("nature/TwoWings.jpg").save(f"{dst}/twowings_2560x1600_422.jpg", quality=90, subsampling=1)
Image.open(f"{src}/nature/RainDrops.jpg").convert("L").save(f"{dst}/raindrops_1920x1200_grey.jpg", quality=90)
rgb("nature/Storm.jpg").save(f"{dst}/storm_1920x1280_progressive.jpg", quality=90, progressive=True)
d = open(f"{dst}/wood_2560x1920_420.jpg", "rb").read()
open(f"{dst}/wood_corrupt_truncated.jpg", "wb").write(d[: len(d) * 6 // 10])
PY
ls -l "$out/libnvjpeg.so.13" "$out/corpus"
