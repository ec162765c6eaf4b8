"""The text answer of `gpuadvisor estimate`: the memory table, the offload plan, the time in the
mode's own terms and the serving lines. The estimator computes the Answer; this module only prints it."""

from __future__ import annotations

from typing import Any

from gpuadvisor.answer import Answer
from gpuadvisor.cli.estimate_cmd import GiB, describe_workload, fmt_time
from gpuadvisor.estimator import ServingParts, StepParts, TrainingParts


def print_answer(answer: Answer) -> None:
    """Print any answer of the estimator in the terms of its question."""
    from gpuadvisor.cli.common import console

    con = console()
    p = answer.parts
    if isinstance(p, ServingParts):
        print_simulation(con, p)
    elif isinstance(p, TrainingParts):
        from gpuadvisor.cli.training_cmd import print_training

        print_training(p, answer.hardware_source)
    else:
        assert isinstance(p, StepParts)
        print_memory(con, p)
        if p.plan:
            print_offload(con, p)
        if p.lay is not None and not p.lay.fits:
            print_way_forward(con, p)
            return
        print_time(con, p)


def print_memory(con: Any, a: StepParts) -> None:
    """The memory table per GPU, whether it fits and the notes on memory and on the card."""
    from rich.table import Table

    from gpuadvisor.advisor.options import hw_notes

    w, card, gpu_figures, mem, lay = a.workload, a.card, a.gpu_figures, a.mem, a.lay
    con.print(f"[bold]{describe_workload(w, users=w.batch if a.decoder_serving else None)}[/bold]")
    parts = list(lay.memory_parts) if lay is not None else [(k, v / GiB) for k, v in mem.items if v]
    need = sum(v for _, v in parts)
    phase = "serving: weights, one prefill's activations, every user's KV cache" if a.decoder_serving else mem.phase
    t = Table(title=f"memory per GPU (peak: {phase})", show_header=True)
    t.add_column("item")
    t.add_column("GiB", justify="right")
    for k, v in parts:
        t.add_row(k, f"{v:,.2f}")
    t.add_row("[bold]total[/bold]", f"[bold]{need:,.2f}[/bold]")
    con.print(t)
    verdict = "fits" if a.fits and (a.plan is None or a.plan.fits_entirely) else "does NOT fit"
    room = (f"{lay.usable_gib:.1f} GiB usable of {gpu_figures.memory_gib:g} (a serving engine keeps "
            f"{1 - lay.usable_gib / gpu_figures.memory_gib:.0%} free)" if a.decoder_serving and lay and lay.usable_gib
            and gpu_figures.memory_gib else f"{gpu_figures.memory_gib or 0:g} GiB on the card")
    con.print(f"{card.name}: {verdict} ({need:.1f} GiB needed per GPU, {room})"
              + ("" if a.fits or lay is None else f": {lay.why_not}")
              + ("; --offload keeps on the GPU the layers that fit (below)" if verdict != "fits" and a.plan else ""))
    if gpu_figures.memory_gib is not None and card.memory_gib is not None and gpu_figures.memory_gib < card.memory_gib:
        con.print(f"  note: {card.name} shares its {card.memory_gib:g} GiB with the OS and CPU: "
                  f"{gpu_figures.memory_gib:g} GiB taken as free for the GPU")
    for n in mem.notes:
        con.print(f"  note: {n}")
    for n in hw_notes(card, w):  # no tensor cores (FP32 rate), derived tensor figures, no bf16
        con.print(f"  note: {n}")


def print_offload(con: Any, a: StepParts) -> None:
    plan = a.plan
    con.print(f"[bold]CPU offload on {a.card.name}[/bold]: {plan.gpu_layers} of {plan.total_layers} layers on "
              f"the GPU ({plan.gpu_bytes / GiB:.1f} GiB), {plan.host_bytes / GiB:.1f} GiB in host memory; decode "
              f"{plan.decode_tokens_per_s:,.1f} tokens/s ({fmt_time(plan.decode_step_s)} per step)")
    for n in plan.notes:
        con.print(f"  note: {n}")
    if not plan.fits_entirely:
        con.print("  note: the times below assume the whole model on the GPU; with offload, decode runs at the "
                  "rate above")


def print_time(con: Any, a: StepParts) -> None:
    """The time estimate in the mode's own terms, then the notes that lower confidence in it."""
    w, comp, serving = a.workload, a.comp, a.serving
    src = "measured (probe)" if a.gpu_figures.source == "measured" else "datasheet"
    eng = f", engine {comp.engine}" if w.mode in ("inference", "scoring") else ", eager PyTorch"
    con.print(f"[bold]time on {w.num_gpus} x {a.card.name}[/bold] (estimate; {src} figures{eng}, "
              f"large matmuls at {comp.mfu:.0%} of peak{a.gpu_figures.matmul_reach_note()}, bandwidth efficiency "
              f"{comp.bandwidth_efficiency:.0%}{a.gpu_figures.bandwidth_reach_note()})")
    if comp.time_s is None:
        con.print("  no throughput figures for this card")
    elif w.model.is_traced:
        print_traced(con, w, comp)
    elif w.mode == "scoring":
        con.print(f"  forward: {fmt_time(comp.prefill_time_s)} for {w.batch} x {w.seq} tokens, "
                  f"{comp.prefill_tokens_per_s:,.0f} tokens/s ({comp.prefill_bound} bound)")
        print_op_graph(con, a.graph, "forward")
    elif comp.unit and w.mode == "inference":  # a ViT or an encoder: one forward per batch
        con.print(f"  forward: {fmt_time(comp.prefill_time_s)} for a batch of {w.batch} {comp.unit} "
                  f"({w.seq} tokens each), {comp.samples_per_s:,.0f} {comp.unit}/s ({comp.prefill_bound} bound)")
    elif w.mode == "inference":
        print_inference_time(con, a)
    else:
        rate = (f"{comp.samples_per_s:,.0f} {comp.unit}/s" if comp.unit else f"{comp.tokens_per_s:,.0f} tokens/s")
        if comp.unit and comp.tokens_per_s:  # a text model's sequences, and their tokens
            rate += f", {comp.tokens_per_s:,.0f} tokens/s"
        con.print(f"  step: {fmt_time(comp.step_time_s)} ({rate}, {comp.bound} bound)")
        print_op_graph(con, a.graph, "step")
        if w.train_tokens:
            con.print(f"  {w.train_tokens:.3g} tokens: {fmt_time(comp.time_s)}")
        if w.num_gpus > 1:
            con.print(f"  scaling efficiency {comp.scaling_efficiency:.0%} "
                      f"(communication {fmt_time(comp.comm_time_s)}/step)")
    if comp.achieved_mfu:
        con.print(f"  achieved MFU {comp.achieved_mfu:.0%}; confidence: {comp.confidence}")
    # low-confidence reasons, and what the engine assumes that the user can change (decode_notes: "<engine>: ...")
    reasons = {*comp.low_confidence_reasons, *(serving.low_confidence_reasons if serving else ())}
    low = [n for n in (*comp.notes, *(serving.notes if serving else ()))
           if n in reasons or n.startswith(f"{comp.engine}:")]
    for n in dict.fromkeys(low):  # the serving and compute notes can repeat one another
        con.print(f"  note: {n}")


def print_inference_time(con: Any, a: StepParts) -> None:
    w, comp, serving = a.workload, a.comp, a.serving
    if serving:
        con.print(f"  offline, the {w.batch} prompts at once:")
    con.print(f"  prefill: {fmt_time(comp.prefill_time_s)} for {w.batch} x {w.seq} tokens, "
              f"{comp.prefill_tokens_per_s:,.0f} tokens/s ({comp.prefill_bound} bound)")
    print_op_graph(con, a.graph, "prefill")
    if comp.decode_tokens_per_s:
        con.print(f"  decode: {comp.decode_tokens_per_s:,.0f} tokens/s over the batch, "
                  f"{fmt_time(comp.decode_step_s)} per step ({comp.decode_bound} bound)")
    con.print(f"  total for prompt + {w.gen_tokens} tokens: {fmt_time(comp.time_s)}")
    if serving and a.lay is not None:
        print_serving(con, serving, a.lay)


def print_op_graph(con: Any, graph: dict[str, Any] | None, what: str) -> None:
    """One line under the time: the share of the GPU time of the `what` each op class takes (op graph)."""
    if graph and graph["share_by_class"]:
        shares = ", ".join(f"{k} {v:.0%}" for k, v in graph["share_by_class"].items() if v >= 0.005)
        con.print(f"  where the {what}'s GPU time goes: {shares}")


def print_traced(con: Any, workload: Any, comp: Any) -> None:
    """A traced model's step: one forward (inference) or one training step, its rate and where the GPU time goes."""
    what = "training step" if workload.is_training else "forward pass"
    con.print(f"  {what}: {fmt_time(comp.step_time_s)} for a batch of {workload.batch}, "
              f"{comp.samples_per_s:,.0f} {comp.unit}/s"
              + (f" ({comp.tokens_per_s:,.0f} tokens/s)" if comp.tokens_per_s else "")
              + f", {comp.bound} bound")
    if comp.breakdown:
        parts = sorted(comp.breakdown.items(), key=lambda kv: -kv[1])
        con.print("  GPU time by op class: " + ", ".join(f"{k} {fmt_time(v)}" for k, v in parts if v >= 1e-5)
                  + f"; host dispatch {fmt_time(comp.host_time_s or 0.0)}")
    if workload.train_samples:
        con.print(f"  {workload.train_samples:.3g} samples: {fmt_time(comp.time_s)}")


def print_way_forward(con: Any, a: StepParts) -> None:
    """No run time for a layout that does not fit; the cheapest change that makes it fit instead."""
    con.print("  no run time: this layout does not fit")
    fixes = a.way_forward
    if not fixes:
        from gpuadvisor.advisor.remedy import MORE_GPUS, MORE_GPUS_TRAINING

        extra = {"training": ", 8-bit AdamW", "lora": ", QLoRA"}.get(str(a.workload.mode), "")
        tried = (f"checkpointing, a smaller micro-batch{extra}" if a.workload.is_training
                 else "a quantized format, fewer users")
        most = MORE_GPUS_TRAINING[-1] if a.workload.is_training else MORE_GPUS[-1]
        con.print(f"  way forward: none of {tried} or up to {most} GPUs makes it fit; a card with more memory")
    for r in fixes:
        con.print(f"  way forward: {r.line}", soft_wrap=True)


def print_serving(con: Any, s: Any, lay: Any) -> None:
    """The serving lines of `estimate`: the layout's figures (as `recommend` shows them) and the
    engine's assumptions."""
    a = s.assumptions or {}
    eng = a.get("engine", {})
    con.print(f"[bold]serving ({s.engine}: {eng.get('label', s.engine)})[/bold], {lay.layout}")
    if s.tpot_s is None:
        con.print("  no throughput figures for this card")
        return
    step = a.get("decode_step", {})
    users = s.concurrency * lay.replicas if lay.replicas == 1 else f"{s.concurrency} per replica x {lay.replicas}"
    if not lay.fits:
        con.print(f"  {users} users do not fit ({lay.why_not}): no speed figures for this layout")
    else:
        con.print(f"  {users} concurrent x ({s.prompt_tokens} prompt + {s.output_tokens} output tokens): "
                  f"TTFT {fmt_time(lay.ttft)}, TPOT {fmt_time(lay.tpot)} ({s.bound} bound)")
        con.print(f"  {lay.per_user:,.1f} tok/s per user, {lay.aggregate:,.0f} tok/s aggregate "
                  "(continuous batching, every prompt prefilled in full, tensor-parallel all-reduces included)")
    con.print(f"  KV cache {s.kv_bytes_per_token / 1024:,.0f} KiB/token: {s.kv_capacity_tokens:,} tokens fit, "
              f"{lay.max_users:,} sequences of {s.prompt_tokens + s.output_tokens} tokens "
              f"(16-token blocks){'' if lay.fits else ' -- fewer than asked'}")
    plan = a.get("attention_plan_s", 0.0)
    con.print(f"  engine assumptions ({a.get('host_figures', 'assumed')} host figures): host "
              f"{a.get('host_fixed_s', eng.get('host_fixed_s', 0)) * 1e3:.1f} ms/step + "
              + (f"{plan * 1e3:.0f} ms attention plan/step + " if plan else "")
              + f"{a.get('host_layer_s', eng.get('host_per_layer_s', 0)) * 1e3:.2f} ms/layer, "
              f"{round(step.get('kernels_per_layer') or eng.get('kernels_per_layer', 0), 1):g} kernels/layer, "
              f"KV read x{step.get('kv_multiplier', 1):.0f}; step = memory {fmt_time(step.get('memory_s'))}, "
              f"kernel floors {fmt_time(step.get('kernel_floor_s'))}, host {fmt_time(step.get('host_s'))}")


def print_simulation(con: Any, p: ServingParts) -> None:
    """A simulated request stream: throughput, TTFT and TPOT percentiles, the scheduler and its assumptions."""
    r, m, card = p.result, p.model, p.card
    f, a, ld = r["figures"], r["assumptions"], r["load"]
    draws = int(f.get("arrival_draws") or 1)
    load = (f"{ld['rate']:g} req/s (Poisson; each figure the median of {draws} draws)" if ld["rate"] else
            f"{ld['users']} clients that start together (--concurrency)" if ld["users"]
            else "every request queued at once")
    con.print(f"[bold]{m.name} on {a['gpus']} x {card.name} ({a['layout']}), {a['engine_label']}[/bold] (simulated "
              "estimate)")
    client = "served over HTTP, as a client measures it" if a.get("served", True) else \
        "in-process (no HTTP front-end: --in-process)"
    con.print(f"  load: {load}, {f['requests']} requests, lengths {ld['lengths']}; {client}")
    con.print(f"  throughput: {f['requests_per_s']:,.2f} req/s, {f['output_tokens_per_s']:,.0f} output tok/s "
              f"({f['total_tokens_per_s']:,.0f} tok/s with prompts)")
    for key, label in (("ttft_s", "TTFT (client: request sent to first token received)"),
                       ("server_ttft_s", "  of which the scheduler"), ("tpot_s", "time per output token")):
        q = f.get(key)
        if q and q["p50"] is not None:  # the mean beside the percentiles, as vllm bench serve reports them
            mean = f"mean {q['mean'] * 1e3:,.1f} ms, " if q.get("mean") is not None else ""
            con.print(f"  {label}: {mean}P50 {q['p50'] * 1e3:,.1f} ms, P90 {q['p90'] * 1e3:,.1f} ms, "
                      f"P99 {q['p99'] * 1e3:,.1f} ms")
    spread = f.get("draw_range") or {}
    if spread:
        lo, hi = spread.get("ttft_s.p50", (0.0, 0.0))
        tpot = ""
        if (f.get("tpot_s") or {}).get("p50") is not None:  # no second token (--output-len 1): no TPOT
            tlo, thi = spread.get("tpot_s.p50", (0.0, 0.0))
            tpot = f", time per output token P50 {tlo * 1e3:,.1f}-{thi * 1e3:,.1f} ms"
        con.print(f"  over the {f['arrival_draws']} draws of the arrivals: TTFT P50 {lo * 1e3:,.1f}-{hi * 1e3:,.1f} "
                  f"ms{tpot}")
    if f.get("frontend_s"):
        median = f" (median gap {f['itl_p50_s'] * 1e3:,.1f} ms)" if f.get("itl_p50_s") else ""
        itl = (f"; mean inter-token latency {f['itl_s'] * 1e3:,.1f} ms{median}" if f.get("itl_s") is not None
               else "; one token a request: no inter-token latency")
        con.print(f"  front-end per request (HTTP, tokenization, first chunk streamed): {f['frontend_s'] * 1e3:.0f} ms "
                  f"({a['engine']} profile){itl}")
        if a.get("frontend_serial_s_per_request"):
            after = ("the rest of each waits behind every request queued meanwhile" if a.get("frontend_requeues")
                     else "each goes on at once")
            con.print(f"  of which {a['frontend_serial_s_per_request'] * 1e3:.0f} ms on the server's one event loop, a "
                      f"request at a time: requests sent together queue for it ({after})")
    if p.slo:
        con.print(f"  goodput under the SLOs: {f['goodput_requests_per_s']:,.2f} req/s "
                  f"({f['slo_attainment']:.0%} of requests meet them)")
    con.print(f"  scheduler: {f['iterations']:,} iterations, at most {f['max_running']} sequences at once, "
              f"{f['preemptions']} preemptions")
    if ld.get("caveat"):
        con.print(f"  caveat: {ld['caveat']}")
    host = (f"host {a['host_s_per_iteration'] * 1e3:.1f} ms/iteration" if a["host_s_per_iteration"] is not None else
            f"host (eager dispatch) {a['host_s_per_decode_step'] * 1e3:.1f} ms a decode step, "
            f"{a['host_s_per_prefill'] * 1e3:.1f} ms a prefill")
    if a.get("host_s_per_sequence"):
        host += f" + {a['host_s_per_sequence'] * 1e6:.0f} us per running sequence " + (
            "(beside the GPU's step: the longer of the two sets it)" if a.get("host_sequence_overlap")
            else "(not overlapped with the GPU)")
    if a.get("stream_s_per_sequence"):
        host += (f"; the front-end streams each running sequence's token in {a['stream_s_per_sequence'] * 1e6:.0f} us "
                 "(in its own process: it paces the step where slower)")
    con.print(f"  assumptions: weights {a['weights']}, KV cache {a['kv_dtype']} in {a['kv_block_tokens']}-token "
              f"blocks ({a['kv_blocks_per_group']:,} blocks), token budget {a['max_batched_tokens']} per iteration "
              f"(chunked prefill: {'chunks of up to ' + str(a['chunk_tokens']) if a['chunk_tokens'] else 'off'}), "
              f"max {a['max_seqs']} sequences, {host}, "
              f"CUDA graphs {'on' if a['cuda_graphs'] else 'off'}")
    if a.get("gemm_tflops"):
        con.print(f"  GEMMs at {a['gemm_tflops']:,.0f} TFLOP/s ({a['gemm_rate_basis']})")
    dis = a.get("disaggregated")
    if dis:
        for role in ("prefill", "decode"):
            pool = dis[f"{role}_pool"]
            con.print(f"  {role} pool: {pool['instances']} x TP{pool['tp']} on {pool['card']} ({pool['gpus']} GPUs), "
                      f"{pool['kv_tokens_per_instance']:,} KV tokens per instance")
        parts = ", ".join(f"{k} {v * 1e3:,.1f} ms" for k, v in f["ttft_parts_s"].items())
        con.print(f"  KV transfer over {dis['kv_link']}: {f['kv_transfer_s']['mean'] * 1e3:,.1f} ms mean "
                  f"({dis['kv_bytes_per_request_mean'] / 2**20:,.0f} MiB a request); mean TTFT = {parts}")
    sp = a.get("speculation")
    if sp:
        past = sp["stops_paying_at_batch"]
        con.print(f"  speculative decoding: {sp['method']}"
                  + (f" ({sp['draft_model']})" if sp.get("draft_model") else "")
                  + f", {sp['draft_tokens']} draft tokens"
                  + (f" in a tree of {sp['topk']} candidates a step, {sp['verify_tokens']} verified"
                     if sp.get("topk", 1) > 1 else "")
                  + f", {sp['accept_length']:g} tokens kept per verify step "
                  f"(per-position acceptance {sp['accept_rate']:.0%}; {sp['source']}); "
                  + ("slower than plain decoding even at batch 1" if past == 1 else
                     f"stops paying at {past} sequences decoding at once" if past else
                     f"pays up to the engine's {a['max_seqs']} sequences")
                  + f" (context {sp['at_context_tokens']:,} tokens)")
