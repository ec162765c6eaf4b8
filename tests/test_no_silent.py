"""No silent acceptance: each flag combination that would be ignored, and each value that is
surely a typo, is refused in one line with exit code 2 (or stated in a note)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def cli(*argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gpuadvisor", *argv], capture_output=True, text=True,
                          cwd=cwd or ROOT, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}, timeout=120)


def refused(p: subprocess.CompletedProcess[str], *words: str) -> None:
    assert p.returncode == 2, p.stdout + p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in p.stderr, p.stderr
    for w in words:
        assert w in lines[0], lines[0]


def test_empty_extra_catalog_folder_is_refused(tmp_path):
    refused(cli("--catalog", str(tmp_path), "catalog", "list"), "holds no card files", str(tmp_path))


@pytest.mark.parametrize("flag", ["--mfu", "--bw-eff"])
@pytest.mark.parametrize("value", ["1.5", "150", "0", "-0.2"])
def test_efficiencies_are_fractions(flag, value):
    refused(cli("estimate", "7b", flag, value), flag)


def test_efficiency_percentage_needs_its_sign():
    p = cli("estimate", "7b", "--mfu", "40%")
    assert p.returncode == 0 and "large matmuls at 40% of peak" in p.stdout


def test_checkpointing_with_inference_is_refused():
    refused(cli("estimate", "7b", "--checkpointing"), "--checkpointing", "inference")
    refused(cli("recommend", "7b", "--checkpointing", "--buy-only"), "--checkpointing")


def test_spot_with_buy_only_is_refused():
    refused(cli("recommend", "7b", "--spot", "--buy-only"), "--spot", "--buy-only")


def test_price_per_hour_without_rank_is_refused():
    refused(cli("recommend", "7b", "--price-per-hour", "2"), "--price-per-hour", "--rank")
    assert cli("recommend", "7b", "--rank", "--price-per-hour", "2").returncode == 0


def test_training_deadline_without_tokens_states_the_default():
    p = cli("recommend", "1b", "--mode", "training", "--deadline", "24h", "--buy-only")
    assert p.returncode == 0
    assert "no token budget given (--tokens): costs and the 24 h deadline are for 1e+08 tokens" in p.stdout


def test_absurd_parameter_count_is_refused():
    refused(cli("estimate", "999999t"), "parameters", "check the count")


def test_ambiguous_card_lists_what_also_matched():
    p = cli("estimate", "7b", "--gpu", "A100")
    refused(p, "A100 PCIe 40GB", "A100 SXM4 80GB")
    assert cli("estimate", "7b", "--gpu", "4090").returncode == 0  # one best match: no question


def test_report_into_a_missing_folder_is_refused(tmp_path):
    target = tmp_path / "nonexistent" / "dir" / "r.html"
    refused(cli("report", "--model", "7b", "-o", str(target)), "does not exist")
    assert not (tmp_path / "nonexistent").exists()


def test_serve_check_lengths_drawn_by_a_distribution_are_not_also_taken_from_flags(tmp_path):
    """A range that draws the prompts refuses --input-len, a file that gives both lengths refuses either flag (a
    ShareGPT shape takes them as its means: tests/test_serve_sim.py)."""
    url = "http://127.0.0.1:1"
    refused(cli("serve-check", url, "--model", "7b", "--rate", "1", "--requests", "2", "--lengths",
                "uniform:10-20", "--input-len", "100"), "--input-len")
    lengths = tmp_path / "lengths.txt"
    lengths.write_text("10 20\n")
    refused(cli("serve-check", url, "--model", "7b", "--rate", "1", "--requests", "2", "--lengths",
                str(lengths), "--output-len", "100"), "--output-len")
