"""The Advisor tab: the workload form and the ranking of cards for it.

The pane parses its form and shows what the app computed; it posts FormChanged (the app
debounces and recomputes) and OptionHighlighted (the memory tab follows the highlighted row).
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.message import Message
from textual.suggester import SuggestFromList
from textual.widgets import DataTable, Input, Label, Select, Static, TabPane

from gpuadvisor.errors import UserError
from gpuadvisor.tui.widgets import GiB, num

FORM_INPUTS = ("model", "batch", "seq", "gpus", "price")
FORM_SELECTS = ("mode", "dtype")


class AdvisorPane(TabPane):
    class FormChanged(Message):
        """A field of the workload form changed."""

    class OptionHighlighted(Message):
        def __init__(self, label: str) -> None:
            super().__init__()
            self.label = label

    def __init__(self, initial: dict[str, str]) -> None:
        super().__init__("Advisor", id="advisor")
        self.initial = initial

    def compose(self) -> ComposeResult:
        from gpuadvisor.workload import DTYPES, MODES

        init = self.initial
        with Horizontal(classes="form-row"):
            yield Label("Model", classes="lbl")
            yield Input(
                init["model"],
                placeholder="preset, 7b or config.json",
                id="model",
                compact=True,
                suggester=SuggestFromList(_preset_names(), case_sensitive=False),
            )
            yield Label("Mode", classes="lbl")
            yield Select([(m, m) for m in MODES], value=init["mode"], allow_blank=False, id="mode", compact=True)
        with Horizontal(classes="form-row"):
            yield Label("Dtype", classes="lbl")
            yield Select([(d, d) for d in DTYPES], value=init["dtype"], allow_blank=False, id="dtype", compact=True)
            yield Label("Batch", classes="lbl")
            yield Input(init["batch"], id="batch", compact=True, classes="short")
            yield Label("Seq", classes="lbl")
            yield Input(init["seq"], placeholder="auto", id="seq", compact=True, classes="short")
        with Horizontal(classes="form-row"):
            yield Label("GPUs", classes="lbl")
            yield Input(init["gpus"], id="gpus", compact=True, classes="short")
            yield Label("$/GPU-h", classes="lbl")
            yield Input(init["price"], placeholder="none", id="price", compact=True, classes="short")
        yield Static("", id="form-msg")
        yield DataTable(id="ranking", cursor_type="row", zebra_stripes=True)

    def on_mount(self) -> None:
        self.query_one("#ranking", DataTable).add_columns("#", "option", "GiB/GPU", "fits", "time", "cost")

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id in FORM_INPUTS:
            event.stop()
            self.post_message(self.FormChanged())

    def on_select_changed(self, event: Select.Changed) -> None:
        if event.select.id in FORM_SELECTS:
            event.stop()
            self.post_message(self.FormChanged())

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.data_table.id == "ranking" and event.row_key is not None and event.row_key.value:
            event.stop()
            self.post_message(self.OptionHighlighted(str(event.row_key.value)))

    def form_values(self) -> dict[str, Any]:
        """Parse the form; UserError names the bad field."""
        from gpuadvisor.workload import make_workload

        get = {i: self.query_one(f"#{i}", Input).value.strip() for i in FORM_INPUTS}
        model = get["model"]
        if not model:
            raise UserError("type a model: a preset (llama-3-8b), a parameter count (7b) or a config.json path")
        batch = _int(get["batch"], "batch", 1)
        seq = _int(get["seq"], "sequence", 0) if get["seq"] else 0
        try:
            counts = tuple(sorted({int(t) for t in get["gpus"].split(",") if t.strip()}))
        except ValueError:
            raise UserError(f"GPUs: a count or a list like 1,2,4,8, got {get['gpus']!r}") from None
        if not counts or counts[0] < 1 or counts[-1] > 4096:
            raise UserError(f"GPUs: counts from 1 to 4096, got {get['gpus']!r}")
        price = None
        if get["price"]:
            try:
                price = float(get["price"].lstrip("$"))
            except ValueError:
                raise UserError(f"price must be a number of dollars per GPU-hour, got {get['price']!r}") from None
            if not price >= 0 or price == float("inf"):
                raise UserError(f"price must be >= 0, got {get['price']!r}")
        mode = self.query_one("#mode", Select).value
        dtype = self.query_one("#dtype", Select).value
        w = make_workload(model, mode=str(mode), dtype=str(dtype), batch=batch, seq_len=seq, num_gpus=counts[0])
        return {"workload": w, "price": price, "counts": counts}

    def show_error(self, text: str) -> None:
        """Say what is wrong under the form; the last good ranking stays."""
        msg = self.query_one("#form-msg", Static)
        msg.update(Text(f"✗ {text}", style="bold red"))
        msg.set_class(True, "error")

    def show_options(self, workload: Any, breakdown: Any, options: list[dict[str, Any]]) -> None:
        from gpuadvisor.report import advice
        from gpuadvisor.units import duration

        msg = self.query_one("#form-msg", Static)
        msg.set_class(False, "error")
        fits = sum(o["fits"] for o in options)
        per = " per GPU" if workload.num_gpus > 1 else ""
        msg.update(
            Text.assemble(
                ("✓ ", "green"),
                f"{workload.model.name}: {breakdown.total / GiB:,.1f} GiB{per} ({breakdown.phase} peak); "
                f"{fits} of {len(options)} cards fit",
            )
        )
        table = self.query_one("#ranking", DataTable)
        table.clear()
        for i, o in enumerate(options, start=1):
            table.add_row(
                str(i),
                o["label"],
                num(o["memory_gib"]),
                Text("yes", style="green") if o["fits"] else Text("no", style="red"),
                duration(o["time_s"]),
                advice.money(o["cost"], o["cost_basis"]),
                key=o["label"],
            )


def _int(text: str, what: str, minimum: int) -> int:
    try:
        v = int(text)
    except ValueError:
        raise UserError(f"{what} must be a whole number, got {text!r}") from None
    if v < minimum:
        raise UserError(f"{what} must be >= {minimum}, got {v}")
    return v


def _preset_names() -> list[str]:
    try:
        from gpuadvisor.workload import list_presets

        return [s.name for s in list_presets()]
    except Exception:
        return []
