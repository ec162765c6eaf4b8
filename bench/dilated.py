"""Dilated (atrous) convolutions on an H100 (lab/dilated_convs.py) against the same convolutions undilated:
DeepLabV3-ResNet50's 3x3 convolutions at 65x65 (layer3 at dilation 2, layer4 at 4, the ASPP head at 12, 24 and 36),
two generic ones and a 1-D TCN layer. Since tracer revision 20 a convolution's row records its dilation
(ConvShape.dilation), and a widely dilated 2-D one on a Hopper card is priced at the sm80 kernels' rate
(opcost.dilated_slowdown, CONV_DILATED_SLOWDOWN read off the ASPP calls here: aspp_slowdown)."""

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
        fastest = min(r["training_s"] for r in calls)
        train0 = fastest if base["training_s"] > 1.5 * fastest else base["training_s"]
        for r in calls:
            if r["dilation"] > 1:
                out.append((label, r["dilation"], r["forward_s"] / base["forward_s"], r["training_s"] / train0))
    return out


def aspp_slowdown() -> float:
    """CONV_DILATED_SLOWDOWN: the median of DeepLabV3's ASPP calls' slowdowns at dilation 12 and more, forward and
    training, rounded to 0.05."""
    import statistics

    xs = [x for label, d, f, t in slowdowns() if label.startswith("deeplabv3 aspp") and d >= 12 for x in (f, t)]
    return round(statistics.median(xs) * 20) / 20


def priced_ratios() -> list[tuple[str, int, float]]:
    """(label, dilation, the op pricer's slowdown over the measured one) for each 2-D dilated call, forward and
    training together: what dilation costs as priced (opcost.dilated_slowdown) against what it cost."""
    from dataclasses import replace

    from bench.models import hardware
    from gpuadvisor.estimate.graph import ConvGradients, ConvShape, Op, OpClass, Phase, TensorLayout
    from gpuadvisor.estimate.opcost import Rates, op_time

    rates = Rates.of(hardware())
    by = {(r["label"], r["dilation"]): r for r in rows()}
    out = []
    for label, d, f, t in slowdowns():
        r = by[(label, d)]
        if r["one_d"]:
            continue
        n, c, size, k, kern = r["batch"], r["in_channels"], r["size"], r["out_channels"], r["kernel"]
        flops = 2.0 * n * size * size * k * c * kern * kern
        shape = ConvShape(n, c, size, size, k, kern, kern, 1, size, size, TensorLayout.NHWC, ConvGradients.FORWARD,
                          dilation=float(d))
        fwd = Op("convolution", OpClass.CONV, Phase.FORWARD, "bf16", flops, 1e6, 1e6, shape.to_row())
        plain = replace(fwd, shape=replace(shape, dilation=1.0).to_row())
        out.append((label, d, op_time(fwd, rates) / op_time(plain, rates) / ((f + t) / 2)))
    return out


def markdown() -> str:
    """A section for docs/nchw.md."""
    table = "\n".join(f"| {label} | {d} | {f:.2f}x | {t:.2f}x |" for label, d, f, t in slowdowns())
    priced = priced_ratios()
    return ("## Dilated convolutions (an H100)\n\n"
            "The same convolution at its dilation and at dilation 1, bf16, channels-last, cuDNN's benchmark on "
            "(`lab/dilated_convs.py`, `lab/data/h100-dilated-convs-2026-12-07/`, 2026-12-07). Up to dilation 4 in "
            "2-D and 8 in 1-D the kernels and times are the undilated ones'. DeepLabV3's ASPP head (dilation 12-36 "
            "on a 65x65 map) leaves Hopper's sm90 kernels for sm80 ones (cutlass's mma.sync fprop and dgrad, an sm80 "
            "wgrad): about 1.5x its undilated time; a 1-D layer at dilation 32 runs its weight gradient on a kernel "
            "without tensor cores (wgrad_alg0_engine, 4 ms where the undilated one takes 0.16). The tracer records "
            "each convolution's dilation (revision 20), and on a Hopper card a 2-D one from dilation "
            "CONV_DILATION_SM80_FROM (8, an assumption between the measured 4 and 12) is priced "
            f"CONV_DILATED_SLOWDOWN ({aspp_slowdown():.2f}x, the ASPP calls' median) slower: the 2-D calls' priced "
            f"slowdown over the measured {min(x for *_, x in priced):.2f}x-{max(x for *_, x in priced):.2f}x (gate "
            "`dilated_convs`). Not priced: the 1-D fall-off, other architectures (not measured dilated).\n\n"
            "| shape | dilation | forward / undilated | training / undilated |\n|---|---:|---:|---:|\n"
            f"{table}\n")
