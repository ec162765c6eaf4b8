"""The line a kernel that runs a thread per element is priced by: picoseconds an element, base + per unit x units
(a pool's window taps, an upsampling's fan), fitted on measured calls and reported (bench.pools, bench.upsample)."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence


def fit_line(work: Sequence[tuple[float, float]], times_s: Sequence[float], digits: int) -> tuple[float, float]:
    """(base, per unit) in picoseconds an element with the least squared relative error over the calls, `work`
    each call's (elements, units an element), both terms >= 0 (a negative one is dropped and the other refitted
    alone), rounded to `digits`."""
    import numpy as np

    a = np.array(work, float)
    t = np.array(times_s, float) * 1e12
    design = np.stack([a[:, 0], a[:, 0] * a[:, 1]], axis=1) / t[:, None]
    (base, per_unit), *_ = np.linalg.lstsq(design, np.ones(len(t)), rcond=None)
    if per_unit < 0:  # no growth with the units: a constant per element
        base, per_unit = float(np.sum(design[:, 0]) / np.sum(design[:, 0] ** 2)), 0.0
    if base < 0:
        base, per_unit = 0.0, float(np.sum(design[:, 1]) / np.sum(design[:, 1] ** 2))
    return round(float(base), digits), round(float(per_unit), digits)


def span(xs: Sequence[float]) -> str:
    """The ratios' range and median, as the docs quote them."""
    return f"{min(xs):.2f}x-{max(xs):.2f}x (median {statistics.median(xs):.2f}x)"


def table_rows(lines: Mapping[tuple[str, str, str], tuple[float, float]], digits: int) -> str:
    """A kernel table's markdown rows: its key's three parts, then base and per unit to `digits`."""
    return "\n".join(f"| {a} | {b} | {c} | {base:.{digits}f} | {per:.{digits}f} |"
                     for (a, b, c), (base, per) in lines.items())
