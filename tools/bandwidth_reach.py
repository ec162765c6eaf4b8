#!/usr/bin/env python3
"""Build catalog/bandwidth-reach.yaml: how much of its datasheet memory bandwidth a streaming kernel reaches on each
card, from one published set measured the same way on every card (not ours, not fitted to any validation result).

Source: Microsoft Azure's AI benchmarking guide (github.com/Azure/AI-benchmarking-guide), its per-VM result pages
as kept in the fork samuel-bohman/AI-benchmarking-guide (Azure_Results/ND_*_results.md; the MI300X page is only in
the fork), read 2026-12-07: BabelStream (Benchmarks/NVIDIA/HBMBandwidth.py and its AMD twin: the CUDA or HIP
build, default arrays of 2^25 doubles, the best of 5 runs), one GPU of each VM. The "Copy" row is taken: the
kernel the `probe` command's memory.copy measures, and the figure `--probe` prices streaming with
(BANDWIDTH_VS_MEASURED). A card's reach is copy / its catalog bandwidth; the estimator takes it over the H100's
from the same source, so the H100's calibrated BANDWIDTH is unchanged and methodology cancels.

Our own probes agree with the source where both measured: H100 SXM copy 2,918 GB/s (reports/sample-h100-probe.json)
against 2,900; H200 4,029-4,065 (reports/sample-h200x2-probe.json) against 4,010 (tests/test_bandwidth_reach.py).

  python3 -m tools.bandwidth_reach [--check]
"""

from __future__ import annotations

from pathlib import Path

from tools.shipped_yaml import write_or_check

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "catalog" / "bandwidth-reach.yaml"
FORK = "https://github.com/samuel-bohman/AI-benchmarking-guide/blob"
SOURCE = {"label": "Azure AI benchmarking guide, BabelStream copy",
          "upstream": "https://github.com/Azure/AI-benchmarking-guide",
          "method": "BabelStream (CUDA/HIP), default 2^25-double arrays, best of 5 runs, one GPU of the VM; Copy row",
          "read": "2026-12-07"}

# (VM page, its commit in the fork, GPU as the page names it, Copy TB/s, software the page lists, catalog card)
ROWS: list[tuple[str, str, str, float, str, str]] = [
    ("ND_A100_v4_results.md", "26d18e9458bb07bd43e3eda7aec8653aa592f2ec", "NVIDIA A100-SXM4-80GB", 1.61,
     "CUDA 12.5, driver 550.90.07", "A100 SXM4 80GB"),
    ("ND_H100_v5_results.md", "26d18e9458bb07bd43e3eda7aec8653aa592f2ec", "NVIDIA H100 80GB HBM3", 2.90,
     "CUDA 12.6, driver 560.35.03", "H100 SXM5 80GB"),
    ("ND_H200_v5_results.md", "0de7d01da6f8c360fc206ee292642e6782731e70", "NVIDIA H200 141GB", 4.01,
     "CUDA 12.6, driver 560.28.03", "H200 SXM 141GB"),
    ("ND_MI300X_v5_results.md", "3de0c294fd1059a91a2c158712c4a078619d73e8", "AMD Instinct MI300X", 4.11,
     "ROCm 6.8.1 (as the page writes it), HIP 6.2.41133", "Instinct MI300X"),
]


def build() -> dict:
    from gpuadvisor.catalog import load_catalog

    catalog = load_catalog(use_env=False)
    cards = {}
    for page, commit, device, copy_tbs, software, name in ROWS:
        datasheet = float(catalog.get(name).memory_bandwidth_gbs)
        cards[name] = {"device": device, "copy_gbs": round(copy_tbs * 1000, 1), "datasheet_gbs": datasheet,
                       "reach": round(copy_tbs * 1000 / datasheet, 3), "software": software,
                       "page": f"{FORK}/{commit}/Azure_Results/{page}"}
    return {"about": "the fraction of its datasheet memory bandwidth a streaming copy reaches on each card (measured "
                     "/ datasheet), from one published set; built by tools/bandwidth_reach.py",
            "source": SOURCE, "cards": dict(sorted(cards.items()))}


def main(argv: list[str] | None = None) -> int:
    return write_or_check(build, OUT, "tools.bandwidth_reach", argv)


if __name__ == "__main__":
    raise SystemExit(main())
