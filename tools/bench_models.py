#!/usr/bin/env python3
"""BENCHMARKS.md's op-graph section from the stored measurements (tests/data/models-h100.json,
tests/data/published-resnet50.json) and the current estimator; tools/bench_page.py puts it in the page and
the per-case table in docs/model-accuracy.md.

  python3 -m tools.bench_models --print    # print the section with every case
"""

from __future__ import annotations

import argparse
import json

from bench import models as v

HEADING = "## Op-graph estimator: 27 models, training and inference (2026-11-24)"


def cases_table() -> str:
    """Every measured case against its estimate (docs/model-accuracy.md)."""
    return v.table(v.evaluate())


def section(per_case: bool = True) -> str:
    rs = v.evaluate()
    s = v.summary(rs)
    env = json.loads(v.MEASURED.read_text())["env"]
    out = [HEADING, "",
           f"Measured on an {env['device']} (driver {env['driver']}, PyTorch {env['torch']}, cuDNN {env['cudnn']}, "
           f"CUDA {env['cuda']}), {env['date'][:10]}, by `lab/measure_models.py`: "
           "bf16 autocast training (fused AdamW, channels-last CNNs), bf16 inference; median of 2-3 sessions. Raw: "
           "`lab/data/h100-models/`.", "",
           "Estimated from the shipped graphs and the H100 SXM's datasheet (no probe); every third model held out "
           "of the fits (`tools/fit_opcost.py`); ratio = estimate / measured.", "",
           "| group | cases | time within ±25 % | memory within ±10 % | median time error | worst time "
           "| worst memory |",
           "|---|---:|---:|---:|---:|---:|---:|"]
    for g in ("calibration", "held out", "all"):
        x = s[g]
        out.append(f"| {g} | {x['cases']} | {x['time_within']:.0%} | {x['memory_within']:.0%} | "
                   f"{x['median_abs_time_error']:.0%} | {x['worst_time']:.2f}x | {x['worst_memory']:.2f}x |")
    out += ["", "The target (90 % of all cases within ±25 % and ±10 %, none past 1.5x) is met."
            + (" `torchaudio:wav2vec2_base` is traced where a torchaudio matches PyTorch." if per_case else ""), "",
            gemm_alignment_line(), ""]
    out += [v.table(rs), ""] if per_case else ["Every case: [docs/model-accuracy.md](docs/model-accuracy.md).", ""]
    return "\n".join(out)


def gemm_alignment_line() -> str:
    """The unaligned GEMMs timed against their padded twins (bench.gemm_alignment), in one line."""
    from bench import gemm_alignment

    run = gemm_alignment.load()
    bf16 = [r for r in run["ratios"] if r["dtype"] == "bf16"]

    def span(cases: tuple[str, ...]) -> str:
        xs = [float(r["slowdown"]) for r in bf16 if r["case"] in cases]
        return f"{min(xs):.1f}-{max(xs):.1f}x"

    return (f"Unaligned bf16 GEMMs (H100, driver 580.159.04, {run['date_utc'][:10]}, "
            f"`lab/data/h100-gemm-align-*`): odd widths {span(gemm_alignment.ODD_CASES)} their padded twins, "
            f"even {span(gemm_alignment.EVEN_CASES)}.")


def phase_overlap_line() -> str:
    """Twelve training steps against the flow shop of their phases measured apart (bench.models.phase_overlap_ratios),
    and their optimizer phase's host time per parameter tensor (bench.models.fit_optimizer_host), in one line."""
    from bench import models

    env = json.loads(models.PHASE_OVERLAP.read_text())["env"]  # the section's card and driver
    ratios = models.phase_overlap_ratios().values()
    flow, added = [r[0] for r in ratios], [r[1] for r in ratios]
    line = models.fit_optimizer_host()  # the optimizer phase's host time against the parameter tensors
    return (f"Phases apart ({env['date'][:10]}, {len(flow)} steps): flow shop {min(flow):.2f}-{max(flow):.2f}x, sum "
            f"{min(added):.2f}-{max(added):.2f}x; optimizer {line['HOST_OPTIMIZER_STEP']:.0f}+"
            f"{line['HOST_OPTIMIZER_PER_TENSOR']:.2f}/tensor.")


def main() -> int:
    ap = argparse.ArgumentParser(description="Print the op-graph section; python3 -m tools.bench_page writes the page.")
    ap.add_argument("--print", action="store_true", help="print the section (the default, kept for old scripts)")
    ap.parse_args()
    print(section())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
