"""Workloads: what is done with a model (inference, scoring, training, LoRA, QLoRA), in which
precision and weight format, with which optimizer, shapes and parallelism. Models themselves
(`ModelSpec`, presets, parameter counts, config.json) live in `gpuadvisor.modelspec` and are
re-exported here. Everything is pure data and validation; no torch, no UI. Bad input is a UserError.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from gpuadvisor.core import limits
from gpuadvisor.core.errors import UserError
from gpuadvisor.layout import Checkpointing, Layout, Sharding
from gpuadvisor.modelspec import (
    KINDS,
    MLP_ACTS,
    NORMS,
    ModelSpec,
    _did_you_mean,
    list_presets,
    parse_param_count,
    presets_path,
    resolve_model,
    spec_from_config,
    spec_from_config_file,
)
from gpuadvisor.strenum import StrEnum


def _is_int(v: object) -> bool:
    """An int and not a bool (True would pass as 1)."""
    return isinstance(v, int) and not isinstance(v, bool)


class Mode(StrEnum):
    """What is done with the model."""

    INFERENCE = "inference"
    SCORING = "scoring"
    TRAINING = "training"
    LORA = "lora"
    QLORA = "qlora"

    @property
    def is_adapter(self) -> bool:
        """LoRA or QLoRA: a frozen base with trained adapters."""
        return self in (Mode.LORA, Mode.QLORA)

    @property
    def is_training(self) -> bool:
        return self in (Mode.TRAINING, Mode.LORA, Mode.QLORA)

    @property
    def is_forward_only(self) -> bool:
        """Inference or scoring: no-grad forwards."""
        return self in (Mode.INFERENCE, Mode.SCORING)


MODES = Mode.values()
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
#: (GGUF files quantize the embeddings and the head too; the figure is a file average as commonly quoted: llama.cpp's
#: https://github.com/ggml-org/llama.cpp/blob/master/tools/quantize/README.md measures Q4_K_M 4.84 and Q5_K_M 5.68
#: bits on Llama-2-7B, 4.80 and 5.65 on Llama-2-70B). The one table of these figures: the serving estimate reads it
#: (estimate/serve/stepcost.WEIGHT_BITS).
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
    "mxfp4": (4.25, "linear", "MXFP4 (OCP microscaling): 4-bit e2m1 + an 8-bit scale per 32 (gpt-oss's checkpoints, "
                              "whose attention stays 16-bit: about 2 % of the weights)"),
}
SHARDINGS = Sharding.values()

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
    mode: Mode = Mode.INFERENCE
    dtype: str = "bf16"
    batch: int = 1
    seq_len: int = 0
    gen_tokens: int = 128  # inference: tokens decoded after the prompt (KV cache holds prompt+these)
    optimizer: str = DEFAULT_OPTIMIZER
    mixed_precision: bool = True
    checkpointing: bool = False
    num_gpus: int = 1
    sharding: Sharding = Sharding.NONE
    tensor_parallel: int = 1
    lora_rank: int = 16
    lora_targets: str = "all"  # "all" linear layers or "attn" (q,k,v,o)
    train_tokens: float = 0.0  # training: token budget for the time estimate (0: one step)
    quant: str = "none"  # weight format (QUANT_FORMATS); inference, scoring and QLoRA
    quant_bits: float = 0.0  # quant "custom": bits per weight of every tensor (e.g. a GGUF file's average)
    offload: bool = False  # inference: layers that do not fit stay in host memory (llama.cpp -ngl)
    scoring: str = "logprobs"  # scoring: "logprobs" (lm-eval: log-softmax of 16-bit logits) or "loss" (fp32 CE)
    # fp32 matmuls on TF32 tensor cores (torch.backends.cuda.matmul.allow_tf32, set_float32_matmul_precision("high"),
    # NGC's containers); fp32 convolutions take TF32 whatever this says (cuDNN's default)
    tf32: bool = False
    # traced models (model.kind "traced") only:
    channels_last: bool = False  # images in NHWC (torch.channels_last), as cuDNN runs 16-bit convolutions
    freeze: tuple[str, ...] = ()  # parameter-name globs that do not train (transfer learning)
    trainable: tuple[str, ...] = ()  # parameter-name globs that train; all others are frozen
    input_shape: tuple[int, ...] = ()  # per-sample input shape (3x224x224) where the model has no example batch
    train_samples: float = 0.0  # training: samples to train on (epochs x dataset size) for the time estimate

    def __post_init__(self) -> None:
        # text from the CLI, JSON or a caller becomes the enum member; unknown text stays for validate()
        object.__setattr__(self, "mode", Mode.coerce(self.mode))
        object.__setattr__(self, "sharding", Sharding.coerce(self.sharding))

    @property
    def seq(self) -> int:
        if self.seq_len:
            return self.seq_len
        m = self.model
        if self.mode == Mode.INFERENCE and m.kind == "decoder" and m.max_positions > self.gen_tokens:
            return min(m.default_seq_len, m.max_positions - self.gen_tokens)  # leave room to generate
        return m.default_seq_len

    @property
    def is_training(self) -> bool:
        return self.mode in (Mode.TRAINING, Mode.LORA, Mode.QLORA)

    @property
    def is_adapter(self) -> bool:
        """LoRA or QLoRA: a frozen base with trained adapters."""
        return self.mode in (Mode.LORA, Mode.QLORA)

    @property
    def quant_format(self) -> str:
        """The weight format in effect: QLoRA's base is NF4 unless a format is given."""
        if self.mode == Mode.QLORA and self.quant == "none":
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
    def layout(self) -> Layout:
        """The step estimate's layout as the one `Layout` type: tensor parallel, the data-parallel replicas the
        GPUs leave, the per-GPU micro-batch, sharding and recomputation. The fields it is built from
        (`num_gpus`, `tensor_parallel`, `sharding`, `checkpointing`) stay on the Workload: the memory and step
        estimates read them, the workload's copies vary them (`with_(num_gpus=...)`), and a cached estimate keys
        on them. Training layouts with pipeline, context or expert parallelism are the TrainingLayout question's
        (request.py)."""
        return Layout(tp=self.tensor_parallel, replicas=self.data_parallel, micro_batch=self.micro_batch,
                      sharding=self.sharding,
                      checkpointing=Checkpointing.FULL if self.checkpointing else Checkpointing.NONE)

    @property
    def micro_batch(self) -> int:
        """Sequences per GPU per step (global batch split over data-parallel ranks, rounded up)."""
        return -(-self.batch // self.data_parallel)

    @property
    def weight_dtype(self) -> str:
        if self.mode == Mode.QLORA:
            return "int4"
        if self.quant_format in ("int8", "fp8", "q8_0"):
            return "int8" if self.quant_format != "fp8" else "fp8"
        if self.quant_format != "none":
            return "int4"
        if self.mode == Mode.TRAINING and self.mixed_precision and self.dtype in ("bf16", "fp16"):
            return "fp32"
        return self.dtype

    @property
    def compute_dtype(self) -> str:
        if self.mode == Mode.QLORA:
            return "bf16" if self.dtype in ("int4", "bf16", "int8") else self.dtype
        return COMPUTE_DTYPE[self.dtype]

    @property
    def math_dtype(self) -> str:
        """The rate its matmuls run at: compute_dtype, or "tf32" for fp32 with TF32 matmuls (--tf32). Memory and
        bytes go by compute_dtype: TF32 keeps FP32 tensors."""
        return "tf32" if self.tf32 and self.compute_dtype == "fp32" else self.compute_dtype

    def with_(self, **changes: Any) -> Workload:
        """A validated copy with `changes`. Each instance keeps the copies it made (the workload is frozen,
        so a copy is a pure function of the changes): ranking every card asks the estimators for the same
        few copies thousands of times. The key holds each value's type, as 1, 1.0 and True are equal."""
        try:
            key = tuple((k, type(v), v) for k, v in changes.items())
            memo = self.__dict__.setdefault("_with_memo", {})
            hit = memo.get(key)
        except TypeError:  # an unhashable value (a list of globs): no memo
            return replace(self, **changes).validate()
        if hit is None:
            hit = memo[key] = replace(self, **changes).validate()
        return hit

    def validate(self) -> Workload:
        """Normalised copy-free validation; raises UserError on nonsense combinations.

        One concern per check, run in this order (the first problem found is the one reported). A workload
        that passed is not checked again (it is frozen)."""
        if self.__dict__.get("_valid"):
            return self
        self._validate_names()
        self._validate_sizes()
        self._validate_parallelism()
        self._validate_quantization()
        self._validate_inference_flags()
        self._validate_training_flags()
        self._validate_traced()
        self._validate_sequence()
        self.__dict__["_valid"] = True
        return self

    def _validate_names(self) -> None:
        """Mode, dtype, optimizer and sharding are each one of a closed set."""
        if self.mode not in MODES:
            raise UserError(f"unknown mode {self.mode!r}{_did_you_mean(self.mode, MODES)}")
        if self.dtype not in DTYPES:
            raise UserError(f"unknown dtype {self.dtype!r}{_did_you_mean(self.dtype, DTYPES)}")
        if self.optimizer not in OPTIMIZERS:
            raise UserError(f"unknown optimizer {self.optimizer!r}{_did_you_mean(self.optimizer, OPTIMIZERS)}")
        if self.tf32 and self.compute_dtype != "fp32":
            raise UserError(f"--tf32 is for FP32 math (--dtype fp32); {self.compute_dtype} compute does not use it")
        if self.sharding not in SHARDINGS:
            raise UserError(f"unknown sharding {self.sharding!r}{_did_you_mean(self.sharding, SHARDINGS)}")

    def _validate_sizes(self) -> None:
        """Counts are integers (batch and GPUs at least 1), the token budget finite and >= 0."""
        for f in ("batch", "num_gpus", "tensor_parallel"):
            v = getattr(self, f)
            if not _is_int(v) or v < 1:
                raise UserError(f"{f.replace('_', ' ')} must be a positive integer, got {v!r}")
        for f in ("seq_len", "gen_tokens"):
            v = getattr(self, f)
            if not _is_int(v) or v < 0:
                raise UserError(f"{f.replace('_', ' ')} must be an integer >= 0, got {v!r}")
        limits.check("batch", self.batch)
        limits.check("gpus", self.num_gpus)
        limits.check("tp", self.tensor_parallel)
        inference = self.mode == Mode.INFERENCE
        limits.in_range("--input-len" if inference else "--seq", self.seq_len, 0, limits.MAX_TOKENS, "tokens")
        limits.in_range("--output-len", self.gen_tokens, 0, limits.MAX_TOKENS, "tokens")
        if not (self.train_tokens >= 0) or math.isinf(self.train_tokens):
            raise UserError(f"token budget must be >= 0, got {self.train_tokens!r}")

    def _validate_parallelism(self) -> None:
        """Tensor-parallel groups divide the GPUs and the attention heads (the layout's checks, gpuadvisor.layout)."""
        tensor_groups = Layout(tp=self.tensor_parallel)
        tensor_groups.check_split(self.num_gpus)
        if self.tensor_parallel > 1 and self.model.is_transformer:
            tensor_groups.check_heads(self.model, kv_heads=False)

    def _validate_quantization(self) -> None:
        """A known weight format, its bits where custom, and only where the mode keeps weights frozen."""
        if self.quant not in QUANT_FORMATS and self.quant != "custom":
            raise UserError(f"unknown quantization format {self.quant!r}"
                            f"{_did_you_mean(self.quant, (*QUANT_FORMATS, 'custom'))}")
        if self.quant == "custom" and not (1.0 <= self.quant_bits <= 16.0):
            raise UserError(f"bits per weight must be between 1 and 16, got {self.quant_bits!r}")
        if self.quant != "custom" and self.quant_bits:
            raise UserError("bits per weight are given with quantization format 'custom' only")
        if self.quant == "none":
            return
        if self.mode in (Mode.TRAINING, Mode.LORA):
            raise UserError(f"{self.mode} updates the weights, so they cannot be stored as {self.quant}; "
                            "use --mode qlora for a quantized frozen base")
        if self.mode == Mode.QLORA and self.quant not in ("nf4", "nf4-dq"):
            raise UserError(f"QLoRA keeps its base in NF4 (nf4 or nf4-dq), not {self.quant}")
        if self.dtype in ("int8", "int4", "fp8"):
            raise UserError(f"give the weight format once: --quant {self.quant} computes in bf16/fp16, "
                            f"not --dtype {self.dtype}")

    def _validate_inference_flags(self) -> None:
        """Scoring's method is known; CPU offload is for inference only."""
        if self.scoring not in SCORING:
            raise UserError(f"unknown scoring {self.scoring!r}{_did_you_mean(self.scoring, SCORING)}")
        if self.offload and self.mode != Mode.INFERENCE:
            raise UserError("CPU offload (--offload) applies to inference only")

    def _validate_training_flags(self) -> None:
        """Trainable precisions, LoRA's rank, architecture and targets, and sharding for training only."""
        if self.mode == Mode.QLORA and self.dtype in ("fp32", "fp8"):
            raise UserError(f"QLoRA quantizes the base model to 4 bits and computes in bf16/fp16, not {self.dtype}")
        if self.mode in (Mode.TRAINING, Mode.LORA) and self.dtype in ("int8", "int4"):
            raise UserError(
                f"{self.mode} with {self.dtype} weights is not supported: integer weights cannot be "
                "trained (use --mode qlora for a 4-bit base, or bf16/fp16)"
            )
        if self.mode in (Mode.LORA, Mode.QLORA):
            if not _is_int(self.lora_rank) or self.lora_rank < 1:
                raise UserError(f"LoRA rank must be a positive integer, got {self.lora_rank!r}")
            if not self.model.is_transformer:
                raise UserError(
                    f"LoRA needs a transformer architecture; {self.model.name!r} is not given as one"
                )
            if self.lora_targets not in ("all", "attn"):
                raise UserError(f"LoRA targets must be 'all' or 'attn', got {self.lora_targets!r}")
        if self.mode in (Mode.INFERENCE, Mode.SCORING) and self.sharding != Sharding.NONE:
            raise UserError("ZeRO/FSDP sharding applies to training; for inference use tensor parallel")

    def _validate_sequence(self) -> None:
        """The sequence (plus what inference generates) fits the model's learned positions and any context."""
        m = self.model
        if m.kind in ("decoder", "encoder") and m.max_positions and self.seq + (
                self.gen_tokens if self.mode == Mode.INFERENCE and m.kind == "decoder" else 0) > m.max_positions:
            raise UserError(
                f"{m.name} has learned position embeddings for {m.max_positions} tokens; "
                f"sequence {self.seq}" + (f" + {self.gen_tokens} generated" if self.mode == Mode.INFERENCE else "")
                + " is longer"
            )
        if self.seq > limits.MAX_TOKENS:
            raise UserError(f"sequence length {self.seq:,} is beyond any model's context "
                            f"({limits.MAX_TOKENS:,} tokens at most)")

    def _validate_traced(self) -> None:
        """Settings that exist for traced models only, and what traced models do not model (yet)."""
        traced_only = {"--channels-last": self.channels_last, "--freeze": self.freeze, "--trainable": self.trainable,
                       "--input": self.input_shape, "--samples": self.train_samples}
        if not self.model.is_traced:
            given = [k for k, v in traced_only.items() if v]
            if given:
                raise UserError(f"{', '.join(given)} applies to models traced from PyTorch code (torchvision:NAME, "
                                f"timm:NAME, hf:DIR, file.py:build), not to {self.model.name}")
            return
        if self.mode not in ("inference", "training"):
            raise UserError(f"{self.model.name}: traced models are estimated for inference and training, "
                            f"not {self.mode}"
                            + (" (freeze the base with --trainable GLOB for transfer learning)"
                               if self.mode in ("lora", "qlora") else ""))
        if self.quant != "none":
            raise UserError(f"{self.model.name}: quantized weights are not modelled for traced models")
        if self.tensor_parallel > 1 or self.sharding != "none":
            raise UserError(f"{self.model.name}: traced models are estimated with data parallelism only "
                            "(no --tp or --sharding)")
        if self.freeze and self.trainable:
            raise UserError("give --freeze or --trainable, not both")
        if self.is_training and self.optimizer != DEFAULT_OPTIMIZER:
            raise UserError(f"{self.model.name}: traced models are traced with {DEFAULT_OPTIMIZER}; "
                            f"--optimizer {self.optimizer} is not modelled for them")
        if (self.freeze or self.trainable) and not self.is_training:
            raise UserError("--freeze and --trainable apply to training")
        if self.train_samples and not self.is_training:
            raise UserError("--samples applies to training")
        if self.train_tokens:
            raise UserError(f"{self.model.name} is counted in samples: give --samples, not --tokens")
        if not (self.train_samples >= 0) or math.isinf(self.train_samples):
            raise UserError(f"sample budget must be >= 0, got {self.train_samples!r}")

    def to_dict(self) -> dict[str, Any]:
        d = {k: getattr(self, k) for k in self.__dataclass_fields__ if k != "model"}
        d["model"] = self.model.name
        if self.model.asked_as:
            d["model_asked_as"] = self.model.asked_as  # the name typed, where another preset's name answered
        d["seq_len"] = self.seq
        d["micro_batch"] = self.micro_batch
        d["weight_dtype"] = self.weight_dtype
        d["compute_dtype"] = self.compute_dtype
        d["math_dtype"] = self.math_dtype
        d["quant"] = self.quant_format
        d["quant_bits_per_weight"] = self.quant_bits_per_weight
        return d


def mode_of(text: str) -> str:
    """A mode as the user typed it ("train", "eval") in its canonical spelling (unknown text unchanged)."""
    v = str(text).strip().lower().replace("_", "-")
    return _ALIASES_MODE.get(v, v)


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
    if kw.get("quant") is None:  # not asked: the format the model's checkpoint ships in, where it runs frozen
        kw.pop("quant", None)
        if spec.checkpoint_quant and kw.get("mode", Mode.INFERENCE) in (Mode.INFERENCE, Mode.SCORING) \
                and kw.get("dtype", "bf16") in ("bf16", "fp16"):
            kw["quant"] = spec.checkpoint_quant
    if kw.get("mode") == Mode.SCORING:
        kw["gen_tokens"] = 0  # a scoring forward generates nothing
    if kw.get("mode") == Mode.QLORA and "dtype" not in kw:
        kw["dtype"] = "bf16"
    if "seq_len" in kw and kw["seq_len"] is None:
        kw["seq_len"] = 0
    return Workload(model=spec, **kw).validate()


__all__ = [
    "BYTES_PER_DTYPE", "DEFAULT_OPTIMIZER", "DTYPES", "KINDS", "MLP_ACTS", "MODES", "NORMS", "OPTIMIZERS",
    "QUANT_FORMATS", "SCORING", "SHARDINGS", "Mode", "ModelSpec", "Workload", "list_presets",
    "make_workload", "parse_param_count", "presets_path", "resolve_model", "spec_from_config", "spec_from_config_file",
]
