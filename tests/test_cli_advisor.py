"""`gpuadvisor estimate` and `recommend`: JSON, tables, one-line errors with exit code 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpuadvisor.cli import main
from gpuadvisor.core.errors import UserError

DATA = Path(__file__).parent / "data"


def run(capsys, *argv):
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_estimate_json(capsys):
    rc, out, _ = run(capsys, "estimate", "llama-2-7b", "--json", "--input-len", "4095", "--output-len", "1")
    assert rc == 0
    d = json.loads(out)
    assert d["estimate"] is True and d["question"] == "step"
    assert d["detail"]["memory"]["items"]["weights"] == 6_738_415_616 * 2
    assert d["detail"]["memory"]["items"]["KV cache"] == 2 * 2**30  # 4,096 tokens of context
    assert d["memory"]["parts"]["weights"] == pytest.approx(6_738_415_616 * 2)


def test_estimate_table(capsys):
    rc, out, _ = run(capsys, "estimate", "--model", "mistral-7b", "--mode", "training", "--batch", "4",
                     "--checkpointing", "--tokens", "1e9")
    assert rc == 0
    assert "optimizer states" in out and "total" in out and "no run time" in out and "way forward" in out


@pytest.fixture
def fake_prices(monkeypatch):
    """The advisor reads this small snapshot instead of the shipped one."""
    from fake_prices import SNAPSHOT

    from gpuadvisor.advisor import market

    def rate_of(code):
        if code.upper() not in ("USD", "EUR"):
            raise UserError(f"unknown currency {code!r}")
        return {"USD": 1.0, "EUR": 0.9}[code.upper()]

    monkeypatch.setattr(market, "load_snapshot", lambda: SNAPSHOT)
    monkeypatch.setattr(market, "rate_of", rate_of)
    return SNAPSHOT


def test_recommend_rank_json_and_table(capsys):
    rc, out, _ = run(capsys, "recommend", "llama-2-7b", "--rank", "--json")
    assert rc == 0
    d = json.loads(out)
    assert d["options"] and d["options"][0]["fits"]
    rc, out, _ = run(capsys, "recommend", "llama-2-70b", "--rank", "--mode", "training", "--price-per-hour", "2")
    assert rc == 0
    assert "do not fit" in out


def test_recommend_json_schema(capsys, fake_prices):
    rc, out, _ = run(capsys, "recommend", "llama-3.1-8b", "--tok-s", "30", "--json")
    assert rc == 0
    d = json.loads(out)
    assert d["schema"] == "gpuadvisor.advice/1" and d["met"] is True and d["estimate"] is True
    assert d["targets"]["tokens_per_s"] == 30 and d["prices"]["offers"] == len(fake_prices.offers)
    rent = d["picks"]["cheapest_rental"]["option"]
    assert rent["hardware"]["kind"] == "rent" and rent["hardware"]["gpus"] == 1
    assert rent["per_user_tokens_per_s"] >= 30 and rent["usd_per_mtok"] > 0 and rent["binds"] == "bandwidth"
    assert d["frontier"] and d["options"] is None and d["currency"] == {"code": "USD", "per_usd": 1.0}
    rc, out, _ = run(capsys, "recommend", "llama-3.1-8b", "--json", "--all", "--provider", "aws")
    kinds = {(o["hardware"]["kind"], o["hardware"]["provider"]) for o in json.loads(out)["options"]}
    assert ("rent", "aws") in kinds and not any(p in ("lambda", "runpod") for _, p in kinds)


def test_recommend_text_names_picks_and_what_binds(capsys, fake_prices):
    rc, out, _ = run(capsys, "recommend", "llama-3.1-70b", "--users", "32", "--input-len", "1792", "--rent-only")
    assert rc == 0
    assert "cheapest rental" in out and "Binds:" in out and "frontier" in out and "fake snapshot" in out
    rc, out, _ = run(capsys, "recommend", "mistral-7b", "--mode", "qlora", "--tokens", "200m", "--deadline", "1h",
                     "--checkpointing", "--currency", "EUR", "--only", "L4")
    assert rc == 0
    assert "nothing evaluated meets every target" in out and "it would take" in out and "EUR" in out


def test_recommend_with_probe(capsys, fake_prices):
    rc, out, _ = run(capsys, "recommend", "llama-2-7b", "--probe", str(DATA / "fake-probe.json"), "--json", "--all")
    assert rc == 0
    assert any(o["uses_measured"] for o in json.loads(out)["options"])
    rc, out, _ = run(capsys, "recommend", "llama-2-7b", "--rank", "--probe", str(DATA / "fake-probe.json"), "--json")
    assert any(o["uses_measured"] for o in json.loads(out)["options"])


@pytest.mark.parametrize(
    ("argv", "msg"),
    [
        (["--provider", "nosuchcloud"], "unknown provider"),
        (["--region", "mars-1"], "unknown region"),
        (["--currency", "XYZ"], "unknown currency"),
        (["--tok-s", "0"], "--tok-s"),
        (["--tok-s", "-4"], "--tok-s"),
        (["--users", "0"], "--users"),
        (["--ttft", "-1"], "--ttft"),
        (["--context", "0"], "--context"),
        (["--deadline", "0h"], "--deadline"),
        (["--deadline", "-2d"], "--deadline"),
        (["--budget", "0"], "--budget"),
        (["--budget", "-10"], "--budget"),
        (["--budget-per-hour", "0"], "--budget-per-hour"),
        (["--hours-per-month", "0"], "--hours-per-month"),
        (["--hours-per-day", "25"], "--hours-per-day"),
        (["--usd-per-kwh", "-0.1"], "--usd-per-kwh"),
        (["--utilisation", "2"], "utilisation"),
        (["--context", "100"], "--context is now --input-len"),
        (["--only", "no-such-card"], "no catalog card matches"),
    ],
)
def test_recommend_bad_targets_and_prices_one_line_exit_2(capsys, fake_prices, argv, msg):
    rc, _, err = run(capsys, "recommend", "llama-3.1-8b", *argv)
    assert rc == 2
    assert msg in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_list_models(capsys):
    rc, out, _ = run(capsys, "estimate", "--list-models")
    assert rc == 0 and "llama-2-7b" in out


@pytest.mark.parametrize(
    ("argv", "msg"),
    [
        (["estimate", "llama-2-7bb"], "did you mean llama-2-7b"),
        (["estimate", "7b", "--dtype", "fp5"], "unknown dtype"),
        (["estimate", "7b", "--mode", "qlora", "--dtype", "fp32"], "QLoRA"),
        (["estimate", "7b", "--batch", "-3"], "--batch"),
        (["estimate", "7b", "--seq", "-1"], "--seq"),
        (["estimate", "--", "-7b"], "must be > 0"),
        (["estimate"], "no model"),
        (["recommend", "7b", "--gpu-counts", "0,2"], "GPU counts"),
        (["recommend", "7b", "--mfu", "-0.5"], "--mfu"),
        (["estimate", "7b", "--gpu", "nonexistent-card-xyz"], "no card"),
    ],
)
def test_bad_input_one_line_exit_2(capsys, argv, msg):
    rc, _, err = run(capsys, *argv)
    assert rc == 2
    assert msg in err
    assert err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize("text", ["{broken", '{"model_type": "resnet"}', "[]", '{"num_hidden_layers": "x"}'])
def test_bad_config_json_exit_2(capsys, tmp_path, text):
    p = tmp_path / "config.json"
    p.write_text(text)
    rc, _, err = run(capsys, "estimate", str(p))
    assert rc == 2 and err.count("\n") == 1


def test_recommend_stays_light():
    """`recommend` answers without the heavy libraries (its cold-start time is a benchmark in
    BENCHMARKS.md, not a timed test): a subprocess, so that other tests' imports do not count."""
    code = ("import sys, io, contextlib\n"
            "from gpuadvisor.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    assert main(['recommend', 'llama-2-7b']) == 0\n"
            "print(','.join(m for m in ('textual', 'plotly', 'cupy', 'torch', 'numpy', 'jinja2') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[1], env={**os.environ, "PYTHONPATH": str(
                             Path(__file__).resolve().parents[1])})
    assert out.stdout.strip() == ""
