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
import time
from pathlib import Path

import pytest

pytest.importorskip("textual")

from fake_prices import SNAPSHOT
from textual.widgets import DataTable, Input, Select, Static, TabbedContent

from gpuadvisor.catalog import Catalog, load_file
from gpuadvisor.core import results
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
    kw.setdefault("prices", SNAPSHOT)
    return GpuAdvisorApp(results.load(FAKE) if run else None, frozen_catalog(), **kw)


def option_rows(app: GpuAdvisorApp) -> dict[str, list[str]]:
    """Option label (the row key) -> the row's cells as text."""
    table = app.query_one("#options", DataTable)
    rows = {}
    for i in range(table.row_count):
        key = table.coordinate_to_cell_key((i, 0)).row_key.value
        rows[str(key)] = [str(c) for c in table.get_row_at(i)]
    return rows


def message(app: GpuAdvisorApp, wid: str = "#form-msg") -> str:
    """The text a Static shows (Text, Rich renderables and plain strings alike)."""
    from rich.console import Console

    console = Console(width=200, record=True, file=open(os.devnull, "w"))  # noqa: SIM115
    console.print(app.query_one(wid, Static).content)
    return console.export_text()


SETTLE_TIMEOUT_S = 60.0  # a bound, not a pause: settle returns as soon as the app is idle


async def settle(pilot) -> None:
    """Wait until the app is idle: the messages a change posted are handled, the debounce timer has
    fired, the advisor's worker has answered the form as it stands (`app.deciding` is false), and
    the screen has drawn it. No fixed pause: a loaded machine waits longer, an idle one less."""
    app = pilot.app
    deadline = time.monotonic() + SETTLE_TIMEOUT_S
    await pilot.pause()
    while app.deciding:
        assert time.monotonic() < deadline, f"the app was still deciding after {SETTLE_TIMEOUT_S:g} s"
        await pilot.pause(0.02)
    await pilot.wait_for_scheduled_animations()


@sync
async def test_decision_updates_as_you_type():
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        before = option_rows(app)
        speed = {o.hardware.label: o.per_user_tokens_per_s for o in app.advice.options if o.per_user_tokens_per_s}
        assert before and "llama-3-8b" in message(app)
        # the named picks are marked, and the price snapshot's source and date are shown
        picks = {k: r[0] for k, r in before.items() if r[0]}
        assert picks and set(app.advice.picks) >= {"cheapest", "best_value"}
        assert {p.option.label for p in app.advice.picks.values()} <= set(before)
        assert "fake snapshot for tests, 2026-11-01" in message(app, "#prices-line")
        assert "Binds:" in message(app, "#option-detail")
        model = app.query_one("#model", Input)
        assert app.focused is model
        model.value = ""
        await pilot.press(*"llama-3.1-70b")
        await settle(pilot)
        after = option_rows(app)
        assert "llama-3.1-70b" in message(app)
        assert after != before
        # a 70B model decodes slower than an 8B one on the same hardware (every option both have)
        slower = {o.hardware.label: o.per_user_tokens_per_s for o in app.advice.options if o.per_user_tokens_per_s}
        common = set(speed) & set(slower)
        assert common and all(slower[k] < speed[k] for k in common)


@sync
async def test_changes_are_debounced():
    """Typing schedules one recompute after the last key, never one per key; a change undone within the debounce
    asks nothing new. The debounce is long and its timer is fired by hand, so a loaded machine that types
    slowly cannot make the test flaky."""
    app = make_app(debounce_s=3600.0)
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
        await pilot.pause()
        assert calls == [] and app._timer is not None  # still "typing": one timer pending, nothing recomputed
        app._timer.stop()
        app._timer = app.set_timer(0.01, app.recompute)  # the debounce runs out
        await settle(pilot)
        assert len(calls) == 1
        assert "mistral-7b" in message(app)
        await pilot.press("x", "backspace")  # a change undone within the debounce asks nothing new
        await pilot.pause()
        assert app._timer is None and not app.deciding
        assert len(calls) == 1


@sync
async def test_the_first_answer_is_computed_once():
    """The fields' first Changed messages repeat the form the app decided for on mount: no second run."""
    app = make_app()
    asked = []
    original = app.advise_worker

    def counting(values, generation):
        asked.append(values["workload"].model.name)
        return original(values, generation)

    app.advise_worker = counting  # type: ignore[method-assign]
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert asked == ["llama-3-8b"] and option_rows(app)


#: (field, text typed, what the form says): each bad input in turn in one session, the form put right after each
BAD_INPUTS = [
    ("#batch", "4z", "batch must be a whole number"),
    ("#batch", "0", "batch must be >= 1"),
    ("#seq", "-5", "sequence must be >= 0"),
    ("#model", "not-a-model-xyz", "unknown model"),
    ("#model", "", "type a model"),
    ("#budget", "lots", "budget ($ per hour as 5/h"),
    ("#budget", "-3/h", "budget ($ per hour as 5/h, or $ in all as 500) must be > 0"),
    ("#tok_s", "fast", "tok/s per user must be a number"),
    ("#users", "0", "users must be >= 1"),
    ("#ttft", "0", "time to first token (seconds) must be > 0"),
    ("#context", "100", "context length 100 must exceed the output tokens"),
]


@sync
async def test_bad_input_shows_inline_message_and_keeps_running():
    """Every bad input, one after another in one running app: its message inline, no options under it, and the
    answer back as it was once the field is put right (the app never stops between them)."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        good = option_rows(app)
        assert good
        for field, text, expect in BAD_INPUTS:
            app.query_one(field, Input).value = text
            await settle(pilot)
            assert expect in message(app), (field, text, message(app))
            assert app.query_one("#form-msg").has_class("error"), (field, text)
            assert option_rows(app) == {}, (field, text)  # no other workload's options under the error
            app.query_one(field, Input).value = {"#model": "llama-3-8b", "#users": "1", "#batch": "1"}.get(field, "")
            await settle(pilot)
            assert not app.query_one("#form-msg").has_class("error"), (field, text, message(app))
            assert option_rows(app) == good, (field, text)


@sync
async def test_training_targets_replace_serving_ones():
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.query_one("#serve-row").display and not app.query_one("#train-row").display
        app.query_one("#mode", Select).value = "training"
        await settle(pilot)
        assert app.query_one("#train-row").display and not app.query_one("#serve-row").display
        table = app.query_one("#options", DataTable)
        assert [str(c.label) for c in table.columns.values()] == ["pick", "option", "job $", "wall time", "binds"]
        relaxed = sum(o.meets for o in app.advice.options)
        app.query_one("#deadline", Input).value = "1h"
        await settle(pilot)
        assert app.advice.targets.deadline_h == 1
        assert sum(o.meets for o in app.advice.options) < relaxed
        app.query_one("#tokens", Input).value = "200M"
        await settle(pilot)
        assert app.advice.targets.tokens == 2e8
        app.query_one("#deadline", Input).value = "soon"
        await settle(pilot)
        assert "not a duration" in message(app) and app.query_one("#form-msg").has_class("error")


@sync
async def test_budget_binds_the_picks():
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.query_one("#budget", Input).value = "$1/h"
        await settle(pilot)
        assert app.advice.targets.usd_per_hour == 1
        cheapest = [app.advice.picks[k].option for k in ("cheapest", "cheapest_rental") if k in app.advice.picks]
        assert cheapest and all(o.usd_per_hour is not None and o.usd_per_hour <= 1 for o in cheapest)
        assert "$1/h" in app.advice.targets.describe("inference")
        app.query_one("#budget", Input).value = "500"
        await settle(pilot)
        assert app.advice.targets.budget_usd == 500 and app.advice.targets.usd_per_hour is None


@sync
async def test_nothing_meets_the_targets_says_what_it_would_take():
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.query_one("#tok_s", Input).value = "100000"
        await settle(pilot)
        text = message(app)
        assert "nothing meets every target" in text and "it would take" in text
        assert not app.query_one("#form-msg").has_class("error")  # a verdict, not bad input
        assert any("closest" in r[0] for r in option_rows(app).values())


@sync
async def test_the_tui_reads_options_from_the_advisor_not_the_report():
    """The TUI and the report both read the advisor; neither imports the other."""
    import ast

    root = Path(__file__).parent.parent / "gpuadvisor" / "tui"
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            names += [a.name for a in node.names] if isinstance(node, ast.Import) else []
            assert not any(n.startswith("gpuadvisor.report") for n in names), f"{path} imports {names}"


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
        table = app.query_one("#options", DataTable)
        table.focus()
        await pilot.press("down", "down")
        await pilot.pause()
        chosen = str(table.coordinate_to_cell_key((table.cursor_row, 0)).row_key.value)
        assert app.chosen == chosen and chosen in message(app, "#option-detail")
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
        # the measured card joins the decision as "your ..."
        assert any(k.startswith("your H100") for k in option_rows(app))


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


async def steady(pilot) -> None:
    """Before a snapshot: no blinking cursor (a picture taken half a second later would show it off),
    and the app idle (`settle`)."""
    for field in pilot.app.query(Input):
        field.cursor_blink = False
    await settle(pilot)


def test_snapshot_advisor(snap_compare):
    assert snap_compare(make_app(), terminal_size=SIZE, run_before=steady)


def test_snapshot_advisor_error(snap_compare):
    # bad input from the start: the inline message, no table, no timer involved
    assert snap_compare(make_app(initial={"batch": "4z"}), terminal_size=SIZE, run_before=steady)


def test_snapshot_memory(snap_compare):
    assert snap_compare(make_app(), terminal_size=SIZE, press=["f2"], run_before=steady)


def test_snapshot_device(snap_compare):
    assert snap_compare(make_app(), terminal_size=SIZE, press=["f3"], run_before=steady)


def test_snapshot_catalog(snap_compare):
    assert snap_compare(make_app(), terminal_size=SIZE, press=["f4"], run_before=steady)


@sync
async def test_large_terminal_shows_every_column_and_fast_typing_is_kept():
    app = make_app()
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        table = app.query_one("#options", DataTable)
        heads = [str(c.label) for c in table.columns.values()]
        assert "first token" in heads and "meets" in heads  # 80 columns keep them in the detail line
        model = app.query_one("#model", Input)
        model.value = ""
        await pilot.press(*"llama-3.1-70b")  # typed at once while the advisor recomputes in a worker
        assert model.value == "llama-3.1-70b"
        await settle(pilot)
        assert "llama-3.1-70b" in message(app)


@sync
async def test_checkpointing_and_quant_fields_reach_the_decision():
    app = make_app(initial={"model": "llama-3.1-70b"})
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.advice.workload.quant == "none"
        app.query_one("#quant", Select).value = "awq"
        await settle(pilot)
        assert app.advice.workload.quant == "awq"
        app.query_one("#quant", Select).value = "none"
        app.query_one("#mode", Select).value = "lora"
        await settle(pilot)
        from textual.widgets import Checkbox

        app.query_one("#checkpointing", Checkbox).value = True
        await settle(pilot)
        assert app.advice.workload.checkpointing is True


@sync
async def test_catalog_card_opens_with_figures_and_sources():
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("f4")
        app.query_one("#cat-match", Input).value = "h100 sxm"
        await settle(pilot)
        table = app.query_one("#catalog-table", DataTable)
        table.move_cursor(row=0)
        await pilot.pause()
        detail = message(app, "#cat-detail")
        assert "H100 SXM5 80GB" in detail and "memory_bandwidth_gbs" in detail and "tensor_dense_tflops" in detail
        assert "source" in detail and "https://" in detail


def field_text(app: GpuAdvisorApp, wid: str) -> str:
    """What an Input draws: its value and the grey completion after it, as a user reads them."""
    return app.query_one(wid, Input).render_line(0).text.rstrip()


@sync
async def test_model_field_shows_what_the_request_holds_after_backspace():
    """Completion after Backspace put the deleted characters back in grey: the field read
    llama-3.1-70b while the line under it said unknown model 'llama-3.1-7'."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        model = app.query_one("#model", Input)
        model.value = ""
        await pilot.press(*"llama-3.1-7")
        await settle(pilot)
        assert field_text(app, "#model") == "llama-3.1-70b"  # typing forward: the completion is offered
        await pilot.press("0", "b", "backspace", "backspace")
        await settle(pilot)
        assert model.value == "llama-3.1-7"
        assert field_text(app, "#model") == "llama-3.1-7"  # what it holds, nothing put back
        assert "unknown model 'llama-3.1-7'" in message(app) and option_rows(app) == {}
        await pilot.press("0")  # typing again completes again, and right arrow takes it
        await settle(pilot)
        assert field_text(app, "#model") == "llama-3.1-70b"
        await pilot.press("right")
        await settle(pilot)
        assert model.value == "llama-3.1-70b" and "llama-3.1-70b" in message(app) and option_rows(app)


@sync
async def test_an_answer_for_an_older_form_never_replaces_an_error(monkeypatch):
    """The advisor's worker answering a form that has since become invalid is dropped: the line
    under the form and the empty table stay those of the form as it stands."""
    import gpuadvisor.advisor

    release, entered = threading.Event(), threading.Event()
    advise = gpuadvisor.advisor.advise

    def held_advise(*args, **kwargs):
        entered.set()
        release.wait(30)
        return advise(*args, **kwargs)

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        monkeypatch.setattr(gpuadvisor.advisor, "advise", held_advise)
        app.query_one("#model", Input).value = "mistral-7b"
        for _ in range(int(SETTLE_TIMEOUT_S / 0.02)):  # until the worker holds mistral-7b's question
            if entered.is_set():
                break
            await pilot.pause(0.02)
        assert entered.is_set() and app.deciding
        app.query_one("#batch", Input).value = "4z"
        for _ in range(int(SETTLE_TIMEOUT_S / 0.02)):  # until the debounce has read the bad field
            if "batch must be a whole number" in message(app):
                break
            await pilot.pause(0.02)
        release.set()
        await settle(pilot)
        assert "batch must be a whole number" in message(app) and "mistral" not in message(app)
        assert app.query_one("#form-msg").has_class("error") and option_rows(app) == {}


@sync
async def test_a_token_budget_for_an_image_model_is_refused_as_the_cli_refuses_it(capsys):
    """A traced vision model counts samples: the TUI shows the CLI's one line and computes nothing."""
    from gpuadvisor.cli import main

    assert main(["recommend", "torchvision:resnet50", "--mode", "training", "--tokens", "2e8"]) == 2
    cli_line = capsys.readouterr().err.strip().removeprefix("gpuadvisor: error: ")
    assert "counted in samples" in cli_line

    app = make_app(initial={"model": "torchvision:resnet50", "mode": "training"})
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert option_rows(app) and app.advice.workload.model.name == "torchvision:resnet50"
        before = app.advice
        app.query_one("#tokens", Input).value = "2e8"
        await settle(pilot)
        assert message(app).strip() == f"✗ {cli_line}"
        assert app.query_one("#form-msg").has_class("error") and option_rows(app) == {}
        assert app.advice is before  # nothing was computed for the refused form
        app.query_one("#tokens", Input).value = ""
        await settle(pilot)
        assert not app.query_one("#form-msg").has_class("error") and option_rows(app)


# the same question typed in the TUI's form and on recommend's command line
SAME_QUESTION = [
    ({"model": "llama-3.1-8b", "users": "32"}, {}, ["llama-3.1-8b", "--users", "32"]),
    ({"model": "llama-3.1-70b", "users": "100", "seq": "3840"}, {}, ["llama-3.1-70b", "--users", "100",
                                                                    "--input-len", "3840"]),
    ({"model": "mistral-7b", "batch": "4", "seq": "2048", "tokens": "2e8", "deadline": "24h"}, {"mode": "qlora"},
     ["mistral-7b", "--mode", "qlora", "--batch", "4", "--seq", "2048", "--tokens", "2e8", "--deadline", "24h"]),
    ({"model": "llama-3.2-1b", "batch": "8", "tokens": "1e9"}, {"mode": "training"},
     ["llama-3.2-1b", "--mode", "training", "--batch", "8", "--tokens", "1e9"]),
]


@pytest.mark.parametrize(("inputs", "selects", "argv"), SAME_QUESTION, ids=[" ".join(a) for *_, a in SAME_QUESTION])
@sync
async def test_the_form_asks_what_the_command_line_asks(inputs, selects, argv):
    """The TUI, `recommend` and the report decide with the same function (advisor.advise); what the form asks
    must be what the command line asks: the same workload (lengths, global batch) and the same targets."""
    from gpuadvisor.cli import build_parser
    from gpuadvisor.cli.advisor_args import targets_from
    from gpuadvisor.cli.estimate_cmd import workload_from
    from gpuadvisor.tui.panes.advisor import AdvisorPane

    ns = build_parser().parse_args(["recommend", *argv])
    want_workload, want_targets = workload_from(ns), targets_from(ns)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        pane = app.query_one("#advisor", AdvisorPane)
        for key, value in selects.items():
            app.query_one(f"#{key}", Select).value = value
        for key in ("model", "batch", "seq", "users", "tokens", "deadline"):
            app.query_one(f"#{key}", Input).value = inputs.get(key, {"batch": "1", "users": "1"}.get(key, ""))
        await settle(pilot)  # the form's change is decided before the app closes
        got = pane.form_values()
    assert got["workload"] == want_workload
    assert got["targets"] == want_targets
