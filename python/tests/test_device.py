"""gpuedge.edges on arrays already on the GPU (CuPy arrays, PyTorch CUDA
tensors): the device path, zero-copy, on the caller's stream; results on
the device as the same kind, equal to the host path on the CPU backend
(which test_host.py ties to the gpuedge command).  Skipped without CuPy /
PyTorch or a GPU."""
import numpy as np
import pytest

import gpuedge
from test_host import frame


def gpu_usable():
    try:
        gpuedge.edges(np.zeros((4, 4), np.uint8), backend="gpu")
        return True
    except gpuedge.NoGPUError:
        return False


needs_gpu = pytest.mark.skipif(not gpu_usable(), reason="no usable GPU")
CASES = [(1, np.uint8), (3, np.uint8), (4, np.uint8), (1, np.uint16), (3, np.uint16)]


def want(a, **kw):
    return gpuedge.edges(a, backend="cpu", **kw)


@needs_gpu
@pytest.mark.parametrize("ch,dtype", CASES)
def test_cupy(ch, dtype):
    cp = pytest.importorskip("cupy")
    a = frame(301, 517, ch, dtype, seed=ch)
    s = cp.cuda.Stream(non_blocking=True)
    with s:
        d = cp.asarray(a)
        e, h = gpuedge.edges(d, sigma=1.5)
        assert isinstance(e, cp.ndarray) and e.dtype == cp.uint8 and e.shape == a.shape[:2]
        assert isinstance(h, cp.ndarray) and h.dtype == cp.uint64
        e_host, h_host = cp.asnumpy(e, stream=s), cp.asnumpy(h, stream=s)
    s.synchronize()
    we, wh = want(a, sigma=1.5)
    assert np.array_equal(e_host, we) and np.array_equal(h_host, wh)


@needs_gpu
def test_cupy_padded_rows_and_params():
    cp = pytest.importorskip("cupy")
    big = frame(200, 300, 3, np.uint8, seed=9)
    d = cp.asarray(big)[:, 7:250]          # rows 900 bytes apart
    kw = dict(sigma=3, border="reflect101", threshold=30, invert=True)
    e, h = gpuedge.edges(d, **kw)
    we, wh = want(np.ascontiguousarray(big[:, 7:250]), **kw)
    assert np.array_equal(cp.asnumpy(e), we) and np.array_equal(cp.asnumpy(h), wh)
    with pytest.raises(ValueError, match="contiguous"):
        gpuedge.edges(cp.asarray(big)[:, ::2])
    with pytest.raises(TypeError):
        gpuedge.edges(cp.zeros((8, 8), cp.float32))
    with pytest.raises(gpuedge.UnsupportedError):
        gpuedge.edges(cp.zeros((8, 8), cp.uint8), backend="cpu")


@needs_gpu
@pytest.mark.parametrize("ch,dtype", [c for c in CASES if c[1] == np.uint8])
def test_torch(ch, dtype):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch sees no GPU")
    a = frame(257, 391, ch, dtype, seed=ch + 10)
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        t = torch.from_numpy(a).cuda()
        e, h = gpuedge.edges(t, sigma=2.0, border="zero")
        assert isinstance(e, torch.Tensor) and e.is_cuda and e.dtype == torch.uint8
        assert tuple(e.shape) == a.shape[:2] and h.is_cuda
        e_host, h_host = e.cpu().numpy(), h.cpu().numpy()
    we, wh = want(a, sigma=2.0, border="zero")
    assert np.array_equal(e_host, we) and np.array_equal(h_host.astype(np.uint64), wh)


@needs_gpu
def test_torch_uint16_and_views():
    torch = pytest.importorskip("torch")
    if not hasattr(torch, "uint16"):
        pytest.skip("this torch has no uint16")
    a = frame(120, 160, 3, np.uint16, seed=4)
    t = torch.from_numpy(a.view(np.int16)).cuda().view(torch.uint16)
    e, _ = gpuedge.edges(t)
    assert np.array_equal(e.cpu().numpy(), want(a)[0])
    with pytest.raises(ValueError, match="contiguous"):
        gpuedge.edges(torch.zeros((3, 40, 50), dtype=torch.uint8, device="cuda").permute(1, 2, 0)[:, ::2])


@needs_gpu
def test_numpy_on_gpu_backend_equals_cpu():
    a = frame(333, 444, 3, np.uint8, seed=5)
    e, h = gpuedge.edges(a, backend="gpu")
    we, wh = want(a)
    assert np.array_equal(e, we) and np.array_equal(h, wh)


@needs_gpu
@pytest.mark.parametrize("canny", [(20, 60), "auto"])
def test_cupy_canny(canny):
    cp = pytest.importorskip("cupy")
    a = frame(211, 317, 3, np.uint8, seed=11)
    e, h = gpuedge.edges(cp.asarray(a), canny=canny)
    we, wh = want(a, canny=canny)
    assert np.array_equal(cp.asnumpy(e), we) and np.array_equal(cp.asnumpy(h), wh)


def batch(n, h, w, ch, dtype=np.uint8):
    return np.stack([frame(h, w, ch, dtype, seed=20 + i) for i in range(n)])


@needs_gpu
@pytest.mark.parametrize("ch,dtype", [(3, np.uint8), (1, np.uint16), (4, np.uint8)])
def test_cupy_batch_on_a_given_stream(ch, dtype):
    cp = pytest.importorskip("cupy")
    b = batch(6, 97, 131, ch, dtype)
    if ch == 1:
        b = b.reshape(6, 97, 131)
    s = cp.cuda.Stream(non_blocking=True)
    with s:
        d = cp.asarray(b)
    e, h = gpuedge.edges(d, sigma=2, stream=s)          # a cupy Stream object
    assert isinstance(e, cp.ndarray) and e.shape == (6, 97, 131) and h.shape == (6, 256)
    e2, h2 = gpuedge.edges(d, sigma=2, stream=s.ptr)    # an int handle
    s.synchronize()
    we, wh = want(b, sigma=2)
    assert np.array_equal(cp.asnumpy(e), we) and np.array_equal(cp.asnumpy(h), wh)
    assert np.array_equal(cp.asnumpy(e2), we)


@needs_gpu
def test_cupy_bgr_chw_out():
    cp = pytest.importorskip("cupy")
    b = batch(3, 50, 70, 3)
    d = cp.asarray(np.ascontiguousarray(b[..., ::-1].transpose(0, 3, 1, 2)))  # BGR, N x C x H x W
    out = cp.zeros((3, 50, 80), cp.uint8)[:, :, 5:75]
    hist = cp.zeros((3, 256), cp.uint64)
    e, h = gpuedge.edges(d, channels="bgr", layout="chw", out=out, hist_out=hist)
    assert e is out and h is hist
    we, wh = want(b)
    assert np.array_equal(cp.asnumpy(out), we) and np.array_equal(cp.asnumpy(hist), wh)


@needs_gpu
def test_torch_batch_layouts_streams_outputs():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch sees no GPU")
    b = batch(5, 64, 48, 3)
    we, wh = want(b, border="reflect101")
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        t = torch.from_numpy(b).cuda()
        nchw = t.permute(0, 3, 1, 2).contiguous()        # copied to HWC inside
        cl = t.permute(0, 3, 1, 2)                        # channels-last: in place
        bgr = t.flip(-1).contiguous()
    results = [gpuedge.edges(x, border="reflect101", stream=s, **kw) for x, kw in [
        (t, {}), (nchw, dict(layout="chw")), (cl, dict(layout="chw")),
        (bgr, dict(channels="bgr"))]]
    out = torch.empty((5, 64, 48), dtype=torch.uint8, device="cuda")
    hist = torch.empty((5, 256), dtype=torch.int64, device="cuda")
    r = gpuedge.edges(t, border="reflect101", stream=s.cuda_stream, out=out, hist_out=hist)
    assert r[0] is out and r[1] is hist
    s.synchronize()
    for e, h in results + [r]:
        assert isinstance(e, torch.Tensor) and e.is_cuda and tuple(e.shape) == (5, 64, 48)
        assert np.array_equal(e.cpu().numpy(), we)
        assert np.array_equal(h.cpu().numpy().astype(np.uint64), wh)


@needs_gpu
def test_batch_equals_loop_of_single_calls():
    cp = pytest.importorskip("cupy")
    b = batch(8, 40, 56, 3)
    d = cp.asarray(b)
    e, h = gpuedge.edges(d, canny="auto")
    for i in range(8):
        ei, hi = gpuedge.edges(d[i], canny="auto")
        assert cp.array_equal(e[i], ei) and cp.array_equal(h[i], hi)
