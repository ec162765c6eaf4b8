"""Pooling kernels priced by their work (opcost.pool_work_s): the window the tracer records, the table fitted on an
H100's calls (bench/pools.py) and the gate that binds it."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import pytest

from gpuadvisor.estimate.calibration import opgraph
from gpuadvisor.estimate.graph import Op, OpClass, Phase, StreamLayout, StreamShape
from gpuadvisor.estimate.opcost import Rates, op_time, pool_work_s
from gpuadvisor.estimate.trace.classify import pool_window

sys.path.insert(0, str(Path(__file__).resolve().parent))
import accuracy_gates as G


def _h100() -> Rates:
    from bench.models import hardware

    return Rates.of(hardware())


def test_the_table_is_the_fit_of_the_measured_calls():
    from bench.pools import fit_pool_kernels

    assert fit_pool_kernels() == opgraph.POOL_KERNELS


def test_the_gate_passes_and_binds_the_table(monkeypatch):
    assert G.pool_kernels().passed
    for scale in (0.75, 1.25):
        scaled = {k: (b * scale, t * scale) for k, (b, t) in opgraph.POOL_KERNELS.items()}
        monkeypatch.setattr("gpuadvisor.estimate.opcost.POOL_KERNELS", scaled)
        assert not G.pool_kernels().passed, scale


def test_shapes_no_fit_saw_hold_their_measured_accuracy():
    """Stride-1 max pools and Inception-v4's average pools, measured after the models that have them were
    estimated: NCHW within, channels-last stride-1 max pools overpriced (the gate states by how much)."""
    verdict = G.pool_kernels_unseen()
    assert verdict.passed, verdict.detail
    from bench import pools

    assert all(0.75 <= x <= 1.25 for x in pools.unseen_ratios("nchw"))


def test_a_stream_row_keeps_its_window_and_old_rows_still_load():
    shape = StreamShape(1.6e6, StreamLayout.DENSE, 9.0, 4.0)
    assert StreamShape.from_row(shape.to_row()) == shape
    assert StreamShape.from_row((1.6e6, 0.0)) == StreamShape(1.6e6, StreamLayout.DENSE)
    with pytest.raises(ValueError, match="both"):
        StreamShape.from_row((1.6e6, 0.0, 9.0))


@pytest.mark.parametrize(("name", "args", "kwargs", "window"), [
    ("max_pool2d_with_indices", (None, [3, 3], [2, 2], [1, 1]), {}, (9.0, 4.0)),
    ("avg_pool2d", (None, [2, 2]), {}, (4.0, 4.0)),  # an empty stride is the kernel's
    ("avg_pool2d", (None, [3, 3], []), {}, (9.0, 9.0)),
    ("avg_pool2d_backward", (None, None), {"kernel_size": [3, 3], "stride": [1, 1]}, (9.0, 1.0)),
    ("max_pool2d_with_indices_backward", (None, None, [2, 2], [2, 2]), {}, (4.0, 4.0)),
    ("relu", (None,), {}, None),
])
def test_the_tracer_reads_a_pools_window(name, args, kwargs, window):
    assert pool_window(name, args, kwargs) == window


def test_a_pool_costs_its_work_and_more_taps_cost_more():
    r = _h100()
    n = 128 * 64 * 112 * 112  # ResNet's stem pool input
    x, y = 2.0 * n, 2.0 * n / 4

    def fwd(window: float, stride: float, name: str = "max_pool2d_with_indices") -> Op:
        return Op(name, OpClass.ELEMENTWISE, Phase.FORWARD, "bf16", 0.0, x, 5 * y,
                  StreamShape(n, StreamLayout.DENSE, window, stride).to_row())

    three, two = op_time(fwd(9.0, 4.0), r), op_time(fwd(4.0, 4.0), r)
    assert three > two > 0
    # the H100 measured 18.0 ps an output for this pool channels-last (lab/data/h100-pool-ops-2026-12-05)
    assert three == pytest.approx(n / 4 * 18.0e-12, rel=0.15)
    # a pool traced before its window was recorded: its bytes alone, as before
    old = replace(fwd(9.0, 4.0), shape=StreamShape(n, StreamLayout.DENSE).to_row())
    assert pool_work_s(old, StreamShape.from_row(old.shape), r) == 0.0
    assert op_time(old, r) < three / 3


def test_a_slower_card_runs_its_pools_longer_by_its_sms_and_clock():
    from gpuadvisor.catalog import load_catalog
    from gpuadvisor.estimate.hardware import HardwareFigures

    h100 = _h100()
    a100 = Rates.of(HardwareFigures.from_card(load_catalog().get("A100 SXM4 80GB")))
    assert a100.thread_scale == pytest.approx(132 * 1980 / (108 * 1410))
    op = Op("avg_pool2d", OpClass.ELEMENTWISE, Phase.FORWARD, "bf16", 0.0, 1e8, 1e8,
            StreamShape(5e7, StreamLayout.DENSE, 9.0, 1.0).to_row())
    shape = StreamShape.from_row(op.shape)
    assert pool_work_s(op, shape, a100) == pytest.approx(pool_work_s(op, shape, h100) * a100.thread_scale)


POOLED = '''import torch.nn as nn


def build():
    return nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.MaxPool2d(3, 2, 1), nn.Conv2d(16, 16, 3, padding=1),
                         nn.AvgPool2d(2), nn.Flatten(), nn.Linear(16 * 8 * 8, 10))
'''


def test_a_traced_model_records_each_pools_window(tmp_path):
    pytest.importorskip("torch", reason="tracing needs PyTorch, the [trace] extra")
    from gpuadvisor.estimate.graph import GraphMode
    from gpuadvisor.estimate.trace import TraceOptions, trace_graph
    from gpuadvisor.modelref import parse_ref

    path = tmp_path / "pooled.py"
    path.write_text(POOLED)
    g = trace_graph(parse_ref(f"{path}:build"), TraceOptions(mode=GraphMode.TRAINING, input_shape=(3, 32, 32)), 4)
    windows = {op.name: StreamShape.from_row(op.shape) for op in g.ops if "pool2d" in op.name}
    assert {name: (s.window_taps, s.stride_taps) for name, s in windows.items()} == {
        "max_pool2d_with_indices": (9.0, 4.0), "max_pool2d_with_indices_backward": (9.0, 4.0),
        "avg_pool2d": (4.0, 4.0), "avg_pool2d_backward": (4.0, 4.0)}
    # every pool's elements: its input's (the forward's and the gradient it writes back)
    assert windows["max_pool2d_with_indices"].elements == 4 * 16 * 32 * 32
    assert windows["avg_pool2d_backward"].elements == 4 * 16 * 16 * 16
