"""Peer-to-peer copies between every GPU pair: bandwidth one way and both ways at once, and latency.

Copies are cudaMemcpyPeerAsync on the source device's stream (as PyTorch does for a copy
across devices). Where peer access is off the driver stages the copy through host memory:
such figures are labelled `staged through host`. The same-run reference is PyTorch's
`dst.copy_(src)` across the same two devices, timed in alternating rounds with ours.
Latency is the time of one 4-byte peer copy in a stream of them (copy-engine latency), and,
with peer access, one dependent load of the peer's memory by a kernel (a pointer chase).
"""

from __future__ import annotations

import statistics
from typing import Any

import numpy as np

from probes.base import compiled
from probes.timing import Deadline

CHASE_SOURCE = r"""
extern "C" __global__ void chase(const unsigned int* next, unsigned int start, int steps, unsigned int* out) {
    unsigned int i = start;
    for (int s = 0; s < steps; ++s) i = __ldcg(next + i);  /* L2 and below: a peer's memory, not L1 */
    *out = i;
}
"""
CHASE_ENTRIES = 1 << 22  # 16 MiB of indices, one random cycle through them
CHASE_STEPS = 4000


def _fast_cycle(n: int, seed: int = 5) -> np.ndarray:
    """One cycle through n entries in random order (next[order[k]] = order[k+1]), vectorised."""
    order = np.random.default_rng(seed).permutation(n).astype(np.uint32)
    nxt = np.empty(n, dtype=np.uint32)
    nxt[order] = np.roll(order, -1)
    return nxt


def enable_peer_access(cp: Any, indices: list[int]) -> dict[tuple[int, int], bool]:
    """Turn on peer access for every ordered pair that supports it; returns which pairs have it."""
    rt = cp.cuda.runtime
    access: dict[tuple[int, int], bool] = {}
    for i in indices:
        for j in indices:
            if i == j:
                continue
            ok = bool(rt.deviceCanAccessPeer(i, j))
            if ok:
                with cp.cuda.Device(i):
                    try:
                        rt.deviceEnablePeerAccess(j)
                    except Exception as e:  # already enabled (by us or by PyTorch) is fine
                        if "already" not in str(e).lower() and "PeerAccessAlreadyEnabled" not in str(e):
                            ok = False
            access[(i, j)] = ok
    return access


class PeerBuffers:
    """One source and one destination buffer of `nbytes` on every device, random bytes in the sources."""

    def __init__(self, cp: Any, indices: list[int], nbytes: int) -> None:
        self.cp, self.nbytes = cp, nbytes
        self.src: dict[int, Any] = {}
        self.dst: dict[int, Any] = {}
        self.streams: dict[int, Any] = {}
        for i in indices:
            with cp.cuda.Device(i):
                x = cp.arange(nbytes // 4, dtype=cp.uint32) + cp.uint32(977 * i)  # hash-random bytes
                x *= cp.uint32(2654435761)
                x ^= x >> 13
                self.src[i] = x.view(cp.uint8)
                self.dst[i] = cp.empty(nbytes, dtype=cp.uint8)
                self.streams[i] = cp.cuda.Stream(non_blocking=True)

    def copy(self, i: int, j: int, nbytes: int | None = None) -> None:
        """Enqueue src[i] -> dst[j] on device i's stream."""
        n = self.nbytes if nbytes is None else nbytes
        with self.cp.cuda.Device(i):
            self.cp.cuda.runtime.memcpyPeerAsync(self.dst[j].data.ptr, j, self.src[i].data.ptr, i, n,
                                                 self.streams[i].ptr)

    def verify(self, i: int, j: int) -> bool:
        """The last MiB that arrived on j equals what left i."""
        cp = self.cp
        self.copy(i, j)
        self.streams[i].synchronize()
        tail = 1 << 20
        with cp.cuda.Device(i):
            a = cp.asnumpy(self.src[i][-tail:])
        with cp.cuda.Device(j):
            b = cp.asnumpy(self.dst[j][-tail:])
        return bool(np.array_equal(a, b))

    def time_one_way(self, i: int, j: int, repeats: int, nbytes: int | None = None) -> float:
        """Milliseconds per copy, `repeats` copies between one pair of events on i's stream."""
        cp = self.cp
        s = self.streams[i]
        with cp.cuda.Device(i):
            start, stop = cp.cuda.Event(), cp.cuda.Event()
            self.copy(i, j, nbytes)  # warm
            start.record(s)
            for _ in range(repeats):
                self.copy(i, j, nbytes)
            stop.record(s)
            stop.synchronize()
            return cp.cuda.get_elapsed_time(start, stop) / repeats

    def time_both_ways(self, i: int, j: int, repeats: int) -> float:
        """Milliseconds for i->j and j->i at once: both streams start on one event and end on both."""
        cp = self.cp
        si, sj = self.streams[i], self.streams[j]
        with cp.cuda.Device(i):
            start, stop = cp.cuda.Event(), cp.cuda.Event()
        with cp.cuda.Device(j):
            done_j = cp.cuda.Event(disable_timing=True)
        self.copy(i, j)
        self.copy(j, i)
        si.synchronize()
        sj.synchronize()
        with cp.cuda.Device(i):
            start.record(si)
        sj.wait_event(start)
        for _ in range(repeats):
            self.copy(i, j)
            self.copy(j, i)
        with cp.cuda.Device(j):
            done_j.record(sj)
        si.wait_event(done_j)
        with cp.cuda.Device(i):
            stop.record(si)
        stop.synchronize()
        return cp.cuda.get_elapsed_time(start, stop) / repeats

    def close(self) -> None:
        self.src.clear()
        self.dst.clear()


def chase_latency_us(cp: Any, i: int, j: int, steps: int = CHASE_STEPS) -> float:
    """Microseconds per dependent 4-byte load by one thread on GPU i of memory on GPU j."""
    nxt = _fast_cycle(CHASE_ENTRIES)
    with cp.cuda.Device(j):
        table = cp.asarray(nxt)
    with cp.cuda.Device(i):
        k = compiled(cp, "p2p_chase", CHASE_SOURCE, ("chase",))["chase"]
        out = cp.zeros(1, dtype=cp.uint32)
        args = (table, cp.uint32(0), cp.int32(steps), out)
        k((1,), (1,), args)  # warm: load the module, touch the TLB
        cp.cuda.Device(i).synchronize()
        times = []
        for _ in range(3):
            start, stop = cp.cuda.Event(), cp.cuda.Event()
            start.record()
            k((1,), (1,), args)
            stop.record()
            stop.synchronize()
            times.append(cp.cuda.get_elapsed_time(start, stop))
        # the walk must have followed the cycle: after `steps` hops from 0, the same place as NumPy's
        expect = 0
        for _ in range(steps):
            expect = int(nxt[expect])
        if int(out.get()[0]) != expect:
            raise RuntimeError("pointer chase ended in the wrong place")
    return statistics.median(times) * 1e3 / steps


def torch_copy(torch: Any, i: int, j: int, nbytes: int) -> tuple[Any, Any]:
    """PyTorch's copy across devices (dst on j, src on i) as a callable, and its device for events."""
    src = torch.randint(0, 255, (nbytes,), dtype=torch.uint8, device=f"cuda:{i}")
    dst = torch.empty(nbytes, dtype=torch.uint8, device=f"cuda:{j}")
    return (lambda: dst.copy_(src, non_blocking=True)), (src, dst)


def time_torch_copy(torch: Any, fn: Any, i: int, repeats: int) -> float:
    """Milliseconds per copy on the source device's current stream (where PyTorch issues it)."""
    with torch.cuda.device(i):
        stream = torch.cuda.current_stream(i)
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        fn()
        torch.cuda.synchronize(i)
        start.record(stream)
        for _ in range(repeats):
            fn()
        stop.record(stream)
        stop.synchronize()
        return start.elapsed_time(stop) / repeats


def measure_pairs(
    cp: Any,
    indices: list[int],
    nbytes: int,
    *,
    torch: Any = None,
    rounds: int = 3,
    repeats: int = 10,
    deadline: Deadline | None = None,
    log: Any = None,
) -> dict[str, Any]:
    """Every ordered pair one way, every unordered pair both ways, latency; the raw table."""
    access = enable_peer_access(cp, indices)
    bufs = PeerBuffers(cp, indices, nbytes)
    pairs: list[dict[str, Any]] = []
    try:
        for i in indices:
            for j in indices:
                if i == j:
                    continue
                if deadline is not None:
                    deadline.check(f"P2P {i}->{j}")
                row: dict[str, Any] = {"src": i, "dst": j, "bytes": nbytes, "peer_access": access[(i, j)],
                                       "path": "peer" if access[(i, j)] else "staged through host"}
                if not bufs.verify(i, j):
                    row["error"] = "copied bytes differ"
                    pairs.append(row)
                    continue
                tfn = None
                if torch is not None:
                    try:
                        tfn, _keep = torch_copy(torch, i, j, nbytes)
                    except Exception as e:
                        row["reference_error"] = f"{type(e).__name__}: {e}"
                ours, theirs = [], []
                for _ in range(rounds):  # alternate, so that both see the same link and clocks
                    ours.append(bufs.time_one_way(i, j, repeats))
                    if tfn is not None:
                        try:
                            theirs.append(time_torch_copy(torch, tfn, i, repeats))
                        except Exception as e:
                            row["reference_error"] = f"{type(e).__name__}: {e}"
                            tfn = None
                tfn = _keep = None
                row.update(_rates(ours, nbytes, "gbs"))
                if theirs:
                    row.update(_rates(theirs, nbytes, "torch_gbs"))
                row["latency_memcpy_us"] = 1e3 * min(bufs.time_one_way(i, j, 200, nbytes=4) for _ in range(3))
                if access[(i, j)]:
                    try:
                        row["latency_load_us"] = chase_latency_us(cp, i, j)
                    except Exception as e:
                        row["latency_load_error"] = f"{type(e).__name__}: {e}"
                pairs.append(row)
                if log:
                    log(f"P2P {i}->{j}: {row.get('gbs', 0):.0f} GB/s")
        both = []
        for a in indices:
            for b in indices:
                if a < b:
                    if deadline is not None:
                        deadline.check(f"P2P {a}<->{b}")
                    times = [bufs.time_both_ways(a, b, repeats) for _ in range(rounds)]
                    both.append({"a": a, "b": b, "bytes_each_way": nbytes,
                                 "peer_access": access[(a, b)] and access[(b, a)],
                                 **_rates(times, 2 * nbytes, "gbs")})
    finally:
        bufs.close()
        for i in indices:
            with cp.cuda.Device(i):
                cp.get_default_memory_pool().free_all_blocks()
    return {"one_way": pairs, "both_ways": both,
            "peer_access": {f"{i}->{j}": v for (i, j), v in access.items()}}


def _rates(times_ms: list[float], nbytes: int, key: str) -> dict[str, float]:
    """Bandwidth of the median round (the figure), of the best round, and the rounds' spread."""
    med, best = statistics.median(times_ms), min(times_ms)
    return {key: nbytes / (med / 1e3) / 1e9, f"best_{key}": nbytes / (best / 1e3) / 1e9,
            f"{key}_spread": (max(times_ms) - min(times_ms)) / med if med > 0 else 0.0}
