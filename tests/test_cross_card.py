"""The tool against published results on cards besides the H100/H200 (bench/cross_card.py; data
tests/data/published-cross-card.json plus the older published files' rows on other cards): a CI gate.

Two kinds of bound. TODAY: the figures of 2026-11-27 (before issue 34's physics), so that nothing gets worse: each
split's and each card family's share within 0.8x-1.25x may not fall, and its worst ratio and its geometric mean may not
move further from 1. TARGET: the issue's bounds (>= 85 % within 0.8x-1.25x, every row within 0.67x-1.5x, every
family's geometric mean within 0.9x-1.1x, the held-out card included), met since vLLM's FlashAttention 2 query tiles
were priced (2026-12-06) and gated since.
"""

from __future__ import annotations

import json
import math

import pytest
from accuracy_gates import TODAY_FAMILIES, TODAY_SPLITS  # the bounds the calibration sweep holds too

from bench import cross_card as X


def _dev(x: float) -> float:
    return max(x, 1 / x)


@pytest.fixture(scope="module")
def rows() -> list[X.Row]:
    return X.evaluate()


def test_every_row_has_its_source_and_conditions():
    raws = X.load_raw()
    for r in raws:
        url, table = X.source_of(r)
        assert url.startswith("https://") and table, r["id"]
        assert r["value"] > 0 and r["metric"], r["id"]
        line = X.conditions(r)  # raises KeyError where a condition the task needs is missing
        assert len(line) > 30, (r["id"], line)
    for r in (r for r in raws if r["origin"] in (X.DATA.name, X.DATA2.name, X.DATA3.name)):  # commit-pinned, dated
        src = r["source"]
        assert "/blob/" in src["url"] and src["read"], r["id"]
        if r["kind"] == "vision":
            assert {"mode", "batch", "channels_last", "img_size", "precision", "framework"} <= r.keys(), r["id"]
        if r["kind"] == "encoder":
            assert {"mode", "batch", "seq_len", "precision", "framework"} <= r.keys(), r["id"]
        if r["kind"] == "llm-training":
            assert {"framework", "precision", "seq_len", "global_batch", "micro_batch", "sharding"} <= r.keys()


def test_the_set_covers_the_issue():
    """At least 60 rows on at least six cards besides the H100/H200, all four tasks, the fitted cards left out,
    one whole card held out and about a third of the rows held out in all."""
    raws = X.load_raw()
    cards = {r["card"] for r in raws}
    assert len(raws) >= 60 and len(cards) >= 6, (len(raws), cards)
    assert not cards & set(X.FITTED_CARDS)
    assert {r["task"] for r in raws} == set(X.TASKS)
    assert {"GeForce RTX 3090", "GeForce RTX 4090", "A100 SXM4 80GB", "L40S", "B200"} <= cards
    held_card = [r for r in raws if r["card"] == X.HELD_OUT_CARD]
    assert held_card and all(r["held_out"] for r in held_card)
    assert 0.28 <= sum(r["held_out"] for r in raws) / len(raws) <= 0.40


def test_the_data_files_are_what_their_tool_writes():
    from tools.published_cross_card import document, document2, document3

    assert X.DATA.read_text() == document(), "run python3 tools/published_cross_card.py"
    assert X.DATA2.read_text() == document2(), "run python3 tools/published_cross_card.py"
    assert X.DATA3.read_text() == document3(), "run python3 tools/published_cross_card.py"


def test_a_later_row_moves_no_earlier_row_between_splits():
    """The second file's rows are split within it: the first file's flags are those it was built with."""
    stored = {r["id"]: r["held_out"] for r in json.loads(X.DATA.read_text())["rows"]}
    assert {r["id"]: r["held_out"] for r in X.load_raw() if r["origin"] == X.DATA.name} == stored
    assert {r["origin"] for r in X.load_raw()} >= {X.DATA.name, X.DATA2.name}


def test_a_later_serving_row_moves_no_earlier_row_between_splits():
    """published-serving.json grows at its end: the rows that were there when the split was fixed keep the flags the
    rule gives them alone, and the later ones hold out a third among themselves."""
    results = json.loads((X.TESTS_DATA / "published-serving.json").read_text())["results"]
    early = {e["id"] for e in results[:X.SERVING_ROWS_AT_SPLIT]}
    rows = [r for r in X.load_raw() if r["origin"] == "published-serving.json"]
    first = [r for r in rows if r["id"] in early]
    assert {r["id"]: r["held_out"] for r in first} == X.held_out_flags((r["id"], r["card"]) for r in first)
    later = [r for r in rows if r["id"] not in early]
    assert later and abs(sum(r["held_out"] for r in later) / len(later) - 1 / 3) < 0.05


def test_held_out_rule():
    flags = X.held_out_flags([("b", "L40S"), ("a", "L40S"), ("z", X.HELD_OUT_CARD)] +
                             [(f"c{i}", "B200") for i in range(8)])
    assert flags["z"]
    others = sorted(k for k in flags if k != "z")
    assert [k for k in others if flags[k]] == [others[X.HELD_OUT_EVERY - 1], others[2 * X.HELD_OUT_EVERY - 1]]


def test_summary_arithmetic():
    """stats(): geometric mean, worst either way and shares, on rows with known ratios."""
    def row(i: int, ratio: float) -> X.Row:
        return X.Row(id=f"r{i}", task="llm-serving", card="L40S", family="Ada", metric="m", published=100.0,
                     estimate=100.0 * ratio, held_out=False, source_url="https://x", source_table="t",
                     conditions="c", origin="o")

    s = X.stats([row(0, 0.5), row(1, 2.0), row(2, 1.1), row(3, 1.4)])
    assert s["geomean"] == pytest.approx((0.5 * 2.0 * 1.1 * 1.4) ** 0.25)
    assert s["worst"] in (0.5, 2.0) and s["in_band"] == 0.25 and s["in_outer"] == 0.5


@pytest.mark.parametrize("split", sorted(TODAY_SPLITS))
def test_no_split_gets_worse_than_today(rows, split):
    share, worst, geomean = TODAY_SPLITS[split]
    s = X.splits(rows)[split]
    assert s["in_band"] >= share, s
    assert _dev(s["worst"]) <= worst, s
    assert _dev(s["geomean"]) <= geomean, s


@pytest.mark.parametrize("family", sorted(TODAY_FAMILIES))
def test_no_family_gets_worse_than_today(rows, family):
    share, worst, geomean = TODAY_FAMILIES[family]
    s = X.per_family(rows)[family]
    assert s["in_band"] >= share, s
    assert _dev(s["worst"]) <= worst, s
    assert _dev(s["geomean"]) <= geomean, s


def test_every_family_is_gated(rows):
    assert set(X.per_family(rows)) == set(TODAY_FAMILIES)


def test_the_issue_target(rows):
    """>= 85 % within 0.8x-1.25x and every family's geometric mean within 0.9x-1.1x (the held-out RTX 4090
    included)."""
    s = X.stats(rows)
    assert s["in_band"] >= X.TARGET_SHARE, s
    off = {f: round(v["geomean"], 2) for f, v in X.per_family(rows).items()
           if not X.GEOMEAN_BAND[0] <= v["geomean"] <= X.GEOMEAN_BAND[1]}
    assert not off, off


def test_every_row_within_the_outer_band(rows):
    """Issue 34: every published row within 0.67x-1.5x (SGLang's A100 burst's mean TPOT, 0.53x on lognormal ShareGPT
    lengths, 1.09x drawn from measured ones: docs/serving.md 'The mean TPOT of a burst')."""
    outside = [(r.id, round(r.ratio, 2)) for r in rows if not X.OUTER_BAND[0] <= r.ratio <= X.OUTER_BAND[1]]
    assert not outside, outside


def test_markdown_section(rows):
    md = X.markdown_section(rows)
    assert md.startswith("## Across cards")
    for r in rows:
        assert f"| {r.id} |" in md and r.source_url in md
    assert all(f"| {f} |" in md for f in TODAY_FAMILIES)
    assert not any(math.isnan(r.ratio) for r in rows)


def test_a_wrong_constant_fails_the_family_gate(rows):
    """Convolutions priced a quarter slower (CONV_EFF_NATIVE_MMA x 0.75: an Ampere card's own MMA) in the RTX 3090's
    vision rows move the Ampere GA10x family out of the bounds that today's figures meet."""
    from gpuadvisor.estimate import calibration as cal

    def within(family: list[X.Row]) -> bool:
        share, worst, geomean = TODAY_FAMILIES["Ampere GA10x"]
        s = X.stats(family)
        return s["in_band"] >= share and _dev(s["worst"]) <= worst and _dev(s["geomean"]) <= geomean

    family = [r for r in rows if r.family == "Ampere GA10x"]
    redo = {r["id"] for r in X.load_raw() if r["card"] == "GeForce RTX 3090" and r["task"].startswith("vision")}
    with cal.override(CONV_EFF_NATIVE_MMA=cal.CONV_EFF_NATIVE_MMA * 0.75):
        slower = {r.id: r for r in X.evaluate([r for r in X.load_raw() if r["id"] in redo])}
    assert within(family)
    assert not within([slower.get(r.id, r) for r in family])


def test_the_readme_claim_holds_and_is_current(rows):
    """The README's sentence on other cards states today's shares (rounded down) of all rows and of the held-out
    third: each is met, and none understates today's by a point or more."""
    import re

    from bench import REPO

    readme = " ".join((REPO / "README.md").read_text().split())
    m = re.search(r"against (\d+) published results on (\d+) cards .*? (\d+) % are within 0\.8x-1\.25x, (\d+) % of the "
                  r"held-out third", readme)
    assert m, "README: the sentence on published results across cards is missing"
    count, cards, share, held = (int(g) for g in m.groups())
    s = X.splits(rows)
    assert count == len(rows) and cards == len({r.card for r in rows}), (count, cards)
    for stated, today in ((share, s["all"]["in_band"]), (held, s["held out"]["in_band"])):
        assert stated <= 100 * today < stated + 1, (stated, today)
