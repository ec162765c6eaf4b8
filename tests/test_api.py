"""The Python API: docs/api.md's example runs as written, and the API agrees with the CLI."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from gpuadvisor import api
from gpuadvisor.core.errors import UserError

ROOT = Path(__file__).resolve().parents[1]


def test_docs_api_example_runs(monkeypatch, capsys):
    from fake_prices import SNAPSHOT

    from gpuadvisor.advisor import market

    monkeypatch.setattr(market, "load_snapshot", lambda: SNAPSHOT)
    monkeypatch.chdir(ROOT)
    text = (ROOT / "docs" / "api.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) == 1
    exec(compile(blocks[0], "docs/api.md", "exec"), {})
    out = capsys.readouterr().out
    assert "L40S:" in out and "cheapest that meets every target" in out and "binds:" in out
    assert "check passed" in out or "check failed" in out


def test_api_advise_matches_the_cli_json(monkeypatch, capsys):
    from fake_prices import SNAPSHOT

    from gpuadvisor.advisor import market
    from gpuadvisor.cli import main

    monkeypatch.setattr(market, "load_snapshot", lambda: SNAPSHOT)
    w = api.workload("llama-3.1-8b")
    mine = api.advise(w, api.Targets(tokens_per_s=30)).to_dict()
    assert main(["recommend", "llama-3.1-8b", "--tok-s", "30", "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    cli.pop("currency")
    assert json.loads(json.dumps(mine, default=str)) == cli


def test_api_errors_are_user_errors():
    with pytest.raises(UserError):
        api.workload("no-such-model-xyz")
    with pytest.raises(UserError):
        api.advise(api.workload("gpt2", seq_len=256), api.Targets(users=0))
    with pytest.raises(UserError, match="unknown currency"):
        api.advise(api.workload("gpt2", seq_len=256), currency="XYZ")
