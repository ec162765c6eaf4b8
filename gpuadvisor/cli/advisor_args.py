"""Target and price flags shared by `recommend` and `run`, and their translation into the
advisor's typed inputs. Bad values become one-line errors (exit 2) through argparse or UserError."""

from __future__ import annotations

import argparse
from typing import Any

from gpuadvisor.cli.common import positive_float
from gpuadvisor.core.limits import arg_type


def _duration(text: str) -> float:
    from gpuadvisor.advisor.targets import parse_duration_h
    from gpuadvisor.core.errors import UserError

    try:
        return parse_duration_h(text)
    except UserError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _kwh(text: str) -> float:
    from gpuadvisor.cli.common import non_negative_float

    return non_negative_float(text)


def _advice_engine(text: str) -> str:
    """graphs or eager; a simulated engine's name (vllm, sglang, ...) is told where it applies."""
    if text in ("graphs", "eager"):
        return text
    from gpuadvisor.request import SERVE_ENGINES

    if text.split("@")[0] in SERVE_ENGINES:
        raise argparse.ArgumentTypeError(
            f"{text!r} is simulated, not priced in steady state: recommend --rate R --p99-ttft T --serve-engine "
            f"{text} searches rentals with it, estimate --engine {text} simulates it; here graphs or eager")
    raise argparse.ArgumentTypeError(f"invalid choice: {text!r} (choose from 'graphs', 'eager')")


def _list(text: str) -> list[str]:
    out = [x.strip() for x in text.split(",") if x.strip()]
    if not out:
        raise argparse.ArgumentTypeError(f"an empty list: {text!r}")
    return out


def add_target_args(p: argparse.ArgumentParser) -> None:
    t = p.add_argument_group("targets (serving: inference; training: training, lora, qlora)")
    t.add_argument("--tok-s", type=positive_float, metavar="N",
                   help="serving: tokens/s per user (default 20 when no TTFT target is set)")
    t.add_argument("--users", type=arg_type("users"), default=1, metavar="N",
                   help="serving: concurrent users (default 1)")
    t.add_argument("--ttft", type=positive_float, metavar="SECONDS",
                   help="serving: time to first token at most (models that do not decode: time per request)")
    t.add_argument("--deadline", type=_duration, metavar="DURATION",
                   help="training: finish the --tokens budget within this (24h, 14d, 90m)")
    b = p.add_argument_group("budget, ownership and electricity")
    b.add_argument("--budget-per-hour", type=positive_float, metavar="USD",
                   help="the hardware may cost at most this per hour")
    b.add_argument("--budget-per-job", type=positive_float, metavar="USD",
                   help="training: the whole job may cost at most this")
    b.add_argument("--budget-per-month", type=positive_float, metavar="USD",
                   help="serving: a month (at --hours-per-month) may cost at most this")
    b.add_argument("--budget", type=positive_float, metavar="USD",
                   help="kept for old scripts: --budget-per-job for training, --budget-per-month for serving "
                        "(not a card price: that is --max-card-price)")
    b.add_argument("--max-card-price", type=positive_float, metavar="USD",
                   help="a card to buy may cost at most this, each")
    use = b.add_mutually_exclusive_group()
    use.add_argument("--use-hours", type=positive_float, metavar="H",
                     help="buy or rent: the hardware works this many hours in all (a one-off job or project)")
    use.add_argument("--use-months", type=positive_float, metavar="M",
                     help="buy or rent: it is used this many months at --hours-per-month/--hours-per-day "
                          "(default: serving 36 months; training one job)")
    own = b.add_mutually_exclusive_group()
    own.add_argument("--hours-per-month", type=positive_float, metavar="H",
                     help="hours of use per month, for monthly cost and buy versus rent (default 730: always on)")
    own.add_argument("--hours-per-day", type=positive_float, metavar="H", help="the same per day (x 730/24)")
    b.add_argument("--usd-per-kwh", type=_kwh, default=0.15, metavar="USD", help="electricity price (default 0.15)")
    b.add_argument("--utilisation", type=positive_float, default=0.8, metavar="F",
                   help="fraction of TDP drawn while working (default 0.8)")
    b.add_argument("--amortise-months", type=positive_float, default=36, metavar="N",
                   help="bought hardware is written off over this many months (default 36)")
    pr = p.add_argument_group("prices and hardware")
    pr.add_argument("--provider", type=_list, action="extend", default=[], metavar="NAME[,NAME]",
                    help="only these cloud providers (see `gpuadvisor prices list`)")
    pr.add_argument("--region", metavar="REGION", help="only offers in this region")
    pr.add_argument("--spot", action="store_true", help="spot / preemptible prices instead of on-demand")
    pr.add_argument("--currency", default="USD", metavar="CODE", help="show money in this currency (default USD)")
    src = pr.add_mutually_exclusive_group()
    src.add_argument("--rent-only", action="store_true", help="only rental offers")
    src.add_argument("--buy-only", action="store_true", help="only cards to buy")
    pr.add_argument("--price-basis", default=None, choices=["new", "street"],
                    help="purchase prices: new = list/launch prices (default); street = dated street or used "
                         "prices (a card without one keeps its new price, and says so)")
    pr.add_argument("--only", type=_list, action="extend", default=[], metavar="CARD[,CARD]",
                    help="only cards whose name contains this, or of this family (jetson, geforce, ...)")
    pr.add_argument("--engine", default="graphs", type=_advice_engine, metavar="{graphs,eager}",
                    help="serving engine: graphs = vLLM-class, CUDA graphs (default); eager = HF generate()")


def check_combinations(args: argparse.Namespace) -> None:
    """Flags that would be ignored together are refused, one line each."""
    from gpuadvisor.core.errors import UserError

    if getattr(args, "spot", False) and getattr(args, "buy_only", False):
        raise UserError("--spot prices rentals, and --buy-only leaves no rental: drop one of them")
    serving = getattr(args, "mode", "inference") in ("inference", "infer")
    if getattr(args, "budget_per_job", None) is not None and serving:
        raise UserError("--budget-per-job applies to training, LoRA and QLoRA; serving takes --budget-per-month or "
                        "--budget-per-hour")
    if getattr(args, "budget_per_month", None) is not None and not serving:
        raise UserError("--budget-per-month applies to serving; a training job takes --budget-per-job")
    if getattr(args, "budget", None) is not None and (getattr(args, "budget_per_job", None) is not None
                                                      or getattr(args, "budget_per_month", None) is not None):
        raise UserError("give --budget-per-job or --budget-per-month, not --budget as well")
    if getattr(args, "max_card_price", None) is not None and getattr(args, "rent_only", False):
        raise UserError("--max-card-price caps cards to buy, and --rent-only leaves none: drop one of them")
    training = getattr(args, "mode", "inference") in ("training", "lora", "qlora")
    if training:  # the serving targets: a training job has none of them
        given = [flag for flag, value in (("--tok-s", getattr(args, "tok_s", None)),
                                          ("--ttft", getattr(args, "ttft", None))) if value is not None]
        if getattr(args, "users", 1) != 1:
            given.append("--users")
        if given:
            raise UserError(f"{' and '.join(given)} {'is a' if len(given) == 1 else 'are'} serving target"
                            f"{'' if len(given) == 1 else 's'} (--mode inference); a training job takes --tokens "
                            "and --deadline")
    if serving and getattr(args, "deadline", None) is not None:
        raise UserError("--deadline applies to training, LoRA and QLoRA (the --tokens budget's wall time); serving "
                        "takes --tok-s, --users and --ttft")
    if serving and getattr(args, "tokens", None):
        raise UserError("--tokens is a training budget (--mode training, lora or qlora); serving takes --tok-s, "
                        "--users and --ttft")
    if getattr(args, "price_per_hour", None) is not None and not getattr(args, "rank", False):
        raise UserError("--price-per-hour applies to --rank only; without it the rental prices come from the price "
                        "snapshot (use --budget-per-hour for a cap)")


def targets_from(args: argparse.Namespace) -> Any:
    """The advisor's Targets from the flags above (validated: UserError on nonsense)."""
    from gpuadvisor.advisor.targets import HOURS_PER_MONTH, Targets

    check_combinations(args)
    hpm = args.hours_per_month
    if args.hours_per_day is not None:
        if args.hours_per_day > 24:
            from gpuadvisor.core.errors import UserError

            raise UserError(f"--hours-per-day must be at most 24, got {args.hours_per_day:g}")
        hpm = args.hours_per_day * HOURS_PER_MONTH / 24
    from gpuadvisor.request import DEFAULT_INPUT_LEN, DEFAULT_OUTPUT_LEN

    output_len = getattr(args, "output_len", None) or DEFAULT_OUTPUT_LEN
    input_len = getattr(args, "input_len", None)
    return Targets(
        tokens_per_s=args.tok_s, users=args.users, ttft_s=args.ttft,
        context=(input_len or DEFAULT_INPUT_LEN) + output_len if input_len or output_len != DEFAULT_OUTPUT_LEN
        else None, output_tokens=output_len, deadline_h=args.deadline, usd_per_hour=args.budget_per_hour,
        budget_usd=args.budget, budget_job_usd=args.budget_per_job, budget_month_usd=args.budget_per_month,
        max_card_usd=args.max_card_price, use_hours=args.use_hours, use_months=args.use_months,
        hours_per_month=hpm or HOURS_PER_MONTH, usd_per_kwh=args.usd_per_kwh,
        utilisation=args.utilisation, amortise_months=args.amortise_months,
    ).validate()


def advice_from(args: argparse.Namespace, workload: Any, catalog: Any, *, efficiency: Any = None,
                measured: Any = None, local_cards: tuple[str, ...] = ()) -> Any:
    """Run the advisor with the flags: prices loaded and filtered, targets checked."""
    from gpuadvisor import api

    if args.price_basis and args.rent_only:
        from gpuadvisor.core.errors import UserError

        raise UserError("--price-basis sets purchase prices, and --rent-only evaluates no purchase")
    return api.advise(workload, targets_from(args), catalog=catalog, providers=args.provider, region=args.region,
                      spot=args.spot, currency=args.currency, rent=not args.buy_only, buy=not args.rent_only,
                      only=tuple(args.only), engine=args.engine, efficiency=efficiency, measured=measured,
                      local_cards=local_cards, price_basis=args.price_basis or "new")
