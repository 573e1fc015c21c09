"""gpuedge: edge maps of NumPy, PyTorch and CuPy images (libgpuedge over ctypes).

    edges, hist = gpuedge.edges(rgb)     # H x W x 3 uint8 -> H x W uint8, 256 counts
    maps, hists = gpuedge.edges(batch)   # N x H x W x C -> N x H x W, N x 256

What it computes: DESIGN.md section 1 of the gpuedge project, the same
function as the ``gpuedge`` command: grey (BT.601 weights), Gaussian blur,
Sobel magnitude, quantised to 8 bits, optionally thresholded, Canny, or
inverted, and the 256-bin histogram of the map.

Backends (``backend=``):

* ``"gpu"``: the CUDA kernels.  Host arrays (NumPy, torch CPU tensors) are
  copied to the GPU and back; the call returns when the results are
  written.  Device arrays (CuPy arrays, torch CUDA tensors, any object with
  ``__cuda_array_interface__``) are read in place and the work is queued on
  the caller's stream: the call returns at once, results on the same
  device as the same kind of array.  A batch is one call: every frame
  queued on one stream, no host synchronisation between frames.
* ``"cpu"``: the CPU backend, multi-threaded; host arrays only.  A batch
  shares the threads: min(threads, N) workers take frames in turn.
* ``"auto"`` (default): the GPU when one is usable, else the CPU; device
  arrays always take the GPU.

What is exact: both backends give the same bits as each other and as the
command line's output on the same pixels (integer and correctly rounded
float arithmetic, no fused multiply-add where not written), for every
dtype, layout, channel order, batch size, thread count and stream; a BGR
image with ``channels="bgr"`` gives exactly its RGB twin's map.  Nothing is
approximate; tests compare maps and histograms byte for byte.

The shared library is found through, in order: $GPUEDGE_LIB (a path to
libgpuedge.so.0), the package's own directory (pip install, a wheel), the
build tree (build/rel/lib, then build/nocuda/lib, next to python/), the
path ``make install`` recorded, the loader's search path.

Contexts (one per set of options and thread: libgpuedge's thread rule) are
kept in a small per-thread LRU cache (``CACHE_SIZE``), so repeated calls
pay no set-up.  Calls release the GIL while the library works.

>>> import numpy as np, gpuedge
>>> img = np.zeros((4, 6), np.uint8); img[:, 3:] = 10     # a vertical step of 10
>>> e, hist = gpuedge.edges(img, sigma=0, backend="cpu")  # Sobel: 4 x 10 either side
>>> e
array([[ 0,  0, 40, 40,  0,  0],
       [ 0,  0, 40, 40,  0,  0],
       [ 0,  0, 40, 40,  0,  0],
       [ 0,  0, 40, 40,  0,  0]], dtype=uint8)
>>> int(hist[0]), int(hist[40])
(16, 8)
"""
import collections
import threading
from typing import Any, Optional, Sequence, Tuple, Union

from . import _lib
from ._lib import (ArgumentError, CudaError, DtypeError, GpuEdgeError, NoGPUError,
                   UnsupportedError, library_path)

__all__ = ["edges", "version", "__version__", "default_threads", "GpuEdgeError",
           "ArgumentError", "NoGPUError", "CudaError", "UnsupportedError", "DtypeError",
           "library_path", "CACHE_SIZE"]

#: Contexts kept per thread (least recently used dropped first).
CACHE_SIZE = 8

Array = Any  # numpy.ndarray, torch.Tensor, cupy.ndarray or a __cuda_array_interface__ object


def version() -> str:
    """The loaded libgpuedge's version, "MAJOR.MINOR.PATCH" (include/gpuedge.h).

    >>> gpuedge.version() == gpuedge.__version__
    True
    """
    return _lib.ge_version().decode()


__version__ = version()

_BACKENDS = {"auto": 0, "gpu": 1, "cpu": 2}
_BORDERS = {"replicate": 0, "reflect101": 1, "reflect_101": 1, "zero": 2, "constant": 2}
_CANNY_ON, _CANNY_AUTO = 1, 2
# channels= -> (channel count it needs, BGR order, the reordering index)
_CHANNELS = {None: (None, 0, None), "rgb": (3, 0, None), "rgba": (4, 0, None),
             "bgr": (3, 1, [2, 1, 0]), "bgra": (4, 1, [2, 1, 0, 3])}

# ---------------------------------------------------------------------------
# contexts

_local = threading.local()


def _context(key: tuple) -> _lib.Ctx:
    cache = getattr(_local, "ctxs", None)
    if cache is None:
        cache = _local.ctxs = collections.OrderedDict()
    c = cache.get(key)
    if c is not None:
        cache.move_to_end(key)
        return c
    backend, device, sigma, border, scale, thr, canny, invert, threads, order = key
    opt = _lib.Options()
    _lib.options_init(opt)
    opt.backend, opt.device, opt.sigma, opt.border, opt.scale = (
        backend, device, sigma, border, scale)
    opt.threads = threads
    if thr is not None:
        opt.use_threshold, opt.threshold = 1, thr
    if canny == "auto":
        opt.canny = _CANNY_AUTO
    elif canny is not None:
        opt.canny, opt.canny_low, opt.canny_high = _CANNY_ON, canny[0], canny[1]
    opt.invert = 1 if invert else 0
    c = cache[key] = _lib.Ctx(opt, order)
    while len(cache) > max(1, CACHE_SIZE):
        cache.popitem(last=False)
    return c


def _key(sigma, border, scale, threshold, canny, invert, backend, device, threads) -> tuple:
    try:
        b = _BACKENDS[backend]
    except (KeyError, TypeError):
        raise ArgumentError("gpuedge: backend %r: expected 'auto', 'gpu' or 'cpu'" % (backend,))
    try:
        bd = _BORDERS[border]
    except (KeyError, TypeError):
        raise ArgumentError("gpuedge: border %r: expected 'replicate', 'reflect101' or 'zero'"
                            % (border,))
    if canny is not None and canny != "auto":
        try:
            lo, hi = canny
            canny = (float(lo), float(hi))
        except (TypeError, ValueError):
            raise ArgumentError("gpuedge: canny %r: expected None, 'auto' or (low, high)"
                                % (canny,))
    if not isinstance(device, int) or device < 0:
        raise ArgumentError("gpuedge: device %r: expected an index >= 0" % (device,))
    if not isinstance(threads, int) or isinstance(threads, bool) or not 0 <= threads <= 1024:
        raise ArgumentError("gpuedge: threads %r: expected 0 (one per CPU this process may "
                            "use) to 1024" % (threads,))
    return (b, device, float(sigma), bd, float(scale),
            None if threshold is None else float(threshold), canny, bool(invert), threads, 0)


def default_threads() -> int:
    """The threads the CPU backend uses when ``threads=0`` (the default): the
    CPUs this process may use, i.e. its affinity mask (os.sched_getaffinity)
    capped by its cgroup's CPU quota (v2 cpu.max, v1 cfs quota), rounded up.

    >>> import os
    >>> 1 <= gpuedge.default_threads() <= len(os.sched_getaffinity(0))
    True
    """
    opt = _lib.Options()
    _lib.options_init(opt)
    opt.backend = _BACKENDS["cpu"]
    return _lib.Ctx(opt, 0).threads


# ---------------------------------------------------------------------------
# arrays: a descriptor (pointer, shape, byte strides) whatever the producer

class _Desc:
    __slots__ = ("ptr", "shape", "strides", "bps")

    def __init__(self, ptr, shape, strides, bps):
        self.ptr, self.shape, self.strides, self.bps = ptr, tuple(shape), tuple(strides), bps


def _kind(a) -> str:
    """'numpy', 'torch' (CPU), 'torch-cuda', 'cupy' or 'cai'."""
    mod = type(a).__module__.split(".")[0]
    if mod == "torch":
        return "torch-cuda" if a.is_cuda else "torch"
    if mod == "cupy":
        return "cupy"
    if hasattr(a, "__cuda_array_interface__"):
        return "cai"
    return "numpy"


def _torch_bps(a, what):
    import torch
    if a.dtype == torch.uint8:
        return 1
    if a.dtype == getattr(torch, "uint16", None):
        return 2
    raise DtypeError("gpuedge: %s: dtype %s: expected torch.uint8 or torch.uint16"
                     % (what, a.dtype))


def _describe(a, kind: str, what: str) -> _Desc:
    if kind in ("torch", "torch-cuda"):
        bps = _torch_bps(a, what)
        return _Desc(a.data_ptr(), a.shape, [s * bps for s in a.stride()], bps)
    if kind == "cai":
        cai = a.__cuda_array_interface__
        bps = {"|u1": 1, "u1": 1, "<u2": 2, "=u2": 2}.get(cai["typestr"])
        if bps is None:
            raise DtypeError("gpuedge: %s: typestr %r: expected |u1 (uint8) or <u2 (uint16)"
                             % (what, cai["typestr"]))
        shape = tuple(cai["shape"])
        strides = cai.get("strides")
        if strides is None:
            strides, acc = [], bps
            for n in reversed(shape):
                strides.insert(0, acc)
                acc *= n
        return _Desc(cai["data"][0], shape, strides, bps)
    import numpy as np
    if a.dtype == np.uint8:
        bps = 1
    elif a.dtype == np.uint16:
        if not a.dtype.isnative:
            raise DtypeError("gpuedge: %s: byte-swapped uint16; use a.astype(numpy.uint16)"
                             % what)
        bps = 2
    else:
        raise DtypeError("gpuedge: %s: dtype %s: expected uint8 or uint16" % (what, a.dtype))
    ptr = a.data.ptr if kind == "cupy" else a.ctypes.data
    return _Desc(ptr, a.shape, a.strides, bps)


def _batched(shape, layout: str, batch: Optional[bool], what: str) -> bool:
    """Whether an array of this shape is a batch (its first axis N)."""
    nd = len(shape)
    if layout not in ("hwc", "chw"):
        raise ArgumentError("gpuedge: layout %r: expected 'hwc' or 'chw'" % (layout,))
    if nd == 3:
        if batch is None:
            # H x W x C when the channel axis can be one (1 to 4), else N x H x W
            return not (shape[2] <= 4 if layout == "hwc" else shape[0] <= 4)
        return bool(batch)
    if nd == 2 and not batch:
        return False
    if nd == 4 and batch is not False:
        return True
    raise ArgumentError("gpuedge: %s: shape %s%s: expected H x W, H x W x C, N x H x W or "
                        "N x H x W x C (C x H x W, N x C x H x W with layout='chw')"
                        % (what, tuple(shape), "" if batch is None else
                           " with batch=%r" % (batch,)))


def _as_nhwc(d: _Desc, layout: str, is_batch: bool) -> _Desc:
    """d as N x H x W x C (size-1 axes added with stride 0)."""
    nd = len(d.shape)
    if nd == 2:
        axes = [None, 0, 1, None]
    elif nd == 3 and is_batch:
        axes = [0, 1, 2, None]
    elif nd == 3:
        axes = [None, 0, 1, 2] if layout == "hwc" else [None, 1, 2, 0]
    else:
        axes = [0, 1, 2, 3] if layout == "hwc" else [0, 2, 3, 1]
    return _Desc(d.ptr, [1 if i is None else d.shape[i] for i in axes],
                 [0 if i is None else d.strides[i] for i in axes], d.bps)


def _pixels_packed(d: _Desc) -> bool:
    """Each row's samples contiguous (rows and frames may be anywhere)."""
    _, h, w, c = d.shape
    return (c == 1 or d.strides[3] == d.bps) and (w == 1 or d.strides[2] == c * d.bps)


def _geometry(d: _Desc, what: str):
    """(n, h, w, c, frame_bytes, row_bytes) of a packed N x H x W x C descriptor."""
    n, h, w, c = d.shape
    if min(n, h, w) < 1:
        raise ArgumentError("gpuedge: %s: empty image (shape N x H x W x C = %s)"
                            % (what, d.shape))
    if not 1 <= c <= 4:
        raise ArgumentError("gpuedge: %s: %d channels (shape N x H x W x C = %s): expected 1 "
                            "to 4; for C x H x W data pass layout='chw'" % (what, c, d.shape))
    row = w * c * d.bps
    fs = d.strides[0] if n > 1 else 0
    rs = d.strides[1] if h > 1 else row
    if not _pixels_packed(d) or rs < row or fs < 0:
        raise ArgumentError("gpuedge: %s: strides %s: each row's pixels must be contiguous "
                            "(rows and frames may be padded); copy it first "
                            "(numpy.ascontiguousarray, cupy.ascontiguousarray, "
                            "tensor.contiguous())" % (what, d.strides))
    return n, h, w, c, fs, rs


def _hwc(a, kind: str, layout: str, is_batch: bool, reindex=None):
    """a in H x W x C order (a framework view), copied to packed memory and,
    with reindex, its channels reordered: one op of the array's own library,
    on its current stream."""
    if kind == "cai":
        raise UnsupportedError("gpuedge: %s: %s; only torch and CuPy arrays are reordered or "
                               "copied here: reorder to RGB / copy to packed H x W x C first"
                               % (type(a).__name__, "channels=%r asks for a reorder" % (
                                   ["bgr", "bgra"][len(reindex) - 3],) if reindex else
                                   "layout='chw' and its pixels are not packed"))
    nd = len(a.shape)
    if layout == "chw" and nd == 3 and not is_batch:
        perm = (1, 2, 0)
    elif layout == "chw" and nd == 4:
        perm = (0, 2, 3, 1)
    else:
        perm = tuple(range(nd))
    if kind in ("torch", "torch-cuda"):
        v = a.permute(*perm)
        # (an indexed copy may keep the input's stride order: make it packed)
        return (v[..., reindex] if reindex else v).contiguous()
    if kind == "cupy":
        import cupy
        v = a.transpose(perm)
        return cupy.ascontiguousarray(v[..., reindex] if reindex else v)
    import numpy as np
    v = a.transpose(perm)
    return np.ascontiguousarray(v[..., reindex] if reindex else v)


# ---------------------------------------------------------------------------
# outputs

def _out_desc(o, kind, shape, what):
    """The caller's out=/hist_out= buffer, checked against the input's kind."""
    okind = _kind(o)
    same = {"numpy": ("numpy",), "torch": ("torch",), "torch-cuda": ("torch-cuda", "cai"),
            "cupy": ("cupy", "cai"), "cai": ("cupy", "cai", "torch-cuda")}[kind]
    if okind not in same:
        raise ArgumentError("gpuedge: %s: a %s buffer for a %s input: expected the input's "
                            "kind (and device)" % (what, type(o).__name__, kind))
    if okind in ("torch", "torch-cuda"):
        import torch
        ok = o.dtype == (torch.uint8 if what == "out" else torch.int64) or (
            what == "hist_out" and o.dtype == getattr(torch, "uint64", None))
        isz = o.element_size()
        d = _Desc(o.data_ptr(), o.shape, [s * isz for s in o.stride()], isz)
    elif okind == "cai":
        cai = o.__cuda_array_interface__
        ok = cai["typestr"] in (("|u1",) if what == "out" else ("<u8",))
        isz = 1 if what == "out" else 8
        d = _Desc(cai["data"][0], cai["shape"], cai.get("strides") or
                  [isz * int(__import__("math").prod(cai["shape"][i + 1:]))
                   for i in range(len(cai["shape"]))], isz)
    else:
        ok = str(o.dtype) == ("uint8" if what == "out" else "uint64")
        isz = o.itemsize
        ptr = o.data.ptr if okind == "cupy" else o.ctypes.data
        d = _Desc(ptr, o.shape, o.strides, isz)
    if not ok:
        raise DtypeError("gpuedge: %s: dtype %s: expected %s" % (
            what, o.dtype if hasattr(o, "dtype") else "?",
            "uint8" if what == "out" else "uint64 (int64 for torch)"))
    if tuple(d.shape) != tuple(shape):
        raise ArgumentError("gpuedge: %s: shape %s: expected %s" % (what, tuple(d.shape),
                                                                   tuple(shape)))
    return o, d


def _new_outputs(kind, n, h, w, single, device):
    es = (h, w) if single else (n, h, w)
    hs = (256,) if single else (n, 256)
    if kind in ("torch", "torch-cuda"):
        import torch
        dev = torch.device("cuda", device) if kind == "torch-cuda" else "cpu"
        return (torch.empty(es, dtype=torch.uint8, device=dev),
                torch.empty(hs, dtype=torch.int64, device=dev))
    if kind in ("cupy", "cai"):
        try:
            import cupy
        except ImportError:
            raise UnsupportedError("gpuedge: results for a device array are made as CuPy "
                                   "arrays: CuPy is not installed (or pass out= and hist_out=)")
        with cupy.cuda.Device(device):
            return cupy.empty(es, cupy.uint8), cupy.empty(hs, cupy.uint64)
    import numpy as np
    return np.empty(es, np.uint8), np.empty(hs, np.uint64)


def _strides_of(d: _Desc, single: bool):
    """(frame_bytes, row_bytes) of an out= map descriptor (H x W or N x H x W)."""
    st = ([0] + list(d.strides)) if single else list(d.strides)
    shape = ([1] + list(d.shape)) if single else list(d.shape)
    if shape[2] > 1 and st[2] != 1:
        raise ArgumentError("gpuedge: out: strides %s: each row must be contiguous"
                            % (tuple(d.strides),))
    return (st[0] if shape[0] > 1 else 0), (st[1] if shape[1] > 1 else shape[2])


def _stream_handle(stream, kind, a, device):
    if stream is not None:
        if isinstance(stream, int):
            return stream
        for attr in ("cuda_stream", "ptr"):  # torch.cuda.Stream, cupy.cuda.Stream
            if hasattr(stream, attr):
                return int(getattr(stream, attr))
        raise ArgumentError("gpuedge: stream %r: expected a torch or CuPy stream or an int "
                            "cudaStream_t" % (stream,))
    if kind == "torch-cuda":
        import torch
        return torch.cuda.current_stream(device).cuda_stream
    if kind == "cai":
        s = a.__cuda_array_interface__.get("stream")
        if s is not None:
            return s
    if kind in ("cupy", "cai"):
        try:
            import cupy
            return cupy.cuda.get_current_stream().ptr
        except ImportError:
            return 0
    return 0


# ---------------------------------------------------------------------------
# the call

def edges(array: Array, sigma: float = 1.0, border: str = "replicate", scale: float = 1.0,
          threshold: Optional[float] = None,
          canny: Union[None, str, Tuple[float, float], Sequence[float]] = None,
          invert: bool = False, backend: str = "auto", device: int = 0, *,
          channels: Optional[str] = None, layout: str = "hwc", batch: Optional[bool] = None,
          threads: int = 0, out: Optional[Array] = None, hist_out: Optional[Array] = None,
          stream: Any = None) -> Tuple[Array, Array]:
    """Edge maps and histograms of one image or a batch: ``(edges, hist)``.

    array: uint8 or uint16 (scaled by 255/65535) pixels, one of
      H x W (grey), H x W x C, N x H x W (a batch of grey), N x H x W x C;
      with ``layout="chw"``: C x H x W, N x C x H x W (torch's order; read
      in place when the memory is channels-last, else copied to HWC first).
      C is 1 (grey), 2 (grey + alpha), 3 (RGB) or 4 (RGBA; alpha ignored).
      A 3-axis array is H x W x C when its last axis (first with "chw") is
      1 to 4 long, else N x H x W; ``batch=True``/``False`` says which.
      A NumPy array or torch CPU tensor takes the host path; a torch CUDA
      tensor, a CuPy array or any ``__cuda_array_interface__`` object the
      device path (zero-copy; see the module's help).  Rows and frames may
      be padded (any stride); the pixels within a row must be contiguous.
    Returns edges, H x W uint8 (N x H x W for a batch), and hist, 256 counts
      (N x 256): uint64, int64 for torch.  Of the input's kind: NumPy for
      NumPy, torch tensors on the input's device for torch (CPU included),
      CuPy for CuPy and other device arrays.
    sigma: 0 (no blur) or 0.1 to 16.  border: "replicate", "reflect101" or
      "zero".  scale: > 0.  threshold: None or 0 to 255 (a 0/255 map).
      canny: None, "auto" or (low, high).  invert: 255 - e, last.
    backend: "auto", "gpu" or "cpu".  device: the CUDA device (a device
      array's own device wins).
    channels: None (RGB order for 3 and 4 channels), "rgb", "bgr", "rgba",
      "bgra" (checked against C).  BGR is OpenCV's order (cv2.imread); a BGR
      image gives exactly the map of its RGB twin.
    threads: CPU backend threads; 0 (default): default_threads().
    out, hist_out: write into these (the input's kind, shapes and dtypes as
      returned; out's rows contiguous, hist_out C-contiguous) and return them.
    stream: device arrays: a torch or CuPy stream or an int cudaStream_t to
      queue the work on (default: the array's interface stream, else
      torch's / CuPy's current stream).  Host arrays ignore it.

    Raises DtypeError (a TypeError) for another dtype, ArgumentError (a
    ValueError) for a bad shape, strides or parameter, NoGPUError when
    backend="gpu" (or a device array) finds no usable GPU, CudaError,
    UnsupportedError; all are GpuEdgeError (a RuntimeError).

    >>> import numpy as np
    >>> frames = np.zeros((3, 4, 6, 3), np.uint8); frames[:, :, 3:] = 10
    >>> maps, hists = gpuedge.edges(frames, sigma=0, backend="cpu")
    >>> maps.shape, hists.shape, hists[:, 40].tolist()
    ((3, 4, 6), (3, 256), [8, 8, 8])
    >>> bgr = frames[..., ::-1].copy()                  # what cv2.imread gives
    >>> np.array_equal(gpuedge.edges(bgr, channels="bgr", backend="cpu")[0],
    ...                gpuedge.edges(frames, backend="cpu")[0])
    True
    >>> chw = np.ascontiguousarray(frames.transpose(0, 3, 1, 2))   # N x C x H x W
    >>> np.array_equal(gpuedge.edges(chw, layout="chw", sigma=0, backend="cpu")[0], maps)
    True
    """
    key = _key(sigma, border, scale, threshold, canny, invert, backend, device, threads)
    try:
        need_c, order, reindex = _CHANNELS[channels]
    except (KeyError, TypeError):
        raise ArgumentError("gpuedge: channels %r: expected None, 'rgb', 'bgr', 'rgba' or "
                            "'bgra'" % (channels,))
    kind = _kind(array)
    what = {"numpy": "numpy array", "torch": "torch tensor", "torch-cuda": "torch tensor",
            "cupy": "cupy array", "cai": "device array"}[kind]
    if kind == "numpy":
        if not hasattr(array, "__array_interface__"):
            raise DtypeError("gpuedge: expected a NumPy array, a torch tensor or an object "
                             "with __cuda_array_interface__, got %s" % type(array).__name__)
        import numpy as np
        if not isinstance(array, np.ndarray):
            array = np.asarray(array)
    on_device = kind in ("torch-cuda", "cupy", "cai")
    if on_device:
        if key[0] == _BACKENDS["cpu"]:
            raise UnsupportedError("gpuedge: backend='cpu' takes host arrays (NumPy, torch CPU "
                                   "tensors); this one is on the GPU")
        dev = device
        if kind == "torch-cuda":
            import torch
            dev = array.device.index if array.device.index is not None \
                else torch.cuda.current_device()
        elif kind == "cupy":
            dev = array.device.id
        key = (_BACKENDS["gpu"], dev) + key[2:]
    d0 = _describe(array, kind, what)
    is_batch = _batched(d0.shape, layout, batch, what)
    d = _as_nhwc(d0, layout, is_batch)
    if need_c is not None and d.shape[3] != need_c:
        raise ArgumentError("gpuedge: channels=%r: expects %d channels, the %s has %d "
                            "(shape %s)" % (channels, need_c, what, d.shape[3],
                                            tuple(d0.shape)))
    # copies made here (CHW to HWC, a device reorder) and new outputs are
    # made on the stream the work goes to, so that they are stream-ordered
    with _on_stream(kind, stream if on_device else None):
        array, d, layout, order = _prepare(array, kind, d, layout, is_batch, order, reindex,
                                           on_device, what)
        n, h, w, c, fs, rs = _geometry(d, what)
        key = key[:-1] + (order,)
        single = not is_batch
        e_new, h_new = (None, None)
        if out is None or hist_out is None:
            e_new, h_new = _new_outputs(kind, n, h, w, single, key[1])
    e_obj, e_d = _out_desc(out if out is not None else e_new, kind,
                           (h, w) if single else (n, h, w), "out")
    h_obj, h_d = _out_desc(hist_out if hist_out is not None else h_new, kind,
                           (256,) if single else (n, 256), "hist_out")
    if h_d.strides[-1] != 8 or (not single and n > 1 and h_d.strides[0] != 2048):
        raise ArgumentError("gpuedge: hist_out: strides %s: expected C-contiguous"
                            % (tuple(h_d.strides),))
    efs, ers = _strides_of(e_d, single)
    ctx = _context(key)
    if on_device:
        r = _lib.process_batch_device(ctx.ptr, n, d.ptr, fs, w, h, c, d.bps, rs, e_d.ptr, efs,
                                      ers, h_d.ptr, _stream_handle(stream, kind, array, key[1])
                                      or None)
    else:
        r = _lib.process_batch(ctx.ptr, n, d.ptr, fs, w, h, c, d.bps, rs, e_d.ptr, efs, ers,
                               h_d.ptr)
    if r < 0:
        _lib.raise_status(r, ctx.ptr)
    return e_obj, h_obj


def _prepare(array, kind, d, layout, is_batch, order, reindex, on_device, what):
    """(array, descriptor, layout, order) ready for the library: device BGR
    frames reordered (the library reorders host frames only), CHW data
    whose pixels are not packed copied to HWC."""
    if order and on_device:
        array = _hwc(array, kind, layout, is_batch, reindex)
        return array, _as_nhwc(_describe(array, kind, what), "hwc", is_batch), "hwc", 0
    if layout == "chw" and not _pixels_packed(d):
        array = _hwc(array, kind, layout, is_batch)
        return array, _as_nhwc(_describe(array, kind, what), "hwc", is_batch), "hwc", order
    return array, d, layout, order


class _on_stream:
    """Makes `stream` (when given) torch's / CuPy's current stream."""

    def __init__(self, kind, stream):
        self.cm = None
        if stream is None:
            return
        s = _stream_handle(stream, kind, None, 0)
        if kind == "torch-cuda":
            import torch
            self.cm = torch.cuda.stream(torch.cuda.ExternalStream(s))
        elif kind == "cupy":
            import cupy
            self.cm = cupy.cuda.ExternalStream(s)

    def __enter__(self):
        if self.cm is not None:
            self.cm.__enter__()
        return self

    def __exit__(self, *exc):
        return self.cm.__exit__(*exc) if self.cm is not None else False
