"""Fill the catalog's missing tensor figures from the hardware model by architecture
(catalog/architectures.yaml): rate x SMs x clock where the vendor does not publish them, or "none" where
the card has no matrix units (and say at what rate 16-bit work is then costed). Rewrites each card's
`tensor_dense_tflops:` line in place.

    python3 tools/derive_tensor_figures.py          # rewrite catalog/*.yaml
    python3 tools/derive_tensor_figures.py --check  # exit 1 if a line differs (tests run this)

Which cards:
  * basis "derived" with an SM count and a boost clock: every type the architecture has, = its per-SM rate
    (FP32 accumulate, halved on the product lines that run it at half rate) x SMs x boost clock; a figure the
    vendor does publish (PUBLISHED below, e.g. FP4 from "AI TOPS") is kept and the note says so.
  * basis "datasheet": a type the datasheet leaves out but the architecture has is derived the same way and the
    note names it; the published figures stay. Not for a card that states its own accumulate rate (its
    figures follow a different rule: L40, A10G).
  * SPECIAL: cards whose clock is not published, whose figures are read off one published number instead.
  * NONE: cards without matrix units.
The clock is the boost clock: no sustained clock under load is published for these cards, and the note says so.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

from gpuadvisor.architectures import (  # noqa: E402
    architecture_of,
    derived_tensor_tflops,
    load_architectures,
    runs_fp32_accumulate_at_half_rate,
)
from gpuadvisor.catalog import load_catalog  # noqa: E402

CATALOG = ROOT / "catalog"

PASCAL = ("Pascal GP102/GP104/GP106 have no tensor cores and run native FP16 at 1/64 rate; PyTorch's 16-bit "
          "matmuls there use cuBLAS with FP32 arithmetic (FP16 storage), so 16-bit work is costed at the FP32 rate")
GP100 = ("GP100 has no tensor cores; its packed FP16 (2x FP32) is not what cuBLAS uses for PyTorch's FP16 matmuls "
         "(FP32 compute type), so 16-bit work is costed at the FP32 rate")
OLD = "no tensor cores and no fast FP16: 16-bit work is costed at the FP32 rate"
TU116 = ("TU116 has no tensor cores (its FP16 units run 2x FP32 for shaders): 16-bit matmuls are costed at the "
         "FP32 rate")
VEGA = ("GCN 5 has no matrix cores; AMD's FP16 figure is packed vector math (2x FP32), not a matrix unit: 16-bit "
        "work is costed at the FP32 rate")
RDNA2 = ("RDNA 2 has no matrix (WMMA) units and ROCm does not support it for PyTorch training: 16-bit work is "
         "costed at the FP32 rate")

NONE: dict[str, str] = {
    "Jetson Nano": "Maxwell: " + OLD,
    "Jetson TX2": "Pascal GP10B: " + OLD,
    "Tesla K80": "Kepler: " + OLD,
    "Tesla M60": "Maxwell: " + OLD,
    "Tesla P4": PASCAL,
    "Tesla P40": PASCAL,
    "Tesla P100 PCIe 16GB": GP100,
    "Tesla P100 SXM2 16GB": GP100,
    "Quadro GP100": GP100,
    "Quadro P4000": PASCAL,
    "Quadro P5000": PASCAL,
    "Quadro P6000": PASCAL,
    "GeForce GTX 1060 6GB": PASCAL,
    "GeForce GTX 1070": PASCAL,
    "GeForce GTX 1080": PASCAL,
    "GeForce GTX 1080 Ti": PASCAL,
    "GeForce GTX 1660 Super": TU116,
    "Radeon Instinct MI25": VEGA,
    "Instinct MI50 32GB": VEGA,
    "Instinct MI60": VEGA,
    "Radeon RX 6800": RDNA2,
    "Radeon RX 6800 XT": RDNA2,
    "Radeon RX 6900 XT": RDNA2,
    "Radeon RX 6950 XT": RDNA2,
    "Radeon PRO V520": "RDNA (1st gen) has no matrix units: 16-bit work is costed at the FP32 rate",
}

# derived cards: figures the vendor publishes (kept over the derivation), and what else the note should say
PUBLISHED: dict[str, tuple[dict[str, float], str]] = {
    "RTX PRO 6000 Blackwell": (
        {"fp4": 2000},
        "fp4 is NVIDIA's 4,000 AI TOPS (FP4 with sparsity) halved. NVIDIA publishes no other per-type tensor figure; "
        "full-rate FP32 accumulate is what measured PyTorch bf16 matmuls show (409-418 TFLOPS on the Workstation and "
        "Server Editions, zzc0721/torch-performance-test-data database.md at 0785868), above the 251.9 a half-rate "
        "part could reach"),
    "RTX 6000 Ada Generation": ({}, "the datasheet's 1,457 TFLOPS FP8 with sparsity is twice the FP8 figure here"),
    "Jetson AGX Orin 64GB": ({}, "NVIDIA's 170 sparse GPU INT8 TOPS are twice the INT8 figure here"),
    "Jetson Orin NX 16GB": ({}, "NVIDIA's 60 sparse GPU INT8 TOPS are close to twice the INT8 figure here"),
    "Jetson Orin Nano 8GB": ({}, "NVIDIA's 40 sparse GPU INT8 TOPS are close to twice the INT8 figure here"),
    "Jetson AGX Xavier": ({}, "NVIDIA's '11 TFLOPS FP16, 22 TOPS INT8' for the GPU agree"),
}

# cards whose clock is not published: their figures are read off one published number
SPECIAL: dict[str, tuple[dict[str, float | None], str]] = {
    "RTX 4500 Ada Generation": (
        {"fp16": 158.5, "bf16": 158.5, "tf32": 79.3, "fp8": 317.0, "int8": 317.0},
        "derived: the datasheet's one tensor figure, 634.0 TFLOPS FP8 with sparsity, halved for dense FP8 (= 60 SMs x "
        "2,580 MHz x the Ada AD10x rate of 2,048, full-rate professional card); FP16/BF16 and TF32 at 1/2 and 1/4 of "
        "it, INT8 equal, as catalog/architectures.yaml's per-SM rates"),
    "RTX PRO 5000 Blackwell": (
        {"fp16": 260, "bf16": 260, "tf32": 130, "fp8": 520, "fp4": 1032, "int8": 520},
        "derived: the clock is not published; 4x NVIDIA's 65 TFLOPS FP32 (Blackwell GB20x: 1,024 dense FP16 FLOP "
        "per clock per SM with full-rate FP32 accumulate on professional cards against 256 FP32), TF32 half, FP8 and "
        "INT8 twice; fp4 is NVIDIA's 2,064 AI TOPS (FP4 with sparsity) halved, = 4x this FP16 figure"),
    "DGX Spark (GB10)": (
        {"fp16": 125, "bf16": 125, "tf32": 62.5, "fp8": 250, "fp4": 500, "int8": None},
        "derived: unpublished; NVIDIA's 'up to 1 petaFLOP' FP4 with sparsity halved gives 500 dense FP4; RTX "
        "Blackwell tensor cores run FP8 at 1/2 and FP16 at 1/4 of FP4 with FP16 accumulate (NVIDIA's AI TOPS = 8x the "
        "dense FP16 rate, as on the RTX PRO 6000); whether the GB10 keeps that rate with FP32 accumulate (the "
        "professional cards do, GeForce halves it) is not published. TF32 half of FP16; INT8 not published"),
    "Jetson AGX Thor": (
        {"fp16": 258.8, "bf16": 258.8, "tf32": 129.4, "fp8": 517.5, "fp4": 1035, "int8": None},
        "derived: unpublished; NVIDIA publishes 2,070 FP4 TFLOPS with sparsity; dense FP4 is half, and"
        " Blackwell datacenter-class tensor cores run FP8 at 1/2 and FP16/BF16 at 1/4 the FP4 "
        "rate (B200: 9,000 / 4,500 / 2,250), TF32 at 1/8"),
}


def _figure(v: float) -> float:
    return round(v, 2) if v < 10 else round(v, 1)


def _clock_words(card: Any) -> str:
    limit = f" under its {card.tdp_w:g} W limit" if card.tdp_w else ""
    return f"{card.boost_clock_mhz:,} MHz boost (no sustained clock{limit} is published)"


def plan(card: Any, archs: dict[str, Any]) -> tuple[dict[str, float | None], str, str] | None:
    """(figures to set, basis, note) for one card, or None to leave its line as it is."""
    if card.name in NONE:
        return {}, "none", NONE[card.name]
    if card.name in SPECIAL:
        special, note = SPECIAL[card.name]
        return special, "derived", note
    t = card.tensor_dense_tflops
    arch = architecture_of(card, archs)
    if arch is None or t.basis == "none":
        return None
    derived = derived_tensor_tflops(card, arch)
    if not derived:
        return None
    half = runs_fp32_accumulate_at_half_rate(card, arch)
    rate = arch.rate("fp16", half_rate=half) or arch.rate("bf16", half_rate=half)
    unit = "CU" if card.vendor == "amd" else "SM"  # AMD's compute units are the SMs' counterpart
    how = (f"derived from {arch.name} rate x {unit}s x clock: {card.compute_units} {unit}s x {_clock_words(card)} x "
           f"{rate:,} dense FP16 FLOP per clock per {unit} with FP32 accumulate "
           f"({'half' if half else 'full'} rate on this card)")
    if t.basis == "derived":
        kept, extra = PUBLISHED.get(card.name, ({}, ""))
        figs: dict[str, float | None] = {k: _figure(v) for k, v in derived.items()}
        figs.update(kept)
        return figs, "derived", how + "; the other types at the architecture's rates (catalog/architectures.yaml)" + (
            f"; {extra}" if extra else "")
    if card.tensor_fp32_accumulate is not None:
        return None  # its published figures follow its own rule; nothing is derived for it
    filled = _filled_before(t.note)  # types this tool derived on an earlier run
    missing = {k: _figure(v) for k, v in derived.items() if t.get(k) is None or k in filled}
    if not missing:
        return None
    names = ", ".join(k.upper() for k in missing)
    return dict(missing), "datasheet", (f"{names} {how}, at the architecture's per-SM rates "
                                        "(catalog/architectures.yaml); the other figures are the datasheet's")


def _filled_before(note: str | None) -> set[str]:
    m = re.match(r"^([A-Z0-9]+(?:, [A-Z0-9]+)*) derived from ", note or "")
    return {name.lower() for name in m.group(1).split(", ")} if m else set()


KEYS = ("fp16", "bf16", "tf32", "fp8", "fp4", "int8")
LINE = re.compile(r"^(\s*)tensor_dense_tflops: \{(.*)\}\s*$")


def _num(v: object) -> str:
    if v is None:
        return "null"
    f = float(v)  # type: ignore[arg-type]
    return f"{f:g}"


def _line(indent: str, old: dict[str, str], figs: Mapping[str, object], basis: str, note: str) -> str:
    vals = {k: old.get(k, "null") for k in KEYS}
    for k, v in figs.items():
        vals[k] = _num(v)
    body = ", ".join(f"{k}: {vals[k]}" for k in KEYS)
    esc = note.replace("\\", "\\\\").replace('"', '\\"')
    return f'{indent}tensor_dense_tflops: {{{body}, basis: {basis}, note: "{esc}"}}\n'


def _old_values(body: str) -> dict[str, str]:
    out = {}
    for part in re.split(r",\s*(?=\w+:)", body):
        if ":" in part:
            k, v = part.split(":", 1)
            out[k.strip()] = v.strip()
    return {k: v for k, v in out.items() if k in KEYS}


def rewrite(text: str, plans: dict[str, tuple[dict[str, float | None], str, str]]) -> tuple[str, set[str]]:
    lines = text.splitlines(keepends=True)
    current = None
    done: set[str] = set()
    for i, line in enumerate(lines):
        m = re.match(r"^\s*- name: (.+?)\s*$", line)
        if m:
            current = m.group(1).strip().strip('"')
        m = LINE.match(line)
        if m and current in plans:
            figs, basis, note = plans[current]
            lines[i] = _line(m.group(1), _old_values(m.group(2)), figs, basis, note)
            done.add(current)
    return "".join(lines), done


def plans_for_catalog() -> dict[str, tuple[dict[str, float | None], str, str]]:
    archs = load_architectures(CATALOG / "architectures.yaml")
    out = {}
    for card in load_catalog(use_env=False).cards:
        p = plan(card, archs)
        if p is not None:
            out[card.name] = p
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if the catalog differs from what this writes")
    args = ap.parse_args()
    plans = plans_for_catalog()
    seen: set[str] = set()
    differs = []
    for path in sorted(CATALOG.glob("*.yaml")):
        if path.name == "architectures.yaml":
            continue
        old = path.read_text()
        new, done = rewrite(old, plans)
        seen |= done
        if new != old:
            differs.append(path.name)
            if not args.check:
                path.write_text(new)
    missing = set(plans) - seen
    if missing:
        print(f"cards not found: {', '.join(sorted(missing))}", file=sys.stderr)
        return 1
    if args.check and differs:
        print(f"out of date: {', '.join(differs)} (run tools/derive_tensor_figures.py)", file=sys.stderr)
        return 1
    print(("up to date" if args.check else f"rewrote {len(differs)} files") + f"; {len(seen)} cards")
    return 0


if __name__ == "__main__":
    sys.exit(main())
