"""The op-graph front-end: traced model specs through the CLI (shipped graphs, no PyTorch needed) and
the tracer itself (skipped with the reason where PyTorch, the [trace] extra, is not installed)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gpuadvisor.estimate.graph import GraphMode, OpClass, Phase

ROOT = Path(__file__).resolve().parents[1]
MLP = str(ROOT / "lab" / "models" / "mlp_mnist.py")


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gpuadvisor", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=120)


def cli_here(capsys: pytest.CaptureFixture[str], *args: str) -> subprocess.CompletedProcess[str]:
    """The CLI in this process, for tests that trace: PyTorch is imported here already, and a fresh interpreter
    would spend seconds importing it again for each call."""
    from gpuadvisor.cli import main

    capsys.readouterr()
    code = main(list(args))
    out = capsys.readouterr()
    return subprocess.CompletedProcess(["gpuadvisor", *args], code, out.out, out.err)


def test_estimate_resnet50_training_from_the_shipped_graph():
    r = cli("estimate", "torchvision:resnet50", "--mode", "training", "--batch", "256", "--channels-last", "--json")
    assert r.returncode == 0, r.stderr
    answer = json.loads(r.stdout)
    assert answer["rate"]["unit"] == "images/s" and answer["time"]["parts"]["conv"] > 0
    assert answer["rate"]["value"] == pytest.approx(256 / answer["time"]["step_s"])
    d = answer["detail"]
    c = d["compute"]
    assert c["unit"] == "images" and c["step_time_s"] > 0
    assert c["samples_per_s"] == pytest.approx(256 / c["step_time_s"])
    assert c["breakdown"]["conv"] > 0 and c["breakdown"]["norm"] > 0
    assert 5 * 2**30 < d["memory"]["tensor_bytes"] < 20 * 2**30  # measured 11.1 GiB on an H100


def test_inference_time_is_one_forward_pass():
    r = cli("estimate", "resnet-50", "--batch", "256", "--channels-last", "--json")
    c = json.loads(r.stdout)["detail"]["compute"]
    assert c["time_s"] == pytest.approx(c["step_time_s"]) and c["decode_step_s"] is None


@pytest.mark.parametrize(("args", "words"), [
    (("llama-2-7b", "--channels-last"), "--channels-last applies to models traced"),
    (("torchvision:resnet50", "--mode", "lora"), "LoRA needs a transformer architecture"),
    (("torchvision:resnet50", "--mode", "scoring"), "traced models are estimated for inference and training"),
    (("torchvision:resnet50", "--mode", "training", "--tokens", "1e9"), "give --samples"),
    (("torchvision:resnet50", "--trainable", "fc.*"), "--freeze and --trainable apply to training"),
    (("torchvision:resnet50", "--input", "3xbanana"), "--input"),
    (("torchvision:resnet50", "--mode", "training", "--optimizer", "sgd"), "--optimizer sgd is not modelled"),
])
def test_bad_traced_settings_are_one_line_and_exit_2(args, words):
    r = cli("estimate", *args)
    assert r.returncode == 2 and words in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_a_missing_model_file_is_named_before_anything_is_installed():
    r = cli("estimate", "nowhere/model.py:build")
    assert r.returncode == 2 and "model file nowhere/model.py not found" in r.stderr, r.stderr


def test_not_pretraced_without_torch_says_what_to_install(monkeypatch):
    from gpuadvisor.core.errors import UserError
    from gpuadvisor.estimate import graphstore
    from gpuadvisor.estimate.trace.torchlib import package_requirement
    from gpuadvisor.modelref import parse_ref

    monkeypatch.setattr(graphstore, "have_torch", lambda: False)
    with pytest.raises(UserError) as e:
        graphstore.batch_graph(parse_ref("timm:efficientnet_b7"), graphstore.TraceOptions())
    assert f"pip install {package_requirement('trace-vision')}" in str(e.value) and "[trace-vision]" in str(e.value)


def test_memory_scales_per_phase_and_its_items_add_up():
    """Two traces whose peaks hold different things (gradients at one, more activations at the other) scale to a
    batch where the items add up to the peak, and the step's peak is the largest phase's at that batch."""
    from gpuadvisor.estimate.graph import BatchGraph, MemoryPeak, OpGraph

    def graph(batch: int, fwd: float, bwd: float, bwd_items: dict[str, float]) -> OpGraph:
        peaks = (MemoryPeak(fwd, "forward", {"weights": 4.0, "activations": fwd - 4.0}),
                 MemoryPeak(bwd, "backward", bwd_items),
                 MemoryPeak(10.0, "optimizer", {"weights": 4.0, "gradients": 6.0}))
        top = max(peaks, key=lambda m: m.peak_bytes)
        return OpGraph("m", GraphMode.TRAINING, batch, (), 1, 1, top, phase_peaks=peaks)

    low = graph(2, 6.0, 9.0, {"weights": 4.0, "gradients": 3.0, "activations": 2.0})
    high = graph(4, 8.0, 10.0, {"weights": 4.0, "gradients": 0.0, "activations": 6.0})
    at = BatchGraph(low, high).at(32)
    assert at.memory.phase == "forward" and at.memory.peak_bytes == pytest.approx(36.0)  # 6 + 1 per sample
    backward = next(m for m in at.phase_peaks if m.phase == "backward")
    assert backward.peak_bytes == pytest.approx(24.0) and sum(backward.items.values()) == pytest.approx(24.0)
    assert backward.items["gradients"] == 0.0  # scaled below zero: none


# ---- the tracer (PyTorch) ------------------------------------------------------------------------------
@pytest.fixture
def tracer():
    pytest.importorskip("torch", reason="tracing needs PyTorch, the [trace] extra")
    from gpuadvisor.estimate import trace

    return trace


def test_your_own_module_forward_flops_are_its_matmuls(tracer):
    from gpuadvisor.modelref import parse_ref

    g = tracer.trace_graph(parse_ref(MLP), tracer.TraceOptions(), 16)
    want = 2 * 16 * (784 * 2048 + 2048 * 2048 + 2048 * 10)
    assert g.total("flops", cls=OpClass.GEMM) == pytest.approx(want)
    assert g.params == 784 * 2048 + 2048 + 2048 * 2048 + 2048 + 2048 * 10 + 10


def test_frozen_layers_have_no_weight_gradients(tracer):
    from gpuadvisor.modelref import parse_ref

    full = tracer.trace_graph(parse_ref(MLP), tracer.TraceOptions(mode=GraphMode.TRAINING), 16)
    head = tracer.trace_graph(parse_ref(MLP), tracer.TraceOptions(mode=GraphMode.TRAINING, trainable=("5.*",)), 16)
    bwd = lambda g: g.total("flops", phase=Phase.BACKWARD, cls=OpClass.GEMM)  # noqa: E731
    assert bwd(head) < 0.6 * bwd(full)
    assert head.trainable_params == 2048 * 10 + 10
    assert head.memory.items["optimizer states"] < 0.01 * full.memory.items["optimizer states"]


def test_a_frozen_base_forward_is_not_recorded_by_autograd(tracer):
    """The host's cost of a frozen base's forward ops is an inference op's: the tracer counts the forward kernels
    autograd records no node for, and the host model charges them so (opcost.host_counts)."""
    from gpuadvisor.estimate.opcost import host_counts
    from gpuadvisor.modelref import parse_ref

    full = tracer.trace_graph(parse_ref(MLP), tracer.TraceOptions(mode=GraphMode.TRAINING), 16)
    head = tracer.trace_graph(parse_ref(MLP), tracer.TraceOptions(mode=GraphMode.TRAINING, trainable=("5.*",)), 16)
    infer = tracer.trace_graph(parse_ref(MLP), tracer.TraceOptions(), 16)
    fwd = lambda g: sum(op.count for op in g.ops if op.phase is Phase.FORWARD)  # noqa: E731
    assert infer.untracked_ops == fwd(infer)  # no grad: nothing recorded
    assert full.untracked_ops <= 2  # the input's autocast copy at most: every layer has a weight to train
    assert head.untracked_ops >= fwd(head) - 6  # the head (its weight casts, addmm) and the loss are recorded
    untracked, tracked, _bwd, _views, steps = host_counts(head)
    assert (untracked, tracked, steps) == (head.untracked_ops, fwd(head) - head.untracked_ops, 1.0)


def test_a_graph_scales_to_any_batch(tracer):
    """Traced at two batches, the graph at a third matches a trace at that batch."""
    from gpuadvisor.modelref import parse_ref

    opts = tracer.TraceOptions(mode=GraphMode.TRAINING)
    bg = tracer.trace_batches(parse_ref(MLP), opts)
    direct = tracer.trace_graph(parse_ref(MLP), opts, 12)
    scaled = bg.at(12)
    assert scaled.flops == pytest.approx(direct.flops)
    assert scaled.memory.peak_bytes == pytest.approx(direct.memory.peak_bytes, rel=0.02)
    assert sum(scaled.memory.items.values()) == pytest.approx(scaled.memory.peak_bytes)


@pytest.mark.parametrize(("spec", "words"), [
    ("nowhere/model.py:build", "not found"),
    (f"{MLP}:nope", "has no function nope()"),
])
def test_specs_that_cannot_be_built_are_one_line(tracer, capsys, spec, words):
    r = cli_here(capsys, "estimate", spec)
    assert r.returncode == 2 and words in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_a_file_returning_no_module_is_refused(tracer, capsys, tmp_path):
    f = tmp_path / "m.py"
    f.write_text("def build():\n    return 3\n")
    r = cli_here(capsys, "estimate", f"{f}:build")
    assert r.returncode == 2 and "not a torch.nn.Module" in r.stderr


def test_your_own_module_through_the_cli(tracer, capsys):
    r = cli_here(capsys, "estimate", f"{MLP}:build", "--mode", "training", "--batch", "64", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["detail"]["compute"]["samples_per_s"] > 0


@pytest.mark.slow  # two processes, one tracing (about 12 s)
def test_a_cached_trace_answers_without_importing_pytorch(tmp_path):
    """Issue 33: a cached answer never imports PyTorch (seconds on a laptop): the cache key reads the installed
    PyTorch's version from its package metadata."""
    import os
    import subprocess
    import sys

    pytest.importorskip("torch", reason="tracing needs PyTorch (pip install -e '.[trace]')")
    root = Path(__file__).resolve().parents[1]
    code = ("import sys, io, contextlib\n"
            "from gpuadvisor.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    assert main(['estimate', '{root}/lab/models/mlp_mnist.py:build', '--mode', 'training', "
            "'--batch', '64', '--json']) == 0\n"
            "print('torch' in sys.modules)")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path), "PYTHONPATH": str(root)}
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root,
                           env=env).stdout.split() for _ in range(2)]
    assert runs[1] == ["False"], runs


def test_a_cached_trace_is_not_read_under_other_calibration_values():
    """A trace records cuDNN's RNN workspace from the calibration table: a cache entry made under other values (an
    older release's, a what-if's) must miss, or an LSTM's memory would stay what the old constants gave."""
    from gpuadvisor.estimate import calibration as cal
    from gpuadvisor.estimate.trace.tracer import TraceOptions, _cache_key
    from gpuadvisor.modelref import parse_ref

    ref, opts = parse_ref("lab/models/lstm_forecast.py:build"), TraceOptions()
    now = _cache_key(ref, opts, "2.13.0")
    with cal.override(RNN_WORKSPACE_INPUT_PASSES=cal.RNN_WORKSPACE_INPUT_PASSES + 1):
        assert _cache_key(ref, opts, "2.13.0") != now
    assert _cache_key(ref, opts, "2.13.0") == now
