"""A stand-in for the parts of torch that wavec's GPU launch path reads,
for machines without torch or without a GPU (tests/python/test_launch.py,
bench/launch_host.py): CUDA tensors that are only addresses, a current
device and a current stream per device that the caller sets, and a count
of the calls made to it (`calls`), by name.

    with fake_torch.installed() as torch:
        a = torch.tensor((256, 256), "bfloat16")
        k(a, b, c)
        torch.calls  # {"Tensor.dtype": 3, ...}

Each accessor builds a new object the way torch's do (a torch.Size, a
torch.device), so its cost is of the same kind; the numbers are not
torch's."""
import collections
import contextlib
import sys
import types

calls = collections.Counter()


def _count(name):
    calls[name] += 1


class dtype:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"torch.{self.name}"


DTYPES = {n: dtype(n) for n in ("float16", "bfloat16", "float32", "int32", "bool", "int8", "uint8",
                                "float8_e4m3fn", "float8_e5m2", "float64")}


class Size(tuple):
    pass


class device:
    __slots__ = ("type", "index")

    def __init__(self, type, index=None):
        self.type, self.index = type, index

    def __eq__(self, other):
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))

    def __repr__(self):
        return f"device(type='{self.type}', index={self.index})"


class Tensor:
    """A tensor that is an address: shape, dtype, device, strides
    (elements), and the address its data_ptr() gives."""

    def __init__(self, shape, dtype_name, dev=("cuda", 0), ptr=0x7F0000000000, strides=None):
        self._shape = tuple(shape)
        self._dtype = DTYPES[dtype_name]
        self._device = dev
        self._ptr = ptr
        if strides is None:
            strides, step = [], 1
            for n in reversed(self._shape):
                strides.append(step)
                step *= n
            strides = tuple(reversed(strides))
        self._strides = tuple(strides)

    @property
    def dtype(self):
        _count("Tensor.dtype")
        return self._dtype

    @property
    def shape(self):
        _count("Tensor.shape")
        return Size(self._shape)

    @property
    def device(self):
        _count("Tensor.device")
        return device(*self._device)

    def get_device(self):
        _count("Tensor.get_device")
        return self._device[1] if self._device[0] == "cuda" else -1

    def stride(self):
        _count("Tensor.stride")
        return self._strides

    def is_contiguous(self):
        _count("Tensor.is_contiguous")
        step = 1
        for n, s in zip(reversed(self._shape), reversed(self._strides)):
            if n != 1 and s != step:
                return False
            step *= n
        return True

    def data_ptr(self):
        _count("Tensor.data_ptr")
        return self._ptr


def tensor(shape, dtype_name, dev=("cuda", 0), ptr=0x7F0000000000, strides=None):
    return Tensor(shape, dtype_name, dev, ptr, strides)


# ---- torch.cuda: a current device, a current stream per device --------------------
class _State:
    device = 0
    streams = collections.defaultdict(lambda: 0)  # device -> the current stream's handle
    switches = []                                  # devices entered with cuda.device()


class Stream:
    """What torch.cuda.current_stream gives: a handle (cuda_stream) and
    its device."""

    def __new__(cls, stream_id=0, device_index=None, device_type=1, **kwargs):
        s = super().__new__(cls)
        s.cuda_stream, s.device_index = stream_id, device_index
        return s


def _device_index(d):
    if isinstance(d, device):
        return d.index if d.index is not None else _State.device
    if isinstance(d, int):
        return d
    return _State.device


def current_stream(d=None):
    _count("cuda.current_stream")
    i = _device_index(d)
    return Stream(stream_id=_State.streams[i], device_index=i, device_type=1)


def current_device():
    _count("cuda.current_device")
    return _State.device


@contextlib.contextmanager
def cuda_device(d):
    _count("cuda.device")
    before = _State.device
    _State.device = _device_index(d)
    _State.switches.append(_State.device)
    try:
        yield
    finally:
        _State.device = before


def _raw_stream(i):
    _count("_C._cuda_getCurrentRawStream")
    return _State.streams[i]


def _get_device():
    _count("_C._cuda_getDevice")
    return _State.device


def module(with_raw=True):
    """A fresh `torch` module object; with_raw: with torch._C's raw
    accessors (_cuda_getCurrentRawStream, _cuda_getDevice), as torch 2
    has them."""
    m = types.ModuleType("torch")
    m.Tensor, m.Size, m.device, m.dtype = Tensor, Size, device, dtype
    for n, d in DTYPES.items():
        setattr(m, n, d)
    m.tensor, m.calls = tensor, calls
    m.cuda = types.SimpleNamespace(current_stream=current_stream, current_device=current_device,
                                   device=cuda_device, Stream=Stream)
    m._C = types.SimpleNamespace(**(dict(_cuda_getCurrentRawStream=_raw_stream, _cuda_getDevice=_get_device)
                                    if with_raw else {}))
    m.state = _State
    return m


@contextlib.contextmanager
def installed(with_raw=True):
    """sys.modules["torch"] is the stand-in inside the block (whatever
    was there before, the real torch too, is put back after)."""
    before = sys.modules.get("torch")
    m = module(with_raw)
    sys.modules["torch"] = m
    _State.device, _State.streams, _State.switches = 0, collections.defaultdict(lambda: 0), []
    calls.clear()
    try:
        yield m
    finally:
        if before is None:
            sys.modules.pop("torch", None)
        else:
            sys.modules["torch"] = before
