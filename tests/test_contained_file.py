"""A user's model file runs in a child process with a time limit (issue 33, part 4): sys.exit(), an
exception, a hang and a crash in it each end gpuadvisor with one line naming the file, the function and
what happened, and exit 2. Before, sys.exit(0) ended gpuadvisor with exit 0 and no output, and a crash
(os.abort, a segfault) killed it with no word."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# each case starts a child process that imports PyTorch (2-9 s): about 45 s in all, run by CI's slow pass
pytestmark = pytest.mark.slow

pytest.importorskip("torch", reason="a model file is traced with PyTorch, the [trace] extra")

LINEAR = "import torch\n\ndef build():\n    return torch.nn.Linear(8, 4)\n\n"


def model_file(tmp_path: Path, body: str) -> str:
    path = tmp_path / "model.py"
    path.write_text(body)
    return f"{path}:build"


def estimate(capsys: pytest.CaptureFixture[str], spec: str, *args: str) -> tuple[int, str, str]:
    """The CLI in this process (PyTorch is imported here already); the model's code runs in its child."""
    from gpuadvisor.cli import main

    capsys.readouterr()
    code = main(["estimate", spec, *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


@pytest.mark.parametrize(("body", "words"), [
    ("import sys\n\ndef build():\n    sys.exit(0)\n", "called sys.exit(0)"),
    ("import sys\nsys.exit(0)\n\ndef build():\n    pass\n", "called sys.exit(0)"),  # on import
])
def test_sys_exit_in_the_file_is_one_line_and_exit_2(capsys, tmp_path, body, words):
    spec = model_file(tmp_path, body)
    code, out, err = estimate(capsys, spec, "--input", "8")
    line = one_line(err)
    assert code == 2 and out == ""
    assert spec in line and words in line and "model.py line" in line


def test_sys_exit_0_no_longer_ends_gpuadvisor_with_exit_0(tmp_path):
    """The reported case end to end, in a fresh interpreter: exit 2 and the reason, not exit 0 and nothing."""
    spec = model_file(tmp_path, "import sys\n\ndef build():\n    sys.exit(0)\n")
    r = subprocess.run([sys.executable, "-m", "gpuadvisor", "estimate", spec, "--input", "8"], cwd=ROOT,
                       capture_output=True, text=True, timeout=300, env=_env(tmp_path))
    assert r.returncode == 2 and r.stdout == ""
    assert "called sys.exit(0)" in one_line(r.stderr)


def test_an_exception_in_build_is_one_line_with_its_line(capsys, tmp_path):
    spec = model_file(tmp_path, "def build():\n    raise ValueError('no such config\\nsecond line')\n")
    code, out, err = estimate(capsys, spec)
    text = one_line(err)
    assert code == 2 and out == ""
    assert f"{spec}: build() failed: ValueError: no such config (at model.py line 2)" in text


@pytest.mark.parametrize(("body", "words", "line"), [
    (LINEAR + "def build_batch(batch):\n    raise KeyError('pixels')\n", "KeyError: 'pixels'", 7),
    ("import torch\n\nclass M(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
     "        self.lin = torch.nn.Linear(8, 8)\n\n    def forward(self, x):\n        raise RuntimeError('bad')\n\n"
     "def build():\n    return M()\n\ndef build_batch(batch):\n    return torch.randn(batch, 8)\n",
     "RuntimeError: bad", 9),
])
def test_an_exception_in_the_traced_step_is_one_line_with_its_line(tmp_path, body, words, line):
    """build_batch() and forward() run in the trace's child (the CLI turns the UserError into exit 2)."""
    from gpuadvisor.core.errors import UserError
    from gpuadvisor.estimate.trace.contained import trace_in_child
    from gpuadvisor.estimate.trace.tracer import TraceOptions
    from gpuadvisor.modelref import parse_ref

    spec = model_file(tmp_path, body)
    with pytest.raises(UserError) as err:
        trace_in_child(parse_ref(spec), TraceOptions())
    text = str(err.value)
    assert "\n" not in text and spec in text and words in text and f"model.py line {line}" in text


def test_a_hang_ends_at_the_time_limit(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("GPUADVISOR_TRACE_TIMEOUT", "2")
    spec = model_file(tmp_path, "import time\n\ndef build():\n    while True:\n        time.sleep(0.1)\n")
    started = time.monotonic()
    code, out, err = estimate(capsys, spec, "--input", "8")
    elapsed = time.monotonic() - started
    text = one_line(err)
    assert code == 2 and out == ""
    assert spec in text and "no answer within 2 s" in text and "GPUADVISOR_TRACE_TIMEOUT" in text
    assert elapsed < 2 + 10  # the limit, the stack dump's second and the kill; not the default limit


def test_a_bad_time_limit_is_one_line(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("GPUADVISOR_TRACE_TIMEOUT", "soon")
    code, _, err = estimate(capsys, model_file(tmp_path, LINEAR), "--input", "8")
    assert code == 2 and "GPUADVISOR_TRACE_TIMEOUT='soon'" in one_line(err)


@pytest.mark.parametrize(("body", "words"), [
    ("import os\n\ndef build():\n    os.abort()\n", "crashed the process running it (SIGABRT) at model.py line 4"),
    ("import ctypes\n\ndef build():\n    ctypes.string_at(0)\n",
     "crashed the process running it (SIGSEGV) at model.py line 4"),
    ("import os\n\ndef build():\n    os._exit(0)\n", "ended the process running it (exit status 0)"),
])
def test_a_crash_in_the_file_is_one_line(capsys, tmp_path, body, words):
    if sys.platform == "win32":
        pytest.skip("the signals are POSIX")
    spec = model_file(tmp_path, body)
    code, out, err = estimate(capsys, spec, "--input", "8")
    text = one_line(err)
    assert code == 2 and out == ""
    assert spec in text and words in text


def test_a_file_traced_in_its_child_gives_the_in_process_trace(tmp_path):
    """The child's graph is the tracer's own: same FLOPs, peak and parameter count as tracing here."""
    from gpuadvisor.estimate.graph import GraphMode
    from gpuadvisor.estimate.trace.contained import trace_in_child
    from gpuadvisor.estimate.trace.tracer import TraceOptions, trace_pair
    from gpuadvisor.modelref import parse_ref

    ref = parse_ref(model_file(tmp_path, LINEAR))
    assert ref is not None
    opts = TraceOptions(mode=GraphMode.TRAINING, input_shape=(8,), trainable=("weight",))
    child, here = trace_in_child(ref, opts).at(16), trace_pair(ref, opts).at(16)
    assert child.flops == pytest.approx(here.flops) and child.flops > 0
    assert child.memory.peak_bytes == pytest.approx(here.memory.peak_bytes)
    assert (child.params, child.trainable_params) == (here.params, here.trainable_params) == (36, 32)


def test_a_file_without_build_batch_is_estimated_with_input(capsys, tmp_path):
    """The parameter count comes from build() alone: before, it traced a default step that needed a batch, so
    `--input` (which the refusal itself asked for) could not help."""
    from gpuadvisor.modelspec import resolve_model

    spec = model_file(tmp_path, LINEAR)
    assert resolve_model(spec).num_params == 8 * 4 + 4
    code, out, err = estimate(capsys, spec, "--input", "8", "--json")
    assert code == 0, err
    assert json.loads(out)["rate"]["value"] > 0


def _env(tmp_path: Path) -> dict[str, str]:
    import os

    return {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
