"""Fill the catalog's missing tensor figures: derived from the architecture where the vendor does
not publish them, or marked "none" where the card has no matrix units (and say at what rate
16-bit work is then costed). Rewrites each named card's `tensor_dense_tflops:` line in place.

    python3 tools/derive_tensor_figures.py          # rewrite catalog/*.yaml
    python3 tools/derive_tensor_figures.py --check  # exit 1 if a line differs (tests run this)

Per-SM dense rates per clock (FLOP, FMA = 2), read off the figures NVIDIA publishes for sibling
parts of the same generation (the catalog's own datasheet entries):
  * Volta (V100: 125 TFLOPS = 80 SMs x 1.53 GHz x 1,024): FP16 1,024; INT8 (Xavier) 2x FP16.
  * GA100-class tensor cores (A100: 312 = 108 x 1.41 GHz x 2,048): FP16/BF16 2,048, TF32 1,024,
    INT8 4,096. Jetson Orin's GA10B has them: its published sparse GPU INT8 TOPS (AGX Orin 170 =
    16 SMs x 1.3 GHz x 8,192) are the dense 4,096 doubled.
  * Ada and RTX Blackwell, professional cards (full-rate FP32 accumulate): FP16/BF16 1,024, TF32
    512, FP8/INT8 2,048 = 4x / 2x / 8x the card's FP32 rate (128 FP32 lanes x 2 per SM). The RTX
    6000 Ada datasheet's one tensor figure, 1,457 TFLOPS FP8 with sparsity, is 2 x 8 x 91.1.
  * Blackwell datacenter-class (Jetson Thor): FP16 = FP4 / 4, FP8 = FP4 / 2 (B200: 2,250 / 9,000).
  * RTX Blackwell professional cards: as Ada professional; where the clock is not published, 4x NVIDIA's FP32.
  * CDNA 4 (MI350X): the MI355X card's per-CU rates at the MI350X's clock.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
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


def _ada_pro(sms: int, mhz: float) -> dict[str, object]:
    """Ada / RTX Blackwell professional: SMs x clock x 1,024 FP16 FLOP; TF32 half, FP8 and INT8 twice."""
    f = sms * mhz * 1e6 * 1024 / 1e12
    return {"fp16": round(f, 1), "bf16": round(f, 1), "tf32": round(f / 2, 1), "fp8": round(2 * f, 1),
            "int8": round(2 * f, 1)}


def _ga10b(sms: int, mhz: float) -> dict[str, object]:
    f = sms * mhz * 1e6 * 2048 / 1e12
    return {"fp16": round(f, 1), "bf16": round(f, 1), "tf32": round(f / 2, 1), "int8": round(2 * f, 1)}


def _volta(sms: int, mhz: float) -> dict[str, object]:
    f = sms * mhz * 1e6 * 1024 / 1e12
    return {"fp16": round(f, 2), "int8": round(2 * f, 2)}


DERIVED_ADA = ("derived: unpublished; {sms} SMs x {mhz:,} MHz x 1,024 dense FP16 FLOP per clock per SM (4th-gen "
               "tensor cores, full-rate FP32 accumulate on professional cards) = 4x the FP32 rate; TF32 half of it, "
               "FP8 and INT8 twice")
DERIVED_BW = ("derived: unpublished; 188 SMs x 2,617 MHz x 1,024 dense FP16 FLOP per clock per SM (5th-gen tensor "
              "cores, full-rate FP32 accumulate on professional cards) = 4x the FP32 rate; TF32 half, FP8 and INT8 "
              "twice; consistent with the published 4,000 AI TOPS (FP4 with sparsity) = 8x this FP16 figure")
DERIVED_BW_PRO = ("derived: unpublished; {sms} SMs x {mhz:,} MHz x 1,024 dense FP16 FLOP per clock per SM (5th-gen "
                  "tensor cores, full-rate FP32 accumulate on professional cards, as for the RTX PRO 6000 Workstation "
                  "Edition) = 4x the FP32 rate; TF32 half, FP8 and INT8 twice")


def _pro_from_fp32(fp32_tflops: float) -> dict[str, object]:
    """RTX Blackwell professional card whose clock is not published: 4x NVIDIA's FP32 figure."""
    f = 4 * fp32_tflops
    return {"fp16": round(f, 1), "bf16": round(f, 1), "tf32": round(f / 2, 1), "fp8": round(2 * f, 1),
            "int8": round(2 * f, 1)}


def _cdna4(cus: int, mhz: float) -> dict[str, object]:
    """CDNA 4 matrix rates per CU per clock (the MI355X card's): FP16/BF16 4,096, FP8/INT8 8,192, MXFP4 16,384."""
    f = cus * mhz * 1e6 * 4096 / 1e12
    return {"fp16": round(f, 1), "bf16": round(f, 1), "fp8": round(2 * f, 1), "int8": round(2 * f, 1),
            "fp4": round(4 * f, 1)}


DERIVED_ORIN = ("derived: unpublished; {sms} SMs x {mhz:,} MHz x 2,048 dense FP16 FLOP per clock per SM (GA10B has "
                "A100-class tensor cores); consistent with NVIDIA's sparse GPU INT8 TOPS for the module "
                "({tops} = 4x this FP16 figure); BF16 equal, TF32 half, INT8 twice")
DERIVED_XAVIER = ("derived: {sms} SMs x {mhz:,} MHz x 1,024 dense FP16 FLOP per clock per SM (Volta tensor cores, as "
                  "V100); INT8 twice; no BF16 or TF32 on Volta")

# card -> (figures to set, basis, note)
CARDS: dict[str, tuple[dict[str, object], str, str]] = {
    "RTX 6000 Ada Generation": (_ada_pro(142, 2505), "derived", DERIVED_ADA.format(sms=142, mhz=2505)
                                + "; the datasheet's 1,457 TFLOPS FP8 with sparsity is twice the FP8 figure here"),
    "RTX 5000 Ada Generation": (_ada_pro(100, 2550), "derived", DERIVED_ADA.format(sms=100, mhz=2550)),
    "RTX 4500 Ada Generation": (_ada_pro(60, 2580), "derived", DERIVED_ADA.format(sms=60, mhz=2580)),
    "RTX 4000 Ada Generation": (_ada_pro(48, 2175), "derived", DERIVED_ADA.format(sms=48, mhz=2175)),
    "RTX 2000 Ada Generation": (_ada_pro(22, 2130), "derived", DERIVED_ADA.format(sms=22, mhz=2130)),
    "RTX PRO 6000 Blackwell": ({**_ada_pro(188, 2617), "fp4": 2000}, "derived", DERIVED_BW),
    "RTX PRO 6000 Blackwell Max-Q Workstation Edition": (_ada_pro(188, 2288), "derived",
                                                         DERIVED_BW_PRO.format(sms=188, mhz=2288)),
    "RTX PRO 6000 Blackwell Server Edition": (_ada_pro(188, 2617), "derived",
                                              DERIVED_BW_PRO.format(sms=188, mhz=2617)
                                              + "; the clock is the spec database's, as for the Workstation Edition"),
    "RTX PRO 5000 Blackwell": (
        {**_pro_from_fp32(65), "fp4": 1032}, "derived",
        "derived: unpublished; 4x NVIDIA's 65 TFLOPS FP32 (5th-gen tensor cores, full-rate FP32 accumulate on "
        "professional cards: 1,024 dense FP16 FLOP per clock per SM against 256 FP32), TF32 half, FP8 and INT8 twice; "
        "the clock is not published. fp4 is NVIDIA's 2,064 AI TOPS (FP4 with sparsity) halved, = 4x this FP16 figure"),
    "RTX PRO 4500 Blackwell": (_ada_pro(82, 2617), "derived", DERIVED_BW_PRO.format(sms=82, mhz=2617)),
    "RTX PRO 4000 Blackwell": (_ada_pro(70, 2617), "derived", DERIVED_BW_PRO.format(sms=70, mhz=2617)),
    "RTX PRO 2000 Blackwell": (_ada_pro(34, 1950), "derived", DERIVED_BW_PRO.format(sms=34, mhz=1950)),
    "DGX Spark (GB10)": (
        {"fp16": 125, "bf16": 125, "tf32": 62.5, "fp8": 250, "fp4": 500, "int8": None}, "derived",
        "derived: unpublished; NVIDIA's 'up to 1 petaFLOP' FP4 with sparsity halved gives 500 dense FP4; RTX "
        "Blackwell tensor cores run FP8 at 1/2 and FP16 at 1/4 of FP4 with FP16 accumulate (NVIDIA's AI TOPS = 8x the "
        "dense FP16 rate, as on the RTX PRO 6000); whether the GB10 keeps that rate with FP32 accumulate (the "
        "professional cards do, GeForce halves it) is not published. TF32 half of FP16; INT8 not published"),
    "Instinct MI350X": (
        _cdna4(256, 2200), "derived",
        "derived: 256 CUs x 2,200 MHz peak clock x the MI355X card's CDNA 4 rates per CU per clock (FP16/BF16 4,096, "
        "FP8/INT8 8,192, MXFP4 16,384), dense; x8 it gives the 18.5 PF FP16, 37 PF FP8 and 74 PF FP4 that Kontronn "
        "reports for the MI350 series (read as an 8-GPU platform); no TF32 matrix instructions on CDNA 4"),
    "Jetson Orin Nano 8GB": (_ga10b(8, 625), "derived", DERIVED_ORIN.format(sms=8, mhz=625, tops=40)),
    "Jetson Orin NX 16GB": (_ga10b(8, 918), "derived", DERIVED_ORIN.format(sms=8, mhz=918, tops=60)),
    "Jetson AGX Orin 64GB": ({**_ga10b(16, 1300), "int8": 85}, "derived",
                             DERIVED_ORIN.format(sms=16, mhz=1300, tops=170)),
    "Jetson AGX Thor": ({"fp16": 258.8, "bf16": 258.8, "tf32": 129.4, "fp8": 517.5, "fp4": 1035, "int8": None},
                        "derived",
                        "derived: unpublished; NVIDIA publishes 2,070 FP4 TFLOPS with sparsity; dense FP4 is half, and"
                        " Blackwell datacenter-class tensor cores run FP8 at 1/2 and FP16/BF16 at 1/4 the FP4 "
                        "rate (B200: 9,000 / 4,500 / 2,250), TF32 at 1/8"),
    "Jetson Xavier NX": (_volta(6, 1100), "derived", DERIVED_XAVIER.format(sms=6, mhz=1100)),
    "Jetson AGX Xavier": (_volta(8, 1377), "derived", DERIVED_XAVIER.format(sms=8, mhz=1377)
                          + "; NVIDIA's '11 TFLOPS FP16, 22 TOPS INT8' for the GPU agree"),
    "Jetson Nano": ({}, "none", "Maxwell: " + OLD),
    "Jetson TX2": ({}, "none", "Pascal GP10B: " + OLD),
    "Tesla K80": ({}, "none", "Kepler: " + OLD),
    "Tesla M60": ({}, "none", "Maxwell: " + OLD),
    "Tesla P4": ({}, "none", PASCAL),
    "Tesla P40": ({}, "none", PASCAL),
    "Tesla P100 PCIe 16GB": ({}, "none", GP100),
    "Tesla P100 SXM2 16GB": ({}, "none", GP100),
    "Quadro GP100": ({}, "none", GP100),
    "Quadro P4000": ({}, "none", PASCAL),
    "Quadro P5000": ({}, "none", PASCAL),
    "Quadro P6000": ({}, "none", PASCAL),
    "GeForce GTX 1060 6GB": ({}, "none", PASCAL),
    "GeForce GTX 1070": ({}, "none", PASCAL),
    "GeForce GTX 1080": ({}, "none", PASCAL),
    "GeForce GTX 1080 Ti": ({}, "none", PASCAL),
    "GeForce GTX 1660 Super": ({}, "none", TU116),
    "Radeon Instinct MI25": ({}, "none", VEGA),
    "Instinct MI50 32GB": ({}, "none", VEGA),
    "Instinct MI60": ({}, "none", VEGA),
    "Radeon RX 6800": ({}, "none", RDNA2),
    "Radeon RX 6800 XT": ({}, "none", RDNA2),
    "Radeon RX 6900 XT": ({}, "none", RDNA2),
    "Radeon RX 6950 XT": ({}, "none", RDNA2),
    "Radeon PRO V520": ({}, "none", "RDNA (1st gen) has no matrix units: 16-bit work is costed at the FP32 rate"),
}

KEYS = ("fp16", "bf16", "tf32", "fp8", "fp4", "int8")
LINE = re.compile(r"^(\s*)tensor_dense_tflops: \{(.*)\}\s*$")


def _num(v: object) -> str:
    if v is None:
        return "null"
    f = float(v)  # type: ignore[arg-type]
    return f"{f:g}"


def _line(indent: str, old: dict[str, str], figs: dict[str, object], basis: str, note: str) -> str:
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


def rewrite(text: str) -> tuple[str, set[str]]:
    lines = text.splitlines(keepends=True)
    current = None
    done: set[str] = set()
    for i, line in enumerate(lines):
        m = re.match(r"^\s*- name: (.+?)\s*$", line)
        if m:
            current = m.group(1).strip().strip('"')
        m = LINE.match(line)
        if m and current in CARDS:
            figs, basis, note = CARDS[current]
            lines[i] = _line(m.group(1), _old_values(m.group(2)), figs, basis, note)
            done.add(current)
    return "".join(lines), done


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if the catalog differs from what this writes")
    args = ap.parse_args()
    seen: set[str] = set()
    differs = []
    for path in sorted(CATALOG.glob("*.yaml")):
        old = path.read_text()
        new, done = rewrite(old)
        seen |= done
        if new != old:
            differs.append(path.name)
            if not args.check:
                path.write_text(new)
    missing = set(CARDS) - seen
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
