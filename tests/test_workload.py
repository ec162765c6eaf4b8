"""Workloads: presets, parameter counts, config.json parsing and validation."""

from __future__ import annotations

import json

import pytest

from gpuadvisor.core.errors import UserError
from gpuadvisor.workload import (
    ModelSpec,
    list_presets,
    make_workload,
    parse_param_count,
    resolve_model,
    spec_from_config,
)

# published parameter counts (model cards / config arithmetic)
KNOWN = {
    "gpt2": 124.4e6, "llama-2-7b": 6.738e9, "llama-2-70b": 68.98e9, "llama-3-8b": 8.03e9, "mistral-7b": 7.24e9,
    "mixtral-8x7b": 46.7e9, "qwen2.5-0.5b": 0.494e9, "qwen2.5-7b": 7.62e9, "gemma-2-2b": 2.61e9,
    "phi-3-mini": 3.82e9, "falcon-7b": 7.22e9, "bert-base": 109.5e6, "vit-base-16": 86.6e6, "resnet-50": 25.6e6,
    # the model cards' counts: Qwen3-235B-A22B 235B, Qwen3-0.6B 0.6B, Phi-4 14.7B, Gemma 3 27B (its vision tower of
    # about 0.4B not counted)
    "qwen3-235b-a22b": 235e9, "qwen3-0.6b": 0.6e9, "phi-4": 14.7e9, "gemma-3-27b": 27.0e9,
}


def test_at_least_30_presets_with_sources():
    specs = list_presets()
    assert len(specs) >= 30
    for s in specs:
        assert s.source.startswith("https://"), s.name
        assert s.num_params > 0


@pytest.mark.parametrize(("name", "params"), sorted(KNOWN.items()))
def test_preset_parameter_counts(name, params):
    assert resolve_model(name).num_params == pytest.approx(params, rel=0.01)


def test_llama2_7b_exact_count():
    assert resolve_model("llama-2-7b").num_params == 6_738_415_616


def test_mixtral_active_params():
    m = resolve_model("mixtral-8x7b")
    assert m.active_params == pytest.approx(12.9e9, rel=0.01)


def test_aliases_and_case():
    assert resolve_model("Llama-2-7B").name == "llama-2-7b"
    assert resolve_model("meta-llama/Llama-2-7b-hf").name == "llama-2-7b"


@pytest.mark.parametrize(("text", "n"), [("7b", 7e9), ("350m", 350e6), ("1.5B", 1.5e9), ("70B", 70e9), ("x", None)])
def test_param_counts(text, n):
    assert parse_param_count(text) == n


def test_param_count_model_keeps_the_count():
    m = resolve_model("7b")
    assert m.num_params == 7e9
    assert m.num_layers > 0 and m.hidden_size % 128 == 0


def test_unknown_preset_suggests():
    with pytest.raises(UserError, match="did you mean llama-2-7b"):
        resolve_model("llama-2-7bb")


@pytest.mark.parametrize("text", ["-7b", "0b", "", "   "])
def test_bad_counts(text):
    with pytest.raises(UserError):
        resolve_model(text)


def test_config_json_llama(tmp_path):
    cfg = {"model_type": "llama", "num_hidden_layers": 32, "hidden_size": 4096, "num_attention_heads": 32,
           "num_key_value_heads": 32, "intermediate_size": 11008, "vocab_size": 32000, "tie_word_embeddings": False}
    p = tmp_path / "config.json"
    p.write_text(json.dumps(cfg))
    assert resolve_model(str(p)).num_params == resolve_model("llama-2-7b").num_params
    assert resolve_model(str(tmp_path)).num_params == 6_738_415_616  # a folder with config.json


@pytest.mark.parametrize(
    ("cfg", "expect"),
    [
        ({"model_type": "gpt2", "n_layer": 12, "n_embd": 768, "n_head": 12, "vocab_size": 50257, "n_positions": 1024},
         124.4e6),
        ({"model_type": "mixtral", "num_hidden_layers": 32, "hidden_size": 4096, "num_attention_heads": 32,
          "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 32000, "num_local_experts": 8,
          "num_experts_per_tok": 2}, 46.7e9),
        ({"model_type": "qwen2", "num_hidden_layers": 24, "hidden_size": 896, "num_attention_heads": 14,
          "num_key_value_heads": 2, "intermediate_size": 4864, "vocab_size": 151936, "tie_word_embeddings": True},
         0.494e9),
        ({"model_type": "gemma2", "num_hidden_layers": 26, "hidden_size": 2304, "num_attention_heads": 8,
          "num_key_value_heads": 4, "head_dim": 256, "intermediate_size": 9216, "vocab_size": 256000,
          "hidden_activation": "gelu_pytorch_tanh"}, 2.61e9),
        ({"model_type": "phi3", "num_hidden_layers": 32, "hidden_size": 3072, "num_attention_heads": 32,
          "intermediate_size": 8192, "vocab_size": 32064}, 3.82e9),
        ({"model_type": "falcon", "num_hidden_layers": 32, "hidden_size": 4544, "num_attention_heads": 71,
          "vocab_size": 65024, "multi_query": True}, 7.22e9),
        ({"model_type": "bert", "num_hidden_layers": 12, "hidden_size": 768, "num_attention_heads": 12,
          "intermediate_size": 3072, "vocab_size": 30522, "max_position_embeddings": 512, "type_vocab_size": 2},
         109.5e6),
        ({"model_type": "vit", "num_hidden_layers": 12, "hidden_size": 768, "num_attention_heads": 12,
          "intermediate_size": 3072, "image_size": 224, "patch_size": 16}, 86.6e6),
    ],
)
def test_config_families(cfg, expect):
    assert spec_from_config(cfg).num_params == pytest.approx(expect, rel=0.01)


@pytest.mark.parametrize(
    "text",
    ["{not json", "[1, 2]", '{"model_type": "resnet", "depths": [3, 4]}', '{"num_hidden_layers": -3, "hidden_size": 8, '
     '"num_attention_heads": 2, "intermediate_size": 8}', '{"num_hidden_layers": 2, "hidden_size": 8, '
     '"num_attention_heads": 3, "num_key_value_heads": 2, "intermediate_size": 8}'],
)
def test_bad_config_json(tmp_path, text):
    p = tmp_path / "config.json"
    p.write_text(text)
    with pytest.raises(UserError):
        resolve_model(str(p))


@pytest.mark.parametrize(
    ("kw", "msg"),
    [
        ({"mode": "qlora", "dtype": "fp32"}, "QLoRA"),
        ({"mode": "training", "dtype": "int4"}, "integer weights"),
        ({"dtype": "fp4"}, "unknown dtype"),
        ({"mode": "pretrain"}, "unknown mode"),
        ({"optimizer": "lion"}, "unknown optimizer"),
        ({"num_gpus": 3, "tensor_parallel": 2}, "cannot be split"),
        ({"batch": 0}, "batch"),
        ({"seq_len": -1}, "seq"),
        ({"mode": "inference", "sharding": "zero3"}, "sharding"),
    ],
)
def test_nonsense_workloads(kw, msg):
    with pytest.raises(UserError, match=msg):
        make_workload("llama-2-7b", **kw)


def test_aliases_normalised():
    w = make_workload("llama-2-7b", mode="train", dtype="bfloat16", optimizer="adam8bit", sharding="ZeRO-3",
                      num_gpus=2)
    assert (w.mode, w.dtype, w.optimizer, w.sharding) == ("training", "bf16", "adamw8bit", "zero3")


def test_from_architecture_validates():
    with pytest.raises(UserError):
        ModelSpec.from_architecture("x", num_layers=0, hidden_size=64, num_heads=4, intermediate_size=128)
    m = ModelSpec.from_architecture("x", num_layers=2, hidden_size=64, num_heads=4, intermediate_size=128,
                                    vocab_size=100)
    assert m.head_dim == 16 and m.num_kv_heads == 4


def test_learned_positions_limit_sequence():
    with pytest.raises(UserError, match="1024 tokens"):
        make_workload("gpt2", mode="training", seq_len=2048)
    assert make_workload("gpt2").seq == 1024 - 128  # inference default leaves room to generate
    assert make_workload("bert-base", mode="training").seq == 512


@pytest.mark.parametrize(("name", "total", "active"), [
    ("gemma-2b", 2.51e9, 2.51e9), ("olmoe-1b-7b", 6.92e9, 1.28e9), ("qwen3-30b-a3b", 30.5e9, 3.35e9),
    ("qwen3-32b", 32.8e9, 32.8e9),  # Qwen3-32B: "Number of Parameters: 32.8B" (its model card)
])
def test_new_presets_total_and_active(name, total, active):
    m = resolve_model(name)
    assert m.num_params == pytest.approx(total, rel=0.01)
    assert m.active_params == pytest.approx(active, rel=0.02)


def test_quant_and_optimizer_aliases_normalise():
    assert make_workload("llama-3-8b", quant="Q4_K_M").quant == "q4_k_m"
    assert make_workload("llama-3-8b", quant="gptq-int4").quant == "gptq"
    assert make_workload("llama-3-8b", quant="bnb-nf4").quant == "nf4"
    assert make_workload("llama-3-8b", mode="training", optimizer="8bit").optimizer == "adamw8bit"
    assert make_workload("llama-3-8b", mode="qlora").quant_format == "nf4"


@pytest.mark.parametrize(("quant", "expect"), [
    ({"quant_method": "fp8", "weight_block_size": [128, 128]}, "fp8"),
    ({"quant_method": "mxfp4"}, "mxfp4"),
    ({"quant_method": "awq", "bits": 4, "group_size": 128}, "awq"),
    ({"quant_method": "gptq", "bits": 8}, "none"),
    ({"quant_method": "bitsandbytes", "load_in_4bit": True, "bnb_4bit_use_double_quant": True}, "nf4-dq"),
    ({"quant_method": "compressed-tensors", "config_groups": {"group_0": {"weights": {"type": "float",
                                                                                      "num_bits": 8}}}}, "fp8"),
    ({"quant_method": "hqq"}, "none"),
    ({"quant_method": "compressed-tensors", "config_groups": {"group_0": "not a group"}}, "none"),
    ("not a mapping", "none"),
])
def test_a_quantized_checkpoints_config_is_costed_in_its_format(tmp_path, quant, expect):
    """A config.json of a quantized checkpoint (Qwen3-8B-FP8, an AWQ export) had been costed in bf16: twice or
    four times its weights. Inference takes the format it names; --quant still chooses another."""
    cfg = {"model_type": "qwen3", "num_hidden_layers": 36, "hidden_size": 4096, "num_attention_heads": 32,
           "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 12288, "vocab_size": 151936,
           "quantization_config": quant}
    p = tmp_path / "config.json"
    p.write_text(json.dumps(cfg))
    assert make_workload(str(p), quant=None).quant_format == expect
    assert make_workload(str(p), quant="none").quant_format == "none"


def test_gemma_3_presets_and_configs():
    """Gemma 3: tied embeddings by default (its config omits the key), five of six layers windowed; the 1B at
    Google's 999,885,952 parameters less its q/k norms, the 4B's text model at 3.88B."""
    one, four = resolve_model("gemma-3-1b"), resolve_model("gemma-3-4b")
    assert one.num_params == pytest.approx(999_885_952, rel=1e-3)
    assert four.num_params == pytest.approx(3.88e9, rel=0.01)
    assert (one.sliding_window, one.sliding_layers, four.sliding_window, four.sliding_layers) == (512, 22, 1024, 29)
    cfg = {"model_type": "gemma3_text", "num_hidden_layers": 26, "hidden_size": 1152, "num_attention_heads": 4,
           "num_key_value_heads": 1, "head_dim": 256, "intermediate_size": 6912, "vocab_size": 262144,
           "sliding_window": 512, "sliding_window_pattern": 6, "hidden_activation": "gelu_pytorch_tanh"}
    assert spec_from_config(cfg).num_params == one.num_params


@pytest.mark.parametrize(("count", "text"), [(999_812_736, "1B"), (999_400_000, "999M"), (8.03e9, "8.03B"),
                                             (532, "532")])
def test_parameter_counts_read_as_people_write_them(count, text):
    from gpuadvisor.modelspec import params_text

    assert params_text(count) == text


@pytest.mark.parametrize("pattern", ["x", 0, -2, True])
def test_a_bad_sliding_window_pattern_is_one_line(tmp_path, capsys, pattern):
    cfg = {"model_type": "gemma3_text", "num_hidden_layers": 26, "hidden_size": 1152, "num_attention_heads": 4,
           "num_key_value_heads": 1, "head_dim": 256, "intermediate_size": 6912, "vocab_size": 262144,
           "sliding_window": 512, "sliding_window_pattern": pattern}
    p = tmp_path / "config.json"
    p.write_text(json.dumps(cfg))
    from gpuadvisor.cli import main

    assert main(["estimate", str(p), "--gpu", "H100 SXM5 80GB"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "sliding_window_pattern must be a positive integer" in err[0]


def _refused_in_one_line(tmp_path, capsys, cfg, *words) -> None:
    """`estimate CONFIG` answers exit 2 and one line of stderr holding each of `words`."""
    p = tmp_path / "config.json"
    p.write_text(json.dumps(cfg))
    from gpuadvisor.cli import main

    assert main(["estimate", str(p), "--gpu", "H100 SXM5 80GB"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and all(w in err[0] for w in words), err


@pytest.mark.parametrize(("cfg", "names"), [
    ({"model_type": "qwen3_next", "num_hidden_layers": 48, "hidden_size": 2048, "num_attention_heads": 16,
      "num_key_value_heads": 2, "intermediate_size": 5120, "vocab_size": 151936, "linear_num_value_heads": 32,
      "linear_num_key_heads": 16, "layer_types": ["linear_attention", "linear_attention", "linear_attention",
                                                  "full_attention"] * 12}, "linear_attention"),
    ({"model_type": "jamba", "num_hidden_layers": 32, "hidden_size": 4096, "num_attention_heads": 32,
      "intermediate_size": 14336, "vocab_size": 65536, "mamba_d_state": 16, "mamba_expand": 2}, "mamba_")])
def test_a_config_with_layers_that_are_not_attention_is_refused_by_name(tmp_path, capsys, cfg, names):
    """Read as a llama-like model, Qwen3-Next's linear-attention layers or Jamba's Mamba mixers would be costed as full
    attention without a word: one line that names them, exit 2."""
    with pytest.raises(UserError, match=names):
        spec_from_config(cfg)
    _refused_in_one_line(tmp_path, capsys, cfg, "not modelled yet")


@pytest.mark.parametrize("bad", [
    {"model_type": "mixtral", "num_local_experts": "x"},
    {"model_type": "mixtral", "num_local_experts": 8, "num_experts_per_tok": "x"},
    {"model_type": "mixtral", "num_local_experts": 8.5},
    {"model_type": "mixtral", "num_local_experts": 8, "num_experts_per_tok": -1},
    {"head_dim": "x"}, {"model_type": "gpt2", "max_position_embeddings": "x"},
    {"model_type": "vit", "image_size": "big"}, {"model_type": "bert", "type_vocab_size": -1},
    {"model_type": "llama4_text", "num_local_experts": 4, "num_experts_per_tok": 1, "intermediate_size_mlp": "x",
     "interleave_moe_layer_step": 2}])
def test_a_count_or_size_that_is_not_an_integer_is_one_line_and_exit_2(tmp_path, capsys, bad):
    """An expert count, top-k or size that is not an integer raised ValueError through int() (an internal error,
    exit 3) before."""
    cfg = {"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
           "intermediate_size": 128, "vocab_size": 100, **bad}
    _refused_in_one_line(tmp_path, capsys, cfg, "integer")
