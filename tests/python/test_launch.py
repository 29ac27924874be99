"""The GPU launch path from Python without a GPU: kernels built through
ptxas, launched by the real wavec_module_launch on the fake driver of
fake_cuda.c (which records what cuLaunchKernel was given), on the
stand-in torch tensors of fake_torch.py. Each case runs in a process of
its own (the fake driver must not be the one the other tests find).

What is checked: a call after a launch on like arguments (the fast path,
which skips the argument checks) still launches with this call's
addresses, stream, device and run-time sizes; and a second call whose
shapes, element types, devices, layout, alignment or run-time sizes
changed is refused as the first call would be, with the same exception
and message."""
import os
import shutil
import tempfile
import unittest

from common import ROOT, build_fake_cuda, ptxas_present, python

PTXAS = ptxas_present()

PRELUDE = r'''
import ctypes, os, sys
fake = ctypes.CDLL(os.environ["FAKE_CUDA"], mode=ctypes.RTLD_GLOBAL)
sys.path.insert(0, os.path.join(os.getcwd(), "tests", "python"))
import wavec, fake_torch

def recorded(name, n=1, t=ctypes.c_ulonglong):
    v = (t * n).in_dll(fake, name)
    return list(v) if n > 1 else v[0]

def layout(nptrs, nsizes=0, ntmaps=0):
    for name, v in (("fake_nptrs", nptrs), ("fake_nsizes", nsizes), ("fake_ntmaps", ntmaps)):
        ctypes.c_int.in_dll(fake, name).value = v

def refusal(k, *args):
    """(exception type, message) of k(*args); None when it launched."""
    try:
        k(*args)
    except Exception as e:
        return type(e).__name__, str(e)
    return None

def fresh(k, **defines):
    return wavec.compile(k.file, kernel=k.name, target="sm_90", ptxas=True, **defines)

GEMM = wavec.compile("examples/gemm.wave", kernel="gemm", target="sm_90", ptxas=True, M=128, N=128, K=64)
DYN = wavec.compile("tests/kernels/dynamic.wave", kernel="gemm_dyn", target="sm_90", ptxas=True)
torch = fake_torch.module()
sys.modules["torch"] = torch
T = torch.tensor
A, B, C = 0x7F0000010000, 0x7F0000020000, 0x7F0000030000

def gemm_args(a_shape=(128, 64), a_dtype="float16", a_dev=("cuda", 0), a_ptr=A, a_strides=None):
    return (T(a_shape, a_dtype, a_dev, a_ptr, a_strides), T((128, 64), "float16", ptr=B),
            T((128, 128), "float32", ptr=C))

def dyn_args(m, n, k, k_b=None, a_ptr=A):
    return (T((m, k), "float16", ptr=a_ptr), T((n, k_b or k), "float16", ptr=B), T((m, n), "float32", ptr=C))
'''


@unittest.skipUnless(PTXAS, "ptxas not found (the CUDA toolkit): GPU kernels cannot be built here")
class Launch(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="wavec-fake-cuda-")
        cls.lib = build_fake_cuda(cls.dir)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def run_case(self, code):
        if not self.lib:
            self.skipTest("no C compiler for the fake CUDA driver")
        rc, out, err = python(PRELUDE + code + "\nprint('DONE')\n", env={"FAKE_CUDA": self.lib}, cwd=ROOT)
        self.assertEqual(rc, 0, out + err)
        self.assertTrue(out.rstrip().endswith("DONE"), out + err)
        return out

    def test_fast_path_launches_with_this_calls_values(self):
        self.run_case(r'''
layout(3)
GEMM(*gemm_args())
assert GEMM._fast is not None, "a launch on torch tensors makes the next call's fast path"
fast = GEMM._fast
torch.calls.clear()
args = gemm_args(a_ptr=A + 0x1000)  # another address: not part of the checks, read every call
torch.state.streams[0] = 0x5151     # another current stream
GEMM(*args)
assert GEMM._fast is fast, "the fast path was taken"
assert recorded("fake_launches") == 2
assert recorded("fake_ptrs", 3) == [A + 0x1000, B, C], recorded("fake_ptrs", 3)
assert recorded("fake_stream", t=ctypes.c_void_p) == 0x5151
# every argument once: dtype, device, shape, is_contiguous, data_ptr; the
# stream and the current device through torch._C
assert torch.calls["Tensor.data_ptr"] == 3 and torch.calls["_C._cuda_getCurrentRawStream"] == 1, torch.calls
assert "cuda.current_stream" not in torch.calls and "cuda.current_device" not in torch.calls, torch.calls
assert sum(torch.calls.values()) == 17, torch.calls
# torch's current device elsewhere: the launch switches to the tensors' device around it
torch.state.device = 1
GEMM(*gemm_args())
assert torch.state.switches == [0] and torch.state.device == 1, torch.state.switches
assert recorded("fake_launches") == 3
# an explicit stream
GEMM(*gemm_args(), stream=0x77)
assert recorded("fake_stream", t=ctypes.c_void_p) == 0x77
''')

    def test_torch_without_raw_accessors(self):
        self.run_case(r'''
layout(3)
torch = fake_torch.module(with_raw=False)
sys.modules["torch"] = torch
T = torch.tensor
torch.state.streams[0] = 0x99
for call in range(2):
    torch.calls.clear()
    GEMM(*gemm_args())
    assert recorded("fake_stream", t=ctypes.c_void_p) == 0x99
    assert torch.calls["cuda.current_stream"] == 1 and torch.calls["cuda.current_device"] == 1, torch.calls
assert recorded("fake_launches") == 2
''')

    def test_second_call_refusals_are_the_first_calls(self):
        # each changed argument, after a launch that made the fast path: the
        # refusal a kernel that never launched gives, and no launch
        self.run_case(r'''
layout(3)
cases = [("shape", gemm_args(a_shape=(128, 32))), ("rank", gemm_args(a_shape=(128, 64, 1))),
         ("dtype", gemm_args(a_dtype="bfloat16")), ("dtype f32", gemm_args(a_dtype="float32")),
         ("device", gemm_args(a_dev=("cuda", 1))), ("host memory", gemm_args(a_dev=("cpu", None))),
         ("layout", gemm_args(a_strides=(1, 128))),
         ("type", (object(),) + gemm_args()[1:]), ("count", gemm_args()[:2])]
for what, bad in cases:
    GEMM(*gemm_args())
    launches = recorded("fake_launches")
    got, want = refusal(GEMM, *bad), refusal(fresh(GEMM, M=128, N=128, K=64), *bad)
    assert want is not None, what
    assert got == want, (what, got, want)
    assert recorded("fake_launches") == launches, what
    GEMM(*gemm_args())  # and the good call after it launches
    assert recorded("fake_launches") == launches + 1, what
expected = {
    "shape": "gemm: argument 'a': shape [128, 32], but the kernel declares f16 [128, 64]",
    "dtype": "gemm: argument 'a': element type bfloat16, but the kernel declares f16 [128, 64]",
    "device": "gemm: argument 'a': arguments on different devices (a on cuda:1, b on cuda:0, c on cuda:0)",
    "host memory": "gemm: argument 'a': in host memory, but the kernel runs on the GPU",
    "layout": "gemm: argument 'a': not contiguous",
}
for what, bad in cases:
    if what in expected:
        GEMM(*gemm_args())
        kind, msg = refusal(GEMM, *bad)
        assert kind == "ArgumentError" and msg.startswith(expected[what]), (what, kind, msg)
''')

    def test_output_sharing_memory_on_both_paths(self):
        # c over the end of a (a's last row is c's first): refused on the
        # checked path and on the fast path after a good launch, nothing
        # launched; a and b alike may share memory (both are read)
        self.run_case(r'''
layout(3)
over = (T((128, 64), "float16", ptr=A), T((128, 64), "float16", ptr=B),
        T((128, 128), "float32", ptr=A + 128 * 64 * 2 - 16))
want = ("ArgumentError", "gemm: argument 'c': shares memory with 'a': a kernel's threads read and write in no "
        "promised order, so an output may not overlap another argument (give it a buffer of its own)")
assert refusal(GEMM, *over) == want, refusal(GEMM, *over)
assert recorded("fake_launches") == 0
GEMM(*gemm_args())
assert GEMM._fast is not None
assert refusal(GEMM, *over) == want
assert recorded("fake_launches") == 1
GEMM(*gemm_args(a_ptr=B))  # a and b at one address: launches (fast path)
assert recorded("fake_launches") == 2
''')

    def test_misaligned_address_on_the_fast_path(self):
        self.run_case(r'''
layout(3)
GEMM(*gemm_args())
GEMM(*gemm_args())
kind, msg = refusal(GEMM, *gemm_args(a_ptr=A + 2))
assert kind == "WavecError" and "argument 'a' of 'gemm' is at 0x7f0000010002, not a multiple of 16" in msg, msg
assert recorded("fake_launches") == 2
GEMM(*gemm_args())  # a fresh module after the refusal
assert recorded("fake_launches") == 3 and recorded("fake_ptrs", 3) == [A, B, C]
''')

    def test_run_time_sizes_follow_the_shapes(self):
        self.run_case(r'''
layout(3, nsizes=3)
def sizes():
    return recorded("fake_sizes", 3, ctypes.c_uint), recorded("fake_grid", 3, ctypes.c_uint)
DYN(*dyn_args(128, 96, 64))
DYN(*dyn_args(128, 96, 64))
assert DYN._fast is not None
assert sizes() == ([128, 96, 64], [2, 2, 1]), sizes()
DYN(*dyn_args(64, 96, 64))  # another M: the shapes given again
assert sizes() == ([64, 96, 64], [1, 2, 1]), sizes()
DYN(*dyn_args(64, 96, 64))
assert sizes() == ([64, 96, 64], [1, 2, 1]), sizes()
launches = recorded("fake_launches")
# K = 100 after a launch at K = 64: dynamic(K, multiple_of = 8)
got, want = refusal(DYN, *dyn_args(64, 96, 100)), refusal(fresh(DYN), *dyn_args(64, 96, 100))
assert got == want and got[0] == "WavecError" and "'K' = 100 is not a multiple of 8" in got[1], (got, want)
# shapes that disagree on K
got, want = refusal(DYN, *dyn_args(64, 96, 64, k_b=72)), refusal(fresh(DYN), *dyn_args(64, 96, 64, k_b=72))
assert got == want and "dimension 1 (K) is 72, but 'a' gives K = 64" in got[1], (got, want)
assert recorded("fake_launches") == launches
DYN(*dyn_args(128, 96, 64))
assert sizes() == ([128, 96, 64], [2, 2, 1]) and recorded("fake_launches") == launches + 1, sizes()
''')

    def test_other_arguments_between_two_like_calls(self):
        # a launch on objects that are not torch tensors (a CUDA array
        # interface) gives the module other shapes and makes no fast path:
        # the next call on the first shapes gives them again
        self.run_case(r'''
layout(3, nsizes=3)
class Cai:
    def __init__(self, shape, typestr, ptr):
        self.__cuda_array_interface__ = dict(shape=shape, typestr=typestr, data=(ptr, False), version=3)
DYN(*dyn_args(128, 96, 64))
DYN(*dyn_args(128, 96, 64))
DYN(Cai((32, 64), "<f2", A), Cai((96, 64), "<f2", B), Cai((32, 96), "<f4", C))
assert DYN._fast is None
assert recorded("fake_sizes", 3, ctypes.c_uint) == [32, 96, 64]
DYN(*dyn_args(128, 96, 64))
assert recorded("fake_sizes", 3, ctypes.c_uint) == [128, 96, 64], recorded("fake_sizes", 3, ctypes.c_uint)
assert recorded("fake_launches") == 4
''')

    def test_tensor_maps_follow_addresses_and_shapes(self):
        # a launch passes tensor maps over this call's addresses and shapes;
        # one encoded by an earlier launch over the same is passed again
        # without encoding (the fake driver's maps hold address and size)
        self.run_case(r'''
WG = wavec.compile("tests/kernels/dynamic.wave", kernel="gemm_dyn_wgmma", target="sm_90a", ptxas=True)
def call(m, n, k, a=A, b=B, c=C):
    WG(T((m, k), "float16", ptr=a), T((n, k), "float16", ptr=b), T((m, n), "float32", ptr=c))
    return recorded("fake_encodes")
layout(3, nsizes=3, ntmaps=0)
first = call(128, 128, 64)
ntmaps = first
assert ntmaps >= 1, ntmaps
layout(3, nsizes=3, ntmaps=ntmaps)
def maps():
    return [tuple(recorded("fake_tmaps", 32)[2 * i:2 * i + 2]) for i in range(ntmaps)]
def expect(m, n, k, a=A, b=B, c=C):
    by_arg = {A: m * k, B: n * k, C: m * n, a: m * k, b: n * k, c: m * n}
    for addr, size in maps():
        assert addr in (a, b, c) and size == by_arg[addr], (maps(), (a, b, c), (m, n, k))
assert call(128, 128, 64) == ntmaps        # the same: nothing encoded
expect(128, 128, 64)
assert call(128, 128, 64, a=A + 0x10000, b=B + 0x10000, c=C + 0x10000) == 2 * ntmaps
expect(128, 128, 64, a=A + 0x10000, b=B + 0x10000, c=C + 0x10000)
assert call(128, 128, 64) == 3 * ntmaps   # back: encoded again (one map a tensor map)
expect(128, 128, 64)
encodes = call(256, 128, 128)              # other sizes: the maps over the new shapes
assert encodes > 3 * ntmaps, encodes
expect(256, 128, 128)
assert call(256, 128, 128) == encodes
expect(256, 128, 128)
assert recorded("fake_launches") == 6
''')

    def test_empty_batch_launches_nothing(self):
        # M = 0 (every output empty): no launch, no error, and the next call
        # launches as usual; K = 0 (c not empty) is refused before any launch
        self.run_case(r'''
layout(3, nsizes=3)
n0 = recorded("fake_launches")
assert DYN(*dyn_args(0, 96, 64)) is None
assert recorded("fake_launches") == n0, recorded("fake_launches")
DYN(*dyn_args(128, 96, 64))
assert recorded("fake_launches") == n0 + 1
assert recorded("fake_sizes", 3, ctypes.c_uint) == [128, 96, 64], recorded("fake_sizes", 3, ctypes.c_uint)
r = refusal(DYN, *dyn_args(16, 96, 0))
assert r is not None and r[0] == "ArgumentError" and "K = 0" in r[1], r
assert recorded("fake_launches") == n0 + 1
''')

    def test_tensor_maps_swizzle_as_the_tiles_rows(self):
        # each map's swizzle is its tile's (128, 64 or 32 bytes: the driver's
        # CU_TENSOR_MAP_SWIZZLE_128B 3, 64B 2, 32B 1), its box's innermost
        # dim that many bytes: gemm_nn's a in K tiles of 64 (128 bytes), b
        # read N-contiguous in panels of 96 / 3 or 80 / 5 columns
        self.run_case(r'''
for bn, want_b in ((96, (2, 64)), (80, (1, 32))):
    K = wavec.compile("tests/kernels/swizzle.wave", kernel="gemm_nn", target="sm_90a", ptxas=True,
                      M=128, N=2 * bn, K=128, BLOCK_N=bn, hardware=dict(stores=1))
    before = recorded("fake_encodes")
    layout(3, ntmaps=0)
    K(T((128, 128), "float16", ptr=A), T((128, 2 * bn), "float16", ptr=B), T((128, 2 * bn), "float32", ptr=C))
    n = recorded("fake_encodes") - before
    assert n == 2, n
    enc = recorded("fake_encoded", 48)
    got = {enc[3 * (i % 16)]: tuple(enc[3 * (i % 16) + 1:3 * (i % 16) + 3]) for i in range(before, before + n)}
    assert got == {A: (3, 128), B: want_b}, (bn, got)
''')


if __name__ == "__main__":
    unittest.main()
