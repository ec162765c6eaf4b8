"""A serving estimate from names: model, card, engine, formats, layout, load and lengths -> simulated figures.

`serve_setup` builds the StepCost and the scheduler's configuration (KV blocks from the memory left after the
weights); `estimate_load` simulates a request stream (rate, users or an offline batch) and summarises it;
`llama_bench` runs llama-bench's pp/tg tests on the same cost (one sequence, micro-batches of `ubatch` tokens).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from gpuadvisor.core import limits
from gpuadvisor.core.errors import UserError
from gpuadvisor.estimate import calibration as cal
from gpuadvisor.estimate.hardware import Efficiency, HardwareFigures
from gpuadvisor.estimate.serve.lengths import Lengths, parse_lengths
from gpuadvisor.estimate.serve.profiles import ServeEngine, _raw_physics, serve_engine
from gpuadvisor.estimate.serve.sim import SimConfig, SimResult, combine_draws, draw_count, simulate
from gpuadvisor.estimate.serve.speculative import Speculation, SpeculativeStepCost
from gpuadvisor.estimate.serve.stepcost import KV_BYTES, WEIGHT_BITS, RooflineStepCost
from gpuadvisor.layout import Layout, check_serving_layout

DEFAULT_REQUESTS = 1000


@dataclass
class ServeSetup:
    model: Any
    gpu_figures: HardwareFigures
    engine: ServeEngine
    weights: str
    kv_dtype: str
    layout: Layout
    cost: RooflineStepCost  # the target model's
    cfg: SimConfig
    speculative: SpeculativeStepCost | None = None  # what the scheduler runs when the engine speculates
    served: bool = True  # through the engine's HTTP server (serve_setup), else in-process

    @property
    def step_cost(self) -> RooflineStepCost | SpeculativeStepCost:
        """The cost of one scheduler iteration: the speculating engine's where it speculates."""
        return self.speculative or self.cost

    def assumptions(self) -> dict[str, Any]:
        e = self.engine
        host: dict[str, Any] = ({"host_s_per_iteration": None, "host_model": "eager (estimate/engines.py)",
                                 "host_s_per_decode_step": self.cost.decode_host,
                                 "host_s_per_prefill": self.cost.prefill_host}
                                if not e.decode_graphs else {"host_s_per_iteration": e.host_s_per_iter})
        host["host_s_per_sequence"] = e.host_s_per_seq  # per running sequence per iteration
        host["host_sequence_overlap"] = e.host_seq_overlap  # beside the GPU's step (the longer sets it), else after
        host["stream_s_per_sequence"] = e.stream_s_per_seq  # the front-end's, per running sequence per iteration
        return {"engine": e.spec, "engine_label": e.label, "served": self.served,
                "frontend_s_per_request": e.frontend_s_per_request,
                # the part a burst queues for on the front-end's one event loop, and whether it goes on behind the burst
                # (the chat template's: a model whose chats render as harmony skips it, ModelSpec.chat_format)
                "frontend_serial_s_per_request": self.cfg.ingest_s,
                "frontend_requeues": e.frontend_requeues,
                "frontend_stream_s_per_token": self.cfg.ingest_stream_s_per_token,
                # the scheduler's limits (data-parallel attention: every rank's, summed)
                "tp_handoff_s_per_iter": e.tp_handoff_s_per_iter, "max_batched_tokens": self.cfg.max_batched_tokens,
                "chunk_tokens": e.max_batched_tokens if e.chunked_prefill else None, "max_seqs": self.cfg.max_seqs,
                "prefill_first": e.prefill_first, "cuda_graphs": e.decode_graphs,
                # the large-GEMM rate the steps are priced at, and the figures it rests on
                "gemm_tflops": self.cost.rate / 1e12, "gemm_rate_basis": self.cost.rate_basis,
                # rows of attention tile each decoding sequence takes per query head in a step with prompt tokens
                # (0: a kernel that packs them; ServeEngine.decode_query_rows)
                "mixed_step_decode_query_rows": self.cost.mixed_decode_rows,
                "attention_sources": list(e.attention_sources) if self.cost.mixed_decode_rows else [],
                **host, "weights": self.weights, "kv_dtype": self.kv_dtype,
                "kv_block_tokens": int(cal.KV_BLOCK_TOKENS), "kv_blocks_per_group": self.cfg.kv_blocks,
                "kv_mem_fraction": e.kv_mem_fraction, "layout": self.layout.describe(), "gpus": self.layout.gpus,
                "card": self.gpu_figures.name, "engine_sources": list(e.sources),
                "client_sources": list(e.client_sources),
                "calibrated_on": e.calibrated_on, **self._speculation()}

    def _speculation(self) -> dict[str, Any]:
        """The speculation and the batch past which it stops paying (at the prompt + half the output)."""
        sp = self.speculative
        if sp is None:
            return {}
        return {"speculation": sp.spec.to_dict()}


def card_figures(card: Any) -> HardwareFigures:
    """HardwareFigures of a catalog card, with its FP4 tensor peak where it has one."""
    gpu_figures = HardwareFigures.from_card(card)
    fp4 = card.tensor_tflops("fp4")
    return replace(gpu_figures, tflops={**gpu_figures.tflops, "fp4": float(fp4)}) if fp4 else gpu_figures


def default_kv_dtype(engine: ServeEngine, weights: str) -> str:
    """FP8 where a ModelOpt FP8/FP4 checkpoint quantizes the KV cache with the weights and the engine reads it;
    bf16 for MXFP4 (gpt-oss's checkpoints carry no KV scales: vLLM's `--kv-cache-dtype auto` keeps bf16)."""
    if weights == "mxfp4":
        return "bf16"
    return "fp8" if weights in ("fp8", "fp4", "nvfp4") and engine.fp8_kv else (
        "fp16" if weights not in ("bf16",) else "bf16")


def serve_setup(model: Any, gpu_figures: HardwareFigures, engine: str | ServeEngine, *, weights: str = "bf16",
                kv_dtype: str | None = None, layout: Layout | None = None, efficiency: Efficiency | None = None,
                phys: dict[str, float] | None = None, speculation: Speculation | None = None,
                served: bool = True, **knobs: Any) -> ServeSetup:
    """The deployment the simulation runs. `served`: clients measure it through the engine's HTTP server (its
    front-end takes ServeEngine.frontend_s_per_request before a request reaches the scheduler and streams every
    token: ServeEngine.stream_s_per_seq); False: an offline benchmark that drives the engine in-process
    (trtllm-bench, vLLM's LLM class), without either."""
    eng = (engine if isinstance(engine, ServeEngine) else serve_engine(engine, **knobs)).on_card(gpu_figures.name,
                                                                                                 gpu_figures.memory_gib)
    if not served:
        eng = replace(eng, stream_s_per_seq=0.0, frontend_s_per_request=0.0, frontend_serial_s_per_request=0.0,
                      frontend_stream_s_per_token=0.0)
    if speculation is not None:
        eng = eng.speculating()
    if weights not in WEIGHT_BITS:
        raise UserError(f"unknown weight format {weights!r} (one of {', '.join(WEIGHT_BITS)})")
    kv = kv_dtype or default_kv_dtype(eng, weights)
    if kv not in KV_BYTES:
        raise UserError(f"unknown KV cache dtype {kv!r} (one of {', '.join(KV_BYTES)})")
    if kv == "fp8" and not eng.fp8_kv:
        raise UserError(f"{eng.name}: no FP8 KV cache in this engine's profile")
    lay = check_serving_layout(model, layout or Layout())
    if lay.dp_attention and not eng.dp_attention:
        raise UserError(f"{eng.name}: no data-parallel attention in this engine (SGLang, TensorRT-LLM and vLLM "
                        "have it)")
    cost = RooflineStepCost(model, gpu_figures, eng, weights=weights, kv_dtype=kv, tp=lay.tp, pp=lay.pp,
                            efficiency=efficiency, phys=phys or _raw_physics(), dp_attention=lay.dp_attention)
    tokens = cost.kv_tokens_capacity()
    spec_cost = None
    if speculation is not None:
        draft = (RooflineStepCost(speculation.draft_model, gpu_figures, eng, weights=weights, kv_dtype=kv, tp=lay.tp,
                                  efficiency=efficiency, phys=phys or _raw_physics())
                 if speculation.draft_model is not None else None)
        spec_cost = SpeculativeStepCost(cost, speculation, draft)
        tokens = spec_cost.kv_tokens_capacity(tokens)
    if tokens <= 0:
        raise UserError(f"{model.name} as {weights} does not fit on {lay.tp * lay.pp} x {gpu_figures.name} with "
                        f"{eng.name} (weights {cost.weight_bytes_per_gpu() / 2**30:.1f} GiB per GPU)")
    # pipeline stages: pp micro-batches in flight, one scheduler each, with 1/pp of the replica's KV tokens; an
    # iteration's time is the micro-batch's period through the stages (stepcost.py, serve/__init__.py)
    # each data-parallel attention rank schedules its own requests, within its own limits or a share of the engine's
    ranks = lay.tp if lay.dp_attention and eng.dp_attention_limits_per_rank else 1
    cfg = SimConfig(max_batched_tokens=eng.max_batched_tokens * ranks, max_seqs=eng.max_seqs * ranks,
                    kv_blocks=tokens // lay.pp // int(cal.KV_BLOCK_TOKENS), chunked_prefill=eng.chunked_prefill,
                    prefill_first=eng.prefill_first,
                    reserve_output=eng.reserve_output, frontend_s=eng.frontend_s_per_request,
                    ingest_s=eng.frontend_serial_s_per_request if model.chat_format == "template" else 0.0,
                    ingest_requeues=eng.frontend_requeues, ingest_stream_s_per_token=eng.frontend_stream_s_per_token,
                    plans_ahead=eng.plans_ahead,
                    decode_tokens=speculation.accept_length if speculation else 1.0,
                    new_token_ratio=eng.new_token_ratio, min_new_token_ratio=eng.min_new_token_ratio,
                    new_token_ratio_decay_steps=eng.new_token_ratio_decay_steps, new_token_clip=eng.new_token_clip,
                    window=model.sliding_window if model.windowed else 0,
                    window_share=model.sliding_layers / model.num_layers if model.windowed else 0.0)
    return ServeSetup(model, gpu_figures, eng, weights, kv, lay, cost, cfg, spec_cost, served)


def estimate_load(s: ServeSetup, lengths: Lengths, *, rate: float | None = None, users: int | None = None,
                  requests: int = DEFAULT_REQUESTS, seed: int = 0, slo_ttft: float | None = None,
                  slo_tpot: float | None = None, draws: int | None = None) -> dict[str, Any]:
    """Simulate the load on the deployment (replicas x pp schedulers share it evenly) and summarise it. An open
    loop's figures are each the median of `draws` draws of its Poisson arrivals (seeds seed, seed + 1, ...; default
    ARRIVAL_DRAWS), its lengths the seed's; a closed loop or a burst is one run."""
    if rate is not None:
        limits.check("rate", rate)
    if users is not None:
        limits.check("users", users)
    limits.check("requests", requests)
    limits.check("seed", seed)
    groups = s.layout.dp() * s.layout.pp
    r = rate / groups if rate is not None else None
    u = max(1, round(users / groups)) if users is not None else None
    inp, out = lengths.draw(requests, seed)
    if int(s.cfg.blocks_for(int((inp + out).max()))) > s.cfg.kv_blocks:
        raise UserError(f"a request of {int((inp + out).max())} tokens does not fit in the KV cache "
                        f"({s.cfg.kv_blocks * int(cal.KV_BLOCK_TOKENS):,} tokens per scheduler)")
    if groups > 1:  # one scheduler's share of the stream, figures scaled back to the deployment
        k = max(1, requests // groups)
        inp, out = inp[:k], out[:k]
    # closed loop: the first round of requests arrives at once; the figures are of the rounds after it
    warm = min(u, len(inp) // 2) if u is not None else 0
    runs = [_run(s, inp, out, seed + k, r, u, groups, warm, slo_ttft, slo_tpot)
            for k in range(draw_count(rate, draws))]
    summ = combine_draws([summary for _, summary in runs])
    summ["requests"] = requests
    if s.speculative is not None and summ.get("itl_s") is not None:
        # a verify step streams its accepted tokens as one chunk: the gap a client sees between chunks is the step
        # (itl_p50_s is taken over the iterations' gaps: a chunk's already)
        summ["itl_s"] *= s.speculative.spec.accept_length
    load = {"rate": rate, "users": users, "offline": rate is None and users is None, "lengths": lengths.describe(),
            "mean_input_len": float(inp.mean()), "mean_output_len": float(out.mean())}
    caveats = [
        OVERSUBSCRIBED_CAVEAT if load["offline"] and requests > s.cfg.max_seqs * groups
        and not s.cfg.ingest_s else None,
        _knife_edge(s, inp, out, u, seed, warm, summ["ttft_s"]["mean"])
        if u is not None and u > 1 and lengths.kind == "fixed" else None,
        _past_capacity_of(rate, [res for res, _ in runs]) if rate is not None else None,
        BURST_TPOT_CAVEAT if load["offline"] and requests >= BURST_TPOT_REQUESTS
        and lengths.kind in ("sharegpt", "sharegpt-vllm", "file") else None,
        s.engine.frontend_unmeasured if s.served else None]
    if any(caveats):
        load["caveat"] = "; ".join(c for c in caveats if c)
    assumptions = s.assumptions()
    if s.speculative is not None:  # where it stops paying: decode batches at the mean prompt + half the output
        context = float(inp.mean() + out.mean() / 2)
        assumptions["speculation"]["stops_paying_at_batch"] = s.speculative.break_even_batch(context, s.engine.max_seqs)
        assumptions["speculation"]["at_context_tokens"] = round(context)
    return {"load": load, "figures": summ, "assumptions": assumptions, "estimate": True}


def _run(s: ServeSetup, inp: np.ndarray, out: np.ndarray, seed: int, rate: float | None, users: int | None,
         groups: int, warm: int, slo_ttft: float | None, slo_tpot: float | None) -> tuple[SimResult, dict[str, Any]]:
    """One seeded run of one scheduler's share of the requests, its figures (after `warm` requests) scaled back to
    the deployment's `groups` schedulers."""
    res = simulate(s.step_cost, s.cfg, inp, out, rate=rate, users=users, seed=seed)
    summ = res.summary(slo_ttft=slo_ttft, slo_tpot=slo_tpot, warmup=warm)
    for key in ("requests_per_s", "output_tokens_per_s", "total_tokens_per_s", "goodput_requests_per_s"):
        if summ[key] is not None:
            summ[key] *= groups
    return res, summ


#: closed-loop clients of fixed lengths: the extra front-end time a second run adds to see whether the mean TTFT
#: sits on a knife edge (docs/serving.md, "Closed loops of fixed lengths are on a knife edge"), and the spread between
#: the two runs' mean TTFTs past which the answer says so
KNIFE_EDGE_PROBE_S = 0.02
KNIFE_EDGE_SPREAD = 1.3


def _knife_edge(s: ServeSetup, inp: Any, out: Any, users: int, seed: int, warm: int,
                ttft: float | None) -> str | None:
    """A caveat when the same closed loop with KNIFE_EDGE_PROBE_S more front-end time gives a mean TTFT more than
    KNIFE_EDGE_SPREAD apart: whether the clients stay spread or queue together decides it, and no figure between
    the two is the answer."""
    probe = simulate(s.step_cost, replace(s.cfg, frontend_s=s.cfg.frontend_s + KNIFE_EDGE_PROBE_S), inp, out,
                     users=users, seed=seed)
    other = probe.summary(warmup=warm)["ttft_s"]["mean"]
    if not ttft or not other:
        return None
    other -= KNIFE_EDGE_PROBE_S  # the same front-end as the answer's, to compare the scheduler's part
    if 1 / KNIFE_EDGE_SPREAD <= other / ttft <= KNIFE_EDGE_SPREAD:
        return None
    lo, hi = sorted((ttft, other))
    return (f"{users} closed-loop clients of fixed lengths sit on a knife edge: whether they stay spread out or queue "
            f"together sets the mean TTFT, {lo * 1e3:,.0f} ms or {hi * 1e3:,.0f} ms here (a few ms of front-end "
            "time tips it; docs/serving.md); lengths that vary (--lengths) settle it")


#: an open loop is past its deployment's capacity when the requests in the system (arrived, not finished) at the end
#: of the arrivals are this many times those in the middle of them: a stable system's count holds level, one that
#: falls behind the rate piles requests up (in its queue or in its running batch) through the run
CAPACITY_PILE_UP = 1.5


def _past_capacity_of(rate: float, draws: list[SimResult]) -> str | None:
    """_past_capacity's caveat where any draw of the arrivals falls behind the rate, with how many did: near its
    capacity a deployment keeps up with one draw and falls behind on the next."""
    said = [c for c in (_past_capacity(rate, res) for res in draws) if c]
    if not said or len(draws) == 1:
        return said[0] if said else None
    return f"{said[0]} (in {len(said)} of {len(draws)} draws of the arrivals)"


def _past_capacity(rate: float, res: SimResult) -> str | None:
    """A caveat when the simulated deployment falls behind the offered rate: its requests pile up, the latency grows
    with the run's length, and a capacity a few per cent off moves the TTFT many times over (docs/serving.md)."""
    arrivals = np.sort(res.arrival)
    n = len(arrivals)
    if n < 30:
        return None
    finishes = np.sort(res.finish)
    in_system = np.arange(1, n + 1) - np.searchsorted(finishes, arrivals, side="right")
    middle = float(np.median(in_system[n // 3: 2 * n // 3]))
    end = float(np.mean(in_system[-max(1, n // 20):]))
    if end <= CAPACITY_PILE_UP * middle or end - middle < 10:
        return None
    span = float(res.finish.max() - arrivals[0])
    return (f"past this deployment's capacity at {rate:g} requests/s: requests pile up through the run ({middle:,.0f} "
            f"in the system midway, {end:,.0f} at the last arrivals; about {n / span:,.1f} completed a second), so "
            "its queue and latency grow with the run's length, and a capacity a few per cent off moves the TTFT "
            "many times over (docs/serving.md): read the TTFT as a lower bound and size for a lower rate")


#: what the published bursts say of a client's mean TPOT (docs/serving.md, "The mean TPOT of a burst"): GPUStack's
#: 1,000 queued ShareGPT prompts measured a mean of 1.1x-2.7x the median (P99 up to 18x), a tail of short answers
#: stalled behind the burst's prompts; drawn from measured ShareGPT lengths the simulation puts those means at
#: 0.40x-1.18x, their median and throughput at 0.90x-1.21x. Said of bursts whose answers vary in length (a ShareGPT
#: shape or a file of lengths), as those runs' did
BURST_TPOT_REQUESTS = 256
BURST_TPOT_CAVEAT = ("a client's mean TPOT over a burst this large ran 1.1x-2.7x its median in published runs "
                     "(short answers stalled behind the burst's prompts); drawn from measured ShareGPT lengths, the "
                     "simulation put those means at 0.40x-1.18x: the median TPOT and the throughput are surer "
                     "(docs/serving.md, 'The mean TPOT of a burst')")

#: what the validation says of a burst larger than the engine runs at once (docs/serving-accuracy.md, issue 29)
OVERSUBSCRIBED_CAVEAT = ("more requests queued at once than the engine runs together: published runs of this kind "
                         "through an engine's HTTP server measured a TTFT up to 4x this simulation's without the "
                         "front-end's queue (TensorRT-LLM on an H100 0.71x; the queue is modelled only where a "
                         "release's bursts were published: --engine vllm@0.11, sglang@0.5; docs/serving-accuracy.md); "
                         "read the TTFT as the engine's best case")


def llama_bench(s: ServeSetup, *, prompt: int = 0, gen: int = 0, ubatch: int = 512) -> float:
    """llama-bench's t/s: pp (prompt tokens in micro-batches of `ubatch`) or tg (`gen` tokens one at a time)."""
    if prompt:
        t, done = 0.0, 0
        while done < prompt:
            c = min(ubatch, prompt - done)
            t += s.cost.iteration_s(c, c * (done + c / 2.0), 0, 0.0)
            done += c
        return prompt / t
    if s.speculative is not None:  # one verify step keeps the mean accepted length
        per = s.speculative.spec.accept_length
        steps = -(-gen // per) if per == int(per) else int(gen / per) + 1
        t = sum(s.speculative.iteration_s(0, 0.0, 1, k * per) for k in range(int(steps)))
        return gen / t
    t = sum(s.cost.iteration_s(0, 0.0, 1, float(k)) for k in range(gen))
    return gen / t


__all__ = ["DEFAULT_REQUESTS", "Layout", "ServeSetup", "card_figures", "estimate_load", "llama_bench",
           "parse_lengths", "serve_setup"]
