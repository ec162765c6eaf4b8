"""Convolutions through cuDNN (PyTorch's conv2d, forward), per dtype (bf16, fp16) and layout (NHWC,
NCHW), on the shapes CNNs spend their time in: ResNet's 3x3 convolutions at 56x56x64 and 14x14x256, a 1x1
expansion (64 -> 256 at 56x56) and ConvNeXt's depthwise 7x7 at 56x56x96, batch 256 (512 for the 14x14
shape), random data.

The op cost model (gpuadvisor/estimate/opcost.py) costs a dense convolution as an implicit GEMM at the
large-GEMM rate times an efficiency (its formula adds the shape's wave quantization and its bytes), and a
depthwise one at a fraction of the copy bandwidth; this probe measures both on the user's GPU against
references timed in the same bursts: a large torch.matmul of the same dtype (8192 x 8192 x 8192) and a
device-to-device copy (torch copy_). Each dense figure is the rate of the compute-bound shape (3x3 at
14x14x256: M = 25088, N = 256, K = 2304 as an implicit GEMM), the one whose efficiency the model's constant
stands for; the other shapes' rates and bandwidths are in its details (the 1x1 runs at memory bandwidth,
the 3x3 at 56x56x64 has 64 output channels). Best of short bursts. cuDNN picks its algorithms by
heuristics (torch.backends.cudnn.benchmark stays off, as in PyTorch's default). PyTorch is imported only
inside this probe; the probe runs in --full.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import partial
from typing import Any

from gpuadvisor.core.results import ProbeResult
from probes.base import ProbeContext, cuda_torch, measurement
from probes.timing import ProbeSkipped, interleaved_bursts, torch_burst

NAME = "conv"
DTYPES = ("bf16", "fp16")
LAYOUTS = ("nhwc", "nchw")
BATCH = 256  # per call 0.1-0.3 ms: at 128 the 14x14 shape's 55 us calls timed 15-30 % apart run to run
GEMM_N = 8192


@dataclass(frozen=True)
class Shape:
    """One forward convolution: N x C x H x W input, K filters of R x R, stride 1, 'same' padding."""

    name: str
    c: int
    hw: int
    k: int
    r: int
    groups: int = 1
    batch_scale: int = 1  # its batch is BATCH times this: short kernels need more work per call to time well

    def flops(self, n: int) -> float:
        return 2.0 * n * self.hw * self.hw * self.k * (self.c // self.groups) * self.r * self.r

    def bytes(self, n: int, elem: int = 2) -> float:
        """Input and output once each, plus the filter: what a depthwise convolution must move."""
        return float(elem * (n * self.hw * self.hw * (self.c + self.k) + self.k * (self.c // self.groups) * self.r**2))

    @property
    def depthwise(self) -> bool:
        return self.groups > 1 and self.groups == self.c


SHAPES = (
    Shape("3x3 14x14x256", 256, 14, 256, 3, batch_scale=2),  # the compute-bound one: the dense figures' value
    Shape("3x3 56x56x64", 64, 56, 64, 3),
    Shape("1x1 56x56 64->256", 64, 56, 256, 1),
    Shape("depthwise 7x7 56x56x96", 96, 56, 96, 7, groups=96),
)
TOLERANCE = 2e-2  # relative error of a bf16/fp16 convolution against float64


def _tdtype(torch: Any, dt: str) -> Any:
    return {"bf16": torch.bfloat16, "fp16": torch.float16}[dt]


def make(torch: Any, s: Shape, n: int, dt: str, layout: str, gen: Any) -> tuple[Any, Any]:
    """Random input and filter on the GPU in the dtype and memory layout asked for."""
    fmt = torch.channels_last if layout == "nhwc" else torch.contiguous_format
    x = torch.randn(n, s.c, s.hw, s.hw, device="cuda", generator=gen).to(_tdtype(torch, dt), memory_format=fmt)
    w = (torch.randn(s.k, s.c // s.groups, s.r, s.r, device="cuda", generator=gen) / (s.c // s.groups * s.r**2) ** 0.5)
    return x, w.to(_tdtype(torch, dt), memory_format=fmt)


def check(torch: Any, s: Shape, dt: str, layout: str, gen: Any) -> float:
    """Relative error of the GPU convolution against float64 on the CPU, at batch 2."""
    import torch.nn.functional as F

    x, w = make(torch, s, 2, dt, layout, gen)
    out = F.conv2d(x, w, padding=s.r // 2, groups=s.groups).double().cpu()
    ref = F.conv2d(x.double().cpu(), w.double().cpu(), padding=s.r // 2, groups=s.groups)
    if not bool(torch.isfinite(out).all()):
        return float("inf")
    return float((out - ref).norm() / ref.norm().clamp_min(1e-300))


def run(ctx: ProbeContext) -> ProbeResult:
    t0 = time.perf_counter()
    torch = cuda_torch(ctx)
    if not torch.backends.cudnn.is_available():
        raise ProbeSkipped("PyTorch has no cuDNN")
    import torch.nn.functional as F

    opts = ctx.options.get(NAME, {})
    n = int(opts.get("batch", BATCH))
    gemm_n = int(opts.get("gemm_n", GEMM_N))
    bursts, per_burst = int(opts.get("bursts", 8)), int(opts.get("per_burst", 5))
    gen = torch.Generator(device="cuda")
    gen.manual_seed(17)
    errors = {}
    for s in SHAPES:  # one check per shape, both dtypes and both layouts among them
        for dt, layout in (("bf16", "nhwc"), ("fp16", "nchw")):
            err = check(torch, s, dt, layout, gen)
            errors[f"{s.name} {dt} {layout}"] = err
            if not err <= TOLERANCE:
                raise RuntimeError(f"cuDNN {s.name} {dt} {layout}: relative error {err:.1e} > {TOLERANCE:.0e}")
    ctx.deadline.check("correctness checks")
    runners: dict[str, Any] = {}
    keep: list[Any] = []  # tensors the runners use
    with torch.no_grad():
        for dt in DTYPES:
            a = torch.randn(gemm_n, gemm_n, device="cuda", generator=gen).to(_tdtype(torch, dt))
            b = torch.randn(gemm_n, gemm_n, device="cuda", generator=gen).to(_tdtype(torch, dt))
            c = torch.empty_like(a)
            keep += [a, b, c]
            runners[f"gemm {dt}"] = torch_burst(torch, partial(torch.matmul, a, b, out=c), 2)
            for layout in LAYOUTS:
                for s in SHAPES:
                    x, w = make(torch, s, n * s.batch_scale, dt, layout, gen)
                    keep += [x, w]
                    runners[f"{s.name} {dt} {layout}"] = torch_burst(
                        torch, partial(F.conv2d, x, w, padding=s.r // 2, groups=s.groups), per_burst)
        src = torch.randn(n * 56 * 56 * 96, device="cuda", generator=gen).to(torch.bfloat16)
        dst = torch.empty_like(src)
        keep += [src, dst]
        runners["copy bf16"] = torch_burst(torch, lambda: dst.copy_(src), per_burst)
        ctx.deadline.check("setup")
        res = interleaved_bursts(runners, bursts=bursts, gap_s=0.0, warmup=1, deadline=ctx.deadline,
                                 what="convolutions", min_bursts=2)
    del keep
    torch.cuda.empty_cache()
    copy_gbs = res["copy bf16"].rate(2.0 * src.numel() * 2, 1e9)
    rows: list[dict[str, Any]] = []
    ms = []
    for dt in DTYPES:
        gemm_tflops = res[f"gemm {dt}"].rate(2.0 * gemm_n**3, 1e12)
        for layout in LAYOUTS:
            here: list[dict[str, Any]] = []
            for s in SHAPES:
                b, ns = res[f"{s.name} {dt} {layout}"], n * s.batch_scale
                here.append({"shape": s.name, "dtype": dt, "layout": layout, "batch": ns, "best_ms": b.best_ms,
                             "median_ms": b.median_ms, "spread": b.spread, "tflops": b.rate(s.flops(ns), 1e12),
                             "median_tflops": b.rate(s.flops(ns), 1e12, "median"), "gbs": b.rate(s.bytes(ns), 1e9)})
            rows += here
            top = here[0]  # SHAPES[0], the compute-bound shape
            ms.append(measurement(
                f"conv.{dt}_{layout}", f"Convolution {dt} {layout.upper()} (cuDNN, {top['shape']})", top["tflops"],
                "TFLOP/s", spread=top["spread"], reference=gemm_tflops, reference_label=f"torch.matmul {gemm_n} {dt}",
                shape=top["shape"], batch=top["batch"], median=top["median_tflops"],
                shapes={r["shape"]: {"tflops": round(r["tflops"], 1), "gbs": round(r["gbs"])} for r in here},
                how="best of short bursts, the reference GEMM in the same bursts",
            ))
    dw = next(s for s in SHAPES if s.depthwise)
    for layout in LAYOUTS:
        r = next(r for r in rows if r["shape"] == dw.name and r["dtype"] == "bf16" and r["layout"] == layout)
        ms.append(measurement(
            f"conv.depthwise_bf16_{layout}", f"Depthwise convolution bf16 {layout.upper()} (cuDNN)", r["gbs"], "GB/s",
            spread=r["spread"], reference=copy_gbs, reference_label="torch copy_ bf16 (read + write)",
            shape=dw.name, batch=r["batch"], tflops=r["tflops"], bytes_counted="input, output and filter once each",
        ))
    return ProbeResult(probe=NAME, status="ok", duration_s=time.perf_counter() - t0, measurements=ms,
                       data={"rows": rows, "rel_errors": errors, "copy_gbs": copy_gbs, "torch": torch.__version__,
                             "cudnn": torch.backends.cudnn.version(),
                             "cudnn_benchmark": bool(torch.backends.cudnn.benchmark)})
