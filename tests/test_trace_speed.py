"""A tracer that takes seconds (issue 33): one step per trace batch, every model whose forward allows it stepped on
fake tensors (its construction may read values), parameter counts without a trace, and cached answers that neither
trace again nor import PyTorch. Skipped with the reason where PyTorch (the [trace] extra) is not installed."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from gpuadvisor.estimate.graph import GraphMode, OpGraph

ROOT = Path(__file__).resolve().parents[1]
#: a small MLP whose layer widths come from tensor values read in __init__ (as RegNet's, ConvNeXt's and timm's
#: stochastic-depth rates do): fake tensors cannot build it; FORWARDS names a file each forward call adds a line to
READS_VALUES = """
import os
import torch

class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        widths = WIDTHS
        layers, width = [], 32
        for w in widths:
            layers += [torch.nn.Linear(width, w), torch.nn.ReLU()]
            width = w
        self.net = torch.nn.Sequential(*layers, torch.nn.Linear(width, 10))

    def forward(self, x):
        with open(os.environ["FORWARDS"], "a") as f:
            f.write("forward\\n")
        return self.net(x)

def build():
    return Net()

def build_batch(batch):
    return torch.randn(batch, 32)
"""


@pytest.fixture
def tracer():
    pytest.importorskip("torch", reason="tracing needs PyTorch, the [trace] extra")
    from gpuadvisor.estimate.trace import tracer

    return tracer


def model_file(tmp_path: Path, name: str, widths: str) -> str:
    path = tmp_path / f"{name}.py"
    path.write_text(READS_VALUES.replace("WIDTHS", widths))
    return f"{path}:build"


def kernels(g: OpGraph) -> list[tuple]:
    return [(*op.key, op.count) for op in g.ops]


def test_a_model_whose_construction_reads_values_steps_on_fake_tensors(tracer, tmp_path, monkeypatch):
    """Built on the CPU (its widths are values), then stepped on fake tensors: the same graph as the same model
    built with its widths written out, kernels, bytes and memory alike."""
    from gpuadvisor.modelref import parse_ref

    monkeypatch.setenv("FORWARDS", str(tmp_path / "forwards.txt"))
    opts = tracer.TraceOptions(mode=GraphMode.TRAINING)
    reads = tracer.trace_graph(parse_ref(model_file(tmp_path, "reads", "(torch.arange(3) * 16 + 64).tolist()")),
                               opts, 4)
    plain = tracer.trace_graph(parse_ref(model_file(tmp_path, "plain", "[64, 80, 96]")), opts, 4)
    assert reads.source.endswith("fake tensors)") and plain.source.endswith("fake tensors)")
    assert kernels(reads) == kernels(plain) and len(reads.ops) > 10
    assert reads.phase_peaks == plain.phase_peaks and reads.params == plain.params


def test_a_training_trace_runs_one_step_per_batch_and_records_the_steady_state(tracer, tmp_path, monkeypatch):
    """One forward per trace batch (the optimizer's states come from a step on zero gradients), and the recorded
    step has them alive from its start: AdamW's two fp32 moments of every parameter at the forward's peak."""
    from gpuadvisor.modelref import parse_ref

    forwards = tmp_path / "forwards.txt"
    monkeypatch.setenv("FORWARDS", str(forwards))
    bg = tracer.trace_pair(parse_ref(model_file(tmp_path, "net", "[64, 80, 96]")),
                           tracer.TraceOptions(mode=GraphMode.TRAINING))
    assert forwards.read_text().split() == ["forward"] * len(tracer.TRACE_BATCHES)
    forward_peak = next(p for p in bg.low.phase_peaks if p.phase == "forward")
    assert forward_peak.items["optimizer states"] == 2 * 4 * bg.low.params


def test_the_parameter_count_of_a_model_not_shipped_traces_nothing_and_is_kept(tracer, tmp_path, monkeypatch):
    from gpuadvisor.estimate import graphstore
    from gpuadvisor.modelref import parse_ref

    monkeypatch.setenv("FORWARDS", str(tmp_path / "forwards.txt"))
    ref = parse_ref(model_file(tmp_path, "net", "(torch.arange(3) * 16 + 64).tolist()"))

    def no_trace(*args, **kwargs):
        raise AssertionError("a parameter count traced the model")
    monkeypatch.setattr(tracer, "_trace", no_trace)
    want = (32 * 64 + 64) + (64 * 80 + 80) + (80 * 96 + 96) + (96 * 10 + 10)
    assert graphstore.params_of(ref) == want
    monkeypatch.setattr(tracer, "count_params", lambda ref: pytest.fail("counted again: not kept in the cache"))
    assert graphstore.params_of(ref) == want


def test_a_torchvision_model_built_from_values_is_traced_on_fake_tensors(tracer):
    """GoogLeNet's construction reads values (its truncated-normal init under fake tensors): built on the meta
    device, its step runs on fake tensors, not on real CPU tensors (minutes of convolutions on two cores)."""
    pytest.importorskip("torchvision", reason="torchvision models need the [trace-vision] extra")
    from gpuadvisor.modelref import parse_ref

    g = tracer.trace_graph(parse_ref("torchvision:googlenet"), tracer.TraceOptions(), 2)
    assert g.source.endswith("fake tensors)"), g.source
    assert tracer.count_params(parse_ref("torchvision:googlenet")) == g.params


@pytest.mark.slow  # two processes, one tracing (about 10 s)
def test_a_cached_answer_for_a_library_model_neither_traces_again_nor_imports_pytorch(tmp_path):
    pytest.importorskip("torchvision", reason="torchvision models need the [trace-vision] extra")
    code = textwrap.dedent("""
        import sys, io, contextlib
        from gpuadvisor.cli import main
        with contextlib.redirect_stdout(io.StringIO()):
            assert main(['estimate', 'torchvision:squeezenet1_1', '--mode', 'inference', '--batch', '64',
                         '--json']) == 0
        print('torch' in sys.modules)
    """)
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path), "PYTHONPATH": str(ROOT)}

    def run() -> list[str]:
        return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT,
                              env=env, timeout=300).stdout.split()

    def cached() -> dict[str, int]:
        return {str(p): p.stat().st_mtime_ns for p in (tmp_path / "gpuadvisor" / "graphs").iterdir()}

    assert run() == ["True"]
    files = cached()
    assert len(files) == 2, files  # the trace and the parameter count: no inference trace for the count
    assert run() == ["False"]
    assert cached() == files


def test_whether_pytorch_is_installed_is_asked_without_importing_it():
    """graphstore asks before it reads a cached trace: importing PyTorch to ask took seconds."""
    import importlib.util

    r = subprocess.run([sys.executable, "-c", "import sys\nfrom gpuadvisor.estimate.trace.torchlib import have_torch\n"
                        "print(have_torch(), 'torch' in sys.modules)"], capture_output=True, text=True, cwd=ROOT,
                       env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120, check=True)
    installed = "torch" in sys.modules or importlib.util.find_spec("torch") is not None
    assert r.stdout.split() == [str(installed), "False"]


PER_SAMPLE = """
import torch

class PerSample(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(16, 16)

    def forward(self, x):
        return torch.stack([self.lin(row) for row in x])  # one linear per sample, as a detector's per-image loops

def build():
    return PerSample()

def build_batch(batch):
    return torch.randn(batch, 16)
"""


def test_a_step_whose_ops_grow_with_the_batch_is_traced_at_the_asked_batch(tracer, tmp_path, monkeypatch):
    """A model whose op stream is not the same at both trace batches (a Python loop over the samples: torchvision's
    detectors) cannot be scaled in the batch: it is traced at the batch asked (and the next), once, then cached."""
    from gpuadvisor.estimate import graphstore
    from gpuadvisor.estimate.trace import contained
    from gpuadvisor.modelref import parse_ref

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(contained, "trace_in_child", lambda ref, opts, batches=None: tracer.trace_pair(
        ref, opts, batches or tracer.TRACE_BATCHES))  # in this process: the child's own tests are elsewhere
    path = tmp_path / "per_sample.py"
    path.write_text(PER_SAMPLE)
    ref, opts = parse_ref(f"{path}:build"), tracer.TraceOptions()
    assert not graphstore.batch_graph(ref, opts).aligned
    for batch in (1, 3):
        g = graphstore.graph_at(ref, opts, batch)
        assert g.batch == batch and sum(op.count for op in g.ops if op.name in ("addmm", "linear", "mm")) == batch
    traced = []
    monkeypatch.setattr(tracer, "trace_pair", lambda *a, **k: traced.append(a) or None)
    assert graphstore.graph_at(ref, opts, 3).batch == 3 and not traced  # the cache answers


def test_a_files_model_is_looked_up_without_decoding_every_shipped_graph(monkeypatch):
    """Resolving a model from the user's own file asks only the shipped graphs' keys (decoding all of them took
    0.2 s a workload): shipped_keys matches shipped(), and resolving calls no decoder."""
    from gpuadvisor.estimate import graphstore
    from gpuadvisor.modelspec import resolve_model

    assert set(graphstore.shipped_keys()) == set(graphstore.shipped())
    graphstore._shipped_graph.cache_clear()
    monkeypatch.setattr(graphstore, "shipped", lambda: pytest.fail("every shipped graph decoded"))
    spec = resolve_model("lab/models/lstm_classifier.py:build")
    assert spec.params > 0


def test_a_host_bound_step_says_how_to_price_its_own_host():
    """A host-bound op-graph step's low-confidence note names the remedy where the host is assumed, and says the
    host was measured where a probe gave its dispatch time."""
    from dataclasses import replace

    from bench.models import hardware
    from gpuadvisor.estimate import estimate_compute
    from gpuadvisor.workload import make_workload

    w = make_workload("lab/models/lstm_classifier.py:build", mode="inference", batch=32)  # shipped: no PyTorch
    assumed = estimate_compute(w, hardware()).low_confidence_reasons
    probed = estimate_compute(w, replace(hardware(), host_op_s=12e-6)).low_confidence_reasons
    assert any("`--probe` prices it" in n for n in assumed)
    assert any("measured on this host" in n for n in probed) and not any("--probe" in n for n in probed)
