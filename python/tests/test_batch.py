"""gpuedge.edges' batches, layouts, channel orders, out=/hist_out=, threads=,
and the context cache, each against the gpuedge command on the same pixels
(the host path; GPUEDGE_TEST_BACKEND picks the backend, cpu by default)."""
import os
import subprocess
import sys

import numpy as np
import pytest

import gpuedge
from test_host import BACKEND, GPUEDGE, ROOT, cli, frame

SAMPLES = os.path.join(ROOT, "samples")


def cli_file(tmp_path, path, *args):
    """The command's map of an image file."""
    from test_host import read_pgm
    if not os.access(GPUEDGE, os.X_OK):
        pytest.skip("no gpuedge binary at %s" % GPUEDGE)
    out = tmp_path / "file.pgm"
    subprocess.run([GPUEDGE, "-q", "-y", "--backend", BACKEND, *args, str(path), str(out)],
                   check=True)
    return read_pgm(out)


def frames(n, h, w, ch, dtype=np.uint8):
    return np.stack([frame(h, w, ch, dtype, seed=10 + i) for i in range(n)])


@pytest.mark.parametrize("n,ch,dtype", [(5, 3, np.uint8), (3, 1, np.uint8), (4, 4, np.uint8),
                                        (3, 3, np.uint16), (2, 1, np.uint16)])
def test_batch_equals_cli_per_frame(tmp_path, n, ch, dtype):
    b = frames(n, 29, 43, ch, dtype)
    if ch == 1:
        b = b.reshape(n, 29, 43)          # N x H x W
    e, hist = gpuedge.edges(b, backend=BACKEND, sigma=1.5)
    assert e.shape == (n, 29, 43) and e.dtype == np.uint8 and hist.shape == (n, 256)
    for i in range(n):
        assert np.array_equal(e[i], cli(tmp_path, b[i], "--sigma", "1.5")), i
        assert np.array_equal(hist[i], np.bincount(e[i].ravel(), minlength=256))


def test_batch_of_views_padded_frames_and_rows(tmp_path):
    big = frames(6, 40, 60, 3)
    view = big[::2, 3:33, 5:50]           # frames, rows and pixels' start all offset
    e, _ = gpuedge.edges(view, backend=BACKEND, threshold=25)
    for i in range(view.shape[0]):
        assert np.array_equal(e[i], cli(tmp_path, np.ascontiguousarray(view[i]),
                                        "--threshold", "25"))


def test_batch_flag_decides_three_axes(tmp_path):
    g = frames(3, 20, 4, 1).reshape(3, 20, 4)  # last axis 4: H x W x C unless batch=True
    e, _ = gpuedge.edges(g, backend=BACKEND, batch=True)
    assert e.shape == (3, 20, 4)
    for i in range(3):
        assert np.array_equal(e[i], cli(tmp_path, g[i]))
    e1, _ = gpuedge.edges(g, backend=BACKEND)            # an RGBA 3 x 20 image
    assert e1.shape == (3, 20)
    with pytest.raises(ValueError):
        gpuedge.edges(frames(2, 8, 8, 3), batch=False, backend=BACKEND)


def test_bgr_from_opencv_equals_cli(tmp_path):
    cv2 = pytest.importorskip("cv2", reason="python3-opencv gives BGR images")
    path = os.path.join(SAMPLES, "photo.png")
    bgr = cv2.imread(path, cv2.IMREAD_COLOR)
    want = cli_file(tmp_path, path)
    e, _ = gpuedge.edges(bgr, channels="bgr", backend=BACKEND)
    assert np.array_equal(e, want)
    # without channels= the BGR pixels are read as RGB: a different map
    assert not np.array_equal(gpuedge.edges(bgr, backend=BACKEND)[0], want)
    # a batch of BGR frames
    eb, _ = gpuedge.edges(np.stack([bgr, bgr[::-1].copy()]), channels="bgr", backend=BACKEND)
    assert np.array_equal(eb[0], want)
    assert np.array_equal(eb[1], gpuedge.edges(bgr[::-1, :, ::-1].copy(), backend=BACKEND)[0])


def test_bgra_from_opencv_equals_cli(tmp_path):
    cv2 = pytest.importorskip("cv2", reason="python3-opencv gives BGRA images")
    path = os.path.join(SAMPLES, "rgba.png")
    bgra = cv2.imread(path, cv2.IMREAD_UNCHANGED)
    if bgra is None or bgra.ndim != 3 or bgra.shape[2] != 4:
        pytest.skip("samples/rgba.png is not read as 4 channels")
    e, _ = gpuedge.edges(bgra, channels="bgra", backend=BACKEND)
    assert np.array_equal(e, cli_file(tmp_path, path))


@pytest.mark.parametrize("channels,shape", [("rgb", (8, 8, 4)), ("bgra", (8, 8, 3)),
                                            ("bgr", (8, 8)), ("hsv", (8, 8, 3))])
def test_channels_mismatch(channels, shape):
    with pytest.raises(ValueError, match="channels"):
        gpuedge.edges(np.zeros(shape, np.uint8), channels=channels, backend=BACKEND)


def test_chw_layouts_equal_cli(tmp_path):
    b = frames(3, 31, 37, 3)
    nchw = np.ascontiguousarray(b.transpose(0, 3, 1, 2))      # copied to HWC inside
    e, _ = gpuedge.edges(nchw, layout="chw", backend=BACKEND, border="reflect101")
    cl = b.transpose(0, 3, 1, 2)                              # channels-last memory: in place
    assert not cl.flags.c_contiguous
    e2, _ = gpuedge.edges(cl, layout="chw", backend=BACKEND, border="reflect101")
    e3, _ = gpuedge.edges(nchw[1], layout="chw", backend=BACKEND, border="reflect101")
    for i in range(3):
        want = cli(tmp_path, b[i], "--border", "reflect101")
        assert np.array_equal(e[i], want) and np.array_equal(e2[i], want)
    assert np.array_equal(e3, e[1])
    with pytest.raises(ValueError, match="layout"):
        gpuedge.edges(b, layout="whc")


def test_chw_bgr_together(tmp_path):
    b = frames(2, 17, 23, 3)
    bgr_chw = np.ascontiguousarray(b[..., ::-1].transpose(0, 3, 1, 2))
    e, _ = gpuedge.edges(bgr_chw, layout="chw", channels="bgr", backend=BACKEND)
    for i in range(2):
        assert np.array_equal(e[i], cli(tmp_path, b[i]))


@pytest.mark.parametrize("make", [lambda g: g[..., None], np.atleast_3d])
def test_hw1_equals_grey(tmp_path, make):
    g = frame(33, 47, 1, np.uint8, seed=4)
    v = make(g)
    assert v.shape == (33, 47, 1)
    e, h = gpuedge.edges(v, backend=BACKEND)
    assert e.shape == (33, 47)
    assert np.array_equal(e, cli(tmp_path, g))


def test_out_and_hist_out(tmp_path):
    b = frames(3, 21, 34, 3)
    big = np.full((3, 25, 40), 7, np.uint8)
    out = big[:, 2:23, 3:37]                   # padded rows and frames
    hist = np.zeros((3, 256), np.uint64)
    e, h = gpuedge.edges(b, backend=BACKEND, out=out, hist_out=hist, sigma=2)
    assert e is out and h is hist
    for i in range(3):
        assert np.array_equal(out[i], cli(tmp_path, b[i], "--sigma", "2"))
        assert np.array_equal(hist[i], np.bincount(out[i].ravel(), minlength=256))
    assert (big[:, :2] == 7).all() and (big[:, :, :3] == 7).all() and (big[:, :, 37:] == 7).all()
    one = np.empty((21, 34), np.uint8)
    e1, h1 = gpuedge.edges(b[0], backend=BACKEND, out=one, sigma=2)
    assert e1 is one and np.array_equal(one, out[0]) and h1.shape == (256,)


@pytest.mark.parametrize("bad,match", [
    (dict(out=np.empty((20, 34), np.uint8)), "shape"),
    (dict(out=np.empty((21, 34), np.uint16)), "dtype"),
    (dict(out=np.empty((21, 68), np.uint8)[:, ::2]), "contiguous"),
    (dict(hist_out=np.empty(255, np.uint64)), "shape"),
    (dict(hist_out=np.empty(256, np.int32)), "dtype"),
])
def test_bad_outputs(bad, match):
    with pytest.raises((ValueError, TypeError), match=match):
        gpuedge.edges(frame(21, 34, 3, np.uint8), backend=BACKEND, **bad)


@pytest.mark.parametrize("threads", [1, 2, 3, 0])
def test_threads_equal_cli(tmp_path, threads):
    b = frames(5, 40, 30, 3)
    e, h = gpuedge.edges(b, backend=BACKEND, threads=threads, canny="auto")
    for i in (0, 4):
        assert np.array_equal(e[i], cli(tmp_path, b[i], "--canny", "auto"))


@pytest.mark.parametrize("threads", [-1, 1025, 1.5, True])
def test_bad_threads(threads):
    with pytest.raises(ValueError, match="threads"):
        gpuedge.edges(np.zeros((8, 8), np.uint8), threads=threads)


def test_default_threads_follow_affinity():
    if not hasattr(os, "sched_setaffinity"):
        pytest.skip("no os.sched_setaffinity here")
    code = ("import os, sys; sys.path.insert(0, %r); os.sched_setaffinity(0, {min("
            "os.sched_getaffinity(0))}); import gpuedge; print(gpuedge.default_threads())"
            % os.path.join(ROOT, "python"))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       check=True, env=dict(os.environ))
    assert r.stdout.strip() == "1"
    assert 1 <= gpuedge.default_threads() <= len(os.sched_getaffinity(0))


def test_context_cache_is_bounded():
    a = frame(9, 9, 1, np.uint8)
    for i in range(3 * gpuedge.CACHE_SIZE):
        gpuedge.edges(a, sigma=0.5 + 0.1 * i, backend=BACKEND)
    assert len(gpuedge._local.ctxs) == gpuedge.CACHE_SIZE
    # an evicted context is made again and gives the same bits
    first = gpuedge.edges(a, sigma=0.5, backend=BACKEND)[0]
    assert np.array_equal(first, gpuedge.edges(a, sigma=0.5, backend=BACKEND)[0])


def test_stream_is_ignored_on_host_arrays(tmp_path):
    a = frame(20, 30, 3, np.uint8)
    assert np.array_equal(gpuedge.edges(a, backend=BACKEND, stream=0)[0], cli(tmp_path, a))


def test_torch_cpu_tensor_comes_back_as_torch(tmp_path):
    torch = pytest.importorskip("torch", reason="torch is not installed here")
    b = frames(2, 19, 27, 3)
    t = torch.from_numpy(b)
    e, h = gpuedge.edges(t, backend=BACKEND)
    assert isinstance(e, torch.Tensor) and e.device.type == "cpu" and e.dtype == torch.uint8
    assert isinstance(h, torch.Tensor) and h.dtype == torch.int64 and tuple(h.shape) == (2, 256)
    assert np.array_equal(e[1].numpy(), cli(tmp_path, b[1]))
    nchw = t.permute(0, 3, 1, 2).contiguous()
    e2, _ = gpuedge.edges(nchw, layout="chw", backend=BACKEND)
    assert torch.equal(e2, e)
    out = torch.empty((2, 19, 27), dtype=torch.uint8)
    assert gpuedge.edges(t, backend=BACKEND, out=out)[0] is out and torch.equal(out, e)


def test_all_exports():
    for name in gpuedge.__all__:
        assert hasattr(gpuedge, name), name
    assert "DtypeError" in gpuedge.__all__ and issubclass(gpuedge.DtypeError, TypeError)
    with open(os.path.join(ROOT, "include", "gpuedge.h")) as f:
        h = f.read()
    import re
    want = ".".join(re.search(r"#define GE_VERSION_%s (\d+)" % k, h).group(1)
                    for k in ("MAJOR", "MINOR", "PATCH"))
    assert gpuedge.__version__ == want


class FakeDeviceArray:
    """An object with only __cuda_array_interface__ (as Numba's arrays)."""

    def __init__(self, shape, typestr="|u1", strides=None):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr, "data": (4096, False),
                                         "strides": strides, "version": 3}


def test_device_array_descriptors():
    d = gpuedge._describe(FakeDeviceArray((2, 5, 7, 3)), "cai", "x")
    assert d.strides == (105, 21, 3, 1) and d.bps == 1      # C-contiguous when strides is None
    n = gpuedge._as_nhwc(gpuedge._describe(FakeDeviceArray((3, 5, 7), "<u2"), "cai", "x"),
                         "chw", False)
    assert n.shape == (1, 5, 7, 3) and n.strides == (0, 14, 2, 70) and not gpuedge._pixels_packed(n)
    with pytest.raises(TypeError):
        gpuedge._describe(FakeDeviceArray((5, 7), "<f4"), "cai", "x")


def test_device_array_without_gpu_or_on_cpu_backend():
    a = FakeDeviceArray((8, 8, 3))
    with pytest.raises(gpuedge.UnsupportedError):
        gpuedge.edges(a, backend="cpu")
    try:
        gpuedge.edges(a, channels="bgr")
    except gpuedge.NoGPUError:
        pass                               # no GPU here: the context cannot be made
    except (ValueError, gpuedge.UnsupportedError) as e:
        assert "reorder" in str(e) or "copy" in str(e)
