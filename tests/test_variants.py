"""Frozen variants replayed from stored training steps (gpuadvisor/estimate/steplog.py): `--freeze`/`--trainable`
on every shipped model without PyTorch, the replay checked against traces of the same settings."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from gpuadvisor.core.errors import UserError
from gpuadvisor.estimate.graph import GraphMode, OpGraph, Phase
from gpuadvisor.estimate.graphstore import key, shipped
from gpuadvisor.estimate.steplog import StepLog, replay_pair, trainable_flags
from gpuadvisor.estimate.trace.tracer import TraceOptions
from gpuadvisor.modelref import parse_ref

ROOT = Path(__file__).resolve().parents[1]
MLP = "lab/models/mlp_mnist.py:build"
#: shipped training steps with no step log: torchaudio has no build for the dev machine's PyTorch, so its models
#: are traced on the GPU machine (tools/trace_models.py), where no log is recorded
NO_LOG = {"torchaudio:wav2vec2_base"}


def base_keys() -> dict[str, tuple[str, TraceOptions]]:
    """The shipped training steps a frozen variant is replayed from: (spec, options) by graph key."""
    out = {}
    for k in shipped():
        spec, raw = k.split("|", 1)
        mode, dtype, mixed, channels_last, freeze, trainable, checkpointing, seq, shape = json.loads(raw)
        if mode == "training" and not (freeze or trainable or checkpointing):
            out[k] = (spec, TraceOptions(mode=GraphMode.TRAINING, dtype=dtype, mixed_precision=mixed,
                                         channels_last=channels_last, seq=seq,
                                         input_shape=tuple(shape) or None))
    return out


def shipped_logs(spec: str, opts: TraceOptions) -> tuple[StepLog, StepLog]:
    """The step logs graphstore replays for `spec` in these settings (a text model's default length serves it)."""
    from gpuadvisor.estimate.graphstore import _base_logs

    logs = _base_logs(parse_ref(spec), opts)
    assert logs is not None, f"no step log shipped for {spec} {opts}"
    return logs


def close(a: float, b: float, rel: float) -> bool:
    return abs(a - b) <= rel * max(abs(b), 1.0)


@pytest.mark.slow  # about 35 s on two cores (every shipped model's step replayed): CI runs it with `pytest -m slow`
def test_every_shipped_training_step_has_a_log_that_replays_it():
    """With every parameter trainable, the replay is the shipped graph: the same kernels, bytes and peaks (within
    what a newer version of the model's library moved: tools/trace_models.LOG_TOLERANCE)."""
    from tools.trace_models import LOG_TOLERANCE

    checked = 0
    for k, (spec, opts) in base_keys().items():
        if spec in NO_LOG:
            continue
        low, high = shipped_logs(spec, opts)
        for log, graph in ((low, shipped()[k].low), (high, shipped()[k].high)):
            replay = log.replay([True] * len(log.param_names))
            for x, y in zip(_totals(replay), _totals(graph), strict=True):
                assert close(x, y, LOG_TOLERANCE), (k, _totals(replay), _totals(graph))
            peaks = {m.phase: m.peak_bytes for m in graph.phase_peaks}
            for m in replay.phase_peaks:
                assert close(m.peak_bytes, peaks[m.phase], LOG_TOLERANCE), (k, m.phase)
        checked += 1
    assert checked >= 25


def _totals(g: OpGraph) -> tuple[float, ...]:
    return (g.flops, g.total("read"), g.total("written"), float(g.host_ops), float(g.untracked_ops),
            float(g.trainable_params))


@pytest.mark.parametrize(("spec", "trainable"), [
    ("torchvision:resnet50", ("fc.*",)),
    ("timm:convnext_tiny", ("head.*", "stages.3.*")),
])
def test_a_replayed_variant_is_the_traced_variant(spec, trainable):
    """The shipped graphs of a transfer-learning variant (traced with those parameters frozen) against the replay
    of the shipped step with every parameter trainable."""
    ref = parse_ref(spec)
    opts = TraceOptions(mode=GraphMode.TRAINING, channels_last=True)
    traced = shipped()[key(ref, TraceOptions(mode=GraphMode.TRAINING, channels_last=True, trainable=trainable))]
    replayed = replay_pair(shipped_logs(spec, opts), trainable=trainable)
    for a, b in ((replayed.low, traced.low), (replayed.high, traced.high)):
        for x, y in zip(_totals(a), _totals(b), strict=True):
            assert close(x, y, 1e-4), (spec, _totals(a), _totals(b))
        assert close(a.memory.peak_bytes, b.memory.peak_bytes, 0.005)
    at = 256
    assert close(replayed.at(at).memory.peak_bytes, traced.at(at).memory.peak_bytes, 0.02)


def test_the_recorded_check_against_live_traces_is_current_and_within_tolerance():
    """tools/check_variants.py's record (each replay against a live trace of the same settings, through the cost
    model at batch 64): it covers the tool's cases, each within its tolerance in step time and peak memory."""
    from tools.check_variants import CASES, OUT, TOLERANCE

    record = json.loads(OUT.read_text())
    assert len(record["cases"]) == len(CASES) >= 15
    assert {c["spec"] for c in record["cases"]} == {spec for spec, *_ in CASES}
    for case in record["cases"]:
        assert abs(case["time_error"]) <= TOLERANCE and abs(case["memory_error"]) <= TOLERANCE, case


def test_freezing_drops_weight_gradients_optimizer_state_and_saved_activations():
    low, _ = shipped_logs("torchvision:resnet50", TraceOptions(mode=GraphMode.TRAINING))
    flags = trainable_flags(low.param_names, trainable=("fc.*",))
    full, head = low.replay([True] * len(flags)), low.replay(flags)
    bwd = lambda g: g.total("flops", phase=Phase.BACKWARD)  # noqa: E731
    assert bwd(head) < 0.01 * bwd(full)  # only the head's weight gradient: no input gradients into the base
    assert head.trainable_params == 2048 * 1000 + 1000
    states = lambda g: max(m.items["optimizer states"] for m in g.phase_peaks)  # noqa: E731
    assert states(head) == pytest.approx(2 * 4 * head.trainable_params, rel=0.01)
    backward_acts = lambda g: next(m for m in g.phase_peaks if m.phase == "backward").items["activations"]  # noqa: E731
    assert backward_acts(head) < 0.05 * backward_acts(full)  # the frozen base saves nothing for backward
    assert head.untracked_ops > 0.9 * sum(op.count for op in head.ops if op.phase is Phase.FORWARD)


def test_a_glob_matching_no_parameter_is_one_clear_error():
    low, _ = shipped_logs("torchvision:resnet50", TraceOptions(mode=GraphMode.TRAINING))
    with pytest.raises(UserError, match=r"parameter glob 'head\.\*' matches no parameter \(names look like: conv1"):
        trainable_flags(low.param_names, trainable=("head.*",))
    with pytest.raises(UserError, match="every parameter is frozen"):
        low.replay([False] * len(low.param_names))


def _no_torch_run(code: str) -> subprocess.CompletedProcess[str]:
    """`code` in a fresh interpreter where `import torch` fails, as on an install without the [trace] extra."""
    prelude = "import sys\nsys.modules['torch'] = None\n"
    return subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(code)], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)


@pytest.mark.slow  # every shipped model twice (about 10 s): run with the slow suite, which CI runs
def test_trainable_and_freeze_on_every_shipped_model_answer_without_pytorch_within_a_second():
    """For each shipped model: its last parameter's module trainable (a head), and its first one's frozen (an
    embedding or stem), through the CLI's estimate, each within a second of the process's CPU time (wall time on a
    machine shared with other work counts their time too: 1.15 s once, for 0.4 s of CPU), with PyTorch unimportable."""
    code = """
        import json, time
        from gpuadvisor.cli import main
        from gpuadvisor.estimate.graphstore import _base_logs
        from gpuadvisor.estimate.trace.tracer import TraceOptions
        from gpuadvisor.estimate.graph import GraphMode
        from gpuadvisor.modelref import parse_ref
        module = lambda name: name.rsplit(".", 1)[0] + ".*" if "." in name else name
        # the process's imports and the catalog's first load, once (a whole process answering the README's example
        # is timed in BENCHMARKS.md's start-up line): each variant is then timed on its own
        main(["estimate", "torchvision:resnet50", "--mode", "training", "--batch", "1", "--json"])
        out = []
        for spec in SPECS:
            names = _base_logs(parse_ref(spec), TraceOptions(mode=GraphMode.TRAINING))[0].param_names
            for flag, glob in (("--trainable", module(names[-1])), ("--freeze", module(names[0]))):
                t0 = time.process_time()
                code = main(["estimate", spec, "--mode", "training", "--batch", "1", flag, glob, "--json"])
                out.append([spec, flag, glob, code, time.process_time() - t0])
        print("RESULT" + json.dumps(out))
    """
    specs = sorted({spec for spec, _ in base_keys().values() if spec not in NO_LOG})
    r = _no_torch_run(f"SPECS = {specs!r}\n" + textwrap.dedent(code))
    assert r.returncode == 0, r.stderr[-2000:]
    results = json.loads(r.stdout.split("RESULT", 1)[1])
    assert len(results) == 2 * len(specs) >= 40
    for spec, flag, glob, code, seconds in results:
        assert code == 0, (spec, flag, glob, r.stderr[-2000:])
        assert seconds < 1.0, (spec, flag, glob, seconds)
    assert "torch" not in r.stderr


def test_a_model_not_shipped_says_the_one_command_that_installs_tracing():
    r = _no_torch_run("""
        from gpuadvisor.cli import main
        raise SystemExit(main(["estimate", "timm:efficientnet_b7", "--mode", "training"]))
    """)
    from gpuadvisor.estimate.trace import torchlib

    assert r.returncode == 2
    line = r.stderr.strip()
    requirement = torchlib.package_requirement("trace-vision")  # the clone's folder: as long as its path
    assert len(line.splitlines()) == 1 and len(line) - len(requirement) < 240, line
    assert f"pip install {requirement}" in line and "[trace-vision]" in line


def test_the_install_command_takes_the_cpu_build_where_no_nvidia_driver_is_present(monkeypatch):
    from gpuadvisor.estimate.trace import torchlib

    monkeypatch.setattr(torchlib, "package_requirement", lambda extra: f'"gpuadvisor[{extra}]"')
    monkeypatch.setattr(torchlib, "nvidia_driver_present", lambda: False)
    assert torchlib.install_command("trace-hf") == ("pip install torch --index-url https://download.pytorch.org/"
                                                    'whl/cpu && pip install "gpuadvisor[trace-hf]"')
    assert torchlib.install_command("trace-hf", torch_installed=True) == 'pip install "gpuadvisor[trace-hf]"'
    monkeypatch.setattr(torchlib, "nvidia_driver_present", lambda: True)
    assert torchlib.install_command("trace-vision") == 'pip install "gpuadvisor[trace-vision]"'


@pytest.mark.parametrize("origin, wanted", [
    (None, '"gpuadvisor[trace]"'),  # from PyPI: no direct_url.json
    ('{"url": "https://example.org/gpuadvisor-0.1.0.tar.gz"}', '"gpuadvisor[trace]"'),
    ('{"url": "file:///home/me/gpu%20advisor", "dir_info": {}}', '"/home/me/gpu advisor[trace]"'),
    ('{"url": "file:///home/me/gpuadvisor", "dir_info": {"editable": true}}', '-e "/home/me/gpuadvisor[trace]"'),
    ("not json", '"gpuadvisor[trace]"'),
])
def test_the_install_hint_names_the_clone_gpuadvisor_was_installed_from(monkeypatch, origin, wanted):
    """The README installs a clone (`pip install .`): the hint adds the extra to that folder, editable where the
    install was, since the name alone is looked up on PyPI."""
    import importlib.metadata

    from gpuadvisor.estimate.trace import torchlib

    class Dist:
        def read_text(self, name):
            return origin if name == "direct_url.json" else None

    monkeypatch.setattr(importlib.metadata, "distribution", lambda name: Dist())
    assert torchlib.package_requirement("trace") == wanted


def test_every_install_extra_named_exists_in_pyproject():
    import tomllib

    from gpuadvisor.estimate.trace.torchlib import LIBRARY_EXTRAS

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    for library, extra in LIBRARY_EXTRAS.items():
        assert any(dep.startswith(library) for dep in extras[extra]), (library, extra)
        assert any(dep.startswith("torch>") for dep in extras[extra])


# ---- the recording itself (PyTorch) -------------------------------------------------------------------------
@pytest.fixture
def tracer():
    pytest.importorskip("torch", reason="tracing needs PyTorch, the [trace] extra")
    from gpuadvisor.estimate.trace import tracer

    return tracer


@pytest.mark.parametrize("variant", [{"trainable": ("5.*",)}, {"freeze": ("1.*",)}, {"trainable": ("3.weight",)}])
def test_a_recorded_step_replays_to_the_live_trace_of_each_variant(tracer, variant):
    """Op for op and byte for byte: a head trained, a frozen first layer (its input gradient not computed), and a
    weight trained without its bias."""
    from dataclasses import replace

    opts = tracer.TraceOptions(mode=GraphMode.TRAINING)
    log = tracer.trace_log(parse_ref(MLP), opts, 4)
    live = tracer.trace_graph(parse_ref(MLP), replace(opts, **variant), 4)
    replayed = log.replay(trainable_flags(log.param_names, **variant))
    assert [(o.name, o.phase, o.shape) for o in replayed.ops] == [(o.name, o.phase, o.shape) for o in live.ops]
    for x, y in zip(_totals(replayed), _totals(live), strict=True):
        assert close(x, y, 1e-6)
    assert [round(m.peak_bytes) for m in replayed.phase_peaks] == [round(m.peak_bytes) for m in live.phase_peaks]
