"""The one entry of the estimator: `estimate(request) -> Answer`.

Every interface calls this and only this to estimate one workload on one kind of hardware. It resolves
the card and its figures (datasheet, or a probe's measurements), then asks the model that answers the
request's question (request.Question):

* STEP: the calibrated memory and time of the workload in its own layout, and for a decoder in inference the
  serving figures of its users at once: the figures `recommend` prices for the same card x GPUs
  (advisor.figures.layout_figures), so the two commands cannot disagree.
* SERVING: a request stream simulated under an engine's continuous-batching scheduler (estimate/serve).
* TRAINING: a parallel layout costed, as given or searched (estimate/parallel).

Each returns the same `Answer` type, with its typed results in `Answer.parts` for the text printers.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from gpuadvisor.answer import Answer, MemoryParts, Rate, ServingFigures, TimeParts
from gpuadvisor.core.errors import UserError
from gpuadvisor.request import EstimateRequest, HardwareChoice, Question, ServingLoad, Step, TrainingLayout

GiB = 2**30


@dataclass(frozen=True)
class Resolved:
    """The card of a request and the figures the estimate runs on."""

    card: Any  # catalog.Card
    figures: Any  # estimate.HardwareFigures
    efficiency: Any  # estimate.Efficiency


def resolve_hardware(choice: HardwareChoice, catalog: Any = None) -> Resolved:
    """The card (fuzzy name), its figures (measured with a probe result, else the datasheet's) and the
    efficiencies (the calibrated ones, or the user's --mfu / --bw-eff)."""
    from gpuadvisor.advisor.options import hardware_of
    from gpuadvisor.catalog import load_catalog, resolve_card

    cat = catalog if catalog is not None else load_catalog()
    card = resolve_card(cat, choice.card)
    measured = None
    if choice.probe:
        from gpuadvisor.compare import measured_by_card
        from gpuadvisor.core import results

        measured = measured_by_card(results.load(choice.probe), cat).get(card.name)
        if not measured:
            raise UserError(f"{choice.probe}: no measured figures for {card.name}")
    efficiency = efficiency_for(choice.mfu, choice.bandwidth_efficiency)
    return Resolved(card, hardware_of(card, measured), efficiency)


def efficiency_for(mfu: float | None = None, bandwidth_efficiency: float | None = None) -> Any:
    """The calibrated efficiencies, or the user's large-matmul (`mfu`) and streaming efficiencies against the
    datasheet; their ratio to the measured-figure efficiencies scales with them."""
    from gpuadvisor.estimate import Efficiency

    default = Efficiency()
    kw: dict[str, float] = {}
    if mfu:
        kw.update(mfu=mfu, mfu_vs_measured=min(1.0, mfu / default.mfu * default.mfu_vs_measured), mfu_given=True)
    if bandwidth_efficiency:
        kw.update(bandwidth=bandwidth_efficiency, bandwidth_vs_measured=min(
            1.0, bandwidth_efficiency / default.bandwidth * default.bandwidth_vs_measured), bandwidth_given=True)
    return Efficiency(**{**default.__dict__, **kw}).validate()


def estimate(request: EstimateRequest, *, catalog: Any = None) -> Answer:
    """Answer one request (validated here: bad input raises UserError with one line)."""
    request.validate()
    hardware = resolve_hardware(request.hardware, catalog)
    _refuse_what_cannot_run(request, hardware.card)
    if isinstance(request.question, ServingLoad):
        return _serving(request, request.question, hardware)
    if isinstance(request.question, TrainingLayout):
        return _training(request, request.question, hardware)
    return _step(request, request.question, hardware)


def _training_framework(q: TrainingLayout) -> str:
    """The framework profile a training question runs under: the one given, else Megatron where a degree only it
    runs (pipeline, context, expert parallel) is asked, else Hugging Face Trainer."""
    return q.framework or ("megatron" if (q.pipeline_parallel > 1 or q.context_parallel > 1
                                          or q.expert_parallel > 1) else "hf")


def _refuse_what_cannot_run(request: EstimateRequest, card: Any) -> None:
    """One line, exit 2, where the support matrix (docs/support.md) says the card cannot run the workload: the
    engine that serves it, fp8, bitsandbytes kernels, Megatron's Transformer Engine, or LoRA/QLoRA under tensor,
    pipeline or context parallelism. Estimating a run that cannot start would answer a question nobody can ask."""
    from gpuadvisor.advisor.support import QUANT_FEATURE, adapter_layout_blocker, cannot_run, needs

    w, q = request.workload, request.question
    if isinstance(q, ServingLoad):
        weights = QUANT_FEATURE.get(serving_weights(w, q))
        features = needs(w, serve_engine=str(q.engine), requires=(weights,) if weights else ())
        layout = adapter_layout_blocker(w, tp=w.tensor_parallel)
    elif isinstance(q, TrainingLayout):
        fw = _training_framework(q)
        features = needs(w, framework=fw)
        layout = adapter_layout_blocker(w, tp=w.tensor_parallel, pp=q.pipeline_parallel, cp=q.context_parallel,
                                        framework=fw)
    else:
        features = needs(w, step_engine=str(q.engine))
        layout = adapter_layout_blocker(w, tp=w.tensor_parallel)
    why = cannot_run(card, features) or layout
    if why:
        raise UserError(f"{card.name} {why} (docs/support.md){_engines_that_run(request, card)}")


def _engines_that_run(request: EstimateRequest, card: Any) -> str:
    """Where the engine is what the card cannot run: the engines of the same question that it does run, as a hint
    ('; --engine eager runs on it'), else ''. A P40 asked about with the default engine (vLLM-class) is told that
    Hugging Face's generate() runs there, rather than only that vLLM does not."""
    from gpuadvisor.advisor.support import cannot_run, needs

    w, q = request.workload, request.question
    if w.mode != "inference" or isinstance(q, TrainingLayout):
        return ""
    if isinstance(q, ServingLoad):
        others = [e for e in ("llamacpp", "hf", "vllm", "sglang", "trtllm") if e != str(q.engine).split("@")[0]]
        runs = [e for e in others if not cannot_run(card, needs(w, serve_engine=e))]
    else:
        runs = [e for e in ("graphs", "eager") if e != str(q.engine) and not cannot_run(card, needs(w, step_engine=e))]
    if not runs:
        return ""
    return f"; --engine {' or '.join(runs[:2])} {'runs' if len(runs) == 1 else 'run'} on it"


# --- STEP: the calibrated step in the workload's own layout -------------------------------------------------


@dataclass
class StepParts:
    """The typed results of a step estimate, as the text printers read them."""

    workload: Any
    card: Any
    gpu_figures: Any
    efficiencies: Any
    engine: str
    decoder_serving: bool
    mem: Any
    comp: Any
    plan: Any
    serving: Any
    lay: Any
    fits: bool
    graph: dict[str, Any] | None = None  # the analytic op graph's figures, where it writes the model
    way_forward: tuple[Any, ...] = ()


def _step(request: EstimateRequest, q: Step, hardware: Resolved) -> Answer:
    from gpuadvisor.advisor.figures import layout_figures
    from gpuadvisor.estimate import estimate_compute, estimate_memory, estimate_serving

    w, card, gpu_figures, efficiencies = request.workload, hardware.card, hardware.figures, hardware.efficiency
    decoder_serving = w.mode == "inference" and w.model.kind == "decoder" and bool(w.gen_tokens and w.seq)
    if decoder_serving and q.users:
        w = w.with_(batch=q.users)
    mem = estimate_memory(w, gpu_figures.memory_bytes)
    comp = estimate_compute(w, gpu_figures, efficiencies, engine=q.engine)
    plan = _offload_plan(q, w, card, gpu_figures, efficiencies) if q.offload else None
    lay = layout_figures(w, gpu_figures, efficiencies, q.engine) if not q.offload else None
    serving = None
    if decoder_serving:
        serving = estimate_serving(w.with_(batch=w.data_parallel), gpu_figures, concurrency=w.micro_batch,
                                   prompt_tokens=w.seq, output_tokens=w.gen_tokens, engine=q.engine,
                                   efficiency=efficiencies)
    # with --offload the plan is the answer: it fits the card by construction (plan_offload refuses otherwise)
    fits = True if plan is not None else (
        lay.fits if lay is not None else card.memory_gib is not None and mem.total / GiB <= card.memory_gib)
    graph = _op_graph(w, gpu_figures, efficiencies, comp)
    fixes = tuple(way_forward(w, gpu_figures, lay, efficiencies, q.engine))
    parts = StepParts(w, card, gpu_figures, efficiencies, q.engine, decoder_serving, mem, comp, plan, serving, lay,
                      fits, graph,
                      fixes)
    return _step_answer(request, parts)


def _step_answer(request: EstimateRequest, p: StepParts) -> Answer:
    w, comp, lay, mem = p.workload, p.comp, p.lay, p.mem
    if lay is not None and lay.memory_parts:
        mem_parts = {k: v * GiB for k, v in lay.memory_parts}
        per_gpu = sum(mem_parts.values())
    else:
        mem_parts = {k: float(v) for k, v in mem.items if v}
        per_gpu = float(mem.total)
    if p.plan is not None:  # offloaded: what stays on the GPU (the whole model's table is detail.memory)
        mem_parts = {"on the GPU: its layers, their KV cache, head, buffers, context": float(p.plan.gpu_bytes)}
        per_gpu = float(p.plan.gpu_bytes)
    capacity = p.gpu_figures.memory_gib * GiB if p.gpu_figures.memory_gib is not None else None
    step_s = comp.step_time_s if comp.step_time_s is not None else (
        comp.decode_step_s if w.mode == "inference" and comp.decode_step_s else comp.prefill_time_s)
    time_parts: dict[str, float] = {}
    if comp.breakdown:
        time_parts.update({k: float(v) for k, v in comp.breakdown.items()})
    if comp.host_time_s:
        time_parts["host"] = float(comp.host_time_s)
    if comp.comm_time_s:
        time_parts["communication"] = float(comp.comm_time_s)
    if w.mode == "inference" and comp.prefill_time_s is not None:
        time_parts["forward" if comp.unit else "prefill"] = float(comp.prefill_time_s)
        if comp.decode_step_s:
            time_parts["decode (all tokens)"] = float(comp.decode_step_s) * max(1, w.gen_tokens - 1)
    unit = f"{comp.unit}/s" if comp.unit else "tokens/s"
    value = comp.samples_per_s if comp.unit else (
        comp.tokens_per_s or comp.decode_tokens_per_s or comp.prefill_tokens_per_s)
    if p.plan is not None and not p.plan.fits_entirely:  # decode reads the host's layers: the plan's rate
        step_s, value, unit = p.plan.decode_step_s, p.plan.decode_tokens_per_s, "tokens/s"
    serving = None
    if p.serving is not None and lay is not None:
        s = p.serving
        serving = ServingFigures(users=w.batch, input_len=w.seq, output_len=w.gen_tokens,
                                 ttft_s=lay.ttft if lay.fits else None, tpot_s=lay.tpot if lay.fits else None,
                                 per_user_tokens_per_s=lay.per_user if lay.fits else None,
                                 aggregate_tokens_per_s=lay.aggregate if lay.fits else None,
                                 kv_capacity_tokens=s.kv_capacity_tokens)
        value, unit = serving.aggregate_tokens_per_s, "tokens/s"
    job_s = comp.time_s if (w.train_tokens or w.train_samples or w.mode == "inference") else None
    if lay is not None and lay.wall_s is not None and w.is_training:
        job_s = lay.wall_s
    detail = {"memory": mem.to_dict(), "compute": comp.to_dict(),
              "serving": p.serving.to_dict() if p.serving else None, "layout": lay.to_dict() if lay else None,
              "way_forward": [r.to_dict() for r in p.way_forward],
              **({"offload": p.plan.to_dict()} if p.plan else {}), **({"op_graph": p.graph} if p.graph else {})}
    assumptions: dict[str, Any] = {"engine": p.engine, "matmul_efficiency": comp.mfu,
                                   "bandwidth_efficiency": comp.bandwidth_efficiency}
    if w.mode == "inference":
        assumptions.update(input_len=w.seq, output_len=w.gen_tokens, users=w.batch)
    notes = tuple(dict.fromkeys((*mem.notes, *comp.notes, *(p.serving.notes if p.serving else ()))))
    return Answer(question=Question.STEP, workload=w.to_dict(), card=p.card.name, gpus=w.num_gpus,
                  hardware_source=str(p.gpu_figures.source), fits=p.fits,
                  time=TimeParts(step_s=step_s if p.fits or lay is None else None, job_s=job_s if p.fits else None,
                                 bound=comp.bound, parts=time_parts),
                  memory=MemoryParts(per_gpu_bytes=per_gpu, capacity_bytes=capacity, parts=mem_parts),
                  rate=Rate(value=value if p.fits else None, unit=unit,
                            per_gpu=(value / w.num_gpus) if value and p.fits else None),
                  serving=serving, profile=f"engine {p.engine}" if w.mode in ("inference", "scoring")
                  else "eager PyTorch (Hugging Face Trainer)", assumptions=assumptions, notes=notes,
                  detail=detail, parts=p)


def _offload_plan(q: Step, workload: Any, card: Any, gpu_figures: Any, efficiencies: Any) -> Any:
    """The llama.cpp-style offload plan (host bandwidth: the request's, else the default)."""
    from gpuadvisor.estimate.offload import plan_offload

    if card.memory_gib is None or not gpu_figures.bandwidth_gbs:
        raise UserError(f"{card.name}: the catalog has no memory size or bandwidth, which --offload needs")
    return plan_offload(workload, card.memory_gib * GiB, gpu_figures.bandwidth_gbs,
                        host_bandwidth_gbs=q.host_bandwidth_gbs,
                        bandwidth_efficiency=efficiencies.for_hardware(gpu_figures)[1])


def _op_graph(workload: Any, gpu_figures: Any, efficiencies: Any, comp: Any) -> dict[str, Any] | None:
    """Where the GPU time of a Llama-style decoder's step goes, op class by op class (shares of the one time);
    None where the analytic front-end does not write the workload."""
    if workload.model.is_traced or workload.model.kind != "decoder":
        return None
    from gpuadvisor.estimate.analytic import op_graph_summary
    from gpuadvisor.estimate.compute_result import StepEngineName

    try:
        return op_graph_summary(workload, gpu_figures, efficiencies,
                                eager=workload.is_training or comp.engine == StepEngineName.EAGER)
    except UserError:
        return None


def way_forward(workload: Any, gpu_figures: Any, lay: Any, efficiencies: Any, engine: str) -> list[Any]:
    """The cheapest changes that make a layout fit (empty when it fits or is not costed)."""
    from gpuadvisor.advisor.remedy import way_forward as remedies
    from gpuadvisor.advisor.targets import Targets

    if lay is None or lay.fits:
        return []
    if workload.mode == "inference":
        t = Targets(users=workload.batch, context=workload.seq + workload.gen_tokens,
                    output_tokens=workload.gen_tokens, tokens_per_s=1.0)
        base = workload.with_(batch=1)
    else:
        t = Targets(tokens=float(workload.train_tokens or workload.train_samples) or None)
        base = workload.with_(batch=workload.micro_batch)
    return list(remedies(base, gpu_figures, workload.num_gpus, t, engine=engine, efficiency=efficiencies, current=lay,
                         exact=True))


# --- SERVING: a simulated request stream --------------------------------------------------------------------


@dataclass
class ServingParts:
    model: Any
    card: Any
    result: dict[str, Any]  # estimate_load's figures, load and assumptions
    slo: bool  # P99 targets were given: goodput and attainment are meaningful


def _serving(request: EstimateRequest, q: ServingLoad, hardware: Resolved) -> Answer:
    from gpuadvisor.estimate.serve.api import card_figures, estimate_load, serve_setup
    from gpuadvisor.estimate.serve.lengths import parse_lengths
    from gpuadvisor.layout import Layout

    w, card = request.workload, hardware.card
    if q.disaggregated:
        return _disaggregated(request, q, hardware)
    weights = serving_weights(w, q)
    lay = Layout(tp=w.tensor_parallel, pp=q.pipeline_parallel, replicas=q.replicas, dp_attention=q.dp_attention)
    overrides: dict[str, Any] = dict(q.engine_overrides)
    setup = serve_setup(w.model, card_figures(card), q.engine, weights=weights, kv_dtype=q.kv_dtype, layout=lay,
                        efficiency=None, speculation=_speculation(q), served=not q.in_process, **overrides)
    lengths = parse_lengths(q.lengths, w.seq, max(1, w.gen_tokens), q.lengths_given)
    r = estimate_load(setup, lengths, rate=q.rate, users=q.concurrency, requests=q.requests, seed=q.seed,
                      slo_ttft=q.p99_ttft_s, slo_tpot=q.p99_tpot_s)
    f, a, ld = r["figures"], r["assumptions"], r["load"]
    kv_tokens = int(a["kv_blocks_per_group"] * a["kv_block_tokens"])
    weights_bytes = setup.cost.weight_bytes_per_gpu()
    capacity = card.memory_gib * GiB if card.memory_gib else None
    kv_bytes = float(kv_tokens * setup.cost.kv_per_token)
    mem_parts = {"weights": float(weights_bytes), "KV cache (reserved)": kv_bytes}
    pct = {k: dict(f[k]) for k in ("ttft_s", "server_ttft_s", "tpot_s", "latency_s") if isinstance(f.get(k), dict)}
    mean_in, mean_out = ld["mean_input_len"], ld["mean_output_len"]  # of the requests the simulation drew
    tpot50 = pct.get("tpot_s", {}).get("p50")
    serving = ServingFigures(users=q.concurrency, input_len=mean_in, output_len=mean_out,
                             ttft_s=pct.get("ttft_s", {}).get("p50"), tpot_s=tpot50,
                             per_user_tokens_per_s=(1.0 / tpot50) if tpot50 else None,
                             aggregate_tokens_per_s=f.get("output_tokens_per_s"), kv_capacity_tokens=kv_tokens,
                             percentiles=pct, server_ttft_s=pct.get("server_ttft_s", {}).get("p50"),
                             frontend_s=f.get("frontend_s"), itl_s=f.get("itl_s"))
    assumptions = {k: a[k] for k in ("engine", "engine_label", "weights", "kv_dtype", "kv_block_tokens",
                                     "max_batched_tokens", "chunk_tokens", "max_seqs", "cuda_graphs", "layout",
                                     "frontend_s_per_request", "frontend_serial_s_per_request", "frontend_requeues",
                                     "frontend_stream_s_per_token", "tp_handoff_s_per_iter", "speculation")
                   if k in a}
    notes: tuple[str, ...] = ()
    if "speculation" in a:
        sp = a["speculation"]
        past = sp["stops_paying_at_batch"]
        notes = ((f"speculative decoding ({sp['method']}, k={sp['draft_tokens']}, {sp['accept_length']:g} tokens per "
                  "verify step): " + ("it never pays here (batch 1 is already slower)" if past == 1 else
                                      f"stops paying at {past} sequences decoding at once" if past else
                                      f"pays up to the engine's {a['max_seqs']} sequences")
                  + f" (at {sp['at_context_tokens']:,} tokens of context)"),)
    if ld.get("caveat"):
        notes = (*notes, str(ld["caveat"]))
    assumptions.update(load=ld, requests=q.requests, seed=q.seed)
    if q.engine_overrides:
        assumptions["engine_overrides"] = dict(q.engine_overrides)
    return Answer(question=Question.SERVING, workload=w.to_dict(), card=card.name, gpus=int(a["gpus"]),
                  hardware_source="datasheet", fits=True,
                  time=TimeParts(step_s=tpot50, job_s=f.get("duration_s"), bound=None, parts={}),
                  memory=MemoryParts(per_gpu_bytes=sum(mem_parts.values()), capacity_bytes=capacity,
                                     parts=mem_parts),
                  rate=Rate(value=f.get("requests_per_s"), unit="requests/s",
                            per_gpu=(f["requests_per_s"] / a["gpus"]) if f.get("requests_per_s") else None),
                  serving=serving, profile=f"serving engine {a['engine']} ({a.get('engine_label', '')})",
                  assumptions=assumptions, notes=notes, detail={"serving_simulation": r},
                  parts=ServingParts(w.model, card, r, q.p99_ttft_s is not None or q.p99_tpot_s is not None))


def _disaggregated(request: EstimateRequest, q: ServingLoad, hardware: Resolved) -> Answer:
    """A disaggregated deployment (estimate/serve/disagg.py): a prefill pool, a decode pool (the workload's layout on
    the request's card) and the KV transfer between them."""
    from gpuadvisor.advisor.support import cannot_run, needs
    from gpuadvisor.catalog import load_catalog, resolve_card
    from gpuadvisor.estimate.serve.api import card_figures, serve_setup
    from gpuadvisor.estimate.serve.disagg import DisaggSetup, estimate_disaggregated, kv_link
    from gpuadvisor.estimate.serve.lengths import parse_lengths
    from gpuadvisor.layout import Layout

    w, card = request.workload, hardware.card
    weights = serving_weights(w, q)
    prefill_card = resolve_card(load_catalog(), q.prefill_card) if q.prefill_card else card
    why = cannot_run(prefill_card, needs(w, serve_engine=str(q.engine)))
    if why:
        raise UserError(f"{prefill_card.name} {why} (docs/support.md)")
    ptp = q.prefill_tp or w.tensor_parallel
    assert q.prefill_gpus is not None
    overrides: dict[str, Any] = dict(q.engine_overrides)
    phw, dhw = card_figures(prefill_card), card_figures(card)
    pre = serve_setup(w.model, phw, q.engine, weights=weights, kv_dtype=q.kv_dtype, layout=Layout(tp=ptp),
                      served=not q.in_process, **overrides)
    dec = serve_setup(w.model, dhw, q.engine, weights=weights, kv_dtype=pre.kv_dtype,
                      layout=Layout(tp=w.tensor_parallel), served=not q.in_process, **overrides)
    ds = DisaggSetup(pre, dec, q.prefill_gpus // ptp, q.replicas,
                     kv_link(q.kv_link, phw, dhw, q.prefill_gpus + w.tensor_parallel * q.replicas))
    lengths = parse_lengths(q.lengths, w.seq, max(1, w.gen_tokens), q.lengths_given)
    r = estimate_disaggregated(ds, lengths, rate=q.rate, users=q.concurrency, requests=q.requests, seed=q.seed,
                               slo_ttft=q.p99_ttft_s, slo_tpot=q.p99_tpot_s)
    f, a, ld = r["figures"], r["assumptions"], r["load"]
    dis = a["disaggregated"]
    pct = {k: dict(f[k]) for k in ("ttft_s", "server_ttft_s", "tpot_s") if isinstance(f.get(k), dict)}
    tpot50 = pct.get("tpot_s", {}).get("p50")
    pools = [{"role": role, **dis[f"{role}_pool"]} for role in ("prefill", "decode")]
    serving = ServingFigures(users=q.concurrency, input_len=ld["mean_input_len"], output_len=ld["mean_output_len"],
                             ttft_s=pct.get("ttft_s", {}).get("p50"), tpot_s=tpot50,
                             per_user_tokens_per_s=(1.0 / tpot50) if tpot50 else None,
                             aggregate_tokens_per_s=f.get("output_tokens_per_s"),
                             kv_capacity_tokens=dis["decode_pool"]["kv_tokens_per_instance"], percentiles=pct,
                             server_ttft_s=pct.get("server_ttft_s", {}).get("p50"), frontend_s=f.get("frontend_s"),
                             itl_s=f.get("itl_s"), kv_transfer_s=f["kv_transfer_s"]["mean"], pools=pools)
    fullest = max(pools, key=lambda p: p["weights_bytes_per_gpu"] + p["kv_bytes_per_gpu"])
    mem_parts = {f"{p['role']} pool: {part}": p[f"{part}_bytes_per_gpu"] for p in pools for part in ("weights", "kv")}
    capacity = max(c.memory_gib or 0 for c in (card, prefill_card)) * GiB or None
    assumptions = {k: a[k] for k in ("engine", "engine_label", "weights", "kv_dtype", "kv_block_tokens",
                                     "max_batched_tokens", "chunk_tokens", "max_seqs", "cuda_graphs", "layout",
                                     "frontend_s_per_request") if k in a}
    assumptions.update(load=ld, requests=q.requests, seed=q.seed, disaggregated=dis)
    notes = (f"disaggregated: TTFT = front-end + prefill queue and prefill + KV transfer ({dis['kv_link']}, "
             f"{f['kv_transfer_s']['mean'] * 1e3:,.1f} ms mean for "
             f"{dis['kv_bytes_per_request_mean'] / 2**20:,.0f} MiB) "
             "+ the first decode; decode batches run no prefill",)
    return Answer(question=Question.SERVING, workload=w.to_dict(), card=card.name, gpus=ds.gpus,
                  hardware_source="datasheet", fits=True,
                  time=TimeParts(step_s=tpot50, job_s=f.get("duration_s"), bound=None,
                                 parts={f"TTFT: {k}": v for k, v in f["ttft_parts_s"].items()}),
                  memory=MemoryParts(per_gpu_bytes=fullest["weights_bytes_per_gpu"] + fullest["kv_bytes_per_gpu"],
                                     capacity_bytes=capacity, parts=mem_parts),
                  rate=Rate(value=f.get("requests_per_s"), unit="requests/s",
                            per_gpu=(f["requests_per_s"] / ds.gpus) if f.get("requests_per_s") else None),
                  serving=serving, profile=f"serving engine {a['engine']} ({a.get('engine_label', '')})",
                  assumptions=assumptions, notes=notes, detail={"serving_simulation": r},
                  parts=ServingParts(w.model, card, r, q.p99_ttft_s is not None or q.p99_tpot_s is not None))


def _speculation(q: ServingLoad) -> Any:
    """The request's speculative decoding (None without --speculative)."""
    if q.speculative is None:
        return None
    from gpuadvisor.estimate.serve.speculative import speculation
    from gpuadvisor.workload import make_workload

    draft = make_workload(q.draft_model).model if q.draft_model else None
    return speculation(q.speculative, draft_tokens=q.spec_tokens, accept_length=q.spec_accept, draft_model=draft,
                       topk=q.spec_topk, verify_tokens=q.spec_verify)


def serving_weights(workload: Any, q: ServingLoad) -> str:
    """The weight format the engine serves: the request's, else the workload's quantization, else its dtype."""
    if q.weights:
        return str(q.weights).lower()
    if workload.quant and workload.quant != "none":
        return str(workload.quant).lower()
    dtype = str(workload.dtype).lower()
    if dtype in ("fp32", "int4"):
        raise UserError(f"--dtype {dtype}: serving engines run bf16, fp16, fp8 or quantized weights (see --weights)")
    return dtype


# --- TRAINING: a parallel layout ----------------------------------------------------------------------------


@dataclass
class TrainingParts:
    workload: Any
    card: Any
    framework: Any
    chosen: Any  # parallel.ParallelEstimate
    budget: Any
    how: str
    ranked: list[Any]
    notes: tuple[str, ...]


def _training(request: EstimateRequest, q: TrainingLayout, hardware: Resolved) -> Answer:
    from gpuadvisor.estimate.parallel import Cluster, framework
    from gpuadvisor.estimate.parallel.budget import train_time
    from gpuadvisor.estimate.parallel.search import Fixed, search
    from gpuadvisor.layout import Checkpointing, Layout, Sharding, check_layout

    w, card, gpu_figures = request.workload, hardware.card, hardware.figures
    tp = w.tensor_parallel
    fw = framework(_training_framework(q))
    cluster = Cluster(gpus_per_node=q.gpus_per_node or 0, net_gbs_per_gpu=q.net_gbs_per_gpu or 0.0)
    w = w.with_(tensor_parallel=1)
    notes: list[str] = []
    if w.batch == 1 and w.num_gpus > 1:
        w = w.with_(batch=q.default_global_batch(w.num_gpus, tp))
        notes.append(f"global batch not given: taken as {w.batch} sequences (--batch sets it)")
    recompute = q.recompute or ("full" if w.checkpointing else None)
    sharding = Sharding(w.sharding) if w.sharding != "none" else None
    if q.search:
        fixed = Fixed(tp=tp if tp > 1 else None, pp=q.pipeline_parallel if q.pipeline_parallel > 1 else None,
                      cp=q.context_parallel if q.context_parallel > 1 else None,
                      ep=q.expert_parallel if q.expert_parallel > 1 else None,
                      vp=q.virtual_stages if q.virtual_stages > 1 else None, micro_batch=q.micro_batch,
                      sharding=sharding, checkpointing=Checkpointing(recompute) if recompute else None)
        how = "the fastest layout that fits (--layout auto)"
    else:
        fixed = Fixed(tp=tp, pp=q.pipeline_parallel, cp=q.context_parallel, ep=q.expert_parallel,
                      vp=q.virtual_stages, micro_batch=q.micro_batch or 1,
                      sharding=sharding or Sharding(fw.default_sharding if w.num_gpus > 1 else "none"),
                      checkpointing=Checkpointing(recompute) if recompute else None)
        check_layout(w.model, w.num_gpus, w.batch, w.seq, Layout(
            tp=tp, pp=q.pipeline_parallel, cp=q.context_parallel, ep=q.expert_parallel, vp=q.virtual_stages,
            micro_batch=q.micro_batch or 1))
        how = "the layout given" + ("" if recompute else "; recomputation: the fastest that fits")
    if w.is_adapter and q.search:  # PEFT runs data parallel or FSDP only (support matrix), whole-layer checkpoints
        fixed = replace(fixed, tp=1, pp=1, cp=1, ep=1, vp=1)
    ranked = search(w, gpu_figures, fw, cluster=cluster, fixed=fixed)
    if w.is_adapter and q.search:
        ranked = [e for e in ranked if e.layout.checkpointing != Checkpointing.SELECTIVE]
    if not ranked:
        raise UserError(f"no layout of {w.model.name} on {w.num_gpus} GPUs divides its layers, heads and the "
                        f"global batch of {w.batch} with the degrees given")
    chosen = ranked[0] if ranked[0].fits else min(ranked, key=lambda e: e.memory.total)
    budget = train_time(chosen.step_s, w.batch, w.seq, tokens=w.train_tokens, samples=q.samples_seen,
                        overhead=q.restart_overhead)
    notes.extend(chosen.notes)
    lay = chosen.layout
    parts = TrainingParts(w, card, fw, chosen, budget, how, ranked, tuple(notes))
    return Answer(question=Question.TRAINING, workload=w.to_dict(), card=card.name, gpus=w.num_gpus,
                  hardware_source=str(gpu_figures.source), fits=bool(chosen.fits),
                  time=TimeParts(step_s=chosen.step_s, job_s=budget.seconds if budget.steps > 1 else None,
                                 bound=None, parts={k: float(v) for k, v in chosen.parts}),
                  memory=MemoryParts(per_gpu_bytes=float(chosen.memory.total),
                                     capacity_bytes=card.memory_gib * GiB if card.memory_gib else None,
                                     parts={k: float(v) for k, v in chosen.memory.items if v}),
                  rate=Rate(value=chosen.tokens_per_s, unit="tokens/s", per_gpu=chosen.tokens_per_s_per_gpu),
                  serving=None, profile=f"framework {fw.name}",
                  assumptions={"selected_by": how, "layout": lay.label(), "global_batch": w.batch,
                               "micro_batch": lay.micro_batch, "mfu": chosen.mfu},
                  notes=tuple(notes),
                  detail={"framework": fw.name, "selected_by": how, "estimate": chosen.to_dict(),
                          "time_to_train": budget.to_dict(),
                          "alternatives": [e.to_dict() for e in ranked[1:6] if e.fits]},
                  parts=parts)


__all__ = [
    "Resolved",
    "ServingParts",
    "StepParts",
    "TrainingParts",
    "efficiency_for",
    "estimate",
    "resolve_hardware",
    "serving_weights",
    "way_forward",
]
