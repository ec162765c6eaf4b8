"""How much of its datasheet tensor peak a large 16-bit matmul reaches on a card: published measurements
(catalog/matmul-reach.yaml, built by tools/matmul_reach.py), else the median of the published cards that run their
tensor cores the same way (`group`).

Why it differs by card, and why it is not a per-card fudge: a card that runs 16-bit tensor operations with FP32
accumulate at half rate (GeForce) needs half the operand bandwidth per FLOP from shared memory and registers, so
its kernels keep the tensor cores fed and its boost clock holds above the listed one: its matmuls reach about 1.06x
the listed peak. A full-rate card (A100, H100, L40S, the professional cards) is fed at its limit and reaches about
0.8x. AMD's Instinct cards list their peak at a boost clock that dense matrix work never holds under their power
limit (the MI300X: a median 1,207 of 2,100 MHz, AMD's own measurement): 0.54-0.65x. The estimator's large-GEMM
efficiency (calibration MFU) was fitted on the H100, so a card's matmul rate is MFU x (its reach / the H100's): the
H100 itself is unchanged, every other card moves by what was measured on it."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

REACH_FILE = "matmul-reach.yaml"
#: the card the calibration's MFU was fitted on
CALIBRATION_CARD = "H100 SXM5 80GB"


@dataclass(frozen=True)
class Reach:
    """A card's large-matmul reach (measured / datasheet peak) and what it rests on."""

    value: float
    basis: str

    def relative_to_calibration(self) -> float:
        """The reach over the calibration card's: what scales the H100-fitted MFU."""
        return self.value / _calibration_reach()


def _calibration_reach() -> float:
    """The calibration card's reach, from the cached table where it can."""
    entry = _shipped_reaches().get(CALIBRATION_CARD, (None, None))[1]
    return entry[0] if entry else published()[CALIBRATION_CARD]


def _path() -> Path:
    from gpuadvisor.core.paths import shipped_catalog_dir

    return shipped_catalog_dir() / REACH_FILE


@lru_cache(maxsize=1)
def _table() -> dict[str, tuple[float, str]]:
    """Card name -> (the published reach, the label of the sources its rows come from); empty where the file is
    missing."""
    path = _path()
    if not path.is_file():
        return {}
    import yaml

    data = yaml.safe_load(path.read_text())
    labels = {key: str(src.get("label", key)) for key, src in data.get("sources", {}).items()}
    out = {}
    for name, e in data["cards"].items():
        sources = sorted({labels.get(r.get("source", ""), "") for r in e["rows"]} - {""})
        out[name] = (float(e["reach"]), "; ".join(sources))
    return out


@lru_cache(maxsize=1)
def published() -> dict[str, float]:
    """Card name -> the published reach (empty where the file is missing)."""
    return {name: reach for name, (reach, _) in _table().items()}


#: group -> how a Reach's basis names its cards
GROUP_NAMES = {"half-rate": "half-rate FP32-accumulate", "full-rate": "full-rate", "amd-instinct": "AMD Instinct",
               "amd-radeon": "AMD Radeon"}


def group(card: Any) -> str | None:
    """Which cards' median reach a card without a measurement takes: NVIDIA's by how their tensor cores accumulate
    in FP32 ("half-rate", "full-rate"), AMD's by product line ("amd-instinct", CDNA, power-limited clocks under
    matrix work; "amd-radeon", RDNA); None for a card without tensor (matrix) rates or of another vendor."""
    if not card.tensor_tflops("bf16") and not card.tensor_tflops("fp16"):
        return None
    if card.vendor == "nvidia":
        return "half-rate" if half_rate(card) else "full-rate"
    if card.vendor == "amd":
        return "amd-instinct" if str(getattr(card, "arch_id", "") or "").startswith("cdna") else "amd-radeon"
    return None


@lru_cache(maxsize=1)
def _group_medians() -> dict[str, float]:
    """`group` -> the median published reach of its cards."""
    from gpuadvisor.catalog import load_catalog

    catalog = load_catalog(use_env=False)
    groups: dict[str, list[float]] = {}
    for name, reach in published().items():
        key = group(catalog.get(name))
        if key is not None:
            groups.setdefault(key, []).append(reach)
    return {k: statistics.median(v) for k, v in groups.items()}


def half_rate(card: Any) -> bool:
    """Whether the card runs 16-bit tensor operations with FP32 accumulate at half rate."""
    from gpuadvisor.architectures import architecture_of, runs_fp32_accumulate_at_half_rate

    arch = architecture_of(card)
    return arch is not None and runs_fp32_accumulate_at_half_rate(card, arch)


def _same_silicon(card: Any, other: Any) -> bool:
    """Whether two cards run the same tensor cores at the same clock under the same power limit (memory aside): the
    same architecture entry, SM count, boost clock, power limit and dense bf16 peak."""
    keys = ("arch_id", "compute_units", "boost_clock_mhz", "tdp_w")
    return all(getattr(card, k, None) is not None and getattr(card, k, None) == getattr(other, k, None)
               for k in keys) and card.tensor_tflops("bf16") == other.tensor_tflops("bf16")


def _same_chip(card: Any, other: Any) -> bool:
    """The same architecture entry and, where both are known, the same SM count: one chip, whatever its clock,
    power limit or memory."""
    arch = getattr(card, "arch_id", None)
    units = (getattr(card, "compute_units", None), getattr(other, "compute_units", None))
    return arch is not None and arch == getattr(other, "arch_id", None) and (None in units or units[0] == units[1])


def _measured_sibling(card: Any, table: dict[str, float], catalog: Any) -> Reach | None:
    """The reach measured on the same chip at the same or a lower power limit, the nearest such limit (the median
    where several cards share it): a card's datasheet peak already carries its clock, and a higher power limit
    holds that clock at least as well, so the same chip reaches at least the same fraction of it (the GB200's GPU
    is the B200's chip at 1,200 W against 1,000 W; the H200 reaches what the H100 SXM does at the same 700 W).
    None where no measured card is such a sibling (a lower-power card, the H100 PCIe at 350 W, is not: its
    clock falls under load)."""
    power = getattr(card, "tdp_w", None)
    if not power:
        return None
    found = []
    for name, reach in table.items():
        other = catalog.get(name)
        if other is not None and _same_chip(card, other) and group(other) == group(card) \
                and other.tdp_w and other.tdp_w <= power:
            found.append((other.tdp_w, name, reach))
    if not found:
        return None
    nearest = max(p for p, _, _ in found)
    names = sorted(n for p, n, _ in found if p == nearest)
    value = statistics.median(r for p, _, r in found if p == nearest)
    return Reach(value, f"published matmul measurement of the {' and the '.join(names)} (the same chip at "
                        f"{nearest:g} W, this card {power:g} W)")


#: the groups whose cards hold less of their boost clock under dense matrix work the less power they have for it:
#: NVIDIA's full-rate tensor cores and AMD's Instinct cards (the half-rate GeForce cards run above their listed
#: boost, their reach over 1: not held back by their power limit)
POWER_LIMITED_GROUPS = ("full-rate", "amd-instinct")


def power_coefficient(card: Any) -> float | None:
    """The card's power limit per SM (compute unit) and per GHz cubed of its boost clock: how much of the power its
    tensor cores need to hold that clock it has (dynamic power grows as the clock cubed); None where a figure is
    missing."""
    power, units, clock = (getattr(card, k, None) for k in ("tdp_w", "compute_units", "boost_clock_mhz"))
    if not (power and units and clock):
        return None
    return float(power) / float(units) / (float(clock) / 1e3) ** 3


def _power_limited(card: Any, table: dict[str, float], catalog: Any) -> Reach | None:
    """The reach of the measured card of the same architecture and group nearest in power_coefficient, at the clock
    this card's power limit holds. With less power for its SMs and clock than that card: x (this card's coefficient /
    the measured card's) ^ POWER_CLOCK_EXPONENT (the H100 PCIe at 350 W against the H100 SXM's 700 W, the A10 at
    150 W against the RTX A6000). With more: the measured reach itself, a lower bound (more power holds the clock at
    least as well; the Quadro RTX 8000 takes the 70 W T4's), where it had another architecture's median. Only the
    groups whose clocks fall under dense matrix work (POWER_LIMITED_GROUPS); None where a figure is missing or no
    card of the architecture is measured."""
    from gpuadvisor.estimate import calibration as cal

    key, own = group(card), power_coefficient(card)
    arch = getattr(card, "arch_id", None)
    if key not in POWER_LIMITED_GROUPS or own is None or arch is None:
        return None
    found = []
    for name, reach in table.items():
        other = catalog.get(name)
        theirs = power_coefficient(other) if other is not None else None
        if theirs and other.arch_id == arch and group(other) == key:
            found.append((abs(math.log(own / theirs)), own / theirs, name, reach))
    if not found:
        return None
    distance, share = min((d, s) for d, s, _, _ in found)  # the nearest; the median of cards that share its figures
    names = sorted(n for d, s, n, _ in found if (d, s) == (distance, share))
    reach = statistics.median(r for d, s, _, r in found if (d, s) == (distance, share))
    which = f"published matmul measurement of the {' and the '.join(names)}"
    if share >= 1.0:
        return Reach(reach, f"{which} (its architecture at {1 / share:.2f}x this card's power per SM and GHz cubed: "
                            "a lower bound)")
    clock = share ** cal.POWER_CLOCK_EXPONENT
    return Reach(reach * clock, f"{which}, at the clock this card's lower power limit holds (x {clock:.2f}: "
                                f"{share:.2f}x their power per SM and GHz cubed)")


def reach_of(card: Any) -> Reach | None:
    """The card's reach (reach_of_uncached), for a shipped card from a table cached with the catalog's files
    (datacache: a cold `recommend` parses no YAML)."""
    shipped = _shipped_reaches()
    if card.name in shipped and shipped[card.name][0] == card.tensor_tflops("bf16"):
        entry = shipped[card.name][1]
        return Reach(*entry) if entry else None
    return reach_of_uncached(card)


@lru_cache(maxsize=1)
def _shipped_reaches() -> dict[str, tuple[float | None, tuple[float, str] | None]]:
    """Shipped card name -> (its bf16 peak, its reach as (value, basis) or None), cached on disk across processes
    and in this process (the disk cache's key hashes the catalog's files: too slow for every card's figures)."""
    from gpuadvisor.architectures import ARCHITECTURES_FILE
    from gpuadvisor.core.paths import shipped_catalog_dir
    from gpuadvisor.datacache import cached

    base = shipped_catalog_dir()
    from gpuadvisor.estimate.calibration import gpu as gpu_constants

    inputs = [*sorted(base.glob("*.yaml")), base / ARCHITECTURES_FILE, Path(__file__), Path(gpu_constants.__file__)]

    def build() -> dict[str, tuple[float | None, tuple[float, str] | None]]:
        from gpuadvisor.catalog import load_catalog

        out: dict[str, tuple[float | None, tuple[float, str] | None]] = {}
        for c in load_catalog(use_env=False).cards:
            r = reach_of_uncached(c)
            out[c.name] = (c.tensor_tflops("bf16"), (r.value, r.basis) if r else None)
        return out

    return cached("matmul-reach", inputs, build, lambda v: isinstance(v, dict) and CALIBRATION_CARD in v)


def reach_of_uncached(card: Any) -> Reach | None:
    """The card's reach: published, else that of a published card on the same silicon at the same clock and power
    (the A100 SXM4 40GB takes the 80GB's), else that of the same chip at the nearest power limit not above its own
    (_measured_sibling), else that of the measured card of its architecture nearest in power for its SMs and clock,
    at the clock this card's power holds (_power_limited), else its group's median (`group`); None for cards outside
    them all (no tensor or matrix rates, or no published card of their group), which keep the calibration MFU."""
    table = published()
    if card.name in table:
        return Reach(table[card.name], f"published matmul measurement, {_table()[card.name][1]}")
    from gpuadvisor.catalog import load_catalog

    catalog = load_catalog(use_env=False)
    for name, reach in table.items():
        other = catalog.get(name)
        if other is not None and _same_silicon(card, other):
            return Reach(reach, f"published matmul measurement of the {name} (same chip, SMs, clock and power)")
    sibling = _measured_sibling(card, table, catalog) or _power_limited(card, table, catalog)
    if sibling is not None:
        return sibling
    key = group(card)
    median = _group_medians().get(key) if key is not None else None
    if key is None or median is None:
        return None
    return Reach(median, f"median of the published {GROUP_NAMES[key]} cards")
