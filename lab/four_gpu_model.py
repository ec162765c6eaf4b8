"""A Llama-style decoder in plain PyTorch for the four-GPU ground truth (lab/validate_four_gpu.py).

Why not Hugging Face's: the same code must run here on the CPU (no transformers) and there on the GPUs,
and its module names must be simple enough for a tensor-parallel plan, a pipeline split and a hand-made
LoRA wrapper. The shapes are Llama's (RMSNorm, RoPE, grouped-query attention through SDPA, SwiGLU MLP),
so the FLOPs, the weights and the activations are those of the Hugging Face model of the same config.
Attention reshapes with -1 heads, so a tensor-parallel split (local heads) needs no change here.
"""

from __future__ import annotations

import math
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

# Hugging Face config keys, so tools/compare_four_gpu.py can hand the same dict to gpuadvisor
LLAMA_1B = {"model_type": "llama", "num_hidden_layers": 16, "hidden_size": 2048, "num_attention_heads": 32,
            "num_key_value_heads": 8, "intermediate_size": 8192, "vocab_size": 128256, "head_dim": 64,
            "tie_word_embeddings": True, "rope_theta": 500000.0}  # Llama-3.2-1B
LLAMA_8B = {"model_type": "llama", "num_hidden_layers": 32, "hidden_size": 4096, "num_attention_heads": 32,
            "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 128256, "head_dim": 128,
            "tie_word_embeddings": False, "rope_theta": 500000.0}  # Llama-3.1-8B
TINY = {"model_type": "llama", "num_hidden_layers": 4, "hidden_size": 128, "num_attention_heads": 8,
        "num_key_value_heads": 4, "intermediate_size": 256, "vocab_size": 1024, "head_dim": 16,
        "tie_word_embeddings": False, "rope_theta": 10000.0}


def rope_tables(cfg: dict, seq: int, device: Any, offset: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    hd = cfg["head_dim"]
    inv = 1.0 / (cfg["rope_theta"] ** (torch.arange(0, hd, 2, device=device, dtype=torch.float32) / hd))
    t = torch.arange(offset, offset + seq, device=device, dtype=torch.float32)
    freqs = torch.outer(t, inv)
    emb = torch.cat([freqs, freqs], dim=-1)
    return emb.cos(), emb.sin()


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    rotated = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
    return (x * cos + rotated * sin).to(x.dtype)


class Attention(nn.Module):
    def __init__(self, cfg: dict, heads: int | None = None, kv_heads: int | None = None) -> None:
        super().__init__()
        h, hd = cfg["hidden_size"], cfg["head_dim"]
        heads = heads or cfg["num_attention_heads"]
        kv_heads = kv_heads or cfg["num_key_value_heads"]
        self.head_dim = hd
        self.q_proj = nn.Linear(h, heads * hd, bias=False)
        self.k_proj = nn.Linear(h, kv_heads * hd, bias=False)
        self.v_proj = nn.Linear(h, kv_heads * hd, bias=False)
        self.o_proj = nn.Linear(heads * hd, h, bias=False)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        b, s = x.shape[0], x.shape[1]
        q = self.q_proj(x).view(b, s, -1, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(b, s, -1, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(b, s, -1, self.head_dim).transpose(1, 2)
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        return self.o_proj(o.transpose(1, 2).reshape(b, s, -1))


class MLP(nn.Module):
    def __init__(self, cfg: dict, inter: int | None = None) -> None:
        super().__init__()
        h, i = cfg["hidden_size"], inter or cfg["intermediate_size"]
        self.gate_proj = nn.Linear(h, i, bias=False)
        self.up_proj = nn.Linear(h, i, bias=False)
        self.down_proj = nn.Linear(i, h, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class Block(nn.Module):
    def __init__(self, cfg: dict) -> None:
        super().__init__()
        self.input_layernorm = nn.RMSNorm(cfg["hidden_size"], eps=1e-5)
        self.self_attn = Attention(cfg)
        self.post_attention_layernorm = nn.RMSNorm(cfg["hidden_size"], eps=1e-5)
        self.mlp = MLP(cfg)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        x = x + self.self_attn(self.input_layernorm(x), cos, sin)
        return x + self.mlp(self.post_attention_layernorm(x))


class Llama(nn.Module):
    """Token ids in, logits out. `first`/`last` keep the embedding and the head on one pipeline stage only;
    `layer_ids` names the blocks this module holds (all of them unless split for a pipeline)."""

    def __init__(self, cfg: dict, layer_ids: list[int] | None = None, first: bool = True, last: bool = True,
                 checkpointing: bool = False) -> None:
        super().__init__()
        self.cfg, self.checkpointing = cfg, checkpointing
        ids = list(range(cfg["num_hidden_layers"])) if layer_ids is None else layer_ids
        self.embed_tokens = nn.Embedding(cfg["vocab_size"], cfg["hidden_size"]) if first else None
        self.layers = nn.ModuleDict({str(i): Block(cfg) for i in ids})
        self.norm = nn.RMSNorm(cfg["hidden_size"], eps=1e-5) if last else None
        self.lm_head = nn.Linear(cfg["hidden_size"], cfg["vocab_size"], bias=False) if last else None
        if first and last and cfg.get("tie_word_embeddings"):
            self.lm_head.weight = self.embed_tokens.weight  # type: ignore[union-attr]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.embed_tokens(x) if self.embed_tokens is not None else x
        cos, sin = rope_tables(self.cfg, x.shape[1], h.device)  # the global length, also under sequence parallel
        # in the hidden state's dtype, as Hugging Face's Llama does: FSDP2 casts a block's floating inputs to its
        # param dtype on the forward but not in a checkpoint's recompute, which then saw fp32 tables
        cos, sin = cos.to(h.dtype), sin.to(h.dtype)
        for block in self.layers.values():
            if self.checkpointing and torch.is_grad_enabled():
                from torch.utils.checkpoint import checkpoint

                h = checkpoint(block, h, cos, sin, use_reentrant=False)
            else:
                h = block(h, cos, sin)
        if self.lm_head is None:
            return h
        return self.lm_head(self.norm(h))  # type: ignore[misc]


def init_weights(model: nn.Module, seed: int = 0) -> None:
    """Random weights in place (after `to_empty`): normal(0, 0.02) for matrices, ones for the norms."""
    g = torch.Generator(device="cpu").manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            local = p.to_local() if hasattr(p, "to_local") else p
            if "norm" in name:
                local.fill_(1.0)
            elif local.numel():
                vals = torch.randn(local.shape, generator=g, dtype=torch.float32) * 0.02
                local.copy_(vals.to(local.dtype))


def init_weights_fast(model: nn.Module) -> None:
    """As init_weights, drawn on the parameters' own device (an 8B model's CPU draw takes minutes)."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            local = p.to_local() if hasattr(p, "to_local") else p
            if "norm" in name:
                local.fill_(1.0)
            elif local.numel():
                local.normal_(0.0, 0.02)


class LoRALinear(nn.Module):
    """A frozen linear layer plus a trainable low-rank update (B @ A, B zero at start), as PEFT's LoRA
    `Linear` computes it: y = W x + (alpha / r) * B(A(x)). Written out so the CPU check needs no peft."""

    def __init__(self, base: nn.Linear, rank: int, alpha: float = 32.0, dtype: torch.dtype = torch.float32) -> None:
        super().__init__()
        self.base = base
        self.base.weight.requires_grad_(False)
        dev = base.weight.device
        self.lora_A = nn.Linear(base.in_features, rank, bias=False, device=dev, dtype=dtype)
        self.lora_B = nn.Linear(rank, base.out_features, bias=False, device=dev, dtype=dtype)
        self.scaling = alpha / rank

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.base(x) + self.lora_B(self.lora_A(x.to(self.lora_A.weight.dtype))).to(x.dtype) * self.scaling


LORA_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


def add_lora(model: Llama, rank: int) -> int:
    """Freeze every base parameter and wrap the attention and MLP projections (PEFT's target_modules
    'all-linear' less the head); returns the number of adapter parameters."""
    for p in model.parameters():
        p.requires_grad_(False)
    n = 0
    for block in model.layers.values():
        for parent in (block.self_attn, block.mlp):
            for name in LORA_TARGETS:
                base = getattr(parent, name, None)
                if isinstance(base, nn.Linear):
                    wrapped = LoRALinear(base, rank)
                    nn.init.kaiming_uniform_(wrapped.lora_A.weight, a=math.sqrt(5))
                    nn.init.zeros_(wrapped.lora_B.weight)
                    setattr(parent, name, wrapped)
                    n += wrapped.lora_A.weight.numel() + wrapped.lora_B.weight.numel()
    return n


def param_count(cfg: dict) -> int:
    h, i, v, L = cfg["hidden_size"], cfg["intermediate_size"], cfg["vocab_size"], cfg["num_hidden_layers"]
    hd, nh, kv = cfg["head_dim"], cfg["num_attention_heads"], cfg["num_key_value_heads"]
    per_layer = h * nh * hd * 2 + 2 * h * kv * hd + 3 * h * i + 2 * h
    return L * per_layer + v * h * (1 if cfg.get("tie_word_embeddings") else 2) + h
