"""Recording a training step as a StepLog (estimate/steplog.py): what autograd did, so that freezing can be
replayed without PyTorch.

Beside the recorder's ops and storages it notes every dispatch's input and output storages and the autograd
node it ran in (node pre- and post-hooks), each node's gradient inputs and outputs, and the tensors each node
saved. Saved tensors are packed as copies the recorder does not count (saved_tensors_hooks): the originals then
live exactly as long as the forward holds them, and the replay keeps them alive until the node's backward only
where the frozen variant still saves them. The copies keep the originals' sizes, strides and data, so the
backward runs the same kernels on them.
"""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

import gpuadvisor.estimate.trace.classify as C
from gpuadvisor.estimate.graph import GemmShape, Op, OpGraph, Phase
from gpuadvisor.estimate.steplog import (
    ALWAYS,
    EV_ALLOC,
    EV_CAST_DONE,
    EV_FREE,
    EV_OP,
    EV_PHASE,
    EV_RELEASE,
    EV_TRANSIENT,
    LEAF_ALWAYS,
    NOT_ACCUMULATE,
    OPTIMIZER,
    OTHER,
    StepLog,
    Tensor,
    frozen_node,
)
from gpuadvisor.estimate.trace.recorder import torch

#: backward kernels that compute only the gradients their output mask asks for (their fake kernels return None for
#: the others), by the first output that does: the batch norm backward writes its input gradient whatever its mask
_MASKED_OUTPUTS = {"convolution_backward": 0, "native_layer_norm_backward": 0, "native_group_norm_backward": 0,
                   "native_batch_norm_backward": 1}
_PHASE_INDEX = {Phase.FORWARD: 0, Phase.BACKWARD: 1, Phase.OPTIMIZER: 2}
#: contexts a dispatch runs in
_FORWARD, _ROOT, _NODE, _AFTER, _OPT = range(5)


@dataclass
class _Fold:
    """A matmul of a 3-D input by a trainable weight that PyTorch folds into one GEMM only because the weight needs
    a gradient (StepLogger._watch_folds): the dispatches of the copy and the GEMM, the event after the GEMM, the
    GEMM's output (the unfolded call's is the same), and the batched GEMM that runs where the weight is frozen,
    with what makes it need a gradient."""

    param: int
    dispatches: tuple[int, int]
    after: int
    keep: set[int]
    unfolded: Op
    sources: list[int]


#: dispatches of the unfolded call where the folded one's copy, view and GEMM were: expand and view of each
#: operand, then the batched GEMM
UNFOLDED_DISPATCHES = 5


@dataclass
class _Dispatch:
    context: tuple[int, int]  # (kind, node)
    ins: list[int]
    name: str = ""
    outs: list[int] = field(default_factory=list)
    host: bool = False
    mask: int = 0  # the node's gradient outputs it feeds (_masks)
    out_masks: dict[int, int] = field(default_factory=dict)  # and each of its outputs


class StepLogger:
    """Attached to a Recorder (`rec.log`) for the recorded training step. Storage keys: a recorded storage's
    serial, or minus it for the copy a node saved of it."""

    def __init__(self, rec: Any, params: list[Any], names: list[str], persistent: set[int]) -> None:
        self.rec = rec
        self.params = params
        self.names = names
        self.param_index = {id(p): i for i, p in enumerate(params)}
        self.persistent = persistent
        self.events: list[list[Any]] = []
        self.dispatches: list[_Dispatch] = []
        self.current: int | None = None
        self.context: tuple[int, int] = (_FORWARD, -1)
        self.producer: dict[int, int] = {}  # serial -> dispatch that allocated it
        self.sizes: dict[int, tuple[float, bool]] = {}
        self.pre_alive = [serial for serial, _ in rec.live.values()]
        for serial, nbytes in rec.live.values():
            self.sizes[serial] = (nbytes, serial in rec._scaling)
        self.nodes: list[Any] = [None]  # node 0: a leaf that is no parameter (always wants its gradient)
        self.node_ids: dict[int, int] = {}
        self.pre_grads: dict[int, list[int]] = {}
        self.edge_grads: dict[int, list[int]] = {}
        self.unpacked: dict[int, set[int]] = {}
        self.clones: dict[int, int] = {}
        self.cast_of: dict[int, int] = {}
        self.last_read: dict[int, int] = {}
        self.op_outs: dict[int, list[tuple[int, float]]] = {}  # event index -> (key, bytes) of a kernel's outputs
        self.transient_outs: dict[int, list[tuple[int, float]]] = {}
        self.handles: list[Any] = []
        self.folds: list[_Fold] = []
        self.saved_copies: set[int] = set()  # autograd's copies of in-place ops' inputs, saved for their backward
        # storage -> (dispatch, input shape, input bytes, what makes the input need a gradient) of a 3-D input's copy
        self._copies: dict[int, tuple[int, tuple[int, ...], float, list[int]]] = {}
        self._last_op: Op | None = None
        self._inputs: list[Any] = []
        self.param_of_serial = {int(rec.live[id(p.untyped_storage())][0]): i for i, p in enumerate(params)
                                if id(p.untyped_storage()) in rec.live}
        self.detaches: dict[tuple[int, int], int] = {}  # (node, serial) saved as an output: its detaches (pack)
        self._pending_cast: int | None = None
        self.unpacking = 0  # the storage a saved tensor was just unpacked from (its detach comes next)
        self.autocast = False  # the forward runs under autocast (tracer): it caches its casts of trainable weights

    # ---- storages ----------------------------------------------------------------------------------
    def key(self, t: Any) -> int:
        st = id(t.untyped_storage())
        entry = self.rec.live.get(st)
        if entry is not None:
            return int(entry[0])
        return -self.clones.get(st, 0)

    def alloc(self, serial: int, nbytes: float, scaling: bool) -> None:
        self.sizes[serial] = (nbytes, scaling)
        self.producer[serial] = self.current if self.current is not None else -1
        self.events.append([EV_ALLOC, serial])

    def free(self, serial: int) -> None:
        if serial in self.sizes:
            self.events.append([EV_FREE, serial])

    def phase(self, phase: Phase) -> None:
        self.context = {Phase.FORWARD: (_FORWARD, -1), Phase.BACKWARD: (_ROOT, -1),
                        Phase.OPTIMIZER: (_OPT, -1)}[phase]
        self.events.append([EV_PHASE, _PHASE_INDEX[phase]])

    # ---- dispatches and kernels --------------------------------------------------------------------
    def begin(self, name: str, inputs: list[Any]) -> None:
        ins = [self.key(t) for t in inputs]
        self._inputs = inputs
        # unpacking a saved tensor through a hook detaches it: a host op of the log's own, never of the step (whose
        # own detaches of saved outputs pack() counts)
        if name == "detach" and ins and ins[0] == self.unpacking and self.context[0] == _NODE:
            name = "unpack detach"
        self.unpacking = 0
        self.dispatches.append(_Dispatch(self.context, ins, name))
        self.current = len(self.dispatches) - 1
        if self.context[0] == _FORWARD and name == "_to_copy" and ins and ins[0] > 0 and self.autocast:
            source = next((p for p in inputs[:1] if id(p) in self.param_index), None)
            if source is not None:
                self._pending_cast = self.param_index[id(source)]

    def end(self, outputs: list[Any]) -> None:
        if self.current is None:
            return
        d = self.dispatches[self.current]
        d.outs = [self.key(t) for t in outputs]
        cast = self._pending_cast
        if cast is not None:
            self._pending_cast = None
            for k in d.outs:
                if k > 0:
                    self.cast_of[k] = cast
        if self.context[0] == _FORWARD:
            for k in d.ins:
                if k in self.cast_of:
                    self.last_read[k] = len(self.events)
            self._watch_folds(d.name, self._inputs, self.current)
        self._last_op = None
        self._inputs = []
        self.current = None

    def count_host(self) -> None:
        if self.current is not None:
            self.dispatches[self.current].host = True

    def op(self, op: Op, inputs: list[Any], outputs: list[Any], grad_mode: bool) -> None:
        """A kernel: in the current dispatch, or (an autograd Function's fused kernel) one of its own."""
        if self.current is None:
            self.dispatches.append(_Dispatch(self.context, [self.key(t) for t in inputs], host=False))
            at = len(self.dispatches) - 1
        else:
            at = self.current
        sources: list[int] | None = None
        if op.phase is Phase.FORWARD:
            sources = [self._source(t) for t in inputs if t.requires_grad] if grad_mode else None
        seen: set[int] = set()
        outs = []
        for t in outputs:
            if id(t) not in seen:
                seen.add(id(t))
                outs.append((self.key(t), float(t.numel() * t.element_size())))
        if op.phase is Phase.OPTIMIZER:  # its bytes in one-element tensors (the step counts): one per parameter
            scalars = {id(t): float(t.element_size()) for t in inputs if t.dim() == 0}
            scalar_out = sum(scalars.values()) if op.written == op.read else sum(
                float(t.element_size()) for t in outputs if t.dim() == 0)
            self.op_outs[len(self.events)] = [(0, sum(scalars.values())), (0, scalar_out)]
        elif len(outs) > 1 and op.phase is Phase.BACKWARD and op.name in _MASKED_OUTPUTS:
            self.op_outs[len(self.events)] = [(k if i >= _MASKED_OUTPUTS[op.name] else 0, b)
                                              for i, (k, b) in enumerate(outs)]
        self.events.append([EV_OP, op, at, None, sources])
        self._last_op = op

    def transient(self, nbytes: float, scaling: bool, outs: list[tuple[Any, float]]) -> None:
        at = self.current if self.current is not None else -1
        if outs and self.context[0] in (_NODE, _AFTER, _ROOT):
            self.transient_outs[len(self.events)] = [(self.key(t), b) for t, b in outs]
        else:
            nbytes += sum(b for _, b in outs)
        self.events.append([EV_TRANSIENT, nbytes, scaling, at, None])

    def _source(self, t: Any) -> int:
        """What makes `t` need a gradient: its parameter (-index - 1), or the node that computed it."""
        index = self.param_index.get(id(t))
        if index is not None:
            return -index - 1
        return self.node_id(t.grad_fn) if t.grad_fn is not None else 0

    # ---- matmuls whose folding depends on what is trained -------------------------------------------
    def _watch_folds(self, name: str, inputs: list[Any], at: int) -> None:
        """at::matmul folds a 3-D input into one GEMM by copying it when the weight needs a gradient (its
        should_fold); with the weight frozen it runs a batched GEMM on the input as it is (torchvision's
        nn.MultiheadAttention in-projection on its transposed input). Notes each such copy, then the GEMM that
        reads it (a _Fold), with the batched GEMM that replaces both where the weight is frozen. Keeps no tensor:
        a reference would change when the step frees it."""
        d = self.dispatches[at]
        if name == "clone" and inputs and d.outs:
            x = inputs[0]
            if x.dim() >= 3 and not x.is_contiguous() and not _viewable(x):
                source = [self._source(x)] if x.requires_grad and torch.is_grad_enabled() else []
                self._copies[d.outs[0]] = (at, tuple(x.shape), C.tensor_bytes(x), source)
            return
        if name != "mm" or len(inputs) != 2 or not d.outs or self._last_op is None:
            return
        copy = self._copies.pop(d.ins[0], None)
        param = self.param_of_serial.get(d.ins[1], self.cast_of.get(d.ins[1]))
        if copy is None or param is None:
            return
        copy_at, shape, x_bytes, sources = copy
        weight = inputs[1]
        batch = float(math.prod(shape[:-2]))
        bmm = replace(self._last_op, name="bmm", read=x_bytes + batch * weight.numel() * weight.element_size(),
                      shape=GemmShape(batch, float(shape[-2]), float(weight.shape[-1]), float(shape[-1])).to_row())
        self.folds.append(_Fold(param, (copy_at, at + 1), len(self.events), set(d.outs), bmm, sources))

    # ---- autograd --------------------------------------------------------------------------------
    def node_id(self, node: Any) -> int:
        nid = self.node_ids.get(id(node))
        if nid is None:
            nid = self.node_ids[id(node)] = len(self.nodes)
            self.nodes.append(node)
        return nid

    def pack(self, t: Any) -> Any:
        entry = self.rec.live.get(id(t.untyped_storage()))
        if entry is None or entry[0] in self.persistent:
            return (0, t, 0)  # alive anyway
        serial = int(entry[0])
        # saved as an output of the op that just ran (autograd saves an output through a detach and unpacks it
        # through another: host ops of the step, where the log's copies are unpacked through their own): its node
        # is the newest (saved before the op runs, an input's node is older than the op's own). Not the copy autograd
        # makes of an in-place op's input to save it, whose CloneBackward is the newest node too: that copy is
        # made only while the in-place op's node exists (finish)
        node = t.grad_fn
        newest = node is not None and node._sequence_nr() == torch._C._autograd._get_sequence_nr() - 1
        copied = newest and type(node).__name__ == "CloneBackward0"
        if copied:
            self.saved_copies.add(serial)
        output = newest and not copied
        detaches = 2 if output else 0
        self.rec.passthrough += 1
        try:
            with torch.no_grad():
                copy = _copy_of(t)
        finally:
            self.rec.passthrough -= 1
        storage = copy.untyped_storage()
        self.clones[id(storage)] = serial
        weakref.finalize(storage, self.clones.pop, id(storage), None)  # its id is free for a new storage then
        return (serial, copy, detaches)

    def unpack(self, packed: Any) -> Any:
        serial, t, detaches = packed
        self.unpacking = self.key(t)
        if serial and self.context[0] == _NODE:
            self.unpacked.setdefault(self.context[1], set()).add(serial)
            if detaches:
                self.detaches[(self.context[1], serial)] = detaches
        return t

    def hook_graph(self, root: Any) -> None:
        """Pre- and post-hooks on every node the backward of `root` runs (no post-hook on AccumulateGrad: it
        would keep the gradient referenced, and AccumulateGrad would copy it instead of taking it)."""
        stack = [root]
        seen: set[int] = set()
        while stack:
            node = stack.pop()
            if node is None or id(node) in seen:
                continue
            seen.add(id(node))
            nid = self.node_id(node)
            self.handles.append(node.register_prehook(partial(self._pre, nid)))
            if type(node).__name__ != "AccumulateGrad":
                self.handles.append(node.register_hook(partial(self._post, nid)))
            stack.extend(m for m, _ in node.next_functions)

    def _pre(self, nid: int, grad_outputs: Any) -> None:
        self.context = (_NODE, nid)
        self.pre_grads[nid] = [self.key(g) for g in grad_outputs if isinstance(g, torch.Tensor)]

    def _post(self, nid: int, grad_inputs: Any, grad_outputs: Any) -> None:
        self.edge_grads[nid] = [self.key(g) if isinstance(g, torch.Tensor) else 0 for g in grad_inputs]
        self.events.append([EV_RELEASE, nid])
        self.context = (_AFTER, nid)

    # ---- the log ---------------------------------------------------------------------------------
    def finish(self, graph: OpGraph, kinds: dict[int, tuple[int, int]]) -> StepLog:
        """The StepLog of the step; `kinds`: serial -> (kind, parameter) of weights, inputs, gradients, states."""
        for h in self.handles:
            h.remove()
        nodes = self._node_table()
        self._masks(len(nodes))
        owners: dict[tuple[int, int], int] = {}
        consumer = {k: n for n, keys in self.pre_grads.items() for k in keys if k > 0}
        # a folded matmul's kernels run while its weight trains, the unfolded ones while it is frozen: two nodes of
        # their own, live as the parameter trains or not (steplog.trained_node / frozen_node)
        in_fold: dict[int, int] = {}
        unfolded: dict[int, list[list[Any]]] = {}
        unfolded_host: dict[int, int] = {}
        for fold in self.folds:
            trained = owners.setdefault((len(nodes), 0), len(owners))
            frozen = owners.setdefault((len(nodes) + 1, 0), len(owners))
            nodes += [(fold.param, ()), (frozen_node(fold.param), ())]
            for at in range(*fold.dispatches):
                in_fold[at] = trained
            unfolded.setdefault(fold.after, []).append([EV_OP, fold.unfolded, frozen, [], fold.sources])
            unfolded_host[frozen] = UNFOLDED_DISPATCHES
        folded_outputs = {k for fold in self.folds for k in fold.keep}
        for nid, keys in self.unpacked.items():  # a copy saved for an in-place op exists while its node does
            for k in keys & self.saved_copies:
                at = self.producer.get(k, -1)
                if at >= 0:
                    in_fold[at] = owners.setdefault((nid, 0), len(owners))

        def owner_of(at: int) -> int:
            if at < 0:
                return ALWAYS
            if at in in_fold:
                return in_fold[at]
            d = self.dispatches[at]
            kind, node = d.context
            if kind in (_FORWARD, _ROOT):
                return ALWAYS
            if kind == _OPT:
                return OPTIMIZER
            if kind == _NODE:
                pair = (node, d.mask)
            else:  # between nodes: an input buffer's sum (or cast) for the node that reads it
                target = next((consumer[k] for k in d.outs if k in consumer), node)
                pair = (target, 0)
            return owners.setdefault(pair, len(owners))

        def mask_of(key: int, at: int) -> int:
            """The gradient outputs an output of a dispatch feeds (0: written whatever is wanted)."""
            d = self.dispatches[at]
            return d.out_masks.get(key, 0) if d.context[0] == _NODE and key else 0

        serials = [s for s in self.sizes]
        index = {s: i for i, s in enumerate(serials)}
        tensors = []
        for s in serials:
            nbytes, scaling = self.sizes[s]
            kind, param = kinds.get(s, (OTHER, -1))
            at = self.producer.get(s, -1)
            owner = ALWAYS if s in folded_outputs or s in self.cast_of else owner_of(at)
            d = self.dispatches[at] if at >= 0 else None
            if (d is not None and d.context[0] == _NODE and d.name in _MASKED_OUTPUTS and s in d.outs
                    and d.outs.index(s) >= _MASKED_OUTPUTS[d.name] and d.out_masks.get(s)):
                owner = owners.setdefault((d.context[1], d.out_masks[s]), len(owners))
            tensors.append(Tensor(nbytes, scaling, kind, param, owner, self.cast_of.get(s, -1)))
        rows: dict[Op, int] = {}
        events: list[list[Any]] = []
        cast_done: dict[int, list[int]] = {}
        for k, pos in self.last_read.items():
            cast_done.setdefault(pos, []).append(k)
        for i, ev in enumerate(self.events):
            for k in cast_done.get(i, ()):
                events.append([EV_CAST_DONE, index[k]])
            for alt in unfolded.get(i, ()):
                events.append([EV_OP, rows.setdefault(alt[1], len(rows)), *alt[2:]])
            kind = ev[0]
            if kind in (EV_ALLOC, EV_FREE):
                events.append([kind, index[ev[1]]])
            elif kind == EV_OP:
                _, op, at, _, sources = ev
                row = rows.setdefault(op, len(rows))
                outs = self.op_outs.get(i)
                parts = [[mask_of(k, at), b] for k, b in outs] if outs else []
                events.append([EV_OP, row, owner_of(at), parts, sources])
            elif kind == EV_TRANSIENT:
                _, nbytes, scaling, at, _ = ev
                outs = self.transient_outs.get(i, [])
                events.append([EV_TRANSIENT, nbytes, int(scaling), owner_of(at),
                               [[mask_of(k, at), b] for k, b in outs]])
            else:
                events.append(ev)
        for k in cast_done.get(len(self.events), ()):
            events.append([EV_CAST_DONE, index[k]])
        for alt in unfolded.get(len(self.events), ()):
            events.append([EV_OP, rows.setdefault(alt[1], len(rows)), *alt[2:]])
        host: dict[int, int] = dict(unfolded_host)
        for at, d in enumerate(self.dispatches):
            if d.host and d.name != "unpack detach":
                o = owner_of(at)
                host[o] = host.get(o, 0) + 1
        readers_of: dict[tuple[int, int], list[int]] = {}  # (node, saved serial) -> masks of the dispatches reading it
        for d in self.dispatches:
            if d.context[0] == _NODE:
                for k in d.ins:
                    if k < 0:
                        readers_of.setdefault((d.context[1], -k), []).append(d.mask)
        saved = []
        for nid, keys in self.unpacked.items():
            for s in keys:
                if s not in index:
                    continue
                readers = readers_of.get((nid, s), [])
                mask = 0 if not readers or any(m == 0 for m in readers) else _or(readers)
                saved.append((nid, index[s], mask, self.detaches.get((nid, s), 0)))
        self.nodes = []
        return StepLog(graph=graph, param_names=tuple(self.names),
                       param_numels=tuple(int(p.numel()) for p in self.params),
                       rows=tuple(sorted(rows, key=rows.__getitem__)), tensors=tuple(tensors), nodes=tuple(nodes),
                       owners=tuple(sorted(owners, key=owners.__getitem__)), saved=tuple(saved),
                       pre_alive=tuple(index[s] for s in self.pre_alive if s in index),
                       events=tuple(tuple(e) for e in events), host_ops=tuple(sorted(host.items())))

    def _node_table(self) -> list[tuple[int, tuple[int, ...]]]:
        table: list[tuple[int, tuple[int, ...]]] = [(LEAF_ALWAYS, ())]
        i = 1
        while i < len(self.nodes):  # the list grows as next_functions name nodes not seen yet
            node = self.nodes[i]
            if type(node).__name__ == "AccumulateGrad":
                table.append((self.param_index.get(id(node.variable), LEAF_ALWAYS), ()))
            else:
                table.append((NOT_ACCUMULATE, tuple(self.node_id(m) if m is not None else -1
                                                    for m, _ in node.next_functions)))
            i += 1
        return table

    def _masks(self, n_nodes: int) -> None:
        """Which of its node's gradient outputs each backward dispatch feeds, walking the node's dispatches
        backwards from the gradients it returned."""
        by_node: dict[int, list[int]] = {}
        for at, d in enumerate(self.dispatches):
            if d.context[0] == _NODE:
                by_node.setdefault(d.context[1], []).append(at)
        for nid, ats in by_node.items():
            grads = self.edge_grads.get(nid, [])
            full = (1 << len(grads)) - 1
            if isinstance(self.nodes[nid], torch.autograd.function.BackwardCFunction):
                for at in ats:  # a custom Function's backward computes every gradient it returns, wanted or not
                    self.dispatches[at].mask = full
                continue
            masks: dict[int, int] = {}
            for e, k in enumerate(grads):
                if k:
                    masks[k] = masks.get(k, 0) | (1 << e)
            for at in reversed(ats):
                d = self.dispatches[at]
                out_masks = {k: masks.get(k, 0) for k in d.outs}
                if not d.outs:  # returns no tensor (a check, an in-place list op): with what it reads
                    d.mask = _or(masks.get(k, 0) for k in d.ins) or full
                    d.out_masks = out_masks
                    continue
                m = _or(out_masks.values()) or full
                d.mask = m
                d.out_masks = out_masks
                for k in d.ins:
                    masks[k] = masks.get(k, 0) | m


def _copy_of(t: Any) -> Any:
    """A copy of `t` with its sizes, strides and data: of the storage it spans where its elements overlap (an
    expanded view, which cannot be written element by element)."""
    if not torch._debug_has_internal_overlap(t):
        copy = torch.empty_strided(t.size(), t.stride(), dtype=t.dtype, device=t.device)
        return copy.copy_(t)
    offset = t.storage_offset()
    span = offset + sum((n - 1) * st for n, st in zip(t.size(), t.stride(), strict=True)) + 1
    buffer = t.new_empty((span,))
    buffer[offset:].copy_(t.as_strided((span - offset,), (1,), offset))
    return buffer.as_strided(t.size(), t.stride(), offset)


def _viewable(x: Any) -> bool:
    """Whether a tensor's leading dimensions fold into one without a copy (at::matmul's should_fold)."""
    sizes, strides = x.shape, x.stride()
    return all(strides[i] == strides[i + 1] * sizes[i + 1] for i in range(x.dim() - 2))


def _or(masks: Any) -> int:
    out = 0
    for m in masks:
        out |= m
    return out
