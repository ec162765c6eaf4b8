"""A convolution's bias on CUDA: PyTorch's cuDNN backends add it in a kernel of their own after the convolution
(aten/src/ATen/native/Convolution.cpp `_convolution`: `output.add_(reshape_bias(...))`), its own NCHW depthwise
kernels inside. The tracer records that add; the pricer prices it as the broadcast elementwise op it is."""

from __future__ import annotations

import pytest

from gpuadvisor.estimate.conv_backend import bias_added_apart
from gpuadvisor.estimate.graph import BROADCAST, ConvGradients, ConvShape, OpClass, StreamShape, TensorLayout


def _shape(channels: int, groups: int, layout: TensorLayout, kernel: int = 3) -> ConvShape:
    return ConvShape(8, channels, 56, 56, channels, kernel, kernel, groups, 56, 56, layout, ConvGradients.FORWARD)


@pytest.mark.parametrize(("groups", "layout", "dtype", "apart"), [
    (1, TensorLayout.NHWC, "bf16", True),  # a dense convolution: cuDNN
    (1, TensorLayout.NCHW, "bf16", True),
    (64, TensorLayout.NHWC, "bf16", True),  # channels-last depthwise: cuDNN
    (64, TensorLayout.NCHW, "bf16", False),  # NCHW depthwise in bf16: PyTorch's own kernel adds it inside
    (64, TensorLayout.NCHW, "fp16", True),  # ... in fp16 at 3x3 stride 1 and 32+ channels: cuDNN
    (4, TensorLayout.NCHW, "bf16", True),  # grouped, not depthwise: cuDNN
])
def test_which_backends_add_the_bias_apart(groups, layout, dtype, apart):
    assert bias_added_apart(_shape(64, groups, layout), dtype) is apart


MODEL = '''import torch.nn as nn


def build():
    return nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.Conv2d(32, 32, 3, padding=1, bias=False),
                         nn.Conv2d(32, 32, 3, padding=1, groups=32), nn.Flatten(), nn.Linear(32 * 16 * 16, 10))
'''


@pytest.mark.parametrize(("channels_last", "adds"), [(False, 1), (True, 2)])
def test_the_trace_records_each_bias_add_cuda_launches(tmp_path, channels_last, adds):
    """The biased dense convolution adds its bias apart, the bias-free one does not, and the biased depthwise one
    only where cuDNN runs it (channels-last; in NCHW bf16 PyTorch's own kernel adds it)."""
    pytest.importorskip("torch", reason="tracing needs PyTorch, the [trace] extra")
    from gpuadvisor.estimate.trace import TraceOptions, trace_graph
    from gpuadvisor.modelref import parse_ref

    path = tmp_path / "biased.py"
    path.write_text(MODEL)
    g = trace_graph(parse_ref(f"{path}:build"), TraceOptions(channels_last=channels_last, input_shape=(3, 16, 16)), 4)
    names = [op.name for op in g.ops]
    bias_adds = [op for op in g.ops if op.name == "add_"]
    assert len(bias_adds) == adds, names
    first = bias_adds[0]
    assert names[names.index("add_") - 1] == "convolution" and first.cls is OpClass.ELEMENTWISE
    shape = StreamShape.from_row(first.shape)
    assert shape.elements == 4 * 32 * 16 * 16 and shape.layout & BROADCAST  # per channel, over the output
    assert first.written == 2 * 4 * 32 * 16 * 16  # in place: the bf16 output, once
