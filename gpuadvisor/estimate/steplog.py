"""A training step recorded as events, replayed with any parameters frozen: `--freeze`/`--trainable` without
PyTorch. Pure data, no torch (trace/steplogger.py records it).

The tracer runs one training step with every parameter trainable and writes down, beside the ops, what autograd
did: each backward node and where its gradient inputs come from (other nodes, or a parameter's AccumulateGrad),
which of a node's backward kernels feed which of its inputs' gradients, every storage's allocation and free, and
which tensors each node saved for its backward. Freezing a set of parameters then changes the step the way
autograd changes it:

- a node exists only where one of its inputs needs a gradient (it reaches a trainable parameter); a frozen base
  records no nodes, and its forward kernels count as untracked (opcost's host time);
- a live node runs only the kernels whose outputs feed a gradient still wanted (no weight-gradient GEMM for a
  frozen weight, no input gradient into a frozen base); a kernel computing several gradients (a convolution, a
  layer or group norm backward; a batch norm backward writes its input gradient whatever its mask) writes only
  the wanted ones, and a convolution's FLOPs count only those;
- a tensor a node saved stays alive until the node's backward has run only where the node exists and one of the
  kernels reading it still runs (autograd saves `x` of `x @ W` only for W's gradient); otherwise it is freed
  where the forward drops it, which the trace knows because it recorded saved tensors by copy (the originals
  then live only as long as the forward holds them);
- autocast caches its casts of trainable weights until the forward ends; a frozen weight's cast is freed after
  its last reader;
- the optimizer updates, and keeps states and gradients for, the trainable parameters only.

The forward's ops do not change, with one exception PyTorch makes: at::matmul folds a 3-D input into one GEMM by
copying it only when the weight needs a gradient, and runs a batched GEMM on it otherwise (the log keeps both).
tests/test_variants.py checks replays against traces of the same settings; tools/check_variants.py compares them
in step time and peak memory.
"""

from __future__ import annotations

import fnmatch
import gzip
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, NamedTuple

from gpuadvisor.core.errors import UserError
from gpuadvisor.estimate.graph import (
    MEMORY_ITEMS,
    BatchGraph,
    ConvGradients,
    MemoryPeak,
    Op,
    OpClass,
    OpGraph,
    Phase,
    StreamLayout,
    merge_pair,
)

LOG_FORMAT = 1
STEP_PEAK_SUFFIX = ", most activations"  # a phase's second peak (trace.recorder.step_peaks; the tracer's too)

#: owners of an event that always happens (-1) and of the optimizer's (-2, scaled to the trainable parameters)
ALWAYS = -1
OPTIMIZER = -2
#: what a storage holds, for the memory items of a peak
WEIGHT, INPUT, STATE, GRADIENT, OTHER = range(5)
_ITEM_OF_KIND = {WEIGHT: "weights", INPUT: "inputs", STATE: "optimizer states", GRADIENT: "gradients",
                 OTHER: "activations"}
#: an AccumulateGrad node of a leaf that is no parameter (it always wants its gradient)
LEAF_ALWAYS = -2
NOT_ACCUMULATE = -1
_FROZEN = -3  # a node live while a parameter is frozen: _FROZEN - parameter (frozen_node)


def frozen_node(param: int) -> int:
    """The accumulate code of a node that runs while `param` is frozen (a matmul's unfolded kernels)."""
    return _FROZEN - param
_PHASES = (Phase.FORWARD, Phase.BACKWARD, Phase.OPTIMIZER)

# event kinds (each event is a list starting with its kind)
EV_PHASE, EV_ALLOC, EV_FREE, EV_RELEASE, EV_OP, EV_TRANSIENT, EV_CAST_DONE = range(7)


def trainable_flags(names: Sequence[str], *, freeze: Sequence[str] = (), trainable: Sequence[str] = ()) -> list[bool]:
    """Which parameters train under name globs: `freeze` freezes those it matches, `trainable` freezes all it does
    not match. A glob that matches no parameter is an error: it is almost always a typo."""
    for pattern in (*freeze, *trainable):
        if not any(fnmatch.fnmatchcase(n, pattern) for n in names):
            sample = ", ".join([*names[:3], "...", *names[-2:]]) if len(names) > 5 else ", ".join(names)
            raise UserError(f"parameter glob {pattern!r} matches no parameter (names look like: {sample})")
    flags = []
    for n in names:
        frozen = any(fnmatch.fnmatchcase(n, g) for g in freeze)
        if trainable:
            frozen = frozen or not any(fnmatch.fnmatchcase(n, g) for g in trainable)
        flags.append(not frozen)
    return flags


class Tensor(NamedTuple):
    """One storage of the step: its bytes, whether it grows with the batch, what it holds (`kind`, and the
    parameter of a weight, gradient or optimizer state), the owner of the dispatch that allocated it (ALWAYS
    for one alive before the step) and the parameter it is an autocast cast of (-1: none). A named tuple: a stored
    step has tens of thousands, read back whenever a frozen variant is asked for (within a second, without
    PyTorch: a frozen dataclass's constructor took a quarter of it)."""

    nbytes: float
    scaling: bool
    kind: int
    param: int
    owner: int
    cast_of: int = -1

    def to_row(self) -> list[Any]:
        return [self.nbytes, int(self.scaling), self.kind, self.param, self.owner, self.cast_of]

    @classmethod
    def from_row(cls, row: Sequence[Any]) -> Tensor:
        if len(row) != 6:
            raise ValueError(f"a stored tensor has 6 fields, got {len(row)}")
        return cls._make(row)  # JSON's numbers as stored: 0/1 for `scaling`, ints for the indices


@dataclass(frozen=True)
class StepLog:
    """One training step with every parameter trainable, as events (module docstring).

    `graph`: the step's OpGraph as the tracer saw it (its ops are the ones in `events`). `nodes`: each autograd
    node as (the parameter its AccumulateGrad node accumulates, NOT_ACCUMULATE for other nodes; the node each of
    its inputs' gradients goes to, -1 where none); two more per matmul whose folding depends on its weight's
    gradient, live while that weight trains (its parameter) and while it is frozen (frozen_node), owning the
    folded and the unfolded call's kernels. `owners`: (node, edge mask) of the backward dispatches, the
    mask saying which of the node's gradient outputs a kernel feeds (0: kept while the node runs). `saved`:
    (node, tensor, edge mask of the kernels reading it, host ops of saving and unpacking it). `pre_alive`: the
    storages alive as the step starts.
    `host_ops`: dispatches (views included) by owner."""

    graph: OpGraph
    param_names: tuple[str, ...]
    param_numels: tuple[int, ...]
    rows: tuple[Op, ...]
    tensors: tuple[Tensor, ...]
    nodes: tuple[tuple[int, tuple[int, ...]], ...]
    owners: tuple[tuple[int, int], ...]
    saved: tuple[tuple[int, int, int, int], ...]
    pre_alive: tuple[int, ...]
    events: tuple[tuple[Any, ...], ...]
    host_ops: tuple[tuple[int, int], ...]

    def to_dict(self) -> dict[str, Any]:
        meta = self.graph.to_dict()
        meta["ops"] = []
        return {"log_format": LOG_FORMAT, "graph": meta, "param_names": list(self.param_names),
                "param_numels": list(self.param_numels), "rows": [o.to_row() for o in self.rows],
                "tensors": [t.to_row() for t in self.tensors], "nodes": [[a, list(e)] for a, e in self.nodes],
                "owners": [list(o) for o in self.owners], "saved": [list(s) for s in self.saved],
                "pre_alive": list(self.pre_alive), "events": [list(e) for e in self.events],
                "host_ops": [list(h) for h in self.host_ops]}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> StepLog:
        if d.get("log_format") != LOG_FORMAT:
            raise ValueError(f"step log format {d.get('log_format')!r} is not {LOG_FORMAT}")
        return cls(graph=OpGraph.from_dict(d["graph"]), param_names=tuple(d["param_names"]),
                   param_numels=tuple(int(n) for n in d["param_numels"]),
                   rows=tuple(Op.from_row(r) for r in d["rows"]),
                   tensors=tuple(Tensor.from_row(t) for t in d["tensors"]),
                   nodes=tuple((int(a), tuple(int(x) for x in e)) for a, e in d["nodes"]),
                   owners=tuple((int(n), int(m)) for n, m in d["owners"]),
                   saved=tuple((int(n), int(t), int(m), int(h)) for n, t, m, h in d["saved"]),
                   pre_alive=tuple(int(t) for t in d["pre_alive"]), events=tuple(tuple(e) for e in d["events"]),
                   host_ops=tuple((int(o), int(c)) for o, c in d["host_ops"]))

    # ---- replay ----------------------------------------------------------------------------------------
    def replay(self, trainable: Sequence[bool]) -> OpGraph:
        """The step with only the parameters flagged in `trainable` trained (one flag per `param_names`)."""
        if len(trainable) != len(self.param_names):
            raise ValueError("one trainable flag per parameter")
        if not any(trainable):
            raise UserError(f"{self.graph.model}: every parameter is frozen, so there is nothing to train")
        live_node, live_edges = self._liveness(trainable)

        def happens(owner: int) -> bool:
            if owner < 0:
                return True
            node, mask = self.owners[owner]
            return live_node[node] and (mask == 0 or bool(mask & live_edges[node]))

        def wanted(node: int, mask: int) -> bool:
            return live_node[node] and (mask == 0 or bool(mask & live_edges[node]))

        trained = [n for n, t in zip(self.param_numels, trainable, strict=True) if t]
        optimizer = _OptimizerShare(self.param_numels, trained)

        holds: dict[int, int] = {}
        saved_by: dict[int, list[int]] = {}
        saving_host_ops = 0
        for node, saved, mask, host in self.saved:
            if wanted(node, mask):
                holds[saved] = holds.get(saved, 0) + 1
                saved_by.setdefault(node, []).append(saved)
                saving_host_ops += host
        memory = _Memory(self.tensors)
        for t in self.pre_alive:
            tensor = self.tensors[t]
            if tensor.kind != WEIGHT and tensor.param >= 0 and not trainable[tensor.param]:  # its optimizer state
                continue
            memory.alloc(t)
        memory.phase = Phase.FORWARD
        memory.note()
        freed: set[int] = set()  # storages the step has dropped, kept alive by a node that saved them
        ops: list[Op] = []
        untracked = 0
        for ev in self.events:
            kind = ev[0]
            if kind == EV_OP:
                _, row, owner, parts, sources = ev
                if not happens(owner):
                    continue
                op = self.rows[row]
                if owner == OPTIMIZER:
                    op = optimizer.op(op, *(b for _, b in parts))
                elif parts:
                    op = _partial(op, [(b, wanted(self.owners[owner][0], m) if owner >= 0 else True)
                                       for m, b in parts])
                if op.phase is Phase.FORWARD and (sources is None or not any(
                        (live_node[s] if s >= 0 else trainable[-s - 1]) for s in sources)):
                    untracked += 1
                ops.append(op)
            elif kind == EV_ALLOC:
                t = ev[1]
                if happens(self.tensors[t].owner):
                    memory.alloc(t)
            elif kind == EV_FREE:
                t = ev[1]
                if holds.get(t, 0) > 0:
                    freed.add(t)
                else:
                    memory.free(t)
            elif kind == EV_RELEASE:
                for t in saved_by.get(ev[1], ()):
                    holds[t] -= 1
                    if holds[t] == 0 and t in freed:
                        memory.free(t)
            elif kind == EV_CAST_DONE:
                t = ev[1]
                cast_of = self.tensors[t].cast_of
                if not trainable[cast_of] and t in memory.alive:
                    if holds.get(t, 0) > 0:
                        freed.add(t)
                    else:
                        memory.free(t)
            elif kind == EV_TRANSIENT:
                _, nbytes, scaling, owner, parts = ev
                if happens(owner):
                    extra = sum(b for m, b in parts if owner < 0 or wanted(self.owners[owner][0], m))
                    memory.transient(float(nbytes) + extra, bool(scaling))
            elif kind == EV_PHASE:
                memory.phase = _PHASES[ev[1]]
                memory.note()
        host_ops = sum(c for owner, c in self.host_ops if happens(owner)) + saving_host_ops
        g = self.graph
        peaks = memory.peaks()
        return replace(g, ops=tuple(ops), trainable_params=sum(trained), host_ops=host_ops, untracked_ops=untracked,
                       memory=max(peaks, key=lambda m: m.peak_bytes), phase_peaks=peaks)

    def _liveness(self, trainable: Sequence[bool]) -> tuple[list[bool], list[int]]:
        """Whether each node exists (some input of it needs a gradient) and the mask of its inputs that do."""
        n = len(self.nodes)
        live = [False] * n
        done = [False] * n
        for start in range(n):  # iterative depth-first: a node's targets before the node
            if done[start]:
                continue
            stack = [(start, False)]
            while stack:
                node, expanded = stack.pop()
                if done[node]:
                    continue
                acc, targets = self.nodes[node]
                if acc != NOT_ACCUMULATE:
                    live[node] = (acc == LEAF_ALWAYS or (acc >= 0 and bool(trainable[acc]))
                                  or (acc <= _FROZEN and not trainable[_FROZEN - acc]))
                    done[node] = True
                    continue
                if expanded:
                    live[node] = any(t >= 0 and live[t] for t in targets)
                    done[node] = True
                    continue
                stack.append((node, True))
                stack.extend((t, False) for t in targets if t >= 0 and not done[t])
        # an input with no node (it never needed a gradient) is as it was in the recorded step: a kernel computing
        # its gradient anyway still runs while its node does
        edges = [sum(1 << i for i, t in enumerate(targets) if t < 0 or live[t]) for _, targets in self.nodes]
        return live, edges


def _partial(op: Op, parts: list[tuple[float, bool]]) -> Op:
    """A kernel computing several gradients, only the wanted ones written: a convolution backward (grad input,
    weight, bias) also counts FLOPs for those only, as trace.classify.conv_flops does for its output mask."""
    written = sum(b for b, keep in parts if keep)
    if op.cls is not OpClass.CONV or op.name != "convolution_backward" or len(parts) < 2:
        return op if written == op.written else replace(op, written=written)  # most keep every output
    old = ConvGradients(int(op.shape[11]))
    computed = [g for g in (ConvGradients.INPUT, ConvGradients.WEIGHT, ConvGradients.BIAS) if g in old]
    flags = ConvGradients.FORWARD
    for (_, keep), grad in zip(parts, computed, strict=False):  # its outputs, in order, without those not computed
        if keep:
            flags |= grad

    def counted(g: ConvGradients) -> int:
        return (ConvGradients.INPUT in g) + (ConvGradients.WEIGHT in g)
    flops = op.flops * counted(flags) / counted(old) if counted(old) else op.flops
    row = list(op.shape)
    row[11] = float(flags)
    return replace(op, written=written, flops=flops, shape=tuple(row))


class _OptimizerShare:
    """An optimizer kernel over the trainable parameters only. A list kernel over the parameters (their weights,
    gradients and states; its largest tensor the largest parameter) moves bytes in proportion to their elements;
    one over a scalar per parameter (the step counts), in proportion to their number."""

    def __init__(self, numels: Sequence[int], trained: Sequence[int]) -> None:
        self.biggest = float(max(numels))
        self.trained_biggest = float(max(trained))
        # a list kernel's tensors of several sizes stream as broadcasts (trace.classify.stream_shape)
        self.mixed_sizes = any(1 < n < self.trained_biggest for n in trained)
        self.by_elements = sum(trained) / (sum(numels) or 1)
        self.by_count = len(trained) / len(numels)

    def op(self, op: Op, scalar_read: float = 0.0, scalar_written: float = 0.0) -> Op:
        """`op` over the trainable parameters; `scalar_*`: its bytes in one-element tensors (one per parameter)."""
        row = list(op.shape)
        share = self.by_count
        if row and row[0] == self.biggest:
            row[0] = self.trained_biggest
            share = self.by_elements
            if len(row) > 1:
                layout = StreamLayout(int(row[1])) & ~StreamLayout.BROADCAST
                row[1] = float(layout | (StreamLayout.BROADCAST if self.mixed_sizes else StreamLayout.DENSE))

        def scaled(total: float, scalars: float) -> float:
            return (total - scalars) * share + scalars * self.by_count
        return replace(op, read=scaled(op.read, scalar_read), written=scaled(op.written, scalar_written),
                       flops=op.flops * share, shape=tuple(row))


class _Memory:
    """Live bytes by item as a replay allocates and frees, with each phase's peak and its moment of most
    batch-scaling bytes (as trace.recorder keeps them)."""

    def __init__(self, tensors: Sequence[Tensor]) -> None:
        self.tensors = tensors
        self.alive: set[int] = set()
        self.items = dict.fromkeys(MEMORY_ITEMS, 0.0)
        self.total = 0.0
        self.scaling = 0.0
        self.phase = Phase.FORWARD
        self.phase_peaks: dict[Phase, tuple[float, dict[str, float]]] = {}
        self.step_peaks: dict[Phase, tuple[float, dict[str, float]]] = {}

    def alloc(self, t: int) -> None:
        if t in self.alive:
            return
        self.alive.add(t)
        self._add(self.tensors[t], 1.0)
        self.note()

    def free(self, t: int) -> None:
        if t in self.alive:
            self.alive.discard(t)
            self._add(self.tensors[t], -1.0)

    def _add(self, tensor: Tensor, sign: float) -> None:
        self.items[_ITEM_OF_KIND[tensor.kind]] += sign * tensor.nbytes
        self.total += sign * tensor.nbytes
        if tensor.scaling:
            self.scaling += sign * tensor.nbytes

    def transient(self, nbytes: float, scaling: bool) -> None:
        self.total += nbytes
        self.items["activations"] += nbytes
        self.scaling += nbytes if scaling else 0.0
        self.note()
        self.total -= nbytes
        self.items["activations"] -= nbytes
        self.scaling -= nbytes if scaling else 0.0

    def note(self) -> None:
        if self.total > self.phase_peaks.get(self.phase, (-1.0, {}))[0]:
            self.phase_peaks[self.phase] = (self.total, dict(self.items))
        if self.scaling > self.step_peaks.get(self.phase, (-1.0, {}))[0]:
            self.step_peaks[self.phase] = (self.scaling, dict(self.items))

    def peaks(self) -> tuple[MemoryPeak, ...]:
        out = tuple(MemoryPeak(total, phase.value, items) for phase, (total, items) in self.phase_peaks.items())
        return out + tuple(MemoryPeak(sum(items.values()), f"{phase.value}{STEP_PEAK_SUFFIX}", items)
                           for phase, (_, items) in self.step_peaks.items())


# ---- stored logs: one file per model and settings, beside the shipped graphs -----------------------------
def log_file(directory: Path, key: str) -> Path:
    """Where the step logs of graph key `key` are stored (graphstore.key)."""
    return directory / f"{hashlib.sha256(key.encode()).hexdigest()[:16]}.json.gz"


def save_logs(directory: Path, key: str, low: StepLog, high: StepLog) -> Path:
    """The step logs of one model and settings at the two trace batches, as gzip'd JSON, written atomically."""
    from gpuadvisor.core.fileio import atomic_write_bytes

    path = log_file(directory, key)
    data = json.dumps({"key": key, "low": low.to_dict(), "high": high.to_dict()}, separators=(",", ":")).encode()
    atomic_write_bytes(path, gzip.compress(data, mtime=0), force=True)
    return path


def load_logs(directory: Path, key: str) -> tuple[StepLog, StepLog] | None:
    """The stored step logs of `key`, or None where there are none (or they are of another format)."""
    path = log_file(directory, key)
    if not path.is_file():
        return None
    try:
        raw = json.loads(gzip.decompress(path.read_bytes()))
        if raw.get("key") != key:
            return None
        return StepLog.from_dict(raw["low"]), StepLog.from_dict(raw["high"])
    except (OSError, ValueError, KeyError, TypeError, EOFError):
        return None


def replay_pair(logs: tuple[StepLog, StepLog], *, freeze: Sequence[str] = (),
                trainable: Sequence[str] = ()) -> BatchGraph:
    """The step with `freeze`/`trainable` applied (trainable_flags), at both trace batches, as a BatchGraph."""
    low, high = logs
    flags = trainable_flags(low.param_names, freeze=freeze, trainable=trainable)
    graphs = []
    for log in (low, high):
        g = log.replay(flags)
        graphs.append(replace(g, source=f"{g.source}; frozen parameters replayed from its stored step (no PyTorch)"))
    return merge_pair(graphs[0], graphs[1])
