"""The measurement layer stands alone: probes/ imports nothing of gpuadvisor but its bottom layer,
gpuadvisor.core (result schema, provenance, file/path/error helpers), and that layer imports nothing above it."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _imports(path: Path) -> set[str]:
    """Every module a file imports, at any depth (function-level imports included)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.add(node.module)
    return out


def _outside_core(mods: set[str]) -> set[str]:
    return {m for m in mods if (m == "gpuadvisor" or m.startswith("gpuadvisor.")) and m != "gpuadvisor"
            and m != "gpuadvisor.core" and not m.startswith("gpuadvisor.core.")}


def test_probes_import_only_the_bottom_layer():
    bad = {p.name: sorted(_outside_core(_imports(p))) for p in (ROOT / "probes").glob("*.py")}
    assert not {k: v for k, v in bad.items() if v}


def test_the_bottom_layer_imports_nothing_above_it():
    bad = {p.name: sorted(_outside_core(_imports(p))) for p in (ROOT / "gpuadvisor" / "core").glob("*.py")}
    assert not {k: v for k, v in bad.items() if v}


def test_the_rule_sees_a_wrong_import(tmp_path):
    f = tmp_path / "p.py"
    f.write_text("def f():\n    from gpuadvisor.catalog import load_catalog\n")
    assert _outside_core(_imports(f)) == {"gpuadvisor.catalog"}


def test_probes_load_without_the_application():
    """Importing every probe module pulls in no gpuadvisor module outside gpuadvisor.core."""
    code = ("import importlib, json, pathlib, sys\n"
            "for p in sorted(pathlib.Path('probes').glob('*.py')):\n"
            "    importlib.import_module('probes.' + p.stem)\n"
            "print(json.dumps(sorted(m for m in sys.modules if m.startswith('gpuadvisor'))))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True,
                         timeout=120).stdout
    loaded = set(json.loads(out.splitlines()[-1]))
    assert _outside_core(loaded) == set(), loaded


def test_no_alias_modules_above_the_bottom_layer():
    """gpuadvisor.core's modules have one import path: the old top-level aliases are gone."""
    for name in ("errors", "fileio", "paths", "provenance", "results"):
        assert not (ROOT / "gpuadvisor" / f"{name}.py").exists(), name
        assert (ROOT / "gpuadvisor" / "core" / f"{name}.py").exists(), name
