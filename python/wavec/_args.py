"""Kernel arguments from Python objects: each becomes an address, after
its element type, shape, device and layout were checked against the
kernel's declaration.

Accepted: torch tensors; on the GPU anything with __cuda_array_interface__
(CuPy, Numba, ...) or DLPack (__dlpack__); in the simulator NumPy arrays,
CPU torch tensors and CPU DLPack objects. bf16 is NumPy's uint16 holding
the raw 16-bit patterns (NumPy has no bfloat16), or ml_dtypes.bfloat16.
"""
import ctypes
import sys


class ArgumentError(ValueError):
    """A kernel argument that does not fit the kernel's declaration; `arg`
    is the argument's name."""

    def __init__(self, kernel, arg, message):
        super().__init__(f"{kernel}: argument '{arg}': {message}")
        self.kernel = kernel
        self.arg = arg


# wavec element type -> (NumPy dtype names, torch dtype names, DLPack (code, bits) pairs, array-interface typestrs)
DTYPES = {
    "f16": (("float16",), ("float16",), ((2, 16),), ("<f2",)),
    "bf16": (("uint16", "bfloat16"), ("bfloat16",), ((4, 16),), ("<u2",)),
    "f32": (("float32",), ("float32",), ((2, 32),), ("<f4",)),
    "i32": (("int32",), ("int32",), ((0, 32),), ("<i4",)),
    "i1": (("bool",), ("bool",), ((6, 8), (1, 8)), ("|b1",)),
    # the 8-bit floats: NumPy uint8 holding the raw bytes, torch's float8
    # types (or uint8); no DLPack code is taken for them
    "f8e4m3": (("uint8", "float8_e4m3fn"), ("float8_e4m3fn", "uint8"), (), ("|u1",)),
    "f8e5m2": (("uint8", "float8_e5m2"), ("float8_e5m2", "uint8"), (), ("|u1",)),
    "i8": (("int8",), ("int8",), ((0, 8),), ("|i1",)),
}

ITEMSIZE = {"f16": 2, "bf16": 2, "f32": 4, "i32": 4, "i1": 1, "f8e4m3": 1, "f8e5m2": 1, "i8": 1}


def shape_str(shape, dims=None):
    """"[64, M]": a dynamic dim (None in shape) by its name in dims."""
    dims = dims or (None,) * len(shape)
    return "[" + ", ".join(str(n if n is not None else (d or "?")) for n, d in zip(shape, dims)) + "]"


def shape_fits(shape, declared):
    """The shape of an object against a declared one, whose dynamic dims
    (None) take any size, 0 included (a call whose outputs are all empty
    runs nothing: Kernel._nothing_to_run)."""
    return len(shape) == len(declared) and all(
        (w is None and n >= 0) or n == w for n, w in zip(shape, declared))


def nbytes(info, shape):
    """The bytes of an argument of `info` at `shape`."""
    n = ITEMSIZE[info.dtype]
    for d in shape:
        n *= d
    return n


def overlap_of(infos, spans):
    """(i, j), j < i, where argument i or j is an output and their memory
    (spans: (address, bytes) each) overlaps; None when none does. (Each
    output against every other argument: a call's few outputs keep it a
    microsecond or two.)"""
    for o, info in enumerate(infos):
        if not info.is_output:
            continue
        p, n = spans[o]
        if not n:
            continue
        e = p + n
        for j, (q, m) in enumerate(spans):
            if j != o and m and q < e and p < q + m:
                return (o, j) if o > j else (j, o)
    return None


def check_overlap(kernel, infos, spans):
    """ArgumentError where an output shares memory with another argument:
    the kernel's threads read and write in no promised order."""
    hit = overlap_of(infos, spans)
    if hit:
        i, j = hit
        out, other = (infos[i], infos[j]) if infos[i].is_output else (infos[j], infos[i])
        raise ArgumentError(kernel, out.name, f"shares memory with '{other.name}': a kernel's threads read and "
                            f"write in no promised order, so an output may not overlap another argument (give "
                            f"it a buffer of its own)")


def c_contiguous_strides(shape, itemsize):
    """Strides in bytes of a dense row-major array of `shape`."""
    strides, step = [], itemsize
    for d in reversed(shape):
        strides.append(step)
        step *= d
    return tuple(reversed(strides))


def dense(shape, strides, itemsize):
    """Whether `strides` (bytes) lay `shape` out densely in row-major order
    (dims of extent 1 may have any stride)."""
    want = c_contiguous_strides(shape, itemsize)
    return all(n == 1 or s == w for n, s, w in zip(shape, strides, want))


class Adapted:
    """One argument, ready: its address, the device it is on ("cpu" or
    ("cuda", ordinal)), the torch tensor it came from (for streams), and
    whatever must stay alive while the kernel uses it."""
    __slots__ = ("ptr", "device", "torch", "keep", "shape")

    def __init__(self, ptr, device, torch=None, keep=None, shape=None):
        self.ptr, self.device, self.torch, self.keep, self.shape = ptr, device, torch, keep, shape


def check(kernel, info, *, dtype_ok, dtype_name, shape, contiguous, writable=True):
    if not dtype_ok:
        raise ArgumentError(kernel, info.name, f"element type {dtype_name}, but the kernel declares "
                            f"{info.dtype} {_declared(info)}"
                            + (" (bf16: NumPy uint16 holding the raw bits, or ml_dtypes.bfloat16)"
                               if info.dtype == "bf16" else ""))
    if not shape_fits(tuple(shape), tuple(info.shape)):
        empty = len(shape) == len(info.shape) and any(
            n <= 0 and w is not None for n, w in zip(shape, info.shape))
        raise ArgumentError(kernel, info.name, f"shape {shape_str(shape)}, but the kernel declares "
                            f"{info.dtype} {_declared(info)}"
                            + (" (a size fixed at compile time is not 0: compile the kernel with "
                               "dynamic(...) sizes to call it on empty tensors)" if empty else ""))
    if not contiguous:
        raise ArgumentError(kernel, info.name, "not contiguous: the kernel takes dense row-major tensors "
                            "(make a copy with .contiguous() or numpy.ascontiguousarray)")
    if info.is_output and not writable:
        raise ArgumentError(kernel, info.name, "read-only, but the kernel writes it")


def _declared(info):
    return shape_str(info.shape, getattr(info, "dims", None))


def from_torch(kernel, info, t):
    dtype = str(t.dtype).replace("torch.", "")
    shape = tuple(t.shape)
    check(kernel, info, dtype_ok=dtype in DTYPES[info.dtype][1], dtype_name=dtype, shape=shape,
          contiguous=t.is_contiguous())
    device = t.device
    if device.type not in ("cpu", "cuda"):
        raise ArgumentError(kernel, info.name, f"a tensor on {device}; wavec runs on CUDA devices "
                            "and in the simulator (CPU)")
    dev = "cpu" if device.type == "cpu" else ("cuda", device.index if device.index is not None else 0)
    return Adapted(t.data_ptr(), dev, torch=t, shape=shape)


def from_numpy(kernel, info, a):
    if a.dtype.byteorder == ">" or (a.dtype.byteorder == "=" and sys.byteorder == "big"):
        raise ArgumentError(kernel, info.name, f"big-endian {a.dtype.name} ({a.dtype.str}); the kernel reads "
                            "little-endian values (convert with a.astype(a.dtype.newbyteorder('<')))")
    check(kernel, info, dtype_ok=a.dtype.name in DTYPES[info.dtype][0], dtype_name=a.dtype.name,
          shape=a.shape, contiguous=a.flags.c_contiguous, writable=a.flags.writeable)
    return Adapted(a.ctypes.data, "cpu", keep=a, shape=tuple(a.shape))


def from_cai(kernel, info, obj):
    cai = obj.__cuda_array_interface__
    shape = tuple(cai["shape"])
    typestr = cai["typestr"]
    itemsize = ITEMSIZE[info.dtype]
    strides = cai.get("strides")
    ptr, readonly = cai["data"]
    check(kernel, info, dtype_ok=typestr in DTYPES[info.dtype][3], dtype_name=typestr, shape=shape,
          contiguous=strides is None or dense(shape, strides, itemsize), writable=not readonly)
    # the device of the pointer is asked of the driver at launch; a CAI
    # object is taken to be on the current device
    return Adapted(ptr or 0, ("cuda", None), keep=obj, shape=shape)


# ---- DLPack ------------------------------------------------------------------------
class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.CFUNCTYPE(None, ctypes.c_void_p))]


_capi = ctypes.pythonapi
_capi.PyCapsule_GetPointer.restype = ctypes.c_void_p
_capi.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_capi.PyCapsule_IsValid.restype = ctypes.c_int
_capi.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
_capi.PyCapsule_SetName.restype = ctypes.c_int
_capi.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]

DL_CPU, DL_CUDA, DL_CUDA_HOST, DL_CUDA_MANAGED = 1, 2, 3, 13


class _DLPackHold:
    """Owns a consumed DLPack tensor until the launch is done with it."""

    def __init__(self, managed):
        self.managed = managed

    def __del__(self):
        m = self.managed
        if m and m.contents.deleter:
            m.contents.deleter(ctypes.cast(m, ctypes.c_void_p))


def from_dlpack(kernel, info, obj, stream):
    try:
        cap = obj.__dlpack__(stream=stream) if stream is not None else obj.__dlpack__()
    except TypeError:
        cap = obj.__dlpack__()
    if not _capi.PyCapsule_IsValid(cap, b"dltensor"):
        raise ArgumentError(kernel, info.name, "__dlpack__ gave no DLPack tensor capsule (already consumed?)")
    managed = ctypes.cast(_capi.PyCapsule_GetPointer(cap, b"dltensor"), ctypes.POINTER(_DLManagedTensor))
    _capi.PyCapsule_SetName(cap, b"used_dltensor")  # consumed: the capsule no longer frees it
    hold = _DLPackHold(managed)
    t = managed.contents.dl_tensor
    shape = tuple(t.shape[i] for i in range(t.ndim))
    itemsize = ITEMSIZE[info.dtype]
    strides = None if not t.strides else tuple(t.strides[i] * itemsize for i in range(t.ndim))
    dt = (t.dtype.code, t.dtype.bits)
    check(kernel, info, dtype_ok=dt in DTYPES[info.dtype][2] and t.dtype.lanes == 1,
          dtype_name=f"DLPack (code {dt[0]}, {dt[1]} bits, {t.dtype.lanes} lanes)", shape=shape,
          contiguous=strides is None or dense(shape, strides, itemsize))
    kind = t.device.device_type
    if kind in (DL_CPU, DL_CUDA_HOST):
        dev = "cpu"
    elif kind in (DL_CUDA, DL_CUDA_MANAGED):
        dev = ("cuda", t.device.device_id)
    else:
        raise ArgumentError(kernel, info.name, f"a DLPack tensor on device type {kind}; wavec takes CUDA "
                            "(GPU) and CPU (simulator) memory")
    return Adapted((t.data or 0) + t.byte_offset, dev, keep=hold, shape=shape)


def adapt(kernel, info, obj, *, gpu, stream=None):
    """obj as an argument of the kernel: an Adapted, or ArgumentError."""
    torch = sys.modules.get("torch")
    np = sys.modules.get("numpy")
    if torch is not None and isinstance(obj, torch.Tensor):
        a = from_torch(kernel, info, obj)
    elif np is not None and isinstance(obj, np.ndarray):
        a = from_numpy(kernel, info, obj)
    elif gpu and hasattr(obj, "__cuda_array_interface__"):
        a = from_cai(kernel, info, obj)
    elif hasattr(obj, "__dlpack__"):
        a = from_dlpack(kernel, info, obj, stream)
    else:
        raise ArgumentError(kernel, info.name, f"a {type(obj).__name__}; wavec takes torch tensors, "
                            "objects with __cuda_array_interface__ or __dlpack__, and NumPy arrays "
                            "(simulator)")
    if gpu and a.device == "cpu":
        raise ArgumentError(kernel, info.name, "in host memory, but the kernel runs on the GPU "
                            "(move it to the device, e.g. .cuda(); or compile with target='sim')")
    if not gpu and a.device != "cpu":
        raise ArgumentError(kernel, info.name, "on the GPU, but the kernel runs in the simulator "
                            "(target='sim' takes host memory: NumPy arrays or CPU tensors)")
    return a
