"""Workloads: which model, and what is done with it (inference, scoring, training, LoRA, QLoRA).

A model is given by a preset name ("llama-2-7b"), a parameter count ("7b", "350m"), a path
to a Hugging Face config.json, or an explicit architecture (`ModelSpec.from_architecture`).
Everything here is pure data and validation; no torch, no UI. Bad input is a UserError.
"""

from __future__ import annotations

import difflib
import math
import os
import re
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from gpuadvisor.errors import UserError
from gpuadvisor.hfconfig import architecture_from_config, load_config_file

MODES = ("inference", "scoring", "training", "lora", "qlora")
DTYPES = ("fp32", "bf16", "fp16", "fp8", "int8", "int4")
#: AdamW variants: fused (one kernel, no temporaries; Hugging Face Trainer's default since torch 2.8,
#: so the default here), foreach (torch.optim.AdamW's own default: one state-sized temporary in the
#: step), 8-bit (bitsandbytes: 1-byte states + block scales); SGD with momentum.
OPTIMIZERS = ("adamw-fused", "adamw-foreach", "adamw8bit", "sgd")
DEFAULT_OPTIMIZER = "adamw-fused"
#: scoring (evaluation) forwards: what is done with the logits of every position
SCORING = ("logprobs", "loss")

#: Weight formats by their real bits per weight (block scales and zeros included). `scope` says
#: what is stored that way: "linear" = the matmul weights inside the blocks (embeddings, LM head
#: and norms stay 16-bit, as bitsandbytes, AWQ/GPTQ and fp8 checkpoints do); "all" = every tensor
#: (GGUF files quantize the embeddings and the head too; the figure is llama.cpp's file average).
QUANT_FORMATS: dict[str, tuple[float, str, str]] = {
    # name: (bits per weight, scope, what it is)
    "none": (0.0, "none", "weights in --dtype"),
    "q4_k_m": (4.85, "all", "GGUF Q4_K_M (llama.cpp), file average"),
    "q5_k_m": (5.69, "all", "GGUF Q5_K_M (llama.cpp), file average"),
    "q8_0": (8.5, "all", "GGUF Q8_0: 8 bits + fp16 scale per 32"),
    "awq": (4.25, "linear", "AWQ int4, group 128: 4 bits + fp16 scale and zero per 128"),
    "gptq": (4.25, "linear", "GPTQ int4, group 128: 4 bits + fp16 scale and zero per 128"),
    "nf4": (4.5, "linear", "bitsandbytes NF4: 4 bits + fp32 absmax per 64"),
    "nf4-dq": (4.127, "linear", "bitsandbytes NF4, double quant: 8-bit absmax per 64 + fp32 per 256 blocks"),
    "int8": (8.0, "linear", "bitsandbytes LLM.int8: int8 + fp32 scale per row"),
    "fp8": (8.0, "linear", "fp8 e4m3, per-tensor scale (vLLM/TensorRT-LLM 'fp8')"),
}
SHARDINGS = ("none", "zero1", "zero2", "zero3", "fsdp")
KINDS = ("decoder", "encoder", "vision", "opaque")
NORMS = ("rmsnorm", "layernorm")
MLP_ACTS = ("swiglu", "geglu", "gelu", "gelu_tanh", "relu")

BYTES_PER_DTYPE = {"fp32": 4.0, "bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "int8": 1.0, "int4": 0.5}
#: dtypes whose arithmetic runs on 16-bit tensor cores when weights are quantized (weight-only)
COMPUTE_DTYPE = {"fp32": "fp32", "bf16": "bf16", "fp16": "fp16", "fp8": "fp8", "int8": "bf16", "int4": "bf16"}

_ALIASES_DTYPE = {
    "float32": "fp32", "f32": "fp32", "bfloat16": "bf16", "float16": "fp16", "half": "fp16", "f16": "fp16",
    "float8": "fp8", "e4m3": "fp8", "fp8_e4m3": "fp8", "nf4": "int4", "4bit": "int4", "8bit": "int8",
}
_ALIASES_MODE = {"infer": "inference", "train": "training", "full": "training", "finetune": "training",
                 "eval": "scoring", "evaluation": "scoring", "perplexity": "scoring", "score": "scoring"}
_ALIASES_OPT = {"adam": DEFAULT_OPTIMIZER, "adamw": DEFAULT_OPTIMIZER, "fused": "adamw-fused",
                "adamwfused": "adamw-fused", "adamw-torch-fused": "adamw-fused", "foreach": "adamw-foreach",
                "adamwforeach": "adamw-foreach", "adamw-torch": "adamw-foreach", "adam8bit": "adamw8bit",
                "8bit-adam": "adamw8bit", "adamw-8bit": "adamw8bit", "8bit": "adamw8bit", "bnb": "adamw8bit"}
_ALIASES_QUANT = {"q4km": "q4_k_m", "q4-k-m": "q4_k_m", "q5km": "q5_k_m", "q5-k-m": "q5_k_m", "q8": "q8_0",
                  "q8-0": "q8_0", "awq-int4": "awq", "gptq-int4": "gptq", "bnb-nf4": "nf4", "nf4dq": "nf4-dq",
                  "nf4-double": "nf4-dq", "llm-int8": "int8", "bnb-int8": "int8", "fp8-e4m3": "fp8", "off": "none"}
_ALIASES_SHARD = {"zero-1": "zero1", "zero-2": "zero2", "zero-3": "zero3", "ddp": "none", "off": "none"}


@dataclass(frozen=True)
class ModelSpec:
    """A model's architecture, in the figures its published config gives.

    For transformers (kind decoder/encoder/vision) the parameter count follows from the
    architecture; for `opaque` models (CNNs, diffusion UNets, or a bare "7b") it is given, with
    optional per-sample forward FLOPs and activation elements when known.
    """

    name: str
    kind: str = "decoder"  # decoder | encoder | vision | opaque
    num_layers: int = 0
    hidden_size: int = 0
    num_heads: int = 0
    num_kv_heads: int = 0
    head_dim: int = 0
    intermediate_size: int = 0
    vocab_size: int = 0
    tied_embeddings: bool = False
    num_experts: int = 1  # MoE: experts per layer (1: dense)
    experts_per_token: int = 1  # MoE: active experts per token
    norm: str = "rmsnorm"  # rmsnorm | layernorm
    mlp_act: str = "swiglu"  # swiglu | geglu | gelu | gelu_tanh | relu
    attn_bias: bool = False  # q/k/v biases (Qwen2, GPT-2, BERT)
    fused_qkv: bool = False  # one q/k/v projection (GPT-2, Phi-3, Falcon): one input copy under autocast
    mlp_bias: bool = False
    max_positions: int = 0  # learned absolute position embeddings (GPT-2, BERT, ViT); 0: rotary
    image_size: int = 0  # vision transformers: tokens = (image/patch)^2 + 1
    patch_size: int = 0
    params: int = 0  # given count (opaque models); computed for transformers
    fwd_flops_per_sample: float = 0.0  # opaque models: forward FLOPs per sample, if known
    act_elems_per_sample: float = 0.0  # opaque models: elements saved for backward per sample
    source: str = ""  # where the figures come from (preset URL, config path, "parameter count")

    # ---- derived figures -------------------------------------------------------------------
    @property
    def is_transformer(self) -> bool:
        return self.kind != "opaque"

    @property
    def q_dim(self) -> int:
        return self.num_heads * self.head_dim

    @property
    def kv_dim(self) -> int:
        return self.num_kv_heads * self.head_dim

    @property
    def gated(self) -> bool:
        return self.mlp_act in ("swiglu", "geglu")

    @property
    def embedding_params(self) -> int:
        """Lookup-table parameters (token + position embeddings): stored, but no matmul FLOPs."""
        if not self.is_transformer:
            return 0
        patch = 3 * self.patch_size**2 * self.hidden_size if self.kind == "vision" else 0
        return self.vocab_size * self.hidden_size + self.max_positions * self.hidden_size + patch

    @property
    def expert_params(self) -> int:
        """Parameters of one expert's MLP (the whole MLP of a dense layer)."""
        h, i = self.hidden_size, self.intermediate_size
        mats = 3 if self.gated else 2
        bias = (2 * i if self.gated else i) + h if self.mlp_bias else 0
        return mats * h * i + bias

    @property
    def attention_params(self) -> int:
        h = self.hidden_size
        w = h * self.q_dim + 2 * h * self.kv_dim + self.q_dim * h
        b = self.q_dim + 2 * self.kv_dim + (h if self.mlp_bias else 0) if self.attn_bias else 0
        return w + b

    @property
    def layer_params(self) -> int:
        """Parameters of one transformer block (all experts)."""
        norms = 2 * self.hidden_size * (2 if self.norm == "layernorm" else 1)
        router = self.hidden_size * self.num_experts if self.num_experts > 1 else 0
        return self.attention_params + self.num_experts * self.expert_params + router + norms

    @property
    def total_params(self) -> int:
        if not self.is_transformer or self.params > 0:
            return self.params
        head = 0 if self.tied_embeddings or self.vocab_size == 0 else self.vocab_size * self.hidden_size
        final_norm = self.hidden_size * (2 if self.norm == "layernorm" else 1)
        return self.num_layers * self.layer_params + self.embedding_params + head + final_norm

    @property
    def active_params(self) -> int:
        """Parameters used per token (MoE: only the routed experts)."""
        if not self.is_transformer or self.num_experts <= 1:
            return self.total_params
        idle = (self.num_experts - self.experts_per_token) * self.expert_params
        return self.total_params - self.num_layers * idle

    @property
    def matmul_params(self) -> int:
        """Active parameters that take part in matrix products (embedding lookups excluded; a
        tied LM head counts, since it is a matmul over the shared table)."""
        if not self.is_transformer:
            return self.params
        head_extra = self.vocab_size * self.hidden_size if self.tied_embeddings and self.kind == "decoder" else 0
        return self.active_params - self.embedding_params + head_extra

    @property
    def default_seq_len(self) -> int:
        if self.kind == "vision" and self.patch_size:
            return (self.image_size // self.patch_size) ** 2 + 1
        if not self.is_transformer:
            return 1
        if self.kind == "encoder":
            return 512
        return min(2048, self.max_positions) if self.max_positions else 2048

    # ---- constructors ------------------------------------------------------------------------
    @classmethod
    def from_params(cls, params: float, name: str | None = None) -> ModelSpec:
        """A Llama-shaped decoder of about this many parameters (for "7b"-style input).

        The shape follows the Llama scaling (hidden ~ 128 x sqrt-ish steps, 32k vocab), so that
        activations and KV cache are plausible; the parameter count is what was asked for.
        """
        if not (params > 0) or math.isinf(params):
            raise UserError(f"parameter count must be > 0, got {params!r}")
        # pick layers so that 12*L*h^2 + 2*V*h ~ params with L/h like Llama (L ~ h/128)
        vocab = 32000
        best = None
        for h in range(256, 32768 + 1, 128):
            layer = 12 * h * h + 0 * h  # attention 4h^2 + gated MLP ~ 8h^2 (i = 8h/3)
            rest = params - 2 * vocab * h
            if rest <= 0:
                continue
            layers = max(1, round(rest / layer))
            ratio = h / layers
            score = abs(math.log(max(ratio, 1e-9) / 128.0))
            if best is None or score < best[0]:
                best = (score, h, layers)
        if best is None:
            hidden, layers = 256, 1
        else:
            _, hidden, layers = best
        heads = max(1, hidden // 128)
        spec = cls(
            name=name or _fmt_params(params),
            kind="decoder",
            num_layers=int(layers),
            hidden_size=int(hidden),
            num_heads=heads,
            num_kv_heads=heads,
            head_dim=hidden // heads,
            intermediate_size=_round_to(hidden * 8 / 3, 128),
            vocab_size=vocab,
            tied_embeddings=False,
            source="parameter count (Llama-shaped architecture assumed)",
        )
        # scale the reported count to exactly what was asked: keep the shape, record the figure
        return replace(spec, params=int(params))

    @classmethod
    def from_architecture(cls, name: str = "custom", **kw: Any) -> ModelSpec:
        """Validated architecture; head_dim defaults to hidden/heads, kv heads to heads."""
        heads = int(kw.get("num_heads") or 0)
        hidden = int(kw.get("hidden_size") or 0)
        kw.setdefault("num_kv_heads", heads)
        if not kw.get("num_kv_heads"):
            kw["num_kv_heads"] = heads
        if not kw.get("head_dim") and heads:
            kw["head_dim"] = hidden // heads
        kw.setdefault("source", "architecture")
        spec = cls(name=name, **kw)
        spec.validate()
        return spec

    def validate(self) -> ModelSpec:
        if self.kind not in KINDS:
            raise UserError(f"model {self.name!r}: unknown kind {self.kind!r} (one of {', '.join(KINDS)})")
        if not self.is_transformer:
            if self.params <= 0:
                raise UserError(f"model {self.name!r}: parameter count must be > 0")
            return self
        for f in ("num_layers", "hidden_size", "num_heads", "num_kv_heads", "head_dim", "intermediate_size"):
            v = getattr(self, f)
            if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
                raise UserError(f"model {self.name!r}: {f} must be a positive integer, got {v!r}")
        if self.vocab_size < 0 or self.max_positions < 0:
            raise UserError(f"model {self.name!r}: vocab_size and max_positions must be >= 0")
        if self.num_heads % self.num_kv_heads:
            raise UserError(
                f"model {self.name!r}: num_heads ({self.num_heads}) must be a multiple of "
                f"num_kv_heads ({self.num_kv_heads})"
            )
        if self.num_experts < 1 or not (1 <= self.experts_per_token <= self.num_experts):
            raise UserError(
                f"model {self.name!r}: need 1 <= experts_per_token ({self.experts_per_token}) "
                f"<= num_experts ({self.num_experts})"
            )
        if self.norm not in NORMS:
            raise UserError(f"model {self.name!r}: norm must be one of {', '.join(NORMS)}")
        if self.mlp_act not in MLP_ACTS:
            raise UserError(f"model {self.name!r}: mlp_act must be one of {', '.join(MLP_ACTS)}")
        if self.kind == "vision" and (self.image_size <= 0 or self.patch_size <= 0):
            raise UserError(f"model {self.name!r}: a vision model needs image_size and patch_size")
        return self

    @property
    def num_params(self) -> int:
        """The parameter count used everywhere (the given count for "7b"-style input)."""
        return self.params if self.params > 0 else self.total_params

    def to_dict(self) -> dict[str, Any]:
        d = {k: getattr(self, k) for k in self.__dataclass_fields__}
        d["num_params"] = self.num_params
        d["active_params"] = self.active_params
        return d


@dataclass(frozen=True)
class Workload:
    """What is run: a model, a mode, precision, shapes, optimizer and parallelism.

    `batch` is the global batch (sequences per step, split over the data-parallel GPUs);
    `seq_len` the tokens per sequence (prompt length for inference; 0: the model's default).
    `dtype` is the weight/compute precision; for training, `mixed_precision` means fp32 weights
    with bf16/fp16 autocast (PyTorch AMP), False means weights, grads and optimizer states in
    `dtype`. QLoRA stores the frozen base in int4 and computes in bf16. For LoRA/QLoRA,
    `mixed_precision` means the step runs under bf16/fp16 autocast (Trainer(bf16=True)); False
    means a plain loop over a 16-bit model. `scoring` is a no-grad forward over the whole sequence
    that keeps the logits of every position (evaluation, perplexity, lm-eval loglikelihood).
    """

    model: ModelSpec
    mode: str = "inference"
    dtype: str = "bf16"
    batch: int = 1
    seq_len: int = 0
    gen_tokens: int = 128  # inference: tokens decoded after the prompt (KV cache holds prompt+these)
    optimizer: str = DEFAULT_OPTIMIZER
    mixed_precision: bool = True
    checkpointing: bool = False
    num_gpus: int = 1
    sharding: str = "none"
    tensor_parallel: int = 1
    lora_rank: int = 16
    lora_targets: str = "all"  # "all" linear layers or "attn" (q,k,v,o)
    train_tokens: float = 0.0  # training: token budget for the time estimate (0: one step)
    quant: str = "none"  # weight format (QUANT_FORMATS); inference, scoring and QLoRA
    quant_bits: float = 0.0  # quant "custom": bits per weight of every tensor (e.g. a GGUF file's average)
    offload: bool = False  # inference: layers that do not fit stay in host memory (llama.cpp -ngl)
    scoring: str = "logprobs"  # scoring: "logprobs" (lm-eval: log-softmax of 16-bit logits) or "loss" (fp32 CE)

    @property
    def seq(self) -> int:
        if self.seq_len:
            return self.seq_len
        m = self.model
        if self.mode == "inference" and m.kind == "decoder" and m.max_positions > self.gen_tokens:
            return min(m.default_seq_len, m.max_positions - self.gen_tokens)  # leave room to generate
        return m.default_seq_len

    @property
    def is_training(self) -> bool:
        return self.mode in ("training", "lora", "qlora")

    @property
    def quant_format(self) -> str:
        """The weight format in effect: QLoRA's base is NF4 unless a format is given."""
        if self.mode == "qlora" and self.quant == "none":
            return "nf4"
        return self.quant

    @property
    def quant_bits_per_weight(self) -> float:
        """Bits per stored weight of the quantized tensors (0: not quantized)."""
        q = self.quant_format
        return self.quant_bits if q == "custom" else QUANT_FORMATS[q][0]

    @property
    def quant_scope(self) -> str:
        """'linear' (block matmul weights only), 'all' (every tensor) or 'none'."""
        q = self.quant_format
        return "all" if q == "custom" else QUANT_FORMATS[q][1]

    @property
    def data_parallel(self) -> int:
        return self.num_gpus // self.tensor_parallel

    @property
    def micro_batch(self) -> int:
        """Sequences per GPU per step (global batch split over data-parallel ranks, rounded up)."""
        return -(-self.batch // self.data_parallel)

    @property
    def weight_dtype(self) -> str:
        if self.mode == "qlora":
            return "int4"
        if self.quant_format in ("int8", "fp8", "q8_0"):
            return "int8" if self.quant_format != "fp8" else "fp8"
        if self.quant_format != "none":
            return "int4"
        if self.mode == "training" and self.mixed_precision and self.dtype in ("bf16", "fp16"):
            return "fp32"
        return self.dtype

    @property
    def compute_dtype(self) -> str:
        if self.mode == "qlora":
            return "bf16" if self.dtype in ("int4", "bf16", "int8") else self.dtype
        return COMPUTE_DTYPE[self.dtype]

    def with_(self, **changes: Any) -> Workload:
        return replace(self, **changes).validate()

    def validate(self) -> Workload:
        """Normalised copy-free validation; raises UserError on nonsense combinations."""
        if self.mode not in MODES:
            raise UserError(f"unknown mode {self.mode!r}{_did_you_mean(self.mode, MODES)}")
        if self.dtype not in DTYPES:
            raise UserError(f"unknown dtype {self.dtype!r}{_did_you_mean(self.dtype, DTYPES)}")
        if self.optimizer not in OPTIMIZERS:
            raise UserError(f"unknown optimizer {self.optimizer!r}{_did_you_mean(self.optimizer, OPTIMIZERS)}")
        if self.sharding not in SHARDINGS:
            raise UserError(f"unknown sharding {self.sharding!r}{_did_you_mean(self.sharding, SHARDINGS)}")
        for f in ("batch", "num_gpus", "tensor_parallel"):
            v = getattr(self, f)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise UserError(f"{f.replace('_', ' ')} must be a positive integer, got {v!r}")
        for f in ("seq_len", "gen_tokens"):
            v = getattr(self, f)
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise UserError(f"{f.replace('_', ' ')} must be an integer >= 0, got {v!r}")
        if not (self.train_tokens >= 0) or math.isinf(self.train_tokens):
            raise UserError(f"token budget must be >= 0, got {self.train_tokens!r}")
        if self.num_gpus % self.tensor_parallel:
            raise UserError(
                f"{self.num_gpus} GPUs cannot be split into tensor-parallel groups of {self.tensor_parallel}"
            )
        if self.tensor_parallel > 1 and self.model.is_transformer and self.model.num_heads % self.tensor_parallel:
            raise UserError(
                f"tensor parallel {self.tensor_parallel} does not divide the {self.model.num_heads} attention heads"
            )
        if self.quant not in QUANT_FORMATS and self.quant != "custom":
            raise UserError(f"unknown quantization format {self.quant!r}"
                            f"{_did_you_mean(self.quant, (*QUANT_FORMATS, 'custom'))}")
        if self.quant == "custom" and not (1.0 <= self.quant_bits <= 16.0):
            raise UserError(f"bits per weight must be between 1 and 16, got {self.quant_bits!r}")
        if self.quant != "custom" and self.quant_bits:
            raise UserError("bits per weight are given with quantization format 'custom' only")
        if self.quant != "none":
            if self.mode in ("training", "lora"):
                raise UserError(f"{self.mode} updates the weights, so they cannot be stored as {self.quant}; "
                                "use --mode qlora for a quantized frozen base")
            if self.mode == "qlora" and self.quant not in ("nf4", "nf4-dq"):
                raise UserError(f"QLoRA keeps its base in NF4 (nf4 or nf4-dq), not {self.quant}")
            if self.dtype in ("int8", "int4", "fp8"):
                raise UserError(f"give the weight format once: --quant {self.quant} computes in bf16/fp16, "
                                f"not --dtype {self.dtype}")
        if self.scoring not in SCORING:
            raise UserError(f"unknown scoring {self.scoring!r}{_did_you_mean(self.scoring, SCORING)}")
        if self.offload and self.mode != "inference":
            raise UserError("CPU offload (--offload) applies to inference only")
        if self.mode == "qlora" and self.dtype in ("fp32", "fp8"):
            raise UserError(f"QLoRA quantizes the base model to 4 bits and computes in bf16/fp16, not {self.dtype}")
        if self.mode in ("training", "lora") and self.dtype in ("int8", "int4"):
            raise UserError(
                f"{self.mode} with {self.dtype} weights is not supported: integer weights cannot be "
                "trained (use --mode qlora for a 4-bit base, or bf16/fp16)"
            )
        if self.mode in ("lora", "qlora"):
            if not isinstance(self.lora_rank, int) or isinstance(self.lora_rank, bool) or self.lora_rank < 1:
                raise UserError(f"LoRA rank must be a positive integer, got {self.lora_rank!r}")
            if not self.model.is_transformer:
                raise UserError(
                    f"LoRA needs a transformer architecture; {self.model.name!r} is not given as one"
                )
            if self.lora_targets not in ("all", "attn"):
                raise UserError(f"LoRA targets must be 'all' or 'attn', got {self.lora_targets!r}")
        if self.mode in ("inference", "scoring") and self.sharding != "none":
            raise UserError("ZeRO/FSDP sharding applies to training; for inference use tensor parallel")
        m = self.model
        if m.kind in ("decoder", "encoder") and m.max_positions and self.seq + (
                self.gen_tokens if self.mode == "inference" and m.kind == "decoder" else 0) > m.max_positions:
            raise UserError(
                f"{m.name} has learned position embeddings for {m.max_positions} tokens; "
                f"sequence {self.seq}" + (f" + {self.gen_tokens} generated" if self.mode == "inference" else "")
                + " is longer"
            )
        if self.seq > 10_000_000:
            raise UserError(f"sequence length {self.seq} is beyond any model's context")
        return self

    def to_dict(self) -> dict[str, Any]:
        d = {k: getattr(self, k) for k in self.__dataclass_fields__ if k != "model"}
        d["model"] = self.model.name
        d["seq_len"] = self.seq
        d["micro_batch"] = self.micro_batch
        d["weight_dtype"] = self.weight_dtype
        d["compute_dtype"] = self.compute_dtype
        d["quant"] = self.quant_format
        d["quant_bits_per_weight"] = self.quant_bits_per_weight
        return d


def make_workload(model: ModelSpec | str, **kw: Any) -> Workload:
    """Workload from loosely typed input (CLI/TUI): names are normalised, aliases accepted."""
    spec = resolve_model(model) if isinstance(model, str) else model
    for key, table in (("mode", _ALIASES_MODE), ("dtype", _ALIASES_DTYPE), ("optimizer", _ALIASES_OPT),
                       ("sharding", _ALIASES_SHARD), ("quant", _ALIASES_QUANT)):
        if key in kw and isinstance(kw[key], str):
            v = kw[key].strip().lower()
            if key == "quant":
                v = v.replace("-", "_") if v.replace("-", "_") in QUANT_FORMATS else v.replace("_", "-")
                v = table.get(v, table.get(v.replace("_", "-"), v))
                if v not in QUANT_FORMATS:  # a number: bits per weight ("4.65", "4.65bpw")
                    num = v.removesuffix("bpw").strip()
                    try:
                        kw["quant_bits"] = float(num)
                        v = "custom"
                    except ValueError:
                        pass
                kw[key] = v
                continue
            if key != "dtype":
                v = v.replace("_", "-")
            kw[key] = table.get(v, v)
    if kw.get("mode") == "scoring":
        kw["gen_tokens"] = 0  # a scoring forward generates nothing
    if kw.get("mode") == "qlora" and "dtype" not in kw:
        kw["dtype"] = "bf16"
    if "seq_len" in kw and kw["seq_len"] is None:
        kw["seq_len"] = 0
    return Workload(model=spec, **kw).validate()


# ---- resolving model text ----------------------------------------------------------------------
_PARAMS_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmbt])\s*$", re.IGNORECASE)
_MULT = {"k": 1e3, "m": 1e6, "b": 1e9, "t": 1e12}


def parse_param_count(text: str) -> float | None:
    """'7b' -> 7e9, '350m' -> 3.5e8, '1.5B' -> 1.5e9; None if text is not a count."""
    m = _PARAMS_RE.match(text)
    if not m:
        return None
    return float(m.group(1)) * _MULT[m.group(2).lower()]


def resolve_model(text: str) -> ModelSpec:
    """A preset name, a parameter count ("7b"), or a path to a Hugging Face config.json."""
    if not isinstance(text, str) or not text.strip():
        raise UserError("no model given (a preset name, a parameter count like '7b', or a config.json path)")
    t = text.strip()
    n = parse_param_count(t)
    if n is not None:
        if n <= 0:
            raise UserError(f"parameter count must be > 0, got {t!r}")
        return ModelSpec.from_params(n, name=t.lower())
    if t.startswith("-") and parse_param_count(t[1:]) is not None:
        raise UserError(f"parameter count must be > 0, got {t!r}")
    p = Path(t)
    if t.endswith(".json") or p.is_file() or (p.is_dir() and (p / "config.json").is_file()):
        return spec_from_config_file(p / "config.json" if p.is_dir() else p)
    presets = _presets()
    key = _norm_name(t)
    if key in presets:
        return presets[key]
    names = sorted({s.name for s in presets.values()})
    hint = difflib.get_close_matches(t.lower(), names, n=3, cutoff=0.5)
    if not hint:
        hint = [nm for nm in names if key and key in _norm_name(nm)][:3]
    extra = f"; did you mean {', '.join(hint)}?" if hint else " (see 'gpuadvisor estimate --list-models')"
    raise UserError(f"unknown model {t!r}: not a preset, a parameter count like '7b', or a config.json{extra}")


def spec_from_config(cfg: Any, name: str = "config", origin: str = "config.json") -> ModelSpec:
    """A ModelSpec from a parsed Hugging Face config.json (hfconfig reads the format)."""
    try:
        return ModelSpec.from_architecture(name, **architecture_from_config(cfg, origin))
    except TypeError as e:
        raise UserError(f"{origin}: {e}") from None


def spec_from_config_file(path: str | os.PathLike[str]) -> ModelSpec:
    name, cfg = load_config_file(path)
    return spec_from_config(cfg, name=name, origin=str(path))


def list_presets() -> list[ModelSpec]:
    """Every preset model, in the order of the data file."""
    seen: dict[str, ModelSpec] = {}
    for spec in _presets().values():
        seen.setdefault(spec.name, spec)
    return list(seen.values())


def _norm_name(name: str) -> str:
    return re.sub(r"[\s_./]+", "-", name.strip().lower()).replace("meta-llama-", "")


def presets_path() -> Path:
    return Path(__file__).resolve().parent / "data" / "models.yaml"


@lru_cache(maxsize=1)
def _presets() -> dict[str, ModelSpec]:
    from gpuadvisor.fileio import load_yaml

    path = presets_path()
    data = load_yaml(path, "model preset file")
    if not isinstance(data, dict) or not isinstance(data.get("models"), list):
        raise UserError(f"{path}: a preset file must be a mapping with a 'models' list")
    out: dict[str, ModelSpec] = {}
    for i, entry in enumerate(data["models"]):
        if not isinstance(entry, dict) or "name" not in entry:
            raise UserError(f"{path}: model #{i + 1}: each entry needs a name")
        entry = dict(entry)
        aliases = entry.pop("aliases", []) or []
        name = str(entry.pop("name"))
        for key in ("params", "fwd_flops_per_sample", "act_elems_per_sample"):
            if key in entry:
                try:
                    entry[key] = (int if key == "params" else float)(float(entry[key]))
                except (TypeError, ValueError):
                    raise UserError(f"{path}: model {name!r}: {key} must be a number") from None
        try:
            if entry.get("kind") == "opaque":
                spec = ModelSpec(name=name, **entry).validate()
            else:
                spec = ModelSpec.from_architecture(name, **entry)
        except TypeError as e:
            raise UserError(f"{path}: model {name!r}: {e}") from None
        for label in [name, *aliases]:
            out[_norm_name(str(label))] = spec
    return out


def _did_you_mean(value: object, choices: tuple[str, ...]) -> str:
    hint = difflib.get_close_matches(str(value).lower(), choices, n=2, cutoff=0.5)
    return f"; did you mean {' or '.join(hint)}?" if hint else f" (one of {', '.join(choices)})"


def _round_to(x: float, step: int) -> int:
    return max(step, round(x / step) * step)


def _fmt_params(n: float) -> str:
    for unit, div in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if n >= div:
            return f"{n / div:.3g}{unit}"
    return f"{n:.0f}"


__all__ = [
    "BYTES_PER_DTYPE", "DEFAULT_OPTIMIZER", "DTYPES", "MODES", "OPTIMIZERS", "QUANT_FORMATS", "SHARDINGS",
    "ModelSpec", "Workload", "list_presets", "make_workload", "parse_param_count", "resolve_model",
    "spec_from_config", "spec_from_config_file",
]
