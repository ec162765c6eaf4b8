"""Llama 4: a shared expert beside the routed ones, Maverick's dense layers between the expert ones, and chunked
local attention read as a sliding window of the chunk (its upper bound), from the presets and from config.json."""

from __future__ import annotations

import json

import pytest

from gpuadvisor.core.errors import UserError
from gpuadvisor.estimate.memory import kv_cache_bytes
from gpuadvisor.workload import make_workload, spec_from_config

#: Llama-4-Maverick-17B-128E's config.json (huggingface.co/meta-llama/Llama-4-Maverick-17B-128E), the keys that
#: matter here; Scout's differs in 16 experts and interleave_moe_layer_step 1
MAVERICK = {"model_type": "llama4", "text_config": {
    "model_type": "llama4_text", "num_hidden_layers": 48, "hidden_size": 5120, "num_attention_heads": 40,
    "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 8192, "intermediate_size_mlp": 16384,
    "num_local_experts": 128, "num_experts_per_tok": 1, "interleave_moe_layer_step": 2, "vocab_size": 202048,
    "attention_chunk_size": 8192, "tie_word_embeddings": False, "hidden_act": "silu"}}


@pytest.mark.parametrize(("name", "total", "active"), [("llama-4-scout", 109e9, 17e9),
                                                       ("llama-4-maverick", 400e9, 17e9)])
def test_presets_match_the_model_cards(name, total, active):
    """Meta's cards: Scout 109B (its vision encoder, about 1B, not counted here) and Maverick 400B, 17B active each."""
    m = make_workload(name).model
    assert m.num_params == pytest.approx(total, rel=0.015)
    assert m.active_params == pytest.approx(active, rel=0.02)


def test_the_config_reads_as_the_preset():
    spec, preset = spec_from_config(MAVERICK), make_workload("llama-4-maverick").model
    assert (spec.num_params, spec.active_params) == (preset.num_params, preset.active_params)
    assert (spec.dense_layers, spec.dense_intermediate_size, spec.shared_expert_size) == (24, 16384, 8192)
    assert (spec.sliding_window, spec.sliding_layers) == (8192, 36)  # the 12 layers without rotary are global
    scout = spec_from_config({**MAVERICK, "text_config": {**MAVERICK["text_config"], "num_local_experts": 16,
                                                          "interleave_moe_layer_step": 1}})
    assert scout.dense_layers == 0 and scout.num_params == make_workload("llama-4-scout").model.num_params


def test_a_chunked_layer_keeps_its_chunk_only():
    """At 32,768 tokens the 36 chunked layers keep 8,192 tokens each, the 12 global ones all 32,768."""
    w = make_workload("llama-4-scout", mode="inference", batch=1, seq_len=32768, gen_tokens=0)
    per_token_layer = 2 * 8 * 128 * 2
    assert kv_cache_bytes(w, context=32768) == pytest.approx(per_token_layer * (36 * 8192 + 12 * 32768), rel=1e-6)


@pytest.mark.parametrize("bad", [{"attention_chunk_size": "8192"}, {"no_rope_layers": "all"},
                                 {"moe_layers": [1, "3"]}, {"interleave_moe_layer_step": 0}])
def test_a_malformed_llama4_config_is_one_line_and_exit_2(tmp_path, capsys, bad):
    cfg = {**MAVERICK, "text_config": {**MAVERICK["text_config"], **bad}}
    with pytest.raises(UserError):
        spec_from_config(cfg)
    p = tmp_path / "config.json"
    p.write_text(json.dumps(cfg))
    from gpuadvisor.cli import main

    assert main(["estimate", str(p), "--gpu", "H200 SXM 141GB"]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_the_published_llama4_runs():
    """TensorRT-LLM's maximum-throughput figures for Llama 4 (tests/data/published-llama4.json, nothing fitted on
    them): on the H200 all eight within 0.8x-1.25x (0.84x-1.23x), the B200's four within 0.67x-1.5x (0.75x-1.46x).
    The H100's come out 1.30x-2.51x, Maverick's the worst: the page has Maverick at 3.0x-3.7x the H100's throughput on
    the H200, where bandwidth and memory give about 1.4x-2.3x (docs/serving.md "DeepSeek")."""
    from bench import serving

    ratios = serving.llama4_ratios()
    assert len(ratios) == 20
    by_card: dict[str, list[float]] = {}
    for key, r in ratios.items():
        by_card.setdefault(key.split("-")[-5], []).append(r)
    assert len(by_card["h200"]) == 8 and all(0.8 <= r <= 1.25 for r in by_card["h200"])
    assert len(by_card["b200"]) == 4 and all(0.67 <= r <= 1.5 for r in by_card["b200"])
    assert len(by_card["h100"]) == 8 and all(1.0 <= r <= 2.6 for r in by_card["h100"])
