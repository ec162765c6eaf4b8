"""The main job, `gpuadvisor run`, on a machine without a GPU (as in CI)."""

from __future__ import annotations

import json

import pytest

import gpuadvisor.probe_runner as pr
from gpuadvisor import devices
from gpuadvisor.cli import main
from gpuadvisor.core import results
from gpuadvisor.probe_runner import RunOptions

SMALL = {"host": {"vec_bytes": 1 << 20, "mat_n": 64, "repeats": 2},
         "crossover": {"vector_sizes": [1 << 10, 1 << 12], "matmul_sizes": [16, 32], "repeats": 2}}


@pytest.fixture
def no_gpu(monkeypatch):
    real = pr.run_probes
    monkeypatch.setattr(devices, "discover", lambda: devices.Discovery(reason="NVML: Driver Not Loaded"))
    monkeypatch.setattr(pr, "run_probes", lambda opts, **kw: real(
        RunOptions(mode=opts.mode, device=opts.device, probe_options=SMALL), **kw))


def test_run_without_gpu_measures_host_recommends_and_reports(no_gpu, tmp_path, capsys):
    code = main(["run", "--out-dir", str(tmp_path), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    assert data["gpu_found"] is False and data["message"].startswith("no NVIDIA GPU found: NVML: Driver Not Loaded")
    saved = results.load(data["probe_file"])
    assert [p.status for p in saved.host_probes] == ["ok", "ok"]
    recs = data["recommendations"]
    assert recs and all(r["fits"] for r in recs)
    assert len({r["card"] for r in recs}) == len(recs)  # one row per card: its fewest GPUs that fit
    assert all(r["uses_measured"] is False for r in recs)
    html = (tmp_path / data["report_file"].split("/")[-1]).read_text()
    assert html.startswith("<!DOCTYPE html>") and "llama-3-8b" in html


def test_run_text_says_plainly_no_gpu_was_found(no_gpu, tmp_path, capsys):
    assert main(["run", "--out-dir", str(tmp_path), "--no-report", "--model", "mistral-7b"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("No GPU was found on this machine")
    assert "Recommendations for mistral-7b" in out
    # a second run never overwrites the first one's files
    assert main(["run", "--out-dir", str(tmp_path), "--no-report"]) == 0
    assert len(list(tmp_path.glob("probe-*.json"))) == 2


def test_run_rejects_bad_workload_before_probing(capsys, tmp_path):
    assert main(["run", "--out-dir", str(tmp_path), "--model", "not-a-model"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not-a-model" in err
    assert not list(tmp_path.iterdir())


def test_run_on_a_gpu_machine_says_how_your_card_does(monkeypatch, tmp_path, capsys):
    """With a (saved) H100 result standing in for the probe run, the text names the local card."""
    from pathlib import Path

    h100 = results.load(Path(__file__).parent / "data" / "h100-probe.json")
    monkeypatch.setattr(pr, "run_probes", lambda opts, **kw: h100)
    assert main(["run", "--out-dir", str(tmp_path), "--no-report", "--model", "llama-2-13b"]) == 0
    out = capsys.readouterr().out
    assert "No GPU was found" not in out
    assert "Your GPU 0, NVIDIA H100 80GB HBM3: fits on 1," in out
    assert main(["run", "--out-dir", str(tmp_path), "--no-report", "--model", "llama-2-70b"]) == 0
    assert "Your GPU 0, NVIDIA H100 80GB HBM3: fits on 2," in capsys.readouterr().out


def test_run_places_the_local_card_next_to_the_picks(monkeypatch, tmp_path, capsys):
    """`run` with a GPU: the decision and a line on how this machine's card does the same job."""
    from pathlib import Path

    from fake_prices import SNAPSHOT

    from gpuadvisor.advisor import market

    h100 = results.load(Path(__file__).parent / "data" / "h100-probe.json")
    monkeypatch.setattr(pr, "run_probes", lambda opts, **kw: h100)
    monkeypatch.setattr(market, "load_snapshot", lambda: SNAPSHOT)
    assert main(["run", "--out-dir", str(tmp_path), "--no-report", "--model", "llama-3.1-8b", "--tok-s", "30",
                 "--json"]) == 0
    adv = json.loads(capsys.readouterr().out)["advice"]
    assert [o["hardware"]["kind"] for o in adv["local"]] == ["local"]
    assert adv["local"][0]["uses_measured"] and adv["local"][0]["meets"]
    assert adv["local_line"].startswith("your H100 SXM5 80GB (measured figures) does this at ")
    assert "per million tokens" in adv["local_line"] and adv["picks"]["cheapest_rental"]
    assert main(["run", "--out-dir", str(tmp_path), "--no-report", "--model", "llama-3.1-8b", "--tok-s", "30"]) == 0
    out = capsys.readouterr().out
    assert "targets: >= 30 tok/s per user" in out and "Your H100 SXM5 80GB (measured figures) does this" in out


def test_run_rejects_bad_targets_before_probing(capsys, tmp_path):
    assert main(["run", "--out-dir", str(tmp_path), "--context", "10"]) == 2
    assert "--context is now --input-len" in capsys.readouterr().err
    assert main(["run", "--out-dir", str(tmp_path), "--budget-per-hour", "-1"]) == 2
    assert "--budget-per-hour" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


def test_run_on_a_four_gpu_node_speaks_of_the_machine(monkeypatch, tmp_path, capsys):
    """On four H200s (a saved probe of the 4x H200 node), the machine's line comes from the advisor's option for
    those GPUs: the same count and speed as the picks' local line, never a per-GPU 'does not fit' beside a fit."""
    from pathlib import Path

    node = results.load(Path(__file__).parents[1] / "reports" / "sample-h200x4-probe.json")
    monkeypatch.setattr(pr, "run_probes", lambda opts, **kw: node)
    assert main(["run", "--out-dir", str(tmp_path), "--no-report", "llama-3.1-70b", "--mode", "lora",
                 "--batch", "8", "--tokens", "1e8", "--rent-only", "--only", "H200 SXM 141GB"]) == 0
    out = capsys.readouterr().out
    mine = [x.strip() for x in out.splitlines() if x.strip().startswith("Your")]
    assert mine and mine[0].startswith("Your 4x H200 SXM 141GB (GPUs 0, 1, 2, 3): fits on 2,"), mine
    assert not any("does not fit" in x for x in mine)
    # the same option (FSDP under the HF Trainer since the support matrix keeps LoRA off Megatron TP; 8.5 h before;
    # 15.3 h while the training model took the calibration MFU of a probe's measured rate, not MFU_VS_MEASURED)
    assert "Your 2x H200 SXM 141GB (measured figures) does this in 12.5 h" in out
