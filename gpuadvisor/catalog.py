"""The GPU catalog: YAML files of datasheet figures, loaded into validated, typed cards.

Every field is required (null where a figure is unpublished) so that a forgotten field is an
error rather than a silent gap. Errors name the file, the card and the field, on one line.
"""

from __future__ import annotations

import datetime as dt
import difflib
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Annotated, Any, Literal

import pydantic
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from gpuadvisor.architectures import ARCHITECTURES_FILE  # the hardware model by architecture, not a card file
from gpuadvisor.core.errors import UserError
from gpuadvisor.core.fileio import load_yaml
from gpuadvisor.core.paths import shipped_catalog_dir
from gpuadvisor.datacache import cached

CATALOG_ENV = "GPUADVISOR_CATALOG"
TENSOR_DTYPES = ("fp16", "bf16", "tf32", "fp8", "fp4", "int8")

_URL = re.compile(r"https?://\S+$")


def _http_url(v: str) -> str:
    if not _URL.match(v):
        raise ValueError("must be an http(s) URL")
    return v


SourceUrl = Annotated[str, AfterValidator(_http_url)]  # where a datasheet or price figure was read
_DATE = re.compile(r"\d{4}-(0[1-9]|1[0-2])(-(0[1-9]|[12]\d|3[01]))?$")

Vendor = Literal["nvidia", "amd"]
Family = Literal["geforce", "professional", "datacenter", "jetson", "instinct", "radeon"]


class _Strict(BaseModel):
    # validators are built on first use: a cold `recommend` reads the shipped cards from the cache
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class TensorTflops(_Strict):
    """Dense (not 2:4 sparse) matrix-unit peaks; int8 in TOPS. None: absent or unpublished.

    `basis`: "datasheet" (the vendor's figures), "derived" (unpublished: computed from the
    architecture, units per SM x clock x ops per clock, `note` says how), or "none" (the card has
    no matrix units; `note` says at what rate 16-bit work is costed)."""

    fp16: float | None
    bf16: float | None
    tf32: float | None
    fp8: float | None
    fp4: float | None
    int8: float | None
    basis: Literal["datasheet", "derived", "none"] = "datasheet"
    note: str | None = None

    @field_validator("note")
    @classmethod
    def _note_not_blank(cls, v: str | None) -> str | None:
        if v is not None and not v.strip():
            raise ValueError("must not be blank")
        return v

    @model_validator(mode="after")
    def _derived_says_how(self) -> TensorTflops:
        if self.basis != "datasheet" and not self.note:
            raise ValueError(f"basis {self.basis!r} needs a note saying how the figures were had")
        return self

    def get(self, dtype: str) -> float | None:
        return getattr(self, dtype, None)


NEW_KINDS = ("list", "estimate")
STREET_KINDS = ("street", "used")


class Purchase(_Strict):
    """What one card costs to buy, with where and when the figure was seen.

    kind: "list" is the vendor's list price or MSRP; "estimate" a press or analyst figure for new
    cards sold only through OEMs (data center): these two are the card's `purchase` (the "new"
    price basis). "street" is a dated retail price, "used" a dated used-market price: these go
    in the card's `street` (the "street" basis), never in `purchase`.
    """

    usd: float = Field(gt=0)
    kind: Literal["list", "estimate", "street", "used"]
    source: SourceUrl
    date: str
    note: str | None = None

    def describe(self) -> str:
        """One line for people: '$1,599 list price, 2022-09-20 (announced launch price)'."""
        usd = f"${self.usd:,.0f}" if self.usd >= 100 else f"${self.usd:,.2f}"
        note = f" ({self.note})" if self.note else ""
        return f"{usd} {self.kind} price, {self.date}{note}"

    @field_validator("date", mode="before")
    @classmethod
    def _date_format(cls, v: object) -> object:
        return _price_date(v)


def _price_date(v: object) -> object:
    """'YYYY-MM' or a calendar 'YYYY-MM-DD' (an unquoted YYYY-MM-DD in YAML arrives as a date)."""
    if isinstance(v, dt.date):
        v = v.isoformat()
    if isinstance(v, str):
        if not _DATE.match(v):
            raise ValueError("must be 'YYYY-MM' or 'YYYY-MM-DD'")
        if len(v) == 10:
            try:
                dt.date.fromisoformat(v)
            except ValueError:
                raise ValueError(f"{v} is not a calendar date") from None
    return v


NOT_SOLD_WHY = ("cloud-only", "systems-only")


class NotSold(_Strict):
    """Why a card has no purchase price: it is not sold on its own, with the page that says so.

    why: "cloud-only": a cloud provider's own variant, rented in its instances and never sold
    (AWS's A10G and T4G); "systems-only": sold only inside a vendor's or OEM's whole system
    (the GH200 superchip), so no per-card price exists. The advisor offers no purchase of it."""

    why: Literal["cloud-only", "systems-only"]
    source: SourceUrl
    date: str  # when the page was published or read, YYYY-MM(-DD)
    note: str = Field(min_length=1)

    @field_validator("date", mode="before")
    @classmethod
    def _date_format(cls, v: object) -> object:
        return _price_date(v)

    def describe(self) -> str:
        """One line for people: 'not sold on its own (cloud-only, 2026-12-04): <note>'."""
        return f"not sold on its own ({self.why}, {self.date}): {self.note}"


class Card(_Strict):
    name: str = Field(min_length=1)
    aliases: list[str] = Field(default_factory=list)
    vendor: Vendor
    family: Family
    architecture: str
    # the entry in catalog/architectures.yaml (gpuadvisor.architectures); a user's card may leave it out and
    # is then resolved from `architecture` and `compute_capability`
    arch_id: str | None = None
    # "half" / "full": the card's own rate for float tensor ops with FP32 accumulate where it differs from its
    # architecture's rule for its family (NVIDIA's L40 figures are half rate, TITAN RTX's full rate)
    tensor_fp32_accumulate: Literal["full", "half"] | None = None
    release_year: int = Field(ge=2000, le=2100)
    memory_gib: float | None = Field(gt=0)
    memory_type: str | None
    memory_bandwidth_gbs: float | None = Field(gt=0)
    memory_bus_width_bits: int | None = Field(gt=0)
    compute_units: int | None = Field(gt=0)
    compute_capability: str | None
    boost_clock_mhz: int | None = Field(gt=0)
    fp32_tflops: float | None = Field(gt=0)
    fp64_tflops: float | None = Field(gt=0)
    tensor_dense_tflops: TensorTflops
    tdp_w: float | None = Field(gt=0)
    interface: str | None
    interconnect_gbs: float | None = Field(ge=0)
    form_factor: str | None
    # GPUs on one board where the catalog card is one of them (K80, M60: 2; A16: 4): boards are bought whole
    gpus_per_board: int = Field(default=1, ge=1)
    launch_price_usd: float | None = Field(gt=0)
    purchase: Purchase | None  # new: list price or estimate (PRICE_BASES "new")
    street: Purchase | None = None  # dated street or used price (PRICE_BASES "street")
    not_sold: NotSold | None = None  # not sold on its own (cloud-only, systems-only): no purchase is offered
    source: SourceUrl
    sources: dict[str, str] = Field(default_factory=dict)
    notes: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _street_purchase_moves(cls, data: Any) -> Any:
        """A card file written before the two bases (a street or used price under `purchase:`)
        still loads: that price is read as the card's `street` price."""
        if isinstance(data, dict) and isinstance(data.get("purchase"), dict) and data.get("street") is None \
                and data["purchase"].get("kind") in STREET_KINDS:
            data = {**data, "street": data["purchase"], "purchase": None}
        return data

    @field_validator("purchase")
    @classmethod
    def _new_basis(cls, v: Purchase | None) -> Purchase | None:
        if v is not None and v.kind not in NEW_KINDS:
            raise ValueError(f"kind {v.kind!r} is a street price: put it under 'street:' (purchase: list or estimate)")
        return v

    @field_validator("street")
    @classmethod
    def _street_basis(cls, v: Purchase | None) -> Purchase | None:
        if v is not None and v.kind not in STREET_KINDS:
            raise ValueError(f"kind {v.kind!r} is a new price: put it under 'purchase:' (street: street or used)")
        return v

    @model_validator(mode="after")
    def _not_sold_has_no_price(self) -> Card:
        if self.not_sold is not None and (self.purchase is not None or self.street is not None):
            raise ValueError("not_sold: a card not sold on its own carries no purchase or street price")
        return self

    @field_validator("compute_capability")
    @classmethod
    def _cc_format(cls, v: str | None) -> str | None:
        if v is not None and not re.fullmatch(r"\d+\.\d+", v):
            raise ValueError("must look like '9.0'")
        return v

    @field_validator("sources")
    @classmethod
    def _sources_are_urls(cls, v: dict[str, str]) -> dict[str, str]:
        for key, url in v.items():
            if key not in Card.model_fields:
                raise ValueError(f"names unknown field {key!r}")
            if not _URL.match(url):
                raise ValueError(f"{key}: must be an http(s) URL")
        return v

    def tensor_tflops(self, dtype: str) -> float | None:
        return self.tensor_dense_tflops.get(dtype)

    @property
    def memory_bytes(self) -> float | None:
        return None if self.memory_gib is None else self.memory_gib * 2**30


class CatalogFile(_Strict):
    cards: list[Card]


@dataclass(frozen=True)
class Catalog:
    cards: tuple[Card, ...]
    origin: dict[str, Path]  # card name -> file it came from

    def __len__(self) -> int:
        return len(self.cards)

    def names(self) -> list[str]:
        return [c.name for c in self.cards]

    @cached_property
    def by_label(self) -> dict[str, list[Card]]:
        """Normalized name or alias -> its cards, in catalog order: built once, for find's exact matches."""
        out: dict[str, list[Card]] = {}
        for c in self.cards:
            for label in {normalize(x) for x in (c.name, *c.aliases)}:
                out.setdefault(label, []).append(c)
        return out

    def get(self, name: str) -> Card:
        """Exact name or alias (case-insensitive), else the best fuzzy match, else UserError."""
        matches = find(self, name)
        if not matches:
            hint = difflib.get_close_matches(name, self.names(), n=3, cutoff=0.4)
            extra = f"; did you mean {', '.join(hint)}?" if hint else ""
            raise UserError(f"no card in the catalog matches {name!r}{extra}")
        return matches[0]

    def filter(
        self,
        vendor: str | None = None,
        family: str | None = None,
        min_memory_gib: float | None = None,
    ) -> list[Card]:
        out = []
        for c in self.cards:
            if vendor and c.vendor != vendor.lower():
                continue
            if family and c.family != family.lower():
                continue
            if min_memory_gib is not None and (c.memory_gib is None or c.memory_gib < min_memory_gib):
                continue
            out.append(c)
        return out


def _format_error(path: Path, data: object, err: ValidationError) -> str:
    e = err.errors()[0]
    loc = list(e["loc"])
    card = ""
    if len(loc) >= 2 and loc[0] == "cards" and isinstance(loc[1], int):
        idx = loc[1]
        raw = data.get("cards", [])[idx] if isinstance(data, dict) else None
        label = raw.get("name") if isinstance(raw, dict) and raw.get("name") else f"#{idx + 1}"
        card = f" card {label!r}:"
        loc = loc[2:]
    field = ".".join(str(x) for x in loc) or "(top level)"
    msg = e["msg"]
    if e["type"] == "missing":
        msg = "missing (write null if the figure is unpublished)"
    elif e["type"] == "extra_forbidden":
        msg = "unknown field"
    more = f" (and {len(err.errors()) - 1} more problems)" if len(err.errors()) > 1 else ""
    return f"{path}:{card} field {field!r}: {msg}{more}"


def load_file(path: Path) -> list[Card]:
    data = load_yaml(path, "catalog file")
    if not isinstance(data, dict) or "cards" not in data:
        raise UserError(f"{path}: a catalog file must be a mapping with a 'cards' list")
    try:
        return list(CatalogFile.model_validate(data).cards)
    except ValidationError as err:
        raise UserError(_format_error(path, data, err)) from None


#: YAML files beside the card files that describe something else (architectures, published matmul and bandwidth
#: reach)
NOT_CARD_FILES = (ARCHITECTURES_FILE, "matmul-reach.yaml", "bandwidth-reach.yaml")


def _yaml_files(directory: Path) -> list[Path]:
    if not directory.exists():
        raise UserError(f"catalog directory not found: {directory}")
    if not directory.is_dir():
        raise UserError(f"catalog path is not a directory: {directory}")
    return sorted(p for p in directory.iterdir()
                  if p.suffix in (".yaml", ".yml") and p.is_file() and p.name not in NOT_CARD_FILES)


def _extra_dirs_from_env() -> list[Path]:
    raw = os.environ.get(CATALOG_ENV, "")
    return [Path(p) for p in raw.split(os.pathsep) if p.strip()]


def load_catalog(extra_dirs: Sequence[str | os.PathLike[str]] = (), *, use_env: bool = True) -> Catalog:
    """Load the shipped catalog, then each extra directory; a later card replaces a same-named one."""
    dirs = [shipped_catalog_dir()]
    if use_env:
        dirs += _extra_dirs_from_env()
    dirs += [Path(d) for d in extra_dirs]
    by_name: dict[str, Card] = {}
    origin: dict[str, Path] = {}
    for layer, directory in enumerate(dirs):
        seen_here: dict[str, Path] = {}
        files = _yaml_files(directory)
        per_file = _shipped_cards(files) if layer == 0 else map(load_file, files)
        for path, file_cards in zip(files, per_file, strict=True):
            for card in file_cards:
                key = card.name.casefold()
                if key in seen_here:
                    raise UserError(
                        f"{path}: card {card.name!r}: duplicate name (also in {seen_here[key]})"
                    )
                seen_here[key] = path
                if layer > 0:
                    by_name.pop(key, None)
                by_name[key] = card
                origin[card.name] = path
    cards = tuple(by_name.values())
    _check_aliases_unique(cards, origin)
    return Catalog(cards=cards, origin=origin)


def _shipped_cards(files: list[Path]) -> list[list[Card]]:
    """The shipped files' validated cards, from the user cache while the files and this module are
    unchanged (datacache): a cold `recommend` then neither parses YAML nor builds the validators."""
    def fits(value: object) -> bool:
        return isinstance(value, list) and len(value) == len(files)

    return cached("catalog", [*files, Path(__file__)], lambda: [load_file(p) for p in files], fits,
                  extra=pydantic.VERSION)


def _check_aliases_unique(cards: Iterable[Card], origin: dict[str, Path]) -> None:
    owner: dict[str, str] = {}
    for card in cards:
        for label in [card.name, *card.aliases]:
            key = normalize(label)
            other = owner.get(key)
            if other is not None and other != card.name:
                raise UserError(
                    f"{origin.get(card.name)}: card {card.name!r}: name or alias {label!r} "
                    f"is also used by {other!r}"
                )
            owner[key] = card.name


_NOISE = {"nvidia", "amd", "geforce", "radeon", "tesla", "quadro", "the", "gpu", "graphics"}


def normalize(text: str) -> str:
    return " ".join(_tokens(text))


def _tokens(text: str) -> list[str]:
    t = text.lower().replace("-", " ").replace("_", " ").replace("(", " ").replace(")", " ")
    return [w for w in t.split() if w not in _NOISE]


def find(catalog: Catalog, query: str) -> list[Card]:
    """Cards matching a typed name, best first.

    Exact name or alias wins; otherwise every query token must be a prefix of some token of a
    card's name or aliases ("h100 sxm" -> "H100 SXM5 80GB"), ranked by how few other tokens the
    card's label has, so "4090" prefers "RTX 4090" over "RTX 4090 D". A query no label's tokens match is tried
    without its spaces against the labels without theirs ("rtx4090" -> "GeForce RTX 4090").
    """
    return [card for _, card in _ranked(catalog, query)]


def _ranked(catalog: Catalog, query: str) -> list[tuple[int, Card]]:
    """find's matches with how much of each card's best label the query leaves unmatched, best first: its tokens
    the query left out; for a query matched without its spaces, 0 where it is the whole label, else 1. An exact
    name or alias scores 0."""
    q = normalize(query)
    if not q:
        return []
    exact = catalog.by_label.get(q, [])
    if exact:
        return [(0, card) for card in exact]
    q_tokens = q.split()
    scored: list[tuple[int, int, Card]] = []
    for i, card in enumerate(catalog.cards):
        extras = [len(tokens) - len(q_tokens) for tokens in (_tokens(label) for label in (card.name, *card.aliases))
                  if all(any(t.startswith(qt) for t in tokens) for qt in q_tokens)]
        if extras:
            scored.append((min(extras), i, card))
    if not scored:  # written without spaces, as cloud catalogs name cards ("RTX4090", "RTXA6000")
        compact = q.replace(" ", "")
        for i, card in enumerate(catalog.cards):
            extras = [int(label != compact) for label in
                      (normalize(x).replace(" ", "") for x in (card.name, *card.aliases)) if label.startswith(compact)]
            if extras:
                scored.append((min(extras), i, card))
    scored.sort(key=lambda s: (s[0], s[1]))
    return [(extra, card) for extra, _, card in scored]


def match_device(catalog: Catalog, device_name: str, memory_gib: float | None = None) -> Card | None:
    """The catalog entry for a probed device, from the name the driver reports.

    The driver's name is often an alias verbatim; where several cards share a prefix the one
    whose memory size is closest to the device's wins.
    """
    matches = find(catalog, device_name)
    if not matches:
        return None
    if memory_gib is None or len(matches) == 1:
        return matches[0]
    return min(matches, key=lambda c: abs((c.memory_gib or 0) - memory_gib))


def match_card(
    catalog: Catalog | None, device_name: str, memory_gib: float | None = None, catalog_name: str | None = None
) -> Card | None:
    """The catalog card for a probed device: the catalog name the probe recorded, else a match
    on the driver's name (and memory size). Callers pass `readings.device_memory_gib(dev)`."""
    if catalog is None:
        return None
    if catalog_name:
        hits = find(catalog, catalog_name)
        if hits:
            return hits[0]
    return match_device(catalog, device_name, memory_gib)


def resolve_card(catalog: Catalog, query: str) -> Card:
    """The one card a typed name means; a name that matches several cards equally well ('A100')
    is refused with what else matched, so nobody gets the 40 GB PCIe card by accident."""
    ranked = _ranked(catalog, query)
    if not ranked:
        return catalog.get(query)  # its error names close matches
    best, card = ranked[0]
    tied = [c.name for extra, c in ranked if extra == best]
    if len(tied) > 1:
        raise UserError(f"{query!r} matches several cards: {', '.join(tied)} (give one of these names)")
    return card
