"""Dilated (atrous) convolutions on an H100 (lab/dilated_convs.py) against the same convolutions undilated:
DeepLabV3-ResNet50's 3x3 convolutions at 65x65 (layer3 at dilation 2, layer4 at 4, the ASPP head at 12, 24 and 36),
two generic ones and a 1-D TCN layer. Measured, not priced: ConvShape records no dilation, and the op pricer prices
a dilated convolution as the undilated one (its MACs are the same)."""

from __future__ import annotations

import json
from typing import Any

from bench import REPO

DILATED = REPO / "lab/data/h100-dilated-convs-2026-12-07/dilated_convs.json"


def rows() -> list[dict[str, Any]]:
    return list(json.loads(DILATED.read_text())["rows"])


def slowdowns() -> list[tuple[str, int, float, float]]:
    """(label, dilation, forward time over the undilated one's, training time over the undilated one's) for each
    dilated call. The undilated training call is the label's first, run first, and pays cuDNN's first-call search
    in some (DeepLabV3's layer3: 0.79 ms, then 0.42 at dilation 2): where it is over 1.5x the label's fastest
    training call, that fastest call's time stands in for it."""
    by_label: dict[str, list[dict[str, Any]]] = {}
    for r in rows():
        by_label.setdefault(r["label"], []).append(r)
    out = []
    for label, calls in by_label.items():
        base = next(r for r in calls if r["dilation"] == 1)
        train0 = min(base["training_s"], min(r["training_s"] for r in calls)) \
            if base["training_s"] > 1.5 * min(r["training_s"] for r in calls) else base["training_s"]
        for r in calls:
            if r["dilation"] > 1:
                out.append((label, r["dilation"], r["forward_s"] / base["forward_s"], r["training_s"] / train0))
    return out


def markdown() -> str:
    """A section for docs/nchw.md."""
    table = "\n".join(f"| {label} | {d} | {f:.2f}x | {t:.2f}x |" for label, d, f, t in slowdowns())
    return ("## Dilated convolutions (an H100, measured, not priced)\n\n"
            "The same convolution at its dilation and at dilation 1, bf16, channels-last, cuDNN's benchmark on "
            "(`lab/dilated_convs.py`, `lab/data/h100-dilated-convs-2026-12-07/`, 2026-12-07). Up to dilation 4 in "
            "2-D and 8 in 1-D the kernels and times are the undilated ones'. DeepLabV3's ASPP head (dilation 12-36 "
            "on a 65x65 map) leaves Hopper's sm90 kernels for sm80 ones (cutlass's mma.sync fprop and dgrad, an sm80 "
            "wgrad): about 1.5x its undilated time; a 1-D layer at dilation 32 runs its weight gradient on a kernel "
            "without tensor cores (wgrad_alg0_engine, 4 ms where the undilated one takes 0.16). The op pricer "
            "prices them undilated (ConvShape records no dilation), so DeepLabV3's ASPP is priced about a third "
            "fast; where the threshold lies between these points is not measured.\n\n"
            "| shape | dilation | forward / undilated | training / undilated |\n|---|---:|---:|---:|\n"
            f"{table}\n")
