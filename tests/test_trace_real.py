"""Models traced on real CPU tensors (their Python reads their data): layer drop's random decisions must not make
the two trace batches differ (torchaudio:wav2vec2_base's training graph could not be scaled), and the step traced
runs every layer. Needs PyTorch (the [trace] extra)."""

from __future__ import annotations

import textwrap

import pytest

pytest.importorskip("torch", reason="tracing needs PyTorch, the [trace] extra")

from gpuadvisor.estimate.graph import GraphMode, Phase, merge_pair
from gpuadvisor.estimate.trace.tracer import TRACE_BATCHES, TraceOptions, trace_graph
from gpuadvisor.modelref import parse_ref

LAYERS = 8
# torchaudio's convention (keep a layer when the draw exceeds p) and Hugging Face's (skip it when below p), with a
# drop rate so high that a random trace would almost surely skip some layer and differ between the two batches
LAYER_DROP = """
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = torch.nn.ModuleList(torch.nn.Linear(32, 32) for _ in range(LAYERS))
    def forward(self, x):
        for i, layer in enumerate(self.layers):
            if i % 2 == 0:
                if not (self.training and torch.rand(1).item() <= 0.5):
                    x = torch.relu(layer(x))
            else:
                skip = self.training and torch.rand([]) < 0.5
                if not skip:
                    x = torch.relu(layer(x))
        return x
def build():
    return Net()
def build_batch(b):
    return torch.randn(b, 32)
""".replace("LAYERS", str(LAYERS))


def test_layer_drop_keeps_every_layer_at_both_trace_batches(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("import torch\n" + textwrap.dedent(LAYER_DROP))
    opts = TraceOptions(mode=GraphMode.TRAINING)
    lo, hi = (trace_graph(parse_ref(f"{f}:build"), opts, b) for b in TRACE_BATCHES)
    assert "real CPU tensors" in lo.source  # .item() has no fake-tensor value
    bg = merge_pair(lo, hi)
    assert bg.aligned
    for g in (bg.low, bg.high):
        assert sum(op.count for op in g.ops if op.phase is Phase.FORWARD and op.name == "addmm") == LAYERS
        # every layer's weight has its AdamW state from the warm-up step: none is created in the recorded one
        assert not [op for op in g.ops if op.phase is Phase.OPTIMIZER and op.name in ("zeros", "zeros_like")]
    assert bg.at(16).batch == 16  # scales


def test_batch_shaped_draws_are_left_random(tmp_path):
    """Dropout masks are not steered: a dropout of p=0.5 still zeroes about half of its input."""
    import torch

    from gpuadvisor.estimate.trace.recorder import Recorder

    rec = Recorder()
    rec.steer_draws = True
    with rec:
        scalar = torch.rand(1)
        mask = torch.rand(4096)
        bounded = torch.empty(1).uniform_(-2.0, 3.0)
    assert 0.999 < scalar.item() < 1.0 and 2.999 < bounded.item() < 3.0
    assert 0.4 < (mask < 0.5).float().mean().item() < 0.6
