"""A user's model file (`path/to/model.py:build`) runs in a child process with a time limit.

The file is arbitrary code: it can call sys.exit(), raise, loop forever, or crash the interpreter
(os.abort(), a segfault in an extension). Run in gpuadvisor's own process, sys.exit(0) ended gpuadvisor
with exit 0 and no output, and a crash took it down with no word. Here each of these becomes one line
naming the file, the function and what happened (with the file's line where it can be found), and
exit 2 (UserError). The child is `python -m gpuadvisor.estimate.trace.child` (child.py); it writes
its answer to a file in a temporary folder, so nothing the model prints can be mistaken for it.

The time limit is TRACE_TIMEOUT_S, or GPUADVISOR_TRACE_TIMEOUT seconds from the environment: long
enough for a training trace of a large model on two cores (the slowest traces took minutes), short
enough that a hang ends.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import fields
from enum import Enum
from pathlib import Path
from typing import Any

from gpuadvisor.core.errors import UserError
from gpuadvisor.estimate.graph import BatchGraph, load
from gpuadvisor.modelref import ModelRef, Source

TRACE_TIMEOUT_S = 300.0
TIMEOUT_ENV = "GPUADVISOR_TRACE_TIMEOUT"
CHILD_MODULE = "gpuadvisor.estimate.trace.child"
REQUEST_FILE = "request.json"
OUTCOME_FILE = "outcome.json"  # {"params": N} or {"error": "one line"}
GRAPH_FILE = "graph.json.gz"
_DUMP_WAIT_S = 1.0  # after the time limit: how long the child gets to print where it is stuck


def trace_limit_s() -> float:
    """The time limit for a model file's child process, in seconds."""
    text = os.environ.get(TIMEOUT_ENV, "").strip()
    if not text:
        return TRACE_TIMEOUT_S
    try:
        limit = float(text)
    except ValueError:
        limit = float("nan")
    if not (0 < limit < float("inf")):
        raise UserError(f"{TIMEOUT_ENV}={text!r}: give the time limit for tracing a model file in seconds, e.g. 600")
    return limit


def trace_in_child(ref: ModelRef, opts: Any, batches: tuple[int, int] | None = None) -> BatchGraph:
    """The model file's step at two batches (tracer.trace_pair; TRACE_BATCHES unless others are given), traced in
    a child process."""
    if batches is None:
        from gpuadvisor.estimate.graph import TRACE_BATCHES

        batches = TRACE_BATCHES
    with tempfile.TemporaryDirectory(prefix="gpuadvisor-trace-") as folder:
        _run_child(ref, {"action": "trace", "options": options_to_json(opts), "batches": list(batches)},
                   Path(folder))
        return load(Path(folder) / GRAPH_FILE)["graph"]


def params_in_child(ref: ModelRef) -> int:
    """The parameter count of the module build() returns (no batch is made, so --input is not needed);
    kept in the user cache while the file is unchanged, so asking again starts no child."""
    cache = _params_cache_path(ref)
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
        return int(json.loads(cache.read_text())["params"])
    with tempfile.TemporaryDirectory(prefix="gpuadvisor-trace-") as folder:
        params = int(_run_child(ref, {"action": "params"}, Path(folder))["params"])
    with contextlib.suppress(OSError):
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_text(json.dumps({"params": params}))
    return params


def _params_cache_path(ref: ModelRef) -> Path:
    from gpuadvisor.core.paths import user_cache_dir

    path = Path(ref.name)
    stamp = f"{path.resolve()}:{path.stat().st_mtime_ns}" if path.is_file() else ref.name
    digest = hashlib.sha256(json.dumps([stamp, ref.func]).encode()).hexdigest()[:20]
    return user_cache_dir() / "graphs" / f"params-{digest}.json"


def options_to_json(opts: Any) -> dict[str, Any]:
    """TraceOptions as JSON (enums by value, tuples as lists), field by field."""
    out: dict[str, Any] = {}
    for f in fields(opts):
        value = getattr(opts, f.name)
        out[f.name] = value.value if isinstance(value, Enum) else list(value) if isinstance(value, tuple) else value
    return out


def options_from_json(cls: Any, data: dict[str, Any]) -> Any:
    """The TraceOptions of `options_to_json`: each value takes the type of the field's default."""
    defaults = cls()
    kwargs: dict[str, Any] = {}
    for f in fields(cls):
        if f.name not in data:
            continue
        value, default = data[f.name], getattr(defaults, f.name)
        if isinstance(default, Enum):
            value = type(default)(value)
        elif isinstance(value, list):
            value = tuple(value)
        kwargs[f.name] = value
    return cls(**kwargs)


def _run_child(ref: ModelRef, request: dict[str, Any], folder: Path) -> dict[str, Any]:
    """Run the child on `request`; its outcome, or UserError in one line for every way it can fail."""
    if ref.source is not Source.FILE:
        raise ValueError(f"only model files run in a child process, not {ref.text}")
    if not Path(ref.name).is_file():
        raise UserError(f"model file {ref.name} not found")
    (folder / REQUEST_FILE).write_text(json.dumps({"ref": ref.text, **request}))
    limit = trace_limit_s()
    package_root = str(Path(__file__).resolve().parents[3])  # the folder holding this gpuadvisor package
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (package_root, os.environ.get("PYTHONPATH")) if p)}
    proc = subprocess.Popen([sys.executable, "-m", CHILD_MODULE, str(folder)], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
                            start_new_session=True)  # its own process group: a timeout ends what it started too
    timed_out = False
    try:
        try:
            _, err = proc.communicate(timeout=limit)
        except subprocess.TimeoutExpired:
            timed_out = True
            err = _stop_after_dump(proc)
    finally:
        if proc.poll() is None:  # interrupted (Ctrl-C): leave nothing running
            _kill_group(proc)
            proc.wait()
    stderr = err.decode(errors="replace") if err else ""
    where = _user_frame(stderr, Path(ref.name))
    at = f" at {where}" if where else ""
    if timed_out:
        stuck = f", stuck at {where}" if where else f" (a hang in {ref.func}(), build_batch() or forward()?)"
        raise UserError(f"{ref.text}: no answer within {limit:g} s, the time limit for running a model file{stuck}; "
                        f"set {TIMEOUT_ENV}=SECONDS to change the limit")
    outcome_path = folder / OUTCOME_FILE
    outcome = json.loads(outcome_path.read_text()) if outcome_path.is_file() else None
    if isinstance(outcome, dict) and "error" in outcome:
        raise UserError(str(outcome["error"]))
    if proc.returncode < 0:
        raise UserError(f"{ref.text}: the model's code crashed the process running it "
                        f"({_signal_name(-proc.returncode)}){at}")
    if proc.returncode != 0 or not isinstance(outcome, dict) or "ok" not in outcome:
        raise UserError(f"{ref.text}: the model's code ended the process running it (exit status "
                        f"{proc.returncode}){at} before it answered (os._exit()?)")
    return outcome


def _stop_after_dump(proc: subprocess.Popen[bytes]) -> bytes:
    """Ask the child to print its Python stack (child.py registers SIGUSR1 with faulthandler), then end it
    and its process group; what it wrote to stderr."""
    if hasattr(signal, "SIGUSR1"):
        try:
            os.kill(proc.pid, signal.SIGUSR1)
            time.sleep(_DUMP_WAIT_S)
        except ProcessLookupError:
            pass
    _kill_group(proc)
    _, err = proc.communicate()
    return err or b""


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        if hasattr(os, "killpg"):
            os.killpg(proc.pid, signal.SIGKILL)
        else:  # Windows: no process groups to end
            proc.kill()
    except (ProcessLookupError, PermissionError):
        pass


_FRAME_RE = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+)')


def _user_frame(stderr: str, path: Path) -> str:
    """'model.py line 12': the innermost frame in the user's file of a faulthandler dump (most recent call
    first), or ''."""
    try:
        target = path.resolve()
    except OSError:
        return ""
    for m in _FRAME_RE.finditer(stderr):
        try:
            if Path(m.group("file")).resolve() == target:
                return f"{path.name} line {m.group('line')}"
        except OSError:
            continue
    return ""


def _signal_name(number: int) -> str:
    try:
        name = signal.Signals(number).name
    except ValueError:
        return f"signal {number}"
    if name == "SIGKILL":
        return "SIGKILL: out of memory, or killed from outside"
    return name
