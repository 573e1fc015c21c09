"""gpuedge.edges on NumPy arrays (the host path, CPU backend here) against
the gpuedge command on the same pixels, plus the errors it must raise."""
import os
import subprocess
import threading

import numpy as np
import pytest

import gpuedge

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
GPUEDGE = os.environ.get("GPUEDGE") or os.path.join(ROOT, "gpuedge")
if not os.path.isabs(GPUEDGE) and os.sep in GPUEDGE:
    GPUEDGE = os.path.join(ROOT, GPUEDGE)
BACKEND = os.environ.get("GPUEDGE_TEST_BACKEND", "cpu")


def frame(h, w, ch, dtype, seed=1):
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w]
    top = 255 if dtype == np.uint8 else 65535
    base = ((x * 5 + y * 9) % 256) * (top // 255)
    shape = (h, w) if ch == 1 else (h, w, ch)
    noise = rng.integers(0, top // 8, size=shape)
    if ch > 1:
        base = base[..., None]
    return np.clip(base + noise, 0, top).astype(dtype)


def pnm(path, a):
    """a as binary PGM/PPM (16-bit: big-endian, maxval 65535)."""
    magic = b"P5" if a.ndim == 2 else b"P6"
    top = 255 if a.dtype == np.uint8 else 65535
    data = a.astype(">u2").tobytes() if a.dtype == np.uint16 else a.tobytes()
    with open(path, "wb") as f:
        f.write(b"%s\n%d %d\n%d\n" % (magic, a.shape[1], a.shape[0], top) + data)


def read_pgm(path):
    with open(path, "rb") as f:
        d = f.read()
    parts = d.split(b"\n", 3)
    w, h = map(int, parts[1].split())
    return np.frombuffer(parts[3], np.uint8).reshape(h, w)


def cli(tmp_path, a, *args):
    """The gpuedge command's edge map of the same pixels."""
    if not os.access(GPUEDGE, os.X_OK):
        pytest.skip("no gpuedge binary at %s" % GPUEDGE)
    src = tmp_path / ("in.pgm" if a.ndim == 2 else "in.ppm")
    if a.ndim == 3 and a.shape[2] == 4:
        from PIL import Image
        src = tmp_path / "in.png"
        Image.fromarray(a, "RGBA").save(src)
    else:
        pnm(src, a)
    out = tmp_path / "out.pgm"
    subprocess.run([GPUEDGE, "-q", "-y", "--backend", BACKEND, *args, str(src), str(out)],
                   check=True)
    return read_pgm(out)


@pytest.mark.parametrize("ch,dtype", [(1, np.uint8), (3, np.uint8), (4, np.uint8),
                                      (1, np.uint16), (3, np.uint16)])
def test_equals_cli(tmp_path, ch, dtype):
    a = frame(45, 67, ch, dtype)
    e, hist = gpuedge.edges(a, backend=BACKEND)
    assert e.shape == (45, 67) and e.dtype == np.uint8
    assert hist.dtype == np.uint64 and hist.shape == (256,)
    assert np.array_equal(e, cli(tmp_path, a))
    assert np.array_equal(hist, np.bincount(e.ravel(), minlength=256))


@pytest.mark.parametrize("kw,args", [
    (dict(sigma=2.5, border="reflect101"), ["--sigma", "2.5", "--border", "reflect101"]),
    (dict(sigma=0, border="zero", scale=3.0), ["--sigma", "0", "--border", "zero", "--scale", "3"]),
    (dict(threshold=40, invert=True), ["--threshold", "40", "--invert"]),
    (dict(canny=(20, 60)), ["--canny", "20,60"]),
    (dict(canny="auto", sigma=2, invert=True), ["--canny", "auto", "--sigma", "2", "--invert"]),
])
def test_parameters_equal_cli(tmp_path, kw, args):
    a = frame(38, 51, 3, np.uint8, seed=7)
    e, _ = gpuedge.edges(a, backend=BACKEND, **kw)
    assert np.array_equal(e, cli(tmp_path, a, *args))


def test_padded_rows_are_read_in_place():
    big = frame(30, 80, 3, np.uint8, seed=3)
    view = big[:, 5:60]           # rows 80*3 bytes apart, 55 pixels each
    assert not view.flags.c_contiguous
    e1, h1 = gpuedge.edges(view, backend=BACKEND)
    e2, h2 = gpuedge.edges(np.ascontiguousarray(view), backend=BACKEND)
    assert np.array_equal(e1, e2) and np.array_equal(h1, h2)


def test_non_contiguous_pixels_rejected():
    a = frame(20, 40, 1, np.uint8)
    with pytest.raises(ValueError, match="contiguous"):
        gpuedge.edges(a[:, ::2], backend=BACKEND)
    with pytest.raises(ValueError, match="contiguous"):
        gpuedge.edges(frame(20, 40, 3, np.uint8)[:, :, ::-1], backend=BACKEND)


@pytest.mark.parametrize("a", [np.zeros((8, 8), np.float32), np.zeros((8, 8), np.int16),
                               np.zeros((8, 8), ">u2")])
def test_bad_dtype(a):
    with pytest.raises(TypeError):
        gpuedge.edges(a, backend=BACKEND)


@pytest.mark.parametrize("shape,kw", [((8,), {}), ((8, 8, 5), dict(batch=False)),
                                      ((2, 8, 8, 5), {}), ((0, 8), {}), ((8, 0, 3), {}),
                                      ((0, 8, 8, 3), {}), ((2, 2, 2, 2, 2), {})])
def test_bad_shape(shape, kw):
    with pytest.raises(ValueError):
        gpuedge.edges(np.zeros(shape, np.uint8), backend=BACKEND, **kw)


@pytest.mark.parametrize("kw", [dict(sigma=20), dict(scale=0), dict(threshold=300),
                                dict(border="wrap"), dict(backend="tpu"),
                                dict(canny=(50, 10)), dict(canny="always"), dict(device=-1)])
def test_bad_parameters(kw):
    with pytest.raises(ValueError) as ei:
        gpuedge.edges(np.zeros((8, 8), np.uint8), **kw)
    assert "gpuedge:" in str(ei.value)


def test_not_an_array():
    with pytest.raises(TypeError):
        gpuedge.edges("picture.png")


def test_no_gpu_raises():
    try:
        gpuedge.edges(np.zeros((8, 8), np.uint8), backend="gpu")
    except gpuedge.NoGPUError as e:
        assert isinstance(e, RuntimeError) and "CUDA" in str(e)
    else:
        pytest.skip("a GPU is usable here")


def test_threads_match_one_thread():
    frames = [frame(33 + i, 41, 3, np.uint8, seed=i) for i in range(6)]
    sigmas = [0.5, 1.0, 2.0, 3.0]
    want = {(s, i): gpuedge.edges(f, sigma=s, backend=BACKEND)[0]
            for s in sigmas for i, f in enumerate(frames)}
    got, errors = {}, []

    def work(s):
        try:
            for _ in range(3):
                for i, f in enumerate(frames):
                    got[(s, i)] = gpuedge.edges(f, sigma=s, backend=BACKEND)[0]
        except Exception as e:  # reported below
            errors.append(e)

    th = [threading.Thread(target=work, args=(s,)) for s in sigmas]
    for t in th:
        t.start()
    for t in th:
        t.join()
    assert not errors
    assert all(np.array_equal(got[k], want[k]) for k in want)


def test_version():
    assert gpuedge.version().count(".") == 2
