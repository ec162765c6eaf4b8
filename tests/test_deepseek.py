"""DeepSeek-V2/V3 (and Kimi K2, Qwen MoE with a shared expert): multi-head latent attention's KV cache and products,
shared experts, dense first layers; their configs read; a DeepSeek layer's prefill against an H100's run, kernel by
kernel (bench.mla); the published DeepSeek-R1 runs on 8x H200, nothing fitted on them (bench.serving)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from gpuadvisor.core.errors import UserError
from gpuadvisor.estimate.memory import estimate_memory, kv_cache_bytes
from gpuadvisor.workload import make_workload, spec_from_config

#: DeepSeek-V3's config (huggingface.co/deepseek-ai/DeepSeek-V3/blob/main/config.json), the keys that matter here
DEEPSEEK_V3 = {"model_type": "deepseek_v3", "num_hidden_layers": 61, "hidden_size": 7168, "num_attention_heads": 128,
               "num_key_value_heads": 128, "intermediate_size": 18432, "moe_intermediate_size": 2048,
               "n_routed_experts": 256, "num_experts_per_tok": 8, "n_shared_experts": 1, "first_k_dense_replace": 3,
               "moe_layer_freq": 1, "kv_lora_rank": 512, "q_lora_rank": 1536, "qk_rope_head_dim": 64,
               "qk_nope_head_dim": 128, "v_head_dim": 128, "vocab_size": 129280, "tie_word_embeddings": False,
               "hidden_act": "silu",
               "quantization_config": {"quant_method": "fp8", "fmt": "e4m3", "weight_block_size": [128, 128]}}
#: Qwen1.5-MoE-A2.7B's (huggingface.co/Qwen/Qwen1.5-MoE-A2.7B/blob/main/config.json)
QWEN_MOE = {"model_type": "qwen2_moe", "num_hidden_layers": 24, "hidden_size": 2048, "num_attention_heads": 16,
            "num_key_value_heads": 16, "intermediate_size": 5632, "moe_intermediate_size": 1408,
            "shared_expert_intermediate_size": 5632, "num_experts": 60, "num_experts_per_tok": 4,
            "decoder_sparse_step": 1, "mlp_only_layers": [], "vocab_size": 151936}


@pytest.mark.parametrize(("name", "total", "active", "lookup_counted"), [
    ("deepseek-v3", 671e9, 37e9, False), ("deepseek-r1", 671e9, 37e9, False), ("kimi-k2", 1.0e12, 32e9, False),
    ("deepseek-v2", 236e9, 21e9, False), ("deepseek-v2-lite", 15.7e9, 2.4e9, False),
    ("qwen1.5-moe-a2.7b", 14.3e9, 2.7e9, True), ("qwen2-57b-a14b", 57e9, 14e9, True)])
def test_presets_match_the_published_parameter_counts(name, total, active, lookup_counted):
    """The model cards' totals and activated parameters, within 3 % (the multi-token-prediction layer not counted,
    as DeepSeek's 671B does not). DeepSeek's and Moonshot's activated counts leave the embedding lookup out (V2-Lite:
    2.4B, 2.66B with it), Qwen's count it (Qwen1.5-MoE: 2.7B, 2.4B without)."""
    m = make_workload(name).model
    assert m.num_params == pytest.approx(total, rel=0.03)
    lookup = 0 if lookup_counted else m.vocab_size * m.hidden_size
    assert m.active_params - lookup == pytest.approx(active, rel=0.03)


def test_the_latent_cache_is_576_elements_a_token_and_layer_on_every_rank():
    """DeepSeek-V3 keeps a 512-element latent and a 64-element rotary key a token and layer (70,272 bytes a token
    in bf16), where 128 heads' keys and values would be 57x that; tensor parallelism does not split it."""
    one = make_workload("deepseek-v3", mode="inference", batch=1, seq_len=1, gen_tokens=0, quant="none",
                        dtype="bf16")
    assert kv_cache_bytes(one, context=1) == 61 * 576 * 2
    tp8 = make_workload("deepseek-v3", mode="inference", batch=1, seq_len=1, gen_tokens=0, quant="none",
                        dtype="bf16", tensor_parallel=8, num_gpus=8)
    assert kv_cache_bytes(tp8, context=1) == kv_cache_bytes(one, context=1)
    llama = make_workload("llama-3.1-70b", mode="inference", batch=1, seq_len=1, gen_tokens=0, tensor_parallel=8,
                          num_gpus=8)
    assert kv_cache_bytes(llama, context=1) == 80 * 2 * 1024 * 2 / 8


def test_deepseek_v3_in_fp8_fits_eight_h200s_not_eight_h100s():
    """671B FP8 weights: about 78 GiB a GPU over eight, so 8x H200 (141 GB) serve it and 8x H100 (80 GB) cannot."""
    w = make_workload("deepseek-v3", mode="inference", batch=8, seq_len=1000, gen_tokens=1000, tensor_parallel=8,
                      num_gpus=8)
    assert w.quant_format == "fp8"
    total = estimate_memory(w).total
    assert 75 * 2**30 < total < 100 * 2**30 and total > 80e9 * 0.9


def test_the_config_reads_as_the_preset():
    spec = spec_from_config(DEEPSEEK_V3)
    preset = make_workload("deepseek-v3").model
    assert spec.mla and spec.kv_cache_width == 576 and spec.checkpoint_quant == "fp8"
    assert (spec.dense_layers, spec.shared_expert_size, spec.head_dim) == (3, 2048, 192)
    assert spec.num_params == preset.num_params and spec.active_params == preset.active_params
    qwen = spec_from_config(QWEN_MOE)
    assert qwen.shared_expert_size == 5632 and qwen.dense_layers == 0
    assert qwen.num_params == pytest.approx(14.3e9, rel=0.01)
    dense = spec_from_config({**QWEN_MOE, "mlp_only_layers": [0, 1]})
    assert dense.dense_layers == 2 and dense.dense_intermediate_size == 5632


@pytest.mark.parametrize("bad", [{"qk_rope_head_dim": "64"}, {"qk_nope_head_dim": None}, {"v_head_dim": 0},
                                 {"first_k_dense_replace": 61}, {"moe_layer_freq": "1"}, {"n_shared_experts": -1}])
def test_a_malformed_deepseek_config_is_one_line_and_exit_2(tmp_path, capsys, bad):
    with pytest.raises(UserError):
        spec_from_config({**DEEPSEEK_V3, **bad})
    p = tmp_path / "config.json"
    p.write_text(json.dumps({**DEEPSEEK_V3, **bad}))
    from gpuadvisor.cli import main

    assert main(["estimate", str(p), "--gpu", "H200 SXM 141GB", "--gpus", "8", "--tp", "8"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1


def test_a_deepseek_layer_prices_as_an_h100_runs_it():
    """lab/mla_layer.py on an H100 (2026-12-06): the layer's products and attention, DeepSeek-V3's at 1,024-8,192
    tokens and V2-Lite's at 4,096 and 16,384: the tool 0.81x-1.01x of each layer (within 0.8x-1.25x)."""
    from bench import mla

    rows = mla.layer_ratios()
    assert len(rows) == 5
    assert all(0.8 <= r["layer_ratio"] <= 1.25 and 0.8 <= r["gemm_ratio"] <= 1.25 for r in rows)


def test_the_published_deepseek_r1_runs():
    """DeepSeek-R1 on 8x H200 (tests/data/published-deepseek.json, nothing fitted on them), as
    docs/serving-accuracy.md tabulates them. GPUStack's runs (vLLM 0.11.0 and SGLang 0.5.3, TP8): the output
    throughput of the prompt-heavy and ShareGPT runs within 0.67x-1.5x (random prompts 1.15x-1.32x: the prefill
    priced about a third too fast), the prompt-heavy runs' TPOT within 0.67x-1.25x. The ShareGPT bursts' throughput
    within 0.8x-1.25x (1.04x-1.07x; 0.93x-1.00x on lognormal ShareGPT lengths, 0.69x-0.81x while the per-sequence
    host times were fitted on bursts' mean TPOT) and their mean TPOT 0.74x-1.14x: the stalled short answers that the
    measured ShareGPT lengths draw (docs/serving.md, "The mean TPOT of a burst"; 0.43x-0.60x on lognormal lengths).
    The 1,000-at-once bursts wait for the front-end's
    event loop (ServeEngine.frontend_serial_s_per_request, fitted on Qwen3-14B's bursts, 2026-12-07): vLLM's of
    128-token prompts within 0.8x-1.25x in TTFT and throughput (0.12x and 4.9x without the queue), its ShareGPT TTFT
    1.20x (0.24x); SGLang's ShareGPT TTFT 1.06x (0.53x) and its 128-token burst's 1.21x (0.59x; its throughput 1.42x
    -> 0.69x). vLLM's 4-user TPOT (0.59x) is the low-batch step, outside. TensorRT-LLM's
    max-throughput run with attention data-parallel: within 0.8x-1.25x (0.26x priced as plain TP8, whose latent
    cache on every rank holds a fraction of the 1,024 sequences)."""
    from bench import serving

    rows = {(e["engine"], serving.deepseek_case(e), e["metric"]): serving.tool_value(e) / e["value"]
            for e in serving.load_entries(serving.DEEPSEEK)}
    assert len(rows) == 36
    for engine, case in [("vllm", c) for c in ("sharegpt", "random-32k", "random-4k", "random-2k")] + [
            ("sglang", c) for c in ("sharegpt-opt", "random-32k-opt", "random-4k-opt", "random-2k-opt")]:
        assert 0.67 <= rows[engine, f"h200x8-fp8-{case}", "output_tps"] <= 1.5, case
        if case.startswith("sharegpt"):  # the burst's pace right, its mean TPOT the stalled short answers' tail
            assert 0.8 <= rows[engine, f"h200x8-fp8-{case}", "output_tps"] <= 1.25, case
            assert 0.67 <= rows[engine, f"h200x8-fp8-{case}", "tpot_ms"] <= 1.25, case
        else:
            assert 0.67 <= rows[engine, f"h200x8-fp8-{case}", "tpot_ms"] <= 1.25, case
    for metric in ("ttft_ms", "output_tps"):
        assert 0.8 <= rows["vllm", "h200x8-fp8-random-128", metric] <= 1.25, metric
    assert 0.8 <= rows["vllm", "h200x8-fp8-sharegpt", "ttft_ms"] <= 1.25
    assert 0.8 <= rows["sglang", "h200x8-fp8-sharegpt", "ttft_ms"] <= 1.25
    assert 0.8 <= rows["sglang", "h200x8-fp8-random-128-opt", "ttft_ms"] <= 1.25
    c4 = rows["vllm", "h200x8-fp8-sharegpt-c4", "tpot_ms"]
    assert c4 < 0.67
    # the four users' TPOT, 0.47x before a DeepSeek layer's extra kernels (engines.architecture_kernels) were counted
    assert c4 > 0.55
    for card in ("h200x8-fp8", "b200x8-nvfp4"):  # attention data-parallel: TensorRT-LLM's max-throughput runs
        assert 0.8 <= rows["trtllm", f"{card}-max-throughput-dpa", "output_tps"] <= 1.25, card


def test_data_parallel_attention_keeps_a_ranks_requests_only():
    """--dp-attention: a rank keeps only its requests' latents (an eighth of the replica's over eight ranks) and the
    attention's weights whole; the experts stay split. Where it cannot run, one line and exit 2."""
    from gpuadvisor.estimate.serve.api import card_figures, serve_setup
    from gpuadvisor.layout import Layout

    m = make_workload("deepseek-r1").model
    figures = card_figures(_catalog_card("H200 SXM 141GB"))
    tp8 = serve_setup(m, figures, "sglang", weights="fp8", kv_dtype="bf16", layout=Layout(tp=8))
    dpa = serve_setup(m, figures, "sglang", weights="fp8", kv_dtype="bf16", layout=Layout(tp=8, dp_attention=True))
    assert dpa.cost.kv_per_token_layer == tp8.cost.kv_per_token_layer / 8
    # fp8, a byte a weight: the heads' projections (q_b, kv_b, o) whole where TP split them; the latents' (q_a, kv_a)
    # are whole on every rank either way
    split = m.q_lora_rank * m.q_dim + m.kv_lora_rank * (m.num_heads * 128 + m.value_dim) + m.value_dim * m.hidden_size
    attention = m.num_layers * split * (1 - 1 / 8)
    assert dpa.cost.weight_bytes_per_gpu() - tp8.cost.weight_bytes_per_gpu() == pytest.approx(attention, rel=0.01)
    # eight times the room a token, less the room the whole attention weights take: 6.4x the tokens
    assert 6 * tp8.cost.kv_tokens_capacity() < dpa.cost.kv_tokens_capacity() < 8 * tp8.cost.kv_tokens_capacity()
    assert dpa.cfg.max_seqs == tp8.cfg.max_seqs  # SGLang divides its limits among the ranks
    trt = serve_setup(m, figures, "trtllm", weights="fp8", kv_dtype="bf16", layout=Layout(tp=8, dp_attention=True))
    assert trt.cfg.max_seqs == 8 * serve_setup(m, figures, "trtllm", weights="fp8", kv_dtype="bf16",
                                               layout=Layout(tp=8)).cfg.max_seqs  # a rank's own max_batch_size


def _catalog_card(name: str) -> Any:
    from gpuadvisor.catalog import find, load_catalog

    return find(load_catalog(use_env=False), name)[0]


@pytest.mark.parametrize(("argv", "says"), [
    (["--gpus", "1", "--tp", "1", "--rate", "2"], "needs --tp 2 or more"),
    (["--gpus", "8", "--tp", "8", "--rate", "2", "--engine", "llamacpp"], "no data-parallel attention"),
    (["--gpus", "8", "--tp", "4", "--pp", "2", "--rate", "2"], "no --pp")])
def test_dp_attention_where_it_cannot_run_is_one_line_and_exit_2(capsys, argv, says):
    from gpuadvisor.cli import main

    assert main(["estimate", "deepseek-v2-lite", "--gpu", "H200 SXM 141GB", "--dp-attention", *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and says in err[0]


def test_short_expert_slices_stream_below_the_bandwidth():
    """lab/fp8_block_gemm.py on an H100 (2026-12-06): DeepSeek-V3's experts on one of eight TP ranks as one grouped
    launch. GROUPED_STREAM_K_RAMP (fitted on the rows at 1, 16 and 256 rows an expert) takes the down projection's
    short slices (k 256) from 0.68x and 0.81x to within 0.8x-1.25x on the held-out rows, and leaves lab/grouped_moe.py's
    gpt-oss and Mixtral shapes within 0.8x-1.05x; without it the held-out down projection falls out."""
    from bench import moe
    from gpuadvisor.estimate import calibration as cal

    held = moe.deepseek_grouped_ratios(held_out=True)
    assert len(held) == 4 and all(0.8 <= x <= 1.25 for x in held.values())
    assert all(0.8 <= x <= 1.05 for x in moe.grouped_ratios())
    with cal.override(GROUPED_STREAM_K_RAMP=0):
        assert min(moe.deepseek_grouped_ratios(held_out=True).values()) < 0.7


def test_block_scaled_fp8_keeps_most_of_the_per_tensor_rate():
    """The same run: block-scaled FP8 GEMMs (DeepSeek's checkpoint format; cuBLASLt on Hopper) at 0.73x-0.94x of
    per-tensor FP8's throughput, 0.9x or more on the large ones: not the third the prefill of the published DeepSeek-R1
    runs is priced too fast by (docs/serving.md "DeepSeek"), so not modelled."""
    from bench import moe

    ratios = moe.block_fp8_ratios()
    assert len(ratios) == 13 and min(ratios) >= 0.7 and max(ratios) <= 1.0
    assert sorted(ratios)[len(ratios) // 2] >= 0.9


def test_an_fp8_checkpoint_needs_a_card_that_serves_fp8_weights(capsys):
    """The support matrix's `fp8-weights` (vLLM's supported-hardware table: Marlin's FP8 weight-only kernels on Ampere
    and newer, W8A8 on Ada and Hopper, AMD where the datasheet gives an fp8 rate): DeepSeek-R1's FP8 checkpoint is
    refused in one line on an MI250 or a V100, and priced on an A100 (where it does not fit eight cards) or an H200."""
    from gpuadvisor.advisor.support import QUANT_FEATURE, load_matrix
    from gpuadvisor.cli import main

    assert QUANT_FEATURE["fp8"] == "fp8-weights" and load_matrix().feature("fp8-weights").sources
    for card in ("Instinct MI250", "Tesla V100 SXM2 32GB"):
        assert main(["estimate", "deepseek-r1", "--gpu", card, "--gpus", "8", "--tp", "8"]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "cannot run" in err[0] and "FP8 checkpoints" in err[0], err
    for card in ("A100 SXM4 80GB", "H200 SXM 141GB"):
        assert main(["estimate", "deepseek-r1", "--gpu", card, "--gpus", "8", "--tp", "8"]) == 0
        capsys.readouterr()
