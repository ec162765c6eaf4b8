"""The tool against published serving results (tests/data/published-serving.json, tools/published_serving.py):
each entry's conditions simulated or costed, the ratio tool / published, and a Markdown section for BENCHMARKS.md.

Pipeline-parallel rows (pp > 1) run the pipeline as stepcost.py models it; speculative rows (`speculative`) cost one
sequence's generation with the run's speculation and its host sampling (`_speculative_tg`).

Metrics: max_output_tps (every request queued at once, fixed lengths, the published number of requests up to
MAX_SIM_REQUESTS), output_tps / ttft_ms / itl_ms / tpot_ms (closed loop of `concurrency` users, or every request
queued at once where `concurrency` is None; means as a client measures them: TTFT from the request sent to the
first token received, the engine's front-end included), pp_tps / tg_tps (llama-bench: one sequence, micro-batches
of `ubatch`).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from bench import REPO, TESTS_DATA
from gpuadvisor.estimate import calibration as calibration_constants
from gpuadvisor.estimate.serve.api import card_figures, estimate_load, llama_bench, serve_setup
from gpuadvisor.estimate.serve.lengths import Lengths
from gpuadvisor.layout import Layout

DATA = TESTS_DATA / "published-serving.json"
#: the published gpt-oss runs (tools/published_gpt_oss.py), kept apart from the gated tables above: the fit of
#: physics mxfp4_moe_eff (tools/fit_mxfp4_moe.py) and its held-out check (tests/test_gpt_oss.py)
GPT_OSS = TESTS_DATA / "published-gpt-oss.json"
DEEPSEEK = TESTS_DATA / "published-deepseek.json"
LLAMA4 = TESTS_DATA / "published-llama4.json"
MAX_SIM_REQUESTS = 3000
IN_BAND = (0.8, 1.25)
OUTER_BAND = (0.67, 1.5)
#: the metrics of online serving, each gated on its own (tests/test_serve_accuracy.py)
LATENCY_METRICS = {"ttft": ("ttft_ms", "ttft_ms_p50"), "itl/tpot": ("itl_ms", "tpot_ms", "itl_ms_p50", "tpot_ms_p50"),
                   "output throughput": ("output_tps",)}


@dataclass(frozen=True)
class Check:
    id: str
    metric: str
    published: float
    tool: float
    held_out: bool
    entry: dict[str, Any]

    @property
    def ratio(self) -> float:
        return self.tool / self.published


def load_entries(path: Path = DATA) -> list[dict[str, Any]]:
    return list(json.loads(path.read_text())["results"])


def gpt_oss_markdown() -> str:
    """Every published gpt-oss figure (GPT_OSS) beside the tool's, and whether mxfp4_moe_eff was fitted on it."""
    rows = ["| run | metric | published | tool | tool / published | fitted on |", "|---|---|---:|---:|---:|---|"]
    for e in load_entries(GPT_OSS):
        tool = tool_value(e)
        card = "H100" if "H100" in e["gpu"] else "A100"
        case = e["id"].split("-mxfp4-")[1].removesuffix("-" + e["metric"])
        rows.append(f"| {e['model']} {card} (vLLM {e['engine_version']}), {case} | {e['metric']} | {e['value']:,.2f} | "
                    f"{tool:,.2f} | {tool / e['value']:.2f}x | {'held out' if e['held_out'] else 'yes'} |")
    return "\n".join(rows) + "\n"


def deepseek_case(e: dict[str, Any]) -> str:
    """A DeepSeek entry's run, from its id: the card and format, then the case ("h200x8-fp8-random-4k")."""
    return str(e["id"]).split("deepseek-r1-", 1)[1].removesuffix("-" + e["metric"])


def deepseek_markdown() -> str:
    """Every published DeepSeek-R1 figure (DEEPSEEK) beside the tool's; nothing was fitted on them."""
    rows = ["| engine | run | metric | published | tool | tool / published |", "|---|---|---|---:|---:|---:|"]
    for e in load_entries(DEEPSEEK):
        tool = tool_value(e)
        case = deepseek_case(e)
        release = e["engine_version"] or "(its blog)"
        rows.append(f"| {e['engine']} {release} | {case} | {e['metric']} | {e['value']:,.2f} | "
                    f"{tool:,.2f} | {tool / e['value']:.2f}x |")
    return "\n".join(rows) + "\n"


def llama4_markdown() -> str:
    """Every published Llama 4 figure (LLAMA4) beside the tool's; nothing was fitted on them."""
    rows = ["| run | published tok/s | tool | tool / published |", "|---|---:|---:|---:|"]
    for e in load_entries(LLAMA4):
        tool = tool_value(e)
        rows.append(f"| {e['table']}, {e['input_len']}/{e['output_len']} | {e['value']:,.0f} | {tool:,.0f} | "
                    f"{tool / e['value']:.2f}x |")
    return "\n".join(rows) + "\n"


def llama4_ratios() -> dict[str, float]:
    """Tool / published of every Llama 4 figure (LLAMA4) by id."""
    return {e["id"]: tool_value(e) / e["value"] for e in load_entries(LLAMA4)}


def deepseek_ratios() -> dict[tuple[str, str, str], float]:
    """Tool / published of every DeepSeek-R1 figure (DEEPSEEK) by (engine, case, metric)."""
    return {(e["engine"], deepseek_case(e), e["metric"]):
            tool_value(e) / e["value"] for e in load_entries(DEEPSEEK)}


def gpt_oss_throughput_ratios(*, held_out: bool | None = None) -> dict[str, float]:
    """Tool / published output throughput of the gpt-oss runs (GPT_OSS) by id: the held-out ones, the fitted ones,
    or all (None)."""
    return {e["id"]: tool_value(e) / e["value"] for e in load_entries(GPT_OSS)
            if e["metric"] == "output_tps" and held_out in (None, e["held_out"])}


@cache
def _catalog() -> Any:
    from gpuadvisor.catalog import load_catalog

    return load_catalog()


def _model(name: str) -> Any:
    from gpuadvisor.workload import make_workload

    return make_workload(name).model


#: the TensorRT-LLM entry a NIM 1.x row is priced with: NIM's TensorRT-LLM profiles run optimized TensorRT engines
#: ("The TensorRT-LLM NIM backend includes multiple optimization profiles", docs.nvidia.com/nim/large-language-models/
#: latest/optimization.html), through the C++ executor, as TensorRT-LLM v0.x ran them (engines.json versions.trtllm)
NIM_TRTLLM_RELEASE = "0.17"


def engine_spec(e: dict[str, Any]) -> str:
    """The --engine a user of that release would give for a published entry: `vllm@0.11` for vLLM 0.11.0 (the
    profile's versions entry that covers it), the bare engine (its current release) where no entry does."""
    from gpuadvisor.estimate.serve.profiles import engine_versions, version_entry

    release = str(e.get("engine_version") or "")
    if e["engine"] == "trtllm" and release.startswith("NIM 1."):
        release = NIM_TRTLLM_RELEASE  # NIM 1.x's TensorRT-LLM profiles are TensorRT engines
    entry = version_entry(e["engine"], release) if re.fullmatch(r"\d+\.\d+(\.\w+)*", release) else ""
    return f"{e['engine']}@{entry}" if entry in engine_versions(e["engine"]) else e["engine"]


def tool_value(e: dict[str, Any], phys: dict[str, float] | None = None, **knobs: Any) -> float:
    """The tool's figure for one published entry, in the entry's metric and unit."""
    metric = e["metric"]
    if e.get("disaggregated"):
        return _disaggregated(e, phys, tuple(sorted(knobs.items())))
    if metric in ("pp_tps", "tg_tps"):
        gpu_figures = card_figures(_catalog().get(e["gpu"]))
        s = serve_setup(_model(e["model"]), gpu_figures, engine_spec(e), weights=e["weights"], kv_dtype=e["kv_dtype"],
                        layout=Layout(tp=e["tp"], pp=e["pp"]), phys=phys, **knobs)
    if metric == "pp_tps":
        return llama_bench(s, prompt=e["input_len"], ubatch=e["ubatch"] or 512)
    if metric == "tg_tps" and e.get("speculative"):
        return _speculative_tg(s, e)
    if metric == "tg_tps":
        return llama_bench(s, gen=e["output_len"])
    knobs = {**(e.get("engine_knobs") or {}), **knobs}  # the run's own settings (max_batch_size, ...)
    if e.get("frontend_ms") is not None and "frontend_s_per_request" not in knobs:
        # the source measured its host's front-end: taken as serve-check --calibration on that host gives it
        knobs = {**knobs, "frontend_s_per_request": e["frontend_ms"] / 1e3}
    users, rate = e["concurrency"], e.get("request_rate")
    # a closed loop runs the published request count (at least 8 rounds of the users); Poisson arrivals and all
    # queued: the published count
    requests = min(max(8 * users, 40, e["num_requests"] or 0) if users else (e["num_requests"] or MAX_SIM_REQUESTS),
                   max(MAX_SIM_REQUESTS, 3 * (users or 0)))  # three rounds at least of a closed loop's users
    spec = tuple(sorted((e.get("speculative") or {}).items()))
    f = _latency_run(e["model"], e["gpu"], engine_spec(e), e["weights"], e["kv_dtype"], e["tp"], e["pp"],
                     e["input_len"], e["output_len"], e["lengths"], users, requests, phys,
                     tuple(sorted({**knobs, "served": bool(e["client_measured"])}.items())), spec, rate,
                     bool(e.get("dp_attention")))
    figure: dict[str, Callable[[], float]] = {
        "output_tps": lambda: f["output_tokens_per_s"], "max_output_tps": lambda: f["output_tokens_per_s"],
        "ttft_ms": lambda: f["ttft_s"]["mean"] * 1e3, "ttft_ms_p50": lambda: f["ttft_s"]["p50"] * 1e3,
        # a speculating engine streams each verify step's accepted tokens as one chunk: the gap between chunks;
        # otherwise a per-request ITL (NIM's AIPerf) is the request's TPOT
        "itl_ms": lambda: (f["itl_s"] if e.get("speculative") else f["tpot_s"]["mean"]) * 1e3,
        # vllm bench serve's median ITL: the median of every gap between streamed chunks, pooled over requests
        "itl_ms_p50": lambda: f["itl_p50_s"] * 1e3,
        "tpot_ms": lambda: f["tpot_s"]["mean"] * 1e3, "tpot_ms_p50": lambda: f["tpot_s"]["p50"] * 1e3}
    return figure[metric]()


def _speculative_tg(s: Any, e: dict[str, Any]) -> float:
    """One sequence's generation tokens/s with the host sampling the run measured (each sampled token), and with
    the run's speculation where it speculated: k drafted and accept_length kept tokens sampled per verify step."""
    from dataclasses import replace

    from gpuadvisor.estimate.serve.speculative import SpeculativeStepCost, speculation

    sp, gen = e["speculative"], e["output_len"]
    sampling = float(sp.get("host_sampling_s") or 0.0)
    if not sp.get("method"):
        t = sum(s.cost.iteration_s(0, 0.0, 1, float(e["input_len"] + k)) for k in range(gen))
        return gen / (t + gen * sampling)
    draft = _model(sp["draft_model"]) if sp.get("draft_model") else None
    spec = speculation(sp["method"], draft_tokens=sp["draft_tokens"], accept_length=sp["accept_length"],
                       draft_model=draft)
    draft_cost = (serve_setup(draft, s.gpu_figures, engine_spec(e), weights=e["weights"], kv_dtype=e["kv_dtype"]).cost
                  if draft is not None else None)
    cost = SpeculativeStepCost(s.cost, spec, draft_cost)
    steps = gen / spec.accept_length
    run = replace(s, speculative=cost)
    per_step = gen / llama_bench(run, gen=gen) / steps  # seconds of one draft-and-verify step
    return gen / (steps * (per_step + (spec.draft_tokens + spec.accept_length) * sampling))


def _latency_run(model: str, gpu: str, engine: str, weights: str, kv: str, tp: int, pp: int, isl: int, osl: int,
                 lengths: str, users: int | None, requests: int, phys: dict[str, float] | None,
                 knobs: tuple[tuple[str, Any], ...], spec: tuple[tuple[str, Any], ...] = (),
                 rate: float | None = None, dp_attention: bool = False) -> dict[str, Any]:
    """One simulation (closed loop of `users`, Poisson arrivals at `rate` req/s, or all queued), shared by the
    TTFT, TPOT and throughput figures of the same conditions; `lengths` sharegpt or sharegpt-vllm (vLLM's benchmark
    sample, its filter applied): ShareGPT-shaped lengths with means `isl` and `osl`; `spec`: the entry's `speculative`
    (method, draft_tokens, accept_length, topk, verify_tokens)."""
    key = (model, gpu, engine, weights, kv, tp, pp, isl, osl, lengths, users, requests,
           tuple(sorted((phys or {}).items())), knobs, spec, rate, dp_attention)
    if key not in _SIMS:
        from gpuadvisor.estimate.serve.speculative import speculation

        sp = dict(spec)
        run_spec = speculation(sp["method"], draft_tokens=sp["draft_tokens"], accept_length=sp["accept_length"],
                               topk=sp.get("topk"), verify_tokens=sp.get("verify_tokens")) if sp else None
        s = serve_setup(_model(model), card_figures(_catalog().get(gpu)), engine, weights=weights, kv_dtype=kv,
                        layout=Layout(tp=tp, pp=pp, dp_attention=dp_attention), phys=phys, speculation=run_spec,
                        **dict(knobs))
        drawn = (Lengths(lengths, isl, osl, means=(float(isl), float(osl))) if lengths in ("sharegpt", "sharegpt-vllm")
                 else Lengths("fixed", isl, osl))
        _SIMS[key] = estimate_load(s, drawn, users=users, rate=rate, requests=requests)["figures"]
    return _SIMS[key]


_SIMS: dict[tuple[Any, ...], dict[str, Any]] = {}


def disagg_setup(e: dict[str, Any], phys: dict[str, float] | None = None, **knobs: Any) -> Any:
    """The disaggregated deployment of a published entry: its pools on its card, the engine knobs it set."""
    from gpuadvisor.estimate.serve.disagg import DisaggSetup, kv_link

    d = e["disaggregated"]
    gpu_figures = card_figures(_catalog().get(e["gpu"]))
    set_knobs = {k: d[k] for k in ("kv_mem_fraction",) if k in d} | knobs
    prefill_knobs = {k: d[k] for k in ("max_batched_tokens",) if k in d} | set_knobs
    kw = dict(weights=e["weights"], kv_dtype=e["kv_dtype"], phys=phys)
    pre = serve_setup(_model(e["model"]), gpu_figures, engine_spec(e), layout=Layout(tp=d["prefill_tp"]), **kw,
                      **prefill_knobs)
    dec = serve_setup(_model(e["model"]), gpu_figures, engine_spec(e), layout=Layout(tp=e["tp"]), **kw, **set_knobs)
    link = kv_link(d["kv_link"], gpu_figures, gpu_figures, e["gpus"])
    return DisaggSetup(pre, dec, d["prefill_instances"], d["decode_instances"], link)


#: lab/fp8_layer_prefill.py's H100 run: a 70B FP8 decoder layer written unfused, timed at 1,024-8,192 tokens
FP8_LAYER_RUN = REPO / "lab" / "data" / "h100-fp8-prefill-2026-12-06" / "fp8_layer_prefill.json"


def unfused_fp8_prefill_ratios(path: Path = FP8_LAYER_RUN) -> tuple[dict[str, Any], dict[int, float]]:
    """(the run's env, tokens -> its 80 layers' time over the GPU time the estimator gives that prefill on the Dynamo
    case's prefill worker, one H100 with FP8 weights)."""
    run = json.loads(path.read_text())
    e = next(x for x in load_entries() if x.get("disaggregated") and x["metric"] == "ttft_ms")
    cost = disagg_setup(e).prefill.cost
    return run["env"], {r["tokens"]: r["prefill_s"] / cost._stage_gpu_s(r["tokens"], r["tokens"] ** 2 / 2, 0, 0,
                                                                       cost.layers, 1.0) for r in run["rows"]}


#: lab/bf16_layer_prefill.py's H100 run: Qwen3-14B's layer in bf16 at a burst's prefill iterations (38 prompts of 216
#: tokens, 34 of them beside 848 decode rows, one 8,192-token prompt, about 2,000 tokens), held back to back
BF16_LAYER_RUN = REPO / "lab" / "data" / "h100-bf16-prefill-2026-12-07" / "bf16_layer_prefill.json"


def prefill_linear_ratios(path: Path = BF16_LAYER_RUN) -> tuple[dict[str, Any], list[tuple[dict[str, Any], float]]]:
    """(the run's env, each row and the estimator's linears (serve/stepcost.py, vLLM 0.11 on the H100) over the
    measured ones for its 40 layers at its token count): whether a sustained prefill iteration's GEMMs run at the
    rate the serving step prices them."""
    run = json.loads(path.read_text())
    e = next(x for x in load_entries() if x["id"] == "gpustack-vllm-0.11.0-qwen3-14b-h100-bf16-sharegpt-inf-ttft_ms")
    cost = serve_setup(_model(e["model"]), card_figures(_catalog().get(e["gpu"])), engine_spec(e),
                       weights=e["weights"], kv_dtype=e["kv_dtype"]).cost
    return run["env"], [(r, cost._linear_s(r["tokens"]) * cost.layers / r["gemms_step_s"]) for r in run["rows"]]


def _disaggregated(e: dict[str, Any], phys: dict[str, float] | None, knobs: tuple[tuple[str, Any], ...]) -> float:
    """A disaggregated entry: the KV transfer of one prompt, or a closed-loop run's client figures (GenAI-Perf: means
    over every request)."""
    import numpy as np

    from gpuadvisor.estimate.serve.disagg import run_disaggregated, summarize

    ds = disagg_setup(e, phys, **dict(knobs))
    if e["metric"] == "kv_transfer_ms":
        return float(ds.transfer_s(np.array([e["input_len"]]))[0]) * 1e3
    key = ("disaggregated", e["id"].rsplit("-", 1)[0], tuple(sorted((phys or {}).items())), knobs)
    if key not in _SIMS:
        n = e["num_requests"]
        run = run_disaggregated(ds, np.full(n, e["input_len"]), np.full(n, e["output_len"]), users=e["concurrency"])
        _SIMS[key] = summarize(run, ds.prefill.engine.frontend_s_per_request)
    f = _SIMS[key]
    tpot_ms = f["tpot_s"]["mean"] * 1e3
    return {"ttft_ms": f["ttft_s"]["mean"] * 1e3, "itl_ms": tpot_ms, "tpot_ms": tpot_ms,
            "output_tps": f["output_tokens_per_s"]}[e["metric"]]


def check_all(entries: list[dict[str, Any]] | None = None, phys: dict[str, float] | None = None,
              **knobs: Any) -> list[Check]:
    """Every entry's check; by default the colocated deployments' (the disaggregated ones are checked on their own,
    tests/test_serve_disagg.py, and stay out of the engine-profile tables' gates)."""
    return [Check(e["id"], e["metric"], e["value"], tool_value(e, phys, **knobs), e["held_out"], e)
            for e in (entries if entries is not None else [e for e in load_entries() if not e.get("disaggregated")])]


def shares(checks: list[Check]) -> dict[str, float]:
    """In-band shares and worst ratios of a set of checks."""
    r = [c.ratio for c in checks]
    inside = sum(IN_BAND[0] <= x <= IN_BAND[1] for x in r)
    outer = sum(OUTER_BAND[0] <= x <= OUTER_BAND[1] for x in r)
    return {"n": len(r), "in_band": inside / len(r), "in_outer": outer / len(r), "min": min(r), "max": max(r)}


def _metric_of(c: Check) -> str:
    """A client benchmark's throughput at an infinite rate counts as its output throughput."""
    return "output_tps" if c.metric == "max_output_tps" else c.metric


def per_metric(checks: list[Check], *, held_out: bool | None = None) -> dict[str, dict[str, float]]:
    """`shares` of each online-serving metric (LATENCY_METRICS); held_out None: all rows."""
    out = {}
    for name, metrics in LATENCY_METRICS.items():
        sel = [c for c in checks if c.entry["client_measured"] and _metric_of(c) in metrics
               and (held_out is None or c.held_out == held_out)]
        if sel:
            out[name] = shares(sel)
    return out


def _num(v: float) -> str:
    return f"{v:,.0f}" if v >= 100 else f"{v:.3g}"


def fixed_tables(checks: list[Check]) -> list[Check]:
    """The fixed-length results of means (what the profiles were calibrated on); the medians some pages give are
    checked as online metrics only (per_metric)."""
    return [c for c in checks if c.entry["lengths"] == "fixed" and not c.metric.endswith("_p50")]


def markdown_section(checks: list[Check] | None = None, *, date: str = "2026-11-24") -> str:
    """The BENCHMARKS.md section: published serving results against the tool, with sources."""
    checks = checks if checks is not None else check_all()
    tables = fixed_tables(checks)
    cal = shares([c for c in tables if not c.held_out])
    held = shares([c for c in tables if c.held_out])
    allc = shares(tables)
    lines = [
        "## Serving: the scheduler simulation against published engine results",
        "",
        f"Data ({date}): "
        "`tests/data/published-serving.json` (`tools/published_serving.py`), each figure with its source. "
        "Gated: tests/test_serve_accuracy.py.",
        "",
        "Fixed-length tables (maximum throughput, NIM's fixed concurrency, llama-bench):",
        "",
        f"* all {allc['n']}: {allc['in_band']:.0%} within 0.8x-1.25x, {allc['in_outer']:.0%} within 0.67x-1.5x, "
        f"ratios {allc['min']:.2f}-{allc['max']:.2f}",
        f"* calibration ({cal['n']}): {cal['in_band']:.0%} within 0.8x-1.25x, {cal['in_outer']:.0%} within "
        f"0.67x-1.5x, ratios {cal['min']:.2f}-{cal['max']:.2f}",
        f"* held out ({held['n']}): {held['in_band']:.0%} within 0.8x-1.25x, {held['in_outer']:.0%} within "
        f"0.67x-1.5x, ratios {held['min']:.2f}-{held['max']:.2f}",
        "",
        "Online serving, per metric (client-side, front-end in; means and medians):",
        "",
        *(f"* {name} ({m['n']}): {m['in_band']:.0%} within 0.8x-1.25x, {m['in_outer']:.0%} within 0.67x-1.5x, "
          f"ratios {m['min']:.2f}-{m['max']:.2f}" for name, m in per_metric(checks).items()),
        "",
        _memory_tight_line(),
        "",
        "| case | engine | GPU | weights/KV | ISL/OSL | load | metric | published | tool | ratio | held out | source |",
        "|---|---|---|---|---|---|---|---:|---:|---:|---|---|",
    ]
    for c in checks:
        e = c.entry
        load = (f"{e['concurrency']} users" if e["concurrency"] else
                f"{e['request_rate']:g} req/s Poisson" if e.get("request_rate") else
                (f"ubatch {e['ubatch']}" if e["ubatch"] else f"{e['num_requests'] or ''} all queued".strip()))
        gpus = (f"{e['gpus']}x {e['gpu']}" + (f" TP{e['tp']}" if e["tp"] > 1 else "")
                + (f" PP{e['pp']}" if e["pp"] > 1 else ""))
        sp = e.get("speculative") or {}
        if sp.get("method"):
            load += (f", {sp['method']} {sp.get('draft_model') or ''} k={sp['draft_tokens']} "
                     f"({sp['accept_length']:g}/step)")
        elif sp:
            load += ", no speculation"
        if e.get("frontend_ms") is not None:
            load += f", host front-end {e['frontend_ms']:g} ms (measured)"
        src = e["source"].get("url", "")
        lines.append(f"| {e['model']} | {e['engine']} {e['engine_version']} | {gpus} | {e['weights']}/{e['kv_dtype']} "
                     f"| {e['input_len']}/{e['output_len']} | {load} | {c.metric} | {_num(c.published)} "
                     f"| {_num(c.tool)} | {c.ratio:.2f} | {'yes' if c.held_out else ''} | [{e['table'][:40]}]({src}) |")
    return "\n".join(lines) + "\n"


#: GPUStack's Qwen3-32B runs on one H100 SXM (1,000 ShareGPT prompts queued at once; vllm bench serve, 217 input and
#: about 201 output tokens a request): (engine, release, weights) -> mean TTFT (ms), mean TPOT (ms), output tok/s.
#: Not in the validation set: a check of the memory-tight case (bf16 weights leave a few GiB of KV cache), read
#: 2026-12-05 from "1. Choosing the Inference Engine" and, SGLang FP8, "2. Quantization" of
QWEN3_32B_H100_SOURCE = ("https://github.com/gpustack/gpustack/blob/10e9444a07c73556f2ef0d10d2b2766bbf54c9c0/docs/"
                         "performance-lab/qwen3-32b/h100.md")
QWEN3_32B_H100 = {("vllm", "0.11.0", "bf16"): (78118.74, 88.09, 1131.55),
                  ("sglang", "0.5.5.post1", "bf16"): (115690.30, 57.86, 814.03),
                  ("trtllm", "1.2.0rc1", "bf16"): (65281.52, 61.90, 1280.04),
                  ("sglang", "0.5.5.post1", "fp8"): (35510.55, 205.13, 1926.06)}
MEMORY_TIGHT_METRICS = ("ttft_ms", "tpot_ms", "max_output_tps")


#: GPUStack's decode-bound cases on its Qwen3 throughput pages' "H100": 100 prompts of 32,000 random tokens with 100
#: output tokens, where the KV cache holds a few prompts and the steps between their prefills are pure decode:
#: (page, model, engine, weights) -> the published median ITL in ms ("Other Benchmark Cases", "random 32K input")
DECODE_SIGNATURES = {("qwen3-14b/h100.md", "qwen3-14b", "vllm@0.11", "bf16"): 43.48,
                     ("qwen3-14b/h100.md", "qwen3-14b", "sglang@0.5", "fp8"): 41.38,
                     ("qwen3-32b/h100.md", "qwen3-32b", "vllm@0.11", "bf16"): 43.30}


def decode_signature_ratios(gpu: str) -> dict[tuple[str, str, str, str], float]:
    """Tool / published of each DECODE_SIGNATURES case on `gpu`: one decode iteration of the sequences the KV cache
    holds at 32,050 tokens each (the prompts in, the answers under way), against the published median ITL."""
    out = {}
    gpu_figures = card_figures(_catalog().get(gpu))
    for key, published_ms in DECODE_SIGNATURES.items():
        _, model, engine, weights = key
        s = serve_setup(_model(model), gpu_figures, engine, weights=weights, kv_dtype="bf16")
        seqs = max(1, s.cfg.kv_blocks * int(calibration_constants.KV_BLOCK_TOKENS) // 32_100)
        out[key] = s.step_cost.iteration_s(0, 0.0, seqs, seqs * 32_050.0) * 1e3 / published_ms
    return out


#: GPUStack's Qwen3-14B H100 page, "Other Benchmark Cases", "random 128 input": 1,000 prompts of 128 random tokens
#: with 4 output tokens queued at once (vllm bench serve, openai-chat), the baseline vLLM 0.11.0 (bf16) and the
#: optimized SGLang 0.5.5.post1 (Qwen3-14B-FP8): (engine, release, weights) -> (mean TTFT ms, benchmark duration s).
#: In no fit: a check of the front-end's queue (sim.front_end_reach), whose wait is most of these runs
SHORT_BURST_SOURCE = ("https://github.com/gpustack/gpustack/blob/7ae332aaf05783e657560ef927c527b156e2536d/docs/"
                      "performance-lab/qwen3-14b/h100.md")
SHORT_BURST = {("vllm", "0.11.0", "bf16"): (18282.75, 22.72), ("sglang", "0.5.5.post1", "fp8"): (4489.43, 7.80)}


#: A V1 vLLM burst measured by someone else on another host (in no set; docs/serving.md "The mean TPOT of a burst"):
#: vllm-project/vllm PR #13305, comment by tdoublep of 2025-03-19, "I've been testing these changes on H100" (one
#: GPU: no TP flag), `vllm serve .../llama3.1-8b/instruct/` built from that branch (V1, VLLM_USE_V1=1), then
#: benchmarks/benchmark_serving.py --dataset-name sharegpt --ignore-eos (1,000 prompts at an infinite rate, the vllm
#: backend's /v1/completions): 23.29 s, 215,196 input and 198,343 output tokens, 8,516.11 output tok/s, mean TTFT
#: 3,961.21 ms. The card is taken as the SXM form
V1_BURST_SOURCE = "https://github.com/vllm-project/vllm/pull/13305"
V1_BURST = {"max_output_tps": 8516.11, "ttft_ms": 3961.21}


def v1_burst_ratios(**knobs: Any) -> dict[str, float]:
    """Tool / published of V1_BURST, priced as `vllm@0.11` (the release entry that covers v0.8-v0.13)."""
    base = {**_queued_run("llama-3.1-8b", "vllm", "0.8.0", "bf16", "H100 SXM5 80GB", 215, 198, "sharegpt-vllm",
                          "sharegpt"), "id": "vllm-pr13305-llama-3.1-8b-h100-sharegpt-inf"}
    return {m: tool_value({**base, "metric": m, "value": v}, **knobs) / v for m, v in V1_BURST.items()}


def all_queued(e: dict[str, Any]) -> bool:
    """An entry whose requests were all queued at once (no concurrency, no request rate: a burst)."""
    return e["concurrency"] is None and e.get("request_rate") is None


def _queued_run(model: str, engine: str, version: str, weights: str, gpu: str, input_len: int, output_len: int,
                lengths: str, label: str) -> dict[str, Any]:
    """An entry (less its metric and value) for one of GPUStack's runs of 1,000 requests queued at once on one GPU
    through the engine's HTTP server, which no table of tests/data lists (SHORT_BURST, QWEN3_32B_H100)."""
    return {"id": f"gpustack-{engine}-{version}-{model}-h100-{weights}-{label}-inf", "model": model, "engine": engine,
            "engine_version": version, "gpu": gpu, "gpus": 1, "weights": weights, "kv_dtype": "bf16",
            "input_len": input_len, "output_len": output_len, "tp": 1, "pp": 1, "concurrency": None,
            "request_rate": None, "num_requests": 1000, "ubatch": None, "lengths": lengths, "client_measured": True,
            "speculative": None, "disaggregated": None, "held_out": True}


def short_burst_ratios(runs: Iterable[tuple[str, str, str]] = tuple(SHORT_BURST), **knobs: Any
                       ) -> dict[tuple[str, str, str], tuple[float, float]]:
    """Tool / published of SHORT_BURST's `runs` (all by default): (mean TTFT, benchmark duration); `knobs`: profile
    what-ifs."""
    out = {}
    for engine, version, weights in runs:
        ttft_ms, duration_s = SHORT_BURST[(engine, version, weights)]
        row = _queued_run("qwen3-14b", engine, version, weights, "H100 SXM5 80GB", 128, 4, "fixed", "random-128-4")
        ttft = tool_value({**row, "metric": "ttft_ms"}, **knobs)
        duration = 1000 * 4 / tool_value({**row, "metric": "max_output_tps"}, **knobs)
        out[(engine, version, weights)] = (ttft / ttft_ms, duration / duration_s)
    return out


def memory_tight_ratios(gpu: str = "H100 SXM5 80GB") -> dict[tuple[str, str, str], tuple[float, ...]]:
    """Tool / published of QWEN3_32B_H100 on `gpu`, per run: (TTFT, TPOT, output throughput)."""
    out = {}
    for (engine, version, weights), published in QWEN3_32B_H100.items():
        ratios = []
        for metric, value in zip(MEMORY_TIGHT_METRICS, published, strict=True):
            row = {**_queued_run("qwen3-32b", engine, version, weights, gpu, 217, 201, "sharegpt-vllm", "sharegpt"),
                   "metric": metric, "value": value}
            ratios.append(tool_value(row) / value)
        out[(engine, version, weights)] = tuple(ratios)
    return out


#: the published bursts the front-end's queue (engines.json frontend_serial_s_per_request, frontend_stream_s_per_token)
#: was not fitted on, beside DeepSeek-R1's and SHORT_BURST's (queue_burst_ratios): vLLM 0.11's A100 bursts (bf16, AWQ)
#: and SGLang 0.5's H100 bf16 one, held out
QUEUE_BURST_IDS = ("gpustack-vllm-0.11.0-qwen3-14b-a100-bf16-sharegpt-inf-ttft_ms",
                   "gpustack-vllm-0.11.0-qwen3-14b-a100-awq-sharegpt-inf-ttft_ms",
                   "gpustack-sglang-0.5.5.post1-qwen3-14b-h100-bf16-sharegpt-inf-ttft_ms")


def queue_burst_ratios(**knobs: Any) -> dict[str, float]:
    """Tool / published of the bursts the front-end's queue is checked on (tests/accuracy_gates.py front_end_queue):
    QUEUE_BURST_IDS' mean TTFT, DeepSeek-R1's burst TTFTs (ShareGPT and 128-token) and SHORT_BURST's mean TTFT and
    run length; `knobs`: profile what-ifs applied to every row."""
    rows = {e["id"]: e for e in load_entries()}
    out = {i: tool_value(rows[i], **knobs) / rows[i]["value"] for i in QUEUE_BURST_IDS}
    for e in load_entries(DEEPSEEK):
        case = deepseek_case(e)
        if e["metric"] == "ttft_ms" and (case.endswith(("-sharegpt", "-sharegpt-opt")) or "random-128" in case):
            out[e["id"]] = tool_value(e, **knobs) / e["value"]
    for (engine, release, weights), (ttft, duration) in short_burst_ratios(**knobs).items():
        out[f"short burst {engine} {release} {weights} ttft"] = ttft
        out[f"short burst {engine} {release} {weights} duration"] = duration
    return out


def _memory_tight_line() -> str:
    r = list(memory_tight_ratios().values())
    span = [f"{min(x[i] for x in r):.2f}x-{max(x[i] for x in r):.2f}x" for i in range(3)]
    return (f"Not in the set: Qwen3-32B on one H100 (docs/serving.md): "
            f"TTFT {span[0]}, TPOT {span[1]}, throughput {span[2]}.")


def fit_profile_field(rows: list[dict[str, Any]], field: str, values: Iterable[float]) -> float:
    """The value of one engine-profile field, among `values`, with the least sum of squared log(tool / published)
    over `rows` (the calibration rows a fit in tools/ selects)."""
    def error(value: float) -> float:
        knob: dict[str, Any] = {field: value}
        return sum(math.log(tool_value(e, **knob) / e["value"]) ** 2 for e in rows)

    return min(values, key=error)


def fit_kv_transfer_efficiency() -> float:
    """KV_TRANSFER_EFFICIENCY from the published transfer time (metric kv_transfer_ms): the prompt's KV bytes over
    (the time less the engine's hand-off) x the link's one-way rate, to two decimals."""
    import numpy as np

    e = next(x for x in load_entries() if x["metric"] == "kv_transfer_ms")
    ds = disagg_setup(e)
    wire_s = e["value"] * 1e-3 - ds.decode.engine.kv_transfer_latency_s
    return round(float(ds.kv_bytes(np.array([e["input_len"]]))[0]) / wire_s / (ds.link.gbs * 1e9), 2)
