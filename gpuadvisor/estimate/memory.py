"""Peak memory per GPU of a workload: pure functions, no torch, no UI.

Memory (bytes per GPU) is the peak of a PyTorch eager step, counted tensor by tensor
(validated on an H100 in docs/validation.md):

* weights: params x bytes of the weight dtype, or of the quantization format by its real bits
  per weight (block linears only for bitsandbytes/AWQ/GPTQ/fp8, every tensor for GGUF); this
  `weights` item is also what decode reads per step. Mixed-precision training (PyTorch AMP)
  keeps fp32 master weights plus the 16-bit copies autocast makes of every matmul weight
  (not of MoE experts: grouped GEMMs run in the weights' dtype).
* gradients in the weight dtype (DDP adds its all-reduce buckets, a second copy); AdamW keeps
  two moments in the weight dtype (fp32 under AMP: 4 + 4 + 8 = 16 bytes/param), 8-bit AdamW 2
  bytes/param, SGD one momentum; only foreach AdamW allocates a state-sized temporary in the step
  (fused, the default, allocates none).
* activations saved for backward (`activations.py`), plus the logits and the fp32 log-softmax of
  the loss (about 12 bytes per logit at the peak of the loss backward). Checkpointing keeps each
  layer's input and recomputes one layer at a time. LoRA keeps adapter inputs (16-bit under
  autocast, fp32 without); LoRA on MoE keeps each layer's merged expert weights.
* inference: weights, KV cache (2 x layers x kv_heads x head_dim x tokens x batch x bytes) and
  the largest transient of one layer (prefill), logits for the last position only. Scoring:
  the KV cache of the sequence and the logits of every position (with their log-softmax or loss).
* a training step peaks early in backward (activations, partial gradients), at the end of
  backward (all gradients, the first layer's activations) or in the optimizer step (all
  gradients, states and the step's temporary); the breakdown lists the tensors alive at the
  largest (`phase` names it).
* sharding: ZeRO-1 splits optimizer states, ZeRO-2 also gradients, ZeRO-3/FSDP also weights
  (plus two gathered layers in flight, 16-bit under a mixed-precision policy); tensor parallel
  splits attention/MLP weights, their activations and the KV cache (KV heads at most).
* plus the CUDA context and allocator fragmentation, which `torch.cuda.max_memory_allocated`
  does not see (`MemoryBreakdown.tensors` excludes them).
"""

from __future__ import annotations

from typing import Any

from gpuadvisor.estimate import calibration as cal
from gpuadvisor.estimate.activations import (
    _act_bytes,
    _activations,
    _inference_transient,
    _regime,
    _sharded_mixed,
    layer_activation_bytes,
    one_layer_activation_bytes,
    scoring_logits_bytes,
)
from gpuadvisor.estimate.memory_result import ITEMS, GiB, MemoryBreakdown
from gpuadvisor.layout import Sharding
from gpuadvisor.workload import BYTES_PER_DTYPE, Mode, Workload

__all__ = [  # activation helpers stay importable from here (compute.py uses them)
    "ITEMS", "GiB", "MemoryBreakdown", "_act_bytes", "_inference_transient", "_regime", "estimate_memory",
    "kv_cache_bytes", "layer_activation_bytes", "lora_params", "optimizer_state_bytes", "weight_bytes",
]
# CUDA_CONTEXT_BYTES and ALLOCATOR_OVERHEAD are in the calibration table
__getattr__ = cal.aliases(__name__, ("CUDA_CONTEXT_BYTES", "ALLOCATOR_OVERHEAD"))
INT4_SCALE_BYTES = 4 / 64  # one fp32 absmax per block of 64 weights (bitsandbytes NF4, no double quant)


def optimizer_state_bytes(optimizer: str, weight_bytes: float) -> float:
    """Optimizer state bytes per trained parameter: AdamW two moments in the weight dtype, 8-bit
    AdamW two 1-byte moments (block scales are 0.4% more), SGD one momentum."""
    if optimizer == "adamw8bit":
        return 2.0
    if optimizer == "sgd":
        return weight_bytes
    return 2 * weight_bytes


def weight_bytes_per_param(dtype: str) -> float:
    return BYTES_PER_DTYPE[dtype] + (INT4_SCALE_BYTES if dtype == "int4" else 0.0)


def linear_fraction(m: Any) -> float:
    """Share of the parameters that are matmul weights inside the blocks (what weight-only
    quantization stores in few bits); embeddings, the LM head and norms are the rest."""
    if not m.is_transformer:
        return 1.0
    lin = m.block_params - m.num_layers * 2 * m.norm_params
    return min(1.0, lin / max(1, m.total_params))


def weight_bytes(workload: Workload) -> float:
    """Bytes of the weights on one GPU, quantized formats by their real bits per weight."""
    m = workload.model
    params = float(m.num_params) / workload.tensor_parallel
    q = workload.quant_format
    if q == "none":
        return params * weight_bytes_per_param(workload.weight_dtype)
    bits = workload.quant_bits_per_weight
    if workload.quant_scope == "all":
        return params * bits / 8.0
    frac = linear_fraction(m)
    rest = 4.0 if workload.compute_dtype == "fp32" else 2.0
    return params * (frac * bits / 8.0 + (1.0 - frac) * rest)


def matmul_weight_params(m: Any) -> float:
    """Parameters whose 16-bit copies autocast makes and keeps for backward (the tied LM head
    included). MoE experts are not among them: transformers 5 runs them as grouped GEMMs, which
    autocast does not touch, so under mixed precision they compute in the fp32 of their weights."""
    experts = m.expert_layers * m.experts_per_token * m.expert_params
    return float(m.matmul_params - experts)


def lora_params(workload: Workload) -> int:
    m = workload.model
    r = workload.lora_rank
    h, q, kv, i = m.hidden_size, m.q_dim, m.kv_dim, m.intermediate_size
    attn = r * ((h + q) + 2 * (h + kv) + (q + h))
    if m.num_experts == 1:
        mlp = r * (3 if m.gated else 2) * (h + i)
    else:  # PEFT adapts the 3-D expert tensors per expert: fused gate/up at rank 2r, down at r; router
        up = 2 * r * (h + 2 * i) if m.gated else r * (h + i)
        mlp = m.num_experts * (up + r * (i + h)) + r * (h + m.num_experts)
    return m.num_layers * (attn + (mlp if workload.lora_targets == "all" else 0))


def moe_lora_merged_bytes(workload: Workload) -> float:
    """LoRA on MoE experts (PEFT's parameter wrapper) adds B @ A to each expert tensor and the
    grouped GEMM keeps the merged weights of every layer for backward."""
    m = workload.model
    if m.num_experts == 1 or workload.lora_targets != "all" or not workload.is_adapter:
        return 0.0
    if workload.checkpointing:  # merged weights live only while one layer is recomputed, after the logits peak
        return 0.0
    ab = 2.0 if workload.mixed_precision and workload.compute_dtype != "fp32" else 4.0
    return m.routed_expert_params * ab / workload.tensor_parallel


def root_params(m: Any) -> float:
    """Parameters outside the decoder blocks (embedding, head, final norm): with a per-block fully_shard, the
    root FSDP2 module's group. The root does not reshard after forward (it would all-gather again at once for
    backward), so these stay gathered from the forward to the end of backward."""
    if not m.is_transformer:
        return 0.0
    return max(0.0, float(m.num_params - m.block_params))


def shard_ranks(workload: Workload) -> int:
    """The data-parallel ranks `workload`'s training state is split over: all of them, but under HSDP one node's
    (GPUS_PER_NODE GPUs, over the tensor-parallel degree), the rest holding replicas."""
    return Sharding(workload.sharding).shard_ranks(workload.data_parallel,
                                                   int(cal.GPUS_PER_NODE) // workload.tensor_parallel)


def fsdp2(workload: Workload) -> bool:
    """Training whose weights FSDP2 shards per block over data-parallel ranks: ZeRO-3/FSDP, and ZeRO-2 as
    FSDP2's reshard_after_forward=False (the gathered 16-bit params kept from forward through backward)."""
    return (workload.data_parallel > 1 and workload.model.is_transformer and Sharding(workload.sharding).stage >= 2
            and (workload.mode == Mode.TRAINING or Sharding(workload.sharding).stage >= 3))


def _fsdp2_training(workload: Workload, items: dict[str, float], notes: list[str]) -> str:
    """Full training under FSDP2 (`fsdp2`), phase by phase; fills `items`, returns the phase of the peak.

    Resident: the sharded params (fp32 masters under a mixed-precision policy) and optimizer states; the
    sharded gradients exist from their reduce-scatter until the next zero_grad(set_to_none=True). Four
    candidates for the peak:
    * the loss backward: the gathered params still held (the root's; under ZeRO-2 every block's too), every
      saved activation and the logits with their fp32 log-softmax; no gradient computed yet;
    * the last block's backward (the logits freed): the head's unsharded gradient, two gathered blocks, one
      block's unsharded gradient and its reduce-scatter input;
    * the root's reduce-scatter, last in backward: every block's sharded gradient, the root's unsharded 16-bit
      gradients and the reduce-scatter input they are copied into (fp32 under reduce_dtype=fp32);
    * the optimizer step: every sharded gradient (fused AdamW adds no state-sized temporary).
    """
    m, tp, dp = workload.model, workload.tensor_parallel, shard_ranks(workload)
    wd = workload.weight_dtype
    wbytes = weight_bytes_per_param(wd)
    sharded_mixed = _sharded_mixed(workload)
    gather_bytes = 2.0 if sharded_mixed else wbytes  # MixedPrecisionPolicy(param_dtype=bf16)
    reduce_bytes = 4.0 if sharded_mixed else BYTES_PER_DTYPE[wd]  # reduce_dtype=fp32
    p_gpu = float(m.num_params) / tp
    root = root_params(m) / tp
    gbytes = BYTES_PER_DTYPE[wd]
    states = p_gpu * optimizer_state_bytes(workload.optimizer, gbytes) / dp
    temps = p_gpu * (gbytes if workload.optimizer == "adamw-foreach" else 0.0) / dp
    zero2 = Sharding(workload.sharding).stage == 2
    held = (p_gpu if zero2 else root) * gather_bytes
    acts, logits, work = _activations(workload)
    loss = held + acts + logits + work
    # the last block's backward, once the loss has freed the logits: the head's unsharded gradient, that block
    # and the next prefetched gathered (already held under ZeRO-2), its unsharded gradient and reduce-scatter input
    block = m.layer_params / tp
    head_grad = m.vocab_size * m.hidden_size / tp * gather_bytes if m.kind == "decoder" else 0.0
    first_block = (held + acts + work + head_grad + (0.0 if zero2 else 2 * block * gather_bytes)
                   + block * (gather_bytes + reduce_bytes))
    block_grads = (p_gpu - root) * gbytes / dp
    root_reduce = root * (gather_bytes + reduce_bytes)
    end = block_grads + root_reduce
    grads = p_gpu * gbytes / dp
    opt = grads + temps
    items["weights"] = p_gpu * wbytes / dp
    items["optimizer states"] = states
    hybrid = Sharding(workload.sharding) is Sharding.HSDP
    notes.append(("HSDP" if hybrid else "FSDP2") + f": params, gradients and optimizer states sharded {dp} ways"
                 + (" inside each node, replicated across nodes; " if hybrid else "; ")
                 + ("every block's 16-bit params kept gathered from forward to backward (ZeRO-2: "
                    "reshard_after_forward=False)" if zero2 else
                    "the root's params (embedding, head) kept gathered from forward to backward"))
    if loss >= max(end, opt, first_block):
        items.update({"weights": items["weights"] + held, "activations": acts + work, "logits and loss": logits})
        notes.append("peak in the loss backward: every activation, the logits and no gradient yet")
        return "forward/backward"
    if first_block >= max(end, opt):
        gathered = held + (0.0 if zero2 else 2 * block * gather_bytes)
        items.update({"weights": items["weights"] + gathered, "activations": acts + work,
                      "gradients": first_block - gathered - acts - work})
        notes.append("peak in the last block's backward: every activation, the head's gradient, two gathered "
                     "blocks and one block's gradient with its reduce-scatter input")
        return "forward/backward"
    if end >= opt:
        items.update({"gradients": block_grads + root_reduce})
        notes.append("peak at the end of backward: every block's sharded gradient and the root's unsharded "
                     "gradients with their reduce-scatter input")
        return "end of backward"
    items.update({"gradients": grads, "optimizer step temporaries": temps})
    notes.append("peak in the optimizer step: activations already freed")
    return "optimizer step"


def kv_cache_bytes(workload: Workload, context: int | None = None) -> float:
    """2 x layers x kv_heads x head_dim x tokens x batch x bytes, per GPU (TP splits KV heads; a latent cache,
    ModelSpec.kv_cache_width, is whole on every rank); a sliding-window layer keeps its window's tokens only
    (ModelSpec.kv_tokens)."""
    m = workload.model
    if m.kind != "decoder":
        return 0.0
    ctx = workload.seq + workload.gen_tokens if context is None else context
    kvb = {"fp32": 4.0, "fp8": 1.0}.get(workload.dtype, 2.0)
    shards = m.kv_shards(workload.tensor_parallel)
    return m.num_layers * m.kv_cache_width * m.kv_tokens(ctx) * workload.micro_batch * kvb / shards


def estimate_memory(workload: Workload, capacity_bytes: float | None = None) -> MemoryBreakdown:
    """Peak memory per GPU for the workload, with its breakdown (see the module docstring). `capacity_bytes`: the
    card's memory, where the libraries choose what they hold by it (a traced model's NCHW convolutions:
    graph_estimate.graph_memory); the peak does not depend on it otherwise."""
    workload = workload.validate()
    if workload.model.is_traced:
        from gpuadvisor.estimate.graph_estimate import graph_memory

        return graph_memory(workload, capacity_bytes)
    m = workload.model
    tp, dp = workload.tensor_parallel, shard_ranks(workload)  # dp: the ranks sharding splits the state over
    params = float(m.num_params)
    # tensor parallel splits the layers; embeddings are vocab-parallel too
    p_gpu = params / tp
    items = dict.fromkeys(ITEMS, 0.0)
    notes: list[str] = []
    reg = _regime(workload)
    z = Sharding(workload.sharding).stage if dp > 1 else 0
    if workload.quant_format != "none":
        notes.append(f"weights as {workload.quant_format}: {workload.quant_bits_per_weight:g} bits per weight"
                     + (" (matmul weights; embeddings, head and norms 16-bit)"
                        if workload.quant_scope == "linear" else ""))

    if m.windowed and workload.mode in (Mode.INFERENCE, Mode.SCORING) and m.kind == "decoder":
        notes.append(f"KV cache: {m.sliding_layers} of {m.num_layers} layers keep only the last {m.sliding_window:,} "
                     "tokens (sliding-window attention; a chunked-attention layer, Llama 4's, at most its chunk)")
    if m.mla and workload.mode in (Mode.INFERENCE, Mode.SCORING) and m.kind == "decoder":
        notes.append(f"KV cache: a {m.kv_lora_rank}-element latent and a {m.rope_head_dim}-element rotary key a token "
                     f"and layer (multi-head latent attention, as vLLM and SGLang cache it), whole on every "
                     "tensor-parallel rank; Hugging Face transformers caches every head's keys and values instead")
    if workload.mode == Mode.INFERENCE:
        items["weights"] = weight_bytes(workload)
        items["KV cache"] = kv_cache_bytes(workload)
        items["activations"] = _inference_transient(workload)
        phase = "inference"
    elif workload.mode == Mode.SCORING:
        items["weights"] = weight_bytes(workload)
        kv = kv_cache_bytes(workload, context=workload.seq)  # use_cache defaults to True in HF models
        layer = _inference_transient(workload, last_logits=False)
        logits = scoring_logits_bytes(workload)
        hidden = float(workload.micro_batch) * workload.seq * m.hidden_size * _act_bytes(workload)
        # with labels the loss runs inside forward, while the output's KV cache is alive; lm-eval keeps
        # only `.logits`, so the output and its KV cache are freed before the log-softmax runs
        kv_at_logits = kv if workload.scoring != "logprobs" else 0.0
        if workload.scoring == "logprobs" and kv + logits / 2 > logits:  # peak at the end of forward instead
            kv_at_logits, logits = kv, logits / 2
        if logits + kv_at_logits >= layer + kv:  # the peak is at the logits; the final hidden states are alive
            items.update({"KV cache": kv_at_logits, "logits and loss": logits, "activations": hidden})
        else:
            items.update({"KV cache": kv, "activations": layer})
        phase = "scoring"
        notes.append("scoring: logits of every position " + (
            "and their log-softmax (lm-eval loglikelihood)" if workload.scoring == "logprobs"
            else "with the fp32 cross-entropy of the loss (perplexity, Trainer.evaluate)"))
    elif workload.mode == Mode.TRAINING and fsdp2(workload):
        phase = _fsdp2_training(workload, items, notes)
    else:
        full = workload.mode == Mode.TRAINING
        wd = workload.weight_dtype
        wbytes = weight_bytes_per_param(wd)
        weights = weight_bytes(workload)
        layer_w = m.layer_params / tp * wbytes if m.is_transformer else weights
        if z >= 3 and full:
            gathered = m.layer_params / tp * 2.0 if _sharded_mixed(workload) else layer_w
            weights = weights / dp + min(2 * gathered, weights * (1 - 1 / dp))
            notes.append("ZeRO-3/FSDP: weights sharded, two gathered layers in flight")
        items["weights"] = weights
        acts, logits, work = _activations(workload)
        if full:
            gbytes = BYTES_PER_DTYPE[wd]
            sbytes = optimizer_state_bytes(workload.optimizer, BYTES_PER_DTYPE[wd])
            tmp_bytes = BYTES_PER_DTYPE[wd] if workload.optimizer == "adamw-foreach" else 0.0
            grads = p_gpu * gbytes / (dp if z >= 2 else 1)
            buckets = 0.0
            if dp > 1 and workload.sharding == Sharding.NONE:  # DDP all-reduces from flat buckets, allocated up front
                buckets = p_gpu * gbytes
                notes.append("DDP: gradient buckets hold a second copy of the gradients "
                             "(gradient_as_bucket_view=False, the default)")
            states = p_gpu * sbytes / (dp if z >= 1 else 1)
            temps = p_gpu * tmp_bytes / (dp if z >= 1 else 1)
            copies = (matmul_weight_params(m) / tp * 2.0 / (dp if z >= 3 else 1)) if reg == "mixed" else 0.0
            if reg == "mixed" and workload.checkpointing:  # recomputed layers re-cast; only the head's copy stays
                copies = min(copies, m.vocab_size * m.hidden_size * 2.0 / tp)
            head_grad = (m.vocab_size * m.hidden_size / tp * gbytes) if m.kind == "decoder" else 0.0
            partial_grads = min(grads, head_grad + layer_w / wbytes * gbytes) + buckets
            grads += buckets
            items["optimizer states"] = states
            fb = copies + acts + logits + work + partial_grads
            opt = grads + temps
            # end of backward: every gradient allocated, the first layer's activations (recomputed
            # with checkpointing) still alive; the peak with a fused optimizer and checkpointing
            late = grads + one_layer_activation_bytes(workload)
            if late > max(fb, opt):
                phase = "end of backward"
                items.update({"gradients": grads, "activations": late - grads})
                notes.append("peak at the end of backward: all gradients and the first layer's activations")
            elif fb >= opt:
                phase = "forward/backward"
                items.update({"autocast weight copies": copies, "activations": acts + work,
                              "logits and loss": logits, "gradients": partial_grads})
                notes.append("peak early in backward: gradients of the head and one layer allocated so far")
            else:
                phase = "optimizer step"
                items.update({"gradients": grads, "optimizer step temporaries": temps})
                notes.append("peak in the optimizer step: activations already freed"
                             + ("" if temps else f" ({workload.optimizer}: no state-sized temporary)"))
        else:  # LoRA / QLoRA: frozen base, fp32 adapters with their gradients and optimizer states
            lp = lora_params(workload) / tp
            per = 4 + 4 + optimizer_state_bytes(workload.optimizer, 4.0)  # the step's temporary comes after the peak
            items["LoRA adapters"] = lp * per
            # the frozen base and the adapters sharded alike; the root's 16-bit params stay gathered
            if fsdp2(workload):
                items["weights"] = weights / dp + root_params(m) / tp * 2.0
                items["LoRA adapters"] = lp * per / dp
                notes.append("FSDP2: frozen base and adapters sharded (no gradient or optimizer state for the "
                             "base); the root's params (embedding, head) kept gathered from forward to backward")
            dq = (layer_w / wbytes * 2.0) if workload.mode == "qlora" else 0.0  # one dequantized layer
            items["activations"] = acts + work + dq + moe_lora_merged_bytes(workload)
            items["logits and loss"] = logits
            phase = "forward/backward"
            notes.append("LoRA: adapters kept in fp32 with their gradients and optimizer states"
                         + ("; bf16/fp16 autocast" if workload.mixed_precision else "; no autocast"))
    if workload.checkpointing and workload.is_training:
        notes.append("activation checkpointing: layer inputs kept, one layer recomputed at a time")
    tensor_total = sum(items.values())
    items["allocator overhead"] = cal.ALLOCATOR_OVERHEAD * tensor_total
    items["CUDA context"] = float(cal.CUDA_CONTEXT_BYTES)
    return MemoryBreakdown(items=tuple(items.items()), phase=phase, notes=tuple(notes))
