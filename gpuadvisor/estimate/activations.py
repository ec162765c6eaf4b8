"""Activation memory of a workload, per token and per layer: what PyTorch eager keeps for
backward (training) or holds at once (no-grad forwards). Pure functions, no torch; used by
`memory` (the peak) and `compute` (bytes moved).

Regimes: 'fp32'; 'pure' (16-bit weights and activations); 'mixed' (fp32 master weights under
16-bit autocast, fp32 residual stream). FSDP/ZeRO-3 with fp32 masters computes as 'pure'.
"""

from __future__ import annotations

from typing import Any

from gpuadvisor.estimate import calibration as cal
from gpuadvisor.layout import Sharding
from gpuadvisor.workload import Mode, Workload


def _regime(workload: Workload) -> str:
    """'fp32', 'pure' (16-bit weights and activations) or 'mixed' (fp32 weights, 16-bit autocast)."""
    cd = workload.compute_dtype
    if cd == "fp32":
        return "fp32"
    if workload.mode == Mode.TRAINING and workload.mixed_precision and not _sharded_mixed(workload):
        return "mixed"
    return "pure"


def _sharded_mixed(workload: Workload) -> bool:
    """FSDP/ZeRO-3 or ZeRO-2 (FSDP2 with reshard_after_forward=False) with fp32 master weights: the gathered
    layers are cast to 16 bits (FSDP2's MixedPrecisionPolicy), so the model computes as a pure 16-bit one,
    with no autocast copies."""
    return (workload.mode == Mode.TRAINING and workload.mixed_precision and workload.data_parallel > 1
            and workload.compute_dtype != "fp32" and Sharding(workload.sharding).stage >= 2)


def _act_bytes(workload: Workload) -> float:
    return 4.0 if workload.compute_dtype == "fp32" else 2.0


def _autocast16(workload: Workload) -> bool:
    """A 16-bit model stepped under autocast (LoRA/QLoRA with Trainer(bf16=True)): the residual
    stream stays 16-bit, but autocast's fp32 ops (LayerNorm, pow in GPT-2's GELU) yield fp32."""
    return workload.is_adapter and workload.mixed_precision and workload.compute_dtype != "fp32"


def _norm_saved(workload: Workload, consumers: int) -> float:
    """Bytes per token per unit hidden a norm keeps for backward, its output included."""
    m, reg = workload.model, _regime(workload)
    if m.norm == "layernorm" and _autocast16(workload):
        reg = "mixed"
    if m.norm == "rmsnorm":  # HF python RMSNorm: fp32 upcast kept, normalized kept, output
        return {"fp32": 12.0, "pure": 8.0, "mixed": 6.5 + 2.0 * consumers}[reg]
    return {"fp32": 8.0, "pure": 4.0, "mixed": 4.0 + 2.0 * consumers}[reg]  # native LayerNorm


def _mlp_saved_units(m: Any, regime: str) -> float:
    """Saved tensors of the MLP, in units of (tokens x intermediate x activation bytes).

    SwiGLU keeps gate, SiLU output, up and product (measured: SWIGLU_SAVED_UNITS, one is shared); GPT-2's
    tanh GELU is a Python formula whose pow/tanh run in fp32 under autocast (8 units of 2 bytes).
    """
    if m.mlp_act == "gelu_tanh" and regime == "mixed":
        return 8.0
    glu = cal.SWIGLU_SAVED_UNITS
    return {"swiglu": glu, "geglu": glu, "gelu": 2.0, "gelu_tanh": 5.0, "relu": 1.0}[m.mlp_act]


def layer_activation_bytes(workload: Workload) -> tuple[float, float]:
    """Saved activation bytes per token of one layer: (parts split by tensor parallel, rest)."""
    m = workload.model
    a = _act_bytes(workload)
    h, q, kv = m.hidden_size, m.q_dim, m.kv_dim
    inter = m.active_mlp_width
    attn_in = 1 if m.fused_qkv else 3
    mlp_in = 1 if (m.num_experts > 1 or not m.gated) else 2  # MoE: the router's cast; experts get routed copies
    norms = (_norm_saved(workload, attn_in) + _norm_saved(workload, mlp_in)) * h
    attn = a * (3 * q + 2 * kv) + 4.0 * m.num_heads  # q, k, v, out, merged heads; fp32 logsumexp
    mlp = a * _mlp_saved_units(m, "mixed" if _autocast16(workload) else _regime(workload)) * inter
    if workload.is_adapter:
        # frozen base: linears and norms keep no inputs, but each adapted linear keeps an fp32
        # copy of its input (PEFT runs adapters in fp32)
        fused = m.fused_qkv
        # PEFT casts each adapter's input to the adapter dtype (fp32); under autocast the matmul then
        # keeps a 16-bit copy instead
        ab = 2.0 if workload.mixed_precision and workload.compute_dtype != "fp32" else 4.0
        adapted = ab * ((1 if fused else 3) * h + q)
        if workload.lora_targets == "all" and m.num_experts == 1:
            adapted += ab * ((1 if (fused or not m.gated) else 2) * h + inter)
        saved = a * (h + q + h + inter) + (2 * a * h if m.norm == "rmsnorm" else 0.0)
        if m.num_experts > 1:  # grouped GEMMs keep their inputs even for frozen experts
            saved = a * (h + q) + (a * h if m.norm == "rmsnorm" else 0.0)
        mlp += adapted - saved
    if m.num_experts > 1:
        # grouped experts: the routed copies of the tokens (k x h) and the expert outputs that the
        # routing weights scale (k x h), gate/up output, activation and product (4 x k x I); the
        # router keeps its logits and fp32 softmax
        k = m.experts_per_token
        ae = 4.0 if _regime(workload) in ("fp32", "mixed") else a  # grouped GEMMs compute in the weights' dtype
        mlp = ae * (4.0 * inter + 2.0 * k * h) + (a + 8.0) * m.num_experts
    return attn + mlp, norms


def _activations(workload: Workload) -> tuple[float, float, float]:
    """(activations saved for backward, logits+loss peak, one layer's backward working set)."""
    m = workload.model
    tp = workload.tensor_parallel
    b, s = workload.micro_batch, workload.seq
    tokens = b * s
    if not m.is_transformer:
        per = m.act_elems_per_sample * _act_bytes(workload)
        return per * b / tp, 0.0, 0.0
    split, rest = layer_activation_bytes(workload)
    per_layer = split / tp + rest
    layer_total = per_layer * tokens
    logits = 0.0
    if m.kind == "decoder" and m.vocab_size:
        logits = 12.0 * tokens * m.vocab_size / tp  # bf16 logits, fp32 log-softmax and its grads
    if workload.checkpointing:
        reg = _regime(workload)
        r = 4.0 if reg in ("fp32", "mixed") else 2.0
        # layer inputs; one layer is recomputed at a time, after the loss backward has freed the
        # logits, so only the larger of the two counts at the peak
        acts = m.num_layers * r * m.hidden_size * tokens + max(0.0, layer_total - logits)
    else:
        acts = m.num_layers * layer_total
    # embeddings output and final norm
    acts += _norm_saved(workload, 1) * m.hidden_size * tokens
    work = 0.0  # measured: backward temporaries stay within what the freed activations leave
    return acts, logits, work


def one_layer_activation_bytes(workload: Workload) -> float:
    """Activations of one layer (what backward holds, or recomputes, last)."""
    m = workload.model
    if not m.is_transformer:
        return 0.0
    split, rest = layer_activation_bytes(workload)
    return (split / workload.tensor_parallel + rest) * workload.micro_batch * workload.seq


def _inference_transient(workload: Workload, last_logits: bool = True) -> float:
    """Largest set of temporaries alive at once in a no-grad forward of one layer, plus the
    last position's logits (generation) unless `last_logits` is False."""
    m = workload.model
    b, s, tp = workload.micro_batch, workload.seq, workload.tensor_parallel
    if not m.is_transformer:
        return m.act_elems_per_sample * _act_bytes(workload) * b * cal.OPAQUE_TRANSIENT_FRACTION
    a = _act_bytes(workload)
    tokens = b * s
    inter = m.active_mlp_width / tp
    mlp = (3 if m.gated else 4 if m.mlp_act == "gelu_tanh" else 2) * inter * a
    if m.num_experts > 1:  # routed copies of the tokens and their expert outputs
        mlp += 2 * m.experts_per_token * m.hidden_size * a
    attn = (5 * m.q_dim + 2 * m.kv_dim) / tp * a
    # residual and normed output; HF's Python RMSNorm also keeps fp32 temporaries, LayerNorm does not
    resid = ((2 * a + 4.0) if m.norm == "rmsnorm" else 3 * a) * m.hidden_size
    extra = 0.0
    q = workload.quant_format
    if q == "int8":  # LLM.int8: int32 accumulator and an fp16 copy of the input of the widest linear
        extra = (4.0 * max(m.intermediate_size, m.q_dim + 2 * m.kv_dim) / tp + 2.0 * m.hidden_size)
    elif q == "fp8":  # dynamic activation quantization of the block input: a scaled copy and its fp8 image
        extra = 3.0 * m.hidden_size
    layer = tokens * (max(mlp, attn) + resid + extra)
    if not last_logits:
        return layer
    logits = b * m.vocab_size * (a + 4.0) if m.kind == "decoder" else 0.0  # last position only
    return layer + logits


def scoring_logits_bytes(workload: Workload) -> float:
    """Logits of every position: 16-bit logits plus either their 16-bit log-softmax (lm-eval) or
    the fp32 upcast and fp32 log-softmax of the cross-entropy loss (labels given)."""
    m = workload.model
    if m.kind != "decoder" or not m.vocab_size:
        return 0.0
    a = _act_bytes(workload)
    per = 2 * a if workload.scoring == "logprobs" else a + 8.0
    return float(workload.micro_batch) * workload.seq * m.vocab_size / workload.tensor_parallel * per
