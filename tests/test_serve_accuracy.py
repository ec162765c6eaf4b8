"""The serving simulation against published engine results (tests/data/published-serving.json): a CI gate.

Bounds: at least 85 % of all results of the fixed-length tables, of their calibration two thirds and of their
held-out third within 0.8x-1.25x of the tool, and every one within 0.67x-1.5x (what BENCHMARKS.md's serving section
reports). Online serving as a client measures it (TTFT, ITL/TPOT, output throughput; ShareGPT runs and fixed
concurrency) is gated per metric at today's figures (tests/accuracy_gates.py SERVING_ONLINE), and issue 29's bounds
are xfail(strict) tests that flip when they are met."""

from __future__ import annotations

import json

import accuracy_gates as G
import pytest

from bench import serving as P

GATE_IN_BAND = G.SERVING_IN_BAND  # tests/accuracy_gates.py
OUTER = P.OUTER_BAND


@pytest.fixture(scope="module")
def checks():
    return P.check_all()


def test_data_is_sourced_and_large_enough():
    rows = P.load_entries()
    assert len(rows) >= 45
    assert sum(r["held_out"] for r in rows) == len(rows) // 3
    for r in rows:
        assert r["source"].get("url", "").startswith("https://") and r["table"], r["id"]
        assert r["value"] > 0 and r["gpus"] >= r["tp"] * r["pp"]
    engines = {r["engine"] for r in rows}
    assert {"trtllm", "llamacpp"} <= engines
    assert {"H100 SXM5 80GB", "GeForce RTX 4090"} <= {r["gpu"] for r in rows}  # data-center and consumer cards


def test_data_file_is_what_the_tool_writes():
    import runpy
    from pathlib import Path

    ns = runpy.run_path(str(Path(__file__).parents[1] / "tools" / "published_serving.py"))
    assert ns["build"]() == json.loads(P.DATA.read_text())


@pytest.mark.parametrize("group", ["all", "calibration", "held out"])
def test_gate(checks, group):
    sel = [c for c in P.fixed_tables(checks) if group == "all" or c.held_out == (group == "held out")]
    s = P.shares(sel)
    bad = [(c.id, round(c.ratio, 2)) for c in sel if not OUTER[0] <= c.ratio <= OUTER[1]]
    assert not bad, bad
    assert s["in_band"] >= GATE_IN_BAND, (group, s)


def test_online_set_is_large_enough():
    """Issue 29: at least 40 client-measured online results (TTFT, ITL/TPOT, output throughput), a third held out,
    of vLLM, SGLang and TensorRT-LLM."""
    rows = [r for r in P.load_entries() if r["client_measured"]]
    assert len(rows) >= 40
    assert {"vllm", "sglang", "trtllm"} <= {r["engine"] for r in rows}
    assert sum(r["metric"] == "ttft_ms" for r in rows) >= 12 and sum(r["metric"] in ("itl_ms", "tpot_ms")
                                                                       for r in rows) >= 12
    assert abs(sum(r["held_out"] for r in rows) / len(rows) - 1 / 3) < 0.05
    assert len({r["gpu"] for r in rows}) >= 3


@pytest.mark.parametrize("metric", sorted(G.SERVING_ONLINE))
def test_online_metric_no_worse_than_today(checks, metric):
    band, outer, lowest, highest = G.SERVING_ONLINE[metric]
    m = P.per_metric(checks)[metric]
    assert m["in_band"] >= band and m["in_outer"] >= outer, (metric, m)
    assert lowest <= m["min"] and m["max"] <= highest, (metric, m)


NOT_MET = pytest.mark.xfail(strict=True, reason="issue 29: >= 85 % within 0.8-1.25x and all within 0.67-1.5x is "
                                                 "not met yet for this metric (BENCHMARKS.md serving section)")


# output throughput meets the bounds (0.84x-1.20x) since the per-sequence host times were fitted without the bursts'
# mean TPOT (2026-12-07); itl/tpot is 95 % within 0.8x-1.25x since the ShareGPT runs are drawn from measured lengths,
# but SGLang's FP8 H100 burst's mean TPOT (0.40x) is outside 0.67x; TTFT is 88 % within, with TensorRT-LLM's 4-user
# (0.20x, held out) and H100 burst (0.50x) outside
@pytest.mark.parametrize("metric", [pytest.param("ttft", marks=NOT_MET), pytest.param("itl/tpot", marks=NOT_MET),
                                    "output throughput"])
def test_online_metric_meets_issue_29(checks, metric):
    band, outer = G.SERVING_ONLINE_GOAL
    m = P.per_metric(checks)[metric]
    assert m["in_band"] >= band and m["in_outer"] >= outer, (metric, m)


def test_front_end_cost_moves_ttft_not_tpot(checks):
    """The client-side cost per request lands on TTFT (a closed-loop row) and leaves TPOT nearly as it was: the
    request reaches the scheduler 49 ms after it is sent, mid-iteration, and waits for the next one (~8 ms)."""
    rows = [r for r in P.load_entries() if r["id"].startswith("gpustack-vllm-0.11.0-qwen3-8b-h100-bf16-sharegpt-c4")]
    by_metric = {r["metric"]: r for r in rows}
    ttft_with, tpot_with = (P.tool_value(by_metric[m]) for m in ("ttft_ms", "tpot_ms"))
    ttft_without, tpot_without = (P.tool_value(by_metric[m], frontend_s_per_request=0.0)
                                  for m in ("ttft_ms", "tpot_ms"))
    assert 49.0 <= ttft_with - ttft_without < 49.0 + 2 * tpot_with  # vLLM's 49 ms, then at most the next iteration
    assert abs(tpot_with / tpot_without - 1) < 0.05


@pytest.mark.slow
@pytest.mark.parametrize(("spec", "field", "calls"), [("vllm@0.11", "host_s_per_seq", 12),
                                                      ("sglang@0.5", "host_s_per_seq", 8),
                                                      ("sglang@0.5", "speculative_host_s_per_seq", 8)])
def test_the_per_sequence_host_time_is_its_fit(spec, field, calls):
    """The engine profile's host time per running sequence (and its speculative worker's) is what
    tools/fit_host_seq.py fits on its calibration rows (a doc-sync check of engines.json against the fit: seconds of
    simulation, so in the slow suite)."""
    from gpuadvisor.estimate.serve.profiles import serve_engine
    from tools.fit_host_seq import fit

    fitted, ids = fit(spec, field)
    assert getattr(serve_engine(spec), field) == pytest.approx(fitted) and len(ids) == calls


def test_synchronous_scheduling_is_fitted_and_explains_the_held_out_rows():
    """vLLM 0.11 runs its engine core's per-request work between GPU steps (async scheduling is the default only from
    0.14): vllm@0.11's host time per running sequence per step is what tools/fit_host_seq.py fits on the calibration
    rows (110 us; 80 us on lognormal ShareGPT lengths, 150 us while the bursts' mean TPOT was in the fit, 2026-12-07).
    The H100 burst's median TPOT (held out) asks for it: 0.52x without, 1.10x with (1.31x at 150 us), and its
    throughput (held out) 1.47x -> 0.97x (0.87x at 150 us); its mean TPOT, which no fit reads, 0.54x -> 0.81x: the
    stalled short answers the measured ShareGPT lengths draw (docs/serving.md). The four held-out burst rows:
    0.51x-2.41x with neither the host time nor the front-end's queue, the median TPOT 0.52x with the queue alone,
    0.97x-1.12x with both."""
    from gpuadvisor.estimate.serve.profiles import serve_engine

    assert serve_engine("vllm@0.11").host_s_per_seq == pytest.approx(110e-6)
    assert serve_engine("vllm").host_s_per_seq == 0.0  # the current release overlaps it
    rows = {e["id"]: e for e in P.load_entries() if P.engine_spec(e) == "vllm@0.11"}
    burst = "gpustack-vllm-0.11.0-qwen3-14b-h100-bf16-sharegpt-inf-"
    median, mean = rows[burst + "tpot_ms_p50"], rows[burst + "tpot_ms"]
    assert P.tool_value(median, host_s_per_seq=0.0) / median["value"] < 0.8 <= P.tool_value(median) / median["value"]
    assert P.tool_value(mean, host_s_per_seq=0.0) / mean["value"] < 0.8 <= P.tool_value(mean) / mean["value"]
    held = [r for r in rows.values() if r["held_out"] and r["concurrency"] is None]
    assert len(held) == 4
    neither = [P.tool_value(r, host_s_per_seq=0.0, frontend_serial_s_per_request=0.0) / r["value"] for r in held]
    queue_only = [P.tool_value(r, host_s_per_seq=0.0) / r["value"] for r in held]
    with_it = [P.tool_value(r) / r["value"] for r in held]
    assert min(neither) < OUTER[0] or max(neither) > OUTER[1]
    assert min(queue_only) < 0.8, queue_only
    assert all(0.8 <= x <= 1.25 for x in with_it), with_it


def test_the_burst_tpot_caveat_states_the_published_bursts():
    """An answer for a large burst says that a client's mean TPOT ran 1.1x-2.7x its median in the published bursts
    (their mean and median TPOT rows, tests/data/published-serving.json) and where the simulation put those means
    (0.40x-1.18x), where its median and throughput stand nearer (0.90x-1.21x); a closed loop's answer does not say
    it, nor a burst of one length."""
    from gpuadvisor.estimate.serve import api
    from gpuadvisor.estimate.serve.lengths import Lengths

    rows = {e["id"]: e for e in P.load_entries()}
    medians = [e for e in rows.values() if e["metric"] == "tpot_ms_p50" and P.all_queued(e)]
    means = [rows[e["id"].removesuffix("_p50")] for e in medians]
    spread = [m["value"] / e["value"] for m, e in zip(means, medians, strict=True)]
    assert len(spread) == 8 and f"{min(spread):.1f}x-{max(spread):.1f}x" in api.BURST_TPOT_CAVEAT
    at_means = [P.tool_value(e) / e["value"] for e in means]
    assert f"{min(at_means):.2f}x-{max(at_means):.2f}x" in api.BURST_TPOT_CAVEAT
    throughputs = [rows[e["id"].replace("tpot_ms_p50", "max_output_tps")] for e in medians]
    matched = [P.tool_value(e) / e["value"] for e in medians + throughputs]
    assert all(0.9 <= x <= 1.21 for x in matched) and min(matched) > min(at_means), matched
    s = api.serve_setup(P._model("qwen3-8b"), api.card_figures(P._catalog().get("H100 SXM5 80GB")), "vllm")
    sharegpt, fixed = Lengths("sharegpt-vllm", 200, 50), Lengths("fixed", 200, 50)

    def said(lengths: Lengths, **load: int) -> bool:
        r = api.estimate_load(s, lengths, requests=api.BURST_TPOT_REQUESTS, **load)
        return api.BURST_TPOT_CAVEAT in r["load"].get("caveat", "")

    assert said(sharegpt) and not said(sharegpt, users=4) and not said(fixed)


def test_a_v1_burst_on_another_host_is_read_as_docs_serving_says():
    """docs/serving.md, "The mean TPOT of a burst": another author's H100 burst of Llama-3.1-8B on vLLM's V1 engine
    (bench.serving.V1_BURST, in no set) reads 0.43x its throughput with vllm@0.11's 110 us a sequence, 0.37x with the
    150 us fitted on bursts' mean TPOT, and 5.1x its TTFT: its front-end is its own (/v1/completions, another host)."""
    today, before = P.v1_burst_ratios(), P.v1_burst_ratios(host_s_per_seq=150e-6)
    assert today["max_output_tps"] == pytest.approx(0.43, abs=0.006)
    assert before["max_output_tps"] == pytest.approx(0.37, abs=0.006)
    assert today["ttft_ms"] == pytest.approx(5.1, abs=0.06)


def test_sglang_overlaps_its_per_sequence_host_time_with_the_gpu():
    """SGLang 0.4-0.5 processes every running request's output in Python each step, beside the GPU's next step (its
    overlap scheduler): sglang@0.5's host time per sequence is what tools/fit_host_seq.py fits; at 4 users it hides
    behind the GPU (those rows do not move), at 1,000 queued requests it sets the step. With SGLang's admission (the
    running requests' expected output held back), the four rows held out of that load come closer: their mean |log
    ratio| falls by more than a third, 0.64 -> 0.24 (the bf16 TTFT 0.52x -> 0.57x, the fp8 throughput 2.23x -> 0.99x,
    its median TPOT 0.46x -> 1.33x; the A100's mean TPOT 1.37x -> 1.10x), the front-end's queue
    (frontend_serial_s_per_request) off on both sides. With the queue on, it takes the TTFT's part (0.57x -> 0.80x),
    0.11."""
    import math

    from gpuadvisor.estimate.serve.profiles import serve_engine

    profile = serve_engine("sglang@0.5")
    assert profile.host_s_per_seq > 0 and profile.host_seq_overlap
    assert serve_engine("sglang").host_s_per_seq == 0.0 and serve_engine("sglang@0.5.5").spec == "sglang@0.5"
    rows = [r for r in P.load_entries() if P.engine_spec(r) == "sglang@0.5"]
    light = [r for r in rows if r["concurrency"] == 4 and not r.get("speculative")]
    assert [P.tool_value(r, host_s_per_seq=0.0) for r in light] == pytest.approx([P.tool_value(r) for r in light])
    held = [r for r in rows if r["held_out"] and r["concurrency"] is None]
    assert len(held) == 4

    def spread(**knobs: float) -> float:
        return sum(abs(math.log(P.tool_value(r, **knobs) / r["value"])) for r in held) / len(held)

    off = {"frontend_serial_s_per_request": 0.0, "frontend_stream_s_per_token": 0.0}
    assert spread(**off) < 2 / 3 * spread(host_s_per_seq=0.0, new_token_ratio=0.0, **off)
    # summed instead of overlapped, the same host time would slow the light load's steps by 4 x 140 us
    summed = P.tool_value(light[0], host_seq_overlap=False) / P.tool_value(light[0])
    assert summed != pytest.approx(1.0, abs=0.05)


@pytest.mark.slow  # a grid search over the rows (about 5 s): data sync of a fit, run in CI
def test_trtllm_serve_stream_time_is_its_fit():
    """`stream_s_per_seq` is what tools/fit_host_seq.py fits on trtllm-serve's client-measured rows (four: NIM's
    rows, TensorRT engines behind NIM's own front-end, are trtllm@0.17's since 2026-12-07)."""
    from gpuadvisor.estimate.serve.profiles import serve_engine
    from tools.fit_host_seq import fit

    fitted, ids = fit("trtllm", "stream_s_per_seq")
    assert serve_engine("trtllm").stream_s_per_seq == pytest.approx(fitted) and len(ids) == 4


def test_trtllm_serve_streams_every_token_beside_the_executor():
    """trtllm-serve's front-end detokenizes and streams each running request's token apart from the executor
    (`stream_s_per_seq`, fitted on the client-measured rows); the offline trtllm-bench tables (not client-measured)
    are simulated without it and do not move; NIM's 1-50 users hide it behind a 70B step; the median TPOT of 1,000
    queued requests on an H100 moves from 0.57x to 1.14x, the held-out mean from 0.68x to 0.92x (the stalled short
    answers the measured ShareGPT lengths draw; 0.98x with 200 us, docs/serving.md)."""
    from gpuadvisor.estimate.serve.profiles import serve_engine

    assert serve_engine("trtllm").stream_s_per_seq > 0
    rows = [r for r in P.load_entries() if P.engine_spec(r) == "trtllm" and not r.get("disaggregated")]
    offline = [r for r in rows if not r["client_measured"]][:6]
    assert [P.tool_value(r, stream_s_per_seq=0.0) for r in offline] == pytest.approx([P.tool_value(r) for r in offline])
    nim = [r for r in rows if r["id"].startswith("nim-")]
    assert [P.tool_value(r, stream_s_per_seq=0.0) for r in nim] == pytest.approx([P.tool_value(r) for r in nim])
    burst = {r["metric"]: r for r in rows if r["id"].startswith("gpustack-trtllm-1.2.0rc1-qwen3-14b-h100-bf16-")}
    median, held = burst["tpot_ms_p50"], burst["tpot_ms"]
    assert P.tool_value(median, stream_s_per_seq=0.0) / median["value"] < 0.6
    assert 0.8 <= P.tool_value(median) / median["value"] <= 1.25
    assert held["held_out"] and P.tool_value(held, stream_s_per_seq=0.0) / held["value"] < 0.8
    assert 0.8 <= P.tool_value(held) / held["value"] <= 1.25


def test_sglang_admission_raises_the_queued_ttft():
    """Without the front-end's queue (frontend_serial_s_per_request 0), admitting every queued request at once (the
    prompts' blocks alone) puts SGLang's mean TTFT at 0.52x (H100, held out) and 0.67x (A100) of GPUStack's; holding
    back 0.7 of the running requests' output, as SGLang does, 0.57x (H100) and 0.69x (A100); with the queue too,
    0.80x (H100) and 0.69x (A100, GPU-bound behind its admission: 0.80x on lognormal ShareGPT lengths, whose answers
    were fewer short ones and fewer long ones)."""
    rows = [r for r in P.load_entries() if P.engine_spec(r) == "sglang@0.5" and r["concurrency"] is None
            and r["metric"] == "ttft_ms" and r["weights"] == "bf16"]
    assert len(rows) == 2
    for r in rows:
        off = {"frontend_serial_s_per_request": 0.0, "frontend_stream_s_per_token": 0.0}
        admitted_at_once = P.tool_value(r, new_token_ratio=0.0, **off) / r["value"]
        held_back = P.tool_value(r, **off) / r["value"]
        assert admitted_at_once < held_back < 0.7
        assert 0.67 <= P.tool_value(r) / r["value"] <= 0.81


@pytest.mark.slow  # 8 re-simulations of an engine's rows (about 20 s): a constant's sensitivity, run in CI
@pytest.mark.parametrize("spec, field", [("vllm@0.11", "host_s_per_seq"), ("sglang@0.5", "host_s_per_seq"),
                                         ("trtllm", "stream_s_per_seq"),
                                         ("sglang@0.5", "speculative_host_s_per_seq")])
@pytest.mark.parametrize("scale", [0.75, 1.25])
def test_the_per_sequence_host_time_binds_the_online_gate(checks, spec, field, scale):
    """An engine's time per running sequence lives in engines.json, outside the calibration sweep: scaled by 0.75 or
    1.25 on its own rows, some online metric falls below its gate (tests/accuracy_gates.py SERVING_ONLINE)."""
    from gpuadvisor.estimate.serve.profiles import serve_engine

    rows = [e for e in P.load_entries() if P.engine_spec(e) == spec and not e.get("disaggregated")]
    ids = {e["id"] for e in rows}
    moved = P.check_all(rows, **{field: getattr(serve_engine(spec), field) * scale})
    per = P.per_metric([c for c in checks if c.id not in ids] + moved)
    failing = [m for m, (band, outer, lowest, highest) in G.SERVING_ONLINE.items()
               if not (per[m]["in_band"] >= band and per[m]["in_outer"] >= outer
                       and lowest <= per[m]["min"] and per[m]["max"] <= highest)]
    assert failing, per


def test_a_row_runs_under_the_release_it_names():
    """A published vLLM 0.11.0 row is priced as vllm@0.11 (the entry that covers v0.8-v0.13); TensorRT-LLM's v1.x
    rows (the PyTorch backend) run the engine's current profile, its v0.17 tables and NIM 1.x's rows (TensorRT
    engines) trtllm@0.17."""
    from gpuadvisor.estimate.serve.profiles import is_serve_engine, serve_engine

    rows = {P.engine_spec(r) for r in P.load_entries() if r["engine"] == "vllm" and r["engine_version"] == "0.11.0"}
    assert rows == {"vllm@0.11"}
    trt = {(r["engine_version"].split()[0], P.engine_spec(r)) for r in P.load_entries() if r["engine"] == "trtllm"}
    assert trt == {("1.0", "trtllm"), ("1.2.0rc1", "trtllm"), ("0.17", "trtllm@0.17"), ("NIM", "trtllm@0.17")}
    assert serve_engine("vllm@0.12").spec == "vllm@0.11" and is_serve_engine("vllm@0.9.2")
    assert not is_serve_engine("vllm@0.2") and not is_serve_engine("vllm@")


def test_trtllm_backends_schedule_as_documented():
    """The PyTorch backend's overlap scheduler (on by default in v1.x) plans the next step while the GPU runs this
    one, so a request joins a step later; TensorRT engines (v0.x, NIM 1.x) do not. On GPUStack's trtllm-serve run of
    Qwen3-8B at 4 users (held out) that step doubles the simulated TTFT without a front-end (0.20x -> 0.44x of the
    published 51.6 ms), and trtllm-serve's assumed front-end (37 ms, engines.json) the rest (1.12x); on NIM's closed
    loops at 5-50 users it would queue the clients together (0.83x-1.09x -> 1.40x-1.82x)."""
    from gpuadvisor.estimate.serve.profiles import serve_engine

    assert serve_engine("trtllm").plans_ahead and not serve_engine("trtllm@0.18.2").plans_ahead
    held_out = "gpustack-trtllm-1.2.0rc1-qwen3-8b-h100-bf16-sharegpt-c4-ttft_ms"
    row = next(r for r in P.load_entries() if r["id"] == held_out)
    planned, synchronous = (P.tool_value(row, plans_ahead=ahead, frontend_s_per_request=0.0) / row["value"]
                            for ahead in (True, False))
    assert synchronous < 0.25 and 0.4 < planned < 0.5
    assert 0.8 <= P.tool_value(row) / row["value"] <= 1.25
    # NIM's closed loops at 5-50 users (trtllm@0.17) within the band without the step, queued together with it
    nim = [r for r in P.load_entries() if r["id"].startswith("nim-1.8.0") and r["metric"] == "ttft_ms"
           and r["concurrency"] > 1]
    assert len(nim) == 3 and all(P.engine_spec(r) == "trtllm@0.17" for r in nim)
    assert all(0.8 <= P.tool_value(r) / r["value"] <= 1.25 < P.tool_value(r, plans_ahead=True) / r["value"]
               for r in nim)


def test_trtllm_serves_front_end_is_the_assumption_it_states():
    """trtllm-serve's front-end time per request is assumed, not fitted: the midpoint of vLLM 0.11's and SGLang 0.5's,
    fitted on the same lab's chat-endpoint runs (engines.json says so); refitting either moves it with them. NIM's
    front-end (trtllm@0.17) stays its own."""
    from gpuadvisor.estimate.serve.profiles import serve_engine

    fitted = (serve_engine("vllm@0.11").frontend_s_per_request, serve_engine("sglang@0.5").frontend_s_per_request)
    assert serve_engine("trtllm").frontend_s_per_request == pytest.approx(sum(fitted) / 2, abs=5e-4)
    assert serve_engine("trtllm@0.17").frontend_s_per_request == 0.0
    assert serve_engine("trtllm").frontend_unmeasured and not serve_engine("trtllm@0.17").frontend_unmeasured
    # a front-end given (serve-check's calibration, a what-if) is no longer the assumption: its caveat goes
    assert not serve_engine("trtllm", frontend_s_per_request=0.05).frontend_unmeasured


def _load_caveat(capsys: pytest.CaptureFixture[str], *args: str) -> str | None:
    """The serving simulation's caveat in `gpuadvisor estimate ARGS --json` (None where it has none)."""
    from gpuadvisor.cli import main

    assert main(["estimate", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)["detail"]["serving_simulation"]["load"].get("caveat")


def test_an_unmeasured_front_end_is_said(capsys):
    """trtllm-serve's front-end time per request is measured by no run outside the held-out set: a served answer
    says its TTFT takes it as assumed; in-process, and NIM's TensorRT engines (trtllm@0.17, measured), it does not."""
    base = ("qwen3-8b", "--gpu", "H100 SXM5 80GB", "--concurrency", "4", "--requests", "40", "--lengths",
            "sharegpt-vllm")

    def caveat(*extra: str) -> str:
        return _load_caveat(capsys, *base, *extra) or ""

    assert "trtllm-serve's front-end" in caveat("--engine", "trtllm")
    assert "front-end" not in caveat("--engine", "trtllm", "--in-process")
    assert "front-end" not in caveat("--engine", "trtllm@0.17")
    assert "front-end" not in caveat("--engine", "vllm")


def test_a_wrong_constant_fails_the_gate(checks):
    """TensorRT-LLM's GEMMs priced at half their efficiency (gemm_eff 0.5): the gate must catch it. (Its host time
    per iteration no longer serves: the overlap scheduler runs even 8 ms of it beside these max-throughput steps.)"""
    rows = [r for r in P.load_entries() if r["engine"] == "trtllm" and r["model"] == "llama-3.1-8b"
            and r["gpu"] == "H100 SXM5 80GB"]
    ids = {r["id"] for r in rows}
    good = P.shares([c for c in checks if c.id in ids])  # the gate's own figures for these rows
    assert good["n"] == len(rows) > 0
    wrong = P.shares(P.check_all(rows, gemm_eff=0.5))
    assert good["in_band"] >= GATE_IN_BAND
    assert wrong["in_band"] < GATE_IN_BAND or wrong["min"] < OUTER[0]


def test_markdown_section(checks):
    md = P.markdown_section(checks)
    assert md.startswith("## Serving")
    assert md.count("\n| ") >= len(checks) + 1
    assert "held out" in md and "0.8x-1.25x" in md


#: docs/serving.md's table of tool / published for Qwen3-32B on one H100 (bench.serving.QWEN3_32B_H100), per run:
#: TTFT, TPOT, output throughput
STATED = {("vllm", "0.11.0", "bf16"): (0.77, 0.82, 1.32), ("sglang", "0.5.5.post1", "bf16"): (0.37, 0.70, 2.24),
          ("trtllm", "1.2.0rc1", "bf16"): (0.49, 0.64, 1.81), ("sglang", "0.5.5.post1", "fp8"): (0.37, 0.61, 1.92)}


def test_the_memory_tight_check_docs_serving_reports():
    """Where bf16 weights leave a few GiB of KV cache, the simulation is too optimistic: docs/serving.md's table is
    today's, to the hundredth it prints."""
    got = P.memory_tight_ratios()
    assert set(got) == set(STATED)
    for run, ratios in got.items():
        assert ratios == pytest.approx(STATED[run], abs=0.006), run


def test_the_kv_cache_docs_serving_states_for_that_check():
    """docs/serving.md: 36,768 (vLLM 0.11), 30,208 (SGLang 0.5) and 53,152 (TensorRT-LLM) tokens of KV cache beside
    61.0 GiB of Qwen3-32B weights on an H100."""
    from gpuadvisor.estimate.serve.api import card_figures, serve_setup

    gpu_figures = card_figures(P._catalog().get("H100 SXM5 80GB"))
    tokens = {e: serve_setup(P._model("qwen3-32b"), gpu_figures, e).cfg.kv_blocks * 16
              for e in ("vllm@0.11", "sglang@0.5", "trtllm")}
    assert tokens == {"vllm@0.11": 36768, "sglang@0.5": 30208, "trtllm": 53152}
    assert serve_setup(P._model("qwen3-32b"), gpu_figures,
                       "vllm").cost.weight_bytes_per_gpu() / 2**30 == pytest.approx(61.0,
                                                                                                               abs=0.05)


#: docs/serving.md, "What card the lab's Qwen3 throughput pages measured": tool / published median ITL per card
DECODE_SIGNATURES_STATED = {"H100 SXM5 80GB": (0.64, 0.62, 0.67), "H100 PCIe 80GB": (1.02, 1.01, 1.06)}
STATED_PCIE = {("vllm", "0.11.0", "bf16"): (0.98, 1.15, 0.97), ("sglang", "0.5.5.post1", "bf16"): (0.58, 1.07, 1.44),
               ("trtllm", "1.2.0rc1", "bf16"): (0.74, 0.99, 1.16), ("sglang", "0.5.5.post1", "fp8"): (0.44, 0.72, 1.60)}


@pytest.mark.parametrize("gpu", sorted(DECODE_SIGNATURES_STATED))
def test_the_decode_signatures_docs_serving_reports(gpu):
    """The lab's decode-bound 32K runs: an SXM's bandwidth gives about 0.65x of the published step, a PCIe card's
    about 1.0x (docs/serving.md)."""
    got = tuple(P.decode_signature_ratios(gpu).values())
    assert got == pytest.approx(DECODE_SIGNATURES_STATED[gpu], abs=0.006)


def test_the_qwen3_32b_table_on_a_pcie_card_docs_serving_reports():
    got = P.memory_tight_ratios("H100 PCIe 80GB")
    for run, ratios in got.items():
        assert ratios == pytest.approx(STATED_PCIE[run], abs=0.006), run


def test_queued_throughput_on_a_pcie_card_without_per_sequence_time():
    """docs/serving.md: the Qwen3-14B page's queued ShareGPT runs on an H100 PCIe, without the fitted per-sequence
    times, give 1.14x-1.32x of the published output throughput (0.82x-0.92x while the lengths were lognormal)."""
    rows = [e for e in P.load_entries() if "qwen3-14b-h100" in e["id"] and e["metric"] == "max_output_tps"]
    assert len(rows) == 4
    ratios = [P.tool_value({**e, "gpu": "H100 PCIe 80GB"}, host_s_per_seq=0.0, stream_s_per_seq=0.0) / e["value"]
              for e in rows]
    assert min(ratios) >= 1.13 and max(ratios) <= 1.33, ratios


@pytest.mark.slow  # a grid search per engine (about 15 s): data sync of a fit, run in CI
@pytest.mark.parametrize("spec", ["vllm", "vllm@0.11", "sglang@0.5", "trtllm@0.17"])
def test_each_engines_front_end_is_what_tools_fit_frontend_fits(spec):
    """engines.json's frontend_s_per_request (per release where one has its own) is the fit of tools/fit_frontend.py
    on today's rows (1 ms grid)."""
    from gpuadvisor.estimate.serve.profiles import serve_engine
    from tools.fit_frontend import fit

    fitted, rows, _ = fit(spec)
    assert rows >= 3 and serve_engine(spec).frontend_s_per_request == pytest.approx(fitted, abs=5e-4)


@pytest.mark.slow  # a grid search per release (about 10 s): data sync of a fit, run in CI
@pytest.mark.parametrize("spec", ["vllm@0.11", "sglang@0.5"])
def test_each_releases_front_end_queue_is_what_tools_fit_frontend_queue_fits(spec):
    """engines.json's frontend_serial_s_per_request and frontend_stream_s_per_token are the fit of
    tools/fit_frontend_queue.py on today's rows, each on the all-queued calibration runs of its release."""
    from gpuadvisor.estimate.serve.profiles import serve_engine
    from tools.fit_frontend_queue import fit

    per_request, per_token, rows = fit(spec)
    engine = serve_engine(spec)
    assert rows and engine.frontend_serial_s_per_request == pytest.approx(per_request, abs=5e-5)
    assert engine.frontend_stream_s_per_token == pytest.approx(per_token, abs=5e-7)


def test_vllms_front_end_queue_holds_on_the_bursts_it_was_not_fitted_on():
    """docs/serving.md 'A burst larger than the engine runs at once': vLLM 0.11's queue (fitted on the H100's burst
    alone) puts the two held-out A100 bursts' mean TTFT (bf16, AWQ: 1,000 ShareGPT prompts at once) within 0.8x-1.25x,
    where without it they were 0.72x and 0.64x; SGLang's held-out H100 bf16 burst too (0.57x without, 0.80x with).
    The H100 burst's median TTFT (GPUStack's qwen3-14b/h100.md gives it beside the mean the fit read) holds too."""
    rows = {e["id"]: e for e in P.load_entries()}
    ids = P.QUEUE_BURST_IDS  # vLLM's A100 bf16 and AWQ bursts, SGLang's H100 bf16 one
    assert all(rows[i]["held_out"] for i in ids)
    with_queue = [P.tool_value(rows[i]) / rows[i]["value"] for i in ids]
    without = [P.tool_value(rows[i], frontend_serial_s_per_request=0.0, frontend_stream_s_per_token=0.0)
               / rows[i]["value"] for i in ids]
    assert all(0.8 <= x <= 1.25 for x in with_queue), with_queue
    assert all(x < 0.8 for x in without), without
    # the H100 burst the figure was fitted on has the published shape too, not only its mean: its median (21,872 ms
    # published; the fit read the mean) 1.01x, where without the queue the TTFTs spread from the start (0.24x)
    h100 = {**rows["gpustack-vllm-0.11.0-qwen3-14b-h100-bf16-sharegpt-inf-ttft_ms"], "metric": "ttft_ms_p50",
            "value": 21872.31}
    assert 0.95 <= P.tool_value(h100) / h100["value"] <= 1.1
    assert P.tool_value(h100, frontend_serial_s_per_request=0.0) / h100["value"] < 0.3


def test_the_short_bursts_docs_serving_reports():
    """docs/serving.md: GPUStack's 1,000 prompts of 128 tokens and 4 output tokens at once (bench.serving.SHORT_BURST):
    vLLM 0.11's, in no fit, mean TTFT and run length within 0.8x-1.25x with the front-end's queue (1.10x, 1.01x;
    0.17x and 0.26x without); SGLang 0.5's FP8 run, which its loop's time per request is read off
    (tools/fit_frontend_queue.py), 0.97x and 1.11x (0.39x and 0.48x without)."""
    off = {"frontend_serial_s_per_request": 0.0, "frontend_stream_s_per_token": 0.0}
    today, without = P.short_burst_ratios(), P.short_burst_ratios(**off)
    vllm, sglang = ("vllm", "0.11.0", "bf16"), ("sglang", "0.5.5.post1", "fp8")
    assert today[vllm] == pytest.approx((1.10, 1.01), abs=0.006)
    assert without[vllm] == pytest.approx((0.17, 0.26), abs=0.006)
    assert today[sglang] == pytest.approx((0.97, 1.11), abs=0.006)
    assert without[sglang] == pytest.approx((0.39, 0.48), abs=0.006)


@pytest.mark.parametrize("spec, field, scale", [
    ("vllm@0.11", "frontend_serial_s_per_request", 0.75), ("vllm@0.11", "frontend_serial_s_per_request", 1.25),
    ("sglang@0.5", "frontend_serial_s_per_request", 0.75), ("sglang@0.5", "frontend_serial_s_per_request", 1.25),
    ("sglang@0.5", "frontend_stream_s_per_token", 1.25)])
def test_the_front_end_queue_binds_its_gate(monkeypatch, spec, field, scale):
    """The front-end's queue lives in engines.json, outside the calibration sweep: scaled by 0.75 or 1.25 on its own
    engine's rows, a burst of the front_end_queue gate leaves 0.8x-1.25x (SGLang's time a token binds from above
    only: at 0.75x every burst stays within, tests/accuracy_gates.py)."""
    from gpuadvisor.estimate.serve.profiles import serve_engine

    value, today = getattr(serve_engine(spec), field) * scale, P.tool_value

    def moved(e, phys=None, **knobs):
        return today(e, phys, **({**knobs, field: value} if P.engine_spec(e) == spec else knobs))

    assert G.front_end_queue().passed
    monkeypatch.setattr(P, "tool_value", moved)
    assert not G.front_end_queue().passed


def test_a_closed_loop_of_fixed_lengths_is_on_a_knife_edge():
    """docs/serving.md: 20 ms of front-end per request turns NIM's spread clients (5-50 users, 5,000/500 tokens)
    into queued ones: mean TTFT from 0.83x, 1.09x, 1.02x to 2.20x, 1.83x, 1.69x; one user barely moves."""
    rows = sorted((e for e in P.load_entries() if e["id"].startswith("nim-") and e["metric"] == "ttft_ms"),
                  key=lambda e: e["concurrency"])
    at = {fe: [P.tool_value(e, frontend_s_per_request=fe) / e["value"] for e in rows] for fe in (0.0, 0.02)}
    assert [e["concurrency"] for e in rows] == [1, 5, 25, 50]
    assert at[0.0] == pytest.approx([0.91, 0.83, 1.09, 1.02], abs=0.006)
    assert at[0.02] == pytest.approx([0.96, 2.20, 1.83, 1.69], abs=0.006)


def test_an_answer_on_the_knife_edge_says_so(capsys):
    """estimate at NIM's 5,000/500 tokens: 5 clients get the caveat with both states' mean TTFT (452 ms spread out,
    about 1.2 s queued together); 1 client, and 5 clients of varied lengths, do not."""
    base = ("llama-3.3-70b", "--gpu", "H100 SXM5 80GB", "--tp", "2", "--gpus", "2", "--engine", "trtllm@0.17",
            "--weights", "fp8", "--input-len", "5000", "--output-len", "500", "--requests", "40")

    def caveat(*extra: str) -> str | None:
        return _load_caveat(capsys, *base, *extra)

    edge = caveat("--concurrency", "5")
    assert edge and "knife edge" in edge and "452 ms" in edge
    assert caveat("--concurrency", "1") is None
    assert caveat("--concurrency", "5", "--lengths", "sharegpt") is None


def test_an_open_loop_past_capacity_says_so():
    """docs/serving.md: past the knee a queue grows with the run, and its TTFT is many times what a capacity a few per
    cent off gives (vLLM on an RTX 5090 at 16 requests/s: 3.9 s published). An answer whose simulated deployment
    falls behind the offered rate says so; one that keeps up does not."""
    from gpuadvisor.estimate.serve.api import estimate_load
    from gpuadvisor.estimate.serve.lengths import Lengths

    s = P.serve_setup(P._model("llama-3.1-8b"), P.card_figures(P._catalog().get("H100 SXM5 80GB")), "vllm",
                      weights="bf16", kv_dtype="bf16")
    lengths = Lengths("sharegpt", 200, 200)
    # at 60 req/s the running batch grows to carry the rate (TPOT 12 ms); at 100 requests pile up through the run
    assert "past this deployment's capacity" in estimate_load(s, lengths, rate=100, requests=1000)["load"]["caveat"]
    assert "caveat" not in estimate_load(s, lengths, rate=60, requests=1000)["load"]


def test_a_sustained_prefill_iterations_linears_run_at_the_rate_the_step_prices():
    """lab/bf16_layer_prefill.py on an H100 (2026-12-07, driver 580.159.04): Qwen3-14B's four linears at a ShareGPT
    burst's prefill iterations, held back to back at the 700 W limit (SM clock 1,320-1,350 MHz), 309-317 ms for 40
    layers at 8,192 tokens and 77-80 ms at about 2,000: the serving step's linears are 0.94x-0.99x of them (docs/
    serving.md, "The published ShareGPT runs, as vllm bench serve drew them"). Scaled by 1.15 either way, the estimate
    would leave 0.9x-1.1x: what rules out a slow prefill iteration as the bursts' TPOT tail."""
    env, rows = P.prefill_linear_ratios()
    assert env["device"].startswith("NVIDIA H100") and len(rows) == 5
    ratios = [x for _, x in rows]
    assert all(0.9 <= x <= 1.1 for x in ratios), ratios
    assert not all(0.9 <= x * 1.15 <= 1.1 for x in ratios) and not all(0.9 <= x / 1.15 <= 1.1 for x in ratios)
