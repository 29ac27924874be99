"""Kernels in the simulator on NumPy arrays (target="sim")."""
import os
import unittest

import numpy as np

import wavec
from common import GEMM, BENCH_GEMM, ROOT, f32_to_bf16_bits, bf16_bits_to_f32, rel_err


def gemm_inputs(m, n, k, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1, 1, (m, k)).astype(np.float16)
    b = rng.uniform(-1, 1, (n, k)).astype(np.float16)
    return a, b


class Simulator(unittest.TestCase):
    def test_gemm_against_float64(self):
        k = wavec.compile(GEMM, kernel="gemm", target="sim", M=128, N=64, K=64)
        a, b = gemm_inputs(128, 64, 64)
        c = np.full((128, 64), np.nan, np.float32)
        self.assertIsNone(k(a, b, c))
        ref = a.astype(np.float64) @ b.astype(np.float64).T
        self.assertLess(rel_err(c, ref), 1e-6)

    def test_declared_arguments(self):
        k = wavec.compile(GEMM, target="sim", M=128, N=64, K=32, BLOCK_M=32)
        self.assertEqual(k.name, "gemm")
        self.assertEqual(k.target, "sim")
        self.assertEqual([(a.name, a.dtype, a.shape, a.is_output) for a in k.args],
                         [("a", "f16", (128, 32), False), ("b", "f16", (64, 32), False),
                          ("c", "f32", (128, 64), True)])
        self.assertEqual([a.name for a in k.outputs], ["c"])
        self.assertEqual(k.grid, (4, 1, 1))  # M / BLOCK_M workgroups along x
        self.assertIn("gemm(a: f16 [128, 32]", repr(k))
        self.assertEqual(k.defines, {"M": 128, "N": 64, "K": 32, "BLOCK_M": 32})

    def test_bf16_as_uint16_bits(self):
        k = wavec.compile(BENCH_GEMM, kernel="gemm_bf16", target="sim", M=64, N=64, K=64,
                          BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, WAVES_M=2, WAVES_N=2)
        rng = np.random.default_rng(1)
        a32, b32 = rng.uniform(-1, 1, (64, 64)).astype(np.float32), rng.uniform(-1, 1, (64, 64)).astype(np.float32)
        a, b = f32_to_bf16_bits(a32), f32_to_bf16_bits(b32)
        c = np.zeros((64, 64), np.uint16)
        k(a, b, c)
        ref = bf16_bits_to_f32(a).astype(np.float64) @ bf16_bits_to_f32(b).astype(np.float64).T
        self.assertLess(rel_err(bf16_bits_to_f32(c), ref), 1e-2)  # c rounded to bf16

    def test_int8_gemm_exact(self):
        # i8 operands as NumPy int8, the i32 result exact (the mma.sync
        # m16n8k32 of examples/gemm_i8.wave)
        k = wavec.compile(os.path.join(ROOT, "examples", "gemm_i8.wave"), kernel="gemm_i8_sync", target="sim",
                          M=64, N=64, K=128)
        self.assertEqual([a.dtype for a in k.args], ["i8", "i8", "i32"])
        rng = np.random.default_rng(3)
        a = rng.integers(-128, 128, (64, 128)).astype(np.int8)
        b = rng.integers(-128, 128, (64, 128)).astype(np.int8)
        c = np.zeros((64, 64), np.int32)
        k(a, b, c)
        np.testing.assert_array_equal(c, a.astype(np.int64) @ b.astype(np.int64).T)
        with self.assertRaises(wavec.ArgumentError):  # not int8
            k(a.astype(np.int16), b, c)

    def test_fp8_gemm_raw_bytes(self):
        # e4m3 operands as NumPy uint8 holding the raw bytes: 0x38 is 1.0,
        # 0x40 is 2.0; the scaled result in bf16 bits
        k = wavec.compile(os.path.join(ROOT, "examples", "gemm_fp8.wave"), kernel="gemm_fp8_sync", target="sim",
                          M=64, N=64, K=64)
        a = np.full((64, 64), 0x38, np.uint8)
        b = np.full((64, 64), 0x40, np.uint8)
        sa, sb = np.full(64, 0.5, np.float32), np.full(64, 0.25, np.float32)
        c = np.zeros((64, 64), np.uint16)
        k(a, b, sa, sb, c)
        np.testing.assert_array_equal(bf16_bits_to_f32(c), np.full((64, 64), 64 * 2.0 * 0.5 * 0.25, np.float32))

    def test_hardware_override_same_numbers(self):
        a, b = gemm_inputs(64, 64, 128, seed=2)
        out = []
        for hw in (None, {"stages": 1}, {"stages": 2}):
            k = wavec.compile(GEMM, target="sim", hardware=hw, M=64, N=64, K=128)
            c = np.zeros((64, 64), np.float32)
            k(a, b, c)
            out.append(c)
        np.testing.assert_array_equal(out[0], out[1])
        np.testing.assert_array_equal(out[0], out[2])
        remarks = lambda hw: " ".join(wavec.compile(GEMM, target="sim", hardware=hw, M=64, N=64, K=128).remarks())
        self.assertIn("(stages = 1)", remarks({"stages": 1}))
        self.assertIn("in 2 stages", remarks({"stages": 2}))
        with self.assertRaisesRegex(ValueError, "invalid hardware entry stages=0"):
            wavec.compile(GEMM, target="sim", hardware={"stages": 0}, M=64, N=64, K=128)

    def test_source_text(self):
        with open(GEMM) as f:
            src = f.read()
        k = wavec.compile(src, target="sim", M=64, N=64, K=32)
        self.assertEqual(k.file, "<string>")
        a, b = gemm_inputs(64, 64, 32, seed=3)
        c = np.zeros((64, 64), np.float32)
        k(a, b, c)
        self.assertLess(rel_err(c, a.astype(np.float64) @ b.astype(np.float64).T), 1e-6)

    def test_dlpack_host_arrays(self):
        class Wrapped:  # not an ndarray: reaches the DLPack path
            def __init__(self, a):
                self.a = a

            def __dlpack__(self, stream=None):
                return self.a.__dlpack__()

            def __dlpack_device__(self):
                return self.a.__dlpack_device__()

        k = wavec.compile(GEMM, target="sim", M=64, N=64, K=32)
        a, b = gemm_inputs(64, 64, 32, seed=4)
        c = np.zeros((64, 64), np.float32)
        k(Wrapped(a), Wrapped(b), Wrapped(c))
        self.assertLess(rel_err(c, a.astype(np.float64) @ b.astype(np.float64).T), 1e-6)

    def test_auto_without_gpu_is_the_simulator(self):
        if wavec._have_gpu():
            self.skipTest("a GPU is present: auto picks it")
        self.assertEqual(wavec.compile(GEMM, M=64, N=64, K=32).target, "sim")

    def test_ptx_and_remarks(self):
        k = wavec.compile(GEMM, target="sim", M=64, N=64, K=32)
        ptx = k.ptx()
        self.assertIn(".target sm_90", ptx)
        self.assertIn(".entry gemm", ptx)
        self.assertIn(".target sm_80", k.ptx("sm_80"))
        self.assertTrue(all(": remark: " in r for r in k.remarks()))

    def test_calls_repeat_and_threads(self):
        import threading
        k = wavec.compile(GEMM, target="sim", M=64, N=64, K=32)
        a, b = gemm_inputs(64, 64, 32, seed=5)
        ref = a.astype(np.float64) @ b.astype(np.float64).T
        errs = []

        def work():
            c = np.zeros((64, 64), np.float32)
            k(a, b, c)
            errs.append(rel_err(c, ref))

        ts = [threading.Thread(target=work) for _ in range(4)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        self.assertEqual(len(errs), 4)
        self.assertTrue(all(e < 1e-6 for e in errs))

    def test_torch_cpu_tensors(self):
        try:
            import torch
        except ImportError:
            self.skipTest("torch is not installed (not needed on CI)")
        k = wavec.compile(GEMM, target="sim", M=64, N=64, K=32)
        a, b = (torch.rand(64, 32, dtype=torch.float16) for _ in range(2))
        c = torch.zeros(64, 64)
        k(a, b, c)
        torch.testing.assert_close(c, a.float() @ b.float().T, rtol=1e-3, atol=1e-3)


if __name__ == "__main__":
    unittest.main()
