"""Properties of the serving simulation (estimate/serve/sim.py) over every engine profile, loads, lengths and
limits: it terminates, time advances, every request finishes, and the percentiles are ordered.

Issue 28: a prompt-first engine (llama.cpp, SGLang) with a request it could not admit looped without advancing
time; these examples would hang without the fix (the per-example deadline catches a slow one)."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuadvisor.catalog import load_catalog
from gpuadvisor.core.errors import UserError
from gpuadvisor.estimate import calibration as cal
from gpuadvisor.estimate.serve.api import card_figures, estimate_load, serve_setup
from gpuadvisor.estimate.serve.lengths import Lengths
from gpuadvisor.estimate.serve.profiles import engine_names, serve_engine
from gpuadvisor.estimate.serve.sim import SimConfig, SimulationBoundError, simulate
from gpuadvisor.workload import make_workload

KV_BLOCK = int(cal.KV_BLOCK_TOKENS)

SETTINGS = settings(max_examples=40, deadline=timedelta(seconds=2), derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])


class Linear:
    """A StepCost that grows with the work (so that more work is slower) and is never zero."""

    def iteration_s(self, prefill_tokens: int, prefill_pairs: float, decode_seqs: int,
                    decode_context: float) -> float:
        return 1e-3 + 1e-5 * (prefill_tokens + decode_seqs) + 1e-9 * (prefill_pairs + decode_context)


@st.composite
def runs(draw: st.DrawFn) -> tuple[SimConfig, np.ndarray, np.ndarray, dict[str, object]]:
    """An engine profile's scheduling knobs with its limits cut down, a load, and request lengths."""
    engine = serve_engine(draw(st.sampled_from(engine_names())))
    n = draw(st.integers(1, 40))
    inp = np.array(draw(st.lists(st.integers(1, 3000), min_size=n, max_size=n)), np.int64)
    out = np.array(draw(st.lists(st.integers(1, 300), min_size=n, max_size=n)), np.int64)
    need = int(-(-(inp + out).max() // KV_BLOCK))  # the largest request fits alone
    cfg = SimConfig(max_batched_tokens=draw(st.sampled_from([1, 16, 512, engine.max_batched_tokens])),
                    max_seqs=draw(st.sampled_from([1, 2, 8, engine.max_seqs])),
                    kv_blocks=need + draw(st.integers(0, 3 * need)),
                    chunked_prefill=engine.chunked_prefill, prefill_first=engine.prefill_first,
                    time_scale=draw(st.sampled_from([1.0, 2.0])), reserve_output=engine.reserve_output)
    load = draw(st.sampled_from(["offline", "rate", "users"]))
    kw: dict[str, object] = {}
    if load == "rate":
        kw["rate"] = draw(st.floats(0.01, 10_000.0))
    elif load == "users":
        kw["users"] = draw(st.integers(1, 64))
    kw["seed"] = draw(st.integers(0, 3))
    return cfg, inp, out, kw


@SETTINGS
@given(runs())
def test_every_request_finishes_and_time_advances(run):
    cfg, inp, out, kw = run
    r = simulate(Linear(), cfg, inp, out, **kw)
    assert np.isfinite(r.finish).all() and np.isfinite(r.first_token).all()
    assert (r.first_token > r.arrival).all()  # a request's first token takes at least one iteration
    assert (r.finish >= r.first_token).all()
    many = out > 1
    assert (r.finish[many] > r.first_token[many]).all()  # each further token takes an iteration
    assert r.makespan == pytest.approx(r.finish.max())
    assert r.iterations >= int(out.max())  # one token per iteration per sequence at most
    assert r.max_running <= cfg.max_seqs
    s = r.summary()
    for key in ("ttft_s", "tpot_s"):
        if s[key]["p50"] is not None:
            assert s[key]["p99"] >= s[key]["p50"] > 0
    latency = r.finish - r.arrival
    assert np.percentile(latency, 99) >= np.percentile(latency, 50) > 0


@SETTINGS
@given(runs())
def test_no_preemption_when_the_output_is_reserved(run):
    cfg, inp, out, kw = run
    if not cfg.reserve_output:
        return
    assert simulate(Linear(), cfg, inp, out, **kw).preemptions == 0


@pytest.fixture(scope="module")
def setups():
    """Every engine's setup for Llama-3.1-8B on an H100 (llama.cpp with its GGUF weights)."""
    model = make_workload("llama-3.1-8b").model
    gpu_figures = card_figures(load_catalog().get("H100 SXM"))
    return {name: serve_setup(model, gpu_figures, name, weights="q4_k_m" if name == "llamacpp" else "bf16")
            for name in engine_names()}


@settings(max_examples=25, deadline=timedelta(seconds=3), derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(engine=st.sampled_from(engine_names()), load=st.sampled_from(["offline", "rate", "users"]),
       rate=st.floats(0.1, 1e6), users=st.integers(1, 5000), requests=st.integers(1, 3000),
       input_len=st.integers(1, 8000), output_len=st.integers(1, 2000))
def test_engine_profiles_on_the_roofline_cost(setups, engine, load, rate, users, requests, input_len, output_len):
    """The real step cost and each engine's own limits (max_seqs, token budget, KV cache): the CLI's path."""
    kw = {"rate": rate} if load == "rate" else {"users": users} if load == "users" else {}
    try:
        r = estimate_load(setups[engine], Lengths("fixed", input_len, output_len), requests=requests, **kw)
    except SimulationBoundError:  # a refusal in one line, not a hang: allowed, but not for these sizes
        pytest.fail("the step bound binds a run of at most 3,000 requests")
    f = r["figures"]
    assert f["duration_s"] > 0 and f["output_tokens_per_s"] > 0
    assert f["ttft_s"]["p99"] >= f["ttft_s"]["p50"] > 0
    if f["tpot_s"]["p50"] is not None:
        assert f["tpot_s"]["p99"] >= f["tpot_s"]["p50"] > 0


def test_the_step_bound_stops_a_run_with_one_line():
    inp, out = np.full(50, 10), np.full(50, 5)
    with pytest.raises(SimulationBoundError) as e:
        simulate(Linear(), SimConfig(max_batched_tokens=16, max_seqs=1, kv_blocks=100), inp, out, users=1,
                 max_steps=20)
    assert isinstance(e.value, UserError) and "20 scheduler steps" in str(e.value)


@pytest.mark.parametrize("engine", ["llamacpp", "sglang", "hf"])
def test_prompt_first_engines_decode_when_no_prompt_can_be_admitted(engine):
    """Issue 28: more requests waiting than `max_seqs` admits used to hang a prompt-first engine."""
    e = serve_engine(engine)
    cfg = SimConfig(max_batched_tokens=e.max_batched_tokens, max_seqs=2, kv_blocks=10_000, prefill_first=True,
                    chunked_prefill=e.chunked_prefill, reserve_output=e.reserve_output)
    for kw in ({}, {"users": 4}, {"rate": 50.0}):
        r = simulate(Linear(), cfg, np.full(10, 100), np.full(10, 20), **kw)
        assert np.isfinite(r.finish).all() and r.max_running == 2, kw


def test_a_preempted_sequence_needs_its_own_tokens_only():
    """The KV cache holds one sequence of the whole request: after a preemption it must still finish (the
    recompute's context was counted as input + twice the generated tokens)."""
    cfg = SimConfig(max_batched_tokens=512, max_seqs=8, kv_blocks=-(-(100 + 400) // KV_BLOCK))
    r = simulate(Linear(), cfg, np.full(4, 100), np.full(4, 400))
    assert r.preemptions > 0 and np.isfinite(r.finish).all()


@SETTINGS
@given(runs(), st.booleans())
def test_a_decode_instance_finishes_prefilled_requests(run, given_times):
    """Disaggregated decode instances (SimConfig.prefilled): requests arrive with their prompt's KV cache, at given
    times or all at once, are admitted as blocks and max_seqs allow (preempted ones recomputed), and finish; the
    first token takes a decode iteration after the arrival."""
    cfg, inp, out, _ = run
    cfg = replace(cfg, prefilled=True)
    arrivals = np.cumsum(np.full(len(inp), 0.002)) if given_times else None
    r = simulate(Linear(), cfg, inp, out, arrivals=arrivals)
    assert np.isfinite(r.finish).all() and np.isfinite(r.first_token).all()
    assert (r.first_token > r.arrival).all() and (r.finish >= r.first_token).all()
    assert r.max_running <= cfg.max_seqs


def test_a_decode_that_preempts_frees_blocks_for_a_waiting_recompute():
    """Found by the property above: on a decode instance whose KV cache holds one request, a decode that preempts
    the newest sequence frees a block the oldest one's recompute (a prompt again) can take; the scheduler planned
    nothing that iteration and took the one running request for one that can never fit."""
    cfg = SimConfig(max_batched_tokens=1, max_seqs=2, kv_blocks=2, prefill_first=True, prefilled=True)
    r = simulate(Linear(), cfg, np.array([1, 1, 2, 1, 1]), np.array([1, 17, 16, 17, 1]))
    assert np.isfinite(r.finish).all() and r.preemptions > 0


@settings(max_examples=12, deadline=timedelta(seconds=20), derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(1, 3), st.integers(1, 2), st.sampled_from(["vllm", "sglang", "trtllm"]),
       st.sampled_from(["offline", "rate", "users"]), st.integers(1, 4000), st.integers(1, 200))
def test_disaggregated_runs_terminate(prefill, decode, engine, load, isl, osl):
    """Two pools on real step costs, any load: every request finishes, through the prefill, the transfer and the
    decode pool in that order."""
    from gpuadvisor.estimate.serve.disagg import DisaggSetup, kv_link, run_disaggregated

    m = make_workload("llama-3.1-8b").model
    gpu_figures = card_figures(load_catalog().get("H100 SXM5 80GB"))
    s = serve_setup(m, gpu_figures, engine)
    ds = DisaggSetup(s, s, prefill, decode, kv_link(None, gpu_figures, gpu_figures, prefill + decode))
    kw = {"rate": 5.0} if load == "rate" else {"users": 4} if load == "users" else {}
    inp, out = np.full(24, isl), np.full(24, osl)
    run = run_disaggregated(ds, inp, out, **kw)
    assert np.isfinite(run.finish).all()
    assert (run.prefill_done > run.send).all() and (run.decode_arrival > run.prefill_done).all()
    assert (run.first_token > run.decode_arrival).all() and (run.finish >= run.first_token).all()
    if load == "users":  # each client's next request leaves when its last one ended
        assert np.allclose(run.send[4:], run.finish[:-4])
