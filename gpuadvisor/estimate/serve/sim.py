"""A discrete-event simulation of an engine's scheduler, one iteration at a time (not one token at a time).

Every iteration the scheduler (vLLM / TensorRT-LLM style, `prefill_first` False) runs one decode token for every
sequence past its prompt, then spends what is left of the token budget (`max_batched_tokens`) on prompt chunks:
first the prompts already started, then new requests in arrival order while `max_seqs` and the KV cache allow.
An engine that schedules prompts first (SGLang, llama.cpp; `prefill_first`) runs an iteration of prompt chunks
alone when any are waiting, and decodes otherwise. The KV cache is paged in blocks of KV_BLOCK_TOKENS tokens; a decode
that finds no free block preempts the most recently admitted sequence, which frees its blocks and is recomputed
later (its prompt then is its input plus what it had generated); an engine that reserves the whole output
at admission (`reserve_output`, TensorRT-LLM's GUARANTEED_NO_EVICT) never preempts.
A prompt's last chunk samples its first token.
Requests arrive at a Poisson rate (seeded) or come from `users` closed-loop users (each sends its next request when
the previous one finishes). The iteration's time comes from a StepCost; TTFT, TPOT (per request: (finish - first
token) / (output - 1)), throughput and goodput under SLOs come out.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gpuadvisor.estimate import calibration as cal
from gpuadvisor.estimate.serve.stepcost import StepCost


@dataclass(frozen=True)
class SimConfig:
    max_batched_tokens: int
    max_seqs: int
    kv_blocks: int  # KV cache blocks of KV_BLOCK_TOKENS tokens (calibration table)
    chunked_prefill: bool = True
    prefill_first: bool = False
    time_scale: float = 1.0  # iteration latency multiplier (pipeline stages: pp x a stage's time)
    reserve_output: bool = False  # admit only with blocks for the whole output (TensorRT-LLM's no-evict)


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
            "ttft_s": pct(ttft), "tpot_s": pct(tpot),
            "goodput_requests_per_s": float(ok.sum()) / span if span else None,
            "slo_attainment": float(ok.mean()) if n else None,
            "iterations": self.iterations, "preemptions": self.preemptions, "max_running": self.max_running,
        }


def simulate(cost: StepCost, cfg: SimConfig, input_len: np.ndarray, output_len: np.ndarray, *,
             rate: float | None = None, users: int | None = None, seed: int = 0,
             max_iterations: int = 2_000_000) -> SimResult:
    """Run the requests (lengths given) through the scheduler; `rate` req/s (Poisson), `users` closed-loop users,
    or neither: every request queued at time 0 (an offline / infinite-rate benchmark)."""
    n = len(input_len)
    block = int(cal.KV_BLOCK_TOKENS)
    inp = np.asarray(input_len, np.int64)
    out = np.maximum(np.asarray(output_len, np.int64), 1)
    arrival = np.full(n, np.inf)
    if rate is not None:
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
    gen = np.zeros(n, np.int64)
    blocks = np.zeros(n, np.int64)
    next_arrival = 0 if users is None else min(users, n)  # closed loop: index of the next request to release
    order = np.argsort(arrival, kind="stable") if users is None else np.arange(n)
    arr_ptr = 0
    waiting: deque[int] = deque()
    running: list[int] = []  # admission order
    prefilling: list[int] = []  # admitted, prompt not yet computed (admission order)
    run = np.zeros(0, np.int64)
    dirty = True  # `running` changed: rebuild its array
    free = cfg.kv_blocks
    t, iters, preempt, max_run = 0.0, 0, 0, 0
    budget_full = cfg.max_batched_tokens
    finished = 0
    while finished < n and iters < max_iterations:
        while arr_ptr < n and arrival[order[arr_ptr]] <= t:
            waiting.append(int(order[arr_ptr]))
            arr_ptr += 1
        if dirty:
            run = np.fromiter(running, np.int64, len(running))
            dirty = False
        decoding = run[done_pf[run] >= prompt[run]] if len(run) else run
        do_decode = not (cfg.prefill_first and (prefilling or waiting))
        dec = decoding if do_decode else decoding[:0]
        # KV blocks for the decodes' next token; preempt the newest sequences when they run out
        if len(dec):
            need = np.maximum(-(-(prompt[dec] + gen[dec]) // block) - blocks[dec], 0)
            while int(need.sum()) > free and running:
                victim = running.pop()
                free += int(blocks[victim])
                blocks[victim] = 0
                prompt[victim] = inp[victim] + gen[victim]
                done_pf[victim] = 0
                waiting.appendleft(victim)
                preempt += 1
                dirty = True
                keep = dec != victim
                dec, need = dec[keep], need[keep]
                prefilling = [i for i in prefilling if i != victim]
            free -= int(need.sum())
            blocks[dec] += need
        budget = budget_full - len(dec)
        chunks: list[tuple[int, int]] = []
        if not (do_decode and cfg.prefill_first and len(dec)):
            for i in prefilling:
                if budget <= 0:
                    break
                c = min(int(prompt[i] - done_pf[i]), budget)
                nb = max(-(-(done_pf[i] + c) // block) - blocks[i], 0)
                if nb > free:
                    break
                free -= nb
                blocks[i] += nb
                chunks.append((i, c))
                budget -= c
            while waiting and budget > 0 and len(running) < cfg.max_seqs:
                i = waiting[0]
                rest = int(prompt[i])
                if not cfg.chunked_prefill and rest > budget and (chunks or len(dec)):
                    break
                c = min(rest, budget) if cfg.chunked_prefill else rest
                nb = -(-(inp[i] + out[i] if cfg.reserve_output else c) // block)
                if nb > free:
                    break
                waiting.popleft()
                free -= nb
                blocks[i] += nb
                running.append(i)
                prefilling.append(i)
                dirty = True
                chunks.append((i, c))
                budget -= c
        if not len(dec) and not chunks:
            if arr_ptr < n and np.isfinite(arrival[order[arr_ptr]]):
                t = max(t, float(arrival[order[arr_ptr]]))
                continue
            if not running and not waiting:
                break
            if waiting and not running:  # a prompt that can never fit
                raise ValueError("a request does not fit in the KV cache")
            continue
        pf_tokens = sum(c for _, c in chunks)
        pairs = float(sum(c * (done_pf[i] + c / 2.0) for i, c in chunks))
        dctx = float((prompt[dec] + gen[dec]).sum()) if len(dec) else 0.0
        t += cost.iteration_s(pf_tokens, pairs, len(dec), dctx) * cfg.time_scale
        iters += 1
        max_run = max(max_run, len(running))
        ended: list[int] = []
        if len(dec):
            gen[dec] += 1
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
                if gen[i] == 0:
                    gen[i] = 1
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
                        arrival[next_arrival] = t
                        next_arrival += 1
    return SimResult(arrival=arrival, first_token=first, finish=finish, input_len=inp, output_len=out,
                     iterations=iters, preemptions=preempt, makespan=t, max_running=max_run)
