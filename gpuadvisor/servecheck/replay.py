"""Replay a load against an OpenAI-compatible server (/v1/completions, stream=true) and time every request as a
client sees it (measurement.py says how each figure is taken).

Prompts are token ids (the completions API takes a list of integers as the prompt), so every request carries
exactly its input length without a tokenizer here; each request's ids are drawn afresh (seeded) so that no
server reuses a cached prefix. A server whose completions take text only (llama-cpp-python's) gets `prompt="text"`:
the same ids turned into text by the server's own detokenizer, and each text's length counted by its tokenizer
(before the run, untimed). `ignore_eos` (vLLM, SGLang, llama.cpp) asks for exactly `max_tokens` tokens.
Bounded: at most `requests` requests, and whatever is running at `time_limit_s` is cancelled."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gpuadvisor.servecheck.http import Endpoint, EndpointError, get_json, request_json, stream_events
from gpuadvisor.servecheck.measurement import RequestRow

#: token ids drawn for prompts: past the first ids (special and byte tokens in most vocabularies) and below
#: 32,000 (every LLaMA-family vocabulary holds them)
PROMPT_ID_FLOOR, PROMPT_ID_CEILING = 1000, 32000


def prompt_id_range(vocab_size: int) -> tuple[int, int]:
    """[low, high) of the token ids a prompt is drawn from, for a vocabulary of `vocab_size` ids."""
    high = min(vocab_size, PROMPT_ID_CEILING)
    return min(PROMPT_ID_FLOOR, high // 4), high


@dataclass
class Plan:
    """Every request of the run, decided before the first is sent."""

    endpoint: Endpoint
    served_model: str
    input_lens: list[int]
    output_lens: list[int]
    rate: float | None  # Poisson arrivals; None with `concurrency`
    concurrency: int | None
    time_limit_s: float
    seed: int
    vocab_size: int
    api_key: str | None = None
    prompt: str = "ids"  # ids | text (module docstring)
    extra_body: dict[str, Any] = field(default_factory=dict)

    def prompts(self) -> list[list[int]]:
        rng = np.random.default_rng(self.seed)
        low, high = prompt_id_range(self.vocab_size)
        return [rng.integers(low, high, n).tolist() for n in self.input_lens]

    def arrivals(self) -> list[float]:
        """Send times from the start: the first at 0, then exponential gaps (benchmark_serving's Poisson process,
        burstiness 1); all at 0 in closed-loop mode (the clients pace themselves)."""
        if self.rate is None:
            return [0.0] * len(self.input_lens)
        gaps = np.random.default_rng(self.seed + 1).exponential(1.0 / self.rate, len(self.input_lens))
        return np.concatenate(([0.0], np.cumsum(gaps[:-1]))).tolist()

    def payload(self, prompt: list[int] | str, output_len: int) -> dict[str, Any]:
        return {"model": self.served_model, "prompt": prompt, "max_tokens": output_len, "temperature": 0.0,
                "stream": True, "ignore_eos": True, "stream_options": {"include_usage": True}, **self.extra_body}


@dataclass
class Timed:
    """One request as the client saw it (times from time.perf_counter())."""

    sent: float
    first: float | None = None  # first chunk with text
    last: float | None = None  # last chunk with text
    done: float | None = None  # '[DONE]' or the stream's end
    gaps: list[float] = field(default_factory=list)
    chunks: int = 0  # chunks with text
    usage_tokens: int | None = None


async def _timed_request(plan: Plan, prompt: list[int] | str, output_len: int) -> Timed:
    t = Timed(sent=time.perf_counter())
    async for ev in stream_events(plan.endpoint, "/completions", plan.payload(prompt, output_len),
                                  api_key=plan.api_key):
        if ev.data is None:
            break
        choices = ev.data.get("choices") or []
        text = choices[0].get("text") if choices and isinstance(choices[0], dict) else None
        if text:
            if t.first is None:
                t.first = ev.arrived
            else:
                t.gaps.append(ev.arrived - (t.last or ev.arrived))
            t.last = ev.arrived
            t.chunks += 1
        usage = ev.data.get("usage")
        if isinstance(usage, dict) and isinstance(usage.get("completion_tokens"), int):
            t.usage_tokens = usage["completion_tokens"]
    t.done = time.perf_counter() if t.done is None else t.done
    return t


@dataclass
class Run:
    rows: list[RequestRow]
    itls: list[float]
    duration_s: float
    stopped_by_time_limit: bool
    tokens_from_usage: bool


#: the tokenizer endpoints at the server's root, (detokenize, tokenize), tried in order: llama-cpp-python's server,
#: then vLLM's and llama.cpp's own (the same paths, each with its own body keys: all are sent, the answer's is read)
TOKENIZER_PATHS = (("/extras/detokenize", "/extras/tokenize"), ("/detokenize", "/tokenize"))
PREPARE_AT_ONCE = 8  # tokenizer calls in flight while the text prompts are prepared


async def _text_prompts(plan: Plan, ids: list[list[int]]) -> tuple[list[str], list[int]]:
    """The server's own text for each id list, and that text's length in the server's own tokens."""
    ep, model = plan.endpoint, plan.served_model

    def text_body(text: str) -> dict[str, Any]:
        return {"model": model, "input": text, "prompt": text, "content": text}

    async def answers(path: str) -> bool:
        try:
            await request_json(ep, path, text_body("a"), api_key=plan.api_key, at_root=True)
            return True
        except EndpointError:
            return False

    found = [pair for pair in TOKENIZER_PATHS if await answers(pair[1])][:1]
    if not found:
        raise EndpointError(f"{ep.origin}: --prompt text needs the server's tokenizer endpoints "
                            f"({', '.join(t for _, t in TOKENIZER_PATHS)}); none answered")
    detok, tok = found[0]
    gate = asyncio.Semaphore(PREPARE_AT_ONCE)

    async def one(prompt_ids: list[int]) -> tuple[str, int]:
        async with gate:
            d = await request_json(ep, detok, {"model": model, "tokens": prompt_ids}, api_key=plan.api_key,
                                   at_root=True)
            text = next((d[k] for k in ("text", "prompt", "content") if isinstance(d, dict) and
                         isinstance(d.get(k), str)), None)
            if text is None:
                raise EndpointError(f"{ep.origin}{ep.root_path}{detok}: no text in the answer")
            t = await request_json(ep, tok, text_body(text), api_key=plan.api_key, at_root=True)
            tokens = t.get("tokens") if isinstance(t, dict) else None
            if not isinstance(tokens, list):
                raise EndpointError(f"{ep.origin}{ep.root_path}{tok}: no token list in the answer")
            return text, len(tokens)

    done = await asyncio.gather(*(one(x) for x in ids))
    return [t for t, _ in done], [n for _, n in done]


async def _run(plan: Plan, progress: Callable[[int, int], None] | None) -> Run:
    prompts: list[list[int]] | list[str] = plan.prompts()
    arrivals = plan.arrivals()
    input_lens = list(plan.input_lens)
    if plan.prompt == "text":
        prompts, input_lens = await _text_prompts(plan, plan.prompts())
    n = len(prompts)
    results: dict[int, Timed] = {}
    failures: list[EndpointError] = []
    tasks: list[asyncio.Future[None]] = []
    start = time.perf_counter()

    async def one(i: int) -> None:
        try:
            results[i] = await _timed_request(plan, prompts[i], plan.output_lens[i])
        except EndpointError as e:  # the first failure ends the run
            failures.append(e)
            body.cancel()
            return
        if progress:
            progress(len(results), n)

    async def open_loop() -> None:
        for i in range(n):
            delay = start + arrivals[i] - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            tasks.append(asyncio.ensure_future(one(i)))
        await asyncio.gather(*tasks)

    async def closed_loop(clients: int) -> None:
        queue = iter(range(n))

        async def client() -> None:
            for i in queue:
                await one(i)

        tasks.extend(asyncio.ensure_future(client()) for _ in range(min(clients, n)))
        await asyncio.gather(*tasks)

    body = asyncio.ensure_future(open_loop() if plan.rate is not None else closed_loop(plan.concurrency or 1))
    done, _ = await asyncio.wait({body}, timeout=plan.time_limit_s)
    stopped = not done
    for t in [body, *tasks]:  # past the time limit, or after a failure: whatever still runs is cancelled
        t.cancel()
    await asyncio.gather(body, *tasks, return_exceptions=True)
    if failures:
        raise failures[0]
    if done and not body.cancelled() and body.exception() is not None:
        raise body.exception()  # type: ignore[misc]  # a bug, not the endpoint: the CLI reports it as ours
    end = max((r.done for r in results.values() if r.done is not None), default=time.perf_counter())
    rows, itls = [], []
    from_usage = bool(results) and all(r.usage_tokens is not None for r in results.values())
    for i in sorted(results):
        r = results[i]
        tokens = r.usage_tokens if from_usage and r.usage_tokens is not None else r.chunks
        rows.append(RequestRow(input_len=input_lens[i], output_len=plan.output_lens[i], output_tokens=tokens,
                               sent_s=r.sent - start, ttft_s=None if r.first is None else r.first - r.sent,
                               e2e_s=(r.done or r.sent) - r.sent))
        itls.extend(r.gaps)
    return Run(rows, itls, max(0.0, end - start), stopped, from_usage)


async def served_models(endpoint: Endpoint, api_key: str | None) -> list[str]:
    """The ids /v1/models lists (also the check that the server answers at all)."""
    data = await get_json(endpoint, "/models", api_key=api_key)
    items = data.get("data") if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise EndpointError(f"{endpoint.url('/models')}: not an OpenAI model list (no 'data' array)")
    return [str(m["id"]) for m in items if isinstance(m, dict) and "id" in m]


def run(plan: Plan, progress: Callable[[int, int], None] | None = None) -> Run:
    """Replay the plan; EndpointError (one line) on the first request that fails."""
    return asyncio.run(_run(plan, progress))


def list_models(endpoint: Endpoint, api_key: str | None = None) -> list[str]:
    return asyncio.run(served_models(endpoint, api_key))
