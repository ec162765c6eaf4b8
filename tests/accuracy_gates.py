"""Every accuracy figure the project quotes, as a gate: a pure check over a stored validation set.

README.md's "Estimates checked against real runs" and BENCHMARKS.md quote these figures; each gate holds one of
them at the bound it states, so a change that makes a quoted figure false fails CI. The accuracy tests
(test_model_accuracy, test_training_accuracy, test_serve_accuracy, test_time_accuracy) assert the gates, and the
calibration sweep (test_calibration_sweep.py) scales every constant by +-25 % and wants some gate to fail.

A gate reads the calibration table at call time (no cache holds a figure computed from a constant), so
``with cal.override(NAME=x): gate.check()`` answers for the overridden table. What does not depend on a constant
(the stored measurements, the workloads built from them, the traced graphs) is loaded once.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from gpuadvisor.estimate import calibration as cal

ROOT = Path(__file__).resolve().parents[1]
MULTIGPU = ROOT / "tools" / "data" / "h200x2-2026-11-23" / "multigpu.json"
FOUR_GPU = ROOT / "lab" / "data" / "four-gpu-h200x4-2026-11-27" / "four_gpu.json"
TWO_GPU_TP = ROOT / "lab" / "data" / "two-gpu-h200x2-2026-11-27" / "four_gpu.json"


@dataclass(frozen=True)
class Verdict:
    passed: bool
    detail: str  # the figure the gate checked, for the assertion message


@dataclass(frozen=True)
class Gate:
    name: str
    claim: str  # the quoted figure it holds, and where it is quoted
    check: Callable[[], Verdict]


# ---- LLM time: tools/validate_time.py's rows (decode per engine; prefill, scoring, training steps) ----------------
def _table_key() -> tuple[float, ...]:
    return tuple(c.value for c in cal.TABLE.values())


_SHARED: dict[str, tuple[tuple[float, ...], Any]] = {}  # computation -> (table state, its result)


def shared(name: str, compute: Callable[[], Any]) -> Any:
    """`compute()` for the table as it is now, kept for the next gate that asks with the same table (the gates of
    one validation set share one evaluation)."""
    key = _table_key()
    if name not in _SHARED or _SHARED[name][0] != key:
        _SHARED[name] = (key, compute())
    return _SHARED[name][1]


def forget() -> None:
    """Drop what was computed from the table (for a caller that logs which constants a gate reads)."""
    _SHARED.clear()


def time_rows() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(decode rows, phase rows) of tools/validate_time.py for the table as it is now."""

    def compute() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        from tools import validate_time

        decode, phases, skipped = validate_time.collect()
        assert not skipped, skipped
        return decode, phases

    return shared("time", compute)  # type: ignore[no-any-return]


def _rows(group_key: str, group: str, *, min_params_b: float = 1.0, max_params_b: float = math.inf
          ) -> list[dict[str, Any]]:
    decode, phases = time_rows()
    rows = decode if group_key == "engine" else phases
    return [r for r in rows if r[group_key] == group and min_params_b <= r["params_b"] < max_params_b]


def count_within(group_key: str, group: str, *, cases: int, within: int, bound_pct: float = 25.0,
                 min_params_b: float = 1.0, max_params_b: float = math.inf) -> Callable[[], Verdict]:
    """At least `within` of the group's `cases` rows (all of them present) within +-bound_pct %."""

    def check() -> Verdict:
        rows = _rows(group_key, group, min_params_b=min_params_b, max_params_b=max_params_b)
        inside = sum(abs(r["err"]) <= bound_pct for r in rows)
        worst = max(rows, key=lambda r: abs(r["err"]), default=None)
        worst_text = f"{worst['err']:+.1f} % ({worst['model']})" if worst else "-"
        return Verdict(len(rows) == cases and inside >= within,
                       f"{group}: {inside} of {len(rows)} within {bound_pct:g} % (gate: {within} of {cases}); "
                       f"worst {worst_text}")

    return check


def time_set(group_key: str, group: str, *, small: bool, cases: int, within: int, mean_pct: float
             ) -> Callable[[], Verdict]:
    """One row of BENCHMARKS.md's 'LLM time estimates' tables (a group of one size: 1B and over, or under 1B) at
    today's accuracy: all `cases` present, at least `within` of them within +-25 %, and the mean |error| at most
    `mean_pct` % (today's mean rounded up to one decimal: no worse than the table quotes)."""

    def check() -> Verdict:
        rows = _rows(group_key, group, min_params_b=0.0 if small else 1.0, max_params_b=1.0 if small else math.inf)
        inside = sum(abs(r["err"]) <= 25 for r in rows)
        mean = sum(abs(r["err"]) for r in rows) / max(1, len(rows))
        return Verdict(len(rows) == cases and inside >= within and mean <= mean_pct,
                       f"{group} ({'< 1B' if small else '1B+'}): {inside} of {len(rows)} within 25 % (gate: {within} "
                       f"of {cases}), mean |error| {mean:.2f} % (gate {mean_pct:g} %)")

    return check


#: BENCHMARKS.md 'LLM time estimates', one gate a scored row: (gate name, group key, group, under 1B?, cases,
#: within 25 %, mean |error| bound %); the bound is today's mean rounded up to one decimal (today's in the comment)
TIME_SETS: tuple[tuple[str, str, str, bool, int, int, float], ...] = (
    ("time_eager_generate_probe", "engine", "eager [generate() probe]", False, 35, 29, 14.9),  # 14.83
    # the three below with the H200's published copy bandwidth (x 0.965 of the H100's share, as its own probe
    # measured: gpuadvisor.bandwidth_reach, 2026-12-07): 45 -> 44 within, 19.30 -> 19.35 %; 15.98 -> 16.03 %;
    # 15.88 -> 15.98 %
    ("time_eager_no_probe", "engine", "eager [no probe]", False, 62, 44, 19.4),  # 19.35
    ("time_eager_op_sdpa_probe", "engine", "eager [op + SDPA probe]", False, 27, 21, 16.1),  # 16.03
    ("time_eager_cudnn_off_generate_probe", "engine", "eager, cuDNN attention off [generate() probe]", False, 35,
     30, 16.0),  # 15.98
    ("time_eager_cudnn_off_op_sdpa_probe", "engine", "eager, cuDNN attention off [op + SDPA probe]", False, 9, 8,
     11.2),  # 11.12
    ("time_eager_padded_generate_probe", "engine", "eager, padded batch [generate() probe]", False, 17, 15,
     11.8),  # 11.72
    ("time_eager_padded_op_sdpa_probe", "engine", "eager, padded batch [op + SDPA probe]", False, 6, 5,
     16.2),  # 16.11
    ("time_graphs", "engine", "graphs", False, 18, 18, 2.9),  # 2.87
    ("time_graphs_under_1b", "engine", "graphs", True, 4, 4, 6.0),  # 5.92
    ("time_decode_step_eager", "phase", "decode step (eager)", False, 19, 10, 27.5),  # 27.44
    ("time_decode_step_eager_under_1b", "phase", "decode step (eager)", True, 5, 4, 15.7),  # 15.60
    ("time_encode_under_1b", "phase", "encode", True, 2, 1, 31.4),  # 31.32
    # 7.59 and 12.27 before a MoE layer's experts were priced as one grouped launch (2026-12-06: the Mixtral-shaped
    # rows' prefill 0.2-0.5 points faster than measured)
    # a GEMM's part-filled last wave at half-size tiles (2026-12-07, kernels._waves, docs/gemm-waves.md): prefill
    # 7.63 -> 7.84, its < 1B rows 12.32 -> 11.95, scoring 6.25 -> 6.69 and 9.25 -> 9.31, training steps 5.15 -> 5.01
    ("time_prefill", "phase", "prefill", False, 24, 24, 7.85),  # 7.84
    ("time_prefill_under_1b", "phase", "prefill", True, 9, 9, 11.96),  # 11.95
    ("time_scoring", "phase", "scoring", False, 13, 13, 6.7),  # 6.69
    ("time_scoring_under_1b", "phase", "scoring", True, 6, 6, 9.32),  # 9.31 (12.23 before GPT-2's head cost 5x)
    ("time_training_steps", "phase", "training step", False, 55, 54, 5.02),  # 5.01
    ("time_training_steps_under_1b", "phase", "training step", True, 30, 27, 13.1),  # 13.07 (13.13 before the
    # half-size last wave, 14.33 before)
)


def decode_graphs_measured(bound_pct: float) -> Callable[[], Verdict]:
    """CUDA-graph decode (1B+) of both decode runs, estimated as a user with a probe run gets it: the run's own
    measured matmul and copy ceilings in place of the datasheet's (MFU_VS_MEASURED, BANDWIDTH_VS_MEASURED)."""

    def check() -> Verdict:
        from gpuadvisor.estimate import apply_measured
        from tools import validate_time

        errors = []
        for name in ("decode-h100.json", "decode-h100-host.json"):
            path = validate_time.DATA / name
            ceilings = json.loads(path.read_text())["ceilings"]
            gpu_figures = apply_measured(validate_time.h100(), {"bandwidth_gbs": ceilings["copy_gbs"],
                                                       "tflops.bf16": ceilings["bf16_matmul_tflops"]})
            errors += [r["err"] for r in validate_time.decode_rows(path, gpu_figures, all_held_out=True, run="")
                       if r["engine"] == "graphs" and r["params_b"] >= 1]
        worst = max(errors, key=abs)
        return Verdict(len(errors) == 18 and abs(worst) <= bound_pct,
                       f"{len(errors)} points, worst {worst:+.1f} % (gate {bound_pct:g} %)")

    return check



def gemm_sweep_measured(bound_pct: float) -> Callable[[], Verdict]:
    """The large GEMMs of each decode run's sweep (>= 1024 rows, over 150 us) priced as a user with a probe run gets
    them: at the run's own measured matmul ceiling x MFU_VS_MEASURED, through the op pricer's GEMM formula."""

    def check() -> Verdict:
        from gpuadvisor.estimate import apply_measured, kernels, opcost
        from tools import validate_time

        errors = []
        for name in ("decode-h100.json", "decode-h100-host.json"):
            d = json.loads((validate_time.DATA / name).read_text())
            gpu_figures = apply_measured(validate_time.h100(), {"bandwidth_gbs": d["ceilings"]["copy_gbs"],
                                                       "tflops.bf16": d["ceilings"]["bf16_matmul_tflops"]})
            rates = opcost.Rates.of(gpu_figures)
            errors += [100 * (kernels.gemm_time(g["m"], g["n"], g["k"], rate=rates.rate("bf16"),
                                                bandwidth=rates.bandwidth, sms=rates.sms) / g["s"] - 1)
                       for g in d.get("gemm", []) if g["m"] >= 1024 and g["s"] > 150e-6]
        worst = max(errors, key=abs)
        return Verdict(abs(worst) <= bound_pct, f"{len(errors)} GEMMs, worst {worst:+.1f} % (gate {bound_pct:g} %)")

    return check


def host_sweep_training(cases: int, within: int, *, mixed: bool = False) -> Callable[[], Verdict]:
    """The host sweep's training steps (tiny width, 2-24 layers: the host is all of the step) against the host
    model: (HOST_OPS_FIXED_TRAIN + layers x ops per layer of the norm kind) x HOST_OP_S, within 25 %; bf16 weights,
    or (`mixed`) fp32 weights under bf16 autocast with the *_AMP ops per layer."""

    def check() -> Verdict:
        from tools import validate_time

        rows = json.loads((validate_time.DATA / "decode-h100-host.json").read_text())["host_sweep"]
        errors = []
        for r in rows:
            if mixed:
                per_layer = cal.HOST_OPS_TRAIN_LAYERNORM_AMP if r["arch"] == "gpt2" else cal.HOST_OPS_TRAIN_RMSNORM_AMP
            else:
                per_layer = cal.HOST_OPS_TRAIN_LAYERNORM if r["arch"] == "gpt2" else cal.HOST_OPS_TRAIN_RMSNORM
            estimate = (cal.HOST_OPS_FIXED_TRAIN + r["layers"] * per_layer) * cal.HOST_OP_S
            errors.append(100 * (estimate / r["train_mixed_s" if mixed else "train_bf16_s"] - 1))
        inside = sum(abs(e) <= 25 for e in errors)
        return Verdict(len(errors) == cases and inside >= within,
                       f"host sweep: {inside} of {len(errors)} {'autocast ' if mixed else ''}training steps within "
                       "25 %")

    return check


INT8_GEMM = ROOT / "lab" / "data" / "h100-round4" / "int8-gemm.json"


def int8_linears(mean_pct: float) -> Callable[[], Verdict]:
    """bitsandbytes' LLM.int8() linear on its own (lab/device/int8_gemm.py, four shapes, 16,384 tokens, no outlier
    columns; wall time) against the model's sum: the product at the bf16 large-GEMM rate, the cast, quantize and
    dequantize bytes (INT8_IN_BYTES, INT8_OUT_BYTES) at the achieved bandwidth, and the host's syncs
    (INT8_HOST_OPS_PER_LINEAR)."""

    def check() -> Verdict:
        from gpuadvisor.estimate import kernels, opcost
        from tools import validate_time

        d = json.loads(INT8_GEMM.read_text())
        rates, tokens = opcost.Rates.of(validate_time.h100()), d["tokens"]
        errors = []
        for r in d["shapes"]:
            product = kernels.gemm_time(tokens, r["out"], r["in"], rate=rates.rate("bf16"), bandwidth=rates.bandwidth,
                                        sms=rates.sms)
            passes = (cal.INT8_IN_BYTES * r["in"] + cal.INT8_OUT_BYTES * r["out"]) * tokens / rates.bandwidth
            estimate = product + passes + cal.INT8_HOST_OPS_PER_LINEAR * cal.HOST_OP_S
            errors.append(abs(estimate / r["linear_s"] - 1) * 100)
        mean = sum(errors) / len(errors)
        return Verdict(len(errors) == 4 and mean <= mean_pct,
                       f"int8 linears: mean |error| {mean:.2f} % of {len(errors)} (gate {mean_pct:g} %)")

    return check

# ---- LLM memory: tools/data/validation-h100-v2.json (100 cases, every workload kind) -----------------------------
@cache
def _memory_records() -> tuple[dict[str, Any], ...]:
    data = json.loads((ROOT / "tools" / "data" / "validation-h100-v2.json").read_text())
    return tuple(r for r in data["records"] if r.get("measured", {}).get("peak_bytes"))


def memory_h100(bound_pct: float, cases: int) -> Callable[[], Verdict]:
    def check() -> Verdict:
        from tools import validate_estimates

        rows = [validate_estimates.estimate_row(r) for r in _memory_records()]
        errors = [r["error"] for r in rows if r.get("error")]
        worst = validate_estimates.worst_by_kind(rows)
        bad = {k: round(d["worst"][0], 2) for k, d in worst.items() if abs(d["worst"][0]) > bound_pct}
        kinds = {"generate", "generate-quantized", "scoring", "mixed", "pure", "lora", "lora-ckpt", "qlora",
                 "moe-training"}
        top = max(abs(d["worst"][0]) for d in worst.values())
        return Verdict(not errors and not bad and len(rows) == cases and kinds <= set(worst),
                       f"{len(rows)} cases, worst |error| {top:.2f} % (gate {bound_pct:g} %); over: {bad}; "
                       f"errors: {errors[:3]}")

    return check


def memory_multigpu(bound_pct: float) -> Callable[[], Verdict]:
    """Per-GPU peak memory of DDP, FSDP (pure and mixed) and tensor parallel on 2x H200."""

    def check() -> Verdict:
        from tools import compare_multigpu

        rows = compare_multigpu.rows_from(json.loads(MULTIGPU.read_text()), None)
        errs = {r["case"]: r["mem_err_pct"] for r in rows}
        ok = len(errs) == 4 and all(e is not None and abs(e) <= bound_pct for e in errs.values())
        return Verdict(ok, f"per-GPU memory error %: {errs} (gate {bound_pct:g} %)")

    return check


def four_gpu_rows() -> list[dict[str, Any]]:
    """tools/compare_four_gpu.py's training rows (decode rows aside) of the 4x H200 ground truth, for the table
    as it is now."""

    def compute() -> list[dict[str, Any]]:
        from tools import compare_four_gpu

        rows = compare_four_gpu.compare(json.loads(FOUR_GPU.read_text()), "H200 SXM 141GB")
        return [r for r in rows if not r["case"].startswith("serve-")]

    return shared("four_gpu", compute)  # type: ignore[no-any-return]


def memory_four_gpu(held_out: bool, cases: int, within: int, bound_pct: float) -> Callable[[], Verdict]:
    """Per-GPU peak memory of the 4x H200 training cases (FSDP2, ZeRO-2, LoRA on FSDP2, DDP, TP, PP, TP x FSDP2):
    `within` of `cases` fitted (or held-out) cases within `bound_pct` %."""

    def check() -> Verdict:
        rows = [r for r in four_gpu_rows() if r["held_out"] == held_out]
        errs = {r["case"]: None if r["mem_ratio"] is None else round((r["mem_ratio"] - 1) * 100, 1) for r in rows}
        ok_n = sum(1 for e in errs.values() if e is not None and abs(e) <= bound_pct)
        return Verdict(len(rows) == cases and ok_n >= within,
                       f"{'held-out' if held_out else 'fitted'} per-GPU memory error %: {errs}; {ok_n} of "
                       f"{len(rows)} within {bound_pct:g} % (gate {within} of {cases})")

    return check


#: the 4x H200 training steps (9 cases) and the 2x H200 TP2 step: how many within 0.8x-1.25x, and none outside
#: 0.67x-1.5x. Today: 10 of 10, PP4 1F1B at 0.80x (0.798, counted at the two decimals the gate rounds to) since
#: torchtitan's compiled step is COMPILE_EFF 0.79 of the kernel-level step (refit with FP8_REACH); 0.75x before
STEP_FOUR_GPU = (10, 10)


def step_four_gpu() -> Verdict:
    from tools import compare_four_gpu

    two = compare_four_gpu.compare(json.loads(TWO_GPU_TP.read_text()), "H200 SXM 141GB")
    rows = [*four_gpu_rows(), *[r for r in two if not r["case"].startswith("serve-")]]
    ratios = {r["case"]: round(r["time_ratio"], 2) for r in rows}
    inside = sum(0.8 <= x <= 1.25 for x in ratios.values())
    cases, within = STEP_FOUR_GPU
    ok = len(rows) == cases and inside >= within and all(0.67 <= x <= 1.5 for x in ratios.values())
    return Verdict(ok, f"step time estimate / measured: {ratios}; {inside} within 0.8x-1.25x "
                       f"(gate {within} of {cases})")


def step_multigpu(case: str, low_pct: float, high_pct: float) -> Callable[[], Verdict]:
    """One 2x H200 step time (no probe of the host) within [low, high] % of the measurement."""

    def check() -> Verdict:
        from tools import compare_multigpu

        rows = {r["case"]: r for r in compare_multigpu.rows_from(json.loads(MULTIGPU.read_text()), None)}
        err = rows[case]["time_err_pct"]
        return Verdict(err is not None and low_pct <= err <= high_pct,
                       f"{case} step error {err:+.1f} % (gate {low_pct:+g} to {high_pct:+g} %)")

    return check


# ---- the op-graph estimator: tests/data/models-h100.json -------------------------------------------------------
#: group: (share of cases with time within +-25 %, share with memory within +-10 %; worst time ratio, worst
#: memory ratio): what each group reaches today (BENCHMARKS.md "Op-graph estimator"), kept from slipping
OP_GRAPH_GATES = {
    "calibration": (0.95, 1.0, 1.5, 1.15),  # memory 99 % -> 100 % (worst 1.11x -> 1.10x) with the RNN input copies
    "held out": (0.85, 0.94, 1.45, 1.15),
    "all": (0.90, 0.98, 1.5, 1.3),  # the issue's target: 90 % of all cases within both bounds, none past 1.5x
}


@cache
def _op_graph_workloads() -> tuple[tuple[dict[str, Any], Any, Any], ...]:
    """(case, workload, graph) of every measured case; tracing and loading graphs does not read the table."""
    from bench import models as validation
    from gpuadvisor.estimate.graph_estimate import workload_graph

    out = []
    for c in validation.load():
        w = validation.workload(c)
        out.append((c, w, workload_graph(w)))
    return tuple(out)


def op_graph_results() -> list[Any]:
    """validation.evaluate()'s results, with the graphs built once."""
    from bench import models as validation
    from gpuadvisor.estimate import estimate_compute, estimate_memory

    def compute() -> list[Any]:
        gpu_figures = validation.hardware()
        return [validation.Result(c, *_times(estimate_compute(w, gpu_figures), estimate_memory(w).tensors))
                for c, w, _ in _op_graph_workloads()]

    return shared("op_graph", compute)  # type: ignore[no-any-return]


def _times(compute: Any, tensors: float) -> tuple[float | None, float]:
    return compute.step_time_s or compute.time_s, tensors


def op_graph(group: str) -> Callable[[], Verdict]:
    def check() -> Verdict:
        from bench import models as validation

        time_share, memory_share, worst_time, worst_memory = OP_GRAPH_GATES[group]
        s = validation.summary(op_graph_results())[group]
        ok = (s["errors"] == 0 and s["time_within"] >= time_share and s["memory_within"] >= memory_share
              and s["worst_time"] <= worst_time and s["worst_memory"] <= worst_memory)
        return Verdict(ok, f"{group}: {s}")

    return check


#: group -> the mean |log(estimate / measured)| step time of the op-graph cases, in % (the objective the host
#: constants are fitted to over the calibration split, bench.models.fit_host_constants; OP_OVERLAP_P was, with
#: fit_overlap, until 2026-12-08): today's, rounded up to two decimals (today's in the comment)
#: held out 12.25 -> 10.96, calibration 7.71 -> 7.65 and all 9.23 -> 8.75 once MISALIGNED_SLOWDOWN was measured on an
#: H100 (3.0 assumed -> 5.0, bench.gemm_alignment: GPT-2's 50,257 vocabulary; a misaligned convolution keeps 3.0 as
#: MISALIGNED_CONV_SLOWDOWN)
#: calibration 7.57 -> 7.71 and all 9.13 -> 9.23 (held out 12.25 unchanged) once a launched inference RNN step is the
#: host's issuing alone (2026-12-06): the LSTM classifier's inference, on the calibration host, had been priced at
#: host and GPU both at RNN_STEP_FLOOR_S, overlapped 1.09x above either (b=128 0.90x -> 0.84x); on other hosts the
#: step now follows the host (five call sweeps, unseen recurrent models 41 -> 44 of 48 with each run's host)
#: calibration 7.86 -> 7.57 and all 9.32 -> 9.13 once even, unaligned GEMMs had a slowdown of their own
#: (MISALIGNED_EVEN_SLOWDOWN, 2026-12-05, late); the history before that:
#: calibration 7.65 -> 8.00 and all 8.75 -> 8.99 (held out unchanged) once a launched training RNN step is the host's
#: issuing, one floor each way (2026-12-06): the LSTM classifier's training (two layers of hidden 1,024, 256 steps)
#: 0.85x -> 0.69x and 1.11x -> 0.85x against the median of its three runs (35.6, 35.9 and 25.0 ms at batch 32, on
#: hosts probing 9-12 us an op). The H100 call sweep's same layers ran 42 us a step and layer at batch 64 on a host
#: probing 9.8 us (lab/data/h100-rnn-calls-2026-12-05), which prices the run at about 25 ms: its fastest run
#: calibration 8.01 -> 8.21, held out 10.97 -> 11.28, all 9.0 -> 9.24 once the H100's NCHW convolutions were
#: profiled (2026-12-06, lab/data/h100-nchw-transposes-2026-12-06): a 16-bit NCHW convolution wider than 1x1 is
#: priced the three transposes a pass it runs (opcost.nchw_transpose_s; was one pass over every NCHW convolution,
#: assumed), which took the convolution class's profiled-time error from 0.151 to 0.099 and moved CONV_EFF's fit from
#: 0.9 to 1.1 (image stems now priced against the GEMM rate). The transposes alone took calibration to 7.90 and held
#: out to 11.38 (wav2vec2's 1-D convolutions, held out, 1.08x -> 1.15x: they run the transposes too, and its group
#: norm is priced 2x its profile); CONV_EFF 1.1 the rest. Out of sample the unseen models went 34 -> 35 of 54 (R3D-18
#: in NCHW) and the H200's NCHW VGG-16 inference 0.81x-0.83x -> 0.88x-0.90x (docs/nchw.md)
# 7.89, 11.45, 9.07 with a GEMM's part-filled last wave at half-size tiles (2026-12-07; gates 8.21, 11.28, 9.24 before)
# 7.77, 11.24, 8.92 with the flow shop of phases in place of OP_GRAPH's fitted exponent (2026-12-08: opcost.StepTime.
# step_s; the host constants refitted on it: HOST_BWD_OPS 3.0 -> 3.75, HOST_TRAINING_STEP 110 -> 120, the backward's
# kernel-less ops inside its nodes; 7.74, 10.73, 8.74 with the old constants, whose fit no longer holds)
# 7.88, 10.39, 8.72 with a training step's own host work measured apart from any model (2026-12-08: the optimizer
# phase 17 + 0.87 a parameter tensor, lab/phase_overlap.py; the forward's and backward's fixed parts, 17 + 12,
# lab/train_step_host.py; HOST_TRAINING_STEP's fitted 120 removed), the per-op constants refitted with them
# (HOST_FWD_OPS_TRAINING 5.0 -> 5.25, HOST_BWD_OPS 3.75 -> 3.5): calibration a little worse with one fitted constant
# fewer, held out 0.8 points better
OP_GRAPH_STEP_ERROR = {"calibration": 7.89, "held out": 10.40, "all": 8.73}  # 8.68, 12.16, 9.84 (the LSTM classifier
# priced as cuDNN runs it, 2026-11-27; before: 8.94, 12.16, 10.01); calibration 8.64 today, its gate to 0.02 above:
# HOST_TRAINING_STEP, fitted on this objective, moves it to 8.70 (x0.75) and 8.73 (x1.25), which the 8.7 of one
# decimal let through once the out-of-sample recurrent cases, re-measured on 2026-12-05, stopped binding it. (8.60
# before an RNN call's set-up was host time only and persistent training kernels were priced, 2026-12-05: the LSTM
# classifier's four cases moved 1.04/0.95/0.94/1.22x -> 1.00/0.90/0.85/1.11x). 8.75, 12.22, 9.90 today, with a bf16
# ResNet stem priced as an H100 runs it (WIDE_STEM_SLOWDOWN_BF16 4.0, measured; MISALIGNED_SLOWDOWN's assumed 3.0
# before: 8.64, 12.16, 9.81): the calibration ResNets' steps 1-6 % longer (resnet18 inference 0.97x -> 1.03x,
# resnet50 1.10x -> 1.12x), the rest of their convolutions already priced a little long. 8.68, 12.40, 9.92 today, with
# pooling kernels priced by their work (POOL_KERNELS; 8.98, 12.30, 10.08 before STREAM_BW_EFF's refit 0.9 -> 0.95,
# which had absorbed the pools' time): VGG-16's inference 0.84-0.88x -> 0.89-0.93x; ResNet-18 at batch 256 1.03-1.05x
# -> 1.12x, its convolutions priced 1.26-1.37x of their profiled time, which the pool's underpricing had hidden; GPT-2
# (held out) 0.72-0.98x -> 0.70-0.96x. 7.86, 12.25, 9.32 today: a biased convolution's bias add traced as the
# elementwise kernel CUDA launches (tracer revision 14), then the convolutions refitted on their profiled class
# (CONV_EFF 0.6 -> 0.9 with CONV_PASS_FIXED_S 5 us a pass; the stems and the host constants refitted after): VGG-16
# 0.84-1.16x -> 0.91-1.03x, the UNets and ResNets nearer; GPT-2 (held out) 0.70-0.96x -> 0.69-0.94x; a grouped
# convolution's kernels take the same fixed time a pass (ResNeXt-50, held out, 0.79x -> 0.81x at batch 64)


def op_graph_step(group: str) -> Callable[[], Verdict]:
    def check() -> Verdict:
        results = [r for r in op_graph_results() if group == "all" or bool(r.case.get("held_out")) == (
            group == "held out")]
        timed = [r for r in results if r.error is None]
        error = 100 * sum(abs(math.log(r.time_ratio)) for r in timed) / max(1, len(timed))
        bound = OP_GRAPH_STEP_ERROR[group]
        return Verdict(len(timed) == len(results) > 0 and error <= bound,
                       f"{group}: mean |log error| of the step {error:.2f} % over {len(timed)} cases "
                       f"(gate {bound:g} %)")

    return check


#: op classes -> the mean |log(estimate / profiled)| GPU time of the class over the calibration split today (the
#: objective validation.fit_gpu_constants minimises): the gate lets it grow by OP_CLASS_SLACK at most
OP_CLASS_ERROR = {("conv",): 0.0869, ("norm",): 0.2322, ("reduction",): 0.4837, ("elementwise",): 0.1578,
                  ("gemm",): 0.1609}
# gemm 0.1912 -> 0.1609 and conv 0.0987 -> 0.0869 (CONV_EFF refitted 1.1 -> 1.0) once a GEMM's part-filled last wave
# ran at half-size tiles (2026-12-07, kernels._waves; microsoft/vidur's measured linear layers, docs/gemm-waves.md)
# conv 0.1486 -> 0.0987 once the H100's NCHW convolutions were priced as profiled (three transposes a pass around
# each wider than 1x1, and unaligned 1x1 maps; lab/data/h100-nchw-transposes-2026-12-06) and CONV_EFF refitted
# 0.9 -> 1.1 (2026-12-06)
# gemm 0.1850 -> 0.1912 once MISALIGNED_SLOWDOWN was measured (3.0 assumed -> 5.0, 2026-12-06): BART's (vocabulary
# 50,265) GEMM time at batch 32 0.86x -> 1.04x, at batch 8 1.04x -> 1.20x, Whisper's (51,865) 1.12x-1.33x -> 1.19x-1.39x
# gemm gated since GEMMs with even, unaligned dimensions have a slowdown of their own (MISALIGNED_EVEN_SLOWDOWN):
# 0.2058 while they were priced at the odd one's 3
# a convolution backward's bias gradient counted in the reduction class, as PyTorch's profiler counts it (its
# aten::sum; bench.models.class_time): reduction 0.7298 -> 0.4837 (VGG-16's training 0.01x -> about 1x of its
# profiled reductions), conv 0.1462 -> 0.1486, no constant moved
# elementwise 0.2119 before pooling kernels were priced by their work (POOL_KERNELS) and STREAM_BW_EFF refitted,
# 0.1974 before a biased convolution's bias add was traced (VGG-16's elementwise time 0.4x -> 1.0x of its profile);
# conv 0.2379 before the convolutions were refitted with it (CONV_EFF, CONV_PASS_FIXED_S, PATCHIFY_SLOWDOWN)
OP_CLASS_SLACK = 0.015


@cache
def _op_class_rows(classes: tuple[str, ...]) -> tuple[tuple[tuple[Any, ...], bool, float], ...]:
    """(ops of the classes and the convolutions, training?, profiled GPU time of the classes) of each calibration
    case that spends validation.FIT_MIN_CLASS_S or more in them (a convolution's bias gradient is the profiler's
    reduction: validation.class_time)."""
    from bench import models as validation

    rows = []
    for c, _, g in _op_graph_workloads():
        if c.get("held_out"):
            continue
        profiled = sum(c["profiled_s_by_class"].get(k, 0.0) for k in classes)
        if profiled >= validation.FIT_MIN_CLASS_S:
            rows.append((tuple(op for op in g.ops if op.cls.value in classes or op.cls.value == "conv"),
                         g.mode.value == "training", profiled))
    return tuple(rows)


def op_class_time(classes: tuple[str, ...]) -> Callable[[], Verdict]:
    """The GPU time of one op class against its profiled time: the fit its constants (validation.GPU_FITS) come
    from, kept within OP_CLASS_SLACK of today's error."""

    def check() -> Verdict:
        from bench import models as validation
        from gpuadvisor.estimate.opcost import Rates

        rates = Rates.of(validation.hardware())
        rows = _op_class_rows(classes)
        error = sum(abs(math.log(validation.class_time(ops, classes, rates, training) / profiled))
                    for ops, training, profiled in rows) / len(rows)
        bound = OP_CLASS_ERROR[classes] * (1 + OP_CLASS_SLACK)
        return Verdict(error <= bound, f"{'+'.join(classes)}: mean |log error| {error:.4f} over {len(rows)} cases "
                                       f"(gate {bound:.4f})")

    return check


def grouped_experts() -> Verdict:
    """MoE experts as one grouped launch on an H100 (bench.moe): lab/grouped_moe.py's 13 gpt-oss and Mixtral shapes and
    lab/fp8_block_gemm.py's 10 DeepSeek-V3 TP8 expert rows, all within 0.8x-1.25x, the DeepSeek rows' mean |log
    error| at most 0.058 (0.056 at GROUPED_STREAM_K_RAMP 100; 0.061 at 75, 0.066 at 125, 0.153 without it)."""
    from bench import moe

    deepseek = list(moe.deepseek_grouped_ratios().values())
    ratios = deepseek + moe.grouped_ratios()
    err = sum(abs(math.log(x)) for x in deepseek) / len(deepseek)
    inside = sum(0.8 <= x <= 1.25 for x in ratios)
    return Verdict(len(ratios) == 23 and inside == 23 and err <= 0.058,
                   f"{inside} of {len(ratios)} within 0.8x-1.25x, DeepSeek rows' mean |log error| {err:.4f}")


def published_resnet50() -> Verdict:
    """NVIDIA's published ResNet-50 throughput (never used to calibrate): 0.6-1.5x today (0.61-0.80x)."""
    from bench import models as validation

    ratios = validation.published_ratios()
    bad = [(c["card"], c["mode"], c["batch"], round(r, 3)) for c, r in ratios if not 0.6 <= r <= 1.5]
    return Verdict(len(ratios) == 7 and not bad, f"outside 0.6-1.5x: {bad}")


# ---- training at scale: tests/data/published-training.json ------------------------------------------------------
#: today's figures, 2026-12-06, once FP8 GEMMs are priced at the probe's FP8_REACH and the framework constants refit
#: (MEGATRON_EFF 0.99 -> 0.93, COMPILE_EFF 0.83 -> 0.79): calibration 25 -> 27 of 29, all 39 -> 41 of 43, held out 14 of
#: 14 as before; (0.85, 1.0) each before
TRAINING_GATES = {  # group: (share within 0.8-1.25x, share within 0.67-1.5x)
    "calibration": (0.93, 1.0),
    "held out": (1.0, 1.0),
    "all": (0.95, 1.0),
}


def published_training(group: str) -> Callable[[], Verdict]:
    def check() -> Verdict:
        from bench import training as published

        band, wide = TRAINING_GATES[group]
        s = published.summary(shared("published_training", published.evaluate))[group]
        return Verdict(s["in_band"] >= band and s["in_wide"] >= wide, f"{group}: {s}")

    return check


#: group -> the mean |log(estimate / published)| tokens/s per GPU, in %: today's rounded up to one decimal (today's in
#: the comment; the framework efficiencies are fitted to the calibration runs, tools/fit_training.py)
# FP8 GEMMs at FP8_REACH and the frameworks refit (2026-12-06): 9.83, 7.48, 9.07 -> 9.35, 6.84, 8.53
TRAINING_MEAN_LOG = {"calibration": 9.27, "held out": 7.01, "all": 8.53}  # 9.26, 7.00, 8.52 (9.35, 6.84, 8.53 before
# a GEMM's part-filled last wave was charged at half-size tiles, 2026-12-07)


def published_training_mean(group: str) -> Callable[[], Verdict]:
    def check() -> Verdict:
        from bench import training as published

        cases = [c for c in shared("published_training", published.evaluate)
                 if group == "all" or c.held_out == (group == "held out")]
        error = 100 * sum(abs(math.log(c.ratio)) for c in cases) / max(1, len(cases))
        bound = TRAINING_MEAN_LOG[group]
        return Verdict(bool(cases) and error <= bound,
                       f"{group}: mean |log ratio| {error:.2f} % over {len(cases)} runs (gate {bound:g} %)")

    return check


# ---- serving: tests/data/published-serving.json ----------------------------------------------------------------
SERVING_IN_BAND = 0.85  # share of each group within 0.8-1.25x; every result within 0.67-1.5x (fixed-length tables)
#: online serving as a client measures it (rows with `client_measured`), per metric (bench.serving.LATENCY_METRICS):
#: today's figures as floors so that nothing gets worse: (share within 0.8-1.25x, share within 0.67-1.5x, lowest
#: ratio, highest ratio) of all such rows, with the engines' front-end per request (engines.json)
# the 0.67-1.5x shares of TTFT (0.56 -> 0.50) and ITL/TPOT (0.68 -> 0.56) fell, and the highest throughput ratio
# rose (1.68 -> 1.71), with the A100's published matmul reach (0.85 of its peak, the H100's 0.80): the A100 rows
# of 1,000 requests queued at once moved by about 5 %
# vLLM 0.11's synchronous scheduling as a host time per running sequence per step (vllm@0.11 host_s_per_seq, 200 us,
# tools/fit_host_seq.py) raised the shares within 0.8-1.25x (TTFT 0.44 -> 0.50, ITL/TPOT 0.50 -> 0.69, throughput
# 0.62 -> 0.75) and within 0.67-1.5x (0.50 -> 0.62, 0.56 -> 0.75, 0.81 -> 0.94); the highest TPOT ratio rose
# (1.09 -> 1.15: vLLM's Qwen3-8B at 4 users pays the per-sequence time too)
# 19 rows a metric (16 before): GPUStack's vLLM Qwen3-8B at 1, 2 and 8 users joined the set; vllm@0.11's fitted
# host time per sequence went 200 -> 190 us with them. The 8-user TPOT (1.21x) is the highest TPOT ratio: at light
# load the per-sequence time overshoots (docs/serving.md)
# 23 a metric: GPUStack's SGLang Qwen3-8B-FP8 with an EAGLE3 draft tree at 1-8 users (TTFT, mean ITL, throughput)
# joined, with SGLang's overlap scheduler off while it speculates; their throughput at 2 users (1.24x) is the highest
# the front-ends refitted on those rows (vLLM 49 -> 54 ms, SGLang 22 -> 30 ms): SGLang's bf16 TTFT at 4 users (27.7
# ms published, below its fp8 run's 39.7 ms) is the highest TTFT ratio, 1.19 -> 1.46; the EAGLE3 TTFTs 0.77-0.85 ->
# 0.98-1.07
# 36 a metric, on four cards: vLLM 0.22.1 serving Qwen3-4B on an RTX 5090 at 1-16 requests/s (Poisson) and vLLM
# 0.23.0 serving Qwen2.5-0.5B on an L4 at 1-32 users joined (medians, as their pages give them; ITL p50 from the
# simulated token gaps). Their TPOT/ITL 0.90-1.21x and throughput 0.89-1.12x but for the overloaded 16 requests/s
# (TPOT 0.60x: the queue the simulation builds is shorter); their TTFT asked for a front-end of 28 ms where vLLM
# 0.11's chat runs ask 54 (engines.json: the current vLLM and versions '0.11' each have their own): TTFT within
# 0.8-1.25x 0.65 -> 0.58 (at light load 1.27-1.34x, at 16-32 users on the L4 0.74-0.88x, overloaded 0.07x),
# throughput 0.86 -> 0.92
# the current vLLM plans a step ahead (engines.json plans_ahead, async scheduling): the RTX 5090's 12-requests/s TTFT
# 0.78x -> 1.08x, its light loads 1.27-1.31x -> 1.30-1.39x with the front-end refitted (28 -> 25 ms); share unchanged
# the RTX 5090 host's own front-end, measured on its page (6.65 ms, `frontend_ms`), and that page's six cold
# single-request TTFTs (512-16,384 tokens: 1.01-1.06x); the vLLM front-end refitted on the L4's rows alone, 25 -> 32
# ms: TTFT within 0.8-1.25x 0.58 -> 0.74 of 42 (the RTX 5090's light loads 1.30-1.39x -> 1.03-1.13x; the L4's one
# user 1.22x -> 1.48x)
# vLLM's FlashAttention 2 query tiles (engines.json decode_query_rows: in a step that carries prompt tokens every
# decoding sequence takes a 64-row tile per query head off Hopper) and an open loop's figures as the median of five
# Poisson draws (serve/sim.py ARRIVAL_DRAWS): the RTX 5090 at 16 requests/s TTFT 0.07x -> 0.96x, TPOT 0.60x -> 1.01x,
# throughput 1.11x -> 0.99x; the A100's vLLM TTFT 0.79x -> 0.85x; at 10-12 requests/s TPOT 1.07-1.13x -> 1.25-1.35x
# and TTFT 1.13x -> 1.41x (vllm@0.11's host time per sequence refitted 190 -> 170 us): TTFT within 0.8-1.25x 0.74 ->
# 0.76, within 0.67-1.5x 0.90 -> 0.93; ITL/TPOT every row within 0.67-1.5x (issue 29's bound for it met)
# then the current vLLM's host time per iteration beside the GPU's step (async scheduling; engines.json): the RTX
# 5090's light loads' TPOT 1.18x-1.21x -> 1.09x-1.11x, at 12 requests/s 1.35x -> 1.21x; the L4's one-user TTFT 1.48x
# -> 1.50x with its front-end refitted (32 -> 33 ms): ITL/TPOT within 0.8-1.25x 0.92 -> 0.94, highest 1.35 -> 1.21
# then FP8 GEMMs at the probe's FP8 reach (FP8_REACH 0.89 of bf16's share of the peak): NIM's 5-user TTFT 0.76x ->
# 0.83x (TTFT within 0.76 -> 0.79), SGLang FP8's queued throughput 0.63x -> 0.626x
# then each card's published copy bandwidth (gpuadvisor.bandwidth_reach: the A100 x 0.91 of the H100's share) and
# sglang@0.5's per-sequence host time refitted on it (260 -> 250 us; the fit's objective 0.4200 -> 0.4196, flat): on
# GPUStack's SGLang bursts the A100's TTFT 0.806x -> 0.800x and the H100's TPOT 0.81x -> 0.78x leave the band, the
# A100's throughput (0.82x -> 0.81x) stays: TTFT within 0.79 -> 0.76, TPOT 0.94 -> 0.92, throughput 0.92 -> 0.92
# the L4's matmuls at the clock its 72 W holds (0.73 of its peak, the L40S's measured 0.743 x 0.98; was the full-rate
# median 0.798, 2026-12-07): its vLLM TTFT at 16 users 0.78x -> 0.81x, into the band (TTFT within 0.76 -> 0.79), and
# the current vLLM's front-end refitted on the L4's rows (tools/fit_frontend.py: 33 -> 32 ms): its one-user TTFT
# (held out) 1.50x -> 1.46x
# then a burst queues on the front-end's one event loop (engines.json frontend_serial_s_per_request, sim.
# front_end_reach; tools/fit_frontend_queue.py on the all-queued calibration runs, 2026-12-07): vLLM 0.11 17 ms a
# request, each request going on behind the whole burst (its tokenizer's worker thread); SGLang 0.5 8.6 ms in line
# and 28 us for each token of the answers it streams meanwhile; the per-sequence host times refitted with it
# (vllm@0.11 170 -> 150 us, sglang@0.5 250 -> 280 us), SGLang's front-end 29 -> 30 ms. The 1,000-prompt bursts'
# TTFT: vLLM's H100 0.25x -> 1.02x, its A100 ones (held out, the fit saw neither) 0.83x/0.73x -> 1.20x/1.07x,
# SGLang's FP8 0.39x -> 1.00x, A100 0.80x -> 0.82x (held-out bf16 0.85x -> 1.09x): TTFT within 0.8-1.25x 0.79 ->
# 0.88 (37 of 42). Their throughput falls with the wait it adds to the run
# (vLLM's H100 0.87x -> 0.74x, A100 0.88x -> 0.80x): the engine's steps at about 1,000 sequences stay too slow, their
# per-sequence host time fitted on mean TPOTs that preemption stalls inflate: throughput within 0.92 -> 0.83;
# ITL/TPOT 33 of 36 still (SGLang's H100 bf16 0.78x -> 0.85x in, its FP8 0.83x -> 0.76x out)
# then the published ShareGPT runs drawn as `vllm bench serve` sampled them (lengths sharegpt-vllm: vLLM's filter,
# prompts of at most 1,024 tokens and prompt + output of at most 2,048, the kept requests at the run's mean lengths),
# where they had been drawn unfiltered; refitted with it: trtllm stream_s_per_seq 210 -> 200 us, vllm@0.11's queue
# 17 -> 16 ms a request, SGLang's front-end 30 -> 29 ms. Throughput within 0.83 -> 0.86 (vLLM's A100 burst 0.796x
# -> 0.802x in, 31 of 36), TTFT 0.88 (TensorRT-LLM's H100 burst 0.71x -> 0.76x, SGLang's A100 one 0.82x -> 0.90x),
# ITL/TPOT 0.92 -> 0.89 (TensorRT-LLM's held-out H100 burst 0.83x -> 0.78x out, with the refit)
# then each burst's median TPOT joined the set (8 rows, the same GPUStack blocks; tools/published_serving.py
# _burst_median_rows), and the per-sequence host times were refitted without the bursts' mean TPOT
# (tools/fit_host_seq.py QUEUED_EXCLUDED): the old fits had bought those means with steps that the same runs'
# throughput and median TPOT deny (vllm@0.11 150 -> 80 us, sglang@0.5 280 -> 140 us, trtllm's stream 200 -> 170 us;
# vLLM's front-end 54 -> 52 ms and its queue 16 -> 17 ms a request, SGLang's queue 8.6 -> 8.5 ms), and SGLang's
# EAGLE worker got a time per sequence of its own (speculative_host_s_per_seq 610 us, fitted on the EAGLE rows,
# which had leaned on the old 280 us; SGLang's front-end 29 -> 22 ms with it). With the medians in the set, the old
# fits stood at ITL/TPOT 0.82 within 0.8-1.25x (0.93 within 0.67-1.5x, the bursts' medians up to 2.12x) and
# throughput 0.86 (0.94): now ITL/TPOT 0.86 (0.91; the medians 0.87x-1.10x, the means 0.39x-0.92x where they carry
# a tail of stalled short answers, docs/serving.md) and throughput 1.0 (1.0, lowest 0.83x: SGLang's H100 bursts
# 0.58x/0.63x -> 0.92x/0.97x); TTFT 0.88 (0.98) as before; mean |log error| over the client-measured rows 0.133 ->
# 0.121
# then the ShareGPT runs drawn from measured lengths (lengths.py sharegpt_lengths.json: 638 requests of vLLM's
# benchmark sample, tools/build_sharegpt_lengths.py), where a lognormal of sigma 0.9 had drawn them: a tenth of the
# answers of 11 tokens or fewer, a median prompt of 76 tokens. The fits followed (vllm@0.11 80 -> 110 us, sglang@0.5
# 140 -> 170 us, trtllm's stream 170 -> 180 us, SGLang's EAGLE worker 610 -> 620 us, SGLang's streaming 28 -> 30 us a
# token, vLLM 0.11's front-end 52 -> 53 ms, SGLang's 22 -> 21 ms; mxfp4_moe_eff 0.36 -> 0.37). The bursts' mean TPOT,
# which no fit reads, 0.39x-0.92x -> 0.40x-1.18x (seven of eight within 0.67x-1.5x; SGLang's FP8 H100 burst stays
# 0.40x): ITL/TPOT 0.86 -> 0.95 within 0.8-1.25x (0.91 -> 0.98 within 0.67-1.5x); throughput 1.0 (lowest 0.83x ->
# 0.84x); TTFT 0.88 (0.98 -> 0.95: TensorRT-LLM's H100 burst 0.71x -> 0.50x, SGLang's A100 one 0.80x -> 0.69x);
# mean |log error| 0.121 -> 0.111
# TTFT's lowest 0.20x -> 0.44x once TensorRT-LLM v1.x plans a step ahead (its overlap scheduler, on by default; NIM
# 1.x's TensorRT engines as trtllm@0.17 without it): trtllm-serve's 4-user Qwen3-8B run, held out; mean |log error|
# 0.111 -> 0.106 (2026-12-07, late)
SERVING_ONLINE = {"ttft": (0.88, 0.95, 0.44, 1.47), "itl/tpot": (0.95, 0.97, 0.4, 1.21),
                  "output throughput": (1.0, 1.0, 0.84, 1.21)}
#: before sglang@0.5's per-sequence host time, SGLang's admission and trtllm-serve's streaming: TTFT (0.50, 0.62, 0.19,
#: 1.20), TPOT (0.68, 0.75, 0.22, 1.16), throughput (0.75, 0.93, 0.79, 1.56)
#: what issue 29 asks of each metric (the xfail(strict) tests flip when it is met)
SERVING_ONLINE_GOAL = (0.85, 1.0)


def serving_checks() -> list[Any]:
    """Every published serving result simulated with the table as it is now (the closed-loop simulations that
    the TTFT, ITL and throughput rows of one load share are run once per call, not kept across calls)."""
    from bench import serving as published

    published._SIMS.clear()
    return published.check_all()


def published_serving(checks: Callable[[], list[Any]] = serving_checks) -> Verdict:
    from bench import serving as published

    rows = published.fixed_tables(checks())  # the tables the profiles were calibrated on
    lo, hi = published.OUTER_BAND
    outside = [(c.id, round(c.ratio, 2)) for c in rows if not lo <= c.ratio <= hi]
    detail, ok = [], not outside
    for group in ("all", "calibration", "held out"):
        sel = [c for c in rows if group == "all" or c.held_out == (group == "held out")]
        s = published.shares(sel)
        ok &= s["in_band"] >= SERVING_IN_BAND
        detail.append(f"{group} {s['in_band']:.2f} in band")
    return Verdict(ok, f"{', '.join(detail)}; outside {lo}-{hi}x: {outside}")


def published_kv_transfer() -> Verdict:
    """The published disaggregated KV-transfer time KV_TRANSFER_EFFICIENCY is fitted to, within 10 %."""
    from bench import serving as published

    rows = [e for e in published.load_entries() if e["metric"] == "kv_transfer_ms"]
    ratios = [published.tool_value(e) / e["value"] for e in rows]
    return Verdict(bool(rows) and all(0.9 <= r <= 1.1 for r in ratios), f"ratios {[round(r, 3) for r in ratios]}")


#: the bursts the front-end's queue is checked on (engines.json frontend_serial_s_per_request and
#: frontend_stream_s_per_token, 2026-12-07): vLLM 0.11's A100 bursts and SGLang's H100 bf16 one (held out),
#: DeepSeek-R1's bursts on 8x H200 (tests/data/published-deepseek.json: ShareGPT and 128-token, both engines; in no
#: set), the Qwen3-14B page's 128-token bursts (bench.serving.SHORT_BURST: vLLM's in no fit, SGLang's the one its
#: loop's time a request is read off), each within 0.8x-1.25x: 12 of 12 today. Scaled by 0.75 or 1.25 on its own
#: engine's rows, vLLM's figure leaves 11 and 9 of them within, SGLang's time a request 11 and 9; SGLang's time a
#: token binds from above only (1.25x: 11, 0.75x: 12). The bursts: bench.serving.queue_burst_ratios
def front_end_queue() -> Verdict:
    from bench.serving import queue_burst_ratios

    ratios = queue_burst_ratios()
    outside = {k: round(v, 2) for k, v in ratios.items() if not 0.8 <= v <= 1.25}
    return Verdict(len(ratios) == 12 and not outside, f"{len(ratios) - len(outside)} of {len(ratios)} within "
                                                      f"0.8x-1.25x; outside: {outside}")


def published_serving_online(checks: Callable[[], list[Any]] = serving_checks) -> Verdict:
    """Online serving per metric (TTFT, ITL/TPOT, output throughput) no worse than SERVING_ONLINE."""
    from bench import serving as published

    got = published.per_metric(checks())
    ok, detail = set(got) == set(SERVING_ONLINE), []
    for name, (band, outer, lowest, highest) in SERVING_ONLINE.items():
        m = got.get(name)
        if m is None:
            continue
        ok &= (m["in_band"] >= band and m["in_outer"] >= outer and m["min"] >= lowest and m["max"] <= highest)
        detail.append(f"{name} {m['in_band']:.2f} in band, {m['in_outer']:.2f} in 0.67-1.5x, "
                      f"{m['min']:.2f}-{m['max']:.2f}")
    return Verdict(ok, "; ".join(detail))


# ---- the gates, cheapest first (the sweep stops at the first that fails) --------------------------------------
README = "README.md 'Estimates checked against real runs'"
BENCH = "BENCHMARKS.md 'LLM time estimates'"

def unseen_results() -> list[Any]:
    """bench.unseen's estimates of the out-of-sample H100 cases (models no fit reads)."""
    from bench import unseen

    return shared("unseen", unseen.evaluate)  # type: ignore[no-any-return]


def unseen_results_of(family: str) -> list[Any]:
    """unseen_results of one family (bench.unseen.family: "recurrent" or "other")."""
    from bench import unseen

    return [r for r in unseen_results() if unseen.family(r.case["spec"]) == family]


#: family -> (cases, within 0.8x-1.25x in time, worst time ratio allowed either way): today's figures (the recurrent
#: ones 12 of 16, worst 1.47x, before an RNN call's issuing was host time in line with the other ops', 2026-12-05)
#: the recurrent cases as the median of six H100 runs (tools/merge_unseen_runs.py, 2026-12-05: five runs of 100 steps
#: beside the first of 10): 14 of 16, worst 1.31x (the encoder-decoder GRU's training, 1.26x and 1.31x); the first run
#: alone gave 15 of 16, worst 1.30x (lstm_small inference at batch 1,024, 0.77x). 15 of 16, worst 1.32x, once an RNN
#: call's set-up was host time only and persistent training kernels were priced (the encoder-decoder's inference at
#: batch 256, 0.76x: host-bound, its six runs 3.0-4.9 ms)
#: The two models written after that (lab/models/lstm_tagger.py, gru_keyword.py; estimates recorded before they were
#: measured, lab/data/h100-rnn-new-2026-12-05/predicted.json): 5 of 8 within, the keyword GRU's inference 0.70x on a
#: host whose dispatch probe read 13-15 us an op (the calibration host's 10) and its training at batch 128 1.30x
#: 21 of 24 once RNN_BACKWARD_CALL_S stopped counting the sweep's training harness (0.98 -> 0.5 ms): the keyword GRU's
#: training at batch 128 1.30x -> 1.10x; the three left are inference on slow hosts (the keyword GRU's 0.70x, the
#: encoder-decoder's at batch 256 0.76x: its runs on hosts probing at 10 us an op 0.99x-1.13x)
#: Two more models written after that and estimated before they ran (lab/data/h100-rnn-new2-2026-12-05/predicted.json:
#: a two-layer bidirectional LSTM tagger of hidden 96, a bidirectional GRU of hidden 192): 4 of 8 within, the tagger
#: 0.63x-0.78x (host-bound on hosts probing at 13-15 us an op), so 24 of 32, worst 1.593x
#: Two more written after the inference workspace's floor (lab/data/h100-rnn-new3-2026-12-05/predicted.json: a
#: three-layer GRU character LM of hidden 128, a two-layer bidirectional LSTM of hidden 32): 6 of 8 within, the
#: character LM's inference at batch 64 1.27x and its training at batch 64 1.54x (host-bound: 4.3 ms measured, its
#: three layers' set-up priced at 6.5 ms of host), so 30 of 40
#: The vision ones ("other"): 8 of 14, worst 1.85x on one run of 10 steps (2026-11-27), whose steps spread up to 178 %;
#: 10 of 14, worst 1.52x as the median of that run and three of 50 steps (2026-12-05, tools/merge_unseen_runs.py:
#: efficientnet_v2_s's training at batch 128 ran 78-112 ms from one run to the next)
#: 11 of 14, worst 1.41x with pooling kernels priced by their work (Inception-v3's inference at batch 128 0.66x ->
#: 0.88x: its nine average pools, 6.2 ms of its 18.9 ms, had been priced 0.4 ms)
#: GoogLeNet and Inception-v4 added, estimated before they ran (lab/data/h100-pools-new-2026-12-05/predicted.json),
#: three runs of 50 steps each: 3 of 4 within (Inception-v4 0.98x and 1.20x, GoogLeNet at batch 128 1.13x); GoogLeNet
#: at batch 32 1.85x is host-bound on a host probing at 6 us an op (1.09x with it), so 14 of 18, worst 1.85x
#: recurrent 31 of 40 once the small-hidden persistent kernel's step goes with the batch's rows (the character LM's
#: training at batch 64 1.54x -> 1.51x, the sensor LSTM's 1.22x -> 1.18x, the bidirectional GRU's at batch 16
#: 1.28x -> 1.19x)
#: The forecaster LSTM and the bidirectional activity GRU, estimated before they ran (lab/data/h100-rnn-rows-2026-12-05/
#: predicted.json, three runs of 50 steps on 2026-12-06): 3 of 8 within (training 1.13x, 1.66x, 0.97x, 1.24x;
#: inference 1.35x-1.40x), so 34 of 48. 35 of 48 once a launched inference step is the host's issuing (their
#: inference 1.28x-1.33x on the calibration host, 1.03x-1.10x on the host they ran on)
#: 34 of 48, worst 1.71x once MISALIGNED_SLOWDOWN was measured (3.0 -> 5.0): the forecaster's and the activity GRU's
#: odd input widths (7 and 9 channels) reach their input projections (the GRU's training at batch 2,048 1.24x -> 1.30x)
#: The GRU review classifier (hidden 256, every step launched), estimated before it ran
#: (lab/data/h100-rnn-host-2026-12-06/predicted.json): 0 of 4 within on the calibration host (training 1.82x and
#: 1.35x, inference 1.41x and 1.30x; its host probed 6-9 us an op), so 34 of 52, worst 1.82x
#: recurrent 34 -> 32 of 52 once a launched training step is the host's issuing (2026-12-06): the runs' hosts probed
#: 11-16 us an op, the calibration host 10 (lstm_lm's training 0.97x -> 0.71x here, 0.89x-0.93x with each run's host)
#: 32 of 52 -> 35 of 60 with the LSTM autoencoder and the GRU language model (2026-12-06, estimated before they ran:
#: 3 of 8 here, their hosts probing 9-15 us an op)
#: 35 -> 33 of 60, worst 1.75x, with one more run of every recurrent case (lab/data/h100-rnn-probe-2026-12-06, a host
#: probing 9-16 us an op)
#: 14 more models (lab/data/h100-unseen-broad-2026-12-06, estimated before they ran, two passes of 20 steps): 19 of 36
#: within as recorded (BEiT's training 3.05x: its learned position bias sent to SDPA's math path; DCGAN's transposed
#: convolutions counted 8x over: 1.99x-2.44x), 20 of 36 once both were traced as CUDA runs them; so 34 of 54, worst
#: 1.99x (LeViT's inference 1.90x and the DLRM's 1.89x-1.91x, host time; the DLRM's training 0.50x-0.58x)
#: 35 of 54 once the H100's NCHW transposes were priced as profiled (R3D-18, NCHW, 0.78x-0.80x -> 0.87x-0.88x); five
#: CNNs in NCHW (lab/data/h100-nchw-unseen-2026-12-06, estimated before they ran at b2f5d8b, two passes of 20 steps):
#: 9 of 10 within (R(2+1)D-18's training 0.73x; the estimator before the transposes 9 of 10 too, but mean |log|
#: 0.18 against 0.125 and worst 0.62x), so 44 of 64; four Hugging Face transformers models from published
#: configurations (lab/data/h100-hf-unseen-2026-12-06, estimated before they ran at 6465412, two passes of 20 steps):
#: 5 of 8 within, memory 8 of 8 (BERT-large's training 1.41x and the SmolLM-shaped Llama's 1.80x/1.82x: host time
#: overestimated where many small ops run in few modules, as LeViT's and MaxViT's), so 49 of 72
#: BERT-base SQuAD (hf:bert-base-uncased-qa, 384 tokens, Lambda's batches 96 and 320; estimated before it ran,
#: lab/data/h100-bert-qa-2026-12-07, one pass of 10 steps, 2026-12-07): 4 of 4 within (1.06x-1.21x), memory 4 of 4
#: (batch 320's training 47.9 GiB measured, 47.85 estimated), so 53 of 76
#: recurrent 33 -> 38 of 60 once a bidirectional layer sets up once per direction (opcost._rnn_setup_s, 2026-12-07:
#: the directions sweep's bidirectional calls had run 1.5x-2.3x a one-direction call's): the bidirectional tagger's
#: four 0.59x-0.77x -> 0.87x-1.05x, the sensor LSTM's training at 512 0.80x -> 1.18x, the deep GRU's training at 32
#: and the speech GRU's inference at 64 into the band; the sensor LSTM's at 64 (training 1.15x -> 1.69x, inference
#: 1.19x -> 1.32x) out of it
#: BERT-base SQuAD with its attention written out (lab/models/bert_qa_eager.py: transformers' eager attention, as
#: DLE's BERT computes it; lab/data/h100-bert-eager-2026-12-07, estimated before it ran, one pass of 10 steps beside
#: hf:bert-base-uncased-qa's cases again): 3 of 3 within, time 0.99x-1.05x, memory 1.00x-1.03x (the SDPA model's
#: 80.97 ms at batch 96 in the same run, 153.98 ms written out, the tool 151.67 ms), so 56 of 79
#: 2026-12-08, the flow shop (OP_GRAPH_STEP_ERROR): recurrent 38 -> 37 of 60 (worst 1.75x -> 1.76x), the others
#: 58 of 79 (worst 1.99x -> 1.91x)
#: 2026-12-08, a training step's own host work measured (opcost.host_units_by_phase: the optimizer 17 + 0.87 a
#: parameter tensor, the forward's and backward's fixed 29, in place of HOST_TRAINING_STEP's fitted 120; the
#: per-op constants refitted): recurrent 37 of 60 (worst 1.76x -> 1.66x), the others 58 -> 56 of 79 (the GRU LM's and
#: DCGAN's training at 1,024 under 0.8x on this host; with each run's own host, below, 62 -> 61)
UNSEEN_GATES = {"recurrent": (60, 37, 1.67), "other": (79, 56, 1.92)}

#: The recurrent cases with each run estimated for the host it ran on (its dispatch probe, as `--probe` gives it;
#: bench.unseen.probed_ratios): (cases, within 0.8x-1.25x, worst either way). Their steps are host-bound and the
#: runs' hosts probed at 9-15 us an op against the calibration host's 10: 28 of 32, worst 1.42x (the keyword GRU's
#: training, 1.33x and 1.42x); the vision ones 12 of 14, worst 1.46x (Inception-v3's inference at batch 128, 0.69x,
#: GPU-bound; 10 of 14 on the calibration host). With the two models written after the workspace's floor: 35 of 40
#: (the character LM's training at batch 64 1.42x)
#: (the vision ones 13 of 14, worst 1.30x, with pooling kernels priced by their work)
#: (recurrent 34 of 40 with the host constants refitted after the convolutions' refit, 2026-12-05)
#: (the vision ones 17 of 18, worst 1.30x, with GoogLeNet and Inception-v4: 0.92x-1.09x each with its run's host)
#: (recurrent 36 of 40 once the small-hidden persistent kernel's step goes with the batch's rows)
#: (with the forecaster and the activity GRU, estimated before they ran: 41 of 48, their inference 1.22x-1.28x; 44 of
#: 48 once a launched inference step is the host's issuing, scaled by the probe: 1.03x-1.10x)
#: (43 of 48, worst 1.71x, once MISALIGNED_SLOWDOWN was measured, 3.0 -> 5.0)
#: (the GRU review classifier: its inference 1.10x-1.14x with its host, its training 1.35x-1.82x, whose launched
#: steps the GPU's floor still prices: 45 of 52, worst 1.82x)
#: 45 -> 48 of 52, worst 1.82x -> 1.41x (2026-12-06): a launched training step the host's issuing, one floor each way
#: (the GRU review classifier's training 1.82x and 1.35x -> 1.07x and 1.05x), the small-hidden kernel's step its own
#: floor and the backward's bias gradient by the rows (the forecaster's at batch 1,024 1.71x -> within, the activity
#: GRU's at 2,048 1.30x -> within); left out: the keyword GRU's training (1.33x, 1.42x), the activity GRU's at batch
#: 512 (0.77x) and the bidirectional tagger's at 32 (0.80x)
#: 48 of 52 -> 56 of 60 with the LSTM autoencoder and the GRU language model, estimated before they ran: 8 of 8
#: 56 of 60, worst 1.41x -> 1.43x, with one more run of every recurrent case (the bidirectional tagger's training at 32
#: and the activity GRU's at 512 within now; GRU-deep's inference at 128 and the character LM's training at 64 at
#: 1.26x); a cuDNN host probe beside each case of that run (lab/rnn_host_runs.py) prices them no better than the
#: dispatch probe: 45 of 60 within against 48 of 60 on that run alone
#: (the others 37 of 54, worst 2.02x, with the 14 models of 2026-12-06: their hosts probed 8-13 us an op)
#: (the others 38 of 54 with the NCHW transposes priced, 46 of 64 with the five NCHW CNNs: their hosts probed 8-12 us;
#: 51 of 72 with the four Hugging Face models, whose hosts probed 7.5-10.5 us)
#: (55 of 76 with BERT-base SQuAD, its host probed 7.6-14 us an op: 1.08x-1.21x)
#: 56 -> 54 of 60 with a set-up per pseudo-layer (2026-12-07): the bidirectional models' steps rise 5-45 %; with
#: each run's host (9-16 us an op) the tagger's inference at 128 (1.06x -> 1.26x) and the sensor LSTM's training at
#: 512 (0.89x -> 1.31x) leave the band, the deep GRU's inference at 128 goes further out (1.26x -> 1.40x): on those
#: hosts a direction's set-up costs less than the probe scales it to, where the sweep's host (5.9 us) ran it at a full
#: layer's
#: Tried and not kept (2026-12-07, night): the layers' set-up read off the probed sweeps' one-step inference calls
#: (0.49 ms at a 10 us host: the two fit sweeps and the two held out agree, 0.49 and 0.50; the 0.6 ms is a line through
#: an unprobed host's calls of 1-256 steps) and a backward call's own set-up a fixed 0.55 ms (the one-step training
#: calls ran 0.87x-1.46x of their price from the 5.9 us host to the 9.8 us one while it scaled with the probe). 57 of
#: 60 here (worst 1.35x) and the held-out sweeps' training calls 209 -> 225 of 328, but the H100 set's LSTM classifier
#: (calibration, a 10 us host) fell 0.687x -> 0.678x and OP_GRAPH_STEP_ERROR's calibration 7.91 -> 7.97 %: the
#: sweeps' calls and a model's disagree on a 10 us host
#: (the others 58 of 79 with BERT-base SQuAD's attention written out: 3 of 3)
#: Tried and not kept (2026-12-07, night): cuDNN's set-up as host work the dispatch probe does not scale (C++, not
#: Python; the keyword GRU's profiled _cudnn_rnn and its backward took 2.2 ms of host on a host probing 11.3 us an op
#: and 2.1 ms on one probing 16.7, lab/data/h100-rnn-step-profile-2026-12-06): 54 -> 56 of 60 here, mean |log| 0.128
#: -> 0.112 with today's constants, but the sensor LSTM's training at 64 1.20x -> 1.53x (its runs took 4.3 ms on hosts
#: probing 6.7 us and 8.3 ms on one probing 14.4: there the set-up does follow the probe); the set-up constants that
#: would bring it to 57 of 60 are read off these cases, so not kept either
#: 2026-12-08, the flow shop (OP_GRAPH_STEP_ERROR): recurrent 54 of 60 (worst 1.43x -> 1.44x), the others 60 -> 62
#: of 79, worst 2.02x -> 1.89x (the DLRM's training at batch 2,048 0.50x -> 0.53x; the SmolLM's training 2.10x ->
#: 1.87x, MaxViT's 1.83x -> 1.49x: their host is priced lower, a recorded forward op 5.5 -> 5.0 and the backward's
#: kernel-less ops inside its nodes, since the steps where a host-bound forward precedes a GPU-bound backward add the
#: two in the flow shop, which the host constants had been fitted up to reach)
#: (2026-12-08, a training step's own host work measured, UNSEEN_GATES: recurrent 54 -> 56 of 60, worst 1.44x -> 1.40x:
#: the keyword GRU's training at 128 1.34x -> 1.16x, the sensor LSTM's at 512 1.30x -> 1.20x, the character GRU's at
#: 64 1.26x -> 1.19x, whose ten or so parameter tensors had paid the 120 units fitted on models of 150-400; the GRU
#: LM's at 128 0.82x -> 0.78x. Others 62 -> 61, worst 1.89x -> 1.84x: NFNet-F0's training 1.23x -> 1.25x)
UNSEEN_PROBED_GATES = {"recurrent": (60, 56, 1.41), "other": (79, 61, 1.85)}


def unseen_probed(family: str) -> Callable[[], Verdict]:
    def check() -> Verdict:
        from bench import unseen as cases

        cases_n, within, worst = UNSEEN_PROBED_GATES[family]
        of_family = [c for c in cases.load() if cases.family(c["spec"]) == family]
        ratios = list(shared(f"unseen_probed_{family}", lambda: cases.probed_ratios(of_family)).values())
        inside = sum(0.8 <= x <= 1.25 for x in ratios)
        off = max((max(x, 1 / x) for x in ratios), default=math.inf)
        return Verdict(len(ratios) == cases_n and inside >= within and off <= worst,
                       f"{family}, each run's host: {inside} of {len(ratios)} within 0.8x-1.25x, worst {off:.2f}x")

    return check


def unseen(family: str) -> Callable[[], Verdict]:
    def check() -> Verdict:
        cases, within, worst = UNSEEN_GATES[family]
        rs = unseen_results_of(family)
        ratios = [r.time_ratio for r in rs]
        inside = sum(0.8 <= x <= 1.25 for x in ratios)
        off = max((max(x, 1 / x) for x in ratios), default=math.inf)
        ok = len(rs) == cases and not any(r.error for r in rs) and inside >= within and off <= worst
        return Verdict(ok, f"{family}: {inside} of {len(rs)} within 0.8x-1.25x, worst {off:.2f}x")

    return check



# ---- cuDNN's fused RNN, call by call (lab/data/h200-rnn-2026-11-27, the recurrent pricer's own measurements) -----
#: phase -> (longest call in steps, calls, within 0.8x-1.25x, mean |log error| in % at most): today's figures.
#: Every call is gated since the pricer knows which training calls run one persistent kernel (2026-12-05; before,
#: training calls of over 16 steps were left out, and those gated were 42 of 48 within, 12.4 %).
#: The training calls less the training harness's own time (autocast, the loss, autograd's engine: timed on an H200
#: on 2026-12-05, bench.recurrent._harness_s) since RNN_BACKWARD_CALL_S stopped counting it (62 of 80, 13.7 % with
#: the harness in the measurement and in the constant)
#: 67 of 80, 12.1 % once the small-hidden persistent kernel's step goes with the batch's rows (RNN_PERSIST_ROW_S):
#: its 256-step calls had come out 1.3x-1.5x at batch 64 and 0.46x-0.76x at batch 512
#: inference 67 -> 69 of 80 (11.1 -> 10.9 %) once a launched step is the host's issuing (opcost._rnn_step_s)
#: training 67 -> 76 of 80 (12.1 -> 9.8 %) with the kernels profiled on an H100 (2026-12-06,
#: bench.recurrent.read_persist_kernels): the small-hidden step its own floor, the backward's bias gradient by the
#: rows, and a launched training step the host's issuing, one floor each way
#: 76 -> 75 of 80 (9.8 -> 9.5 %) with the small-hidden step growing with the hidden size
#: 2026-12-08: an eager step's host and GPU run as a flow shop of its phases (opcost.StepTime.step_s: the host's time
#: through a phase boundary plus the GPU's after it, the larger over every boundary), where (host^8 + GPU^8)^(1/8)
#: of their sums had overlapped them (OP_OVERLAP_P, gone), with the host constants refitted on it and the
#: backward's kernel-less ops priced inside its autograd nodes (opcost.host_units_by_phase): a single call's host
#: and GPU now the larger of the two, not 1.09x above it where they are close: inference 69 -> 68 of 80 (10.91 ->
#: 11.05 %), training 75 -> 76 (9.43 -> 8.90 %)
RNN_CALL_GATES = {"inference": (256, 80, 68, 11.1), "training": (256, 80, 76, 8.91)}  # 9.50 with the half-size tail


#: The calls of the sweeps no constant was read off (bench.recurrent.calls_check), each priced with its host's
#: dispatch probe: phase -> sweep -> (calls, within 0.8x-1.25x, mean |log error| in % at most), today's figures.
#: Training: before the small-hidden persistent kernel's step went with the batch's rows, 83, 48 and 59 within. The
#: H100 hosts ran the calls' set-up 10-20 % under the first H200's, at the same probe speed, which no constant
#: follows. The small-hidden sweep of 2026-12-06 (h100-rnn-rows): 28 of 72, its hidden-160 calls 1.3x-2.4x (their
#: backward launches each step, PyTorch's SMALL_H stopping at 128 there; priced at twice the forward's floor).
#: Training since the persistent kernels were profiled (2026-12-06: the small-hidden step its own floor, the bias
#: gradient by the rows, a launched step the host's, one floor each way): 90 -> 100, 56 -> 59, 66 -> 69, 28 -> 53;
#: with the small-hidden step growing with the hidden size (RNN_PERSIST_SMALL_STEP_UNIT_S, the kernels' own line:
#: 157 of 180 kernels within 0.8x-1.25x against 96 with one figure) 99, 57, 67 and 52.
#: The directions sweep of 2026-12-07 (h100-rnn-directions, a host probing 5.9 us an op): with each layer set up once
#: whatever its directions, training 24 and inference 52 of 96 (its bidirectional calls 0.4x-0.6x at one step); with
#: a set-up per pseudo-layer (a layer's direction: opcost._rnn_setup_s) 58 and 62 of 96
#: Inference, once a launched step is the host's issuing (scaled by the probe; opcost._rnn_step_s): 99 -> 103 of 160,
#: 63 -> 63 of 80, 58 -> 56 of 80, and the small-hidden sweep 34 -> 67 of 72 (its host probed 6.3 us an op)
#: With the flow shop (2026-12-08, RNN_CALL_GATES): training 99 of 160 (23.5 -> 23.7 %), 57 (16.6 -> 16.8 %),
#: 67 -> 68 (13.5 -> 13.3 %), 52 -> 56 (17.8 -> 16.9 %), 58 (18.0 -> 17.5 %); inference unchanged but the second
#: H200 sweep's 56 -> 54 of 80 (16.2 -> 16.6 %)
RNN_OTHER_SWEEPS = {
    "training": {"h100-rnn-calls-2026-12-05": (160, 99, 23.8), "h100-rnn-layers-2026-12-05": (80, 57, 16.9),
                 "h200-rnn-calls-2026-12-05": (80, 68, 13.4), "h100-rnn-rows-2026-12-05": (72, 56, 17.0),
                 "h100-rnn-directions-2026-12-07": (96, 58, 17.6)},
    "inference": {"h100-rnn-calls-2026-12-05": (160, 103, 19.4), "h100-rnn-layers-2026-12-05": (80, 63, 12.4),
                  "h200-rnn-calls-2026-12-05": (80, 54, 16.7), "h100-rnn-rows-2026-12-05": (72, 67, 7.7),
                  "h100-rnn-directions-2026-12-07": (96, 62, 18.6)}}


def _spread(ratios: Iterable[float], band: tuple[float, float] = (0.8, 1.25)) -> tuple[int, float]:
    """How many of `ratios` lie within `band`, and their mean |log error| in %: what the RNN gates hold."""
    xs = [float(x) for x in ratios]
    return sum(band[0] <= x <= band[1] for x in xs), 100 * sum(abs(math.log(x)) for x in xs) / len(xs)


#: a memory figure's band: within 10 %
WITHIN_10 = (0.9, 1.1)


def rnn_other_sweeps(phase: str) -> Callable[[], Verdict]:
    def check() -> Verdict:
        from bench import recurrent

        ok, parts = True, []
        for path in (recurrent.CALLS_H100, recurrent.CALLS_H100_LAYERS, recurrent.CALLS_H200_HARNESS,
                     recurrent.CALLS_H100_ROWS, recurrent.CALLS_H100_DIRECTIONS):
            calls, within, mean_pct = RNN_OTHER_SWEEPS[phase][path.parent.name]
            xs = [float(r["ratio"]) for r in recurrent.call_ratios(path) if r["phase"] == phase]
            inside, mean = _spread(xs)
            ok = ok and len(xs) == calls and inside >= within and mean <= mean_pct
            parts.append(f"{path.parent.name} {inside} of {len(xs)}, {mean:.1f} %")
        return Verdict(ok, f"RNN {phase} calls never fitted: " + "; ".join(parts))

    return check


def rnn_calls(phase: str) -> Callable[[], Verdict]:
    def check() -> Verdict:
        from bench.recurrent import call_ratios

        longest, calls, within, mean_pct = RNN_CALL_GATES[phase]
        ratios = [r["ratio"] for r in call_ratios() if r["phase"] == phase and r["steps"] <= longest]
        inside, mean = _spread(ratios)
        return Verdict(len(ratios) == calls and inside >= within and mean <= mean_pct,
                       f"RNN calls, {phase}: {inside} of {len(ratios)} within 0.8x-1.25x, mean |log error| "
                       f"{mean:.2f} %")

    return check


# ---- published results on other cards (bench/cross_card.py, tests/test_cross_card.py) ---------------------------
#: split or family: (share within 0.8-1.25x at least, worst max(r, 1/r) at most, geomean max(g, 1/g) at most)
# after each card's memory system in the op model (opcost.Rates: a tile's ramp by the card's FLOPs per byte,
# latency-bound streams by its bandwidth per SM); before it (0.45, 2.14, 1.25), (0.50, 2.14, 1.22), (0.36, 2.03, 1.32),
# and before the training path's own kernel rates per card (0.39, 2.14, 1.27), (0.43, 2.14, 1.24), (0.30, 2.03, 1.33)
# with the serving file's 40 TensorRT-LLM rows on the RTX PRO 6000 Server (pipeline stages, 0.98x): 201 rows
# after convolutions at CONV_EFF_NATIVE_MMA on architectures whose cuDNN kernels run on their own full-rate MMA
# (2026-12-04); before it (0.73, 2.14, 1.09), (0.76, 2.14, 1.08), (0.68, 1.87, 1.12)
# after eager FSDP2's loss as memory traffic (FSDP2_ELEMENTWISE, 2026-12-05); before it (0.85, 2.14, 1.03),
# (0.84, 2.14, 1.03), (0.88, 1.47, 1.05)
# after vLLM 0.11's host time per running sequence (vllm@0.11 host_s_per_seq, 2026-12-05: GPUStack's vLLM A100 rows
# 0.47-1.71x -> 0.72-1.06x); before it (0.87, 2.14, 1.02), (0.87, 2.14, 1.02), (0.88, 1.47, 1.04)
# after PyTorch's own NCHW depthwise kernels (opcost.cudnn_depthwise) and NCHW batch norms bound by their channels
# (opcost.nchw_batch_norm_s), both measured on an H200 (bench/nchw.py): timm's RTX 3090 NCHW training rows
# MobileNet-V3 1.54x -> 0.98x, EfficientNet-B0 1.27x -> 1.01x; before it (0.90, 1.57, 1.02), (0.90, 1.57, 1.01)
# vllm@0.11's host time per sequence refitted with GPUStack's vLLM Qwen3-8B runs at 1, 2 and 8 users (200 -> 190 us):
# the A100 vLLM queued TTFT 0.81x -> 0.79x; before it (0.93, 1.50, 1.02), (0.94, 1.50, 1.01) and GA100 0.92
# vLLM 0.22-0.23 online runs on an RTX 5090 (Poisson, 1-16 requests/s) and an L4 (1-32 users) joined (39 rows, medians;
# docs/serving.md): their worst is the RTX 5090's TTFT past the knee at 16 requests/s (0.07x: the simulation keeps up
# where the card queued), the calibration split's the same load's TPOT (0.60x); before them (0.92, 1.50, 1.02),
# (0.93, 1.50, 1.01), (0.90, 1.39, 1.05), Ada (0.91, 1.39, 1.05), Blackwell GeForce/professional (0.95, 1.27, 1.03)
# (their held-out third split among themselves: bench/cross_card.py SERVING_ROWS_AT_SPLIT)
# fp16 ResNet stems priced as cuDNN's first-layer kernels run them (WIDE_STEM_SLOWDOWN_FP16 1.5, measured on an H100;
# 3.0 before): timm's RTX 4090 ResNet inference 0.72-0.79x -> 0.80-0.95x, all 0.907 -> 0.911, held out 0.824 -> 0.838
# a depthwise backward keeps the H100's share of the bandwidth on every card (opcost._conv_s): timm's RTX 3090 NHWC
# training of MobileNetV3 1.49x -> 1.34x and EfficientNet-B0 (held out) 1.26x -> 1.15x; held out 0.838 -> 0.851
#: held out 0.85 -> 0.878 with pooling kernels priced by their work and STREAM_BW_EFF refitted (the 4090's held-out
#: inference rows 0.77-0.91x -> 0.79-0.94x)
#: all 0.92 -> 0.94, held out 0.878 -> 0.934 with the RTX 5090 host's own front-end (its page measured it: 6.65 ms,
#: where the vLLM profile's 25 ms had been fitted on that host's rows and the L4's together) and six cold
#: single-request TTFTs of the same page (512-16,384 tokens, 1.01-1.06x) joined
#: held out 0.934 -> 0.947 with the convolutions refitted (geomean 0.95, the RTX 4090's inference rows faster)
#: held out 0.947 -> 0.934 once image stems were priced against the GEMM rate (the H100's stem calls, measured against
#: it, are slower there than CONV_EFF_NATIVE_MMA's rate had them on GeForce cards): the RTX 4090's channels-last
#: ResNet-18 inference 0.81x -> 0.80x, just out of the band
#: every row within 0.67x-1.5x once vLLM's FlashAttention 2 query tiles were priced and an open loop became the median
#: of five Poisson draws: the RTX 5090 at 16 requests/s (held out) 0.07x -> 0.96x (calibration: its TPOT 0.60x ->
#: 1.01x); worst all 14.4 -> 1.48 (the L4's one-user TTFT), calibration 1.67 -> 1.44 (SGLang's A100 TPOT 0.70x)
#: the current vLLM's host time beside the GPU's step (async scheduling): the L4's one-user TTFT (held out) 1.48x ->
#: 1.50x with its front-end refitted, the RTX 5090's TPOT closer to 1 (0.95 in band, was 0.948)
#: FP8 GEMMs at FP8_REACH (0.89) of a bf16 GEMM's share of the peak, measured by the probe (2026-12-06): the FP8
#: serving rows come down (Hopper's geomean 1.042 -> 0.987, data-center Blackwell's 1.099 -> 1.083, the L40S's FP8
#: rows 1.04-1.11x -> 0.97-1.04x, pulling Ada's 0.982 -> 0.976), the share within the band unchanged: all 0.991 -> 0.988
# the half-size last wave of a GEMM (2026-12-07): calibration 96 % -> 95.5 %, held out 93 % -> 94.7 % within the band
# each card's published copy bandwidth over the H100's (gpuadvisor.bandwidth_reach, 2026-12-07: the A100 x 0.91, the
# H200 x 0.96): all 95.2 % -> 94.8 % within the band (one row, GPUStack's SGLang A100 burst throughput 0.82x ->
# 0.80x), geomean 0.990 -> 0.986 (calibration 0.992 -> 0.989); TensorRT-LLM's A100 tables come to 0.95x-1.08x from
# 0.99x-1.13x, and vidur's A100 decode GEMMs 60 % -> 77 % within (tests/test_vidur_gemm.py)
# and with sglang@0.5's per-sequence host time refitted beside it (250 us): the calibration's worst is SGLang's A100
# burst TPOT, 0.70x -> 0.68x
# Lambda's one-GPU training table joined (2026-12-07, tests/data/published-cross-card-3.json: ResNet-50 and BERT-base
# SQuAD on eleven cards, 22 rows, 7 of them out of the band: the RTX 8000's two, the BERT rows of the A10, RTX 6000
# Ada and H100 PCIe at 1.33x-1.40x, the V100's ResNet-50 1.21x in and its BERT 1.20x in), with lower-power cards'
# matmuls at the clock their power holds (POWER_CLOCK_EXPONENT: the L4, H100 PCIe, A100 PCIe, A10 and RTX 6000 Ada
# slower): all 94.8 % -> 93.8 % (252 -> 274 rows), calibration 94.9 % -> 92.7 %, held out 94.7 % -> 96.3 %; with
# the table's FP32 ResNet-50 (11 rows) and cuDNN's TF32 convolutions where the card has them (Rates.conv_rate: the
# A100s' and H100 PCIe's FP32 rows 0.31x-0.50x -> 1.01x-1.10x): all 92.6 % of 285, held out 95.3 %
# the front-end's queue (2026-12-07, SERVING_ONLINE): GPUStack's A100 bursts' TTFT (calibration here) 0.83x/0.73x ->
# 1.20x/1.07x in, their throughput out (vLLM's 0.88x -> 0.80x, held out here; SGLang's 0.81x -> 0.78x): all 92.6 %
# (unchanged), calibration 91.5 % -> 92.0 %, held out 95.3 % -> 94.1 %
# the published ShareGPT runs drawn through vLLM's benchmark filter (SERVING_ONLINE): all 92.6 % -> 93.0 %,
# calibration 92.0 % (geomean 1.0104, over its 1.01 by 0.0004), held out 94.1 % -> 95.3 %
# Lambda's BERT-base SQuAD rows priced as the run's code computes them (2026-12-07, night): DLE's attention written out
# (lab/models/bert_qa_eager.py, measured on an H100 within 5 %) in float16 under apex's O2, no autocast: their
# batches then fill 92-96 % of each card but the V100 (SDPA's graph had left 31-42 % free), the rows
# 1.02x-1.40x -> 0.97x-1.30x; all 93.0 % -> 93.3 %, calibration 92.0 % -> 92.5 % (geomean 1.0104 -> 1.0079), held
# out 95.3 %
# GPUStack's A100 bursts' median TPOT joined (4 rows) and the per-sequence host times were fitted without the bursts'
# mean TPOT (SERVING_ONLINE, 2026-12-07, night): all 93.3 % -> 93.8 % of 289, calibration 92.5 % -> 92.1 %, held
# out 95.2 % -> 97.7 %; the worst row is now SGLang's A100 burst's mean TPOT, 0.68x -> 0.53x (its median 0.87x): a
# tail of stalled short answers the simulation does not draw (docs/serving.md, "The mean TPOT of a burst"), the one
# row outside 0.67x-1.5x
# the ShareGPT runs drawn from measured lengths (SERVING_ONLINE, 2026-12-07): all 93.8 % -> 94.1 %, calibration
# 92.1 %, held out 97.7 % -> 98.8 %; every row within 0.67x-1.5x (SGLang's A100 burst's mean TPOT 0.53x -> 1.09x, its
# TTFT 0.80x -> 0.69x the lowest now), geometric means 1.005 -> 1.007 (Ampere GA100's 1.035 -> 1.001)
TODAY_SPLITS = {"all": (0.941, 1.47, 1.008), "calibration": (0.921, 1.47, 1.01), "held out": (0.988, 1.35, 1.003)}
TODAY_FAMILIES = {  # after the native-MMA convolutions; before, in comments
    # timm's RTX 3090 vision about 1.0x (was 0.87x: 0.58, 1.89, 1.15; 0.68x before the matmul reach)
    # (0.84, 1.55, 1.02) before NCHW depthwise and batch norm were measured; (0.92, 1.55, 1.01) before NCHW
    # convolutions without room for their NHWC copies (timm-3090-infer-nchw-vgg16 1.54x -> 1.13x)
    # the cheaper fp16 ResNet stem: the 3090's inference ResNets 0.77-0.88x -> 0.86-0.95x, its training ones up
    # a little (geomean 1.01 -> 1.015)
    # a depthwise backward without the bandwidth-per-SM lift: (0.94, 1.50, 1.02) before
    # pooling kernels by their work and STREAM_BW_EFF 0.95: (0.96, 1.35, 1.02) before; the 3090's channels-last
    # MobileNetV3 training (no pools, its elementwise ops faster) 1.34x -> 1.37x
    # (0.96, 1.37, 1.021) before the convolutions' refit: the 3090's channels-last MobileNetV3 training 1.39x
    # (0.96, 1.39, 1.021) before Lambda's RTX 3090, A10 and RTX A6000 rows (2026-12-07: 1.04x-1.36x, the A10's BERT
    # 1.36x out of the band; its matmuls at its 150 W clock: 0.707 of its peak, the RTX A6000's 0.797 x 0.89)
    # and the FP32 rows (the A10's 1.35x out, the 3090's 1.04x and A6000's 1.16x in)
    "Ampere GA10x": (0.934, 1.39, 1.03),
    # timm's RTX 4090 vision (held out) about 0.95x (was 0.8x: 0.71, 1.87, 1.11); the L4's vLLM TTFT at 16 users 0.71x
    # (0.93, 1.41, 1.04) before the vLLM front-end was refitted on the L4's rows alone (25 -> 32 ms: the RTX 5090's
    # rows take their host's measured 6.65 ms): the L4's one-user TTFT 1.22x -> 1.48x, its 16-user one 0.71x -> 0.78x
    # worst 1.48x -> 1.50x: the L4's one-user TTFT once its front-end was refitted beside async scheduling (33 ms)
    # (0.95, 1.5, 1.04) before Lambda's RTX 4090 (held out, 1.00x-1.02x) and RTX 6000 Ada rows (its BERT 1.40x)
    # the RTX 6000 Ada's FP32 1.29x out; the L4's one-user TTFT 1.46x; 0.90 before the fp16 ResNet stem's slowdown
    # geomean 0.992 -> 0.990 with Lambda's BERT rows as DLE's code runs (the RTX 4090's 1.02x -> 0.97x, the RTX 6000
    # Ada's 1.40x -> 1.28x)
    "Ada": (0.956, 1.47, 1.011),
    # llm-foundry MPT about 0.92x (0.82x while eager FSDP2's loss was a share of the step: 0.69, 2.14, 1.12);
    # TensorRT-LLM about 1.0x; GPUStack all-queued 0.64x-1.06x; NVIDIA's ResNet-50 about 1.0x (was 0.81x: 0.69, 2.14,
    # 1.13)
    # with IBM's fms-fsdp Llama 2 runs (0.91-1.22x; 0.78, 1.08 before); vLLM 0.11's host time per running sequence
    # (0.80, 2.14, 1.07 before it)
    # (0.90, 1.57, 1.05) before sglang@0.5's per-sequence host time and SGLang's admission
    # geomean 1.04 (1.05 allowed) with vLLM's FlashAttention 2 query tiles (the A100's vLLM queued TTFT 0.79x -> 0.85x)
    # geomean 0.964 -> 0.945 (1.058 either way) with the A100's published copy bandwidth (0.79 of its figure, the
    # H100's 0.87: gpuadvisor.bandwidth_reach): TensorRT-LLM's 8B tables 1.02x-1.13x -> 0.95x-1.08x, llm-foundry's
    # small MPTs 0.83x-0.90x -> 0.81x-0.87x, GPUStack's SGLang burst throughput 0.82x -> 0.80x (out of the band)
    # worst 1.44 -> 1.47 (SGLang's A100 burst TPOT 0.70x -> 0.68x) with sglang@0.5's host time refitted on it
    # (0.90, 1.47, 1.06) before Lambda's A100 rows (SXM4 80GB and PCIe 40/80GB: 1.17x-1.22x, the PCIe cards' matmuls
    # at their 250-300 W clocks)
    # (0.915, 1.47, 1.03) before the bursts' medians joined and the host times were fitted without their mean TPOT
    # (63 rows; SGLang's A100 mean TPOT 0.68x -> 0.53x, its throughput 0.78x -> 0.93x)
    # (0.952, 1.9, 1.035) before the ShareGPT runs were drawn from measured lengths: SGLang's A100 burst's mean TPOT
    # 0.53x -> 1.09x, its TTFT 0.80x -> 0.69x
    "Ampere GA100": (0.968, 1.45, 1.01),  # the FP32 rows on TF32: 1.01x-1.10x
    # GH200 serving; (1.00, 1.17, 1.05) before FP8_REACH; (1.00, 1.13, 1.02) before Lambda's H100 PCIe rows (ResNet-50
    # 1.17x, BERT 1.33x; the same table's H100 SXM: 1.02x and 1.25x)
    "Hopper": (1.0, 1.21, 1.05),  # the H100 PCIe's FP32 1.08x; its BERT 1.33x -> 1.20x as DLE's code runs
    # DeepLearningExamples ResNet-50 about 1.0x (was 0.80x: 0.50, 1.29, 1.25); geomean 0.98 with the convolutions
    # refitted (1.00 before)
    # worst 1.05x -> 1.07x once image stems were priced against the GEMM rate, not CONV_EFF_NATIVE_MMA's (the H100's
    # stem calls measured against it: V100 ResNet-50 inference at batch 64 1.01x -> 0.99x)
    # (1.00, 1.07, 1.04) before Lambda's V100 rows (NCHW ResNet-50 1.21x, BERT 1.20x, both held out)
    # and its FP32 row 0.69x (true FP32: cuDNN's Winograd convolutions beat the FMA rate the tool prices)
    "Volta": (0.857, 1.44, 1.02),
    # the T4 (measured matmul reach 0.65, 70 W) about 1.0x (was 0.83x: 1.00, 1.22, 1.21); 1.00, 1.00 before the fp16
    # ResNet stem's own slowdown
    # (1.00, 1.03, 1.03) before Lambda's Quadro RTX 8000 rows (NCHW ResNet-50 1.28x, BERT 1.32x, with its matmuls at
    # the T4's measured 0.651, its architecture's only measurement, where they had the full-rate median 0.798: 1.35x
    # and 1.46x): the family's geometric mean 1.13 with those two
    # and its FP32 row (true FP32, no TF32 on Turing) 0.80x: geometric mean 1.055
    "Turing": (0.4, 1.32, 1.06),
    # the GB200 at the B200's measured matmul reach (the same chip at a higher power limit; was the full-rate
    # median: geomean 1.103x, GB200 Llama 3 8B 1.19x -> 1.17x): the issue's 0.9x-1.1x
    # worst 1.27 -> 1.30 once TensorRT-LLM v1.x's overlap scheduler runs its host time beside the GPU's step
    # (engines.json plans_ahead): the B200's 70B FP4 table at 128/2048 tokens 1.265x -> 1.300x
    "Blackwell (data center)": (0.88, 1.31, 1.10),
    # TensorRT-LLM 70B FP4 on RTX PRO 6000 Server, PP1-8; vLLM 0.22.1 Qwen3-4B on an RTX 5090 (past the knee 0.07x)
    # 0.85 -> 0.94 with the RTX 5090 host's own front-end and its cold single-request TTFTs (geomean 0.97 -> 0.95)
    # (0.94, 14.4, 1.06) before vLLM's FlashAttention 2 query tiles and the median of five Poisson draws: the RTX
    # 5090's 16 requests/s TTFT 0.07x -> 0.96x; its 10 requests/s TTFT 1.13x -> 1.41x, its worst now
    # (0.94, 1.41, 1.02) before the current vLLM's host time ran beside the GPU's step (its 10 requests/s TTFT 1.35x)
    "Blackwell (GeForce/professional)": (0.955, 1.36, 1.002),
}



#: NCHW ops as PyTorch runs them on an H200 (bench/nchw.py, lab/data/h200-nchw-2026-12-05/): the op pricer over the
#: measured time, geometric mean per group within these bounds (today's about 1.10, 0.97, 0.99, 0.96, +-10 %)
NCHW_OPS = {"depthwise forward": (0.99, 1.21), "depthwise backward": (0.87, 1.07),
            "batch norm forward": (0.89, 1.10), "batch norm backward": (0.86, 1.06),
            # cuDNN's kernels without room for the NHWC copies (conv_fallback): 1.00 and 1.06 today
            "workspace-free convolution": (0.92, 1.08), "workspace-free convolution at 64 channels": (0.95, 1.17)}
#: VGG-16's inference step at batch 1024 on an H200 capped to 23.4 and 22.0 GiB (out of sample): 0.91 today
NCHW_CAPPED_STEPS = (0.8, 1.25)


def nchw_capped_steps() -> Verdict:
    from bench import nchw

    ratios = [x for _, x in shared("nchw_capped", nchw.capped_steps)]
    lo, hi = NCHW_CAPPED_STEPS
    return Verdict(all(lo <= x <= hi for x in ratios), f"capped VGG-16 steps: {[round(x, 2) for x in ratios]} "
                                                       f"(gate {lo}-{hi})")


def nchw_ops(group: str) -> Callable[[], Verdict]:
    def check() -> Verdict:
        from bench import nchw

        ratios = shared("nchw_ops", nchw.op_ratios)[group]
        geomean = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
        lo, hi = NCHW_OPS[group]
        return Verdict(lo <= geomean <= hi, f"{group}: geometric mean {geomean:.3f} over {len(ratios)} ops "
                                            f"(gate {lo}-{hi})")

    return check


#: the ResNet stem's forward (3 channels, 7x7/2) on an H100 in each dtype, two runs each (lab/conv_stem.py): every
#: call within this band of the op pricer (fp16 1.12x and 1.01x, bf16 0.99x and 0.98x today)
WIDE_STEMS = (0.8, 1.25)


def wide_stems() -> Verdict:
    """The ResNet stem's calls and ViT's 16x16/16 patchify calls (PATCHIFY_SLOWDOWN's, 0.98x-0.99x today), each
    within WIDE_STEMS of the op pricer."""
    from bench import stems

    ratios = [x for dtype in ("fp16", "bf16") for x in stems.forward_ratios(stems.wide_stems(dtype))]
    patch = stems.forward_ratios(stems.patchifies(16))
    lo, hi = WIDE_STEMS
    return Verdict(len(ratios) == 4 and len(patch) >= 2 and all(lo <= x <= hi for x in ratios + patch),
                   f"ResNet stems fp16, bf16: {[round(x, 2) for x in ratios]}; ViT patchify "
                   f"{[round(x, 2) for x in patch]} (gate {lo}-{hi})")


#: cuDNN's transposes around the H100's NCHW convolutions (bench/nchw_transposes.py): priced / profiled within
#: 0.8x-1.25x on at least 32 of the 34 fitted rows and NCHW_TRANSPOSES_HELD_OUT of the 18 held out (15 today:
#: wav2vec2's smallest convolution 0.45x, R3D-18's 256-channel training 1.26x)
NCHW_TRANSPOSES_HELD_OUT = 15


def nchw_transposes() -> Verdict:
    from bench import nchw_transposes as t

    fitted = [x for _, x in t.ratios(held=False)]
    held = [x for _, x in t.ratios(held=True)]
    inside = sum(0.8 <= x <= 1.25 for x in fitted), sum(0.8 <= x <= 1.25 for x in held)
    return Verdict(len(fitted) == 34 and len(held) == 18 and inside[0] >= 32 and inside[1] >= NCHW_TRANSPOSES_HELD_OUT,
                   f"NCHW transposes within 0.8x-1.25x: fitted {inside[0]} of {len(fitted)}, held out {inside[1]} of "
                   f"{len(held)}")


#: NCHW 1x1 convolutions of stride 1 on maps whose pixels are not a multiple of 8 (bench/nchw_transposes.py, the
#: third call): the forward's NCHW / channels-last time within 0.8x-1.25x of NCHW_1X1_UNALIGNED_SLOWDOWN on at least
#: 7 of 8 (today 7: 2048->512 on 7x7 ran 0.91x, its NHWC kernel as slow as the transposed one)
NCHW_1X1_WITHIN = 7


def nchw_1x1() -> Verdict:
    from bench import nchw_transposes as t

    xs = [x / cal.NCHW_1X1_UNALIGNED_SLOWDOWN for _, x in t.one_by_one_ratios(aligned=False)]
    inside = sum(0.8 <= x <= 1.25 for x in xs)
    return Verdict(len(xs) == 8 and inside >= NCHW_1X1_WITHIN,
                   f"NCHW unaligned 1x1: {inside} of {len(xs)} within 0.8x-1.25x of the slowdown")


#: PyTorch's pooling kernels on an H100 (bench/pools.py) against opcost.pool_work_s: every call of the shapes the
#: fit read within 0.8x-1.25x (0.86x-1.11x today), and of the held-out third at least HELD_OUT_WITHIN within it
#: (14 of 16 today: a channels-last 2x2 max pool of 512 channels on a 28-pixel map, forward 0.78x and backward 0.75x)
#: and all within 0.67x-1.5x
POOL_HELD_OUT_WITHIN = 14


def pool_kernels() -> Verdict:
    from bench import pools

    fitted = [x for phase in pools.PHASES for x in pools.ratios(phase, held=False)]
    held = [x for phase in pools.PHASES for x in pools.ratios(phase, held=True)]
    inside = sum(0.8 <= x <= 1.25 for x in held)
    ok = (len(fitted) == 24 and all(0.8 <= x <= 1.25 for x in fitted) and len(held) == 16
          and inside >= POOL_HELD_OUT_WITHIN and all(0.67 <= x <= 1.5 for x in held))
    return Verdict(ok, f"fitted {min(fitted):.2f}-{max(fitted):.2f}x; held out {inside} of {len(held)} within "
                       f"0.8x-1.25x, {min(held):.2f}-{max(held):.2f}x")


#: shapes no fit saw (bench.pools.UNSEEN, 14 calls a layout, both directions): NCHW 13 of 14 within 0.8x-1.25x
#: (0.77x-1.20x); channels-last 5 of 14, 0.65x-1.88x (its stride-1 max pools, which the line overprices)
POOL_UNSEEN = {"nchw": (13, 0.77, 1.21), "nhwc": (5, 0.64, 1.89)}


def pool_kernels_unseen() -> Verdict:
    from bench import pools

    out, ok = [], True
    for layout, (within, low, high) in POOL_UNSEEN.items():
        xs = pools.unseen_ratios(layout)
        inside = sum(0.8 <= x <= 1.25 for x in xs)
        ok = ok and len(xs) == 14 and inside >= within and low <= min(xs) and max(xs) <= high
        out.append(f"{layout} {inside} of {len(xs)} within 0.8x-1.25x, {min(xs):.2f}-{max(xs):.2f}x")
    return Verdict(ok, "; ".join(out))


def dilated_convs() -> Verdict:
    """What dilation costs as priced over what it cost on an H100, each 2-D dilated call within 0.9x-1.1x (today
    0.97x-1.06x; priced undilated, as before tracer revision 20, the ASPP calls 0.64x-0.68x)."""
    from bench.dilated import priced_ratios

    xs = [x for *_, x in priced_ratios()]
    return Verdict(len(xs) == 9 and all(0.9 <= x <= 1.1 for x in xs), f"{min(xs):.2f}x-{max(xs):.2f}x over {len(xs)}")


#: upsampling on an H100 (bench.upsample, lab/data/h100-upsample-ops-2026-12-07), the entries UPSAMPLE_KERNELS prices:
#: direction -> (fitted calls within 0.8x-1.25x at least, of; held-out calls within at least, of). Today forward
#: 36 of 48 and 18 of 24 (NCHW bilinear on small maps the misses: its kernel loops over batch x channels in a thread
#: per output pixel, 0.06x-0.3x), backward (fp32) 9 of 12 and 4 of 6; priced by their bytes, as before, 0 of 72
#: forwards and 0 of 18 backwards (0.0x-0.58x)
UPSAMPLE_GATES = {"forward": (36, 48, 18, 24), "backward": (9, 12, 4, 6)}


def upsample_kernels() -> Verdict:
    from bench import upsample

    out, ok = [], True
    for phase, (fit_in, fit_n, held_in, held_n) in UPSAMPLE_GATES.items():
        fitted, held = upsample.ratios(phase, held=False), upsample.ratios(phase, held=True)
        a, b = sum(0.8 <= x <= 1.25 for x in fitted), sum(0.8 <= x <= 1.25 for x in held)
        ok = ok and (len(fitted), len(held)) == (fit_n, held_n) and a >= fit_in and b >= held_in
        out.append(f"{phase}: fitted {a} of {len(fitted)}, held out {b} of {len(held)} within 0.8x-1.25x")
    return Verdict(ok, "; ".join(out))


#: transposed convolutions on an H100 (bench.transposed, lab/data/h100-transposed-convs-2026-12-07): direction ->
#: (within 0.8x-1.25x at least, of 21 shapes, mean |log(priced / profiled)| at most), each against its cuDNN kernels'
#: time. Today forward 15 of 21 (0.191), training 14 of 21 (0.219); priced as the forward convolution they are
#: recorded as, before the dgrad swap (2026-12-07): forward 8 of 21 (0.58), training 1 (0.50); with a narrow-N reach
#: (n / (n + 116)) at forward convolutions' K ramp instead of the dgrad's own, 15 (0.259) and 13 (0.264).
#: The misses: DCGAN's first layer (100 input channels, the dgrad's misaligned K: 0.3x-0.6x) and a few 1.25x-1.29x
TRANSPOSED_CONV_GATES = {"forward": (15, 0.2), "training": (14, 0.225)}


def transposed_convs() -> Verdict:
    from bench.transposed import kernel_ratios

    out, ok = [], True
    for phase, (within, mean_log) in TRANSPOSED_CONV_GATES.items():
        xs = [x for _, x in kernel_ratios(phase)]
        inside = sum(0.8 <= x <= 1.25 for x in xs)
        mean = sum(abs(math.log(x)) for x in xs) / len(xs)
        ok = ok and len(xs) == 21 and inside >= within and mean <= mean_log
        out.append(f"{phase} {inside} of {len(xs)} within 0.8x-1.25x, mean |log| {mean:.3f}")
    return Verdict(ok, "; ".join(out))


def cross_card_rows() -> list[Any]:
    from bench import cross_card

    return shared("cross_card", cross_card.evaluate)  # type: ignore[no-any-return]


def cross_card(kind: str, name: str) -> Callable[[], Verdict]:
    """A split's or a card family's share within 0.8x-1.25x, worst ratio and geometric mean, at today's figures."""

    def check() -> Verdict:
        from bench import cross_card as X

        share, worst, geomean = (TODAY_SPLITS if kind == "split" else TODAY_FAMILIES)[name]
        rows = cross_card_rows()
        s = (X.splits(rows) if kind == "split" else X.per_family(rows))[name]
        dev = max(s["worst"], 1 / s["worst"]), max(s["geomean"], 1 / s["geomean"])
        return Verdict(s["in_band"] >= share and dev[0] <= worst and dev[1] <= geomean,
                       f"{name}: {s['in_band']:.2f} within 0.8x-1.25x, worst {dev[0]:.2f}x, geomean off {dev[1]:.2f}x")

    return check

#: family -> (cases, within 10 % in peak memory): today's figures (the recurrent ones were 4 of 16 before cuDNN's
#: workspace and no reserve space in inference, 12 of 16 before the measured reserve and autocast's copies in
#: training, 2026-12-05)
#: the two models added on 2026-12-05 (evening): 6 of 8, the keyword GRU's training 0.71x and 0.62x (a two-layer GRU
#: of hidden 128 trained in cuDNN's persistent kernels: what it holds was never measured call by call)
#: 24 of 24 once every training call whose forward runs persistent was counted RNN_TRAIN_PERSIST_ROWS (measured on the
#: small-hidden grid, lab/data/h200-rnn-memory-small-2026-12-05): the keyword GRU's training 0.95x and 0.97x
#: the two models added after that (2026-12-05, night): the bidirectional GRU's 4 within, the bidirectional LSTM
#: tagger's 0.86x-0.90x (its small-hidden inference workspace: the grid's short calls of hidden 64 held a few MB more
#: than counted too), so 28 of 32
#: 31 of 32 once an RNN call's inference workspace has a floor per layer and direction (RNN_WORKSPACE_FLOOR_BYTES,
#: fitted on both grids; the tagger was measured before that fit, so its 0.86x-0.90x -> 0.98x-1.01x is not out of
#: sample): the bidirectional GRU's training at batch 64 1.08x -> 1.11x is the one outside
#: the two written after that floor and estimated before they ran (h100-rnn-new3-2026-12-05): 7 of 8 within (the
#: character LM's inference at batch 256 1.12x; without the floor they were 4 of 8, the sensor LSTM 0.74x-0.87x), so
#: 38 of 40
#: the forecaster and the activity GRU, estimated before they ran: 4 of 8 (training 0.97x-1.08x; inference 1.11x-1.37x,
#: the inference workspace overcounted at these long calls), so 42 of 48
#: the GRU review classifier, estimated before it ran: 4 of 4 (1.00x-1.07x), so 46 of 52
#: 52 of 52 once the workspace counts the input's copies at its width and a training call every step's gates
#: (RNN_WORKSPACE_INPUT_PASSES, lab/data/h100-rnn-memory-inputs-2026-12-06): the forecaster's inference 1.21x and
#: 1.37x -> 1.00x, its training 0.97x -> 0.93x, the activity GRU's 1.07x-1.14x -> 1.02x-1.04x
#: 52 of 52 -> 58 of 60 with the LSTM autoencoder and the GRU language model, estimated before they ran: 6 of 8 (the
#: autoencoder's training 0.90x and 0.88x: its decoder reads an expanded state, its weights compacted every call)
#: 58 -> 60 of 60 once an RNN backward holds the forward's training workspace again (2026-12-06, measured call by
#: call: lab/data/h100-rnn-kernels-new-2026-12-06/rnn_backward_memory.json): the autoencoder's training 0.88x-0.90x
#: -> 0.91x-0.92x, the bidirectional GRU of hidden 192's 1.06x -> 1.04x-1.09x (its launched backward without the
#: persistent kernel's rows)
UNSEEN_MEMORY_GATES = {"recurrent": (60, 60)}


def unseen_memory(family: str) -> Callable[[], Verdict]:
    def check() -> Verdict:
        cases, within = UNSEEN_MEMORY_GATES[family]
        rs = unseen_results_of(family)
        inside = sum(abs(r.memory_ratio - 1) <= 0.10 for r in rs)
        return Verdict(len(rs) == cases and inside >= within, f"{family}: {inside} of {len(rs)} within 10 % in memory")

    return check


def rnn_memory_grid(grid: str) -> Path:
    """The measurement of one grid of lab/rnn_memory.py: `main` (lab/data/h200-rnn-memory-2026-12-04), `small` (the
    small-hidden grid, H200, 2026-12-05), `steps` (64-1,024 steps, H100, 2026-12-06), `inputs` (input widths 7 and 32
    against the hidden size's, H100, 2026-12-06)."""
    from bench import recurrent as R

    return {"main": R.RNN_MEMORY, "small": R.RNN_MEMORY_SMALL, "steps": R.RNN_MEMORY_STEPS,
            "inputs": R.RNN_MEMORY_INPUTS}[grid]


def rnn_workspace(calls: int, within: int, mean_pct: float, grid: str = "main") -> Callable[[], Verdict]:
    """cuDNN's inference workspace per RNN call of one grid of lab/rnn_memory.py (rnn_memory_grid) against the
    formula the trace counts (kernels.rnn_workspace_bytes)."""

    def check() -> Verdict:
        from bench.recurrent import workspace_ratios

        ratios = workspace_ratios(rnn_memory_grid(grid))
        inside, mean = _spread(ratios, WITHIN_10)
        return Verdict(len(ratios) == calls and inside >= within and mean <= mean_pct,
                       f"RNN workspace: {inside} of {len(ratios)} within 10 %, mean |log error| {mean:.2f} %")

    return check

def rnn_persist_kernels() -> Verdict:
    """cuDNN's profiled training kernels against the constants read off them (bench.recurrent.persist_kernel_ratios):
    the small-hidden step 157 of 180 within 0.8x-1.25x (mean |log error| 14.0 %), the bias gradient 19 of 20 within
    10 % (4.2 %); either constant scaled by 0.75 or 1.25 falls below."""
    from bench.recurrent import persist_kernel_ratios

    steps, bias = persist_kernel_ratios()
    (step_in, step_err), (bias_in, bias_err) = _spread(steps), _spread(bias, WITHIN_10)
    ok = (len(steps), len(bias)) == (180, 20) and step_in >= 157 and step_err <= 14.1 and bias_in >= 19 \
        and bias_err <= 4.3
    return Verdict(ok, f"RNN kernels: small-hidden step {step_in} of {len(steps)} within 0.8x-1.25x ({step_err:.1f} "
                       f"%), bias gradient {bias_in} of {len(bias)} within 10 % ({bias_err:.1f} %)")


def rnn_backward_workspace(calls: int, within: int, mean_pct: float) -> Callable[[], Verdict]:
    """What each training call's backward holds while it runs against the trace's count (the forward's training
    workspace again: bench.recurrent.backward_workspace_ratios)."""

    def check() -> Verdict:
        from bench.recurrent import backward_workspace_ratios

        ratios = [x for _, x in backward_workspace_ratios()]
        inside, mean = _spread(ratios, WITHIN_10)
        return Verdict(len(ratios) == calls and inside >= within and mean <= mean_pct,
                       f"RNN backward workspace: {inside} of {len(ratios)} within 10 %, mean |log error| {mean:.2f} %")

    return check


def rnn_training_calls(calls: int, kept: tuple[int, float], peak: tuple[int, float],
                       grid: str = "main") -> Callable[[], Verdict]:
    """What each cuDNN RNN training call of one grid (rnn_memory_grid) keeps for its backward (reserve space,
    autocast's copies) and holds at its peak (and its workspace), against what the trace counts
    (bench.recurrent.training_call_ratios): (calls within 10 %, mean |log error| in %) at least and at most."""

    def check() -> Verdict:
        from bench.recurrent import training_call_ratios

        path = rnn_memory_grid(grid)
        verdicts = []
        for name, ratios, (within, mean_pct) in (("kept", training_call_ratios(path, kept=True), kept),
                                                 ("peak", training_call_ratios(path), peak)):
            inside, mean = _spread(ratios, WITHIN_10)
            verdicts.append((len(ratios) == calls and inside >= within and mean <= mean_pct,
                             f"{name} {inside} of {len(ratios)} within 10 %, mean |log error| {mean:.2f} %"))
        return Verdict(all(ok for ok, _ in verdicts), "RNN training calls: " + "; ".join(t for _, t in verdicts))

    return check


GATES: tuple[Gate, ...] = (
    # the quoted figures are to one decimal: 4.1 % is the worst 4.13 % (qlora #29), 1.3 % the -1.32 % of tp2
    Gate("memory_h100", f"{README}: memory within 4.1 % (to one decimal) in every workload kind, 100 cases",
         memory_h100(4.15, 100)),
    Gate("decode_graphs", f"{README}: decode with a CUDA-graph engine within 6 % (1B+, 18 points)",
         count_within("engine", "graphs", cases=18, within=18, bound_pct=6.0)),
    Gate("training_steps", f"{README}: training steps 54 of 55 within 25 % (1B+)",
         count_within("phase", "training step", cases=55, within=54)),
    Gate("prefill", f"{README}: prefill 24 of 24 within 25 % (1B+)", count_within("phase", "prefill", cases=24,
                                                                                   within=24)),
    Gate("scoring", f"{README}: scoring 13 of 13 within 25 % (1B+)", count_within("phase", "scoring", cases=13,
                                                                                   within=13)),
    Gate("eager_decode_generate_probe", f"{README}: HF eager decode 29 of 35 within 25 % with the dispatch "
         "probe's figures (1B+)", count_within("engine", "eager [generate() probe]", cases=35, within=29)),
    *(Gate(name, f"{BENCH}: {group} ({'< 1B' if small else '>= 1B'}) {within} of {cases} within 25 %, mean "
           f"|error| at most {mean_pct:g} %", time_set(key, group, small=small, cases=cases, within=within,
                                                       mean_pct=mean_pct))
      for name, key, group, small, cases, within, mean_pct in TIME_SETS),
    Gate("published_kv_transfer", "docs/serving.md 'Disaggregated prefill and decode': Dynamo's KV transfer of a "
         "7,500-token prompt over NVLink (8 ms) within 10 %", published_kv_transfer),
    Gate("memory_multigpu", f"{README}: within 1.3 % (to one decimal) per GPU for DDP, FSDP and tensor parallel "
         "on two H200s", memory_multigpu(1.35)),
    Gate("memory_four_gpu_fitted", "BENCHMARKS.md 'Four GPUs (4x H200, 2026-11-27)': per-GPU memory of the 5 "
         "fitted training cases within 6.5 %", memory_four_gpu(held_out=False, cases=5, within=5, bound_pct=6.5)),
    Gate("memory_four_gpu_held_out", "BENCHMARKS.md 'Four GPUs (4x H200, 2026-11-27)': per-GPU memory of 3 of the "
         "4 held-out training cases within 10 % (tp4-sp-8b over)",
         memory_four_gpu(held_out=True, cases=4, within=3, bound_pct=10.0)),
    Gate("step_four_gpu", "BENCHMARKS.md 'Four GPUs': training step times on 4x H200 and the TP2 step on 2x H200, "
         "9 of 10 within 0.8x-1.25x, all within 0.67x-1.5x", step_four_gpu),
    Gate("published_training_all", "BENCHMARKS.md 'Training at scale' (all runs)", published_training("all")),
    Gate("published_training_calibration", "BENCHMARKS.md 'Training at scale' (calibration)",
         published_training("calibration")),
    Gate("published_training_held_out", "BENCHMARKS.md 'Training at scale' (held out)",
         published_training("held out")),
    *(Gate(f"published_training_mean_{group.replace(' ', '_')}", "BENCHMARKS.md 'Training at scale' "
           f"({group}): mean |log ratio| no worse than today's (tests/data/published-training.json)",
           published_training_mean(group)) for group in TRAINING_MEAN_LOG),
    Gate("op_graph_all", "README.md 'Any PyTorch model' / BENCHMARKS.md 'Op-graph estimator' (all)",
         op_graph("all")),
    Gate("op_graph_calibration", "BENCHMARKS.md 'Op-graph estimator' (calibration)", op_graph("calibration")),
    Gate("op_graph_held_out", "BENCHMARKS.md 'Op-graph estimator' (held out)", op_graph("held out")),
    *(Gate(f"op_graph_step_{group.replace(' ', '_')}", "BENCHMARKS.md 'Op-graph estimator' "
           f"({group}): mean |log error| of the step time no worse than today's (tests/data/models-h100.json)",
           op_graph_step(group)) for group in OP_GRAPH_STEP_ERROR),
    *(Gate(f"op_class_{'_'.join(classes)}", "validation.GPU_FITS: the profiled GPU time of the class its "
           "constants are fitted to (tests/data/models-h100.json, calibration split)", op_class_time(classes))
      for classes in OP_CLASS_ERROR),
    Gate("decode_graphs_measured", "decode with a CUDA-graph engine from a probe run's measured ceilings within 6 % "
         "(1B+, both decode runs; the README's bound for the datasheet path)", decode_graphs_measured(6.0)),
    Gate("host_sweep_training", "the host model on its own sweep (HOST_OPS_TRAIN_*): 6 of 9 bf16 training steps "
         "within 25 %", host_sweep_training(9, 6)),
    # since GPT-2's head costs its measured 5x (MISALIGNED_SLOWDOWN), its small training steps are GPU time and
    # HOST_OPS_TRAIN_LAYERNORM_AMP x 0.75 moved no LLM time gate: its own sweep binds it (2-layer GPT-2 -25 %)
    Gate("host_sweep_training_mixed", "the host model on its own sweep (HOST_OPS_TRAIN_*_AMP): 8 of 9 autocast "
         "training steps within 25 %", host_sweep_training(9, 8, mixed=True)),
    Gate("int8_linears", "the INT8_* constants on their own measurement: bitsandbytes' int8 linear, mean |error| "
         "8.5 % over 4 shapes", int8_linears(8.5)),
    Gate("gemm_sweep_measured", "MFU_VS_MEASURED on its own GEMM sweep: each large GEMM from the run's measured "
         "matmul ceiling within 20 % (the fit's own bound, tests/test_calibration_fits.py)", gemm_sweep_measured(20.0)),
    Gate("published_resnet50", "BENCHMARKS.md: NVIDIA's ResNet-50 results, 0.61-0.80x", published_resnet50),
    Gate("grouped_experts", "BENCHMARKS.md probe section: grouped MoE experts and DeepSeek's TP8 experts on an H100",
         grouped_experts),
    Gate("published_serving", "BENCHMARKS.md 'Serving against published engine results'", published_serving),
    *(Gate(f"unseen_{family}", f"BENCHMARKS.md 'Models nobody here measured before' ({family}): "
           f"{within} of {cases} within 0.8x-1.25x, none past {worst}x", unseen(family))
      for family, (cases, within, worst) in UNSEEN_GATES.items()),
    *(Gate(f"unseen_{family}_probed", f"BENCHMARKS.md 'Models nobody here measured before' ({family}), each run "
           f"with its own host: {within} of {cases} within 0.8x-1.25x, none past {worst}x", unseen_probed(family))
      for family, (cases, within, worst) in UNSEEN_PROBED_GATES.items()),
    *(Gate(f"unseen_{family}_memory", f"BENCHMARKS.md 'Models nobody here measured before' ({family}): {within} "
           f"of {cases} within 10 % in peak memory", unseen_memory(family))
      for family, (cases, within) in UNSEEN_MEMORY_GATES.items()),
    Gate("rnn_training_calls", "docs/unseen-models.md 'cuDNN RNN calls': what 39 of 40 training calls keep for "
         "their backward within 10 % (mean |log error| 0.6 %), their peak 32 of 40 (7.3 %; 29 and 9.0 % before the "
         "workspace's floor)", rnn_training_calls(40, (39, 0.6), (32, 7.3))),
    Gate("rnn_training_calls_small", "docs/unseen-models.md 'cuDNN RNN calls': the small-hidden grid's training calls "
         "(hidden 64-192), what 98 of 98 keep for their backward within 10 % (mean |log error| 0.6 %), their peak 98 "
         "of 98 (2.3 %; 8 of 98 while only a one-layer LSTM's training workspace was counted, 66 and 11.2 % before "
         "the inference workspace's floor per layer and direction)",
         rnn_training_calls(98, (98, 0.6), (98, 2.3), grid="small")),
    Gate("rnn_workspace", "docs/unseen-models.md 'cuDNN RNN calls': the inference workspace of 35 of 40 calls within "
         "10 %, mean |log error| 3.7 % (31 and 5.7 % when fitted on this grid alone, without a floor)",
         rnn_workspace(40, 35, 3.7)),
    Gate("rnn_workspace_steps", "docs/unseen-models.md 'cuDNN RNN calls': the steps sweep's inference workspace "
         "(64-1,024 steps, lab/data/h100-rnn-memory-steps-2026-12-06), 192 of 192 calls within 10 %, mean |log "
         "error| 2.5 % (132 and 10.2 % while the input's copies were counted at the hidden width, 100 and 19.8 % "
         "while every step's gates were counted too)", rnn_workspace(192, 192, 2.5, grid="steps")),
    Gate("rnn_persist_kernels", "docs/unseen-models.md 'cuDNN RNN calls': the profiled training kernels "
         "(lab/data/h100-rnn-persist-kernels-2026-12-06) against RNN_PERSIST_SMALL_STEP_S, _UNIT_S and the bias "
         "gradient's row constants", rnn_persist_kernels),
    Gate("rnn_backward_workspace", "docs/unseen-models.md 'cuDNN RNN calls': what a training call's backward holds "
         "while it runs (lab/data/h100-rnn-kernels-new-2026-12-06/rnn_backward_memory.json, never fitted), 68 of 80 "
         "within 10 %, mean |log error| 10.3 % (the one-layer LSTMs of hidden 256 and 512 at batch 512 and 2,048 "
         "3.4x-3.6x: counted as the static kernel's, which cuDNN runs only at 128 and under)",
         rnn_backward_workspace(80, 68, 10.3)),
    Gate("rnn_workspace_inputs", "docs/unseen-models.md 'cuDNN RNN calls': the inputs sweep's inference workspace "
         "(input widths 7, 32 and the hidden size, lab/data/h100-rnn-memory-inputs-2026-12-06), 72 of 72 calls within "
         "10 %, mean |log error| 2.4 % (27 and 15.3 % while the input's copies were counted at the hidden width)",
         rnn_workspace(72, 72, 2.4, grid="inputs")),
    Gate("rnn_workspace_small", "docs/unseen-models.md 'cuDNN RNN calls': the small-hidden grid's inference "
         "workspace, 96 of 98 calls within 10 %, mean |log error| 2.6 % (RNN_WORKSPACE_FLOOR_BYTES; before it the "
         "hidden-64 calls held 1.5-2.5x what was counted)", rnn_workspace(98, 96, 2.6, grid="small")),
    Gate("rnn_training_calls_steps", "docs/unseen-models.md 'cuDNN RNN calls': the steps sweep's training calls, "
         "what 192 of 192 keep for their backward within 10 %, their peak 178 of 192 (mean |log error| 5.6 %; 162 "
         "and 6.9 % while a training call's gate rows were capped at RNN_WORKSPACE_GATE_STEPS as an inference "
         "call's; the one-layer LSTMs of hidden 256 are 2x over: at batch 256 and 1,024 cuDNN's static persistent "
         "kernel, which the trace assumes, does not run, and the estimate notes it)",
         rnn_training_calls(192, (192, 0.1), (178, 5.6), grid="steps")),
    Gate("rnn_training_calls_inputs", "docs/unseen-models.md 'cuDNN RNN calls': the inputs sweep's training calls, "
         "what 72 of 72 keep within 10 %, their peak 68 of 72 (3.7 %; 55 and 5.8 % before the input's copies were "
         "counted at its width and every step's gates held)",
         rnn_training_calls(72, (72, 0.1), (68, 3.7), grid="inputs")),
    *(Gate(f"rnn_calls_other_sweeps_{phase}", f"docs/unseen-models.md 'cuDNN RNN calls': the {phase} calls of the "
           "H100 sweeps and the second H200 sweep, never fitted, within 0.8x-1.25x: " + ", ".join(
               f"{w} of {n}" for n, w, _ in sweeps.values()), rnn_other_sweeps(phase))
      for phase, sweeps in RNN_OTHER_SWEEPS.items()),
    *(Gate(f"rnn_calls_{phase}", f"docs/unseen-models.md 'cuDNN RNN calls': {phase}, {within} of {calls} within "
           f"0.8x-1.25x, mean |log error| {mean} %", rnn_calls(phase))
      for phase, (_, calls, within, mean) in RNN_CALL_GATES.items()),
    *(Gate(f"cross_card_{name.replace(' ', '_')}", f"README.md 'Other cards' and docs/cross-card.md: {name}, "
           f"share within 0.8x-1.25x, worst and geometric mean at today's figures",
           cross_card("split", name)) for name in TODAY_SPLITS),
    *(Gate(f"cross_card_family_{name}", f"docs/cross-card.md: {name} at today's figures", cross_card("family", name))
      for name in TODAY_FAMILIES),
    *(Gate(f"nchw_{group.replace(' ', '_')}", f"bench/nchw.py: NCHW {group} on an H200, the op pricer within "
           f"{lo}-{hi}x of the measured ops (geometric mean)", nchw_ops(group))
      for group, (lo, hi) in NCHW_OPS.items()),
    Gate("nchw_transposes", "bench/nchw_transposes.py: cuDNN's transposes around an H100's NCHW convolutions, priced "
         "against their profiled time, fitted and held-out shapes", nchw_transposes),
    Gate("nchw_1x1", "bench/nchw_transposes.py: an H100's NCHW 1x1 convolutions on unaligned maps against "
         "NCHW_1X1_UNALIGNED_SLOWDOWN", nchw_1x1),
    Gate("wide_stems", "bench/stems.py: the ResNet stem's forward on an H100 in fp16 and bf16 and ViT's patchify, "
         "within 0.8x-1.25x of the op pricer", wide_stems),
    Gate("pool_kernels", "bench/pools.py: PyTorch's max and average pooling on an H100, forward and backward, "
         "within 0.8x-1.25x of the op pricer (the held-out third: 14 of 16, all within 0.67x-1.5x)", pool_kernels),
    Gate("dilated_convs", "bench/dilated.py: dilated 2-D convolutions on an H100, the priced slowdown over the "
         "measured within 0.9x-1.1x", dilated_convs),
    Gate("upsample_kernels", "bench/upsample.py: bilinear and nearest upsampling on an H100 against the op pricer: "
         "forward 18 of 24 held-out calls within 0.8x-1.25x, backward 4 of 6", upsample_kernels),
    Gate("transposed_convs", "bench/transposed.py: transposed convolutions on an H100 against their cuDNN kernels: "
         "forward 15 of 21 within 0.8x-1.25x, training 14 of 21", transposed_convs),
    Gate("pool_kernels_unseen", "bench/pools.py: pooling shapes no fit saw, on an H100: NCHW 13 of 14 within "
         "0.8x-1.25x; channels-last 5 of 14, 0.65x-1.88x (stride-1 max pools overpriced)", pool_kernels_unseen),
    Gate("nchw_capped_steps", "bench/nchw.py: VGG-16's NCHW inference step under a memory cap on an H200, "
         "within 0.8x-1.25x", nchw_capped_steps),
    Gate("published_serving_online", "BENCHMARKS.md 'Serving', online serving per metric", published_serving_online),
    Gate("front_end_queue", "docs/serving.md 'A burst larger than the engine runs at once': the bursts the front-end's "
         "queue was not fitted on (and SGLang's short one), 12 of 12 within 0.8x-1.25x", front_end_queue),
)


def gate(name: str) -> Gate:
    return next(g for g in GATES if g.name == name)


# ---- which constants a gate reads --------------------------------------------------------------------------------
class _ReadLog(dict[str, Any]):
    """The calibration table, noting every name read."""

    def __init__(self, table: dict[str, Any]) -> None:
        super().__init__(table)
        self.read: set[str] = set()

    def __getitem__(self, name: str) -> Any:
        self.read.add(name)
        return super().__getitem__(name)

    def get(self, name: str, default: Any = None) -> Any:  # type: ignore[override]
        self.read.add(name)
        return super().get(name, default)


@contextmanager
def reads() -> Iterator[set[str]]:
    """The names of the constants read inside the block (the table is swapped for a logging copy)."""
    table = cal.TABLE
    log = _ReadLog(table)
    cal.TABLE = log
    try:
        yield log.read
    finally:
        table.update({k: v for k, v in log.items()})
        cal.TABLE = table


# ---- the sweep: does scaling a constant fail a gate? -------------------------------------------------------------
SCALES = (0.75, 1.25)


#: an upward move of a fraction below 1 is capped at 1 (the estimator refuses more); one capped to less than this
#: move is not checked (MEGATRON_EFF 0.99, BANDWIDTH_VS_MEASURED 0.97 cannot be 25 % too low)
MIN_CAPPED_MOVE = 0.05


def scaled(name: str, factor: float) -> float | None:
    """Constant `name` times `factor`: an integer constant (a count, a tile) stays an integer and moves by at
    least one; a fraction below 1 stays at most 1. None where the capped move is under MIN_CAPPED_MOVE."""
    c = cal.get(name)
    if isinstance(c.value, int) and c.unit != "fraction":
        moved = round(c.value * factor)
        return moved if moved != c.value else c.value + (1 if factor > 1 else -1)
    value = c.value * factor
    if c.unit == "fraction" and c.value < 1 and value > 1:
        return 1.0 if 1.0 / c.value - 1 >= MIN_CAPPED_MOVE else None
    return value


@dataclass(frozen=True)
class Baseline:
    reads: dict[str, frozenset[str]]  # gate name -> the constants it read
    seconds: dict[str, float]  # gate name -> its wall time
    failing: tuple[str, ...]  # gates that fail with the table as it is (the sweep needs none)


def baseline(gates: tuple[Gate, ...] = GATES) -> Baseline:
    import time

    read, seconds, failing = {}, {}, []
    for g in gates:
        forget()
        start = time.perf_counter()
        with reads() as names:
            if not g.check().passed:
                failing.append(g.name)
        seconds[g.name] = time.perf_counter() - start
        read[g.name] = frozenset(names)
    return Baseline(read, seconds, tuple(failing))


def first_failing_gate(name: str, factor: float, base: Baseline, gates: tuple[Gate, ...] = GATES) -> str | None:
    """The first gate (cheapest first) that fails with constant `name` scaled by `factor`; None if every gate
    that reads it still passes. A gate that never read the constant cannot move with it and is skipped; a
    direction `scaled` does not check answers a note in parentheses."""
    value = scaled(name, factor)
    if value is None:
        return "(not checked: a fraction cannot move that far)"
    with cal.override(**{name: value}):
        for g in sorted(gates, key=lambda g: base.seconds[g.name]):
            if name in base.reads[g.name] and not g.check().passed:
                return g.name
    return None
