#!/usr/bin/env python3
"""Build catalog/matmul-reach.yaml: how much of its datasheet tensor peak a large 16-bit matmul reaches on each
card, from published PyTorch measurements (not ours, not fitted to any validation result).

Source: zzc0721/torch-performance-test-data, database.md at commit 078586871da31ad6aaaf6fa43bc4ec3f284b151d
(read 2026-11-27), measured by its test.py: torch.mm of square random matrices of 1,024-10,240, 6 warm-ups and 30
timed calls, the best size kept, one row per contributor's machine. The rows below are copied from that table
(device as written there, bf16 and fp16 TFLOP/s, the contributor and the row's note). Laptop parts, 48 GB
modified cards and rows whose card the catalog lacks are left out; fp16 is used for cards without bf16 (Turing,
Volta). The measured figure of a card is the median of its rows.

  python3 -m tools.matmul_reach [--check]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "catalog" / "matmul-reach.yaml"
SOURCE = {"url": "https://github.com/zzc0721/torch-performance-test-data/blob/"
                 "078586871da31ad6aaaf6fa43bc4ec3f284b151d/database.md",
          "method": "test.py: torch.mm, square random matrices 1,024-10,240, 6 warm-ups, 30 timed calls, best size",
          "read": "2026-11-27"}

# (device as written, bf16, fp16, contributor, note) -> catalog card
ROWS: list[tuple[str, float | None, float, str, str, str]] = [
    ("NVIDIA H100 80GB HBM3", 789.24, 761.84, "HaxxorCialtion", "Docker, PyTorch 2.8.0, CUDA 12.6", "H100 SXM5 80GB"),
    ("NVIDIA H100 80GB HBM3", 783.66, 758.14, "clow1710", "physical machine", "H100 SXM5 80GB"),
    ("NVIDIA H200", 790.29, 759.40, "Mightlaus", "docker", "H200 SXM 141GB"),
    ("NVIDIA B200 180GB", 1696.03, 1627.64, "zzc0208", "GCP a4-highgpu-8g, PyTorch 2.8.0", "B200"),
    ("NVIDIA A100 SXM4 80GB", 264.53, 258.74, "aiguoliuguo", "Docker, PyTorch 2.8.0, CUDA 12.8", "A100 SXM4 80GB"),
    ("NVIDIA L40S", 269.15, 264.02, "Mightlaus", "docker", "L40S"),
    ("NVIDIA RTX A6000", 123.34, 120.49, "Mightlaus", "docker", "RTX A6000"),
    ("NVIDIA RTX PRO 6000 Workstation 96G", 417.98, 315.51, "AlfreScarlet", "physical machine, PyTorch 2.8.0",
     "RTX PRO 6000 Blackwell"),
    ("NVIDIA RTX PRO 6000 Blackwell Server Edition", 409.42, 312.78, "Mightlaus", "docker",
     "RTX PRO 6000 Blackwell Server Edition"),
    ("NVIDIA RTX 3090 24GB", 76.34, 75.64, "zzc0208", "physical machine, PyTorch 2.6.0", "GeForce RTX 3090"),
    ("NVIDIA GeForce RTX 3090 24GB", 76.68, 75.88, "a-cold-bird", "cloud instance, PyTorch 2.8.0", "GeForce RTX 3090"),
    ("NVIDIA GeForce RTX 3090", 76.58, 75.48, "Mightlaus", "physical machine", "GeForce RTX 3090"),
    ("NVIDIA RTX 3080 Ti 12GB", 76.47, 75.56, "aiguoliuguo", "Docker, PyTorch 2.8.0, CUDA 12.8", "GeForce RTX 3080 Ti"),
    ("NVIDIA RTX 4090 24GB", 170.06, 165.08, "aiguoliuguo", "physical machine, PyTorch 2.4.0", "GeForce RTX 4090"),
    ("NVIDIA RTX 4090 24GB", 173.31, 171.06, "sd0ric4", "physical machine, PyTorch 2.4.1", "GeForce RTX 4090"),
    ("NVIDIA RTX 4090 24GB", 162.39, 162.35, "HuanLinOTO", "Docker, PyTorch 2.4.0, CUDA 12.1", "GeForce RTX 4090"),
    ("NVIDIA GeForce RTX 4090 24GB", 163.09, 167.80, "a-cold-bird", "cloud instance, PyTorch 2.8.0",
     "GeForce RTX 4090"),
    ("NVIDIA RTX 5090 32GB", 236.03, 224.41, "HuanLinOTO", "cloud instance, PyTorch 2.8.0", "GeForce RTX 5090"),
    ("NVIDIA RTX 5090 32GB", 242.18, 237.63, "sakmist", "physical machine, PyTorch 2.7.1", "GeForce RTX 5090"),
    ("NVIDIA Tesla T4 16GB", None, 41.91, "zzc0208", "Google Colab, PyTorch 2.8.0", "Tesla T4"),
    ("NVIDIA Tesla T4 16GB", None, 42.71, "sxjeru", "Kaggle, PyTorch 2.6.0", "Tesla T4"),
]


def build() -> dict:
    from gpuadvisor.catalog import load_catalog

    catalog = load_catalog(use_env=False)
    cards: dict[str, dict] = {}
    for device, bf16, fp16, who, note, name in ROWS:
        card = catalog.get(name)
        dtype, value = ("bf16", bf16) if bf16 is not None else ("fp16", fp16)
        entry = cards.setdefault(name, {"dtype": dtype, "rows": []})
        entry["rows"].append({"device": device, "tflops": value, "contributor": who, "note": note})
        entry["datasheet_tflops"] = float(card.tensor_tflops(dtype))
    for entry in cards.values():
        entry["measured_tflops"] = round(statistics.median(r["tflops"] for r in entry["rows"]), 2)
        entry["reach"] = round(entry["measured_tflops"] / entry["datasheet_tflops"], 3)
    return {"about": "the fraction of its datasheet dense tensor peak a large 16-bit matmul reaches on each card "
                     "(measured / datasheet), from published PyTorch measurements; built by tools/matmul_reach.py",
            "source": SOURCE, "cards": dict(sorted(cards.items()))}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true", help="fail if the file differs from what this script writes")
    a = ap.parse_args()
    text = yaml.safe_dump(build(), sort_keys=False, allow_unicode=True, width=110)
    if a.check:
        same = OUT.is_file() and OUT.read_text() == text
        print("up to date" if same else f"{OUT} is stale: run python3 -m tools.matmul_reach", file=sys.stderr)
        return 0 if same else 1
    OUT.write_text(text)
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
