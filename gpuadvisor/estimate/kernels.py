"""Kernel-level physics of the time model: how long one matrix product, one attention call, a
decode step's small kernels and the host's launches take. Pure functions, no torch.

Each figure is counted, not fitted to a workload mix; the few rates in it were measured once on
an H100 by lab/bench_decode.py (tools/data/decode-h100.json) and live in the calibration table
(`calibration`, docs/calibration.md says where each came from):

* GEMM: FLOPs over the large-GEMM rate, scaled by wave quantization (output tiles of 128 x 256,
  one tile per SM per wave: a last, partly filled wave costs a whole wave) and by the K ramp
  (each tile's prologue and epilogue cost as much as K_RAMP steps of its inner loop), or the
  bytes over bandwidth where that is longer (small M: decode's matrix-vector products).
* attention (SDPA, flash kernels): FLOPs over a rate that grows with the head dimension and the
  sequence length (short sequences leave the causal triangle's tiles half empty and the kernel's
  fixed costs unhidden); the backward ramps up more slowly than the forward.
* decode: every kernel of a step also costs a floor of KERNEL_FLOOR_S on the GPU (launch latency,
  ramp and tail of a kernel that moves little data), even inside a CUDA graph.
* host: PyTorch eager dispatches every operation from Python; each costs HOST_OP_S of host CPU time
  (measured: 9.5-10 us for a small op on two H100 machines' Xeon hosts), and the GPU waits for the host
  when the host is slower than the kernels it launches.
"""

from __future__ import annotations

import dataclasses
import math

from gpuadvisor.estimate import calibration as cal
from gpuadvisor.estimate.graph import AttentionShape, RecurrentShape
from gpuadvisor.strenum import StrEnum

ALIGN_ELEMS = 8  # tensor-core GEMM paths need every dimension a multiple of 16 bytes (8 bf16 elements)
# the calibrated figures this module used to define, now read from the calibration table
__getattr__ = cal.aliases(__name__, ("TILE_M", "TILE_N", "K_RAMP", "ATTN_HEAD_RAMP", "ATTN_SEQ_RAMP_FWD",
                                     "ATTN_SEQ_RAMP_FWDBWD", "KERNEL_FLOOR_S", "MISALIGNED_SLOWDOWN", "HOST_OP_S"))


def wave_efficiency(m: float, n: float, sms: int | None) -> float:
    """Fraction of the SMs busy over a GEMM's waves of output tiles (1.0 where SMs are unknown)."""
    if not sms or m <= 0 or n <= 0:
        return 1.0
    return _waves(math.ceil(m / cal.TILE_M) * math.ceil(n / cal.TILE_N), sms)


def _waves(tiles: float, sms: int) -> float:
    """The share of the SMs' time a GEMM's output tiles keep busy. A single partial wave costs a whole wave (split-K
    fills it where it can: split_k). Past the first wave, cuBLAS picks the tile size that best fills the last one:
    the tail runs at tiles TAIL_WAVE_SHARE the size (128 x 128), so it costs its fill rounded up to that share of a
    wave, not a whole wave (microsoft/vidur's fp16 linear layers on an A100, an A40 and an H100: a GEMM with a second
    wave 20-70 % full ran 1.2x-1.45x faster than two whole waves; bench/vidur_gemm.py)."""
    full, rest = divmod(tiles, sms)
    if full == 0 or rest == 0:
        return tiles / (math.ceil(tiles / sms) * sms)
    share = cal.TAIL_WAVE_SHARE
    return (tiles / sms) / (full + math.ceil(rest / sms / share) * share)


def split_k(m: float, n: float, k: float, sms: int | None) -> int:
    """How many ways cuBLAS splits the inner dimension of a GEMM with fewer output tiles than SMs (split-K /
    stream-K): enough to fill the SMs, never below SPLIT_K_MIN inner steps a split."""
    if not sms or m <= 0 or n <= 0:
        return 1
    tiles = math.ceil(m / cal.TILE_M) * math.ceil(n / cal.TILE_N)
    if tiles >= sms:
        return 1
    return max(1, min(sms // tiles, int(k // cal.SPLIT_K_MIN)))


def misaligned_slowdown(n: float, k: float) -> float:
    """The rate divisor of a GEMM whose output width `n` or inner dimension `k` is not a multiple of ALIGN_ELEMS
    (the token count m can be anything: the rows stay aligned). cuBLAS picks its kernels by the widest vector both
    leading dimensions allow: with even dimensions (4- or 8-byte vectors, BERT's 30,522 vocabulary)
    MISALIGNED_EVEN_SLOWDOWN, with an odd one (2-byte loads, GPT-2's 50,257) MISALIGNED_SLOWDOWN."""
    if not (n % ALIGN_ELEMS or k % ALIGN_ELEMS):
        return 1.0
    return cal.MISALIGNED_EVEN_SLOWDOWN if n % 2 == 0 and k % 2 == 0 else cal.MISALIGNED_SLOWDOWN


def gemm_time(m: float, n: float, k: float, *, rate: float, bandwidth: float, sms: int | None,
              elem_bytes: float = 2.0, k_ramp: float | None = None) -> float:
    """Seconds of one (m x k) @ (k x n) product at `rate` FLOP/s (large-GEMM) and `bandwidth` B/s.

    Few output tiles with a long inner dimension (a weight gradient: K = every token) split K across the idle
    SMs; the fp32 partial tiles are written and summed, which costs bandwidth."""
    if m <= 0 or n <= 0 or k <= 0:
        return 0.0
    splits = split_k(m, n, k, sms)
    ks = k / splits
    tiles = math.ceil(m / cal.TILE_M) * math.ceil(n / cal.TILE_N) * splits
    ramp = cal.K_RAMP if k_ramp is None else k_ramp
    reach = (_waves(tiles, sms) if sms else 1.0) * ks / (ks + ramp)  # the share of `rate` this product reaches
    reach /= misaligned_slowdown(n, k)
    t_compute = 2.0 * m * n * k / (rate * reach)
    t_memory = (elem_bytes * (m * k + n * k + m * n) + (2 * 4.0 * m * n * splits if splits > 1 else 0.0)) / bandwidth
    return max(t_compute, t_memory)


def grouped_gemm_time(groups: float, m: float, n: float, k: float, *, rate: float, bandwidth: float,
                      sms: int | None, elem_bytes: float = 2.0, weight_groups: float | None = None,
                      weight_bytes: float | None = None) -> float:
    """Seconds of `groups` (m x k) @ (k x n) products of one grouped launch: a MoE layer's experts, each over the
    `m` tokens routed to it (vLLM's fused_moe, torch._grouped_mm, CUTLASS grouped GEMMs). One kernel schedules
    every group's tiles, so the waves are counted over all of them, not per expert (which priced 128 experts of
    32 tokens each as 128 launches of a third of an H100's SMs); `weight_groups` of the weights are read (the
    experts that got a token; default all), at `weight_bytes` an element (quantized experts; default
    `elem_bytes`), at grouped_stream_reach of the bandwidth."""
    if groups <= 0 or m <= 0 or n <= 0 or k <= 0:
        return 0.0
    tiles = groups * math.ceil(m / cal.TILE_M) * math.ceil(n / cal.TILE_N)
    reach = (_waves(tiles, sms) if sms else 1.0) * k / (k + cal.K_RAMP) / misaligned_slowdown(n, k)
    t_compute = 2.0 * groups * m * n * k / (rate * reach)
    weights = groups if weight_groups is None else weight_groups
    per_weight = elem_bytes if weight_bytes is None else weight_bytes
    t_memory = ((elem_bytes * (groups * m * k + groups * m * n) + per_weight * weights * n * k) / bandwidth
                / grouped_stream_reach(k))
    return max(t_compute, t_memory)


def grouped_stream_reach(k: float) -> float:
    """The share of the bandwidth a grouped GEMM streams its experts' weights at, by their inner dimension
    (GROUPED_STREAM_K_RAMP: a short slice ends each tile's loads before the pipeline is full)."""
    return k / (k + cal.GROUPED_STREAM_K_RAMP)


def attention_rate(seq: float, head_dim: int, rate: float, *, backward: bool = False,
                   ramp_scale: float = 1.0) -> float:
    """FLOP/s of flash attention at this sequence length and head dimension, from the GEMM rate. `ramp_scale`
    scales the sequence ramp (a tile's loads of Q and stores of O are memory time: opcost.Rates.ramp_scale)."""
    ramp = (cal.ATTN_SEQ_RAMP_FWDBWD if backward else cal.ATTN_SEQ_RAMP_FWD) * ramp_scale
    hd = max(head_dim, 1)
    return rate * hd / (hd + cal.ATTN_HEAD_RAMP) * seq / (seq + ramp)


def attention_flops(shape: AttentionShape, *, backward: bool) -> float:
    """FLOPs of one fused attention call, as FlashAttention counts them: QK^T and PV, 4 B H Sq Skv D, half under a
    causal mask; a backward ATTN_BWD_FLOPS times its forward."""
    f = 4.0 * shape.batch * shape.heads * shape.q_length * shape.kv_length * shape.head_dim
    f *= 0.5 if shape.causal else 1.0
    return f * (cal.ATTN_BWD_FLOPS if backward else 1.0)


def attention_time(tokens: float, seq: float, q_dim: int, head_dim: int, layers: float, *, causal: bool,
                   rate: float, backward: bool = False) -> float:
    """Seconds of attention (QK^T and AV) over `tokens` tokens in sequences of `seq`, all layers;
    forward, or forward + backward (1 + ATTN_BWD_FLOPS times the forward's FLOPs) when `backward`."""
    if tokens <= 0 or seq <= 0 or not q_dim:
        return 0.0
    flops = 4.0 * tokens * seq * q_dim * layers * (0.5 if causal else 1.0)
    if backward:
        flops *= 1.0 + cal.ATTN_BWD_FLOPS
    return flops / attention_rate(seq, head_dim, rate, backward=backward)


def rnn_reserve_bytes(shape: RecurrentShape, elem_bytes: float, mode: str) -> float:
    """cuDNN's reserve space of a training call, kept for its backward (lab/rnn_memory.py: 36 training calls on an
    H200): per step, layer and direction RNN_RESERVE_LSTM_ROWS or RNN_RESERVE_GRU_ROWS rows of batch x hidden (a
    plain RNN's: its one gate and its output); each layer's final state(s); and the output of every layer but the
    last, the next layer's input."""
    s = shape
    rows = {"LSTM": cal.RNN_RESERVE_LSTM_ROWS, "GRU": cal.RNN_RESERVE_GRU_ROWS}.get(mode, s.gates + 1)
    states = 2 if mode == "LSTM" else 1
    per_step = s.batch * s.hidden_size * s.directions
    return elem_bytes * per_step * (s.layers * (rows * s.steps + states) + (s.layers - 1) * s.steps)


#: the card a recurrent call's memory assumes when it asks which training calls run persistent (the trace has no
#: card): the H100 the memory is validated on. Small-hidden calls run persistent on every card PyTorch supports
#: (cc >= 6.0), one-layer LSTMs of PERSIST_STATIC on data-center cards (cc >= 8.0 with 98 SMs or more)
PERSIST_MEMORY_CARD = ("9.0", 132)
#: a batch every persistent rule accepts, for the memory's question (rnn_training_extra_bytes)
PERSIST_BATCH = 64.0


def rnn_training_extra_bytes(shape: RecurrentShape, elem_bytes: float, dtype: str, *, backward: bool = False) -> float:
    """What a training call holds while it runs beyond an inference call's workspace: RNN_TRAIN_PERSIST_ROWS rows of
    batch x hidden per step where its forward runs as one persistent kernel (rnn_runs_persistent on
    PERSIST_MEMORY_CARD), whatever its layers and directions; nothing measurable for the others (lab/rnn_memory.py
    on an H200: the large-hidden grid, where only one-layer LSTMs run persistent, and --grid small, hidden 64-192).
    `backward`: the backward call's, where its own algorithm is persistent (the backward holds the forward's
    workspace again: lab/data/h100-rnn-kernels-new-2026-12-06/rnn_backward_memory.json).
    The trace runs at two small batches and scales to the user's, so PERSIST_STATIC's batch rule (multiples of 8 up
    to 128) cannot be told there: the memory assumes a batch it accepts (PERSIST_BATCH)."""
    s = shape
    cc, sms = PERSIST_MEMORY_CARD
    if not rnn_runs_persistent(dataclasses.replace(s, batch=PERSIST_BATCH), backward=backward, dtype=dtype,
                               compute_capability=cc, sms=sms):
        return 0.0
    return elem_bytes * cal.RNN_TRAIN_PERSIST_ROWS * s.batch * s.steps * s.hidden_size


def rnn_static_unheld_bytes(shape: RecurrentShape, elem_bytes: float, dtype: str) -> float:
    """What rnn_training_extra_bytes counts for a call that cuDNN's static persistent kernel takes only at the
    batch the trace assumes (PERSIST_BATCH), not at this call's own: PERSIST_STATIC runs LSTMs of batch 128 or less
    in multiples of 8, so at another batch the call launches its steps and does not hold those rows (the 64-1,024
    step sweep's one-layer LSTMs of hidden 256 at batch 256 and 1,024 held half their counted peak). 0 for the
    others (the small-hidden kernel takes every batch, so only the static one's batch rule can tell the two apart)."""
    cc, sms = PERSIST_MEMORY_CARD
    if rnn_runs_persistent(shape, backward=False, dtype=dtype, compute_capability=cc, sms=sms):
        return 0.0  # persistent at its own batch too: held as counted
    return rnn_training_extra_bytes(shape, elem_bytes, dtype)  # > 0 only where PERSIST_BATCH runs persistent


def rnn_workspace_bytes(shape: RecurrentShape, elem_bytes: float, mode: str, *,
                        training: bool = False) -> tuple[float, float]:
    """cuDNN's workspace for an RNN call (lab/rnn_memory.py: 138 inference calls of two grids on an H200), as (the
    part that grows with batch and steps, the part that does not): per time step, RNN_WORKSPACE_STEP_PASSES rows of
    (batch x hidden) per direction, RNN_WORKSPACE_BIDIR_PASSES more for a bidirectional call's joined output,
    RNN_WORKSPACE_INPUT_PASSES copies of the call's input (batch x input: a narrow input holds less), and the
    gates' rows for at most RNN_WORKSPACE_GATE_STEPS steps of a one-direction inference call (cuDNN projects its
    input in blocks of that many steps: past them the call grows by the other rows alone; a bidirectional call, and
    a `training` one, holds every step's: the 64-1,024-step sweep's training peaks 162 of 192 within 10 % capped,
    178 not); per layer and direction, RNN_WORKSPACE_LSTM_BYTES or _GRU_BYTES per hidden unit, never under
    RNN_WORKSPACE_FLOOR_BYTES (a hidden-64 layer holds about as much as a hidden-200 one)."""
    s = shape
    every_step = s.directions * cal.RNN_WORKSPACE_STEP_PASSES + cal.RNN_WORKSPACE_BIDIR_PASSES * (s.directions - 1)
    # a bidirectional call projects every step at once: its reverse direction starts from the last
    blocked = min(s.steps, cal.RNN_WORKSPACE_GATE_STEPS) if s.directions == 1 and not training else s.steps
    gate_steps = blocked * s.directions * s.gates
    per_unit = cal.RNN_WORKSPACE_LSTM_BYTES if mode == "LSTM" else cal.RNN_WORKSPACE_GRU_BYTES
    per_layer = max(s.hidden_size * per_unit, cal.RNN_WORKSPACE_FLOOR_BYTES)
    inputs = s.steps * cal.RNN_WORKSPACE_INPUT_PASSES * s.input_size
    return (elem_bytes * s.batch * (s.hidden_size * (s.steps * every_step + gate_steps) + inputs),
            s.layers * s.directions * per_layer)


class RnnPersistAlgo(StrEnum):
    """cuDNN's persistent RNN algorithms PyTorch picks for training calls (RNN.cpp get_algo)."""

    SMALL_H = "persist_static_small_h"  # hidden <= 192 (gated, forward): the weights in each CTA's registers
    STATIC = "persist_static"  # one-layer half-precision calls of hidden a multiple of 128, up to 1,024


def rnn_runs_persistent(shape: RecurrentShape, *, backward: bool, dtype: str, compute_capability: str | None,
                        sms: int | None) -> bool:
    """Whether a training call of cuDNN's fused RNN runs its time steps inside one persistent kernel
    (rnn_persist_algo)."""
    return rnn_persist_algo(shape, backward=backward, dtype=dtype, compute_capability=compute_capability,
                            sms=sms) is not None


def rnn_persist_algo(shape: RecurrentShape, *, backward: bool, dtype: str, compute_capability: str | None,
                     sms: int | None) -> RnnPersistAlgo | None:
    """Which persistent kernel a training call of cuDNN's fused RNN runs its time steps inside, or None where it
    launches each step's GEMM and cell kernels from the host: PyTorch's algorithm choice (aten/src/ATen/native/
    cudnn/RNN.cpp get_algo @ 00fc08aa: PERSIST_STATIC_SMALL_H for LSTM/GRU of hidden <= 192 forward and <= 128
    backward, plain RNNs <= 384 and <= 256, on cc >= 6.0; PERSIST_STATIC for fp16 one-layer unidirectional calls
    of hidden and input multiples of 128 up to 1,024, on cc 7.0 by batch and length, on cc >= 8.0 with >= 98 SMs
    (not x.6) for LSTMs of batch <= 128 in multiples of 8 and plain RNNs, never GRUs). A bf16 training call counts
    as fp16: under autocast cuDNN's RNN kernels run in half precision (lab/data/h100-rnn-calls-2026-12-05: a
    bf16-autocast LSTM of hidden 1,024, one layer, batch 64, trains 64 steps in 44 kernels, `__half` ones).
    Inference calls launch per step whatever was chosen (the H100's profiles in lab/data/h100-rnn-unseen-2026-12-05:
    a hidden-128 LSTM's inference runs 20 GEMMs and 20 cell kernels for 20 steps, its training one RNN_blockPersist
    kernel each way)."""
    if not compute_capability:
        return None
    try:
        major, minor = (int(x) for x in compute_capability.split(".")[:2])
    except ValueError:
        return None
    hidden = shape.hidden_size
    gated = shape.gates > 1  # LSTM (4 gates) and GRU (3); plain tanh/ReLU RNNs have one
    small_h = (128 if backward else 192) if gated else (256 if backward else 384)
    if major >= 6 and hidden <= small_h:
        return RnnPersistAlgo.SMALL_H
    if dtype not in ("fp16", "bf16") or shape.layers != 1 or shape.directions != 1 or hidden > 1024 or hidden % 128 \
            or shape.input_size % 128:
        return None
    batch, steps = int(shape.batch), shape.steps
    if major == 7:
        static = minor != 5 and ((batch % 16 == 0 and batch not in (80, 112)) or batch == 8) and (
            (steps >= 40 and batch <= 128) or (steps >= 20 and batch <= 96) or (steps >= 10 and batch <= 32))
    else:
        static = major >= 8 and (sms or 0) >= 98 and minor != 6 and shape.gates != 3 and batch % 8 == 0 \
            and batch <= 128 and (shape.gates == 4 or batch < 96 or hidden < 896)
    return RnnPersistAlgo.STATIC if static else None
