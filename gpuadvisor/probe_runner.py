"""Runs the selected probes on each selected device, each under its own time limit.

A probe that fails or runs out of time is recorded as `failed` / `timeout` with its reason and
the others still run. Ctrl-C marks the current probe `interrupted` and the result incomplete;
the caller saves what there is. Nothing here prints: progress goes to the `on_event` callback.
"""

from __future__ import annotations

import contextlib
import importlib
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from gpuadvisor import devices as devmod
from gpuadvisor import provenance
from gpuadvisor.errors import UserError
from gpuadvisor.results import DeviceResult, ProbeResult, RunResult, Status
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
    selected = list(opts.only) if opts.only else list(ALL_PROBES)
    full_only = [] if opts.only or opts.mode == "full" else [p for p in FULL_ONLY if p in selected]
    selected = [p for p in selected if p not in full_only]
    limits = dict(TIME_LIMITS.get(opts.mode, TIME_LIMITS["quick"]), **opts.time_limits)

    def fn_for(name: str) -> ProbeFn:
        if probe_fns and name in probe_fns:
            return probe_fns[name]
        return default_probe(name)

    result = RunResult(mode="full" if opts.mode == "full" else "quick", host=provenance.host_info(d.nvml, d.cupy),
                       gpu_found=d.found, message=d.message)
    indices = [dev.index for dev in d.devices]
    if d.found and opts.device != "all":
        if opts.device not in indices:
            raise UserError(f"--device {opts.device}: no such GPU (found {len(indices)}: "
                            f"{', '.join(map(str, indices))})")
        indices = [int(opts.device)]
    catalog, catalog_note = _load_catalog(opts.catalog_dirs) if d.found else (None, None)
    torch_holder = ProbeContext(mode=opts.mode, use_torch=opts.use_torch)

    def new_ctx(**kw: Any) -> ProbeContext:
        kw.setdefault("options", opts.probe_options)
        ctx = ProbeContext(mode=opts.mode, use_torch=opts.use_torch, nvml=d.nvml, devices=list(indices), **kw)
        ctx._torch, ctx._torch_reason = torch_holder._torch, torch_holder._torch_reason
        return ctx

    def keep_torch(ctx: ProbeContext) -> None:
        torch_holder._torch, torch_holder._torch_reason = ctx._torch, ctx._torch_reason

    want_torch = needs_torch(opts.mode, selected, len(indices))
    if not want_torch and opts.use_torch and d.usable and "dispatch" in selected and not (
            probe_fns and "dispatch" in probe_fns):  # --quick on a host whose cache lacks the single-op figures
        from probes import dispatch

        with contextlib.suppress(Exception):  # a hint only: the probe decides for itself
            first = next(x for x in d.devices if x.index == indices[0])
            want_torch = not dispatch.op_figures_cached(new_ctx(cp=d.cupy, props={"name": first.name}))
    if opts.use_torch and d.usable and want_torch:
        # PyTorch takes seconds to import: load it while kernels compile, and wait for it
        # before anything is timed, so that the import never disturbs a measurement
        from probes.base import preload_torch

        preload_torch()
    try:
        if d.usable:
            for idx in indices:
                with d.cupy.cuda.Device(idx):
                    for name in selected:
                        with contextlib.suppress(Exception):  # a failure here shows again in the probe
                            prep = getattr(importlib.import_module(f"probes.{name}"), "prepare", None)
                            if prep is not None and (not probe_fns or name not in probe_fns):
                                prep(new_ctx(cp=d.cupy, device_index=idx))
        from probes.base import wait_for_torch

        wait_for_torch()
    except KeyboardInterrupt:
        result.complete = False
        return result
    from probes.health import XidWatcher

    xids = XidWatcher(d.nvml, {i: devmod.nvml_handle(d.nvml, i) for i in indices} if "health" in selected else {})
    with xids:
        _measure(result, opts, d, selected, indices, limits, catalog, catalog_note, new_ctx, keep_torch, fn_for,
                 on_event, xids)
    for dev in result.devices:  # named, not run: a quick run says where the full-only probes are
        for name in full_only:
            dev.probes.append(ProbeResult(probe=name, status="skipped", reason=FULL_ONLY_NOTE.format(name=name)))
    for dev in result.devices:  # XIDs that came after a GPU's own health probe ran
        h = dev.probe("health")
        if h is not None and h.status == "ok" and len(xids.for_device(dev.index)) > len(h.data["xid_events"]):
            h.data["xid_events"] = xids.for_device(dev.index)
            h.data["problems"] = [x for x in h.data["problems"] if not x.startswith("XID ")]
            h.data["problems"].append("XID " + ", ".join(str(e["xid"]) for e in h.data["xid_events"]))
            h.reason = "; ".join(h.data["problems"])
    return result


def _measure(result: RunResult, opts: RunOptions, d: devmod.Discovery, selected: list[str], indices: list[int],
             limits: dict[str, float], catalog: Any, catalog_note: str | None, new_ctx: Callable[..., ProbeContext],
             keep_torch: Callable[[ProbeContext], None], fn_for: Callable[[str], ProbeFn],
             on_event: EventFn | None, xids: Any) -> None:
    """Host probes, then every GPU's probes, then the node probes; Ctrl-C marks the result incomplete."""
    first_card = None
    try:
        # host probes: always on the host, GPU or not
        for name in [p for p in selected if p in HOST_PROBES]:
            _emit(on_event, "probe_start", device=None, probe=name)
            res = _run_into(result.host_probes, name, fn_for(name), new_ctx(), limits.get(name))
            _emit(on_event, "probe_end", device=None, probe=name, result=res)
        if not d.usable and "crossover" in selected:
            name = "crossover"
            _emit(on_event, "probe_start", device=None, probe=name)
            res = _run_into(result.host_probes, name, fn_for(name), new_ctx(), limits.get(name))
            _emit(on_event, "probe_end", device=None, probe=name, result=res)
        for idx in indices:
            info = next(x for x in d.devices if x.index == idx)
            handle = devmod.nvml_handle(d.nvml, idx)
            dev = DeviceResult(index=idx, name=info.name, uuid=info.uuid)
            result.devices.append(dev)
            _emit(on_event, "device_start", device=idx, name=info.name)
            dev.state_before = provenance.gpu_state(d.nvml, handle)
            cp = d.cupy if d.usable else None
            dev_ctx = contextlib.nullcontext() if cp is None else cp.cuda.Device(idx)
            with dev_ctx:
                props_error = None
                try:
                    from probes.properties import collect

                    dev.properties = collect(cp, d.nvml, handle, idx)
                except Exception as e:
                    props_error = f"{type(e).__name__}: {_one_line(e)}"
                    dev.properties = {"index": idx, "name": info.name}
                card = None
                if catalog is not None:
                    from gpuadvisor.catalog import match_device

                    with contextlib.suppress(Exception):
                        card = match_device(catalog, info.name, info.memory_gib)
                dev.catalog_name = card.name if card is not None else None
                first_card = first_card or card
                load: dict[str, Any] = {}
                if catalog_note:
                    dev.flags.append(catalog_note)
                sampler = provenance.StateSampler(d.nvml, handle)
                try:
                    with sampler:
                        for name in sorted([p for p in selected if p in GPU_PROBES], key=lambda n: n == "health"):
                            _emit(on_event, "probe_start", device=idx, probe=name)
                            if name == "properties" and props_error:
                                res = ProbeResult(probe=name, status="failed", reason=props_error)
                            elif cp is None:
                                res = ProbeResult(probe=name, status="skipped",
                                                  reason=d.cupy_reason or "GPU not usable")
                                if name == "properties":
                                    res = ProbeResult(probe=name, status="ok", data=dict(dev.properties),
                                                      reason="NVML only: " + (d.cupy_reason or ""))
                            else:
                                popts = opts.probe_options
                                if name == "health":
                                    popts = {**popts, "health": {**popts.get("health", {}), "load": load,
                                                                 "xid_watcher": xids}}
                                ctx = new_ctx(cp=cp, device_index=idx, props=dev.properties, card=card, options=popts)
                                watch = None
                                if name in LOAD_PROBES:
                                    from probes.health import LoadWatch

                                    watch = LoadWatch(d.nvml, handle)
                                try:
                                    with watch if watch is not None else contextlib.nullcontext():
                                        res = _run_into(dev.probes, name, fn_for(name), ctx, limits.get(name))
                                finally:
                                    keep_torch(ctx)
                                    if watch is not None:
                                        load[name] = watch.summary()
                                _emit(on_event, "probe_end", device=idx, probe=name, result=res)
                                continue
                            dev.probes.append(res)
                            _emit(on_event, "probe_end", device=idx, probe=name, result=res)
                finally:
                    dev.state_after = provenance.gpu_state(d.nvml, handle)
                    dev.flags.extend(flags_for(dev.state_before, dev.state_after, sampler))
                    if sampler.samples:
                        dev.properties["during_run"] = sampler.summary()
        # node probes: once, over every selected GPU
        for name in [p for p in selected if p in NODE_PROBES]:
            _emit(on_event, "probe_start", device="node", probe=name)
            if not d.usable:
                res = ProbeResult(probe=name, status="skipped", reason=d.message or d.cupy_reason or "no usable GPU")
                result.node_probes.append(res)
            else:
                ctx = new_ctx(cp=d.cupy, card=first_card)
                try:
                    res = _run_into(result.node_probes, name, fn_for(name), ctx, limits.get(name))
                finally:
                    keep_torch(ctx)
            _emit(on_event, "probe_end", device="node", probe=name, result=res)
    except Interrupted as e:
        result.complete = False
        res = e.args[0]
        where: Any = next((dv.index for dv in result.devices if res in dv.probes), None)
        if res in result.node_probes:
            where = "node"
        _emit(on_event, "probe_end", device=where, probe=res.probe, result=res)
    except KeyboardInterrupt:
        result.complete = False
