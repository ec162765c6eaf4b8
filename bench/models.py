"""Accuracy of the op-graph estimator against measured runs: importable, so CI gates on it.

The measurements (tests/data/models-h100.json, collected by tools/collect_model_runs.py from
lab/measure_models.py) are real training steps and forward passes on an H100; every case is estimated
from the shipped pre-traced graphs with the H100's datasheet figures, as a user without a probe run
gets them. A third of the models is held out of calibration (lab/model_cases.py fixes which).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import REPO, TESTS_DATA

MEASURED = TESTS_DATA / "models-h100.json"
CARD = "H100 SXM"  # the catalog card the measurements ran on (NVIDIA H100 80GB HBM3)

#: what the estimator promises on these cases (README and BENCHMARKS quote these)
TIME_WITHIN = 0.25  # step time within +-25 % ...
MEMORY_WITHIN = 0.10  # ... and peak memory within +-10 % ...
SHARE = 0.90  # ... on at least 90 % of the cases
WORST = 1.5  # and no time off by more than 1.5x either way


@dataclass(frozen=True)
class Result:
    case: dict[str, Any]
    time_s: float | None = None
    tensor_bytes: float | None = None
    error: str | None = None

    @property
    def time_ratio(self) -> float:
        return (self.time_s or math.nan) / self.case["time_s"]

    @property
    def memory_ratio(self) -> float:
        return (self.tensor_bytes or math.nan) / self.case["peak_bytes"]

    @property
    def label(self) -> str:
        c = self.case
        extra = " frozen base" if c.get("trainable") else ""
        return f"{c['spec']} {c['mode']}{extra} b={c['batch']}"


def load(path: Path = MEASURED) -> list[dict[str, Any]]:
    return [c for c in json.loads(path.read_text())["cases"] if "time_s" in c]


def hardware(card: str = CARD) -> Any:
    """A shipped catalog card's datasheet figures (a user's extra catalogs play no part in validation)."""
    from gpuadvisor.catalog import find, load_catalog
    from gpuadvisor.estimate import HardwareFigures

    return HardwareFigures.from_card(find(load_catalog(use_env=False), card)[0])


def bf16_rates(figures: Any) -> tuple[float, float]:
    """(large-GEMM bf16 FLOP/s, achieved bytes/s) of a card's datasheet figures as the op pricer takes them (the
    default efficiencies): what the kernel checks of bench/ price a measured kernel at."""
    from gpuadvisor.estimate.hardware import Efficiency

    mfu, bandwidth_efficiency = Efficiency().validate().for_hardware(figures)
    return (figures.peak_tflops("bf16") * 1e12 * mfu * figures.dtype_reach("bf16"),
            figures.bandwidth_gbs * 1e9 * bandwidth_efficiency)


def workload(case: dict[str, Any]) -> Any:
    from gpuadvisor.workload import make_workload

    return make_workload(case["spec"], mode=case["mode"], batch=case["batch"], seq_len=case.get("seq", 0),
                         channels_last=bool(case.get("channels_last")), trainable=tuple(case.get("trainable", ())),
                         input_shape=tuple(case["input"]) if case.get("input") else ())


def estimate(case: dict[str, Any], gpu_figures: Any) -> Result:
    """One case's estimate; an estimate that raises is a result with its error (and fails the gate)."""
    from gpuadvisor.core.errors import UserError
    from gpuadvisor.estimate import estimate_compute, estimate_memory

    try:
        w = workload(case)
        c = estimate_compute(w, gpu_figures)
        return Result(case, c.step_time_s or c.time_s, estimate_memory(w).tensors)
    except (UserError, ValueError, KeyError) as e:
        return Result(case, error=f"{type(e).__name__}: {e}")


def evaluate(cases: list[dict[str, Any]] | None = None) -> list[Result]:
    gpu_figures = hardware()
    return [estimate(c, gpu_figures) for c in (cases if cases is not None else load())]


PUBLISHED = TESTS_DATA / "published-resnet50.json"


def published_ratios(path: Path = PUBLISHED) -> list[tuple[dict[str, Any], float]]:
    """Estimated over published throughput of each published case (the file gives source and conditions);
    none of them is used to calibrate anything."""
    from gpuadvisor.estimate import estimate_compute
    from gpuadvisor.workload import make_workload

    out = []
    for c in json.loads(path.read_text())["cases"]:
        gpu_figures = hardware(c["card"])
        w = make_workload("torchvision:resnet50", mode=c["mode"], batch=c["batch"], channels_last=True)
        comp = estimate_compute(w, gpu_figures)
        out.append((c, (comp.samples_per_s or math.nan) / c["images_per_s"]))
    return out


def workload_v1(rec: dict[str, Any]) -> Any:
    """The workload of a v1 transformer validation record (tools/data/validation-h100.json: mode infer,
    lora, or mixed/pure training with or without checkpointing): for validate_time and the constant fits."""
    from gpuadvisor.workload import make_workload, spec_from_config

    spec = spec_from_config(rec["config"], name=rec["model"], origin=f"validate:{rec['model']}")
    mode, b, s = rec["mode"], rec["batch"], rec["seq"]
    if mode == "infer":
        return make_workload(spec, mode="inference", dtype="bf16", batch=b, seq_len=s, gen_tokens=0)
    if mode == "lora":
        return make_workload(spec, mode="lora", dtype="bf16", batch=b, seq_len=s, lora_rank=16, mixed_precision=False)
    return make_workload(spec, mode="training", dtype="bf16", batch=b, seq_len=s,
                         mixed_precision=mode.startswith("mixed"), checkpointing=mode.endswith("ckpt"))


#: the op model's GPU constants, fitted on the profiled GPU time of their op classes (calibration split only):
#: op classes -> {constant: the grid it is chosen from}; the constants of one entry are fitted together.
#: DEPTHWISE_BW_EFF and GN_HALF_BLOCKS left the grids (assumptions at the values the grids gave): their classes' fits
#: are flat across +-25 % of them and no stored set binds them both ways (docs/calibration.md)
GPU_FITS: dict[tuple[str, ...], dict[str, tuple[float, ...]]] = {
    ("conv",): {"CONV_EFF": (0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2),
                "CUDA_CORE_CONV_EFF": (0.1, 0.2, 0.3, 0.4, 0.6),
                "CONV_PASS_FIXED_S": (0.0, 2.5e-6, 5e-6, 6e-6, 7e-6, 8e-6, 1e-5, 1.5e-5, 2e-5)},
    ("norm",): {"NORM_BW_EFF": (0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8),
                "BN_STATS_PASSES": (1.5, 2.0, 2.25, 2.5, 2.75, 3.0, 3.5),
                "NORM_BWD_PASSES": (1.0, 1.25, 1.5, 1.75, 2.0, 2.5),
                "LN_BW_EFF": (0.7, 0.8, 0.9, 1.0, 1.1, 1.2),
                "LN_ROW_BYTES": (400, 800, 1200, 1600, 2000, 2400, 3200)},
    ("reduction",): {"REDUCTION_BW_EFF": (0.3, 0.4, 0.5, 0.6, 0.7, 0.85, 1.0)},
    ("gemm",): {"MISALIGNED_EVEN_SLOWDOWN": (1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0)},
    ("elementwise",): {"STREAM_BW_EFF": (0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 1.0, 1.05, 1.1),
                       "STRIDED_BW_EFF": (0.2, 0.3, 0.4, 0.5, 0.6, 0.7)},
}
#: a class's profiled time must reach this for the case to count in that class's fit
FIT_MIN_CLASS_S = 2e-4


def _calibration_graphs(cases: list[dict[str, Any]] | None) -> list[tuple[dict[str, Any], Any]]:
    from gpuadvisor.estimate.graph_estimate import workload_graph

    return [(c, workload_graph(workload(c))) for c in (cases if cases is not None else load())
            if not c.get("held_out")]


def class_time(ops: Any, classes: tuple[str, ...], rates: Any, training: bool) -> float:
    """The pricer's GPU time of the ops of `classes` as PyTorch's profiler attributes it: a convolution backward's
    bias gradient (opcost.conv_bias_grad_s), priced within the convolution op, is the profiler's reduction class."""
    from gpuadvisor.estimate.graph import OpClass
    from gpuadvisor.estimate.opcost import conv_bias_grad_s, op_time

    t = sum(op_time(op, rates, training=training) * op.count for op in ops if op.cls.value in classes)
    moved = sum(conv_bias_grad_s(op, rates) * op.count for op in ops if op.cls is OpClass.CONV)
    if "reduction" in classes and "conv" not in classes:
        t += moved
    elif "conv" in classes and "reduction" not in classes:
        t -= moved
    return t


def fit_gpu_constants(cases: list[dict[str, Any]] | None = None) -> dict[str, float]:
    """Each of GPU_FITS's constants: coordinate descent over their grids (from each grid's middle value, until no
    constant moves) to the least mean |log(estimate / profiled)| GPU time of their classes over the calibration
    split (held-out cases are never read)."""
    from gpuadvisor.estimate import calibration as cal
    from gpuadvisor.estimate.opcost import Rates

    r = Rates.of(hardware())
    rows = _calibration_graphs(cases)
    out: dict[str, float] = {}
    for classes, grids in GPU_FITS.items():
        used = [([op for op in g.ops if op.cls.value in classes or op.cls.value == "conv"],
                 g.mode.value == "training", sum(c["profiled_s_by_class"].get(k, 0.0) for k in classes))
                for c, g in rows]
        used = [u for u in used if u[2] >= FIT_MIN_CLASS_S]

        def err(values: dict[str, float], used: list[Any] = used, classes: tuple[str, ...] = classes) -> float:
            with cal.override(**values):
                return sum(abs(math.log(class_time(ops, classes, r, t) / prof)) for ops, t, prof in used) / len(used)

        best = {name: grid[len(grid) // 2] for name, grid in grids.items()}
        for _ in range(6):
            moved = False
            for name, grid in grids.items():
                errs = {v: err({**best, name: v}) for v in grid}
                pick = min(errs, key=errs.__getitem__)
                moved |= pick != best[name]
                best[name] = pick
            if not moved:
                break
        out.update(best)
    return out


#: the host constants as fitted with OP_OVERLAP_P 8, before the flow shop (2026-12-08)
SUMMED_OVERLAP_HOST = {"HOST_FWD_OPS_INFERENCE": 3.5, "HOST_FWD_OPS_TRAINING": 5.5, "HOST_BWD_OPS": 3.0,
                       "HOST_VIEW_OPS": 0.6}
SUMMED_OVERLAP_TRAINING_STEP = 110.0  # the training step's fixed host time then (HOST_TRAINING_STEP, since removed)


@contextmanager
def summed_overlap(p: float = 8.0) -> Iterator[None]:
    """A step's host and GPU times as they were combined until 2026-12-08: summed over the phases and overlapped as
    (host^p + GPU^p)^(1/p), every kernel-less op priced, with the host constants fitted then (SUMMED_OVERLAP_HOST):
    to reproduce estimates recorded before the flow shop (opcost.StepTime.step_s). No constant holds the rule, so
    the property and the phase split are swapped for the block."""
    from gpuadvisor.estimate import calibration as cal
    from gpuadvisor.estimate import opcost
    from gpuadvisor.estimate.dispatch import overlap
    from gpuadvisor.estimate.graph import Phase

    def summed(st: Any) -> float:
        return overlap(st.host_s, st.device_s, p)

    def every_view_priced(g: Any) -> dict[str, float]:
        untracked, recorded, backward, views, steps = opcost.host_counts(g)
        return {Phase.FORWARD.value: untracked * cal.HOST_FWD_OPS_INFERENCE + recorded * cal.HOST_FWD_OPS_TRAINING
                + views * cal.HOST_VIEW_OPS, Phase.BACKWARD.value: backward * cal.HOST_BWD_OPS,
                Phase.OPTIMIZER.value: steps * SUMMED_OVERLAP_TRAINING_STEP}

    step_s, split = opcost.StepTime.step_s, opcost.host_units_by_phase
    opcost.StepTime.step_s = property(summed)  # type: ignore[assignment,method-assign]
    opcost.host_units_by_phase = every_view_priced
    try:
        with cal.override(**SUMMED_OVERLAP_HOST):
            yield
    finally:
        opcost.StepTime.step_s = step_s  # type: ignore[method-assign]
        opcost.host_units_by_phase = split


#: host constants, in the order of opcost.host_counts's features
HOST_FITS = ("HOST_FWD_OPS_INFERENCE", "HOST_FWD_OPS_TRAINING", "HOST_BWD_OPS", "HOST_VIEW_OPS")


def fit_host_constants(cases: list[dict[str, Any]] | None = None) -> dict[str, float]:
    """Host time per op kind (units of HOST_OP_S, on grids of 0.25, 0.2 for views): the least mean
    |log(estimate / measured)| step time over the calibration split (the LSTM's left out: its time is cuDNN's
    recurrence), each step the host's time by phase (opcost.host_units_by_phase, the optimizer's measured part
    held as it is) and the GPU's run as the flow shop opcost.step_time takes them in. A recorded forward op costs
    at least what an unrecorded one does (autograd's node is work on top): the grid keeps HOST_FWD_OPS_TRAINING >=
    HOST_FWD_OPS_INFERENCE; and a view's cost against an unrecorded op's within 0.8x-1.25x of the ratio measured
    apart from any model (bench.host_kinds.view_ratio). Held-out cases are never read."""
    import numpy as np

    from bench.host_kinds import view_ratio
    from gpuadvisor.estimate import calibration as cal
    from gpuadvisor.estimate.graph import Phase
    from gpuadvisor.estimate.opcost import host_units_by_phase, step_time

    gpu_figures = hardware()
    phases = (Phase.FORWARD.value, Phase.BACKWARD.value, Phase.OPTIMIZER.value)
    feats, fixed, device, times = [], [], [], []
    for c, g in _calibration_graphs(cases):
        if c["profiled_s_by_class"].get("recurrent"):
            continue
        # each phase's host seconds per unit of each constant, in HOST_FITS's order: opcost's own split with that
        # constant at 1 and the others at 0; with all of them at 0, what the measured constants give
        with cal.override(**dict.fromkeys(HOST_FITS, 0.0)):
            held = host_units_by_phase(g)
        per_unit = []
        for name in HOST_FITS:
            with cal.override(**{other: float(other == name) for other in HOST_FITS}):
                per_unit.append(host_units_by_phase(g))
        feats.append([[(units[ph] - held[ph]) * cal.HOST_OP_S for units in per_unit] for ph in phases])
        fixed.append([held[ph] * cal.HOST_OP_S for ph in phases])
        by_phase = step_time(g, gpu_figures, eager=False).by_phase
        device.append([by_phase.get(ph, 0.0) for ph in phases])
        times.append(c["time_s"])
    f, h0, d, t = np.array(feats), np.array(fixed), np.array(device), np.array(times)  # (cases, 3, 4), (cases, 3)
    view = view_ratio()
    best: tuple[float, tuple[float, ...]] = (math.inf, ())
    for a in np.arange(2.0, 5.01, 0.25):
        views = [v for v in np.arange(0.0, 1.61, 0.2) if 0.8 <= v / (a * view) <= 1.25]
        if not views:
            continue
        w = np.stack(np.meshgrid([a], np.arange(a, 8.01, 0.25), np.arange(1.0, 8.01, 0.25), views, indexing="ij"),
                     -1).reshape(-1, 4)
        host = np.einsum("cpk,wk->wcp", f, w) + h0[None]  # (weights, cases, phases)
        # opcost.flow_shop_s: the host through phase j, then the GPU's phases after it
        issued = np.concatenate([np.zeros((*host.shape[:2], 1)), np.cumsum(host, axis=2)], axis=2)
        behind = np.concatenate([np.cumsum(d[:, ::-1], axis=1)[:, ::-1], np.zeros((len(d), 1))], axis=1)
        step = (issued + behind[None]).max(axis=2)
        err = np.abs(np.log(step / t)).mean(axis=1)
        i = int(np.argmin(err))
        if err[i] < best[0] - 1e-12:
            best = (float(err[i]), tuple(float(x) for x in w[i]))
    return {name: round(v, 2) for name, v in zip(HOST_FITS, best[1], strict=True)}


#: lab/phase_overlap.py on an H100 (2026-12-08): twelve training steps, the host's time to issue each phase (forward
#: with the loss, backward, optimizer) and each phase's GPU time alone, beside the step: how the two combine
#: (opcost.StepTime.step_s), never fitted
PHASE_OVERLAP = REPO / "lab/data/h100-phase-overlap-2026-12-08/phase_overlap.json"


def _training_graph(spec: str) -> Any:
    """The stored training graph of `spec` (bf16, its own defaults: nothing frozen, no compile), at its low batch."""
    from bench.unseen import stored_graphs
    from gpuadvisor.estimate import graphstore
    from gpuadvisor.estimate.graph import GraphMode
    from gpuadvisor.estimate.trace.tracer import TraceOptions
    from gpuadvisor.modelref import parse_ref

    ref = parse_ref(spec)
    if ref is None:
        raise KeyError(f"not a model reference: {spec}")
    with stored_graphs():
        graph = graphstore._shipped_graph(graphstore.key(ref, TraceOptions(mode=GraphMode.TRAINING)))
    if graph is None:
        raise KeyError(f"no stored training graph of {spec}")
    return graph.low


def fit_optimizer_host(path: Path = PHASE_OVERLAP) -> dict[str, float]:
    """HOST_OPTIMIZER_STEP and HOST_OPTIMIZER_PER_TENSOR: the least-squares line through the optimizer phase's host
    time (fused AdamW's step and zero_grad, in units of each run's own dispatch probe, HOST_OP_S's unit) against
    the model's parameter tensors (opcost.param_tensors of its stored training graph), over lab/phase_overlap.py's
    twelve steps (78-364 tensors); the intercept to 1, the slope to 0.01. Measured: no step time is read."""
    import numpy as np

    from gpuadvisor.estimate.opcost import param_tensors

    rows = json.loads(path.read_text())["rows"]
    tensors = np.array([param_tensors(_training_graph(r["spec"])) for r in rows], dtype=float)
    units = np.array([r["host_s"][2] / r["dispatch_op_s"] for r in rows])
    (intercept, slope), *_ = np.linalg.lstsq(np.stack([np.ones_like(tensors), tensors], 1), units, rcond=None)
    return {"HOST_OPTIMIZER_STEP": float(round(intercept)), "HOST_OPTIMIZER_PER_TENSOR": round(float(slope), 2)}


def phase_overlap_ratios(path: Path = PHASE_OVERLAP) -> dict[tuple[str, int], tuple[float, float]]:
    """(spec, batch) -> (the flow shop of the measured phases, opcost.flow_shop_s, over the measured step; the host's
    and the GPU's times added, as if neither overlapped the other, over the step)."""
    from gpuadvisor.estimate.opcost import flow_shop_s

    rows = json.loads(path.read_text())["rows"]
    return {(r["spec"], r["batch"]): (flow_shop_s(r["host_s"], r["gpu_s"]) / r["step_s"],
                                      (sum(r["host_s"]) + sum(r["gpu_s"])) / r["step_s"]) for r in rows}


#: lab/train_step_host.py on an H100, twice (2026-12-05): the host's time for a training step's parts against its
#: parameter tensors (a stack of N Linear layers), a diagnostic of the host constants' split, never fitted
TRAIN_STEP_HOST = sorted((REPO / "lab/data/h100-train-step-host-2026-12-05").glob("train_step_host-*.json"))


def train_step_host() -> dict[str, tuple[float, float]]:
    """Per phase of a training step (forward with its loss, backward, the optimizer's step, zero_grad): the least
    squares intercept and slope against the parameter tensors of lab/train_step_host.py's runs, in units of each
    run's own dispatch probe (HOST_OP_S's unit), the mean over the runs."""
    import numpy as np

    fits: dict[str, list[tuple[float, float]]] = {}
    for path in TRAIN_STEP_HOST:
        run = json.loads(path.read_text())
        probe = sum(run["env"]["dispatch_op_s"]) / 2
        n = np.array([r["tensors"] for r in run["rows"]], dtype=float)
        for phase in ("forward", "backward", "optimizer", "zero_grad"):
            y = np.array([r[phase] for r in run["rows"]]) / probe
            (intercept, slope), *_ = np.linalg.lstsq(np.stack([np.ones_like(n), n], 1), y, rcond=None)
            fits.setdefault(phase, []).append((float(intercept), float(slope)))
    return {phase: (sum(a for a, _ in v) / len(v), sum(b for _, b in v) / len(v)) for phase, v in fits.items()}


def fit_step_parts() -> dict[str, float]:
    """HOST_STEP_FIXED: the intercepts of train_step_host's forward and backward lines added (what a training step's
    forward and backward cost the host beyond their layers' ops), to 1. Measured: no step time of a model is read."""
    parts = train_step_host()
    return {"HOST_STEP_FIXED": float(round(parts["forward"][0] + parts["backward"][0]))}


def summary(results: list[Result]) -> dict[str, Any]:
    """Per group (all, calibration, held out): how many cases are within the bounds, and the worst."""
    out: dict[str, Any] = {}
    for name, rows in (("all", results), ("calibration", [r for r in results if not r.case.get("held_out")]),
                       ("held out", [r for r in results if r.case.get("held_out")])):
        ok = [r for r in rows if r.error is None]
        t = [r.time_ratio for r in ok]
        m = [r.memory_ratio for r in ok]
        out[name] = {
            "cases": len(rows), "errors": len(rows) - len(ok),
            "time_within": sum(abs(x - 1) <= TIME_WITHIN for x in t) / max(1, len(rows)),
            "memory_within": sum(abs(x - 1) <= MEMORY_WITHIN for x in m) / max(1, len(rows)),
            "worst_time": max((max(x, 1 / x) for x in t), default=math.nan),
            "worst_memory": max((max(x, 1 / x) for x in m), default=math.nan),
            "median_abs_time_error": sorted(abs(x - 1) for x in t)[len(t) // 2] if t else math.nan,
        }
    return out


def table(results: list[Result]) -> str:
    """Markdown: one row a case, estimate against measurement."""
    lines = ["| case | held out | measured step | estimate | ratio | measured peak | estimate | ratio |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]
    for r in results:
        c = r.case
        if r.error:
            lines.append(f"| {r.label} | {'yes' if c.get('held_out') else ''} | {c['time_s'] * 1e3:.1f} ms | "
                         f"error: {r.error} | | | | |")
            continue
        lines.append(f"| {r.label} | {'yes' if c.get('held_out') else ''} | {c['time_s'] * 1e3:.1f} ms | "
                     f"{(r.time_s or 0) * 1e3:.1f} ms | {r.time_ratio:.2f} | {c['peak_bytes'] / 2**30:.2f} GiB | "
                     f"{(r.tensor_bytes or 0) / 2**30:.2f} GiB | {r.memory_ratio:.2f} |")
    return "\n".join(lines)
