"""`gpuadvisor catalog list|show NAME|validate`: browse and check the GPU catalog."""

from __future__ import annotations

import argparse

from gpuadvisor.catalog import Card, find, load_catalog
from gpuadvisor.cli.common import catalog_from, console, fmt, non_negative_float, print_json
from gpuadvisor.core.errors import UserError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("catalog", help="browse and validate the GPU catalog")
    csub = p.add_subparsers(dest="catalog_command", metavar="ACTION", required=True, parser_class=type(p))

    ls = csub.add_parser("list", help="list cards, optionally filtered")
    ls.add_argument("--vendor", choices=["nvidia", "amd"])
    ls.add_argument(
        "--family", choices=["geforce", "professional", "datacenter", "jetson", "instinct", "radeon"]
    )
    ls.add_argument("--min-memory", type=non_negative_float, metavar="GIB", help="at least this much memory")
    ls.add_argument("--match", metavar="TEXT", help="fuzzy name filter, e.g. '4090' or 'h100 sxm'")
    ls.add_argument("--json", action="store_true", help="machine-readable output")
    ls.set_defaults(func=run_list)

    show = csub.add_parser("show", help="every figure of one card, with sources")
    show.add_argument("name", help="card name or alias, fuzzy ('h100 sxm', '4090')")
    show.add_argument("--json", action="store_true")
    show.set_defaults(func=run_show)

    val = csub.add_parser("validate", help="check every catalog file (shipped and --catalog DIR)")
    val.add_argument("--json", action="store_true")
    val.set_defaults(func=run_validate)


def run_list(args: argparse.Namespace) -> int:
    catalog = catalog_from(args)
    cards = catalog.filter(args.vendor, args.family, args.min_memory)
    if args.match:
        wanted = {c.name for c in find(catalog, args.match)}
        cards = [c for c in cards if c.name in wanted]
    if args.json:
        print_json([c.model_dump() for c in cards])
        return 0
    if not cards:
        print("no cards match")
        return 0
    from rich.table import Table

    table = Table(title=f"{len(cards)} cards", show_lines=False, pad_edge=False)
    table.add_column("card", no_wrap=True)
    table.add_column("arch", overflow="ellipsis", max_width=12, no_wrap=True)
    for col in ("GiB", "GB/s", "FP32 TF", "BF16 TF", "TDP W"):
        table.add_column(col, justify="right", no_wrap=True)
    for c in cards:
        table.add_row(
            c.name,
            c.architecture,
            fmt(c.memory_gib, 0),
            fmt(c.memory_bandwidth_gbs, 0),
            fmt(c.fp32_tflops, 1),
            fmt(c.tensor_tflops("bf16"), 0),
            fmt(c.tdp_w, 0),
        )
    console().print(table)
    return 0


def run_show(args: argparse.Namespace) -> int:
    from gpuadvisor.catalog import resolve_card

    card = resolve_card(catalog_from(args), args.name)  # 'Jetson' names eight cards: refused, as --gpu does
    if args.json:
        print_json(card.model_dump())
        return 0
    for line in describe(card):
        print(line)
    return 0


def describe(card: Card) -> list[str]:
    d = card.model_dump()
    lines = [f"{card.name}  ({card.vendor} {card.family}, {card.architecture}, {card.release_year})"]
    for key, value in d.items():
        if key in ("name", "tensor_dense_tflops", "sources", "notes"):
            continue
        if isinstance(value, list):
            value = ", ".join(value) or "-"
        if key == "purchase" and card.purchase is not None:
            value = card.purchase.describe()
        if key == "street" and card.street is not None:
            value = card.street.describe()
        if key == "not_sold" and card.not_sold is not None:
            value = card.not_sold.describe()
        lines.append(f"  {key:<24} {'-' if value is None else value}")
    t = d["tensor_dense_tflops"]
    tensor = ", ".join(f"{k} {v if v is not None else '-'}" for k, v in t.items() if k not in ("basis", "note"))
    basis = {"datasheet": "", "derived": " [derived]", "none": " [no tensor cores]"}[t.get("basis") or "datasheet"]
    lines.append(f"  {'tensor_dense_tflops':<24} {tensor}  (int8 in TOPS){basis}")
    if t.get("note"):
        lines.append(f"  {'tensor note':<24} {t['note']}")
    lines += _reach_lines(card)
    for field, url in card.sources.items():
        lines.append(f"  source for {field}: {url}")
    for what, entry in (("purchase", card.purchase), ("street", card.street), ("not_sold", card.not_sold)):
        if entry is not None:
            lines.append(f"  source for {what}: {entry.source}")
    if card.notes:
        lines.append(f"  notes: {card.notes}")
    return lines


def run_validate(args: argparse.Namespace) -> int:
    from gpuadvisor.architectures import architecture_of, load_architectures

    catalog = load_catalog(args.catalog or [])  # raises UserError (exit 2) on the first problem
    architectures = load_architectures()
    for card in catalog.cards:
        architecture_of(card, architectures)  # an arch_id not in architectures.yaml: one UserError line
    files = sorted({str(p) for p in catalog.origin.values()})
    missing_source = [c.name for c in catalog.cards if not c.source]
    if missing_source:
        raise UserError(f"cards without a source: {', '.join(missing_source)}")
    if args.json:
        print_json({"valid": True, "cards": len(catalog), "files": files})
    else:
        print(f"catalog valid: {len(catalog)} cards in {len(files)} files")
    return 0


def _reach_lines(card: Card) -> list[str]:
    """What the estimates take this card to reach of its datasheet figures, and on what (docs/card-reach.md)."""
    from gpuadvisor import bandwidth_reach, matmul_reach

    lines = []
    matmul = matmul_reach.reach_of(card)
    if matmul is not None:
        lines.append(f"  {'matmul reach':<24} {matmul.value:.2f} of the 16-bit tensor peak ({matmul.basis})")
    copy = bandwidth_reach.reach_of(card)
    if copy is not None:
        lines.append(f"  {'bandwidth reach':<24} {copy[0]:.2f} of the memory bandwidth ({copy[1]})")
    return lines
