"""cuDNN's fused RNN as the trace counts its memory (trace/recurrent.py). Needs PyTorch (the [trace] extra)."""

from __future__ import annotations

import textwrap

import pytest

pytest.importorskip("torch", reason="tracing needs PyTorch, the [trace] extra")

from gpuadvisor.estimate import calibration as cal
from gpuadvisor.estimate.graph import GraphMode
from gpuadvisor.estimate.trace.tracer import TraceOptions, trace_graph
from gpuadvisor.modelref import parse_ref

BATCH, STEPS, HIDDEN = 4, 32, 256  # hidden 256: no persistent kernel's rows in either phase

LSTM_MODEL = f"""
import torch

class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = torch.nn.LSTM({HIDDEN}, {HIDDEN}, batch_first=True)

    def forward(self, x):
        out, _ = self.rnn(x)
        return out

def build():
    return Net()

def build_batch(b):
    return torch.randn(b, {STEPS}, {HIDDEN})
"""


def _peaks(tmp_path, **constants: float) -> dict[str, float]:
    f = tmp_path / "m.py"
    f.write_text(textwrap.dedent(LSTM_MODEL))
    with cal.override(**constants):
        g = trace_graph(parse_ref(f"{f}:build"), TraceOptions(mode=GraphMode.TRAINING), BATCH)
    return {m.phase: m.peak_bytes for m in g.phase_peaks}


def test_an_rnn_backward_holds_the_forwards_training_workspace(tmp_path):
    """lab/data/h100-rnn-kernels-new-2026-12-06/rnn_backward_memory.json: cuDNN's backward holds the workspace the
    forward's training call held, so a larger workspace raises the backward's peak by as much as the forward's (each
    extra pass of the workspace is a row of batch x hidden a step, in bf16 under autocast)."""
    base = _peaks(tmp_path)
    more = _peaks(tmp_path, RNN_WORKSPACE_STEP_PASSES=float(cal.RNN_WORKSPACE_STEP_PASSES) + 10.0)
    extra = 10.0 * BATCH * STEPS * HIDDEN * 2.0
    for phase in ("forward", "backward"):
        assert more[phase] - base[phase] == pytest.approx(extra, rel=0.01), phase
