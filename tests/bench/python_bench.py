#!/usr/bin/env python3
"""gpuedge's speed from Python on a GPU: torch CUDA tensors, CuPy arrays and
NumPy arrays (through the GPU backend, host copies included); one 4K frame a
call, and 64 x 1080p as a loop of single calls against one batch call;
against the same math written in PyTorch (conv2d, float32).  Prints a table.

    python3 tests/bench/python_bench.py [--frames 64] [--iters 50] [--no-numpy]

GPU time: CUDA events around ITERS back-to-back calls on one stream, divided
by ITERS.  Wall: the host's clock around the same ITERS calls and a final
synchronisation (what a Python loop sees).  "kernels": the sum of the
durations of the CUDA kernels the batch call launched (torch.profiler), the
rate the kernels alone allow.  Run it on the GPU machine with the CUDA build
of the library: GPUEDGE_LIB=build/rel/lib/libgpuedge.so.0 (or an installed
package).  Each gpuedge result is checked against the single calls' (batch)
and the CPU backend's (one frame) before it is timed.
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "python"))
import numpy as np  # noqa: E402

import gpuedge  # noqa: E402


def frames(n, h, w, seed=1):
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w]
    base = ((x * 5 + y * 9) % 256).astype(np.int32)[None, :, :, None]
    noise = rng.integers(0, 32, size=(n, h, w, 3), dtype=np.int32)
    return np.clip(base + noise, 0, 255).astype(np.uint8)


class Timer:
    """CUDA-event GPU time and host wall time of fn() repeated `iters` times."""

    def __init__(self, lib):
        self.lib = lib

    def run(self, fn, iters, warm=3):
        for _ in range(warm):
            fn()
        self.sync()
        t0 = time.perf_counter()
        start, end = self.events()
        start.record()
        for _ in range(iters):
            fn()
        end.record()
        end.synchronize()
        wall = (time.perf_counter() - t0) / iters
        return self.elapsed(start, end) / iters * 1e-3, wall

    def sync(self):
        if self.lib == "torch":
            import torch
            torch.cuda.synchronize()
        else:
            import cupy
            cupy.cuda.get_current_stream().synchronize()

    def events(self):
        if self.lib == "torch":
            import torch
            return torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        import cupy
        return cupy.cuda.Event(), cupy.cuda.Event()

    def elapsed(self, a, b):
        if self.lib == "torch":
            return a.elapsed_time(b)
        import cupy
        return cupy.cuda.get_elapsed_time(a, b)


def torch_edges(x, sigma=1.0):
    """DESIGN.md section 1's steps in PyTorch, float32: grey, separable
    Gaussian (replicate border), Sobel, magnitude, quantise, histogram."""
    import torch
    import torch.nn.functional as F
    dev = x.device
    r = max(1, int(np.ceil(2 * sigma)))
    k = torch.exp(-torch.arange(-r, r + 1, device=dev, dtype=torch.float32) ** 2 /
                  (2 * sigma * sigma))
    k = k / k.sum()
    wg = torch.tensor([0.299, 0.587, 0.114], device=dev).view(1, 3, 1, 1)
    sx = torch.tensor([[-1., 0, 1], [-2, 0, 2], [-1, 0, 1]], device=dev).view(1, 1, 3, 3)
    f = x.permute(0, 3, 1, 2).float()
    g = F.conv2d(f, wg)
    g = F.conv2d(F.pad(g, (r, r, 0, 0), mode="replicate"), k.view(1, 1, 1, -1))
    g = F.conv2d(F.pad(g, (0, 0, r, r), mode="replicate"), k.view(1, 1, -1, 1))
    p = F.pad(g, (1, 1, 1, 1), mode="replicate")
    gx, gy = F.conv2d(p, sx), F.conv2d(p, sx.transpose(2, 3))
    e = torch.sqrt(gx * gx + gy * gy).clamp_(0, 255).round_().to(torch.uint8)[:, 0]
    n = e.shape[0]
    idx = e.view(n, -1).long() + 256 * torch.arange(n, device=dev).view(n, 1)
    hist = torch.bincount(idx.view(-1), minlength=256 * n).view(n, 256)
    return e, hist


def kernel_time(fn):
    """Sum of CUDA kernel durations (s) of one fn() call (torch.profiler)."""
    import torch
    from torch.profiler import ProfilerActivity, profile
    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    total = 0.0
    for ev in prof.key_averages():
        total += getattr(ev, "device_time_total", getattr(ev, "cuda_time_total", 0.0))
    return total * 1e-6


rows = []


def row(what, n, gpu_s, wall_s, ref=None):
    rows.append((what, n, gpu_s, wall_s, ref))


def bench_torch(big, batch, iters):
    import torch
    t = Timer("torch")
    x4 = torch.from_numpy(big).cuda()
    xb = torch.from_numpy(batch).cuda()
    e1, h1 = gpuedge.edges(x4[0])
    assert np.array_equal(e1.cpu().numpy(), gpuedge.edges(big[0], backend="cpu")[0])
    eb, hb = gpuedge.edges(xb)
    for i in range(len(batch)):
        assert torch.equal(eb[i], gpuedge.edges(xb[i])[0])
    n = len(batch)
    g, w = t.run(lambda: gpuedge.edges(x4[0]), iters)
    pg, pw = t.run(lambda: torch_edges(x4), max(3, iters // 10))
    row("torch 4K single call", 1, g, w)
    row("PyTorch conv2d fp32, 4K", 1, pg, pw)
    rows[-2] = rows[-2][:4] + (pg / g,)
    out = torch.empty_like(eb)
    hist = torch.empty_like(hb)

    def loop():
        for i in range(n):
            gpuedge.edges(xb[i], out=out[i], hist_out=hist[i])
    g_loop, w_loop = t.run(loop, max(3, iters // 5))
    g_b, w_b = t.run(lambda: gpuedge.edges(xb, out=out, hist_out=hist), max(3, iters // 5))
    pg_b, pw_b = t.run(lambda: torch_edges(xb), 3)
    row("torch %dx1080p loop of singles" % n, n, g_loop, w_loop, pg_b / g_loop)
    row("torch %dx1080p one batch call" % n, n, g_b, w_b, pg_b / g_b)
    row("PyTorch conv2d fp32, %dx1080p" % n, n, pg_b, pw_b)
    try:
        k = kernel_time(lambda: gpuedge.edges(xb, out=out, hist_out=hist))
        row("  kernels alone (profiler), batch", n, k, float("nan"))
    except Exception as e:  # the profiler is optional
        print("python_bench: no kernel time: %s" % e, file=sys.stderr)


def bench_cupy(big, batch, iters):
    import cupy
    t = Timer("cupy")
    x4 = cupy.asarray(big)
    xb = cupy.asarray(batch)
    eb, hb = gpuedge.edges(xb)
    for i in range(len(batch)):
        assert cupy.array_equal(eb[i], gpuedge.edges(xb[i])[0])
    n = len(batch)
    g, w = t.run(lambda: gpuedge.edges(x4[0]), iters)
    row("cupy 4K single call", 1, g, w)
    out, hist = cupy.empty_like(eb), cupy.empty_like(hb)

    def loop():
        for i in range(n):
            gpuedge.edges(xb[i], out=out[i], hist_out=hist[i])
    g_loop, w_loop = t.run(loop, max(3, iters // 5))
    g_b, w_b = t.run(lambda: gpuedge.edges(xb, out=out, hist_out=hist), max(3, iters // 5))
    row("cupy %dx1080p loop of singles" % n, n, g_loop, w_loop)
    row("cupy %dx1080p one batch call" % n, n, g_b, w_b)


def bench_numpy(big, batch, iters):
    n = len(batch)
    e, h = gpuedge.edges(batch, backend="gpu")
    assert np.array_equal(e[0], gpuedge.edges(batch[0], backend="cpu")[0])
    out, hist = np.empty_like(e), np.empty_like(h)

    def wall(fn, k):
        fn()
        t0 = time.perf_counter()
        for _ in range(k):
            fn()
        return (time.perf_counter() - t0) / k
    row("numpy 4K single call (gpu, copies)", 1, float("nan"),
        wall(lambda: gpuedge.edges(big[0], backend="gpu"), iters))

    def loop():
        for i in range(n):
            gpuedge.edges(batch[i], backend="gpu", out=out[i], hist_out=hist[i])
    row("numpy %dx1080p loop (gpu, copies)" % n, n, float("nan"), wall(loop, 3))
    row("numpy %dx1080p batch (gpu, copies)" % n, n, float("nan"),
        wall(lambda: gpuedge.edges(batch, backend="gpu", out=out, hist_out=hist), 3))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--frames", type=int, default=64)
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--no-numpy", action="store_true")
    args = ap.parse_args()
    try:
        gpuedge.edges(np.zeros((4, 4), np.uint8), backend="gpu")
    except gpuedge.NoGPUError as e:
        print("python_bench: skipped: %s" % e)
        return 0
    print("python_bench: gpuedge %s (%s)" % (gpuedge.__version__, gpuedge.library_path))
    big = frames(1, 2160, 3840)
    batch = frames(args.frames, 1080, 1920, seed=2)
    for name, fn in (("torch", bench_torch), ("cupy", bench_cupy)):
        try:
            __import__(name)
        except ImportError:
            print("python_bench: %s not installed: its rows are left out" % name)
            continue
        fn(big, batch, args.iters)
    if not args.no_numpy:
        bench_numpy(big, batch, args.iters)
    print("%-38s %6s %12s %12s %12s %9s" % ("case", "frames", "GPU us/call", "wall us/call",
                                          "us/frame", "PyTorch x"))
    for what, n, g, w, ref in rows:
        per = (g if g == g else w) / n * 1e6
        print("%-38s %6d %12.1f %12.1f %12.2f %9s" % (what, n, g * 1e6, w * 1e6, per,
                                                     "%.1f" % ref if ref else "-"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
