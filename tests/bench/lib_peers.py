#!/usr/bin/env python3
# libgpuedge from Python against the same function in PyTorch, CuPy and
# OpenCV (issue 13 part 7).  The peers are gpu_peers.py's (same taps, same
# replicate border, same quantiser); gpuedge is python/gpuedge (ctypes over
# libgpuedge.so.0).
#
# Device path: a 4K RGB8 frame already on the GPU (a torch CUDA tensor, a
# cupy array; inputs rotated over >= 256 MB of frames so each comes from
# DRAM, as gpu_peers.py does).  Two figures a peer, both wall clock with
# time.perf_counter, so the Python call overhead is in them:
#   queued  N calls back to back, one synchronise at the end: ms a frame
#           at the rate a Python loop feeding the GPU sustains;
#   sync    call + synchronise every frame: the latency of one call.
# Ratios are PyTorch's ms / gpuedge's ms on the same measure.
#
# Host path: a NumPy 4K RGB8 frame: gpuedge.edges(backend='cpu', all
# cores) against OpenCV's float32 chain (cv_f32) with cv2.setNumThreads(the
# same cores), and gpuedge's GPU backend from NumPy (upload + download).
#
# Correctness: max |d| of each peer's edge map against gpuedge's on one
# frame (0 or 1 expected for the float peers: other summation order).
#
#   lib_peers.py [--size 3840x2160] [--runs 200] [--cpu-runs 10]
#                [--peers torch,cupy,opencv,host-gpu]
import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

import gpu_peers as gp  # noqa: E402  (numpy, the peers, make_frame, taps)
import numpy as np  # noqa: E402

import gpuedge  # noqa: E402


def wall(fn, sync, n, each):
    """ms a frame over n calls (fn(i)), synchronising every call or once."""
    t0 = time.perf_counter()
    for i in range(n):
        fn(i)
        if each:
            sync()
    sync()
    return (time.perf_counter() - t0) * 1e3 / n


def measure(fn, sync, nsets, runs):
    for i in range(gp.WARMUP):
        fn(i % nsets)
    sync()
    q = statistics.median(wall(lambda i: fn(i % nsets), sync, runs, False) for _ in range(3))
    s = statistics.median(wall(lambda i: fn(i % nsets), sync, runs // 2, True) for _ in range(3))
    return q, s


def maxdiff(a, b):
    return int(np.max(np.abs(a.astype(np.int16) - b.astype(np.int16))))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", default="3840x2160")
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--cpu-runs", type=int, default=10)
    ap.add_argument("--peers", default="torch,cupy,opencv,host-gpu")
    a = ap.parse_args()
    W, H = map(int, a.size.split("x"))
    peers = a.peers.split(",")
    k, _ = gp.taps(1.0)
    rgb = gp.make_frame(W, H, 1)
    nsets = gp.nsets_for(W, H)
    rows = []
    print("libgpuedge %s (%s); %dx%d RGB8, sigma 1, %d rotated inputs" %
          (gpuedge.version(), gpuedge.library_path, W, H, nsets))
    ref, _ = gpuedge.edges(rgb, backend="cpu")

    if "torch" in peers:
        try:
            import torch
            import torch.nn.functional as F
            if not torch.cuda.is_available():
                raise ImportError("torch sees no GPU")
            torch.backends.cudnn.allow_tf32 = False
            torch.backends.cuda.matmul.allow_tf32 = False
            print("GPU: %s; torch %s" % (torch.cuda.get_device_name(0), torch.__version__))
            frames = [torch.from_numpy(gp.make_frame(W, H, 1 + i)).cuda() for i in range(nsets)]
            frames[0] = torch.from_numpy(rgb).cuda()
            sync = torch.cuda.synchronize
            pt = gp.torch_peer(torch, F, frames, k, 1.0)
            ge = lambda i: gpuedge.edges(frames[i])
            ge_e = ge(0)[0].cpu().numpy()
            pt_e = pt(0)[0].cpu().numpy()
            tq, ts = measure(pt, sync, nsets, a.runs)
            gq, gs = measure(ge, sync, nsets, a.runs)
            rows.append(("torch conv2d pipeline", tq, ts, maxdiff(pt_e, ge_e)))
            rows.append(("gpuedge.edges(torch tensor)", gq, gs, maxdiff(ge_e, ref)))
            t_torch = (tq, ts)
        except ImportError as e:
            print("SKIP torch: %s" % e)
            t_torch = None
    else:
        t_torch = None

    if "cupy" in peers:
        try:
            import cupy as cp
            import cupyx.scipy.ndimage as ndi
            print("cupy %s" % cp.__version__)
            frames = [cp.asarray(gp.make_frame(W, H, 1 + i)) for i in range(nsets)]
            frames[0] = cp.asarray(rgb)
            sync = cp.cuda.get_current_stream().synchronize
            cu = gp.cupy_peer(cp, ndi, frames, k, 1.0)
            ge = lambda i: gpuedge.edges(frames[i])
            ge_e = cp.asnumpy(ge(0)[0])
            cu_e = cp.asnumpy(cu(0)[0])
            cq, cs = measure(cu, sync, nsets, a.runs)
            gq, gs = measure(ge, sync, nsets, a.runs)
            rows.append(("cupy ndimage pipeline", cq, cs, maxdiff(cu_e, ge_e)))
            rows.append(("gpuedge.edges(cupy array)", gq, gs, maxdiff(ge_e, ref)))
        except ImportError as e:
            print("SKIP cupy: %s" % e)

    print()
    print("%-32s %12s %12s %8s" % ("device path (4K on the GPU)", "queued ms", "sync ms",
                                   "max|d|"))
    for name, q, s, d in rows:
        ratio = ""
        if t_torch and name.startswith("gpuedge"):
            ratio = "   %.1fx / %.1fx PyTorch" % (t_torch[0] / q, t_torch[1] / s)
        print("%-32s %12.4f %12.4f %8d%s" % (name, q, s, d, ratio))

    print()
    ncpu = os.cpu_count() or 1
    print("host path (NumPy 4K, %d cores)       ms a frame   max|d|" % ncpu)
    t = gp.time_cpu(lambda: gpuedge.edges(rgb, backend="cpu"), a.cpu_runs)
    print("%-36s %10.2f %8d" % ("gpuedge.edges(numpy, backend=cpu)", t, 0))
    if "opencv" in peers:
        try:
            import cv2
            cv2.setNumThreads(ncpu)
            e, _ = gp.cv_f32(cv2, rgb, k, 1.0)
            tc = gp.time_cpu(lambda: gp.cv_f32(cv2, rgb, k, 1.0), a.cpu_runs)
            print("%-36s %10.2f %8d   gpuedge %.2fx OpenCV" %
                  ("opencv float32 (cv_f32)", tc, maxdiff(e, ref), tc / t))
        except ImportError as e:
            print("SKIP opencv: %s" % e)
    if "host-gpu" in peers:
        try:
            gpuedge.edges(rgb, backend="gpu")
            tg = gp.time_cpu(lambda: gpuedge.edges(rgb, backend="gpu"), a.cpu_runs * 3)
            e, _ = gpuedge.edges(rgb, backend="gpu")
            print("%-36s %10.2f %8d" % ("gpuedge.edges(numpy, backend=gpu)", tg, maxdiff(e, ref)))
        except gpuedge.NoGPUError as e:
            print("SKIP host-gpu: %s" % e)
    return 0


if __name__ == "__main__":
    sys.exit(main())
