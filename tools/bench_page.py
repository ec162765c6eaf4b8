"""Write BENCHMARKS.md (and docs/model-accuracy.md) from the measurements stored in this repository.

Each section names its result files; the error of each estimate group is recomputed here from those files
and the current code, so the page cannot drift from either (tests/test_bench_page.py regenerates it).

  python3 -m tools.bench_page            # rewrite BENCHMARKS.md and docs/model-accuracy.md
  python3 -m tools.bench_page --check    # exit 1 if either file is not what the measurements give
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tarfile
import tempfile
from collections import Counter
from functools import cache
from pathlib import Path

from gpuadvisor.core.results import Measurement, RunResult, load
from gpuadvisor.prices import load_prices
from gpuadvisor.prices.model import shipped_path
from tools import bench_models, compare_multigpu, repeatability, validate_estimates, validate_time

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tools" / "data"
PAGE = ROOT / "BENCHMARKS.md"
CASES_PAGE = ROOT / "docs" / "model-accuracy.md"
SERVING_PAGE = ROOT / "docs" / "serving-accuracy.md"
FOUR_GPU_PAGE = ROOT / "docs" / "four-gpu.md"
TRAINING_PAGE = ROOT / "docs" / "training-accuracy.md"

H100_PROBE = DATA / "h100-final-2026-11-23" / "h100-final.json"
H200_PROBE = ROOT / "reports" / "sample-h200x2-probe.json"
H200_NODE = DATA / "h200x2-2026-11-23" / "interconnect-full.json"
H200_REPEAT = DATA / "h200x2-2026-11-23" / "repeatability-quick5.tar.gz"
H200_MULTIGPU = DATA / "h200x2-2026-11-23" / "multigpu.json"
FOUR_GPU_DIR = ROOT / "lab" / "data" / "four-gpu-h200x4-2026-11-27"
FOUR_GPU_BEFORE = FOUR_GPU_DIR / "compare-before-a00895f.json"  # tools.compare_four_gpu --json-out at main a00895f
MEMORY_V2 = DATA / "validation-h100-v2.json"
PROBE_TIME = ROOT / "lab" / "data" / "h100-probe-time" / "time.txt"
PROBE_BEFORE = ROOT / "lab" / "data" / "h100-probe-time" / "before-after.txt"
OP_PROBES = ROOT / "lab" / "data" / "h100-probe-time" / "figures.txt"
COLD_START = DATA / "cold-start.json"
SERVING_SPEED = DATA / "serving-speed.json"

#: the figures of the probe table: those a vendor library also measures in the same run
PROBE_KEYS = ("memory.copy", "memory.triad", "transfer.h2d_pinned", "transfer.d2h_pinned", "tensor.fp16",
              "tensor.bf16", "tensor.tf32", "tensor.fp8", "tensor.int8")
NODE_KEYS = ("interconnect.p2p_0_1", "interconnect.p2p_1_0", "interconnect.allreduce_busbw_1g",
             "interconnect.allreduce_busbw_4g", "interconnect.allgather_busbw_4g",
             "interconnect.reducescatter_busbw_4g")


def _rel(p: Path) -> str:
    return f"`{p.relative_to(ROOT) if p.is_relative_to(ROOT) else p}`"


def _gpu0(run: RunResult) -> dict[str, Measurement]:
    return {m.key: m for p in run.devices[0].probes for m in p.measurements}


def _cell(m: Measurement | None) -> str:
    if m is None or m.value is None:
        return "- | - | -"
    pct = "-" if m.pct_of_datasheet is None else f"{m.pct_of_datasheet:.0f}%"
    ref = "-" if m.ratio_to_reference is None else f"{m.ratio_to_reference:.3f}x"
    return f"{m.value:,.1f} {m.unit} | {pct} | {ref}"


def _when(run: RunResult) -> str:
    return run.created_at[:16].replace("T", " ") + " UTC"


def probes() -> list[str]:
    h100, h200 = load(H100_PROBE), load(H200_PROBE)
    a, b = _gpu0(h100), _gpu0(h200)
    out = ["## Probes against vendor libraries", "",
           f"`gpuadvisor probe --quick` on an {h100.devices[0].name} ({_rel(H100_PROBE)}, {_when(h100)}) and an "
           f"{h200.devices[0].name} (GPU 0 of two, {_rel(H200_PROBE)}, {_when(h200)}); driver "
           f"{h100.host.driver_version}, CUDA runtime {h100.host.cuda_runtime_version}, CuPy {h100.host.cupy_version}, "
           f"PyTorch {h100.host.torch_version}. \"% ds\": of the datasheet; \"x ref\": over the vendor library in "
           "the same run.", "",
           "| figure | H100 | % ds | x ref | H200 | % ds | x ref |", "|---|---:|---:|---:|---:|---:|---:|"]
    ratios = []
    for key in PROBE_KEYS:
        label = (a.get(key) or b.get(key)).label  # type: ignore[union-attr]
        out.append(f"| {label} | {_cell(a.get(key))} | {_cell(b.get(key))} |")
        ratios += [m.ratio_to_reference for m in (a.get(key), b.get(key))
                   if m is not None and m.ratio_to_reference is not None and key != "tensor.int8"]
    out += ["", f"Error against the vendor libraries: {min(ratios):.3f}-{max(ratios):.3f}x for every figure but "
            "int8, where the probe's cuBLASLt kernel beats `torch._int_mm` by "
            f"{a['tensor.int8'].ratio_to_reference:.2f}-{b['tensor.int8'].ratio_to_reference:.2f}x. "
            "Pageable copies (the host's) "
            "and FP32/FP64 FMA rates (within 3 % of peak) have no reference.", "", _fp8_reach_line(), "",
            _gpt_oss_kernels_line(), ""]
    return out


def _gpt_oss_kernels_line() -> str:
    """lab/grouped_moe.py's and lab/sliding_window_attention.py's runs (on the FP8 run's card and driver, checked):
    a MoE layer's experts as one grouped GEMM, and a windowed layer's attention over a causal one, tool and
    measured."""
    import json

    from bench import moe, windows

    fp8 = json.loads((ROOT / "lab/data/h100-fp8-reach-2026-12-06/fp8_reach_shapes.json").read_text())["env"]
    grouped, window = moe.run(), windows.run()
    for env in (grouped["env"], window["env"]):
        assert (env["device"], env["driver"]) == (fp8["device"], fp8["driver"]), env  # "same card and driver"
    est = moe.grouped_ratios()
    r = windows.ratios()
    return (f"Same card, {grouped['env']['date'][:10]}, tool / measured: grouped MoE experts "
            f"({len(est)} shapes) "
            f"{min(est):.2f}-{max(est):.2f}x; 128-token window / causal, "
            f"{'/'.join(f'{s // 1024}k' for s in r)} "
            + (f"({window['env']['date'][:10]}) " if window["env"]["date"][:10] != grouped["env"]["date"][:10] else "")
            + f"{'/'.join(f'{m:.3f}' for _, m in r.values())}, tool {'/'.join(f'{t:.3f}' for t, _ in r.values())}; "
            + _mla_layer_text(fp8))


def _mla_layer_text(fp8_env: dict[str, str]) -> str:
    """lab/mla_layer.py's run: DeepSeek layers kernel by kernel, the tool over each layer's sum."""
    from bench import mla, moe

    run = mla.run()
    assert (run["env"]["device"], run["env"]["driver"]) == (fp8_env["device"], fp8_env["driver"])  # same card
    ratios = [r["layer_ratio"] for r in mla.layer_ratios()]
    stream = moe.stream_run()["env"]
    assert (stream["device"], stream["driver"]) == (fp8_env["device"], fp8_env["driver"])  # same card
    held, block = list(moe.deepseek_grouped_ratios(held_out=True).values()), moe.block_fp8_ratios()
    return (f"DeepSeek layers ({len(ratios)}) {min(ratios):.2f}-{max(ratios):.2f}x "
            f"(ref GEMM {2 * 8192**3 / run['env']['reference_gemm_s'] / 1e12:.0f} TF/s); TP8 experts "
            f"{min(held):.2f}-{max(held):.2f}x; block-scaled FP8 "
            f"{min(block):.2f}-{max(block):.2f}x per-tensor.")


def _fp8_reach_line() -> str:
    """lab/fp8_reach_shapes.py's run: FP8 over bf16 at a prefill's GEMM shapes, against the estimator's FP8_REACH."""
    import json
    import statistics

    from gpuadvisor.estimate import calibration as cal

    run = json.loads((ROOT / "lab/data/h100-fp8-reach-2026-12-06/fp8_reach_shapes.json").read_text())
    reach = [r["fp8_tflops"] / r["bf16_tflops"] / 2 for r in run["rows"]]
    from bench.serving import prefill_linear_ratios, unfused_fp8_prefill_ratios

    _, ratios = unfused_fp8_prefill_ratios()
    bf16_env, bf16 = prefill_linear_ratios()
    linear = [x for _, x in bf16]
    return (f"H100, driver {run['env']['driver']}, {run['env']['date'][:10]}: FP8 over bf16 at {len(reach)} prefill "
            f"GEMMs (70B, 8B; 1.5 s each) median {statistics.median(reach):.2f} of the peaks' 2x "
            f"({min(reach):.2f}-{max(reach):.2f}), FP8_REACH {cal.FP8_REACH:g}; a 70B FP8 layer, unfused, "
            f"{ratios[3000]:.2f}x the tool at 3,000 tokens. {bf16_env['date'][:10]}, 4 s at 700 W: Qwen3-14B bf16 "
            f"prefill linears, tool {min(linear):.2f}-{max(linear):.2f}x.")


def node() -> list[str]:
    run = load(H200_NODE)
    ms = {m.key: m for p in run.node_probes for m in p.measurements}
    out = ["## Between two GPUs", "",
           f"`probe --full` on 2x {run.devices[0].name} (NVSwitch, {_rel(H200_NODE)}, "
           f"{_when(run)}). Reference, same processes: `tensor.copy_` across devices, `torch.distributed` (NCCL); "
           "bus bandwidth as nccl-tests defines it.", "",
           "| figure | probe | % ds | x ref |", "|---|---:|---:|---:|"]
    out += [f"| {ms[k].label} | {_cell(ms[k])} |" for k in NODE_KEYS if k in ms]
    r = [m.ratio_to_reference for m in ms.values() if m.ratio_to_reference is not None]
    out += ["", f"Over the whole sweep (1 MiB to 4 GiB): {min(r):.3f}-{max(r):.3f}x the reference; lowest at "
            "16 MiB (launch, set-up).", ""]
    return out


def repeat() -> list[str]:
    with tempfile.TemporaryDirectory() as tmp, tarfile.open(H200_REPEAT) as tar:
        safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}  # 3.10.12+: refuse odd members
        tar.extractall(tmp, **safe)  # type: ignore[arg-type]
        files = sorted(str(p) for p in Path(tmp).glob("*.json"))
        rows = repeatability.collect(files)
    device = [r for r in rows.values() if not r["host_bound"] and r["unit"] not in ("us", "ms")]
    within = sum(r["max_dev_pct"] <= 3 for r in device)
    worst_key, worst = max(((k, r) for k, r in rows.items() if r in device), key=lambda kr: kr[1]["max_dev_pct"])
    return ["## Repeatability", "",
            f"{len(files)} runs of `gpuadvisor probe --quick --device all` back to back on 2x H200 "
            f"({_rel(H200_REPEAT)}; `python3 -m tools.repeatability`): {within} of {len(device)} bandwidth and "
            f"throughput figures stay within 3 % of their median over the runs; the worst is {worst_key} "
            f"({worst['max_dev_pct']:.1f} %, one slow run). Host-bound figures and latencies are left out.", ""]


def probe_time() -> list[str]:
    def walls(path: Path) -> dict[str, str]:  # "after quick-warm" -> "6.1"
        runs = re.findall(r"^(?:(\S+) )?(\S+) \([^)]*\): rc=\d+ wall=([\d.]+) s", path.read_text(), flags=re.M)
        return {f"{tree} {name}".strip(): wall for tree, name, wall in runs}

    device = PROBE_TIME.read_text().splitlines()[0]
    now = walls(PROBE_TIME)
    cells = ", ".join(f"{k.split()[-1]} {v} s" for k, v in now.items())
    ba, text = walls(PROBE_BEFORE), PROBE_BEFORE.read_text()
    parts = text.split("== figures, ")
    worst = {m: re.findall(r"largest GPU-figure difference[^:]*: ([\d.]+) %", next((x for x in parts if x.startswith(
        f"{m}-warm: before")), "")) for m in ("full", "quick")}
    moved = ", ".join(f"{m} {ba[f'before {m}']} -> {ba[f'after {m}']} s" for m in ("quick-warm", "full-warm")
                      if f"before {m}" in ba and f"after {m}" in ba)
    within = " and ".join(f"{w[0]} % ({m})" for m, w in worst.items() if w)
    date = re.search(r"\d{4}-\d{2}-\d{2}", OP_PROBES.read_text())
    return ["## How long a probe takes", "",
            f"`gpuadvisor probe` on an {device}, {date.group(0) if date else ''} ({_rel(PROBE_TIME)}, by "
            f"`lab/device/probe_time.sh`): {cells} (cold: fresh caches). Before the speed-up, same call "
            f"(`before-after.txt`): {moved}, GPU figures within {within}.", "", *op_probes()]


def op_probes() -> list[str]:
    """The `--full` convolution and streaming-op probes' ratios to their same-run references (cold run)."""
    text = OP_PROBES.read_text()
    cold = text.split("== run 3 full-cold", 1)[1].split("==", 1)[0]
    ratio = dict(re.findall(r"^  (\S+) .*= ([\d.]+)", cold, flags=re.M))
    conv = ", ".join(f"{k.split('_')[1].upper()} {ratio[k]}" for k in ("conv.bf16_nhwc", "conv.bf16_nchw"))
    stream = ", ".join(f"{k.split('.')[1].split('_bf16')[0].replace('_', ' ')} {ratio[k]}" for k in (
        "conv.depthwise_bf16_nhwc", "elementwise.add", "elementwise.layer_norm", "elementwise.batch_norm",
        "elementwise.softmax"))
    return [f"Op probes (`--full`, `figures.txt`), ratio to the same run's GEMM: 3x3 bf16 conv {conv}; to its copy: "
            f"{stream}.", ""]


def llm_time() -> list[str]:
    drows, prows, _ = validate_time.collect()
    scored = [r for r in drows if "not scored" not in r["engine"]]
    return ["## LLM time estimates", "",
            "The time model against H100 and H200 runs (PyTorch 2.11, transformers 5.17, random weights from "
            "published configs): decode per engine (`tools/data/decode-h100*.json`, `lab/data/`), prefill, scoring, "
            "training. Error = estimate / measured - 1; held-out points set no constant. `python3 -m "
            "tools.validate_time`.", "",
            *validate_time.summary(scored, "engine"), "", *validate_time.summary(prows), "",
            "Eager decode depends on the host: `probe --full` measures it; estimates without it say low confidence.",
            ""]


def llm_memory() -> list[str]:
    data = json.loads(MEMORY_V2.read_text())
    rows = [validate_estimates.estimate_row(r) for r in data["records"] if r.get("measured", {}).get("peak_bytes")]
    env = data.get("env", {})
    return ["## LLM memory estimates", "",
            f"Peak `torch.cuda.max_memory_allocated`, {len(rows)} cases (15 models of 9 architectures, 0.1B-8B, all "
            f"workloads), H100 ({_rel(MEMORY_V2)}, {env.get('date', '2026-11-23')[:10]}; "
            "`python3 -m tools.validate_estimates`). Held out: case id % 3 == 0.", "",
            validate_estimates.summary_markdown(rows), ""]


def multigpu() -> list[str]:
    data = json.loads(H200_MULTIGPU.read_text())
    rows = compare_multigpu.rows_from(data, None)
    out = ["## Multi-GPU estimates", "",
           f"Llama-2-7B shapes with random weights on 2x {data['env']['device_name']} ({_rel(H200_MULTIGPU)}, "
           f"{data['env']['date'][:10]}; `python3 -m lab.validate_multigpu`): per-GPU peak memory and step "
           "time against the estimate.", "",
           "| case | measured GiB/GPU | estimated | error | measured ms | estimated | error |",
           "|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        out.append(f"| {r['case']} | {_f(r['meas_gib'], 2)} | {_f(r['est_gib'], 2)} | {_pct(r['mem_err_pct'])} | "
                   f"{_f(r['meas_ms'], 0)} | {_f(r['est_ms'], 0)} | {_pct(r['time_err_pct'])} |")
    return [*out, ""]


def four_gpu_summary() -> list[str]:
    """BENCHMARKS.md's lines on the 4x H200 node: the headline figures, the rest on its own page."""
    from tools import compare_four_gpu

    data = json.loads((FOUR_GPU_DIR / "four_gpu.json").read_text())
    rows = [r for r in compare_four_gpu.compare(data, "H200 SXM 141GB") if r["mem_ratio"] is not None]
    mem_ok = sum(abs(r["mem_ratio"] - 1) <= 0.10 for r in rows)
    time_ok = sum(r["time_ratio"] is not None and 0.8 <= r["time_ratio"] <= 1.25 for r in rows)
    import re as _re

    summary = (FOUR_GPU_DIR / "summary.txt").read_text()
    links = {name: (gbs, ratio) for name, gbs, ratio in
             _re.findall(r"interconnect\.(\S+)\s+([\d.]+) GB/s\s+ref\s+[\d.]+ x([\d.]+)", summary)}
    p2p, ar = links.get("p2p_0_1", ("-", "-")), links.get("allreduce_busbw_1g", ("-", "-"))
    return ["## Four GPUs (4x H200, 2026-11-27)", "",
            f"P2P {p2p[0]} GB/s ({p2p[1]}x torch), all-reduce {ar[0]} GB/s at 1 GiB ({ar[1]}x torch.distributed); "
            f"memory per GPU within 10 % on {mem_ok} of {len(rows)} cases, step 0.8-1.25x on {time_ok} (TP profiled "
            "on 2x H200: `lab/data/two-gpu-h200x2-2026-11-27/`): [docs/four-gpu.md](docs/four-gpu.md).", ""]


def vidur_line() -> str:
    """One line on the op pricer's GEMMs against microsoft/vidur's measured linear layers (docs/gemm-waves.md)."""
    from bench import vidur_gemm

    groups = vidur_gemm.by_group(vidur_gemm.evaluate())
    shares = [s["in_band"] for (_, regime, split), s in groups.items() if regime == "prefill" and split == "all"]
    ours = [x for *_, x in vidur_gemm.h100_sweep_ratios()]
    lo, hi = vidur_gemm.IN_BAND
    run = json.loads(vidur_gemm.H100_SWEEP.read_text())["env"]
    return (f"GEMMs vidur timed (A100, A40, H100): {min(shares):.0%}-{max(shares):.0%} within, 64+ tokens; our H100 "
            f"(driver {run['driver']}, {run['date'][:10]}): {sum(lo <= x <= hi for x in ours)}/{len(ours)}: "
            "[docs/gemm-waves.md](docs/gemm-waves.md).")


def cross_card_summary() -> list[str]:
    """BENCHMARKS.md's lines on the cross-card published set: per card family; every row on its own page."""
    from bench import cross_card

    rows = cross_card.evaluate()
    s = cross_card.splits(rows)["all"]
    out = ["## Across cards: published results nobody here fitted (2026-11-27)", "",
           f"{s['n']} published results on {len(cross_card.per_card(rows))} cards besides the H100/H200 "
           "(timm, Lambda, llm-foundry, TensorRT-LLM, GPUStack, "
           "NVIDIA's ResNet-50): "
           f"{s['in_band']:.0%} within 0.8x-1.25x (target 85 %), geometric mean {s['geomean']:.2f}x "
           "(tool/published), rows in [docs/cross-card.md](docs/cross-card.md).", "",
           "| family | rows | within 0.8x-1.25x | within 0.67x-1.5x | geometric mean | worst |",
           "|---|---:|---:|---:|---:|---:|"]
    for fam, f in cross_card.per_family(rows).items():
        out.append(f"| {fam} | {f['n']} | {f['in_band']:.0%} | {f['in_outer']:.0%} | {f['geomean']:.2f} | "
                   f"{f['worst']:.2f} |")
    from bench import tf32

    return [*out, "", vidur_line(), "", reach_line(), "", tf32.line(), ""]


def reach_line() -> str:
    """One line on the published matmul and copy-bandwidth reach each card's rates take (docs/card-reach.md), and
    how our own probes' copy compares with the published one on the cards both measured."""
    import yaml

    matmul = yaml.safe_load((ROOT / "catalog" / "matmul-reach.yaml").read_text())["cards"]
    copy = yaml.safe_load((ROOT / "catalog" / "bandwidth-reach.yaml").read_text())["cards"]
    ours = []
    for name, path in (("H100 SXM5 80GB", H100_PROBE), ("H200 SXM 141GB", H200_PROBE)):
        values = [m.value for d in load(path).devices if (m := d.measurement("memory.copy")) and m.value]
        ours.append(max(abs(v / copy[name]["copy_gbs"] - 1) for v in values))
    def share(name: str) -> str:
        return f"{copy[name]['copy_gbs'] / copy[name]['datasheet_gbs']:.2f}"

    return (f"Reach: MI300X matmuls {matmul['Instinct MI300X']['reach']:.2f} of peak (AMD); copy A100 "
            f"{share('A100 SXM4 80GB')}, H200 {share('H200 SXM 141GB')}, H100 {share('H100 SXM5 80GB')} (Azure; our "
            f"probes within {max(ours):.0%}): [docs/card-reach.md](docs/card-reach.md).")


def nchw_summary() -> list[str]:
    """BENCHMARKS.md's lines on NCHW against channels-last on an H200 and few-channel convolutions and pools on an
    H100; the tables on their own page."""
    from bench import nchw, pools, stems

    steps = nchw.whole_steps()
    rel = [steps[i][0]["time_s"] / steps[i + 1][0]["time_s"] for i in range(0, len(steps), 2)]
    tool = [r for s, r in steps if s["layout"] == "NCHW"]
    ratio = nchw.capped_steps()[0][1]
    stem = [x for d in ("fp16", "bf16") for x in stems.forward_ratios(stems.wide_stems(d))]
    held = pools.ratios("forward", held=True) + pools.ratios("backward", held=True)
    from bench import dilated, nchw_transposes, transposed, upsample

    moved = [x for _, x in nchw_transposes.ratios(held=True)]
    inside = lambda xs: sum(0.8 <= x <= 1.25 for x in xs)  # noqa: E731
    tconv = [x for _, x in transposed.kernel_ratios("forward")]
    ups = [x for phase in upsample.PHASES for x in upsample.ratios(phase, held=True)]
    dil = [x for *_, x in dilated.priced_ratios()]
    return ["## NCHW, few channels, upsampling (2026-12-05 to 07)", "",
            f"Driver 580.159.04. H200: 6 timm steps NCHW {min(rel):.2f}-{max(rel):.2f}x "
            f"NHWC; tool {min(tool):.2f}-{max(tool):.2f}x (cap {ratio:.2f}x). H100: ResNet "
            f"stem tool {min(stem):.2f}-{max(stem):.2f}x; held out: pools {min(held):.2f}-{max(held):.2f}x, "
            f"NCHW transposes {inside(moved)}/{len(moved)}, upsampling {inside(ups)}/{len(ups)} within; -07 transposed "
            f"convs {inside(tconv)}/{len(tconv)}, dilated {min(dil):.2f}-{max(dil):.2f}x. [docs/nchw.md](docs/nchw.md)",
            ""]


@cache
def _probed() -> dict[tuple[str, str, int], float]:
    """bench.unseen.probed_ratios, computed once for the summary, the page's text and its table."""
    from bench import unseen

    return unseen.probed_ratios()


def _step_host_line() -> str:
    """lab/train_step_host.py's parts of a training step, in units of the host's dispatch probe."""
    from bench.models import train_step_host

    f = train_step_host()
    return ("A training step's own host work, timed part by part (`lab/train_step_host.py`, "
            "`lab/data/h100-train-step-host-2026-12-05/`: a stack of N Linear layers, N = 1-512, twice on an H100), in "
            f"units of the host's probe: the forward under autocast {f['forward'][1]:.1f} a layer, its backward "
            f"{f['backward'][1]:.1f}, fused AdamW's step {f['optimizer'][0]:.0f} + {f['optimizer'][1]:.2f} a "
            f"parameter tensor, zero_grad {f['zero_grad'][0]:.0f} + {f['zero_grad'][1]:.2f}; the forward's and "
            f"backward's intercepts, {f['forward'][0]:.0f} + {f['backward'][0]:.0f}, are the op model's "
            "HOST_STEP_FIXED. Its optimizer is read off whole models instead (`lab/phase_overlap.py`'s optimizer "
            "phase, 17 + 0.87 a tensor over 78-364 tensors: HOST_OPTIMIZER_STEP and HOST_OPTIMIZER_PER_TENSOR), "
            "where HOST_TRAINING_STEP, 120 fitted on whole steps, stood until 2026-12-08.")


def probed_line(recurrent: bool = True) -> str:
    """The recurrent (or the vision) cases priced for each run's own host: how many within 0.8x-1.25x, and the
    worst."""
    from bench.unseen import family

    ratios = [x for (spec, _, _), x in _probed().items() if (family(spec) == "recurrent") == recurrent]
    return (f"{sum(0.8 <= x <= 1.25 for x in ratios)} of {len(ratios)} within 0.8x-1.25x, worst "
            f"{max(max(ratios), 1 / min(ratios)):.2f}x")


def unseen_summary() -> list[str]:
    """BENCHMARKS.md's lines on the out-of-sample H100 models; the table on its own page."""
    from bench import recurrent, unseen

    rs = unseen.evaluate()
    env = json.loads(unseen.MEASURED.read_text())["env"]
    runs = [len(r.case["runs"]) for r in rs if r.case.get("runs")]
    # the measured models whose estimates were committed before their runs: lab/data/*/predicted.json
    measured = {r.case["spec"] for r in rs}
    predicted = {row["spec"] for path in (ROOT / "lab" / "data").glob("*/predicted.json")
                 for row in json.loads(path.read_text())["rows"]} & measured
    dates = sorted({run["date"] for r in rs for run in r.case.get("runs", [])} | {env["date"][:10]})
    out = [f"## Models nobody here measured before (H100, {dates[0]} to {dates[-1]})", "",
           f"{env['device']}, driver {env['driver']}, PyTorch {env['torch']}, `lab/measure_models.py --unseen`, read "
           f"by no fit; median of {min(runs)}-{max(runs)} runs, {len(predicted)} models estimated before they ran:",
           ""]
    for family, test in (("recurrent (LSTM, GRU, 1-3 layers)", lambda c: unseen.family(c) == "recurrent"),
                         ("other models and layouts",
                          lambda c: unseen.family(c) != "recurrent")):
        sub = [r for r in rs if test(r.case["spec"])]
        inside = sum(0.8 <= r.time_ratio <= 1.25 for r in sub)
        mem = sum(abs(r.memory_ratio - 1) <= 0.10 for r in sub)
        probed = " (each run's host: " + probed_line("recurrent" in family).replace(" within 0.8x-1.25x", "") + ")"
        out.append(f"* {family}: time in 0.8x-1.25x on {inside} of {len(sub)}, memory within 10 % on "
                   f"{mem}; time {min(r.time_ratio for r in sub):.2f}-{max(r.time_ratio for r in sub):.2f}x{probed}")
    steps, bias = recurrent.persist_kernel_ratios()
    backward = [x for _, x in recurrent.backward_workspace_ratios()]
    directions = recurrent.call_ratios(recurrent.CALLS_H100_DIRECTIONS)

    def within(phase: str) -> int:
        return sum(0.8 <= r["ratio"] <= 1.25 for r in directions if r["phase"] == phase)

    return [*out, "", "RNN sweeps (driver 580.159.04; H200 calls 2026-12-05; H100 memory, kernels -06, directions "
            f"-07), in 0.8x-1.25x: kernel steps {sum(0.8 <= x <= 1.25 for x in steps)}/{len(steps)}, 1-2 directions "
            f"{within('training')}/{len(directions) // 2} training, {within('inference')}/{len(directions) // 2} "
            f"inference; within 10 %: bias gradient {sum(0.9 <= x <= 1.1 for x in bias)}/"
            f"{len(bias)}, backward workspace {sum(0.9 <= x <= 1.1 for x in backward)}/{len(backward)}: "
            "[docs/unseen-models.md](docs/unseen-models.md).", "",
            host_kinds_line(), ""]


def host_kinds_line() -> str:
    """The host's issue time per op kind (bench.host_kinds), against the fit's view ratio."""
    from bench import host_kinds
    from gpuadvisor.estimate import calibration as cal
    from tools.bench_models import phase_overlap_line

    r = host_kinds.inference_ratios()
    span = lambda *kinds: f"{min(r[k] for k in kinds):.1f}-{max(r[k] for k in kinds):.1f}x"  # noqa: E731
    return (f"Host time per eager op (H100 2026-12-06, x an add): view "
            f"{host_kinds.view_ratio():.2f}x (fit {cal.HOST_VIEW_OPS / cal.HOST_FWD_OPS_INFERENCE:.2f}x), GEMM "
            f"{span('linear', 'bmm')}, conv {span('conv3x3', 'conv1x1', 'conv_depthwise', 'conv3d', 'conv_transpose')}"
            ", "
            f"BN {r['batch_norm']:.1f}x. {phase_overlap_line()}")


def four_gpu() -> list[str]:
    """The 4x H200 node: probe figures (summary.txt) and the ground truth against the estimate, before (main at
    a00895f, whose comparison counted the CUDA context and fragmentation) and now."""
    import re as _re

    from tools import compare_four_gpu

    data = json.loads((FOUR_GPU_DIR / "four_gpu.json").read_text())
    env = data["env"]
    summary = (FOUR_GPU_DIR / "summary.txt").read_text()
    steps = dict(_re.findall(r"^(probe-full|fleet-local|check|report)\s+0\s+(\d+)", summary, _re.M))
    links = {name: f"{gbs} GB/s ({ratio})" for name, gbs, ratio in
             _re.findall(r"interconnect\.(\S+)\s+([\d.]+) GB/s\s+ref\s+[\d.]+ (x[\d.]+)", summary)}
    out = ["## Four GPUs (4x H200, 2026-11-27)", "",
           f"One node of 4x {env['device_name']} (NVLink 4 x18 through NVSwitch), driver {env['driver']}, PyTorch "
           f"{env['torch']} ({_rel(FOUR_GPU_DIR)}). Wall times: `probe --full` {steps.get('probe-full', '-')} s, "
           f"fleet local {steps.get('fleet-local', '-')} s, `check` {steps.get('check', '-')} s, `report` "
           f"{steps.get('report', '-')} s. Collectives (bus bandwidth; ratio to torch.distributed, P2P to a torch "
           "copy):", "",
           "| figure | 4 GPUs | 2 GPUs |", "|---|---:|---:|",
           f"| P2P GPU0 to GPU1 | {links.get('p2p_0_1', '-')} | - |"]
    for op in ("allreduce", "allgather", "reducescatter"):
        for size in ("1g", "4g"):
            key = f"{op}_busbw_{size}"
            out.append(f"| {op} {size[0]} GiB | {links.get(key, '-')} | {links.get(key + '_2gpus', '-')} |")
    out += ["", "Training and decode ground truth (`python3 -m lab.validate_four_gpu`; `python3 -m "
            "tools.compare_four_gpu`): per-GPU peak `torch.cuda.max_memory_allocated` and step time against the "
            "estimate. Before: main at a00895f, estimate including the CUDA context and fragmentation. After: the "
            "estimate's tensors, with FSDP2 modelled phase by phase (the root's embedding and head kept gathered "
            "from forward to backward, the root's reduce-scatter at the end of backward, ZeRO-2 as "
            "reshard_after_forward=False holding every block's bf16 params, a frozen LoRA base sharded) and the "
            "eager 2-D mesh's FSDP2 (fp32 masters, gradients set to none between steps). Every third case is "
            "held out. Decode: the lab's decoder keeps the whole embedding on every rank (serving engines split "
            "it by vocabulary), about 1 GiB the estimate does not count.", "",
            "| case | held out | memory before | memory after | measured GiB | estimated GiB | step ratio |",
            "|---|---|---:|---:|---:|---:|---:|"]
    before = {r["case"]: r for r in json.loads(FOUR_GPU_BEFORE.read_text())}
    for r in compare_four_gpu.compare(data, "H200 SXM 141GB"):
        b = before.get(r["case"], {})
        out.append(f"| {r['case']} | {'yes' if r['held_out'] else 'no'} | {_f(b.get('mem_ratio'), 2)}x | "
                   f"{_f(r['mem_ratio'], 2)}x | {_f(r['meas_gib'], 2)} | {_f(r['est_gib'], 2)} | "
                   f"{_f(r['time_ratio'], 2)}x |")
    repeat = json.loads((FOUR_GPU_DIR / "run4-repeat.json").read_text())
    first = {c["case"]: c for c in data["cases"]}
    again = [f"{c['case']} {first[c['case']]['step_ms']:.0f} -> {c['step_ms']:.0f} ms" for c in repeat["cases"]
             if c.get("step_ms") and first.get(c["case"], {}).get("step_ms")]
    out += ["", f"Repeat on another 4x H200 machine the same day ({_rel(FOUR_GPU_DIR / 'run4-repeat.json')}), "
            f"slowest-rank median step: {'; '.join(again)}."]
    return [*out, ""]


def _f(v: float | None, d: int) -> str:
    return "-" if v is None else f"{v:,.{d}f}"


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{v:+.1f} %"


TRACE_BEFORE = ROOT / "lab" / "data" / "h100-trace-times-2026-11-27" / "trace_times.json"
TRACE_AFTER = ROOT / "lab" / "data" / "h200-trace-times-2026-12-04" / "trace_times.json"
TRACE_DEV = ROOT / "lab" / "data" / "dev2core-trace-times-2026-12-04" / "trace_times.json"
PROBE_PAGE = ROOT / "docs" / "probe-speed.md"


def trace_times() -> list[str]:
    """Tracing a model that is not shipped: before and now on a GPU host's two cores, and now on an EPYC VM's two."""
    before = {(t["model"], t["mode"]): t for t in json.loads(TRACE_BEFORE.read_text())["traces"]}
    after, dev = (json.loads(p.read_text()) for p in (TRACE_AFTER, TRACE_DEV))
    dev_cold = {(t["model"], t["mode"]): t["cold_s"] for t in dev["traces"]}
    target = after["env"]["targets_s"]

    def met(run: dict) -> int:
        return sum(t["rc"] == 0 and t["cold_s"] < target[t["mode"]] and t["cached_s"] < target["cached"]
                   for t in run["traces"])

    rows = ["| model | mode | host cold | VM | cached |", "|---|---|---:|---:|---:|"]
    for t in after["traces"]:
        b, key = before.get((t["model"], t["mode"]), {}), (t["model"], t["mode"])
        rows.append(f"| {t['model'].removeprefix('torchvision:')} | {t['mode'][:5]} | {b.get('cold_s', 0):.1f} -> "
                    f"{t['cold_s']:.1f} | {dev_cold.get(key, 0):.1f} | {b.get('cached_s', 0):.1f} -> "
                    f"{t['cached_s']:.2f} |")
    return ["## Tracing a model that is not shipped", "",
            f"`estimate MODEL` (torchvision unless timm), fresh process, `taskset -c 0,1`, seconds: a GPU host's Xeon "
            f"(PyTorch {after['env']['torch']}) 2026-11-27 -> 2026-12-04; an EPYC VM (PyTorch "
            f"{dev['env']['torch']}); `lab/trace_times.py`. Targets (training {target['training']:.0f} s, "
            f"inference {target['inference']:.0f} s, cached {target['cached']:.0f} s, no PyTorch) met: host "
            f"{met(after)}, VM {met(dev)} of {len(after['traces'])}.", "", *rows, ""]


def advisor() -> list[str]:
    snap = load_prices(shipped_path())  # the shipped snapshot, never a user's updated copy
    per = Counter(o.provider for o in snap.offers)
    cold = json.loads(COLD_START.read_text())
    t = sorted(cold["seconds"])
    traced = cold["traced"]  # a shipped pre-traced model, answered without PyTorch
    tt = sorted(traced["seconds"])
    return ["## Advisor", "",
            f"Shipped rental prices: {len(snap.offers)} offers from {len(per)} providers (coverage per provider: "
            f"docs/prices.md); source: {snap.describe()}.", "",
            f"Start-up of `{cold['command']}` (whole process, {len(t)} runs, {cold['date']}, "
            f"{cold['machine'].split(',')[0]}): "
            f"median {t[len(t) // 2]:.2f} s ({_rel(COLD_START)}). "
            f"`{traced['command'].removeprefix('gpuadvisor ')}`, empty cache, no PyTorch: median "
            f"{tt[len(tt) // 2]:.2f} s.", ""]


def _summary(section: str, title: str, page: Path, tables: int = 0) -> list[str]:
    """A generated accuracy section cut before its per-result table (after `tables` summary tables); the
    whole section goes to its own page."""
    lines = section.splitlines()
    starts = [i for i, line in enumerate(lines)
              if line.startswith("|") and (i == 0 or not lines[i - 1].startswith("|"))]
    cut = starts[tables] if len(starts) > tables else len(lines)
    body = [line for line in lines[:cut] if not line.startswith("## ")]
    return [f"## {title}", "", *body, "", f"Every result and its source: {_rel(page)}.", ""]


@cache
def _gpu_checks() -> list:
    """The serving GPU checks, run once for both the summary line and the serving page's table."""
    from bench import serve_gpu_check

    return serve_gpu_check.checks()


def serving() -> list[str]:
    from bench import serve_gpu_check
    from bench.serving import markdown_section

    speed = json.loads(SERVING_SPEED.read_text())
    checks = _gpu_checks()
    e2e = [c.ratio for c in checks if c.what != "prefill GPU"]
    gpu = [c.ratio for c in checks if c.what == "prefill GPU"]
    return [*_summary(markdown_section(), "Serving against published engine results", SERVING_PAGE),
            f"H100 check ({_rel(serve_gpu_check.DATA)}; table on the same page): generate() TTFT/TPOT vs `--engine hf` "
            f"{min(e2e):.2f}-{max(e2e):.2f}x; prefill step cost vs eager PyTorch kernels "
            f"{min(gpu):.2f}-{max(gpu):.2f}x.", "", _gpt_oss_line() + " " + _deepseek_line(), "",
            f"Simulation speed ({speed['date']}, 2 cores, {_rel(SERVING_SPEED)}): 1,000 8B requests in "
            f"{min(r['seconds'] for r in speed['runs']):.2f}-{max(r['seconds'] for r in speed['runs']):.2f} s.", ""]


def _gpt_oss_line() -> str:
    """The published gpt-oss runs (MXFP4 experts, sliding windows): the held-out throughputs' shares."""
    from bench import serving as P

    ratios = list(P.gpt_oss_throughput_ratios(held_out=True).values())
    return (f"Held out: gpt-oss tok/s "
            f"{sum(0.8 <= x <= 1.25 for x in ratios)}/{len(ratios)} in 0.8x-1.25x, "
            f"{sum(0.67 <= x <= 1.5 for x in ratios)}/{len(ratios)} in 0.67x-1.5x;")


def _deepseek_line() -> str:
    """The published DeepSeek-R1 runs (latent attention, shared experts): output throughput and TPOT."""
    from bench import serving as P

    ratios = P.deepseek_ratios()
    tps = [r for (_e, _c, m), r in ratios.items() if m == "output_tps"]
    tpot = [r for (_e, _c, m), r in ratios.items() if m == "tpot_ms"]
    llama4 = list(P.llama4_ratios().values())
    return (f"DeepSeek-R1 (8 GPUs): tok/s "
            f"{sum(0.8 <= x <= 1.25 for x in tps)}/{len(tps)}, {sum(0.67 <= x <= 1.5 for x in tps)}/{len(tps)}; "
            f"TPOT {sum(0.8 <= x <= 1.25 for x in tpot)}/{len(tpot)} in 0.8x-1.25x; Llama 4 tok/s "
            f"{sum(0.8 <= x <= 1.25 for x in llama4)}/{len(llama4)}, {sum(0.67 <= x <= 1.5 for x in llama4)}/"
            f"{len(llama4)}.")


def training() -> list[str]:
    from bench.training import markdown_section

    return _summary(markdown_section(), "Training at scale against published results", TRAINING_PAGE, tables=1)


def page() -> str:
    head = ["# Benchmarks", "",
            "What gpuadvisor measures and how far its estimates are from it, by `python3 -m tools.bench_page` "
            "from the result files each section names; older runs: `lab/history/`.", ""]
    parts = [head, probes(), node(), ["Probe speed and repeatability: "
                                      f"{_rel(PROBE_PAGE)}.", ""], bench_models.section(per_case=False).splitlines(),
             [""], unseen_summary(), cross_card_summary(), nchw_summary(), llm_time(), llm_memory(), serving(),
             training(), multigpu(),
             four_gpu_summary(), trace_times(), advisor()]
    text = "\n".join(line for part in parts for line in part)
    return re.sub(r"\n{3,}", "\n\n", text).rstrip() + "\n"


def cases_page() -> str:
    return ("# Op-graph estimator: every measured case\n\nWritten by `python3 -m tools.bench_page` (summary in "
            "BENCHMARKS.md). Ratio = estimate / measurement, NVIDIA H100 80GB HBM3.\n\n"
            + bench_models.cases_table().rstrip() + "\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    ap.add_argument("--check", action="store_true", help="exit 1 if a file differs from what would be written")
    args = ap.parse_args(argv)
    stale = []
    from bench import serve_gpu_check
    from bench.serving import markdown_section
    from bench.training import markdown_section as training_section

    def serving_section() -> str:
        from bench.serving import deepseek_markdown, gpt_oss_markdown, llama4_markdown

        return (markdown_section().rstrip() + "\n\n## GPU check: Hugging Face generate() and prefill kernels\n\n"
                + serve_gpu_check.markdown(found=_gpu_checks())
                + "\n## gpt-oss: MXFP4 experts, sliding windows (`tests/data/published-gpt-oss.json`)\n\n"
                "Kept out of the tables above; why the fit is on the runs it is on: docs/serving.md \"gpt-oss\".\n\n"
                + gpt_oss_markdown()
                + "\n## DeepSeek-R1: latent attention, shared experts, dense first layers "
                "(`tests/data/published-deepseek.json`)\n\nDeepSeek-R1 on 8x H200 in FP8 (GPUStack's runs, TP8) and "
                "TensorRT-LLM's max-throughput runs on 8x H200 and 8x B200 (data-parallel attention); nothing fitted "
                "on them; what the outliers are: docs/serving.md \"DeepSeek\".\n\n" + deepseek_markdown()
                + "\n## Llama 4: shared expert, dense layers, chunked attention "
                "(`tests/data/published-llama4.json`)\n\n"
                "TensorRT-LLM's performance overview (v1.0 data, maximum throughput, trtllm-bench); nothing fitted on "
                "them; docs/serving.md \"DeepSeek\" (its last paragraph) says what is read as what.\n\n"
                + llama4_markdown())

    four = ("# Four GPUs (4x H200, 2026-11-27)\n\nWritten by `python3 -m tools.bench_page` (summary in "
            "BENCHMARKS.md).\n\n" + "\n".join(four_gpu()[2:]).rstrip() + "\n")
    from bench import cross_card, recurrent, unseen

    unseen_page = ("# Models nobody here measured before (H100)\n\nWritten by `python3 -m tools.bench_page` (summary "
                   "in BENCHMARKS.md). Ratio = estimate / measurement; measured by `lab/measure_models.py --unseen`, "
                   "graphs traced on the GPU machine (`lab/trace_unseen.py`; the recurrent ones, plain PyTorch, "
                   "traced again on 2026-12-05 with `--only lab/models/` after the tracer counted cuDNN's measured "
                   "reserve space and autocast's copies in training). The recurrent cases' times are the median of "
                   "their runs (`tools/merge_unseen_runs.py`; the first models' seven: 2026-11-27, 10 steps; "
                   "2026-12-05, five of 100 steps, `lab/data/h100-rnn-unseen-2026-12-05/`; 2026-12-06, one of 50 "
                   "steps beside every other recurrent case, `lab/data/h100-rnn-probe-2026-12-06/`; each run with "
                   "the host speed its dispatch probe saw): "
                   "their steps are the host's time to issue them, which moved up to 25 % from one run to the next "
                   "(`lstm_small` inference at batch 1,024: 0.89-1.60 ms). Two models were added on 2026-12-05 "
                   "after the pricer learned which training calls cuDNN runs as one persistent kernel: a one-layer "
                   "LSTM tagger (`lab/models/lstm_tagger.py`) and a two-layer GRU keyword spotter of hidden 128 "
                   "(`lab/models/gru_keyword.py`), their estimates committed before they ran "
                   "(`lab/data/h100-rnn-new-2026-12-05/predicted.json`), then three runs of 100 steps each. The "
                   "tagger came out within 0.96x-1.24x; the keyword spotter's inference 0.70x on a host whose dispatch "
                   "probe read 13-15 us an op against the calibration host's 10 (its 200 launched steps are host "
                   "time), its training 1.09x-1.30x, and its training peak memory 0.62x-0.71x. Two fixes since, both "
                   "from call-level measurements on an H200 (2026-12-05) and neither fitted on these models: the "
                   "recurrent sweep had counted its training harness (autocast, the loss, autograd's engine: "
                   "0.44-0.65 ms, now timed alone) as the backward call's set-up, which a model's graph prices again "
                   "(RNN_BACKWARD_CALL_S 0.98 -> 0.5 ms; the training cases above moved by 0.89x-0.99x); and every "
                   "training call whose forward runs as one persistent kernel holds about 15 rows of batch x hidden "
                   "per step more than its inference workspace, whatever its layers and directions (the memory grid "
                   "below), where only a one-layer LSTM's had been counted: the keyword spotter's training memory "
                   "0.95x and 0.97x. Its inference is host-bound: on that H200's host (dispatch probe 7.0-8.8 us an "
                   "op) the same model's inference took 3.4 and 4.7 ms a step at batch 128 and 512, on the H100 runs' "
                   "hosts (13-15 us) 7.3 ms, against the 5.2 ms estimated for the calibration host "
                   "(`lab/rnn_incontext.py`, `lab/data/h200-rnn-calls-2026-12-05/rnn_incontext.json`). Two more "
                   "models were written after those fixes and estimated before they ran "
                   "(`lab/data/h100-rnn-new2-2026-12-05/predicted.json`; three H100 runs of 100 steps each): a "
                   "two-layer bidirectional LSTM tagger of hidden 96 (`lab/models/bilstm_ner.py`) came out at "
                   "0.63x-0.78x in time on hosts probing at 13-15 us an op, its memory 0.86x-0.90x (a small hidden "
                   "size's inference workspace, short of the count as on the grid's hidden-64 calls); a bidirectional "
                   "GRU of hidden 192 (`lab/models/gru_speech.py`), trained persistent forward and launched backward, "
                   "0.85x-1.28x in time and 0.96x-1.08x in memory. After those runs, the inference workspace was "
                   "refitted on both call grids with a floor per layer and direction (RNN_WORKSPACE_FLOOR_BYTES, "
                   "about 9 MB: the grid's hidden-64 calls held 1.5-2.5x what was counted), which the tagger's "
                   "shortfall had pointed to, so its memory 0.86x-0.90x -> 0.98x-1.01x is not out of sample; the "
                   "bidirectional GRU's training at batch 64 went 1.08x -> 1.11x. Two more models were written after "
                   "that floor and estimated before they ran (`lab/data/h100-rnn-new3-2026-12-05/predicted.json`; "
                   "three H100 runs of 100 steps each): a three-layer GRU character LM of hidden 128 "
                   "(`lab/models/char_gru.py`) and a two-layer bidirectional LSTM of hidden 32 over sensor windows "
                   "(`lab/models/lstm_sensor.py`). Memory 7 of 8 within 10 % (0.96x-1.12x; the estimator before "
                   "the floor gives 4 of 8, the sensor LSTM 0.74x-0.87x); time 6 of 8 within 0.8x-1.25x, the "
                   "character LM's training at batch 64 1.54x (host-bound: 4.3 ms measured against 6.6 ms "
                   "estimated, most of it its three layers' set-up). The steps are host-bound, so the "
                   "table also prices "
                   "each run for the host it ran on (its dispatch probe, as `--probe` gives it: "
                   "`bench.unseen.probed_ratios`), the median over the runs: recurrent "
                   + probed_line() + "; the others " + probed_line(False)
                   + ". The vision cases had one run of 10 steps "
                   "(2026-11-27) whose steps spread up to 178 %; three more runs of 50 steps "
                   "(`lab/data/h100-vision-unseen-2026-12-05/`, 2026-12-05) moved them by as much from one run to "
                   "the next (efficientnet_v2_s's training at batch 128: 78-112 ms), and each case is now the median "
                   "of the four: 10 of 14 within 0.8x-1.25x on the calibration host, was 8. Pooling kernels were "
                   "then priced by their work (an H100's pooling calls, `bench/pools.py`, docs/nchw.md), never "
                   "fitted on these models: Inception-v3's inference at batch 128, whose nine average pools take "
                   "6.2 ms of its 18.9 ms, went 0.66x -> 0.96x (0.91x once the convolutions were refitted with "
                   "their bias adds traced), 11 of 14. GoogLeNet and Inception-v4 were added "
                   "after that, their estimates committed before any run "
                   "(`lab/data/h100-pools-new-2026-12-05/predicted.json`, the estimator before the convolutions' "
                   "refit), then three H100 runs of 50 steps each: recorded beforehand GoogLeNet 1.85x and 1.14x "
                   "(batch 32 and 128), Inception-v4 1.23x (training) and 1.05x; the estimator of today 1.85x, "
                   "1.13x, 1.20x and 0.98x. GoogLeNet at batch 32 is host time on a host whose dispatch probe read "
                   "6 us an op, against the calibration host's 10: 1.09x priced for it. Their pools' shapes, timed "
                   "alone in the same call, are in docs/nchw.md. On 2026-12-06 cuDNN's training kernels were "
                   "profiled (`lab/data/h100-rnn-persist-kernels-2026-12-06/`, below): a launched training step "
                   "became the host's issuing, one floor each way, the small-hidden persistent step its own floor, "
                   "and the backward's bias gradient walks every row of every step (recurrent with each run's host "
                   "45 -> 48 of 52, on the calibration host 34 -> 32). Two models were written after that and "
                   "estimated before they ran (`lab/data/h100-rnn-kernels-new-2026-12-06/predicted.json`, three "
                   "H100 runs of 50 steps): an LSTM autoencoder of two small-hidden layers at batch 512 and 2,048 "
                   "(`lab/models/lstm_autoencoder.py`) and a two-layer GRU language model of hidden 384 "
                   "(`lab/models/gru_lm.py`): with each run's host 8 of 8 within 0.8x-1.25x (0.83x-1.16x), on the "
                   "calibration host 3 of 8 (the estimator before the profile: 3 of 8), memory 6 of 8 within 10 % "
                   "(the autoencoder's training 0.88x-0.90x); 8 of 8 since an RNN backward holds its forward's "
                   "training workspace again, measured call by call after those runs (`lab/rnn_backward_memory.py`, "
                   "below). One more run of every recurrent case followed (`lab/rnn_host_runs.py`, a host probing "
                   "9-16 us an op), with a cuDNN host probe beside each case (a launched GRU call's host time a "
                   "step): priced with it, 45 of the run's 60 cases were within 0.8x-1.25x, with the dispatch probe "
                   "48, so the dispatch probe stays what `--probe` scales an RNN's host time by. Fourteen more "
                   "models were added on 2026-12-06, none recurrent, with op classes and architectures no measured "
                   "case had, their estimates committed before they ran (`lab/data/h100-unseen-broad-2026-12-06/`, "
                   "two passes of 20 steps in opposite orders): three files written as a user would (PyTorch's own "
                   "TransformerEncoder, a DCGAN generator's transposed convolutions, a DLRM's embedding bags), "
                   "R3D-18, DeepLabV3, MLP-Mixer, ConvMixer, MaxViT, LeViT, RepVGG, NFNet-F0, BEiT and Hugging "
                   "Face's RoBERTa and ViT. As recorded, 19 of 36 within 0.8x-1.25x. Two were the trace's: BEiT's "
                   "learned position bias, a mask that needs its gradient, had been sent to SDPA's math path (3.05x; "
                   "the H100 ran the memory-efficient kernel, which takes it when attention dropout is off: 1.47x) "
                   "and a transposed convolution was counted as a plain one over its output's pixels with its "
                   "channels swapped, 8x the MACs of DCGAN's (1.99x-2.44x; now the convolution whose data gradient "
                   "it is: 0.60x-0.96x, the strided dgrad kernels slower than a forward's rate; since 2026-12-07 "
                   "priced as cuDNN runs it, its forward as that convolution's dgrad at the reach of its output "
                   "channels' tile, measured layer by layer (`bench/transposed.py`, docs/nchw.md): inference at batch "
                   "1,024 0.57x -> 0.88x, the other three cases 0.74x-1.07x). DeepLabV3's bilinear upsampling, "
                   "priced by its bytes until 2026-12-07, took 4 ms of its 50 ms training step (its pooling "
                   "branch's 1x1 -> 65x65 backward 2.2 ms: atomic adds into one source); priced since by its work "
                   "(docs/nchw.md): training 0.78x -> 0.82x, inference 0.89x -> 0.92x; with its ASPP head's "
                   "dilation 12-36 priced at the sm80 kernels cuDNN falls back to on an H100 (1.5x, timed the same "
                   "day, docs/nchw.md) 0.87x and 0.99x. Left: host time "
                   "overestimated where many small ops run inside few modules (LeViT's inference 1.90x, MaxViT "
                   "1.56x-1.65x, Hugging Face ViT's training 1.74x; a per-module-call term did not improve the "
                   "calibration split's fit, so it is not modelled; nor did weighing each traced op by its kind's "
                   "issue time, measured on an H100 host after these runs (`lab/host_op_kinds.py`, "
                   "`lab/data/h100-host-op-kinds-2026-12-06/`, each kind against an add timed in the same round: a "
                   "GEMM 1.8x-2.2x, a convolution 1.7x-2.0x, attention 2.6x, a batch norm 3.3x, a view 0.16x): "
                   "with the host constants refitted on those weights the calibration split's step error went "
                   "8.0 % -> 8.5 %, the held-out's 11.0 % -> 13.2 % and these models 34 -> 28 of 54, so in a model "
                   "the Python around each op outweighs its own dispatch; the view's 0.16x checks the fitted "
                   "HOST_VIEW_OPS / HOST_FWD_OPS_INFERENCE, 0.17x, `tests/test_host_kinds.py`), and the DLRM "
                   "(inference 1.9x: host; training "
                   "0.50x-0.58x: its embedding-bag backward sorts the ids and waits on the GPU). "
                   "Once the H100's NCHW convolutions were profiled and priced (docs/nchw.md: cuDNN transposes every "
                   "16-bit NCHW convolution wider than 1x1 around its NHWC kernels), R3D-18 (NCHW) went 0.78x-0.80x -> "
                   "0.87x-0.88x, and five CNNs in NCHW, as users run them by default, were estimated before they ran "
                   "(`lab/data/h100-nchw-unseen-2026-12-06/`, two passes of 20 steps; torchvision's ResNet-50, "
                   "DenseNet-121, VGG-16 and R(2+1)D-18, timm's EfficientNet-B0; the first three are fitted models, "
                   "read by the fits channels-last only): 9 of 10 within 0.8x-1.25x, R(2+1)D-18's training 0.73x; "
                   "the estimator before the transposes, on the same graphs, 9 of 10 too but mean |log| 0.18 against "
                   "0.125 and worst 0.62x (VGG-16 0.80x-0.84x -> 0.92x-0.96x, R(2+1)D-18 0.62x/0.81x -> 0.73x/0.99x, "
                   "ResNet-50 0.83x-0.84x -> 0.81x-0.82x). ResNet-50's NCHW 1x1 convolutions on 14x14 and 7x7 maps "
                   "then ran 1.8x their channels-last time in a sweep of 1x1 convolutions (a map whose "
                   "pixels are not a multiple of 8 gets an older GEMM on misaligned rows, or transposes), priced "
                   "since (NCHW_1X1_UNALIGNED_SLOWDOWN): ResNet-50 0.81x-0.82x -> 0.83x-0.84x, the rest unchanged. "
                   "Four Hugging Face transformers models built from published configurations no fitted model has "
                   "were estimated before they ran (`lab/data/h100-hf-unseen-2026-12-06/`, two passes of 20 steps): "
                   "GPT-2 medium (0.93x, 1.18x), DistilBERT (1.14x, 1.22x) and BERT-large's inference (1.11x) within, "
                   "BERT-large's training 1.41x and a SmolLM-360M-shaped Llama 1.80x/1.82x: their steps are the "
                   "host's, priced at 35-55 us an op where SmolLM's issued 16-24 (its RMSNorm and rotary run many "
                   "small ops inside one module call each: the host model counts ops, not the Python around them); "
                   "memory 8 of 8 within 3 %. The calibration split's own GPU-bound language models show the same "
                   "host: Qwen2.5-0.5B's and Llama-3.2-1B's inference issued in 22 and 14 ms (`host_issue_s`) what "
                   "the host constants price at 40 and 27 ms, their steps right only because the GPU's time is the "
                   "longer; fitted on the issue times instead of the steps (2026-12-07, with and without a term per "
                   "module call), these models go 58 -> 59-63 of 79 within 0.8x-1.25x with each run's host, but the "
                   "held-out split's step error 11.4 % -> 12.5-16.7 %: not kept. "
                   "BERT-base SQuAD with its attention written out (`lab/models/bert_qa_eager.py`: transformers' eager "
                   "attention, the scores, softmax, dropout and weighted sum as separate ops, as NVIDIA's "
                   "DeepLearningExamples BERT writes them) was estimated before it ran "
                   "(`lab/data/h100-bert-eager-2026-12-07/`, one pass of 10 steps beside the SDPA model's cases "
                   "again): time 0.99x-1.05x and memory 1.00x-1.03x, where the SDPA model took 81.0 ms at batch 96 "
                   "and the written-out one 154.0 ms."
                   "\n\n" + unseen.table(unseen.evaluate(), _probed())
                   + "\n\n## cuDNN RNN calls\n\nOne `nn.LSTM`/`nn.GRU` call on an H200 (`lab/rnn_calls.py`, "
                   "`lab/data/h200-rnn-2026-11-27/`), priced by the recurrent formula whose per-call constants were "
                   "read off these calls (`bench/recurrent.py`). A training call of hidden 128 runs its steps inside "
                   "one persistent kernel each way (PyTorch's algorithm choice, `kernels.rnn_persist_algo`), "
                   "3-10x faster per step than an inference call, which launches every step. Every kernel of 240 "
                   "training calls, profiled on an H100 (`lab/rnn_persist_kernels.py`, "
                   "`lab/data/h100-rnn-persist-kernels-2026-12-06/`: LSTM and GRU, hidden 32-160, 1-3 layers, 1-2 "
                   "directions, batch 64-2,048, 128 steps), shows where the time goes: the small-hidden kernel's step "
                   "is 0.44 us and 12.3 ns a hidden unit (1.0 us at hidden 32, 1.7 at 128) whatever the batch up to "
                   "1,024 rows (`RNN_PERSIST_SMALL_STEP_S`, `_UNIT_S`), and what grows "
                   "with the batch is the backward's bias gradient (`*_elementWise_bp2`, one launch a layer and "
                   "direction, beside each other), which walks every row of every step at 9.3 ns (LSTM) or 24.1 ns "
                   "(GRU) whatever the hidden size (`RNN_BIAS_GRAD_ROW_S`, `RNN_GRU_BIAS_GRAD_ROW_S`): 1.2 ms of an "
                   "LSTM of hidden 64's 1.6 ms backward at batch 1,024. Until then the step was priced by the batch's "
                   "rows, 6 and 8 ns a row fitted on this sweep, which put the forward's cost in the wrong place "
                   "(67 of 80 training calls within 0.8x-1.25x, the three sweeps below 90 of 160, 56 of 80, 66 of "
                   "80; the small-hidden sweep 28 of 72). A launched training step is the host's issuing, one floor "
                   "each way, as an inference step is (those profiles show the host busy the whole call); three "
                   "floors on the GPU had priced it. Profiled in a model's step (`lab/rnn_step_profile.py`, "
                   "`lab/data/h100-rnn-step-profile-2026-12-06/`), the GRU review classifier's launched training "
                   "issues 867 kernels a step, 4.3 a time step, at about one dispatch-probe op each (12.4 us on a "
                   "host probing 12.7): its step took 14.9 ms there, 6.3 ms on a host probing 6 us. "
                   "The training calls are timed with their harness, which a second H200 sweep timed alone "
                   "(`lab/data/h200-rnn-calls-2026-12-05/`, a host whose calls ran 0.75x as long): the table's "
                   "training figures are the call less that harness. "
                   + recurrent.calls_table(recurrent.call_ratios()) + "\n\nWhat a training call's backward holds "
                   "while it runs (`lab/rnn_backward_memory.py`, `lab/data/h100-rnn-kernels-new-2026-12-06/"
                   "rnn_backward_memory.json`: LSTM and GRU, hidden 64-512, 1-2 layers and directions, batch 512 and "
                   "2,048, 64 steps, on an H100), beyond its gradients and its output's: the forward's training "
                   "workspace again (cuDNN sizes one workspace for both), which the trace counts in the backward "
                   "since: " + recurrent.backward_summary() + ".\n\nThe same sweep on an H100 "
                   "(`lab/data/h100-rnn-calls-2026-12-05/`: hidden 128, 256, 768 and 1,024, the host's dispatch probe "
                   "at 9.8 us an op), never fitted, its training calls less the harness's own time (autocast, "
                   "`.float().sum()` and autograd around a Linear layer, 0.55-0.87 ms): "
                   + recurrent.calls_check() + ". Called alone on that host the calls ran faster than the "
                   "constants read off the H200's say, while whole recurrent models on the H100 (above) match "
                   "them; the constants stay the H200's. Each sweep is priced with the host speed its dispatch probe "
                   "saw (the first H200 sweep recorded none: the calibration host's). The second H200 sweep, on a "
                   "host whose calls ran 0.75x as long as the first's: " + recurrent.calls_check(
                       recurrent.CALLS_H200_HARNESS) + ". Over deeper stacks (`lab/data/h100-rnn-layers-2026-12-05/`: "
                   "hidden 128, 1-4 layers, on an H100), never fitted: " + recurrent.calls_check(
                       recurrent.CALLS_H100_LAYERS) + "; three and four layers price as one and two do (the set-up and "
                   "the steps add up layer by layer), and alone on H100 hosts the calls run 10-20 % under the "
                   "constants read off the first H200 at the same probe speed. The small-hidden kernel's shapes "
                   "(`lab/data/h100-rnn-rows-2026-12-05/`: hidden 64, 96 and 160, batch 16-1,024, 64 and 256 steps), "
                   "never fitted: " + recurrent.calls_check(recurrent.CALLS_H100_ROWS) + "; its inference steps "
                   "took 12 us a layer-step at every batch, against the first H200's 19: a launched inference step "
                   "is the host's issuing and is priced so (34 of 72 within before). One and two directions "
                   "(`lab/data/h100-rnn-directions-2026-12-07/`: LSTM and GRU of hidden 64 and 128, 1-3 layers, "
                   "batch 64 and 512, 1 and 64 steps, `lab/rnn_calls.py --directions 1,2`), never fitted: "
                   + recurrent.calls_check(recurrent.CALLS_H100_DIRECTIONS) + "; a bidirectional call's set-up ran "
                   "1.5x-2.3x a one-direction call's at one step, and a layer is set up per direction since (cuDNN's "
                   "pseudo-layers, whose weights PyTorch walks one by one): with one set-up a layer, training 24 and "
                   "inference 52 of 96 within, the bidirectional calls at 0.4x-0.6x. " + _step_host_line()
                   + "\n\n" + recurrent.memory_summary() + "\n")
    cross_page = ("# Across cards\n\nWritten by `python3 -m tools.bench_page`.\n\n" + cross_card.markdown_section()
                  + "\n## Models nobody fitted, on an RTX 4090\n\n"
                  "27 timm models outside the twelve above (RegNet, MnasNet, MobileNetV2, EfficientNet, ResNet-34/26, "
                  "ConvNeXt femto/nano, HGNetV2, LeViT, DeiT, ViT-B/32, RepVGG, DLA, ReXNet, MLP-Mixer, ResMLP, XCiT, "
                  "PVTv2, TinyViT, GhostNet, HRNet, ...), chosen before any was estimated, against timm's published "
                  "RTX 4090 inference rates (`tools/timm_out_of_sample.py`: NHWC, AMP float16, batch 512, the CSV "
                  "at commit 7479d451): 22 of 27 within 0.8x-1.25x, geometric mean 0.92x, as the twelve fitted "
                  "models' 0.91x (the tool reads the 4090 about 9 % slow in inference). Outside: HGNetV2-B0 1.55x "
                  "(its 16-64-channel stages priced too fast), ReXNet 0.75x, ViT-B/32 0.78x, EfficientNet-B1 0.79x, "
                  "ResNet-34 0.80x. Checked by `tests/test_timm_out_of_sample.py` (slow).\n")
    from bench import dilated, nchw, pools, stems, transposed, upsample

    nchw_page = ("# NCHW against channels-last on an H200\n\nWritten by `python3 -m tools.bench_page` (summary in "
                 "BENCHMARKS.md); `bench/nchw.py`.\n\n" + nchw.markdown() + "\n" + stems.markdown() + "\n"
                 + pools.markdown() + "\n" + upsample.markdown() + "\n" + transposed.markdown() + "\n"
                 + dilated.markdown())
    probe_page = "\n".join(["# How long a probe takes, and its repeatability", "",
                             "Written by `python3 -m tools.bench_page` (BENCHMARKS.md links here).", "",
                             *probe_time(), *repeat()]).rstrip() + "\n"
    pages = ((PAGE, page()), (CASES_PAGE, cases_page()), (SERVING_PAGE, serving_section()), (PROBE_PAGE, probe_page),
             (TRAINING_PAGE, training_section()), (FOUR_GPU_PAGE, four),
             (ROOT / "docs" / "unseen-models.md", unseen_page), (ROOT / "docs" / "cross-card.md", cross_page),
             (ROOT / "docs" / "nchw.md", nchw_page))
    for path, text in pages:
        if args.check:
            if not path.exists() or path.read_text() != text:
                stale.append(str(path.relative_to(ROOT)))
        else:
            path.write_text(text)
    if stale:
        print(f"not current: {', '.join(stale)} (python3 -m tools.bench_page rewrites them)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
