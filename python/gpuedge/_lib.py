"""libgpuedge.so.0 through ctypes: finding it, its prototypes, its errors."""
import ctypes
import os
from typing import Iterator, Optional, Tuple


class GpuEdgeError(RuntimeError):
    """A libgpuedge failure; ``.status`` is the library's negative code."""

    def __init__(self, msg: str, status: Optional[int] = None) -> None:
        super().__init__(msg)
        self.status = status


class ArgumentError(GpuEdgeError, ValueError):
    """A bad argument (shape, strides, size, a parameter out of range)."""


class NoGPUError(GpuEdgeError):
    """No usable GPU (no driver or device, no kernel image for it, or a
    library built without CUDA)."""


class CudaError(GpuEdgeError):
    """A CUDA call failed inside the library."""


class UnsupportedError(GpuEdgeError):
    """Valid, but not on this backend (e.g. a device array with backend='cpu')."""


class DtypeError(GpuEdgeError, TypeError):
    """The array's element type is not uint8 or uint16 (or not an array)."""


_ERRORS = {-1: ArgumentError, -2: GpuEdgeError, -3: NoGPUError, -4: CudaError,
           -5: UnsupportedError}


def _candidates() -> Iterator[str]:
    env = os.environ.get("GPUEDGE_LIB")
    if env:
        yield env
        return
    here = os.path.dirname(os.path.abspath(__file__))
    yield os.path.join(here, "libgpuedge.so.0")  # pip install / a wheel
    root = os.path.join(here, "..", "..")
    for variant in ("rel", "nocuda"):              # make lib, make CUDA=0 lib
        yield os.path.normpath(os.path.join(root, "build", variant, "lib", "libgpuedge.so.0"))
    try:
        from ._libpath import LIB  # written by make install
        yield LIB
    except ImportError:
        pass
    yield "libgpuedge.so.0"


def _load() -> Tuple[ctypes.CDLL, str]:
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


lib, library_path = _load()


class Options(ctypes.Structure):
    """struct ge_options (include/gpuedge.h)."""
    _fields_ = [("backend", ctypes.c_int), ("device", ctypes.c_int),
                ("threads", ctypes.c_int), ("sigma", ctypes.c_double),
                ("border", ctypes.c_int), ("scale", ctypes.c_float),
                ("use_threshold", ctypes.c_int), ("threshold", ctypes.c_float),
                ("canny", ctypes.c_int), ("canny_low", ctypes.c_float),
                ("canny_high", ctypes.c_float), ("invert", ctypes.c_int)]


_vp, _sz, _int = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int


def _proto(name, restype, *argtypes):
    fn = getattr(lib, name)
    fn.argtypes = list(argtypes)
    fn.restype = restype
    return fn


options_init = _proto("ge_options_init", None, ctypes.POINTER(Options))
ctx_new = _proto("ge_ctx_new", _int, ctypes.POINTER(_vp), ctypes.POINTER(Options))
ctx_free = _proto("ge_ctx_free", None, ctypes.POINTER(_vp))
ctx_backend = _proto("ge_ctx_backend", _int, _vp)
ctx_threads = _proto("ge_ctx_threads", _int, _vp)
ctx_set_order = _proto("ge_ctx_set_order", _int, _vp, _int)
# (ctx, count, pixels, frame_bytes, w, h, channels, bps, stride,
#  edge, edge_frame_bytes, edge_stride, hist[, stream])
process_batch = _proto("ge_process_batch", _int, _vp, _int, _vp, _sz, _int, _int, _int, _int,
                       _sz, _vp, _sz, _sz, _vp)
process_batch_device = _proto("ge_process_batch_device", _int, _vp, _int, _vp, _sz, _int, _int,
                              _int, _int, _sz, _vp, _sz, _sz, _vp, _vp)
last_error = _proto("ge_last_error", ctypes.c_char_p, _vp)
ge_version = _proto("ge_version", ctypes.c_char_p)


def raise_status(status: int, ctx) -> None:
    text = last_error(ctx).decode(errors="replace")
    raise _ERRORS.get(status, GpuEdgeError)("gpuedge: " + text, status)


class Ctx:
    """One ge_ctx, freed with the object."""
    __slots__ = ("ptr", "backend", "threads")

    def __init__(self, opt: Options, order: int) -> None:
        self.ptr = None
        p = _vp()
        r = ctx_new(ctypes.byref(p), ctypes.byref(opt))
        if r < 0:
            raise_status(r, None)
        self.ptr = p
        self.backend = ctx_backend(p)
        self.threads = ctx_threads(p)
        if order:
            r = ctx_set_order(p, order)
            if r < 0:
                raise_status(r, p)

    def __del__(self) -> None:
        if self.ptr:
            ctx_free(ctypes.byref(self.ptr))
