"""Small text helpers shared by the panes: numbers and percentage bars as Rich Text."""

from __future__ import annotations

from rich.text import Text

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
