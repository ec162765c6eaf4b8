#!/usr/bin/env python3
"""Measure training steps and forward passes of many models on this GPU: the ground truth of the op
graph estimator (gpuadvisor/estimate/validation data under tests/data/models/).

Each case builds its model with gpuadvisor's own zoo (the spec the user would type), then times it
as a practitioner's loop runs it:
  * training: fp32 weights under bf16 autocast, fused AdamW, loss.backward(), opt.step(),
    zero_grad(set_to_none=True); cudnn.benchmark on; channels_last where the case says so;
  * inference: bf16 weights, torch.inference_mode(), one forward over the batch.
Time: median of 8 steps (--timed) after 3 warm-ups, each between CUDA events; the host's time to issue
a step too (host_issue_s). `--noisy SPREAD` re-measures the stored cases whose steps spread more than that
(host-bound steps jitter with the CPU: more steps give a steadier median). The dispatch probe's op time is
taken just before and after each case's timed steps: the host's speed while the case ran. Memory: the peak of
torch.cuda.max_memory_allocated over the timed steps. One more step under torch.profiler gives
the device time per aten op (what the op cost model is checked against, class by class).

  python3 -m lab.measure_models --out results.json [--part 0/2] [--only SUBSTRING ...] [--timed N] [--noisy SPREAD]
"""

from __future__ import annotations

import argparse
import datetime
import gc
import json
import statistics
import time
from pathlib import Path

import torch

from gpuadvisor.estimate.trace import zoo
from lab.model_cases import CASES, UNSEEN, case_id
from probes import dispatch

WARMUP, TIMED = 3, 8


def run_case(case: dict, device: str = "cuda", timed: int = TIMED) -> dict:
    """Time and peak memory of one case on `device` ("cpu" only checks that the case runs)."""
    ref = zoo.parse_ref(case["spec"])
    cuda = device == "cuda"
    training = case["mode"] == "training"
    t0 = time.perf_counter()
    with torch.device(device):
        built = zoo.build(ref, seq=case.get("seq", 0), input_shape=tuple(case["input"]) if case.get("input") else None)
        model = built.module
        if case.get("trainable"):
            zoo.apply_trainable(model, trainable=tuple(case["trainable"]))
        args, kw = built.make_batch(case["batch"])
    if case.get("channels_last"):
        model = model.to(memory_format=torch.channels_last)
    opt = None
    if training:
        model.train()
        params = [p for p in model.parameters() if p.requires_grad]
        opt = torch.optim.AdamW(params, lr=1e-5, fused=True)
    else:
        model.eval().to(torch.bfloat16)
    args, kw = zoo.prepare_inputs((args, kw), None if training else torch.bfloat16, bool(case.get("channels_last")))
    build_s = time.perf_counter() - t0

    def step():
        if training:
            with torch.autocast(device, dtype=torch.bfloat16):
                out = model(*args, **kw)
                loss = built.loss(out)
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
        else:
            with torch.inference_mode():
                model(*args, **kw)

    if not cuda:
        step()
        return {**case, "smoke": "ran on the CPU"}
    for _ in range(WARMUP):
        step()
    torch.cuda.synchronize()
    host_before = dispatch.measure(torch, repeats=3)  # this host's dispatch speed now (its clock drifts)
    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated()
    times, issued = [], []
    wall0 = time.perf_counter()
    for _ in range(timed):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        t0 = time.perf_counter()
        step()
        b.record()
        issued.append(time.perf_counter() - t0)  # the host's time to issue the step (it may block on the GPU)
        b.synchronize()
        times.append(a.elapsed_time(b) / 1e3)
    wall = (time.perf_counter() - wall0) / timed
    host_after = dispatch.measure(torch, repeats=3)
    peak = torch.cuda.max_memory_allocated()
    ops = profile(step)
    med = statistics.median(times)
    return {**case, "time_s": med, "time_spread": (max(times) - min(times)) / med, "timed_steps": timed,
            "host_issue_s": statistics.median(issued),
            # probes/dispatch.py's op figure just before and after the timed steps: the host's speed while the
            # case ran (recorded to show its drift; the estimates use the calibration host's HOST_OP_S)
            "dispatch_op_s": [host_before["op_s"], host_after["op_s"]],
            "wall_s": wall, "peak_bytes": peak, "steady_bytes": before, "build_s": build_s,
            "params": sum(p.numel() for p in model.parameters()),
            "trainable_params": sum(p.numel() for p in model.parameters() if p.requires_grad),
            "unit": built.unit.value, "tokens_per_sample": built.tokens_per_sample, "ops": ops}


def profile(step) -> dict:
    """Device time (us) and calls per aten op of one step: where the time goes, op by op."""
    from torch.profiler import ProfilerActivity
    from torch.profiler import profile as prof_ctx

    with prof_ctx(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        step()
        torch.cuda.synchronize()
    out = {}
    for e in prof.key_averages():
        dev = getattr(e, "self_device_time_total", None)
        if dev is None:
            dev = getattr(e, "self_cuda_time_total", 0)
        if dev and dev > 0:
            out[e.key] = [round(float(dev), 1), int(e.count)]
    return dict(sorted(out.items(), key=lambda kv: -kv[1][0])[:60])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--part", default="0/1", help="K/N: run every N-th case starting at K")
    ap.add_argument("--only", action="append", default=[],
                    help="a substring of the specs to run (repeatable)")
    ap.add_argument("--reverse", action="store_true",
                    help="run the cases in reverse order (a second pass: drift shows)")
    ap.add_argument("--smoke", action="store_true", help="run each case once on the CPU at batch 2")
    ap.add_argument("--budget-s", type=float, default=540.0, help="stop starting new cases after this")
    ap.add_argument("--timed", type=int, default=TIMED, help="timed steps per case (median taken)")
    ap.add_argument("--unseen", action="store_true",
                    help="the out-of-sample cases (lab/model_cases.UNSEEN) instead of the validation set")
    ap.add_argument("--noisy", type=float, default=None, metavar="SPREAD",
                    help="only the cases whose stored measurement (tests/data/models-h100.json) spread more than "
                         "this between its timed steps: re-measured with --timed steps")
    a = ap.parse_args()
    k, n = (int(x) for x in a.part.split("/"))
    torch.backends.cudnn.benchmark = True
    if a.smoke:
        env = {"smoke": True}
        torch.cuda.get_device_name = lambda: "cpu"  # type: ignore[assignment]
    env = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "device": torch.cuda.get_device_name(), "torch": torch.__version__,
           "cudnn": torch.backends.cudnn.version(), "cuda": torch.version.cuda}
    try:
        import pynvml
        pynvml.nvmlInit()
        env["driver"] = pynvml.nvmlSystemGetDriverVersion()
    except Exception as e:
        env["driver"] = f"unknown ({e})"
    results = []
    start = time.perf_counter()
    todo = [c for c in (UNSEEN if a.unseen else CASES) if not a.only or any(o in c["spec"] for o in a.only)]
    if a.noisy is not None:
        stored = json.loads((Path(__file__).resolve().parent.parent / "tests/data/models-h100.json").read_text())
        noisy = {case_id(c) for c in stored["cases"] if c.get("time_spread", 0.0) > a.noisy}
        todo = [c for c in todo if case_id(c) in noisy]
    todo = todo[k::n][::-1] if a.reverse else todo[k::n]
    for case in todo:
        if time.perf_counter() - start > a.budget_s:
            results.append({**case, "skipped": "time budget"})
            continue
        try:
            if a.smoke:
                r = run_case({**case, "batch": 2, "seq": min(case.get("seq", 0) or 64, 64)}, device="cpu")
                print(f"{case['spec']:38s} {case['mode']:9s} ok", flush=True)
                results.append(r)
                continue
            r = run_case(case, timed=a.timed)
            print(f"{case['spec']:38s} {case['mode']:9s} b={case['batch']:<4d} {r['time_s']*1e3:9.2f} ms "
                  f"{r['peak_bytes']/2**30:7.2f} GiB", flush=True)
        except torch.OutOfMemoryError:
            r = {**case, "error": "out of memory"}
            print(f"{case['spec']:38s} {case['mode']:9s} b={case['batch']:<4d} OOM", flush=True)
        except Exception as e:
            r = {**case, "error": f"{type(e).__name__}: {str(e)[:300]}"}
            print(f"{case['spec']:38s} {case['mode']:9s} FAILED {r['error']}", flush=True)
        results.append(r)
        gc.collect()
        torch.cuda.empty_cache()
        Path(a.out).write_text(json.dumps({"env": env, "results": results}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
