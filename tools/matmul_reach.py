#!/usr/bin/env python3
"""Build catalog/matmul-reach.yaml: how much of its datasheet tensor peak a large 16-bit matmul reaches on each
card, from published measurements (not ours, not fitted to any validation result).

Sources (SOURCES):
* `torch-mm`: zzc0721/torch-performance-test-data, database.md at commit 078586871da31ad6aaaf6fa43bc4ec3f284b151d
  (read 2026-11-27; rows for cards the catalog gained later added 2026-12-07), measured by its test.py: torch.mm of
  square random matrices of 1,024-10,240, 6 warm-ups and 30 timed calls, the best size kept, one row per
  contributor's machine. The rows below are copied from that table (device as written there, bf16 and fp16
  TFLOP/s, the contributor and the row's note). Laptop parts, 48 GB modified cards, rows whose card the catalog
  lacks (V100S, T10, RTX 4090 D, RTX 5090 D) and the "A100 40GB" row, which does not say SXM or PCIe, are left
  out; fp16 is used for cards without bf16 (Turing, Volta).
* `amd-maf`: AMD's Max-Achievable FLOPs of the MI300X and MI325X (ROCm blog "Measuring Max-Achievable FLOPs - Part
  2", 2025-02-28, Table 1): hipBLASLt-bench at the size that fills every CU (M 4,096, N 4,864, K 32,896),
  trig_float inputs (realistic bit toggling), cold caches, the device thermally stable. The MI300X holds a median
  1,207 MHz of its 2,100 MHz boost there (708 TFLOP/s bf16, 0.54 of its datasheet peak): the clock its 750 W
  limit allows under dense matrix work, which the datasheet peak does not carry.

The measured figure of a card is the median of its rows.

  python3 -m tools.matmul_reach [--check]
"""

from __future__ import annotations

import statistics
from pathlib import Path

from tools.shipped_yaml import write_or_check

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "catalog" / "matmul-reach.yaml"
SOURCES = {
    "torch-mm": {"label": "torch.mm timings in zzc0721/torch-performance-test-data",
                 "url": "https://github.com/zzc0721/torch-performance-test-data/blob/"
                        "078586871da31ad6aaaf6fa43bc4ec3f284b151d/database.md",
                 "method": "test.py: torch.mm, square random matrices 1,024-10,240, 6 warm-ups, 30 timed calls, "
                           "best size",
                 "read": "2026-11-27 (H20, RTX 2080, RTX 4070 Super, RTX 4060 Ti 16GB and RX 7900 XT rows: "
                         "2026-12-07)"},
    "amd-maf": {"label": "AMD's Max-Achievable FLOPs, ROCm blog 2025-02-28",
                "url": "https://rocm.blogs.amd.com/software-tools-optimization/measuring-max-achievable-flops-part2/"
                       "README.html",
                "repo_file": "https://github.com/ROCm/rocm-blogs/blob/8e011952aebcdc6ad86b42f5ee236136aa8765dd/blogs/"
                             "software-tools-optimization/measuring-max-achievable-flops-part2/README.md",
                "method": "AMD's Max-Achievable FLOPs (Table 1): hipblaslt-bench -m 4096 -n 4864 -k 32896, "
                          "trig_float initialization, rotating buffers (cold caches), thermally stable device; "
                          "ROCm 6.3.0, hipBLASLt db8e93b4, 750 W MI300X and 1,000 W MI325X, measured 2025-02-25",
                "read": "2026-12-07"},
}

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
    ("NVIDIA H20 96GB", 141.86, 141.73, "aiguoliuguo", "Docker, PyTorch 2.8.0, CUDA 12.8", "H20"),
    ("NVIDIA RTX 2080 8GB", None, 39.03, "aiguoliuguo", "Docker, PyTorch 2.8.0, CUDA 12.8", "GeForce RTX 2080"),
    ("NVIDIA RTX 4070 SUPER 12GB", 76.76, 75.93, "zzc0208", "physical machine, PyTorch 2.5.1",
     "GeForce RTX 4070 Super"),
    ("NVIDIA RTX 4070 SUPER 12GB", 73.63, 74.73, "RepentStar", "physical machine, PyTorch 2.8.0, CUDA 12.8",
     "GeForce RTX 4070 Super"),
    ("NVIDIA GeForce RTX 4060 Ti 16GB", 42.65, 59.38, "HuanLinOTO", "physical machine (SVCFusion bundle)",
     "GeForce RTX 4060 Ti 16GB"),
    ("AMD Radeon RX 7900 XT", 83.18, 81.83, "cp-yu", "Docker, PyTorch 2.8.0, ROCm 7.0.0", "Radeon RX 7900 XT"),
]

# AMD's Max-Achievable FLOPs (SOURCES["amd-maf"]): (product, bf16, fp16 TFLOP/s, median engine clock MHz in bf16,
# catalog card)
AMD_MAF_ROWS: list[tuple[str, float, float, int, str]] = [
    ("AMD Instinct MI300X (750 W)", 708.0, 654.0, 1207, "Instinct MI300X"),
    ("AMD Instinct MI325X (1,000 W)", 843.0, 794.0, 1447, "Instinct MI325X"),
]


def build() -> dict:
    from gpuadvisor.catalog import load_catalog

    catalog = load_catalog(use_env=False)
    cards: dict[str, dict] = {}
    rows = [(name, device, bf16, fp16, {"contributor": who, "note": note, "source": "torch-mm"})
            for device, bf16, fp16, who, note, name in ROWS]
    rows += [(name, product, bf16, fp16, {"note": f"median engine clock {mhz:,} MHz", "source": "amd-maf"})
             for product, bf16, fp16, mhz, name in AMD_MAF_ROWS]
    for name, device, bf16, fp16, extra in rows:
        card = catalog.get(name)
        dtype, value = ("bf16", bf16) if bf16 is not None else ("fp16", fp16)
        entry = cards.setdefault(name, {"dtype": dtype, "rows": []})
        entry["rows"].append({"device": device, "tflops": value, **extra})
        entry["datasheet_tflops"] = float(card.tensor_tflops(dtype))
    for entry in cards.values():
        entry["measured_tflops"] = round(statistics.median(r["tflops"] for r in entry["rows"]), 2)
        entry["reach"] = round(entry["measured_tflops"] / entry["datasheet_tflops"], 3)
    return {"about": "the fraction of its datasheet dense tensor peak a large 16-bit matmul reaches on each card "
                     "(measured / datasheet), from published measurements (each row names its source); built by "
                     "tools/matmul_reach.py",
            "sources": SOURCES, "cards": dict(sorted(cards.items()))}


def main(argv: list[str] | None = None) -> int:
    return write_or_check(build, OUT, "tools.matmul_reach", argv)


if __name__ == "__main__":
    raise SystemExit(main())
