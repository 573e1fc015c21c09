#!/usr/bin/env python3
"""photo_batch.py — a large photo batch for `make bench`:
COUNT files of JPEG and PNG photos from 2560x1600 to 5120x2880, made from
real photos (the mate-backgrounds ones tests/bench/fetch_realdata.sh
fetches), for tests/bench/photos.py to time gpuedge and the OpenCV script
on.

  photo_batch.py [--count 200] [--unique 18] [--formats jpg,png] OUT_DIR SRC...
  photo_batch.py --list     the mate-backgrounds photos the benchmark makes
                            it from (device_payload.sh carries those; make
                            bench's photobatch step passes them)

--unique distinct images are made: each source photo in turn, scaled to
cover the next size of 2560x1600, 3840x2160 and 5120x2880 (area
averaging down, bicubic up) and cut to it at the centre, written
in turn in --formats: JPEG (quality 90, 4:2:0, what a camera or a web
site gives) and PNG (OpenCV's default level).  The batch is then COUNT copies
of them in turn, p000.jpg, p001.png, ...  Needs cv2 and numpy; prints
one line: files, formats, megapixels, bytes.
"""
import argparse
import os
import shutil
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from photos import photos_of  # noqa: E402  (the folders' photos, as photos.py takes them)

SIZES = ((2560, 1600), (3840, 2160), (5120, 2880))
# the benchmark's sources: the mate-backgrounds JPEGs of 2560x1600 and up
# but the 5640x3172 one (16 MB), and two PNGs
SOURCES = ("Aqua.jpg", "Garden.jpg", "LadyBird.jpg", "TwoWings.jpg", "YellowFlower.jpg",
           "Wood.jpg", "Elephants_3840x2160.jpg", "Ubuntu-Mate-Cold-no-logo.png", "Gulp.png")


def fit(cv2, img, w, h):
    """img scaled to cover w x h, then its centre w x h."""
    ih, iw = img.shape[:2]
    s = max(w / iw, h / ih)
    nw, nh = max(w, round(iw * s)), max(h, round(ih * s))
    interp = cv2.INTER_AREA if s < 1 else cv2.INTER_CUBIC
    img = cv2.resize(img, (nw, nh), interpolation=interp)
    x, y = (nw - w) // 2, (nh - h) // 2
    return img[y:y + h, x:x + w]


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--unique", type=int, default=18)
    ap.add_argument("--formats", default="jpg,png")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("out", nargs="?")
    ap.add_argument("src", nargs="*")
    a = ap.parse_args()
    if a.list:
        print(" ".join(SOURCES))
        return 0
    if not a.out or not a.src:
        ap.error("OUT_DIR and SRC... are needed")
    import cv2

    srcs = photos_of(a.src)
    formats = [f for f in a.formats.split(",") if f in ("jpg", "png")]
    if not formats:
        print("photo_batch.py: --formats: jpg, png or both", file=sys.stderr)
        return 2
    if not srcs:
        print("photo_batch.py: no source photos in %s" % " ".join(a.src), file=sys.stderr)
        return 1
    os.makedirs(a.out, exist_ok=True)
    uniq, mpx = [], []
    for i in range(a.unique):
        img = cv2.imread(srcs[i % len(srcs)], cv2.IMREAD_COLOR)
        if img is None:
            print("photo_batch.py: cannot read %s" % srcs[i % len(srcs)], file=sys.stderr)
            return 1
        w, h = SIZES[i % len(SIZES)]
        img = fit(cv2, img, w, h)
        ext = "." + formats[i % len(formats)]
        path = os.path.join(a.out, ".u%02d%s" % (i, ext))
        params = [cv2.IMWRITE_JPEG_QUALITY, 90] if ext == ".jpg" else []
        if not cv2.imwrite(path, img, params):
            print("photo_batch.py: cannot write %s" % path, file=sys.stderr)
            return 1
        uniq.append(path)
        mpx.append(w * h / 1e6)
    total, nbytes, kinds = 0.0, 0, {}
    for k in range(a.count):
        u = k % len(uniq)
        ext = os.path.splitext(uniq[u])[1]
        dst = os.path.join(a.out, "p%03d%s" % (k, ext))
        shutil.copyfile(uniq[u], dst)
        total += mpx[u]
        nbytes += os.path.getsize(dst)
        kinds[ext] = kinds.get(ext, 0) + 1
    for u in uniq:
        os.remove(u)
    print("photo_batch: %d files (%s) in %s, %.0f Mpx, %.0f MB, from %d distinct images of %d "
          "photos" % (a.count, ", ".join("%d %s" % (v, k[1:]) for k, v in sorted(kinds.items())),
                      a.out, total, nbytes / 1e6, len(uniq), len(srcs)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
