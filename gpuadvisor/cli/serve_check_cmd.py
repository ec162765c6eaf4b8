"""`gpuadvisor serve-check URL --model NAME (--rate R | --concurrency N) --requests N`: replay a load against an
OpenAI-compatible server, measure it as a client does (TTFT, ITL, TPOT, throughput; vLLM benchmark_serving's
conventions) and print it beside the estimate for the same model, card, engine and load. `--save FILE` keeps the
measurement for `estimate --calibration FILE`. Any network failure: one line, exit 2."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from gpuadvisor.core.errors import UserError
from gpuadvisor.core.limits import Limit, arg_type

#: a serve-check run is bounded: at most this many requests and this much wall time
MAX_REQUESTS = 5_000
MAX_CONCURRENCY = 1_024
MAX_TIME_LIMIT_S = 3_600.0
DEFAULT_TIME_LIMIT_S = 600.0
LIMITS = {
    "requests": Limit("--requests", 1, MAX_REQUESTS, "requests"),
    "concurrency": Limit("--concurrency", 1, MAX_CONCURRENCY, "clients"),
    "time_limit": Limit("--time-limit", 1, MAX_TIME_LIMIT_S, "s", integer=False),
}
API_KEY_ENV = "OPENAI_API_KEY"


def _limited(name: str) -> Any:
    limit = LIMITS[name]

    def parse(text: str) -> float:
        try:
            value: float = int(text) if limit.integer else float(text.removesuffix("s"))
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r} ({limit.describe()})") from None
        if not limit.contains(value):
            raise argparse.ArgumentTypeError(f"{text} is out of range: {limit.describe()}")
        return value

    parse.__name__ = name
    return parse


def _engine(text: str) -> str:
    from gpuadvisor.estimate.serve.profiles import engine_specs, is_serve_engine

    if not is_serve_engine(text):
        raise argparse.ArgumentTypeError(f"unknown engine {text!r} (one of {', '.join(engine_specs())})")
    return text.lower()


def register(sub: argparse._SubParsersAction) -> None:
    from gpuadvisor.estimate.serve.profiles import engine_specs
    from gpuadvisor.request import DEFAULT_CARD, DEFAULT_INPUT_LEN, DEFAULT_OUTPUT_LEN

    p = sub.add_parser("serve-check", help="measure an OpenAI-compatible endpoint and compare it with the estimate",
                       description=__doc__)
    p.add_argument("url", metavar="URL", help="the server: http://HOST:PORT (the API under /v1), or .../v1")
    p.add_argument("--model", required=True, metavar="MODEL",
                   help="the model it serves, as gpuadvisor names it: preset (llama-3.1-8b), parameter count or "
                        "config.json path (for the estimate and the prompts' token ids)")
    p.add_argument("--served-model", metavar="NAME",
                   help="the model name sent in each request (default: the one /v1/models lists)")
    d = p.add_argument_group("deployment (for the estimate beside the measurement)")
    d.add_argument("--gpu", default=DEFAULT_CARD, metavar="CARD", help=f"catalog card (default {DEFAULT_CARD})")
    d.add_argument("--gpus", type=arg_type("tp"), default=1, metavar="N", help="tensor-parallel GPUs (default 1)")
    d.add_argument("--engine", type=_engine, default="vllm", metavar="ENGINE",
                   help="the server's engine: " + ", ".join(engine_specs()) + " (default vllm)")
    d.add_argument("--weights", metavar="FORMAT", help="weight format served (default: the model's dtype)")
    g = p.add_argument_group("load")
    how = g.add_mutually_exclusive_group(required=True)
    how.add_argument("--rate", type=arg_type("rate"), metavar="REQ/S", help="Poisson arrivals at this rate")
    how.add_argument("--concurrency", type=_limited("concurrency"), metavar="N",
                     help="N clients that start together, each sending its next request when the last ends")
    g.add_argument("--input-len", type=arg_type("input_len"), default=None, metavar="TOKENS",
                   help=f"prompt tokens per request (default {DEFAULT_INPUT_LEN})")
    g.add_argument("--output-len", type=arg_type("output_len"), default=None, metavar="TOKENS",
                   help=f"tokens generated per request (default {DEFAULT_OUTPUT_LEN})")
    g.add_argument("--lengths", metavar="DIST|FILE",
                   help="request lengths: fixed (default), sharegpt, uniform:A-B, or a file of 'INPUT OUTPUT' lines")
    g.add_argument("--requests", type=_limited("requests"), required=True, metavar="N",
                   help=f"requests to send (at most {MAX_REQUESTS:,})")
    g.add_argument("--time-limit", type=_limited("time_limit"), default=DEFAULT_TIME_LIMIT_S, metavar="S",
                   help=f"stop after this many seconds, whatever is left (default {DEFAULT_TIME_LIMIT_S:g}, "
                        f"at most {MAX_TIME_LIMIT_S:g})")
    g.add_argument("--seed", type=arg_type("seed"), default=0, help="seed of arrivals, lengths and prompts")
    g.add_argument("--prompt", choices=("ids", "text"), default="ids",
                   help="ids: prompts sent as token ids, exact lengths (vLLM, SGLang, trtllm-serve, llama.cpp's "
                        "server; default); text: the server's own text of those ids, counted by its tokenizer "
                        "endpoint, for servers whose completions take text only (llama-cpp-python's)")
    p.add_argument("--save", metavar="FILE", help="write the measurement (JSON) for estimate --calibration FILE")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.epilog = f"An API key, where the server wants one, is read from ${API_KEY_ENV}."
    p.set_defaults(func=run)


def _estimate_request(args: argparse.Namespace, requests: int) -> Any:
    """The estimate for what is measured; built (and so checked) before a request is sent."""
    from gpuadvisor.servecheck.calibrate import estimate_request

    return estimate_request(_measurement_stub(args, requests), requests=requests)


def _measurement_stub(args: argparse.Namespace, requests: int) -> Any:
    from gpuadvisor.servecheck.measurement import SCHEMA_ID, Distribution, Figures, Measurement

    empty = Distribution(mean=None, p50=None, p90=None, p99=None, count=0)
    return Measurement(
        schema=SCHEMA_ID, gpuadvisor_version="", measured_at="", endpoint=args.url,
        target=_target(args, args.served_model or ""), load=_load(args), output_tokens_from="chunks",
        stopped_by_time_limit=False,
        figures=Figures(completed=requests, duration_s=0.0, requests_per_s=None, output_tokens_per_s=None,
                        total_tokens_per_s=None, mean_input_len=None, mean_output_tokens=None, ttft_s=empty,
                        tpot_s=empty, itl_s=empty, e2e_s=empty),
        requests=[])


def _target(args: argparse.Namespace, served: str) -> Any:
    from gpuadvisor.servecheck.measurement import Target

    return Target(model=args.model, served_model=served, card=args.gpu, gpus=args.gpus, engine=args.engine,
                  weights=args.weights)


def _load(args: argparse.Namespace) -> Any:
    from gpuadvisor.cli.common import lengths_given
    from gpuadvisor.request import DEFAULT_INPUT_LEN, DEFAULT_OUTPUT_LEN
    from gpuadvisor.servecheck.measurement import LoadSpec

    # a ShareGPT shape takes the given lengths as its means; a range or a file that draws one itself refuses its flag
    # (lengths.parse_lengths, where the replay and the estimate draw them)
    return LoadSpec(rate=args.rate, concurrency=args.concurrency, input_len=args.input_len or DEFAULT_INPUT_LEN,
                    output_len=args.output_len or DEFAULT_OUTPUT_LEN, lengths=args.lengths,
                    lengths_given=lengths_given(args), requests=args.requests,
                    seed=args.seed, time_limit_s=args.time_limit, prompt=args.prompt)


def _served_model(endpoint: Any, wanted: str | None, model: str, api_key: str | None) -> str:
    from gpuadvisor.servecheck.http import EndpointError
    from gpuadvisor.servecheck.replay import list_models

    try:
        names = list_models(endpoint, api_key)
    except EndpointError as e:
        raise UserError(str(e)) from None
    if wanted:
        if names and wanted not in names:
            raise UserError(f"--served-model {wanted}: {endpoint.origin} serves {', '.join(names)}")
        return wanted
    if len(names) == 1:
        return names[0]
    if model in names:
        return model
    if not names:
        raise UserError(f"{endpoint.url('/models')} lists no model: name it with --served-model")
    raise UserError(f"{endpoint.origin} serves {', '.join(names)}: name one with --served-model")


def run(args: argparse.Namespace) -> int:
    from datetime import datetime, timezone
    from pathlib import Path

    from gpuadvisor import __version__, api
    from gpuadvisor.cli.common import catalog_from
    from gpuadvisor.estimate.serve.lengths import parse_lengths
    from gpuadvisor.servecheck import measurement as ms
    from gpuadvisor.servecheck.http import EndpointError, parse_endpoint
    from gpuadvisor.servecheck.replay import Plan
    from gpuadvisor.servecheck.replay import run as replay

    try:
        endpoint = parse_endpoint(args.url)
    except ValueError as e:
        raise UserError(str(e)) from None
    if args.save and not Path(args.save).resolve().parent.is_dir():
        raise UserError(f"--save {args.save}: the folder {Path(args.save).resolve().parent} does not exist")
    cat = catalog_from(args)
    request = _estimate_request(args, args.requests)  # bad model, card, engine or lengths: refused before sending
    load = _load(args)
    lengths = parse_lengths(load.lengths, load.input_len, load.output_len, load.lengths_given)
    inputs, outputs = lengths.draw(load.requests, load.seed)  # the lengths the estimate's simulation draws
    vocab = int(request.workload.model.vocab_size or 32000)
    api_key = os.environ.get(API_KEY_ENV) or None
    served = _served_model(endpoint, args.served_model, args.model, api_key)
    plan = Plan(endpoint=endpoint, served_model=served, input_lens=[int(x) for x in inputs],
                output_lens=[int(x) for x in outputs], rate=load.rate, concurrency=load.concurrency,
                time_limit_s=load.time_limit_s, seed=load.seed, vocab_size=vocab, api_key=api_key,
                prompt=load.prompt)
    try:
        result = replay(plan, _progress() if sys.stderr.isatty() and not args.json else None)
    except EndpointError as e:
        raise UserError(str(e)) from None
    if not result.rows:
        raise UserError(f"no request completed within --time-limit {load.time_limit_s:g} s")
    m = ms.Measurement(
        schema=ms.SCHEMA_ID, gpuadvisor_version=__version__,
        measured_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        endpoint=endpoint.url("/completions"), target=_target(args, served), load=load,
        output_tokens_from="usage" if result.tokens_from_usage else "chunks",
        stopped_by_time_limit=result.stopped_by_time_limit,
        figures=ms.figures(result.rows, result.itls, result.duration_s), requests=result.rows)
    if args.save:
        ms.save(m, args.save)
    if len(result.rows) != args.requests:
        request = _estimate_request(args, len(result.rows))
    answer = api.estimate(request, cat=cat)
    rows = comparison(m, answer)
    if args.json:
        from gpuadvisor.cli.common import print_json

        print_json({"measurement": m.model_dump(by_alias=True, exclude={"requests"}), "estimate": answer.to_dict(),
                    "comparison": rows, "saved": args.save})
        return 0
    print_comparison(m, answer, rows, args.save)
    return 0


def _progress() -> Any:
    def show(done: int, total: int) -> None:
        sys.stderr.write(f"\r  {done}/{total} requests")
        if done == total:
            sys.stderr.write("\n")
        sys.stderr.flush()

    return show


#: (figure, measurement key, statistics, the estimate's percentile key)
_ROWS = (
    ("TTFT", "ttft_s", ("mean", "p50", "p90", "p99"), "ttft_s"),
    ("TPOT", "tpot_s", ("mean", "p50", "p90", "p99"), "tpot_s"),
    ("ITL", "itl_s", ("mean", "p50", "p90", "p99"), "itl_s"),
    ("E2E latency", "e2e_s", ("mean", "p50", "p90", "p99"), "latency_s"),
)


def comparison(m: Any, answer: Any) -> list[dict[str, Any]]:
    """Measured beside estimated, figure by figure (seconds; throughputs per second); ratio = measured / estimate."""
    pct = (answer.serving.percentiles if answer.serving else None) or {}
    sim = answer.detail.get("serving_simulation", {}).get("figures", {})
    out = []
    # the estimate's mean inter-token latency where it gives no ITL percentiles (the simulation's decode steps), and
    # the median of its gaps between streamed tokens (the simulation's `itl_p50_s`)
    itl_mean = getattr(answer.serving, "itl_s", None) if answer.serving else None
    if "itl_s" not in pct and itl_mean is not None:
        pct = {**pct, "itl_s": {"mean": itl_mean, "p50": sim.get("itl_p50_s")}}
    for label, key, stats, est_key in _ROWS:
        dist = getattr(m.figures, key)
        for stat in stats:
            out.append(_row(f"{label} {stat.upper() if stat != 'mean' else 'mean'}", "s", getattr(dist, stat),
                            (pct.get(est_key) or {}).get(stat)))
    out.append(_row("request throughput", "req/s", m.figures.requests_per_s, sim.get("requests_per_s")))
    out.append(_row("output throughput", "tok/s", m.figures.output_tokens_per_s, sim.get("output_tokens_per_s")))
    return out


def _row(figure: str, unit: str, measured: float | None, estimate: float | None) -> dict[str, Any]:
    ratio = measured / estimate if measured is not None and estimate else None
    return {"figure": figure, "unit": unit, "measured": measured, "estimate": estimate, "ratio": ratio}


def print_comparison(m: Any, answer: Any, rows: list[dict[str, Any]], saved: str | None) -> None:
    from rich.table import Table

    from gpuadvisor.cli.common import console

    con = console()
    f, t, ld = m.figures, m.target, m.load
    load = f"{ld.rate:g} req/s (Poisson)" if ld.rate is not None else f"{ld.concurrency} clients (closed loop)"
    con.print(f"[bold]{m.endpoint}[/bold] serving {t.served_model}: {load}, {f.completed} of {ld.requests} requests "
              f"in {f.duration_s:,.1f} s" + (" (stopped at --time-limit)" if m.stopped_by_time_limit else ""))
    con.print(f"  measured as a client sees it (vLLM benchmark_serving conventions); output tokens counted from "
              f"{'the server usage' if m.output_tokens_from == 'usage' else 'streamed chunks'}, "
              f"{f.mean_output_tokens or 0:,.1f} a request (asked {ld.output_len if not ld.lengths else ld.lengths})")
    con.print(f"  estimate: {answer.profile}, {t.model} on {t.gpus} x {answer.card} (simulated at the same load)")
    table = Table(box=None, pad_edge=False)
    for col, just in (("figure", "left"), ("measured", "right"), ("estimate", "right"), ("measured/estimate",
                                                                                           "right")):
        table.add_column(col, justify=just)  # type: ignore[arg-type]
    for r in rows:
        table.add_row(r["figure"], _show(r["measured"], r["unit"]), _show(r["estimate"], r["unit"]),
                      f"{r['ratio']:.2f}x" if r["ratio"] is not None else "-")
    con.print(table)
    if saved:
        con.print(f"  saved to {saved}: estimate ... --calibration {saved} fits the {t.engine} profile's host and "
                  "front-end figures to it")


def _show(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    if unit == "s":
        return f"{value * 1e3:,.2f} ms"
    return f"{value:,.2f} {unit}"
