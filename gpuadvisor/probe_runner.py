"""Runs the selected probes on each selected device, each under its own time limit.

A probe that fails or runs out of time is recorded as `failed` / `timeout` with its reason and
the others still run. Ctrl-C marks the current probe `interrupted` and the result incomplete;
the caller saves what there is. Nothing here prints: progress goes to the `on_event` callback.
`run_probes` is the entry point; a `ProbeSession` holds one run's state, one method per concern.
"""

from __future__ import annotations

import contextlib
import importlib
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from gpuadvisor import devices as devmod
from gpuadvisor.core import provenance
from gpuadvisor.core.errors import UserError
from gpuadvisor.core.results import DeviceResult, ProbeResult, RunResult, Status
from probes import ALL_PROBES, FULL_ONLY, GPU_PROBES, HOST_PROBES, LOAD_PROBES, NODE_PROBES, TORCH_PROBES
from probes.base import ProbeContext
from probes.timing import Deadline, ProbeSkipped, ProbeTimeout, is_oom

ProbeFn = Callable[[ProbeContext], ProbeResult]
EventFn = Callable[..., None]

# Safety caps, not budgets (a probe that reaches one is recorded as `timeout`): cold kernel caches and
# slow hosts need room. On an H100 a whole --quick run takes under 10 s and --full under 30 s; the dispatch
# probe's generate() timing (~15 s) runs only in --full, once per host (probes/hostcache.py), and
# needs its 45 s there; in --quick it reads its single-op figures from the host cache where it can.
TIME_LIMITS: dict[str, dict[str, float]] = {
    "quick": {"properties": 10, "memory_bandwidth": 15, "transfer": 15, "flops": 15, "tensor": 30, "host": 15,
              "crossover": 15, "dispatch": 10, "conv": 30, "elementwise": 20, "health": 10, "interconnect": 120},
    "full": {"properties": 30, "memory_bandwidth": 60, "transfer": 60, "flops": 60, "tensor": 120, "host": 60,
             "crossover": 90, "dispatch": 45, "conv": 60, "elementwise": 30, "health": 20, "interconnect": 420},
}
FULL_ONLY_NOTE = "runs in --full only (or name it: `gpuadvisor probe --only {name}`)"


def needs_torch(mode: str, selected: Sequence[str], gpus: int) -> bool:
    """Whether this run's probes import PyTorch (so the runner loads it early, in the background):
    the interconnect probe where there are two GPUs or more, else TORCH_PROBES of the mode."""
    return bool(set(TORCH_PROBES.get(mode, TORCH_PROBES["quick"])) & set(selected)) or (
        "interconnect" in selected and gpus > 1)


def default_probe(name: str) -> ProbeFn:
    return importlib.import_module(f"probes.{name}").run


@dataclass
class RunOptions:
    mode: str = "quick"
    device: str | int = "all"  # "all" or an index
    only: Sequence[str] | None = None
    time_limits: dict[str, float] = field(default_factory=dict)  # overrides per probe
    use_torch: bool = True
    probe_options: dict[str, Any] = field(default_factory=dict)  # passed to ProbeContext.options
    catalog_dirs: Sequence[str] = ()
    refresh_host: bool = False  # --full: re-measure the host figures a host cache entry holds

    def __post_init__(self) -> None:  # built before anything is written or measured: bad flags fail first
        if self.refresh_host and self.mode != "full":
            raise UserError("--refresh-host needs --full: --quick never measures the host figures, it only reads them")


def parse_only(text: str | None) -> list[str] | None:
    if not text:
        return None
    names = [t.strip() for t in text.split(",") if t.strip()]
    unknown = [n for n in names if n not in ALL_PROBES]
    if unknown:
        raise UserError(f"unknown probe {', '.join(unknown)}; choose from {', '.join(ALL_PROBES)}")
    return names


def parse_device(text: str | int | None) -> str | int:
    if text is None or text == "all":
        return "all"
    try:
        value = int(text)
    except (TypeError, ValueError):
        raise UserError(f"--device must be a GPU index or 'all', not {text!r}") from None
    if value < 0:
        raise UserError(f"--device must be >= 0, not {value}")
    return value


class Interrupted(Exception):
    pass


def _one_line(e: BaseException) -> str:
    return " ".join(str(e).split())[:500]


def run_one(name: str, fn: ProbeFn, ctx: ProbeContext, limit_s: float | None) -> ProbeResult:
    """Run one probe, turning every outcome into a ProbeResult. KeyboardInterrupt -> Interrupted."""
    ctx.deadline = Deadline(limit_s)
    t0 = time.perf_counter()
    status: Status
    try:
        res = fn(ctx)
        if not isinstance(res, ProbeResult):
            raise TypeError(f"probe returned {type(res).__name__}, not ProbeResult")
        res.duration_s = round(time.perf_counter() - t0, 3)
        return res
    except KeyboardInterrupt:
        res = ProbeResult(probe=name, status="interrupted", reason="interrupted (Ctrl-C)",
                          duration_s=round(time.perf_counter() - t0, 3))
        raise Interrupted(res) from None
    except ProbeSkipped as e:
        status, reason = "skipped", _one_line(e)
    except ProbeTimeout as e:
        status, reason = "timeout", _one_line(e)
    except Exception as e:
        status = "failed"
        if is_oom(e) or isinstance(e, MemoryError):
            reason = f"out of GPU memory: {_one_line(e)}"
        else:
            reason = f"{type(e).__name__}: {_one_line(e)}"
    finally:
        with contextlib.suppress(Exception):
            ctx.free_pools()
    return ProbeResult(probe=name, status=status, reason=reason, duration_s=round(time.perf_counter() - t0, 3))


def _run_into(into: list[ProbeResult], name: str, fn: ProbeFn, ctx: ProbeContext, limit_s: float | None) -> ProbeResult:
    try:
        res = run_one(name, fn, ctx, limit_s)
    except Interrupted as e:
        into.append(e.args[0])
        raise
    into.append(res)
    return res


def _emit(on_event: EventFn | None, kind: str, **kw: Any) -> None:
    if on_event is not None:
        with contextlib.suppress(Exception):
            on_event(kind, **kw)


def _load_catalog(dirs: Sequence[str]) -> tuple[Any, str | None]:
    try:
        from gpuadvisor.catalog import load_catalog

        return load_catalog(list(dirs)), None
    except Exception as e:
        return None, f"catalog not loaded: {_one_line(e)}"


def flags_for(before: Any, after: Any, sampler: provenance.StateSampler | None) -> list[str]:
    flags = []
    procs: dict[int, dict[str, Any]] = {}
    for s in (before, after):
        for p in (s.other_processes if s is not None else []):
            procs.setdefault(p.get("pid", -1), p)
    if procs:
        names = ", ".join(f"{p.get('name') or 'pid'} ({p.get('pid')})" for p in procs.values())
        flags.append(f"busy: {len(procs)} other process{'es' if len(procs) > 1 else ''} on the GPU: {names}")
    reasons = set(sampler.throttling) if sampler is not None else set()
    if after is not None:
        reasons |= set(after.throttle_reasons) - provenance.NOT_THROTTLING
    if reasons:
        flags.append(f"throttled: {', '.join(sorted(reasons))}")
    return flags


def run_probes(
    opts: RunOptions,
    *,
    discovery: devmod.Discovery | None = None,
    probe_fns: Mapping[str, ProbeFn] | None = None,
    on_event: EventFn | None = None,
) -> RunResult:
    """Discover, run, collect. Never raises for device trouble; UserError for a bad --device."""
    if opts.refresh_host:  # host cache entries written before now are stale: the first GPU of a model
        # re-measures, the others of that model reuse its entry
        opts = replace(opts, probe_options={**opts.probe_options, "host_cache": {"not_before": time.time()}})
    d = discovery if discovery is not None else devmod.discover()
    return ProbeSession(opts, d, probe_fns=probe_fns, on_event=on_event).run()


class ProbeSession:
    """One probe run: the options, the devices found, the result being filled and where events go.

    `run()` prepares (kernels compile, PyTorch loads), then measures: host probes, every GPU's
    probes, the node probes. Ctrl-C at any point keeps what was measured and marks it incomplete.
    """

    def __init__(self, opts: RunOptions, d: devmod.Discovery, *, probe_fns: Mapping[str, ProbeFn] | None = None,
                 on_event: EventFn | None = None) -> None:
        self.opts, self.d, self.probe_fns, self.on_event = opts, d, probe_fns, on_event
        self.selected = list(opts.only) if opts.only else list(ALL_PROBES)
        # --quick without --only names the full-only probes as skipped, and runs them only when named
        self.full_only = [] if opts.only or opts.mode == "full" else [p for p in FULL_ONLY if p in self.selected]
        self.selected = [p for p in self.selected if p not in self.full_only]
        self.limits = dict(TIME_LIMITS.get(opts.mode, TIME_LIMITS["quick"]), **opts.time_limits)
        self.result = RunResult(mode="full" if opts.mode == "full" else "quick",
                                host=provenance.host_info(d.nvml, d.cupy), gpu_found=d.found, message=d.message)
        self.indices = self._select_devices()
        self.catalog: Any = None
        self.catalog_note: str | None = None
        if d.found:
            self.catalog, self.catalog_note = _load_catalog(opts.catalog_dirs)
        self.torch_holder = ProbeContext(mode=opts.mode, use_torch=opts.use_torch)
        self.first_card: Any = None
        self.xids: Any = None

    # ------------------------------------------------------------------ state shared by every probe

    def _select_devices(self) -> list[int]:
        """Every GPU found, or the one --device names (UserError when there is none such)."""
        indices = [dev.index for dev in self.d.devices]
        if not self.d.found and self.opts.device != "all":  # a GPU asked for by index on a machine without one
            raise UserError(f"--device {self.opts.device}: no GPU on this machine ({self.d.message}); without "
                            "--device the host is probed alone")
        if self.d.found and self.opts.device != "all":
            if self.opts.device not in indices:
                raise UserError(f"--device {self.opts.device}: no such GPU (found {len(indices)}: "
                                f"{', '.join(map(str, indices))})")
            indices = [int(self.opts.device)]
        return indices

    def fn_for(self, name: str) -> ProbeFn:
        if self.probe_fns and name in self.probe_fns:
            return self.probe_fns[name]
        return default_probe(name)

    def limit(self, name: str) -> float | None:
        """The probe's time limit: the mode's cap, or the caller's override."""
        return self.limits.get(name)

    def new_ctx(self, **kw: Any) -> ProbeContext:
        """A probe context over the selected GPUs, sharing the PyTorch module loaded so far."""
        kw.setdefault("options", self.opts.probe_options)
        ctx = ProbeContext(mode=self.opts.mode, use_torch=self.opts.use_torch, nvml=self.d.nvml,
                           devices=list(self.indices), **kw)
        ctx._torch, ctx._torch_reason = self.torch_holder._torch, self.torch_holder._torch_reason
        return ctx

    def keep_torch(self, ctx: ProbeContext) -> None:
        self.torch_holder._torch, self.torch_holder._torch_reason = ctx._torch, ctx._torch_reason

    def emit(self, kind: str, **kw: Any) -> None:
        _emit(self.on_event, kind, **kw)

    # ------------------------------------------------------------------ the run

    def run(self) -> RunResult:
        if not self._prepare():
            return self.result
        from probes.health import XidWatcher

        handles = {i: devmod.nvml_handle(self.d.nvml, i) for i in self.indices} if "health" in self.selected else {}
        self.xids = XidWatcher(self.d.nvml, handles)
        with self.xids:
            self._measure()
        for dev in self.result.devices:  # named, not run: a quick run says where the full-only probes are
            for name in self.full_only:
                dev.probes.append(ProbeResult(probe=name, status="skipped", reason=FULL_ONLY_NOTE.format(name=name)))
        self._add_late_xids()
        return self.result

    def _wants_torch(self) -> bool:
        """needs_torch(), or --quick on a host whose cache lacks the dispatch probe's single-op figures."""
        want = needs_torch(self.opts.mode, self.selected, len(self.indices))
        if want or "dispatch" not in self.selected or (self.probe_fns and "dispatch" in self.probe_fns):
            return want
        from probes import dispatch

        with contextlib.suppress(Exception):  # a hint only: the probe decides for itself
            first = next(x for x in self.d.devices if x.index == self.indices[0])
            return not dispatch.op_figures_cached(self.new_ctx(cp=self.d.cupy, props={"name": first.name}))
        return False

    def _prepare(self) -> bool:
        """Load PyTorch and compile each probe's kernels before anything is timed; False on Ctrl-C."""
        d = self.d
        if self.opts.use_torch and d.usable and self._wants_torch():
            # PyTorch takes seconds to import: load it while kernels compile, and wait for it
            # before anything is timed, so that the import never disturbs a measurement
            from probes.base import preload_torch

            preload_torch()
        try:
            if d.usable:
                for idx in self.indices:
                    with d.cupy.cuda.Device(idx):
                        self._prepare_device(idx)
            from probes.base import wait_for_torch

            wait_for_torch()
        except KeyboardInterrupt:
            self.result.complete = False
            return False
        return True

    def _prepare_device(self, idx: int) -> None:
        for name in self.selected:
            with contextlib.suppress(Exception):  # a failure here shows again in the probe
                prep = getattr(importlib.import_module(f"probes.{name}"), "prepare", None)
                if prep is not None and (not self.probe_fns or name not in self.probe_fns):
                    prep(self.new_ctx(cp=self.d.cupy, device_index=idx))

    def _measure(self) -> None:
        """Host probes, then every GPU's probes, then the node probes; Ctrl-C marks the result incomplete."""
        try:
            self._host_probes()
            for idx in self.indices:
                self._device(idx)
            self._node_probes()
        except Interrupted as e:
            self._interrupted(e.args[0])
        except KeyboardInterrupt:
            self.result.complete = False

    def _interrupted(self, res: ProbeResult) -> None:
        """Ctrl-C during a probe: the result is incomplete; the probe's own record says where it stopped."""
        self.result.complete = False
        where: Any = next((dv.index for dv in self.result.devices if res in dv.probes), None)
        if res in self.result.node_probes:
            where = "node"
        self.emit("probe_end", device=where, probe=res.probe, result=res)

    # ------------------------------------------------------------------ host and node probes

    def _host_probes(self) -> None:
        """Always on the host, GPU or not; with no usable GPU, the crossover probe times the CPU alone."""
        names = [p for p in self.selected if p in HOST_PROBES]
        if not self.d.usable and "crossover" in self.selected:
            names.append("crossover")
        for name in names:
            self.emit("probe_start", device=None, probe=name)
            res = _run_into(self.result.host_probes, name, self.fn_for(name), self.new_ctx(), self.limit(name))
            self.emit("probe_end", device=None, probe=name, result=res)

    def _node_probes(self) -> None:
        """Once, over every selected GPU."""
        d = self.d
        for name in [p for p in self.selected if p in NODE_PROBES]:
            self.emit("probe_start", device="node", probe=name)
            if not d.usable:
                res = ProbeResult(probe=name, status="skipped", reason=d.message or d.cupy_reason or "no usable GPU")
                self.result.node_probes.append(res)
            else:
                ctx = self.new_ctx(cp=d.cupy, card=self.first_card)
                try:
                    res = _run_into(self.result.node_probes, name, self.fn_for(name), ctx, self.limit(name))
                finally:
                    self.keep_torch(ctx)
            self.emit("probe_end", device="node", probe=name, result=res)

    def _add_late_xids(self) -> None:
        """XIDs that came after a GPU's own health probe ran join that probe's record."""
        for dev in self.result.devices:
            h = dev.probe("health")
            if h is None or h.status != "ok" or len(self.xids.for_device(dev.index)) <= len(h.data["xid_events"]):
                continue
            h.data["xid_events"] = self.xids.for_device(dev.index)
            h.data["problems"] = [x for x in h.data["problems"] if not x.startswith("XID ")]
            h.data["problems"].append("XID " + ", ".join(str(e["xid"]) for e in h.data["xid_events"]))
            h.reason = "; ".join(h.data["problems"])

    # ------------------------------------------------------------------ one GPU

    def _device(self, idx: int) -> None:
        """One GPU: its properties and catalog card, then its probes (health last), its state around them."""
        d = self.d
        info = next(x for x in d.devices if x.index == idx)
        handle = devmod.nvml_handle(d.nvml, idx)
        dev = DeviceResult(index=idx, name=info.name, uuid=info.uuid)
        self.result.devices.append(dev)
        self.emit("device_start", device=idx, name=info.name)
        dev.state_before = provenance.gpu_state(d.nvml, handle)
        cp = d.cupy if d.usable else None
        with contextlib.nullcontext() if cp is None else cp.cuda.Device(idx):
            props_error = self._properties(dev, cp, handle, info.name)
            card = self._card(dev, info)
            load: dict[str, Any] = {}
            sampler = provenance.StateSampler(d.nvml, handle)
            try:
                with sampler:
                    for name in sorted([p for p in self.selected if p in GPU_PROBES], key=lambda n: n == "health"):
                        self.emit("probe_start", device=idx, probe=name)
                        if cp is None or (name == "properties" and props_error):
                            res = self._not_run(dev, name, props_error)
                            dev.probes.append(res)
                        else:
                            res = self._gpu_probe(dev, name, cp, card, handle, load)
                        self.emit("probe_end", device=idx, probe=name, result=res)
            finally:
                dev.state_after = provenance.gpu_state(d.nvml, handle)
                dev.flags.extend(flags_for(dev.state_before, dev.state_after, sampler))
                if sampler.samples:
                    dev.properties["during_run"] = sampler.summary()

    def _properties(self, dev: DeviceResult, cp: Any, handle: Any, name: str) -> str | None:
        """The GPU's properties into `dev`; the error, if reading them failed."""
        try:
            from probes.properties import collect

            dev.properties = collect(cp, self.d.nvml, handle, dev.index)
        except Exception as e:
            dev.properties = {"index": dev.index, "name": name}
            return f"{type(e).__name__}: {_one_line(e)}"
        return None

    def _card(self, dev: DeviceResult, info: Any) -> Any:
        """The catalog card that matches this GPU (None: no catalog, or no match)."""
        card = None
        if self.catalog is not None:
            from gpuadvisor.catalog import match_device

            with contextlib.suppress(Exception):
                card = match_device(self.catalog, info.name, info.memory_gib)
        dev.catalog_name = card.name if card is not None else None
        self.first_card = self.first_card or card
        if self.catalog_note:
            dev.flags.append(self.catalog_note)
        return card

    def _not_run(self, dev: DeviceResult, name: str, props_error: str | None) -> ProbeResult:
        """The record of a GPU probe that cannot run: properties unreadable, or no usable GPU (NVML only)."""
        d = self.d
        if name == "properties" and props_error:
            return ProbeResult(probe=name, status="failed", reason=props_error)
        if name == "properties":
            return ProbeResult(probe=name, status="ok", data=dict(dev.properties),
                               reason="NVML only: " + (d.cupy_reason or ""))
        return ProbeResult(probe=name, status="skipped", reason=d.cupy_reason or "GPU not usable")

    def _gpu_probe(self, dev: DeviceResult, name: str, cp: Any, card: Any, handle: Any,
                   load: dict[str, Any]) -> ProbeResult:
        """One probe on one GPU under its time limit; a load probe's NVML readings go to `load` for health."""
        popts = self.opts.probe_options
        if name == "health":
            popts = {**popts, "health": {**popts.get("health", {}), "load": load, "xid_watcher": self.xids}}
        ctx = self.new_ctx(cp=cp, device_index=dev.index, props=dev.properties, card=card, options=popts)
        watch = None
        if name in LOAD_PROBES:
            from probes.health import LoadWatch

            watch = LoadWatch(self.d.nvml, handle)
        try:
            with watch if watch is not None else contextlib.nullcontext():
                return _run_into(dev.probes, name, self.fn_for(name), ctx, self.limit(name))
        finally:
            self.keep_torch(ctx)
            if watch is not None:
                load[name] = watch.summary()
