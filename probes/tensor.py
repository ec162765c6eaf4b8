"""Tensor-core matrix products: fp16, bf16 and tf32 through cublasGemmEx (CuPy's cuBLAS handle),
fp8 (e4m3) and int8 through cuBLASLt (TN layout), square sizes, hash-random inputs.

Each figure is the best over the sizes tried of the best of N short bursts (the median burst is
kept beside it, and the bursts' spread is the figure's spread); the datasheet is the catalog's dense peak and the
same-run reference is PyTorch (torch.matmul, _scaled_mm, _int_mm) at the same sizes."""

from __future__ import annotations

import contextlib
import time
from typing import Any

import numpy as np

from gpuadvisor.core.results import ProbeResult, Status
from probes import cublaslt as L
from probes.base import ProbeContext, compiled, measurement
from probes.timing import ProbeSkipped, ProbeTimeout, Timing, gpu_burst, interleaved_bursts, time_gpu, torch_burst

NAME = "tensor"

FILL_SOURCE = r"""
__device__ __forceinline__ unsigned int mix(unsigned long long i, unsigned int seed) {
    unsigned long long x = (i + 1) * 0x9E3779B97F4A7C15ull ^ ((unsigned long long)seed * 0xBF58476D1CE4E5B9ull);
    x ^= x >> 31; x *= 0x94D049BB133111EBull; x ^= x >> 29; x *= 0xBF58476D1CE4E5B9ull; x ^= x >> 32;
    return (unsigned int)x;
}
#define LOOP for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; \
                  i += (long long)gridDim.x * blockDim.x)
extern "C" __global__ void fill_f32(float* p, long long n, unsigned int seed) {
    LOOP { unsigned int h = mix(i, seed); p[i] = (float)(h >> 8) * (2.0f / 16777216.0f) - 1.0f; }
}
extern "C" __global__ void fill_bf16(unsigned short* p, long long n, unsigned int seed) {
    LOOP { unsigned int h = mix(i, seed); float v = (float)(h >> 8) * (2.0f / 16777216.0f) - 1.0f;
           p[i] = (unsigned short)(__float_as_uint(v) >> 16); }
}
extern "C" __global__ void fill_f16(unsigned short* p, long long n, unsigned int seed) {
    LOOP { unsigned int h = mix(i, seed);  /* sign | exponent 10..15 (2^-5..2^0) | random mantissa */
           p[i] = (unsigned short)(((h >> 31) << 15) | ((10u + (h >> 12) % 6u) << 10) | (h & 0x3FFu)); }
}
extern "C" __global__ void fill_e4m3(unsigned char* p, long long n, unsigned int seed) {
    LOOP { unsigned int h = mix(i, seed);  /* sign | exponent 4..8 (2^-3..2^1) | random mantissa */
           p[i] = (unsigned char)(((h >> 31) << 7) | ((4u + (h >> 12) % 5u) << 3) | (h & 7u)); }
}
extern "C" __global__ void fill_i8(signed char* p, long long n, unsigned int seed) {
    LOOP { p[i] = (signed char)(mix(i, seed) >> 24); }
}
"""

# dtype -> (minimum compute capability, element bytes of A/B, output bytes, catalog unit)
DTYPES: dict[str, tuple[float, int, int, str]] = {
    "fp16": (7.0, 2, 2, "TFLOP/s"),
    "bf16": (8.0, 2, 2, "TFLOP/s"),
    "tf32": (8.0, 4, 4, "TFLOP/s"),
    "fp8": (8.9, 1, 2, "TFLOP/s"),
    "int8": (7.5, 1, 4, "TOPS"),
}
TOLERANCE = {"fp16": 1e-2, "bf16": 1e-2, "tf32": 2e-3, "fp8": 1e-2, "int8": 0.0}
WORKSPACE = 64 << 20
QUICK_NO_REFERENCE = "PyTorch reference in --full only"


def e4m3_table() -> np.ndarray:
    b = np.arange(256)
    s = np.where(b >> 7, -1.0, 1.0)
    e = (b >> 3) & 15
    m = b & 7
    v = np.where(e == 0, m / 8 * 2.0**-6, (1 + m / 8) * 2.0 ** (e - 7))
    v = np.where((e == 15) & (m == 7), np.nan, v)
    return s * v


def decode(dtype: str, raw: np.ndarray) -> np.ndarray:
    """Host float64 values of a device buffer (raw bytes as the kernel wrote them)."""
    if dtype == "bf16":
        return (raw.view(np.uint16).astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    if dtype == "fp16":
        return raw.view(np.float16).astype(np.float64)
    if dtype == "fp8":
        return e4m3_table()[raw.view(np.uint8)]
    if dtype == "int8":
        return raw.view(np.int8).astype(np.float64)
    return raw.view(np.float32).astype(np.float64)


def rel_error(out: np.ndarray, ref: np.ndarray) -> float:
    if not np.all(np.isfinite(out)):
        return float("inf")
    return float(np.linalg.norm(out - ref) / max(np.linalg.norm(ref), 1e-300))


# cuBLASLt configurations to try, in order, until one runs and passes the check at n=512
LT_VARIANTS: dict[str, list[dict[str, Any]]] = {
    "fp8": [  # scale pointers on separate allocations: an offset of 4 bytes into one was refused (status 15)
        {"name": "e4m3 TN -> bf16, scale pointers, C=null", "out": "bf16", "scales": "separate", "c_null": True},
        {"name": "e4m3 TN -> bf16, scale pointers, C=D", "out": "bf16", "scales": "separate", "c_null": False},
        {"name": "e4m3 TN -> bf16, no scale pointers", "out": "bf16", "scales": False, "c_null": True},
        {"name": "e4m3 TN -> fp32, scale pointers", "out": "fp32", "scales": "separate", "c_null": True},
    ],
    "int8": [
        {"name": "s8 TN -> s32 (cuBLASLt), C=null", "out": "int32", "c_null": True},
        {"name": "s8 TN -> s32 (cuBLASLt), C=D", "out": "int32", "c_null": False},
        {"name": "s8 TN -> s32 (cublasGemmEx)", "out": "int32", "gemmex": True},
    ],
}
OUT_BYTES = {"bf16": 2, "fp32": 4, "int32": 4, "fp16": 2, "tf32": 4}


class Gemm:
    """One library path for one dtype: set up buffers for size n, run, read back."""

    def __init__(self, ctx: ProbeContext, dtype: str, fill: Any, lt: L.CublasLt | None) -> None:
        self.ctx, self.cp, self.dtype, self.fill, self.lt = ctx, ctx.cp, dtype, fill, lt
        self.plan: L.Plan | None = None
        self.algo = 0
        self.variant: dict[str, Any] = {"name": "cublasGemmEx", "out": {"tf32": "fp32"}.get(dtype, dtype)}
        self.lt_path = dtype in LT_VARIANTS
        self.tried: list[str] = []
        self.A: Any = None  # CuPy device buffers (an untyped library): set by setup()
        self.B: Any = None
        self.C: Any = None

    def choose_variant(self, n: int = 512) -> float:
        """Find the first configuration that runs and computes the right product; returns its error."""
        variants = LT_VARIANTS.get(self.dtype) or [self.variant]
        for v in variants:
            self.variant = v
            self.lt_path = self.dtype in LT_VARIANTS and not v.get("gemmex")
            try:
                self.setup(n)
                err = self.check()
            except Exception as e:
                if type(e).__name__ == "ProbeTimeout":
                    raise
                self.tried.append(f"{v['name']}: {type(e).__name__}: {' '.join(str(e).split())[:160]}")
                continue
            if err <= TOLERANCE[self.dtype]:
                return err
            self.tried.append(f"{v['name']}: relative error {err:.2e} > {TOLERANCE[self.dtype]:.0e}")
        raise RuntimeError(f"no working {self.dtype} configuration: " + "; ".join(self.tried))

    def setup(self, n: int, max_algos: int = 1) -> None:
        cp, dt = self.cp, self.dtype
        _, ab, _, _ = DTYPES[dt]
        out = self.variant["out"]
        self.n = n
        self.close_plan()
        self.A = self.B = self.C = None
        self.A = cp.empty(n * n * ab, dtype=cp.uint8)
        self.B = cp.empty(n * n * ab, dtype=cp.uint8)
        self.C = cp.empty(n * n * OUT_BYTES[out], dtype=cp.uint8)
        cp.cuda.runtime.memset(self.C.data.ptr, 0xFF, self.C.nbytes)  # poisoned: NaN / -1 where unwritten
        kname = {"fp16": "fill_f16", "bf16": "fill_bf16", "tf32": "fill_f32", "fp8": "fill_e4m3", "int8": "fill_i8"}
        k = self.fill[kname[dt]]
        for buf, seed in ((self.A, 11 + n), (self.B, 29 + n)):
            k((self.ctx.props.get("multiprocessor_count", 1) * 16,), (256,), (buf, cp.int64(n * n), cp.uint32(seed)))
        if dt == "int8":
            self.alpha, self.beta = np.array([1], np.int32), np.array([0], np.int32)
        else:
            self.alpha, self.beta = np.array([1.0], np.float32), np.array([0.0], np.float32)
        self.stream = cp.cuda.get_current_stream().ptr
        if self.lt_path:
            if self.lt is None:
                raise ProbeSkipped("cuBLASLt not available")
            if getattr(self, "ws", None) is None:
                self.ws = cp.empty(WORKSPACE, dtype=cp.uint8)
            otype = {"bf16": L.CUDA_R_16BF, "fp32": L.CUDA_R_32F, "int32": L.CUDA_R_32I}[out]
            if dt == "fp8":
                self.scale = cp.asarray(np.ones(1, dtype=np.float32))
                kw: dict[str, Any] = dict(a_type=L.CUDA_R_8F_E4M3, b_type=L.CUDA_R_8F_E4M3, c_type=otype,
                                          d_type=otype, compute=L.CUBLAS_COMPUTE_32F, scale_type=L.CUDA_R_32F)
                if self.variant.get("scales"):
                    self.scale_b = cp.asarray(np.ones(1, dtype=np.float32))
                    kw.update(a_scale_ptr=self.scale.data.ptr, b_scale_ptr=self.scale_b.data.ptr)
            else:
                kw = dict(a_type=L.CUDA_R_8I, b_type=L.CUDA_R_8I, c_type=otype, d_type=otype,
                          compute=L.CUBLAS_COMPUTE_32I, scale_type=L.CUDA_R_32I)
            self.plan = L.Plan(self.lt, n, n, n, transa=L.OP_T, transb=L.OP_N, workspace_ptr=self.ws.data.ptr,
                               workspace_bytes=WORKSPACE, max_algos=max_algos, **kw)
            self.algo = 0
        else:
            from cupy.cuda import cublas

            self.cublas = cublas
            self.handle = cp.cuda.device.get_cublas_handle()
            cublas.setStream(self.handle, self.stream)
            cublas.setPointerMode(self.handle, 0)  # host pointers for alpha and beta
            if dt == "int8":
                self.types = (L.CUDA_R_8I, L.CUDA_R_32I, L.CUBLAS_COMPUTE_32I, 1)  # TN
            else:
                t = {"fp16": L.CUDA_R_16F, "bf16": L.CUDA_R_16BF, "tf32": L.CUDA_R_32F}[dt]
                comp = L.CUBLAS_COMPUTE_32F_FAST_TF32 if dt == "tf32" else L.CUBLAS_COMPUTE_32F
                self.types = (t, t, comp, 0)  # NN

    @property
    def n_algos(self) -> int:
        return len(self.plan.algos) if self.plan is not None else 1

    @property
    def transposed_a(self) -> bool:
        return self.plan is not None or self.types[3] == 1

    def __call__(self) -> None:
        n = self.n
        if self.plan is not None:
            c_ptr = 0 if self.variant.get("c_null") else self.C.data.ptr
            self.plan(self.alpha.ctypes.data, self.A.data.ptr, self.B.data.ptr, self.beta.ctypes.data,
                      c_ptr, self.C.data.ptr, self.stream, self.algo)
        else:
            tin, tout, comp, ta = self.types
            self.cublas.gemmEx(self.handle, ta, 0, n, n, n, self.alpha.ctypes.data, self.A.data.ptr, tin, n,
                               self.B.data.ptr, tin, n, self.beta.ctypes.data, self.C.data.ptr, tout, n, comp, -1)

    def check(self) -> float:
        """Relative error of the product against float64 NumPy (layouts per path)."""
        cp, n, dt = self.cp, self.n, self.dtype
        self()
        cp.cuda.get_current_stream().synchronize()
        a = decode(dt, cp.asnumpy(self.A)).reshape(n, n)
        b = decode(dt, cp.asnumpy(self.B)).reshape(n, n)
        out = self.variant["out"]
        raw = cp.asnumpy(self.C)
        c = raw.view(np.int32).astype(np.float64) if out == "int32" else decode(out, raw)
        c = c.reshape(n, n).T  # column-major m x n
        op_a = a if self.transposed_a else a.T  # TN: A stored k x m column-major == row-major m x k
        ref = op_a @ b.T
        return rel_error(c, ref)

    def close_plan(self) -> None:
        if self.plan is not None:
            self.plan.close()
            self.plan = None

    def close(self) -> None:
        self.close_plan()
        for name in ("A", "B", "C", "ws", "scale", "scale_b"):
            if hasattr(self, name):
                setattr(self, name, None)


def torch_on_buffers(torch: Any, g: Gemm) -> Any:
    """PyTorch's product for this dtype on the same device buffers (via DLPack), as a callable."""
    n, dt = g.n, g.dtype
    a_raw, b_raw = torch.from_dlpack(g.A), torch.from_dlpack(g.B)
    if dt in ("fp16", "bf16", "tf32"):
        tdt = {"fp16": torch.float16, "bf16": torch.bfloat16, "tf32": torch.float32}[dt]
        a, b = a_raw.view(tdt).view(n, n), b_raw.view(tdt).view(n, n)
        out = torch.empty(n, n, device=a.device, dtype=tdt)
        return lambda: torch.matmul(a, b, out=out)
    # fp8 / int8: A row-major (m x k), B column-major (k x n), as cuBLASLt's TN wants
    if dt == "fp8":
        f8 = torch.float8_e4m3fn
        a, b = a_raw.view(f8).view(n, n), b_raw.view(f8).view(n, n).t()
        one = torch.ones((), device=a.device, dtype=torch.float32)
        return lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
    a, b = a_raw.view(torch.int8).view(n, n), b_raw.view(torch.int8).view(n, n).t()
    return lambda: torch._int_mm(a, b)


def _with_tf32(torch: Any, allow: bool, fn: Any) -> Any:
    """fn with PyTorch's tf32 switch set for it (on only for the tf32 reference), restored after."""

    def call() -> float:
        before = torch.backends.cuda.matmul.allow_tf32
        try:
            torch.backends.cuda.matmul.allow_tf32 = allow
            return fn()
        finally:
            torch.backends.cuda.matmul.allow_tf32 = before

    return call


def sizes(dtype: str, quick: bool) -> list[int]:
    """Square sizes to try: 8192, and in --full also 16384 for the 8-bit types only. On an H100 (the runs
    before this rule: lab/data/h100-probe-time/probe-time.tgz) 16384 raised fp8's best by 3-6 % (an 8192 fp8
    GEMM lasts under a millisecond, where launch and tail weigh), fp16's by 1-2 %, and lowered bf16's and
    tf32's (the power cap); it cost ~8 s of the 15 s the probe took in --full."""
    return [8192] if quick or DTYPES[dtype][1] > 1 else [8192, 16384]


def prepare(ctx: ProbeContext) -> dict[str, Any]:
    """Compile the fill kernels and create the cuBLAS handle early."""
    ctx.cp.cuda.device.get_cublas_handle()
    return compiled(ctx.cp, NAME, FILL_SOURCE, ("fill_f32", "fill_bf16", "fill_f16", "fill_e4m3", "fill_i8"))


def run(ctx: ProbeContext) -> ProbeResult:
    cp = ctx.gpu()
    t0 = time.perf_counter()
    props = ctx.props
    cc = float(props.get("compute_capability") or 0)
    # GEMMs per burst and bursts per figure: short bursts with pauses (see probes.timing.Bursts)
    per_burst = int(ctx.options.get(NAME, {}).get("per_burst", 5))
    n_bursts = int(ctx.options.get(NAME, {}).get("bursts", 8 if ctx.quick else 15))
    free = int(cp.cuda.runtime.memGetInfo()[0])
    fill = prepare(ctx)
    lt = lt_reason = None
    try:
        lt = L.CublasLt()
    except Exception as e:
        lt_reason = f"{type(e).__name__}: {e}"
    # the same-run PyTorch reference in --full only: importing PyTorch and starting its CUDA side cost seconds
    torch = None if ctx.quick else ctx.torch()
    no_ref = QUICK_NO_REFERENCE if ctx.quick else None
    ms, data, skipped, failed = [], {}, {}, {}
    for dt, (min_cc, ab, ob, unit) in DTYPES.items():
        if cc < min_cc:
            skipped[dt] = f"needs compute capability >= {min_cc}, device has {cc}"
            continue
        ctx.deadline.check(dt)
        g = Gemm(ctx, dt, fill, lt)
        try:
            err = g.choose_variant()
            ref_note = no_ref or ctx.torch_reason
            per_size: list[dict[str, Any]] = []
            for n in sizes(dt, ctx.quick):
                if 2 * n * n * ab + n * n * ob + WORKSPACE > 0.8 * free:
                    per_size.append({"n": n, "skipped": "does not fit in free memory"})
                    continue
                ctx.deadline.check(f"{dt} n={n}")
                g.setup(n, max_algos=1 if ctx.quick else 4)
                best: tuple[int, Timing | None] | None = (0, None) if g.n_algos == 1 else None
                for algo in range(g.n_algos if g.n_algos > 1 else 0):
                    g.algo = algo
                    try:
                        t = time_gpu(cp, g, warmup=2, repeats=3, deadline=ctx.deadline, what=f"{dt} n={n}")
                    except ProbeTimeout:
                        raise
                    except Exception:  # an algorithm the heuristic offered but that fails here
                        continue
                    if best is None or best[1] is None or t.median_ms < best[1].median_ms:
                        best = (algo, t)
                if best is None:
                    raise RuntimeError(f"no {dt} algorithm ran at n={n}")
                g.algo = best[0]
                row: dict[str, Any] = {"n": n, "algo": best[0], "algos_offered": g.n_algos}
                # ours and PyTorch's on the same input buffers, burst for burst, so that both see
                # the same data (power draw depends on it) and the same thermal and power-cap state
                tfn = None
                if torch is not None and ref_note is None:
                    try:
                        tfn = torch_on_buffers(torch, g)
                    except Exception as e:
                        ref_note = f"PyTorch {dt} failed: {type(e).__name__}: {' '.join(str(e).split())[:200]}"
                runners = {"ours": gpu_burst(cp, g, per_burst)}
                if tfn is not None:
                    runners["torch"] = _with_tf32(torch, dt == "tf32", torch_burst(torch, tfn, per_burst))
                errors: dict[str, str] = {}
                res = interleaved_bursts(runners, bursts=n_bursts, gap_s=0.02, warmup=1, deadline=ctx.deadline,
                                         what=f"{dt} n={n}", optional=("torch",), errors=errors)
                if "torch" in errors:
                    ref_note = f"PyTorch {dt} failed: {errors['torch']}"
                b = res["ours"]
                flop = 2.0 * n**3
                row.update(tflops=b.rate(flop, 1e12), median_tflops=b.rate(flop, 1e12, "median"), spread=b.spread,
                           median_ms=b.median_ms, best_ms=b.best_ms, bursts=len(b.ms_per_op), per_burst=per_burst)
                if "torch" in res:
                    tt = res["torch"]
                    row.update(torch_tflops=tt.rate(flop, 1e12), torch_median_tflops=tt.rate(flop, 1e12, "median"),
                               torch_spread=tt.spread)
                per_size.append(row)
                del tfn
                if torch is not None:
                    with contextlib.suppress(Exception):
                        torch.cuda.empty_cache()
            g.close()
            ctx.free_pools()
            done = [r for r in per_size if "tflops" in r]
            if not done:
                skipped[dt] = "no size fits in free memory"
                continue
            top = max(done, key=lambda r: r["tflops"])
            refs = [r["torch_tflops"] for r in done if "torch_tflops" in r]
            peak = ctx.card.tensor_tflops(dt) if ctx.card is not None else None
            ms.append(measurement(
                f"tensor.{dt}", f"Tensor {dt} GEMM ({'cuBLASLt' if dt in ('fp8', 'int8') else 'cuBLAS'})",
                top["tflops"], unit, spread=top["spread"],
                datasheet=(peak, "catalog (dense)") if peak else (None, None),
                reference=max(refs) if refs else None,
                reference_label={"fp8": "torch._scaled_mm", "int8": "torch._int_mm"}.get(dt, "torch.matmul"),
                n=top["n"], rel_error_n512=err, sizes=per_size, reference_note=ref_note if not refs else None,
                median=top["median_tflops"], bursts=top["bursts"], per_burst=top["per_burst"],
                how="best of short bursts (median beside it); spread = (max - min) / median over the bursts",
                library_path=g.variant["name"], configurations_failed=g.tried or None,
            ))
            data[dt] = per_size
        except ProbeTimeout:
            raise
        except Exception as e:
            failed[dt] = f"{type(e).__name__}: {' '.join(str(e).split())[:400]}"
        finally:
            g.close()
    if lt is not None:
        lt.close()
    ctx.free_pools()
    status: Status = "ok" if ms else ("failed" if failed else "skipped")
    notes = [f"{k} skipped: {v}" for k, v in skipped.items()] + [f"{k} failed: {v}" for k, v in failed.items()]
    return ProbeResult(probe=NAME, status=status, duration_s=time.perf_counter() - t0, measurements=ms,
                       data={"sizes": data, "skipped": skipped, "failed": failed, "cublaslt_reason": lt_reason,
                             "cublaslt_path": getattr(lt, "path", None),
                             "cublaslt_version": getattr(lt, "version", None)},
                       reason="; ".join(notes) or None)
