"""The serving simulation against published engine results (tests/data/published-serving.json): a CI gate.

Bounds: at least 85 % of all results, of the calibration two thirds and of the held-out third within
0.8x-1.25x of the tool, and every one within 0.67x-1.5x (what BENCHMARKS.md's serving section reports)."""

from __future__ import annotations

import json

import accuracy_gates as G
import pytest

from bench import serving as P

GATE_IN_BAND = G.SERVING_IN_BAND  # tests/accuracy_gates.py
OUTER = P.OUTER_BAND


@pytest.fixture(scope="module")
def checks():
    return P.check_all()


def test_data_is_sourced_and_large_enough():
    rows = P.load_entries()
    assert len(rows) >= 45
    assert sum(r["held_out"] for r in rows) == len(rows) // 3
    for r in rows:
        assert r["source"].get("url", "").startswith("https://") and r["table"], r["id"]
        assert r["value"] > 0 and r["gpus"] >= r["tp"] * r["pp"]
    engines = {r["engine"] for r in rows}
    assert {"trtllm", "llamacpp"} <= engines
    assert {"H100 SXM5 80GB", "GeForce RTX 4090"} <= {r["gpu"] for r in rows}  # data-center and consumer cards


def test_data_file_is_what_the_tool_writes():
    import runpy
    from pathlib import Path

    ns = runpy.run_path(str(Path(__file__).parents[1] / "tools" / "published_serving.py"))
    assert ns["build"]() == json.loads(P.DATA.read_text())


@pytest.mark.parametrize("group", ["all", "calibration", "held out"])
def test_gate(checks, group):
    sel = [c for c in checks if group == "all" or c.held_out == (group == "held out")]
    s = P.shares(sel)
    bad = [(c.id, round(c.ratio, 2)) for c in sel if not OUTER[0] <= c.ratio <= OUTER[1]]
    assert not bad, bad
    assert s["in_band"] >= GATE_IN_BAND, (group, s)


def test_a_wrong_constant_fails_the_gate(checks):
    """TensorRT-LLM's host time per iteration set 10x too high (8 ms): the gate must catch it."""
    rows = [r for r in P.load_entries() if r["engine"] == "trtllm" and r["model"] == "llama-3.1-8b"
            and r["gpu"] == "H100 SXM5 80GB"]
    ids = {r["id"] for r in rows}
    good = P.shares([c for c in checks if c.id in ids])  # the gate's own figures for these rows
    assert good["n"] == len(rows) > 0
    wrong = P.shares(P.check_all(rows, host_s_per_iter=0.008))
    assert good["in_band"] >= GATE_IN_BAND
    assert wrong["in_band"] < GATE_IN_BAND or wrong["min"] < OUTER[0]


def test_markdown_section(checks):
    md = P.markdown_section(checks)
    assert md.startswith("## Serving")
    assert md.count("\n| ") >= len(checks) + 1
    assert "held out" in md and "0.8x-1.25x" in md
