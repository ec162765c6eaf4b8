"""vLLM's FlashAttention 2 query tiles in a step that carries prompt tokens (engines.json `decode_query_rows`,
stepcost.RooflineStepCost._decode_attention_s), and an open loop's figures as the median of its Poisson draws
(serve/sim.py ARRIVAL_DRAWS)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from gpuadvisor.catalog import load_catalog
from gpuadvisor.estimate import kernels
from gpuadvisor.estimate.serve import sim
from gpuadvisor.estimate.serve.api import card_figures, estimate_load, serve_setup
from gpuadvisor.estimate.serve.lengths import Lengths
from gpuadvisor.estimate.serve.profiles import serve_engine
from gpuadvisor.workload import make_workload

CATALOG = load_catalog()
QWEN3_4B = make_workload("qwen3-4b").model
FA2_MIXED = Path(__file__).parents[1] / "lab" / "data" / "h100-fa2-mixed-2026-12-06" / "fa2_mixed_batch.json"
#: lab/fa2_paged_mixed.py's run: its paged half did not run (the image's PyTorch 2.11 FA2 takes no block table), its
#: contiguous half repeats FA2_MIXED's call at 8 other shapes (1,100 and 2,048 tokens, 32-256 decodes)
FA2_REPEAT = Path(__file__).parents[1] / "lab" / "data" / "h100-fa2-paged-2026-12-06" / "fa2_paged_mixed.json"


def _cost(card: str, engine: str = "vllm"):
    return serve_setup(QWEN3_4B, card_figures(CATALOG.get(card)), engine).cost


def test_vllm_runs_fa2_tiles_off_hopper_and_packing_kernels_on_it():
    vllm = serve_engine("vllm")
    assert vllm.decode_query_rows == 64 and vllm.attention_sources
    assert vllm.decode_rows_on("12.0") == 64 and vllm.decode_rows_on("8.0") == 64 and vllm.decode_rows_on(None) == 0
    assert vllm.decode_rows_on("9.0") == 0 and vllm.decode_rows_on("10.0") == 0
    assert serve_engine("sglang").decode_rows_on("12.0") == 0 and serve_engine("trtllm").decode_rows_on("8.0") == 0


def test_a_mixed_step_on_an_rtx_5090_pays_each_decodes_query_tiles():
    """1,024 prompt tokens beside 128 decodes at 1,100 tokens of context (the RTX 5090's saturated 16 requests/s):
    the decodes' attention is 64 rows x 32 query heads of multiply-adds over their context, not their KV read; a
    decode-only step (FA2 packs a KV group's heads when every query is one token) and an H100 (FA3) do not pay it."""
    card = card_figures(CATALOG.get("GeForce RTX 5090"))
    cost = _cost("GeForce RTX 5090")
    packed = serve_setup(QWEN3_4B, card, "vllm", decode_query_rows=0).cost
    ctx = 128 * 1100.0
    tile_s = 4.0 * 64 * ctx * QWEN3_4B.q_dim * QWEN3_4B.num_layers / kernels.attention_rate(
        1100.0, QWEN3_4B.head_dim, cost.attn_rate, ramp_scale=0.0)
    kv_s = ctx * cost.kv_per_token / cost.bw
    assert tile_s > 2 * kv_s  # about 30 ms against 12: the step's largest part after its GEMMs
    mixed, mixed_packed = (c.iteration_s(1024, 1024 * 512.0, 128, ctx) for c in (cost, packed))
    assert mixed - mixed_packed == pytest.approx(tile_s - kv_s, rel=1e-9)
    assert cost.iteration_s(0, 0.0, 128, ctx) == pytest.approx(packed.iteration_s(0, 0.0, 128, ctx), rel=1e-12)
    assert cost.iteration_s(1024, 1024 * 512.0, 0, 0.0) == pytest.approx(packed.iteration_s(1024, 1024 * 512.0, 0,
                                                                                            0.0), rel=1e-12)
    assert _cost("H100 SXM5 80GB").mixed_decode_rows == 0


def test_the_h100s_mixed_fa2_calls_cost_as_their_query_tiles_multiply_adds():
    """lab/fa2_mixed_batch.py on an H100 (PyTorch's varlen FA2 kernel, 128-row tiles; 15 shapes, 16-256 decodes at
    512-2,048 tokens, KV inside L2 or not): the decode rows' share of a mixed call (mixed - prompt alone) keeps one
    ratio to its tiles' multiply-adds (spread under 1.4x), where a multiple of the decode-only call (its KV read)
    spreads 5x: the form the pricer takes. At the H100's FA3-class attention rate the ratio is about half (FA2 runs
    Hopper's older mma.sync, about 335 TFLOP/s; vLLM runs FA3 there, so no Hopper step pays tiles)."""
    rows = json.loads(FA2_MIXED.read_text())["rows"]
    assert len(rows) == 15
    h100 = _cost("H100 SXM5 80GB")
    tile, kv_form = [], []
    for r in rows:
        measured = r["mixed_s"] - r["prompt_s"]
        flops = 4.0 * 128 * r["batch"] * r["ctx"] * QWEN3_4B.q_dim
        tile.append(flops / kernels.attention_rate(r["ctx"], 128, h100.attn_rate, ramp_scale=0.0) / measured)
        kv_form.append(r["decode_s"] / measured)
    assert max(tile) / min(tile) < 1.4 and max(kv_form) / min(kv_form) > 5
    assert 0.35 < math.exp(np.mean(np.log(tile))) < 0.6


def test_a_second_h100_run_of_the_mixed_call_keeps_that_ratio():
    """The same call on another H100 (lab/fa2_paged_mixed.py's contiguous half, 8 new shapes): the tiles' ratio stays
    within the first run's range, spread under 1.2x."""
    first = json.loads(FA2_MIXED.read_text())["rows"]
    rows = json.loads(FA2_REPEAT.read_text())["rows"]
    assert len(rows) == 8 and all("paged_error" in r for r in rows)
    h100 = _cost("H100 SXM5 80GB")

    def ratio(batch: int, ctx: int, measured: float) -> float:
        flops = 4.0 * 128 * batch * ctx * QWEN3_4B.q_dim
        return flops / kernels.attention_rate(ctx, 128, h100.attn_rate, ramp_scale=0.0) / measured

    before = [ratio(r["batch"], r["ctx"], r["mixed_s"] - r["prompt_s"]) for r in first]
    again = [ratio(r["batch"], r["ctx"], r["contiguous_mixed_s"] - r["contiguous_prompt_s"]) for r in rows]
    assert max(again) / min(again) < 1.2
    assert min(before) * 0.95 <= min(again) and max(again) <= max(before) * 1.05


def test_an_open_loop_is_the_median_of_its_poisson_draws():
    """Past or near a deployment's capacity one draw of the arrivals moves the median TTFT many times over: an open
    loop's figures are each the median of ARRIVAL_DRAWS draws of its arrivals (seeds seed .. seed + 4); a closed loop
    is one run."""
    s = serve_setup(QWEN3_4B, card_figures(CATALOG.get("GeForce RTX 5090")), "vllm")
    lengths = Lengths("fixed", 1024, 128)
    got = estimate_load(s, lengths, rate=16.0, requests=400)["figures"]
    assert sim.ARRIVAL_DRAWS == 5 and got["arrival_draws"] == 5
    inp, out = lengths.draw(400, 0)  # the lengths are the seed's; the arrivals are drawn again
    singles = [sim.simulate(s.step_cost, s.cfg, inp, out, rate=16.0, seed=seed).summary() for seed in range(5)]
    for key in ("p50", "p99"):
        assert got["ttft_s"][key] == pytest.approx(float(np.median([d["ttft_s"][key] for d in singles])))
    assert got["output_tokens_per_s"] == pytest.approx(float(np.median([d["output_tokens_per_s"] for d in singles])))
    assert len({round(d["ttft_s"]["p50"], 3) for d in singles}) > 1  # the draws differ
    closed = estimate_load(s, lengths, users=8, requests=64)["figures"]
    assert closed["arrival_draws"] == 1


def test_past_capacity_says_in_how_many_draws_the_requests_piled_up():
    """At 16 requests/s the RTX 5090's simulation keeps up with some draws of the arrivals and falls behind on others
    (the card finished 13.2 a second): the caveat says so, and in how many of the five draws."""
    s = serve_setup(QWEN3_4B, card_figures(CATALOG.get("GeForce RTX 5090")), "vllm")
    caveat = estimate_load(s, Lengths("fixed", 1024, 128), rate=16.0, requests=960)["load"]["caveat"]
    assert "past this deployment's capacity at 16 requests/s" in caveat
    assert any(f"(in {k} of 5 draws of the arrivals)" in caveat for k in range(1, 6))


def test_an_open_loop_reports_how_far_the_draws_spread():
    """Beside each median, the lowest and highest median TTFT, P99 TTFT, median TPOT and throughput over the draws
    (`draw_range`), which the printout shows: near capacity one draw is no answer."""
    s = serve_setup(QWEN3_4B, card_figures(CATALOG.get("GeForce RTX 5090")), "vllm")
    f = estimate_load(s, Lengths("fixed", 1024, 128), rate=16.0, requests=960)["figures"]
    lo, hi = f["draw_range"]["ttft_s.p50"]
    assert lo <= f["ttft_s"]["p50"] <= hi and hi > 2 * lo  # the knee: the draws disagree many times over
    assert set(f["draw_range"]) == {"ttft_s.p50", "ttft_s.p99", "tpot_s.p50", "output_tokens_per_s"}
    assert "draw_range" not in estimate_load(s, Lengths("fixed", 1024, 128), users=4, requests=32)["figures"]
