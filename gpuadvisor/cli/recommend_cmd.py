"""`gpuadvisor recommend MODEL`: the cheapest way to meet the user's targets, rent or buy.

Prints the named picks (one line each, with what binds), buy versus rent, and the cost-versus-time
frontier; `--all` lists every option evaluated, `--rank` the old speed ranking of cards x GPU
counts. `--json` follows docs/recommend-json.md. The figures come from `gpuadvisor.api.advise`.
"""

from __future__ import annotations

import argparse
from typing import Any

from gpuadvisor.cli.advisor_args import add_target_args, advice_from
from gpuadvisor.cli.common import given, gpu_counts_arg, non_negative_float, positive_int, record_flags
from gpuadvisor.cli.estimate_cmd import (
    add_workload_args,
    describe_workload,
    efficiency_from,
    fmt_time,
    print_presets,
    workload_from,
)
from gpuadvisor.core.errors import UserError

PICK_ORDER = ("cheapest_rental", "cheapest_single_gpu", "cheapest_purchase", "fastest_within_budget", "best_value")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("recommend", help="the cheapest way to meet your targets: rent or buy, with what binds",
                       description="Evaluate every rentable instance (price snapshot) and every card x count to "
                       "buy for a workload; print the named picks, buy versus rent and the cost-versus-time "
                       "frontier. All figures are estimates. Serving uses --input-len and --output-len (prompt "
                       "and answer tokens per request); training reads --batch as the global batch (sequences "
                       "per step over all GPUs, as estimate does) and --tokens as the token budget.")
    add_workload_args(p)
    add_target_args(p)
    p.add_argument("--probe", metavar="RESULTS.json", help="probe result: measured figures replace the local card's")
    from gpuadvisor.cli.serve_args import add_serve_args

    add_serve_args(p, recommend=True)
    p.add_argument("--top", type=positive_int, default=12, help="rows of the frontier or option table (default 12)")
    p.add_argument("--all", action="store_true", help="list every option evaluated, cheapest first")
    r = p.add_argument_group("plain speed ranking (--rank)")
    r.add_argument("--rank", action="store_true", help="rank cards x 1/2/4/8 GPUs by speed instead (no prices)")
    r.add_argument("--gpu-counts", type=gpu_counts_arg, default=[1, 2, 4, 8], metavar="N,N", help="default 1,2,4,8")
    r.add_argument("--price-per-hour", type=non_negative_float, metavar="USD",
                   help="--rank: rental price per GPU-hour (cost = price x GPUs x time)")
    r.add_argument("--sort", default="time", choices=["time", "cost", "energy", "memory"], help="--rank order")
    p.set_defaults(func=run)
    record_flags(p)


def _refuse_unused(args: argparse.Namespace) -> None:
    """The steady-state advice (no --rate): the serving simulation's flags and --rank's are not read by it, so they
    are refused in one line rather than ignored."""
    simulation = given(args, "serve_engine", "lengths", "requests", "seed", "weights", "kv_dtype", "pp", "replicas")
    if simulation:
        raise UserError(f"{', '.join(simulation)}: flags of the search at a request rate (--rate with --p99-ttft / "
                        "--p99-tpot); the steady-state advice takes --quant, --users, --tok-s and --ttft")
    if not args.rank and given(args, "gpu_counts", "sort"):
        raise UserError("--gpu-counts and --sort order the --rank table; without --rank they are not used")


def run(args: argparse.Namespace) -> int:
    if args.list_models:
        return print_presets(args.json)
    if args.disaggregated and args.rate is None:
        raise UserError("--disaggregated needs a load and a target: --rate REQ/S and --p99-ttft / --p99-tpot")
    if args.rate is not None or args.p99_ttft is not None or args.p99_tpot is not None:
        from gpuadvisor.cli.serve_args import run_recommend

        return run_recommend(args)
    _refuse_unused(args)
    from gpuadvisor.cli.advisor_args import check_combinations
    from gpuadvisor.cli.common import catalog_from

    check_combinations(args)
    w = workload_from(args)
    efficiencies = efficiency_from(args)
    catalog = catalog_from(args)
    measured = None
    if args.probe:
        from gpuadvisor.core import results

        measured = results.load(args.probe)
    if args.rank:
        return _rank(args, w, efficiencies, catalog, measured)
    from gpuadvisor.compare import measured_by_card

    meas = measured_by_card(measured, catalog) if measured is not None else None
    if measured is not None and not meas:
        raise UserError(f"{args.probe}: its GPU matches no card in the catalog")
    advice = advice_from(args, w, catalog, efficiency=efficiencies, measured=meas)
    from gpuadvisor.advisor.market import rate_of

    rate = rate_of(args.currency)
    if args.json:
        from gpuadvisor.cli.common import print_json

        d = advice.to_dict(all_options=args.all)
        d["currency"] = {"code": args.currency.upper(), "per_usd": rate}
        print_json(d)
        return 0
    print_advice(advice, top=args.top, all_options=args.all, currency=args.currency.upper(), rate=rate)
    return 0


def money(usd: float | None, currency: str = "USD", rate: float = 1.0, digits: int = 2) -> str:
    if usd is None:
        return "-"
    v = usd * rate
    sym = "$" if currency == "USD" else ""
    suffix = "" if currency == "USD" else f" {currency}"
    text = f"{v:,.0f}" if abs(v) >= 1000 else f"{v:,.{digits}f}"
    return f"{sym}{text}{suffix}"


def print_advice(advice: Any, *, top: int = 12, all_options: bool = False, currency: str = "USD",
                 rate: float = 1.0) -> None:
    """The decision in text: picks, buy versus rent, the frontier table, notes."""
    from gpuadvisor.cli.common import console

    con = console()
    w, t = advice.workload, advice.targets
    decoder = w.model.kind == "decoder"
    wide = con.width >= COMPACT_BELOW  # a narrow terminal wraps at words; a wide one keeps lines whole
    con.print(f"[bold]{describe_workload(w, users=t.users if w.mode == 'inference' else None)}[/bold]",
              soft_wrap=wide)
    con.print(f"targets: {t.describe(w.mode, decoder, 'samples' if w.model.is_traced else 'tokens')}",
              soft_wrap=wide)
    if advice.prices:
        from gpuadvisor import presentation

        con.print(presentation.prices_line(advice), soft_wrap=wide)
        if advice.prices.stale_warning:
            con.print(f"[bold yellow]{advice.prices.stale_warning}[/bold yellow]", soft_wrap=wide)
    if currency != "USD":
        con.print(f"money in {currency} at {rate:g} per USD")
    con.print()
    if con.width < COMPACT_BELOW:
        _print_compact(con, advice, top=top, all_options=all_options, currency=currency, rate=rate)
        return
    if advice.picks:
        con.print("[bold]picks[/bold] (estimates)")
        shown = set()
        for name in PICK_ORDER:
            pk = advice.picks.get(name)
            if pk is None:
                continue
            again = " (the same as above)" if id(pk.option) in shown else ""
            shown.add(id(pk.option))
            con.print(f"  [bold]{pk.title}[/bold]{again}: {_conv(pk.line, currency, rate)}", soft_wrap=True)
        if advice.buy_vs_rent:
            con.print(f"  [bold]buy or rent[/bold]: {_conv(advice.buy_vs_rent.line, currency, rate)}", soft_wrap=True)
    else:
        con.print("[bold red]nothing evaluated meets every target[/bold red]")
        if advice.closest:
            con.print(f"  closest: {_conv(advice.closest.line, currency, rate)}", soft_wrap=True)
            con.print(f"  it would take: {advice.what_it_would_take}", soft_wrap=True)
    line = advice.local_line()
    if line:
        con.print(f"  {_conv(line, currency, rate)}", soft_wrap=True)
    rows = sorted([o for o in advice.options if o.hardware.kind != "local"],
                  key=lambda o: (not o.fits, o.cost is None, o.cost or 0.0, o.time_s or 0.0, o.label)) \
        if all_options else advice.frontier
    con.print()
    _table(con, rows[:top], w, currency, rate,
           title=(f"every option, cheapest first ({len(rows)})" if all_options else
                  f"cost-versus-time frontier: {len(rows)} of {len(advice.options)} options (none is both cheaper "
                  "and faster)"))
    for n in advice.notes:
        con.print(f"note: {n}", soft_wrap=True)


COMPACT_BELOW = 100  # terminal columns under which picks and options print one short line each


def _compact_cells(o: Any, currency: str, rate: float) -> list[str]:
    """An option's cost and speed in a few characters: $/h (serving) or the job's $ (training), the
    purchase price where it is bought, tok/s per user, time per request or the wall time."""
    buy = money(o.hardware.purchase_usd, currency, rate) if o.hardware.kind == "buy" else "-"
    if not o.fits:  # no run time for what does not fit
        return [money(o.usd_per_hour if o.serving else None, currency, rate), buy,
                "cannot run" if o.cannot_run else "no fit"]
    if o.serving:
        speed = (f"{o.per_user_tokens_per_s:,.0f}" if o.per_user_tokens_per_s is not None
                 else fmt_time(o.request_s))
        return [money(o.usd_per_hour, currency, rate), buy, speed]
    return [money(o.job_usd, currency, rate), buy, fmt_time(o.wall_s)]


def _print_compact(con: Any, advice: Any, *, top: int, all_options: bool, currency: str, rate: float) -> None:
    """The decision for a narrow terminal: each pick and each option on one line (cost and speed
    first), the full lines (`--json`, a wider terminal) carry the rest."""
    from rich.table import Table

    from gpuadvisor.presentation import short_label

    w = advice.workload
    speed_head = ("tok/s/user" if w.model.kind == "decoder" else "per request") if w.mode == "inference" \
        else "wall time"
    cost_head = "$/h" if w.mode == "inference" else "job $"

    def row_table(title: str) -> Any:
        t = Table(title=title, title_justify="left", box=None, pad_edge=False, show_header=True,
                  header_style="bold")
        t.add_column("", no_wrap=True, min_width=5)
        t.add_column("option", no_wrap=True, overflow="ellipsis", max_width=26)
        for c in (cost_head, "to buy", speed_head):
            t.add_column(c, justify="right", no_wrap=True)
        t.add_column("layout", no_wrap=True, overflow="ellipsis")
        return t

    _print_compact_decision(con, advice, row_table("picks (estimates)"), currency, rate, cost_head, speed_head)
    line = advice.local_line()
    if line:
        con.print(_conv(line, currency, rate))
    rows = sorted([o for o in advice.options if o.hardware.kind != "local"],
                  key=lambda o: (not o.fits, o.cost is None, o.cost or 0.0, o.time_s or 0.0, o.label)) \
        if all_options else advice.frontier
    if not rows:
        con.print("no option fits: nothing to put on the cost-versus-speed frontier")
        con.print(f"{len(advice.notes)} notes and each option's full line: a terminal of 100+ columns or --json")
        return
    t = row_table(f"{'every option' if all_options else 'cost-versus-speed frontier'}: "
                  f"{min(top, len(rows))} of {len(rows)} (ok: meets every target)")
    for o in rows[:top]:
        t.add_row("ok" if o.meets else "miss", short_label(o), *_compact_cells(o, currency, rate), o.layout)
    con.print(t)
    con.print(f"{len(advice.notes)} notes and each option's full line: a terminal of 100+ columns or --json")

def _print_compact_decision(con: Any, advice: Any, t: Any, currency: str, rate: float, cost_head: str,
                            speed_head: str) -> None:
    """The picks, one a row of `t`, and buy-or-rent; with none, the closest option and what it would take."""
    from gpuadvisor.presentation import short_label

    if advice.picks:
        shown = set()
        for name in PICK_ORDER:
            pk = advice.picks.get(name)
            if pk is None:
                continue
            o = pk.option
            short = {"cheapest_rental": "rent", "cheapest_single_gpu": "1 GPU", "cheapest_purchase": "buy",
                     "fastest_within_budget": "fast", "best_value": "value"}.get(name, name)
            t.add_row(short, short_label(o) + (" (=)" if id(o) in shown else ""),
                      *_compact_cells(o, currency, rate), o.layout)
            shown.add(id(o))
        con.print(t)
        if advice.buy_vs_rent:
            b = advice.buy_vs_rent
            word = {"buy": "buy", "rent": "rent (not worth buying)", "close": "close call"}[b.verdict]
            pays = f"buying pays back after {b.hours:,.0f} h" if b.hours else "renting costs less than power"
            con.print(f"buy or rent: {word}: {pays}")
    else:
        con.print("[bold red]nothing evaluated meets every target[/bold red]")
        if advice.closest:
            o = advice.closest.option
            cost, _, speed = _compact_cells(o, currency, rate)
            con.print(f"closest: {short_label(o)}: {cost_head} {cost}, "
                      + (f"{speed_head} {speed}" if o.fits else "does not fit"))
            con.print(f"it would take: {advice.what_it_would_take}")


def _conv(text: str, currency: str, rate: float) -> str:
    """Rewrite $ amounts of a one-line pick into the display currency."""
    if currency == "USD":
        return text
    import re

    def sub(m: re.Match[str]) -> str:
        v = float(m.group(1).replace(",", "")) * rate
        return f"{v:,.2f} {currency}" if v < 1000 else f"{v:,.0f} {currency}"

    return re.sub(r"\$([0-9][0-9,]*(?:\.[0-9]+)?)", sub, text)


def _table(con: Any, rows: list[Any], workload: Any, currency: str, rate: float, *, title: str) -> None:
    from rich.table import Table

    serving = workload.mode == "inference"
    decoder = workload.model.kind == "decoder"
    tab = Table(title=title, title_justify="left")
    if serving and decoder:
        cols = ["option", "$/h", "$/month", "$/1M tok", "tok/s/user", "first token", "users fit", "layout", "binds",
                "meets"]
    elif serving:
        cols = ["option", "$/h", "$/month", "$/1k req", "per request", "layout", "binds", "meets"]
    else:
        cols = ["option", "$/h", "job $", "wall time", "tok/s", "layout", "binds", "meets"]
    for c in cols:
        tab.add_column(c, justify="left" if c in ("option", "layout", "binds", "meets") else "right")
    for o in rows:
        if not o.fits:  # no run time for what does not fit; what cannot run says why in full
            tab.add_row(o.label, money(o.usd_per_hour, currency, rate), *(["-"] * (len(cols) - 5)), o.layout,
                        o.binds, o.cannot_run or "no: " + "; ".join(o.misses)[:60])
            continue
        per_h = money(o.usd_per_hour, currency, rate)
        meets = "yes" if o.meets else "no: " + "; ".join(o.misses)[:60]
        if serving and decoder:
            cells = [per_h, money(o.monthly_usd, currency, rate), money(o.usd_per_mtok, currency, rate),
                     "-" if o.per_user_tokens_per_s is None else f"{o.per_user_tokens_per_s:,.0f}",
                     fmt_time(o.ttft_s), "-" if o.max_users is None else f"{o.max_users:,}"]
        elif serving:
            cells = [per_h, money(o.monthly_usd, currency, rate), money(o.usd_per_1k_requests, currency, rate, 3),
                     fmt_time(o.request_s)]
        else:
            cells = [per_h, money(o.job_usd, currency, rate), fmt_time(o.wall_s),
                     "-" if o.tokens_per_s is None else f"{o.tokens_per_s:,.0f}"]
        tab.add_row(o.label, *cells, o.layout, o.binds, meets)
    con.print(tab)


def _rank(args: argparse.Namespace, workload: Any, efficiencies: Any, catalog: Any, measured: Any) -> int:
    """The speed ranking of cards x GPU counts (the behaviour of `recommend` before targets and prices)."""
    from gpuadvisor.advisor.ranking import fewest_gpus_per_card, recommend, why_not
    from gpuadvisor.cli.common import console, print_json

    options = recommend(workload, catalog, gpu_counts=args.gpu_counts, price_per_hour=args.price_per_hour,
                        measured=measured, sort_by=args.sort, efficiency=efficiencies,
                        price_basis=args.price_basis or "new")
    if measured is not None and not any(o.uses_measured for o in options):
        raise UserError(f"{args.probe}: its GPU matches no card in the catalog")
    fails = why_not(options)
    if args.json:
        print_json({"workload": workload.to_dict(), "model": workload.model.to_dict(), "sort_by": args.sort,
                    "price_basis": args.price_basis or "new",
                    "options": [o.to_dict() for o in options], "not_fitting": fails, "estimate": True})
        return 0
    from rich.table import Table

    con = console()
    con.print(f"[bold]{describe_workload(workload)}[/bold]")
    fitting = [o for o in options if o.fits] if args.all else fewest_gpus_per_card(options)
    if fitting:
        cost_head = "cost $" if args.price_per_hour is not None else f"price $ (to buy, {args.price_basis or 'new'})"
        what = "configurations" if args.all else "fewest GPUs per card"
        t = Table(title=f"{what} that fit, by {args.sort} (estimates)")
        for col in ("#", "card", "GPUs", "GiB/GPU", "time", cost_head, "energy Wh", "bound"):
            t.add_column(col, justify="left" if col in ("card", "bound") else "right")
        for i, o in enumerate(fitting[: args.top], 1):
            t.add_row(str(i), o.card + (" *" if o.uses_measured else ""), str(o.num_gpus),
                      f"{o.needed_gib:.1f}/{o.memory_gib_per_gpu:g}", fmt_time(o.time_s),
                      "-" if o.cost_usd is None else f"{o.cost_usd:,.2f}",
                      "-" if o.energy_wh is None else f"{o.energy_wh:,.1f}", o.compute.bound or "-")
        con.print(t)
    else:
        con.print("[bold red]no catalog card fits this workload at the GPU counts tried[/bold red]")
    if fails:
        con.print("[bold]cards that do not fit:[/bold]")
        for card, reason in fails.items():
            con.print(f"  {card}: {reason}")
    return 0
