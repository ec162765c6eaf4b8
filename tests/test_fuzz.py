"""Fuzzing the loaders and the command line: never a traceback, always one line and exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuadvisor.catalog import load_catalog
from gpuadvisor.cli import main
from gpuadvisor.core import results
from gpuadvisor.core.errors import UserError

FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

yaml_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), st.text(max_size=20)
)
yaml_values = st.recursive(
    yaml_scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=12), inner, max_size=4)),
    max_leaves=20,
)
CARD_KEYS = ["name", "vendor", "family", "memory_gib", "tensor_dense_tflops", "source", "release_year", "aliases"]


def _write(tmp_path: Path, name: str, text: str) -> Path:
    d = tmp_path / "fuzz"
    d.mkdir(exist_ok=True)
    p = d / name
    p.write_text(text, encoding="utf-8")
    return p


@FUZZ
@given(text=st.text(max_size=300))
def test_catalog_loader_on_arbitrary_text(tmp_path, text):
    _write(tmp_path, "x.yaml", text)
    try:
        load_catalog([tmp_path / "fuzz"], use_env=False)
    except UserError as e:
        assert "\n" not in str(e)


@FUZZ
@given(cards=st.lists(st.dictionaries(st.sampled_from(CARD_KEYS), yaml_values, max_size=8), min_size=1, max_size=3))
def test_catalog_loader_on_card_shaped_data(tmp_path, cards):
    _write(tmp_path, "x.yaml", yaml.safe_dump({"cards": cards}))
    with pytest.raises(UserError) as info:
        load_catalog([tmp_path / "fuzz"], use_env=False)
    assert "x.yaml" in str(info.value) and "\n" not in str(info.value)


@FUZZ
@given(data=yaml_values)
def test_result_loader_on_arbitrary_json(tmp_path, data):
    p = _write(tmp_path, "r.json", json.dumps(data))
    with pytest.raises(UserError) as info:
        results.load(p)
    assert "\n" not in str(info.value)


@FUZZ
@given(raw=st.binary(max_size=200))
def test_result_loader_on_arbitrary_bytes(tmp_path, raw):
    p = tmp_path / "r.json"
    p.write_bytes(raw)
    try:
        results.load(p)
    except UserError as e:
        assert "\n" not in str(e)


WORDS = ["catalog", "list", "show", "validate", "--json", "--vendor", "nvidia", "amd", "--family", "geforce",
         "--min-memory", "-1", "1e309", "nan", "24", "--match", "h100", "4090", "", "--catalog", "/nonexistent",
         "\x00", "--", "-", "💥", "--help-me"]


@FUZZ
@given(argv=st.lists(st.sampled_from(WORDS), min_size=1, max_size=6))
def test_catalog_cli_never_tracebacks(capsys, argv):
    if "--help" in argv or "-h" in argv:
        return
    argv = ["catalog", *argv] if argv[0] != "catalog" else argv
    code = main(argv)
    _, err = capsys.readouterr()
    assert code in (0, 2), err
    if code == 2:
        assert err.count("\n") == 1 and err.startswith("gpuadvisor: error:"), err
