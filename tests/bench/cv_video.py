#!/usr/bin/env python3
# "What a user would write instead of gpuedge" for a video: OpenCV only,
#   cv2.VideoCapture(CLIP) -> per frame the float32 pipeline of gpu_peers.py
#   (cvtColor BGR->grey in float32, sepFilter2D with gpuedge's taps and
#   BORDER_REPLICATE, Sobel CV_32F ksize 3, magnitude, convertScaleAbs,
#   calcHist; all threads) -> cv2.VideoWriter(OUT, FFV1, isColor=False).
# Prints the end-to-end figure (open to release: decode + BGR conversion +
# processing + FFV1 encode + mux), then a second pass that only decodes
# (cap.read(), the same BGR frames) for the decode-alone rate:
#   RESULT cv_video frames=N seconds=S fps=F
#   RESULT cv_decode frames=N seconds=S fps=F
# Not bit-exact with gpuedge and not meant to be: OpenCV decodes to BGR
# (libswscale, its own matrix) and takes grey from that, where gpuedge
# takes the luma plane of a YUV source (DESIGN.md §1.2).  A throughput peer.
#
#   cv_video.py [--threads N] [--sigma S] [--scale K] [--frames N] CLIP OUT.mkv
# Exit 0; 1 when the clip cannot be opened or the writer cannot be made;
# 77 (skip) when cv2/numpy are missing.
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
    print("SKIP cv_video: %s" % e)
    sys.exit(77)


def main():
    ap = argparse.ArgumentParser(description="OpenCV decode -> float32 edge "
                                 "pipeline -> FFV1 .mkv, end-to-end fps")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--sigma", type=float, default=1.0)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--frames", type=int, default=0, help="stop after N (0: all)")
    ap.add_argument("clip")
    ap.add_argument("out")
    a = ap.parse_args()
    cv2.setNumThreads(a.threads)
    k, r = taps(a.sigma)

    t0 = time.perf_counter()
    cap = cv2.VideoCapture(a.clip)
    if not cap.isOpened():
        print("cv_video.py: %s: cannot open" % a.clip, file=sys.stderr)
        return 1
    fps_in = cap.get(cv2.CAP_PROP_FPS) or 25.0
    writer = None
    n = 0
    hist_total = 0
    while not a.frames or n < a.frames:
        ok, frame = cap.read()
        if not ok:
            break
        e, h = cv_f32(cv2, frame, k, a.scale, bgr=True)
        if writer is None:
            H, W = e.shape
            writer = cv2.VideoWriter(a.out, cv2.VideoWriter_fourcc(*"FFV1"), fps_in,
                                     (W, H), isColor=False)
            if not writer.isOpened():
                print("cv_video.py: %s: cannot open an FFV1 writer (OpenCV built "
                      "without FFmpeg?)" % a.out, file=sys.stderr)
                return 1
        writer.write(e)
        hist_total += int(h.sum())
        n += 1
    cap.release()
    if writer is not None:
        writer.release()
    t1 = time.perf_counter()
    if n == 0:
        print("cv_video.py: %s: no frame decoded" % a.clip, file=sys.stderr)
        return 1
    print("# cv_video: opencv %s, %d threads, sigma %g (r %d), %dx%d, %d frames, "
          "histogram total %d px" % (cv2.__version__, cv2.getNumThreads(), a.sigma,
                                     r, W, H, n, hist_total))
    print("RESULT cv_video frames=%d seconds=%.3f fps=%.2f" % (n, t1 - t0, n / (t1 - t0)))

    t0 = time.perf_counter()
    cap = cv2.VideoCapture(a.clip)
    m = 0
    while not a.frames or m < a.frames:
        ok, _ = cap.read()
        if not ok:
            break
        m += 1
    cap.release()
    t1 = time.perf_counter()
    print("RESULT cv_decode frames=%d seconds=%.3f fps=%.2f" % (m, t1 - t0, m / (t1 - t0)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
