"""Model architectures (`ModelSpec`) and how model text resolves to one: a preset name
("llama-2-7b"), a parameter count ("7b", "350m"), a path to a Hugging Face config.json, or an
explicit architecture (`ModelSpec.from_architecture`). Pure data and validation; no torch, no UI.
Bad input is a UserError. `gpuadvisor.workload` re-exports everything here.
"""

from __future__ import annotations

import difflib
import math
import os
import re
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

from gpuadvisor.core.errors import UserError
from gpuadvisor.hfconfig import architecture_from_config, load_config_file

KINDS = ("decoder", "encoder", "vision", "opaque", "traced")
NORMS = ("rmsnorm", "layernorm")
MLP_ACTS = ("swiglu", "geglu", "gelu", "gelu_tanh", "relu")


@dataclass(frozen=True)
class ModelSpec:
    """A model's architecture, in the figures its published config gives.

    For transformers (kind decoder/encoder/vision) the parameter count follows from the
    architecture; for `opaque` models (CNNs, diffusion UNets, or a bare "7b") it is given, with
    optional per-sample forward FLOPs and activation elements when known.
    """

    name: str
    kind: str = "decoder"  # decoder | encoder | vision | opaque | traced (an op graph from PyTorch code)
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
    norms_per_layer: int = 2  # Gemma 2/3 normalize before and after attention and MLP: 4
    logit_softcap: bool = False  # Gemma 2: tanh soft-capping of the final logits (3 passes over them)
    # sliding-window attention (Mistral 7B v0.1 every layer, Gemma 2 and gpt-oss every other one): `sliding_layers`
    # of the layers attend to the last `sliding_window` tokens only, and engines keep only those tokens' K/V for them
    sliding_window: int = 0
    sliding_layers: int = 0
    # the weight format the published checkpoint ships in where it is not 16-bit (gpt-oss: "mxfp4"): inference and
    # scoring take it unless another --quant is asked (workload.make_workload)
    checkpoint_quant: str = ""
    # how a serving engine's chat endpoint renders a conversation: "template" (the tokenizer's Hugging Face chat
    # template, in the server's Python) or "harmony" (gpt-oss: vLLM and SGLang render OpenAI's harmony format
    # instead, `use_harmony` when model_type is gpt_oss); the former is what a burst queues for
    # (ServeEngine.frontend_serial_s_per_request)
    chat_format: str = "template"
    # multi-head latent attention (DeepSeek-V2/V3, Kimi K2): every head's K and V are projected up from one latent
    # of `kv_lora_rank` elements a token, which is what the engines cache (with `rope_head_dim` rotary key elements
    # shared by the heads); queries pass through a latent of `q_lora_rank` where set. head_dim is then the query and
    # key head's (its rotary part included) and v_head_dim the value head's
    kv_lora_rank: int = 0
    q_lora_rank: int = 0
    rope_head_dim: int = 0
    v_head_dim: int = 0
    # more of a MoE layer: a shared expert MLP of `shared_expert_size` beside the routed ones, which every token runs
    # (DeepSeek, Qwen2-MoE); and `dense_layers` of the layers with one dense MLP of `dense_intermediate_size` instead
    # of experts (DeepSeek-V3's first three)
    shared_expert_size: int = 0
    dense_layers: int = 0
    dense_intermediate_size: int = 0
    image_size: int = 0  # vision transformers: tokens = (image/patch)^2 + 1
    patch_size: int = 0
    params: int = 0  # given count (opaque models); computed for transformers
    fwd_flops_per_sample: float = 0.0  # opaque models: forward FLOPs per sample, if known
    act_elems_per_sample: float = 0.0  # opaque models: elements saved for backward per sample
    source: str = ""  # where the figures come from (preset URL, config path, "parameter count")
    trace: str = ""  # traced models: the model spec the op graph is traced from ("torchvision:resnet50")
    # the name as typed where it resolved to this preset under another name ("meta-llama/Llama-3.1-8B-Instruct"):
    # shown beside the preset's name, so the user sees which preset answered; not part of the architecture
    asked_as: str = field(default="", compare=False)

    # ---- derived figures -------------------------------------------------------------------
    @property
    def is_transformer(self) -> bool:
        return self.kind not in ("opaque", "traced")

    @property
    def is_traced(self) -> bool:
        """Costed from an op graph traced from PyTorch code (estimate/graph_estimate.py)."""
        return self.kind == "traced"

    @property
    def q_dim(self) -> int:
        return self.num_heads * self.head_dim

    @property
    def kv_dim(self) -> int:
        """Key (and value) elements a token has per layer in the attention kernel: with latent attention, every
        head's, up-projected from the latent (the cache holds the latent: kv_cache_width)."""
        return self.num_kv_heads * self.head_dim

    @property
    def mla(self) -> bool:
        """Multi-head latent attention: the KV cache holds one latent a token, not each head's keys and values."""
        return self.kv_lora_rank > 0

    @property
    def value_dim(self) -> int:
        return self.num_heads * (self.v_head_dim or self.head_dim)

    @property
    def attention_width(self) -> float:
        """The mean of the query-key and value widths: a query-key pair costs 4 x this in FLOPs (QK^T and PV),
        q_dim where values are as wide as keys."""
        return (self.q_dim + self.value_dim) / 2.0

    def pair_flops(self, *, decoding: bool = False) -> float:
        """FLOPs of one query-key pair of one layer, every head: QK^T and PV, 4 x attention_width. A decoding query
        under latent attention is absorbed into the latent (DeepSeek-V2's and FlashMLA's decode): it scores the
        cached latent and rotary key and sums the latent, 2 x heads x (kv_cache_width + kv_lora_rank)."""
        if decoding and self.mla:
            return 2.0 * self.num_heads * (self.kv_cache_width + self.kv_lora_rank)
        return 4.0 * self.attention_width

    @property
    def kv_cache_width(self) -> int:
        """Elements a token keeps in one layer's KV cache: its keys and values, or with latent attention its
        latent and its rotary key (DeepSeek-V3: 576 against 32,768 for 128 heads' keys and values)."""
        return self.kv_lora_rank + self.rope_head_dim if self.mla else 2 * self.kv_dim

    def kv_shards(self, tp: int) -> int:
        """Tensor-parallel ranks the KV cache is split over: the KV heads, as far as they go; a latent cache is one
        per token, which every rank keeps whole (vLLM's and SGLang's MLA under tensor parallelism)."""
        return 1 if self.mla else max(1, min(tp, self.num_kv_heads))

    @property
    def active_mlp_width(self) -> float:
        """Intermediate features a token passes through in the mean layer's MLP: its routed experts' and the
        shared expert's in an expert layer, the dense MLP's elsewhere."""
        if self.num_experts <= 1:
            return float(self.intermediate_size)
        moe = self.expert_layers / self.num_layers
        routed = self.intermediate_size * self.experts_per_token + self.shared_expert_size
        return moe * routed + (1.0 - moe) * self.dense_intermediate_size

    @property
    def expert_layers(self) -> int:
        """Layers with routed experts (0 for a dense model)."""
        return self.num_layers - self.dense_layers if self.num_experts > 1 else 0

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
        return self._mlp_params(self.intermediate_size)

    @property
    def norm_params(self) -> int:
        """Parameters of one norm (LayerNorm's bias beside its weight)."""
        return self.hidden_size * (2 if self.norm == "layernorm" else 1)

    @cached_property  # asked thousands of times per `recommend`; the spec is frozen
    def attention_params(self) -> int:
        h = self.hidden_size
        if self.mla:  # DeepSeek's projections: q (through its latent and norm), the KV latent with the rotary key
            # and its norm, the latent's up-projection to every head's key (less its rotary part) and value, o
            q = (h * self.q_lora_rank + self.q_lora_rank + self.q_lora_rank * self.q_dim if self.q_lora_rank
                 else h * self.q_dim)
            nope = self.head_dim - self.rope_head_dim
            kv = (h * self.kv_cache_width + self.kv_lora_rank
                  + self.kv_lora_rank * self.num_heads * (nope + (self.v_head_dim or self.head_dim)))
            return q + kv + self.value_dim * h
        w = h * self.q_dim + 2 * h * self.kv_dim + self.q_dim * h
        b = self.q_dim + 2 * self.kv_dim + (h if self.mlp_bias else 0) if self.attn_bias else 0
        return w + b

    def _mlp_params(self, inter: int) -> int:
        """One MLP of width `inter`, biases as the model's."""
        h = self.hidden_size
        bias = (2 * inter if self.gated else inter) + h if self.mlp_bias else 0
        return (3 if self.gated else 2) * h * inter + bias

    @cached_property  # asked thousands of times per `recommend`; the spec is frozen
    def block_params(self) -> int:
        """Parameters of all transformer blocks: attention and norms in each, a MoE layer's experts with their
        router and shared expert, a dense layer's MLP."""
        norms = 2 * self.norm_params
        moe = self.expert_layers
        expert_mlp = (self.num_experts * self.expert_params + self.hidden_size * self.num_experts
                      + (self._mlp_params(self.shared_expert_size) if self.shared_expert_size else 0))
        dense_mlp = self._mlp_params(self.dense_intermediate_size) if moe else self.expert_params
        return (self.num_layers * (self.attention_params + norms) + moe * expert_mlp
                + (self.num_layers - moe) * dense_mlp)

    @cached_property  # asked thousands of times per `recommend`; the spec is frozen
    def layer_params(self) -> int:
        """Parameters of one transformer block (all experts), the mean block where layers differ."""
        return round(self.block_params / self.num_layers) if self.num_layers else 0

    @cached_property  # asked thousands of times per `recommend`; the spec is frozen
    def total_params(self) -> int:
        if not self.is_transformer or self.params > 0:
            return self.params
        head = 0 if self.tied_embeddings or self.vocab_size == 0 else self.vocab_size * self.hidden_size
        return self.block_params + self.embedding_params + head + self.norm_params

    @property
    def routed_expert_params(self) -> int:
        """Parameters of every routed expert of every layer (0 for a dense model): what a step reads only where
        some token routes to it."""
        return self.expert_layers * self.num_experts * self.expert_params

    @property
    def active_params(self) -> int:
        """Parameters used per token (MoE: only the routed experts)."""
        if not self.is_transformer or self.num_experts <= 1:
            return self.total_params
        idle = (self.num_experts - self.experts_per_token) * self.expert_params
        return self.total_params - self.expert_layers * idle

    @property
    def matmul_params(self) -> int:
        """Active parameters that take part in matrix products (embedding lookups excluded; a
        tied LM head counts, since it is a matmul over the shared table)."""
        if not self.is_transformer:
            return self.params
        head_extra = self.vocab_size * self.hidden_size if self.tied_embeddings and self.kind == "decoder" else 0
        return self.active_params - self.embedding_params + head_extra

    def experts_reached(self, tokens: float) -> float:
        """The share of a MoE layer's experts that at least one of `tokens` tokens routes to (expected value under
        uniform routing; 1 for a dense layer): the expert weights a step reads."""
        if self.num_experts <= 1:
            return 1.0
        return 1.0 - (1.0 - self.experts_per_token / self.num_experts) ** max(tokens, 1.0)

    @property
    def windowed(self) -> bool:
        """Some layers attend over a sliding window (their KV cache and attention stop growing past it)."""
        return self.sliding_window > 0 and self.sliding_layers > 0

    def kv_tokens(self, context: Any) -> Any:
        """The tokens whose keys and values a sequence at `context` tokens keeps, per layer on average: `context`,
        less what the sliding-window layers have let go. Works on numbers and numpy arrays alike."""
        if not self.windowed:
            return context
        return windowed_tokens(context, self.sliding_window, self.sliding_layers / self.num_layers)

    def attended_pairs(self, start: float, tokens: float, tile: float = 0.0) -> float:
        """Causal query-key pairs of `tokens` new tokens after `start` cached ones, per layer on average: each
        query sees every earlier position (about tokens x (start + tokens / 2)), a sliding-window layer's at most
        `sliding_window` of them, plus `tile` where a kernel computes whole key tiles (the estimator's
        ATTN_WINDOW_TILE: a query tile reads the window and its own tile's keys)."""
        full = tokens * (start + tokens / 2.0)
        if not self.windowed or tokens <= 0:
            return full
        w = float(self.sliding_window) + tile
        end = start + tokens
        if end <= w:
            windowed = full
        elif start >= w:
            windowed = tokens * w
        else:  # the queries up to the window's length see all before them, the rest a whole window
            windowed = (w - start) * (start + (w - start) / 2.0) + (end - w) * w
        return (full * (self.num_layers - self.sliding_layers) + windowed * self.sliding_layers) / self.num_layers

    def attention_share(self, seq: float, tile: float = 0.0) -> float:
        """A causal pass over `seq` tokens' attention work against full attention in every layer (1 without
        sliding windows; `tile` as attended_pairs): what a full-attention formula's layer count is scaled by."""
        if not self.windowed or seq <= 0:
            return 1.0
        return min(1.0, self.attended_pairs(0.0, seq, tile) / (seq * seq / 2.0))

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
            name=name or params_text(params),
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
            if self.is_traced and not self.trace:
                raise UserError(f"model {self.name!r}: a traced model needs its spec (trace: torchvision:NAME, ...)")
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
        if self.mla and not (0 <= self.rope_head_dim < self.head_dim and self.v_head_dim > 0
                             and self.q_lora_rank >= 0):
            raise UserError(f"model {self.name!r}: latent attention needs rope_head_dim below head_dim "
                            f"({self.head_dim}) and a positive v_head_dim, got {self.rope_head_dim} and "
                            f"{self.v_head_dim}")
        if min(self.shared_expert_size, self.dense_layers, self.dense_intermediate_size) < 0 or (
                self.num_experts > 1 and self.dense_layers and (self.dense_layers >= self.num_layers
                                                                or not self.dense_intermediate_size)):
            raise UserError(f"model {self.name!r}: dense_layers must be fewer than num_layers ({self.num_layers}) "
                            f"with a dense_intermediate_size, and shared_expert_size >= 0")
        if self.sliding_window < 0 or not 0 <= self.sliding_layers <= self.num_layers:
            raise UserError(f"model {self.name!r}: sliding_window must be >= 0 and sliding_layers between 0 and "
                            f"num_layers ({self.num_layers}), got {self.sliding_window} and {self.sliding_layers}")
        if self.kind == "vision" and (self.image_size <= 0 or self.patch_size <= 0):
            raise UserError(f"model {self.name!r}: a vision model needs image_size and patch_size")
        return self

    @property
    def num_params(self) -> int:
        """The parameter count used everywhere (the given count for "7b"-style input)."""
        return self.params if self.params > 0 else self.total_params

    def to_dict(self) -> dict[str, Any]:
        d = {k: getattr(self, k) for k in self.__dataclass_fields__ if k != "asked_as" or self.asked_as}
        d["num_params"] = self.num_params
        d["active_params"] = self.active_params
        return d


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
    from gpuadvisor.modelref import parse_ref

    ref = parse_ref(t)
    if ref is not None:
        return traced_spec(ref.text)
    p = Path(t)
    if t.endswith(".json") or p.is_file() or (p.is_dir() and (p / "config.json").is_file()):
        return spec_from_config_file(p / "config.json" if p.is_dir() else p)
    return preset(t)


def preset(text: str) -> ModelSpec:
    """The preset `text` names, in any of the spellings users type (see `_spellings`); a spec that answers
    under another name records the text as `asked_as`. Unknown names are refused with the closest presets."""
    keys = _presets()
    for candidate in _spellings(text):
        spec = keys.get(candidate)
        if spec is not None:
            return spec if _norm_name(text) == _norm_name(spec.name) else replace(spec, asked_as=text.strip())
    raise UserError(_unknown_model(text, keys))


#: name endings that leave the architecture as it is: instruction/chat tuning (Gemma's -it) and the Hugging
#: Face conversion mark; stripped one at a time from the end until a preset matches
_SAME_ARCHITECTURE_SUFFIXES = ("instruct", "chat", "hf", "it", "base")
#: name endings of repackaged weights (as match keys): the preset answers, but only with the weight format given
_QUANT_SUFFIXES = {"awq": "awq", "gptq": "gptq", "gptq-int-4": "gptq", "fp-8": "fp8", "fp-8-dynamic": "fp8",
                   "int-8": "int8", "8bit": "int8", "bnb-8bit": "int8", "4bit": "nf4", "bnb-4bit": "nf4",
                   "gguf": "q4_k_m (or the file's GGUF type)"}
_SIZE_TOKEN = re.compile(r"^\d+(x\d+)?[bmk]$")


def _norm_name(name: str) -> str:
    """A spelling-insensitive key: lower case, any run of separators (space _ . / :) as one '-', and a '-'
    between a letter and a digit, so 'Llama3.1-8B', 'llama-3.1-8b' and Ollama's 'llama3.1:8b' agree."""
    key = re.sub(r"[\s_./:\-]+", "-", name.strip().lower())
    key = re.sub(r"(?<=[a-z])(?=\d)", "-", key)
    return key.strip("-")


def _spellings(text: str) -> list[str]:
    """Match keys to try for `text`, most literal first: as typed; without a Hugging Face organisation
    ('meta-llama/'); without Meta's 'Meta-' prefix; then without each same-architecture suffix in turn."""
    t = text.strip()
    bases = [t]
    if "/" in t:
        bases.append(t.rsplit("/", 1)[1])
    out: list[str] = []
    for base in bases:
        key = _norm_name(base)
        stems = [key] + ([key.removeprefix("meta-")] if key.startswith("meta-llama-") else [])
        for stem in stems:
            parts = stem.split("-")
            out.append(stem)
            while len(parts) > 1 and parts[-1] in _SAME_ARCHITECTURE_SUFFIXES:
                parts.pop()
                out.append("-".join(parts))
    return list(dict.fromkeys(out))


def _quant_split(text: str) -> tuple[str, str] | None:
    """(the name before a quantized-weights ending, the --quant to give) for 'Qwen2.5-7B-Instruct-AWQ'."""
    parts = _norm_name(text.rsplit("/", 1)[-1]).split("-")
    for i in range(1, len(parts)):  # the longest ending first: 'bnb-4bit' before '4bit'
        quant = _QUANT_SUFFIXES.get("-".join(parts[i:]))
        if quant is not None:
            return "-".join(parts[:i]), quant
    return None


def _family(key: str) -> str:
    """A match key up to its size: 'llama-3-1' of 'llama-3-1-13b' (the whole key where no size is given)."""
    parts = key.split("-")
    sizes = [i for i, part in enumerate(parts) if _SIZE_TOKEN.match(part)]
    return "-".join(parts[:sizes[0]]) if sizes else key


def _unknown_model(text: str, keys: dict[str, ModelSpec]) -> str:
    """One line refusing `text`: the preset it repackages, or the closest preset names."""
    head = f"unknown model {text!r}: not a preset, a parameter count like '7b', or a config.json"
    split = _quant_split(text)
    if split is not None:
        stem, quant = split
        spec = next((keys[k] for k in _spellings(stem) if k in keys), None)
        if spec is not None:
            return f"{head}; for {spec.name} with quantized weights, ask for: {spec.name} --quant {quant}"
    wanted = _spellings(text)[-1]  # the shortest spelling: without organisation, prefix and suffixes
    close = difflib.get_close_matches(wanted, list(keys), n=12, cutoff=0.5)
    close.sort(key=lambda k: _family(k) != _family(wanted))  # the same family (other sizes) first; stable
    if not close:
        close = [k for k in keys if wanted and (wanted in k or k in wanted)]
    names = list(dict.fromkeys(keys[k].name for k in close))[:3]
    if not names:
        return f"{head} (see 'gpuadvisor estimate --list-models')"
    return f"{head}; did you mean {', '.join(names)}? (all: 'gpuadvisor estimate --list-models')"


def traced_spec(text: str, name: str | None = None, params: int = 0) -> ModelSpec:
    """A model costed from its op graph: the parameter count comes from the graph (shipped or traced)."""
    if not params:
        from gpuadvisor.estimate.graphstore import params_of, shipped_keys
        from gpuadvisor.modelref import Source, parse_ref

        ref = parse_ref(text)
        if ref is None:
            raise UserError(f"{text!r} is not a traced model spec (torchvision:NAME, timm:NAME, hf:DIR, file.py:build)")
        if ref.source is Source.FILE and not any(k.split("|", 1)[0] == ref.text for k in shipped_keys()):
            from gpuadvisor.estimate.trace.contained import params_in_child

            params = params_in_child(ref)  # the module alone: a file without build_batch() needs no --input here
        else:
            params = params_of(ref)
    return ModelSpec(name=name or text, kind="traced", params=params, trace=text,
                     source=f"op graph of {text}").validate()


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


def presets_path() -> Path:
    return Path(__file__).resolve().parent / "data" / "models.yaml"


@lru_cache(maxsize=1)
def _presets() -> dict[str, ModelSpec]:
    """The presets by normalised name and alias, from the user cache while the data file and the code
    that reads it are unchanged (datacache: a cold `recommend` then needs no YAML parser)."""
    from gpuadvisor import hfconfig
    from gpuadvisor.datacache import cached

    def fits(value: object) -> bool:
        return isinstance(value, dict) and all(isinstance(v, ModelSpec) for v in value.values())

    return cached("presets", [presets_path(), Path(__file__), Path(hfconfig.__file__)], _read_presets, fits)


def _read_presets() -> dict[str, ModelSpec]:
    from gpuadvisor.core.fileio import load_yaml

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
            if entry.get("kind") in ("opaque", "traced"):
                spec = ModelSpec(name=name, **entry).validate()
            else:
                spec = ModelSpec.from_architecture(name, **entry)
        except TypeError as e:
            raise UserError(f"{path}: model {name!r}: {e}") from None
        for label in [name, *aliases]:
            key = _norm_name(str(label))
            if key in out and out[key].name != name:
                raise UserError(f"{path}: model {name!r}: the name {label!r} is {out[key].name!r}'s as well "
                                "(names match ignoring case and separators)")
            out[key] = spec
    return out


def _did_you_mean(value: object, choices: tuple[str, ...]) -> str:
    hint = difflib.get_close_matches(str(value).lower(), choices, n=2, cutoff=0.5)
    return f"; did you mean {' or '.join(hint)}?" if hint else f" (one of {', '.join(choices)})"


def _round_to(x: float, step: int) -> int:
    return max(step, round(x / step) * step)


def windowed_tokens(context: Any, window: float, share: float) -> Any:
    """Tokens of K/V a sequence at `context` holds per layer on average when `share` of the layers keep only the
    last `window` tokens (numbers and numpy arrays alike): the one rule ModelSpec.kv_tokens and the serving
    simulation's KV blocks (serve/sim.SimConfig.blocks_for) follow."""
    held = context - (context - window) * (context > window)  # min(context, window)
    return context * (1.0 - share) + held * share


def params_text(n: float) -> str:
    """A parameter count in three significant digits and a unit: 124M, 8.03B."""
    for unit, div in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if float(f"{n / div:.3g}") >= 1.0:  # 999.8M rounds to 1.00B, not "1e+03M"
            return f"{n / div:.3g}{unit}"
    return f"{n:.0f}"
