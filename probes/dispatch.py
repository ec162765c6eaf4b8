"""Host dispatch through PyTorch eager, on this host: one eager op, one host-GPU
synchronization, and attention on a sequence length not seen before (PyTorch's cuDNN attention
builds a plan per shape: ~40 ms of host time on an H100 host, paid once per eager decode step).
Where transformers is installed it also times Hugging Face generate() itself on tiny Llama models
(2 and 10 layers: their GPU work is negligible, so a step is all host time) with cuDNN attention off
and on: the host time of a decode step per layer, per step, and the plan build as generate() pays it.
Those are what the eager engine profile needs (gpuadvisor/estimate/engines.py); the single-op figure
alone did not predict them across hosts (two H100 hosts: op 9.0 against 11.9 us, but generate()'s
host time per layer 1.15 against 0.78 ms).

The attention and generate() figures take ~15 s and depend only on the host and its software, so
they are measured once and cached per host (probes/hostcache.py): --full measures them where no
fresh entry exists, --quick only reads them. The single-op figures take ~0.2 s but need PyTorch, whose
import and CUDA start cost seconds: --full measures them every run and caches them under their own entry,
--quick reads that entry where it is fresh and measures them (importing PyTorch) only where it is not.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

from gpuadvisor.core.provenance import as_text, dist_version, nvml_try
from gpuadvisor.core.results import Measurement, ProbeResult
from probes import hostcache
from probes.base import ProbeContext, measurement, wait_for_torch
from probes.timing import ProbeSkipped

NAME = "dispatch"


def measure(torch: Any, *, ops: int = 2000, syncs: int = 300, repeats: int = 5) -> dict[str, float]:
    """Median over `repeats` of: host seconds per eager op (a 16-element in-place add, issued back to
    back: the GPU keeps up, so the host's dispatch is what is timed), seconds a synchronization adds
    (an op followed by torch.cuda.synchronize(), minus the op), and a Python loop iteration."""
    x = torch.zeros(16, device="cuda")
    for _ in range(200):  # warm the dispatcher and the allocator
        x.add_(1.0)
    torch.cuda.synchronize()
    op_s, sync_s, py_s = [], [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(ops):
            x.add_(1.0)
        torch.cuda.synchronize()
        op = (time.perf_counter() - t0) / ops
        t0 = time.perf_counter()
        for _ in range(syncs):
            x.add_(1.0)
            torch.cuda.synchronize()
        sync_s.append(max((time.perf_counter() - t0) / syncs - op, 0.0))
        op_s.append(op)
        t0 = time.perf_counter()
        for _ in range(200_000):
            pass
        py_s.append((time.perf_counter() - t0) / 200_000)
    if float(x[0].item()) != 200.0 + repeats * (ops + syncs):
        raise RuntimeError("dispatch probe: the adds did not all run")
    return {"op_s": statistics.median(op_s), "sync_s": statistics.median(sync_s),
            "python_iter_s": statistics.median(py_s),
            "op_spread": (max(op_s) - min(op_s)) / statistics.median(op_s)}


_FRESH = [3001]  # sequence lengths this process has not used: each SDPA call below gets a new one


def attention_new_shape(torch: Any, *, calls: int = 5) -> dict[str, Any]:
    """Host seconds of one decode-shaped SDPA call (batch 1, 32 query heads over 8 KV heads of 64) on a
    sequence length it has not seen, minus the same call on a length it has: zero where the backend
    PyTorch picks runs a prebuilt kernel (flash), tens of ms where it builds a plan per shape (cuDNN
    attention, PyTorch's choice on Hopper and Blackwell), which eager decoding pays every step."""
    import torch.nn.functional as F

    def call(length: int) -> float:
        q = torch.randn(1, 32, 1, 64, device="cuda", dtype=torch.bfloat16)
        kv = torch.randn(1, 8, length, 64, device="cuda", dtype=torch.bfloat16)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        F.scaled_dot_product_attention(q, kv, kv, enable_gqa=True)
        dt = time.perf_counter() - t0
        torch.cuda.synchronize()
        return dt

    def fresh() -> int:
        _FRESH[0] += 7
        return _FRESH[0]

    call(fresh())
    new = [call(fresh()) for _ in range(calls)]
    same_len = fresh()
    call(same_len)
    same = [call(same_len) for _ in range(calls)]
    return {"new_shape_s": max(statistics.median(new) - statistics.median(same), 0.0),
            "same_shape_s": statistics.median(same)}


TINY_LAYERS = (2, 10)
TINY_STEPS = 16


def eager_generate(torch: Any, *, runs: int = 3, steps: int = TINY_STEPS) -> dict[str, Any]:
    """Host seconds of a Hugging Face generate() decode step: per layer and fixed (cuDNN attention
    off, from tiny Llama models of TINY_LAYERS layers), and the attention plan a step pays with cuDNN
    attention on (on minus off). Each call starts at a prompt length no earlier call used, as every
    real decode step is at a new length. Raises ImportError without transformers."""
    import transformers as hf

    transformers: Any = hf  # typed by its own stubs where installed: Any at this boundary, as where it is not

    def step_s(model: Any, cudnn: bool) -> float:
        def gen(n: int) -> float:
            x = torch.randint(3, 250, (1, fresh()), device="cuda")
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            with torch.no_grad():
                model.generate(x, attention_mask=torch.ones_like(x), max_new_tokens=n, min_new_tokens=n,
                               do_sample=False, pad_token_id=0, eos_token_id=None)
            torch.cuda.synchronize()
            return time.perf_counter() - t0

        torch.backends.cuda.enable_cudnn_sdp(cudnn)
        try:
            one = statistics.median(gen(1) for _ in range(runs))
            many = statistics.median(gen(steps + 1) for _ in range(runs))
        finally:
            torch.backends.cuda.enable_cudnn_sdp(True)
        return max(many - one, 0.0) / steps

    def fresh() -> int:
        _FRESH[0] += steps + 5
        return _FRESH[0]

    off, on = {}, {}
    for layers in TINY_LAYERS:
        cfg = transformers.LlamaConfig(hidden_size=256, intermediate_size=512, num_hidden_layers=layers,
                                       num_attention_heads=4, num_key_value_heads=1, head_dim=64,
                                       vocab_size=256, max_position_embeddings=1 << 16)
        model = transformers.LlamaForCausalLM(cfg).to(device="cuda", dtype=torch.bfloat16).eval()
        model.generation_config.pad_token_id = 0
        step_s(model, False)  # warm: first calls initialise generate() and the kernels
        off[layers], on[layers] = step_s(model, False), step_s(model, True)
        del model
    lo, hi = TINY_LAYERS
    layer = max(off[hi] - off[lo], 0.0) / (hi - lo)
    return {"layer_s": layer, "fixed_s": max(off[lo] - lo * layer, 0.0),
            "plan_s": max(statistics.median(on[n] - off[n] for n in TINY_LAYERS), 0.0),
            "transformers": transformers.__version__}


METHOD = 1  # bump when host_figures() measures differently: cache entries of another method are not used
MEASURE_IT = "`gpuadvisor probe --full --only dispatch`"
_GEN_OP = f"Hugging Face generate(), tiny Llama of {TINY_LAYERS[0]} and {TINY_LAYERS[1]} layers, one sequence"


def _driver(ctx: ProbeContext) -> str | None:
    v = nvml_try(ctx.nvml.nvmlSystemGetDriverVersion) if ctx.nvml is not None else None
    runtime = getattr(getattr(ctx.cp, "cuda", None), "runtime", None)  # before PyTorch: any cp at all
    if v is None and runtime is not None:
        v = nvml_try(runtime.driverGetVersion)
    return None if v is None else str(as_text(v))


def cache_key(ctx: ProbeContext, torch: Any) -> dict[str, str | None]:
    """What host_figures() depends on: this host, PyTorch, transformers, the GPU model and its driver.
    PyTorch's installed version, so that --quick finds the entry without importing it (`torch` may be None)."""
    version = dist_version("torch") or (torch.__version__ if torch is not None else None)
    gpu = ctx.props.get("name") or (torch.cuda.get_device_name() if torch is not None else None)
    return hostcache.host_key(probe=f"{NAME}/{METHOD}", torch=version, transformers=dist_version("transformers"),
                              driver=_driver(ctx), gpu=gpu)


OP_CACHE = "dispatch_op"  # the single-op figures' host-cache entry (its own: --quick may write it)


def op_cache_key(ctx: ProbeContext) -> dict[str, str | None]:
    """What the single-op figures depend on, found without importing PyTorch (its installed version)."""
    return hostcache.host_key(probe=f"{NAME}-op/{METHOD}", torch=dist_version("torch"), driver=_driver(ctx),
                              gpu=ctx.props.get("name"))


def op_figures_cached(ctx: ProbeContext) -> bool:
    """Whether --quick will find the single-op figures in the host cache (and so need no PyTorch)."""
    key = op_cache_key(ctx)
    not_before = ctx.options.get("host_cache", {}).get("not_before")
    return key["torch"] is not None and hostcache.load(OP_CACHE, key, not_before=not_before) is not None


def op_measurements(r: dict[str, float], reps: int | None, **provenance: Any) -> list[Measurement]:
    """measure()'s figures as measurements; cached ones say so in their label and details."""
    tag = f" (cached {provenance['measured_at'][:10]})" if provenance.get("cached") else ""
    return [
        measurement("dispatch.op", "PyTorch eager op dispatch (host)" + tag, r["op_s"] * 1e6, "us",
                    spread=r.get("op_spread"), op="16-element in-place add, back to back", repeats=reps,
                    **provenance),
        measurement("dispatch.sync", "Host-GPU synchronization (host)" + tag, r["sync_s"] * 1e6, "us",
                    op="torch.cuda.synchronize() after one small op, the op's dispatch subtracted", **provenance),
        measurement("dispatch.python", "Python loop iteration (host)" + tag, r["python_iter_s"] * 1e9, "ns",
                    **provenance),
    ]


def host_figures(ctx: ProbeContext, torch: Any) -> tuple[dict[str, float], list[str], bool]:
    """The expensive part (~15 s): attention on a new length and generate()'s host time. Returns the
    figures (seconds), why any is missing, and whether they may be cached: only when nothing failed
    (transformers missing is no failure: its version is in the key)."""
    figures: dict[str, float] = {}
    notes: list[str] = []
    failed = False
    try:
        a = attention_new_shape(torch, calls=7)
        figures.update(sdpa_new_shape_s=a["new_shape_s"], sdpa_same_shape_s=a["same_shape_s"])
    except Exception as e:  # an attention backend missing on this GPU: the other figures stand
        failed = True
        notes.append(f"attention timing skipped: {type(e).__name__}: {e}")
    try:
        if ctx.deadline.remaining < 10:
            raise TimeoutError(f"{ctx.deadline.remaining:.0f} s left of the time limit")
        g = eager_generate(torch)
        figures.update(layer_s=g["layer_s"], fixed_s=g["fixed_s"], plan_s=g["plan_s"])
    except ImportError:
        notes.append("transformers not installed: generate() host time not measured")
    except Exception as e:  # a transformers version this code does not know: the other figures stand
        failed = True
        notes.append(f"generate() timing skipped: {type(e).__name__}: {e}")
    return figures, [" ".join(n.split())[:300] for n in notes], not failed


def host_measurements(f: dict[str, float], **provenance: Any) -> list[Measurement]:
    """host_figures() as measurements; a cached one says so in its label and details (cached, measured_at)."""
    tag = f" (cached {provenance['measured_at'][:10]})" if provenance.get("cached") else ""
    ms = []
    if "sdpa_new_shape_s" in f:
        ms.append(measurement("dispatch.sdpa_new_shape", "Attention on a new sequence length (host)" + tag,
                              f["sdpa_new_shape_s"] * 1e3, "ms", same_shape_ms=f.get("sdpa_same_shape_s", 0.0) * 1e3,
                              op="SDPA, batch 1, 32/8 heads of 64, one query: new length minus a seen one",
                              **provenance))
    if {"layer_s", "fixed_s", "plan_s"} <= f.keys():
        ms += [
            measurement("dispatch.generate_layer", "generate() host time per layer and step" + tag,
                        f["layer_s"] * 1e3, "ms", op=_GEN_OP + ", cuDNN attention off", **provenance),
            measurement("dispatch.generate_fixed", "generate() host time per step, fixed" + tag,
                        f["fixed_s"] * 1e3, "ms", op=_GEN_OP + ", cuDNN attention off", **provenance),
            measurement("dispatch.generate_plan", "generate() attention plan per step" + tag,
                        f["plan_s"] * 1e3, "ms", op=_GEN_OP + ": cuDNN attention on minus off", **provenance),
        ]
    return ms


def run(ctx: ProbeContext) -> ProbeResult:
    """The single-op figures live; the host figures from the host cache where a fresh entry exists,
    else measured in --full (and cached) and left out of --quick, with a note saying how to get them."""
    t0 = time.perf_counter()
    ctx.gpu()
    not_before = ctx.options.get("host_cache", {}).get("not_before")
    reps = 3 if ctx.quick else 7
    op_key = op_cache_key(ctx)
    op_entry = hostcache.load(OP_CACHE, op_key, not_before=not_before) if ctx.quick else None
    if op_entry is not None and op_key["torch"] is not None:  # --quick on a known host: no PyTorch at all
        ms = op_measurements(op_entry.figures, None, cached=True, measured_at=op_entry.measured_at)
        torch = None
    else:
        wait_for_torch()
        torch = ctx.torch()
        if torch is None:
            raise ProbeSkipped(f"needs PyTorch with CUDA: {ctx.torch_reason}")
        r = measure(torch, repeats=reps)
        ms = op_measurements(r, reps)
        if op_key["torch"] is not None:
            hostcache.store(OP_CACHE, op_key, r)
    key = cache_key(ctx, torch)
    entry = hostcache.load(NAME, key, not_before=not_before)
    host: dict[str, Any] = {"source": "not measured"}
    if entry is not None:
        ms += host_measurements(entry.figures, cached=True, measured_at=entry.measured_at)
        host = {"source": "cache", "measured_at": entry.measured_at, "cache_file": str(entry.path)}
        notes = [f"generate() and attention figures from the host cache, measured {entry.date} "
                 f"({entry.path}); `--full --refresh-host` re-measures them"]
    elif ctx.quick:
        notes = [f"generate() and attention host times not measured in --quick: {MEASURE_IT} measures them "
                 "once for this host"]
    else:
        figures, notes, cacheable = host_figures(ctx, torch)
        ms += host_measurements(figures)
        host = {"source": "measured"}
        if figures and cacheable:
            notes.append("generate() and attention figures " + hostcache.store(NAME, key, figures))
    data = {"torch": key["torch"], "transformers": key["transformers"], "repeats": reps, "host_figures": host,
            "op_figures": ({"source": "cache", "measured_at": op_entry.measured_at, "cache_file": str(op_entry.path)}
                           if op_entry is not None else {"source": "measured"})}
    return ProbeResult(probe=NAME, status="ok", duration_s=time.perf_counter() - t0, measurements=ms, data=data,
                       reason="; ".join(notes) or None)
