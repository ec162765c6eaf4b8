"""Read a local Hugging Face config.json (no download, no transformers import) into the keyword
arguments of `ModelSpec.from_architecture`.

Reads the common keys of llama/mistral/mixtral/qwen2/gemma/gemma2/phi3/falcon/gpt2/bert/vit
configs (and the many configs that copy their names); anything else is a one-line UserError.
This module only knows the file format; workload.py builds the ModelSpec (`spec_from_config`),
so the dependency runs one way: workload -> hfconfig.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gpuadvisor.core.errors import UserError
from gpuadvisor.core.fileio import load_json

_ALIASES = {
    "num_layers": ("num_hidden_layers", "n_layer", "num_layers", "n_layers"),
    "hidden_size": ("hidden_size", "n_embd", "d_model", "dim"),
    "num_heads": ("num_attention_heads", "n_head", "num_heads", "n_heads"),
    "num_kv_heads": ("num_key_value_heads", "num_kv_heads", "n_head_kv", "multi_query_group_num"),
    "intermediate_size": ("intermediate_size", "n_inner", "ffn_dim", "ffn_hidden_size"),
    "vocab_size": ("vocab_size", "padded_vocab_size"),
}


def _first(cfg: dict[str, Any], keys: tuple[str, ...]) -> Any:
    for k in keys:
        if cfg.get(k) is not None:
            return cfg[k]
    return None


def architecture_from_config(cfg: Any, origin: str = "config.json") -> dict[str, Any]:
    """The architecture keywords for ModelSpec.from_architecture, from a parsed config.json."""
    if not isinstance(cfg, dict):
        raise UserError(f"{origin}: not a model config (expected a JSON object)")
    if "text_config" in cfg and isinstance(cfg["text_config"], dict) and "num_hidden_layers" not in cfg:
        cfg = {**cfg["text_config"], "model_type": cfg["text_config"].get("model_type", cfg.get("model_type"))}
    mt = str(cfg.get("model_type", "")).lower()
    f = {k: _first(cfg, v) for k, v in _ALIASES.items()}
    missing = [k for k in ("num_layers", "hidden_size", "num_heads") if f[k] is None]
    if missing:
        raise UserError(
            f"{origin}: not a transformer model config (missing {', '.join(missing)}; "
            f"model_type {mt or 'unknown'!r})"
        )
    for k, v in f.items():
        if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v <= 0):
            raise UserError(f"{origin}: {k} must be a positive integer, got {v!r}")
    h = f["hidden_size"]
    kw: dict[str, Any] = {
        "num_layers": f["num_layers"],
        "hidden_size": h,
        "num_heads": f["num_heads"],
        "num_kv_heads": f["num_kv_heads"] or f["num_heads"],
        "vocab_size": f["vocab_size"] or 0,
        "tied_embeddings": bool(cfg.get("tie_word_embeddings",
                                        mt in ("gpt2", "bert", "gemma", "gemma2", "gemma3", "gemma3_text"))),
        "source": origin,
    }
    if cfg.get("head_dim"):
        kw["head_dim"] = _positive(cfg, "head_dim", origin)
    family = next((fn for types, fn in _FAMILIES if mt in types), _llama_like)
    family(kw, cfg, f, mt, origin)
    return kw


def _falcon(kw: dict[str, Any], cfg: dict[str, Any], f: dict[str, Any], mt: str, origin: str) -> None:
    if not cfg.get("new_decoder_architecture") and cfg.get("multi_query", True):
        kw["num_kv_heads"] = f["num_kv_heads"] or 1
    kw.update(norm="layernorm", mlp_act="gelu", fused_qkv=True, attn_bias=bool(cfg.get("bias")))
    kw["intermediate_size"] = f["intermediate_size"] or 4 * f["hidden_size"]
    kw["tied_embeddings"] = bool(cfg.get("tie_word_embeddings", False))


def _gpt_like(kw: dict[str, Any], cfg: dict[str, Any], f: dict[str, Any], mt: str, origin: str) -> None:
    kw.update(norm="layernorm", mlp_act="gelu_tanh" if mt == "gpt2" else "gelu", attn_bias=True,
              mlp_bias=True, fused_qkv=mt in ("gpt2", "gpt_neox"))
    kw["intermediate_size"] = f["intermediate_size"] or 4 * f["hidden_size"]
    kw["max_positions"] = _count(cfg, ("n_positions", "max_position_embeddings"), 0, origin) if mt in (
        "gpt2", "opt", "gpt_neo") else 0


def _encoder(kw: dict[str, Any], cfg: dict[str, Any], f: dict[str, Any], mt: str, origin: str) -> None:
    kw.update(kind="encoder", norm="layernorm", mlp_act="gelu", attn_bias=True, mlp_bias=True)
    kw["intermediate_size"] = f["intermediate_size"] or 4 * f["hidden_size"]
    kw["max_positions"] = (_count(cfg, ("max_position_embeddings",), 512, origin)
                           + _count(cfg, ("type_vocab_size",), 0, origin))
    kw["tied_embeddings"] = True


def _vision(kw: dict[str, Any], cfg: dict[str, Any], f: dict[str, Any], mt: str, origin: str) -> None:
    kw.update(kind="vision", norm="layernorm", mlp_act="gelu", attn_bias=True, mlp_bias=True, vocab_size=0,
              tied_embeddings=True)
    kw["intermediate_size"] = f["intermediate_size"] or 4 * f["hidden_size"]
    kw["image_size"] = _count(cfg, ("image_size",), 224, origin)
    kw["patch_size"] = _count(cfg, ("patch_size",), 16, origin)
    kw["max_positions"] = (kw["image_size"] // kw["patch_size"]) ** 2 + 1


def _llama_like(kw: dict[str, Any], cfg: dict[str, Any], f: dict[str, Any], mt: str, origin: str) -> None:
    """llama, mistral, mixtral, qwen2, qwen2_moe, gemma, gemma2, phi3, ...: gated MLPs, optional experts."""
    if f["intermediate_size"] is None:
        raise UserError(f"{origin}: not a model config this tool reads (no intermediate_size; model_type {mt!r})")
    kw["intermediate_size"] = f["intermediate_size"]
    act = str(cfg.get("hidden_act") or cfg.get("hidden_activation") or "silu")
    kw["mlp_act"] = "geglu" if "gelu" in act else "swiglu"
    kw["attn_bias"] = bool(cfg.get("attention_bias", mt in ("qwen2", "qwen2_moe")))
    kw["fused_qkv"] = mt in ("phi3",)
    if mt in ("gemma2", "gemma3", "gemma3_text"):
        kw["norms_per_layer"] = 4
        # Gemma2Config defaults final_logit_softcapping to 30.0; an explicit null turns it off
        kw["logit_softcap"] = cfg.get("final_logit_softcapping", 30.0 if mt == "gemma2" else None) is not None
    _refuse_unmodelled(cfg, mt, origin)
    kw.update(_sliding_window(cfg, mt, f["num_layers"], origin))
    if mt == "gpt_oss":  # its experts carry biases (gate_up_proj_bias, down_proj_bias); chats render as harmony
        kw["mlp_bias"] = True
        kw["chat_format"] = "harmony"
    checkpoint = checkpoint_format(cfg.get("quantization_config"))
    if checkpoint:
        kw["checkpoint_quant"] = checkpoint
    if cfg.get("kv_lora_rank"):
        kw.update(_latent_attention(cfg, origin))
    experts = _count(cfg, ("num_local_experts", "num_experts", "n_routed_experts"), 0, origin)
    if experts > 1:
        kw["num_experts"] = experts
        kw["experts_per_token"] = _count(cfg, ("num_experts_per_tok", "top_k", "moe_topk"), 2, origin)
        if cfg.get("moe_intermediate_size"):
            kw["intermediate_size"] = _positive(cfg, "moe_intermediate_size", origin)
        dense_size = (_positive(cfg, "intermediate_size_mlp", origin) if cfg.get("intermediate_size_mlp") is not None
                      else f["intermediate_size"])
        kw.update(_moe_extras(cfg, f["num_layers"], dense_size, kw["intermediate_size"], origin))
        if mt.startswith("llama4"):  # every expert layer has one shared expert of the experts' width (Llama4TextMoe)
            kw["shared_expert_size"] = kw["intermediate_size"]


def _count(cfg: dict[str, Any], keys: tuple[str, ...], default: int, origin: str) -> int:
    """The first of `keys` the config sets, a non-negative integer (`default` where none is set or it is 0)."""
    value = _first(cfg, keys)
    if value is None:
        return default
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise UserError(f"{origin}: {next(k for k in keys if cfg.get(k) is not None)} must be a non-negative integer, "
                        f"got {value!r}")
    return value or default


def _positive(cfg: dict[str, Any], key: str, origin: str, default: int | None = None) -> int:
    """`key`'s value (`default` where the config leaves it out), a positive integer, else one line."""
    value = cfg.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise UserError(f"{origin}: {key} must be a positive integer, got {value!r}")
    return value


def _latent_attention(cfg: dict[str, Any], origin: str) -> dict[str, int]:
    """DeepSeek-V2/V3's multi-head latent attention: the latent's rank, the query latent's (none in V2-Lite), the
    rotary and plain parts of a query/key head and the value head."""
    rope = _positive(cfg, "qk_rope_head_dim", origin)
    out = {"kv_lora_rank": _positive(cfg, "kv_lora_rank", origin), "rope_head_dim": rope,
           "head_dim": _positive(cfg, "qk_nope_head_dim", origin) + rope,
           "v_head_dim": _positive(cfg, "v_head_dim", origin)}
    if cfg.get("q_lora_rank") is not None:
        out["q_lora_rank"] = _positive(cfg, "q_lora_rank", origin)
    return out


def _moe_extras(cfg: dict[str, Any], layers: int, dense_size: int, expert_size: int, origin: str) -> dict[str, int]:
    """A MoE config's shared experts (DeepSeek's n_shared_experts of the experts' width, Qwen2-MoE's one of
    shared_expert_intermediate_size) and its layers without experts (DeepSeek's first_k_dense_replace and
    moe_layer_freq, Qwen2-MoE's mlp_only_layers and decoder_sparse_step, Llama 4's moe_layers or
    interleave_moe_layer_step), whose MLP has `dense_size` (Llama 4's intermediate_size_mlp)."""
    out: dict[str, int] = {}
    if cfg.get("n_shared_experts"):
        out["shared_expert_size"] = _positive(cfg, "n_shared_experts", origin) * expert_size
    elif cfg.get("shared_expert_intermediate_size"):
        out["shared_expert_size"] = _positive(cfg, "shared_expert_intermediate_size", origin)
    first = cfg.get("first_k_dense_replace") or 0
    freq = next((cfg[k] for k in ("moe_layer_freq", "decoder_sparse_step", "interleave_moe_layer_step")
                 if cfg.get(k) is not None), 1)
    only = cfg.get("mlp_only_layers") or []
    moe_layers = cfg.get("moe_layers")
    if not (isinstance(first, int) and isinstance(freq, int) and freq > 0 and isinstance(only, list)
            and all(isinstance(i, int) for i in only)
            and (moe_layers is None or (isinstance(moe_layers, list) and all(isinstance(i, int) for i in moe_layers)))):
        raise UserError(f"{origin}: first_k_dense_replace, moe_layer_freq / decoder_sparse_step / "
                        "interleave_moe_layer_step, mlp_only_layers and moe_layers must be integers (or lists of them)")
    if "first_k_dense_replace" in cfg:  # DeepSeek's rule (modeling_deepseek): i >= k and i % freq == 0
        sparse = sum(i >= first and i % freq == 0 for i in range(layers))
    elif moe_layers is not None:  # Llama 4's list of the expert layers
        sparse = len({i for i in moe_layers if 0 <= i < layers})
    else:  # Qwen2-MoE's and Llama 4's: (i + 1) % step == 0 and i not in mlp_only_layers
        sparse = sum((i + 1) % freq == 0 and i not in only for i in range(layers))
    if sparse < layers:
        if sparse == 0:
            raise UserError(f"{origin}: no layer has experts under its first_k_dense_replace / sparse-step keys")
        out.update(dense_layers=layers - sparse, dense_intermediate_size=dense_size)
    return out


def _sliding_window(cfg: dict[str, Any], mt: str, layers: int, origin: str) -> dict[str, int]:
    """sliding_window and sliding_layers: the layers `layer_types` names "sliding_attention" (gpt-oss, newer
    Gemma and Qwen configs); Gemma 2's every other layer (its modeling code: even layers slide); Gemma 3's all but
    every `sliding_window_pattern`-th; Mistral's every layer where its config sets a window (7B v0.1). Other
    configs' windows are not read: Qwen's is off unless `use_sliding_window`, and Phi-3's runs past its context."""
    if mt.startswith("llama4") and cfg.get("attention_chunk_size"):
        return _chunked_attention(cfg, layers, origin)
    window = cfg.get("sliding_window")
    if not isinstance(window, int) or isinstance(window, bool) or window <= 0 or cfg.get("use_sliding_window") is False:
        return {}
    types = cfg.get("layer_types")
    if isinstance(types, list) and types:
        sliding = sum(t == "sliding_attention" for t in types[:layers])
    elif mt == "gemma2":
        sliding = (layers + 1) // 2
    elif mt in ("gemma3", "gemma3_text"):
        sliding = layers - layers // _positive(cfg, "sliding_window_pattern", origin, 6)
    elif mt in ("mistral", "mixtral"):
        sliding = layers
    else:
        return {}
    return {"sliding_window": window, "sliding_layers": sliding} if sliding else {}


def _chunked_attention(cfg: dict[str, Any], layers: int, origin: str) -> dict[str, int]:
    """Llama 4's chunked local attention, read as a sliding window of the chunk: a layer that uses rotary positions
    (`no_rope_layers` 1; by default three of every four) attends within its `attention_chunk_size`-token chunk, and
    vLLM keeps that chunk's K/V only. A chunk's queries see half a chunk on average where a window's see all of it:
    the window is the upper bound of its attention and its cache."""
    chunk = _positive(cfg, "attention_chunk_size", origin)
    rope = cfg.get("no_rope_layers")
    if rope is None:
        interval = _positive(cfg, "no_rope_layer_interval", origin, 4)
        rope = [int((i + 1) % interval != 0) for i in range(layers)]
    if not isinstance(rope, list) or not all(isinstance(x, int) for x in rope):
        raise UserError(f"{origin}: no_rope_layers must be a list of 0 and 1, got {rope!r}")
    chunked = sum(1 for x in rope[:layers] if x)
    return {"sliding_window": chunk, "sliding_layers": chunked} if chunked else {}


def checkpoint_format(quant: Any) -> str:
    """The weight format (workload.QUANT_FORMATS) a checkpoint's `quantization_config` says it ships in: MXFP4
    (gpt-oss), FP8 (Qwen's and DeepSeek's `fp8`, compressed-tensors' 8-bit float weights), AWQ and GPTQ at 4 bits,
    bitsandbytes NF4 (double-quantized or not) and LLM.int8(); "" for none or one this tool has no figures for (the
    weights are then costed in --dtype, as without a config)."""
    if not isinstance(quant, dict):
        return ""
    method = str(quant.get("quant_method", "")).lower()
    if method in ("mxfp4", "fp8"):
        return method
    if method in ("awq", "gptq"):
        return method if quant.get("bits", 4) == 4 else ""
    if method == "bitsandbytes":
        if quant.get("load_in_4bit"):
            return "nf4-dq" if quant.get("bnb_4bit_use_double_quant") else "nf4"
        return "int8" if quant.get("load_in_8bit") else ""
    if method == "compressed-tensors":
        groups = quant.get("config_groups")
        weights = [g.get("weights") for g in groups.values() if isinstance(g, dict)] if isinstance(groups, dict) else []
        if weights and all(isinstance(w, dict) and w.get("type") == "float" and w.get("num_bits") == 8
                           for w in weights):
            return "fp8"
    return ""


#: layers that are not attention (linear attention, state-space / Mamba mixers): read as a plain llama-like model, such
#: a config would be costed as full attention in every layer without a word (Qwen3-Next, Jamba, Falcon-H1, Nemotron-H)
_NOT_ATTENTION = ("linear_attention", "mamba", "ssm", "deltanet")


def _refuse_unmodelled(cfg: dict[str, Any], mt: str, origin: str) -> None:
    """One line naming the layers this tool has no figures for, rather than an answer that costs them as attention."""
    types = cfg.get("layer_types")
    odd = sorted({str(t) for t in types if any(k in str(t).lower() for k in _NOT_ATTENTION)}) if isinstance(
        types, list) else []
    keys = sorted(k for k in cfg if k.startswith(("mamba_", "ssm_", "linear_num_", "linear_key_", "linear_value_")))
    if odd or keys or any(k in mt for k in ("mamba", "jamba", "qwen3_next", "falcon_h1", "nemotron_h")):
        what = ", ".join(odd or keys[:3]) or mt
        raise UserError(f"{origin}: layers that are not attention ({what}; model_type {mt or 'unknown'!r}): not "
                        "modelled yet, so this architecture cannot be costed")


# model_type -> how its config maps to ModelSpec keywords; anything else is read as llama-like
_FAMILIES: tuple[tuple[tuple[str, ...], Callable[..., None]], ...] = (
    (("falcon",), _falcon),
    (("gpt2", "gpt_neo", "gptj", "gpt_neox", "opt"), _gpt_like),
    (("bert", "roberta", "distilbert", "deberta", "electra"), _encoder),
    (("vit", "deit", "beit", "dinov2"), _vision),
)


def load_config_file(path: str | os.PathLike[str]) -> tuple[str, Any]:
    """(model name, parsed JSON) of a config file; the name is its folder's for a config.json."""
    p = Path(path)
    cfg = load_json(p, "model config")
    name = p.parent.name if p.name == "config.json" and p.parent.name else p.stem
    return name or "config", cfg
