"""A probed device's figures next to its datasheet: the probe's own value, else the catalog's.

Not a check (nothing passes or fails here): the report's measured-vs-datasheet charts and the
TUI's device screen read these rows; the `pct_of_datasheet` rule reads the measurement itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # annotations only: importing the pydantic result models costs a cold `recommend` ~15 ms
    from gpuadvisor.core.results import DeviceResult


@dataclass
class FigureRow:
    """One measured figure next to its datasheet value, for the report and the TUI."""

    key: str
    label: str
    value: float | None
    unit: str
    datasheet: float | None
    datasheet_source: str | None
    reference: float | None = None
    reference_label: str | None = None
    spread: float | None = None

    @property
    def pct(self) -> float | None:
        if self.value is None or not self.datasheet:
            return None
        return 100.0 * self.value / self.datasheet


def catalog_figure(card: Any, key: str) -> float | None:
    """The catalog's datasheet value for a figure key, where the catalog has one."""
    if card is None:
        return None
    if key.startswith("memory."):
        return card.memory_bandwidth_gbs
    if key == "fp32.fma":
        return card.fp32_tflops
    if key == "fp64.fma":
        return card.fp64_tflops
    if key.startswith("tensor."):
        return card.tensor_tflops(key.split(".", 1)[1])
    return None


def figure_rows(dev: DeviceResult, card: Any = None, prefixes: Sequence[str] = ()) -> list[FigureRow]:
    """Every measured figure of a device (optionally only keys with these prefixes), with a datasheet
    value: the probe's own where it recorded one, else the catalog card's."""
    rows = []
    for probe in dev.probes:
        for m in probe.measurements:
            if prefixes and not m.key.startswith(tuple(prefixes)):
                continue
            ds, src = m.datasheet, m.datasheet_source
            if not ds:
                ds = catalog_figure(card, m.key)
                src = f"catalog: {card.name}" if ds else None
            rows.append(FigureRow(m.key, m.label, m.value, m.unit, ds, src, m.reference, m.reference_label, m.spread))
    return rows


def device_card(dev: DeviceResult, catalog: Any) -> Any:
    """The catalog card of a probed device (the probe's recorded name, else its name and memory)."""
    from gpuadvisor.catalog import match_card
    from gpuadvisor.readings import device_memory_gib

    return match_card(catalog, dev.name, device_memory_gib(dev), dev.catalog_name)


def local_cards(run: Any, catalog: Any) -> tuple[str, ...]:
    """Catalog names of the cards in a probe result, one entry per GPU, in device order (two
    H200s are two entries: the advisor lays a workload out over the GPUs this machine has)."""
    cards = (device_card(dev, catalog) for dev in (run.devices if run is not None else []))
    return tuple(card.name for card in cards if card is not None)


def measured_by_card(run: Any, catalog: Any) -> dict[str, dict[str, float]]:
    """Card name -> the estimate figures measured on it (first device of each card), from a probe
    result: what replaces the datasheet figures for the local card."""
    from gpuadvisor.estimate import measured_figures

    out: dict[str, dict[str, float]] = {}
    for dev in run.devices if run is not None else []:
        card = device_card(dev, catalog)
        figs = measured_figures(dev) if card is not None else {}
        if figs and card.name not in out:
            out[card.name] = figs
    return out
