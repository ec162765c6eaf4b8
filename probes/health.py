"""Node health from NVML, per GPU: XID errors, retired pages, remapped rows, NVLink error counters,
and how the clocks behaved while the GPU was under load.

What DCGM's diagnostics and the public cluster health checks look at first, as far as NVML
exposes it without DCGM:
- remapped rows (A100 and later): rows remapped after corrected / uncorrected errors, whether a
  remap is pending (the GPU needs a reset to apply it) and whether a remap failed;
- retired pages (before A100): pages retired for double-bit or repeated single-bit errors;
- XID errors: NVML has no history of them, only events while someone listens, so `XidWatcher`
  listens for the whole run and the result lists the XIDs that happened during it;
- NVLink error counters per active link (replay, recovery, CRC), where the driver reports them;
- clocks under load: `LoadWatch` samples NVML while a load probe (flops, tensor) runs and keeps
  the highest and lowest busy SM clock and every throttle reason seen.
"""

from __future__ import annotations

import contextlib
import threading
import time
from typing import Any

from gpuadvisor.core.provenance import NvmlPoller, gpu_state_light
from gpuadvisor.core.provenance import nvml_try as _try
from gpuadvisor.core.results import ProbeResult
from probes.base import ProbeContext
from probes.timing import ProbeSkipped

NAME = "health"
# nvmlNvLinkErrorCounter_t
NVLINK_COUNTERS = {0: "replay", 1: "recovery", 2: "crc_flit", 3: "crc_data"}
# field ids for the totals over all links (nvml.h NVML_FI_DEV_NVLINK_*_ERROR_COUNT_TOTAL)
NVLINK_FIELD_TOTALS = {"crc_flit": 38, "crc_data": 45, "replay": 52, "recovery": 59}
THROTTLE_NOT_SLOWDOWN = {"gpu_idle", "applications_clocks_setting", "display_clock_setting"}


def _why(fn: Any, *args: Any) -> tuple[Any, str | None]:
    try:
        return fn(*args), None
    except Exception as e:
        return None, " ".join(str(e).split())[:120] or type(e).__name__


def remapped_rows(nvml: Any, handle: Any) -> dict[str, Any]:
    fn = getattr(nvml, "nvmlDeviceGetRemappedRows", None)
    if fn is None:
        return {"supported": False, "reason": "NVML bindings lack nvmlDeviceGetRemappedRows"}
    v, err = _why(fn, handle)
    if v is None:
        return {"supported": False, "reason": err}
    corr, unc, pending, failed = (int(x) for x in v)
    return {"supported": True, "corrected": corr, "uncorrected": unc, "pending": bool(pending), "failed": bool(failed)}


def retired_pages(nvml: Any, handle: Any) -> dict[str, Any]:
    fn = getattr(nvml, "nvmlDeviceGetRetiredPages", None)
    if fn is None:
        return {"supported": False, "reason": "NVML bindings lack nvmlDeviceGetRetiredPages"}
    out: dict[str, Any] = {"supported": True}
    for cause, name in ((0, "multiple_single_bit"), (1, "double_bit")):
        pages, err = _why(fn, handle, cause)
        if pages is None:
            return {"supported": False, "reason": err}
        out[name] = len(pages)
    pend = _try(getattr(nvml, "nvmlDeviceGetRetiredPagesPendingStatus", lambda h: None), handle)
    out["pending"] = None if pend is None else bool(pend)
    return out


def nvlink_errors(nvml: Any, handle: Any, links: list[int] | None = None) -> dict[str, Any]:
    """Error counters per active link, and totals; the field-value totals where per-link ones fail."""
    if not hasattr(nvml, "nvmlDeviceGetNvLinkState"):
        return {"supported": False, "reason": "NVML bindings lack NVLink calls"}
    if links is None:
        links = []
        for link in range(int(getattr(nvml, "NVML_NVLINK_MAX_LINKS", 18))):
            state = _try(nvml.nvmlDeviceGetNvLinkState, handle, link)
            if state:
                links.append(link)
    if not links:
        return {"supported": True, "active_links": 0, "totals": {}}
    per_link: dict[str, dict[str, int]] = {}
    totals: dict[str, int] = {}
    why = None
    for link in links:
        row = {}
        for cid, name in NVLINK_COUNTERS.items():
            v, err = _why(nvml.nvmlDeviceGetNvLinkErrorCounter, handle, link, cid)
            if v is None:
                why = why or err
                continue
            row[name] = int(v)
            totals[name] = totals.get(name, 0) + int(v)
        if row:
            per_link[str(link)] = row
    source = "nvmlDeviceGetNvLinkErrorCounter"
    if not totals and hasattr(nvml, "nvmlDeviceGetFieldValues"):
        vals = _try(nvml.nvmlDeviceGetFieldValues, handle, list(NVLINK_FIELD_TOTALS.values()))
        for name, fv in zip(NVLINK_FIELD_TOTALS, vals or [], strict=False):
            if getattr(fv, "nvmlReturn", 1) == 0:
                totals[name] = int(fv.value.ullVal)
        source = "nvmlDeviceGetFieldValues (totals)"
    if not totals:
        return {"supported": False, "active_links": len(links), "reason": why or "not reported"}
    return {"supported": True, "active_links": len(links), "source": source, "totals": totals, "per_link": per_link}


def _address(handle: Any) -> Any:
    """What a pynvml handle (a ctypes pointer) points at, so that two handles of one GPU compare equal."""
    import ctypes

    if isinstance(handle, (ctypes._Pointer, ctypes.c_void_p)):
        with contextlib.suppress(Exception):
            return ctypes.cast(handle, ctypes.c_void_p).value
    return handle


class XidWatcher:
    """Listens for XID (critical error) events on every GPU for as long as it is open."""

    def __init__(self, nvml: Any, handles: dict[int, Any], poll_ms: int = 200) -> None:
        self.nvml, self.handles, self.poll_ms = nvml, handles, poll_ms
        self.events: list[dict[str, Any]] = []
        self.reason: str | None = None
        self._set: Any = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> XidWatcher:
        nvml = self.nvml
        if nvml is None or not self.handles:
            self.reason = "NVML not available"
            return self
        try:
            self._set = nvml.nvmlEventSetCreate()
            kind = int(getattr(nvml, "nvmlEventTypeXidCriticalError", 0x8))
            registered = 0
            for h in self.handles.values():
                with contextlib.suppress(Exception):
                    nvml.nvmlDeviceRegisterEvents(h, kind, self._set)
                    registered += 1
            if not registered:
                self.reason = "XID events not supported by this driver or device"
                return self
        except Exception as e:
            self.reason = f"XID events not available: {' '.join(str(e).split())[:160]}"
            return self
        self._thread = threading.Thread(target=self._loop, name="gpuadvisor-xid", daemon=True)
        self._thread.start()
        return self

    def _device_of(self, handle: Any) -> int | None:
        want = _address(handle)
        for idx, h in self.handles.items():
            if h is handle or _address(h) == want:
                return idx
        return None

    def _loop(self) -> None:
        wait = getattr(self.nvml, "nvmlEventSetWait_v2", None) or self.nvml.nvmlEventSetWait
        while not self._stop.is_set():
            try:
                ev = wait(self._set, self.poll_ms)
            except Exception:  # NVML_ERROR_TIMEOUT: nothing happened
                continue
            self.events.append({"device": self._device_of(ev.device), "xid": int(ev.eventData),
                                "time": time.time()})

    def for_device(self, index: int) -> list[dict[str, Any]]:
        return [e for e in self.events if e["device"] in (index, None)]

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
        if self._set is not None:
            with contextlib.suppress(Exception):
                self.nvml.nvmlEventSetFree(self._set)


class LoadWatch(NvmlPoller):
    """Samples SM clock, utilisation, power and throttle reasons while a load probe runs."""

    def __init__(self, nvml: Any, handle: Any, interval_s: float = 0.1) -> None:
        super().__init__(nvml, handle, interval_s)
        self.busy_clocks: list[int] = []
        self.reasons: dict[str, int] = {}

    def _sample(self) -> None:
        s = gpu_state_light(self.nvml, self.handle)
        if s is None:
            return
        self.samples += 1
        if s["power_w"] is not None:
            self.max_power_w = max(self.max_power_w or 0.0, s["power_w"])
        if (s["util"] or 0) >= 90 and s["sm"]:  # busy: count its clock and why it is not at maximum
            self.busy_clocks.append(int(s["sm"]))
            for r in s["reasons"]:
                self.reasons[r] = self.reasons.get(r, 0) + 1

    def summary(self) -> dict[str, Any]:
        c = sorted(self.busy_clocks)
        return {
            "samples": self.samples,
            "busy_samples": len(c),
            "sm_clock_busy_max_mhz": c[-1] if c else None,
            "sm_clock_busy_median_mhz": c[len(c) // 2] if c else None,
            "sm_clock_busy_min_mhz": c[0] if c else None,
            "throttle_reasons_busy": dict(sorted(self.reasons.items())),
            "max_power_w": self.max_power_w,
        }


def clocks_verdict(load: dict[str, dict[str, Any]], max_mhz: int | None) -> dict[str, Any]:
    """Over every load probe: the highest busy clock as a share of the maximum, and slowdowns seen."""
    peaks = [s["sm_clock_busy_max_mhz"] for s in load.values() if s.get("sm_clock_busy_max_mhz")]
    medians = [s["sm_clock_busy_median_mhz"] for s in load.values() if s.get("sm_clock_busy_median_mhz")]
    reasons: set[str] = set()
    for s in load.values():
        reasons |= set(s.get("throttle_reasons_busy") or {})
    out: dict[str, Any] = {"sm_clock_max_mhz": max_mhz, "sm_clock_busy_max_mhz": max(peaks) if peaks else None,
                           "sm_clock_busy_median_mhz": min(medians) if medians else None,
                           "throttle_reasons_under_load": sorted(reasons - THROTTLE_NOT_SLOWDOWN)}
    if max_mhz and peaks:
        out["reached_max_pct"] = round(100.0 * max(peaks) / max_mhz, 1)
    return out


def collect(nvml: Any, handle: Any) -> dict[str, Any]:
    return {
        "remapped_rows": remapped_rows(nvml, handle),
        "retired_pages": retired_pages(nvml, handle),
        "nvlink_errors": nvlink_errors(nvml, handle),
    }


def run(ctx: ProbeContext) -> ProbeResult:
    """Counters now, XIDs seen so far in this run, clocks during the load probes (from the runner)."""
    t0 = time.perf_counter()
    if ctx.nvml is None or ctx.device_index is None:
        raise ProbeSkipped("NVML not available: health counters not read")
    from gpuadvisor.core.provenance import nvml_handle

    handle = nvml_handle(ctx.nvml, ctx.device_index)
    if handle is None:
        raise ProbeSkipped(f"no NVML handle for GPU {ctx.device_index}")
    data = collect(ctx.nvml, handle)
    opts = ctx.options.get(NAME, {})
    watcher = opts.get("xid_watcher")
    data["xid_events"] = watcher.for_device(ctx.device_index) if watcher is not None else []
    data["xid_watched"] = watcher is not None and not watcher.reason
    data["xid_note"] = (watcher.reason if watcher is not None and watcher.reason else
                        "XIDs seen while this run listened (NVML keeps no history)" if watcher is not None else
                        "XIDs not watched")
    load = opts.get("load") or {}
    data["load"] = load
    data["clocks"] = clocks_verdict(load, ctx.props.get("sm_clock_max_mhz"))
    problems = []
    rr = data["remapped_rows"]
    if rr.get("pending"):
        problems.append("row remap pending (reset the GPU to apply it)")
    if rr.get("failed"):
        problems.append("row remapping failed")
    if data["retired_pages"].get("pending"):
        problems.append("page retirement pending")
    if data["xid_events"]:
        problems.append("XID " + ", ".join(str(e["xid"]) for e in data["xid_events"]))
    data["problems"] = problems
    return ProbeResult(probe=NAME, status="ok", duration_s=time.perf_counter() - t0, data=data,
                       reason="; ".join(problems) or None)
