"""A non-editable install from a built wheel must find the catalog and the probes."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(ROOT)],
        check=True,
        capture_output=True,
    )
    (whl,) = out.glob("gpuadvisor-*.whl")
    return whl


@pytest.mark.slow
def test_wheel_carries_catalog_and_probes(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert "gpuadvisor/_catalog/nvidia-datacenter.yaml" in names
    assert {"gpuadvisor/_catalog/prices/rental.json", "gpuadvisor/_catalog/prices/accelerators.yaml"} <= set(names)
    assert any(n.startswith("probes/") and n.endswith(".py") for n in names)
    assert any(n.startswith("gpuadvisor/data/graphs/steps/") for n in names), "frozen variants need the step logs"
    assert not any(n.startswith("tests/") for n in names)
    assert not any(n.split("/")[0] in ("bench", "tools", "lab") for n in names), "only the product is shipped"


_REPO_DATA_DIRS = ("tests", "tools", "lab", "bench")


def _names_repo_dir(node: ast.AST) -> bool:
    """A string constant that is one of the clone's non-shipped folders, or a path inside one."""
    return (isinstance(node, ast.Constant) and isinstance(node.value, str)
            and node.value.split("/")[0] in _REPO_DATA_DIRS and (node.value.count("/") > 0
                                                               or node.value in _REPO_DATA_DIRS))


def _opens_repo_data(source: str) -> bool:
    """Whether a module builds a path into the clone's tests/, tools/, lab/ or bench/ (which the wheel does not
    carry): `root / "tests" / ...`, `Path("tools/data/...")`, `open("tests/data/...")`. A source named in a string
    (a calibration constant's citation) is text, not a path, and passes."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and (
                _names_repo_dir(node.left) or _names_repo_dir(node.right)):
            return True
        if isinstance(node, ast.Call) and any(_names_repo_dir(a) for a in node.args):
            func = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if func in ("Path", "PurePath", "open", "joinpath", "files"):
                return True
    return False


@pytest.mark.slow
def test_no_shipped_module_opens_the_clones_data(wheel):
    """A module in the wheel that read tests/data or tools/data would fail on every install: the evaluation
    harness that reads them lives in bench/, outside the package."""
    with zipfile.ZipFile(wheel) as whl:
        bad = [n for n in whl.namelist() if n.endswith(".py") and _opens_repo_data(whl.read(n).decode())]
    assert not bad


def test_the_data_rule_sees_a_module_that_opens_the_clones_data():
    assert _opens_repo_data('DATA = repo_root() / "tests" / "data" / "published-serving.json"')
    assert _opens_repo_data("OWN = Path(__file__).parents[3] / 'tools' / 'data' / 'x.json'")
    assert _opens_repo_data('text = open("tools/data/purchase-prices.csv").read()')
    assert _opens_repo_data('doc = Path("tests/data/models-h100.json").read_text()')
    assert not _opens_repo_data('"""Measured runs (tests/data/models-h100.json) fixed these constants."""')
    assert not _opens_repo_data('MODELS = "tests/data/models-h100.json"  # the source a constant cites')
    assert not _opens_repo_data('path = shipped_configs_dir() / "configs"')


def test_no_package_module_opens_the_clones_data():
    """The same rule on the source tree, without building a wheel (fast): the package's modules and the probes."""
    bad = [str(p.relative_to(ROOT)) for top in ("gpuadvisor", "probes") for p in (ROOT / top).rglob("*.py")
           if _opens_repo_data(p.read_text(encoding="utf-8"))]
    assert not bad


@pytest.mark.slow
def test_installed_wheel_runs_from_elsewhere(wheel, tmp_path):
    env_dir = tmp_path / "venv"
    venv.create(env_dir, system_site_packages=True, with_pip=True)
    py = env_dir / "bin" / "python"
    subprocess.run([py, "-m", "pip", "install", "-q", "--no-deps", str(wheel)], check=True, capture_output=True)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "GPUADVISOR_CATALOG")}
    run = subprocess.run(
        [env_dir / "bin" / "gpuadvisor", "catalog", "validate", "--json"],
        cwd=tmp_path, env=env, capture_output=True, text=True,
    )
    assert run.returncode == 0, run.stderr
    assert "_catalog" in run.stdout and str(ROOT / "catalog") not in run.stdout
    probe = subprocess.run(
        [py, "-c", "import probes, gpuadvisor; print(probes.__file__)"],
        cwd=tmp_path, env=env, capture_output=True, text=True,
    )
    assert probe.returncode == 0 and "site-packages" in probe.stdout, probe.stderr


def test_ci_runs_the_readme_set_up_command():
    """.ci/run runs the README's second set-up command verbatim (install, lint, type check, tests)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    command = next(line for line in readme.splitlines() if line.startswith('python3 -m pip install -e ".[dev]"'))
    assert "python3 -m mypy gpuadvisor probes bench" in command
    assert command in ci.splitlines()


def test_ci_runs_the_slow_tests_the_default_run_leaves_out():
    """A plain `pytest` deselects `slow` (doc sync, wheel, browser) and runs on two workers to stay under 5 minutes
    on two cores (pytest-xdist in the [dev] extra); .ci/run runs the slow ones after the README's command, a run with
    none collected (exit 5) passing."""
    import shlex

    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")  # no tomllib on Python 3.10
    addopts = next(line for line in pyproject.splitlines() if line.startswith("addopts = "))
    args = shlex.split(shlex.split(addopts.removeprefix("addopts = "))[0])
    assert args[args.index("-m") + 1] == "not slow" and args[args.index("-n") + 1] == "2"
    assert '"pytest-xdist' in pyproject
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    readme_line = next(i for i, line in enumerate(ci) if line.startswith('python3 -m pip install -e ".[dev]"'))
    slow_line = next(i for i, line in enumerate(ci) if line.startswith("python3 -m pytest -m slow"))
    assert slow_line > readme_line
    assert any('-ne 5 ]' in line for line in ci[slow_line:])
