"""NCHW against channels-last on an H200 (lab/data/h200-nchw-2026-12-05/, 2026-12-05): what PyTorch runs an NCHW
convolution with, and what it costs there. Depthwise convolutions that PyTorch runs with its own CUDA kernels
(opcost.cudnn_depthwise) fit NATIVE_DEPTHWISE_FWD_EFF and NATIVE_DEPTHWISE_BWD_EFF on MobileNet-V3 Large's shapes
(EfficientNet-B0's held out); cuDNN's 16-bit convolutions on NCHW tensors, which it transposes to NHWC and back,
measure NCHW_TRANSPOSE_PASSES on VGG-16's shapes at batch 1024 (batch 256 held out)."""

from __future__ import annotations

import json
import statistics
from dataclasses import replace
from functools import cache
from typing import Any

from bench import REPO

DATA = REPO / "lab" / "data" / "h200-nchw-2026-12-05"
CARD = "H200 SXM 141GB"
#: the batch each fit reads; the other batches are held out
CALIBRATION_BATCH = {"depthwise": 512, "batch norm": 512, "transposes": 1024, "no workspace": 1024}


def _rows(name: str) -> list[dict[str, Any]]:
    return list(json.loads((DATA / name).read_text())["rows"])


@cache
def _hardware() -> Any:
    """The H200's datasheet figures as validation reads them (bench.models.hardware)."""
    from bench.models import hardware

    return hardware(CARD)


def _fp32_flops() -> float:
    """The FP32 FMA rate the op pricer reads (opcost.Rates: the datasheet's at the calibrated MFU)."""
    from gpuadvisor.estimate.opcost import Rates

    return float(Rates.of(_hardware()).gemm["fp32"])


def native_depthwise_rates(held_out: bool | None = None) -> list[tuple[dict[str, Any], float, float]]:
    """(row, forward, backward share of the FP32 rate) of every NCHW depthwise shape PyTorch runs natively."""
    from gpuadvisor.estimate.graph import ConvGradients, ConvShape, TensorLayout
    from gpuadvisor.estimate.opcost import cudnn_depthwise

    peak = _fp32_flops()
    out = []
    for r in _rows("depthwise.json"):
        if r["layout"] != "NCHW" or (held_out is not None and (r["batch"] != CALIBRATION_BATCH["depthwise"])
                                     != held_out):
            continue
        size, k, stride = r["size"], r["kernel"], r["stride"]
        o = size // stride
        shape = ConvShape(r["batch"], r["channels"], size, size, r["channels"], k, k, r["channels"], o, o,
                          TensorLayout.NCHW, ConvGradients(0))
        dtype = "fp16" if r["dtype"] == "float16" else "bf16"
        if cudnn_depthwise(shape, dtype):
            continue
        flops = 2.0 * r["batch"] * r["channels"] * o * o * k * k
        out.append((r, flops / r["fwd_s"] / peak, 2.0 * flops / r["bwd_s"] / peak))
    return out


def fit_native_depthwise() -> tuple[float, float]:
    """The median forward and backward shares of the FP32 rate over the calibration shapes, to three decimals."""
    rates = native_depthwise_rates(held_out=False)
    return (round(statistics.median(f for _, f, _ in rates), 3), round(statistics.median(b for _, _, b in rates), 3))


def nchw_batch_norm_rates(held_out: bool | None = None) -> list[tuple[dict[str, Any], float, float]]:
    """(NCHW row, forward, backward bytes of the input per second per channel) of the train-mode batch norms that
    run at least 1.5x slower than channels-last (bound by their channels, not by bandwidth)."""
    rows = _rows("bn_layouts.json")
    nhwc = {(r["batch"], r["channels"], r["size"]): r for r in rows if r["layout"] == "NHWC"}
    out = []
    for r in rows:
        if r["layout"] != "NCHW" or (held_out is not None and (r["batch"] != CALIBRATION_BATCH["batch norm"])
                                     != held_out):
            continue
        if r["fwd_s"] < 1.5 * nhwc[(r["batch"], r["channels"], r["size"])]["fwd_s"]:
            continue
        nbytes = r["tensor_mb"] * 1e6
        out.append((r, nbytes / r["fwd_s"] / r["channels"], nbytes / (r["fwd_bwd_s"] - r["fwd_s"]) / r["channels"]))
    return out


def fit_nchw_batch_norm() -> tuple[float, float]:
    """NCHW_BN_CHANNEL_BPS and _BWD: the calibration rows' medians, in B/s to two significant figures."""
    rates = nchw_batch_norm_rates(held_out=False)
    fwd, bwd = statistics.median(f for _, f, _ in rates), statistics.median(b for _, _, b in rates)
    return float(f"{fwd:.2g}"), float(f"{bwd:.2g}")


def op_ratios() -> dict[str, list[float]]:
    """The op pricer's time over the measured time, per group, for every NCHW op the fits read and the held-out ones:
    depthwise convolutions PyTorch runs natively (forward, backward) and channel-bound train-mode batch norms
    (forward, backward), each as the traced op would carry it."""

    from gpuadvisor.estimate.graph import (
        ConvGradients,
        ConvShape,
        NormShape,
        Op,
        OpClass,
        Phase,
        StreamLayout,
        TensorLayout,
    )
    from gpuadvisor.estimate.opcost import Rates, op_time

    r = replace(Rates.of(_hardware()), nchw_norms=True)
    out: dict[str, list[float]] = {"depthwise forward": [], "depthwise backward": [], "batch norm forward": [],
                                   "batch norm backward": [], "workspace-free convolution": [],
                                   "workspace-free convolution at 64 channels": []}
    for row, ratio in no_workspace_ratios():
        out["workspace-free convolution" + (" at 64 channels" if row["cout"] < 128 else "")].append(ratio)
    for row, _, _ in native_depthwise_rates():
        n, c, size, k, stride = row["batch"], row["channels"], row["size"], row["kernel"], row["stride"]
        o, eb = size // stride, 2.0
        dtype = "fp16" if row["dtype"] == "float16" else "bf16"
        flops = 2.0 * n * c * o * o * k * k
        x, y, w = n * c * size * size * eb, n * c * o * o * eb, c * k * k * eb
        for phase, grads, fl, rd, wr, t, group in (
                (Phase.FORWARD, ConvGradients.FORWARD, flops, x + w, y, row["fwd_s"], "depthwise forward"),
                (Phase.BACKWARD, ConvGradients.INPUT | ConvGradients.WEIGHT, 2 * flops, x + y + w, x + w, row["bwd_s"],
                 "depthwise backward")):
            shape = ConvShape(n, c, size, size, c, k, k, c, o, o, TensorLayout.NCHW, grads).to_row()
            name = "convolution" if phase is Phase.FORWARD else "convolution_backward"
            op = Op(name, OpClass.CONV, phase, dtype, fl, rd, wr, shape)
            out[group].append(op_time(op, r, training=True) / t)
    for row, _, _ in nchw_batch_norm_rates():
        n, c, size = row["batch"], row["channels"], row["size"]
        elements, nbytes = n * c * size * size, row["tensor_mb"] * 1e6
        shape = NormShape(elements, StreamLayout.BATCH_STATS, n * size * size).to_row()
        fwd = Op("native_batch_norm", OpClass.NORM, Phase.FORWARD, "fp16", 0.0, nbytes, nbytes, shape)
        bwd = Op("native_batch_norm_backward", OpClass.NORM, Phase.BACKWARD, "fp16", 0.0, 2 * nbytes, nbytes, shape)
        out["batch norm forward"].append(op_time(fwd, r, training=True) / row["fwd_s"])
        out["batch norm backward"].append(op_time(bwd, r, training=True) / (row["fwd_bwd_s"] - row["fwd_s"]))
    return out


def transpose_passes(held_out: bool | None = None) -> list[tuple[dict[str, Any], float]]:
    """(NCHW row, the passes over its input and output at achieved copy bandwidth that its time exceeds the
    channels-last one's by) for VGG-16's convolutions of 8+ input channels, uncapped."""
    from gpuadvisor.estimate import calibration as cal

    bw = float(_hardware().bandwidth_gbs or 0.0) * 1e9 * cal.BANDWIDTH
    rows = [r for r in _rows("conv_workspace.json") if r["cap_room_gib"] is None and r["cin"] >= 8]
    nhwc = {(r["batch"], r["cin"], r["cout"], r["size"]): r for r in rows if r["layout"] == "NHWC"}
    out = []
    for r in rows:
        if r["layout"] != "NCHW" or (held_out is not None and (r["batch"] != CALIBRATION_BATCH["transposes"])
                                     != held_out):
            continue
        other = nhwc[(r["batch"], r["cin"], r["cout"], r["size"])]
        nbytes = (r["in_gib"] + r["out_gib"]) * 2**30
        out.append((r, (r["time_s"] - other["time_s"]) / (nbytes / bw)))
    return out


def fit_transpose_passes() -> float:
    return round(statistics.median(p for _, p in transpose_passes(held_out=False)), 1)


def no_workspace_rates(held_out: bool | None = None) -> list[tuple[dict[str, Any], float]]:
    """(capped NCHW row, its FLOPs per second over the FP32 rate the pricer reads) of VGG-16's convolutions that the
    cap drove to cuDNN's workspace-free kernels (conv_fallback): every capped row whose copies exceed its 0.5 GiB of
    room; the image stem (3 channels: no copies) and the shapes whose copies fit ran as uncapped."""
    peak = _fp32_flops()
    out = []
    for r in _rows("conv_workspace.json"):
        if r["cap_room_gib"] is None or r["cin"] < 8 or r["in_gib"] + r["out_gib"] <= r["cap_room_gib"]:
            continue
        if held_out is not None and (r["batch"] != CALIBRATION_BATCH["no workspace"]) != held_out:
            continue
        out.append((r, r["tflops"] * 1e12 / peak))
    return out


def fit_no_workspace() -> float:
    """NO_WORKSPACE_CONV_EFF: the median share over the calibration rows of a whole tile (128+ output channels)."""
    from gpuadvisor.estimate import calibration as cal

    return round(statistics.median(x for r, x in no_workspace_rates(held_out=False)
                                   if r["cout"] >= cal.NO_WORKSPACE_CONV_TILE), 2)


def fit_no_workspace_tile() -> int:
    """NO_WORKSPACE_CONV_TILE: 128 times the rate at 64 output channels over the median at 128+, to the nearest
    32 (the calibration batch)."""
    rows = no_workspace_rates(held_out=False)
    full = statistics.median(x for r, x in rows if r["cout"] >= 128)
    part = statistics.median(x for r, x in rows if r["cout"] == 64)
    return int(32 * round(64 * full / part / 32))


def no_workspace_ratios() -> list[tuple[dict[str, Any], float]]:
    """The op pricer's time over the measured time of every capped convolution that fell back, both batches."""
    from gpuadvisor.estimate.graph import ConvGradients, ConvShape, Op, OpClass, Phase, TensorLayout
    from gpuadvisor.estimate.opcost import Rates, op_time

    out = []
    for r, _ in no_workspace_rates():
        n, c, k, size = r["batch"], r["cin"], r["cout"], r["size"]
        room = (r["in_gib"] + r["out_gib"] + r["cap_room_gib"]) * 2**30
        rates = replace(Rates.of(_hardware()), nchw_norms=True, conv_room=room)
        shape = ConvShape(n, c, size, size, k, 3, 3, 1, size, size, TensorLayout.NCHW, ConvGradients(0))
        flops = 2.0 * n * k * c * 9 * size * size
        op = Op("convolution", OpClass.CONV, Phase.FORWARD, "fp16", flops, (r["in_gib"]) * 2**30,
                r["out_gib"] * 2**30, shape.to_row())
        out.append((r, op_time(op, rates) / r["time_s"]))
    return out


def capped_steps() -> list[tuple[dict[str, Any], float]]:
    """(VGG-16's inference step at batch 1024 under a memory cap, tool / measured time) with the H200's memory
    taken as the cap: nothing was fitted on them."""
    from gpuadvisor import api
    from gpuadvisor.estimate import estimate_compute

    out = []
    for name in ("timm-cap-23.4.json", "timm-cap-22.0.json"):
        for r in _rows(name):
            gpu_figures = replace(_hardware(), memory_gib=r["cap_gib"])
            w = api.workload(f"torchvision:{r['model']}", mode=r["mode"], batch=r["batch"], dtype="fp16")
            est = estimate_compute(w, gpu_figures)
            out.append((r, r["batch"] / float(est.samples_per_s or 0.0) / r["time_s"]))
    return out


def whole_steps() -> list[tuple[dict[str, Any], float]]:
    """(measured step, tool time / measured time) of the profiled H200 steps (nchw_profile.json): timm's benchmark
    loop (fp16 autocast, SGD) over torchvision's models, NCHW and channels-last; nothing was fitted on them."""
    from gpuadvisor import api
    from gpuadvisor.estimate import estimate_compute

    gpu_figures = _hardware()
    out = []
    for r in _rows("nchw_profile.json"):
        w = api.workload(f"torchvision:{r['model']}", mode=r["mode"], batch=r["batch"],
                         channels_last=r["layout"] == "NHWC", dtype="fp16")
        est = estimate_compute(w, gpu_figures)
        out.append((r, r["batch"] / float(est.samples_per_s or 0.0) / r["time_s"]))
    return out


def markdown(date: str = "2026-12-05") -> str:
    env = json.loads((DATA / "nchw_profile.json").read_text())["env"]
    lines = [f"{env['device']}, PyTorch {env['torch']}, cuDNN {env['cudnn']}, driver 580.159.04, {date} "
             "(`lab/device/nchw_profile.py`, `depthwise.py`, `bn_layouts.py`, `conv_workspace.py`; "
             f"`{DATA.relative_to(REPO)}/`). Whole steps, fp16 autocast; ratio = tool / measured time:", "",
             "| model | mode | batch | NCHW ms | channels-last ms (reference) | NCHW / channels-last | tool / measured "
             "NCHW | tool / measured channels-last |", "|---|---|---:|---:|---:|---:|---:|---:|"]
    steps = whole_steps()
    for i in range(0, len(steps), 2):
        (a, ra), (b, rb) = steps[i], steps[i + 1]
        lines.append(f"| {a['model']} | {a['mode']} | {a['batch']} | {a['time_s'] * 1e3:.1f} | {b['time_s'] * 1e3:.1f} "
                     f"| {a['time_s'] / b['time_s']:.2f} | {ra:.2f} | {rb:.2f} |")
    lines += ["", "Per op (the fits read the calibration shapes; geometric mean of tool / measured over all):", ""]
    for group, ratios in op_ratios().items():
        gm = statistics.geometric_mean(ratios)
        lines.append(f"* {group}: {len(ratios)} ops, {gm:.2f}x ({min(ratios):.2f}-{max(ratios):.2f})")
    fwd, bwd = fit_native_depthwise()
    passes = [p for _, p in transpose_passes()]
    lines += ["", f"PyTorch runs NCHW depthwise convolutions with its own kernels (bf16 always, fp16 below 32 channels "
              f"and most stride-2 shapes): {fwd:.1%} of the FP32 rate forward, {bwd:.1%} backward. NCHW train-mode "
              "batch norms reduce a channel per thread block: 16 channels at 112x112 run 8x slower than "
              "channels-last. cuDNN's NCHW transposes cost VGG-16's convolutions "
              f"{statistics.median(passes):.1f} passes over input and output ({min(passes):.1f}-{max(passes):.1f}), "
              "not the 1.0 assumed: the H100's profile below says which convolutions pay them and at what rate "
              "(a Hopper card is priced by it; an unprofiled architecture keeps NCHW_TRANSPOSE_PASSES). "
              "With too little memory for the NHWC copies those transposes write, cuDNN runs workspace-free kernels "
              f"at {fit_no_workspace():.0%} of the FP32 rate (a tile of {fit_no_workspace_tile()} output channels; "
              "17-25x slower; `conv_fallback`, fitted at batch 1024, batch 256 held out). VGG-16 at batch 1024 "
              "under a cap, measured / tool (nothing fitted on them): "
              + "; ".join(f"{c['cap_gib']} GiB {c['time_s'] * 1e3:.0f} ms, tool {x:.2f}x" for c, x in capped_steps())
              + " (uncapped: 164 ms)."]
    return "\n".join([*lines, *transposes_section(), *other_checks()]) + "\n"


def transposes_section() -> list[str]:
    """docs/nchw.md's section on the H100's profiled transposes (bench.nchw_transposes)."""
    from bench import nchw_transposes as t
    from gpuadvisor.estimate import calibration as cal

    env = json.loads(t.DATA.read_text())["env"]
    rows = t.rows()
    lines = ["", "## Which NCHW convolutions cuDNN transposes (an H100)", "",
             f"{env['device']}, PyTorch {env['torch']}, cuDNN {env['cudnn']}, driver 580.159.04, 2026-12-06 "
             "(`lab/nchw_transposes.py`; `lab/data/h100-nchw-transposes-2026-12-06/`): 27 convolutions of "
             "VGG-16, ResNet-50, SD's UNet, R3D-18 and wav2vec2, bf16 (four also fp16), a forward and a training "
             "call each, timed NCHW and channels-last and profiled kernel by kernel. Every convolution of a filter "
             "wider than 1x1 (1-D, 2-D and 3-D) ran cuDNN's sm90 NHWC kernels between three transposes a pass "
             "(nine in a training call), a strided 1x1 two, a 1x1 of stride 1 none (cutlass GEMMs on NCHW as it "
             "is, as fast as channels-last where a sample's pixels are a multiple of 8; a sweep of 1x1 "
             "convolutions on 14x14, 7x7, 17x17 and 35x35 maps ran their forward "
             f"{cal.NCHW_1X1_UNALIGNED_SLOWDOWN:.1f}x slower, the median, NCHW_1X1_UNALIGNED_SLOWDOWN). The "
             "transposes are the rest of the NCHW cost: on the large shapes NCHW less channels-last is within "
             "5 % of their profiled time. Priced (opcost.nchw_transpose_s) as each tensor read and written once, a "
             f"kernel each, activations at {cal.NCHW_TRANSPOSE_BW_EFF:.0%} of copy bandwidth and filters at "
             f"{cal.NCHW_FILTER_TRANSPOSE_BW_EFF:.0%}, fitted on two thirds of the shapes:", "",
             "| shape | mode | dtype | transposes | profiled us | priced / profiled | held out |",
             "|---|---|---|---:|---:|---:|---|"]
    key = lambda r: (r["label"], r["mode"], r["dtype"])  # noqa: E731
    priced = {key(r): x for r, x in t.ratios()}
    for r in rows:
        if key(r) in priced or r["transposes"]:
            x = priced.get(key(r))
            lines.append(f"| {r['label']} | {r['mode']} | {r['dtype']} | {r['transposes']} | "
                         f"{r['transpose_s'] * 1e6:.1f} | {'-' if x is None else f'{x:.2f}'} | "
                         f"{'yes' if t.held_out(r) else ''} |")
    held = [x for _, x in t.ratios(held=True)]
    lines += ["", f"Held out: {sum(0.8 <= x <= 1.25 for x in held)} of {len(held)} within 0.8x-1.25x "
              f"({min(held):.2f}-{max(held):.2f}x; the smallest, wav2vec2's last convolution, runs its transposes at "
              "about 6 us each whatever their size). With them priced, CONV_EFF's fit on the models' profiled "
              "convolution time went 0.9 -> 1.1 (the NCHW UNets had held it down), the convolution class's mean "
              "|log error| 0.151 -> 0.099, and R3D-18 (NCHW, out of sample) 0.78x-0.80x -> within."]
    return lines


EAGER = REPO / "lab" / "data" / "h200-eager-layers-2026-12-05" / "eager_layers.json"
RNN = REPO / "lab" / "data" / "h200-rnn-unseen-2026-12-05" / "rnn-unseen.json"


def eager_layer_ratios() -> list[tuple[dict[str, Any], float, float]]:
    """(measured Llama-3-8B layer, the fsdp2 profile's forward + backward time of it / the measured one, its
    attention forward / the measured SDPA forward): one
    torchtitan-style layer trained eager on the H200 (`lab/eager_layers.py`), without FSDP's own traffic."""
    from gpuadvisor.estimate.parallel.cost import AnalyticCost
    from gpuadvisor.estimate.parallel.profiles import framework
    from gpuadvisor.layout import Checkpointing
    from gpuadvisor.workload import make_workload

    fw = framework("fsdp2")
    out = []
    for r in json.loads(EAGER.read_text())["rows"]:
        if r["model"] != "llama3-8b":
            continue  # MPT-7B has no preset to price it by
        w = make_workload("llama-3.1-8b", mode="training", dtype="bf16", seq_len=r["seq"], batch=r["batch"])
        layer = AnalyticCost(w, _hardware(), fw, Checkpointing.NONE).layer(r["tokens"], r["seq"], 1)
        out.append((r, layer.total / fw.compute_eff / r["layer_train_s"], layer.attn_fwd / r["attention_forward_s"]))
    return out


def recurrent_ratios() -> list[tuple[dict[str, Any], float]]:
    """(measured step, tool / measured time) of the out-of-sample recurrent models re-measured on the H200 with
    100 timed steps each (`lab/measure_models.py --unseen --only lab/models/ --timed 100`)."""
    from bench import unseen
    from bench.models import workload
    from gpuadvisor.estimate import estimate_compute

    out = []
    with unseen.stored_graphs():
        for c in json.loads(RNN.read_text())["results"]:
            est = estimate_compute(workload(c), _hardware())
            out.append((c, (est.step_time_s or est.time_s or 0.0) / c["time_s"]))
    return out


def other_checks() -> list[str]:
    """The same session's two other H200 checks, as lines of docs/nchw.md."""
    from bench import unseen

    eager = eager_layer_ratios()
    layer, attention = [x for _, x, _ in eager], [a for _, _, a in eager]
    rnn = recurrent_ratios()

    def small(cases: list[dict[str, Any]]) -> list[float]:
        return [c["time_s"] * 1e3 for c in cases if "lstm_small" in c["spec"] and c["mode"] == "inference"]
    h200, h100 = small([c for c, _ in rnn]), small(unseen.load())
    return ["", "## Two other checks of the same day", "",
            f"* One torchtitan-style Llama-3-8B layer trained eager (`{EAGER.relative_to(REPO)}`): the fsdp2 profile "
            f"charges {min(layer):.2f}-{max(layer):.2f}x its measured time (no FSDP traffic in the measurement); its "
            f"attention forward {min(attention):.2f}-{max(attention):.2f}x PyTorch's SDPA there.",
            f"* The out-of-sample recurrent models, 100 timed steps each (`{RNN.relative_to(REPO)}`): "
            f"{sum(0.8 <= x <= 1.25 for _, x in rnn)} of {len(rnn)} within 0.8x-1.25x "
            f"({min(x for _, x in rnn):.2f}-{max(x for _, x in rnn):.2f}x); `lstm_small` inference "
            f"{min(h200):.2f}-{max(h200):.2f} ms at batch 256 and 1024 (the H100 set's, the median of six runs "
            f"of up to 100 steps, `tools/merge_unseen_runs.py`: {min(h100):.2f}-{max(h100):.2f} ms)."]


def _medians(rates: list[tuple[dict[str, Any], float, float]]) -> tuple[float, float]:
    return statistics.median(f for _, f, _ in rates), statistics.median(b for _, _, b in rates)


if __name__ == "__main__":
    import math
    for group, ratios in op_ratios().items():
        print(group, len(ratios), "geomean", round(math.exp(statistics.mean(math.log(x) for x in ratios)), 3),
              "range", round(min(ratios), 2), round(max(ratios), 2))
    print("NCHW batch norm B/s per channel (fwd, bwd):", fit_nchw_batch_norm(), "held out medians:",
          [f"{x:.2g}" for x in _medians(nchw_batch_norm_rates(True))])
    print("native depthwise (fwd, bwd share of FP32):", fit_native_depthwise(), "held out medians:",
          [round(x, 3) for x in _medians(native_depthwise_rates(True))])
    print("no workspace (share of FP32, tile):", fit_no_workspace(), fit_no_workspace_tile(), "held out median:",
          round(statistics.median(x for _, x in no_workspace_rates(True)), 3), "ratios",
          [round(x, 2) for _, x in no_workspace_ratios()], "capped steps", [round(x, 2) for _, x in capped_steps()])
    print("NCHW transpose passes:", fit_transpose_passes(), "held out median:",
          round(statistics.median(p for _, p in transpose_passes(True)), 2))
