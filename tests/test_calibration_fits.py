"""Each measured or fitted calibration constant, recomputed from its source file in the repo.

Every function below redoes the derivation that the constant's `how` describes, on the file its
`source` names, and returns the value after the stated rounding; the test compares it with the table.
A constant whose derivation is not in the repo is marked "not reproducible from the repo" instead
(test_calibration.py checks that the others say why they are not recomputed)."""

from __future__ import annotations

import functools
import json
import math
import statistics
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from gpuadvisor.estimate import calibration, kernels
from gpuadvisor.estimate.calibration import Method
from gpuadvisor.estimate.engines import _touched_weight_bytes
from gpuadvisor.estimate.memory import kv_cache_bytes
from gpuadvisor.workload import make_workload, spec_from_config

DATA = Path(__file__).resolve().parents[1] / "tools" / "data"
LAB = Path(__file__).resolve().parents[1] / "lab" / "data"  # raw files of the dated measurement runs
H100_BF16_TFLOPS, H100_BANDWIDTH_GBS = 989.4, 3350.0  # catalog H100 SXM5 80GB, the datasheet the fits divide by
FITS: dict[str, Callable[[], float]] = {}


def fit(*names: str) -> Callable[[Callable[[], dict[str, float]]], Callable[[], dict[str, float]]]:
    """Register a recomputation that yields the named constants."""
    def deco(fn: Callable[[], dict[str, float]]) -> Callable[[], dict[str, float]]:
        for n in names:
            FITS[n] = lambda n=n: fn()[n]
        return fn
    return deco


def _load(rel: str, base: Path = DATA) -> dict:
    return json.loads((base / rel).read_text())


def _round_to(x: float, step: float) -> float:
    return round(x / step) * step


@fit("MFU", "MFU_VS_MEASURED", "K_RAMP")
def gemm_fit() -> dict[str, float]:
    """Log-space least squares of (rate, K) over the 21 GEMMs of >= 1024 rows over 150 us: the time model
    t = 2mnk / (rate x wave efficiency x k / (k + K)); for each K the best log-rate is the mean residual."""
    d = _load("decode-h100.json")
    rows = [g for g in d["gemm"] if g["m"] >= 1024 and g["s"] > 150e-6]
    assert len(rows) == 21
    s = np.array([g["s"] for g in rows])
    best = None
    for k_ramp in range(0, 1001, 5):
        work = np.array([2.0 * g["m"] * g["n"] * g["k"] / (kernels.wave_efficiency(g["m"], g["n"], d["env"]["sms"])
                                                           * g["k"] / (g["k"] + k_ramp)) for g in rows])
        log_rate = float(np.mean(np.log(work / s)))
        rms = float(np.sqrt(np.mean((np.log(work / s) - log_rate) ** 2)))
        if best is None or rms < best[0]:
            best = (rms, k_ramp, math.exp(log_rate), work)
    _, k_ramp, rate, work = best
    assert np.all(np.abs(work / rate / s - 1) < 0.2)  # each GEMM within +-20 % after the fit
    return {"K_RAMP": _round_to(k_ramp, 100), "MFU": round(rate / (H100_BF16_TFLOPS * 1e12), 2),
            "MFU_VS_MEASURED": round(rate / (d["ceilings"]["bf16_matmul_tflops"] * 1e12), 2)}


@fit("BANDWIDTH", "KERNEL_FLOOR_S")
def decode_fit() -> dict[str, float]:
    """Least squares (seconds) of step = bytes / bandwidth + kernels x floor over run A's own CUDA-graph
    decode steps, calibration points only ((model index + batch index) % 3 != 0: 10 of 16)."""
    d = _load("decode-h100.json")
    order, batches = ["qwen2.5-0.5b", "llama-3.2-1b", "llama-3.2-3b", "llama-3.1-8b"], [1, 8, 32, 64]
    x, y = [], []
    for rec in d["decode"]:
        if (order.index(rec["model"]) + batches.index(rec["batch"])) % 3 == 0:
            continue  # held out
        spec = spec_from_config(rec["config"], name=rec["model"])
        b = rec["batch"]
        w = make_workload(spec, mode="inference", dtype="bf16", batch=b, seq_len=rec["prompt"], gen_tokens=rec["gen"])
        ctx = rec["prompt"] + rec["gen"] // 2
        moved = _touched_weight_bytes(w, b) + kv_cache_bytes(w.with_(batch=b), context=ctx)
        launches = calibration.GRAPHS_KERNELS_PER_LAYER * spec.num_layers + calibration.GRAPHS_KERNELS_FIXED
        x.append([moved, launches])
        y.append(rec["graphs_own"]["step_s"])
    assert len(y) == 10
    inv_bw, floor = np.linalg.lstsq(np.array(x), np.array(y), rcond=None)[0]
    return {"BANDWIDTH": round(1 / inv_bw / (H100_BANDWIDTH_GBS * 1e9), 2), "KERNEL_FLOOR_S": round(floor, 7)}


@fit("HOST_OP_S")
def host_op() -> dict[str, float]:
    """A small op's launch time on the two H100 hosts of runs A and B, mean to one significant figure."""
    us = statistics.mean(_load(f)["launch"]["add_us"] for f in ("decode-h100.json", "decode-h100-host.json"))
    return {"HOST_OP_S": float(f"{us:.0e}") * 1e-6}


def _host_slopes(key: str) -> dict[str, tuple[float, float]]:
    """(ops per layer, ops outside the layers) per architecture: the endpoints (2 and 24 layers) of the
    host sweep, in units of HOST_OP_S."""
    out = {}
    for arch in ("llama", "qwen2", "gpt2"):
        rs = sorted((r for r in _load("decode-h100-host.json")["host_sweep"] if r["arch"] == arch),
                    key=lambda r: r["layers"])
        lo, hi = rs[0], rs[-1]
        slope = (hi[key] - lo[key]) / (hi["layers"] - lo["layers"])
        out[arch] = (slope / calibration.HOST_OP_S, (lo[key] - slope * lo["layers"]) / calibration.HOST_OP_S)
    return out


@fit("HOST_OPS_TRAIN_RMSNORM", "HOST_OPS_TRAIN_RMSNORM_AMP", "HOST_OPS_TRAIN_LAYERNORM",
     "HOST_OPS_TRAIN_LAYERNORM_AMP", "EAGER_PREFILL_HOST_OPS_PER_LAYER")
def host_sweep() -> dict[str, float]:
    bf16, amp, fwd = _host_slopes("train_bf16_s"), _host_slopes("train_mixed_s"), _host_slopes("forward_s")
    return {
        "HOST_OPS_TRAIN_RMSNORM": _round_to((bf16["llama"][0] + bf16["qwen2"][0]) / 2, 5),
        "HOST_OPS_TRAIN_RMSNORM_AMP": _round_to((amp["llama"][0] + amp["qwen2"][0]) / 2, 5),
        "HOST_OPS_TRAIN_LAYERNORM": _round_to(bf16["gpt2"][0], 5),
        "HOST_OPS_TRAIN_LAYERNORM_AMP": _round_to(amp["gpt2"][0], 5),
        "EAGER_PREFILL_HOST_OPS_PER_LAYER": _round_to(statistics.mean(v[0] for v in fwd.values()), 5),
    }


@fit("INT8_HOST_OPS_PER_LINEAR", "INT8_OUT_BYTES")
def int8_linear() -> dict[str, float]:
    """lab/device/int8_gemm.py on an H100: host time per linear (wall - GPU) without and with outlier
    columns, mixed as in v2 case 98's profile (43 of 196 linears had outliers); and the output-side
    kernels' bytes per output element at the achieved bandwidth (0.86 x 3,350 GB/s)."""
    d = _load("h100-round4/int8-gemm.json", LAB)
    plain = statistics.mean(r["linear_s"] - r["linear_profile"]["gpu_ms"] * 1e-3 for r in d["shapes"])
    outl = statistics.mean(r["linear_outliers_s"] - r["linear_outliers_profile"]["gpu_ms"] * 1e-3 for r in d["shapes"])
    share = 43 / 196
    ops = ((1 - share) * plain + share * outl) / calibration.HOST_OP_S
    bw = H100_BANDWIDTH_GBS * 1e9 * 0.86
    out_bytes = []
    for r in d["shapes"]:
        top = r["linear_profile"]["top"]
        copies = sorted(k["ms"] for k in top if "direct_copy" in k["name"])
        cast_out = copies[0] if r["in"] >= r["out"] else copies[-1]  # the output cast is the out-sized copy
        dequant = sum(k["ms"] for k in top if "kdequant" in k["name"])
        out_bytes.append((cast_out + dequant) * 1e-3 * bw / d["tokens"] / r["out"])
    return {"INT8_HOST_OPS_PER_LINEAR": round(ops), "INT8_OUT_BYTES": round(statistics.mean(out_bytes))}


@fit("CUDNN_ATTENTION_PLAN_S")
def attention_plan() -> dict[str, float]:
    """SDPA on a new sequence length, default and cuDNN backends (cuDNN builds a plan), to 5 ms."""
    d = _load("h100-round3/sdpa-host.json", LAB)
    ms = [rec[b]["fresh_ms"] for rec in d["sdpa"] for b in ("default", "cudnn")]
    return {"CUDNN_ATTENTION_PLAN_S": _round_to(statistics.mean(ms), 5) * 1e-3}


@fit("OVERLAP_P")
def overlap_exponent() -> dict[str, float]:
    """The exponent of {1.5, 2, 3, 4, 8} with the least mean |error| of the prefill, scoring and training-step times
    of tools/validate_time.py that are not held out (eager, datasheet H100)."""
    from tools import validate_time

    errors = {}
    for p in (1.5, 2, 3, 4, 8):
        with calibration.override(OVERLAP_P=p):
            _, phases, _ = validate_time.collect()
        rows = [r for r in phases if r["phase"] in ("prefill", "scoring", "training step") and not r["held_out"]]
        assert len(rows) == 95
        errors[p] = statistics.mean(abs(r["err"]) for r in rows)
    return {"OVERLAP_P": min(errors, key=errors.__getitem__)}


@fit("CONV_EFF", "CUDA_CORE_CONV_EFF", "CONV_PASS_FIXED_S", "NORM_BW_EFF", "BN_STATS_PASSES", "NORM_BWD_PASSES",
     "LN_BW_EFF", "LN_ROW_BYTES", "REDUCTION_BW_EFF", "STREAM_BW_EFF", "STRIDED_BW_EFF", "MISALIGNED_EVEN_SLOWDOWN")
@functools.lru_cache(maxsize=1)
def _op_model_gpu() -> dict[str, float]:
    """The op cost model's per-class GPU fits over the calibration split of tests/data/models-h100.json."""
    from bench.models import fit_gpu_constants

    return fit_gpu_constants()


@fit("WIDE_STEM_SLOWDOWN_FP16", "WIDE_STEM_SLOWDOWN_BF16")
def _wide_stems() -> dict[str, float]:
    from bench.stems import fit_wide_stems

    return fit_wide_stems()


@fit("CONV_DGRAD_MIN_N", "CONV_DGRAD_K_RAMP")
def _dgrad_tiles() -> dict[str, float]:
    from bench.transposed import fit_dgrad

    return fit_dgrad()


@fit("CONV_DILATED_SLOWDOWN")
def _dilated() -> dict[str, float]:
    from bench.dilated import aspp_slowdown

    return {"CONV_DILATED_SLOWDOWN": aspp_slowdown()}


@fit("PATCHIFY_SLOWDOWN")
def _patchify() -> dict[str, float]:
    from bench.stems import fit_patchify

    return fit_patchify()


@fit("RNN_WORKSPACE_STEP_PASSES", "RNN_WORKSPACE_BIDIR_PASSES", "RNN_WORKSPACE_LSTM_BYTES", "RNN_WORKSPACE_GRU_BYTES",
     "RNN_WORKSPACE_FLOOR_BYTES")
def _rnn_workspace() -> dict[str, float]:
    from bench.recurrent import fit_rnn_workspace

    return fit_rnn_workspace()


@fit("RNN_RESERVE_LSTM_ROWS", "RNN_RESERVE_GRU_ROWS")
def _rnn_reserve() -> dict[str, float]:
    from bench.recurrent import fit_rnn_reserve

    return fit_rnn_reserve()


@fit("RNN_TRAIN_PERSIST_ROWS")
def _rnn_train_persist() -> dict[str, float]:
    from bench.recurrent import fit_rnn_train_persist

    return fit_rnn_train_persist()


@fit("CONV_EFF_NATIVE_MMA")
def _conv_native_mma() -> dict[str, float]:
    from bench.cross_card import fit_conv_native

    return fit_conv_native()


@fit("NATIVE_DEPTHWISE_FWD_EFF", "NATIVE_DEPTHWISE_BWD_EFF")
def _native_depthwise() -> dict[str, float]:
    from bench.nchw import fit_native_depthwise

    fwd, bwd = fit_native_depthwise()
    return {"NATIVE_DEPTHWISE_FWD_EFF": fwd, "NATIVE_DEPTHWISE_BWD_EFF": bwd}


@fit("NCHW_BN_CHANNEL_BPS", "NCHW_BN_CHANNEL_BPS_BWD")
def _nchw_batch_norm() -> dict[str, float]:
    from bench.nchw import fit_nchw_batch_norm

    fwd, bwd = fit_nchw_batch_norm()
    return {"NCHW_BN_CHANNEL_BPS": fwd, "NCHW_BN_CHANNEL_BPS_BWD": bwd}


@fit("NCHW_1X1_UNALIGNED_SLOWDOWN")
def _nchw_unaligned_1x1() -> dict[str, float]:
    from bench.nchw_transposes import unaligned_1x1_slowdown

    return {"NCHW_1X1_UNALIGNED_SLOWDOWN": unaligned_1x1_slowdown()}


@fit("NCHW_TRANSPOSE_BW_EFF", "NCHW_FILTER_TRANSPOSE_BW_EFF")
def _nchw_transposes() -> dict[str, float]:
    from bench.nchw_transposes import fit as fit_transposes

    return fit_transposes()


@fit("NO_WORKSPACE_CONV_EFF")
def _no_workspace_conv() -> dict[str, float]:
    from bench.nchw import fit_no_workspace

    return {"NO_WORKSPACE_CONV_EFF": fit_no_workspace()}


@fit("NO_WORKSPACE_CONV_TILE")
def _no_workspace_tile() -> dict[str, float]:
    from bench.nchw import fit_no_workspace_tile

    return {"NO_WORKSPACE_CONV_TILE": fit_no_workspace_tile()}


@fit("HOST_FWD_OPS_INFERENCE", "HOST_FWD_OPS_TRAINING", "HOST_BWD_OPS", "HOST_VIEW_OPS")
@functools.lru_cache(maxsize=1)
def _op_model_host() -> dict[str, float]:
    """The op cost model's host fit over the calibration split's host-bound steps."""
    from bench.models import fit_host_constants

    return fit_host_constants()


@fit("HOST_OPTIMIZER_STEP", "HOST_OPTIMIZER_PER_TENSOR")
def _optimizer_host() -> dict[str, float]:
    """The optimizer phase's host time against the parameter tensors, lab/phase_overlap.py's twelve steps."""
    from bench.models import fit_optimizer_host

    return fit_optimizer_host()


@fit("HOST_STEP_FIXED")
def _step_parts_host() -> dict[str, float]:
    """A training step's forward and backward beyond their ops, lab/train_step_host.py's Linear stacks."""
    from bench.models import fit_step_parts

    return fit_step_parts()


@fit("MEGATRON_EFF", "FSDP2_ELEMENTWISE", "COMPILE_EFF")
@functools.lru_cache(maxsize=1)
def _training_efficiencies() -> dict[str, float]:
    """The fitted framework constants' grid fit over the calibration split of tests/data/published-training.json."""
    from bench.training import FITTED, fit_efficiency

    return {name: fit_efficiency(name) for name in FITTED}


@fit("RNN_LAYER_CALL_S", "RNN_STEP_FLOOR_S")
def _rnn_call() -> dict[str, float]:
    from bench.recurrent import fit_rnn_call

    return fit_rnn_call()


@fit("RNN_WORKSPACE_INPUT_PASSES")
def _rnn_input_passes() -> dict[str, float]:
    from bench.recurrent import fit_input_passes

    return fit_input_passes()


@fit("RNN_WORKSPACE_GATE_STEPS")
def _rnn_gate_steps() -> dict[str, float]:
    from bench.recurrent import fit_gate_steps

    return fit_gate_steps()


@fit("MISALIGNED_SLOWDOWN")
def _misaligned_gemm() -> dict[str, float]:
    """bf16 GEMMs of an odd vocabulary against their padded twins on an H100 (lab/misaligned_gemm.py)."""
    from bench.gemm_alignment import fitted

    return fitted()


@fit("FP8_REACH")
def fp8_reach() -> dict[str, float]:
    """The probe's 8192^3 FP8 GEMM over its bf16 one, each as a share of its datasheet peak, on an H100 and an H200."""
    ratios = []
    for path in (DATA / "h100-final-2026-11-23" / "h100-final.json",
                 Path(__file__).resolve().parents[1] / "reports" / "sample-h200x2-probe.json"):
        results = {m["key"]: m for probe in json.loads(path.read_text())["devices"][0]["probes"]
                   for m in probe["measurements"]}
        fp8, bf16 = results["tensor.fp8"], results["tensor.bf16"]
        ratios.append((fp8["value"] / fp8["datasheet"]) / (bf16["value"] / bf16["datasheet"]))
    return {"FP8_REACH": round(statistics.mean(ratios), 2)}


@fit("DTENSOR_HOST_FACTOR")
def dtensor() -> dict[str, float]:
    """Issue time of a step on a one-GPU DTensor mesh over the plain step's, two H200 hosts."""
    ratios = [_load(f"{run}/dtensor-overhead.json", LAB) for run in ("h200-round3", "h200-round5")]
    return {"DTENSOR_HOST_FACTOR": round(statistics.mean(d["dtensor"]["issue_ms"] / d["plain"]["issue_ms"]
                                                         for d in ratios), 1)}


@fit("DTENSOR_SP_HOST_FACTOR")
def _dtensor_sp_factor() -> dict[str, float]:
    from tools.compare_four_gpu import fit_dtensor_sp_factor

    return fit_dtensor_sp_factor()


@fit("RNN_BACKWARD_CALL_S")
def _rnn_backward_call() -> dict[str, float]:
    from bench.recurrent import fit_rnn_backward_call

    return fit_rnn_backward_call()


@fit("RNN_PERSIST_STEP_S")
def _rnn_persist_step() -> dict[str, float]:
    from bench.recurrent import fit_rnn_persist_step

    return fit_rnn_persist_step()


@fit("RNN_PERSIST_SMALL_STEP_S", "RNN_PERSIST_SMALL_STEP_UNIT_S", "RNN_BIAS_GRAD_ROW_S", "RNN_GRU_BIAS_GRAD_ROW_S")
def _rnn_persist_kernels() -> dict[str, float]:
    from bench.recurrent import read_persist_kernels

    return read_persist_kernels()


@fit("KV_TRANSFER_EFFICIENCY")
def _kv_transfer() -> dict[str, float]:
    """The disaggregated KV transfer's share of the link, from the published transfer time."""
    from bench.serving import fit_kv_transfer_efficiency

    return {"KV_TRANSFER_EFFICIENCY": fit_kv_transfer_efficiency()}


@fit("GROUPED_STREAM_K_RAMP")
def _grouped_stream() -> dict[str, float]:
    """A grouped GEMM's streaming reach by its inner dimension, from DeepSeek-V3's TP8 experts on an H100."""
    from tools.fit_grouped_stream import fit as fit_ramp

    return {"GROUPED_STREAM_K_RAMP": float(fit_ramp()[0])}


def test_every_measured_or_fitted_constant_has_a_recomputation():
    reproducible = {c.name for c in calibration.constants() if c.method.reproducible}
    assert reproducible == set(FITS), "measured/fitted constants need a recomputation here (or another method)"


#: the fits that take seconds (a cross-card sweep, the recurrent call grids): doc-sync checks of the table against
#: its files, run with the slow suite (CI runs both) to keep the default suite within its time
SLOW_FITS = {"CONV_EFF_NATIVE_MMA", "RNN_PERSIST_STEP_S", "RNN_BACKWARD_CALL_S", "BN_STATS_PASSES",
             "RNN_WORKSPACE_BIDIR_PASSES", "HOST_BWD_OPS", "RNN_WORKSPACE_FLOOR_BYTES", "RNN_WORKSPACE_STEP_PASSES",
             "RNN_WORKSPACE_LSTM_BYTES", "RNN_WORKSPACE_GRU_BYTES", "DTENSOR_SP_HOST_FACTOR"}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW_FITS else n
                                  for n in sorted(FITS)])
def test_constant_recomputed_from_its_file(name):
    c = calibration.get(name)
    assert c.method in (Method.MEASURED, Method.FITTED)
    assert FITS[name]() == pytest.approx(c.value, rel=1e-9), f"{name}: {c.how} ({c.source})"
