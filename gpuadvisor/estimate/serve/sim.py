"""A discrete-event simulation of an engine's scheduler, one iteration at a time (not one token at a time).

Every iteration the scheduler (vLLM / TensorRT-LLM style, `prefill_first` False) runs one decode token for every
sequence past its prompt, then spends what is left of the token budget (`max_batched_tokens`) on prompt chunks:
first the prompts already started, then new requests in arrival order while `max_seqs` and the KV cache allow.
An engine that schedules prompts first (SGLang, llama.cpp; `prefill_first`) runs an iteration of prompt chunks
alone when it can schedule any (a waiting request it cannot admit, for `max_seqs` or the KV cache, does not stop
the decodes), and decodes otherwise. The KV cache is paged in blocks of KV_BLOCK_TOKENS tokens; a decode that finds no
free block preempts the most recently admitted sequence, which frees its blocks and is recomputed later (its prompt
then is its input plus what it had generated, and its last chunk samples the next token); so does a prompt that
waits for blocks held by newer prompts when nothing else can run. An engine that reserves the whole output at
admission (`reserve_output`, TensorRT-LLM's GUARANTEED_NO_EVICT) never preempts for decodes; one that holds back a
share of the running requests' remaining output (`new_token_ratio`, SGLang's) admits fewer at once and preempts less.
A prompt's last chunk samples its first token.

Disaggregated pools (serve/disagg.py): a prefill instance runs the requests with one output token (its prompt's
last chunk samples it; the KV cache then leaves); a decode instance (`prefilled`) admits requests whose prompt's
KV cache arrived, in arrival order while `max_seqs` and its blocks allow, and decodes them from the next iteration
on (the first decode samples the token the client sees first); a sequence it preempts is recomputed there as a
prompt. Arrival times can be given (`arrivals`): the times the KV caches arrive.

Termination: every iteration advances time and computes at least one token; a request that fits the KV cache alone
(checked up front) always finishes. Cost: decode-only iterations that differ only in their context (no arrival,
finish, admission or new KV shortage between them) are computed as one step (in closed form for the roofline
cost), and a run computes at most MAX_STEPS steps.
Requests arrive at a Poisson rate (seeded) or come from `users` closed-loop users (each sends its next request when
the previous one finishes). The iteration's time comes from a StepCost; TTFT, TPOT (per request: (finish - first
token) / (output - 1)), throughput and goodput under SLOs come out.

Client and server: times are a client's (vLLM benchmark_serving, GenAI-Perf): a request is sent at its arrival and
reaches the scheduler `frontend_s` later (HTTP, tokenization; the first chunk's detokenization and streaming are
folded into the same figure), so TTFT runs from the send to the first token received and the benchmark's duration
from the first send to the last token; `server_ttft` is the scheduler's part (TTFT less `frontend_s`). Part of that
front-end (`ingest_s`: request parsing, chat template, tokenization) runs on the server's one event loop, a request
at a time: requests sent together queue for it (front_end_reach), which a request sent alone never sees.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gpuadvisor.core.errors import UserError
from gpuadvisor.estimate import calibration as cal
from gpuadvisor.estimate.serve.stepcost import StepCost, decode_steps_s
from gpuadvisor.modelspec import windowed_tokens

# The most scheduler steps one run computes one at a time (a run of decode-only iterations that differ only in
# their context is one step): ~20 us of CPU each, so a run stays within about 5 s; past it, SimulationBoundError.
MAX_STEPS = 250_000
#: decode iterations run as one between two admission checks while SimConfig.new_token_ratio holds requests back
ADMISSION_RECHECK_STEPS = 8


#: an open loop's figures are the median of this many draws of its Poisson arrivals (seeds seed, seed + 1, ...):
#: near a deployment's capacity one draw's median TTFT moves 5x with the draw (vLLM on an RTX 5090 at 16 requests/s:
#: 1.3-7.4 s over nine draws, 3.9 s measured; docs/serving.md)
ARRIVAL_DRAWS = 5


@dataclass(frozen=True)
class SimConfig:
    max_batched_tokens: int
    max_seqs: int
    kv_blocks: int  # KV cache blocks of KV_BLOCK_TOKENS tokens
    chunked_prefill: bool = True
    prefill_first: bool = False
    time_scale: float = 1.0  # iteration latency multiplier
    reserve_output: bool = False  # admit only with blocks for the whole output (TensorRT-LLM's no-evict)
    frontend_s: float = 0.0  # client send -> scheduler: the engine's front-end per request (module docstring)
    # the part of frontend_s the server's one event loop spends on each request in turn (front_end_reach), and
    # whether a request's handling yields to the loop there and goes on behind every request queued meanwhile
    ingest_s: float = 0.0
    ingest_requeues: bool = False
    # an in-line loop (not `ingest_requeues`) also streams the answers of the requests it has sent on, which holds
    # back the rest of a burst: each request costs the loop this much a token of its answer, behind its ingestion
    ingest_stream_s_per_token: float = 0.0
    # the scheduler plans iteration k+1 while the GPU runs iteration k (vLLM's async scheduling, SGLang's and
    # TensorRT-LLM's overlap schedulers): a request that arrives during iteration k joins k+2, one step later than
    # with a synchronous scheduler; an idle engine takes it at once
    plans_ahead: bool = False
    decode_tokens: float = 1.0  # mean tokens a decode iteration generates per sequence (speculation: > 1)
    # a disaggregated decode instance (serve/disagg.py): requests arrive with their prompt's KV cache computed
    # elsewhere; admission takes the prompt's blocks and the next iteration decodes (its first token)
    prefilled: bool = False
    # SGLang's admission (schedule_policy.PrefillAdder): a new request is admitted only while the free KV cache covers
    # its prompt and `new_token_ratio` of its output, beside that share of every running request's remaining output;
    # the ratio falls by (initial - floor) / decay_steps every decode iteration and returns to the initial one when a
    # request is preempted. 0: admission by the prompt's blocks alone
    new_token_ratio: float = 0.0
    min_new_token_ratio: float = 0.0
    new_token_ratio_decay_steps: int = 600
    new_token_clip: int = 4096  # the most output tokens of one request the ratio is taken of
    # sliding-window attention (ModelSpec.sliding_window): `window_share` of the layers keep the last `window`
    # tokens' K/V only (and the block that holds the window's start: vLLM's hybrid KV cache frees the blocks behind
    # it), so a sequence holds fewer blocks than its context; blocks count every layer's K/V of a token
    window: int = 0
    window_share: float = 0.0

    def blocks_for(self, tokens: Any) -> Any:
        """KV blocks a sequence of `tokens` tokens holds (numbers or numpy arrays): its context in blocks, less what
        its sliding-window layers let go."""
        block = int(cal.KV_BLOCK_TOKENS)
        if self.window and self.window_share:
            tokens = windowed_tokens(np.asarray(tokens, dtype=float), self.window + block, self.window_share)
        return np.ceil(np.asarray(tokens, dtype=float) / block).astype(np.int64)


@dataclass
class SimResult:
    """Per-request figures (seconds) and what the run did."""

    arrival: np.ndarray
    first_token: np.ndarray
    finish: np.ndarray
    input_len: np.ndarray
    output_len: np.ndarray
    iterations: int
    preemptions: int
    makespan: float
    max_running: int
    extra: dict[str, Any] = field(default_factory=dict)
    frontend_s: float = 0.0
    #: when each request reached the scheduler (after the front-end's latency and, in a burst, its queue); None: sent
    #: + frontend_s
    reach: np.ndarray | None = None
    #: the gaps between one sequence's tokens, as (seconds, how many tokens had that gap): one entry per iteration
    #: (a run of decode-only iterations gives its mean step); what a client's ITL percentiles are taken over
    gaps: tuple[np.ndarray, np.ndarray] = (np.zeros(0), np.zeros(0))

    @property
    def ttft(self) -> np.ndarray:
        return self.first_token - self.arrival

    @property
    def tpot(self) -> np.ndarray:
        many = self.output_len > 1
        return (self.finish[many] - self.first_token[many]) / (self.output_len[many] - 1)

    def summary(self, *, slo_ttft: float | None = None, slo_tpot: float | None = None,
                warmup: int = 0) -> dict[str, Any]:
        sel = slice(warmup, None)
        ttft, n = self.ttft[sel], len(self.arrival) - warmup
        many = self.output_len[sel] > 1
        tpot = ((self.finish[sel][many] - self.first_token[sel][many]) / (self.output_len[sel][many] - 1))
        start = float(self.arrival[sel].min()) if n else 0.0
        span = float(self.finish[sel].max()) - start if n else 0.0
        out_tok = float(self.output_len[sel].sum())

        # the scheduler's part: from reaching it (the front-end's queue, in a burst, is the front-end's)
        server = ttft - self.frontend_s if self.reach is None else self.first_token[sel] - self.reach[sel]
        gaps = (self.finish[sel][many] - self.first_token[sel][many]).sum()
        itl = float(gaps / (self.output_len[sel][many] - 1).sum()) if many.any() else None
        itl_p50 = _weighted_median(*self.gaps) if len(self.gaps[0]) else None

        def pct(a: np.ndarray) -> dict[str, float | None]:
            if not len(a):
                return {"mean": None, "p50": None, "p90": None, "p99": None}
            return {"mean": float(a.mean()), "p50": float(np.percentile(a, 50)), "p90": float(np.percentile(a, 90)),
                    "p99": float(np.percentile(a, 99))}

        ok = np.ones(n, bool)
        if slo_ttft is not None:
            ok &= ttft <= slo_ttft
        if slo_tpot is not None:
            tp_all = np.where(self.output_len[sel] > 1, (self.finish[sel] - self.first_token[sel])
                              / np.maximum(self.output_len[sel] - 1, 1), 0.0)
            ok &= tp_all <= slo_tpot
        return {
            "requests": n, "duration_s": span,
            "requests_per_s": n / span if span else None,
            "output_tokens_per_s": out_tok / span if span else None,
            "total_tokens_per_s": (out_tok + float(self.input_len[sel].sum())) / span if span else None,
            "ttft_s": pct(ttft), "server_ttft_s": pct(server), "frontend_s": self.frontend_s,
            "tpot_s": pct(tpot), "itl_s": itl, "itl_p50_s": itl_p50,
            "goodput_requests_per_s": float(ok.sum()) / span if span else None,
            "slo_attainment": float(ok.mean()) if n else None,
            "iterations": self.iterations, "preemptions": self.preemptions, "max_running": self.max_running,
        }


def _weighted_median(values: np.ndarray, weights: np.ndarray) -> float:
    """The median of `values` each counted `weights` times (the token gaps a benchmark client pools)."""
    order = np.argsort(values, kind="stable")
    cum = np.cumsum(weights[order])
    return float(values[order][int(np.searchsorted(cum, cum[-1] / 2.0))])


class SimulationBoundError(UserError):
    """The run would pass MAX_STEPS scheduler steps: the question is too large to simulate in seconds."""


def _check_inputs(cfg: SimConfig, inp: np.ndarray, out: np.ndarray, rate: float | None,
                  users: int | None, arrivals: np.ndarray | None = None) -> None:
    """Refuse what the scheduler could not finish: every request must fit the KV cache alone, with a prompt of
    at least one token (a request that fits alone always finishes: the stall rule below frees the cache for it)."""
    if cfg.max_batched_tokens < 1 or cfg.max_seqs < 1 or cfg.kv_blocks < 1:
        raise ValueError(f"the scheduler needs a token budget, sequences and KV blocks of at least 1: {cfg}")
    if not cfg.time_scale > 0:
        raise ValueError(f"time_scale must be positive, got {cfg.time_scale}")
    if not cfg.frontend_s >= 0:
        raise ValueError(f"frontend_s must be >= 0, got {cfg.frontend_s}")
    if not (cfg.ingest_s >= 0 and cfg.ingest_stream_s_per_token >= 0):
        raise ValueError(f"ingest_s and ingest_stream_s_per_token must be >= 0, got {cfg.ingest_s}, "
                         f"{cfg.ingest_stream_s_per_token}")
    if not cfg.decode_tokens >= 1:
        raise ValueError(f"decode_tokens must be >= 1, got {cfg.decode_tokens}")
    if len(inp) and int(inp.min()) < 1:
        raise ValueError("every request needs a prompt of at least one token")
    if len(inp) and int(cfg.blocks_for(int((inp + out).max()))) > cfg.kv_blocks:
        raise ValueError("a request does not fit in the KV cache")
    if rate is not None and not (rate > 0 and np.isfinite(rate)):
        raise ValueError(f"rate must be a positive number of requests per second, got {rate!r}")
    if users is not None and users < 1:
        raise ValueError(f"users must be at least 1, got {users!r}")
    if arrivals is not None:
        if rate is not None or users is not None:
            raise ValueError("give arrival times, a rate or users, not several")
        if len(arrivals) != len(inp) or not (np.all(np.isfinite(arrivals)) and np.all(arrivals >= 0)):
            raise ValueError("arrival times: one finite time >= 0 per request")


def draw_count(rate: float | None, draws: int | None = None) -> int:
    """How many draws of its arrivals a load is simulated over: `draws` (ARRIVAL_DRAWS unless given) for an open
    loop, one for a closed loop or a burst, whose arrivals are not drawn."""
    if rate is None:
        return 1
    return ARRIVAL_DRAWS if draws is None else max(1, draws)


def combine_draws(summaries: list[dict[str, Any]]) -> dict[str, Any]:
    """A load's figures over its draws: each the median, with how many draws and, over more than one, how far they
    spread (`draw_range`)."""
    out = median_summary(summaries)
    out["arrival_draws"] = len(summaries)
    if len(summaries) > 1:
        out["draw_range"] = draw_range(summaries)
    return out


#: the figures whose range over the draws an answer reports beside their median (draw_range)
DRAW_RANGE_FIGURES = (("ttft_s", "p50"), ("ttft_s", "p99"), ("tpot_s", "p50"), ("output_tokens_per_s", None))


def draw_range(summaries: list[dict[str, Any]]) -> dict[str, tuple[float, float]]:
    """The lowest and highest of DRAW_RANGE_FIGURES over the draws ("ttft_s.p50": (lo, hi)): how far one draw of the
    arrivals moves them (near capacity, many times over)."""
    out: dict[str, tuple[float, float]] = {}
    for key, pct in DRAW_RANGE_FIGURES:
        values = [d.get(key) if pct is None else (d.get(key) or {}).get(pct) for d in summaries]
        nums = [float(v) for v in values if isinstance(v, (int, float))]
        if nums:
            out[key if pct is None else f"{key}.{pct}"] = (min(nums), max(nums))
    return out


def median_summary(summaries: list[dict[str, Any]]) -> dict[str, Any]:
    """Each figure's median over the draws (nested figures too); one that is None in every draw stays None."""
    first = summaries[0]
    if len(summaries) == 1:
        return dict(first)
    out: dict[str, Any] = {}
    for key, value in first.items():
        values = [d.get(key) for d in summaries]
        if isinstance(value, dict):
            out[key] = median_summary([v if isinstance(v, dict) else {} for v in values])
        elif isinstance(value, bool) or not all(isinstance(v, (int, float)) for v in values if v is not None):
            out[key] = value
        else:
            nums = [v for v in values if v is not None]
            median = float(np.median(nums)) if nums else None
            out[key] = round(median) if median is not None and all(isinstance(v, int) for v in nums) else median
    return out


@dataclass
class FrontEndLoop:
    """The serving front-end's one event loop (module docstring): it spends `ingest_s` on each request in turn
    (parsing, chat template, tokenization; first come, first served) within a front-end latency of `latency_s` per
    request (SimConfig.frontend_s); `free`: when it can take the next request."""

    ingest_s: float
    latency_s: float
    free: float = -np.inf

    def reach(self, sent: np.ndarray, requeues: bool = False, streamed_s: np.ndarray | None = None) -> np.ndarray:
        """When requests sent at `sent` (ascending, after any the loop took before) reach the scheduler.
        `requeues`: the handling yields after the loop's part (vLLM tokenizes in a worker thread) and goes on behind
        every request that came meanwhile, so a burst reaches the scheduler together, once the whole burst's first
        parts are done; else each request goes on at once (SGLang's tokenizer manager tokenizes in line), a burst
        trickling in one `ingest_s` apart, and further apart by `streamed_s` (per request: the loop's time streaming
        its answer, which holds back the requests behind it). A request that finds the loop free reaches the
        scheduler `latency_s` after it is sent, either way."""
        done = np.empty(len(sent))
        after = np.zeros(len(sent)) if streamed_s is None else streamed_s
        for k, t in enumerate(sent):
            done[k] = max(float(t), self.free) + self.ingest_s
            self.free = done[k] + float(after[k])
        if requeues and len(sent):
            # the rest of request k's handling waits behind every first part queued before it was ready
            done = done[np.searchsorted(sent, done, side="right") - 1]
        return np.maximum(sent + self.latency_s, done + self.latency_s - self.ingest_s)


def front_end_reach(sent: np.ndarray, ingest_s: float, requeues: bool, latency_s: float,
                    streamed_s: np.ndarray | None = None) -> np.ndarray:
    """When requests sent at `sent` (ascending) reach the scheduler through a front-end loop found free
    (FrontEndLoop.reach)."""
    return FrontEndLoop(ingest_s, latency_s).reach(sent, requeues, streamed_s)


def simulate(cost: StepCost, cfg: SimConfig, input_len: np.ndarray, output_len: np.ndarray, *,
             rate: float | None = None, users: int | None = None, seed: int = 0,
             max_steps: int = MAX_STEPS, arrivals: np.ndarray | None = None) -> SimResult:
    """Run the requests (lengths given) through the scheduler; `rate` req/s (Poisson), `users` closed-loop users,
    `arrivals` (seconds, one per request), or none: every request queued at time 0 (an offline / infinite-rate
    benchmark).

    Every iteration advances time and does work (decodes or prompt tokens), and every request finishes; a run
    that would compute more than `max_steps` steps (MAX_STEPS) stops with SimulationBoundError."""
    n = len(input_len)
    inp = np.asarray(input_len, np.int64)
    out = np.maximum(np.asarray(output_len, np.int64), 1)
    _check_inputs(cfg, inp, out, rate, users, arrivals)
    arrival = np.full(n, np.inf)
    if arrivals is not None:
        arrival = np.asarray(arrivals, float).copy()
    elif rate is not None:
        rng = np.random.default_rng(seed)
        arrival = np.cumsum(rng.exponential(1.0 / rate, n))
        arrival -= arrival[0]
    elif users is not None:
        arrival[: min(users, n)] = 0.0
    else:
        arrival[:] = 0.0
    first = np.full(n, np.nan)
    finish = np.full(n, np.nan)
    prompt = inp.copy()  # tokens to prefill (input + generated after a preemption)
    done_pf = np.zeros(n, np.int64)  # prompt tokens computed
    # tokens sampled (a float: a speculating engine adds its mean accepted length per iteration); a decoding
    # sequence holds the KV of inp + gen - 1 tokens
    gen = np.zeros(n)
    per_step = cfg.decode_tokens
    blocks = np.zeros(n, np.int64)
    recompute = np.zeros(n, bool)  # a prefilled request preempted on the decode instance: its prompt is recomputed
    next_arrival = 0 if users is None else min(users, n)  # closed loop: index of the next request to release
    order = np.argsort(arrival, kind="stable") if users is None else np.arange(n)
    arr_ptr = 0
    waiting: deque[int] = deque()
    running: list[int] = []  # admission order
    prefilling: list[int] = []  # admitted, prompt not yet computed (admission order)
    run = np.zeros(0, np.int64)
    dirty = True  # `running` changed: rebuild its array
    free = cfg.kv_blocks
    t, iters, steps_done, preempt, max_run = 0.0, 0, 0, 0, 0
    last_start = 0.0  # when the last iteration began: what a scheduler that plans ahead saw when it planned this one
    gap_s: list[float] = []
    gap_n: list[int] = []
    budget_full = cfg.max_batched_tokens
    finished = 0
    fe = cfg.frontend_s  # a request reaches the scheduler this long after it is sent, the loop free
    reach = np.full(n, np.inf)  # when each request reaches the scheduler (FrontEndLoop.reach)
    front = FrontEndLoop(cfg.ingest_s, fe)
    known = order[np.isfinite(arrival[order])]  # the requests sent before the run starts: all of an open loop's
    streamed = cfg.ingest_stream_s_per_token * out  # the loop's time streaming each answer (an in-line loop's)
    reach[known] = front.reach(arrival[known], cfg.ingest_requeues, streamed[known])

    def send(i: int, at: float) -> None:
        """A closed loop's user sends request i at `at`: it queues for the loop behind what is there. Its answer's
        streaming is not charged ahead of the next send: a user sends again once its answer is out, so the
        answers a loop streams are spread between its sends, not piled ahead of them as in a burst."""
        arrival[i] = at
        reach[i] = front.reach(np.array([at]))[0]

    ratio = cfg.new_token_ratio
    ratio_step = (cfg.new_token_ratio - cfg.min_new_token_ratio) / max(1, cfg.new_token_ratio_decay_steps)

    def reserve_allows(i: int) -> bool:
        """SimConfig.new_token_ratio's admission: room for request i's prompt and its share of output."""
        if ratio <= 0.0:
            return True
        live = np.fromiter(running, np.int64, len(running))
        clip = cfg.new_token_clip
        left = np.clip(out[live] - gen[live], 0, clip) if len(live) else np.zeros(0)
        return free * int(cal.KV_BLOCK_TOKENS) - ratio * float(left.sum()) >= prompt[i] + ratio * min(out[i], clip)

    def preempt_newest() -> int:
        """Preempt the most recently admitted sequence: its blocks are freed and it is recomputed later."""
        nonlocal free, preempt, dirty, prefilling, ratio
        ratio = cfg.new_token_ratio
        victim = running.pop()
        free += int(blocks[victim])
        blocks[victim] = 0
        prompt[victim] = inp[victim] + int(gen[victim])
        done_pf[victim] = 0
        recompute[victim] = True
        waiting.appendleft(victim)
        preempt += 1
        dirty = True
        prefilling = [i for i in prefilling if i != victim]
        return victim

    def allocate_decodes(dec: np.ndarray) -> np.ndarray:
        """KV blocks for the decodes' next token; the newest sequences are preempted when they run out."""
        nonlocal free
        need = np.maximum(cfg.blocks_for(inp[dec] + gen[dec]) - blocks[dec], 0).astype(np.int64)
        while int(need.sum()) > free and running:
            victim = preempt_newest()
            keep = dec != victim
            dec, need = dec[keep], need[keep]
        free -= int(need.sum())
        blocks[dec] += need
        return dec

    def plan_prompts(budget: int, decodes: int) -> list[tuple[int, int]]:
        """Prompt chunks within `budget` tokens: the prompts already started, then new requests in arrival order
        while max_seqs and the KV cache allow. State changes only for the chunks returned."""
        nonlocal free, dirty
        chunks: list[tuple[int, int]] = []
        for i in prefilling:
            if budget <= 0:
                break
            c = min(int(prompt[i] - done_pf[i]), budget)
            nb = max(int(cfg.blocks_for(done_pf[i] + c)) - blocks[i], 0)
            if nb > free:
                break
            free -= nb
            blocks[i] += nb
            chunks.append((i, c))
            budget -= c
        while waiting and budget > 0 and len(running) < cfg.max_seqs:
            i = waiting[0]
            if cfg.prefilled and not recompute[i]:  # arrived with its KV cache: admit_prefilled's
                break
            rest = int(prompt[i])
            if not cfg.chunked_prefill and rest > budget and (chunks or decodes):
                break
            c = min(rest, budget) if cfg.chunked_prefill else rest
            nb = int(cfg.blocks_for(inp[i] + out[i] if cfg.reserve_output else c))
            if nb > free or not reserve_allows(i):
                break
            waiting.popleft()
            free -= nb
            blocks[i] += nb
            running.append(i)
            prefilling.append(i)
            dirty = True
            chunks.append((i, c))
            budget -= c
        return chunks

    def admit_prefilled() -> None:
        """A decode instance admits the requests whose KV cache arrived, in arrival order, while max_seqs and its
        blocks allow (the prompt's tokens and the first output token's); they decode from this iteration on."""
        nonlocal free, dirty
        while waiting and len(running) < cfg.max_seqs:
            i = waiting[0]
            if recompute[i]:
                break
            nb = int(cfg.blocks_for(inp[i] + (out[i] if cfg.reserve_output else 1)))
            if nb > free:
                break
            waiting.popleft()
            free -= nb
            blocks[i] += nb
            done_pf[i] = prompt[i]
            running.append(i)
            dirty = True

    while finished < n:
        if steps_done >= max_steps:
            raise SimulationBoundError(
                f"the simulation reached its bound of {max_steps:,} scheduler steps with {n - finished:,} of "
                f"{n:,} requests unfinished; simulate fewer requests")
        steps_done += 1
        seen = last_start if cfg.plans_ahead else t
        while arr_ptr < n and reach[order[arr_ptr]] <= seen:
            waiting.append(int(order[arr_ptr]))
            arr_ptr += 1
        if cfg.prefilled:
            admit_prefilled()
        if dirty:
            run = np.fromiter(running, np.int64, len(running))
            dirty = False
        decoding = run[done_pf[run] >= prompt[run]] if len(run) else run
        preempted = preempt
        if cfg.prefill_first:  # prompts first; decode only when no prompt chunk can be scheduled
            chunks = plan_prompts(budget_full, 0)
            dec = allocate_decodes(decoding) if not chunks and len(decoding) else decoding[:0]
        else:
            dec = allocate_decodes(decoding) if len(decoding) else decoding
            chunks = plan_prompts(budget_full - len(dec), len(dec))
        if not len(dec) and not chunks:
            if preempt > preempted:  # the decodes' preemptions freed blocks a waiting prompt chunk may take: plan again
                continue
            if running:  # every admitted prompt waits for KV blocks held by newer ones: free the newest
                if len(running) == 1:
                    raise ValueError("a request does not fit in the KV cache")
                preempt_newest()
                continue
            if arr_ptr < n and np.isfinite(reach[order[arr_ptr]]):
                t = max(t, float(reach[order[arr_ptr]]))
                last_start = t  # idle: the request is planned as it arrives
                continue
            if waiting:  # a prompt that can never fit
                raise ValueError("a request does not fit in the KV cache")
            break
        steps = 1
        grow: float | None = None  # a decode run's summed context growth a step (None: a token a sequence)
        if chunks:
            pf_tokens = sum(c for _, c in chunks)
            pairs = float(sum(_attended_pairs(cost, done_pf[i], c) for i, c in chunks))
            dctx = float(_kv_context(cost, inp[dec] + gen[dec]).sum()) if len(dec) else 0.0
            took = cost.iteration_s(pf_tokens, pairs, len(dec), dctx) * cfg.time_scale
            last_start = t
            t += took
            if len(dec):
                gap_s.append(took)
                gap_n.append(len(dec))
        else:
            # a decode-only iteration: until a sequence finishes, a request arrives or the KV cache runs out,
            # the next iterations are the same but for the context (nothing can be admitted that was not now)
            steps = _decode_run(inp[dec] + gen[dec], blocks[dec], out[dec] - gen[dec], free, per_step, cfg)
            if ratio > 0.0 and waiting:  # the falling ratio may admit a waiting request: look again soon
                steps = min(steps, ADMISSION_RECHECK_STEPS)
            ctx = inp[dec] + gen[dec]
            dctx, d = float(_kv_context(cost, ctx).sum()), len(dec)
            grow = float(_kv_context(cost, ctx + per_step).sum()) - dctx  # all sequences' context, one step on
            next_t = float(reach[order[arr_ptr]]) if arr_ptr < n else np.inf
            if steps > 1 and next_t < np.inf:  # the steps that start before the next arrival
                lo, hi = 1, steps
                while lo < hi:
                    k = (lo + hi + 1) // 2
                    if t + decode_steps_s(cost, d, dctx, k - 1, per_step, grow) * cfg.time_scale < next_t:
                        lo = k
                    else:
                        hi = k - 1
                # a scheduler that plans ahead had planned the step after the arrival before it saw it
                steps = min(steps, lo + 1) if cfg.plans_ahead else lo
            took = decode_steps_s(cost, d, dctx, steps, per_step, grow) * cfg.time_scale
            t += took
            last_start = t - took / steps
            gap_s.append(took / steps)
            gap_n.append(d * steps)
            if steps > 1:  # the blocks of the further steps (the first step's are taken)
                grown = np.maximum(cfg.blocks_for(inp[dec] + gen[dec] + (steps - 1) * per_step)
                                   - blocks[dec], 0).astype(np.int64)
                free -= int(grown.sum())
                blocks[dec] += grown
        iters += steps
        if len(dec):
            ratio = max(cfg.min_new_token_ratio, ratio - steps * ratio_step)
        max_run = max(max_run, len(running))
        ended: list[int] = []
        if len(dec):
            gen[dec] += steps * per_step
            if cfg.prefilled:  # a prefilled request's first decode samples its first token
                new = dec[np.isnan(first[dec])]
                if len(new):
                    first[new] = t - (decode_steps_s(cost, len(dec), dctx, steps, per_step, grow)
                                      - decode_steps_s(cost, len(dec), dctx, 1, per_step, grow)) * cfg.time_scale
            fin = dec[gen[dec] >= out[dec]]
            if len(fin):
                finish[fin] = t
                ended += fin.tolist()
        for i, c in chunks:
            done_pf[i] += c
            if done_pf[i] >= prompt[i]:
                prefilling.remove(i)
                if np.isnan(first[i]):
                    first[i] = t
                gen[i] += 1  # the prompt's last chunk samples a token (after a preemption, the next one)
                if gen[i] >= out[i]:
                    finish[i] = t
                    ended.append(i)
        if ended:
            gone = set(ended)
            running = [i for i in running if i not in gone]
            dirty = True
            for i in ended:
                free += int(blocks[i])
                blocks[i] = 0
            finished += len(ended)
            if users is not None:
                for _ in ended:
                    if next_arrival < n:
                        send(next_arrival, t)
                        next_arrival += 1
    return SimResult(arrival=arrival, first_token=first, finish=finish, input_len=inp, output_len=out,
                     iterations=iters, preemptions=preempt, makespan=t, max_running=max_run, frontend_s=fe, reach=reach,
                     gaps=(np.asarray(gap_s), np.asarray(gap_n, float)))


def _attended_pairs(cost: StepCost, start: float, tokens: float) -> float:
    """Query-key pairs of a prompt chunk of `tokens` after `start` cached: the cost's model's where it knows its
    model (RooflineStepCost: sliding-window layers attend to fewer), else full causal attention's."""
    pairs = getattr(cost, "attended_pairs", None)
    return float(pairs(start, tokens)) if pairs is not None else tokens * (start + tokens / 2.0)


def _kv_context(cost: StepCost, context: np.ndarray) -> np.ndarray:
    """The tokens of K/V each decoding sequence reads, per layer on average (RooflineStepCost: a sliding window's
    layers read their window), else its context."""
    held = getattr(cost, "kv_context", None)
    return np.asarray(held(context), dtype=float) if held is not None else context


def _decode_run(context: np.ndarray, held: np.ndarray, left: np.ndarray, free: int, per_step: float = 1.0,
                cfg: SimConfig | None = None) -> int:
    """How many decode-only iterations can run as one: at most until the first sequence finishes (`left` tokens
    each, `per_step` a step) and while the KV blocks the further tokens need (sequences at `context` tokens, `held`
    blocks, counted as `cfg` counts them) fit in `free`; the caller also stops at the next arrival."""
    blocks_for = cfg.blocks_for if cfg is not None else SimConfig(1, 1, 1).blocks_for

    def fits(k: int) -> bool:
        blocks_needed = blocks_for(context + (k - 1) * per_step)
        return int(np.maximum(blocks_needed - held, 0).sum()) <= free

    lo, hi = 1, max(1, int(np.ceil(left.min() / per_step)))
    if fits(hi):
        return hi
    while lo < hi:  # largest k whose extra blocks fit
        k = (lo + hi + 1) // 2
        if fits(k):
            lo = k
        else:
            hi = k - 1
    return lo
