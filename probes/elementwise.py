"""Streaming ops through PyTorch in bf16, as fractions of the copy bandwidth measured in the same bursts:
an elementwise add, a layer norm over rows of 4096 (a row reduction, then the normalisation), a
training-mode batch norm over a channels-last 56x56x64 activation (statistics, then the normalisation)
and a softmax over rows of 4096 (a reduction).

Bytes are counted as the op cost model counts a traced op's (gpuadvisor/estimate/opcost.py): each input
read once and each output written once, so the fraction of the copy bandwidth folds in the extra passes a
kernel makes (a norm's statistics). Tensors are 256 MiB or so, far past L2, on random data; each figure
is the best of short bursts. PyTorch is imported only inside this probe; the probe runs in --full.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from gpuadvisor.core.results import ProbeResult
from probes.base import ProbeContext, cuda_torch, measurement
from probes.timing import interleaved_bursts, torch_burst

NAME = "elementwise"
ROW = 4096
ELEMENTS = 128 << 20  # bf16 elements per tensor: 256 MiB

# key -> (label, the op-cost class it stands for)
OPS = {
    "add": ("Elementwise add bf16 (PyTorch)", "elementwise"),
    "layer_norm": (f"Layer norm bf16, rows of {ROW} (PyTorch)", "norm"),
    "batch_norm": ("Batch norm bf16, training, NHWC 56x56x64 (PyTorch)", "norm"),
    "softmax": (f"Softmax bf16, rows of {ROW} (PyTorch)", "reduction"),
}


def ops(torch: Any, elements: int, gen: Any) -> dict[str, tuple[Callable[[], Any], float, Callable[[], float]]]:
    """Each op as (the call, bytes it must move, its relative error against float64 on a slice)."""
    import torch.nn.functional as F

    bf = torch.bfloat16
    rows = elements // ROW

    def rand(*shape: int) -> Any:
        return torch.randn(*shape, device="cuda", generator=gen).to(bf)

    a, b = rand(elements), rand(elements)
    out = torch.empty_like(a)
    x = rand(rows, ROW)
    w, bias = rand(ROW), rand(ROW)
    ch = 64
    nb = max(1, elements // (ch * 56 * 56))
    img = rand(nb, ch, 56, 56).contiguous(memory_format=torch.channels_last)
    gamma, beta = rand(ch), rand(ch)  # all in bf16, as in a model cast with .to(torch.bfloat16)
    mean, var = torch.zeros(ch, device="cuda", dtype=bf), torch.ones(ch, device="cuda", dtype=bf)
    e2 = 2.0  # bytes per bf16 element

    def rel(got: Any, ref: Any) -> float:
        got = got.double()
        if not bool(torch.isfinite(got).all()):
            return float("inf")
        return float((got - ref).norm() / ref.norm().clamp_min(1e-300))

    def err_add() -> float:
        return rel(torch.add(a[:4096], b[:4096]), a[:4096].double() + b[:4096].double())

    def err_ln() -> float:
        xs = x[:64].double()
        return rel(F.layer_norm(x[:64], (ROW,), w, bias), F.layer_norm(xs, (ROW,), w.double(), bias.double()))

    def err_bn() -> float:
        part = img[:8]
        got = F.batch_norm(part, mean.clone(), var.clone(), gamma, beta, training=True)
        ref = F.batch_norm(part.double(), None, None, gamma.double(), beta.double(), training=True)
        return rel(got, ref)

    def err_sm() -> float:
        return rel(torch.softmax(x[:64], dim=-1), torch.softmax(x[:64].double(), dim=-1))

    n_img = img.numel()
    return {
        "copy": (lambda: out.copy_(a), 2 * e2 * elements, lambda: rel(out.copy_(a)[:4096], a[:4096].double())),
        "add": (lambda: torch.add(a, b, out=out), 3 * e2 * elements, err_add),
        "layer_norm": (lambda: F.layer_norm(x, (ROW,), w, bias), 2 * e2 * x.numel() + 2 * e2 * ROW, err_ln),
        "batch_norm": (lambda: F.batch_norm(img, mean, var, gamma, beta, training=True, momentum=0.0),
                       2 * e2 * n_img + 2 * e2 * ch, err_bn),
        "softmax": (lambda: torch.softmax(x, dim=-1), 2 * e2 * x.numel(), err_sm),
    }


TOLERANCE = 2e-2  # bf16 results against float64


def run(ctx: ProbeContext) -> ProbeResult:
    t0 = time.perf_counter()
    torch = cuda_torch(ctx)
    opts = ctx.options.get(NAME, {})
    elements = int(opts.get("elements", ELEMENTS))
    free = torch.cuda.mem_get_info()[0]
    elements = max(ROW * 64, min(elements, int(free * 0.5 / 2 / 6)) // ROW * ROW)  # six tensors or so, in bf16
    bursts, per_burst = int(opts.get("bursts", 6)), int(opts.get("per_burst", 4))
    gen = torch.Generator(device="cuda")
    gen.manual_seed(23)
    rows: dict[str, dict[str, Any]] = {}
    with torch.no_grad():
        table = ops(torch, elements, gen)
        for key, (_, _, err) in table.items():
            e = err()
            if not e <= TOLERANCE:
                raise RuntimeError(f"{key}: relative error {e:.1e} > {TOLERANCE:.0e} against float64")
            rows[key] = {"rel_error": e}
        ctx.deadline.check("correctness checks")
        res = interleaved_bursts({k: torch_burst(torch, fn, per_burst) for k, (fn, _, _) in table.items()},
                                 bursts=bursts, gap_s=0.0, warmup=1, deadline=ctx.deadline, what="streaming ops",
                                 min_bursts=2)
    for key, (_, nbytes, _) in table.items():
        b = res[key]
        rows[key].update(gbs=b.rate(nbytes, 1e9), median_gbs=b.rate(nbytes, 1e9, "median"), spread=b.spread,
                         best_ms=b.best_ms, bytes=nbytes)
    del table
    torch.cuda.empty_cache()
    copy = rows["copy"]["gbs"]
    ms = [measurement("elementwise.copy", "Copy bf16 (PyTorch copy_)", copy, "GB/s", spread=rows["copy"]["spread"],
                      bytes_counted="read + write", elements=elements)]
    for key, (label, cls) in OPS.items():
        r = rows[key]
        ms.append(measurement(f"elementwise.{key}", label, r["gbs"], "GB/s", spread=r["spread"], reference=copy,
                              reference_label="PyTorch copy_ bf16 (same bursts)", op_class=cls,
                              fraction_of_copy=r["gbs"] / copy,
                              bytes_counted="each input read once, each output written once"))
    return ProbeResult(probe=NAME, status="ok", duration_s=time.perf_counter() - t0, measurements=ms,
                       data={"ops": rows, "elements": elements, "row": ROW, "torch": torch.__version__})
