"""A wavec kernel as a PyTorch operator (torch.library), so that functions
calling it work under torch.compile and in CUDA graphs.

    gemm = wavec.compile("examples/gemm.wave", target="sm_90", M=256, N=256, K=128)
    op = wavec.custom_op(gemm)           # torch.ops.wavec.gemm_<hash>
    c = op(a, b)                         # the outputs, new tensors
    f = torch.compile(lambda a, b: op(a, b).relu())

The operator takes the kernel's inputs (the arguments it does not write, in
declaration order) and returns its outputs (one tensor, or a tuple), each
allocated with the declared shape and element type on the inputs' device
(a dynamic dim of an output: the size the inputs give it);
the fake (meta) implementation gives those shapes without running anything,
which is all torch.compile needs to trace through it. The launch goes on
the current stream, so a CUDA graph captures it; the module is loaded by
the first call (torch.compile and CUDA graph trees run a warm-up first).
A kernel that reads what it writes (an accumulating output) does not fit
this functional form: call the Kernel directly."""
import hashlib
import keyword

_libs = []  # the registrations live as long as their Library objects


def _torch_dtypes(torch):
    return {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32, "i32": torch.int32,
            "i1": torch.bool, "i8": torch.int8, "f8e4m3": getattr(torch, "float8_e4m3fn", torch.uint8),
            "f8e5m2": getattr(torch, "float8_e5m2", torch.uint8)}


def custom_op(kernel, name=None):
    """Registers `kernel` (a wavec.Kernel) as torch.ops.wavec.NAME and
    returns the operator. NAME defaults to the kernel's name and a hash of
    its source, definitions and target (one operator per compiled
    variant)."""
    import torch

    dt = _torch_dtypes(torch)
    ins = [a for a in kernel.args if not a.is_output]
    outs = [a for a in kernel.args if a.is_output]
    if not outs:
        raise ValueError(f"wavec.custom_op: {kernel.name} writes no argument: nothing to return")
    if name is None:
        h = hashlib.sha256(repr((kernel.file, kernel._text, sorted(kernel.defines.items()),
                                 sorted(kernel.hardware.items()), kernel.target)).encode()).hexdigest()[:10]
        name = f"{kernel.name}_{h}"
    if hasattr(torch.ops.wavec, name) if hasattr(torch.ops, "wavec") else False:
        return getattr(torch.ops.wavec, name)  # this variant is registered already

    def pname(a):
        return a.name + "_" if keyword.iskeyword(a.name) or a.name in ("Tensor", "self") else a.name

    ret = "Tensor" if len(outs) == 1 else "(" + ", ".join("Tensor" for _ in outs) + ")"
    schema = f"{name}({', '.join('Tensor ' + pname(a) for a in ins)}) -> {ret}"
    lib = torch.library.Library("wavec", "FRAGMENT")
    lib.define(schema)

    def allocate(inputs):
        device = inputs[0].device if inputs else torch.device("cuda")
        # dynamic dims of an output: the sizes the inputs give them
        sizes = kernel._sizes_of(ins, [tuple(x.shape) for x in inputs])
        missing = sorted({d for a in outs for d in a.dims if d is not None} - set(sizes))
        if missing:
            raise ValueError(f"wavec.custom_op: {kernel.name}: no input gives the size of "
                             f"{', '.join(missing)}, a dynamic dim of an output")
        return [torch.empty([sizes[d] if d is not None else n for n, d in zip(a.shape, a.dims)],
                            dtype=dt[a.dtype], device=device) for a in outs]

    def impl(*inputs):
        results = allocate(inputs)
        it_in, it_out = iter(inputs), iter(results)
        kernel(*[next(it_out) if a.is_output else next(it_in) for a in kernel.args])
        return results[0] if len(results) == 1 else tuple(results)

    def fake(*inputs):
        results = allocate(inputs)
        return results[0] if len(results) == 1 else tuple(results)

    lib.impl(name, impl, "CPU" if kernel.target == "sim" else "CUDA")
    register_fake = getattr(torch.library, "register_fake", None) or torch.library.impl_abstract
    register_fake(f"wavec::{name}", fake, lib=lib)
    _libs.append(lib)
    return getattr(torch.ops.wavec, name)
