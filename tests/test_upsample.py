"""Upsampling priced by its work (opcost.upsample_work_s): the table fitted on an H100's calls (bench/upsample.py)
and the gate that binds it."""

from __future__ import annotations

import sys
from pathlib import Path

from gpuadvisor.estimate.calibration import opgraph
from gpuadvisor.estimate.graph import Op, OpClass, Phase, StreamLayout, StreamShape
from gpuadvisor.estimate.opcost import Rates, upsample_work_s

sys.path.insert(0, str(Path(__file__).resolve().parent))
import accuracy_gates as G


def test_the_table_is_the_fit_of_the_measured_calls():
    from bench.upsample import fit_upsample_kernels

    assert fit_upsample_kernels() == opgraph.UPSAMPLE_KERNELS


def test_the_gate_passes_and_binds_the_table(monkeypatch):
    assert G.upsample_kernels().passed
    for scale in (0.75, 1.25):
        scaled = {k: (b * scale, t * scale) for k, (b, t) in opgraph.UPSAMPLE_KERNELS.items()}
        monkeypatch.setattr("gpuadvisor.estimate.opcost.UPSAMPLE_KERNELS", scaled)
        assert not G.upsample_kernels().passed, scale


def test_priced_by_bytes_alone_every_call_was_far_too_fast():
    """Before their work was priced, the bytes put every upsampling call at 0.58x of its time or less."""
    from bench import upsample

    for phase in upsample.PHASES:
        assert max(upsample.bytes_ratios(phase)) < 0.6, phase


def test_a_backward_with_many_outputs_per_source_costs_more_an_output():
    """DeepLabV3's pooling branch upsamples 1x1 to 65x65: 4,225 outputs add into each source, atomically."""
    from bench.models import hardware

    rates = Rates.of(hardware())

    def backward(fan: float) -> float:
        outputs = 8e6
        op = Op("upsample_bilinear2d_backward", OpClass.ELEMENTWISE, Phase.BACKWARD, "bf16", 0.0, 2 * outputs,
                2 * outputs / fan, StreamShape(outputs, StreamLayout.DENSE).to_row())
        return upsample_work_s(op, op.named_shape, rates)

    assert backward(4225.0) > 5 * backward(4.0) > 0
    other = Op("add", OpClass.ELEMENTWISE, Phase.FORWARD, "bf16", 0.0, 1e6, 1e6,
               StreamShape(5e5, StreamLayout.DENSE).to_row())
    assert upsample_work_s(other, other.named_shape, rates) == 0.0
