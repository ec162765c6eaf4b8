"""Human-readable numbers shared by every interface (CLI, report, TUI), so they all agree."""

from __future__ import annotations


def duration(s: float | None) -> str:
    """Seconds in the largest unit that keeps the number readable: 12.3 ms, 4.5 min, 2.1 days."""
    if s is None:
        return "-"
    if s < 1:
        return f"{s * 1000:.3g} ms"
    if s < 120:
        return f"{s:.3g} s"
    if s < 7200:
        return f"{s / 60:.3g} min"
    if s < 48 * 3600:
        return f"{s / 3600:.3g} h"
    return f"{s / 86400:.3g} days"
