"""Small helpers shared by the panes: numbers and percentage bars as Rich Text, and the
completing input of the Model field."""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text
from textual.widgets import Input

GiB = 2**30


def bar(pct: float | None, width: int = 10) -> Text:
    """A text bar for a percentage (100% = full), coloured like the report."""
    if pct is None:
        return Text("")
    filled = max(0, min(width, round(pct / 100 * width)))
    style = "green" if pct >= 85 else "yellow" if pct >= 60 else "red"
    return Text("█" * filled, style=style) + Text("░" * (width - filled), style="grey42")


def num(v: float | None, unit: str = "") -> str:
    """A figure with as many digits as a table cell needs: 1,234 / 56.7 / 8.90."""
    if v is None:
        return "-"
    text = f"{v:,.0f}" if abs(v) >= 100 else f"{v:,.1f}" if abs(v) >= 10 else f"{v:,.2f}"
    return f"{text} {unit}".rstrip()


class CompletingInput(Input):
    """An Input whose suggester completes what is typed, never what was just deleted.

    Textual asks the suggester after every change, so after Backspace the completion it draws
    in grey puts back the very characters the user removed: the field reads `llama-3.1-70b`
    while it holds `llama-3.1-7`, and the line under the form says `unknown model
    'llama-3.1-7'`. After a deletion the field shows only what it holds (as a browser's
    address bar does); the next typed character brings completions back.
    """

    def _deleting(self, delete: Callable[[], None]) -> None:
        suggester, self.suggester = self.suggester, None  # the value's watcher asks no completion
        try:
            delete()
        finally:
            self.suggester = suggester

    def action_delete_left(self) -> None:
        self._deleting(super().action_delete_left)

    def action_delete_left_word(self) -> None:
        self._deleting(super().action_delete_left_word)

    def action_delete_left_all(self) -> None:
        self._deleting(super().action_delete_left_all)

    def action_delete_right(self) -> None:
        self._deleting(super().action_delete_right)

    def action_delete_right_word(self) -> None:
        self._deleting(super().action_delete_right_word)

    def action_delete_right_all(self) -> None:
        self._deleting(super().action_delete_right_all)

    def action_cut(self) -> None:
        self._deleting(super().action_cut)
