#!/usr/bin/env python3
# GPU peers for `make bench` (tests/bench/run): gpuedge's function (DESIGN.md §1:
# grey -> separable Gaussian with gpuedge's taps, replicate border -> Sobel
# -> m = sqrt(gx^2 + gy^2) -> e = min(255, floor(m*scale + 0.5)) -> 256-bin
# histogram) written the way a user of each library would write it:
#
#   opencv-f32  OpenCV on the CPU, all threads, float32 (cvtColor,
#               sepFilter2D with gpuedge's taps + BORDER_REPLICATE, Sobel
#               CV_32F ksize 3, magnitude, convertScaleAbs, calcHist);
#               the frame is already in host memory
#   opencv-u8   the fastest usual 8-bit OpenCV chain (GaussianBlur on u8,
#               Sobel CV_16S, |gx| + |gy|): approximate, not the same math
#   torch       PyTorch on the GPU, float32 conv2d (gpuedge's taps, F.pad
#               mode='replicate', TF32 off), bincount; frames already on
#               the device
#   cupy        CuPy on the GPU, cupyx.scipy.ndimage.correlate1d (gpuedge's
#               taps, mode='nearest' = replicate) + ndimage.sobel, bincount;
#               frames already on the device
#
# Timing: processing only (no upload, no download, no file I/O).  GPU peers:
# torch.cuda.Event / cupy.cuda.Event pairs around one whole frame, WARMUP
# frames first, then the median of --runs; the input frames are rotated
# among enough distinct device buffers (>= 4 and >= 256 MB of RGB8 in all,
# several times the 50-60 MB L2 of an H100/H200) that every frame's input
# comes from DRAM.  CPU peers: time.perf_counter around a frame, median of
# --cpu-runs after 2 warm-up frames.
#
# Correctness: max |d| of each peer's edge map against gpuedge's for the
# same frame (the frame written as a binary PPM, `gpuedge --backend=gpu
# in.ppm out.pgm`, falling back to --backend=cpu without a GPU; the two are
# bit-exact).  The float32 peers should be 0 or 1 (other summation order,
# no fma, round-half-even in convertScaleAbs); the 8-bit chain is far off
# by design.
#
# gpuedge's own GPU time for the ratio column: the fused kernel's
# "+memset" figure (histogram zeroing + fused kernel, what one frame costs
# in the pipeline) from bench_fused's output ("WxH rgb8 s1" lines): from
# --bench-fused-log FILE, else by running $TESTBIN/bench_fused (or
# tests/bin/bench_fused); --gpuedge-us WxH=US overrides a size.
#
#   gpu_peers.py [--sizes 1920x1080,3840x2160,7680x4320] [--runs 100]
#                [--cpu-runs 10] [--threads N] [--sigma 1] [--scale 1]
#                [--gpuedge BIN] [--bench-fused-log FILE] [--gpuedge-us WxH=US]
#                [--peers opencv-f32,opencv-u8,torch,cupy] [--dry-cpu]
#
# --dry-cpu: no GPU needed; the CuPy code path runs with numpy +
# scipy.ndimage standing in for cupy + cupyx.scipy.ndimage (timed with
# perf_counter), torch is skipped, gpuedge runs with --backend=cpu.  For
# checking the max |d| logic on a machine without a GPU.
#
# A missing module prints "SKIP <peer>: why" and the rest still runs.
# Exit 0; 1 when a peer or gpuedge failed outright or an argument is wrong.
import argparse
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

try:
    import numpy as np
except ImportError as e:
    print("SKIP gpu peers: %s (numpy is needed for every peer)" % e)
    sys.exit(0)

WARMUP = 10
SET_BYTES = 256 << 20  # RGB8 bytes the rotated inputs span at least


# --------------------------------------------------------------------------
# The definitions (DESIGN.md §1)

def taps(sigma):
    """DESIGN.md §1.3 exactly as src/lib/taps.c computes it: w_0 = erf(1/(2 s sqrt 2)),
    w_k = (erfc((k-1/2)/(s sqrt 2)) - erfc((k+1/2)/(s sqrt 2))) / 2 for k >= 1,
    all in double; sum = 2 w_r + ... + 2 w_1 + w_0 in that order; each
    w_k / sum rounded once to float32 and mirrored.  Returns (taps, r)."""
    if sigma == 0:
        return np.array([1.0], dtype=np.float32), 0
    r = max(1, int(math.ceil(2.0 * sigma)))
    r = min(r, 32)  # GE_MAX_RADIUS (sigma <= 16 -> r <= 32)
    s2 = sigma * math.sqrt(2.0)
    w = [0.0] * (r + 1)
    w[0] = math.erf(0.5 / s2)
    for k in range(1, r + 1):
        w[k] = 0.5 * (math.erfc((k - 0.5) / s2) - math.erfc((k + 0.5) / s2))
    total = 0.0
    for k in range(r, 0, -1):
        total += 2.0 * w[k]
    total += w[0]
    half = [np.float32(w[k] / total) for k in range(r + 1)]
    return np.array(half[:0:-1] + half, dtype=np.float32), r


def make_frame(W, H, seed):
    """A seeded RGB8 frame that looks like a picture, not like noise: smooth
    per-channel gradients and a low-frequency wave, ~60 filled rectangles
    and ellipses of random colours (sharp edges of every orientation),
    then mild Gaussian noise (sd 3 code values)."""
    rng = np.random.default_rng(seed)
    xs = np.linspace(0.0, 1.0, W, dtype=np.float32)[None, :]
    ys = np.linspace(0.0, 1.0, H, dtype=np.float32)[:, None]
    img = np.empty((H, W, 3), dtype=np.float32)
    for c in range(3):
        a, b, c0 = rng.uniform(-0.4, 0.4), rng.uniform(-0.4, 0.4), rng.uniform(0.3, 0.7)
        f1, f2, ph = rng.uniform(1, 4), rng.uniform(1, 4), rng.uniform(0, 2 * math.pi)
        img[..., c] = 255.0 * (c0 + a * xs + b * ys) + \
            30.0 * np.sin(2 * math.pi * (f1 * xs + f2 * ys) + ph)
    for _ in range(60):
        col = rng.uniform(0, 255, 3).astype(np.float32)
        w = int(rng.uniform(0.02, 0.25) * W)
        h = int(rng.uniform(0.02, 0.25) * H)
        x0 = int(rng.uniform(0, W - w))
        y0 = int(rng.uniform(0, H - h))
        if rng.random() < 0.5:
            img[y0:y0 + h, x0:x0 + w] = col
        else:
            yy = (np.arange(h, dtype=np.float32)[:, None] + 0.5 - h / 2) / (h / 2)
            xx = (np.arange(w, dtype=np.float32)[None, :] + 0.5 - w / 2) / (w / 2)
            mask = (xx * xx + yy * yy) <= 1.0
            img[y0:y0 + h, x0:x0 + w][mask] = col
    img += rng.standard_normal((H, W, 3), dtype=np.float32) * np.float32(3.0)
    np.clip(img, 0, 255, out=img)
    return np.rint(img).astype(np.uint8)


def write_ppm(path, rgb):
    H, W = rgb.shape[:2]
    with open(path, "wb") as f:
        f.write(b"P6\n%d %d\n255\n" % (W, H))
        f.write(np.ascontiguousarray(rgb).tobytes())


def read_pgm(path):
    """P5 (binary greymap), maxval <= 65535, comments allowed."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] != b"P5":
        raise ValueError("%s: not a binary PGM (P5)" % path)
    fields, i = [], 2
    while len(fields) < 3:
        while i < len(data) and data[i:i + 1].isspace():
            i += 1
        if data[i:i + 1] == b"#":
            while i < len(data) and data[i:i + 1] not in (b"\n", b"\r"):
                i += 1
            continue
        j = i
        while j < len(data) and data[j:j + 1].isdigit():
            j += 1
        if j == i:
            raise ValueError("%s: bad PGM header" % path)
        fields.append(int(data[i:j]))
        i = j
    W, H, maxval = fields
    i += 1  # the single whitespace after maxval
    dt = np.uint8 if maxval < 256 else np.dtype(">u2")
    n = W * H * np.dtype(dt).itemsize
    if len(data) - i < n:
        raise ValueError("%s: truncated PGM" % path)
    return np.frombuffer(data, dtype=dt, count=W * H, offset=i).reshape(H, W)


def run_gpuedge(gpuedge, rgb, tmp, tag, sigma, scale, force_cpu):
    """gpuedge's edge map of rgb: (map, backend used, note)."""
    ppm = os.path.join(tmp, tag + ".ppm")
    pgm = os.path.join(tmp, tag + ".pgm")
    write_ppm(ppm, rgb)
    opts = ["-q", "-y", "--sigma", repr(sigma), "--scale", repr(scale)]
    errs = []
    for be in (["cpu"] if force_cpu else ["gpu", "cpu"]):
        p = subprocess.run([gpuedge, "--backend=" + be] + opts + [ppm, pgm],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True)
        if p.returncode == 0:
            os.unlink(ppm)
            e = read_pgm(pgm)
            os.unlink(pgm)
            return e, be, "; ".join(errs)
        last = (p.stderr.strip().splitlines() or [""])[-1]
        errs.append("--backend=%s rc=%d: %s" % (be, p.returncode, last))
    os.unlink(ppm)
    raise RuntimeError("gpuedge failed: " + "; ".join(errs))


def compare(e, ref):
    d = np.abs(e.astype(np.int16) - ref.astype(np.int16))
    return int(d.max()), int(np.count_nonzero(d))


def quantise_np(m, scale):
    """DESIGN.md §1.6 in numpy (float32 throughout): min(255, floor(m*scale + 0.5))"""
    t = m * np.float32(scale) + np.float32(0.5)
    return np.minimum(np.floor(t), np.float32(255)).astype(np.uint8)


# --------------------------------------------------------------------------
# OpenCV (CPU)

def cv_f32(cv2, rgb, k, scale, bgr=False):
    """float32 OpenCV pipeline on an RGB8 (BGR8 with bgr=True: what
    cv2.VideoCapture gives) frame; returns (edges u8, hist).
    The quantisation is convertScaleAbs (saturate_cast: round half to even,
    clamp 255), what an OpenCV user writes; floor(t + 0.5) differs from it
    only where m*scale lands exactly on .5."""
    g = cv2.cvtColor(rgb.astype(np.float32),
                     cv2.COLOR_BGR2GRAY if bgr else cv2.COLOR_RGB2GRAY)
    b = cv2.sepFilter2D(g, cv2.CV_32F, k, k, borderType=cv2.BORDER_REPLICATE)
    gx = cv2.Sobel(b, cv2.CV_32F, 1, 0, ksize=3, borderType=cv2.BORDER_REPLICATE)
    gy = cv2.Sobel(b, cv2.CV_32F, 0, 1, ksize=3, borderType=cv2.BORDER_REPLICATE)
    m = cv2.magnitude(gx, gy)
    e = cv2.convertScaleAbs(m, alpha=scale)
    h = cv2.calcHist([e], [0], None, [256], [0, 256])
    return e, h.ravel()


def cv_u8(cv2, rgb, ksize, sigma):
    """The fastest usual 8-bit OpenCV chain: approximate (u8 grey and blur
    with OpenCV's own Gaussian, |gx| + |gy| instead of the L2 magnitude)."""
    g = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)
    if ksize > 1:
        g = cv2.GaussianBlur(g, (ksize, ksize), sigma, borderType=cv2.BORDER_REPLICATE)
    gx = cv2.Sobel(g, cv2.CV_16S, 1, 0, ksize=3, borderType=cv2.BORDER_REPLICATE)
    gy = cv2.Sobel(g, cv2.CV_16S, 0, 1, ksize=3, borderType=cv2.BORDER_REPLICATE)
    e = cv2.add(cv2.convertScaleAbs(gx), cv2.convertScaleAbs(gy))
    h = cv2.calcHist([e], [0], None, [256], [0, 256])
    return e, h.ravel()


def time_cpu(fn, runs):
    for _ in range(2):
        fn()
    ts = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        ts.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(ts)


# --------------------------------------------------------------------------
# GPU peers

def nsets_for(W, H):
    return max(4, -(-SET_BYTES // (W * H * 3)))


def torch_peer(torch, F, frames_dev, k, scale):
    """Returns fn(i) -> (edges u8 [H,W], hist int64[256]) on the device."""
    r = (len(k) - 1) // 2
    dev = frames_dev[0].device
    kh = torch.tensor(k, dtype=torch.float32, device=dev).view(1, 1, 1, -1)
    kv = kh.view(1, 1, -1, 1)
    sob = torch.tensor([[[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]],
                        [[-1, -2, -1], [0, 0, 0], [1, 2, 1]]],
                       dtype=torch.float32, device=dev).view(2, 1, 3, 3)

    def fn(i):
        x = frames_dev[i].to(torch.float32)        # [H, W, 3] RGB
        g = 0.299 * x[..., 0] + 0.587 * x[..., 1] + 0.114 * x[..., 2]
        g = g[None, None]                          # [1, 1, H, W]
        if r > 0:
            g = F.conv2d(F.pad(g, (r, r, 0, 0), mode="replicate"), kh)
            g = F.conv2d(F.pad(g, (0, 0, r, r), mode="replicate"), kv)
        gxy = F.conv2d(F.pad(g, (1, 1, 1, 1), mode="replicate"), sob)
        m = torch.sqrt(gxy[0, 0] * gxy[0, 0] + gxy[0, 1] * gxy[0, 1])
        e = torch.clamp(torch.floor(m * scale + 0.5), max=255.0).to(torch.uint8)
        h = torch.bincount(e.view(-1), minlength=256)
        return e, h
    return fn


def cupy_peer(xp, ndi, frames_dev, k, scale):
    """CuPy + cupyx.scipy.ndimage (or numpy + scipy.ndimage with --dry-cpu)."""
    kk = xp.asarray(k, dtype=xp.float32)
    r = (len(k) - 1) // 2
    c = [xp.float32(v) for v in (0.299, 0.587, 0.114, scale, 0.5, 255)]

    def fn(i):
        x = frames_dev[i]
        g = (c[0] * x[..., 0].astype(xp.float32) + c[1] * x[..., 1].astype(xp.float32)
             + c[2] * x[..., 2].astype(xp.float32))
        if r > 0:
            g = ndi.correlate1d(g, kk, axis=1, mode="nearest")
            g = ndi.correlate1d(g, kk, axis=0, mode="nearest")
        gx = ndi.sobel(g, axis=1, mode="nearest")
        gy = ndi.sobel(g, axis=0, mode="nearest")
        m = xp.sqrt(gx * gx + gy * gy)
        e = xp.minimum(xp.floor(m * c[3] + c[4]), c[5]).astype(xp.uint8)
        h = xp.bincount(e.ravel(), minlength=256)
        return e, h
    return fn


def time_gpu(make_event, elapsed_ms, sync, fn, nsets, runs):
    """Event pairs around one frame each; median ms.  Inputs rotate."""
    for i in range(WARMUP):
        fn(i % nsets)
    sync()
    ev = [(make_event(), make_event()) for _ in range(runs)]
    for j, (a, b) in enumerate(ev):
        a.record()
        fn((WARMUP + j) % nsets)
        b.record()
    sync()
    return statistics.median(elapsed_ms(a, b) for a, b in ev)


# --------------------------------------------------------------------------
# gpuedge's own time

FUSED_RE = re.compile(r"^(\d+x\d+) rgb8 s1\s+([0-9.]+)\s+\(\s*([0-9.]+)\s+([0-9.]+)\)"
                      r"\s+([0-9.]+)\s+([0-9.]+)")


def parse_bench_fused(text):
    """{ 'WxH': (kernel_us, memset_us, b2b_us) } from bench_fused's lines."""
    out = {}
    for line in text.splitlines():
        m = FUSED_RE.match(line.strip())
        if m:
            out[m.group(1)] = (float(m.group(2)), float(m.group(5)), float(m.group(6)))
    return out


def gpuedge_times(a, root):
    """{ 'WxH': (us, source) }"""
    got, src = {}, ""
    if a.sigma == 1 and a.scale == 1:  # bench_fused's cases are sigma 1
        text = None
        if a.bench_fused_log:
            try:
                with open(a.bench_fused_log) as f:
                    text = f.read()
                src = "bench_fused (%s)" % a.bench_fused_log
            except OSError as e:
                print("# bench_fused log: %s" % e)
        if text is None and not a.dry_cpu:
            tb = os.environ.get("TESTBIN") or os.path.join(root, "tests", "bin")
            bf = os.path.join(tb, "bench_fused")
            if os.access(bf, os.X_OK):
                p = subprocess.run([bf], stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, universal_newlines=True)
                text, src = p.stdout, "bench_fused (%s, run now)" % bf
                if p.returncode != 0:
                    print("# %s exited %d" % (bf, p.returncode))
            else:
                print("# no %s: gpuedge's time only from --gpuedge-us" % bf)
        if text:
            for sz, (k_us, m_us, _) in parse_bench_fused(text).items():
                got[sz] = (m_us, "%s: kernel %.1f us, +memset %.1f us" % (src, k_us, m_us))
    for spec in a.gpuedge_us:
        try:
            sz, us = spec.split("=")
            W, H = (int(v) for v in sz.lower().split("x"))
            got["%dx%d" % (W, H)] = (float(us), "--gpuedge-us")
        except ValueError:
            raise SystemExit("gpu_peers.py: --gpuedge-us %s: want WxH=US" % spec)
    return got


# --------------------------------------------------------------------------

def main():
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
    ap = argparse.ArgumentParser(
        description="gpuedge's function in OpenCV (CPU), PyTorch and CuPy (GPU): "
        "ms/frame and max |d| against gpuedge (see the comment at the top)")
    ap.add_argument("--sizes", default="1920x1080,3840x2160,7680x4320")
    ap.add_argument("--runs", type=int, default=100, help="timed frames, GPU peers")
    ap.add_argument("--cpu-runs", type=int, default=10, help="timed frames, CPU peers")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--sigma", type=float, default=1.0)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=20261129)
    ap.add_argument("--gpuedge", default=os.environ.get("GPUEDGE") or
                    os.path.join(root, "gpuedge"))
    ap.add_argument("--bench-fused-log")
    ap.add_argument("--gpuedge-us", action="append", default=[], metavar="WxH=US")
    ap.add_argument("--peers", default="opencv-f32,opencv-u8,torch,cupy")
    ap.add_argument("--dry-cpu", action="store_true")
    a = ap.parse_args()
    if a.runs < 1 or a.cpu_runs < 1 or a.scale <= 0 or not (
            a.sigma == 0 or 0.1 <= a.sigma <= 16):
        ap.error("runs >= 1, scale > 0, sigma 0 or 0.1..16")
    sizes = []
    for s in a.sizes.split(","):
        try:
            W, H = (int(v) for v in s.lower().split("x"))
        except ValueError:
            ap.error("--sizes: %s is not WxH" % s)
        sizes.append((W, H))
    peers = [p for p in a.peers.split(",") if p]
    bad = 0

    k, r = taps(a.sigma)
    print("# gpu_peers: sigma %g (r %d), taps %s, scale %g, replicate border"
          % (a.sigma, r, " ".join("%.9g" % v for v in k), a.scale))

    # ---- modules ------------------------------------------------------
    cv2 = torch = F = cp = cndi = None
    if any(p.startswith("opencv") for p in peers):
        try:
            import cv2
            cv2.setNumThreads(a.threads)
            print("# opencv %s, %d threads (cv2.getNumThreads), CPU, frame in host memory"
                  % (cv2.__version__, cv2.getNumThreads()))
        except ImportError as e:
            for p in peers:
                if p.startswith("opencv"):
                    print("SKIP %s: %s" % (p, e))
            peers = [p for p in peers if not p.startswith("opencv")]
    if "torch" in peers:
        if a.dry_cpu:
            print("SKIP torch: --dry-cpu")
            peers.remove("torch")
        else:
            try:
                import torch
                import torch.nn.functional as F
                if not torch.cuda.is_available():
                    raise ImportError("torch %s sees no CUDA device" % torch.__version__)
                torch.backends.cudnn.allow_tf32 = False       # float32 means float32
                torch.backends.cuda.matmul.allow_tf32 = False
                torch.backends.cudnn.benchmark = True         # fastest cuDNN algorithm
                print("# torch %s, CUDA %s, cuDNN %s, %s; TF32 off, cudnn.benchmark on"
                      % (torch.__version__, torch.version.cuda,
                         torch.backends.cudnn.version(), torch.cuda.get_device_name(0)))
            except Exception as e:  # ImportError, or a broken CUDA install
                print("SKIP torch: %s" % e)
                peers.remove("torch")
    if "cupy" in peers:
        if a.dry_cpu:
            try:
                import scipy
                import scipy.ndimage as cndi
                cp = np
                print("# cupy stand-in (--dry-cpu): numpy %s + scipy.ndimage %s on the CPU"
                      % (np.__version__, scipy.__version__))
            except ImportError as e:
                print("SKIP cupy (dry): %s" % e)
                peers.remove("cupy")
        else:
            try:
                import cupy as cp
                import cupyx.scipy.ndimage as cndi
                cp.cuda.runtime.getDeviceCount()
                print("# cupy %s, CUDA runtime %d" % (cp.__version__,
                                                       cp.cuda.runtime.runtimeGetVersion()))
            except Exception as e:
                print("SKIP cupy: %s" % e)
                peers.remove("cupy")

    if not os.access(a.gpuedge, os.X_OK):
        print("gpu_peers.py: %s: no gpuedge binary (make, or --gpuedge / GPUEDGE)"
              % a.gpuedge, file=sys.stderr)
        return 1
    ge = gpuedge_times(a, root)
    if ge:
        print("# gpuedge GPU time: fused kernel incl. histogram zeroing (bench_fused "
              "'+memset', sigma 1), rotated past L2")
    print("# GPU peers: inputs already on the device, rotated among >= 4 distinct "
          "frames and >= %d MB of RGB8 (well past the 60 MB L2); median of %d after "
          "%d warm-up; CPU peers: median of %d" % (SET_BYTES >> 20, a.runs, WARMUP,
                                                 a.cpu_runs))

    rows = []
    tmp = tempfile.mkdtemp(prefix="gpu_peers.")
    try:
        for W, H in sizes:
            sz = "%dx%d" % (W, H)
            rgb = make_frame(W, H, a.seed + W)
            ref, be, note = run_gpuedge(a.gpuedge, rgb, tmp, sz, a.sigma, a.scale,
                                        a.dry_cpu)
            print("# %s: gpuedge edge map from --backend=%s%s; edge mean %.2f, "
                  "%.1f%% of pixels >= 32"
                  % (sz, be, (" (" + note + ")") if note else "", ref.mean(),
                     100.0 * np.count_nonzero(ref >= 32) / ref.size))
            if ref.shape != (H, W):
                print("gpu_peers.py: %s: gpuedge's map is %dx%d"
                      % (sz, ref.shape[1], ref.shape[0]), file=sys.stderr)
                bad = 1
                continue
            href = np.bincount(ref.ravel(), minlength=256)
            g_us = ge.get(sz)
            rows.append(("gpuedge (fused)", sz, g_us[0] / 1e3 if g_us else None, None,
                         g_us[1] if g_us else "no GPU time (bench_fused / --gpuedge-us)"))
            nsets = nsets_for(W, H)

            def record(peer, ms, e, h, note, float_peer):
                nonlocal bad
                md, nd = compare(e, ref)
                hist_ok = np.array_equal(np.asarray(h).astype(np.int64).ravel(),
                                         np.bincount(e.ravel(), minlength=256))
                n = "%s; %d px differ" % (note, nd)
                if not hist_ok:
                    n += "; HIST != bincount(own map)"
                    bad = 1
                elif md == 0:
                    n += "; hist == gpuedge's" if np.array_equal(
                        np.asarray(h).astype(np.int64).ravel(), href) else ""
                if float_peer and md > 1:
                    print("WARN %s %s: max |d| %d against gpuedge (expected 0 or 1)"
                          % (peer, sz, md))
                rows.append((peer, sz, ms, md, n))

            for peer in peers:
                try:
                    if peer == "opencv-f32":
                        ms = time_cpu(lambda: cv_f32(cv2, rgb, k, a.scale), a.cpu_runs)
                        e, h = cv_f32(cv2, rgb, k, a.scale)
                        record(peer, ms, e, h, "CPU %d threads, float32; frame in "
                               "host memory" % cv2.getNumThreads(), True)
                    elif peer == "opencv-u8":
                        ms = time_cpu(lambda: cv_u8(cv2, rgb, 2 * r + 1, a.sigma),
                                      a.cpu_runs)
                        e, h = cv_u8(cv2, rgb, 2 * r + 1, a.sigma)
                        record(peer, ms, e, h, "approximate: u8 GaussianBlur, "
                               "Sobel CV_16S, L1 = abs(gx) + abs(gy)", False)
                    elif peer == "torch":
                        base = torch.from_numpy(rgb).cuda()
                        frames = [base] + [torch.roll(base, 7 * i, dims=1)
                                           for i in range(1, nsets)]
                        fn = torch_peer(torch, F, frames, k, a.scale)
                        with torch.inference_mode():
                            ms = time_gpu(lambda: torch.cuda.Event(enable_timing=True),
                                          lambda s, t: s.elapsed_time(t),
                                          torch.cuda.synchronize, fn, nsets, a.runs)
                            e, h = fn(0)
                            e, h = e.cpu().numpy(), h.cpu().numpy()
                        record(peer, ms, e, h, "GPU float32 conv2d, F.pad replicate, "
                               "bincount; %d device frames" % nsets, True)
                        del frames, base, fn
                        torch.cuda.empty_cache()
                    elif peer == "cupy" and cp is np:
                        fn = cupy_peer(np, cndi, [rgb], k, a.scale)
                        ms = time_cpu(lambda: fn(0), a.cpu_runs)
                        e, h = fn(0)
                        record("cupy (dry: scipy)", ms, e, h, "--dry-cpu: numpy + "
                               "scipy.ndimage stand-in, 1 CPU thread", True)
                    elif peer == "cupy":
                        base = cp.asarray(rgb)
                        frames = [base] + [cp.roll(base, 7 * i, axis=1)
                                           for i in range(1, nsets)]
                        fn = cupy_peer(cp, cndi, frames, k, a.scale)
                        dev = cp.cuda.Device()
                        ms = time_gpu(cp.cuda.Event, cp.cuda.get_elapsed_time,
                                      dev.synchronize, fn, nsets, a.runs)
                        e, h = fn(0)
                        e, h = cp.asnumpy(e), cp.asnumpy(h)
                        record(peer, ms, e, h, "GPU ndimage.correlate1d nearest + "
                               "ndimage.sobel, bincount; %d device frames" % nsets, True)
                        del frames, base, fn
                        cp.get_default_memory_pool().free_all_blocks()
                    else:
                        print("SKIP %s: unknown peer" % peer)
                except Exception as ex:  # one peer failing must not stop the rest
                    print("FAIL %s %s: %s: %s" % (peer, sz, type(ex).__name__, ex))
                    bad = 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    print()
    print("| peer | size | ms/frame | x gpuedge fused | max abs diff | notes |")
    print("|---|---|---:|---:|---:|---|")
    for peer, sz, ms, md, note in rows:
        g = ge.get(sz)
        ratio = "%.1f" % (ms / (g[0] / 1e3)) if (ms and g) else "-"
        print("| %s | %s | %s | %s | %s | %s |"
              % (peer, sz, ("%.4f" if ms < 1 else "%.3f") % ms if ms else "-", ratio,
                 "-" if md is None else md, note))
    print("\n(x gpuedge fused = peer ms / gpuedge's fused-kernel ms for the same "
          "size; max abs diff = max |peer edge - gpuedge edge| over the frame)")
    return bad


if __name__ == "__main__":
    sys.exit(main())
