"""tools/compare_four_gpu.py on a fake four-GPU ground-truth file (invented figures, the shape of a real run)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tools import compare_four_gpu as cf

FAKE = Path(__file__).parent / "data" / "fake-four-gpu.json"


def test_table_has_one_row_per_measured_figure_with_estimates_beside_them(tmp_path):
    data = json.loads(FAKE.read_text())
    rows = cf.compare(data, config_dir=tmp_path)
    # 11 cases, the first decode case split into its two batches
    assert len(rows) == 12
    lines = cf.markdown(rows)
    table = [ln for ln in lines if ln.startswith("| ") and not ln.startswith("| ---")][1:]
    assert len(table) == 12 and all(ln.count("|") == 9 for ln in table)
    for r in rows:  # every case has an estimate, also the skipped one
        assert r["est_step_s"] and r["est_step_s"] > 0, r
        assert r["est_gib"] and r["est_gib"] > 0, r
        assert r["command"].startswith("gpuadvisor estimate "), r
    measured = [r for r in rows if r["meas_step_s"]]
    assert len(measured) == 11 and all(r["time_ratio"] and r["mem_ratio"] for r in measured)
    assert [r["held_out"] for r in rows[:9]] == [False, False, True] * 3


def test_cases_map_to_the_question_the_cli_asks():
    rows = {r["case"]: r for r in cf.compare(json.loads(FAKE.read_text()))}
    assert rows["fsdp2-8b-ac"]["question"] == "step" and "--sharding fsdp" in rows["fsdp2-8b-ac"]["command"]
    assert "--sharding zero2" in rows["zero2-8b-ac"]["command"]
    for name in ("tp4-sp-8b", "pp4-1f1b-8b", "tp2xdp2-8b"):
        assert rows[name]["question"] == "training", name
    assert rows["serve-tp2-8b b32"]["question"] == "step" and "--users 32" in rows["serve-tp2-8b b32"]["command"]
    # the cut 8B model is estimated from its own config, not the 32-layer preset
    assert "llama-3-8b" not in rows["tp2xdp2-8b"]["command"]
    assert rows["tp2xdp2-8b"]["est_gib"] < rows["tp4-sp-8b"]["est_gib"]


def test_api_request_is_the_one_the_printed_command_builds():
    """The estimate beside a case is what `gpuadvisor estimate <printed command> --json` answers."""
    data = json.loads(FAKE.read_text())
    rows = {r["case"]: r for r in cf.compare(data)}
    for name in ("fsdp2-8b-ac", "pp4-1f1b-8b"):
        argv = rows[name]["command"].split(" ", 2)[2]
        import shlex

        out = subprocess.run([sys.executable, "-m", "gpuadvisor", "estimate", *shlex.split(argv), "--json"],
                             capture_output=True, text=True, check=True, timeout=300)
        answer = json.loads(out.stdout)
        assert answer["time"]["step_s"] == rows[name]["est_step_s"]
        from gpuadvisor.estimate.memory_result import NOT_TENSORS

        tensors = answer["memory"]["per_gpu_bytes"] - sum(answer["memory"]["parts"].get(k, 0.0) for k in NOT_TENSORS)
        assert tensors / cf.GiB == pytest.approx(rows[name]["est_gib"], rel=1e-12)


def test_unreadable_file_is_one_line_and_exit_2(tmp_path, capsys):
    assert cf.main([str(tmp_path / "missing.json")]) == 2
    assert "cannot read" in capsys.readouterr().err
