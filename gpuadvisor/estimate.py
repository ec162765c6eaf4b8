"""Memory and time estimates for a workload on a GPU: pure functions, no torch, no UI.

Memory (bytes per GPU) is the peak of a PyTorch eager step, counted tensor by tensor:

* weights: params x bytes of the weight dtype (int4 adds one fp32 scale per 64 weights);
  mixed-precision training (PyTorch AMP) keeps fp32 weights, which are the master copy, plus
  the bf16/fp16 copies autocast makes of every matmul weight and keeps for backward.
* gradients in the weight dtype; AdamW keeps two moments in the weight dtype (fp32 under AMP:
  4 + 4 + 8 = 16 bytes/param), 8-bit Adam 2 bytes/param, SGD one momentum; the foreach AdamW
  step allocates one more state-sized temporary.
* activations saved for backward, per layer and per token, as PyTorch eager with SDPA/flash
  attention keeps them (norm inputs in fp32, q/k/v/out, MLP intermediates, the casts autocast
  makes), plus the logits and the fp32 log-softmax of the loss (about 12 bytes per logit at
  the peak of the loss backward). Activation checkpointing keeps each layer's input and
  recomputes one layer at a time.
* inference: weights, KV cache (2 x layers x kv_heads x head_dim x tokens x batch x bytes) and
  the largest transient of one layer (prefill), logits for the last position only.
* a training step peaks either early in backward (activations, partial gradients) or in the
  optimizer step (all gradients, states and the step's temporary); the breakdown lists the
  tensors alive at whichever peak is larger (`phase` names it).
* sharding: ZeRO-1 splits optimizer states, ZeRO-2 also gradients, ZeRO-3/FSDP also weights
  (plus two gathered layers in flight); tensor parallel splits attention/MLP weights, their
  activations and the KV cache (KV heads at most).
* plus the CUDA context and allocator fragmentation, which `torch.cuda.max_memory_allocated`
  does not see (`MemoryBreakdown.tensors` excludes them).

Time is a roofline estimate: matmul FLOPs over (peak TFLOP/s x MFU) plus the bytes that
elementwise kernels and the optimizer move over (bandwidth x bandwidth efficiency). Training
FLOPs are 6 x params x tokens plus causal attention; prefill is 2 x params per token;
decode reads all active weights and the KV cache once per generated token, and is memory
bound unless the batch is large. Multi-GPU: data-parallel gradient all-reduce (ring, half of
it hidden behind backward), ZeRO-3 parameter gathers, and tensor-parallel activation
all-reduces over the card's interconnect; the scaling efficiency is ideal time / estimated time.
Every figure is an estimate; the efficiencies were calibrated on an H100 (see BENCHMARKS.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from gpuadvisor.workload import BYTES_PER_DTYPE, Workload

GiB = 2**30
CUDA_CONTEXT_BYTES = int(0.5 * GiB)  # driver context + kernel images of an idle PyTorch process
ALLOCATOR_OVERHEAD = 0.05  # caching-allocator fragmentation, as a fraction of tensor bytes
INT4_SCALE_BYTES = 4 / 64  # one fp32 absmax per block of 64 weights (bitsandbytes NF4, no double quant)
DEFAULT_INTERCONNECT_GBS = 25.0  # PCIe 4.0 x16, achievable, when the catalog has no figure
DP_OVERLAP = 0.5  # fraction of the data-parallel gradient all-reduce hidden behind backward

#: memory item names, in display order (every MemoryBreakdown has all of them, zeros included)
ITEMS = (
    "weights",
    "autocast weight copies",
    "gradients",
    "optimizer states",
    "optimizer step temporaries",
    "LoRA adapters",
    "activations",
    "logits and loss",
    "KV cache",
    "allocator overhead",
    "CUDA context",
)
NOT_TENSORS = ("allocator overhead", "CUDA context")


@dataclass(frozen=True)
class Efficiency:
    """What fraction of the peak a real step reaches. Defaults: calibrated on an H100 against the
    datasheet (BENCHMARKS.md, "Estimator validation"). With measured figures (`--probe`), the
    `*_vs_measured` fractions apply instead, since the probe already measured what is reachable."""

    mfu: float = 0.62  # matmul FLOP/s as a fraction of datasheet dense tensor peak
    bandwidth: float = 0.80  # achieved memory bandwidth as a fraction of the datasheet
    mfu_vs_measured: float = 0.78  # ... of a measured matmul peak (H100: 787 of 989 TFLOP/s measured)
    bandwidth_vs_measured: float = 0.89  # ... of a measured copy bandwidth (H100: 3.0 of 3.35 TB/s)
    interconnect: float = 0.7  # achieved fraction of the interconnect figure

    def validate(self) -> Efficiency:
        from gpuadvisor.errors import UserError

        for k in ("mfu", "bandwidth", "mfu_vs_measured", "bandwidth_vs_measured", "interconnect"):
            v = getattr(self, k)
            if not (0 < v <= 1):
                raise UserError(f"efficiency {k} must be in (0, 1], got {v!r}")
        return self

    def for_source(self, source: str) -> tuple[float, float]:
        if source == "measured":
            return self.mfu_vs_measured, self.bandwidth_vs_measured
        return self.mfu, self.bandwidth


@dataclass(frozen=True)
class HardwareFigures:
    """The figures the estimate needs about one GPU; from the catalog or from a probe run."""

    name: str
    memory_gib: float | None
    bandwidth_gbs: float | None
    tflops: dict[str, float] = field(default_factory=dict)  # dense TFLOP/s per dtype ("fp32" = FMA rate)
    tdp_w: float | None = None
    interconnect_gbs: float | None = None
    source: str = "datasheet"  # "datasheet" | "measured"
    measured_keys: tuple[str, ...] = ()  # which figures came from the probe

    @classmethod
    def from_card(cls, card: Any) -> HardwareFigures:
        tf = {}
        for dt in ("fp16", "bf16", "tf32", "fp8", "int8"):
            v = card.tensor_tflops(dt)
            if v:
                tf[dt] = float(v)
        if card.fp32_tflops:
            tf["fp32"] = float(card.fp32_tflops)
        return cls(
            name=card.name,
            memory_gib=card.memory_gib,
            bandwidth_gbs=card.memory_bandwidth_gbs,
            tflops=tf,
            tdp_w=card.tdp_w,
            interconnect_gbs=card.interconnect_gbs,
        )

    def peak_tflops(self, dtype: str) -> float | None:
        """Matmul peak for a compute dtype; fp32 uses TF32 tensor cores where the card has them
        (PyTorch's default for matmul is still strict fp32, so fp32 is taken as the FMA rate)."""
        if dtype == "fp32":
            return self.tflops.get("fp32")
        if dtype == "fp8":
            return self.tflops.get("fp8") or self.tflops.get("bf16") or self.tflops.get("fp16")
        return self.tflops.get(dtype) or self.tflops.get("fp16") or self.tflops.get("bf16") or self.tflops.get("fp32")

    @property
    def memory_bytes(self) -> float | None:
        return None if self.memory_gib is None else self.memory_gib * GiB


def measured_figures(device: Any) -> dict[str, float]:
    """Map a probe DeviceResult's measurements onto estimate figures (the one place that knows
    the probe keys): bandwidth_gbs from memory.triad (else memory.copy), tflops per dtype from
    tensor.<dtype>, fp32 from fp32.fma."""
    out: dict[str, float] = {}

    def val(key: str) -> float | None:
        m = device.measurement(key)
        v = getattr(m, "value", None) if m is not None else None
        return float(v) if v is not None and v > 0 else None

    bw = val("memory.triad") or val("memory.copy")
    if bw:
        out["bandwidth_gbs"] = bw
    for dt in ("fp16", "bf16", "tf32", "fp8", "int8"):
        v = val(f"tensor.{dt}")
        if v:
            out[f"tflops.{dt}"] = v
    v = val("fp32.fma")
    if v:
        out["tflops.fp32"] = v
    return out


def apply_measured(hw: HardwareFigures, figures: dict[str, float]) -> HardwareFigures:
    """The same card with measured figures replacing datasheet ones (memory size and TDP stay)."""
    if not figures:
        return hw
    tf = dict(hw.tflops)
    for k, v in figures.items():
        if k.startswith("tflops."):
            tf[k.split(".", 1)[1]] = v
    return replace(
        hw,
        bandwidth_gbs=figures.get("bandwidth_gbs", hw.bandwidth_gbs),
        tflops=tf,
        source="measured",
        measured_keys=tuple(sorted(figures)),
    )


@dataclass(frozen=True)
class MemoryBreakdown:
    """Peak bytes per GPU, item by item (`ITEMS` order, zeros kept); `total` is their sum."""

    items: tuple[tuple[str, float], ...]
    phase: str  # "inference", "forward/backward", "optimizer step"
    notes: tuple[str, ...] = ()

    @property
    def total(self) -> float:
        return float(sum(v for _, v in self.items))

    @property
    def tensors(self) -> float:
        """What torch.cuda.max_memory_allocated would report: total less context and fragmentation."""
        return float(sum(v for k, v in self.items if k not in NOT_TENSORS))

    def get(self, name: str) -> float:
        return next((v for k, v in self.items if k == name), 0.0)

    def as_dict(self) -> dict[str, float]:
        return dict(self.items)

    @property
    def total_gib(self) -> float:
        return self.total / GiB

    def to_dict(self) -> dict[str, Any]:
        return {
            "total_bytes": self.total,
            "total_gib": round(self.total_gib, 3),
            "tensor_bytes": self.tensors,
            "phase": self.phase,
            "items": {k: v for k, v in self.items},
            "notes": list(self.notes),
        }


@dataclass(frozen=True)
class ComputeEstimate:
    """Time and throughput per GPU configuration. All figures are estimates.

    Training: `step_time_s` for one global batch, `time_s` for the token budget (one step if
    none). Inference: prefill of the batch's prompts, then `gen_tokens` decode steps; `time_s`
    is both together. `bound` says which roofline limit dominates ("compute" or "memory").
    """

    mode: str
    time_s: float | None
    step_time_s: float | None = None
    tokens_per_s: float | None = None  # training tokens/s, all GPUs together
    steps: float | None = None
    flops_per_step: float | None = None
    prefill_time_s: float | None = None
    prefill_tokens_per_s: float | None = None
    prefill_bound: str | None = None
    decode_step_s: float | None = None
    decode_tokens_per_s: float | None = None  # generated tokens/s over the whole batch
    decode_bound: str | None = None
    bound: str | None = None
    comm_time_s: float = 0.0
    scaling_efficiency: float = 1.0
    mfu: float = 0.0
    bandwidth_efficiency: float = 0.0
    hardware_source: str = "datasheet"
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        d = {k: getattr(self, k) for k in self.__dataclass_fields__}
        d["notes"] = list(self.notes)
        d["estimate"] = True
        return d


# ---- memory ----------------------------------------------------------------------------------
def _regime(w: Workload) -> str:
    """'fp32', 'pure' (16-bit weights and activations) or 'mixed' (fp32 weights, 16-bit autocast)."""
    cd = w.compute_dtype
    if cd == "fp32":
        return "fp32"
    if w.mode == "training" and w.mixed_precision:
        return "mixed"
    return "pure"


def _act_bytes(w: Workload) -> float:
    return 4.0 if w.compute_dtype == "fp32" else 2.0


def _norm_saved(w: Workload, consumers: int) -> float:
    """Bytes per token per unit hidden a norm keeps for backward, its output included."""
    m, reg = w.model, _regime(w)
    if m.norm == "rmsnorm":  # HF python RMSNorm: fp32 upcast kept, normalized kept, output
        return {"fp32": 12.0, "pure": 8.0, "mixed": 6.5 + 2.0 * consumers}[reg]
    return {"fp32": 8.0, "pure": 4.0, "mixed": 4.0 + 2.0 * consumers}[reg]  # native LayerNorm


def _mlp_saved_units(m: Any, regime: str) -> float:
    """Saved tensors of the MLP, in units of (tokens x intermediate x activation bytes).

    SwiGLU keeps gate, SiLU output, up and product (measured 3.5 units: one is shared); GPT-2's
    tanh GELU is a Python formula whose pow/tanh run in fp32 under autocast (8 units of 2 bytes).
    """
    if m.mlp_act == "gelu_tanh" and regime == "mixed":
        return 8.0
    return {"swiglu": 3.5, "geglu": 3.5, "gelu": 2.0, "gelu_tanh": 5.0, "relu": 1.0}[m.mlp_act]


def layer_activation_bytes(w: Workload) -> tuple[float, float]:
    """Saved activation bytes per token of one layer: (parts split by tensor parallel, rest)."""
    m = w.model
    a = _act_bytes(w)
    h, q, kv = m.hidden_size, m.q_dim, m.kv_dim
    inter = m.intermediate_size * m.experts_per_token
    attn_in = 1 if m.fused_qkv else 3
    mlp_in = 2 if m.gated else 1
    norms = (_norm_saved(w, attn_in) + _norm_saved(w, mlp_in)) * h
    attn = a * (3 * q + 2 * kv) + 4.0 * m.num_heads  # q, k, v, out, merged heads; fp32 logsumexp
    mlp = a * _mlp_saved_units(m, _regime(w)) * inter
    if w.mode in ("lora", "qlora"):
        # frozen base: linears and norms keep no inputs, but each adapted linear keeps an fp32
        # copy of its input (PEFT runs adapters in fp32)
        fused = m.fused_qkv
        adapted = 4.0 * ((1 if fused else 3) * h + q)
        if w.lora_targets == "all":
            adapted += 4.0 * ((1 if (fused or not m.gated) else 2) * h + inter)
        saved = a * (h + q + h + inter) + (2 * a * h if m.norm == "rmsnorm" else 0.0)
        mlp += adapted - saved
    if m.num_experts > 1:
        mlp += 4.0 * m.num_experts + a * h * m.experts_per_token  # router logits, dispatched copies
    return attn + mlp, norms


def _activations(w: Workload) -> tuple[float, float, float]:
    """(activations saved for backward, logits+loss peak, one layer's backward working set)."""
    m = w.model
    tp = w.tensor_parallel
    b, s = w.micro_batch, w.seq
    tokens = b * s
    if not m.is_transformer:
        per = m.act_elems_per_sample * _act_bytes(w)
        return per * b / tp, 0.0, 0.0
    split, rest = layer_activation_bytes(w)
    per_layer = split / tp + rest
    layer_total = per_layer * tokens
    logits = 0.0
    if m.kind == "decoder" and m.vocab_size:
        logits = 12.0 * tokens * m.vocab_size / tp  # bf16 logits, fp32 log-softmax and its grads
    if w.checkpointing:
        reg = _regime(w)
        r = 4.0 if reg in ("fp32", "mixed") else 2.0
        # layer inputs; one layer is recomputed at a time, after the loss backward has freed the
        # logits, so only the larger of the two counts at the peak
        acts = m.num_layers * r * m.hidden_size * tokens + max(0.0, layer_total - logits)
    else:
        acts = m.num_layers * layer_total
    # embeddings output and final norm
    acts += _norm_saved(w, 1) * m.hidden_size * tokens
    work = 0.0  # measured: backward temporaries stay within what the freed activations leave
    return acts, logits, work


def _inference_transient(w: Workload) -> float:
    """Largest set of temporaries alive at once in a no-grad forward of one layer, plus logits."""
    m = w.model
    b, s, tp = w.micro_batch, w.seq, w.tensor_parallel
    if not m.is_transformer:
        return m.act_elems_per_sample * _act_bytes(w) * b * 0.25
    a = _act_bytes(w)
    tokens = b * s
    inter = m.intermediate_size * m.experts_per_token / tp
    mlp = (3 if m.gated else 4 if m.mlp_act == "gelu_tanh" else 2) * inter * a
    attn = (5 * m.q_dim + 2 * m.kv_dim) / tp * a
    resid = (2 * a + 8.0) * m.hidden_size  # residual, normed output, fp32 norm temporaries
    logits = b * m.vocab_size * (a + 4.0) if m.kind == "decoder" else 0.0  # last position only
    return tokens * (max(mlp, attn) + resid) + logits


def weight_bytes_per_param(dtype: str) -> float:
    return BYTES_PER_DTYPE[dtype] + (INT4_SCALE_BYTES if dtype == "int4" else 0.0)


def lora_params(w: Workload) -> int:
    m = w.model
    r = w.lora_rank
    h, q, kv, i = m.hidden_size, m.q_dim, m.kv_dim, m.intermediate_size
    attn = r * ((h + q) + 2 * (h + kv) + (q + h))
    mlp = r * (3 if m.gated else 2) * (h + i) * m.num_experts
    return m.num_layers * (attn + (mlp if w.lora_targets == "all" else 0))


def kv_cache_bytes(w: Workload, context: int | None = None) -> float:
    """2 x layers x kv_heads x head_dim x tokens x batch x bytes, per GPU (TP splits KV heads)."""
    m = w.model
    if m.kind != "decoder":
        return 0.0
    ctx = w.seq + w.gen_tokens if context is None else context
    kvb = {"fp32": 4.0, "fp8": 1.0}.get(w.dtype, 2.0)
    shards = min(w.tensor_parallel, m.num_kv_heads)
    return 2.0 * m.num_layers * m.kv_dim * ctx * w.micro_batch * kvb / shards


def estimate_memory(w: Workload) -> MemoryBreakdown:
    """Peak memory per GPU for the workload, with its breakdown (see the module docstring)."""
    w = w.validate()
    m = w.model
    tp, dp = w.tensor_parallel, w.data_parallel
    params = float(m.num_params)
    # tensor parallel splits the layers; embeddings are vocab-parallel too
    p_gpu = params / tp
    items = dict.fromkeys(ITEMS, 0.0)
    notes: list[str] = []
    reg = _regime(w)
    z = {"none": 0, "zero1": 1, "zero2": 2, "zero3": 3, "fsdp": 3}[w.sharding] if dp > 1 else 0

    if w.mode == "inference":
        items["weights"] = p_gpu * weight_bytes_per_param(w.dtype)
        items["KV cache"] = kv_cache_bytes(w)
        items["activations"] = _inference_transient(w)
        phase = "inference"
    else:
        full = w.mode == "training"
        wd = w.weight_dtype
        wbytes = weight_bytes_per_param(wd)
        weights = p_gpu * wbytes
        layer_w = m.layer_params / tp * wbytes if m.is_transformer else weights
        if z >= 3 and full:
            weights = weights / dp + min(2 * layer_w, weights * (1 - 1 / dp))
            notes.append("ZeRO-3/FSDP: weights sharded, two gathered layers in flight")
        items["weights"] = weights
        acts, logits, work = _activations(w)
        if full:
            gbytes = BYTES_PER_DTYPE[wd]
            sbytes = {"adamw": 2 * BYTES_PER_DTYPE[wd], "adamw8bit": 2.0, "sgd": BYTES_PER_DTYPE[wd]}[w.optimizer]
            tmp_bytes = BYTES_PER_DTYPE[wd] if w.optimizer == "adamw" else 0.0
            grads = p_gpu * gbytes / (dp if z >= 2 else 1)
            states = p_gpu * sbytes / (dp if z >= 1 else 1)
            temps = p_gpu * tmp_bytes / (dp if z >= 1 else 1)
            copies = (float(m.matmul_params) / tp * 2.0 / (dp if z >= 3 else 1)) if reg == "mixed" else 0.0
            if reg == "mixed" and w.checkpointing:  # recomputed layers re-cast; only the head's copy stays
                copies = min(copies, m.vocab_size * m.hidden_size * 2.0 / tp)
            head_grad = (m.vocab_size * m.hidden_size / tp * gbytes) if m.kind == "decoder" else 0.0
            partial_grads = min(grads, head_grad + layer_w / wbytes * gbytes)
            items["optimizer states"] = states
            fb = copies + acts + logits + work + partial_grads
            opt = grads + temps
            if fb >= opt:
                phase = "forward/backward"
                items.update({"autocast weight copies": copies, "activations": acts + work,
                              "logits and loss": logits, "gradients": partial_grads})
                notes.append("peak early in backward: gradients of the head and one layer allocated so far")
            else:
                phase = "optimizer step"
                items.update({"gradients": grads, "optimizer step temporaries": temps})
                notes.append("peak in the optimizer step: activations already freed")
        else:  # LoRA / QLoRA: frozen base, fp32 adapters with AdamW
            lp = lora_params(w) / tp
            items["LoRA adapters"] = lp * (4 + 4 + 8 + 4)
            dq = (layer_w / wbytes * 2.0) if w.mode == "qlora" else 0.0  # one dequantized layer
            items["activations"] = acts + work + dq
            items["logits and loss"] = logits
            phase = "forward/backward"
            notes.append("LoRA: adapters kept in fp32 with their gradients and AdamW states")
    if w.checkpointing and w.is_training:
        notes.append("activation checkpointing: layer inputs kept, one layer recomputed at a time")
    tensor_total = sum(items.values())
    items["allocator overhead"] = ALLOCATOR_OVERHEAD * tensor_total
    items["CUDA context"] = float(CUDA_CONTEXT_BYTES)
    return MemoryBreakdown(items=tuple(items.items()), phase=phase, notes=tuple(notes))


# ---- compute ---------------------------------------------------------------------------------
def training_flops_per_token(w: Workload) -> float:
    """6 x matmul params (+2 more with checkpointing) plus causal attention (QK and AV)."""
    m = w.model
    if not m.is_transformer:
        f = 3 * m.fwd_flops_per_sample if m.fwd_flops_per_sample else 6.0 * m.num_params
        return f * (4 / 3 if w.checkpointing else 1.0)
    mult = 8.0 if w.checkpointing else 6.0
    if w.mode in ("lora", "qlora"):
        mult = 6.0 if w.checkpointing else 4.0  # no weight gradients for the frozen base
    causal = 0.5 if m.kind == "decoder" else 1.0
    attn = mult * m.num_layers * w.seq * m.q_dim * causal  # 2*S*d per token for QK^T and AV each
    return mult * m.matmul_params + attn


def forward_flops_per_token(w: Workload, context: int | None = None) -> float:
    m = w.model
    if not m.is_transformer:
        return m.fwd_flops_per_sample or 2.0 * m.num_params
    causal = 0.5 if m.kind == "decoder" and context is None else 1.0
    ctx = w.seq if context is None else context
    return 2.0 * m.matmul_params + 4.0 * m.num_layers * ctx * m.q_dim * causal


# Time-model constants, calibrated on an H100 with PyTorch 2.11 eager + transformers 5.17
# (tools/validate_estimates.py; BENCHMARKS.md "Estimator validation"). Byte multipliers count
# how many times a kernel sweep touches each saved byte; they are divided by bandwidth x efficiency.
ATTENTION_EFFICIENCY = 1 / 12  # SDPA attention FLOPs run at this fraction of the matmul rate
K_ACT_TRAIN = 3.3  # passes over the saved activations (forward write, backward reads/writes)
K_ACT_PREFILL = 1.5  # passes over the same activations in a no-grad forward
K_LOGITS = 46.0  # passes over the fp32 logits (log-softmax, loss and their backward, casts)
K_OPT = 2.2  # passes over the optimizer step's bytes (weights, grads, states; AMP casts)
K_MIXED = 85.0  # AMP: passes over the fp32 residual stream (upcasts, casts, fp32 norms)
K_LORA = 27.6  # LoRA: passes over each adapted layer's fp32 input copies and adapter outputs


def _pure(w: Workload) -> Workload:
    return w if _regime(w) != "mixed" else replace(w, mixed_precision=False)


def _attention_flops_fwd(w: Workload, tokens: float) -> float:
    m = w.model
    causal = 0.5 if m.kind == "decoder" else 1.0
    return 4.0 * m.num_layers * w.seq * m.q_dim * causal * tokens


def _train_step_parts(w: Workload, mem: MemoryBreakdown) -> tuple[float, float]:
    """(FLOPs at matmul-equivalent rate, bytes moved) for one step on one GPU."""
    m = w.model
    tp = w.tensor_parallel
    tokens = float(w.micro_batch * w.seq)
    lora = w.mode in ("lora", "qlora")
    if not m.is_transformer:
        f = training_flops_per_token(w) * w.micro_batch
        return f / tp, K_ACT_TRAIN * mem.get("activations") + K_OPT * (2 * mem.get("weights") + mem.get(
            "gradients") + 2 * mem.get("optimizer states"))
    head = m.vocab_size * m.hidden_size if m.kind == "decoder" else 0
    mult = 1.0 if lora else 3.0
    if w.checkpointing:
        mult += 1.0
    flops = mult * 2.0 * (m.matmul_params - head) * tokens + 6.0 * head * tokens
    flops += _attention_flops_fwd(w, tokens) * (4.5 if w.checkpointing else 3.5) / ATTENTION_EFFICIENCY
    split, rest = layer_activation_bytes(_pure(w))
    act = (split / tp + rest) * m.num_layers * tokens * (1.33 if w.checkpointing else 1.0)
    moved = K_ACT_TRAIN * act + K_LOGITS * tokens * m.vocab_size * 4.0 / tp * (m.kind == "decoder")
    wbytes = mem.get("weights")
    if lora:
        adapted = m.num_layers * tokens * (4 * m.hidden_size + m.intermediate_size) * 4.0 / tp
        moved += K_OPT * 3.0 * wbytes + K_LORA * adapted
    else:
        p = m.num_params / tp
        opt = 2 * p * BYTES_PER_DTYPE[w.weight_dtype] + p * BYTES_PER_DTYPE[w.weight_dtype]
        opt += 2 * p * {"adamw": 2 * BYTES_PER_DTYPE[w.weight_dtype], "adamw8bit": 2.0,
                        "sgd": BYTES_PER_DTYPE[w.weight_dtype]}[w.optimizer]
        if _regime(w) == "mixed":
            opt += 6.0 * p  # autocast re-casts every weight each step
            moved += K_MIXED * m.num_layers * tokens * m.hidden_size * 4.0
        moved += K_OPT * opt
    return flops / tp, moved


def estimate_compute(w: Workload, hw: HardwareFigures, efficiency: Efficiency | None = None) -> ComputeEstimate:
    """Roofline time estimate of the workload on `w.num_gpus` GPUs described by `hw`."""
    w = w.validate()
    eff = (efficiency or Efficiency()).validate()
    mfu, bw_eff = eff.for_source(hw.source)
    peak = hw.peak_tflops(w.compute_dtype)
    notes = [f"estimate: MFU {mfu:.0%} of {hw.source} matmul peak, {bw_eff:.0%} of {hw.source} bandwidth"]
    if not peak or not hw.bandwidth_gbs:
        return ComputeEstimate(mode=w.mode, time_s=None, mfu=mfu, bandwidth_efficiency=bw_eff,
                               hardware_source=hw.source, notes=(f"{hw.name}: no throughput figures in the catalog",))
    flops_rate = peak * 1e12 * mfu  # per GPU
    bw = hw.bandwidth_gbs * 1e9 * bw_eff
    link = (hw.interconnect_gbs or DEFAULT_INTERCONNECT_GBS) * 1e9 * eff.interconnect
    m = w.model
    tp, dp = w.tensor_parallel, w.data_parallel
    a = _act_bytes(w)
    mem = estimate_memory(w)

    if w.mode != "inference":
        tokens_gpu = w.micro_batch * w.seq  # per data-parallel rank
        flops, moved = _train_step_parts(w, mem)
        t_compute = flops / flops_rate
        t_mem = moved / bw
        comm = 0.0
        if dp > 1:
            grad_bytes = m.num_params / tp * (2.0 if w.compute_dtype != "fp32" else 4.0)
            if w.mode in ("lora", "qlora"):
                grad_bytes = lora_params(w) / tp * 4.0
            ring = 2.0 * (dp - 1) / dp
            comm += (1 - DP_OVERLAP) * ring * grad_bytes / link
            if w.sharding in ("zero3", "fsdp") and w.mode == "training":
                comm += 2.0 * (dp - 1) / dp * m.num_params / tp * a / link  # gathers fwd + bwd
        if tp > 1 and m.is_transformer:
            comm += 4 * m.num_layers * tokens_gpu * m.hidden_size * a * 2.0 * (tp - 1) / tp / link
        step = t_compute + t_mem + comm
        ideal = (t_compute + t_mem)
        global_tokens = w.batch * w.seq
        steps = max(1.0, w.train_tokens / global_tokens) if w.train_tokens else 1.0
        if w.train_tokens:
            notes.append(f"{w.train_tokens:.3g} tokens = {steps:,.0f} steps of {global_tokens:,} tokens")
        return ComputeEstimate(
            mode=w.mode, time_s=step * steps, step_time_s=step, tokens_per_s=global_tokens / step,
            steps=steps, flops_per_step=training_flops_per_token(w) * global_tokens,
            bound="compute" if t_compute >= t_mem + comm else "memory", comm_time_s=comm,
            scaling_efficiency=ideal / step if step else 1.0, mfu=mfu, bandwidth_efficiency=bw_eff,
            hardware_source=hw.source, notes=tuple(notes),
        )

    # inference: prefill of the prompts (last-position logits only), then decode
    b = w.micro_batch
    tokens = b * w.seq
    wbytes = mem.get("weights")
    head = m.vocab_size * m.hidden_size if m.kind == "decoder" else 0
    if m.is_transformer:
        pf_flops = (2.0 * (m.matmul_params - head) * tokens + 2.0 * head * b
                    + _attention_flops_fwd(w, tokens) / ATTENTION_EFFICIENCY) / tp
        split, rest = layer_activation_bytes(replace(w, mode="training", mixed_precision=False))
        pf_bytes = wbytes + K_ACT_PREFILL * (split / tp + rest) * m.num_layers * tokens
    else:
        pf_flops = forward_flops_per_token(w) * b / tp
        pf_bytes = wbytes + mem.get("activations")
    pf_compute = pf_flops / flops_rate
    pf_mem = pf_bytes / bw
    tp_comm = (2 * m.num_layers * tokens * m.hidden_size * a * 2.0 * (tp - 1) / tp / link) if tp > 1 else 0.0
    prefill = pf_compute + pf_mem + tp_comm
    pf_bound = "compute" if pf_compute >= pf_mem else "memory"
    decode_step = None
    decode_tps = None
    decode_bound = None
    total = prefill
    if m.kind == "decoder" and w.gen_tokens:
        ctx = w.seq + w.gen_tokens // 2  # mean context while generating
        kv_read = kv_cache_bytes(w, context=ctx)
        active_w = wbytes * (m.active_params / m.num_params if m.num_params else 1.0)
        d_mem = (active_w + kv_read) / bw
        d_compute = forward_flops_per_token(w, context=ctx) * b / tp / flops_rate
        d_comm = (2 * m.num_layers * b * m.hidden_size * a * 2.0 * (tp - 1) / tp / link) if tp > 1 else 0.0
        decode_step = max(d_mem, d_compute) + d_comm
        decode_bound = "memory" if d_mem >= d_compute else "compute"
        decode_tps = b * dp / decode_step
        total = prefill + w.gen_tokens * decode_step
    notes.append("decode reads every active weight and the KV cache once per generated token")
    return ComputeEstimate(
        mode=w.mode, time_s=total, prefill_time_s=prefill, prefill_tokens_per_s=tokens * dp / prefill,
        prefill_bound=pf_bound, decode_step_s=decode_step, decode_tokens_per_s=decode_tps,
        decode_bound=decode_bound, bound=decode_bound or pf_bound, comm_time_s=tp_comm,
        scaling_efficiency=1.0 if tp == 1 else (prefill - tp_comm) / prefill,
        mfu=mfu, bandwidth_efficiency=bw_eff, hardware_source=hw.source, notes=tuple(notes),
        flops_per_step=forward_flops_per_token(w) * w.batch * w.seq,
    )


__all__ = [
    "ITEMS", "ComputeEstimate", "Efficiency", "HardwareFigures", "MemoryBreakdown", "apply_measured",
    "estimate_compute", "estimate_memory", "kv_cache_bytes", "layer_activation_bytes", "lora_params",
    "measured_figures", "training_flops_per_token",
]
