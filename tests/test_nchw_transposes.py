"""cuDNN's layout transposes around 16-bit NCHW convolutions, as an H100 profiled them
(lab/data/h100-nchw-transposes-2026-12-06, bench/nchw_transposes.py), in the op pricer."""

from __future__ import annotations

from dataclasses import replace

import accuracy_gates as G
import pytest

from bench import models
from bench import nchw_transposes as transposes
from gpuadvisor.estimate import calibration as cal
from gpuadvisor.estimate import opcost
from gpuadvisor.estimate.graph import Op, OpClass, Phase


def _conv(n: int, c: int, size: int, k: int, taps: int, *, nhwc: bool, stride: int = 1,
          phase: Phase = Phase.FORWARD, grads: float = 0.0) -> Op:
    out = size // stride
    side = int(taps ** 0.5)
    flops = 2.0 * n * out * out * k * c * taps
    read = 2.0 * (n * c * size * size + k * c * taps)
    return Op("convolution_backward" if grads else "convolution", OpClass.CONV, phase, "bf16", flops, read,
              2.0 * n * k * out * out, (n, c, size, size, k, side, side, 1, out, out, 1.0 if nhwc else 0.0, grads))


def test_the_rule_says_which_convolutions_were_transposed():
    """Every profiled convolution but a 1x1 of stride 1 ran transposes; one 1x1's backward ran two small ones."""
    assert [(r["label"], r["mode"]) for r in transposes.unmatched()] == [("resnet50 1x1 1024->256", "training")]


def test_the_fitted_rates_price_the_held_out_shapes():
    """The gate (tests/accuracy_gates.py nchw_transposes): fitted 32 of 34 and held out NCHW_TRANSPOSES_HELD_OUT of
    18 within 0.8x-1.25x of their profiled transposes."""
    assert G.nchw_transposes().passed


def test_the_gate_binds_both_rates():
    """A fifth off either rate fails the gate."""
    for name in ("NCHW_TRANSPOSE_BW_EFF", "NCHW_FILTER_TRANSPOSE_BW_EFF"):
        for factor in (0.8, 1.25):
            with cal.override(**{name: cal.value(name) * factor}):
                assert not G.nchw_transposes().passed, (name, factor)


def test_an_nchw_3x3_convolution_pays_its_transposes_and_a_1x1_none_on_an_h100():
    rates = opcost.Rates.of(models.hardware())
    assert rates.nchw_transposed
    for taps, stride in ((9, 1), (1, 1), (1, 2)):
        nchw = opcost.op_time(_conv(64, 256, 56, 256, taps, nhwc=False, stride=stride), rates)
        nhwc = opcost.op_time(_conv(64, 256, 56, 256, taps, nhwc=True, stride=stride), rates)
        extra = opcost.nchw_transpose_s(_conv(64, 256, 56, 256, taps, nhwc=False, stride=stride),
                                        opcost.ConvShape.from_row(_conv(64, 256, 56, 256, taps, nhwc=False,
                                                                        stride=stride).shape), rates)
        if taps == 1 and stride == 1:
            assert extra == 0.0 and nchw == pytest.approx(nhwc)
        else:  # input and output (and a 3x3 filter) each read and written once, at 70 % of copy bandwidth
            assert extra > 0.0 and nchw == pytest.approx(nhwc + extra)
    x = 2.0 * 64 * 256 * 56 * 56
    assert opcost.nchw_transpose_s(_conv(64, 256, 56, 256, 1, nhwc=False, stride=2),
                                   opcost.ConvShape.from_row(_conv(64, 256, 56, 256, 1, nhwc=False, stride=2).shape),
                                   rates) == pytest.approx(2 * (x + x / 4) / (rates.bandwidth * 0.7))


def test_a_backward_of_both_gradients_transposes_twice_a_forward():
    rates = opcost.Rates.of(models.hardware())
    fwd = _conv(32, 128, 28, 128, 9, nhwc=False)
    bwd = replace(fwd, name="convolution_backward", phase=Phase.BACKWARD,
                  shape=(*fwd.shape[:-1], 3.0))
    shape_f, shape_b = (opcost.ConvShape.from_row(o.shape) for o in (fwd, bwd))
    assert opcost.nchw_transpose_s(bwd, shape_b, rates) == pytest.approx(2 * opcost.nchw_transpose_s(fwd, shape_f,
                                                                                                      rates))


def test_an_unprofiled_architecture_keeps_the_assumed_pass():
    """The RTX 4090 (Ada): no profile of its NCHW convolutions, so NCHW_TRANSPOSE_PASSES over the tensors."""
    rates = opcost.Rates.of(models.hardware("GeForce RTX 4090"))
    assert not rates.nchw_transposed
    op = _conv(64, 256, 56, 256, 1, nhwc=False)
    nhwc = opcost.op_time(_conv(64, 256, 56, 256, 1, nhwc=True), rates)
    assert opcost.op_time(op, rates) == pytest.approx(nhwc + cal.NCHW_TRANSPOSE_PASSES * (op.read + op.written)
                                                      / rates.bandwidth)


def test_an_nchw_1x1_runs_as_fast_as_channels_last_only_on_aligned_maps():
    """The third call: a 1x1 of stride 1 on 56x56 or 28x28 maps runs NCHW within 10 % of channels-last; on 14x14, 7x7,
    17x17 and 35x35 (pixels not a multiple of 8) its forward takes NCHW_1X1_UNALIGNED_SLOWDOWN's median of them."""
    aligned = [x for _, x in transposes.one_by_one_ratios(aligned=True)]
    unaligned = transposes.one_by_one_ratios(aligned=False)
    assert len(aligned) == 4 and all(0.9 <= x <= 1.11 for x in aligned)
    assert len(unaligned) == 8 and G.nchw_1x1().passed
    rates = opcost.Rates.of(models.hardware())
    for size, slowed in ((56, False), (14, True), (7, True)):
        op, cl = (_conv(64, 1024, size, 256, 1, nhwc=nhwc) for nhwc in (False, True))
        ratio = opcost.op_time(op, rates) / opcost.op_time(cl, rates)
        assert ratio == pytest.approx(cal.NCHW_1X1_UNALIGNED_SLOWDOWN if slowed else 1.0, rel=0.02), size
        bwd = replace(op, name="convolution_backward", phase=Phase.BACKWARD, shape=(*op.shape[:-1], 3.0))
        bwd_cl = replace(cl, name="convolution_backward", phase=Phase.BACKWARD, shape=(*cl.shape[:-1], 3.0))
        assert opcost.op_time(bwd, rates) == pytest.approx(opcost.op_time(bwd_cl, rates))


def test_an_nchw_step_says_what_channels_last_would_save():
    """The NCHW batch's ResNet-50 (unseen graphs): the note's figure is the GPU time the channels-last graph lacks."""
    from bench import unseen
    from bench.models import workload
    from gpuadvisor.estimate import estimate_compute
    from gpuadvisor.estimate.graph_estimate import workload_graph

    gpu_figures = models.hardware()
    with unseen.stored_graphs():
        steps = {cl: opcost.step_time(workload_graph(workload({"spec": "torchvision:resnet50", "mode": "inference",
                                                                 "batch": 128, "channels_last": cl})), gpu_figures)
                 for cl in (False, True)}
        notes = {cl: estimate_compute(workload({"spec": "torchvision:resnet50", "mode": "inference", "batch": 128,
                                                "channels_last": cl}), gpu_figures).notes for cl in (False, True)}
    saved = steps[False].device_s - steps[True].device_s
    assert steps[True].nchw_s == 0.0 and steps[False].nchw_s == pytest.approx(saved, rel=0.1)
    assert [n for n in notes[False] if "NCHW layout" in n] and not [n for n in notes[True] if "NCHW layout" in n]
