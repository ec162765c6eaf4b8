"""Options and what they cost: hardware (a rental offer, a card x count to buy, or the local card)
plus the estimate for the workload -> memory fit, time, throughput, $/hour, $/job or $/1M tokens,
energy, what binds, and whether every target is met. The one owner of these figures: the CLI,
the TUI and the report all read options from here.

The price-free figures (layout, fit, speed, what binds) come from `advisor.figures`.

Costs: a rental costs its instance price per hour (electricity included). Bought hardware costs
its purchase price amortised over `Targets.amortise_months` of `hours_per_month` use plus
electricity (TDP x utilisation x $/kWh) per hour; a training job on bought hardware costs the
purchase plus the job's electricity, and the hardware remains. The local card costs electricity.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

from gpuadvisor.advisor.figures import Figures, ServingMemo, figures
from gpuadvisor.advisor.targets import Targets
from gpuadvisor.core.errors import UserError
from gpuadvisor.estimate import DEFAULT_ENGINE, Efficiency, HardwareFigures, engine_profile
from gpuadvisor.estimate import calibration as cal
from gpuadvisor.workload import Workload

# How many of a card one buyer puts in one machine: a desktop takes one consumer card (no P2P or
# NVLink, few x16 slots), a workstation up to four professional cards, a server eight.
BUY_COUNTS = {"geforce": (1,), "radeon": (1,), "jetson": (1,), "professional": (1, 2, 4)}
SERVER_COUNTS = (1, 2, 4, 8)
BASEBOARD_FORMS = ("SXM", "OAM")  # modules that come on a 4- or 8-GPU baseboard (HGX, UBB), not one by one
BASEBOARD_COUNTS = (4, 8)
# JETSON_SYSTEM_GIB (a Jetson's memory taken by its OS and CPU) is in the calibration table
__getattr__ = cal.aliases(__name__, ("JETSON_SYSTEM_GIB",))


@dataclass(frozen=True)
class Hardware:
    """What would run the workload: `kind` "rent" (an instance), "buy" (a card x count) or
    "local" (the card measured here, already owned)."""

    kind: str
    card: str
    gpus: int
    usd_per_hour: float | None = None  # rent: the instance's price per hour
    purchase_usd: float | None = None  # buy: the price of all `gpus` cards
    purchase_kind: str | None = None  # "list" | "estimate" | "street" | "used" (+ ", no street|new": the other basis)
    purchase_source: str | None = None
    provider: str | None = None
    instance_type: str | None = None
    region: str | None = None
    spot: bool = False

    @property
    def label(self) -> str:
        n = f"{self.gpus}x {self.card}" if self.gpus > 1 else self.card
        if self.kind == "rent":
            from gpuadvisor.prices.model import region_label

            region = region_label(self.region)
            where = f" in {region}" if region else ""
            return f"{n} ({self.provider} {self.instance_type}{where}{', spot' if self.spot else ''})"
        if self.kind == "buy":
            return f"buy {n}"
        return f"your {n}"

    def to_dict(self) -> dict[str, Any]:
        d = {k: getattr(self, k) for k in self.__dataclass_fields__}
        d["label"] = self.label
        return d


@dataclass(frozen=True)
class Option:
    """One piece of hardware running the workload, with its figures and costs (all estimates)."""

    hardware: Hardware
    mode: str
    fits: bool
    layout: str
    tensor_parallel: int
    replicas: int
    needed_gib_per_gpu: float
    memory_gib_per_gpu: float | None
    usd_per_hour: float | None  # rent: price; buy: amortised purchase + electricity; local: electricity
    electricity_usd_h: float
    monthly_usd: float | None
    energy_kwh: float | None  # serving: per month; training: per job
    binds: str  # "memory" | "bandwidth" | "compute" | "interconnect" | "overhead" | "support" | "unknown"
    binds_note: str
    meets: bool
    misses: tuple[str, ...]
    # serving
    per_user_tokens_per_s: float | None = None
    aggregate_tokens_per_s: float | None = None
    ttft_s: float | None = None
    tpot_s: float | None = None
    max_users: int | None = None
    request_s: float | None = None  # non-decoder models: one request (batch) end to end
    requests_per_s: float | None = None
    usd_per_mtok: float | None = None  # at the targets' load
    capacity_tokens_per_s: float | None = None  # aggregate with as many users as fit (<= 256 per replica)
    usd_per_mtok_at_capacity: float | None = None
    usd_per_1k_requests: float | None = None  # models that do not decode
    # training
    wall_s: float | None = None
    tokens_per_s: float | None = None
    job_usd: float | None = None
    uses_measured: bool = False
    shortfall: float = 1.0  # worst ratio of target to achieved (1.0: meets every target)
    notes: tuple[str, ...] = field(default=())
    memory_parts: tuple[tuple[str, float], ...] = ()  # (item, GiB) per GPU of this layout
    usable_gib: float | None = None  # per GPU: the card less what a serving engine keeps free
    cannot_run: str = ""  # "cannot run: <why>" where the support matrix says the card cannot run the workload

    @property
    def serving(self) -> bool:
        return self.mode == "inference"

    @property
    def cost(self) -> float | None:
        """The cost axis of the frontier: $/hour of the deployment (serving), $ of the job (training)."""
        return self.usd_per_hour if self.serving else self.job_usd

    @property
    def time_s(self) -> float | None:
        """The time axis: seconds per output token per user (serving; per request for models that
        do not decode), wall time of the job (training)."""
        if self.serving:
            return self.tpot_s if self.tpot_s is not None else self.request_s
        return self.wall_s

    @property
    def label(self) -> str:
        return self.hardware.label

    def to_dict(self) -> dict[str, Any]:
        d = {k: getattr(self, k) for k in self.__dataclass_fields__ if k != "hardware"}
        d["hardware"] = self.hardware.to_dict()
        d["misses"] = list(self.misses)
        d["notes"] = list(self.notes)
        d["memory_parts"] = {k: v for k, v in self.memory_parts}
        d["label"] = self.label
        d["cost"] = self.cost
        d["time_s"] = self.time_s
        d["estimate"] = True
        return d


def price_option(f: Figures, hardware: Hardware, gpu_figures: HardwareFigures, workload: Workload,
                 targets: Targets, notes: tuple[str, ...] = (), host_misses: tuple[tuple[str, float], ...] = ()
                 ) -> Option:
    """Attach the hardware's costs to its figures and check every target (`host_misses`: what the
    rental instance lacks for the workload, with the ratio of need to have)."""
    t = targets
    g = hardware.gpus
    elec = t.electricity_usd_h(gpu_figures.tdp_w, g)
    kw_h = (gpu_figures.tdp_w or 0.0) * g * t.utilisation / 1000.0
    if hardware.kind == "rent":
        usd_h = hardware.usd_per_hour
    elif hardware.kind == "buy":
        usd_h = None if hardware.purchase_usd is None else (
            hardware.purchase_usd / (t.amortise_months * t.hours_per_month) + elec)
    else:
        usd_h = elec
    monthly = None if usd_h is None else usd_h * t.hours_per_month
    serving = workload.mode == "inference"
    wall_h = None if f.wall_s is None else f.wall_s / 3600.0
    job = None
    if not serving and wall_h is not None:
        if hardware.kind == "rent" and usd_h is not None:
            job = usd_h * wall_h
        elif hardware.kind == "buy" and hardware.purchase_usd is not None:
            job = hardware.purchase_usd + elec * wall_h
        elif hardware.kind == "local":
            job = elec * wall_h
    per_mtok = per_kreq = per_mtok_cap = None
    if serving and usd_h is not None:
        if f.aggregate:
            per_mtok = usd_h / (f.aggregate * 3600.0) * 1e6
        if f.capacity:
            per_mtok_cap = usd_h / (f.capacity * 3600.0) * 1e6
        if f.requests_per_s:
            per_kreq = usd_h / (f.requests_per_s * 3600.0) * 1e3
    energy = kw_h * (t.hours_per_month if serving else (wall_h or 0.0)) if gpu_figures.tdp_w else None
    misses, shortfall = _misses(f, t, serving, usd_h, monthly, job, wall_h)
    if hardware.kind == "buy" and t.max_card_usd and not hardware.purchase_usd:
        misses.append(f"price unknown, cap ${t.max_card_usd:,.0f} a card")  # a cap cannot vouch for it
        shortfall = max(shortfall, 2.0)
    elif hardware.kind == "buy" and t.max_card_usd and hardware.purchase_usd:
        unit = hardware.purchase_usd / hardware.gpus
        if unit > t.max_card_usd:
            misses.append(f"a card costs ${unit:,.0f}, cap ${t.max_card_usd:,.0f}")
            shortfall = max(shortfall, unit / t.max_card_usd)
    for text, ratio in host_misses:
        misses.append(text)
        shortfall = max(shortfall, ratio)
    return Option(
        hardware=hardware, mode=workload.mode, fits=f.fits, layout=f.layout, tensor_parallel=f.tp,
        replicas=f.replicas, needed_gib_per_gpu=f.needed_gib, memory_gib_per_gpu=gpu_figures.memory_gib,
        usd_per_hour=usd_h, electricity_usd_h=elec, monthly_usd=monthly, energy_kwh=energy, binds=f.binds,
        binds_note=f.binds_note, meets=not misses, misses=tuple(misses), per_user_tokens_per_s=f.per_user,
        aggregate_tokens_per_s=f.aggregate, ttft_s=f.ttft, tpot_s=f.tpot, max_users=f.max_users,
        request_s=f.request_s, requests_per_s=f.requests_per_s, usd_per_mtok=per_mtok, usd_per_1k_requests=per_kreq,
        capacity_tokens_per_s=f.capacity, usd_per_mtok_at_capacity=per_mtok_cap,
        wall_s=f.wall_s, tokens_per_s=f.tokens_per_s, job_usd=job,
        uses_measured=gpu_figures.source == "measured", shortfall=shortfall, notes=notes,
        memory_parts=f.memory_parts, usable_gib=f.usable_gib,
    )


def tensor_basis(card: Any) -> str:
    """"datasheet", "derived" (unpublished, computed from the architecture) or "none" (no matrix units)."""
    t = getattr(card, "tensor_dense_tflops", None)
    return str(getattr(t, "basis", "datasheet") or "datasheet")


def hw_notes(card: Any, workload: Workload) -> tuple[str, ...]:
    """What the figures assume about this card, in words: no matrix units (16-bit work at the FP32
    rate), tensor figures derived from the architecture, no bf16 (runs in fp16 on tensor cores)."""
    out: list[str] = []
    cc = getattr(card, "compute_capability", None)
    sixteen = workload.compute_dtype in ("bf16", "fp16", "fp8")
    basis = tensor_basis(card)
    if sixteen and basis == "none":
        out.append(f"{card.name} has no tensor cores: {workload.compute_dtype} work is costed at its FP32 rate "
                   f"({card.fp32_tflops or 0:g} TFLOPS)")
    elif sixteen and basis == "derived":
        out.append(f"{card.name}: tensor rates unpublished, derived from its architecture (catalog note)")
    if basis != "none" and workload.compute_dtype == "bf16" and getattr(card, "vendor", "") == "nvidia" and cc \
            and tuple(int(x) for x in cc.split(".")) < (8, 0):
        out.append(f"{card.name} has no bf16: it would run in fp16 on its tensor cores (same memory and speed "
                   "estimate)")
    return tuple(out)


def runs_sixteen_bit_well(card: Any, workload: Workload, only: tuple[str, ...] = ()) -> bool:
    """Whether to shortlist a card for 16-bit training, LoRA, QLoRA or a non-decoding model: cards
    with no matrix units (Pascal and older, GCN 5, RDNA 1-2) run it at the FP32 rate (QLoRA's
    4-bit kernels and bf16 autocast were not written for them) and are left out unless named."""
    if tensor_basis(card) != "none" or workload.compute_dtype not in ("bf16", "fp16", "fp8"):
        return True
    if only and any(q.casefold() in card.name.casefold() for q in only):
        return True
    return workload.mode == "inference" and workload.model.kind == "decoder"


def _misses(f: Figures, t: Targets, serving: bool, usd_h: float | None, monthly: float | None,
            job: float | None, wall_h: float | None) -> tuple[list[str], float]:
    """Each missed target in words, and the worst ratio of target to achieved (for closest misses)."""
    out: list[str] = []
    worst = 1.0
    if not f.fits:
        out.append(f.why_not or "does not fit")
        worst = math.inf if not f.max_users else max(worst, t.users / f.max_users)
    if not f.fits:
        pass  # what does not fit has no speed to miss targets by
    elif serving:
        if t.tokens_per_s and f.per_user is not None and f.per_user < t.tokens_per_s:
            out.append(f"{f.per_user:.1f} tok/s per user, {t.tokens_per_s:g} asked")
            worst = max(worst, t.tokens_per_s / f.per_user)
        lat = f.ttft if f.ttft is not None else f.request_s
        if t.ttft_s and lat is not None and lat > t.ttft_s:
            out.append(f"first token after {lat:.2f} s, {t.ttft_s:g} s asked")
            worst = max(worst, lat / t.ttft_s)
        mb = t.month_budget
        if mb and monthly is not None and monthly > mb:
            out.append(f"${monthly:,.0f} a month, budget ${mb:,.0f}")
            worst = max(worst, monthly / mb)
    else:
        if t.deadline_h and wall_h is not None and wall_h > t.deadline_h:
            out.append(f"takes {wall_h:,.1f} h, deadline {t.deadline_h:g} h")
            worst = max(worst, wall_h / t.deadline_h)
        jb = t.job_budget
        if jb and job is not None and job > jb:
            out.append(f"costs ${job:,.0f}, budget ${jb:,.0f}")
            worst = max(worst, job / jb)
    if t.usd_per_hour and usd_h is not None and usd_h > t.usd_per_hour:
        out.append(f"${usd_h:,.2f}/h, budget ${t.usd_per_hour:g}/h")
        worst = max(worst, usd_h / t.usd_per_hour)
    return out, worst


PRICE_BASES = ("new", "street")


def purchase_of(card: Any, basis: str = "new") -> tuple[float | None, str | None, str | None]:
    """(unit price in USD, kind, source) of a card on a price basis. "new": its `purchase` entry
    (list price or estimate), else its launch price; "street": its dated street or used price.
    Where the basis has none the other is used and the kind says so ("list, no street")."""
    new = _entry(getattr(card, "purchase", None))
    if new is None and getattr(card, "launch_price_usd", None):
        new = (float(card.launch_price_usd), "list", getattr(card, "source", None))
    street = _entry(getattr(card, "street", None))
    first, other = (street, new) if basis == "street" else (new, street)
    if first is not None:
        return first
    if other is not None:
        return other[0], f"{other[1]}, no {basis}", other[2]
    return None, None, None


def per_gpu_batch(workload: Workload, gpus: int) -> Workload:
    """A training job's global batch (`--batch`, the same in every command) as sequences per GPU on `gpus`
    data-parallel GPUs, rounded up as Workload.micro_batch rounds it; serving workloads are unchanged."""
    if not workload.is_training:
        return workload
    return workload.with_(batch=-(-workload.batch // gpus))


def hardware_of(card: Any, measured: dict[str, float] | None = None) -> HardwareFigures:
    """The figures every interface costs a card at: its datasheet (or `measured` figures), with a
    Jetson's unified memory less what its OS and CPU take."""
    from gpuadvisor.estimate import apply_measured

    gpu_figures = HardwareFigures.from_card(card)
    if card.family == "jetson" and gpu_figures.memory_gib:  # unified memory: the OS and CPU share it
        gpu_figures = replace(gpu_figures, memory_gib=max(0.5, gpu_figures.memory_gib - cal.JETSON_SYSTEM_GIB))
    return apply_measured(gpu_figures, measured) if measured else gpu_figures


# What a rental instance's host must have for the workload (defaults, stated in the advice's notes):
VISION_VCPUS_PER_GPU = 6  # DataLoader workers decoding and augmenting JPEGs (ImageNet-style training)
VCPUS_PER_GPU = 2  # a tokenizer / engine process and the launcher per GPU
MIN_HOST_GIB = 16
QLORA_LOAD_SHARE = 0.5  # QLoRA: the 16-bit checkpoint is read and quantized while loading (page cache)


@lru_cache(maxsize=64)
def trains_on_images(workload: Workload) -> bool:
    """Whether the traced model's samples are images (its graph's unit), whose loading decodes and augments them on
    the host; a text, audio or tabular model's samples are not. Where the graph cannot be had, by its library."""
    from gpuadvisor.estimate.graph_estimate import workload_graph

    try:
        return workload_graph(workload).unit == "images"
    except UserError:
        return workload.model.trace.split(":", 1)[0] in ("torchvision", "timm")


def host_needs(workload: Workload, gpus: int) -> tuple[int, float, str]:
    """(vCPUs, host memory GiB, why) an instance needs for the workload on `gpus` GPUs."""
    m = workload.model
    ckpt = m.num_params * 2 / 2**30  # the 16-bit checkpoint
    if workload.mode != "inference" and m.is_traced and trains_on_images(workload):
        return VISION_VCPUS_PER_GPU * gpus, float(MIN_HOST_GIB), "data loading for vision training"
    if workload.mode != "inference" and m.is_traced:
        return VCPUS_PER_GPU * gpus, float(MIN_HOST_GIB), "data loading and the launcher"
    if workload.mode == "qlora":
        return VCPUS_PER_GPU * gpus, max(MIN_HOST_GIB, QLORA_LOAD_SHARE * ckpt), "loading and quantizing the base"
    if workload.mode in ("training", "lora"):
        return VCPUS_PER_GPU * gpus, max(MIN_HOST_GIB, ckpt), "loading the 16-bit checkpoint"
    return VCPUS_PER_GPU * gpus, float(MIN_HOST_GIB), "the engine and the tokenizer"


def host_misses(offer: Any, workload: Workload, gpus: int) -> tuple[tuple[str, float], ...]:
    """What an instance lacks (vCPUs, memory), with the ratio of need to have; unknown counts pass."""
    cpus, mem, why = host_needs(workload, gpus)
    out = []
    have_c = getattr(offer, "vcpus", None)
    have_m = getattr(offer, "memory_gib", None)
    if have_c and have_c < cpus:
        out.append((f"{have_c:g} vCPUs, {cpus} wanted for {why}", cpus / have_c))
    if have_m and have_m < mem:
        out.append((f"{have_m:g} GiB host memory, {mem:,.0f} wanted for {why}", mem / have_m))
    return tuple(out)


def _entry(p: Any) -> tuple[float, str, str | None] | None:
    if p is None:
        return None
    get = p.get if isinstance(p, dict) else (lambda k, _p=p: getattr(_p, k, None))
    usd = get("usd")
    return (float(usd), str(get("kind") or "list"), get("source")) if usd else None


def _buy_counts(card: Any, override: dict[str, tuple[int, ...]] | None) -> tuple[int, ...]:
    """GPU counts one would buy of this card: by family, and SXM/OAM modules only on the 4- or
    8-GPU baseboards they are sold on; a card that is one of several GPUs on a board (`gpus_per_board`:
    K80, M60, A16) only in whole boards."""
    if override and card.family in override:
        counts = override[card.family]
    elif any(k in (getattr(card, "form_factor", None) or "") for k in BASEBOARD_FORMS):
        counts = BASEBOARD_COUNTS
    else:
        counts = BUY_COUNTS.get(card.family, SERVER_COUNTS)
    per_board = getattr(card, "gpus_per_board", 1) or 1
    if per_board > 1:
        counts = tuple(g for g in counts if g % per_board == 0) or (per_board,)
    return counts


def wanted(card: Any, only: tuple[str, ...]) -> bool:
    """`--only`: a card whose name contains one of the words, or of one of the families (jetson, geforce, ...)."""
    if not only:
        return True
    name = card.name.casefold()
    return any(q.casefold() in name or q.casefold() == card.family for q in only)


def build_options(
    workload: Workload,
    catalog: Any,
    targets: Targets,
    *,
    offers: Any = (),
    spot: bool = False,
    region: str | None = None,
    buy: bool = True,
    rent: bool = True,
    buy_counts: dict[str, tuple[int, ...]] | None = None,
    engine: str = DEFAULT_ENGINE,
    efficiency: Efficiency | None = None,
    measured: dict[str, dict[str, float]] | None = None,
    local_cards: tuple[str, ...] = (),
    only: tuple[str, ...] = (),
    price_basis: str = "new",
    requires: tuple[str, ...] = (),
) -> list[Option]:
    """Every rental offer, every purchasable card x count and the local card(s), priced and checked.

    `offers`: prices.Offer objects (already filtered by provider/region); `measured`: card name ->
    measured figures (they replace that card's datasheet figures); `local_cards`: catalog names of
    the cards in this machine, one entry per GPU, each card added as a "local" option on the fewest
    of its GPUs that fit (all of them when none fits);
    `only`: keep cards whose name contains one of these (case-insensitive) or whose family is one;
    `buy_counts`: family -> GPU counts to consider buying (default BUY_COUNTS, else 1/2/4/8);
    `price_basis`: "new" (list prices) or "street" (dated street/used prices), see `purchase_of`;
    `requires`: support-matrix features the job needs beyond what the workload implies (e.g. "flash-attention-2").
    A card the support matrix says cannot run the workload (its engine, precision, kernels or layout) gives options
    that do not fit, with `cannot_run` saying why and no figures: never a pick, listed as such.
    """
    workload = workload.validate()
    targets = targets.for_workload(workload)
    engine_profile(engine)
    cards = _cards_for(workload, catalog, only)
    b = _Builder(workload, targets, cards, engine, efficiency, measured or {},
                 blocked=cannot_run_cards(workload, cards.values(), engine=engine, requires=requires))
    out: list[Option] = []
    if rent:
        out += b.rent(offers, spot, region)
    if buy:
        out += b.buy(buy_counts, price_basis)
    out += b.local(local_cards)
    if not out and b.errors:
        raise b.errors[0]  # nothing could be estimated (e.g. a traced model without PyTorch): say why
    return out


def not_for_sale(opts: list[Option], catalog: Any, only: tuple[str, ...] = ()) -> dict[str, Any]:
    """Card name -> its `not_sold` reason, for the cards not sold on their own that a buyer would look for
    here: those with an option (rented or local) or named by `only`. Their purchase is never offered."""
    shown = {o.hardware.card for o in opts}
    return {c.name: c.not_sold for c in catalog.cards if getattr(c, "not_sold", None) is not None
            and (c.name in shown or (only and wanted(c, only)))}


def _cards_for(workload: Workload, catalog: Any, only: tuple[str, ...]) -> dict[str, Any]:
    """The catalog cards to consider: those `only` names, that run the workload's precision well."""
    cards = {c.name: c for c in catalog.cards if wanted(c, only)}
    if only and not cards:
        raise UserError(f"no catalog card matches {', '.join(only)} (a name part such as 'orin' or a family)")
    return {n: c for n, c in cards.items() if runs_sixteen_bit_well(c, workload, only)}


def cannot_run_cards(workload: Workload, cards: Any, *, engine: str = DEFAULT_ENGINE,
                     requires: tuple[str, ...] = ()) -> dict[str, str]:
    """Card name -> "cannot run: <why>" for each card the support matrix rules out for the workload: the serving
    engine, fp8, bitsandbytes kernels, the features `requires` names, or (LoRA/QLoRA) a tensor-parallel layout."""
    from gpuadvisor.advisor.support import adapter_layout_blocker, cannot_run, load_matrix, needs

    matrix = load_matrix()
    features = needs(workload, step_engine=str(engine), requires=requires)
    layout = adapter_layout_blocker(workload, tp=workload.tensor_parallel)
    out = {}
    for card in cards:
        why = cannot_run(card, features, matrix) or layout
        if why:
            out[card.name] = why
    return out


class _Builder:
    """The options of one workload on a set of cards: each card's figures and each (card, count)'s
    estimate computed once, whichever of rent, buy and local asks first."""

    def __init__(self, workload: Workload, targets: Targets, cards: dict[str, Any], engine: str,
                 efficiency: Efficiency | None, measured: dict[str, dict[str, float]],
                 blocked: dict[str, str] | None = None) -> None:
        self.workload, self.targets, self.cards = workload, targets, cards
        self.blocked = blocked or {}  # card name -> "cannot run: <why>" (support matrix)
        self.engine, self.efficiency, self.measured = engine, efficiency, measured
        self.hws: dict[str, HardwareFigures] = {}
        self.notes: dict[str, tuple[str, ...]] = {}  # hw_notes by card: one per card, not per offer
        self.cache: dict[tuple[str, int], Figures | None] = {}
        self.errors: list[UserError] = []
        self.memo: ServingMemo = {}  # serving estimates shared between card x count figures (figures.ServingMemo)

    def hw_of(self, name: str) -> HardwareFigures:
        if name not in self.hws:
            self.hws[name] = hardware_of(self.cards[name], self.measured.get(name))
        return self.hws[name]

    def figs(self, name: str, g: int) -> Figures | None:
        """The estimate on `g` of the card; None (and the error kept) for an impossible layout. A card that
        cannot run the workload gets no estimate: figures that do not fit, saying why."""
        if name in self.blocked:
            why = self.blocked[name]
            return Figures(fits=False, layout="-", tp=1, replicas=g, needed_gib=0.0, binds="support", binds_note=why,
                           why_not=why)
        if (name, g) not in self.cache:
            try:
                self.cache[(name, g)] = figures(per_gpu_batch(self.workload, g), self.hw_of(name), g, self.targets,
                                                engine=self.engine, efficiency=self.efficiency, memo=self.memo)
            except UserError as e:
                self.cache[(name, g)] = None  # an impossible layout for this count
                self.errors.append(e)
        return self.cache[(name, g)]

    def priced(self, f: Figures, hwd: Hardware, misses: tuple[tuple[str, float], ...] = ()) -> Option:
        name = hwd.card
        if name not in self.notes:
            self.notes[name] = hw_notes(self.cards[name], self.workload)
        opt = price_option(f, hwd, self.hw_of(name), self.workload, self.targets, self.notes[name], misses)
        return replace(opt, cannot_run=self.blocked[name], shortfall=math.inf) if name in self.blocked else opt

    def rent(self, offers: Any, spot: bool, region: str | None) -> list[Option]:
        """Every whole-GPU rental offer of a considered card with a price."""
        out = []
        for o in offers:
            name = getattr(o, "card", None)
            g = getattr(o, "gpu_count", None)
            if not isinstance(name, str) or name not in self.cards or not isinstance(g, int) or g < 1:
                continue
            if getattr(o, "fractional", False):
                continue  # a share of one GPU (prices.Offer.gpu_fraction < 1) is not a whole card
            price = o.price_usd_h(spot=spot, region=region)
            if price is None or not price > 0:
                continue
            f = self.figs(name, g)
            if f is None:
                continue
            reg = region or getattr(o, "region", None)
            hwd = Hardware("rent", name, g, usd_per_hour=float(price), provider=o.provider,
                           instance_type=o.instance_type, region=reg, spot=spot)
            out.append(self.priced(f, hwd, host_misses(o, self.workload, g)))
        return out

    def buy(self, buy_counts: dict[str, tuple[int, ...]] | None, price_basis: str) -> list[Option]:
        """Every considered card bought, by count, up to the fewest that meet every target; a card not
        sold on its own (`not_sold`: cloud-only, systems-only) is never offered (see `not_for_sale`)."""
        out = []
        for card in self.cards.values():
            if getattr(card, "not_sold", None) is not None:
                continue
            unit, kind, source = purchase_of(card, price_basis)
            for g in _buy_counts(card, buy_counts):
                f = self.figs(card.name, g)
                if f is None:
                    continue
                hwd = Hardware("buy", card.name, g, purchase_usd=None if unit is None else unit * g,
                               purchase_kind=kind, purchase_source=source)
                opt = self.priced(f, hwd)
                out.append(opt)
                if opt.meets or opt.cannot_run:
                    break  # more cards than the fewest that meet every target (or can run none) is no purchase
        return out

    def local(self, local_cards: tuple[str, ...]) -> list[Option]:
        """This machine's cards: each on the fewest of its GPUs that fit (all of them when none fits)."""
        out = []
        for name, have in Counter(local_cards).items():  # one entry per local GPU
            if name not in self.cards:
                continue
            tried = [(g, f) for g in range(1, have + 1) if (f := self.figs(name, g)) is not None]
            chosen = next(((g, f) for g, f in tried if f.fits), tried[-1] if tried else None)  # fewest that fit
            if chosen is not None:
                g, f = chosen
                out.append(self.priced(f, Hardware("local", name, g)))
        return out


__all__ = ["BUY_COUNTS", "PRICE_BASES", "Hardware", "Option", "build_options", "cannot_run_cards", "figures",
           "hardware_of", "not_for_sale", "price_option", "purchase_of"]
