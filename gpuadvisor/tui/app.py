"""The terminal UI's App: tabs, key bindings, shared state, and the wiring between panes.

Each tab is a pane in gpuadvisor/tui/panes/ (advisor, memory, device, catalog); numbers come
from the core (the advisor's options and picks, estimate, readings, compare) and the panes only
lay them out. The app owns what several panes share (the decision, the probe result, the price
snapshot), the advisor's worker thread and the probe run's. Works at 80x24 and uses the room of a
larger terminal; every key binding is in the footer.
"""

from __future__ import annotations

from typing import Any, ClassVar

from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.timer import Timer
from textual.widgets import Footer, TabbedContent

from gpuadvisor.core.errors import UserError
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
        prices: Any = None,
    ):
        """`run`: a probe RunResult (its cards' measured figures replace their datasheet ones);
        `prices`: a price snapshot (default: the shipped one, loaded on first use)."""
        super().__init__()
        from gpuadvisor.catalog import load_catalog

        self.run_result = run
        self.catalog = catalog if catalog is not None else load_catalog()
        self.runner = runner
        self.debounce_s = debounce_s
        self.initial = dict(initial or {})
        self.prices = prices
        self._offers: tuple[list[Any], Any] | None = None  # (offers, PriceInfo), loaded once
        self._timer: Timer | None = None
        self.advice: Any = None  # the last good advisor.Advice
        self._breakdown: Any = None
        self.chosen: str | None = None  # label of the option highlighted on the Advisor tab
        self.probing = False
        self._generation = 0  # the form's version: a worker's answer for an older form is dropped
        self._asked: tuple[str, ...] | None = None  # the form as the latest recompute read it
        self.answered: tuple[str, ...] | None = None  # the form the table and the line under it answer

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
            self._timer = None
        if self.query_one(AdvisorPane).form_text() == self._asked:
            return  # the form is the question asked last (the fields' first Changed, or a change undone)
        self._timer = self.set_timer(self.debounce_s, self.recompute)

    def on_advisor_pane_option_highlighted(self, event: AdvisorPane.OptionHighlighted) -> None:
        self.chosen = event.label
        self.refresh_memory()

    @property
    def deciding(self) -> bool:
        """Whether the Advisor tab may not yet answer the form as it stands: a change waits for the
        debounce or for the advisor's worker (tests and scripted runs wait for this to clear)."""
        if self._timer is not None:
            return True
        if self.answered != self.query_one(AdvisorPane).form_text():
            return True
        return any(w.group == "advice" and not w.is_finished for w in self.workers)

    def recompute(self) -> None:
        """Decide for the form's workload and targets in a worker thread, so typing never waits on
        the advisor; a bad field is one line under the form (and the old table goes)."""
        self._timer = None
        pane = self.query_one(AdvisorPane)
        self._generation += 1  # an answer still on its way is for an older form now
        self._asked = pane.form_text()
        try:
            values = pane.form_values()
        except UserError as e:
            pane.show_error(str(e))
            self.answered = self._asked
            return
        self.advise_worker(values, self._generation)

    @work(thread=True, exclusive=True, group="advice")
    def advise_worker(self, values: dict[str, Any], generation: int) -> None:
        try:
            from gpuadvisor.advisor import advise
            from gpuadvisor.estimate import estimate_memory

            w, targets = values["workload"], values["targets"]
            breakdown = estimate_memory(w)
            offers, info = self.price_offers()
            measured, local = self.measured_cards()
            advice = advise(
                w, self.catalog, targets, offers=offers, prices=info, measured=measured, local_cards=local
            )
        except UserError as e:
            self.call_from_thread(self._advice_failed, str(e), generation)
            return
        except Exception as e:  # never crash on input: say what went wrong
            self.call_from_thread(self._advice_failed, f"could not estimate: {type(e).__name__}: {e}", generation)
            return
        self.call_from_thread(self._advice_done, advice, breakdown, generation)

    def _advice_failed(self, text: str, generation: int) -> None:
        if generation == self._generation:  # a newer form's answer is on its way: drop this one
            self.query_one(AdvisorPane).show_error(text)
            self.answered = self._asked

    def _advice_done(self, advice: Any, breakdown: Any, generation: int) -> None:
        if generation != self._generation:
            return
        pane = self.query_one(AdvisorPane)
        self.advice, self._breakdown = advice, breakdown
        self.answered = self._asked
        from gpuadvisor.presentation import first_choice, shown_options

        if self.chosen not in {o.label for o in shown_options(advice)}:
            first = first_choice(advice)
            self.chosen = first.label if first is not None else None
        pane.show_advice(advice, breakdown, self.chosen)
        self.refresh_memory()

    def price_offers(self) -> tuple[list[Any], Any]:
        """(rental offers, where they came from), from the snapshot given or the shipped one."""
        if self._offers is None:
            from gpuadvisor.advisor.market import offers_for

            self._offers = offers_for(snapshot=self.prices)
        return self._offers

    def measured_cards(self) -> tuple[dict[str, dict[str, float]], tuple[str, ...]]:
        """From the probe result: card -> measured figures, and the catalog cards in this machine."""
        run = self.run_result
        if run is None:
            return {}, ()
        from gpuadvisor.compare import local_cards, measured_by_card

        return measured_by_card(run, self.catalog), local_cards(run, self.catalog)

    def refresh_memory(self) -> None:
        options = self.advice.options if self.advice is not None else []
        option = next((o for o in options if o.label == self.chosen), None)
        workload = self.advice.workload if self.advice is not None else None
        users = self.advice.targets.users if self.advice is not None and workload is not None and \
            workload.mode == "inference" else None
        self.query_one(MemoryPane).show(workload, self._breakdown, option, users)

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
        self.recompute()  # the measured figures and the local card join the decision
        what = f"{len(result.devices)} GPU(s)" if result.devices else "host only (no GPU)"
        self.notify(f"Probe run finished: {what}")


def build_app(probe_path: str | None = None, catalog_dirs: list[str] | None = None, **kw: Any) -> GpuAdvisorApp:
    from gpuadvisor.catalog import load_catalog
    from gpuadvisor.core import results

    run = results.load(probe_path) if probe_path else None
    return GpuAdvisorApp(run, load_catalog(catalog_dirs or []), **kw)


__all__ = ["GpuAdvisorApp", "bar", "build_app", "default_runner", "num"]
