"""The Device tab: one probed GPU's figures against its catalog card, and the probe run's progress."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Button, DataTable, ProgressBar, Select, Static, TabPane

from gpuadvisor.tui.widgets import bar, num


class DevicePane(TabPane):
    def __init__(self) -> None:
        super().__init__("Device", id="device")
        self.run_result: Any = None
        self.catalog: Any = None
        self._device_indices: list[int] = []

    def compose(self) -> ComposeResult:
        with Horizontal(id="device-bar"):
            yield Select([], prompt="GPU", id="device-select", compact=True, allow_blank=True)
            yield Button("Run probes", id="run-probes", compact=True, action="app.run_probes")
        yield ProgressBar(id="probe-progress", show_eta=False)
        yield Static("", id="device-msg")
        yield DataTable(id="figures", cursor_type="row", zebra_stripes=True)

    def on_mount(self) -> None:
        self.query_one("#figures", DataTable).add_columns("figure", "measured", "datasheet", "%", "")
        self.query_one("#probe-progress", ProgressBar).display = False

    def on_select_changed(self, event: Select.Changed) -> None:
        if event.select.id == "device-select":
            event.stop()
            self.refresh_view()

    def show(self, run: Any, catalog: Any) -> None:
        self.run_result, self.catalog = run, catalog
        self.refresh_view()

    def refresh_view(self) -> None:
        from gpuadvisor.compare import device_card, figure_rows

        msg = self.query_one("#device-msg", Static)
        table = self.query_one("#figures", DataTable)
        select = self.query_one("#device-select", Select)
        table.clear()
        run = self.run_result
        if run is None:
            msg.update(
                "No probe results loaded. Press ctrl+r (or Run probes) to measure this machine, "
                "or start with --probe RESULTS.json."
            )
            select.display = False
            return
        if not run.devices:
            select.display = False
            msg.update(f"No GPU in these results{': ' + run.message if run.message else ''}. Host figures:")
            for p in run.host_probes:
                for m in p.measurements:
                    table.add_row(m.key, num(m.value, m.unit), "", "", "")
            return
        options = [(f"GPU {d.index}: {d.name}", d.index) for d in run.devices]
        if self._device_indices != [o[1] for o in options]:
            self._device_indices = [o[1] for o in options]
            with select.prevent(Select.Changed):
                select.set_options(options)
                select.value = options[0][1]
        select.display = len(options) > 1
        idx = select.value if select.value is not Select.NULL else run.devices[0].index
        dev = next((d for d in run.devices if d.index == idx), run.devices[0])
        card = device_card(dev, self.catalog)
        head = _device_head(run, dev, card)
        msg.update(head)
        for f in figure_rows(dev, card):
            if f.key.startswith("crossover."):
                continue
            pct = f.pct
            table.add_row(
                f.key,
                num(f.value, f.unit) if f.value is not None else Text("no value", style="red"),
                num(f.datasheet) if f.datasheet else "",
                f"{pct:.0f}%" if pct is not None else "",
                bar(pct),
            )

    # ------------------------------------------------------------------ probe run progress
    def probe_started(self) -> None:
        self.query_one("#run-probes", Button).disabled = True
        progress = self.query_one("#probe-progress", ProgressBar)
        progress.display = True
        progress.update(total=None, progress=0)
        self.query_one("#device-msg", Static).update("Starting probes…")

    def probe_event(self, kind: str, kw: dict[str, Any]) -> None:
        progress = self.query_one("#probe-progress", ProgressBar)
        msg = self.query_one("#device-msg", Static)
        if kind == "total":
            progress.update(total=kw.get("total"), progress=0)
        elif kind == "message":
            msg.update(str(kw.get("text", "")))
        elif kind == "probe_start":
            dev = kw.get("device")
            where = "host" if dev is None else "the node" if dev == "node" else f"GPU {dev}"
            msg.update(f"Running {kw.get('probe')} on {where}…")
        elif kind == "probe_end":
            progress.advance(1)

    def probe_finished(self, error: str | None) -> None:
        self.query_one("#run-probes", Button).disabled = False
        self.query_one("#probe-progress", ProgressBar).display = False
        if error:
            self.query_one("#device-msg", Static).update(Text(f"✗ probe run failed: {error}", style="bold red"))


def _device_head(run: Any, dev: Any, card: Any) -> Text:
    """The pane's header: the GPU, its memory and PCIe link, its catalog card, links, flags and completeness."""
    from gpuadvisor.links import link_lines
    from gpuadvisor.readings import device_memory_gib, pcie_link

    gen, width, max_gen, max_width = pcie_link(dev)
    pcie = f"PCIe gen{gen} x{width}" + (f" (max gen{max_gen} x{max_width})" if max_gen else "") if gen else ""
    head = Text.assemble(
        (f"GPU {dev.index}: {dev.name}", "bold"),
        f"  {num(device_memory_gib(dev), 'GiB')}  {pcie}\n",
        ("catalog: ", "grey62"),
        card.name if card else Text("not in the catalog", style="yellow"),
    )
    for line in link_lines(run, dev.index):
        head.append(f"\n⇄ {line}", style="cyan")
    for f in dev.flags:
        head.append(f"\n⚠ {f}", style="bold red")
    if not run.complete:
        head.append("\n⚠ incomplete run: some figures are missing", style="yellow")
    return head
