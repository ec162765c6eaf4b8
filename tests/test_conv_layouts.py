"""16-bit convolutions on NCHW tensors (1-D ones have no channels-last layout): what cuDNN does with them on the
H100 (lab/data/h100-models: torchaudio:wav2vec2_base's profiles) in the cost model and in the traced memory."""

from __future__ import annotations

import textwrap

import pytest

from bench import models
from gpuadvisor.estimate import calibration as cal
from gpuadvisor.estimate import opcost
from gpuadvisor.estimate.graph import GraphMode, Op, OpClass, Phase


def _pos_conv(nhwc: float, phase: Phase = Phase.FORWARD, grads: float = 0.0) -> Op:
    """wav2vec2's positional convolution at batch 32: 768 channels in 16 groups, a 128-tap filter over 499 frames."""
    n, c, h, k, r, groups, oh = 32, 768, 499, 768, 128, 16, 500
    flops = 2.0 * n * oh * k * (c / groups) * r * (2 if grads else 1)
    return Op(name="convolution_backward" if grads else "convolution", cls=OpClass.CONV, phase=phase, dtype="bf16",
              flops=flops, read=34e6, written=25e6,
              shape=(n, c, h, 1, k, r, 1, groups, oh, 1, nhwc, grads))


def test_an_nchw_grouped_convolution_runs_per_group_on_cuda_cores():
    """The profiles: implicit_convolve_sgemm once per group (CUDA cores), 13-15 ms of the 32.5 ms step at batch 32
    (the step less every other op's profiled time); the NHWC rule (tensor cores, ResNeXt) gave 0.36 ms."""
    rates = opcost.Rates.of(models.hardware())
    nchw, nhwc = opcost.op_time(_pos_conv(0.0), rates), opcost.op_time(_pos_conv(1.0), rates)
    cuda_rate = rates.gemm["fp32"] * cal.CUDA_CORE_CONV_EFF
    assert nchw == pytest.approx(_pos_conv(0.0).flops / cuda_rate)
    assert 8e-3 < nchw < 20e-3 and nhwc < 1e-3
    # the gradients: per-group implicit GEMMs on tensor cores (cutlass dgrad x 16 in the training profile), slower
    # than one grouped kernel's but far from the forward's CUDA-core time
    bwd = opcost.op_time(_pos_conv(0.0, Phase.BACKWARD, 3.0), rates)
    assert opcost.op_time(_pos_conv(1.0, Phase.BACKWARD, 3.0), rates) <= bwd < nchw


CONV = """
import torch
def build():
    return torch.nn.Sequential(torch.nn.Conv1d(64, 64, 3, padding=1, bias=False), torch.nn.GELU())
def build_batch(b):
    return torch.randn(b, 64, 4096)
"""


def _trace(tmp_path, body: str, batch: int):
    pytest.importorskip("torch", reason="tracing needs PyTorch, the [trace] extra")
    from gpuadvisor.estimate.trace.tracer import TraceOptions, trace_graph
    from gpuadvisor.modelref import parse_ref

    f = tmp_path / "m.py"
    f.write_text(textwrap.dedent(body))
    return trace_graph(parse_ref(f"{f}:build"), TraceOptions(mode=GraphMode.INFERENCE), batch)


def test_an_nchw_convolution_holds_nhwc_copies_of_its_tensors(tmp_path):
    """cuDNN transposes a 16-bit NCHW convolution's input in and output out through its workspace: wav2vec2_base's
    inference peak (at its first 512-channel convolution) was 0.69x measured without them, 0.975x with."""
    g = _trace(tmp_path, CONV, 4)
    act = 4 * 64 * 4096 * 2.0  # one (4, 64, 4096) bf16 tensor
    assert g.memory.items["inputs"] == pytest.approx(act)
    # at the convolution: its output, and the NHWC copies of its input and output (the GELU after holds 2 only)
    assert g.memory.items["activations"] == pytest.approx(3 * act)


def test_grouped_and_single_channel_convolutions_are_not_transposed(tmp_path):
    grouped = _trace(tmp_path, CONV.replace("padding=1, bias", "padding=1, groups=16, bias"), 4)
    act = 4 * 64 * 4096 * 2.0
    assert grouped.memory.items["activations"] == pytest.approx(2 * act)  # the GELU's input and output
    stem = _trace(tmp_path, CONV.replace("Conv1d(64,", "Conv1d(1,").replace("randn(b, 64,", "randn(b, 1,"), 4)
    assert stem.memory.items["activations"] == pytest.approx(2 * act)
