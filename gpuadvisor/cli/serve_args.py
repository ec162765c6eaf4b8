"""Serving-simulation flags of `estimate` and `recommend` (--rate, --users, --input-len, --output-len, --lengths,
--kv-dtype, --weights, --pp, --replicas, --p99-ttft, --p99-tpot) and their runs. Bad values: one line, exit 2."""

from __future__ import annotations

import argparse
import math
from typing import Any

from gpuadvisor.cli.common import given, lengths_given
from gpuadvisor.core.errors import UserError
from gpuadvisor.core.limits import arg_type
from gpuadvisor.request import SERVE_ENGINES


def seconds(text: str) -> float:
    """'1s', '50ms', '0.2' (seconds) -> seconds."""
    s = str(text).strip().lower()
    mult = 1e-3 if s.endswith("ms") else 1.0
    s = s[:-2] if s.endswith("ms") else (s[:-1] if s.endswith("s") else s)
    try:
        v = float(s) * mult
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a duration: {text!r} (e.g. 1s, 50ms)") from None
    if not math.isfinite(v) or v <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive duration: {text!r}")
    return v


def add_serve_args(p: argparse.ArgumentParser, *, recommend: bool = False) -> None:
    g = p.add_argument_group("serving simulation (continuous batching; engines vllm, sglang, trtllm, llamacpp, hf)")
    g.add_argument("--rate", type=arg_type("rate"), metavar="REQ/S",
                   help="requests per second, Poisson arrivals (seeded; each figure the median of five draws)")
    if not recommend:
        g.add_argument("--users", dest="serve_users", type=arg_type("users"), metavar="N",
                       help="N users at once in steady state: the serving figures recommend prices (TTFT, TPOT, "
                            "tok/s per user)")
        g.add_argument("--concurrency", type=arg_type("users"), metavar="N",
                       help="simulation: N benchmark clients that start together, each sending its next request "
                            "when the last ends (benchmark_serving --max-concurrency), instead of --rate")
    g.add_argument("--lengths", metavar="DIST|FILE",
                   help="request lengths: fixed (default), sharegpt, sharegpt-vllm (vLLM's benchmark sample and "
                        "filter; --input-len and --output-len, if given, set their means), uniform:A-B, or a file of "
                        "'INPUT OUTPUT' lines")
    g.add_argument("--requests", type=arg_type("slo_requests" if recommend else "requests"), default=None,
                   metavar="N",
                   help="requests to simulate (default 1000, at most 10,000; recommend: 300, at most 1,000)")
    g.add_argument("--seed", type=arg_type("seed"), default=0,
                   help="random seed of the lengths and of the arrivals' first draw (default 0; a rate's figures are "
                        "the median of the draws seeded SEED to SEED + 4)")
    g.add_argument("--weights", default=None, metavar="FORMAT",
                   help="weight format: bf16 | fp16 | fp8 | fp4 | nvfp4 | mxfp4 | awq | gptq | q4_0 | q4_k_m | q5_k_m "
                        "| q8_0 (default: --dtype)")
    g.add_argument("--kv-dtype", default=None, metavar="DTYPE",
                   help="KV cache: bf16 | fp16 | fp8 | int8 (default: fp8 with fp8/fp4 weights where the engine has "
                        "it, else 16-bit)")
    g.add_argument("--pp", type=arg_type("pp"), default=1, help="pipeline-parallel stages (default 1)")
    g.add_argument("--replicas", type=arg_type("replicas"), default=1, help="data-parallel replicas (default 1)")
    if not recommend:
        g.add_argument("--dp-attention", action="store_true", default=False,
                       help="attention data-parallel over the --tp ranks, each with its own requests' KV cache, the "
                            "MLPs and experts tensor-parallel (SGLang --enable-dp-attention, TensorRT-LLM "
                            "enable_attention_dp, vLLM --data-parallel-size): DeepSeek's high-throughput layout")
    g.add_argument("--p99-ttft", type=seconds, metavar="DURATION", help="SLO: P99 time to first token (1s, 300ms)")
    g.add_argument("--p99-tpot", type=seconds, metavar="DURATION", help="SLO: P99 time per output token (50ms)")
    if not recommend:
        g.add_argument("--speculative", choices=("draft", "eagle", "mtp"), default=None,
                       help="speculative decoding: a draft model (--draft-model), EAGLE-style heads or the model's "
                            "MTP modules; the answer says the batch past which it stops paying")
        g.add_argument("--spec-tokens", type=int, default=None, metavar="K",
                       help="draft tokens per verify step (default: the method's preset)")
        g.add_argument("--spec-accept", type=float, default=None, metavar="MEAN",
                       help="mean tokens a verify step keeps (accepted drafts + 1, between 1 and K+1: the engine's "
                            "reported acceptance length; default: the method's published preset)")
        g.add_argument("--spec-topk", type=int, default=None, metavar="N",
                       help="--speculative eagle as a draft tree: candidates each draft step proposes per sequence "
                            "(SGLang's --speculative-eagle-topk; default 1: a chain)")
        g.add_argument("--spec-verify", type=int, default=None, metavar="N",
                       help="--speculative eagle as a draft tree: tokens a sequence verifies per step (SGLang's "
                            "--speculative-num-draft-tokens; default K + 1)")
        g.add_argument("--draft-model", default=None, metavar="MODEL", help="the draft model of --speculative draft")
        g.add_argument("--prefill-gpus", type=int, default=None, metavar="N",
                       help="disaggregated prefill/decode: N GPUs of prefill instances (the decode pool is --tp x "
                            "--replicas on --gpu); the KV cache crosses --kv-link")
        g.add_argument("--prefill-tp", type=int, default=None, metavar="T",
                       help="tensor parallel per prefill instance (default: --tp)")
        g.add_argument("--prefill-gpu", default=None, metavar="CARD",
                       help="the prefill pool's card (default: --gpu)")
        g.add_argument("--in-process", action="store_true", default=False,
                       help="an offline benchmark that drives the engine in-process (trtllm-bench, vLLM's LLM "
                            "class): no HTTP front-end, no streaming to clients (default: served over HTTP, as a "
                            "client measures it)")
        g.add_argument("--kv-link", default=None, metavar="LINK",
                       help="link between the pools: nvlink, pcie, network, or GB/s per GPU one way (default, "
                            "within one node of one card: NVLink on SXM boards, else PCIe at 25 GB/s; otherwise "
                            "the network at 50 GB/s per GPU)")
    if recommend:
        g.add_argument("--disaggregated", action="store_true", default=False,
                       help="with --rate and targets: also the cheapest disaggregated mix (a prefill and a decode "
                            "pool, one node split in two or two offers joined by the network), beside the colocated "
                            "pick")
        g.add_argument("--serve-engine", default="vllm", metavar="ENGINE",
                       help="engine for --rate / --p99-* (default vllm; one of " + ", ".join(SERVE_ENGINES) + ")")


def _model(args: argparse.Namespace) -> Any:
    from gpuadvisor.cli.estimate_cmd import workload_from

    w = workload_from(args)
    m = w.model
    if m.kind != "decoder" or not m.is_transformer:
        raise UserError(f"{m.name}: the serving simulation needs a decoder transformer")
    return m, w


def _refuse_steady_state_flags(args: argparse.Namespace) -> None:
    """The SLO search prices rentals of one serving engine against a simulated request stream: the steady-state
    targets, purchases and budgets of `recommend` do not apply to it, and are refused rather than ignored."""
    unused = ([f"--mode {args.mode}"] if str(args.mode) not in ("inference", "infer") else []) + given(
        args, "tok_s", "users", "ttft", "deadline", "tokens", "buy_only", "max_card_price", "price_basis", "rank",
        "budget_per_hour", "budget_per_job", "budget_per_month", "budget", "use_hours", "use_months",
        "hours_per_month", "hours_per_day") + ([f"--currency {args.currency}"] if str(args.currency).upper() != "USD"
                                               else [])
    if unused:
        raise UserError(f"{', '.join(unused)}: not used by the search for the cheapest rental that meets --p99-ttft / "
                        "--p99-tpot at --rate (drop them, or drop --rate and the P99 targets for the steady-state "
                        "advice)")
    if args.engine != "graphs":
        raise UserError(f"--engine {args.engine}: the search at --rate simulates --serve-engine (vllm, sglang, trtllm, "
                        "llamacpp or hf; default vllm)")
    if given(args, "pp", "replicas"):
        raise UserError("--pp and --replicas: the search at --rate picks each option's layout itself (the fewest "
                        "tensor-parallel GPUs that hold the model, replicas of them on larger offers)")


def run_recommend(args: argparse.Namespace) -> int:
    """`recommend MODEL --rate 5 --p99-ttft 1s --p99-tpot 50ms`: the cheapest rental meeting the SLOs."""
    from gpuadvisor.advisor.market import offers_for
    from gpuadvisor.cli.common import catalog_from, console, print_json
    from gpuadvisor.estimate.serve.lengths import parse_lengths
    from gpuadvisor.estimate.serve.profiles import serve_engine
    from gpuadvisor.estimator import serving_weights
    from gpuadvisor.request import ServingLoad

    if args.rate is None:
        raise UserError("--p99-ttft / --p99-tpot need a load: --rate REQ/S")
    _refuse_steady_state_flags(args)
    serve_engine(args.serve_engine)  # one-line error on an unknown engine
    m, w = _model(args)  # built once: its weight format and lengths are the request's, as `estimate` reads them
    offers, _ = offers_for(args.provider, args.region, spot=args.spot)
    if args.only:  # --only: the offers of the cards asked for
        from gpuadvisor.advisor.options import wanted

        cards = {c.name: c for c in catalog_from(args).cards}
        offers = [o for o in offers if o.card in cards and wanted(cards[o.card], tuple(args.only))]
    if not offers:
        raise UserError("no rental offers to choose from (price snapshot empty after the filters)")
    weights = serving_weights(w, ServingLoad(weights=args.weights))
    if args.p99_tpot is not None and w.gen_tokens <= 1 and args.lengths in (None, "fixed"):
        raise UserError("--p99-tpot: an answer of one token (--output-len 1) has no time per output token; give "
                        "--p99-ttft")
    # as the estimator's serving question
    lengths = parse_lengths(args.lengths, w.seq, max(1, w.gen_tokens), lengths_given(args))
    from gpuadvisor.advisor.serve_slo import serving_picks

    r = serving_picks(m, catalog_from(args), offers, disaggregated=args.disaggregated, engine=args.serve_engine,
                      weights=weights, kv_dtype=args.kv_dtype, lengths=lengths, rate=args.rate,
                      slo_ttft=args.p99_ttft, slo_tpot=args.p99_tpot, requests=args.requests or 300, seed=args.seed)
    pick, tried = r.colocated, r.colocated_tried
    if args.json:
        d = {"model": m.name, "rate": args.rate, "p99_ttft_s": args.p99_ttft, "p99_tpot_s": args.p99_tpot,
             "engine": args.serve_engine, "pick": pick.to_dict() if pick else None,
             "evaluated": [t.to_dict() for t in tried], "cannot_run": r.cannot_run, "stopped": r.colocated_stopped,
             "estimate": True}
        if r.disaggregated_tried is not None:
            d["disaggregated"] = {"pick": r.disaggregated.to_dict() if r.disaggregated else None,
                                  "evaluated": [t.to_dict() for t in r.disaggregated_tried], "cheaper": r.cheaper,
                                  "stopped": r.disaggregated_stopped}
        print_json(d)
        return 0
    con = console()
    con.print(f"[bold]{m.name} at {args.rate:g} req/s[/bold], {args.serve_engine}; targets: "
              + ", ".join(x for x in (f"P99 TTFT <= {args.p99_ttft * 1e3:,.0f} ms" if args.p99_ttft else "",
                                      f"P99 TPOT <= {args.p99_tpot * 1e3:,.1f} ms" if args.p99_tpot else "") if x)
              + " (simulated estimates)")
    if pick:
        con.print(f"  [bold]cheapest that meets them[/bold]: {pick.line()}", soft_wrap=True)
    else:
        con.print("[bold red]  nothing evaluated meets the targets[/bold red]"
                  + (f": the search stopped after {r.colocated_stopped}" if r.colocated_stopped else ""),
                  soft_wrap=True)
    misses = tried[:-1] if pick else tried
    shown = misses[-SHOWN_MISSES:] if pick else misses[:SHOWN_MISSES]  # those closest to the pick; else cheapest
    if len(misses) > len(shown):
        con.print(f"  {len(misses)} {'cheaper ' if pick else ''}options simulated miss; "
                  f"{'the dearest' if pick else 'the cheapest'} {len(shown)} (--json lists all):")
    for t in shown:
        con.print(f"  {'cheaper, ' if pick else ''}misses: {t.line()}", soft_wrap=True)
    if r.disaggregated_tried is not None:
        dpick, dtried = r.disaggregated, r.disaggregated_tried
        if dpick:
            con.print(f"  [bold]cheapest disaggregated mix that meets them[/bold]: {dpick.line()}", soft_wrap=True)
        else:
            con.print(f"[bold red]  no disaggregated mix evaluated meets the targets[/bold red] ({len(dtried)} "
                      "simulated" + (f"; the search stopped after {r.disaggregated_stopped}" if r.disaggregated_stopped
                                     else "") + ")", soft_wrap=True)
        for mix in dtried[-SHOWN_MISSES - 1:-1] if dpick else dtried[:SHOWN_MISSES]:
            con.print(f"  {'cheaper mix, ' if dpick else ''}misses: {mix.line()}", soft_wrap=True)
        con.print(f"  {_CHEAPER_LINE[r.cheaper or 'neither']}", soft_wrap=True)
    for card, why in r.cannot_run.items():  # the support matrix: never simulated, never picked
        con.print(f"  {'cheaper, ' if pick else ''}{card}: {why} (docs/support.md)", soft_wrap=True)
    return 0


#: misses printed of each search (--json has all of them)
SHOWN_MISSES = 6
_CHEAPER_LINE = {"colocated": "colocated is the cheaper way to meet them", "disaggregated":
                 "disaggregated is the cheaper way to meet them", "equal": "both cost the same per hour",
                 "neither": "neither way meets them among the options evaluated"}

