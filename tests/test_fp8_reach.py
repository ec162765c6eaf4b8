"""FP8_REACH (calibration/gpu.py): how much less of its datasheet peak an FP8 GEMM reaches than a bf16 one, read off
the probe's 8192^3 pair (tests/test_calibration_fits.py recomputes it), checked here at the shapes a serving
engine's prefill runs, measured back to back on an H100 at its power limit (lab/fp8_reach_shapes.py), and its use:
every path that prices an FP8 GEMM from a datasheet takes it, none from a probe's measured rate."""

from __future__ import annotations

import json
import statistics
from dataclasses import replace
from pathlib import Path

import pytest

from gpuadvisor.catalog import load_catalog
from gpuadvisor.estimate import calibration as cal
from gpuadvisor.estimate.hardware import HardwareFigures
from gpuadvisor.estimate.opcost import Rates

RUN = Path(__file__).resolve().parents[1] / "lab" / "data" / "h100-fp8-reach-2026-12-06" / "fp8_reach_shapes.json"


def test_prefill_shapes_reach_what_the_probe_pair_says():
    """22 GEMMs of Llama 3.3 70B's and Llama 3.1 8B's layers at 1,024-8,192 tokens (and 8192^3): FP8 over bf16, halved
    (the peaks' ratio), has its median within 0.02 of FP8_REACH and no shape beyond 0.07 of it."""
    rows = json.loads(RUN.read_text())["rows"]
    reach = [r["fp8_tflops"] / r["bf16_tflops"] / 2.0 for r in rows]
    assert len(reach) == 22
    assert statistics.median(reach) == pytest.approx(cal.FP8_REACH, abs=0.02)
    assert max(abs(x - cal.FP8_REACH) for x in reach) <= 0.07


def _h100() -> HardwareFigures:
    return HardwareFigures.from_card(load_catalog().get("H100 SXM5 80GB"))


def test_datasheet_fp8_takes_the_reach_and_a_probe_rate_does_not():
    h100 = _h100()
    bf16, fp8 = Rates.of(h100).gemm["bf16"], Rates.of(h100).gemm["fp8"]
    assert fp8 / bf16 == pytest.approx(2.0 * cal.FP8_REACH, rel=0.01)
    measured = replace(h100, source="measured")
    assert Rates.of(measured).gemm["fp8"] / Rates.of(measured).gemm["bf16"] == pytest.approx(2.0, rel=0.01)
    a100 = HardwareFigures.from_card(load_catalog().get("A100 SXM4 80GB"))
    assert a100.dtype_reach("fp8") == 1.0  # no FP8 rate: an fp8 request runs at the 16-bit one


def test_serving_and_training_price_fp8_alike():
    """The serving step, the training model and the op pricer take one FP8 rate for one card (HardwareFigures.
    dtype_reach, the one owner): MFU x FP8_REACH of the H100's datasheet FP8 peak."""
    from gpuadvisor.estimate.parallel import framework
    from gpuadvisor.estimate.parallel.cost import AnalyticCost
    from gpuadvisor.estimate.serve.api import card_figures, serve_setup
    from gpuadvisor.layout import Checkpointing, Layout
    from gpuadvisor.modelspec import resolve_model
    from gpuadvisor.workload import make_workload

    h100 = _h100()
    expected = 1978.9e12 * cal.MFU * cal.FP8_REACH
    serving = serve_setup(resolve_model("llama-3.1-8b"), card_figures(load_catalog().get("H100 SXM5 80GB")), "vllm",
                          weights="fp8", kv_dtype="bf16", layout=Layout(tp=1, pp=1)).cost.rate
    training = AnalyticCost(make_workload("llama-3-8b", mode="training", batch=8, dtype="fp8"), h100,
                            framework("megatron"), Checkpointing.NONE)._linear_rate[0]
    assert serving == pytest.approx(expected, rel=0.001)
    assert training == pytest.approx(expected, rel=0.001)
    assert Rates.of(h100).gemm["fp8"] == pytest.approx(expected, rel=0.001)


def test_a_serving_answer_says_what_its_gemm_rate_rests_on(capsys):
    """estimate --weights fp8 names the FP8 reach beside the datasheet peak and MFU; bf16 names neither reach."""
    from gpuadvisor.cli import main

    base = ["estimate", "llama-3.1-8b", "--gpu", "H100 SXM5 80GB", "--engine", "vllm", "--rate", "2", "--requests",
            "20", "--json"]
    got = {}
    for weights in ("fp8", "bf16"):
        assert main([*base, "--weights", weights]) == 0
        got[weights] = json.loads(capsys.readouterr().out)["detail"]["serving_simulation"]["assumptions"]
    assert got["fp8"]["gemm_rate_basis"] == f"fp8 datasheet peak x 0.75 x FP8 reach {cal.FP8_REACH:g}"
    assert got["bf16"]["gemm_rate_basis"] == "bf16 datasheet peak x 0.75"
    assert got["fp8"]["gemm_tflops"] / got["bf16"]["gemm_tflops"] == pytest.approx(2 * cal.FP8_REACH, rel=0.01)


def test_a_single_gpu_fp8_step_takes_the_reach_too():
    """The analytic single-GPU path (estimate_compute) prices an fp8 step's GEMMs at the same reach: a large training
    step in fp8 is more than 4 % slower than with FP8_REACH at 1 (its GEMMs are most of it); a bf16 step does not
    move."""
    from gpuadvisor.estimate.compute import estimate_compute
    from gpuadvisor.workload import make_workload

    h100 = _h100()
    step = {}
    for dtype in ("bf16", "fp8"):
        w = make_workload("llama-3-8b", mode="training", dtype=dtype, batch=8, seq_len=4096)
        with cal.override(FP8_REACH=1.0):
            plain = estimate_compute(w, h100).time_s
        step[dtype] = (estimate_compute(w, h100).time_s, plain)
    assert step["bf16"][0] == step["bf16"][1]  # a bf16 step never takes it
    assert step["fp8"][0] > step["fp8"][1] * 1.04  # the fp8 step's GEMMs are a large share: it moves
