"""PyTorch's 2-D upsampling kernels on an H100 (lab/upsample_ops.py): F.interpolate's bilinear (align_corners False)
and nearest modes, channels-last and contiguous, forward and backward, from 2x (U-Net, FPN) to DeepLabV3's 8x logits
and its pooling branch's 1x1 -> 65x65, against the op pricer (opcost.upsample_work_s).

These kernels run a thread per output element. The forward's time goes with the outputs, not the bytes (an H100's
channels-last bilinear forward writes about a seventh of copy speed); the backward scatters each output's gradient
into its source pixels with atomic adds, which serialize where many outputs share a source, so its time per output
grows with the fan-in of each source (outputs over inputs). calibration.opgraph.UPSAMPLE_KERNELS holds a line (base +
per fan x fan) per mode, direction and layout, fitted here on two thirds of the shapes (`fit_upsample_kernels`); the
shapes in HELD_OUT are never read by the fit and check it."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench import REPO
from bench.work_lines import fit_line, span, table_rows

UPSAMPLES = REPO / "lab/data/h100-upsample-ops-2026-12-07/upsample_ops.json"
#: the labels of the shapes the fit never reads: one of each family (a logits head, a 2x decoder, a pooling branch)
HELD_OUT = {"fcn logits 28->224", "unet 2x 128->256", "pool 2->64"}
PHASES = ("forward", "backward")
MODES = ("bilinear", "nearest")
LAYOUTS = ("nhwc", "nchw")
#: the lab's layout names as the pricer's (opcost.upsample_work_s reads the step's: NCHW where its convolutions are)
LAYOUT = {"channels_last": "nhwc", "contiguous": "nchw"}


def rows(path: Path = UPSAMPLES) -> list[dict[str, Any]]:
    return list(json.loads(path.read_text())["rows"])


def held_out(r: dict[str, Any]) -> bool:
    return r["label"] in HELD_OUT


def work(r: dict[str, Any]) -> tuple[float, float]:
    """(outputs, the outputs that share each input: the fan) of one measured call, as opcost.upsample_work_s counts
    them."""
    return float(r["outputs"]), (r["out_size"] / r["size"]) ** 2


#: the entries left unpriced (0, 0: the op's bytes price it): nearest's backward runs a thread per input summing the
#: outputs it feeds, so its time goes with how many inputs there are to spread over the GPU (a 1x1 source: 0.06x of
#: any line in its outputs), not with its outputs
UNPRICED = {("nearest", "backward", "nhwc"), ("nearest", "backward", "nchw")}


def calls_of(mode: str, phase: str, layout: str, path: Path = UPSAMPLES) -> list[dict[str, Any]]:
    """The measured calls one table entry prices: both dtypes forward (a thread an output either way), fp32 backward
    (autocast runs upsampling in fp32, and a bf16 gradient's atomic adds are 2x-4x slower: pure-bf16 training)."""
    return [r for r in rows(path) if r["mode"] == mode and LAYOUT[r["layout"]] == layout
            and (phase == "forward" or r["dtype"] == "float32")]


def fit_upsample_kernels(path: Path = UPSAMPLES) -> dict[tuple[str, str, str], tuple[float, float]]:
    """UPSAMPLE_KERNELS: per (mode, direction, layout), the line base + per fan x fan (picoseconds an output) with
    the least squared relative error over the calls not held out (calls_of), both terms >= 0, to 0.001 ps."""

    out: dict[tuple[str, str, str], tuple[float, float]] = {}
    for mode in MODES:
        for phase in PHASES:
            for layout in LAYOUTS:
                if (mode, phase, layout) in UNPRICED:
                    out[(mode, phase, layout)] = (0.0, 0.0)
                    continue
                calls = [r for r in calls_of(mode, phase, layout, path) if not held_out(r)]
                out[(mode, phase, layout)] = fit_line([work(r) for r in calls], [r[f"{phase}_s"] for r in calls], 3)
    return out


def _op(r: dict[str, Any], phase: str) -> tuple[Any, float]:
    """One measured call as the tracer records it (its output's elements, its tensors' bytes), with its time."""
    from gpuadvisor.estimate.graph import Op, OpClass, Phase, StreamLayout, StreamShape

    element = 2.0 if r["dtype"] == "bfloat16" else 4.0
    outputs, fan = work(r)
    x, y = outputs / fan * element, outputs * element
    name = f"upsample_{r['mode']}2d"
    shape = StreamShape(outputs, StreamLayout.DENSE).to_row()
    if phase == "forward":
        return Op(name, OpClass.ELEMENTWISE, Phase.FORWARD, "bf16", 0.0, x, y, shape), r["forward_s"]
    return Op(name + "_backward", OpClass.ELEMENTWISE, Phase.BACKWARD, "bf16", 0.0, y, x, shape), r["backward_s"]


def ratios(phase: str, path: Path = UPSAMPLES, *, held: bool | None = None) -> list[float]:
    """The op pricer's time over the measured one for each priced call of `phase` (calls_of; held: only the
    held-out shapes, or only the fitted ones), on the H100's datasheet figures, in the call's layout."""
    from bench.models import hardware
    from gpuadvisor.estimate.opcost import Rates, op_time

    rates = Rates.of(hardware())
    return [op_time(op, replace(rates, nchw_norms=layout == "nchw")) / t
            for mode in MODES for layout in LAYOUTS if (mode, phase, layout) not in UNPRICED
            for r in calls_of(mode, phase, layout, path) if held is None or held_out(r) == held
            for op, t in [_op(r, phase)]]


def bytes_ratios(phase: str, path: Path = UPSAMPLES) -> list[float]:
    """The same calls priced by their bytes alone, as before the kernels' work was priced."""
    from bench.models import hardware
    from gpuadvisor.estimate.opcost import Rates, op_time

    rates = Rates.of(hardware())
    return [op_time(replace(op, name="copy"), rates) / t
            for mode in MODES for layout in LAYOUTS if (mode, phase, layout) not in UNPRICED
            for r in calls_of(mode, phase, layout, path) for op, t in [_op(r, phase)]]


def markdown() -> str:
    """A section for docs/nchw.md."""
    from gpuadvisor.estimate.calibration.opgraph import UPSAMPLE_KERNELS

    def line(phase: str) -> str:
        fitted, held, by_bytes = ratios(phase, held=False), ratios(phase, held=True), bytes_ratios(phase)
        inside = lambda xs: sum(0.8 <= x <= 1.25 for x in xs)  # noqa: E731
        return (f"{phase}: fitted {inside(fitted)} of {len(fitted)} within 0.8x-1.25x ({span(fitted)}), held out "
                f"{inside(held)} of {len(held)} ({span(held)}); by their bytes {inside(by_bytes)} of "
                f"{len(by_bytes)} ({span(by_bytes)})")

    table = table_rows(UPSAMPLE_KERNELS, 3)
    return ("## Upsampling kernels (an H100)\n\n"
            "F.interpolate's bilinear (align_corners False) and nearest upsampling, forward and backward, from 2x "
            "(U-Net, FPN) to DeepLabV3's 8x logits and its pooling branch's 1x1 -> 65x65, channels-last and "
            "contiguous, bf16 and fp32 (`lab/upsample_ops.py`, `lab/data/h100-upsample-ops-2026-12-07/`, "
            "2026-12-07). The kernels run a thread an output: a channels-last bilinear forward takes 9.1 ps an "
            "output whatever the scale, about a seventh of copy speed, and its bytes had priced it at a sixth of "
            "that. The backward adds each output's gradient into its sources atomically, and the adds to one source "
            "serialize: its time an output grows with the fan (outputs per source), 10 ps at 2x to 140 ps from a "
            "1x1 source, channels-last fp32. Priced since by a line per mode, direction and layout in the fan "
            "(`opcost.upsample_work_s`, `bench.upsample.fit_upsample_kernels`, the fan read off the op's bytes, "
            "other cards x SMs x clock), fitted on two thirds of the shapes; the backward on fp32 calls (autocast "
            "runs upsampling in fp32; a bf16 gradient's adds are 2x-4x slower). " + line("forward") + "; "
            + line("backward") + ". Not priced by a line: NCHW bilinear forwards on small maps (the kernel loops "
            "over batch x channels in a thread per output pixel: FPN's 32 -> 64 at batch 32 x 256 channels, 97 ps "
            "an output, 0.06x), and nearest's backward (a thread per source summing its outputs: left to its "
            "bytes). DeepLabV3 (in no fit): training 0.78x -> 0.82x, inference 0.89x -> 0.92x.\n\n"
            "| mode | direction | layout | ps an output | ps more per fan |\n|---|---|---|---:|---:|\n"
            f"{table}\n")
