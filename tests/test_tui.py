"""The Textual UI, driven headless with Pilot, plus SVG snapshots of the main screens at 80x24.

Snapshots use a frozen six-card catalog (tests/data/tui-catalog) and saved probe results, so
they do not change when the shipped catalog grows. Regenerate after a deliberate UI or
estimate change with: pytest tests/test_tui.py --snapshot-update (and look at them).
"""

from __future__ import annotations

import asyncio
import functools
import os
import threading
from pathlib import Path

import pytest

pytest.importorskip("textual")

from textual.widgets import DataTable, Input, Select, Static, TabbedContent

from gpuadvisor import results
from gpuadvisor.catalog import Catalog, load_file
from gpuadvisor.tui.app import GpuAdvisorApp, bar

DATA = Path(__file__).parent / "data"
FAKE = DATA / "fake-probe.json"
SIZE = (80, 24)


def sync(fn):
    """Run an async test with asyncio.run (no pytest-asyncio needed)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return asyncio.run(fn(*args, **kwargs))

    return wrapper


def frozen_catalog() -> Catalog:
    cards = load_file(DATA / "tui-catalog" / "cards.yaml")
    return Catalog(cards=tuple(cards), origin={c.name: DATA / "tui-catalog" / "cards.yaml" for c in cards})


def make_app(run=True, **kw) -> GpuAdvisorApp:
    kw.setdefault("debounce_s", 0.05)
    return GpuAdvisorApp(results.load(FAKE) if run else None, frozen_catalog(), **kw)


def ranking_rows(app: GpuAdvisorApp) -> list[list[str]]:
    table = app.query_one("#ranking", DataTable)
    return [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]


def message(app: GpuAdvisorApp, wid: str = "#form-msg") -> str:
    """The text a Static shows (Text, Rich renderables and plain strings alike)."""
    from rich.console import Console

    console = Console(width=200, record=True, file=open(os.devnull, "w"))  # noqa: SIM115
    console.print(app.query_one(wid, Static).content)
    return console.export_text()


async def settle(pilot, seconds: float = 0.2) -> None:
    await pilot.pause(seconds)
    await pilot.pause()


@sync
async def test_ranking_updates_as_you_type():
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        before = ranking_rows(app)
        assert before and "llama-3-8b" in message(app)
        model = app.query_one("#model", Input)
        assert app.focused is model
        model.value = ""
        await pilot.press(*"llama-3.1-70b")
        await settle(pilot)
        after = ranking_rows(app)
        assert "llama-3.1-70b" in message(app)
        assert after != before
        # a 70B model in bf16 needs more memory per GPU than an 8B one on the same option
        needs_8b = {r[1]: float(r[2]) for r in before}
        needs_70b = {r[1]: float(r[2]) for r in after}
        common = set(needs_8b) & set(needs_70b)
        assert common and all(needs_70b[k] > needs_8b[k] for k in common)


@sync
async def test_changes_are_debounced():
    app = make_app(debounce_s=0.5)
    calls = []
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        original = app.recompute

        def counting() -> None:
            calls.append(1)
            original()

        app.recompute = counting  # type: ignore[method-assign]
        app.query_one("#model", Input).value = ""
        await pilot.press(*"mistral-7b")
        await pilot.pause(0.1)
        assert calls == []  # still typing: nothing recomputed yet
        await settle(pilot, 0.7)
        assert len(calls) == 1
        assert "mistral-7b" in message(app)


@pytest.mark.parametrize(
    ("field", "text", "expect"),
    [
        ("#batch", "4z", "batch must be a whole number"),
        ("#batch", "0", "batch must be >= 1"),
        ("#gpus", "two", "GPUs: a count or a list"),
        ("#gpus", "0", "GPUs: counts from 1"),
        ("#price", "cheap", "price must be a number"),
        ("#seq", "-5", "sequence must be >= 0"),
        ("#model", "not-a-model-xyz", "unknown model"),
        ("#model", "", "type a model"),
    ],
)
@sync
async def test_bad_input_shows_inline_message_and_keeps_running(field, text, expect):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        good = ranking_rows(app)
        app.query_one(field, Input).value = text
        await settle(pilot)
        assert expect in message(app)
        assert app.query_one("#form-msg").has_class("error")
        assert ranking_rows(app) == good  # the last good ranking stays
        app.query_one(field, Input).value = {"#model": "llama-3-8b", "#price": "", "#seq": ""}.get(field, "1")
        await settle(pilot)
        assert not app.query_one("#form-msg").has_class("error")


@sync
async def test_mode_and_price_change_the_ranking():
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.query_one("#mode", Select).value = "training"
        app.query_one("#price", Input).value = "2.5"
        await settle(pilot)
        assert "training" in message(app) or "forward/backward" in message(app) or "optimizer" in message(app)
        assert any(r[5].startswith(("$", "<$")) for r in ranking_rows(app))


@sync
async def test_tabs_switch_with_function_keys():
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        tabs = app.query_one("#tabs", TabbedContent)
        for key, tab in (("f2", "memory"), ("f3", "device"), ("f4", "catalog"), ("f1", "advisor")):
            await pilot.press(key)
            await pilot.pause()
            assert tabs.active == tab


@sync
async def test_memory_tab_follows_the_highlighted_option():
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        table = app.query_one("#ranking", DataTable)
        table.focus()
        await pilot.press("down", "down")
        await pilot.pause()
        chosen = ranking_rows(app)[table.cursor_row][1]
        await pilot.press("f2")
        await pilot.pause()
        text = message(app, "#memory-view")
        assert f"on {chosen}" in text and "weights" in text and "total" in text


@sync
async def test_device_panel_shows_results_against_catalog():
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        table = app.query_one("#figures", DataTable)
        rows = {str(table.get_row_at(i)[0]): [str(c) for c in table.get_row_at(i)] for i in range(table.row_count)}
        assert rows["memory.triad"][3] == "86%"
        assert rows["tensor.bf16"][1].startswith("762")
        assert "H100 SXM5 80GB" in message(app, "#device-msg")
        # second GPU: flags shown
        app.query_one("#device-select", Select).value = 1
        await settle(pilot)
        assert "throttled" in message(app, "#device-msg")


@sync
async def test_device_panel_without_results():
    app = make_app(run=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert "No probe results loaded" in message(app, "#device-msg")


@sync
async def test_probe_run_in_background_never_blocks_the_ui():
    release = threading.Event()
    saved = results.load(FAKE)
    seen_threads = []

    def runner(on_event):
        seen_threads.append(threading.current_thread() is threading.main_thread())
        on_event("message", text="No usable GPU (test): running the host probe only")
        on_event("total", total=2)
        on_event("probe_start", device=None, probe="host")
        release.wait(5)
        on_event("probe_end", device=None, probe="host")
        return saved

    app = make_app(run=False, runner=runner)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert app.probing
        assert app.query_one("#tabs", TabbedContent).active == "device"
        assert "Running host on host" in message(app, "#device-msg")
        # the UI still answers while the worker waits
        await pilot.press("f1")
        await pilot.pause()
        assert app.query_one("#tabs", TabbedContent).active == "advisor"
        release.set()
        await app.workers.wait_for_complete()
        await settle(pilot)
        assert not app.probing
        assert app.run_result is saved
        assert seen_threads == [False]
        assert app.query_one("#figures", DataTable).row_count > 0


@sync
async def test_probe_run_failure_is_shown():
    def runner(on_event):
        raise RuntimeError("driver fell over")

    app = make_app(run=False, runner=runner)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+r")
        await app.workers.wait_for_complete()
        await settle(pilot)
        assert "probe run failed: RuntimeError: driver fell over" in message(app, "#device-msg")
        assert not app.probing


@sync
async def test_catalog_filters():
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        table = app.query_one("#catalog-table", DataTable)
        assert table.row_count == 6
        await pilot.press("f4")
        await pilot.press(*"h100")
        await settle(pilot)
        assert [str(table.get_row_at(i)[0]) for i in range(table.row_count)] == ["H100 SXM5 80GB"]
        app.query_one("#cat-match", Input).value = ""
        app.query_one("#cat-vendor", Select).value = "amd"
        await settle(pilot)
        assert table.row_count == 1
        app.query_one("#cat-vendor", Select).value = Select.NULL
        app.query_one("#cat-mem", Input).value = "100"
        await settle(pilot)
        assert {str(table.get_row_at(i)[0]) for i in range(table.row_count)} == {"H200 SXM 141GB", "Instinct MI300X"}
        app.query_one("#cat-mem", Input).value = "lots"
        await settle(pilot)
        assert "min GiB" in message(app, "#cat-msg")


def test_bar():
    assert str(bar(100)) == "█" * 10
    assert str(bar(50)) == "█" * 5 + "░" * 5
    assert str(bar(None)) == ""
    assert str(bar(250)) == "█" * 10


# ------------------------------------------------------------------ snapshots (80x24)


def test_snapshot_advisor(snap_compare):
    assert snap_compare(make_app(), terminal_size=SIZE, run_before=lambda pilot: pilot.pause(0.3))


def test_snapshot_advisor_error(snap_compare):
    # bad input from the start: the inline message, no table, no timer involved
    assert snap_compare(make_app(initial={"batch": "4z"}), terminal_size=SIZE, run_before=lambda p: p.pause(0.2))


def test_snapshot_memory(snap_compare):
    assert snap_compare(make_app(), terminal_size=SIZE, press=["f2"], run_before=lambda pilot: pilot.pause(0.3))


def test_snapshot_device(snap_compare):
    assert snap_compare(make_app(), terminal_size=SIZE, press=["f3"], run_before=lambda pilot: pilot.pause(0.3))


def test_snapshot_catalog(snap_compare):
    assert snap_compare(make_app(), terminal_size=SIZE, press=["f4"], run_before=lambda pilot: pilot.pause(0.3))
