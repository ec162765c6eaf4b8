"""Rank catalog cards and 1/2/4/8-GPU configurations for a workload by speed: pure functions, no UI.

The plain ranking behind `recommend --all`, the report and the TUI; decisions (targets, prices,
picks) build on it in `options` and `picks`.

For each card and GPU count the workload is laid out over the GPUs (inference: tensor
parallel over all of them when heads allow; training: the workload's sharding, else ZeRO-3
once there is more than one GPU), its per-GPU memory is estimated and compared with the card's
memory, and the time, cost and energy of the run are estimated. A probe result for the local
card replaces that card's datasheet bandwidth and TFLOP/s with the measured figures.

Order: configurations that fit first, then the sort key (time, cost or energy; unknown last),
then card name, then GPU count: the same input always gives the same list.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from gpuadvisor.compare import measured_by_card
from gpuadvisor.core.errors import UserError
from gpuadvisor.estimate import (
    ComputeEstimate,
    Efficiency,
    GiB,
    HardwareFigures,
    MemoryBreakdown,
    apply_measured,
    estimate_compute,
    estimate_memory,
)
from gpuadvisor.layout import Sharding
from gpuadvisor.workload import Mode, Workload

SORT_KEYS = ("time", "cost", "energy", "memory")


@dataclass(frozen=True)
class Option:
    """One card x GPU count: whether it fits, why not, and what it would cost."""

    card: str
    num_gpus: int
    fits: bool
    reason: str  # why it does not fit, or how it was laid out
    memory: MemoryBreakdown
    memory_gib_per_gpu: float | None  # the card's memory
    compute: ComputeEstimate
    workload: Workload
    cost_usd: float | None  # price_per_hour x GPUs x hours, else purchase price x GPUs
    cost_basis: str  # "per hour" | "purchase" | "unknown"
    energy_wh: float | None  # TDP x GPUs x time
    uses_measured: bool
    hardware: HardwareFigures

    @property
    def time_s(self) -> float | None:
        return self.compute.time_s

    @property
    def needed_gib(self) -> float:
        return self.memory.total / GiB

    @property
    def headroom_gib(self) -> float | None:
        return None if self.memory_gib_per_gpu is None else self.memory_gib_per_gpu - self.needed_gib

    def to_dict(self) -> dict[str, Any]:
        return {
            "card": self.card,
            "num_gpus": self.num_gpus,
            "fits": self.fits,
            "reason": self.reason,
            "needed_gib_per_gpu": round(self.needed_gib, 3),
            "memory_gib_per_gpu": self.memory_gib_per_gpu,
            "tensor_parallel": self.workload.tensor_parallel,
            "sharding": self.workload.sharding,
            "memory": self.memory.to_dict(),
            "compute": self.compute.to_dict(),
            "time_s": self.time_s,
            "cost_usd": self.cost_usd,
            "cost_basis": self.cost_basis,
            "energy_wh": self.energy_wh,
            "uses_measured": self.uses_measured,
            "hardware_source": self.hardware.source,
        }


def layout(workload: Workload, num_gpus: int) -> Workload:
    """The workload spread over num_gpus GPUs (see the module docstring)."""
    w = workload
    m = w.model
    if num_gpus == w.num_gpus:
        return w.validate()
    if w.mode == Mode.INFERENCE:
        tp = num_gpus
        if m.is_transformer:
            while tp > 1 and m.num_heads % tp:
                tp //= 2
        return w.with_(num_gpus=num_gpus, tensor_parallel=max(1, tp), sharding="none")
    tp = w.tensor_parallel if num_gpus % w.tensor_parallel == 0 else 1
    sharding = w.sharding
    if num_gpus > 1 and sharding == Sharding.NONE:
        sharding = Sharding.ZERO3
    return w.with_(num_gpus=num_gpus, tensor_parallel=tp, sharding=sharding)


def evaluate(
    workload: Workload,
    gpu_figures: HardwareFigures,
    num_gpus: int,
    *,
    price_per_hour: float | None = None,
    launch_price_usd: float | None = None,
    efficiency: Efficiency | None = None,
) -> Option:
    """One card x GPU count."""
    w = layout(workload, num_gpus)
    mem = estimate_memory(w)
    comp = estimate_compute(w, gpu_figures, efficiency)
    need = mem.total / GiB
    if gpu_figures.memory_gib is None:
        fits, reason = False, "no memory figure in the catalog"
    elif need > gpu_figures.memory_gib:
        fits = False
        reason = f"needs {need:.1f} GiB per GPU, has {gpu_figures.memory_gib:g} GiB"
    else:
        fits = True
        lay = []
        if w.tensor_parallel > 1:
            lay.append(f"tensor parallel {w.tensor_parallel}")
        if w.sharding != "none" and w.data_parallel > 1:
            lay.append(w.sharding.upper() if w.sharding != "fsdp" else "FSDP")
        if w.data_parallel > 1 and not lay:
            lay.append(f"data parallel {w.data_parallel}")
        reason = f"uses {need:.1f} of {gpu_figures.memory_gib:g} GiB per GPU" + (f" ({', '.join(lay)})" if lay else "")
    t = comp.time_s
    if price_per_hour is not None and t is not None:
        cost, basis = price_per_hour * num_gpus * t / 3600.0, "per hour"
    elif price_per_hour is None and launch_price_usd:
        cost, basis = launch_price_usd * num_gpus, "purchase"
    else:
        cost, basis = None, "unknown"
    energy = gpu_figures.tdp_w * num_gpus * t / 3600.0 if (gpu_figures.tdp_w and t is not None) else None
    return Option(
        card=gpu_figures.name, num_gpus=num_gpus, fits=fits, reason=reason, memory=mem,
        memory_gib_per_gpu=gpu_figures.memory_gib,
        compute=comp, workload=w, cost_usd=cost, cost_basis=basis, energy_wh=energy,
        uses_measured=gpu_figures.source == "measured", hardware=gpu_figures,
    )


def _key(o: Option, sort_by: str) -> tuple:
    v = {"time": o.time_s, "cost": o.cost_usd, "energy": o.energy_wh, "memory": o.memory.total}[sort_by]
    return (not o.fits, v is None, v if v is not None else 0.0, o.card.casefold(), o.num_gpus)


def recommend(
    workload: Workload,
    catalog: Any,
    *,
    gpu_counts: Iterable[int] = (1, 2, 4, 8),
    price_per_hour: float | None = None,
    measured: Any = None,
    sort_by: str = "time",
    efficiency: Efficiency | None = None,
    cards: Iterable[str] | None = None,
    price_basis: str = "new",
) -> list[Option]:
    """Every card x GPU count, ranked (see the module docstring).

    `catalog`: a gpuadvisor.catalog.Catalog; `measured`: a results.RunResult of a probe run on
    the local card (its figures replace the datasheet ones for the matching card); `cards`: limit
    to these card names.
    """
    if sort_by not in SORT_KEYS:
        raise UserError(f"unknown sort key {sort_by!r} (one of {', '.join(SORT_KEYS)})")
    counts = sorted(set(gpu_counts))
    if not counts or any((not isinstance(n, int)) or n < 1 for n in counts):
        raise UserError(f"GPU counts must be positive integers, got {list(gpu_counts)!r}")
    if price_per_hour is not None and not (price_per_hour >= 0):
        raise UserError(f"price per hour must be >= 0, got {price_per_hour!r}")
    workload = workload.validate()
    meas = measured_by_card(measured, catalog)
    wanted = {c.casefold() for c in cards} if cards else None
    from gpuadvisor.advisor.options import purchase_of

    options: list[Option] = []
    for card in catalog.cards:
        if wanted is not None and card.name.casefold() not in wanted:
            continue
        gpu_figures = HardwareFigures.from_card(card)
        if card.name in meas:
            gpu_figures = apply_measured(gpu_figures, meas[card.name])
        for n in counts:
            if n > 1 and card.family in SINGLE_DEVICE_FAMILIES:
                continue  # an edge module is one GPU: there is no tensor parallelism across modules
            try:
                options.append(evaluate(workload, gpu_figures, n, price_per_hour=price_per_hour,
                                        launch_price_usd=purchase_of(card, price_basis)[0], efficiency=efficiency))
            except UserError:
                continue  # this layout is impossible (e.g. heads not divisible): skip the count
    options.sort(key=lambda o: _key(o, sort_by))
    return options


SINGLE_DEVICE_FAMILIES = frozenset({"jetson"})


def fewest_gpus_per_card(options: list[Option]) -> list[Option]:
    """The fitting options, keeping only each card's smallest GPU count, in rank order.

    More GPUs are almost always faster, so a ranking by time would otherwise fill its top rows
    with 8-GPU setups; what a buyer first asks is the least hardware each card needs.
    """
    fitting = [o for o in options if o.fits]
    fewest: dict[str, int] = {}
    for o in fitting:
        fewest[o.card] = min(fewest.get(o.card, o.num_gpus), o.num_gpus)
    return [o for o in fitting if o.num_gpus == fewest[o.card]]


def one_per_card(options: list[Option]) -> list[Option]:
    """One row per card, in rank order: its fewest GPUs that fit; cards that never fit follow,
    each at its largest GPU count tried, whose `reason` says why."""
    fitting = fewest_gpus_per_card(options)
    fits = {o.card for o in fitting}
    largest: dict[str, Option] = {}
    for o in options:
        if o.card not in fits and (o.card not in largest or o.num_gpus > largest[o.card].num_gpus):
            largest[o.card] = o
    return fitting + [o for o in options if largest.get(o.card) is o]


def why_not(options: list[Option]) -> dict[str, str]:
    """For each card with no fitting configuration: the reason at its largest GPU count."""
    fitting = {o.card for o in options if o.fits}
    out: dict[str, str] = {}
    for o in sorted(options, key=lambda o: (o.card.casefold(), -o.num_gpus)):
        if o.card not in fitting and o.card not in out:
            out[o.card] = f"{o.reason} even on {o.num_gpus} GPU{'s' if o.num_gpus > 1 else ''}"
    return out


__all__ = ["SORT_KEYS", "Option", "evaluate", "fewest_gpus_per_card", "layout", "one_per_card", "recommend", "why_not"]
