"""The Memory tab: the estimate's memory breakdown for the option highlighted on the Advisor tab."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static, TabPane

from gpuadvisor.tui.widgets import GiB, num


def pres_shape(workload: Any, users: int | None = None) -> str:
    from gpuadvisor.presentation import workload_shape

    return workload_shape(workload, users)


class MemoryPane(TabPane):
    def __init__(self) -> None:
        super().__init__("Memory", id="memory")

    def compose(self) -> ComposeResult:
        yield VerticalScroll(Static("", id="memory-view"), id="memory-scroll")

    def show(self, workload: Any, breakdown: Any, option: Any | None, users: int | None = None) -> None:
        """The workload's memory breakdown on one GPU as bars, and what the highlighted option
        (an advisor Option, laid out over its GPUs) needs per GPU against what it has."""
        from rich.console import Group
        from rich.table import Table

        view = self.query_one("#memory-view", Static)
        if breakdown is None:
            view.update("Fill in the workload on the Advisor tab (F1).")
            return
        w = workload
        head = Text.assemble((f"{w.model.name}", "bold"), f" · {w.mode} · {w.dtype} · {pres_shape(w, users)}\n")
        cap = option.memory_gib_per_gpu if option is not None else None
        # the highlighted option's own per-GPU figures (its layout, every user's KV cache), the same
        # numbers `estimate` and `recommend` give; the bare workload on one GPU only with no option
        if option is not None and option.memory_parts:
            parts = list(option.memory_parts)
            state = ("fits", "green") if option.fits else ("does NOT fit", "bold red")
            usable = option.usable_gib if option.usable_gib is not None else cap
            head.append_text(Text.assemble(
                f"on {option.label}, {option.layout}: {option.needed_gib_per_gpu:,.1f} GiB needed per GPU, "
                f"{num(usable)} usable of {num(cap)} — ", state, "\n"))
        else:
            parts = [(k, v / GiB) for k, v in breakdown.items if v > 0]
            head.append(f"on one GPU ({breakdown.phase} peak)\n")
        total = sum(v for _, v in parts)
        scale = max(total, cap or 0) or 1
        t = Table(box=None, pad_edge=False, expand=False, show_header=True, header_style="bold")
        t.add_column("item", no_wrap=True)
        t.add_column("GiB per GPU", justify="right")
        t.add_column("", no_wrap=True)
        for k, v in parts:
            n = max(1, round(v / scale * 30))
            t.add_row(k, f"{v:,.2f}", Text("█" * n, style="cyan"))
        t.add_row(Text("total", style="bold"), Text(f"{total:,.2f}", style="bold"), "")
        if cap:
            t.add_row("card memory", f"{cap:,.0f}", Text("│" + " " * 28 + "│", style="grey50"))
        notes = Text("\n".join(f"· {n}" for n in breakdown.notes) + "\n· estimate, not a measurement", style="grey62")
        view.update(Group(head, t, notes))
