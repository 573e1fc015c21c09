#!/usr/bin/env python3
# Canny peers (issue 12, `sh tests/bench/run canny`): one 4K frame, the
# same blurred input given to each library where its API allows, ms per
# frame (median of --runs after warm-up):
#
#   cv2-canny         cv2.Canny(blurred u8, LOW, HIGH, L2gradient=True) on
#                     all threads (cv2.setNumThreads): its own 3x3 Sobel,
#                     NMS, hysteresis
#   cv2-canny-dxdy    cv2.Canny(dx, dy, 8 LOW, 8 HIGH, L2gradient=True) on our
#                     blurred plane's Sobel x8 as int16 (the IoU test's
#                     form): NMS + hysteresis only
#   skimage           skimage.feature.canny(blurred float, sigma=0, LOW, HIGH)
#                     (its magnitude is ours: scipy's unnormalised Sobel);
#                     single-threaded by design.  Debian: python3-skimage
#                     (BENCH_DEB_PACKAGES in the Makefile; ~130 packages,
#                     so not in DEB_PACKAGES)
#   kornia            kornia.filters.canny on the GPU when torch sees one
#                     (else the CPU), blurred grey / 255 as (1,1,H,W) float32,
#                     thresholds / 255; its API always blurs, so a 3x3
#                     kernel of sigma 0.01 (the identity to float precision)
#                     stands in; torch.cuda.Event timing, TF32 off
#   gpuedge           with --gpuedge BIN: `BIN --backend=B --canny LOW,HIGH`
#                     and the plain Sobel map over --frames copies of the
#                     frame as a PPM batch; the report's compute-stage median
#                     (GPU events on the GPU, wall time of the band workers
#                     on the CPU) and the Canny / Sobel ratio
#
# The blurred input: the frame's grey (0.299 R + 0.587 G + 0.114 B) blurred
# with gpuedge's taps for --sigma (sepFilter2D, BORDER_REPLICATE), made once
# and not timed; u8 = rounded.  The frame: --image (default
# samples/photo.png) resized to --size with INTER_CUBIC.
#
#   canny_peers.py [--size 3840x2160] [--image PNG] [--runs 10] [--threads N]
#                  [--sigma 1] [--low 40] [--high 100] [--gpuedge BIN]
#                  [--backend cpu|gpu|auto] [--frames 8]
#                  [--peers cv2-canny,cv2-canny-dxdy,skimage,kornia,gpuedge]
#
# Prints "RESULT NAME WxH MS [detail]" lines and a Markdown table; a peer
# whose module is missing prints "SKIP NAME: why".  Exit 0, or 1 when a
# peer failed outright.
import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

try:
    import numpy as np
    import cv2
except ImportError as e:
    print("SKIP canny peers: %s (Debian: python3-opencv python3-numpy; "
          "run with /usr/bin/python3)" % e)
    sys.exit(0)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def taps(sigma):
    """DESIGN.md §1.3: w_k = Phi((k+1/2)/s) - Phi((k-1/2)/s), k = -r..r, double,
    normalised, rounded to float32; r = max(1, ceil(2 s))."""
    r = max(1, math.ceil(2 * sigma))
    phi = lambda x: 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))
    w = [phi((k + 0.5) / sigma) - phi((k - 0.5) / sigma) for k in range(-r, r + 1)]
    s = sum(w)
    return np.array([x / s for x in w], dtype=np.float32)


def median_ms(fn, runs, warm=2, sync=None):
    for _ in range(warm):
        fn()
    if sync:
        sync()
    ts = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        if sync:
            sync()
        ts.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(ts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", default="3840x2160")
    ap.add_argument("--image", default=os.path.join(ROOT, "samples", "photo.png"))
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--sigma", type=float, default=1.0)
    ap.add_argument("--low", type=float, default=40.0)
    ap.add_argument("--high", type=float, default=100.0)
    ap.add_argument("--gpuedge")
    ap.add_argument("--backend", default="auto")
    ap.add_argument("--frames", type=int, default=8)
    ap.add_argument("--peers", default="cv2-canny,cv2-canny-dxdy,skimage,kornia,gpuedge")
    a = ap.parse_args()
    w, h = (int(v) for v in a.size.lower().split("x"))
    peers = a.peers.split(",")
    lo, hi = a.low, a.high
    failed = 0
    results = []

    bgr = cv2.imread(a.image, cv2.IMREAD_COLOR)
    if bgr is None:
        print("canny_peers: cannot read %s" % a.image)
        return 1
    bgr = cv2.resize(bgr, (w, h), interpolation=cv2.INTER_CUBIC)
    grey = cv2.cvtColor(bgr.astype(np.float32), cv2.COLOR_BGR2GRAY)
    if a.sigma > 0:
        k = taps(a.sigma)
        blur = cv2.sepFilter2D(grey, cv2.CV_32F, k, k, borderType=cv2.BORDER_REPLICATE)
    else:
        blur = grey
    blur8 = np.clip(np.rint(blur), 0, 255).astype(np.uint8)
    cv2.setNumThreads(a.threads)
    print("# %dx%d from %s, sigma %g, LOW %g HIGH %g, %d CPU threads for OpenCV"
          % (w, h, os.path.basename(a.image), a.sigma, lo, hi, a.threads))

    def report(name, ms, detail=""):
        results.append((name, ms, detail))
        print("RESULT %s %dx%d %.3f %s" % (name, w, h, ms, detail))
        sys.stdout.flush()

    if "cv2-canny" in peers:
        ms = median_ms(lambda: cv2.Canny(blur8, lo, hi, L2gradient=True), a.runs)
        e = cv2.Canny(blur8, lo, hi, L2gradient=True)
        report("cv2-canny", ms, "threads=%d edges=%d" % (cv2.getNumThreads(),
                                                         int(np.count_nonzero(e))))
    if "cv2-canny-dxdy" in peers:
        gx = cv2.Sobel(blur, cv2.CV_32F, 1, 0, ksize=3, borderType=cv2.BORDER_REPLICATE)
        gy = cv2.Sobel(blur, cv2.CV_32F, 0, 1, ksize=3, borderType=cv2.BORDER_REPLICATE)
        dx = np.clip(np.rint(gx * 8), -32768, 32767).astype(np.int16)
        dy = np.clip(np.rint(gy * 8), -32768, 32767).astype(np.int16)
        ms = median_ms(lambda: cv2.Canny(dx, dy, 8 * lo, 8 * hi, L2gradient=True), a.runs)
        report("cv2-canny-dxdy", ms, "threads=%d (NMS + hysteresis)" % cv2.getNumThreads())

    if "skimage" in peers:
        try:
            from skimage.feature import canny as sk_canny
            import skimage
            runs = max(1, min(a.runs, 3))  # ~seconds a 4K frame
            ms = median_ms(lambda: sk_canny(blur, sigma=0, low_threshold=lo,
                                            high_threshold=hi), runs, warm=1)
            report("skimage", ms, "version=%s threads=1" % skimage.__version__)
        except ImportError as e:
            print("SKIP skimage: %s (Debian: python3-skimage; make bench-deps)" % e)
        except Exception as e:  # noqa: BLE001 - a peer's failure is reported
            print("FAIL skimage: %s" % e)
            failed = 1

    if "kornia" in peers:
        try:
            import torch
            import kornia
            dev = "cuda" if torch.cuda.is_available() else "cpu"
            torch.backends.cudnn.allow_tf32 = False
            torch.backends.cuda.matmul.allow_tf32 = False
            x = torch.from_numpy(blur / 255.0).float().reshape(1, 1, h, w).to(dev)

            def run_k():
                return kornia.filters.canny(x, low_threshold=lo / 255.0,
                                            high_threshold=hi / 255.0,
                                            kernel_size=(3, 3), sigma=(0.01, 0.01))
            if dev == "cuda":
                for _ in range(3):
                    run_k()
                torch.cuda.synchronize()
                ts = []
                for _ in range(a.runs):
                    e0 = torch.cuda.Event(enable_timing=True)
                    e1 = torch.cuda.Event(enable_timing=True)
                    e0.record()
                    run_k()
                    e1.record()
                    e1.synchronize()
                    ts.append(e0.elapsed_time(e1))
                ms = statistics.median(ts)
            else:
                ms = median_ms(run_k, max(1, min(a.runs, 3)), warm=1)
            report("kornia", ms, "version=%s device=%s" % (kornia.__version__, dev))
        except ImportError as e:
            print("SKIP kornia: %s (PyTorch + the kornia wheel)" % e)
        except Exception as e:  # noqa: BLE001
            print("FAIL kornia: %s" % e)
            failed = 1

    if "gpuedge" in peers and a.gpuedge:
        tmp = tempfile.mkdtemp(prefix="canny-peers.")
        try:
            ppm = os.path.join(tmp, "frame.ppm")
            cv2.imwrite(ppm, bgr)
            names = []
            for i in range(a.frames):
                n = os.path.join(tmp, "f%03d.ppm" % i)
                os.symlink(ppm, n)
                names.append(n)
            ms = {}
            for what, extra in (("sobel", []), ("canny", ["--canny", "%g,%g" % (lo, hi)])):
                out = os.path.join(tmp, "out-" + what)
                os.mkdir(out)
                rep = os.path.join(tmp, what + ".json")
                cmd = [a.gpuedge, "-q", "--backend=" + a.backend, "--sigma", "%g" % a.sigma,
                       "--report=json", "--report-file", rep, "--format", "pgm",
                       "-o", out] + extra + names
                r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                if r.returncode != 0:
                    print("FAIL gpuedge %s: exit %d: %s" % (what, r.returncode,
                                                            r.stderr.decode(errors="replace").strip()))
                    failed = 1
                    break
                with open(rep) as f:
                    j = json.load(f)
                ms[what] = j["stages"]["compute"]["median_ms"]
                report("gpuedge-" + what, ms[what], "backend=%s path=%s frames=%d"
                       % (j["backend"], j["path"], a.frames))
            if len(ms) == 2:
                print("# gpuedge Canny / Sobel compute: %.2fx" % (ms["canny"] / ms["sobel"]))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    elif "gpuedge" in peers:
        print("SKIP gpuedge: no --gpuedge BIN")

    if results:
        print()
        print("| %dx%d Canny | ms / frame | detail |" % (w, h))
        print("|---|---:|---|")
        for name, ms, detail in results:
            print("| %s | %.2f | %s |" % (name, ms, detail))
    return failed


if __name__ == "__main__":
    sys.exit(main())
