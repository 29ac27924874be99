"""Errors: arguments that do not fit the kernel (each names the argument),
compile errors (file:line:col and a caret), bad keyword arguments, and a
context that recovers after an error."""
import unittest

import numpy as np

import wavec
from common import GEMM, GEMM_WGMMA

TRANSPOSE = """
kernel transpose(x: Memory[M, N, f32], y: Memory[N, M, f32]) {
    constraints { workgroup(M, 32, 0)
                  workgroup(N, 32, 1)
                  wave(M, 32)
                  wave(N, 32)
                  hardware(threads_per_wave = 32, vector_shapes = {M: 1}) }
    write(permute(read(x), [N, M]), y)
}
"""


class Arguments(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.k = wavec.compile(GEMM, target="sim", M=64, N=64, K=32)
        cls.a = np.zeros((64, 32), np.float16)
        cls.b = np.zeros((64, 32), np.float16)
        cls.c = np.zeros((64, 64), np.float32)

    def call_error(self, *args):
        with self.assertRaises(wavec.ArgumentError) as cm:
            self.k(*args)
        return cm.exception

    def test_dtype(self):
        e = self.call_error(self.a, self.b.astype(np.float32), self.c)
        self.assertEqual(e.arg, "b")
        self.assertEqual(str(e), "gemm: argument 'b': element type float32, but the kernel declares f16 [64, 32]")
        self.assertIsInstance(e, ValueError)

    def test_shape(self):
        e = self.call_error(self.a, self.b, np.zeros((64, 32), np.float32))
        self.assertEqual(str(e), "gemm: argument 'c': shape [64, 32], but the kernel declares f32 [64, 64]")

    def test_rank(self):
        e = self.call_error(self.a.reshape(-1), self.b, self.c)
        self.assertIn("argument 'a': shape [2048]", str(e))

    def test_not_contiguous(self):
        e = self.call_error(self.a, self.b, np.zeros((64, 64), np.float32).T)
        self.assertEqual(e.arg, "c")
        self.assertIn("not contiguous", str(e))
        e = self.call_error(np.zeros((64, 64), np.float16)[:, :32], self.b, self.c)
        self.assertEqual(e.arg, "a")
        self.assertIn("not contiguous", str(e))

    def test_read_only_output(self):
        c = np.zeros((64, 64), np.float32)
        c.setflags(write=False)
        e = self.call_error(self.a, self.b, c)
        self.assertIn("argument 'c': read-only, but the kernel writes it", str(e))
        a = self.a.copy()
        a.setflags(write=False)
        self.k(a, self.b, self.c)  # an input may be read-only

    def test_output_sharing_memory(self):
        # the same array, and a view of it, as an input and the output: a
        # race on a GPU; refused before the simulator runs
        c = np.zeros((64, 64), np.float32)
        k = wavec.compile(TRANSPOSE, target="sim", M=64, N=64)
        e = self.call_error_of(k, c, c)
        self.assertEqual(e.arg, "y")
        self.assertIn("shares memory with 'x'", str(e))
        big = np.zeros(64 * 64 + 8, np.float32)
        e = self.call_error_of(k, big[:4096].reshape(64, 64), big[8:].reshape(64, 64))
        self.assertIn("shares memory with 'x'", str(e))
        x = np.arange(4096, dtype=np.float32).reshape(64, 64)
        y = np.zeros((64, 64), np.float32)
        k(x, y)  # apart: runs
        np.testing.assert_array_equal(y, x.T)
        # inputs may share memory with each other
        a = np.zeros((64, 32), np.float16)
        self.k(a, a, self.c)

    def call_error_of(self, k, *args):
        with self.assertRaises(wavec.ArgumentError) as cm:
            k(*args)
        return cm.exception

    def test_kernel_named_alone(self):
        # an error in another kernel of the source does not stop the one
        # named; a name the source lacks lists the kernels it has
        good = TRANSPOSE.replace("kernel transpose", "kernel good")
        bad = "kernel bad(x: Memory[N, f32], y: Memory[N, i32]) {\n    y2 = = 3\n}\n"
        k = wavec.compile(bad + good, kernel="good", target="sim", M=32, N=64)
        x = np.arange(32 * 64, dtype=np.float32).reshape(32, 64)
        y = np.zeros((64, 32), np.float32)
        k(x, y)
        np.testing.assert_array_equal(y, x.T)
        with self.assertRaises(wavec.WavecError):
            wavec.compile(bad + good, target="sim", M=32, N=64)
        with self.assertRaises(ValueError) as cm:
            wavec.compile(TRANSPOSE + good, kernel="nope", target="sim", M=32, N=64)
        self.assertIn("(kernels: transpose, good)", str(cm.exception))
        with self.assertRaises(ValueError) as cm:
            wavec.compile(bad + good, kernel="nope", target="sim", M=32, N=64)
        self.assertIn("which has errors", str(cm.exception))

    def test_big_endian(self):
        e = self.call_error(self.a.astype(">f2"), self.b, self.c)
        self.assertEqual(e.arg, "a")
        self.assertIn("big-endian float16", str(e))
        e = self.call_error(self.a, self.b, self.c.astype(">f4"))
        self.assertEqual(e.arg, "c")

    def test_count(self):
        with self.assertRaisesRegex(TypeError, r"gemm: takes 3 arguments \(a, b, c\), got 2"):
            self.k(self.a, self.b)

    def test_unknown_object(self):
        e = self.call_error(self.a, [[0.0]], self.c)
        self.assertIn("argument 'b': a list; wavec takes torch tensors", str(e))

    def test_device_memory_in_the_simulator(self):
        class OnGpu:
            __cuda_array_interface__ = {"shape": (64, 32), "typestr": "<f2", "data": (1 << 40, False),
                                        "version": 3}
        e = self.call_error(self.a, OnGpu(), self.c)
        self.assertIn("argument 'b'", str(e))


class Compile(unittest.TestCase):
    def test_syntax_error_has_location_and_caret(self):
        with self.assertRaises(wavec.WavecError) as cm:
            wavec.compile("kernel k(a: Memory[M, f16]) {\n    x = read(a)\n    y = x + zz\n}\n", target="sim")
        msg = str(cm.exception)
        self.assertTrue(msg.startswith("<string>:3:13: error[E0201]: "), msg)
        self.assertIn("    y = x + zz", msg)
        self.assertIn("^", msg)
        self.assertEqual(cm.exception.status, "type error")

    def test_unbound_size(self):
        with self.assertRaisesRegex(wavec.WavecError, r"gemm.wave:\d+:\d+: error\[E0501\]"):
            wavec.compile(GEMM, target="sim", M=64, N=64)

    def test_unknown_define(self):
        with self.assertRaisesRegex(TypeError, "has no symbol named BLOCK_Q"):
            wavec.compile(GEMM, target="sim", M=64, N=64, K=32, BLOCK_Q=2)

    def test_define_not_a_number(self):
        with self.assertRaisesRegex(TypeError, "M='64': sizes and hyperparameters are numbers"):
            wavec.compile(GEMM, target="sim", M="64", N=64, K=32)

    def test_define_out_of_range(self):
        # (they wrapped modulo 2^64: M = 2^64 + 64 compiled as M = 64)
        for big in (2**64 + 64, 2**70, -2**63 - 1):
            with self.assertRaisesRegex(ValueError, r"out of range \(a 64-bit integer\)"):
                wavec.compile(GEMM, target="sim", M=big, N=64, K=32)

    def test_numpy_numbers(self):
        k = wavec.compile(GEMM, target="sim", M=np.int64(64), N=np.int32(64), K=32)
        a = np.ones((64, 32), np.float16)
        c = np.zeros((64, 64), np.float32)
        k(a, a, c)
        self.assertTrue((c == 32).all())

    def test_hardware_keys(self):
        with self.assertRaisesRegex(ValueError, r"invalid hardware entry stagez=2: unknown hardware entry 'stagez'; "
                                    r"the entries are threads_per_wave \(32, 64 or 128\), mma \(an mma type\), "
                                    r"stages \(1 to 8\), .*longest_first \(0 to 1\), cluster \(1 to 8\), "
                                    r"early_mma \(0 to 1\), read_ahead \(0 to 64\), mma_ahead \(0 to 2\)$"):
            wavec.compile(GEMM, target="sim", M=64, N=64, K=32, hardware=dict(stagez=2))

    def test_unknown_target(self):
        with self.assertRaisesRegex(ValueError, "unknown target 'sm_75'"):
            wavec.compile(GEMM, target="sm_75", M=64, N=64, K=32)

    def test_kernel_choice(self):
        from common import BENCH_GEMM
        with self.assertRaisesRegex(ValueError, "has 7 kernels .*gemm_f16.*gemm_wgmma_bf16_tt.*choose one with kernel="):
            wavec.compile(BENCH_GEMM, target="sim", M=64, N=64, K=64)
        with self.assertRaisesRegex(ValueError, "no kernel 'gemm_f8'"):
            wavec.compile(BENCH_GEMM, kernel="gemm_f8", target="sim", M=64, N=64, K=64)

    def test_missing_file(self):
        with self.assertRaises(FileNotFoundError):
            wavec.compile("no/such/kernel.wave", target="sim")

    def test_error_then_recovery(self):
        k = wavec.compile(GEMM_WGMMA, target="sim", M=128, N=128, K=64)
        with self.assertRaisesRegex(wavec.WavecError, "sm_90a"):
            k.ptx("sm_80")  # wgmma has no sm_80 form
        self.assertIn(".target sm_90a", k.ptx("sm_90a"))  # a fresh context
        a = np.zeros((128, 64), np.float16)
        c = np.zeros((128, 128), np.float32)
        k(a, a, c)

    def test_gpu_without_driver(self):
        if wavec._have_gpu():
            self.skipTest("a GPU is present")
        with self.assertRaisesRegex(wavec.WavecError, "no CUDA driver|no CUDA device"):
            wavec.compile(GEMM, target="sm_90", M=64, N=64, K=32)

    def test_ptxas_needs_a_named_target(self):
        with self.assertRaisesRegex(ValueError, "ptxas=True assembles for a named GPU target"):
            wavec.compile(GEMM, target="sim", ptxas=True, M=64, N=64, K=32)


if __name__ == "__main__":
    unittest.main()
