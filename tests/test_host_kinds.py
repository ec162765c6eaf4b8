"""The op model's host constants against the host's issue time per kind of op, measured apart from any model."""

from __future__ import annotations

import pytest

from bench.host_kinds import RUNS, inference_ratios, view_ratio
from gpuadvisor.estimate import calibration as cal


def test_every_run_was_host_bound_and_its_ratios_agree_with_the_others():
    """Each kind's ratio in each run within 10 % of the median: the interleaved rounds took out the host's drift."""
    import json

    medians = inference_ratios()
    for path in RUNS:
        for row in json.loads(path.read_text())["rows"]:
            if row["mode"] == "inference":
                assert abs(row["per_add"] / medians[row["kind"]] - 1) < 0.1, (path.name, row["kind"])


def test_a_view_costs_the_host_what_the_fit_says():
    """HOST_VIEW_OPS and HOST_FWD_OPS_INFERENCE were fitted on model step times; their ratio (a kernel-less op's host
    time against a kernel op's) is measured here without any model: within 0.8x-1.25x of it."""
    fitted = cal.HOST_VIEW_OPS / cal.HOST_FWD_OPS_INFERENCE
    assert 0.8 <= fitted / view_ratio() <= 1.25, (fitted, view_ratio())


def test_a_kernel_op_costs_the_host_more_than_a_view_and_a_library_call_more_than_an_add():
    ratios = inference_ratios()
    assert ratios["view"] < 0.3 < 0.9 < ratios["gelu"] < 1.1
    assert min(ratios[k] for k in ("linear", "bmm", "conv3x3", "sdpa", "batch_norm")) > 1.5


def test_a_training_step_is_the_flow_shop_of_its_measured_phases():
    """lab/phase_overlap.py (H100, 2026-12-08): each phase's host and GPU time measured apart, combined as the op
    model combines them (opcost.flow_shop_s), within 0.93x-1.08x of the measured step in all twelve cases, where
    adding the two (no overlap) is 1.34x-1.71x off."""
    from bench.models import phase_overlap_ratios

    ratios = phase_overlap_ratios()
    assert len(ratios) == 12
    assert all(0.93 <= flow <= 1.08 for flow, _ in ratios.values()), ratios
    assert all(added >= 1.3 for _, added in ratios.values()), ratios


def test_a_training_step_counts_its_parameter_tensors_and_prices_its_optimizer_by_them():
    """opcost.param_tensors reads the tensors off AdamW's per-tensor step counters (`_foreach_add` on one-element
    tensors), never off a `_foreach_add` over the moments (foreach AdamW's); the optimizer phase is then the
    measured line, HOST_OPTIMIZER_STEP + HOST_OPTIMIZER_PER_TENSOR a tensor (a DenseNet-121 step 334 units, 341
    measured on lab/phase_overlap.py's run; a two-layer GRU's ten tensors 26), not one figure for every model."""
    from dataclasses import replace

    from bench.models import _training_graph
    from gpuadvisor.estimate import opcost
    from gpuadvisor.estimate.graph import Op, OpClass, Phase, StreamLayout, StreamShape

    densenet = _training_graph("torchvision:densenet121")
    assert opcost.param_tensors(densenet) == 364
    assert opcost.host_units_by_phase(densenet)["optimizer"] == pytest.approx(17 + 0.87 * 364)
    moments = Op("_foreach_add", OpClass.OPTIMIZER, Phase.OPTIMIZER, "fp32", 0.0, 8e8, 8e8,
                 StreamShape(1e6, StreamLayout.DENSE).to_row())
    assert opcost.param_tensors(replace(densenet, ops=(*densenet.ops, moments))) == 364
    gru = _training_graph("lab/models/gru_keyword.py:build")
    assert opcost.param_tensors(gru) == 10
    assert opcost.host_units_by_phase(gru)["optimizer"] == pytest.approx(17 + 0.87 * 10)
    assert opcost.param_tensors(replace(gru, ops=tuple(op for op in gru.ops if op.phase is not Phase.OPTIMIZER))) == 0
