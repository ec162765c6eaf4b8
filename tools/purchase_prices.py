#!/usr/bin/env python3
"""Write the purchase prices in tools/data/purchase-prices.csv (the "new" basis: list prices and
estimates) and tools/data/street-prices.csv (the "street" basis: dated street and used prices)
into the catalog's `purchase` and `street` lines.

The CSVs (columns card, usd, kind, source, date, note) are the source of truth: one row per card
each, every price with the page it was read from and when. This script rewrites only the
`purchase:` and `street:` lines of each card (inserting `purchase:` after `launch_price_usd:` and
`street:` after `purchase:` where missing), so the YAML keeps its layout and a price change is a
one-line diff. A card with no new-price row gets `purchase: null`; one with no street row no
`street:` line. `gpuadvisor recommend --price-basis new|street` picks which of the two is used.

A card that is not sold on its own is listed in tools/data/not-sold-separately.csv (columns card,
why, source, date, note; why: cloud-only or systems-only) and gets a `not_sold:` line: the advisor
then offers no purchase of it and says why. A card for which no public price was found is marked
in tools/data/no-public-price.csv (columns card, searched, searches, note): the day of the search,
the searches done ('corpus: query' or 'github: repo path@commit', separated by ' | ') and what
they found. A mark (either kind) on a card that has a price, both marks on one card, or a mark on
no catalog card is an error; tests/test_purchase_prices.py requires every data-center card to
carry a price or a sourced not-sold reason, the no-public-price marks being the listed exceptions.

  python3 -m tools.purchase_prices            # rewrite catalog/*.yaml and docs/purchase-prices.md from the CSVs
  python3 -m tools.purchase_prices --check    # exit 1, naming the cards, if YAML (or that page) and CSVs disagree

Bad input (unknown card, duplicate row, bad usd/kind/source/date) is one line naming the row, exit 2.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from gpuadvisor.catalog import NEW_KINDS, STREET_KINDS, NotSold, Purchase
from gpuadvisor.core.errors import UserError
from gpuadvisor.core.fileio import atomic_write_text, read_text

ROOT = Path(__file__).resolve().parent.parent

DEFAULT_CSV = ROOT / "tools" / "data" / "purchase-prices.csv"
DEFAULT_STREET_CSV = ROOT / "tools" / "data" / "street-prices.csv"
DEFAULT_NO_PRICE_CSV = ROOT / "tools" / "data" / "no-public-price.csv"
DEFAULT_NOT_SOLD_CSV = ROOT / "tools" / "data" / "not-sold-separately.csv"
DEFAULT_CATALOG = ROOT / "catalog"
DOC = ROOT / "docs" / "purchase-prices.md"
DATACENTER = ("datacenter", "instinct")
COLUMNS = ["card", "usd", "kind", "source", "date", "note"]
NO_PRICE_COLUMNS = ["card", "searched", "searches", "note"]
NOT_SOLD_COLUMNS = ["card", "why", "source", "date", "note"]

_CARD_START = re.compile(r"^(?P<indent>\s*)- name:\s*(?P<name>.+?)\s*$")


def read_prices(path: Path, kinds: tuple[str, ...] = NEW_KINDS) -> dict[str, Purchase]:
    """Card name -> Purchase, validated (kind one of `kinds`); every problem is one line naming the row."""
    text = read_text(path, "purchase price CSV")
    reader = csv.DictReader(text.splitlines())
    if reader.fieldnames != COLUMNS:
        raise UserError(f"{path}: the header must be {','.join(COLUMNS)}")
    out: dict[str, Purchase] = {}
    for line, row in enumerate(reader, start=2):
        card = (row.get("card") or "").strip()
        where = f"{path}: row {line} ({card or 'no card'})"
        if not card:
            raise UserError(f"{where}: the card column is empty")
        if card in out:
            raise UserError(f"{where}: a second row for the same card")
        if None in row or any(v is None for v in row.values()):
            raise UserError(f"{where}: expected {len(COLUMNS)} columns")
        data: dict[str, object] = {k: row[k].strip() for k in ("usd", "kind", "source", "date")}
        note = row["note"].strip()
        data["note"] = note or None
        try:
            out[card] = Purchase.model_validate(data)
        except ValidationError as err:
            e = err.errors()[0]
            field = ".".join(str(x) for x in e["loc"]) or "(row)"
            raise UserError(f"{where}: field {field!r}: {e['msg']}") from None
        if out[card].kind not in kinds:
            raise UserError(f"{where}: kind {out[card].kind!r} does not belong in this file (here: {', '.join(kinds)})")
    return out


@dataclass(frozen=True)
class NoPublicPrice:
    """The explicit mark of a card no public price was found for, with the search that was done."""

    card: str
    searched: str  # YYYY-MM-DD
    searches: tuple[str, ...]  # 'pages: <query>', 'github: <repo> <path>@<commit> (...)'
    note: str  # what the searches found and why none of it is a price


def _card_rows(path: Path, what: str, columns: list[str]) -> Iterator[tuple[str, str, dict[str, str]]]:
    """(where, card, row) of each row of a CSV keyed by card: the header, the column count, an empty card column
    and a second row for a card are refused in one line naming the row."""
    reader = csv.DictReader(read_text(path, what).splitlines())
    if reader.fieldnames != columns:
        raise UserError(f"{path}: the header must be {','.join(columns)}")
    seen: set[str] = set()
    for line, row in enumerate(reader, start=2):
        card = (row.get("card") or "").strip()
        where = f"{path}: row {line} ({card or 'no card'})"
        if None in row or any(v is None for v in row.values()):
            raise UserError(f"{where}: expected {len(columns)} columns")
        if not card or card in seen:
            raise UserError(f"{where}: " + ("the card column is empty" if not card else "a second row for the card"))
        seen.add(card)
        yield where, card, row


def read_no_public_price(path: Path) -> dict[str, NoPublicPrice]:
    """Card name -> its no-public-price mark; every problem is one line naming the row."""
    out: dict[str, NoPublicPrice] = {}
    for where, card, row in _card_rows(path, "no-public-price CSV", NO_PRICE_COLUMNS):
        if not re.fullmatch(r"\d{4}-\d\d-\d\d", row["searched"].strip()):
            raise UserError(f"{where}: searched must be the day of the search, YYYY-MM-DD")
        searches = tuple(q.strip() for q in row["searches"].split(" | ") if q.strip())
        if not searches or not all(re.match(r"[a-z]+: \S", q) for q in searches):
            raise UserError(f"{where}: searches must list what was searched, as 'corpus: query' separated by ' | '")
        if not row["note"].strip():
            raise UserError(f"{where}: the note must say what the searches found")
        out[card] = NoPublicPrice(card, row["searched"].strip(), searches, row["note"].strip())
    return out


def check_no_public_price(marks: dict[str, NoPublicPrice], cards: set[str], prices: dict[str, Purchase],
                          street: dict[str, Purchase], where: Path,
                          not_sold: dict[str, NotSold] | None = None) -> None:
    """A mark names a catalog card that has no price in either table (a priced card loses its mark)
    and is not listed as not sold on its own (that list says why it has no price)."""
    for name in sorted(marks):
        if name not in cards:
            raise UserError(f"{where}: no catalog card named {name!r}")
        if name in prices or name in street:
            raise UserError(f"{where}: {name!r} has a price now: take its no-public-price row out")
        if name in (not_sold or {}):
            raise UserError(f"{where}: {name!r} is listed as not sold on its own: take its no-public-price row out")


def read_not_sold(path: Path) -> dict[str, NotSold]:
    """Card name -> why it is not sold on its own, validated; every problem is one line naming the row."""
    out: dict[str, NotSold] = {}
    for where, card, row in _card_rows(path, "not-sold-separately CSV", NOT_SOLD_COLUMNS):
        try:
            out[card] = NotSold.model_validate({k: row[k].strip() for k in NOT_SOLD_COLUMNS[1:]})
        except ValidationError as err:
            e = err.errors()[0]
            field = ".".join(str(x) for x in e["loc"]) or "(row)"
            raise UserError(f"{where}: field {field!r}: {e['msg']}") from None
    return out


def check_not_sold(not_sold: dict[str, NotSold], cards: set[str], prices: dict[str, Purchase],
                   street: dict[str, Purchase], where: Path) -> None:
    """A not-sold row names a catalog card with no price in either table."""
    for name in sorted(not_sold):
        if name not in cards:
            raise UserError(f"{where}: no catalog card named {name!r}")
        if name in prices or name in street:
            raise UserError(f"{where}: {name!r} has a price: a card with a price is sold, take its not-sold row out")


def _cards_after(updates: list[FileUpdate]) -> list[Any]:
    """The catalog cards as the updated files give them, in file order."""
    from gpuadvisor.catalog import NOT_CARD_FILES, CatalogFile

    return [c for u in updates if u.path.name not in NOT_CARD_FILES
            for c in CatalogFile.model_validate(yaml.safe_load(u.new)).cards]


def render(p: Purchase | None) -> str:
    """One YAML flow mapping; strings JSON-quoted (valid YAML) so URLs and commas stay intact."""
    if p is None:
        return "null"
    usd = int(p.usd) if float(p.usd).is_integer() else p.usd
    parts = [f"usd: {usd}", f"kind: {p.kind}", f"date: {json.dumps(p.date)}", f"source: {json.dumps(p.source)}"]
    if p.note:
        parts.append(f"note: {json.dumps(p.note, ensure_ascii=False)}")
    return "{" + ", ".join(parts) + "}"


def render_not_sold(n: NotSold) -> str:
    """The `not_sold:` flow mapping, quoted as `render` quotes."""
    return (f"{{why: {n.why}, date: {json.dumps(n.date)}, source: {json.dumps(n.source)}, "
            f"note: {json.dumps(n.note, ensure_ascii=False)}}}")


@dataclass(frozen=True)
class FileUpdate:
    path: Path
    old: str
    new: str
    cards: tuple[str, ...]  # every card in the file
    changed: tuple[str, ...]  # cards whose purchase line changed


def _card_name(raw: str) -> str:
    value = yaml.safe_load(raw)
    return str(value)


def update_text(text: str, prices: dict[str, Purchase], path: Path,
                street: dict[str, Purchase] | None = None,
                not_sold: dict[str, NotSold] | None = None) -> tuple[str, list[str], list[str]]:
    """The file with each card's purchase (and street, not_sold) line set; (new text, cards, changed cards)."""
    street = street or {}
    not_sold = not_sold or {}
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    cards: list[str] = []
    changed: list[str] = []
    i = 0
    while i < len(lines):
        m = _CARD_START.match(lines[i])
        if not m:
            out.append(lines[i])
            i += 1
            continue
        name = _card_name(m.group("name"))
        cards.append(name)
        field_indent = m.group("indent") + "  "
        j = i + 1
        while j < len(lines) and not _CARD_START.match(lines[j]) and (
            lines[j].startswith(field_indent) or not lines[j].strip()
        ):
            j += 1
        block = _set_purchase(lines[i:j], field_indent, render(prices.get(name)), name, path)
        block = _set_street(block, field_indent, street.get(name))
        n = not_sold.get(name)
        block = _set_after_purchase(block, field_indent, "not_sold", None if n is None else render_not_sold(n))
        if block != lines[i:j]:
            changed.append(name)
        out.extend(block)
        i = j
    return "".join(out), cards, changed


def _set_purchase(block: list[str], indent: str, value: str, name: str, path: Path) -> list[str]:
    new_line = f"{indent}purchase: {value}\n"
    key = re.compile(rf"^{re.escape(indent)}(?P<key>[A-Za-z_]+):")
    for k, line in enumerate(block):
        m = key.match(line)
        if m and m.group("key") == "purchase":
            end = k + 1  # a hand-written block mapping continues on deeper-indented lines
            while end < len(block) and block[end].startswith(indent + " "):
                end += 1
            return [*block[:k], new_line, *block[end:]]
    for k, line in enumerate(block):
        m = key.match(line)
        if m and m.group("key") == "launch_price_usd":
            return [*block[:k + 1], new_line, *block[k + 1:]]
    raise UserError(f"{path}: card {name!r}: no launch_price_usd line to put the purchase line after")


def _set_street(block: list[str], indent: str, p: Purchase | None) -> list[str]:
    """Set, insert (after `purchase:`) or remove the card's `street:` line."""
    return _set_after_purchase(block, indent, "street", None if p is None else render(p))


def _set_after_purchase(block: list[str], indent: str, field: str, value: str | None) -> list[str]:
    """Set, insert (after `purchase:` and `street:`) or remove (value None) the card's `field:` line."""
    key = re.compile(rf"^{re.escape(indent)}(?P<key>[A-Za-z_]+):")
    keys = [(k, m.group("key")) for k, line in enumerate(block) if (m := key.match(line))]
    at = next((k for k, name in keys if name == field), None)
    if at is not None:
        end = at + 1
        while end < len(block) and block[end].startswith(indent + " "):
            end += 1
        block = [*block[:at], *block[end:]]
    if value is None:
        return block
    anchors = ("purchase", "street") if field != "street" else ("purchase",)
    after = max(k for k, line in enumerate(block) if (m := key.match(line)) and m.group("key") in anchors)
    end = after + 1
    while end < len(block) and block[end].startswith(indent + " "):
        end += 1
    return [*block[:end], f"{indent}{field}: {value}\n", *block[end:]]


def plan(csv_path: Path, catalog_dir: Path, street_path: Path | None = None,
         not_sold_path: Path | None = None) -> list[FileUpdate]:
    prices = read_prices(csv_path)
    street = read_prices(street_path, STREET_KINDS) if street_path else {}
    not_sold = read_not_sold(not_sold_path) if not_sold_path else {}
    files = sorted(p for p in catalog_dir.glob("*.yaml") if p.is_file())
    if not files:
        raise UserError(f"no catalog files in {catalog_dir}")
    updates = []
    seen: set[str] = set()
    for path in files:
        old = read_text(path, "catalog file")
        new, cards, changed = update_text(old, prices, path, street, not_sold)
        seen.update(cards)
        updates.append(FileUpdate(path, old, new, tuple(cards), tuple(changed)))
    tables: tuple[tuple[dict[str, Any], Path | None], ...] = (
        (prices, csv_path), (street, street_path), (not_sold, not_sold_path))
    for table, where in tables:
        unknown = sorted(set(table) - seen)
        if unknown:
            raise UserError(f"{where}: no catalog card named {unknown[0]!r}" + (
                f" (and {len(unknown) - 1} more)" if len(unknown) > 1 else ""))
    if not_sold_path:
        check_not_sold(not_sold, seen, prices, street, not_sold_path)
    return updates


def summary(updates: list[FileUpdate], prices: dict[str, Purchase], street: dict[str, Purchase] | None = None,
            not_sold: dict[str, NotSold] | None = None) -> str:
    cards = [c for u in updates for c in u.cards]
    kinds = Counter(prices[c].kind for c in cards if c in prices)
    unpriced = sum(1 for c in cards if c not in prices)
    by_kind = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))
    street = street or {}
    skinds = Counter(street[c].kind for c in cards if c in street)
    st = ", ".join(f"{n} {k}" for k, n in sorted(skinds.items()))
    only = sum(1 for c in cards if c in street and c not in prices)
    sold_not = sum(1 for c in cards if c in (not_sold or {}))
    return (f"{len(cards)} cards: {sum(kinds.values())} with a new price ({by_kind}), {unpriced} without; "
            f"{sum(skinds.values())} with a street price ({st or 'none'}), {only} of them with no new price; "
            f"{sold_not} not sold on their own")


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def coverage_page(cards: list[Any], marks: dict[str, NoPublicPrice]) -> str:
    """docs/purchase-prices.md: how many cards of each family carry a price of which kind, and for every
    data-center card its price(s), its not-sold reason or its no-public-price mark, each with source and date."""
    from collections import defaultdict

    fams: dict[str, Counter[str]] = defaultdict(Counter)
    for c in cards:
        f = fams[c.family]
        f["cards"] += 1
        f["new"] += c.purchase is not None
        f["street"] += c.street is not None
        f["not sold"] += c.not_sold is not None
        f["none"] += c.purchase is None and c.street is None and c.not_sold is None
    lines = [
        "# Purchase prices: coverage and sources",
        "",
        "Generated by `python3 -m tools.purchase_prices` from `tools/data/purchase-prices.csv` (new: list prices",
        "and estimates), `tools/data/street-prices.csv` (dated street and used prices),",
        "`tools/data/not-sold-separately.csv` and `tools/data/no-public-price.csv`; `python3 -m tools.purchase_prices",
        "--check` (run by the tests) keeps it in sync. The rule for data-center cards: a dated price with its source,",
        "or a sourced reason the card is not sold on its own (then `recommend` never offers to buy it and says why);",
        "the cards with neither are listed last, each with the day and the searches that found no citable price.",
        "Schema: [catalog/README.md](../catalog/README.md).",
        "",
        "| family | cards | new price | street/used price | not sold on its own | none |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for fam in sorted(fams):
        f = fams[fam]
        lines.append(f"| {fam} | {f['cards']} | {f['new']} | {f['street']} | {f['not sold']} | {f['none']} |")
    dc = [c for c in cards if c.family in DATACENTER]
    priced = [c for c in dc if c.purchase is not None or c.street is not None]
    unsold = [c for c in dc if c.not_sold is not None]
    missing = [c for c in dc if c not in priced and c not in unsold]
    lines += ["", f"## Data-center cards: {len(priced)} of {len(dc)} priced, {len(unsold)} not sold on their own, "
              f"{len(missing)} with neither", "",
              "| card | price (kind, date) | source | what it is |", "| --- | --- | --- | --- |"]
    for c in priced:
        for p in (c.purchase, c.street):
            if p is not None:
                usd = f"${p.usd:,.0f}"
                lines.append(f"| {_cell(c.name)} | {usd} ({p.kind}, {p.date}) | {p.source} | {_cell(p.note or '')} |")
    lines += ["", "### Not sold on their own (never offered to buy)", "",
              "| card | why | date | source | note |", "| --- | --- | --- | --- | --- |"]
    for c in [c for c in cards if c.not_sold is not None]:
        n = c.not_sold
        lines.append(f"| {_cell(c.name)} | {n.why} | {n.date} | {n.source} | {_cell(n.note)} |")
    lines += ["", "### No citable public price found", "",
              "| card | searched | what the searches found |", "| --- | --- | --- |"]
    for c in missing:
        m = marks.get(c.name)
        lines.append(f"| {_cell(c.name)} | {m.searched if m else '-'} | {_cell(m.note) if m else 'no mark'} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--csv", type=Path, default=DEFAULT_CSV, help="the price table (default: %(default)s)")
    ap.add_argument("--street-csv", type=Path, default=None,
                    help=f"the street/used price table (default: {DEFAULT_STREET_CSV.relative_to(ROOT)} with the "
                         "default --csv; none with another --csv)")
    ap.add_argument("--not-sold-csv", type=Path, default=None,
                    help=f"the cards not sold on their own (default: {DEFAULT_NOT_SOLD_CSV.relative_to(ROOT)} with "
                         "the default --csv; none with another --csv)")
    ap.add_argument("--catalog", type=Path, default=DEFAULT_CATALOG, help="catalog folder (default: %(default)s)")
    ap.add_argument("--check", action="store_true", help="change nothing; exit 1 if the YAML and the CSV disagree")
    args = ap.parse_args(argv)
    try:
        street_csv = args.street_csv or (DEFAULT_STREET_CSV if args.csv == DEFAULT_CSV else None)
        not_sold_csv = args.not_sold_csv or (DEFAULT_NOT_SOLD_CSV if args.csv == DEFAULT_CSV else None)
        updates = plan(args.csv, args.catalog, street_csv, not_sold_csv)
        prices = read_prices(args.csv)
        street = read_prices(street_csv, STREET_KINDS) if street_csv else {}
        not_sold = read_not_sold(not_sold_csv) if not_sold_csv else {}
        page = None
        if args.csv == DEFAULT_CSV and DEFAULT_NO_PRICE_CSV.is_file():
            marks = read_no_public_price(DEFAULT_NO_PRICE_CSV)
            check_no_public_price(marks, {c for u in updates for c in u.cards},
                                  prices, street, DEFAULT_NO_PRICE_CSV, not_sold)
            if args.catalog == DEFAULT_CATALOG:
                page = coverage_page(_cards_after(updates), marks)
        stale = [(u.path.name, c) for u in updates for c in u.changed]
        if args.check:
            if stale:
                names = ", ".join(f"{c} ({f})" for f, c in stale[:5]) + (" ..." if len(stale) > 5 else "")
                print(f"{len(stale)} cards disagree with {args.csv.name}: {names}; "
                      f"run tools/purchase_prices.py to rewrite them", file=sys.stderr)
                return 1
            if page is not None and (not DOC.is_file() or DOC.read_text() != page):
                print(f"{DOC.relative_to(ROOT)} is out of date; run tools/purchase_prices.py to rewrite it",
                      file=sys.stderr)
                return 1
            print(f"catalog agrees with {args.csv.name}; {summary(updates, prices, street, not_sold)}")
            return 0
        for u in updates:
            if u.new != u.old:
                atomic_write_text(u.path, u.new, force=True)
        if page is not None:
            atomic_write_text(DOC, page, force=True)
        print(f"updated {len(stale)} cards in {sum(1 for u in updates if u.new != u.old)} files; "
              f"{summary(updates, prices, street, not_sold)}")
        return 0
    except UserError as e:
        print(f"purchase_prices: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
