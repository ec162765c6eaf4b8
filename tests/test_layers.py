"""The layers, as docs/architecture.md draws them, checked on every import of every file (imports inside functions
and `importlib.import_module("...")` calls included):

* the measurement layer stands alone: probes/ imports nothing of gpuadvisor but its bottom layer, gpuadvisor.core,
  and that layer imports nothing above it;
* the package is the product: gpuadvisor/ imports none of the clone's other folders (bench/, tools/, lab/, tests/),
  which the wheel does not ship;
* the core (every module but the presentation layer below) imports neither the terminal UI's nor the charts'
  library, nor any presentation module: the CLI, the TUI and the report sit on the core, never under it;
* the estimator (gpuadvisor/estimate/) never imports the advisor, which is built on it.

Each rule has a test that shows it catching a wrong import."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "gpuadvisor"

#: the presentation layer: argument parsing and text, the terminal UI, the HTML report and pages and their charts,
#: the rows the three of them show; everything else in gpuadvisor/ is the core
PRESENTATION = ("gpuadvisor.__main__", "gpuadvisor.cli", "gpuadvisor.tui", "gpuadvisor.report", "gpuadvisor.htmlpage",
                "gpuadvisor.fleet.report", "gpuadvisor.presentation")
#: libraries only the presentation layer may import
PRESENTATION_LIBRARIES = ("textual", "plotly")
#: the clone's folders beside the package, none of which ships in the wheel
NOT_SHIPPED = ("bench", "tools", "lab", "tests")
ESTIMATOR = "gpuadvisor.estimate"
ADVISOR = "gpuadvisor.advisor"


def _module_name(path: Path) -> str:
    """The dotted name of a file of this repository (`gpuadvisor/estimate/__init__.py` -> `gpuadvisor.estimate`)."""
    parts = path.resolve().relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _under(module: str, prefixes: Iterable[str]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def _dynamic_target(call: ast.Call) -> str | None:
    """The module an `importlib.import_module(...)` call names: the literal, or an f-string's constant head up to
    its last dot (`f"probes.{name}"` -> `probes`)."""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    if name != "import_module" or not call.args:
        return None
    arg = call.args[0]
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return arg.value
    if isinstance(arg, ast.JoinedStr) and arg.values and isinstance(arg.values[0], ast.Constant):
        head = str(arg.values[0].value)
        return head.rsplit(".", 1)[0] if "." in head else None
    return None


def _is_repo_module(name: str) -> bool:
    rel = ROOT / Path(*name.split("."))
    return rel.is_dir() or rel.with_suffix(".py").is_file()


def _imports(path: Path, module: str | None = None) -> set[str]:
    """Every module a file imports, at any depth (function-level imports included). `from a import b` gives `a`,
    and `a.b` too where b is a module of this repository (`from gpuadvisor import presentation`); a relative import
    is resolved against `module` (the file's dotted name, from its path when it lies in this repository);
    `importlib.import_module("x")` gives `x`."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                own = module if module is not None else _module_name(path)
                package = own.split(".") if path.name == "__init__.py" else own.split(".")[:-1]
                package = package[: len(package) - (node.level - 1)]
                base = ".".join([*package, base] if base else package)
            if base:
                out.add(base)
                out |= {f"{base}.{a.name}" for a in node.names if _is_repo_module(f"{base}.{a.name}")}
        elif isinstance(node, ast.Call) and (target := _dynamic_target(node)):
            out.add(target)
    return out


def _package_files() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def _is_presentation(path: Path) -> bool:
    return _under(_module_name(path), PRESENTATION)


def _not_shipped(mods: set[str]) -> set[str]:
    return {m for m in mods if _under(m, NOT_SHIPPED)}


def _presentation(mods: set[str]) -> set[str]:
    return {m for m in mods if _under(m, PRESENTATION_LIBRARIES) or _under(m, PRESENTATION)}


def _advisor(mods: set[str]) -> set[str]:
    return {m for m in mods if _under(m, (ADVISOR,))}


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


def test_the_package_imports_nothing_the_wheel_does_not_ship():
    shipped = [*_package_files(), *sorted((ROOT / "probes").rglob("*.py"))]  # the wheel's two packages
    bad = {_module_name(p): sorted(_not_shipped(_imports(p))) for p in shipped}
    assert not {k: v for k, v in bad.items() if v}


def test_the_shipping_rule_sees_a_wrong_import(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("import json\n\ndef f():\n    from bench.models import hardware\n    import tools.bench_page\n"
                 "    from lab import model_cases\n    return importlib.import_module('tests.test_layers')\n")
    assert _not_shipped(_imports(f, "gpuadvisor.m")) == {"bench.models", "tools.bench_page", "lab", "lab.model_cases",
                                                         "tests.test_layers"}


def test_the_layers_name_real_modules():
    """A presentation entry that named no module would exempt nothing and check nothing: each one exists."""
    for name in PRESENTATION:
        rel = Path(*name.split("."))
        assert (ROOT / rel).is_dir() or (ROOT / rel).with_suffix(".py").is_file(), name
    core = [p for p in _package_files() if not _is_presentation(p)]
    assert any(_module_name(p) == "gpuadvisor.api" for p in core)  # the API is core: the interfaces call it
    assert not any(_module_name(p).startswith("gpuadvisor.cli") for p in core)


def test_the_core_imports_no_presentation():
    bad = {_module_name(p): sorted(_presentation(_imports(p))) for p in _package_files() if not _is_presentation(p)}
    assert not {k: v for k, v in bad.items() if v}


def test_the_presentation_rule_sees_a_wrong_import(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("def chart():\n    import plotly.graph_objects as go\n    from textual.app import App\n"
                 "    from gpuadvisor import presentation\n    from gpuadvisor.cli.common import fail\n"
                 "    from ..report import figures\n")
    assert _presentation(_imports(f, "gpuadvisor.estimate.m")) == {
        "plotly.graph_objects", "textual.app", "gpuadvisor.presentation", "gpuadvisor.cli.common",
        "gpuadvisor.report", "gpuadvisor.report.figures"}
    assert _is_presentation(PACKAGE / "fleet" / "report.py") and not _is_presentation(PACKAGE / "fleet" / "gather.py")


def test_the_estimator_never_imports_the_advisor():
    bad = {_module_name(p): sorted(_advisor(_imports(p))) for p in (PACKAGE / "estimate").rglob("*.py")}
    assert not {k: v for k, v in bad.items() if v}


def test_the_estimator_rule_sees_a_wrong_import(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("def pick():\n    from gpuadvisor.advisor.options import hardware_of\n"
                 "    from ...advisor import advise\n    return importlib.import_module(f'gpuadvisor.advisor.{x}')\n")
    assert _advisor(_imports(f, "gpuadvisor.estimate.serve.m")) == {"gpuadvisor.advisor.options", "gpuadvisor.advisor"}


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
