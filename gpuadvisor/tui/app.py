"""The terminal UI: workload form with a live ranking, memory breakdown, device results against
the catalog, a catalog browser, and probe runs in a background thread.

Numbers come from the core (workload, estimate, recommend, readings, compare); this module only lays
them out. Works in an 80x24 terminal; every key binding is shown in the footer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from rich.text import Text
from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.suggester import SuggestFromList
from textual.timer import Timer
from textual.widgets import (
    Button,
    DataTable,
    Footer,
    Input,
    Label,
    ProgressBar,
    Select,
    Static,
    TabbedContent,
    TabPane,
)

from gpuadvisor.errors import UserError

GiB = 2**30
Runner = Callable[[Callable[..., None]], Any]  # runner(on_event) -> RunResult

FORM_INPUTS = ("model", "batch", "seq", "gpus", "price")
FORM_SELECTS = ("mode", "dtype")


def bar(pct: float | None, width: int = 10) -> Text:
    """A text bar for a percentage (100% = full), coloured like the report."""
    if pct is None:
        return Text("")
    filled = max(0, min(width, round(pct / 100 * width)))
    style = "green" if pct >= 85 else "yellow" if pct >= 60 else "red"
    return Text("█" * filled, style=style) + Text("░" * (width - filled), style="grey42")


def num(v: float | None, unit: str = "") -> str:
    if v is None:
        return "-"
    text = f"{v:,.0f}" if abs(v) >= 100 else f"{v:,.1f}" if abs(v) >= 10 else f"{v:,.2f}"
    return f"{text} {unit}".rstrip()


class GpuAdvisorApp(App[None]):
    CSS_PATH = "app.tcss"
    TITLE = "gpuadvisor"
    ENABLE_COMMAND_PALETTE = False
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f1", "show_tab('advisor')", "Advisor"),
        Binding("f2", "show_tab('memory')", "Memory"),
        Binding("f3", "show_tab('device')", "Device"),
        Binding("f4", "show_tab('catalog')", "Catalog"),
        Binding("ctrl+r", "run_probes", "Run probes"),
        Binding("ctrl+q", "quit", "Quit", priority=True),
    ]

    def __init__(
        self,
        run: Any = None,
        catalog: Any = None,
        *,
        runner: Runner | None = None,
        debounce_s: float = 0.3,
        initial: dict[str, str] | None = None,
    ):
        super().__init__()
        from gpuadvisor.catalog import load_catalog

        self.run_result = run
        self.catalog = catalog if catalog is not None else load_catalog()
        self.runner = runner
        self.debounce_s = debounce_s
        self.initial = {
            "model": "llama-3-8b",
            "mode": "inference",
            "dtype": "bf16",
            "batch": "1",
            "seq": "",
            "gpus": "1,2,4,8",
            "price": "",
        }
        self.initial.update(initial or {})
        self._timer: Timer | None = None
        self._options: list[dict[str, Any]] = []
        self._breakdown: Any = None
        self._workload: Any = None
        self.chosen: str | None = None  # card name highlighted in the ranking
        self.probing = False
        self._device_indices: list[int] = []

    # ------------------------------------------------------------------ layout
    def compose(self) -> ComposeResult:
        from gpuadvisor.workload import DTYPES, MODES

        init = self.initial
        with TabbedContent(initial="advisor", id="tabs"):
            with TabPane("Advisor", id="advisor"):
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
                    yield Select(
                        [(m, m) for m in MODES], value=init["mode"], allow_blank=False, id="mode", compact=True
                    )
                with Horizontal(classes="form-row"):
                    yield Label("Dtype", classes="lbl")
                    yield Select(
                        [(d, d) for d in DTYPES], value=init["dtype"], allow_blank=False, id="dtype", compact=True
                    )
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
            with TabPane("Memory", id="memory"):
                yield VerticalScroll(Static("", id="memory-view"), id="memory-scroll")
            with TabPane("Device", id="device"):
                with Horizontal(id="device-bar"):
                    yield Select([], prompt="GPU", id="device-select", compact=True, allow_blank=True)
                    yield Button("Run probes", id="run-probes", compact=True)
                yield ProgressBar(id="probe-progress", show_eta=False)
                yield Static("", id="device-msg")
                yield DataTable(id="figures", cursor_type="row", zebra_stripes=True)
            with TabPane("Catalog", id="catalog"):
                with Horizontal(classes="form-row"):
                    yield Label("Find", classes="lbl")
                    yield Input(placeholder="name, e.g. h100", id="cat-match", compact=True)
                    yield Select([("nvidia", "nvidia"), ("amd", "amd")], prompt="vendor", id="cat-vendor", compact=True)
                with Horizontal(classes="form-row"):
                    yield Select(
                        [(f, f) for f in ("geforce", "professional", "datacenter", "jetson", "instinct", "radeon")],
                        prompt="family",
                        id="cat-family",
                        compact=True,
                    )
                    yield Label("Min GiB", classes="lbl")
                    yield Input(placeholder="any", id="cat-mem", compact=True, classes="short")
                    yield Static("", id="cat-msg")
                yield DataTable(id="catalog-table", cursor_type="row", zebra_stripes=True)
        yield Footer()

    def on_mount(self) -> None:
        ranking = self.query_one("#ranking", DataTable)
        ranking.add_columns("#", "option", "GiB/GPU", "fits", "time", "cost")
        figures = self.query_one("#figures", DataTable)
        figures.add_columns("figure", "measured", "datasheet", "%", "")
        cat = self.query_one("#catalog-table", DataTable)
        cat.add_columns("card", "family", "GiB", "GB/s", "BF16 TF", "FP32 TF")
        self.query_one("#probe-progress", ProgressBar).display = False
        self.recompute()
        self.refresh_device()
        self.refresh_catalog()
        self.query_one("#model", Input).focus()

    # ------------------------------------------------------------------ actions
    FOCUS_IN_TAB: ClassVar[dict[str, str]] = {
        "advisor": "#model",
        "memory": "#memory-scroll",
        "device": "#figures",
        "catalog": "#cat-match",
    }

    def action_show_tab(self, tab: str) -> None:
        # focus follows the tab: a focused widget in the old pane would pull the old tab back
        self.set_focus(None)
        self.query_one("#tabs", TabbedContent).active = tab
        self.query_one(self.FOCUS_IN_TAB[tab]).focus()

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        pane = event.pane
        if pane.id in self.FOCUS_IN_TAB and (self.focused is None or pane not in self.focused.ancestors):
            self.query_one(self.FOCUS_IN_TAB[pane.id]).focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id in FORM_INPUTS:
            self._schedule()
        elif event.input.id in ("cat-match", "cat-mem"):
            self.refresh_catalog()

    def on_select_changed(self, event: Select.Changed) -> None:
        if event.select.id in FORM_SELECTS:
            self._schedule()
        elif event.select.id in ("cat-vendor", "cat-family"):
            self.refresh_catalog()
        elif event.select.id == "device-select":
            self.refresh_device()

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.data_table.id == "ranking" and event.row_key is not None and event.row_key.value:
            self.chosen = str(event.row_key.value)
            self.refresh_memory()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "run-probes":
            self.action_run_probes()

    def _schedule(self) -> None:
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.set_timer(self.debounce_s, self.recompute)

    # ------------------------------------------------------------------ advisor
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

    def recompute(self) -> None:
        self._timer = None
        msg = self.query_one("#form-msg", Static)
        table = self.query_one("#ranking", DataTable)
        try:
            values = self.form_values()
            from gpuadvisor.estimate import estimate_memory
            from gpuadvisor.report import advice

            w = values["workload"]
            breakdown = estimate_memory(w)
            ranked = advice.rank(
                w, self.catalog, gpu_counts=values["counts"], price_per_hour=values["price"], measured=self.run_result
            )
            options = [advice.option_fields(o) for o in ranked]
        except UserError as e:
            msg.update(Text(f"✗ {e}", style="bold red"))
            msg.set_class(True, "error")
            return
        except Exception as e:  # never crash on input: say what went wrong
            msg.update(Text(f"✗ could not estimate: {type(e).__name__}: {e}", style="bold red"))
            msg.set_class(True, "error")
            return
        msg.set_class(False, "error")
        self._workload, self._breakdown, self._options = w, breakdown, options
        fits = sum(o["fits"] for o in options)
        per = " per GPU" if w.num_gpus > 1 else ""
        msg.update(
            Text.assemble(
                ("✓ ", "green"),
                f"{w.model.name}: {breakdown.total / GiB:,.1f} GiB{per} ({breakdown.phase} peak); "
                f"{fits} of {len(options)} cards fit",
            )
        )
        table.clear()
        from gpuadvisor.units import duration

        for i, o in enumerate(options, start=1):
            cost = advice.money(o["cost"], o["cost_basis"])
            table.add_row(
                str(i),
                o["label"],
                num(o["memory_gib"]),
                Text("yes", style="green") if o["fits"] else Text("no", style="red"),
                duration(o["time_s"]),
                cost,
                key=o["label"],
            )
        if options and (self.chosen is None or self.chosen not in {o["label"] for o in options}):
            self.chosen = next((o["label"] for o in options if o["fits"]), options[0]["label"])
        self.refresh_memory()

    def refresh_memory(self) -> None:
        view = self.query_one("#memory-view", Static)
        if self._breakdown is None:
            view.update("Fill in the workload on the Advisor tab (F1).")
            return
        opt = next((o for o in self._options if o["label"] == self.chosen), None)
        breakdown = opt["memory"] if opt and opt.get("memory") is not None else self._breakdown
        cap = opt["capacity_gib"] if opt else None
        total = breakdown.total / GiB
        from rich.table import Table

        w = self._workload
        head = Text.assemble(
            (f"{w.model.name}", "bold"),
            f" · {w.mode} · {w.dtype} · batch {w.batch} × {w.seq}\n",
        )
        if opt:
            state = ("fits", "green") if opt["fits"] else ("does NOT fit", "bold red")
            head.append_text(Text.assemble(f"on {opt['label']}: {total:,.1f} of {num(cap)} GiB per GPU — ", state))
        else:
            head.append(f"{total:,.1f} GiB per GPU")
        scale = max(total, cap or 0) or 1
        t = Table(box=None, pad_edge=False, expand=False, show_header=True, header_style="bold")
        t.add_column("item", no_wrap=True)
        t.add_column("GiB", justify="right")
        t.add_column("", no_wrap=True)
        for k, v in breakdown.items:
            if v <= 0:
                continue
            n = max(1, round(v / GiB / scale * 30))
            t.add_row(k, f"{v / GiB:,.2f}", Text("█" * n, style="cyan"))
        t.add_row(Text("total", style="bold"), Text(f"{total:,.2f}", style="bold"), "")
        if cap:
            t.add_row("card memory", f"{cap:,.0f}", Text("│" + " " * 28 + "│", style="grey50"))
        notes = Text("\n".join(f"· {n}" for n in breakdown.notes) + "\n· estimate, not a measurement", style="grey62")
        from rich.console import Group

        view.update(Group(head, t, notes))

    # ------------------------------------------------------------------ device
    def refresh_device(self) -> None:
        from gpuadvisor.catalog import match_card
        from gpuadvisor.compare import figure_rows
        from gpuadvisor.readings import device_memory_gib, pcie_link

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
            lines = [f"No GPU in these results{': ' + run.message if run.message else ''}. Host figures:"]
            msg.update("\n".join(lines))
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
        card = match_card(self.catalog, dev.name, device_memory_gib(dev), dev.catalog_name)
        gen, width, max_gen, max_width = pcie_link(dev)
        pcie = f"PCIe gen{gen} x{width}" + (f" (max gen{max_gen} x{max_width})" if max_gen else "") if gen else ""
        head = Text.assemble(
            (f"GPU {dev.index}: {dev.name}", "bold"),
            f"  {num(device_memory_gib(dev), 'GiB')}  {pcie}\n",
            ("catalog: ", "grey62"),
            card.name if card else Text("not in the catalog", style="yellow"),
        )
        for f in dev.flags:
            head.append(f"\n⚠ {f}", style="bold red")
        if not run.complete:
            head.append("\n⚠ incomplete run: some figures are missing", style="yellow")
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

    def action_run_probes(self) -> None:
        if self.probing:
            self.notify("Probes are already running", severity="warning")
            return
        self.action_show_tab("device")
        self.probing = True
        self.query_one("#run-probes", Button).disabled = True
        progress = self.query_one("#probe-progress", ProgressBar)
        progress.display = True
        progress.update(total=None, progress=0)
        self.query_one("#device-msg", Static).update("Starting probes…")
        self.probe_worker()

    @work(thread=True, exclusive=True, group="probes")
    def probe_worker(self) -> None:
        def on_event(kind: str, **kw: Any) -> None:
            self.call_from_thread(self._probe_event, kind, kw)

        try:
            runner = self.runner or default_runner
            result = runner(on_event)
        except Exception as e:  # UserError or a bug: show it, keep the UI alive
            self.call_from_thread(self._probe_done, None, f"{type(e).__name__}: {e}")
            return
        self.call_from_thread(self._probe_done, result, None)

    def _probe_event(self, kind: str, kw: dict[str, Any]) -> None:
        progress = self.query_one("#probe-progress", ProgressBar)
        msg = self.query_one("#device-msg", Static)
        if kind == "total":
            progress.update(total=kw.get("total"), progress=0)
        elif kind == "message":
            msg.update(str(kw.get("text", "")))
        elif kind == "probe_start":
            where = "host" if kw.get("device") is None else f"GPU {kw.get('device')}"
            msg.update(f"Running {kw.get('probe')} on {where}…")
        elif kind == "probe_end":
            progress.advance(1)

    def _probe_done(self, result: Any, error: str | None) -> None:
        self.probing = False
        self.query_one("#run-probes", Button).disabled = False
        self.query_one("#probe-progress", ProgressBar).display = False
        if error:
            self.query_one("#device-msg", Static).update(Text(f"✗ probe run failed: {error}", style="bold red"))
            return
        self.run_result = result
        self.refresh_device()
        what = f"{len(result.devices)} GPU(s)" if result.devices else "host only (no GPU)"
        self.notify(f"Probe run finished: {what}")

    # ------------------------------------------------------------------ catalog
    def refresh_catalog(self) -> None:
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
                num(c.tensor_tflops("bf16")),
                num(c.fp32_tflops),
                key=c.name,
            )


def default_runner(on_event: Callable[..., None]) -> Any:
    """A quick probe run on this machine; without a usable GPU, the host probes only."""
    from gpuadvisor import devices, probe_runner
    from probes import GPU_PROBES, HOST_PROBES

    d = devices.discover()
    if d.usable:
        total = len(HOST_PROBES) + len(GPU_PROBES) * len(d.devices)
        on_event("message", text=f"Running quick probes on {len(d.devices)} GPU(s)…")
    else:
        total = len(HOST_PROBES) + 1  # the crossover probe's CPU side
        on_event("message", text=f"No usable GPU ({d.message or 'none found'}): running the host probe only")
    on_event("total", total=total)
    opts = probe_runner.RunOptions(mode="quick")
    return probe_runner.run_probes(opts, discovery=d, on_event=on_event)


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


def build_app(probe_path: str | None = None, catalog_dirs: list[str] | None = None, **kw: Any) -> GpuAdvisorApp:
    from gpuadvisor import results
    from gpuadvisor.catalog import load_catalog

    run = results.load(probe_path) if probe_path else None
    return GpuAdvisorApp(run, load_catalog(catalog_dirs or []), **kw)


__all__ = ["GpuAdvisorApp", "bar", "build_app", "default_runner"]
