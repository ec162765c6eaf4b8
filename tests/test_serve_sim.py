"""The scheduler simulation, the per-iteration cost and request lengths (estimate/serve/)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gpuadvisor.catalog import load_catalog
from gpuadvisor.core.errors import UserError
from gpuadvisor.estimate.serve.api import card_figures, estimate_load, llama_bench, serve_setup
from gpuadvisor.estimate.serve.lengths import SHAREGPT_MEAN_IN, SHAREGPT_MEAN_OUT, Lengths, parse_lengths
from gpuadvisor.estimate.serve.profiles import ServeEngineName, engine_names, serve_engine
from gpuadvisor.estimate.serve.sim import SimConfig, front_end_reach, simulate
from gpuadvisor.layout import Layout
from gpuadvisor.workload import make_workload


class Const:
    """A StepCost of fixed time per iteration: the scheduler's arithmetic can be checked by hand."""

    def __init__(self, s: float = 0.01) -> None:
        self.s = s
        self.calls: list[tuple[int, float, int, float]] = []

    def iteration_s(self, prefill_tokens, prefill_pairs, decode_seqs, decode_context):
        self.calls.append((prefill_tokens, prefill_pairs, decode_seqs, decode_context))
        return self.s


def cfg(**kw):
    base = dict(max_batched_tokens=1024, max_seqs=64, kv_blocks=10_000)
    return SimConfig(**{**base, **kw})


@pytest.fixture(scope="module")
def h100_8b():
    m = make_workload("llama-3.1-8b").model
    return serve_setup(m, card_figures(load_catalog().get("H100 SXM")), "vllm")


def test_one_request_by_hand():
    c = Const(0.01)
    r = simulate(c, cfg(), np.array([100]), np.array([5]))
    # one prefill iteration samples the first token, then 4 decode iterations
    assert r.iterations == 5 and r.first_token[0] == pytest.approx(0.01) and r.finish[0] == pytest.approx(0.05)
    assert r.tpot[0] == pytest.approx(0.01)
    assert c.calls[0] == (100, 100 * 50.0, 0, 0.0) and c.calls[1] == (0, 0.0, 1, 101.0)


@pytest.mark.parametrize("plans_ahead, first_token", [(False, 0.03), (True, 0.04)])
def test_a_scheduler_that_plans_ahead_takes_an_arrival_one_step_later(plans_ahead, first_token):
    """vLLM's async scheduling plans iteration k+1 while k runs: a request arriving at 15 ms, during the decode step of
    10-20 ms, joins the step of 30-40 ms, not that of 20-30 ms; an idle engine takes one at once."""
    r = simulate(Const(0.01), cfg(plans_ahead=plans_ahead), np.array([100, 100, 100]), np.array([10, 2, 2]),
                 arrivals=np.array([0.0, 0.015, 1.0]))
    assert r.first_token[1] == pytest.approx(first_token)
    assert r.first_token[2] == pytest.approx(1.01)


def test_a_burst_queues_for_the_front_ends_event_loop():
    """Four requests sent together through a front-end of 50 ms latency, 10 of them on its one event loop: in line
    (SGLang's tokenizer manager) they reach the scheduler 10 ms apart; yielding mid-way (vLLM's tokenizer thread) the
    rest of each waits behind the other three's first parts, so all reach it together; sent far apart, neither
    queues. The answer's scheduler part starts where a request reached the scheduler."""
    burst, apart = np.zeros(4), np.array([0.0, 1.0, 2.0, 3.0])
    assert front_end_reach(burst, 0.01, False, 0.05) == pytest.approx([0.05, 0.06, 0.07, 0.08])
    assert front_end_reach(burst, 0.01, True, 0.05) == pytest.approx([0.08, 0.08, 0.08, 0.08])
    for requeues in (False, True):
        assert front_end_reach(apart, 0.01, requeues, 0.05) == pytest.approx(apart + 0.05)
    r = simulate(Const(0.01), cfg(frontend_s=0.05, ingest_s=0.01, ingest_requeues=True), np.full(4, 100),
                 np.full(4, 3))
    assert r.ttft == pytest.approx(np.full(4, 0.09))  # all four reach it at 80 ms and share one prefill step
    assert r.summary()["server_ttft_s"]["mean"] == pytest.approx(0.01)
    one = simulate(Const(0.01), cfg(frontend_s=0.05, ingest_s=0.01), np.array([100]), np.array([3]))
    assert one.ttft[0] == pytest.approx(0.06)  # alone: the latency, no queue


def test_a_closed_loops_later_requests_queue_behind_the_first_round():
    """Two users, each sending its next request when the last finished: the first round is a burst of two (10 ms
    apart through an in-line front-end), later sends queue behind what the loop still holds."""
    r = simulate(Const(0.01), cfg(frontend_s=0.02, ingest_s=0.015), np.full(4, 10), np.full(4, 1), users=2)
    assert r.arrival[:2] == pytest.approx([0.0, 0.0])
    assert r.first_token[:2] == pytest.approx([0.03, 0.045])  # reached at 20 and 35 ms, one 10 ms step each
    assert r.ttft[2:] == pytest.approx([0.03, 0.03])  # each sent when the loop was free again


def test_prompts_batch_across_requests_and_chunk_under_the_budget():
    c = Const(0.01)
    r = simulate(c, cfg(max_batched_tokens=256), np.array([100, 100, 300]), np.array([2, 2, 2]))
    assert c.calls[0][0] == 256  # two whole prompts and a chunk of the third in one iteration
    assert r.first_token[2] > r.first_token[0]
    assert np.isfinite(r.finish).all()


def test_decodes_run_with_prefill_chunks_unless_the_engine_schedules_prompts_first():
    ins, outs = np.array([10, 2000]), np.array([50, 2])
    mixed = Const()
    simulate(mixed, cfg(max_batched_tokens=512), ins, outs, rate=None)
    assert any(p and d for p, _, d, _ in mixed.calls)
    first = Const()
    simulate(first, cfg(max_batched_tokens=512, prefill_first=True), ins, outs)
    assert not any(p and d for p, _, d, _ in first.calls)


def test_kv_exhaustion_preempts_or_reserves():
    ins, outs = np.full(20, 64), np.full(20, 200)
    tight = simulate(Const(), cfg(kv_blocks=100), ins, outs)
    assert tight.preemptions > 0 and np.isfinite(tight.finish).all()
    reserved = simulate(Const(), cfg(kv_blocks=100, reserve_output=True), ins, outs)
    assert reserved.preemptions == 0 and reserved.max_running <= 100 // 17
    with pytest.raises(ValueError):
        simulate(Const(), cfg(kv_blocks=2), np.array([100]), np.array([10]))


def test_closed_loop_users_and_poisson_rate():
    ins, outs = np.full(40, 50), np.full(40, 20)
    r = simulate(Const(0.01), cfg(), ins, outs, users=4)
    assert r.max_running <= 4
    low = simulate(Const(0.001), cfg(), np.full(500, 50), np.full(500, 10), rate=5.0, seed=1)
    s = low.summary()
    assert s["requests_per_s"] == pytest.approx(5.0, rel=0.15)
    assert s["ttft_s"]["p50"] == pytest.approx(0.001)  # an idle engine: one iteration
    again = simulate(Const(0.001), cfg(), np.full(500, 50), np.full(500, 10), rate=5.0, seed=1)
    assert np.array_equal(again.arrival, low.arrival)


def test_goodput_counts_requests_within_the_slos():
    r = simulate(Const(0.01), cfg(max_seqs=2), np.full(10, 10), np.full(10, 5))
    s = r.summary(slo_ttft=0.025)
    assert 0 < s["slo_attainment"] < 1 and s["goodput_requests_per_s"] < s["requests_per_s"]


def test_roofline_cost_is_physical(h100_8b):
    c = h100_8b.cost
    d1, d64 = c.iteration_s(0, 0, 1, 1000), c.iteration_s(0, 0, 64, 64 * 1000)
    assert 3e-3 < d1 < 12e-3  # 16 GB of bf16 weights at ~2.9 TB/s
    assert d1 < d64 < 4 * d1  # decode batches nearly for free
    p = c.iteration_s(4096, 4096 * 2048, 0, 0)
    assert p > 10 * d1  # a 4k-token prefill is compute-bound
    fp8 = serve_setup(h100_8b.model, h100_8b.gpu_figures, "vllm", weights="fp8")
    assert fp8.cost.iteration_s(4096, 4096 * 2048, 0, 0) < 0.75 * p
    assert fp8.kv_dtype == "fp8" and fp8.cfg.kv_blocks > 2 * h100_8b.cfg.kv_blocks * 0.9


def test_tensor_and_pipeline_parallel(h100_8b):
    m, gpu_figures = h100_8b.model, h100_8b.gpu_figures
    tp2 = serve_setup(m, gpu_figures, "vllm", layout=Layout(tp=2))
    assert tp2.cost.iteration_s(0, 0, 8, 8000) < h100_8b.cost.iteration_s(0, 0, 8, 8000)
    pp2 = serve_setup(m, gpu_figures, "vllm", layout=Layout(pp=2))
    assert pp2.cost.stage_layers == (m.num_layers // 2,) * 2
    # two micro-batches share the replica's KV cache: each scheduler holds half of what the replica holds
    assert pp2.cfg.kv_blocks == pp2.cost.kv_tokens_capacity() // 2 // 16
    with pytest.raises(UserError):
        serve_setup(m, gpu_figures, "vllm", layout=Layout(tp=3))
    with pytest.raises(UserError):
        serve_setup(make_workload("llama-3.1-70b").model, card_figures(load_catalog().get("RTX 4090")), "vllm")


def test_estimate_load_reports_percentiles_and_assumptions(h100_8b):
    r = estimate_load(h100_8b, parse_lengths(None, 1000, 200), rate=20, requests=1000)
    f = r["figures"]
    assert f["ttft_s"]["p50"] <= f["ttft_s"]["p90"] <= f["ttft_s"]["p99"]
    assert f["output_tokens_per_s"] == pytest.approx(20 * 200, rel=0.12)
    a = r["assumptions"]
    assert a["kv_dtype"] == "bf16" and a["chunk_tokens"] == 8192 and a["engine"] == "vllm"


def test_llama_bench_on_a_consumer_card():
    m = make_workload("llama-3-8b").model
    s = serve_setup(m, card_figures(load_catalog().get("RTX 4090")), "llamacpp", weights="q4_0")
    tg, pp = llama_bench(s, gen=128), llama_bench(s, prompt=512, ubatch=512)
    assert 100 < tg < 250 and 5000 < pp < 20000


def test_engine_registry():
    assert engine_names() == tuple(e.value for e in ServeEngineName) == ("vllm", "sglang", "trtllm", "llamacpp", "hf")
    for n in engine_names():
        e = serve_engine(n)
        assert e.sources and e.calibrated_on and e.max_batched_tokens > 0
    with pytest.raises(UserError, match="unknown engine"):
        serve_engine("tgi")


def test_a_serving_engine_pays_the_host_time_of_the_step_engine_it_launches_with():
    """`launch` names the step engine (estimate/engines.py): Hugging Face generate() pays the eager step engine's
    host time on every decode iteration; the CUDA-graph engines pay none beyond their scheduler's own."""
    from gpuadvisor.estimate.engines import engine_profile

    m = make_workload("llama-3.1-8b").model
    gpu_figures = card_figures(load_catalog().get("H100 SXM5 80GB"))
    hf, vllm = serve_engine("hf"), serve_engine("vllm")
    assert (hf.launch, vllm.launch) == ("eager", "graphs") and not hf.decode_graphs and vllm.decode_graphs
    eager_host = engine_profile("eager").host_step_s(m.num_layers, gpu_figures)
    assert serve_setup(m, gpu_figures, hf).cost.decode_host == pytest.approx(eager_host) and eager_host > 1e-3
    assert serve_setup(m, gpu_figures, vllm).cost.decode_host == 0.0
    # the same scheduler launching eagerly pays the eager host time on a decode iteration
    graphs_cost = serve_setup(m, gpu_figures, "vllm").cost
    eager_cost = serve_setup(m, gpu_figures, "vllm", launch="eager").cost
    step = graphs_cost.iteration_s(0, 0, 8, 8 * 1024)
    assert eager_cost.iteration_s(0, 0, 8, 8 * 1024) == pytest.approx(step + eager_host)


def test_lengths(tmp_path: Path):
    i, o = parse_lengths("sharegpt", 1, 1).draw(4000, seed=3)
    assert i.mean() == pytest.approx(SHAREGPT_MEAN_IN, rel=0.15)
    assert o.mean() == pytest.approx(SHAREGPT_MEAN_OUT, rel=0.15)
    i, o = parse_lengths("uniform:10-20", 5, 7).draw(100)
    assert i.min() >= 10 and i.max() <= 20 and (o == 7).all()
    f = tmp_path / "lens.txt"
    f.write_text("# in out\n100 20\n300,40\n")
    lens = parse_lengths(str(f), 1, 1)
    assert lens.pairs == ((100, 20), (300, 40)) and lens.draw(3)[0].tolist() == [100, 300, 100]
    for bad in ("zipf", "uniform:20-10", "uniform:a-b"):
        with pytest.raises(UserError):
            parse_lengths(bad, 10, 10)
    f.write_text("100\n")
    with pytest.raises(UserError, match=":1:"):
        parse_lengths(str(f), 1, 1)
    f.write_text("")
    with pytest.raises(UserError, match="no lengths"):
        parse_lengths(str(f), 1, 1)
    assert Lengths("fixed", 5, 6).describe().startswith("fixed")


def test_engine_versions_are_sourced_overrides():
    """`vllm@0.5` is vLLM's profile with the v0.5 blog's host time per iteration (8.1 ms: 62 % of 13 ms a token
    for an 8B model on an H100) and no chunked prefill; its decode at light load lands near the blog's 13 ms a
    token; an unknown version is refused with the known ones."""
    old, now = serve_engine("vllm@0.5"), serve_engine("vllm")
    assert old.spec == "vllm@0.5" and now.spec == "vllm" and old.name == now.name
    assert old.host_s_per_iter == 0.0081 and not old.chunked_prefill and any("13 ms" in s for s in old.sources)
    model, gpu_figures = make_workload("llama-3.1-8b").model, card_figures(load_catalog().get("H100 SXM5 80GB"))
    tpot = {e: estimate_load(serve_setup(model, gpu_figures, e), Lengths("fixed", 200, 200), users=1, requests=10)
            ["figures"]["tpot_s"]["mean"] for e in ("vllm", "vllm@0.5")}
    assert 0.8 <= tpot["vllm@0.5"] / 0.013 <= 1.25 and tpot["vllm@0.5"] > 1.5 * tpot["vllm"]
    with pytest.raises(UserError, match=r"known: 0\.5, 0\.6"):
        serve_engine("vllm@0.4")
    with pytest.raises(UserError, match=r"known: 0\.5;"):
        serve_engine("sglang@0.3")
    with pytest.raises(UserError, match="known: none"):
        serve_engine("llamacpp@1")


def test_sharegpt_vllm_lengths_keep_vllms_filter():
    """vLLM's benchmark filter holds, and the requests it keeps have the stated means (the blog's sample's, or a
    published run's): the draw is scaled before the filter, which alone left a run's 217/202 at about 188/199."""
    inp, out = parse_lengths("sharegpt-vllm", 100, 100).draw(4000, seed=1)
    assert inp.min() >= 4 and inp.max() <= 1024 and out.min() >= 4 and (inp + out).max() <= 2048
    assert inp.mean() == pytest.approx(202, rel=0.002) and out.mean() == pytest.approx(179, rel=0.002)
    run = Lengths("sharegpt-vllm", 217, 202, means=(217.0, 202.0))
    inp, out = run.draw(1000, seed=0)
    assert inp.max() <= 1024 and (inp + out).max() <= 2048
    assert inp.mean() == pytest.approx(217, rel=0.002) and out.mean() == pytest.approx(202, rel=0.002)
    assert run.draw(1000, seed=0)[0].tolist() == inp.tolist()  # seeded
    with pytest.raises(UserError, match="openorca"):
        parse_lengths("openorca", 100, 100)


def test_sharegpt_pairs_are_what_the_tool_builds_from_the_published_runs():
    """sharegpt_lengths.json is tools/build_sharegpt_lengths.py's output on lab/data/sharegpt-vllm-sample-2024-09: the
    five runs' same 640 prompts, each asked output the longest answer any run gave it, the 2 no run answered left
    out; every run's source is named."""
    import json

    from gpuadvisor.estimate.serve.lengths import SHAREGPT_PAIRS, sharegpt_pairs
    from tools.build_sharegpt_lengths import build

    table, stored = build(), json.loads(SHAREGPT_PAIRS.read_text())
    assert table["pairs"] == stored["pairs"] and table["runs"] == stored["runs"] and len(stored["runs"]) == 5
    assert all(r["url"].startswith("https://github.com/") and len(r["commit"]) == 40 for r in stored["runs"])
    assert sharegpt_pairs().shape == (638, 2)


def test_sharegpt_draws_keep_the_measured_shape():
    """A ShareGPT draw keeps the measured pairs' shape at the means asked: skewed prompts (median about 0.38 of the
    mean), a tenth of the answers 11 tokens or fewer at the sample's means, long prompts with short answers; the draw
    a lognormal of sigma 0.9 had given put 0.2 % of the answers at 8 tokens or fewer, the sample 7 %."""
    inp, out = parse_lengths("sharegpt-vllm", 1, 1).draw(4000, seed=2)
    assert 0.33 <= np.median(inp) / inp.mean() <= 0.43
    assert 0.08 <= (out <= 11).mean() <= 0.15 and 0.05 <= (out <= 8).mean() <= 0.09
    assert np.corrcoef(np.log(inp), np.log(out))[0, 1] < -0.3
    big_in, big_out = Lengths("sharegpt", 1, 1, means=(2000.0, 100.0)).draw(1000, seed=0)
    assert big_in.max() <= 4096 and big_out.min() >= 4 and big_out.mean() == pytest.approx(100, rel=0.01)


def test_given_lengths_set_a_sharegpt_draws_means_and_are_refused_where_drawn(tmp_path: Path):
    """--input-len and --output-len, where given, are a ShareGPT-shaped draw's means (a published run's), the other
    its default; a range that draws the prompts, or a file that gives both, refuses them in one line."""
    only_out = parse_lengths("sharegpt-vllm", 217, 202, (False, True))
    assert only_out.means == (202.0, 202.0)
    inp, out = parse_lengths("sharegpt-vllm", 217, 202, (True, True)).draw(1000, seed=0)
    assert inp.mean() == pytest.approx(217, rel=0.002) and out.mean() == pytest.approx(202, rel=0.002)
    assert parse_lengths("sharegpt", 300, 50, (True, False)).means == (300.0, 188.0)
    assert parse_lengths("sharegpt", 300, 50).means is None  # neither given: the named sample's means
    with pytest.raises(UserError, match="drop --input-len"):
        parse_lengths("uniform:100-200", 217, 64, (True, False))
    assert parse_lengths("uniform:100-200", 217, 64, (False, True)).output_len == 64
    f = tmp_path / "lengths.txt"
    f.write_text("10 20\n30 40\n")
    with pytest.raises(UserError, match="drop --input-len and --output-len"):
        parse_lengths(str(f), 217, 64, (True, True))


@pytest.mark.parametrize("card, tokens, seqs", [
    ("H100 SXM5 80GB", 8192, 1024),  # >= 70 GiB and not an A100: vLLM's large defaults
    ("H200 SXM 141GB", 8192, 1024),
    ("A100 SXM4 80GB", 2048, 256),  # excluded by name (vLLM PR #17885: a large budget slowed the A100)
    ("L40S", 2048, 256),  # under 70 GiB
])
def test_vllm_takes_its_scheduler_limits_from_the_card(card, tokens, seqs):
    """vLLM V1 sets max_num_batched_tokens and max_num_seqs from the GPU it starts on (get_batch_defaults); a
    version before V1 and a knob the user set keep theirs."""
    from gpuadvisor.catalog import find

    model = make_workload("llama-3.1-8b", mode="inference").model
    gpu_figures = card_figures(find(load_catalog(use_env=False), card)[0])
    s = serve_setup(model, gpu_figures, "vllm")
    assert (s.cfg.max_batched_tokens, s.cfg.max_seqs) == (tokens, seqs)
    assert serve_setup(model, gpu_figures, "vllm", max_seqs=64).cfg.max_seqs == 64
    assert serve_setup(model, gpu_figures, "vllm@0.6").cfg.max_seqs == 256
    assert (serve_setup(model, gpu_figures, "sglang").cfg.max_seqs
            == serve_engine("sglang").max_seqs)  # an engine without card rules: one profile everywhere


def test_a_new_token_ratio_holds_back_what_running_requests_will_need():
    """SGLang's admission: 10 requests of 64 prompt and 100 output tokens, KV for 1,280 tokens (80 blocks). By the
    prompts' blocks alone all ten are admitted at once (and the newest are preempted as they grow); with 0.7 of each
    output held back, a request needs 64 + 70 tokens beside the running ones' share: nine fit, the tenth waits. The
    ratio falls every decode step (here to its floor within 10 steps), which lets the waiting one in sooner than the
    first finish would."""
    inp, out = np.full(10, 64), np.full(10, 100)
    plain = simulate(Const(0.01), cfg(kv_blocks=80, prefill_first=True), inp, out)
    held = simulate(Const(0.01), cfg(kv_blocks=80, prefill_first=True, new_token_ratio=0.7,
                                     min_new_token_ratio=0.098, new_token_ratio_decay_steps=10), inp, out)
    slow = simulate(Const(0.01), cfg(kv_blocks=80, prefill_first=True, new_token_ratio=0.7,
                                     min_new_token_ratio=0.7), inp, out)
    assert plain.max_running == 10 and plain.preemptions > 0
    assert np.isfinite(held.finish).all() and np.isfinite(slow.finish).all()
    first_held = np.sort(held.first_token)
    assert first_held[8] < first_held[9]  # the tenth waited
    assert held.first_token.max() < slow.first_token.max()  # the decaying ratio admits it earlier
