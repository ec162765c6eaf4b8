"""The terminal UI's App: tabs, key bindings, shared state, and the wiring between panes.

Each tab is a pane in gpuadvisor/tui/panes/ (advisor, memory, device, catalog); numbers come
from the core (workload, estimate, recommend, readings, compare) and the panes only lay them
out. The app owns what several panes share (the workload's options, the probe result) and the
probe run's worker thread. Works in an 80x24 terminal; every key binding is in the footer.
"""

from __future__ import annotations

from typing import Any, ClassVar

from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.timer import Timer
from textual.widgets import Footer, TabbedContent

from gpuadvisor.errors import UserError
from gpuadvisor.tui.panes import AdvisorPane, CatalogPane, DevicePane, MemoryPane
from gpuadvisor.tui.widgets import bar, num
from gpuadvisor.tui.workers import Runner, default_runner


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
    FOCUS_IN_TAB: ClassVar[dict[str, str]] = {
        "advisor": "#model",
        "memory": "#memory-scroll",
        "device": "#figures",
        "catalog": "#cat-match",
    }

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

    def compose(self) -> ComposeResult:
        with TabbedContent(initial="advisor", id="tabs"):
            yield AdvisorPane(self.initial)
            yield MemoryPane()
            yield DevicePane()
            yield CatalogPane(self.catalog)
        yield Footer()

    def on_mount(self) -> None:
        self.recompute()
        self.query_one(DevicePane).show(self.run_result, self.catalog)
        self.query_one("#model").focus()

    # ------------------------------------------------------------------ tabs
    def action_show_tab(self, tab: str) -> None:
        # focus follows the tab: a focused widget in the old pane would pull the old tab back
        self.set_focus(None)
        self.query_one("#tabs", TabbedContent).active = tab
        self.query_one(self.FOCUS_IN_TAB[tab]).focus()

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        pane = event.pane
        if pane.id in self.FOCUS_IN_TAB and (self.focused is None or pane not in self.focused.ancestors):
            self.query_one(self.FOCUS_IN_TAB[pane.id]).focus()

    # ------------------------------------------------------------------ advisor -> memory
    def on_advisor_pane_form_changed(self, event: AdvisorPane.FormChanged) -> None:
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.set_timer(self.debounce_s, self.recompute)

    def on_advisor_pane_option_highlighted(self, event: AdvisorPane.OptionHighlighted) -> None:
        self.chosen = event.label
        self.refresh_memory()

    def recompute(self) -> None:
        """Estimate and rank for the form's workload; a bad field is one line under the form."""
        self._timer = None
        pane = self.query_one(AdvisorPane)
        try:
            values = pane.form_values()
            from gpuadvisor.estimate import estimate_memory
            from gpuadvisor.report import advice

            w = values["workload"]
            breakdown = estimate_memory(w)
            ranked = advice.rank(
                w, self.catalog, gpu_counts=values["counts"], price_per_hour=values["price"], measured=self.run_result
            )
            options = [advice.option_fields(o) for o in ranked]
        except UserError as e:
            pane.show_error(str(e))
            return
        except Exception as e:  # never crash on input: say what went wrong
            pane.show_error(f"could not estimate: {type(e).__name__}: {e}")
            return
        self._workload, self._breakdown, self._options = w, breakdown, options
        pane.show_options(w, breakdown, options)
        if options and (self.chosen is None or self.chosen not in {o["label"] for o in options}):
            self.chosen = next((o["label"] for o in options if o["fits"]), options[0]["label"])
        self.refresh_memory()

    def refresh_memory(self) -> None:
        option = next((o for o in self._options if o["label"] == self.chosen), None)
        self.query_one(MemoryPane).show(self._workload, self._breakdown, option)

    # ------------------------------------------------------------------ probe run
    def action_run_probes(self) -> None:
        if self.probing:
            self.notify("Probes are already running", severity="warning")
            return
        self.action_show_tab("device")
        self.probing = True
        self.query_one(DevicePane).probe_started()
        self.probe_worker()

    @work(thread=True, exclusive=True, group="probes")
    def probe_worker(self) -> None:
        def on_event(kind: str, **kw: Any) -> None:
            self.call_from_thread(self.query_one(DevicePane).probe_event, kind, kw)

        try:
            result = (self.runner or default_runner)(on_event)
        except Exception as e:  # UserError or a bug: show it, keep the UI alive
            self.call_from_thread(self._probe_done, None, f"{type(e).__name__}: {e}")
            return
        self.call_from_thread(self._probe_done, result, None)

    def _probe_done(self, result: Any, error: str | None) -> None:
        self.probing = False
        pane = self.query_one(DevicePane)
        pane.probe_finished(error)
        if error:
            return
        self.run_result = result
        pane.show(result, self.catalog)
        what = f"{len(result.devices)} GPU(s)" if result.devices else "host only (no GPU)"
        self.notify(f"Probe run finished: {what}")


def build_app(probe_path: str | None = None, catalog_dirs: list[str] | None = None, **kw: Any) -> GpuAdvisorApp:
    from gpuadvisor import results
    from gpuadvisor.catalog import load_catalog

    run = results.load(probe_path) if probe_path else None
    return GpuAdvisorApp(run, load_catalog(catalog_dirs or []), **kw)


__all__ = ["GpuAdvisorApp", "bar", "build_app", "default_runner", "num"]
