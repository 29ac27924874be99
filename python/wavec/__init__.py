"""wavec from Python: compile a Wave kernel, call it on tensors.

    import torch, wavec
    k = wavec.compile("examples/gemm.wave", kernel="gemm", M=256, N=256, K=128)
    a = torch.randn(256, 128, dtype=torch.float16, device="cuda")
    ...
    k(a, b, c)          # launched on torch's current stream

`target`: "sm_90a", "sm_90", "sm_80" (the GPU, through the CUDA driver),
"sim" (wavec's simulator, on NumPy arrays: every thread of every workgroup,
checking bounds, races and unwritten outputs) or "auto" (the current CUDA
device's target, or the simulator on a machine without one). Sizes and
other hyperparameters are keyword arguments (what `-D SYM=VALUE` sets on
the command line). GPU binaries go through wavec's disk cache
($WAVEC_CACHE_DIR, default ~/.cache/wavec): the second compile of the same
kernel, in any process, reads one file.
"""
import ctypes
import numbers
import os
import sys
import threading

from ._version import __version__
from ._lib import lib, ArgInfo, CacheEntry, LOAD_NO_CACHE, LOAD_PTXAS, LOAD_DRIVER
from ._args import ArgumentError, adapt, shape_str, nbytes, overlap_of, check_overlap

__all__ = ["compile", "Kernel", "Arg", "WavecError", "ArgumentError", "cache_dir", "cache_list",
           "cache_clear", "library_version", "autotune", "custom_op"]

TARGETS = ("sm_80", "sm_89", "sm_90", "sm_90a", "sim", "auto")


class WavecError(RuntimeError):
    """An error the library reported: `status` (a wavec_status name such as
    "syntax error") and the formatted diagnostic, with file:line:col and a
    caret where the source is known."""

    def __init__(self, message, status=None):
        super().__init__(message.rstrip("\n"))
        self.status = status


class Arg:
    """A kernel argument as declared: name, element type ("f16", "bf16",
    "f32", "i32", "i1"), shape (sizes bound at compile time; None for a
    dynamic dim, whose size each call takes from the arguments' shapes),
    dims (per dim: the name of a dynamic dim, e.g. "M", else None), and
    whether the kernel writes it."""
    __slots__ = ("name", "dtype", "shape", "dims", "is_output")

    def __init__(self, name, dtype, shape, is_output, dims=None):
        self.dims = tuple(dims) if dims else (None,) * len(shape)
        self.name, self.dtype, self.is_output = name, dtype, bool(is_output)
        self.shape = tuple(None if d is not None else n for n, d in zip(shape, self.dims))

    def __repr__(self):
        return (f"Arg({self.name}: {self.dtype} {shape_str(self.shape, self.dims)}"
                f"{', output' if self.is_output else ''})")


def _arg(info, dim_name):
    """An Arg from a wavec_arg_info; dim_name(d): the name of dynamic dim d
    (bytes), else None."""
    dims = [dim_name(d) for d in range(info.ndims)]
    return Arg(info.name.decode(), lib.wavec_dtype_name(info.dtype).decode(),
               [info.shape[i] for i in range(info.ndims)], info.is_output,
               [d.decode() if d else None for d in dims])


def library_version():
    """The version of the libwavec.so in use."""
    return lib.wavec_version().decode()


class _Ctx:
    """A wavec_ctx, freed with this object."""

    def __init__(self):
        self.p = lib.wavec_ctx_new(None, None)
        if not self.p:
            raise MemoryError("wavec: out of memory")

    def __del__(self):
        if getattr(self, "p", None):
            lib.wavec_ctx_free(self.p)
            self.p = None

    def error(self, what=None):
        msg = lib.wavec_errmsg(self.p).decode(errors="replace")
        st = lib.wavec_status_string(lib.wavec_errcode(self.p)).decode()
        return WavecError(f"{what}: {msg}" if what else msg, st)

    def ok(self, status, what=None):
        if status != 0:
            raise self.error(what)


def _read_source(source):
    """(file name, text) of a path or of source text (a string holding a
    newline or a parenthesis and naming no file)."""
    if isinstance(source, bytes):
        return "<string>", source
    if isinstance(source, os.PathLike) or os.path.isfile(source) or not ("\n" in source or "(" in source):
        path = os.fspath(source)
        with open(path, "rb") as f:
            return path, f.read()
    return "<string>", source.encode()


_gpu_present = None


def _have_gpu():
    """Whether a CUDA driver with a device is present (for target="auto")."""
    global _gpu_present
    if _gpu_present is None:
        try:
            cuda = ctypes.CDLL("libcuda.so.1")
            n = ctypes.c_int(0)
            _gpu_present = cuda.cuInit(0) == 0 and cuda.cuDeviceGetCount(ctypes.byref(n)) == 0 and n.value > 0
        except OSError:
            _gpu_present = False
    return _gpu_present


def _stream_handle(stream):
    """A CUstream from an int, a torch.cuda.Stream or anything with
    .cuda_stream / .ptr / .handle."""
    if stream is None or isinstance(stream, int):
        return stream or 0
    for attr in ("cuda_stream", "ptr", "handle"):
        if hasattr(stream, attr):
            return int(getattr(stream, attr))
    raise TypeError(f"wavec: stream {stream!r}: not a CUDA stream handle")


class Kernel:
    """A compiled kernel: call it on its arguments, in declaration order.

    Attributes: name, target ("sim", "sm_90a", ...), args (the declared
    arguments, Arg), grid, block (threads, x y z), smem (bytes of shared
    memory), cached (GPU: the binary came from the disk cache), defines."""

    def __init__(self, source, kernel=None, target="auto", hardware=None, cache=True, ptxas=None,
                 **defines):
        if target not in TARGETS:
            raise ValueError(f"wavec: unknown target {target!r} (choose {', '.join(TARGETS)})")
        if target == "auto":
            target = "auto" if _have_gpu() else "sim"
        self.file, self._text = _read_source(source)
        self.defines = dict(defines)
        self.hardware = dict(hardware or {})
        self.target = target
        self._cache = cache
        self._ptxas = ptxas
        if ptxas and target in ("sim", "auto"):
            raise ValueError("wavec: ptxas=True assembles for a named GPU target (sm_80, sm_89, sm_90, sm_90a)")
        self._lock = threading.Lock()
        self._ctx = None     # the compiler's context: simulation, ptx(), remarks()
        self._kernel = None  # wavec_kernel *, once compiled there
        self._mctx = None    # GPU: the context that owns the module
        self._module = None  # wavec_module *
        self._fast = None    # GPU: what the last launch checked (_Fast), for the next call
        self.name = kernel
        if target == "sim":
            self._compile_sim()
        else:
            self._load_gpu()

    # ---- building ------------------------------------------------------------
    def _new_ctx(self):
        """A context holding the parsed source, the definitions and the
        hardware overrides."""
        ctx = _Ctx()
        for name, v in sorted(self.defines.items()):
            # (NumPy's integers and floats are numbers too; bool is not)
            if isinstance(v, bool) or not isinstance(v, numbers.Real):
                raise TypeError(f"wavec: {name}={v!r}: sizes and hyperparameters are numbers")
            if isinstance(v, numbers.Integral):
                if not -2**63 <= int(v) < 2**63:
                    raise ValueError(f"wavec: {name}={v!r}: out of range (a 64-bit integer)")
                st = lib.wavec_define_int(ctx.p, name.encode(), int(v))
            else:
                st = lib.wavec_define_float(ctx.p, name.encode(), float(v))
            ctx.ok(st, f"wavec: {name}={v!r}")
        for key, v in sorted(self.hardware.items()):
            if lib.wavec_hardware_override(ctx.p, key.encode(), str(v).encode()) != 0:
                # the library says what is wrong and what is valid (the
                # entries and their values, or the mma types)
                msg = lib.wavec_errmsg(ctx.p).decode(errors="replace").strip()
                msg = msg.split("]: ", 1)[1] if msg.startswith("error[") else msg
                raise ValueError(f"wavec: invalid hardware entry {key}={v!r}: {msg}")
        # a kernel named: that one alone (an error in another does not stop it)
        ctx.ok(lib.wavec_parse_kernel(ctx.p, self.file.encode(), self._text, len(self._text),
                                      None if self.name is None else self.name.encode()))
        n = lib.wavec_kernel_count(ctx.p)
        names = [lib.wavec_kernel_name(lib.wavec_kernel_get(ctx.p, i)).decode() for i in range(n)]
        if self.name is None:
            if n != 1:
                raise ValueError(f"wavec: {self.file} has {n} kernels ({', '.join(names)}): choose one with kernel=")
            self.name = names[0]
        elif self.name not in names:
            every = _Ctx()  # (the file's kernels, for the message)
            if lib.wavec_parse(every.p, self.file.encode(), self._text, len(self._text)) == 0:
                n = lib.wavec_kernel_count(every.p)
                names = [lib.wavec_kernel_name(lib.wavec_kernel_get(every.p, i)).decode() for i in range(n)]
                raise ValueError(f"wavec: no kernel {self.name!r} in {self.file} (kernels: {', '.join(names)})")
            raise ValueError(f"wavec: no kernel {self.name!r} in {self.file} (which has errors: compile it "
                             f"without kernel= to see them)")
        unused = []
        while lib.wavec_unused_define(ctx.p, len(unused)):
            unused.append(lib.wavec_unused_define(ctx.p, len(unused)).decode())
        if unused:
            raise TypeError(f"wavec: {self.name} in {self.file} has no symbol named {', '.join(unused)} "
                            f"(keyword arguments set sizes and hyperparameters)")
        return ctx

    def _compile_here(self):
        """Compiles the kernel in this object's context (for the simulator,
        and for ptx())."""
        if self._ctx is None:
            self._ctx = self._new_ctx()
        if self._kernel is None:
            k = lib.wavec_kernel_find(self._ctx.p, self.name.encode())
            self._ctx.ok(lib.wavec_compile(k, None))
            self._kernel = k
        return self._kernel

    def _compile_sim(self):
        k = self._compile_here()
        n = lib.wavec_arg_count(k)
        infos = [ArgInfo() for _ in range(n)]
        for i, info in enumerate(infos):
            lib.wavec_arg_info_get(k, i, ctypes.byref(info))
        self.args = [_arg(info, lambda d, i=i: lib.wavec_arg_dim_name(k, i, d)) for i, info in enumerate(infos)]
        grid, block, smem = (ctypes.c_uint32 * 3)(), (ctypes.c_uint32 * 3)(), ctypes.c_size_t()
        self._ctx.ok(lib.wavec_launch_dims(k, grid, block, ctypes.byref(smem)))
        self.grid, self.block, self.smem = tuple(grid), tuple(block), smem.value
        self.cached = False

    def _load_gpu(self):
        self._mctx = self._new_ctx()
        m = ctypes.c_void_p()
        self._mctx.ok(lib.wavec_gpu_load(self._mctx.p, self.name.encode(), self.target.encode(),
                                         (0 if self._cache else LOAD_NO_CACHE)
                                         | (LOAD_PTXAS if self._ptxas else LOAD_DRIVER if self._ptxas is False else 0),
                                         ctypes.byref(m)))
        self._module = m
        self.target = lib.wavec_module_target(m).decode()
        n = lib.wavec_module_arg_count(m)
        infos = [ArgInfo() for _ in range(n)]
        for i, info in enumerate(infos):
            lib.wavec_module_arg(m, i, ctypes.byref(info))
        self.args = [_arg(info, lambda d, i=i: lib.wavec_module_dim_name(m, i, d)) for i, info in enumerate(infos)]
        grid, block, smem = (ctypes.c_uint32 * 3)(), (ctypes.c_uint32 * 3)(), ctypes.c_size_t()
        lib.wavec_module_launch_dims(m, grid, block, ctypes.byref(smem))
        self.grid, self.block, self.smem = tuple(grid), tuple(block), smem.value
        self.cached = bool(lib.wavec_module_cached(m))
        self._params = (ctypes.c_uint64 * max(1, n))()

    # ---- what it is ------------------------------------------------------------
    def __repr__(self):
        args = ", ".join(f"{a.name}: {a.dtype} {shape_str(a.shape, a.dims)}" for a in self.args)
        return f"<wavec.Kernel {self.name}({args}) target={self.target}>"

    @property
    def outputs(self):
        """The arguments the kernel writes."""
        return [a for a in self.args if a.is_output]

    def ptx(self, target=None):
        """The kernel's PTX for target (default: the kernel's own GPU
        target, else sm_90)."""
        target = target or (self.target if self.target.startswith("sm_") else "sm_90")
        with self._lock:
            k = self._compile_here()
            s, n = ctypes.c_char_p(), ctypes.c_size_t()
            st = lib.wavec_emit_ptx(k, target.encode(), ctypes.byref(s), ctypes.byref(n))
            if st != 0:
                err = self._ctx.error()
                self._ctx, self._kernel = None, None  # the context keeps its first error
                raise err
            return ctypes.string_at(s, n.value).decode()

    def remarks(self):
        """The compiler's performance remarks ("file:line:col: remark: ...")."""
        with self._lock:
            k = self._compile_here()
            return [lib.wavec_remark(k, i).decode() for i in range(lib.wavec_remark_count(k))]

    # ---- calling ----------------------------------------------------------------
    def _adapt_all(self, args, gpu, stream=None):
        if len(args) != len(self.args):
            names = ", ".join(a.name for a in self.args)
            raise TypeError(f"{self.name}: takes {len(self.args)} arguments ({names}), got {len(args)}")
        return [adapt(self.name, info, x, gpu=gpu, stream=stream) for info, x in zip(self.args, args)]

    @property
    def dynamic(self):
        """The names of the kernel's dynamic dims (dynamic(...) in its
        constraints): one compiled kernel runs at every size of them, each
        call taking them from its arguments' shapes."""
        return sorted({d for a in self.args for d in a.dims if d is not None})

    def sizes(self, *args):
        """The sizes of the dynamic dims a call on args runs at, by name
        ({"M": 200, "K": 96}), from the arguments' shapes (anything with a
        .shape), which must agree; {} for a kernel without dynamic dims."""
        if len(args) != len(self.args):
            raise TypeError(f"{self.name}: takes {len(self.args)} arguments, got {len(args)}")
        return self._sizes_of(self.args, [tuple(x.shape) for x in args])

    def _sizes_of(self, infos, shapes):
        sizes, given_by = {}, {}
        for info, shape in zip(infos, shapes):
            if len(shape) != len(info.dims):
                raise ArgumentError(self.name, info.name, f"{len(shape)} dims, but the kernel declares "
                                    f"{info.dtype} {shape_str(info.shape, info.dims)}")
            for d, name in enumerate(info.dims):
                if name is None:
                    continue
                n = int(shape[d])
                if name in sizes and sizes[name] != n:
                    raise ArgumentError(self.name, info.name, f"dimension {d} ({name}) is {n}, but "
                                        f"'{given_by[name]}' gives {name} = {sizes[name]}")
                sizes.setdefault(name, n)
                given_by.setdefault(name, info.name)
        return sizes

    def _nothing_to_run(self, adapted, sizes):
        """Whether a call whose run-time sizes are `sizes` has nothing to
        do: some size is 0 and every output is empty (an empty batch: a
        PyTorch caller gets what torch's own ops give, nothing written).
        Where an output is not empty (a size of 0 that it does not have,
        such as K of c = a bᵀ: it would have to be written without running
        the loop), the call is refused."""
        zero = sorted(name for name, n in sizes.items() if n == 0)
        if not zero:
            return False
        for info, a in zip(self.args, adapted):
            if info.is_output and all(int(n) > 0 for n in a.shape):
                raise ArgumentError(self.name, info.name, f"{' = '.join(zero)} = 0, but the output is "
                                    f"{shape_str(a.shape)}, not empty: a size of 0 is taken only where "
                                    "every output is empty (nothing to run)")
        return True

    def _give_shapes(self, adapted, arg_shape, handle):
        """The shapes of this call's arguments with dynamic dims, to the
        kernel (arg_shape: wavec_arg_shape or wavec_module_arg_shape, on
        handle); 0, or the failing status."""
        for i, (info, a) in enumerate(zip(self.args, adapted)):
            if any(d is not None for d in info.dims):
                shape = (ctypes.c_int64 * max(1, len(a.shape)))(*a.shape)
                st = arg_shape(handle, i, len(a.shape), shape)
                if st != 0:
                    return st
        return 0

    def __call__(self, *args, stream=None):
        """Runs the kernel on args (in declaration order). GPU: launched
        asynchronously on `stream` (default: torch's current stream of the
        arguments' device when they are torch tensors, else the default
        stream). Simulator: runs to completion; outputs are written in
        place."""
        if self.target == "sim":
            return self._simulate(args)
        return self._launch(args, stream)

    def _simulate(self, args):
        adapted = self._adapt_all(args, gpu=False)
        if self._nothing_to_run(adapted, self._sizes_of(self.args, [a.shape for a in adapted])):
            return
        check_overlap(self.name, self.args, [(a.ptr, nbytes(i, a.shape)) for i, a in zip(self.args, adapted)])
        ptrs = (ctypes.c_void_p * max(1, len(adapted)))(*[a.ptr for a in adapted])
        with self._lock:
            k = self._compile_here()
            st = self._give_shapes(adapted, lib.wavec_arg_shape, k) or lib.wavec_simulate(k, ptrs)
            if st != 0:
                err = self._ctx.error()
                # the context keeps its first error: the next call starts afresh
                self._ctx, self._kernel = None, None
                raise err

    def _launch(self, args, stream):
        # The fast path: the same argument types, element types, devices,
        # shapes and layouts as the last call that launched, all torch
        # tensors: that call's checks hold for this one, and the module
        # has its shapes (the addresses, the stream and the current device
        # are this call's; the C launch checks the alignment every time).
        fast, key = self._fast, None
        if fast is not None and fast.torch is sys.modules.get("torch") and tuple(map(type, args)) == fast.types:
            key = [(x.dtype, x.device, x.shape, x.is_contiguous()) for x in args]
            if key == fast.key:
                handle = fast.stream(fast.dev) if stream is None else _stream_handle(stream)
                with self._lock:
                    if self._fast is fast:  # no call gave the module other shapes since
                        params = self._params
                        for i, x in enumerate(args):
                            params[i] = x.data_ptr()
                        # (an output that overlaps another argument: the
                        # checked path says which)
                        if not fast.outs or overlap_of(self.args, [(p or 0, n) for p, n in zip(params, fast.nbytes)]) is None:
                            self._launch_module(handle, fast.dev if fast.device() != fast.dev else None)
                            return
        self._launch_checked(args, stream, key)

    def _launch_checked(self, args, stream, key=None):
        """A launch with every check made, which the following calls with
        arguments like these take as done when all are torch tensors (key:
        the arguments' _Fast.key when the caller has it)."""
        torch = sys.modules.get("torch")
        adapted = self._adapt_all(args, gpu=True, stream=stream)
        devices = {a.device[1] for a in adapted if a.device[1] is not None}
        if len(devices) > 1:
            where = ", ".join(f"{i.name} on cuda:{a.device[1]}" for i, a in zip(self.args, adapted))
            raise ArgumentError(self.name, self.args[0].name, f"arguments on different devices ({where})")
        dev = devices.pop() if devices else None
        first = next((a for a in adapted if a.torch is not None), None)  # the first torch tensor
        fns = _torch_fns(torch) if first is not None and torch is not None else None
        if stream is None and fns is not None:
            stream = fns.stream(first.device[1])  # torch's current stream of the tensors' device
        handle = _stream_handle(stream)
        if self._nothing_to_run(adapted, self._sizes_of(self.args, [a.shape for a in adapted])):
            return
        check_overlap(self.name, self.args, [(a.ptr, nbytes(i, a.shape)) for i, a in zip(self.args, adapted)])
        with self._lock:
            self._fast = None  # the module's shapes are this call's from here on
            if self._module is None:
                self._load_gpu()  # the module's context kept an error: a fresh one (a cache hit)
            for i, a in enumerate(adapted):
                self._params[i] = a.ptr
            st = self._give_shapes(adapted, lib.wavec_module_arg_shape, self._module)
            if st != 0:
                err = self._mctx.error(f"{self.name}: shapes")
                self._module = None
                raise err
            self._launch_module(handle, dev if fns is not None and dev is not None and fns.device() != dev
                                else None)
            if fns is not None and all(a.torch is not None for a in adapted):
                self._fast = _Fast(torch, fns, args, dev, self.args, key)

    def _launch_module(self, handle, switch_to):
        """wavec_module_launch of the module with self._params on stream
        handle, with torch's current device switched to switch_to (unless
        None) around it; under self._lock."""
        if switch_to is not None:
            with sys.modules["torch"].cuda.device(switch_to):
                st = lib.wavec_module_launch(self._module, handle, self._params)
        else:
            st = lib.wavec_module_launch(self._module, handle, self._params)
        if st != 0:
            err = self._mctx.error(f"{self.name}: launch")
            self._module, self._fast = None, None  # its context keeps the error
            raise err


class _TorchFns:
    """torch's current stream (a CUstream handle, by device index) and
    current device: torch._C's accessors where torch has them (no Stream
    object built per call), else torch.cuda's."""
    __slots__ = ("torch", "stream", "device")

    def __init__(self, torch):
        c = getattr(torch, "_C", None)
        self.torch = torch
        self.stream = (getattr(c, "_cuda_getCurrentRawStream", None)
                       or (lambda i: torch.cuda.current_stream(i).cuda_stream))
        self.device = getattr(c, "_cuda_getDevice", None) or torch.cuda.current_device


_torch_fns_last = None


def _torch_fns(torch):
    global _torch_fns_last
    fns = _torch_fns_last
    if fns is None or fns.torch is not torch:
        fns = _torch_fns_last = _TorchFns(torch)
    return fns


class _Fast:
    """What a launch on torch tensors checked, as the next call compares
    it: the torch module, the arguments' types and, per argument, its
    (dtype, device, shape, contiguity); the device they are on (index)."""
    __slots__ = ("torch", "types", "key", "dev", "stream", "device", "nbytes", "outs")

    def __init__(self, torch, fns, args, dev, infos, key=None):
        self.torch, self.stream, self.device, self.dev = torch, fns.stream, fns.device, dev
        self.types = tuple(map(type, args))
        self.key = key or [(x.dtype, x.device, x.shape, x.is_contiguous()) for x in args]
        # (the arguments' bytes at these shapes, and whether any is written:
        # the next call checks that no output overlaps another argument)
        self.nbytes = [nbytes(i, tuple(x.shape)) for i, x in zip(infos, args)]
        self.outs = any(i.is_output for i in infos)


def compile(source, kernel=None, target="auto", hardware=None, cache=True, ptxas=None, **defines):
    """Compiles `kernel` (a name; None when the source has one kernel) of
    `source` (a path to a .wave file, or the source text) for `target`
    ("sm_90a", "sm_90", "sm_80", "sim" or "auto") with the sizes and
    hyperparameters given as keyword arguments, and `hardware` overrides
    ({"stages": 3, "workgroups_per_sm": 2, ...}, what --hardware sets).
    Returns a Kernel, callable on its arguments. cache=False: neither read
    nor write the disk cache. ptxas=True: assemble with the CUDA toolkit's
    ptxas (compiling then needs no GPU; the target must be named);
    ptxas=False: with the driver's compiler; None (the default): with that
    ptxas where one is found that the driver's CUDA version covers (same
    major version), else the driver (the driver's compiler was measured to
    give slower code).
    Errors: WavecError (the compiler's diagnostic,
    with file:line:col and a caret), TypeError/ValueError for bad keyword
    arguments."""
    return Kernel(source, kernel=kernel, target=target, hardware=hardware, cache=cache, ptxas=ptxas,
                  **defines)


# ---- the disk cache ------------------------------------------------------------------
def cache_dir():
    """The disk cache's folder ($WAVEC_CACHE_DIR, else $XDG_CACHE_HOME/wavec,
    else ~/.cache/wavec)."""
    ctx = _Ctx()
    d = lib.wavec_cache_dir(ctx.p)
    return d.decode() if d else None


def cache_list():
    """The cache's entries: dicts with file, bytes, valid, kernel, target,
    desc."""
    ctx = _Ctx()
    out, n = ctypes.POINTER(CacheEntry)(), ctypes.c_size_t()
    ctx.ok(lib.wavec_cache_list(ctx.p, ctypes.byref(out), ctypes.byref(n)))
    dec = lambda s: s.decode() if s else None
    return [dict(file=dec(e.file), bytes=e.bytes, valid=bool(e.valid), kernel=dec(e.kernel),
                 target=dec(e.target), desc=dec(e.desc)) for e in (out[i] for i in range(n.value))]


def cache_clear():
    """Removes every entry of the cache; returns how many files."""
    ctx = _Ctx()
    n = ctypes.c_size_t()
    ctx.ok(lib.wavec_cache_clear(ctx.p, ctypes.byref(n)))
    return n.value


def autotune(source, kernel, configs, key=(), target="auto", **kwargs):
    """The fastest correct configuration per key: see wavec._autotune."""
    from ._autotune import autotune as run
    return run(source, kernel, configs, key=key, target=target, **kwargs)


def custom_op(kernel, name=None):
    """kernel as a torch.library operator (torch.compile, CUDA graphs): see
    wavec._torch."""
    from ._torch import custom_op as register
    return register(kernel, name)
