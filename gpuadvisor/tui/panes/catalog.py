"""The Catalog tab: find and filter the cards the advisor knows, with their datasheet figures."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import DataTable, Input, Label, Select, Static, TabPane

from gpuadvisor.tui.widgets import num

FAMILIES = ("geforce", "professional", "datacenter", "jetson", "instinct", "radeon")


class CatalogPane(TabPane):
    def __init__(self, catalog: Any) -> None:
        super().__init__("Catalog", id="catalog")
        self.catalog = catalog

    def compose(self) -> ComposeResult:
        with Horizontal(classes="form-row"):
            yield Label("Find", classes="lbl")
            yield Input(placeholder="name, e.g. h100", id="cat-match", compact=True)
            yield Select([("nvidia", "nvidia"), ("amd", "amd")], prompt="vendor", id="cat-vendor", compact=True)
        with Horizontal(classes="form-row"):
            yield Select([(f, f) for f in FAMILIES], prompt="family", id="cat-family", compact=True)
            yield Label("Min GiB", classes="lbl")
            yield Input(placeholder="any", id="cat-mem", compact=True, classes="short")
            yield Static("", id="cat-msg")
        yield DataTable(id="catalog-table", cursor_type="row", zebra_stripes=True)
        yield Static("", id="cat-detail")

    def on_mount(self) -> None:
        self.query_one("#catalog-table", DataTable).add_columns("card", "family", "GiB", "GB/s", "BF16 TF", "FP32 TF",
                                                                "tensor")
        self.refresh_table()

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.refresh_table()

    def on_select_changed(self, event: Select.Changed) -> None:
        event.stop()
        self.refresh_table()

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.data_table.id == "catalog-table" and event.row_key is not None and event.row_key.value:
            event.stop()
            self.show_card(str(event.row_key.value))

    def show_card(self, name: str) -> None:
        """The highlighted card in full: every figure, the tensor figures' basis, and the sources."""
        from gpuadvisor.cli.catalog_cmd import describe

        card = next((c for c in self.catalog.cards if c.name == name), None)
        view = self.query_one("#cat-detail", Static)
        if card is None:
            view.update("")
            return
        lines = describe(card)
        view.update(Text("\n".join(lines[:1]), style="bold") + Text("\n" + "\n".join(lines[1:])))

    def refresh_table(self) -> None:
        from gpuadvisor.catalog import find

        table = self.query_one("#catalog-table", DataTable)
        msg = self.query_one("#cat-msg", Static)
        match = self.query_one("#cat-match", Input).value.strip()
        mem_text = self.query_one("#cat-mem", Input).value.strip()
        vendor = self.query_one("#cat-vendor", Select).value
        family = self.query_one("#cat-family", Select).value
        min_mem = None
        if mem_text:
            try:
                min_mem = float(mem_text)
                if not min_mem >= 0:
                    raise ValueError
            except ValueError:
                msg.update(Text("✗ min GiB: a number", style="bold red"))
                return
        cards = self.catalog.filter(
            None if vendor is Select.NULL else str(vendor),
            None if family is Select.NULL else str(family),
            min_mem,
        )
        if match:
            wanted = [c.name for c in find(self.catalog, match)]
            cards = sorted((c for c in cards if c.name in wanted), key=lambda c: wanted.index(c.name))
        msg.update(f"{len(cards)} of {len(self.catalog)} cards")
        table.clear()
        for c in cards:
            table.add_row(
                c.name,
                c.family,
                num(c.memory_gib),
                num(c.memory_bandwidth_gbs),
                num(c.tensor_tflops("bf16") or c.tensor_tflops("fp16")),
                num(c.fp32_tflops),
                {"datasheet": "", "derived": "derived", "none": "none"}[c.tensor_dense_tflops.basis],
                key=c.name,
            )
