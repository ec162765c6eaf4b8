"""The host cache (probes/hostcache.py) and the dispatch probe's use of it: --quick times single ops
only and reads the expensive generate() figures from the cache; --full measures them where no fresh
entry exists. The GPU and PyTorch are faked; the expensive measurement is counted, not run."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import types
from pathlib import Path

import pytest

import gpuadvisor.probe_runner as pr
from gpuadvisor import devices
from gpuadvisor.cli import main
from gpuadvisor.core.errors import UserError
from gpuadvisor.probe_runner import RunOptions, run_probes
from probes import dispatch, hostcache
from probes.base import ProbeContext

KEY = {"hostname": "h", "cpu": "Xeon", "torch": "2.11.0"}
FIGURES = {"sdpa_new_shape_s": 0.05, "sdpa_same_shape_s": 0.001, "layer_s": 0.0012, "fixed_s": 0.0015,
           "plan_s": 0.042}
HOST_KEYS = {"dispatch.sdpa_new_shape", "dispatch.generate_layer", "dispatch.generate_fixed", "dispatch.generate_plan"}
OP_KEYS = {"dispatch.op", "dispatch.sync", "dispatch.python"}
FAKE_TORCH = types.SimpleNamespace(__version__="2.11.0",
                                   cuda=types.SimpleNamespace(get_device_name=lambda: "NVIDIA H100 80GB HBM3"))


def fake_cupy(driver: int = 13000) -> types.SimpleNamespace:
    runtime = types.SimpleNamespace(runtimeGetVersion=lambda: 13000, driverGetVersion=lambda: driver)
    return types.SimpleNamespace(cuda=types.SimpleNamespace(Device=lambda i: contextlib.nullcontext(), runtime=runtime))


@pytest.fixture
def expensive(monkeypatch):
    """The live single-op timing and the expensive host figures, faked; `calls` counts the latter."""
    calls: list[str] = []

    def host_figures(ctx, torch):
        calls.append(ctx.mode)
        return dict(FIGURES), [], True

    monkeypatch.setattr(dispatch, "measure", lambda torch, **kw: {"op_s": 1e-5, "sync_s": 2e-5,
                                                                   "python_iter_s": 2e-8, "op_spread": 0.1})
    monkeypatch.setattr(dispatch, "host_figures", host_figures)
    monkeypatch.setattr(ProbeContext, "torch", lambda self: FAKE_TORCH)
    # PyTorch "installed" whether or not it is (CI has it, a dev venv may not): the op cache's key needs it
    monkeypatch.setattr(dispatch, "dist_version", {"torch": "2.11.0"}.get)
    return calls


def probe(mode: str, *, driver: int = 13000, **options) -> dispatch.ProbeResult:
    return dispatch.run(ProbeContext(mode=mode, cp=fake_cupy(driver), props={"name": "NVIDIA H100 80GB HBM3"},
                                     options=options))


def cache_files() -> list[Path]:
    return sorted((Path(os.environ["XDG_CACHE_HOME"]) / "gpuadvisor").glob("dispatch-*.json"))


# --------------------------------------------------------------------------- the cache itself


def test_cache_dir_follows_xdg_and_ignores_a_relative_one(monkeypatch, tmp_path):
    from gpuadvisor.core.paths import user_cache_dir

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert user_cache_dir() == tmp_path / "gpuadvisor"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/dir")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert user_cache_dir() == tmp_path / "home" / ".cache" / "gpuadvisor"


def test_store_then_load_round_trip_and_key_mismatch():
    assert hostcache.load("t", KEY) is None
    note = hostcache.store("t", KEY, FIGURES)
    path = hostcache.entry_path("t", KEY)
    assert note == f"cached in {path}" and path.parent == Path(os.environ["XDG_CACHE_HOME"]) / "gpuadvisor"
    entry = hostcache.load("t", KEY)
    assert entry.figures == FIGURES and entry.path == path
    assert entry.date == dt.datetime.now(dt.timezone.utc).date().isoformat()
    assert hostcache.load("t", {**KEY, "torch": "2.12.0"}) is None  # another PyTorch: another entry
    doc = json.loads(path.read_text())
    doc["key"]["cpu"] = "EPYC"  # a file whose stored key differs from its name's (edited, or a hash clash)
    path.write_text(json.dumps(doc))
    assert hostcache.load("t", KEY) is None


@pytest.mark.parametrize("text", [b"", b"{", b"null", b"[1, 2]", b'{"schema": 1}', b"\xff\xfe not UTF-8",
                                  b'{"schema": 1, "key": KEY, "measured_at": "yesterday", "figures": {}}'])
def test_a_corrupt_cache_file_is_a_miss_and_is_overwritten(text):
    path = hostcache.entry_path("t", KEY)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.replace(b"KEY", json.dumps(KEY).encode()))
    assert hostcache.load("t", KEY) is None
    hostcache.store("t", KEY, FIGURES)
    assert hostcache.load("t", KEY).figures == FIGURES


def test_figures_that_are_not_numbers_are_a_miss():
    path = hostcache.entry_path("t", KEY)
    for bad in ({"layer_s": "1 ms"}, {"layer_s": True}, {"layer_s": None}, ["layer_s"]):
        hostcache.store("t", KEY, FIGURES)
        doc = json.loads(path.read_text())
        doc["figures"] = bad
        path.write_text(json.dumps(doc))
        assert hostcache.load("t", KEY) is None, bad


def test_an_old_entry_or_one_from_before_a_refresh_is_a_miss():
    hostcache.store("t", KEY, FIGURES)
    path = hostcache.entry_path("t", KEY)
    doc = json.loads(path.read_text())
    measured = dt.datetime.fromisoformat(doc["measured_at"])
    assert hostcache.load("t", KEY, not_before=measured.timestamp() - 60) is not None
    assert hostcache.load("t", KEY, not_before=measured.timestamp() + 60) is None
    doc["measured_at"] = (measured - dt.timedelta(days=hostcache.MAX_AGE_DAYS + 1)).isoformat()
    path.write_text(json.dumps(doc))
    assert hostcache.load("t", KEY) is None


def test_an_unwritable_cache_folder_is_a_note_not_an_error(monkeypatch, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    note = hostcache.store("t", KEY, FIGURES)
    assert note.startswith("not cached: cannot write to ") and "\n" not in note
    assert hostcache.load("t", KEY) is None
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    hostcache.entry_path("t", KEY).mkdir(parents=True)  # the entry's name taken by a folder: unreadable
    assert hostcache.load("t", KEY) is None and hostcache.store("t", KEY, FIGURES).startswith("not cached: ")


# --------------------------------------------------------------------------- the dispatch probe


def test_quick_without_a_cache_skips_generate_with_a_note(expensive):
    res = probe("quick")
    assert expensive == [] and res.status == "ok"
    assert {m.key for m in res.measurements} == {"dispatch.op", "dispatch.sync", "dispatch.python"}
    assert res.reason == ("generate() and attention host times not measured in --quick: "
                          "`gpuadvisor probe --full --only dispatch` measures them once for this host")
    assert res.data["host_figures"] == {"source": "not measured"} and cache_files() == []


def test_full_measures_once_then_every_run_reads_the_cache(expensive):
    first = probe("full")
    assert expensive == ["full"] and first.data["host_figures"] == {"source": "measured"}
    (path,) = cache_files()
    assert first.reason == f"generate() and attention figures cached in {path}"
    assert first.get("dispatch.generate_layer").value == pytest.approx(1.2)
    assert not any(m.details.get("cached") for m in first.measurements)

    for mode in ("full", "quick"):
        res = probe(mode)
        assert expensive == ["full"], mode  # not measured again
        today = dt.datetime.now(dt.timezone.utc).date().isoformat()
        cached = [m for m in res.measurements if m.details.get("cached")]
        assert {m.key for m in cached} == HOST_KEYS | (OP_KEYS if mode == "quick" else set())
        assert all(m.label.endswith(f"(cached {today})") and m.details["measured_at"].startswith(today)
                   for m in cached)
        assert res.get("dispatch.generate_plan").value == pytest.approx(42.0)
        assert res.get("dispatch.sdpa_new_shape").details["same_shape_ms"] == pytest.approx(1.0)
        # the single-op figures: live in --full, from their own cache entry in --quick (no PyTorch import)
        assert bool(res.get("dispatch.op").details.get("cached")) == (mode == "quick")
        assert res.data["host_figures"]["source"] == "cache" and res.data["host_figures"]["cache_file"] == str(path)
        assert f"measured {today}" in res.reason and "--refresh-host" in res.reason


def test_a_new_driver_means_a_new_measurement(expensive):
    probe("full")
    assert probe("quick", driver=13010).data["host_figures"]["source"] == "not measured"
    probe("full", driver=13010)
    assert expensive == ["full", "full"] and len(cache_files()) == 2


def test_a_corrupt_cache_is_measured_again_in_full_and_ignored_in_quick(expensive):
    probe("full")
    (path,) = cache_files()
    path.write_text("{ truncated")
    assert probe("quick").data["host_figures"]["source"] == "not measured"
    assert probe("full").data["host_figures"]["source"] == "measured"
    assert expensive == ["full", "full"] and json.loads(path.read_text())["figures"] == FIGURES


def test_figures_with_a_failure_are_not_cached(monkeypatch):
    """A failed generate() run (OOM, a new transformers) is not kept for a month; no transformers is."""
    monkeypatch.setattr(dispatch, "attention_new_shape", lambda torch, **kw: {"new_shape_s": 0.05,
                                                                               "same_shape_s": 0.001})

    def broken(torch):
        raise RuntimeError("CUDA out of memory\nwhile generating")

    def missing(torch):
        raise ImportError("No module named 'transformers'")

    ctx = ProbeContext(mode="full")
    monkeypatch.setattr(dispatch, "eager_generate", broken)
    figures, notes, cacheable = dispatch.host_figures(ctx, FAKE_TORCH)
    assert not cacheable and set(figures) == {"sdpa_new_shape_s", "sdpa_same_shape_s"}
    assert notes == ["generate() timing skipped: RuntimeError: CUDA out of memory while generating"]
    monkeypatch.setattr(dispatch, "eager_generate", missing)
    figures, notes, cacheable = dispatch.host_figures(ctx, FAKE_TORCH)
    assert cacheable and notes == ["transformers not installed: generate() host time not measured"]


# --------------------------------------------------------------------------- the runner and the CLI


def test_refresh_host_measures_once_per_run_and_gpu_model(expensive):
    hostcache.store("dispatch", {}, FIGURES)  # unrelated entry: must stay untouched
    probe("full")
    d = devices.Discovery(devices=[devices.DeviceInfo(index=i, name="NVIDIA H100 80GB HBM3") for i in range(2)],
                          cupy=fake_cupy())
    res = run_probes(RunOptions(mode="full", only=["dispatch"]), discovery=d)
    assert expensive == ["full"]  # the cache from before serves both GPUs
    assert all(dev.probe("dispatch").data["host_figures"]["source"] == "cache" for dev in res.devices)
    res = run_probes(RunOptions(mode="full", only=["dispatch"], refresh_host=True), discovery=d)
    assert expensive == ["full", "full"]  # GPU 0 re-measured; GPU 1 reused what GPU 0 just wrote
    assert [dev.probe("dispatch").data["host_figures"]["source"] for dev in res.devices] == ["measured", "cache"]
    assert len(cache_files()) == 2


def test_refresh_host_without_full_is_a_usage_error(capsys, tmp_path):
    with pytest.raises(UserError, match="--refresh-host needs --full"):
        RunOptions(mode="quick", refresh_host=True)
    for argv in (["probe", "--refresh-host"], ["run", "--refresh-host", "--out-dir", str(tmp_path / "r")]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "--refresh-host needs --full" in err
    assert not (tmp_path / "r").exists()  # nothing written before the error


def test_probe_cli_prints_the_quick_note(expensive, monkeypatch, capsys):
    real = pr.run_probes
    d = devices.Discovery(devices=[devices.DeviceInfo(index=0, name="NVIDIA H100 80GB HBM3")], cupy=fake_cupy())
    monkeypatch.setattr(pr, "run_probes", lambda opts, **kw: real(opts, discovery=d, **kw))
    assert main(["probe", "--only", "dispatch"]) == 0
    err = capsys.readouterr().err
    assert "dispatch" in err and "`gpuadvisor probe --full --only dispatch` measures them once for this host" in err
    assert main(["probe", "--full", "--only", "dispatch"]) == 0 and expensive == ["full"]
    assert main(["probe", "--only", "dispatch"]) == 0
    out = capsys.readouterr()
    assert "from the host cache, measured" in out.err and "(cached " in out.out  # the table marks them too
