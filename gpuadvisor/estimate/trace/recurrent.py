"""Recurrent layers as cuDNN runs them: one fused op per layer stack, forward and backward.

On the CPU, nn.LSTM/GRU/RNN decompose into a few ops per time step; on a GPU PyTorch calls cuDNN's
fused RNN, which runs the input projections of all steps as one GEMM and the recurrence as one
persistent kernel. The tracer therefore swaps each RNN module's forward for an autograd Function
that records one RECURRENT op (forward) and one more in its backward, keeps cuDNN's reserve space
(kernels.rnn_reserve_bytes: the gates of every step, saved for backward) and, under autocast, the bf16 copies of
the call's input and weights alive in memory in training, counts the workspace a call holds while it runs
(kernels.rnn_workspace_bytes, and rnn_training_extra_bytes in training), all in the dtype the call runs
in, and hides the inner ops.
"""

from __future__ import annotations

from typing import Any

import gpuadvisor.estimate.trace.classify as C
from gpuadvisor.estimate.graph import Op, OpClass, Phase, RecurrentShape
from gpuadvisor.estimate.kernels import rnn_reserve_bytes, rnn_training_extra_bytes, rnn_workspace_bytes
from gpuadvisor.estimate.trace.recorder import Recorder, torch

_Function: Any = torch.autograd.Function  # torch is untyped here (an optional extra)

GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def rnn_shape(m: Any, x: Any) -> RecurrentShape:
    """The (batch, steps, input size, hidden size, layers, gates, directions) of an RNN module's call."""
    b_dim, t_dim = (0, 1) if m.batch_first else (1, 0)
    batch = x.shape[b_dim] if x.dim() == 3 else 1
    steps = x.shape[t_dim] if x.dim() == 3 else x.shape[0]
    return RecurrentShape(float(batch), float(steps), float(m.input_size), float(m.hidden_size),
                          float(m.num_layers), float(GATES.get(m.mode, 1)), 2.0 if m.bidirectional else 1.0)


def rnn_flops(shape: RecurrentShape) -> float:
    """Forward FLOPs: every step of every layer multiplies its input and its state into the gates."""
    b, t, h, gates, dirs = shape.batch, shape.steps, shape.hidden_size, shape.gates, shape.directions
    total = 0.0
    for layer in range(int(shape.layers)):
        width = shape.input_size if layer == 0 else h * dirs
        total += dirs * t * 2.0 * b * gates * h * (width + h)
    return total


def fuse(module: Any, rec: Recorder) -> None:
    """Patch every RNN module under `module` for the trace (the module is a throwaway copy)."""
    for m in module.modules():
        if isinstance(m, torch.nn.RNNBase):
            _patch(m, rec)


def _patch(m: Any, rec: Recorder) -> None:
    original = m.forward

    class Fused(_Function):
        @staticmethod
        def forward(ctx: Any, x: Any, backward: bool, n_states: int, *rest: Any) -> Any:
            states_in, weights = rest[:n_states], rest[n_states:]
            shape = rnn_shape(m, x)
            rec.suppress += 1
            try:
                hx = None if not states_in else (states_in if len(states_in) > 1 else states_in[0])
                out, state = original(x, hx)
            finally:
                rec.suppress -= 1
            states = state if isinstance(state, tuple) else (state,)
            for t in (out, *states):  # what cuDNN's call writes (the CPU steps' own tensors are not counted)
                rec.track(t)
            s = shape
            # the call runs in autocast's dtype where autocast is on (CPU autocast stands for CUDA's in the trace),
            # else in its input's: its reserve, workspace and copies are in that dtype
            mixed = torch.is_autocast_enabled("cpu") and x.dtype == torch.float32
            run_dtype = torch.get_autocast_dtype("cpu") if mixed else x.dtype
            elem = torch.empty((), dtype=run_dtype).element_size()
            # the reserve space (the gates of every step): written by a training call and read by its backward,
            # so kept for it, with autocast's copies of the input and the weights; an inference call writes the
            # same gates through its workspace. Either call holds a workspace while it runs (lab/rnn_memory.py)
            reserve = rnn_reserve_bytes(s, elem, m.mode)
            saved: list[Any] = []
            if backward:
                saved.append(x.new_empty((int(reserve / elem),), dtype=run_dtype))
                if mixed:
                    saved += [x.new_empty(x.shape, dtype=run_dtype),
                              x.new_empty((sum(w.numel() for w in weights),), dtype=run_dtype)]
            ctx.save_for_backward(x, *saved, *states_in, *weights)
            ctx.n_saved = len(saved)
            steps_part, fixed_part = rnn_workspace_bytes(s, elem, m.mode, training=backward)
            fixed_elems = int(fixed_part / elem)
            if backward:
                # the backward holds the same workspace, and the persistent extra where its own kernel is persistent
                dtype_name = C.dtype_name(run_dtype)
                ctx.workspace = (steps_part + rnn_training_extra_bytes(s, elem, dtype_name, backward=True),
                                 fixed_elems, run_dtype)
                steps_part += rnn_training_extra_bytes(s, elem, dtype_name)
            _hold_workspace(rec, x, steps_part, fixed_elems, run_dtype)
            ctx.shape, ctx.n_states = shape, n_states
            ctx.dtype = _record(rec, m, x, out, weights, shape, Phase.FORWARD, reserve)
            return (out, *states)

        @staticmethod
        def backward(ctx: Any, *grads: Any) -> Any:
            x, *rest = ctx.saved_tensors
            saved, rest = rest[:ctx.n_saved], rest[ctx.n_saved:]
            states_in, weights = rest[:ctx.n_states], rest[ctx.n_states:]
            reserve = C.tensor_bytes(saved[0]) if saved else 0.0
            _record(rec, m, x, grads[0], weights, ctx.shape, Phase.BACKWARD, reserve, dtype=ctx.dtype)
            out = (torch.empty_like(x), None, None, *[torch.empty_like(t) for t in (*states_in, *weights)])
            # the backward holds the forward's training workspace again while it runs (one workspace size for
            # both: lab/data/h100-rnn-kernels-new-2026-12-06/rnn_backward_memory.json, 80 calls, what the backward
            # held beyond its gradients and the output's gradient within 0.9x-1.1x of it but for the one-layer
            # LSTMs of hidden 256 and 512, whose forward count is the static kernel's)
            _hold_workspace(rec, x, *ctx.workspace)
            return out

    def forward(x: Any, hx: Any = None) -> Any:
        """cuDNN takes the initial state (an encoder's last state handed to a decoder) in the same fused call."""
        states_in = () if hx is None else (tuple(hx) if isinstance(hx, tuple) else (hx,))
        # a backward will follow where autograd records this call (inside the Function grad mode is off)
        backward = torch.is_grad_enabled() and any(t.requires_grad for t in (x, *states_in, *m._flat_weights))
        out, *states = Fused.apply(x, backward, len(states_in), *states_in, *m._flat_weights)
        return out, (tuple(states) if len(states) > 1 else states[0])

    m.forward = forward


def _hold_workspace(rec: Recorder, x: Any, steps_bytes: float, fixed_elems: int, dtype: Any) -> None:
    """An RNN call's workspace while it runs: its part that grows with batch and steps as a transient, its fixed part
    held with the rest meanwhile (not batch-sized)."""
    fixed = x.new_empty((1, fixed_elems), dtype=dtype)
    rec.transient(steps_bytes, scaling=True)
    del fixed


def _record(rec: Recorder, m: Any, x: Any, out: Any, weights: Any, shape: RecurrentShape, phase: Phase,
            reserve_bytes: float, dtype: str | None = None) -> str:
    """Record one fused RNN op; returns its dtype (the backward runs in the forward's, outside autocast)."""
    w_bytes = sum(C.tensor_bytes(w) for w in weights)
    flops = rnn_flops(shape) * (2.0 if phase is Phase.BACKWARD else 1.0)
    if dtype is None:
        dtype = "bf16" if torch.is_autocast_enabled("cpu") else C.dtype_name(weights[0].dtype)
    if not rec.recording:
        return dtype
    read = C.tensor_bytes(x) + w_bytes + (reserve_bytes if phase is Phase.BACKWARD else 0.0)
    written = C.tensor_bytes(out) + (reserve_bytes if phase is Phase.FORWARD else w_bytes)
    rec.append(Op(f"cudnn_rnn_{m.mode.lower()}", OpClass.RECURRENT, phase, dtype, flops, read, written,
                  shape.to_row()),
               (x, *weights), grad_mode=True)  # inside an autograd.Function: what needs a gradient decides
    return dtype
