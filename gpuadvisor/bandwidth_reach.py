"""How much of its datasheet memory bandwidth a streaming kernel reaches on a card: one published set measured the
same way on every card (catalog/bandwidth-reach.yaml, built by tools/bandwidth_reach.py).

Why it differs by card: the datasheet figure is the memory interface's peak, and what a kernel sustains depends on
the memory (HBM2e, HBM3, HBM3e), its controllers and how the chip spreads addresses over them: the A100's HBM2e
copies at 0.79 of its figure, the H100's HBM3 at 0.87, the H200's HBM3e at 0.84, the MI300X's eight stacks behind
four I/O dies at 0.78. The estimator's BANDWIDTH (achieved decode streaming over the datasheet) was fitted on the
H100, so a card's achieved bandwidth is BANDWIDTH x (its reach / the H100's, both from the same source): the H100
is unchanged, a card with a measurement moves by it, and a card without one keeps BANDWIDTH as it is."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

REACH_FILE = "bandwidth-reach.yaml"
#: the card the calibration's BANDWIDTH was fitted on
CALIBRATION_CARD = "H100 SXM5 80GB"


def _path() -> Path:
    from gpuadvisor.core.paths import shipped_catalog_dir

    return shipped_catalog_dir() / REACH_FILE


@lru_cache(maxsize=1)
def _table() -> tuple[dict[str, float], str]:
    """(card name -> published reach, the source's label); empty where the file is missing. Kept in the user
    cache (datacache) beside the catalog, so that a cold `recommend` parses no YAML for it."""
    path = _path()
    if not path.is_file():
        return {}, ""
    from gpuadvisor.datacache import cached

    def build() -> tuple[dict[str, float], str]:
        import yaml

        data = yaml.safe_load(path.read_text())
        return ({name: float(e["reach"]) for name, e in data["cards"].items()},
                str(data.get("source", {}).get("label", "")))

    return cached("bandwidth-reach", [path, Path(__file__)], build,
                  lambda v: isinstance(v, tuple) and len(v) == 2 and isinstance(v[0], dict))


def published() -> dict[str, float]:
    """Card name -> the published copy reach (measured / datasheet)."""
    return _table()[0]


MEMORY_KEYS = ("arch_id", "memory_type", "memory_bus_width_bits")


def _memory_of(card: Any) -> tuple[str, ...] | None:
    """A card's memory system: architecture, memory type and bus width, None where any is unknown (the H200 NVL is
    the H200 SXM's HBM3e on 6,144 bits, the MI300A the MI300X's eight HBM3 stacks; the H100 PCIe's HBM2e is not
    the SXM's HBM3)."""
    values = [getattr(card, k, None) for k in MEMORY_KEYS]
    return None if any(v is None for v in values) else tuple(str(v).lower() for v in values)


@lru_cache(maxsize=1)
def _measured_memories() -> dict[tuple[str, ...], tuple[str, float]]:
    """Memory system -> (the measured card, its reach), for the table's cards (the first by name where several
    share one)."""
    from gpuadvisor.catalog import load_catalog

    catalog = load_catalog(use_env=False)
    out: dict[tuple[str, ...], tuple[str, float]] = {}
    for name, reach in sorted(published().items()):
        card = catalog.get(name)
        memory = _memory_of(card) if card is not None else None
        if memory is not None:
            out.setdefault(memory, (name, reach))
    return out


def reach_of(card: Any) -> tuple[float, str] | None:
    """(the card's copy bandwidth over its datasheet figure, what it rests on) for a card the table measured, or one
    with the same memory system as a measured card (_memory_of: the reach is the memory's, whatever the clock or
    power limit); None for every other card."""
    table, label = _table()
    if card.name in table:
        return table[card.name], f"published copy bandwidth, {label}"
    memory = _memory_of(card)
    sibling = _measured_memories().get(memory) if memory is not None else None
    if sibling is None:
        return None
    name, reach = sibling
    return reach, f"published copy bandwidth of the {name} (the same memory), {label}"


def scale_of(card: Any) -> tuple[float, str] | None:
    """(reach_of's reach over the calibration card's, what it rests on): what scales BANDWIDTH; None where nothing
    was measured (BANDWIDTH as it is)."""
    found, reference = reach_of(card), published().get(CALIBRATION_CARD)
    return None if found is None or not reference else (found[0] / reference, found[1])
