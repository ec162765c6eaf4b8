"""The serving estimates against what one H100 measured (tests/data/serving-gpu-check.json, written on the GPU
machine by lab/device/serving_check.py). No serving engine runs there, so two things are checked:

* Hugging Face generate() end to end against the simulation's `hf` engine: time to first token and time per
  output token, batch 1 and 8, 1,000-token prompts, 200 new tokens;
* the GPU time of a prefill (PyTorch's cuBLAS GEMMs and FlashAttention, summed kernel durations) against the
  roofline iteration cost the continuous-batching engines share (the vllm profile, without its host time). The
  engines fuse the elementwise kernels that eager PyTorch runs one by one, so the estimate should sit at or
  below the eager kernels, not above.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import TESTS_DATA

DATA = TESTS_DATA / "serving-gpu-check.json"
CARD = "H100 SXM"


@dataclass(frozen=True)
class Check:
    what: str  # "TTFT" | "TPOT" | "prefill GPU"
    model: str
    conditions: str
    measured_s: float
    estimated_s: float

    @property
    def ratio(self) -> float:
        return self.estimated_s / self.measured_s


def load(path: Path = DATA) -> dict[str, Any]:
    return dict(json.loads(path.read_text()))


def checks(path: Path = DATA) -> list[Check]:
    from bench import models
    from gpuadvisor.estimate.serve.api import estimate_load, serve_setup
    from gpuadvisor.estimate.serve.lengths import Lengths
    from gpuadvisor.modelspec import resolve_model

    gpu_figures = models.hardware(CARD)
    out = []
    for name, runs in load(path)["models"].items():
        model = resolve_model(name)
        hf = serve_setup(model, gpu_figures, "hf")
        for g in runs["generate"]:
            if "error" in g:
                continue
            fig = estimate_load(hf, Lengths("fixed", g["prompt"], g["new_tokens"]), users=g["batch"],
                                requests=4 * g["batch"])["figures"]  # as `estimate --engine hf --users B`
            cond = f"batch {g['batch']}, {g['prompt']:,}-token prompt, {g['new_tokens']} new tokens"
            out.append(Check("TTFT", name, cond, g["ttft_s"], fig["ttft_s"]["p50"]))
            out.append(Check("TPOT", name, cond, g["tpot_s"], fig["tpot_s"]["p50"]))
        cost = serve_setup(model, gpu_figures, "vllm", host_s_per_iter=0.0).cost  # the step's GPU time alone
        for p in runs["prefill"]:
            t = p["tokens"]
            est = cost.iteration_s(t, t * (t + 1) / 2, 0, 0)
            out.append(Check("prefill GPU", name, f"{t:,} tokens, batch 1", p["kernel_s"], est))
    return out


def markdown(path: Path = DATA, found: list[Check] | None = None) -> str:
    """The table of `found` (the checks of `path`, run here when not given)."""
    d = load(path)
    rows = [f"| {c.what} | {c.model} | {c.conditions} | {c.measured_s * 1e3:,.1f} ms | {c.estimated_s * 1e3:,.1f} ms | "
            f"{c.ratio:.2f} |" for c in (checks(path) if found is None else found)]
    return "\n".join([
        f"Measured on {d['device']} ({d['date']}; PyTorch {d['torch']}, transformers {d['transformers']}; "
        f"references in the same run: bf16 GEMM {d['ref_gemm_tflops']:.0f} TFLOP/s, "
        f"copy {d['ref_copy_gbs']:,.0f} GB/s), "
        f"`{'tests/data/serving-gpu-check.json' if path == DATA else path}` ({d['conditions']}).", "",
        "| what | model | conditions | measured | estimated | ratio |", "|---|---|---|---:|---:|---:|", *rows, ""])

