"""A cold `recommend`: the parsed-data cache (gpuadvisor/datacache.py): a hit gives what a fresh
parse gives, any changed input misses, a damaged or unwritable cache costs time only, and a file that
fails validation is never cached; Workload.with_ keeps its copies without letting an invalid one through;
the cycle collector is paused for the brief commands only."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpuadvisor import datacache
from gpuadvisor.catalog import load_catalog
from gpuadvisor.core.errors import UserError
from gpuadvisor.workload import Workload, resolve_model

ROOT = Path(__file__).resolve().parents[1]


def _counting(value):
    calls = []

    def build():
        calls.append(1)
        return value

    return build, calls


def test_a_hit_returns_the_value_and_a_changed_input_misses(tmp_path):
    src = tmp_path / "data.txt"
    src.write_text("one")
    build, calls = _counting({"a": (1, 2.0)})
    ok = lambda v: isinstance(v, dict)  # noqa: E731
    assert datacache.cached("t", [src], build, ok) == {"a": (1, 2.0)}
    assert datacache.cached("t", [src], build, ok) == {"a": (1, 2.0)}
    assert len(calls) == 1  # the second answer came from the cache file
    src.write_text("two")
    datacache.cached("t", [src], build, ok)
    assert len(calls) == 2
    datacache.cached("t", [src], build, ok, extra="pydantic 9")
    assert len(calls) == 3


def test_damaged_or_unwritable_cache_costs_time_only(tmp_path, monkeypatch):
    src = tmp_path / "data.txt"
    src.write_text("x")
    build, calls = _counting([1, 2, 3])
    datacache.cached("t", [src], build, lambda v: True)
    (pickled,) = Path(os.environ["XDG_CACHE_HOME"]).glob("gpuadvisor/t-*.pickle")
    pickled.write_bytes(b"not a pickle")
    assert datacache.cached("t", [src], build, lambda v: True) == [1, 2, 3] and len(calls) == 2
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))  # a file where the cache folder would go
    assert datacache.cached("t", [src], build, lambda v: True) == [1, 2, 3] and len(calls) == 3


def test_a_value_of_the_wrong_shape_is_built_again(tmp_path):
    src = tmp_path / "data.txt"
    src.write_text("x")
    datacache.cached("t", [src], lambda: "a string", lambda v: True)
    assert datacache.cached("t", [src], lambda: [1], lambda v: isinstance(v, list)) == [1]


def test_cached_catalog_equals_the_validated_one():
    first = load_catalog(use_env=False)
    assert list(Path(os.environ["XDG_CACHE_HOME"]).glob("gpuadvisor/catalog-*.pickle"))
    again = load_catalog(use_env=False)  # from the cache
    assert again.cards == first.cards and again.origin == first.origin and len(again) >= 100


def test_a_bad_shipped_file_raises_and_is_not_cached(tmp_path, monkeypatch):
    import gpuadvisor.catalog as catalog

    (tmp_path / "bad.yaml").write_text("cards:\n  - name: X\n")
    monkeypatch.setattr(catalog, "shipped_catalog_dir", lambda: tmp_path)
    for _ in range(2):  # the second load validates again: nothing was cached
        with pytest.raises(UserError, match=r"bad\.yaml"):
            catalog.load_catalog(use_env=False)
    assert not list(Path(os.environ["XDG_CACHE_HOME"]).glob("gpuadvisor/catalog-*.pickle"))


def test_cached_presets_equal_the_parsed_ones():
    from gpuadvisor import modelspec

    modelspec._presets.cache_clear()
    fresh = modelspec._read_presets()
    first = modelspec._presets()
    modelspec._presets.cache_clear()
    again = modelspec._presets()  # from the cache
    assert first == fresh and again == fresh
    assert again["llama-2-7b"] is again[modelspec._norm_name("Llama-2-7B")]


def test_second_cold_recommend_parses_no_yaml_and_builds_no_validator():
    """The point of the cache: a cold `recommend` with an unchanged install imports no YAML parser and
    builds no pydantic validator (the first run builds the cache)."""
    code = ("import sys, io, contextlib\n"
            "from gpuadvisor.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    assert main(['recommend', 'llama-2-7b']) == 0\n"
            "from gpuadvisor.catalog import CatalogFile\n"
            "print('yaml' in sys.modules, CatalogFile.__pydantic_complete__)")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT,
                           env=env).stdout.split() for _ in range(2)]
    assert runs[0] == ["True", "True"]  # the first run validates the catalog and fills the cache
    assert runs[1] == ["False", "False"]


def test_with_keeps_copies_but_still_refuses_bad_values():
    w = Workload(model=resolve_model("7b")).validate()
    a = w.with_(batch=4, seq_len=512)
    assert a is w.with_(batch=4, seq_len=512) and a == Workload(model=w.model, batch=4, seq_len=512)
    with pytest.raises(UserError, match="batch must be a positive integer, got True"):
        w.with_(batch=True)  # equal to 1 and hashed alike: the memo tells them apart by type
    assert w.with_(batch=1).batch == 1
    with pytest.raises(UserError, match="batch must be a positive integer, got True"):
        w.with_(batch=True)
    with pytest.raises(UserError, match="--freeze"):
        w.with_(freeze=["a.*"])  # an unhashable value: no memo, still checked


def test_validate_runs_once_per_instance_and_copies_are_checked():
    w = Workload(model=resolve_model("7b"), batch=0)
    with pytest.raises(UserError, match="batch must be a positive integer"):
        w.validate()
    with pytest.raises(UserError, match="batch must be a positive integer"):
        w.validate()  # a failed check is not remembered as a pass
    ok = Workload(model=resolve_model("7b")).validate()
    with pytest.raises(UserError, match="tensor-parallel"):
        ok.with_(num_gpus=3, tensor_parallel=2)


def test_collector_paused_for_brief_commands_and_restored(monkeypatch, capsys):
    """main() pauses the cycle collector while it parses and while `recommend`/`estimate` of a preset run
    (cold-start time), runs it for the other commands and traced models, and gives the caller its state back."""
    import gc

    from gpuadvisor.cli import catalog_cmd, main, recommend_cmd

    seen = []
    monkeypatch.setattr(recommend_cmd, "run", lambda args: seen.append(("recommend", gc.isenabled())) or 0)
    monkeypatch.setattr(catalog_cmd, "run_list", lambda args: seen.append(("catalog", gc.isenabled())) or 0)
    assert gc.isenabled()
    assert main(["recommend", "llama-2-7b"]) == 0 and gc.isenabled()
    assert main(["recommend", "torchvision:resnet50"]) == 0 and gc.isenabled()
    assert main(["catalog", "list"]) == 0 and gc.isenabled()
    gc.disable()
    try:
        assert main(["catalog", "list"]) == 0 and not gc.isenabled()  # a caller's choice is kept
    finally:
        gc.enable()
    assert seen == [("recommend", False), ("recommend", True), ("catalog", True), ("catalog", False)]
