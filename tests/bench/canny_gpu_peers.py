#!/usr/bin/env python3
"""canny_gpu_peers.py - the Canny peers of bench_canny on the GPU machine,
one 3840x2160 RGB frame (the same discs-and-boxes picture bench_canny
draws, from numpy here), each library timed on what it is given:

  kornia   kornia.filters.canny on the GPU (PyTorch; kornia is pure Python,
           carried as a wheel), float32 RGB (B,C,H,W) in [0, 1], 5x5 Gaussian
           sigma 1, thresholds 0.1 / 0.2, hysteresis on; CUDA events around
           the call, median of 20 after 3 warm-ups; also with the uint8 ->
           float conversion inside the pair ("RGB8 in").
  cv2      cv2.Canny on cv2.setNumThreads(N) threads (default 16), the
           blurred grey uint8 frame (cvtColor + GaussianBlur sigma 1 done
           beforehand), L2gradient, thresholds 50 / 150; and the whole
           cvtColor + GaussianBlur + Canny; median of 20.
  skimage  skimage.feature.canny(grey float, sigma=1), single thread,
           median of 3.

Prints one 'peer ...' line each (ms); a library that does not import is a
'skip peer ...' line.  Usage: canny_gpu_peers.py [THREADS]
"""
import sys
import time

import numpy as np

W, H = 3840, 2160
THREADS = int(sys.argv[1]) if len(sys.argv) > 1 else 16


def shapes():
    rng = np.random.default_rng(20261201)
    img = (40 + rng.integers(0, 5, (H, W))).astype(np.uint8)
    yy, xx = np.ogrid[0:H, 0:W]
    for _ in range(600):
        cx, cy = int(rng.integers(0, W)), int(rng.integers(0, H))
        r = 4 + int(rng.integers(0, 200))
        v = int(rng.integers(0, 256))
        y0, y1, x0, x1 = max(cy - r, 0), min(cy + r + 1, H), max(cx - r, 0), min(cx + r + 1, W)
        if rng.integers(0, 2):
            m = (xx[:, x0:x1] - cx) ** 2 + (yy[y0:y1, :] - cy) ** 2 <= r * r
            img[y0:y1, x0:x1][m] = v
        else:
            img[y0:y1, x0:x1] = v
    rgb = np.stack([img, (img.astype(np.uint16) * 3 // 4).astype(np.uint8),
                    (img // 2 + 20).astype(np.uint8)], axis=2)
    return np.ascontiguousarray(rgb)


def med(v):
    v = sorted(v)
    return v[len(v) // 2]


def main():
    rgb = shapes()
    print(f"# canny_gpu_peers: {W}x{H} RGB8 discs and boxes, {THREADS} threads for cv2")
    try:
        import torch
        import kornia
        dev = torch.device("cuda")
        x8 = torch.from_numpy(rgb).to(dev).permute(2, 0, 1).unsqueeze(0).contiguous()
        xf = x8.float() / 255.0
        ev0, ev1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        for name, conv in (("float RGB in", False), ("RGB8 in", True)):
            ts = []
            for i in range(23):
                ev0.record()
                inp = x8.float() / 255.0 if conv else xf
                mag, edges = kornia.filters.canny(inp, low_threshold=0.1, high_threshold=0.2,
                                                  kernel_size=(5, 5), sigma=(1.0, 1.0))
                ev1.record()
                torch.cuda.synchronize()
                if i >= 3:
                    ts.append(ev0.elapsed_time(ev1))
            print(f"peer kornia {kornia.__version__} torch {torch.__version__} ({name}) "
                  f"{med(ts):.3f} ms (min {min(ts):.3f}) on {torch.cuda.get_device_name()}; "
                  f"{int((edges > 0).sum())} edge px")
    except Exception as e:  # noqa: BLE001 - any failure is a skip line
        print(f"skip peer kornia: {type(e).__name__}: {e}")
    try:
        import cv2
        cv2.setNumThreads(THREADS)
        grey = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)
        blur = cv2.GaussianBlur(grey, (5, 5), 1.0)
        ts, tw = [], []
        for i in range(23):
            t0 = time.perf_counter()
            e = cv2.Canny(blur, 50, 150, L2gradient=True)
            t1 = time.perf_counter()
            g = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)
            b = cv2.GaussianBlur(g, (5, 5), 1.0)
            e2 = cv2.Canny(b, 50, 150, L2gradient=True)
            t2 = time.perf_counter()
            if i >= 3:
                ts.append((t1 - t0) * 1e3)
                tw.append((t2 - t1) * 1e3)
        print(f"peer cv2 {cv2.__version__} Canny ({cv2.getNumThreads()} threads) {med(ts):.3f} ms; "
              f"cvtColor+GaussianBlur+Canny {med(tw):.3f} ms; {int((e > 0).sum())} edge px "
              f"({int((e2 > 0).sum())})")
    except Exception as e:  # noqa: BLE001
        print(f"skip peer cv2: {type(e).__name__}: {e}")
    try:
        import skimage
        from skimage import feature
        g = (rgb[:, :, 0] * 0.299 + rgb[:, :, 1] * 0.587 + rgb[:, :, 2] * 0.114).astype(np.float32)
        ts = []
        for i in range(4):
            t0 = time.perf_counter()
            e = feature.canny(g, sigma=1.0, low_threshold=20, high_threshold=60)
            if i >= 1:
                ts.append((time.perf_counter() - t0) * 1e3)
        print(f"peer skimage {skimage.__version__} feature.canny (1 thread) {med(ts):.1f} ms; "
              f"{int(e.sum())} edge px")
    except Exception as e:  # noqa: BLE001
        print(f"skip peer skimage: {type(e).__name__}: {e}")


if __name__ == "__main__":
    main()
