"""CPU-only tests of the probe suite: host probe on small sizes, schema round trip, the runner
with fake probes that fail / time out / are interrupted, and the no-GPU path of the CLI."""

from __future__ import annotations

import json
import time

import pytest

from gpuadvisor import devices
from gpuadvisor.cli import main
from gpuadvisor.core.results import Measurement, ProbeResult, RunResult, load, save
from gpuadvisor.probe_runner import RunOptions, parse_device, parse_only, run_one, run_probes
from probes.base import ProbeContext
from probes.timing import Deadline, ProbeSkipped, ProbeTimeout, Timing, retry_smaller, time_host

SMALL = {"host": {"vec_bytes": 1 << 20, "mat_n": 64, "repeats": 2},
         "crossover": {"vector_sizes": [1 << 10, 1 << 12], "matmul_sizes": [16, 32], "repeats": 2}}


def no_gpu(reason: str = "NVML: Driver Not Loaded") -> devices.Discovery:
    return devices.Discovery(reason=reason, nvml_reason=reason, cupy_reason="CuPy is not installed")


def test_host_probe_small_sizes():
    from probes import host

    res = host.run(ProbeContext(options=SMALL))
    assert res.status == "ok"
    keys = {m.key for m in res.measurements}
    assert keys == {"host.copy", "host.triad", "host.matmul_fp32", "host.matmul_fp64"}
    assert all(m.value and m.value > 0 for m in res.measurements)


def test_crossover_cpu_side_only():
    from probes import crossover

    res = crossover.run(ProbeContext(options=SMALL))
    assert res.status == "ok" and res.data["gpu"] is False
    assert [r["size"] for r in res.data["matmul"]] == [16, 32]
    assert all("gpu_ms" not in r for r in res.data["vector_add"])


def test_crossover_rule():
    from probes.crossover import crossover

    rows = [{"size": 1, "cpu_ms": 1, "g": 2}, {"size": 2, "cpu_ms": 2, "g": 1}, {"size": 4, "cpu_ms": 4, "g": 5},
            {"size": 8, "cpu_ms": 8, "g": 1}, {"size": 16, "cpu_ms": 16, "g": 1}]
    assert crossover(rows, "g") == 8
    assert crossover(rows[:3], "g") is None
    assert crossover([{"size": 1, "cpu_ms": 2, "g": 1}], "g") == 1


def test_timing_summary_and_deadline():
    t = Timing([1.0, 2.0, 3.0])
    assert t.median_ms == 2.0 and t.spread == pytest.approx(1.0)
    assert t.rate(2e9, 1e9) == pytest.approx(1000.0)
    d = Deadline(0.0)
    time.sleep(0.01)
    with pytest.raises(ProbeTimeout):
        d.check("x")
    calls = []
    timing = time_host(lambda: calls.append(1), warmup=1, repeats=50, deadline=Deadline(100), min_repeats=1)
    assert len(timing.times_ms) == 50 and len(calls) == 51


def test_retry_smaller_on_oom():
    class OutOfMemoryError(Exception):
        pass

    tried = []

    def alloc(n):
        tried.append(n)
        if n > 100:
            raise OutOfMemoryError("out of memory allocating")
        return "ok"

    assert retry_smaller(alloc, 400, min_bytes=50) == ("ok", 100)
    assert tried == [400, 200, 100]
    with pytest.raises(MemoryError):
        retry_smaller(alloc, 1000, min_bytes=600)
    with pytest.raises(ValueError):
        retry_smaller(lambda n: (_ for _ in ()).throw(ValueError("other")), 10)


def test_result_round_trip(tmp_path):
    r = RunResult(host={"hostname": "h", "os": "Linux", "cpu": "x", "cpu_count": 1, "memory_gib": 1.0,
                        "python": "3.12"})
    r.host_probes.append(ProbeResult(probe="host", status="ok", measurements=[
        Measurement(key="host.copy", label="copy", value=10.0, unit="GB/s", datasheet=20.0, reference=5.0)]))
    path = save(r, tmp_path / "r.json")
    back = load(path)
    assert back == r
    m = back.host_probe("host").get("host.copy")
    assert m.pct_of_datasheet == 50.0 and m.ratio_to_reference == 2.0


def _fail(ctx):
    raise RuntimeError("boom\nsecond line")


def _slow(ctx):
    while True:
        ctx.deadline.check("looping")
        time.sleep(0.01)


def _skip(ctx):
    raise ProbeSkipped("not here")


def _oom(ctx):
    raise MemoryError("CUDA out of memory even at 64 MiB")


def test_run_one_outcomes():
    ctx = ProbeContext()
    r = run_one("host", _fail, ctx, 5)
    assert r.status == "failed" and r.reason == "RuntimeError: boom second line"
    r = run_one("host", _slow, ctx, 0.05)
    assert r.status == "timeout" and "time limit" in r.reason
    assert run_one("host", _skip, ctx, 5).status == "skipped"
    r = run_one("host", _oom, ctx, 5)
    assert r.status == "failed" and r.reason.startswith("out of GPU memory")


def test_runner_failure_does_not_stop_others():
    res = run_probes(RunOptions(only=["host", "crossover"], probe_options=SMALL), discovery=no_gpu(),
                     probe_fns={"host": _fail})
    assert not res.gpu_found and res.complete
    assert res.message == "no NVIDIA GPU found: NVML: Driver Not Loaded"
    assert [p.status for p in res.host_probes] == ["failed", "ok"]


def test_runner_interrupt_keeps_partial():
    def interrupt(ctx):
        raise KeyboardInterrupt

    res = run_probes(RunOptions(only=["host", "crossover"], probe_options=SMALL), discovery=no_gpu(),
                     probe_fns={"crossover": interrupt})
    assert res.complete is False
    assert [(p.probe, p.status) for p in res.host_probes] == [("host", "ok"), ("crossover", "interrupted")]


def test_parse_flags():
    assert parse_only("host, tensor") == ["host", "tensor"]
    assert parse_only(None) is None
    assert parse_device("all") == "all" and parse_device("1") == 1
    from gpuadvisor.core.errors import UserError

    with pytest.raises(UserError):
        parse_only("host,warp")
    with pytest.raises(UserError):
        parse_device("x")


def test_discover_never_raises(monkeypatch):
    def nvml_missing():
        raise devices.Unavailable("NVML: Driver Not Loaded")

    def cupy_missing():
        raise devices.Unavailable("CuPy is not installed")

    monkeypatch.setattr(devices, "load_nvml", nvml_missing)
    monkeypatch.setattr(devices, "load_cupy", cupy_missing)
    d = devices.discover()
    assert not d.found and d.message == "no NVIDIA GPU found: NVML: Driver Not Loaded"

    def nvml_broken():
        raise OSError("weird")

    monkeypatch.setattr(devices, "load_nvml", nvml_broken)
    d = devices.discover()
    assert not d.found and "weird" in d.message


def test_cli_no_gpu(monkeypatch, tmp_path, capsys):
    import gpuadvisor.probe_runner as pr

    real = pr.run_probes
    monkeypatch.setattr(pr, "run_probes", lambda opts, **kw: real(
        RunOptions(mode=opts.mode, only=opts.only, probe_options=SMALL), discovery=no_gpu(), **kw))
    out = tmp_path / "r.json"
    assert main(["probe", "--json", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert data["gpu_found"] is False and data["message"].startswith("no NVIDIA GPU found: ")
    assert {p["probe"] for p in data["host_probes"]} == {"host", "crossover"}
    assert load(out).complete
    # a second run refuses to overwrite without --force, then succeeds with it
    assert main(["probe", "--out", str(out)]) == 2
    assert "exists" in capsys.readouterr().err
    assert main(["probe", "--out", str(out), "--force", "--only", "host"]) == 0
    assert "no NVIDIA GPU found" in capsys.readouterr().out
    assert main(["probe", "--only", "bogus"]) == 2


def test_sample_results_load():
    from pathlib import Path

    for p in (Path(__file__).parent / "data" / "h100-probe.json",):
        if p.exists():
            r = load(p)
            assert r.gpu_found and r.devices[0].measurement("memory.triad").value > 0



def test_a_gpu_index_on_a_machine_without_a_gpu_is_refused():
    """`probe --device 3` where no GPU is found had probed the host and dropped the flag: it names a GPU, so it is
    refused in one line (without it the host alone is probed, as `run` does)."""
    from gpuadvisor.core.errors import UserError

    with pytest.raises(UserError, match="--device 3: no GPU on this machine"):
        run_probes(RunOptions(only=["host"], probe_options=SMALL, device=3), discovery=no_gpu())
    assert run_probes(RunOptions(only=["host"], probe_options=SMALL), discovery=no_gpu()).gpu_found is False
