"""Node health from a fake NVML (remapped rows, retired pages, NVLink errors, XIDs, clocks under
load) and GEMM bursts (best, median, spread; alternating runners)."""

from __future__ import annotations

import time
import types

import pytest

from probes import health
from probes.base import ProbeContext
from probes.timing import Bursts, Deadline, ProbeSkipped, interleaved_bursts


class NVMLError(Exception):
    pass


class Permissive(types.SimpleNamespace):
    """A fake pynvml: a call it does not define fails as NVML does for an unsupported query."""

    def __getattr__(self, name):
        if name.startswith("nvml"):
            def unsupported(*a):
                raise NVMLError(f"{name}: Not Supported")

            return unsupported
        raise AttributeError(name)


def nvml(*, remap=(0, 0, 0, 0), links=2, nvlink_errors=None, retired=None):
    def unsupported(*a):
        raise NVMLError("Not Supported")

    m = Permissive(NVML_NVLINK_MAX_LINKS=4)
    m.nvmlDeviceGetHandleByIndex = lambda i: ("h", i)
    m.nvmlDeviceGetRemappedRows = lambda h: remap
    m.nvmlDeviceGetRetiredPages = (lambda h, c: retired[c]) if retired else unsupported
    m.nvmlDeviceGetRetiredPagesPendingStatus = lambda h: 0
    m.nvmlDeviceGetNvLinkState = lambda h, link: 1 if link < links else 0
    m.nvmlDeviceGetNvLinkErrorCounter = (lambda h, link, c: nvlink_errors.get(c, 0)) if nvlink_errors else unsupported
    return m


def test_health_counters_and_problems():
    m = nvml(remap=(3, 1, 1, 0), nvlink_errors={0: 2, 2: 5})
    ctx = ProbeContext(nvml=m, device_index=0, props={"sm_clock_max_mhz": 1980})
    load = {"tensor": {"sm_clock_busy_max_mhz": 1980, "sm_clock_busy_median_mhz": 1755,
                       "throttle_reasons_busy": {"sw_power_cap": 40, "gpu_idle": 1}}}
    watcher = types.SimpleNamespace(for_device=lambda i: [{"device": 0, "xid": 79, "time": 0.0}], reason=None)
    ctx.options = {"health": {"load": load, "xid_watcher": watcher}}
    res = health.run(ctx)
    d = res.data
    assert d["remapped_rows"] == {"supported": True, "corrected": 3, "uncorrected": 1, "pending": True,
                                  "failed": False}
    assert d["retired_pages"]["supported"] is False  # A100 and later retire no pages: they remap rows
    assert d["nvlink_errors"]["totals"] == {"replay": 4, "recovery": 0, "crc_flit": 10, "crc_data": 0}
    assert d["clocks"]["reached_max_pct"] == 100.0
    assert d["clocks"]["throttle_reasons_under_load"] == ["sw_power_cap"]
    assert res.status == "ok" and "row remap pending" in res.reason and "XID 79" in res.reason


def test_health_healthy_and_without_nvml():
    res = health.run(ProbeContext(nvml=nvml(), device_index=0))
    assert res.data["problems"] == [] and res.reason is None
    assert res.data["nvlink_errors"]["supported"] is False and res.data["xid_note"] == "XIDs not watched"
    with pytest.raises(ProbeSkipped):
        health.run(ProbeContext(device_index=0))


def test_xid_watcher_records_events_for_the_right_gpu():
    m = types.SimpleNamespace(nvmlEventTypeXidCriticalError=8)
    sent = [types.SimpleNamespace(device="B", eventData=48)]
    m.nvmlEventSetCreate = lambda: "set"
    m.nvmlDeviceRegisterEvents = lambda h, kind, s: None
    m.nvmlEventSetFree = lambda s: None

    def wait(s, ms):
        if sent:
            return sent.pop()
        time.sleep(ms / 1000)
        raise NVMLError("Timeout")

    m.nvmlEventSetWait_v2 = wait
    with health.XidWatcher(m, {0: "A", 1: "B"}, poll_ms=10) as w:
        deadline = time.time() + 2
        while not w.events and time.time() < deadline:
            time.sleep(0.01)
    assert w.for_device(1) == [dict(w.events[0], device=1, xid=48)] and w.for_device(0) == []


def test_xid_watcher_without_support_says_why():
    with health.XidWatcher(None, {}) as w:
        pass
    assert w.reason == "NVML not available" and w.events == []


def test_clocks_verdict_below_max():
    v = health.clocks_verdict({"flops": {"sm_clock_busy_max_mhz": 1500, "sm_clock_busy_median_mhz": 1400,
                                         "throttle_reasons_busy": {"hw_slowdown": 3}}}, 1980)
    assert v["reached_max_pct"] == pytest.approx(75.8) and v["throttle_reasons_under_load"] == ["hw_slowdown"]


# --------------------------------------------------------------------------- bursts


def test_bursts_best_median_spread():
    b = Bursts([2.0, 1.0, 1.5, 1.25, 1.0])
    assert b.best_ms == 1.0 and b.median_ms == 1.25 and b.spread == pytest.approx(0.8)
    assert b.rate(2e12, 1e12) == pytest.approx(2000.0) and b.rate(2e12, 1e12, "median") == pytest.approx(1600.0)


def test_interleaved_bursts_alternate_and_drop_a_failing_optional_runner():
    order = []

    def runner(name, ms, fail_after=None):
        def run():
            order.append(name)
            if fail_after is not None and order.count(name) > fail_after:
                raise RuntimeError("reference broke")
            return ms

        return run

    errors: dict[str, str] = {}
    res = interleaved_bursts({"ours": runner("ours", 1.0), "torch": runner("torch", 2.0, fail_after=3)},
                             bursts=4, gap_s=0, warmup=1, deadline=Deadline(60), optional=("torch",), errors=errors)
    assert order[:6] == ["ours", "torch"] * 3  # warm-up round, then alternating
    assert len(res["ours"].ms_per_op) == 4 and "torch" not in res
    assert errors["torch"] == "RuntimeError: reference broke"
    with pytest.raises(RuntimeError):
        interleaved_bursts({"ours": runner("ours", 1.0, fail_after=0)}, bursts=2, gap_s=0)


def test_runner_samples_clocks_during_load_probes_for_the_health_probe():
    import contextlib

    from gpuadvisor import devices
    from gpuadvisor.core.results import ProbeResult
    from gpuadvisor.probe_runner import RunOptions, run_probes

    m = nvml()
    m.NVML_CLOCK_SM, m.NVML_CLOCK_MEM, m.NVML_TEMPERATURE_GPU = 0, 2, 0
    m.nvmlDeviceGetClockInfo = lambda h, kind: 1755 if kind == 0 else 2619
    m.nvmlDeviceGetCurrentClocksEventReasons = lambda h: 0x4  # sw_power_cap
    m.nvmlDeviceGetPowerUsage = lambda h: 699_000
    m.nvmlDeviceGetUtilizationRates = lambda h: types.SimpleNamespace(gpu=100, memory=50)
    m.nvmlDeviceGetTemperature = lambda h, kind: 60
    m.nvmlSystemGetDriverVersion = lambda: "580.159.04"
    runtime = types.SimpleNamespace(runtimeGetVersion=lambda: 13000, driverGetVersion=lambda: 13000)
    cupy = types.SimpleNamespace(cuda=types.SimpleNamespace(Device=lambda i: contextlib.nullcontext(), runtime=runtime))
    d = devices.Discovery(devices=[devices.DeviceInfo(index=0, name="NVIDIA H200")], nvml=m, cupy=cupy)

    def busy(ctx):
        time.sleep(0.35)
        return ProbeResult(probe="tensor", status="ok")

    res = run_probes(RunOptions(only=["health", "tensor"], use_torch=False), discovery=d,
                     probe_fns={"tensor": busy, "properties": lambda ctx: ProbeResult(probe="properties", status="ok")})
    dev = res.devices[0]
    assert [p.probe for p in dev.probes] == ["tensor", "health"]  # health runs last whatever the order asked
    h = dev.probe("health").data
    assert h["load"]["tensor"]["busy_samples"] >= 2 and h["load"]["tensor"]["sm_clock_busy_max_mhz"] == 1755
    assert h["clocks"]["throttle_reasons_under_load"] == ["sw_power_cap"]
