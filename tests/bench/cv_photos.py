#!/usr/bin/env python3
# "What a user would write instead of gpuedge" for a folder of photos
# (issue #10): one process per core, each cv2.imread -> gpuedge's default
# math in float32 (gpu_peers.cv_f32: grey 0.299 R + 0.587 G + 0.114 B,
# Gaussian sigma 1 with gpuedge's taps and BORDER_REPLICATE, Sobel 3x3,
# magnitude, round) -> cv2.imwrite PNG (OpenCV's default PNG settings).
#
#   cv_photos.py [--jobs N] [--sigma S] OUTDIR IMAGE...
#
# Writes OUTDIR/<stem>.png per image (what gpuedge -o OUTDIR writes, so
# the maps can be compared name by name).  Prints one line:
#   RESULT cv_photos images=N seconds=S
# Exit 1 when an image cannot be read or written; 77 (skip) without cv2.
import argparse
import os
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:
    import cv2
    import numpy as np  # noqa: F401 (gpu_peers needs it)
    from gpu_peers import cv_f32, taps
except ImportError as e:
    print("SKIP cv_photos: %s" % e)
    sys.exit(77)

K = None


def init(sigma):
    global K
    cv2.setNumThreads(1)  # one process per core, as the script
    K = taps(sigma)[0]


def one(job):
    src, dst = job
    bgr = cv2.imread(src, cv2.IMREAD_COLOR)
    if bgr is None:
        return "%s: cannot read" % src
    e, _ = cv_f32(cv2, bgr, K, 1.0, bgr=True)
    if not cv2.imwrite(dst, e):
        return "%s: cannot write" % dst
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--sigma", type=float, default=1.0)
    ap.add_argument("outdir")
    ap.add_argument("images", nargs="+")
    a = ap.parse_args()
    t0 = time.perf_counter()
    os.makedirs(a.outdir, exist_ok=True)
    jobs = [(p, os.path.join(a.outdir, os.path.splitext(os.path.basename(p))[0] + ".png"))
            for p in a.images]
    # the largest first: the pool's tail is then the small ones
    jobs.sort(key=lambda j: -os.path.getsize(j[0]))
    import multiprocessing
    with multiprocessing.Pool(a.jobs, initializer=init, initargs=(a.sigma,)) as pool:
        errs = [e for e in pool.imap_unordered(one, jobs) if e]
    t1 = time.perf_counter()
    for e in errs:
        print("cv_photos.py: " + e, file=sys.stderr)
    print("RESULT cv_photos images=%d seconds=%.3f" % (len(jobs) - len(errs), t1 - t0))
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main())
