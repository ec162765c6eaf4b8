"""The trace takes the code paths an NVIDIA GPU takes (trace/as_cuda.py), checked against what the H100 profiles
(lab/data/h100-models) show the GPU launching. Needs PyTorch (the [trace] extra)."""

from __future__ import annotations

import collections
import textwrap

import pytest

pytest.importorskip("torch", reason="tracing needs PyTorch, the [trace] extra")

from gpuadvisor.estimate.graph import GraphMode
from gpuadvisor.estimate.trace.tracer import TraceOptions, trace_graph
from gpuadvisor.modelref import parse_ref


def _trace(tmp_path, body: str, mode: GraphMode, batch: int = 2, **opts):
    f = tmp_path / "m.py"
    f.write_text("import torch\nimport torch.nn.functional as F\n" + textwrap.dedent(body))
    return trace_graph(parse_ref(f"{f}:build"), TraceOptions(mode=mode, **opts), batch)


def _names(g) -> collections.Counter:
    c: collections.Counter = collections.Counter()
    for op in g.ops:
        c[op.name] += op.count
    return c


ENCODER = """
def build():
    return torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(64, 4, 128, batch_first=True), 2)
def build_batch(b):
    return torch.randn(b, 16, 64)
"""


def test_transformer_inference_takes_the_fused_fast_path(tmp_path):
    """ViT-B/16 inference on the H100: 4 addmm, 1 fused attention and no copies per block (the fast path)."""
    n = _names(_trace(tmp_path, ENCODER, GraphMode.INFERENCE))
    assert n["addmm"] == 8 and n["flash_attention"] == 2
    assert not n["clone"] and not n["bmm"] and not n["_softmax"]


def test_autocast_runs_cuda_float32_ops_in_float32(tmp_path):
    """CUDA autocast computes layer norm in float32 (CPU autocast would keep bfloat16)."""
    g = _trace(tmp_path, ENCODER, GraphMode.TRAINING)
    norms = [op for op in g.ops if op.name == "native_layer_norm"]
    assert norms and all(op.dtype == "fp32" for op in norms)


def test_a_float_mask_that_needs_its_gradient_takes_the_math_path_only_with_dropout(tmp_path):
    """T5's learned position bias with attention dropout: SDPA's math path (bmm, softmax) on the GPU; BEiT's, without
    dropout, the memory-efficient kernel (an H100's profile, lab/data/h100-unseen-broad-2026-12-06), priced as the
    fused attention; flash for a constant mask."""
    body = """
    class M(torch.nn.Module):
        def __init__(self, learned):
            super().__init__()
            self.q = torch.nn.Linear(64, 64)
            self.bias = torch.nn.Parameter(torch.zeros(1, 4, 16, 16), requires_grad=learned)
        def forward(self, x):
            q = self.q(x).view(x.shape[0], 16, 4, 16).transpose(1, 2)
            return F.scaled_dot_product_attention(q, q, q, attn_mask=self.bias, dropout_p=DROPOUT).sum()
    def build():
        return M(LEARNED)
    def build_batch(b):
        return torch.randn(b, 16, 64)
    """
    learned = _names(_trace(tmp_path, body.replace("LEARNED", "True").replace("DROPOUT", "0.1"), GraphMode.TRAINING))
    assert learned["bmm"] >= 2 and not learned["flash_attention"]
    fused = _names(_trace(tmp_path, body.replace("LEARNED", "True").replace("DROPOUT", "0.0") + "\n    y = 0\n",
                          GraphMode.TRAINING))
    assert fused["flash_attention"] == 1 and not fused["bmm"]
    fixed = _names(_trace(tmp_path, body.replace("LEARNED", "False").replace("DROPOUT", "0.1") + "\n    x = 0\n",
                          GraphMode.TRAINING))
    assert fixed["flash_attention"] == 1 and not fixed["bmm"]


def test_a_wide_early_activation_is_a_peak_of_its_own(tmp_path):
    """A frozen wide stem then a small trainable head: the stem's transient scales with the batch faster than the
    head's saved activations, so it is kept as a second forward peak (graph.BatchGraph takes the larger)."""
    body = """
    def build():
        m = torch.nn.Sequential(torch.nn.Linear(8, 4096), torch.nn.GELU(), torch.nn.Linear(4096, 8),
                                torch.nn.Linear(8, 2048), torch.nn.Linear(2048, 8))
        for p in m[:3].parameters():
            p.requires_grad = False
        return m
    def build_batch(b):
        return torch.randn(b, 8)
    """
    g = _trace(tmp_path, body, GraphMode.TRAINING, mixed_precision=False, dtype="fp32")
    phases = {m.phase: m for m in g.phase_peaks}
    assert "forward, most activations" in phases
    assert phases["forward, most activations"].items["activations"] >= 2 * 4096 * 4 * 2


def test_a_dilated_convolution_records_its_dilation(tmp_path):
    """DeepLabV3's ASPP convolutions (dilation 12 on 2-D, tracer revision 20): forward and backward rows carry it;
    an undilated one's row stays as it was."""
    body = """
    class Two(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Conv2d(8, 8, 3, padding=12, dilation=12, bias=False)
            self.b = torch.nn.Conv2d(8, 8, 3, padding=1, bias=False)
        def forward(self, x):
            return self.b(self.a(x))
    def build():
        return Two()
    def build_batch(b):
        return torch.randn(b, 8, 30, 30)
    """
    convs = [op for op in _trace(tmp_path, body, GraphMode.TRAINING, 2).ops if op.cls.value == "conv"]
    assert sorted({op.named_shape.dilation for op in convs}) == [1.0, 12.0]
    assert {len(op.shape) for op in convs if op.named_shape.dilation == 1.0} == {12}


def test_a_transposed_convolution_is_the_convolution_whose_data_gradient_it_is(tmp_path):
    """DCGAN's generator (lab/models/dcgan.py): a stride-2 transposed convolution of 8 -> 4 channels, 5x5 -> 10x10,
    costs its input's pixels x the kernel x both channel counts, forward and each gradient; it had been counted over
    its output's pixels with its channels swapped (8x here, as in DCGAN's layers on the H100, 2026-12-06)."""
    body = """
    def build():
        return torch.nn.ConvTranspose2d(8, 4, 4, stride=2, padding=1, bias=False)
    def build_batch(b):
        return torch.randn(b, 8, 5, 5)
    """
    batch, macs = 2, 2 * 5 * 5 * 8 * 4 * 16
    convs = [op for op in _trace(tmp_path, body, GraphMode.TRAINING, batch).ops if op.cls.value == "conv"]
    forward = [op for op in convs if op.name == "convolution"]
    backward = [op for op in convs if op.name == "convolution_backward"]
    assert [op.flops for op in forward] == [2.0 * macs]
    assert [op.flops for op in backward] == [2.0 * macs]  # the weight's gradient only: the input needs none
    shape = forward[0].named_shape
    assert (shape.in_channels, shape.in_height, shape.out_channels, shape.out_height) == (4, 10, 8, 5)
    # and says it is transposed, forward and backward (tracer revision 19): cuDNN runs it as that dgrad
    assert shape.transposed and backward[0].named_shape.transposed
