"""The calibration table: every constant is sourced and marked, the estimator reads it (a wrong
constant changes an estimate), the generated doc is current, and gpuadvisor/estimate has no import
cycle. The recomputations of measured and fitted constants are in test_calibration_fits.py."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from gpuadvisor.estimate import HardwareFigures, calibration, decode_step, estimate_compute, estimate_serving
from gpuadvisor.estimate.calibration import Constant, Method
from gpuadvisor.workload import make_workload

ROOT = Path(__file__).resolve().parents[1]
ESTIMATE = ROOT / "gpuadvisor" / "estimate"
H100 = HardwareFigures(name="H100", memory_gib=80, bandwidth_gbs=3350, tflops={"bf16": 989.4, "fp32": 66.9},
                       tdp_w=700, interconnect_gbs=900, compute_units=132, compute_capability="9.0")


def test_every_constant_is_sourced_and_marked():
    assert len(calibration.TABLE) >= 45
    for c in calibration.constants():
        assert c.meaning and c.unit and c.source, c.name
        assert isinstance(c.method, Method), c.name
        if not c.method.reproducible:  # assumption, datasheet, counted or not reproducible: it says why
            assert c.how, f"{c.name}: {c.method.value} without a word on why"
        if c.method in (Method.MEASURED, Method.FITTED, Method.NOT_REPRODUCIBLE):
            assert c.source != "-" or c.method is Method.NOT_REPRODUCIBLE, c.name


def test_assumptions_and_datasheet_figures_are_marked_as_such():
    """Constants that were never measured here must not claim a measurement."""
    # an engine's documented default is assumed of the user's engine (they can set it): an assumption with its source
    for name in ("MISALIGNED_CONV_SLOWDOWN", "DP_OVERLAP", "INTERCONNECT_EFFICIENCY", "DEFAULT_HOST_BANDWIDTH_GBS",
                 "ALLREDUCE_LATENCY_NVLINK_S", "ALLREDUCE_LATENCY_PCIE_S", "KV_BLOCK_TOKENS", "SERVING_RESERVE",
                 "MAX_BATCH", "NVL72_DOMAIN",  # the rack's 72 GPUs: a product fact no stored set binds both ways
                 "NODE_NET_GBS_PER_GPU"):  # a DGX's 400 Gb/s per GPU assumed of the user's cluster: bound one way only
        assert calibration.get(name).method is Method.ASSUMPTION, name
    for name in ("GPUS_PER_NODE",):
        assert calibration.get(name).method is Method.DATASHEET, name
    for c in calibration.constants():  # a datasheet fact is checked against its source, not swept
        assert c.method is not Method.DATASHEET or c.source.startswith("https://"), c.name


def test_records_reject_malformed_constants():
    with pytest.raises(ValueError, match="upper-case"):
        Constant("k_ramp", 1.0, "x", "m", "s", Method.ASSUMPTION)
    with pytest.raises(TypeError):
        Constant("X", True, "x", "m", "s", Method.ASSUMPTION)
    with pytest.raises(ValueError, match="defined twice"):
        calibration.register("again", [calibration.get("K_RAMP")])


def test_api_reads_overrides_and_restores():
    k = calibration.K_RAMP
    assert calibration.value("k_ramp") == k == calibration.get("K_RAMP").value
    with calibration.override(K_RAMP=k * 2):
        assert calibration.K_RAMP == k * 2 == calibration.value("K_RAMP")
    assert k == calibration.K_RAMP
    with pytest.raises(KeyError), calibration.override(NO_SUCH_CONSTANT=1.0):
        pass
    with pytest.raises(AttributeError):
        _ = calibration.NO_SUCH_CONSTANT


def test_monkeypatching_a_wrong_constant_changes_the_estimates(monkeypatch):
    """The table is what the code reads: a deliberately wrong value moves every figure that uses it."""
    train = make_workload("llama-3.2-1b", mode="training", batch=8, seq_len=1024)
    gen = make_workload("llama-3.2-1b", mode="inference", batch=8, seq_len=512, gen_tokens=64)
    step = estimate_compute(train, H100).step_time_s
    graph = decode_step(gen, H100, batch=8, context=544, engine="graphs").time_s
    eager = decode_step(gen, H100, batch=8, context=544, engine="eager").time_s
    kv = estimate_serving(gen, H100, concurrency=8, prompt_tokens=512, output_tokens=64).kv_capacity_tokens

    monkeypatch.setattr(calibration, "K_RAMP", 3000)  # ten times the fitted ramp: every GEMM slower
    assert estimate_compute(train, H100).step_time_s > step * 1.2
    monkeypatch.setattr(calibration, "KERNEL_FLOOR_S", 34e-6)
    assert decode_step(gen, H100, batch=8, context=544, engine="graphs").time_s > graph * 2
    monkeypatch.setattr(calibration, "EAGER_HOST_PER_LAYER_S", 8.4e-3)  # an engine profile field
    assert decode_step(gen, H100, batch=8, context=544, engine="eager").time_s > eager * 1.5
    monkeypatch.setattr(calibration, "SERVING_RESERVE", 0.5)
    assert estimate_serving(gen, H100, concurrency=8, prompt_tokens=512, output_tokens=64).kv_capacity_tokens < kv
    monkeypatch.setattr(calibration, "MFU", 0.5)  # a dataclass default, read when Efficiency() is made
    assert estimate_compute(train, H100).mfu == 0.5
    monkeypatch.undo()
    assert estimate_compute(train, H100).step_time_s == step
    assert decode_step(gen, H100, batch=8, context=544, engine="eager").time_s == eager


def test_old_module_names_still_read_the_table():
    """Names the modules used to define (kernels.HOST_OP_S ...) are served from the table, not frozen."""
    from gpuadvisor.estimate import compute, engines, kernels, traffic

    assert kernels.HOST_OP_S == calibration.HOST_OP_S
    with calibration.override(HOST_OP_S=2e-5, BWD_FACTOR=3.0, DTENSOR_HOST_FACTOR=4.0, CUDNN_ATTENTION_PLAN_S=0.1):
        assert kernels.HOST_OP_S == 2e-5 and traffic.BWD_FACTOR == 3.0
        assert compute.DTENSOR_HOST_FACTOR == 4.0 and engines.CUDNN_ATTENTION_PLAN_S == 0.1
        assert engines.ENGINES["eager"].host_fixed_s == calibration.EAGER_HOST_FIXED_S
    with pytest.raises(AttributeError):
        _ = kernels.NO_SUCH_NAME


def _python_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts)


def test_no_module_freezes_a_constant_by_importing_it():
    """`from ...calibration import K_RAMP` would copy the value at import time and ignore overrides."""
    for path in _python_files(ROOT / "gpuadvisor"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(
                    "gpuadvisor.estimate.calibration"):
                frozen = [a.name for a in node.names if a.name in calibration.TABLE]
                assert not frozen, f"{path.relative_to(ROOT)} imports {frozen}: read cal.NAME at call time"


@pytest.mark.slow  # a scan of every module's source (about 3 s): code hygiene, run with the slow suite in CI
def test_every_constant_is_read_by_the_code():
    """Each constant of the table is used somewhere outside the table (cal.NAME or value("NAME"))."""
    code = "\n".join(p.read_text() for p in _python_files(ROOT / "gpuadvisor")
                     if "calibration" not in p.relative_to(ROOT).parts)
    profiles = (ROOT / "gpuadvisor" / "data" / "framework-profiles.json").read_text()  # names read via cal.value
    unread = [n for n in calibration.TABLE
              if not re.search(rf'\bcal\.{n}\b|value\("{n}"\)|_cal\("{n}"\)', code)
              and not re.search(rf'": "{n}"', profiles)]
    assert not unread, f"constants no code reads: {unread}"


@pytest.mark.slow  # doc sync: docs/calibration.md
def test_docs_table_is_generated_from_the_table():
    doc = ROOT / "docs" / "calibration.md"
    assert doc.read_text() == calibration.to_markdown() + "\n", (
        f"docs/calibration.md is stale: regenerate it with `{calibration.DOC_COMMAND}`")
    assert calibration.DOC_COMMAND in doc.read_text()
    out = subprocess.run([sys.executable, "-m", "gpuadvisor.estimate.calibration"], capture_output=True, text=True,
                         cwd=ROOT, check=True).stdout
    assert out == doc.read_text()


def test_markdown_lists_every_constant_once():
    md = calibration.to_markdown()
    for name in calibration.TABLE:
        assert md.count(f"| `{name}` |") == 1, name
    with calibration.override(K_RAMP=123):
        assert "| `K_RAMP` | 123 |" in calibration.to_markdown()


def _estimate_imports(path: Path, modules: set[str]) -> set[str]:
    """Modules of gpuadvisor.estimate that one file imports (at any depth of the file, lazy ones too)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        out |= {n for n in names if n in modules}
    return out


def test_no_import_cycle_in_estimate():
    """Every module of gpuadvisor/estimate imports downwards only: a walk of the import graph finds no
    cycle (the package's __init__, which re-exports its modules, is left out)."""
    files = {}
    for p in _python_files(ESTIMATE):
        rel = p.relative_to(ROOT).with_suffix("")
        name = ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)
        files[name] = p
    modules = set(files) - {"gpuadvisor.estimate"}
    graph = {m: _estimate_imports(files[m], modules) - {m} for m in modules}
    assert graph["gpuadvisor.estimate.compute"] >= {"gpuadvisor.estimate.engines"}  # the graph is read
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(m: str, path: tuple[str, ...]) -> None:
        state[m] = 1
        for n in sorted(graph[m]):
            assert state.get(n) != 1, "import cycle: " + " -> ".join((*path, m, n))
            if n not in state:
                visit(n, (*path, m))
        state[m] = 2

    for m in sorted(modules):
        if m not in state:
            visit(m, ())


NEEDS_TORCH = {"recorder", "as_cuda", "recurrent", "dynamic", "steplogger"}


ESTIMATE_MODULES = sorted(".".join(p.relative_to(ROOT).with_suffix("").parts) for p in _python_files(ESTIMATE)
                          if p.name not in ("__init__.py", "__main__.py"))


def _import_each_alone(modules: list[str]) -> list[str]:
    """Each module imported first in a fresh interpreter, side by side (most of their time is Python's start and
    PyTorch's import): the failures, a line each."""
    from concurrent.futures import ThreadPoolExecutor

    def imports(module: str) -> str:
        r = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True, text=True, cwd=ROOT)
        return "" if r.returncode == 0 else f"{module}: {r.stderr.strip().splitlines()[-1:]}"

    with ThreadPoolExecutor(max_workers=max(2, 2 * (os.cpu_count() or 1))) as pool:
        return [f for f in pool.map(imports, modules) if f]


@pytest.mark.slow  # a fresh interpreter per module (about 4 s): code hygiene, run with the slow suite in CI
def test_each_estimate_module_imports_alone():
    """In a fresh interpreter, each module imports first (no partially initialized module on the way)."""
    modules = [m for m in ESTIMATE_MODULES if m.rsplit(".", 1)[-1] not in NEEDS_TORCH]
    assert len(modules) > 40
    failures = _import_each_alone(modules)
    assert not failures, failures


@pytest.mark.slow  # five fresh interpreters that import PyTorch: 3 s each
def test_each_recording_module_imports_alone():
    """The tracer's recording modules, each imported first in a fresh interpreter; they need PyTorch (the [trace]
    extra), checked where it is installed."""
    pytest.importorskip("torch", reason="the tracer's recording modules need PyTorch (the [trace] extra)")
    modules = [m for m in ESTIMATE_MODULES if m.rsplit(".", 1)[-1] in NEEDS_TORCH]
    assert len(modules) == len(NEEDS_TORCH)
    failures = _import_each_alone(modules)
    assert not failures, failures


def test_only_the_recording_modules_need_pytorch():
    """NEEDS_TORCH is the whole list: every other module of the estimator imports with PyTorch taken away, as on a
    machine with the base install (the README's test command installs no PyTorch), checked here too where PyTorch
    is installed, in one interpreter."""
    modules = sorted(".".join(p.relative_to(ROOT).with_suffix("").parts) for p in _python_files(ESTIMATE)
                     if p.name not in ("__init__.py", "__main__.py") and p.stem not in NEEDS_TORCH)
    code = ("import importlib, sys\nsys.modules['torch'] = None\nbad = []\n"
            f"for m in {modules!r}:\n"
            "    try:\n        importlib.import_module(m)\n"
            "    except Exception as e:\n        bad.append(f'{m}: {type(e).__name__}')\n"
            "print('\\n'.join(bad))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0 and not r.stdout.strip(), (r.stdout + r.stderr)[-2000:]


def test_engine_profiles_are_built_from_the_table():
    from gpuadvisor.estimate import ENGINES

    assert list(ENGINES) == ["eager", "graphs"] and "vllm" not in ENGINES
    eager = ENGINES["eager"]
    assert (eager.kernels_per_layer, eager.host_per_layer_s) == (calibration.EAGER_KERNELS_PER_LAYER,
                                                                 calibration.EAGER_HOST_PER_LAYER_S)
    assert ENGINES["graphs"].kernels_per_layer == calibration.GRAPHS_KERNELS_PER_LAYER
    assert replace(eager, label="x").name == "eager"
