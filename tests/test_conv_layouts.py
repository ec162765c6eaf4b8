"""16-bit convolutions on NCHW tensors (1-D ones have no channels-last layout): what cuDNN does with them on the
H100 (lab/data/h100-models: torchaudio:wav2vec2_base's profiles) in the cost model and in the traced memory."""

from __future__ import annotations

import textwrap
from dataclasses import replace

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


def test_a_1x1_on_an_aligned_map_holds_no_copies(tmp_path):
    """An H100 runs a 16-bit NCHW 1x1 convolution of stride 1 on a map whose pixels are a multiple of 8 as a GEMM on
    NCHW as it is (no transposes: lab/data/h100-nchw-transposes-2026-12-06); on an unaligned map it may transpose,
    so its copies are kept. DenseNet-121's NCHW inference peak: 1.22x measured with them, 0.91x without."""
    aligned = _trace(tmp_path, CONV.replace("3, padding=1,", "1,"), 4)  # 4,096 pixels
    act = 4 * 64 * 4096 * 2.0
    assert aligned.memory.items["activations"] == pytest.approx(2 * act)  # the GELU's input and output only
    odd = _trace(tmp_path, CONV.replace("3, padding=1,", "1,").replace("4096)", "4095)"), 4)
    act = 4 * 64 * 4095 * 2.0
    assert odd.memory.items["activations"] == pytest.approx(3 * act)


# --- PyTorch's own NCHW depthwise kernels and channel-bound NCHW batch norms (bench/nchw.py, H200) ---------------

@pytest.mark.parametrize(("n", "c", "size", "k", "stride", "dtype", "cudnn"), [
    (512, 72, 56, 3, 1, "fp16", True),    # stride 1, 32+ channels: cuDNN
    (512, 16, 112, 3, 1, "fp16", False),  # under 32 channels
    (512, 72, 56, 3, 1, "bf16", False),   # bf16: never cuDNN in NCHW
    (512, 240, 28, 3, 2, "fp16", False),  # stride 2 under 256 channels
    (512, 256, 28, 3, 2, "fp16", True),   # stride 2, 256+ channels on a 28-wide input
    (512, 672, 14, 5, 2, "fp16", True),   # stride 2, 512+ channels
    (1, 64, 112, 3, 2, "fp16", True),     # batch 1: every 3x3 at stride 2
    (512, 960, 4, 3, 1, "fp16", False),   # under 7 wide
])
def test_which_depthwise_convolutions_pytorch_gives_cudnn(n, c, size, k, stride, dtype, cudnn):
    """ConvParams::use_cudnn_depthwise and check_cudnn_depthwise_workload_with_filter (Convolution.cpp)."""
    from gpuadvisor.estimate.graph import ConvGradients, ConvShape, TensorLayout

    o = size // stride
    shape = ConvShape(n, c, size, size, c, k, k, c, o, o, TensorLayout.NCHW, ConvGradients.FORWARD)
    assert opcost.cudnn_depthwise(shape, dtype) is cudnn


def test_nchw_ops_as_measured_on_the_h200():
    """The four groups the NCHW gates hold (tests/accuracy_gates.py NCHW_OPS) within 0.85-1.2x in geometric mean,
    and the mechanism's signature: the native depthwise backward is several times its forward, and a batch norm
    over 16 channels costs far more per byte than one over 960."""
    import math

    from bench import nchw

    for group, ratios in nchw.op_ratios().items():
        assert 0.85 <= math.exp(sum(map(math.log, ratios)) / len(ratios)) <= 1.2, group
    assert cal.NATIVE_DEPTHWISE_FWD_EFF > 2 * cal.NATIVE_DEPTHWISE_BWD_EFF
    from gpuadvisor.estimate.graph import NormShape, StreamLayout

    def per_byte(c: int, size: int) -> float:
        n = 512
        shape = NormShape(n * c * size * size, StreamLayout.BATCH_STATS, n * size * size).to_row()
        op = Op("native_batch_norm", OpClass.NORM, Phase.FORWARD, "fp16", 0.0, 1.0, 1.0, shape)
        return opcost.nchw_batch_norm_s(op, op.named_shape) / (n * c * size * size)

    assert per_byte(16, 112) > 10 * per_byte(960, 7)


def test_an_fp16_step_is_the_bf16_one_relabelled():
    """fp16 autocast runs the bf16 step's ops (the same bytes and tensor-core rates); only what PyTorch routes by dtype
    differs, so a shipped bf16 graph answers an fp16 question without a trace."""
    from gpuadvisor import api
    from gpuadvisor.estimate.graph_estimate import workload_graph

    bf16 = workload_graph(api.workload("torchvision:mobilenet_v3_large", mode="training", batch=64, dtype="bf16"))
    fp16 = workload_graph(api.workload("torchvision:mobilenet_v3_large", mode="training", batch=64, dtype="fp16"))
    assert len(fp16.ops) == len(bf16.ops) and "bf16" not in {op.dtype for op in fp16.ops}
    assert sum(op.dtype == "fp16" for op in fp16.ops) == sum(op.dtype == "bf16" for op in bf16.ops) > 0
    assert [op.flops for op in fp16.ops] == [op.flops for op in bf16.ops]


def _vgg16(batch: int = 1024, channels_last: bool = False):
    from gpuadvisor import api

    return api.workload("torchvision:vgg16", mode="inference", batch=batch, channels_last=channels_last, dtype="fp16")


def test_an_nchw_convolution_without_room_for_its_copies_runs_without_them():
    """VGG-16's inference at batch 1024 on a 24 GiB card: only the 224x224 64-channel convolution lacks room for its
    NHWC copies (12.25 GiB beside its own 12.25), as on the H200 capped to 23.4 GiB, where that one convolution took
    the step from 164 to 354 ms; it is priced as cuDNN's workspace-free kernel, and the memory verdict drops the
    copies it never makes. On an 80 GB card, channels-last or at batch 256 nothing falls back."""
    from gpuadvisor.estimate import conv_fallback, estimate_compute, estimate_memory
    from gpuadvisor.estimate.graph_estimate import workload_graph

    card = models.hardware("GeForce RTX 3090")
    g = workload_graph(_vgg16())
    dropped = conv_fallback.fallen_back(g, card.memory_bytes)
    assert [(op.named_shape.in_channels, op.named_shape.out_channels, op.named_shape.in_width)
            for op, _ in dropped] == [(64, 64, 224)]
    assert dropped[0][1] / 2**30 == pytest.approx(12.25, rel=0.01)
    assert not conv_fallback.fallen_back(g, models.hardware().memory_bytes)
    assert not conv_fallback.fallen_back(workload_graph(_vgg16(channels_last=True)), card.memory_bytes)
    assert not conv_fallback.fallen_back(workload_graph(_vgg16(256)), card.memory_bytes)
    # time: the one convolution, a sixth of the step's FLOPs, adds a third to it on the 3090 (timm's published
    # NCHW step there takes 1.69x its channels-last one, which needs no copies)
    roomy = estimate_compute(_vgg16(), replace(card, memory_gib=80.0))
    tight = estimate_compute(_vgg16(), card)
    assert 1.25 < roomy.samples_per_s / tight.samples_per_s < 1.6
    # memory: without the copies it fits the card (the H200 under its cap held 14.9 GiB of tensors)
    plain, on_card = estimate_memory(_vgg16()), estimate_memory(_vgg16(), card.memory_bytes)
    assert plain.total / 2**30 > 24 > on_card.total / 2**30
    assert 0.8 < on_card.tensors / 2**30 / 14.9 < 1.0
    assert any("no room for the NHWC copies" in n for n in on_card.notes)
    assert estimate_memory(_vgg16(), 80 * 2**30).total == plain.total


def test_the_workspace_free_kernel_fills_a_tile_of_output_channels():
    from gpuadvisor.estimate.conv_fallback import fallback_s
    from gpuadvisor.estimate.graph import ConvGradients, ConvShape, TensorLayout

    def seconds(k: int) -> float:
        shape = ConvShape(8, 64, 56, 56, k, 3, 3, 1, 56, 56, TensorLayout.NCHW, ConvGradients(0))
        op = Op("convolution", OpClass.CONV, Phase.FORWARD, "fp16", 1e12 * k / 128, 0.0, 0.0, shape.to_row())
        return fallback_s(op, shape, 50e12)

    assert seconds(128) == pytest.approx(1e12 / (50e12 * cal.NO_WORKSPACE_CONV_EFF))
    assert seconds(256) == pytest.approx(2 * seconds(128))
    assert seconds(64) == pytest.approx(seconds(128))  # half the FLOPs on half a tile
