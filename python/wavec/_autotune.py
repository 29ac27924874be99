"""wavec.autotune: the fastest correct configuration of a kernel, per key.

    tuner = wavec.autotune("bench/gemm.wave", "gemm_f16", key=["M", "N", "K"],
                           configs=[dict(BLOCK_M=128, BLOCK_N=128, hardware=dict(stages=3)), ...])
    k = tuner.best(M=4096, N=4096, K=4096)   # a wavec.Kernel
    k(a, b, c)

For a key not tuned before (in this process or, through the disk cache, in
an earlier one) best() compiles every configuration in parallel worker
processes (GPU: assembled by ptxas into the disk cache, so the tuning
process reads each one back without compiling), runs each on the same
random inputs, checks its outputs against the first configuration that ran
(or against `reference`), times the ones that agree, and keeps the fastest.
A configuration that fails to compile, fails to run or whose numbers
differ is never taken. One line of progress per configuration goes to
`progress` (default: standard error). The choice is stored in the cache
folder, keyed by the source, kernel, configurations, key sizes, fixed
definitions, target, device and wavec's version.
"""
import concurrent.futures
import hashlib
import json
import math
import multiprocessing
import os
import sys
import tempfile
import time

# outputs of two configurations agree when ||x - y|| <= tol ||y|| (no NaN
# or inf only one of them has); per type: accumulation order and rounding
# differ between tilings. A float output takes the largest tolerance of
# its own type and the kernel's float inputs' (an f32 output computed
# through f16 values, attention's p, differs by f16 roundings between
# tile shapes); integers agree exactly.
TOLERANCE = {"f32": 1e-4, "f16": 5e-3, "bf16": 3e-2, "f8e4m3": 6e-2, "f8e5m2": 1.2e-1,
             "i32": 0.0, "i8": 0.0, "i1": 0.0}
FLOATS = ("f32", "f16", "bf16", "f8e4m3", "f8e5m2")


def _tolerance(kern, a):
    if a.dtype not in FLOATS:
        return TOLERANCE[a.dtype]
    return max([TOLERANCE[a.dtype]] + [TOLERANCE[x.dtype] for x in kern.args
                                       if not x.is_output and x.dtype in FLOATS])


def _f8_values(b, mant_bits):
    """The values of 8-bit float bytes b (NaN for e4m3's 0x7f / 0xff and
    e5m2's all-ones exponent)."""
    import numpy as np
    bias, emax = (7, 15) if mant_bits == 3 else (15, 31)
    b = b.astype(np.int64)
    sign = np.where(b >> 7, -1.0, 1.0)
    e = (b >> mant_bits) & emax
    m = b & ((1 << mant_bits) - 1)
    v = np.where(e == 0, m / (1 << mant_bits) * 2.0 ** (1 - bias),
                 (1 + m / (1 << mant_bits)) * 2.0 ** (e - bias))
    nan = (b & 0x7F) == 0x7F if mant_bits == 3 else e == emax
    return np.where(nan, np.nan, sign * v)


def _f8_bytes(rng, shape, mant_bits):
    """Random 8-bit float bytes of magnitude 2^-3 to 2^2, either sign (no
    NaN or inf): e4m3 (mant_bits 3, bias 7), e5m2 (2, bias 15)."""
    import numpy as np
    bias = 7 if mant_bits == 3 else 15
    e = rng.integers(bias - 3, bias + 2, shape)
    m = rng.integers(0, 1 << mant_bits, shape)
    sign = rng.integers(0, 2, shape)
    return ((sign << 7) | (e << mant_bits) | m).astype(np.uint8)


def _split(config):
    config = dict(config)
    hw = dict(config.pop("hardware", {}) or {})
    return config, hw


def _describe(config):
    defs, hw = _split(config)
    parts = [f"{k}={v}" for k, v in defs.items()] + [f"{k}={v}" for k, v in hw.items()]
    return " ".join(parts) or "(defaults)"


def _compile_worker(job):
    """In a worker process: compiles one configuration (for a GPU target,
    assembled by ptxas into the disk cache). (True, None) or (False, why)."""
    source, kernel, target, defines, hardware, ptxas = job
    import wavec
    try:
        wavec.compile(source, kernel=kernel, target=target, hardware=hardware, ptxas=ptxas, **defines)
        return True, None
    except Exception as e:  # reported in the progress line
        return False, f"{type(e).__name__}: {e}"


def _ptxas_found():
    from ._lib import lib  # noqa: F401  (the library's own search is the one that counts)
    import shutil
    cands = [os.environ.get("WAVEC_PTXAS"), os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin", "ptxas"),
             "/usr/local/cuda/bin/ptxas", shutil.which("ptxas")]
    return any(c and os.access(c, os.X_OK) for c in cands)


class Result:
    """One configuration's outcome: config, status ("ok", "compile error",
    "run error", "numbers differ"), ms (median, for "ok"), error (relative
    difference from the reference, or the message)."""

    def __init__(self, config, status, ms=None, error=None):
        self.config, self.status, self.ms, self.error = config, status, ms, error

    def __repr__(self):
        return f"Result({_describe(self.config)}: {self.status}, ms={self.ms}, error={self.error})"


class Autotuner:
    def __init__(self, source, kernel, configs, key=(), target="auto", workers=None, warmup=3, rep=20,
                 reference=None, bench=None, progress=None, cache=True, **defines):
        import wavec
        if not configs:
            raise ValueError("wavec.autotune: no configurations")
        self.source, self.kernel, self.configs = source, kernel, [dict(c) for c in configs]
        self.key = list(key)
        self.target = target if target != "auto" else ("auto" if wavec._have_gpu() else "sim")
        self.workers = workers or min(len(configs), os.cpu_count() or 1)
        self.warmup, self.rep = warmup, rep
        self.reference, self.bench, self.cache = reference, bench, cache
        self.progress = progress if progress is not None else (lambda line: print(line, file=sys.stderr, flush=True))
        self.defines = defines
        self.results = {}  # key tuple -> [Result]
        self._best = {}    # key tuple -> (config, Kernel)
        self._text = wavec._read_source(source)[1]

    # ---- the key and where its choice is kept ---------------------------------------
    def _key(self, sizes):
        missing = [d for d in self.key if d not in sizes]
        extra = [d for d in sizes if d not in self.key]
        if missing or extra:
            raise TypeError(f"wavec.autotune: the key is {self.key}; "
                            + (f"missing {missing}" if missing else f"not in the key: {extra}"))
        return tuple(sizes[d] for d in self.key)

    def _device(self):
        if self.target == "sim":
            return "sim"
        torch = sys.modules.get("torch")
        if torch is not None and torch.cuda.is_available():
            return torch.cuda.get_device_name()
        return self.target

    def _choice_path(self, key):
        import wavec
        d = wavec.cache_dir()
        if not d or not self.cache:
            return None
        h = hashlib.sha256(json.dumps(
            {"source": self._text.decode(errors="replace"), "kernel": self.kernel, "configs": self.configs,
             "key": dict(zip(self.key, key)), "defines": self.defines, "target": self.target,
             "device": self._device(), "wavec": wavec.library_version()},
            sort_keys=True, default=str).encode()).hexdigest()[:32]
        return os.path.join(d, f"{h}.wvtune")

    def _stored(self, key):
        path = self._choice_path(key)
        try:
            with open(path) as f:
                got = json.load(f)
            return got["config"] if got["config"] in self.configs else None
        except (OSError, ValueError, KeyError, TypeError):
            return None  # none, or not readable: tune again and replace it

    def _store(self, key, config, ms):
        path = self._choice_path(key)
        if not path:
            return
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", dir=os.path.dirname(path))
            with os.fdopen(fd, "w") as f:
                json.dump({"kernel": self.kernel, "key": dict(zip(self.key, key)), "config": config, "ms": ms}, f)
            os.replace(tmp, path)  # readers see the old choice or the new one, whole
        except OSError:
            pass  # a cache that cannot be written is not an error

    # ---- compiling ---------------------------------------------------------------------
    def _compile(self, config, sizes, ptxas=False):
        import wavec
        defs, hw = _split(config)
        return wavec.compile(self.source, kernel=self.kernel, target=self.target, hardware=hw, ptxas=ptxas,
                             **{**self.defines, **sizes, **defs})

    def _compile_all(self, sizes):
        """Every configuration compiled in worker processes; the errors by index."""
        gpu = self.target != "sim"
        ptxas = gpu and self.target != "auto" and _ptxas_found()
        jobs = []
        for c in self.configs:
            defs, hw = _split(c)
            jobs.append((self.source if not isinstance(self.source, os.PathLike) else os.fspath(self.source),
                         self.kernel, self.target if (not gpu or ptxas) else "sim",
                         {**self.defines, **sizes, **defs}, hw, ptxas))
        errors = {}
        if self.workers > 1 and len(jobs) > 1:
            ctx = multiprocessing.get_context("spawn")  # no CUDA state is inherited
            with concurrent.futures.ProcessPoolExecutor(self.workers, mp_context=ctx) as pool:
                for i, (ok, why) in enumerate(pool.map(_compile_worker, jobs)):
                    if not ok:
                        errors[i] = why
        else:
            for i, job in enumerate(jobs):
                ok, why = _compile_worker(job)
                if not ok:
                    errors[i] = why
        return errors, ptxas

    # ---- running -------------------------------------------------------------------------
    def _inputs(self, kern, sizes, seed=0):
        """Random inputs, outputs filled with NaN (or -1 for integers); a
        dynamic dim takes its size from `sizes` (what tune() was given)."""
        import numpy as np
        rng = np.random.default_rng(seed)
        host = []
        for a in kern.args:
            shape = []
            for n, d in zip(a.shape, a.dims):
                if n is None and d not in sizes:
                    raise ValueError(f"argument '{a.name}': dimension '{d}' is given at run time: pass "
                                     f"{d}=... to tune() / best() for the inputs it is tuned on")
                shape.append(n if n is not None else int(sizes[d]))
            if a.dtype in ("f16", "f32", "bf16"):
                x = rng.uniform(-1, 1, shape).astype(np.float32)
                if a.is_output:
                    x[...] = np.nan
                if a.dtype == "f16":
                    x = x.astype(np.float16)
                elif a.dtype == "bf16":
                    x = (x.view(np.uint32) >> 16).astype(np.uint16)
            elif a.dtype in ("f8e4m3", "f8e5m2"):
                x = _f8_bytes(rng, shape, 3 if a.dtype == "f8e4m3" else 2)
                if a.is_output:
                    x[...] = 0x7F if a.dtype == "f8e4m3" else 0x7F  # NaN
            elif a.dtype in ("i32", "i8"):
                t = np.int32 if a.dtype == "i32" else np.int8
                x = rng.integers(-8, 8, shape).astype(t) if not a.is_output else np.full(shape, -1, t)
            else:
                x = rng.integers(0, 2, shape).astype(np.bool_)
            host.append(np.ascontiguousarray(x))
        if self.target == "sim":
            return host
        import torch
        dt = {"f16": torch.float16, "f32": torch.float32, "i32": torch.int32, "i8": torch.int8,
              "i1": torch.bool, "f8e4m3": torch.uint8, "f8e5m2": torch.uint8}
        out = []
        for a, x in zip(kern.args, host):
            if a.dtype == "bf16":
                out.append(torch.from_numpy(x.view(np.int16)).view(torch.bfloat16).cuda())
            else:
                out.append(torch.from_numpy(x).to("cuda", dt[a.dtype]))
        return out

    @staticmethod
    def _to_numpy(x):
        import numpy as np
        if isinstance(x, np.ndarray):
            return x
        if str(x.dtype) == "torch.bfloat16":
            x = x.view(dtype=__import__("torch").int16)
        return x.cpu().numpy()

    def _outputs(self, kern, args):
        import numpy as np
        outs = []
        for a, x in zip(kern.args, args):
            if a.is_output:
                y = self._to_numpy(x)
                if a.dtype == "bf16":
                    y = (y.astype(np.uint16).astype(np.uint32) << 16).view(np.float32)
                elif a.dtype in ("f8e4m3", "f8e5m2"):
                    y = _f8_values(y.astype(np.uint8), 3 if a.dtype == "f8e4m3" else 2)
                outs.append((a, y.astype(np.float64)))
        return outs

    @staticmethod
    def _differ(a, got, want, tol):
        """The relative difference of got from want, inf when their NaNs
        differ; and whether it is within tolerance tol."""
        import numpy as np
        gn, wn = ~np.isfinite(got), ~np.isfinite(want)
        if (gn != wn).any() or (gn & (got != want) & ~(np.isnan(got) & np.isnan(want))).any():
            return math.inf, False
        g, w = got[~gn], want[~wn]
        norm = float(np.linalg.norm(w))
        d = float(np.linalg.norm(g - w)) / norm if norm else float(np.linalg.norm(g - w))
        return d, d <= tol

    def _time(self, kern, args):
        if self.bench is not None:
            return float(self.bench(kern, args))
        if self.target == "sim":
            t = time.perf_counter()
            kern(*args)
            return (time.perf_counter() - t) * 1e3
        import torch
        for _ in range(self.warmup):
            kern(*args)
        ts = []
        for _ in range(self.rep):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            kern(*args)
            e.record()
            e.synchronize()
            ts.append(s.elapsed_time(e))
        ts.sort()
        return ts[len(ts) // 2]

    def _sync(self):
        if self.target != "sim":
            import torch
            torch.cuda.synchronize()

    # ---- tuning ----------------------------------------------------------------------------
    def tune(self, **sizes):
        """Tunes the key of `sizes` (again, whatever is stored); returns the
        results, fastest correct first."""
        key = self._key(sizes)
        n = len(self.configs)
        t0 = time.perf_counter()
        errors, ptxas = self._compile_all(sizes)
        self.progress(f"wavec.autotune {self.kernel} {dict(zip(self.key, key))}: {n} configurations compiled "
                      f"in {time.perf_counter() - t0:.1f} s ({n - len(errors)} ok)")
        results, want, args0, kernels = [], None, None, {}
        for i, config in enumerate(self.configs):
            tag = f"  [{i + 1}/{n}] {_describe(config)}:"
            if i in errors:
                results.append(Result(config, "compile error", error=errors[i]))
                self.progress(f"{tag} compile error: {errors[i].splitlines()[0]}")
                continue
            try:
                kern = self._compile(config, sizes, ptxas=ptxas)
                if args0 is None:
                    args0 = self._inputs(kern, {**self.defines, **sizes})
                args = [x.copy() if hasattr(x, "copy") and not hasattr(x, "clone") else x.clone() for x in args0]
                kern(*args)
                self._sync()
            except Exception as e:
                results.append(Result(config, "run error", error=f"{type(e).__name__}: {e}"))
                self.progress(f"{tag} run error: {str(e).splitlines()[0] if str(e) else type(e).__name__}")
                continue
            got = self._outputs(kern, args)
            if want is None:
                if self.reference is not None:
                    ref_args = [x.copy() if hasattr(x, "copy") and not hasattr(x, "clone") else x.clone()
                                for x in args0]
                    self.reference(*ref_args)
                    want = self._outputs(kern, ref_args)
                else:
                    want = got  # the first configuration that ran is the reference
            worst, ok = 0.0, True
            for (a, g), (_, w) in zip(got, want):
                d, fits = self._differ(a, g, w, _tolerance(kern, a))
                worst, ok = max(worst, d), ok and fits
            if not ok:
                results.append(Result(config, "numbers differ", error=worst))
                self.progress(f"{tag} rejected: its numbers differ from the reference's (relative {worst:.3g})")
                continue
            ms = self._time(kern, args)
            results.append(Result(config, "ok", ms=ms, error=worst))
            kernels[i] = kern
            self.progress(f"{tag} {ms:.4f} ms (relative difference {worst:.2g})")
        good = sorted((r for r in results if r.status == "ok"), key=lambda r: r.ms)
        if not good:
            raise RuntimeError(f"wavec.autotune {self.kernel}: no configuration compiled, ran and agreed "
                               f"({', '.join(sorted(set(r.status for r in results)))})")
        best = good[0]
        self.progress(f"wavec.autotune {self.kernel}: best {_describe(best.config)} ({best.ms:.4f} ms)")
        ranked = good + [r for r in results if r.status != "ok"]
        self.results[key] = ranked
        self._best[key] = (best.config, kernels[self.configs.index(best.config)])
        self._store(key, best.config, best.ms)
        return ranked

    def best_config(self, **sizes):
        """The chosen configuration for the key of `sizes`: from this
        process, else from the disk cache, else tuned now."""
        key = self._key(sizes)
        if key in self._best:
            return self._best[key][0]
        stored = self._stored(key)
        if stored is not None:
            return stored
        self.tune(**sizes)
        return self._best[key][0]

    def best(self, **sizes):
        """The Kernel of the chosen configuration for `sizes` (see
        best_config)."""
        key = self._key(sizes)
        if key not in self._best:
            config = self.best_config(**sizes)
            if key not in self._best:  # stored by an earlier process
                self._best[key] = (config, self._compile(config, sizes,
                                                         ptxas=self.target not in ("sim", "auto") and _ptxas_found()))
        return self._best[key][1]

    def __call__(self, *args, **sizes):
        """best(**sizes)(*args)."""
        return self.best(**sizes)(*args)


def autotune(source, kernel, configs, key=(), target="auto", **kwargs):
    """The Autotuner of `kernel` in `source` over `configs` (dicts of
    definitions, each with an optional "hardware" dict), choosing per key
    (the values of the definitions named in `key`, given to best()).
    Options: workers (compile processes), warmup and rep (timing: median of
    rep CUDA-event timings after warmup launches), reference (a function of
    the arguments that writes the expected outputs; default: the first
    configuration that runs), bench (a function (kernel, args) -> ms that
    replaces the timing), progress (a function taking one line), cache
    (False: do not read or store choices); other keyword arguments are fixed
    definitions."""
    return Autotuner(source, kernel, configs, key=key, target=target, **kwargs)
