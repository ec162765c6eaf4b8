"""cuDNN's fused RNN call by call (lab/rnn_calls.py on the GPU machine): what one call costs per layer beside
what each time step costs, for the op cost model's recurrent pricer (opcost.recurrent_time)."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from bench import REPO

#: lab/rnn_calls.py on an H200 (hidden 128 and 1,024): the calls the recurrent constants are read off
CALLS = REPO / "lab/data/h200-rnn-2026-11-27/rnn_calls.json"
#: the same sweep on an H100 (hidden 128, 256, 768 and 1,024, the training harness timed alone, the host's dispatch
#: probe at 9.8 us an op): a check on another card and host, never fitted (calls_check)
CALLS_H100 = REPO / "lab/data/h100-rnn-calls-2026-12-05/rnn_calls.json"
#: the sweep at hidden 128 over 1-4 layers on an H100 (dispatch probe 10.0 us an op): whether one layer's set-up and
#: steps add up over deeper stacks (calls_check), never fitted
CALLS_H100_LAYERS = REPO / "lab/data/h100-rnn-layers-2026-12-05/rnn_calls_layers.json"
#: the small-hidden kernel's shapes (hidden 64, 96 and 160, 1 and 2 layers, batch 16-1,024, 64 and 256 steps) on an
#: H100 whose dispatch probe read 6.3 us an op (2026-12-06), run after the small-hidden kernel was fitted on the H200's:
#: never fitted. Its inference steps, at 12 us against the H200 sweep's 19, showed a launched step to be the host's
#: time (opcost._rnn_step_s)
CALLS_H100_ROWS = REPO / "lab/data/h100-rnn-rows-2026-12-05/rnn_calls_rows.json"
#: lab/rnn_calls.py --directions 1,2 on an H100 (2026-12-07, a host probing 5.9 us an op): LSTM and GRU of hidden 64
#: and 128, 1-3 layers, one and two directions, batch 64 and 512, 1 and 64 steps; no constant read off it
CALLS_H100_DIRECTIONS = REPO / "lab/data/h100-rnn-directions-2026-12-07/rnn_calls_dirs.json"


def fit_rnn_call(path: Path = CALLS) -> dict[str, float]:
    """Least squares over every inference call (LSTM and GRU, hidden 128 and 1024, 1 and 2 layers, batch 64 and
    512, 1 to 256 steps): time = a + layers x per_layer + layers x steps x per_step. The per-layer term, rounded to
    10 us, is RNN_LAYER_CALL_S: the descriptor, workspace and launch set-up cuDNN does for each layer of a call
    before its first step (a 1-step call of 2 layers takes about twice a 1-layer one). The per-step term, rounded to
1 us, is RNN_STEP_FLOOR_S: one time step of one layer when its small GEMM and cell kernel are latency-bound."""
    rows = json.loads(path.read_text())["rows"]
    x = np.array([[1.0, r["layers"], r["layers"] * r["steps"]] for r in rows])
    y = np.array([r["inference_s"] for r in rows])
    (_, per_layer, per_step), *_ = np.linalg.lstsq(x, y, rcond=None)
    return {"RNN_LAYER_CALL_S": round(float(per_layer) / 1e-5) * 1e-5,
            "RNN_STEP_FLOOR_S": round(float(per_step) / 1e-6) * 1e-6}


def fit_rnn_backward_call(path: Path = CALLS) -> dict[str, float]:
    """RNN_BACKWARD_CALL_S, a backward call's own set-up (backward-data and backward-weights calls, the reserve
    space) beside the per-layer set-up each phase pays (RNN_LAYER_CALL_S): the value, on a 10 us grid from 0 to
    1.5 ms, with the least mean |log(estimate / measured)| of the op model's 80 training calls (call_ratios: each
    call priced as a step of its own ops would be, less the training harness's time, _harness_s). Fitted with
    RNN_PERSIST_STEP_S: 0.5 ms and 2.8 us either way round; 0.98 ms and 3.1 us with the harness left in the calls.
    0.64 ms on the 48 calls of at most 16 steps while the set-up was also charged to
    the GPU's timeline and the persistent calls were priced as launched ones; 0.9 ms, a straight line's intercept,
    before that."""
    values = [round(i * 1e-5, 5) for i in range(151)]
    return {"RNN_BACKWARD_CALL_S": _grid_fit("RNN_BACKWARD_CALL_S", values, path, lambda r: True)}


def fit_rnn_persist_step(path: Path = CALLS) -> dict[str, float]:
    """RNN_PERSIST_STEP_S, the static persistent kernel's per-step floor (opcost._rnn_step_s): the value on a 0.1 us
    grid from 0 to 10 us with the least mean |log(estimate / measured)| over the static kernel's training calls on
    the card they ran on (kernels.rnn_persist_algo: the one-layer LSTM of hidden 1,024 at batch 64, 5)."""
    steps = [round(i * 1e-7, 7) for i in range(101)]
    return {"RNN_PERSIST_STEP_S": _grid_fit("RNN_PERSIST_STEP_S", steps, path,
                                            lambda r: r["algo"] == "persist_static")}


#: lab/rnn_persist_kernels.py on an H100 (2026-12-06): every kernel of one training call per mode, hidden size
#: (32-160), layer count (1-3), direction count and batch (64-2,048), 128 steps, with its device time
PERSIST_KERNELS = REPO / "lab/data/h100-rnn-persist-kernels-2026-12-06/rnn_persist_kernels.json"


def _persist_kernel_samples(path: Path) -> tuple[list[tuple[float, float]], list[tuple[str, float]]]:
    """The profiled kernels the constants are read off: (hidden size, seconds a step) of each small-hidden forward
    kernel (RNN_blockPersist_fp_*) of batch <= 1,024, and (mode, seconds a batch row and step) of each backward
    bias-gradient kernel (*_elementWise_bp2) in the one-layer, one-direction calls of batch >= 1,024."""
    steps: list[tuple[float, float]] = []
    bias: list[tuple[str, float]] = []
    for r in json.loads(path.read_text())["rows"]:
        steps += [(r["hidden"], s / n / r["steps"]) for k, (n, s) in r["forward"].items()
                  if "blockPersist_fp" in k and r["batch"] <= 1024]
        if r["batch"] >= 1024 and r["layers"] * r["directions"] == 1:
            bias += [(r["mode"], s / n / (r["batch"] * r["steps"])) for k, (n, s) in r["backward"].items()
                     if "elementWise_bp2" in k]
    return steps, bias


def read_persist_kernels(path: Path = PERSIST_KERNELS) -> dict[str, float]:
    """The constants the profiled training calls give directly, as device time (_persist_kernel_samples):
    RNN_PERSIST_SMALL_STEP_S and RNN_PERSIST_SMALL_STEP_UNIT_S, the intercept (to 0.01 us) and the slope by hidden
    size (to 0.1 ns) of a least-squares line through the small-hidden forward kernels' time a step;
    RNN_BIAS_GRAD_ROW_S and RNN_GRU_BIAS_GRAD_ROW_S, the median of the bias-gradient kernels' time a batch row and
    step (LSTM; GRU), to 0.1 ns."""
    from statistics import median

    steps, bias = _persist_kernel_samples(path)
    (fixed, per_unit), *_ = np.linalg.lstsq(np.array([[1.0, h] for h, _ in steps]),
                                           np.array([t for _, t in steps]), rcond=None)
    return {"RNN_PERSIST_SMALL_STEP_S": round(float(fixed) / 1e-8) * 1e-8,
            "RNN_PERSIST_SMALL_STEP_UNIT_S": round(float(per_unit) / 1e-10) * 1e-10,
            "RNN_BIAS_GRAD_ROW_S": round(median(t for mode, t in bias if mode != "GRU") / 1e-10) * 1e-10,
            "RNN_GRU_BIAS_GRAD_ROW_S": round(median(t for mode, t in bias if mode == "GRU") / 1e-10) * 1e-10}


def persist_kernel_ratios(path: Path = PERSIST_KERNELS) -> tuple[list[float], list[float]]:
    """The profiled kernels (_persist_kernel_samples) against the constants read off them, reading the table at call
    time: each small-hidden forward kernel's time a step over RNN_PERSIST_SMALL_STEP_S + hidden x
    RNN_PERSIST_SMALL_STEP_UNIT_S, each bias-gradient kernel's time a batch row and step over RNN_BIAS_GRAD_ROW_S (a
    GRU's RNN_GRU_BIAS_GRAD_ROW_S)."""
    from gpuadvisor.estimate import calibration as cal

    steps, bias = _persist_kernel_samples(path)
    return ([t / (cal.RNN_PERSIST_SMALL_STEP_S + h * cal.RNN_PERSIST_SMALL_STEP_UNIT_S) for h, t in steps],
            [t / (cal.RNN_GRU_BIAS_GRAD_ROW_S if mode == "GRU" else cal.RNN_BIAS_GRAD_ROW_S) for mode, t in bias])


def one_persist_floor(floor_s: float, batch: int) -> dict[str, float]:
    """Calibration overrides that price every persistent RNN step at one floor of `floor_s` and no bias gradient,
    as before the small-hidden kernel's step went with its batch rows (a model's calls share its `batch`): to set
    that model beside today's."""
    return {"RNN_PERSIST_STEP_S": floor_s, "RNN_PERSIST_SMALL_STEP_S": floor_s, "RNN_PERSIST_SMALL_STEP_UNIT_S": 0.0,
            "RNN_BIAS_GRAD_ROW_S": 0.0, "RNN_GRU_BIAS_GRAD_ROW_S": 0.0}


def launched_step_on_gpu() -> dict[str, float]:
    """Calibration overrides that keep a launched inference step on the GPU at RNN_STEP_FLOOR_S, as before
    2026-12-06, when the step became the host's issuing (scaled by the host's dispatch probe): to reproduce
    estimates recorded before then."""
    from gpuadvisor.estimate import calibration as cal

    return {"RNN_LAUNCHED_STEP_GPU_S": float(cal.RNN_STEP_FLOOR_S)}


@contextmanager
def setup_per_layer() -> Iterator[None]:
    """Price an RNN call's set-up once per layer whatever its directions, as before 2026-12-07, when a
    bidirectional layer came to set up per direction (opcost._rnn_setup_s): to reproduce estimates recorded before
    then. No constant holds the rule, so the function is swapped for the block."""
    from gpuadvisor.estimate import calibration as cal
    from gpuadvisor.estimate import opcost
    from gpuadvisor.estimate.graph import Phase

    def per_layer(shape: Any, phase: Any) -> float:
        setup = shape.layers * cal.RNN_LAYER_CALL_S
        return setup + cal.RNN_BACKWARD_CALL_S if phase is Phase.BACKWARD else setup

    today = opcost._rnn_setup_s
    opcost._rnn_setup_s = per_layer
    try:
        yield
    finally:
        opcost._rnn_setup_s = today


def _mean_log_error(values: dict[str, float], path: Path, selected: Any) -> float:
    """Mean |log(estimate / measured)| of the training calls of `path` that `selected` keeps, with `values`."""
    from gpuadvisor.estimate import calibration as cal

    with cal.override(**values):
        ratios = [r["ratio"] for r in call_ratios(path) if r["phase"] == "training" and selected(r)]
    return sum(abs(math.log(x)) for x in ratios) / len(ratios)


def _grid_fit(name: str, values: list[float], path: Path, selected: Any) -> float:
    """The first of `values` for the constant `name` with the least mean |log(estimate / measured)| over the
    training calls of `path` that `selected` keeps."""
    best, best_err = 0.0, math.inf
    for value in values:
        err = _mean_log_error({name: value}, path, selected)
        if err < best_err - 1e-12:
            best, best_err = value, err
    return best


def _call_s(ops: list[Any], rates: Any, *, training: bool, host_scale: float = 1.0) -> float:
    """A call's time as a step of nothing but these ops would take (opcost.step_time): the host's issuing of them
    (each layer's set-up, launched steps; times `host_scale`, the sweep's host against the calibration host's) and
    the GPU's timeline, phase by phase as a flow shop (opcost.flow_shop_s)."""
    from gpuadvisor.estimate import opcost
    from gpuadvisor.estimate.graph import Phase

    phases = (Phase.FORWARD, Phase.BACKWARD)
    host = [sum(opcost.recurrent_host_s(op, rates, training) for op in ops if op.phase is ph) * host_scale
            for ph in phases]
    device = [sum(opcost.op_time(op, rates, training=training) for op in ops if op.phase is ph) for ph in phases]
    return opcost.flow_shop_s(host, device)


#: lab/rnn_calls.py again on an H200 (2026-12-05, the training harness timed alone): the harness the 2026-11-27 sweep,
#: which did not time it, is read from (same card, code and release; another host, whose calls ran 0.75x as long,
#: so a lower bound of what the first host spent on it)
CALLS_H200_HARNESS = REPO / "lab/data/h200-rnn-calls-2026-12-05/rnn_calls.json"


def _harness_s(data: dict[str, Any], row: dict[str, Any]) -> float:
    """The training harness's own time (lab/rnn_calls.py harness_calls: autocast, `.float().sum()`, autograd's
    backward around a Linear layer) at the call's hidden size and batch and the nearer of its two lengths: what a
    model's own graph prices as its loss ops and its step's fixed host time, so not the call's. A sweep that did not
    time it takes the one of CALLS_H200_HARNESS: left in, it was read as the backward call's own set-up
    (RNN_BACKWARD_CALL_S 0.98 ms, where it is 0.5) and charged to every model again."""
    harness = data.get("harness") or json.loads(CALLS_H200_HARNESS.read_text())["harness"]
    rows = [h for h in harness if h["hidden"] == row["hidden"] and h["batch"] == row["batch"]]
    if not rows:
        return 0.0
    return float(min(rows, key=lambda h: abs(math.log(h["steps"] / row["steps"])))["training_s"])


def call_ratios(path: Path = CALLS, card: str | None = None) -> list[dict[str, Any]]:
    """Every measured call (inference, and forward + backward for training) priced by the op cost model on the card
    they ran on, with the host speed the sweep's dispatch probe saw where it recorded one (the first H200 sweep did
    not: the calibration host's): estimate / measured per call and phase. Reads the calibration table at call time,
    so the sweep's overrides move it."""
    from dataclasses import replace

    from bench.models import hardware
    from gpuadvisor.estimate import kernels, opcost
    from gpuadvisor.estimate.dispatch import host_op_scale
    from gpuadvisor.estimate.graph import Op, OpClass, Phase, RecurrentShape

    data = json.loads(path.read_text())
    gpu_figures = hardware(card or _card_of(data))
    if data["env"].get("dispatch_op_s"):  # the sweep's own host, as a user's probe gives it (opcost.step_time)
        gpu_figures = replace(gpu_figures, host_op_s=float(data["env"]["dispatch_op_s"]))
    rates, host_scale = opcost.Rates.of(gpu_figures), host_op_scale(gpu_figures)
    out: list[dict[str, Any]] = []
    for r in data["rows"]:
        shape = (r["batch"], r["steps"], r["hidden"], r["hidden"], r["layers"], 4 if r["mode"] == "LSTM" else 3,
                 r.get("directions", 1))
        forward = Op("rnn", OpClass.RECURRENT, Phase.FORWARD, "bf16", 0.0, 0.0, 0.0, shape)
        backward = Op("rnn", OpClass.RECURRENT, Phase.BACKWARD, "bf16", 0.0, 0.0, 0.0, shape)
        algo = kernels.rnn_persist_algo(RecurrentShape.from_row(shape), backward=False, dtype="bf16",
                                        compute_capability=rates.compute_capability, sms=rates.sms)
        inference = _call_s([forward], rates, training=False, host_scale=host_scale)
        training = _call_s([forward, backward], rates, training=True, host_scale=host_scale)
        bidirectional = " bi" if r.get("directions", 1) == 2 else ""
        name = f"{r['mode']} h{r['hidden']} x{r['layers']}{bidirectional} b{r['batch']} t{r['steps']}"
        for phase, estimate, measured in (("inference", inference, r["inference_s"]),
                                          ("training", training, r["training_s"] - _harness_s(data, r))):
            out.append({"call": name, "steps": r["steps"], "phase": phase, "estimate_s": estimate,
                        "measured_s": measured, "ratio": estimate / measured, "persistent": algo is not None,
                        "algo": algo.value if algo else None})
    return out


def _card_of(data: dict[str, Any]) -> str:
    """The catalog card a sweep ran on, by the device name it recorded."""
    return "H200 SXM" if "H200" in data["env"]["device"] else "H100 SXM5 80GB"


def calls_check(path: Path = CALLS_H100) -> str:
    """A sweep the constants were not read off (the H100's, or the second H200's), priced by them with its host's
    dispatch probe (call_ratios): where and when it ran and its probe, then per phase the count within 0.8x-1.25x and
    the geometric mean of estimate / measured (the training calls less the harness's own time)."""
    env = json.loads(path.read_text())["env"]
    ratios = call_ratios(path)
    parts = [f"{env['device']}, driver {env['driver']}, {env['date'][:10]}, dispatch probe "
             f"{env['dispatch_op_s'] * 1e6:.1f} us an op"]
    for phase in ("inference", "training"):
        sel = [float(r["ratio"]) for r in ratios if r["phase"] == phase]
        mean = math.exp(sum(math.log(x) for x in sel) / len(sel))
        parts.append(f"{phase} {sum(0.8 <= x <= 1.25 for x in sel)} of {len(sel)} within 0.8x-1.25x, geometric mean "
                     f"{mean:.2f}x")
    return "; ".join(parts)


def calls_table(ratios: list[dict[str, Any]]) -> str:
    """The calls as a Markdown table, with the count within 0.8x-1.25x per phase."""
    rows = ["| call | phase | measured ms | estimate ms | est/meas |", "|---|---|---:|---:|---:|"]
    rows += [f"| {r['call']} | {r['phase']} | {r['measured_s'] * 1e3:.3f} | {r['estimate_s'] * 1e3:.3f} | "
             f"{r['ratio']:.2f}x |" for r in ratios]
    counts = []
    for phase in ("inference", "training"):
        sel = [r for r in ratios if r["phase"] == phase]
        counts.append(f"{phase} (calls of up to {max(r['steps'] for r in sel)} steps): "
                      f"{sum(0.8 <= r['ratio'] <= 1.25 for r in sel)} of {len(sel)} within 0.8x-1.25x")
    return "; ".join(counts) + ".\n\n" + "\n".join(rows)


RNN_MEMORY = REPO / "lab/data/h200-rnn-memory-2026-12-04/rnn_memory.json"
#: lab/rnn_memory.py --grid small on an H200: hidden 64, 128 and 192 (the sizes cuDNN trains in persistent kernels),
#: one and two layers and directions, and the keyword GRU's own call
RNN_MEMORY_SMALL = REPO / "lab/data/h200-rnn-memory-small-2026-12-05/rnn_memory_small.json"


def _memory_rows(path: Path = RNN_MEMORY) -> list[dict[str, Any]]:
    """Every call of lab/rnn_memory.py, inference and training."""
    return list(json.loads(path.read_text())["rows"])


def _workspace_rows(path: Path = RNN_MEMORY) -> list[dict[str, Any]]:
    return [r for r in _memory_rows(path) if r["phase"] == "inference"]


def _shape(r: dict[str, Any]) -> Any:
    """The RecurrentShape of one measured call (bf16, batch first, input of `input` features)."""
    from gpuadvisor.estimate.graph import RecurrentShape

    return RecurrentShape(r["batch"], r["steps"], r["input"], r["hidden"], r["layers"], 4 if r["mode"] == "LSTM" else 3,
                          2.0 if r["bidirectional"] else 1.0)


#: the grids fit_rnn_workspace searches: the floor of a layer and direction's fixed workspace (0-12 MB by 0.25 MB)
#: and its bytes per hidden unit by mode (30,000-60,000 by 500)
WORKSPACE_FLOOR_GRID = tuple(250_000 * i for i in range(49))
WORKSPACE_UNIT_GRID = tuple(range(30_000, 60_001, 500))


def fit_rnn_workspace(paths: tuple[Path, ...] = (RNN_MEMORY, RNN_MEMORY_SMALL)) -> dict[str, float]:
    """The constants of kernels.rnn_workspace_bytes from both grids' inference calls of lab/rnn_memory.py
    (lab/models' own calls left out: MODEL_CALLS, defined below): memory allocated during the call beyond its
    outputs. A layer and direction holds max(floor, bytes per hidden unit x hidden), the floor and the per-unit
    bytes by mode on grids; for each, the per-step rows per direction and the bidirectional rows by least squares
    on what is left beyond the gates of every step; the grid point with the least mean |log(counted / measured)|.
    The small grid's hidden-64 calls hold about 9 MB a layer and direction where hidden x bytes per unit gives 3."""
    from gpuadvisor.estimate import calibration as cal

    rows = [r for path in paths for r in _workspace_rows(path) if _call_of(r) not in MODEL_CALLS]
    measured = np.array([r["peak_over_before"] - r["outputs"] for r in rows], dtype=float)
    steps, gates, units, lstm = [], [], [], []
    for r in rows:
        s = _shape(r)
        unit = 2.0 * r["batch"] * r["hidden"] * r["steps"]
        steps.append([unit * s.directions, unit * (s.directions - 1)])
        # the gates' rows and the input's copies (RNN_WORKSPACE_INPUT_PASSES, from the inputs grid) are not fitted here
        gates.append(unit * s.directions * s.gates
                     + 2.0 * r["batch"] * r["steps"] * r["input"] * cal.RNN_WORKSPACE_INPUT_PASSES)
        units.append((r["layers"] * s.directions, r["hidden"]))
        lstm.append(r["mode"] == "LSTM")
    x, gate_bytes, is_lstm = np.array(steps), np.array(gates), np.array(lstm)
    pinv = np.linalg.pinv(x)
    calls, hidden = np.array(units, dtype=float).T
    best: tuple[float, tuple[float, ...]] = (math.inf, ())
    for per_lstm in WORKSPACE_UNIT_GRID:
        for per_gru in WORKSPACE_UNIT_GRID:
            per_unit = hidden * np.where(is_lstm, per_lstm, per_gru)
            for floor in WORKSPACE_FLOOR_GRID:
                fixed = calls * np.maximum(per_unit, floor)
                coef = pinv @ (measured - gate_bytes - fixed)
                err = float(np.abs(np.log((x @ coef + gate_bytes + fixed) / measured)).mean())
                if err < best[0] - 1e-12:
                    best = (err, (float(coef[0]), float(coef[1]), per_lstm, per_gru, floor))
    step, bidir, lstm_bytes, gru_bytes, floor_bytes = best[1]
    return {"RNN_WORKSPACE_STEP_PASSES": round(step, 1), "RNN_WORKSPACE_BIDIR_PASSES": round(bidir, 1),
            "RNN_WORKSPACE_LSTM_BYTES": lstm_bytes, "RNN_WORKSPACE_GRU_BYTES": gru_bytes,
            "RNN_WORKSPACE_FLOOR_BYTES": floor_bytes}


#: lab/rnn_memory.py --grid steps on an H100 (2026-12-06): 64-1,024 steps at hidden 64, 96 and 256, one and two
#: layers and directions, batch 256 and 1,024; the hidden-64 calls with a 7-wide input, as the forecaster's
RNN_MEMORY_STEPS = REPO / "lab/data/h100-rnn-memory-steps-2026-12-06/rnn_memory_steps.json"
GATE_STEPS_GRID = (128, 256, 512, 1024, 1_000_000)


def fit_gate_steps(path: Path = RNN_MEMORY_STEPS) -> dict[str, float]:
    """RNN_WORKSPACE_GATE_STEPS: the value of GATE_STEPS_GRID with the least mean |log(counted / measured)| inference
    workspace over the steps sweep's calls (the grids behind the other workspace constants stop at 128 steps, where
    every value counts the same)."""
    from gpuadvisor.estimate import calibration as cal

    def error(cap: int) -> float:
        with cal.override(RNN_WORKSPACE_GATE_STEPS=cap):
            ratios = workspace_ratios(path)
        return sum(abs(math.log(x)) for x in ratios) / len(ratios)

    return {"RNN_WORKSPACE_GATE_STEPS": min(GATE_STEPS_GRID, key=error)}


#: lab/rnn_memory.py --grid inputs on an H100 (2026-12-06): input widths 7, 32 and the hidden size at hidden 64 and
#: 128, one layer, one and two directions, batch 1,024, 64-512 steps
RNN_MEMORY_INPUTS = REPO / "lab/data/h100-rnn-memory-inputs-2026-12-06/rnn_memory_inputs.json"


def fit_input_passes(path: Path = RNN_MEMORY_INPUTS) -> dict[str, float]:
    """RNN_WORKSPACE_INPUT_PASSES: the copies of the call's input that cuDNN's inference workspace holds per time step,
    by least squares through the origin of what each call of a narrower input holds less than its twin whose input
    is as wide as its hidden size (same mode, hidden, directions, batch and steps), per batch x steps x bf16 byte x
    the width it lacks; rounded to 0.1. Whatever the rest of the workspace is, it cancels in the difference."""
    rows = _workspace_rows(path)
    held = {(r["mode"], r["input"], r["hidden"], r["bidirectional"], r["batch"], r["steps"]):
            r["peak_over_before"] - r["outputs"] for r in rows}
    lacking, less = [], []
    for (mode, width, hidden, bidir, batch, steps), measured in held.items():
        if width < hidden:
            lacking.append(2.0 * batch * steps * (hidden - width))
            less.append(held[mode, hidden, hidden, bidir, batch, steps] - measured)
    x, y = np.array(lacking), np.array(less)
    return {"RNN_WORKSPACE_INPUT_PASSES": round(float(x @ y / (x @ x)), 1)}


#: lab/rnn_backward_memory.py on an H100 (2026-12-06): what one training call's backward holds while it runs (LSTM and
#: GRU, hidden 64-512, 1-2 layers and directions, batch 512 and 2,048, 64 steps), never fitted
RNN_BACKWARD_MEMORY = REPO / "lab/data/h100-rnn-kernels-new-2026-12-06/rnn_backward_memory.json"


def backward_workspace_ratios(path: Path = RNN_BACKWARD_MEMORY) -> list[tuple[dict[str, Any], float]]:
    """Each backward call's workspace as the trace counts it (the forward's training workspace again, and the
    persistent extra where the backward's own kernel is persistent: kernels.rnn_workspace_bytes,
    rnn_training_extra_bytes) over what the call held at its peak beyond what was allocated before it, the output's
    gradient (a bf16 copy of the output) and the input's (bf16, then autocast's fp32)."""
    from gpuadvisor.estimate.kernels import rnn_training_extra_bytes, rnn_workspace_bytes

    out = []
    for r in json.loads(path.read_text())["rows"]:
        shape = _shape(r)
        counted = sum(rnn_workspace_bytes(shape, 2.0, r["mode"], training=True)) + rnn_training_extra_bytes(
            shape, 2.0, "bf16", backward=True)
        held = (r["backward_peak"] - r["before_backward"] - r["output_bytes"]
                - r["batch"] * r["steps"] * r["input"] * (2 + 4))
        out.append((r, counted / held))
    return out


def _within_10(ratios: list[float], counted: str = "") -> str:
    """How many memory ratios lie within 10 %, and their mean |log error|, as the pages quote them (`counted`: what
    the count counts, after the total)."""
    inside = sum(0.9 <= x <= 1.1 for x in ratios)
    mean = 100 * sum(abs(math.log(x)) for x in ratios) / len(ratios)
    return f"{inside} of {len(ratios)}{counted} within 10 % (mean |log error| {mean:.1f} %)"


def backward_summary() -> str:
    """backward_workspace_ratios in one clause."""
    rows = backward_workspace_ratios()
    static = [x for r, x in rows if r["mode"] == "LSTM" and r["layers"] == 1 and not r["bidirectional"]
              and r["hidden"] >= 256]
    return (f"{_within_10([x for _, x in rows], ' calls')}, the one-layer LSTMs of "
            f"hidden 256 and 512 {min(static):.1f}x-{max(static):.1f}x (counted as cuDNN's static persistent kernel "
            "holds it, which takes batches of 128 and under)")


def workspace_ratios(path: Path = RNN_MEMORY) -> list[float]:
    """Every inference call's workspace, as the trace counts it (rnn_workspace_bytes), over the memory
    the call allocated beyond its outputs. Reads the calibration table at call time."""
    from gpuadvisor.estimate.kernels import rnn_workspace_bytes

    return [sum(rnn_workspace_bytes(_shape(r), 2.0, r["mode"])) / (r["peak_over_before"] - r["outputs"])
            for r in _workspace_rows(path)]


#: the calls of lab/models' recurrent models (mode, input, hidden, layers, bidirectional): the out-of-sample cases'
#: own shapes, measured beside the grid (lab/rnn_memory.py SHAPES) and never in a fit
MODEL_CALLS = {("GRU", 512, 512, 1, False), ("LSTM", 1024, 1024, 2, False), ("LSTM", 100, 128, 1, False),
               ("GRU", 80, 256, 3, True), ("GRU", 40, 128, 2, False)}


def _training_rows(path: Path = RNN_MEMORY, *, grid_only: bool = True) -> list[dict[str, Any]]:
    rows = [r for r in _memory_rows(path) if r["phase"] == "training"]
    return [r for r in rows if not grid_only or _call_of(r) not in MODEL_CALLS]


def _call_of(r: dict[str, Any]) -> tuple[str, int, int, int, bool]:
    return r["mode"], r["input"], r["hidden"], r["layers"], r["bidirectional"]


def _autocast_copies(r: dict[str, Any]) -> float:
    """The bf16 copies autocast makes of a training call's fp32 input and weights, kept for its backward."""
    s = _shape(r)
    gates, dirs, h = s.gates, s.directions, r["hidden"]
    weights = sum(dirs * (gates * h * ((r["input"] if layer == 0 else h * dirs) + h) + 2 * gates * h)
                  for layer in range(r["layers"]))
    return 2.0 * (r["batch"] * r["steps"] * r["input"] + weights)


def fit_rnn_reserve(path: Path = RNN_MEMORY) -> dict[str, float]:
    """The reserve space's rows per time step, layer and direction, by mode: least squares over the grid's training
    calls (lab/models' own calls left out) of what a call keeps after it beyond its outputs, less autocast's bf16
    copies of its input and weights, each layer's final state(s) and the outputs of every layer but the last (the
    counted parts of trace.recurrent's reserve), against 2 bytes x layers x directions x steps x batch x hidden."""
    out = {}
    for mode, name in (("LSTM", "RNN_RESERVE_LSTM_ROWS"), ("GRU", "RNN_RESERVE_GRU_ROWS")):
        x, y = [], []
        for r in _training_rows(path):
            if r["mode"] != mode:
                continue
            dirs, states = (2 if r["bidirectional"] else 1), (2 if mode == "LSTM" else 1)
            bh = r["batch"] * r["hidden"] * dirs
            counted = 2.0 * bh * (r["layers"] * states + (r["layers"] - 1) * r["steps"])
            x.append(2.0 * r["layers"] * r["steps"] * bh)
            y.append(r["held_after"] - r["outputs"] - _autocast_copies(r) - counted)
        out[name] = round(float(np.dot(x, y) / np.dot(x, x)), 1)
    return out


def fit_rnn_train_persist(paths: tuple[Path, ...] = (RNN_MEMORY, RNN_MEMORY_SMALL)) -> dict[str, float]:
    """What a training call whose forward runs as one persistent kernel (kernels.rnn_training_extra_bytes) holds
    while it runs beyond an inference call of the same shape, in bf16 rows of batch x hidden per step: least squares
    over both grids' such calls, lab/models' own left out (the small grid's hidden 64-192, any layers and
    directions; the large grid's one-layer LSTMs). The other calls hold about an inference call's workspace."""
    from gpuadvisor.estimate.kernels import PERSIST_MEMORY_CARD, rnn_runs_persistent

    cc, sms = PERSIST_MEMORY_CARD
    x, y = [], []
    for path in paths:
        rows = {(_call_of(r), r["batch"], r["steps"], r["phase"]): r for r in _memory_rows(path)}
        for r in _training_rows(path):
            if not rnn_runs_persistent(_shape(r), backward=False, dtype="bf16", compute_capability=cc, sms=sms):
                continue
            inference = rows[(_call_of(r), r["batch"], r["steps"], "inference")]
            x.append(2.0 * r["batch"] * r["steps"] * r["hidden"])
            y.append((r["peak_over_before"] - r["held_after"]) - (inference["peak_over_before"] - inference["outputs"]))
    return {"RNN_TRAIN_PERSIST_ROWS": round(float(np.dot(x, y) / np.dot(x, x)), 1)}


def training_call_ratios(path: Path = RNN_MEMORY, *, kept: bool = False) -> list[float]:
    """Every training call's memory beyond its outputs, as the trace counts it (the reserve space, autocast's copies,
    the workspace and a persistent forward's extra: kernels.rnn_*_bytes), over what the call allocated beyond its
    outputs at its peak; `kept`: what it keeps after it for its backward (the reserve and the copies) over what
    stays allocated beyond its outputs. lab/models' own calls included (the fits leave them out). Reads the
    table at call time."""
    from gpuadvisor.estimate.kernels import rnn_reserve_bytes, rnn_training_extra_bytes, rnn_workspace_bytes

    out = []
    for r in _training_rows(path, grid_only=False):
        shape = _shape(r)
        held = rnn_reserve_bytes(shape, 2.0, r["mode"]) + _autocast_copies(r)
        if kept:
            out.append(held / (r["held_after"] - r["outputs"]))
            continue
        counted = (held + sum(rnn_workspace_bytes(shape, 2.0, r["mode"], training=True))
                   + rnn_training_extra_bytes(shape, 2.0, "bf16"))
        out.append(counted / (r["peak_over_before"] - r["outputs"]))
    return out


def memory_summary() -> str:
    """One paragraph: the calls' memory as the trace counts it against lab/rnn_memory.py's measurement."""
    stats = _within_10
    return ("Memory of one call (`lab/rnn_memory.py`, `lab/data/h200-rnn-memory-2026-12-04/`: bf16 inference, "
            "training under bf16 autocast), as the trace counts it (`kernels.rnn_*_bytes`; the constants fitted on "
            "the grids' calls, the calls of lab/models' models left out): inference workspace "
            f"{stats(workspace_ratios())}; what a training call keeps for its backward (reserve space, autocast's "
            f"copies of its input and weights) {stats(training_call_ratios(kept=True))}; a training call's peak "
            f"{stats(training_call_ratios())} (short calls of hidden 1024 hold less in training than the inference "
            "workspace counted). The small-hidden grid (`lab/rnn_memory.py --grid small`, "
            "`lab/data/h200-rnn-memory-small-2026-12-05/`: hidden 64, 128 and 192, one and two layers and "
            "directions, batch 128 and 512, 25 and 100 steps), whose training calls run their forward as one "
            "persistent kernel and hold about 15 rows of batch x hidden per step more than an inference call of "
            "any layout while they run (RNN_TRAIN_PERSIST_ROWS; before, only a one-layer LSTM's was counted): "
            f"inference workspace {stats(workspace_ratios(RNN_MEMORY_SMALL))}; what a training call keeps "
            f"{stats(training_call_ratios(RNN_MEMORY_SMALL, kept=True))}; its peak "
            f"{stats(training_call_ratios(RNN_MEMORY_SMALL))}. A layer and direction's inference workspace is never "
            "under about 9 MB (RNN_WORKSPACE_FLOOR_BYTES, fitted on both grids): the hidden-64 calls held 1.5-2.5x "
            "what hidden x bytes per unit counted, and the small grid's training peaks were 66 of 98 within 10 % "
            "(11.2 %) before it. Over 64-1,024 steps (`lab/rnn_memory.py --grid steps`, "
            "`lab/data/h100-rnn-memory-steps-2026-12-06/`, NVIDIA H100 80GB HBM3, driver 580.159.04, 2026-12-06): "
            f"inference workspace {stats(workspace_ratios(RNN_MEMORY_STEPS))}, 100 of 192 while every step's gates "
            "were counted (a one-direction inference call holds those of at most 256 steps, "
            "RNN_WORKSPACE_GATE_STEPS; a training call every step's), a training call's peak "
            f"{stats(training_call_ratios(RNN_MEMORY_STEPS))}. Over input widths 7, 32 and the hidden size at hidden "
            "64 and 128 (`lab/rnn_memory.py --grid inputs`, `lab/data/h100-rnn-memory-inputs-2026-12-06/`, same "
            "card and driver): the workspace holds two copies of the call's input a step, at the input's width "
            "(RNN_WORKSPACE_INPUT_PASSES; counted at the hidden width the grid was 27 of 72 within 10 %, up to "
            f"1.74x): inference workspace {stats(workspace_ratios(RNN_MEMORY_INPUTS))}, a training call's peak "
            f"{stats(training_call_ratios(RNN_MEMORY_INPUTS))}.")
