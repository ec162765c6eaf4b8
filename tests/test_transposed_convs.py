"""Transposed convolutions priced as cuDNN runs them (opcost._implicit_gemms_s, ConvShape.transposed): the forward
as the recorded convolution's dgrad at its narrow-N reach, the input's gradient as that convolution's forward;
checked against an H100's kernels (bench/transposed.py, lab/data/h100-transposed-convs-2026-12-07)."""

from __future__ import annotations

import math
import sys
from pathlib import Path

from bench import transposed as T

sys.path.insert(0, str(Path(__file__).resolve().parent))
import accuracy_gates as G


def _mean_log(xs: list[float]) -> float:
    return sum(abs(math.log(x)) for x in xs) / len(xs)


def test_the_gate_passes():
    verdict = G.transposed_convs()
    assert verdict.passed, verdict.detail


def test_the_dgrad_pricing_beats_the_forward_it_replaced():
    """Priced as the forward convolution they are recorded as (before tracer revision 19), half as many shapes
    were within 0.8x-1.25x and the training calls almost none: DCGAN's 3-channel output layer 0.28x."""
    for phase in ("forward", "training"):
        new = [x for _, x in T.kernel_ratios(phase)]
        old = [x for _, x in T.kernel_ratios(phase, transposed=False)]
        assert _mean_log(new) < 0.6 * _mean_log(old), phase
        assert sum(0.8 <= x <= 1.25 for x in new) > sum(0.8 <= x <= 1.25 for x in old) + 6, phase


def test_few_output_channels_cost_the_narrowest_dgrad_tile():
    """DCGAN's last layer (64 -> 3) and a decoder head to one channel run the same 64-wide dgrad tile as 64 output
    channels would: their forwards priced within 0.8x-1.25x of the H100's kernels, where the 8-channel padding
    alone had put them at 0.2x-0.3x."""
    ratios = dict(T.kernel_ratios("forward"))
    for label in ("dcgan L5 b256", "dcgan L5 b1024", "decoder 4x4/2 64->3 @128", "decoder 4x4/2 64->1 @128"):
        assert 0.8 <= ratios[label] <= 1.25, (label, ratios[label])
