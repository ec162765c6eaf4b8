#!/usr/bin/env python3
"""Check frozen variants replayed from the shipped step logs (gpuadvisor/estimate/steplog.py) against live traces
of the same settings: step time (opcost.step_time on an H100) and peak memory at a real batch, each within
TOLERANCE. Needs PyTorch and the models' libraries; prints a table and writes it to tests/data/variant-check.json
(tests/test_variants.py holds that record to the tool's cases and tolerance).

  python3 -m tools.check_variants [--batch 64] [--only SUBSTRING]
"""

from __future__ import annotations

import argparse
import datetime
import json
import time
from dataclasses import replace
from pathlib import Path

from bench.models import hardware
from gpuadvisor.core.paths import shipped_graphs_dir
from gpuadvisor.estimate.graph import BatchGraph, GraphMode
from gpuadvisor.estimate.graphstore import STEP_LOGS_DIR, key
from gpuadvisor.estimate.opcost import step_time
from gpuadvisor.estimate.steplog import load_logs, replay_pair
from gpuadvisor.estimate.trace.tracer import TraceOptions, trace_batches
from gpuadvisor.modelref import parse_ref

TOLERANCE = 0.02
OUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "variant-check.json"

#: (spec, channels last, freeze, trainable): a trained head, a trained last stage, a frozen early part, and a
#: frozen middle (gradients pass through frozen layers to trainable ones before them)
CASES: list[tuple[str, bool, tuple[str, ...], tuple[str, ...]]] = [
    ("torchvision:resnet50", False, (), ("fc.*",)),
    ("torchvision:resnet50", True, (), ("fc.*",)),
    ("torchvision:resnet50", False, (), ("layer4.*", "fc.*")),
    ("torchvision:resnet50", False, ("layer2.*",), ()),
    ("torchvision:resnet50", False, ("*bn*",), ()),
    ("torchvision:efficientnet_b0", False, (), ("classifier.*",)),
    ("torchvision:mobilenet_v3_large", True, ("features.0.*", "features.1.*"), ()),
    ("torchvision:densenet121", False, (), ("classifier.*",)),
    ("torchvision:vgg16", False, ("features.*",), ()),
    ("timm:resnext50_32x4d", False, (), ("fc.*", "layer4.*")),
    ("timm:convnext_tiny", False, (), ("head.*", "stages.3.*")),
    ("torchvision:vit_b_16", False, (), ("heads.*",)),
    ("timm:swin_tiny_patch4_window7_224", False, (), ("head.*",)),
    ("hf:bert-base-uncased", False, (), ("cls.*", "bert.encoder.layer.11.*")),
    ("hf:gpt2", False, ("transformer.wte.*", "transformer.wpe.*"), ()),
    ("hf:sd15-unet", False, (), ("up_blocks.3.*", "conv_out.*")),
    ("lab/models/mlp_mnist.py:build", False, (), ("5.*",)),
    ("lab/models/lstm_classifier.py:build", False, ("embed.*",), ()),
]


def measure(bg: BatchGraph, batch: int) -> tuple[float, float]:
    g = bg.at(batch)
    return step_time(g, hardware()).step_s, g.memory.peak_bytes


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    rows = []
    worst = 0.0
    for spec, channels_last, freeze, trainable in CASES:
        if a.only not in spec:
            continue
        ref = parse_ref(spec)
        base = TraceOptions(mode=GraphMode.TRAINING, channels_last=channels_last)
        logs = load_logs(shipped_graphs_dir() / STEP_LOGS_DIR, key(ref, base))
        if logs is None:
            print(f"{spec}: no step log shipped")
            continue
        t0 = time.perf_counter()
        replayed = replay_pair(logs, freeze=freeze, trainable=trainable)
        replay_s = time.perf_counter() - t0
        live = trace_batches(ref, replace(base, freeze=freeze, trainable=trainable))
        (rt, rm), (lt, lm) = measure(replayed, a.batch), measure(live, a.batch)
        time_err, mem_err = rt / lt - 1, rm / lm - 1
        worst = max(worst, abs(time_err), abs(mem_err))
        variant = " ".join([*(f"--freeze {g}" for g in freeze), *(f"--trainable {g}" for g in trainable),
                            *(["--channels-last"] if channels_last else [])])
        rows.append({"spec": spec, "variant": variant, "batch": a.batch, "replay_s": replay_s,
                     "step_ms": {"replayed": rt * 1e3, "live": lt * 1e3}, "peak_gib": {"replayed": rm / 2**30,
                                                                                      "live": lm / 2**30},
                     "time_error": time_err, "memory_error": mem_err})
        print(f"{spec:38s} {variant:44s} step {rt * 1e3:8.2f} ms vs {lt * 1e3:8.2f} ({time_err:+.2%})  "
              f"peak {rm / 2**30:6.2f} GiB vs {lm / 2**30:6.2f} ({mem_err:+.2%})  replay {replay_s * 1e3:.0f} ms",
              flush=True)
    import torch

    OUT.write_text(json.dumps({"tolerance": TOLERANCE, "device": "H100 (datasheet figures)",
                               "date": datetime.date.today().isoformat(), "torch": torch.__version__,
                               "cases": rows}, indent=1) + "\n")
    print(f"worst {worst:.2%} (tolerance {TOLERANCE:.0%}); written {OUT}")
    return 0 if worst <= TOLERANCE else 1


if __name__ == "__main__":
    raise SystemExit(main())
