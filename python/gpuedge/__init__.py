"""gpuedge: edge maps of NumPy, CuPy and PyTorch images (libgpuedge over ctypes).

    import numpy as np, gpuedge
    edges, hist = gpuedge.edges(rgb)              # H x W x 3 uint8 -> H x W uint8, 256 counts

The same function as the gpuedge command (DESIGN.md §1), bit for bit on the GPU
and the CPU backend.  NumPy arrays take the host path; objects with
``__cuda_array_interface__`` (CuPy arrays, PyTorch CUDA tensors) take the
device path, zero-copy, queued on the caller's stream; their results come
back on the device as the same kind (cupy array / torch tensor).

The shared library is found through, in order: $GPUEDGE_LIB (a path to
libgpuedge.so.0), the package's own directory (pip install, a wheel), the
build tree (build/rel/lib, then build/nocuda/lib, next to python/), the
path ``make install`` recorded (_libpath.py), the loader's search path.

Contexts (one per set of options and thread, libgpuedge's thread rule) are
kept and reused, so repeated calls pay no set-up.
"""
import ctypes
import os
import threading

__all__ = ["edges", "version", "__version__", "GpuEdgeError", "ArgumentError", "NoGPUError",
           "CudaError", "UnsupportedError", "DtypeError", "library_path"]


class GpuEdgeError(RuntimeError):
    """A libgpuedge failure; .status is the library's negative code."""

    def __init__(self, msg, status=None):
        super().__init__(msg)
        self.status = status


class ArgumentError(GpuEdgeError, ValueError):
    """A bad argument (shape, strides, size, a parameter out of range)."""


class NoGPUError(GpuEdgeError):
    """No usable GPU (no driver or device, or no kernel image for it)."""


class CudaError(GpuEdgeError):
    """A CUDA call failed inside the library."""


class UnsupportedError(GpuEdgeError):
    """Valid, but not on this backend (e.g. a device array with backend='cpu')."""


class DtypeError(GpuEdgeError, TypeError):
    """The array's element type is not uint8 or uint16."""


_ERRORS = {-1: ArgumentError, -2: GpuEdgeError, -3: NoGPUError, -4: CudaError,
           -5: UnsupportedError}

# ---------------------------------------------------------------------------
# the library


def _candidates():
    env = os.environ.get("GPUEDGE_LIB")
    if env:
        yield env
        return
    here = os.path.dirname(os.path.abspath(__file__))
    yield os.path.join(here, "libgpuedge.so.0")  # pip install / a wheel
    root = os.path.join(here, "..", "..")
    for variant in ("rel", "nocuda"):              # make lib, make CUDA=0 lib
        yield os.path.join(root, "build", variant, "lib", "libgpuedge.so.0")
    try:
        from ._libpath import LIB  # written by make install
        yield LIB
    except ImportError:
        pass
    yield "libgpuedge.so.0"


def _load():
    errors = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            errors.append(path + ": no such file")
            continue
        try:
            return ctypes.CDLL(path), path
        except OSError as e:
            errors.append(str(e))
    raise ImportError("gpuedge: cannot load libgpuedge.so.0 (set GPUEDGE_LIB): " +
                      "; ".join(errors))


_lib, library_path = _load()


class _Options(ctypes.Structure):
    _fields_ = [("backend", ctypes.c_int), ("device", ctypes.c_int),
                ("threads", ctypes.c_int), ("sigma", ctypes.c_double),
                ("border", ctypes.c_int), ("scale", ctypes.c_float),
                ("use_threshold", ctypes.c_int), ("threshold", ctypes.c_float),
                ("canny", ctypes.c_int), ("canny_low", ctypes.c_float),
                ("canny_high", ctypes.c_float), ("invert", ctypes.c_int)]


_vp, _sz, _int = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int
_lib.ge_options_init.argtypes = [ctypes.POINTER(_Options)]
_lib.ge_options_init.restype = None
_lib.ge_ctx_new.argtypes = [ctypes.POINTER(_vp), ctypes.POINTER(_Options)]
_lib.ge_ctx_new.restype = _int
_lib.ge_ctx_free.argtypes = [ctypes.POINTER(_vp)]
_lib.ge_ctx_free.restype = None
_lib.ge_ctx_backend.argtypes = [_vp]
_lib.ge_ctx_backend.restype = _int
_lib.ge_process.argtypes = [_vp, _vp, _int, _int, _int, _int, _sz, _vp, _sz, _vp]
_lib.ge_process.restype = _int
_lib.ge_process_device.argtypes = [_vp, _vp, _int, _int, _int, _int, _sz, _vp, _sz, _vp, _vp]
_lib.ge_process_device.restype = _int
_lib.ge_last_error.argtypes = [_vp]
_lib.ge_last_error.restype = ctypes.c_char_p
_lib.ge_version.argtypes = []
_lib.ge_version.restype = ctypes.c_char_p
_ge_process = _lib.ge_process
_ge_process_device = _lib.ge_process_device


def version():
    """The loaded libgpuedge's version, "MAJOR.MINOR.PATCH"."""
    return _lib.ge_version().decode()


__version__ = version()


def _raise(status, ctx):
    text = _lib.ge_last_error(ctx).decode(errors="replace")
    raise _ERRORS.get(status, GpuEdgeError)("gpuedge: " + text, status)


_BACKENDS = {"auto": 0, "gpu": 1, "cpu": 2}
_BORDERS = {"replicate": 0, "reflect101": 1, "reflect_101": 1, "zero": 2, "constant": 2}
_CANNY_OFF, _CANNY_ON, _CANNY_AUTO = 0, 1, 2


class _Ctx:
    __slots__ = ("ptr", "backend")

    def __init__(self, opt):
        self.ptr = None
        p = _vp()
        r = _lib.ge_ctx_new(ctypes.byref(p), ctypes.byref(opt))
        if r < 0:
            _raise(r, None)
        self.ptr = p
        self.backend = _lib.ge_ctx_backend(p)

    def __del__(self):
        if self.ptr:
            _lib.ge_ctx_free(ctypes.byref(self.ptr))


_local = threading.local()


def _context(key):
    cache = getattr(_local, "ctxs", None)
    if cache is None:
        cache = _local.ctxs = {}
    c = cache.get(key)
    if c is None:
        backend, device, sigma, border, scale, thr, canny, invert = key
        opt = _Options()
        _lib.ge_options_init(ctypes.byref(opt))
        opt.backend, opt.device, opt.sigma, opt.border, opt.scale = (
            backend, device, sigma, border, scale)
        if thr is not None:
            opt.use_threshold, opt.threshold = 1, thr
        if canny == "auto":
            opt.canny = _CANNY_AUTO
        elif canny is not None:
            opt.canny, opt.canny_low, opt.canny_high = _CANNY_ON, canny[0], canny[1]
        opt.invert = 1 if invert else 0
        c = cache[key] = _Ctx(opt)
    return c


def _key(sigma, border, scale, threshold, canny, invert, backend, device):
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
    return (b, device, float(sigma), bd, float(scale),
            None if threshold is None else float(threshold), canny, bool(invert))


# ---------------------------------------------------------------------------
# arrays

_DTYPES = {"|u1": 1, "<u2": 2, "=u2": 2, "u1": 1}


def _layout(shape, strides, itemsize, what):
    """(height, width, channels, row stride in bytes) of an H x W [x C] array."""
    if len(shape) == 2:
        h, w = shape
        ch = 1
    elif len(shape) == 3:
        h, w, ch = shape
        if not 1 <= ch <= 4:
            raise ArgumentError("gpuedge: %s: %d channels (shape %s): expected 1 to 4 "
                                "(H x W, H x W x 3 or H x W x 4)" % (what, ch, tuple(shape)))
    else:
        raise ArgumentError("gpuedge: %s: shape %s: expected H x W, H x W x 3 or H x W x 4"
                            % (what, tuple(shape)))
    if h < 1 or w < 1:
        raise ArgumentError("gpuedge: %s: empty image (shape %s)" % (what, tuple(shape)))
    if strides is None:
        return h, w, ch, w * ch * itemsize
    # rows may be any distance apart; pixels within a row must be packed
    inner = (itemsize,) if len(shape) == 2 else (ch * itemsize, itemsize)
    if (tuple(strides[1:]) != inner and not (w == 1 and strides[-1] == itemsize)) or \
            (h > 1 and strides[0] < w * ch * itemsize):
        raise ArgumentError("gpuedge: %s: strides %s: each row's pixels must be contiguous "
                            "(rows may be padded); copy it first (numpy.ascontiguousarray, "
                            "cupy.ascontiguousarray, tensor.contiguous())"
                            % (what, tuple(strides)))
    return h, w, ch, strides[0] if h > 1 else w * ch * itemsize


def _host(a, key):
    import numpy as np
    if a.dtype == np.uint8:
        bps = 1
    elif a.dtype == np.uint16:
        bps = 2
        if not a.dtype.isnative:
            raise DtypeError("gpuedge: numpy array: byte-swapped uint16; use "
                             "a.astype(numpy.uint16)")
    else:
        raise DtypeError("gpuedge: numpy array: dtype %s: expected uint8 or uint16" % a.dtype)
    h, w, ch, stride = _layout(a.shape, a.strides, a.itemsize, "numpy array")
    ctx = _context(key)
    out = np.empty((h, w), np.uint8)
    hist = np.empty(256, np.uint64)
    r = _ge_process(ctx.ptr, a.ctypes.data, w, h, ch, bps, stride, out.ctypes.data, w,
                    hist.ctypes.data)
    if r < 0:
        _raise(r, ctx.ptr)
    return out, hist


def _device(a, key, mod):
    """The device path; mod: 'torch', 'cupy' or None (another producer)."""
    if mod == "torch":
        import torch
        if a.dtype == torch.uint8:
            bps = 1
        elif a.dtype == getattr(torch, "uint16", None):
            bps = 2
        else:
            raise DtypeError("gpuedge: torch tensor: dtype %s: expected torch.uint8 or "
                             "torch.uint16" % a.dtype)
        ptr = a.data_ptr()
        h, w, ch, stride = _layout(tuple(a.shape), tuple(s * bps for s in a.stride()), bps,
                                   "torch tensor")
        dev = a.device.index if a.device.index is not None else torch.cuda.current_device()
        stream = torch.cuda.current_stream(dev).cuda_stream
    else:
        cai = a.__cuda_array_interface__
        bps = _DTYPES.get(cai["typestr"])
        if bps is None:
            raise DtypeError("gpuedge: device array: typestr %r: expected |u1 (uint8) or <u2 "
                             "(uint16)" % cai["typestr"])
        ptr = cai["data"][0]
        h, w, ch, stride = _layout(tuple(cai["shape"]), cai.get("strides"), bps,
                                   "device array")
        stream = cai.get("stream")
        if stream is None and mod == "cupy":
            import cupy
            stream = cupy.cuda.get_current_stream().ptr
        dev = getattr(getattr(a, "device", None), "id", None) if mod == "cupy" else None
    if key[0] == _BACKENDS["cpu"]:
        raise UnsupportedError("gpuedge: backend='cpu' takes host (NumPy) arrays; this one is "
                               "on the GPU")
    if key[0] == _BACKENDS["auto"]:
        key = (_BACKENDS["gpu"],) + key[1:]
    if dev is not None and dev != key[1]:
        key = key[:1] + (dev,) + key[2:]
    ctx = _context(key)
    if mod == "torch":
        import torch
        out = torch.empty((h, w), dtype=torch.uint8, device=a.device)
        hist = torch.empty(256, dtype=torch.int64, device=a.device)
        optr, hptr = out.data_ptr(), hist.data_ptr()
    else:
        try:
            import cupy
        except ImportError:
            raise UnsupportedError("gpuedge: results of a %s device array are made as CuPy "
                                   "arrays: CuPy is not installed" % type(a).__name__)
        with cupy.cuda.Device(key[1]):
            out = cupy.empty((h, w), cupy.uint8)
            hist = cupy.empty(256, cupy.uint64)
        optr, hptr = out.data.ptr, hist.data.ptr
    r = _ge_process_device(ctx.ptr, ptr, w, h, ch, bps, stride, optr, w, hptr, stream or None)
    if r < 0:
        _raise(r, ctx.ptr)
    return out, hist


def edges(array, sigma=1.0, border="replicate", scale=1.0, threshold=None, canny=None,
          invert=False, backend="auto", device=0):
    """Edge map and histogram of one image: (edges, hist).

    array: H x W (grey), H x W x 3 (RGB) or H x W x 4 (RGBA; also 1 or 2
    channels), uint8 or uint16 (scaled by 255/65535).  A NumPy array (rows
    may be padded: any row stride; pixels within a row contiguous), or an
    object with __cuda_array_interface__ (CuPy array, PyTorch CUDA tensor):
    then the work is queued on the caller's current stream (the interface's
    "stream", else CuPy's/PyTorch's current stream) and returns at once;
    edges (H x W uint8) and hist (256 counts: uint64, int64 for torch) are
    of the same kind, on the same device.

    sigma 0 or 0.1..16; border 'replicate', 'reflect101' or 'zero'; scale
    > 0; threshold None or 0..255 (binary map); canny None, 'auto' or
    (low, high); invert; backend 'auto', 'gpu' or 'cpu'; device: the CUDA
    device (a torch tensor's own device wins).

    Raises DtypeError (a TypeError) for another dtype, ArgumentError (a
    ValueError) for a bad shape, strides or parameter, NoGPUError when
    backend='gpu' (or a device array) finds no usable GPU, CudaError,
    UnsupportedError; all are GpuEdgeError (a RuntimeError).
    """
    key = _key(sigma, border, scale, threshold, canny, invert, backend, device)
    mod = type(array).__module__.split(".")[0]
    if mod == "torch" and getattr(array, "is_cuda", False):
        return _device(array, key, "torch")
    if hasattr(array, "__cuda_array_interface__"):
        return _device(array, key, mod)
    if mod == "torch":
        # a CPU tensor: its NumPy view (shares the memory)
        array = array.numpy()
    if not hasattr(array, "__array_interface__"):
        raise DtypeError("gpuedge: expected a NumPy array or an object with "
                         "__cuda_array_interface__, got %s" % type(array).__name__)
    import numpy as np
    if not isinstance(array, np.ndarray):
        array = np.asarray(array)
    return _host(array, key)
