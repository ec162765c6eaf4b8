"""Between the GPUs of one node: topology, peer-to-peer copies, NCCL collectives.

A node probe: it runs once per run, over every selected GPU, and only where there are two or
more (otherwise it is skipped, saying why). Three parts, each in its own try so that one
failing leaves the others:
- topology (probes.topology): NVML common ancestor and NVLinks for every pair;
- peer copies (probes.p2p): bandwidth one way and both ways, latency, against PyTorch's
  `tensor.copy_` across the same devices in the same run;
- NCCL collectives (probes.collectives): all-reduce, all-gather and reduce-scatter over a size
  sweep, one process per GPU, CuPy's NCCL binding against torch.distributed in the same
  processes, bus bandwidth as nccl-tests defines it.
The datasheet figure is the NVLink rate per direction (links x per-link rate from NVML, else
the catalog's bidirectional figure / 2): both a peer copy and NCCL's bus bandwidth are bounded
by one direction of the link.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from gpuadvisor.core.results import Measurement, ProbeResult, Status
from probes.base import ProbeContext, measurement
from probes.collectives import MIB, OPS, combine, sweep_sizes
from probes.timing import ProbeSkipped

NAME = "interconnect"
GIB = 1 << 30
# stable measurement keys: the sizes at which bus bandwidth becomes a figure
FIGURE_SIZES = {"16m": 16 * MIB, "256m": 256 * MIB, "1g": GIB, "4g": 4 * GIB}
SIZE_LABELS = {"16m": "16 MiB", "256m": "256 MiB", "1g": "1 GiB", "4g": "4 GiB"}
OP_KEYS = {"all_reduce": "allreduce", "all_gather": "allgather", "reduce_scatter": "reducescatter"}
OP_LABELS = {"all_reduce": "all-reduce", "all_gather": "all-gather", "reduce_scatter": "reduce-scatter"}


def busbw_key(op: str, size_label: str) -> str:
    return f"interconnect.{OP_KEYS[op]}_busbw_{size_label}"


def quick_sizes() -> list[int]:
    return [MIB, 16 * MIB, 256 * MIB, GIB]


def per_direction_datasheet(topo: dict[str, Any] | None, card: Any) -> tuple[float | None, str | None]:
    """The slowest pair's NVLink rate per direction (NVML), else the catalog's figure / 2."""
    pairs = (topo or {}).get("pairs") or []
    rates = [p.get("gbs_per_direction") for p in pairs]
    if pairs and all(rates):
        worst = min(pairs, key=lambda p: p["gbs_per_direction"])
        return float(worst["gbs_per_direction"]), (
            f"NVLink {worst['version']} x{worst['links']} from NVML, per direction")
    if card is not None and getattr(card, "interconnect_gbs", None):
        if pairs and not all(p.get("nvlink") for p in pairs):
            return None, None  # some pair is not on NVLink: the catalog's NVLink figure does not apply
        return card.interconnect_gbs / 2, f"catalog: {card.name} {card.interconnect_gbs:g} GB/s bidirectional / 2"
    return None, None


def pair_datasheet(topo: dict[str, Any] | None, card: Any, a: int, b: int) -> tuple[float | None, str | None]:
    for p in (topo or {}).get("pairs") or []:
        if {p["a"], p["b"]} == {a, b}:
            if p.get("gbs_per_direction"):
                return float(p["gbs_per_direction"]), f"NVLink {p['version']} x{p['links']} from NVML, per direction"
            if p.get("nvlink") is False and p.get("level_name"):
                return None, None
    return per_direction_datasheet(None, card)


# --------------------------------------------------------------------------- NCCL processes


def nccl_backends(ctx: ProbeContext) -> tuple[list[str], dict[str, str]]:
    """Which of cupy / torch can run NCCL here, and why not for the others."""
    have, why = [], {}
    try:
        from probes.collectives import load_cupy_nccl

        load_cupy_nccl().get_version()
        have.append("cupy")
    except Exception as e:
        why["cupy"] = f"{type(e).__name__}: {' '.join(str(e).split())[:200]}"
    torch = ctx.torch()
    if torch is None:
        why["torch"] = ctx.torch_reason or "PyTorch not available"
    else:
        try:
            import torch.distributed as dist

            if not (dist.is_available() and dist.is_nccl_available()):
                raise RuntimeError("torch.distributed without NCCL")
            have.append("torch")
        except Exception as e:
            why["torch"] = f"{type(e).__name__}: {e}"
    return have, why


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run_collectives(
    devices: list[int],
    sizes: list[int],
    backends: list[str],
    *,
    ops: tuple[str, ...] = OPS,
    rounds: int = 3,
    time_limit_s: float = 300.0,
    python: str = sys.executable,
) -> dict[str, Any]:
    """Start one worker per GPU, wait for them (killing them at the limit), gather their files."""
    cfg: dict[str, Any] = {"world": len(devices), "devices": devices, "sizes": sizes, "ops": list(ops),
                           "rounds": rounds, "backends": backends, "time_limit_s": max(10.0, time_limit_s - 15)}
    if "cupy" in backends:
        from probes.collectives import load_cupy_nccl

        uid = load_cupy_nccl().get_unique_id()  # bytes in CuPy 14, a tuple of ints before
        cfg["uid"] = list(uid)
        cfg["uid_bytes"] = isinstance(uid, bytes)
    if "torch" in backends:
        cfg["torch_init"] = f"tcp://127.0.0.1:{_free_port()}"
    root = str(Path(__file__).resolve().parents[1])
    env = dict(os.environ)
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["PYTHONUNBUFFERED"] = "1"
    out: dict[str, Any] = {"config": {k: v for k, v in cfg.items() if k != "uid"}, "ranks": [], "errors": []}
    with tempfile.TemporaryDirectory(prefix="gpuadvisor-nccl-") as tmp:
        cfg["out"] = tmp
        cfg_path = Path(tmp) / "config.json"
        cfg_path.write_text(json.dumps(cfg))
        procs = []
        for rank in range(len(devices)):
            err = open(Path(tmp) / f"rank{rank}.err", "wb")  # noqa: SIM115 - closed below
            procs.append((subprocess.Popen([python, "-m", "probes.collectives", str(cfg_path), str(rank)],
                                           stdout=subprocess.DEVNULL, stderr=err, env=env, cwd=root,
                                           start_new_session=True), err))
        t_end = time.monotonic() + time_limit_s
        first_fail: float | None = None
        try:
            while any(p.poll() is None for p, _ in procs):
                now = time.monotonic()
                if first_fail is None and any(p.poll() not in (None, 0) for p, _ in procs):
                    first_fail = now
                if now > t_end or (first_fail is not None and now - first_fail > 30):
                    out["errors"].append("workers killed: " + ("time limit reached" if now > t_end
                                                               else "another rank failed 30 s earlier"))
                    break
                time.sleep(0.1)
        finally:
            for p, f in procs:
                if p.poll() is None:
                    with contextlib.suppress(Exception):
                        os.killpg(p.pid, signal.SIGKILL)
                    with contextlib.suppress(Exception):
                        p.wait(timeout=10)
                f.close()
        for rank, (p, _) in enumerate(procs):
            path = Path(tmp) / f"rank{rank}.json"
            try:
                out["ranks"].append(json.loads(path.read_text()))
            except (OSError, ValueError):
                out["ranks"].append({"rank": rank, "results": {}, "errors": {}})
            if p.returncode not in (0, None):
                tail = (Path(tmp) / f"rank{rank}.err").read_text(errors="replace").strip().splitlines()[-3:]
                out["errors"].append(f"rank {rank} exited with {p.returncode}: {' | '.join(tail)[:400]}")
    out["sweep"] = combine(out["ranks"], len(devices))
    return out


# --------------------------------------------------------------------------- the probe


def _nccl_measurements(sweep: dict[str, list[dict[str, Any]]], primary: str, versions: dict[str, Any],
                       ds: tuple[float | None, str | None], ranks: int | None = None) -> list[Measurement]:
    """Bus bandwidth at the figure sizes; `ranks` marks a sweep over fewer GPUs than the node's (key suffix
    `_<n>gpus`), so the node's own figures keep their keys."""
    ms = []
    suffix, over = (f"_{ranks}gpus", f", {ranks} GPUs") if ranks else ("", "")
    for op in OPS:
        rows = {r["bytes"]: r for r in sweep.get(f"{primary}.{op}", [])}
        refs = {r["bytes"]: r for r in sweep.get(f"torch.{op}", [])} if primary != "torch" else {}
        for label, size in FIGURE_SIZES.items():
            row = rows.get(size)
            if row is None:
                continue
            ref = refs.get(size)
            ms.append(measurement(
                busbw_key(op, label) + suffix, f"NCCL {OP_LABELS[op]} bus bandwidth, {SIZE_LABELS[label]}{over}",
                row["busbw_gbs"], "GB/s", spread=row["spread"], datasheet=ds,
                reference=ref["busbw_gbs"] if ref else None,
                reference_label="torch.distributed busbw" if ref else None,
                backend="CuPy NCCL (cupy.cuda.nccl)" if primary == "cupy" else "torch.distributed",
                nccl_version=versions.get(primary), bytes=size, algbw_gbs=row["algbw_gbs"],
                time_ms=row["time_ms"], best_busbw_gbs=row["best_busbw_gbs"],
            ))
    return ms


def _p2p_measurements(p2p: dict[str, Any], topo: dict[str, Any] | None, card: Any) -> list[Measurement]:
    ms = []
    for row in p2p.get("one_way", []):
        i, j = row["src"], row["dst"]
        if "gbs" not in row:
            continue
        staged = not row["peer_access"]
        ms.append(measurement(
            f"interconnect.p2p_{i}_{j}", f"P2P copy GPU {i} -> {j}" + (" (staged through host)" if staged else ""),
            row["gbs"], "GB/s", spread=row.get("gbs_spread"), datasheet=pair_datasheet(topo, card, i, j),
            reference=row.get("torch_gbs"), reference_label="tensor.copy_ across devices",
            path=row["path"], bytes=row["bytes"], best_gbs=row.get("best_gbs"),
        ))
        ms.append(measurement(
            f"interconnect.p2p_latency_{i}_{j}", f"P2P latency GPU {i} -> {j} (4-byte copy)",
            row.get("latency_memcpy_us"), "us", path=row["path"],
            load_latency_us=row.get("latency_load_us"),
            note="time per 4-byte cudaMemcpyPeerAsync in a stream of them; load_latency_us is one dependent "
                 "4-byte load of the peer's memory by a kernel",
        ))
    for row in p2p.get("both_ways", []):
        a, b = row["a"], row["b"]
        ds, src = pair_datasheet(topo, card, a, b)
        ms.append(measurement(
            f"interconnect.p2p_bidir_{a}_{b}", f"P2P copy GPU {a} <-> {b}, both ways at once",
            row["gbs"], "GB/s", spread=row.get("gbs_spread"),
            datasheet=(2 * ds, f"{src}, x2 (both directions)") if ds else (None, None),
            bytes_each_way=row["bytes_each_way"], peer_access=row["peer_access"],
        ))
    return ms


def _pair_collectives(ctx: ProbeContext, data: dict[str, Any], pair: list[int], sizes: list[int],
                      backends: list[str], ds: tuple[float | None, str | None]) -> list[Measurement]:
    """The same collectives over two of the node's GPUs, at the figure sizes only: how bus bandwidth
    changes from 2 ranks to all of them (a ring over NVSwitch should hold it; a PCIe tree should not)."""
    pair_sizes = [s for s in sizes if s in FIGURE_SIZES.values()]
    remaining = ctx.deadline.remaining
    if not pair_sizes or (remaining != float("inf") and remaining < 30):
        data["errors"]["nccl 2 gpus"] = "skipped: " + ("no figure size in the sweep" if not pair_sizes
                                                       else f"{remaining:.0f} s left")
        return []
    limit = min(120.0, remaining - 5) if remaining != float("inf") else 120.0
    pairs = run_collectives(pair, pair_sizes, backends, rounds=3, time_limit_s=max(20.0, limit))
    data["nccl_2gpus"] = pairs["sweep"]
    for i, err in enumerate(pairs["errors"]):
        data["errors"][f"nccl 2 gpus {i}"] = err
    versions: dict[str, Any] = {}
    for r in pairs["ranks"]:
        versions.update(r.get("versions") or {})
    primary = next((b for b in ("cupy", "torch") if any(k.startswith(b + ".") for k in pairs["sweep"])), None)
    return _nccl_measurements(pairs["sweep"], primary, versions, ds, ranks=len(pair)) if primary else []


def _min_free(cp: Any, indices: list[int]) -> int:
    frees = []
    for i in indices:
        with cp.cuda.Device(i):
            frees.append(int(cp.cuda.runtime.memGetInfo()[0]))
    return min(frees)


def run(ctx: ProbeContext) -> ProbeResult:
    t0 = time.perf_counter()
    indices = list(ctx.devices)
    if len(indices) < 2:
        raise ProbeSkipped(f"needs two or more GPUs; this run has {len(indices)}"
                           + (f" (GPU {indices[0]})" if indices else ""))
    cp = ctx.gpu()
    opts = dict(ctx.options.get(NAME, {}))
    data: dict[str, Any] = {"devices": indices, "errors": {}}
    ms: list[Measurement] = []
    topo = None
    if ctx.nvml is not None:
        try:
            from gpuadvisor.core.provenance import nvml_handle
            from probes.topology import topology

            topo = topology(ctx.nvml, [nvml_handle(ctx.nvml, i) for i in indices], indices)
            data["topology"] = topo
        except Exception as e:
            data["errors"]["topology"] = f"{type(e).__name__}: {e}"
    else:
        data["errors"]["topology"] = "NVML not available: topology not read"
    ds = per_direction_datasheet(topo, ctx.card)
    data["datasheet_per_direction_gbs"], data["datasheet_source"] = ds
    torch = ctx.torch()
    if torch is not None:
        from probes.base import wait_for_torch

        wait_for_torch()
    free = _min_free(cp, indices)
    if opts.get("p2p", True):
        try:
            from probes.p2p import measure_pairs

            nbytes = int(opts.get("p2p_bytes") or (256 * MIB if ctx.quick else GIB))
            nbytes = max(MIB, min(nbytes, free // 8))
            p2p = measure_pairs(cp, indices, nbytes, torch=torch, rounds=3 if ctx.quick else 5,
                                repeats=5 if ctx.quick else 10, deadline=ctx.deadline, log=ctx.log)
            data["p2p"] = p2p
            ms += _p2p_measurements(p2p, topo, ctx.card)
        except Exception as e:
            if type(e).__name__ == "ProbeTimeout":
                raise
            data["errors"]["p2p"] = f"{type(e).__name__}: {' '.join(str(e).split())[:400]}"
        finally:
            ctx.free_pools()
    if opts.get("nccl", True):
        backends, why = nccl_backends(ctx)
        data["nccl_unavailable"] = why
        if backends:
            sizes = [int(s) for s in opts["sizes"]] if opts.get("sizes") else (
                quick_sizes() if ctx.quick else sweep_sizes(MIB, 4 * GIB))
            # every backend holds send + receive buffers of the largest size on every GPU
            cap = free // (2 * len(backends) + 2)
            dropped = [s for s in sizes if s > cap]
            sizes = [s for s in sizes if s <= cap]
            if dropped:
                data["errors"]["nccl_sizes"] = f"sizes over {cap >> 20} MiB skipped: not enough free GPU memory"
            ctx.free_pools()
            remaining = ctx.deadline.remaining
            limit = float(opts.get("nccl_time_limit_s") or (remaining - 5 if remaining != float("inf") else 600))
            nccl = run_collectives(indices, sizes, backends, rounds=3 if ctx.quick else 5,
                                   time_limit_s=max(20.0, limit))
            data["nccl"] = nccl["sweep"]
            data["nccl_config"] = nccl["config"]
            versions: dict[str, Any] = {}
            for r in nccl["ranks"]:
                versions.update(r.get("versions") or {})
                for k, v in (r.get("errors") or {}).items():
                    data["errors"][f"nccl rank {r.get('rank')} {k}"] = v
            data["nccl_versions"] = versions
            for i, err in enumerate(nccl["errors"]):
                data["errors"][f"nccl {i}"] = err
            primary = next((b for b in ("cupy", "torch") if any(k.startswith(b + ".") for k in nccl["sweep"])), None)
            data["nccl_primary"] = primary
            if primary:
                ms += _nccl_measurements(nccl["sweep"], primary, versions, ds)
            if len(indices) > 2 and opts.get("nccl_pairs", True):
                ms += _pair_collectives(ctx, data, indices[:2], sizes, backends, ds)
        else:
            data["errors"]["nccl"] = "no NCCL binding: " + "; ".join(f"{k}: {v}" for k, v in why.items())
    errors = data["errors"]
    status: Status = "ok" if ms else "failed"
    reason = "; ".join(f"{k}: {v}" for k, v in errors.items())[:1000] or None
    return ProbeResult(probe=NAME, status=status, reason=reason, duration_s=time.perf_counter() - t0,
                       measurements=ms, data=data)
