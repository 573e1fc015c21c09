#!/usr/bin/env python3
# OpenCV peer for tests/bench/cpu_peers.sh: gpuedge's pipeline (DESIGN.md §1) in
# OpenCV, timed in-process (processing only, no I/O), plus max |Δ| of its
# edge map against gpuedge's.
#
#   cpu_peers.py [--threads N] [--runs N] [--sigma S] IMAGE.png GPUEDGE_EDGES.png
#
# Prints machine-readable lines:
#   RESULT opencv-f32 WxH MS_MEDIAN maxdiff=D ndiff=N histdiff=H
#   RESULT opencv-u8  WxH MS_MEDIAN maxdiff=D ndiff=N
# Exit 77 (skip) when cv2/numpy are missing.
import argparse
import math
import sys
import time

try:
    import cv2
    import numpy as np
except ImportError as e:  # skip, not fail: the script runs on any machine
    print("SKIP opencv: %s (Debian: apt-get install python3-opencv python3-numpy;"
          " run with /usr/bin/python3)" % e)
    sys.exit(77)


def taps(sigma):
    """DESIGN.md §1.3: w_k = Φ((k+½)/σ) − Φ((k−½)/σ), k = −r..r, in double,
    normalised to sum 1, then rounded to float32.  r = max(1, ceil(2σ))."""
    r = max(1, math.ceil(2 * sigma))
    phi = lambda x: 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))
    w = [phi((k + 0.5) / sigma) - phi((k - 0.5) / sigma) for k in range(-r, r + 1)]
    s = sum(w)
    return np.array([x / s for x in w], dtype=np.float32), r


def pipeline_f32(bgr, k):
    """float32 pipeline: grey (0.299 R + 0.587 G + 0.114 B in float) →
    separable Gaussian (gpuedge's taps, replicate) → Sobel 3×3 dx, dy →
    magnitude → round to 8 bit (saturating) → 256-bin histogram."""
    g = cv2.cvtColor(bgr.astype(np.float32), cv2.COLOR_BGR2GRAY)
    b = cv2.sepFilter2D(g, cv2.CV_32F, k, k, borderType=cv2.BORDER_REPLICATE)
    gx = cv2.Sobel(b, cv2.CV_32F, 1, 0, ksize=3, borderType=cv2.BORDER_REPLICATE)
    gy = cv2.Sobel(b, cv2.CV_32F, 0, 1, ksize=3, borderType=cv2.BORDER_REPLICATE)
    m = cv2.magnitude(gx, gy)
    e = cv2.convertScaleAbs(m)  # saturate_cast<uchar>: round-half-even, clamp 255
    h = cv2.calcHist([e], [0], None, [256], [0, 256])
    return e, h


def pipeline_u8(bgr, ksize, sigma):
    """The fastest usual 8-bit OpenCV chain (reference only, not the same
    math): grey u8 → GaussianBlur u8 → Sobel CV_16S → |gx| + |gy| (L1,
    saturating) → histogram."""
    g = cv2.cvtColor(bgr, cv2.COLOR_BGR2GRAY)
    b = cv2.GaussianBlur(g, (ksize, ksize), sigma, borderType=cv2.BORDER_REPLICATE)
    gx = cv2.Sobel(b, cv2.CV_16S, 1, 0, ksize=3, borderType=cv2.BORDER_REPLICATE)
    gy = cv2.Sobel(b, cv2.CV_16S, 0, 1, ksize=3, borderType=cv2.BORDER_REPLICATE)
    e = cv2.add(cv2.convertScaleAbs(gx), cv2.convertScaleAbs(gy))
    h = cv2.calcHist([e], [0], None, [256], [0, 256])
    return e, h


def bench(fn, runs):
    for _ in range(3):  # warm-up: thread pool, allocations, caches
        fn()
    ts = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        ts.append((time.perf_counter() - t0) * 1e3)
    ts.sort()
    return ts[len(ts) // 2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--sigma", type=float, default=1.0)
    ap.add_argument("image")
    ap.add_argument("gpuedge_edges", nargs="?")
    a = ap.parse_args()

    cv2.setNumThreads(a.threads)
    bgr = cv2.imread(a.image, cv2.IMREAD_COLOR)
    if bgr is None:
        print("cpu_peers.py: %s: cannot read" % a.image, file=sys.stderr)
        return 1
    H, W = bgr.shape[:2]
    k, r = taps(a.sigma)
    ref = None
    if a.gpuedge_edges:
        ref = cv2.imread(a.gpuedge_edges, cv2.IMREAD_UNCHANGED)
        if ref is None or ref.shape != (H, W):
            print("cpu_peers.py: %s: cannot read or wrong size" % a.gpuedge_edges,
                  file=sys.stderr)
            ref = None
    size = "%dx%d" % (W, H)
    print("INFO opencv %s, threads=%d, taps(sigma=%g, r=%d)=%s"
          % (cv2.__version__, cv2.getNumThreads(), a.sigma, r,
             " ".join("%.8g" % x for x in k)))

    ms = bench(lambda: pipeline_f32(bgr, k), a.runs)
    e, h = pipeline_f32(bgr, k)
    extra = ""
    if ref is not None:
        d = np.abs(e.astype(np.int16) - ref.astype(np.int16))
        href = np.bincount(ref.ravel(), minlength=256)
        hd = int(np.abs(h.ravel().astype(np.int64) - href).sum())
        extra = " maxdiff=%d ndiff=%d histdiff=%d" % (d.max(), int((d != 0).sum()), hd)
    print("RESULT opencv-f32 %s %.3f%s" % (size, ms, extra))

    ms = bench(lambda: pipeline_u8(bgr, 2 * r + 1, a.sigma), a.runs)
    e, _ = pipeline_u8(bgr, 2 * r + 1, a.sigma)
    extra = ""
    if ref is not None:
        d = np.abs(e.astype(np.int16) - ref.astype(np.int16))
        extra = " maxdiff=%d ndiff=%d" % (d.max(), int((d != 0).sum()))
    print("RESULT opencv-u8 %s %.3f%s" % (size, ms, extra))
    return 0


if __name__ == "__main__":
    sys.exit(main())
