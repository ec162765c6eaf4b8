"""NCCL collectives over a size sweep, one process per GPU: the worker and the bandwidth arithmetic.

The interconnect probe starts one worker per GPU (`python -m probes.collectives CONFIG RANK`).
Each worker joins CuPy's NCCL binding (cupy.cuda.nccl) and, where PyTorch is there, a
torch.distributed NCCL process group in the same process, then times every collective and
size with both, alternating rounds so that both see the same clocks and the same link state.
Results go to `<out>/rank<R>.json`, rewritten after every size, so that a worker killed on
its time limit leaves what it measured.

Sizes and bandwidth follow nccl-tests: S is the whole buffer (all-reduce: the buffer each rank
reduces; all-gather: the gathered output; reduce-scatter: the input that is scattered),
algbw = S / time, busbw = algbw x 2(n-1)/n for all-reduce and x (n-1)/n for the other two.
The time of a size is the slowest rank's (the collective ends when its last rank does).

This module imports neither gpuadvisor nor pydantic: the worker needs only CuPy or PyTorch.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
import traceback
from pathlib import Path
from typing import Any

OPS = ("all_reduce", "all_gather", "reduce_scatter")
MIB = 1 << 20


def bus_factor(op: str, n: int) -> float:
    """nccl-tests' bus bandwidth factor: busbw = algbw x factor."""
    if n <= 1:
        return 0.0
    if op == "all_reduce":
        return 2.0 * (n - 1) / n
    if op in ("all_gather", "reduce_scatter"):
        return (n - 1) / n
    raise ValueError(f"unknown collective {op!r}")


def sweep_sizes(lo: int = MIB, hi: int = 4 << 30) -> list[int]:
    """Powers of two from lo to hi bytes inclusive."""
    out, s = [], lo
    while s <= hi:
        out.append(s)
        s *= 2
    return out


def iters_for(nbytes: int, target_bytes: float = 2e9, lo: int = 5, hi: int = 50) -> int:
    """Enough back-to-back operations per timed round that the round is well past launch noise."""
    return int(max(lo, min(hi, target_bytes // max(nbytes, 1))))


def combine(ranks: list[dict[str, Any]], world: int) -> dict[str, list[dict[str, Any]]]:
    """Per backend and collective, one row per size: slowest rank's time, algbw, busbw (GB/s).

    ranks: each worker's JSON ({"rank", "results": {backend: {op: {str(size): [round ms...]}}}}).
    A size is kept only where every rank timed it.
    """
    out: dict[str, list[dict[str, Any]]] = {}
    by_backend: dict[str, dict[str, dict[int, list[list[float]]]]] = {}
    for r in ranks:
        for backend, ops in (r.get("results") or {}).items():
            for op, sizes in ops.items():
                for size, rounds in sizes.items():
                    if rounds:
                        by_backend.setdefault(backend, {}).setdefault(op, {}).setdefault(int(size), []).append(rounds)
    for backend, ops in by_backend.items():
        for op, sizes in ops.items():
            rows = []
            for size in sorted(sizes):
                per_rank = sizes[size]
                if len(per_rank) < world:
                    continue
                # round k's time is the slowest rank's round k; the figure is the median round,
                # and the best round is kept beside it
                k = min(len(x) for x in per_rank)
                rounds = [max(x[i] for x in per_rank) for i in range(k)]
                med, best = statistics.median(rounds), min(rounds)
                algbw = size / (med / 1e3) / 1e9
                rows.append({
                    "bytes": size,
                    "time_ms": med,
                    "best_time_ms": best,
                    "algbw_gbs": algbw,
                    "busbw_gbs": algbw * bus_factor(op, world),
                    "best_busbw_gbs": size / (best / 1e3) / 1e9 * bus_factor(op, world),
                    "spread": (max(rounds) - min(rounds)) / med if med > 0 else 0.0,
                    "rounds": len(rounds),
                })
            out[f"{backend}.{op}"] = rows
    return out


# --------------------------------------------------------------------------- the worker


def load_cupy_nccl() -> Any:
    """CuPy's NCCL binding. Where CuPy finds no libnccl of its own, the one of the nvidia-nccl wheel
    (which PyTorch brings) is loaded first and the binding imported again."""
    import importlib

    from cupy.cuda import nccl

    if getattr(nccl, "available", True):
        return nccl
    import ctypes

    for base in sys.path:
        for lib in sorted(Path(base or ".").glob("nvidia/nccl/lib/libnccl.so*")):
            try:
                ctypes.CDLL(str(lib), mode=ctypes.RTLD_GLOBAL)
            except OSError:
                continue
            nccl = importlib.reload(nccl)
            if getattr(nccl, "available", True):
                return nccl
    raise ImportError("CuPy's NCCL binding found no libnccl (install nvidia-nccl-cu12/13 or NCCL itself)")


class _CupyNccl:
    name = "cupy"

    def __init__(self, cfg: dict[str, Any], rank: int, device: int) -> None:
        import cupy as cp

        nccl = load_cupy_nccl()
        self.cp, self.nccl = cp, nccl
        cp.cuda.Device(device).use()
        self.stream = cp.cuda.Stream(non_blocking=True)
        uid = bytes.fromhex(cfg["uid"]) if isinstance(cfg["uid"], str) else tuple(cfg["uid"])
        self.comm = nccl.NcclCommunicator(cfg["world"], uid, rank)
        self.version = nccl.get_version()

    def alloc(self, nbytes: int) -> None:
        cp = self.cp
        n = nbytes // 4
        self.send = cp.full(n, 1e-3, dtype=cp.float32)  # not zeros; the values do not change the timing
        self.recv = cp.full(n, 1e-3, dtype=cp.float32)
        cp.cuda.Device().synchronize()

    def op(self, op: str, nbytes: int, world: int) -> Any:
        nccl, s = self.nccl, self.stream.ptr
        count = nbytes // 4
        sp, rp = self.send.data.ptr, self.recv.data.ptr
        if op == "all_reduce":
            return lambda: self.comm.allReduce(sp, rp, count, nccl.NCCL_FLOAT32, nccl.NCCL_SUM, s)
        if op == "all_gather":
            return lambda: self.comm.allGather(sp, rp, count // world, nccl.NCCL_FLOAT32, s)
        return lambda: self.comm.reduceScatter(sp, rp, count // world, nccl.NCCL_FLOAT32, nccl.NCCL_SUM, s)

    def time_round(self, fn: Any, iters: int) -> float:
        cp = self.cp
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        fn()  # aligns the ranks: the start event fires when this one completes on every rank
        start.record(self.stream)
        for _ in range(iters):
            fn()
        stop.record(self.stream)
        stop.synchronize()
        return cp.cuda.get_elapsed_time(start, stop) / iters

    def check(self, rank: int, world: int) -> float:
        """All-reduce of (rank+1) everywhere: every element must be n(n+1)/2."""
        cp = self.cp
        n = MIB // 4
        a = cp.full(n, rank + 1, dtype=cp.float32)
        b = cp.full(n, -1, dtype=cp.float32)
        cp.cuda.Device().synchronize()  # filled on the default stream; ours does not wait for it
        self.comm.allReduce(a.data.ptr, b.data.ptr, n, self.nccl.NCCL_FLOAT32, self.nccl.NCCL_SUM, self.stream.ptr)
        self.stream.synchronize()
        return float(cp.abs(b - world * (world + 1) / 2).max())

    def free(self) -> None:
        self.send = self.recv = None
        self.cp.get_default_memory_pool().free_all_blocks()

    def close(self) -> None:
        self.free()
        self.comm.destroy()


class _TorchDist:
    name = "torch"

    def __init__(self, cfg: dict[str, Any], rank: int, device: int) -> None:
        import torch
        import torch.distributed as dist

        self.torch, self.dist = torch, dist
        torch.cuda.set_device(device)
        self.dev = torch.device("cuda", device)
        dist.init_process_group("nccl", init_method=cfg["torch_init"], rank=rank, world_size=cfg["world"],
                                device_id=self.dev)
        self.stream = torch.cuda.current_stream(self.dev)
        v = getattr(torch.cuda.nccl, "version", lambda: None)()
        self.version = ".".join(map(str, v)) if isinstance(v, tuple) else v

    def alloc(self, nbytes: int) -> None:
        torch = self.torch
        n = nbytes // 4
        self.send = torch.full((n,), 1e-3, device=self.dev, dtype=torch.float32)
        self.recv = torch.full((n,), 1e-3, device=self.dev, dtype=torch.float32)
        torch.cuda.synchronize(self.dev)

    def op(self, op: str, nbytes: int, world: int) -> Any:
        dist = self.dist
        count = nbytes // 4
        send, recv = self.send[:count], self.recv[:count]
        if op == "all_reduce":
            # in place on the output buffer: torch.distributed has no out-of-place all-reduce
            return lambda: dist.all_reduce(recv)
        if op == "all_gather":
            return lambda: dist.all_gather_into_tensor(recv, send[: count // world])
        return lambda: dist.reduce_scatter_tensor(recv[: count // world], send)

    def time_round(self, fn: Any, iters: int) -> float:
        torch = self.torch
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        fn()
        start.record(self.stream)
        for _ in range(iters):
            fn()
        stop.record(self.stream)
        stop.synchronize()
        return start.elapsed_time(stop) / iters

    def check(self, rank: int, world: int) -> float:
        torch = self.torch
        a = torch.full((MIB // 4,), float(rank + 1), device=self.dev)
        self.dist.all_reduce(a)
        torch.cuda.synchronize(self.dev)
        return float((a - world * (world + 1) / 2).abs().max())

    def free(self) -> None:
        self.send = self.recv = None
        self.torch.cuda.empty_cache()

    def close(self) -> None:
        self.free()
        self.dist.destroy_process_group()


def _agree(out: Path, world: int, mine: set[str], t_end: float) -> set[str]:
    """The backends every rank joined, read from the others' files (waits for them, up to the limit)."""
    common = set(mine)
    wait_end = min(t_end, time.monotonic() + 120)
    for r in range(world):
        path = out / f"rank{r}.json"
        while True:
            try:
                data = json.loads(path.read_text())
                if "ready" in data:
                    common &= set(data["ready"])
                    break
            except (OSError, ValueError):
                pass
            if time.monotonic() > wait_end:
                return set()
            time.sleep(0.05)
    return common


def worker(cfg: dict[str, Any], rank: int) -> dict[str, Any]:
    """Join every backend named in cfg, sweep, and write results after every size."""
    out_path = Path(cfg["out"]) / f"rank{rank}.json"
    world, device = cfg["world"], cfg["devices"][rank]
    t_end = time.monotonic() + float(cfg.get("time_limit_s", 300))
    res: dict[str, Any] = {"rank": rank, "device": device, "pid": os.getpid(), "results": {}, "errors": {},
                           "versions": {}, "checks": {}, "done": False}

    def save() -> None:
        tmp = out_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(res))
        os.replace(tmp, out_path)

    if "torch" in cfg["backends"]:
        # PyTorch first: its libnccl (from the nvidia-nccl wheel it was built against) is then the one
        # loaded, and CuPy's binding resolves to it too, so both backends run one and the same NCCL
        try:
            import torch  # noqa: F401
        except Exception as e:
            res["errors"]["torch"] = f"{type(e).__name__}: {' '.join(str(e).split())[:300]}"
    backends: list[Any] = []
    for name, cls in (("cupy", _CupyNccl), ("torch", _TorchDist)):
        if name not in cfg["backends"] or name in res["errors"]:
            continue
        try:
            b = cls(cfg, rank, device)
            err = b.check(rank, world)
            res["checks"][name] = err
            if err != 0.0:
                raise RuntimeError(f"all-reduce check: wrong sum (max error {err})")
            res["versions"][name] = b.version
            backends.append(b)
        except Exception as e:
            res["errors"][name] = f"{type(e).__name__}: {' '.join(str(e).split())[:300]}"
    # every rank must run the same backends, or the others would wait for it forever
    res["ready"] = [b.name for b in backends]
    save()
    agreed = _agree(Path(cfg["out"]), world, {b.name for b in backends}, t_end)
    for b in [b for b in backends if b.name not in agreed]:
        res["errors"].setdefault(b.name, "another rank could not join this backend")
        backends.remove(b)
    sizes = [int(s) for s in cfg["sizes"]]
    rounds = int(cfg.get("rounds", 3))
    for b in list(backends):
        try:
            b.alloc(max(sizes))
        except Exception as e:
            res["errors"][b.name] = f"allocating {max(sizes)} bytes: {type(e).__name__}: {e}"
            backends.remove(b)
    save()
    for op in cfg["ops"]:
        for size in sizes:
            if time.monotonic() > t_end:
                res["errors"]["time"] = f"time limit reached before {op} at {size} bytes"
                save()
                return res
            fns = {}
            for b in backends:
                try:
                    fns[b.name] = b.op(op, size, world)
                except Exception as e:
                    res["errors"][f"{b.name}.{op}"] = f"{type(e).__name__}: {e}"
            iters = iters_for(size)
            for _ in range(rounds):
                for b in backends:  # alternate: both backends see the same clocks and link state
                    if b.name not in fns:
                        continue
                    try:
                        ms = b.time_round(fns[b.name], iters)
                    except Exception as e:
                        res["errors"][f"{b.name}.{op}"] = f"{type(e).__name__}: {' '.join(str(e).split())[:300]}"
                        fns.pop(b.name)
                        continue
                    res["results"].setdefault(b.name, {}).setdefault(op, {}).setdefault(str(size), []).append(ms)
            save()
    for b in backends:
        try:
            b.close()
        except Exception as e:
            res["errors"][f"{b.name}.close"] = f"{type(e).__name__}: {e}"
    res["done"] = True
    save()
    return res


def _watchdog(limit_s: float) -> None:
    """Exit hard when the probe that started this worker is gone, or well past the time limit:
    a rank blocked in a collective whose peer died would otherwise hold its GPU for ever."""
    import threading

    parent, t_end = os.getppid(), time.monotonic() + limit_s + 60

    def watch() -> None:
        while True:
            time.sleep(1.0)
            if os.getppid() != parent or time.monotonic() > t_end:
                os._exit(3)

    threading.Thread(target=watch, name="gpuadvisor-nccl-watchdog", daemon=True).start()


def main(argv: list[str]) -> int:
    cfg = json.loads(Path(argv[0]).read_text())
    rank = int(argv[1])
    _watchdog(float(cfg.get("time_limit_s", 300)))
    try:
        worker(cfg, rank)
    except Exception:
        traceback.print_exc()
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
