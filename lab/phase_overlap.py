#!/usr/bin/env python3
"""How an eager training step's host and GPU times combine, phase by phase (opcost.StepTime.step_s).

For each case, three measurements (bf16 autocast, fused AdamW, as lab/measure_models.py times its steps):
  * the step as a practitioner's loop runs it: CUDA events around it (`step_s`), and the host's time to issue
    each phase, forward (with the loss), backward and optimizer (`host_s`, perf_counter around each);
  * each phase's GPU time alone (`gpu_s`): the stream held by a sleep kernel longer than the host takes to issue
    the phase, so that the GPU runs its kernels back to back once the sleep ends (events after the sleep and
    after the phase's last kernel). A phase of more kernels than the launch queue holds (about 1,024) can still
    starve: `kernels` says how many it launched.
What it checks: the step against the flow shop of those phases (the host's time through a phase boundary plus
the GPU's after it, the larger over every boundary), the larger of the two sums, and (H^8 + D^8)^(1/8).

  python3 -m lab.phase_overlap --out phase_overlap.json
"""

from __future__ import annotations

import statistics
import time
from typing import Any

from lab.results import measure_and_write

#: (spec, batch, settings): training steps from host-bound to GPU-bound, CNNs and transformers
CASES: list[tuple[str, int, dict[str, Any]]] = [
    ("timm:vit_small_patch16_224", 64, {}),
    ("timm:vit_small_patch16_224", 256, {}),
    ("torchvision:vit_b_16", 32, {}),
    ("torchvision:resnet50", 64, {"channels_last": True}),
    ("torchvision:resnet50", 256, {"channels_last": True}),
    ("torchvision:mobilenet_v3_large", 64, {"channels_last": True}),
    ("torchvision:densenet121", 32, {"channels_last": True}),
    ("timm:convnext_tiny", 64, {"channels_last": True}),
    ("hf:bert-base-uncased", 8, {"seq": 512}),
    ("hf:roberta-base", 8, {"seq": 512}),
    ("lab/models/smollm_360m.py:build", 8, {}),
    ("lab/models/torch_transformer.py:build", 32, {}),
    # a host-bound forward before a GPU-bound backward, where the flow shop and the larger of the sums part: 1,000
    # tiny ops outside autograd and two 8,192-wide GEMMs whose backward is twice their forward, in either order (not
    # run yet: added on 2026-12-08 after the run of the twelve above, and no machine started again that session)
    ("synthetic:tiny-ops-then-gemms", 8192, {}),
    ("synthetic:gemms-then-tiny-ops", 8192, {}),
]
TINY_OPS = 1000
TIMED = 10


def _sleep_cycles_per_s(torch: Any) -> float:
    """The sleep kernel's clock: cycles a second, timed with events."""
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    cycles = 50_000_000
    a.record()
    torch.cuda._sleep(cycles)
    b.record()
    b.synchronize()
    return cycles / (a.elapsed_time(b) / 1e3)


def measure(spec: str, batch: int, settings: dict[str, Any]) -> dict[str, Any]:
    import torch
    from torch.profiler import ProfilerActivity, profile

    from gpuadvisor.estimate.trace import zoo
    from probes import dispatch

    torch.backends.cudnn.benchmark = True
    if spec.startswith("synthetic:"):
        model, x = _synthetic(torch, spec, batch)
        loss_of, args, kw = (lambda out: out), (x,), {}
    else:
        with torch.device("cuda"):
            built = zoo.build(zoo.parse_ref(spec), seq=settings.get("seq", 0))
            model = built.module
            args, kw = built.make_batch(batch)
        if settings.get("channels_last"):
            model = model.to(memory_format=torch.channels_last)
        loss_of = built.loss
        args, kw = zoo.prepare_inputs((args, kw), None, bool(settings.get("channels_last")))
    model.train()
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-5, fused=True)

    def forward() -> Any:
        with torch.autocast("cuda", dtype=torch.bfloat16):
            return loss_of(model(*args, **kw))

    def optimize() -> None:
        opt.step()
        opt.zero_grad(set_to_none=True)

    def phases() -> tuple[list[float], float]:
        """One step as a loop runs it: the host's time per phase and the step's (events)."""
        ev = [torch.cuda.Event(enable_timing=True) for _ in range(2)]
        ev[0].record()
        t0 = time.perf_counter()
        loss = forward()
        t1 = time.perf_counter()
        loss.backward()
        t2 = time.perf_counter()
        optimize()
        t3 = time.perf_counter()
        ev[1].record()
        ev[1].synchronize()
        return [t1 - t0, t2 - t1, t3 - t2], ev[0].elapsed_time(ev[1]) / 1e3

    def run_phase(k: int, loss: Any) -> Any:
        """Phase k of a step (0 the forward with the loss, 1 the backward, 2 the optimizer): the loss it leaves."""
        if k == 0:
            return forward()
        if k == 1:
            loss.backward()
        else:
            optimize()
        return loss

    def gpu_alone(hold_s: float, cycles_per_s: float) -> list[float]:
        """Each phase's GPU time with the stream held while the host issues it."""
        out = []
        loss = None
        for k in range(3):
            torch.cuda.synchronize()
            torch.cuda._sleep(int(hold_s * cycles_per_s))
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            loss = run_phase(k, loss)
            b.record()
            b.synchronize()
            out.append(a.elapsed_time(b) / 1e3)
        return out

    for _ in range(3):
        phases()
    probe = dispatch.measure(torch, repeats=3)["op_s"]  # this host's dispatch speed (the tool's --probe figure)
    cycles_per_s = _sleep_cycles_per_s(torch)
    steps = [phases() for _ in range(TIMED)]
    host = [statistics.median(s[0][k] for s in steps) for k in range(3)]
    hold = 2.0 * max(host) + 0.01
    gpu_runs = [gpu_alone(hold, cycles_per_s) for _ in range(5)]
    gpu = [statistics.median(r[k] for r in gpu_runs) for k in range(3)]
    kernels, loss = [], None
    for k in range(3):  # kernels each phase launches (the launch queue holds about 1,024)
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            loss = run_phase(k, loss)
            torch.cuda.synchronize()
        kernels.append(sum(1 for e in prof.events() if e.device_type.name == "CUDA"))
    return {"spec": spec, "batch": batch, **settings, "step_s": statistics.median(s[1] for s in steps),
            "host_s": host, "gpu_s": gpu, "kernels": kernels, "timed_steps": TIMED,
            "dispatch_op_s": probe}


def _synthetic(torch: Any, spec: str, width: int) -> tuple[Any, Any]:
    """A model of TINY_OPS one-element adds outside autograd (host-bound: each a dispatch, its kernel a few us) and
    two width x width GEMMs on an input that needs its gradient (their backward, dgrad and wgrad each, twice their
    forward on the GPU), the adds first or last as `spec` says."""
    from torch import nn

    tiny_first = spec == "synthetic:tiny-ops-then-gemms"

    class TinyOpsAndGemms(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.w1 = nn.Parameter(torch.randn(width, width, device="cuda") / width**0.5)
            self.w2 = nn.Parameter(torch.randn(width, width, device="cuda") / width**0.5)

        def tiny(self, x: Any) -> Any:
            with torch.no_grad():
                s = torch.zeros(1, device=x.device)
                for _ in range(TINY_OPS):
                    s = s + 1
            return s

        def forward(self, x: Any) -> Any:
            s = self.tiny(x) if tiny_first else None
            y = ((x @ self.w1) @ self.w2).float().square().mean()
            s = self.tiny(x) if not tiny_first else s
            return y + 0 * s.sum()

    return TinyOpsAndGemms(), torch.randn(width, width, device="cuda", requires_grad=True)


def _flow_shop(host: list[float], gpu: list[float]) -> float:
    return max(sum(host[:b]) + sum(gpu[b:]) for b in range(len(host) + 1))


def line(r: dict[str, Any]) -> str:
    h, d, s = r["host_s"], r["gpu_s"], r["step_s"]
    p8 = (sum(h) ** 8 + sum(d) ** 8) ** 0.125
    return (f"{r['spec']} b{r['batch']}: step {s * 1e3:.1f} ms; host {[round(x * 1e3, 1) for x in h]} "
            f"gpu {[round(x * 1e3, 1) for x in d]} kernels {r['kernels']}; flow shop {_flow_shop(h, d) / s:.2f}x, "
            f"max {max(sum(h), sum(d)) / s:.2f}x, p8 {p8 / s:.2f}x")


def main() -> None:
    measure_and_write(__doc__, [lambda c=c: measure(*c) for c in CASES], line)


if __name__ == "__main__":
    main()
