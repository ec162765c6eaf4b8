"""Is a raw row on the right card? The facts a SkyPilot row gives about its GPU (memory per GPU in
`GpuInfo`, a form factor in the instance name) checked against the card it is mapped to.

Pure functions, shared by the builder (gpuadvisor.prices.reduce) and the tests that recompute the
check from the raw rows. A row on the wrong card is refused (left out, with the reason), never
priced as another card.

Memory: sources state it three ways (`gpu_memory` in catalog/prices/accelerators.yaml says which
a provider uses): `MemoryInfo.SizeInMiB` per GPU in MiB (most), the whole instance's in that
field (`total_mib`: Vast, Prime Intellect, Verda), or per GPU in GB (`per_gpu_gb`: RunPod,
Shadeform; any value under 1024 is read as GB too, since no GPU has less than 1 GiB). Datasheets
and sources mix GB and GiB, so a row matches its card when either reading is within
MEMORY_TOLERANCE of the card's figure.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping

MEMORY_TOLERANCE = 0.05  # a row's per-GPU memory may differ from its card's by this fraction
MEMORY_CONVENTIONS = ("per_gpu_mib", "total_mib", "per_gpu_gb", "none")
FORMS = ("pcie", "sxm", "nvl", "server", "max-q")

_FORM_PATTERNS = {
    "pcie": re.compile(r"pcie", re.I),
    "sxm": re.compile(r"sxm", re.I),
    "nvl": re.compile(r"(?<![a-z])nvl(?![a-z])", re.I),  # NVL, not NVLink
    "server": re.compile(r"(?<![a-z])server(?![a-z])", re.I),
    "max-q": re.compile(r"(?<![a-z])max-?q(?![a-z])", re.I),
}


def gpu_memory_mib(gpu_info: str, count: float | None, convention: str = "per_gpu_mib") -> float | None:
    """Memory of one GPU (of the share, for a fractional row) in MiB from a `GpuInfo` cell; None
    where the cell states none (empty, a bare name, zero) or the convention is `none`."""
    if convention == "none" or not gpu_info or "{" not in gpu_info:
        return None
    info = _parse(gpu_info)
    gpus = info.get("Gpus") if isinstance(info, dict) else None
    first = gpus[0] if isinstance(gpus, list) and gpus and isinstance(gpus[0], dict) else {}
    size = (first.get("MemoryInfo") or {}).get("SizeInMiB") if isinstance(first.get("MemoryInfo"), dict) else None
    try:
        value = float(size) if size is not None else 0.0
    except (TypeError, ValueError):
        return None
    if value <= 0:
        return None
    if convention == "per_gpu_gb" or value < 1024:
        return value * 1024.0
    if convention == "total_mib" and count and count >= 1:
        return value / count
    return value


def _parse(text: str) -> object:
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        return ast.literal_eval(re.sub(r"\bnull\b", "None", text))
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None


def memory_matches(row_mib: float, card_gib: float, fraction: float = 1.0) -> bool:
    """Whether a row's per-GPU MiB is the card's memory (x `fraction` for a share of one GPU),
    read as GiB or as GB, within MEMORY_TOLERANCE."""
    want = card_gib * fraction
    if want <= 0:
        return True
    as_gib, as_gb = row_mib / 1024.0, row_mib * 1.048576 / 1000.0
    return any(abs(x - want) <= MEMORY_TOLERANCE * want for x in (as_gib, as_gb))


def memory_gib(row_mib: float) -> float:
    return round(row_mib / 1024.0, 1)


def name_forms(name: str) -> set[str]:
    """The form factors an instance or accelerator name states: 'n3-H100x8-NVLink' states none
    (NVLink is a bridge, not the NVL card); '2x-A100_PCIE' states pcie."""
    return {form for form, pattern in _FORM_PATTERNS.items() if pattern.search(name)}


def card_forms(card_name: str, form_factor: str | None) -> set[str]:
    """A card's form factors, from its catalog name and form_factor field."""
    forms = name_forms(card_name)
    ff = (form_factor or "").strip().lower()
    if ff.startswith("pcie"):
        forms.add("pcie")
    if ff.startswith("sxm"):
        forms.add("sxm")
    return forms


def form_mismatch(name: str, card_name: str, form_factor: str | None) -> str | None:
    """Why the card does not have the form factor the name states, or None. A name saying PCIe
    (without NVL) is a plain PCIe part: an NVL card is not one, though it plugs into PCIe."""
    said, has = name_forms(name), card_forms(card_name, form_factor)
    for form in sorted(said):
        if form not in has:
            return f"name says {form}, {card_name} is not"
    if "pcie" in said and "nvl" not in said and "nvl" in has:
        return f"name says pcie, {card_name} is the NVL part"
    return None


def pick_by_memory(variants: Mapping[float, str], row_mib: float | None) -> str | None:
    """The card of a name the source gives to two memory sizes ({GiB: card}) whose size the row's
    memory matches; None where it matches none (or states none)."""
    if row_mib is None:
        return None
    return next((card for gib, card in sorted(variants.items()) if memory_matches(row_mib, gib)), None)
