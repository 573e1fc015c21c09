#!/bin/sh
# make_samples.sh — (re)creates the sample images in samples/ (see README.md
# there for what each one is, where it comes from and its licence).
#
#   samples/make_samples.sh           create the files that are missing
#   samples/make_samples.sh --force   recreate every file
#   samples/make_samples.sh --check   recreate them in a temporary directory
#                                     and compare their pixels with the
#                                     committed files (exit 1 on a mismatch)
#
# The committed images are what the tests use; this script only documents
# and repeats how they were made.  When every file already exists it does
# nothing and needs no network.  Otherwise it needs, on Debian 12:
#   - python3-skimage 0.19.3-8 (the source photographs).  Used in place when
#     installed; else fetched with `apt-get download` (no root needed) and
#     unpacked with `dpkg-deb -x` into a temporary directory.
#   - python3-pil (crop, alpha, 16-bit).  Installed with apt-get when
#     missing (needs root or sudo).
# Environment: PYTHON (default /usr/bin/python3, Debian's, which sees
# python3-pil), SKIMAGE_DATA (a directory holding skimage's data/ files,
# to skip the download).
set -eu

SKIMAGE_VERSION=0.19.3-8
PYTHON=${PYTHON:-/usr/bin/python3}
here=$(cd "$(dirname "$0")" && pwd)
FILES="photo.png grey.png odd_321x241.png rgba.png grey16.png"

mode=missing
case "${1:-}" in
    "") ;;
    --force) mode=force ;;
    --check) mode=check ;;
    -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "make_samples.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
esac

if [ "$mode" = missing ]; then
    need=
    for f in $FILES; do [ -s "$here/$f" ] || need="$need $f"; done
    if [ -z "$need" ]; then
        echo "make_samples.sh: all samples present; nothing to do"
        exit 0
    fi
    echo "make_samples.sh: making$need"
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

if [ "$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi

# --- python3-pil -----------------------------------------------------------
if ! "$PYTHON" -c 'import PIL' 2>/dev/null; then
    echo "make_samples.sh: installing python3-pil"
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq \
        --no-install-recommends python3-pil >/dev/null ||
        { $SUDO apt-get update -qq &&
          DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq \
              --no-install-recommends python3-pil >/dev/null; }
fi

# --- the source photographs (python3-skimage) ------------------------------
data=${SKIMAGE_DATA:-}
if [ -z "$data" ]; then
    inst=/usr/lib/python3/dist-packages/skimage/data
    ver=$(dpkg-query -W -f='${Version}' python3-skimage 2>/dev/null || true)
    if [ "$ver" = "$SKIMAGE_VERSION" ] && [ -f "$inst/coffee.png" ]; then
        data=$inst
    else
        echo "make_samples.sh: fetching python3-skimage=$SKIMAGE_VERSION"
        # apt-get download writes to the current directory; as root, let
        # apt's sandbox user write there (else apt warns and runs unsandboxed).
        mkdir "$tmp/dl"
        if [ "$(id -u)" = 0 ] && id _apt >/dev/null 2>&1; then chmod 711 "$tmp"; chown _apt "$tmp/dl"; fi
        (cd "$tmp/dl" && apt-get download -q "python3-skimage=$SKIMAGE_VERSION" >/dev/null) ||
            { echo "make_samples.sh: apt-get download python3-skimage=$SKIMAGE_VERSION failed" >&2
              exit 1; }
        dpkg-deb -x "$tmp"/dl/python3-skimage_*.deb "$tmp/x"
        data=$tmp/x/usr/lib/python3/dist-packages/skimage/data
    fi
fi
for f in coffee.png camera.png; do
    [ -f "$data/$f" ] || { echo "make_samples.sh: $data/$f: missing" >&2; exit 1; }
done

# --- make them -------------------------------------------------------------
if [ "$mode" = check ]; then out=$tmp/out; else out=$here; fi
mkdir -p "$out"

"$PYTHON" - "$data" "$out" "$mode" <<'EOF'
import os, shutil, sys
from PIL import Image

data, out, mode = sys.argv[1:4]

def wanted(name):
    return mode != "missing" or not (os.path.isfile(os.path.join(out, name))
                                     and os.path.getsize(os.path.join(out, name)) > 0)

def save(im, name):
    # Temp file + rename, like gpuedge itself: never a half-written sample.
    path = os.path.join(out, name)
    im.save(path + ".tmp.png", format="PNG", optimize=True)
    os.replace(path + ".tmp.png", path)

# photo.png: skimage's coffee.png, copied byte for byte (600x400 RGB, 8 bit).
if wanted("photo.png"):
    shutil.copyfile(os.path.join(data, "coffee.png"), os.path.join(out, "photo.png.tmp"))
    os.replace(os.path.join(out, "photo.png.tmp"), os.path.join(out, "photo.png"))

# grey.png: skimage's camera.png, copied byte for byte (512x512 grey, 8 bit).
if wanted("grey.png"):
    shutil.copyfile(os.path.join(data, "camera.png"), os.path.join(out, "grey.png.tmp"))
    os.replace(os.path.join(out, "grey.png.tmp"), os.path.join(out, "grey.png"))

photo = Image.open(os.path.join(data, "coffee.png")).convert("RGB")
camera = Image.open(os.path.join(data, "camera.png")).convert("L")
W, H = photo.size

# odd_321x241.png: a 321x241 crop of the photo (odd in both directions, not
# a multiple of any block size), taken around the cup.
if wanted("odd_321x241.png"):
    x0, y0 = 150, 60
    save(photo.crop((x0, y0, x0 + 321, y0 + 241)), "odd_321x241.png")

# rgba.png: the photo's RGB with a synthetic alpha channel: a left-to-right
# ramp 0..255, and a fully transparent 64x64 top-left corner.  gpuedge
# ignores alpha (DESIGN.md §1.1), so its edge map equals photo.png's bit for bit.
if wanted("rgba.png"):
    alpha = Image.new("L", (W, H))
    alpha.putdata([0 if (x < 64 and y < 64) else (x * 255) // (W - 1)
                   for y in range(H) for x in range(W)])
    rgba = photo.copy()
    rgba.putalpha(alpha)
    save(rgba, "rgba.png")

# grey16.png: grey.png widened to 16 bits (v * 257, so 255 -> 65535):
# exercises stbi_load_16 and the S16 scale.
if wanted("grey16.png"):
    g16 = Image.new("I;16", camera.size)
    g16.putdata([v * 257 for v in camera.getdata()])
    save(g16, "grey16.png")
EOF

if [ "$mode" = check ]; then
    # shellcheck disable=SC2086  # FILES is a list of plain names
    "$PYTHON" - "$here" "$out" $FILES <<'EOF'
import hashlib, sys
from PIL import Image
here, out, names = sys.argv[1], sys.argv[2], sys.argv[3:]
bad = 0
def px(path):
    im = Image.open(path)
    return (im.mode, im.size, hashlib.sha256(im.tobytes()).hexdigest())
for n in names:
    try:
        a = px(f"{here}/{n}")
    except OSError as e:
        print(f"not ok {n}: {e}"); bad = 1; continue
    b = px(f"{out}/{n}")
    if a == b:
        print(f"ok {n} {a[0]} {a[1][0]}x{a[1][1]} pixels sha256 {a[2]}")
    else:
        print(f"not ok {n}: committed {a} != regenerated {b}"); bad = 1
sys.exit(bad)
EOF
fi
