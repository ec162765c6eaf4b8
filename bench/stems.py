"""Convolutions with few input channels on an H100 against the op pricer (lab/conv_stem.py): five image stems (3
input channels, and padded to 8) and a grid of 3-64 channels. The wide stems' slowdown per dtype
(WIDE_STEM_SLOWDOWN_FP16/_BF16, opcost.stem_slowdown) is read off the ResNet stem's forward calls; the rest is a
check, never fitted: narrow filters (3x3, 4x4) on few channels run well under what the pricer says."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from bench import REPO

FOLDER = REPO / "lab/data/h100-conv-stem-2026-12-05"
STEMS = FOLDER / "conv_stem.json"  # five image stems, 3 channels and padded to 8 (lab/conv_stem.py)
CHANNELS = FOLDER / "conv_channels.json"  # three convolutions at 3, 4, 8, 16, 32 and 64 channels (--grid)
SLOWDOWN_GRID = tuple(0.5 + 0.25 * i for i in range(39))


def rows(path: Path) -> list[dict[str, Any]]:
    """The calls as run (a stem's row padded to 8 channels is a convolution of 8)."""
    return [{**r, "in_channels": r["run_channels"]} for r in json.loads(path.read_text())["rows"]]


def _ops(r: dict[str, Any]) -> list[tuple[Any, float]]:
    """The forward and the weight gradient of one measured call as the tracer records them, with their times."""
    from gpuadvisor.estimate.graph import ConvGradients, ConvShape, Op, OpClass, Phase, TensorLayout

    n, c, k, size, kern, stride, pad = (r["batch"], r["in_channels"], r["out_channels"], r["size"], r["kernel"],
                                        r["stride"], r["padding"])
    o = (size + 2 * pad - kern) // stride + 1
    x, y, w = 2.0 * n * c * size * size, 2.0 * n * k * o * o, 2.0 * k * c * kern * kern
    flops = 2.0 * n * o * o * k * c * kern * kern
    out = []
    for phase, grads, rd, wr, t in ((Phase.FORWARD, ConvGradients.FORWARD, x + w, y, r["forward_s"]),
                                    (Phase.BACKWARD, ConvGradients.WEIGHT, x + y, w, r["weight_grad_s"])):
        shape = ConvShape(n, c, size, size, k, kern, kern, 1, o, o, TensorLayout.NHWC, grads).to_row()
        name = "convolution" if phase is Phase.FORWARD else "convolution_backward"
        out.append((Op(name, OpClass.CONV, phase, r["dtype"], flops, rd, wr, shape), t))
    return out


def forward_ratios(calls: list[dict[str, Any]]) -> list[float]:
    """The op pricer's forward time over the measured one for each call, on the H100's datasheet figures; reads the
    calibration table at call time."""
    from bench.models import hardware
    from gpuadvisor.estimate.opcost import Rates, op_time

    rates = Rates.of(hardware())
    return [op_time(op, rates, training=False) / t for r in calls for op, t in _ops(r)[:1]]


def _wide_stem(r: dict[str, Any]) -> bool:
    """A 3-channel call of a 7x7 filter that overlaps (ResNet's stem), as opcost.stem_slowdown tells them."""
    return r["in_channels"] == 3 and r["kernel"] >= 7 and r["stride"] < r["kernel"]


def wide_stems(dtype: str) -> list[dict[str, Any]]:
    """The wide-stem calls in `dtype`, of both files (the ResNet stem, twice)."""
    return [r for path in (STEMS, CHANNELS) for r in rows(path) if r["dtype"] == dtype and _wide_stem(r)]


def few_channel_calls() -> list[dict[str, Any]]:
    """Every other call of fewer than 64 channels: the check."""
    return [r for path in (STEMS, CHANNELS) for r in rows(path) if r["in_channels"] < 64 and not _wide_stem(r)
            and not _patchify(r)]


def mean_log(ratios: list[float]) -> float:
    return sum(abs(math.log(x)) for x in ratios) / len(ratios)


def fit_wide_stems() -> dict[str, float]:
    """WIDE_STEM_SLOWDOWN_FP16 and _BF16: each the grid value with the least mean |log(priced / measured)| over its
    dtype's wide-stem forward calls."""
    from gpuadvisor.estimate import calibration as cal

    out = {}
    for dtype, name in (("fp16", "WIDE_STEM_SLOWDOWN_FP16"), ("bf16", "WIDE_STEM_SLOWDOWN_BF16")):
        def err(value: float, dtype: str = dtype, name: str = name) -> float:
            with cal.override(**{name: value}):
                return mean_log(forward_ratios(wide_stems(dtype)))

        out[name] = min(SLOWDOWN_GRID, key=err)
    return out


def _patchify(r: dict[str, Any]) -> bool:
    """A 3-channel patchify (the filter's width its stride, 4 or more), as opcost.stem_slowdown tells them."""
    return r["in_channels"] == 3 and r["kernel"] >= 4 and r["stride"] == r["kernel"]


def patchifies(kernel: int) -> list[dict[str, Any]]:
    """The 3-channel patchify calls of a `kernel`-wide filter, both dtypes: ViT's 16x16/16 (fitted), ConvNeXt's
    4x4/4 (held out)."""
    return [r for r in rows(STEMS) if _patchify(r) and r["kernel"] == kernel]


def fit_patchify() -> dict[str, float]:
    """PATCHIFY_SLOWDOWN: the grid value with the least mean |log(priced / measured)| over ViT's patchify forward
    calls."""
    from gpuadvisor.estimate import calibration as cal

    def err(value: float) -> float:
        with cal.override(PATCHIFY_SLOWDOWN=value):
            return mean_log(forward_ratios(patchifies(16)))

    return {"PATCHIFY_SLOWDOWN": min(SLOWDOWN_GRID, key=err)}


def useful_rates() -> dict[str, tuple[float, float]]:
    """Per dtype, the ResNet stem's useful FLOP/s and the same run's 64-channel 3x3 convolution's (ResNet's layer
    1), the reference it is measured against."""
    reference = {r["dtype"]: r["useful_flops"] / r["forward_s"] for r in rows(STEMS) if r["in_channels"] == 64}
    stem = {r["dtype"]: r["useful_flops"] / r["forward_s"] for r in rows(STEMS) if _wide_stem(r)}
    return {d: (stem[d], reference[d]) for d in ("fp16", "bf16")}


def versus_line() -> str:
    """The ResNet stem's useful FLOP/s as a share of the same run's 64-channel 3x3 convolution's, per dtype."""
    return ", ".join(f"{d} {stem / ref:.2f}x" for d, (stem, ref) in useful_rates().items()) + \
        " a 64-channel conv's FLOP/s"


def markdown() -> str:
    """A section for docs/nchw.md: the stems and the few-channel check."""
    from gpuadvisor.estimate import calibration as cal

    fp16, bf16 = (forward_ratios(wide_stems(d)) for d in ("fp16", "bf16"))
    check = forward_ratios(few_channel_calls())
    vit, convnext = forward_ratios(patchifies(16)), forward_ratios(patchifies(4))
    wide = [r for r in rows(STEMS) + rows(CHANNELS) if r["in_channels"] == 64]
    sixty_four = forward_ratios(wide)
    versus = "; ".join(f"{d} {stem / 1e12:.0f} TFLOP/s, {stem / ref:.2f}x of the same run's 64-channel 3x3 "
                       f"convolution ({ref / 1e12:.0f})" for d, (stem, ref) in useful_rates().items())
    inside = sum(0.8 <= x <= 1.25 for x in check)
    return ("## Few input channels (an H100)\n\n"
            "Convolutions of 3-64 input channels, channels-last, batch 256 (`lab/conv_stem.py`, "
            "`lab/data/h100-conv-stem-2026-12-05/`, 2026-12-05, driver 580.159.04): five image stems in both 16-bit "
            "dtypes, and a 7x7/2, a 3x3/2 and a 3x3/1 convolution at 3, 4, 8, 16, 32 and 64 channels. ResNet's "
            "stem (7x7/2, 3 channels) takes 0.61-0.68 ms in fp16 and 1.84-1.86 ms in bf16 (useful FLOP/s: " + versus
            + "): cuDNN's fp16 first-layer kernels, which bf16 lacks. The op pricer pads a 3-channel convolution "
            "to 8 channels and divides its rate by a slowdown; the wide stem's slowdown is measured per dtype "
            f"(WIDE_STEM_SLOWDOWN_FP16 {cal.WIDE_STEM_SLOWDOWN_FP16:g}, _BF16 {cal.WIDE_STEM_SLOWDOWN_BF16:g}, where "
            "MISALIGNED_SLOWDOWN's assumed 3.0 had priced the fp16 stem 2.2x too long and the bf16 one 0.74x): "
            "priced / measured, fp16 " + ", ".join(f"{x:.2f}x" for x in fp16) + "; bf16 "
            + ", ".join(f"{x:.2f}x" for x in bf16) + ". timm's fp16 ResNet inference on the RTX 3090 and 4090 went "
            "from 0.72x-0.88x to 0.80x-0.95x ([cross-card.md](cross-card.md)). A patchify (ViT's 16x16/16) is "
            f"slower still, PATCHIFY_SLOWDOWN {cal.PATCHIFY_SLOWDOWN:g} fitted on ViT's calls (priced / measured "
            + ", ".join(f"{x:.2f}x" for x in vit) + "); ConvNeXt's 4x4/4 stem, held out, "
            + ", ".join(f"{x:.2f}x" for x in convnext) + " (bf16, fp16). The same runs' 64-channel convolutions "
            "(a check: the convolutions' constants are fitted on whole models' profiled convolution time, "
            f"CONV_EFF {cal.CONV_EFF:g} and {cal.CONV_PASS_FIXED_S * 1e6:g} us a pass) come out "
            + f"{min(sixty_four):.2f}x-{max(sixty_four):.2f}x: alone, a convolution of 64 output channels runs "
            "slower than the model fit says; narrower outputs than a full tile were tried as a slowdown (a tile's "
            "arithmetic intensity) and do not fit the whole models' profiles, so it is not modelled. The rest of "
            "the calls are a check, never fitted: "
            f"{inside} of {len(check)} within 0.8x-1.25x (mean |log error| {100 * mean_log(check):.0f} %). A "
            "convolution of few channels takes about as long as one of 32 (a 7x7/2 runs 1.65-1.87 ms at 3-32 "
            "channels in bf16, 3.7 ms at 64: its kernels take a filter tap's channels a tile at a time), and the "
            "3x3 stems and 8-16-channel convolutions run 1.5-4x longer than priced. Padding every 16-bit "
            "convolution to 32 channels was tried: it fits the grid's 3x3 calls no better, the fp16 3x3 stems "
            "want 32 and the 7x7 one 12, so it is not modelled.\n")
