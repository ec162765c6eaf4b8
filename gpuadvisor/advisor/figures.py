"""What one card x GPU count does with a workload under the user's targets, before any price:
memory fit, layout, serving or training figures, and what binds (one line). Pure functions.

Serving (inference): the GPUs are split into replicas of the fewest tensor-parallel GPUs that
hold the weights and their share of the users' KV cache; figures come from `estimate_serving` at
the target's concurrency and context, plus the tensor-parallel all-reduce latency of each decode
step. Models that do not decode (diffusion UNets, encoders, vision) serve one batch of requests
per step. Training, LoRA, QLoRA: plain data parallel where one GPU holds a replica, else ZeRO-3
(or the user's sharding); `batch` is sequences per GPU; the wall time is the token budget over
the estimated throughput.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from gpuadvisor.advisor.targets import Targets
from gpuadvisor.estimate import (
    DEFAULT_ENGINE,
    Efficiency,
    GiB,
    HardwareFigures,
    engine_profile,
    estimate_compute,
    estimate_memory,
    estimate_serving,
    training_flops_per_token,
)
from gpuadvisor.estimate import calibration as cal
from gpuadvisor.workload import Workload

# INTERCONNECT_BINDS (communication share above which the interconnect binds), MAX_BATCH (vLLM's default
# max_num_seqs) and the all-reduce latencies are in the calibration table
__getattr__ = cal.aliases(__name__, ("INTERCONNECT_BINDS", "MAX_BATCH"))

@dataclass(frozen=True)
class Figures:
    """What one card x GPU count does with the workload, before any price is attached."""

    fits: bool
    layout: str
    tp: int
    replicas: int
    needed_gib: float
    binds: str
    binds_note: str
    per_user: float | None = None
    aggregate: float | None = None
    capacity: float | None = None  # aggregate tok/s with as many users as the KV cache holds (<= MAX_BATCH)
    ttft: float | None = None
    tpot: float | None = None
    max_users: int | None = None
    request_s: float | None = None
    requests_per_s: float | None = None  # models that do not decode: requests served per second
    wall_s: float | None = None
    tokens_per_s: float | None = None
    why_not: str = ""
    memory_parts: tuple[tuple[str, float], ...] = ()  # (item, GiB) per GPU; their sum is `needed_gib`
    usable_gib: float | None = None  # what the layout may use per GPU (serving engines keep a reserve free)

    def to_dict(self) -> dict[str, Any]:
        """As JSON; no speed figures for a layout that does not fit."""
        ok = self.fits
        return {"fits": ok, "layout": self.layout, "tensor_parallel": self.tp, "replicas": self.replicas,
                "needed_gib_per_gpu": self.needed_gib, "usable_gib_per_gpu": self.usable_gib,
                "memory_parts": dict(self.memory_parts), "max_users": self.max_users,
                "per_user_tokens_per_s": self.per_user if ok else None,
                "aggregate_tokens_per_s": self.aggregate if ok else None, "ttft_s": self.ttft if ok else None,
                "tpot_s": self.tpot if ok else None, "request_s": self.request_s if ok else None,
                "wall_s": self.wall_s if ok else None, "tokens_per_s": self.tokens_per_s if ok else None,
                "binds": self.binds, "binds_note": self.binds_note, "why_not": self.why_not}


def _tp_degrees(workload: Workload, gpus: int) -> list[int]:
    m = workload.model
    out = []
    tp = 1
    while tp <= gpus:
        if gpus % tp == 0 and (not m.is_transformer or m.num_heads % tp == 0):
            out.append(tp)
        tp *= 2
    return out or [1]


def _serving_figures(workload: Workload, gpu_figures: HardwareFigures, gpus: int, t: Targets, engine: str,
                     efficiencies: Efficiency | None, tp_only: int | None = None,
                     memo: ServingMemo | None = None) -> Figures:
    """Fewest tensor-parallel GPUs per replica that hold the weights and the users' KV cache
    (`tp_only`: that degree alone, as `estimate --tp` asks). Per-user and aggregate tok/s count the
    prefills that continuous batching interleaves with decoding (`estimate_serving`'s cycle) plus
    the tensor-parallel all-reduces of each decode step. One loop over the TP degrees, kept whole
    (63 lines): each exit names what binds beside the figures it tests."""
    cap = gpu_figures.memory_gib
    if workload.model.kind != "decoder":
        return _request_figures(workload, gpu_figures, gpus, t, efficiencies)
    last = None
    degrees = [tp_only] if tp_only else _tp_degrees(workload, gpus)
    for tp in degrees:
        replicas = gpus // tp
        per_replica = -(-t.users // replicas)
        wt = workload.with_(num_gpus=tp, tensor_parallel=tp, sharding="none", batch=1)
        s = _serving(wt, gpu_figures, per_replica, t.prompt_tokens, t.output_tokens, engine, efficiencies, memo)
        mem = _memory(wt.with_(seq_len=t.prompt_tokens, gen_tokens=t.output_tokens), memo)
        static = (mem.get("weights") + mem.get("activations") + cal.CUDA_CONTEXT_BYTES) / GiB
        kv_gib = s.kv_bytes_per_token * (t.prompt_tokens + t.output_tokens) * per_replica / GiB
        need = static + kv_gib
        parts = (("weights", mem.get("weights") / GiB),
                 ("activations (one prefill)", mem.get("activations") / GiB),
                 (f"KV cache ({per_replica} user{'s' if per_replica != 1 else ''} x "
                  f"{t.prompt_tokens + t.output_tokens:,} tokens)", kv_gib),
                 ("CUDA context", cal.CUDA_CONTEXT_BYTES / GiB))
        lay = f"TP{tp}" if tp > 1 else "1 GPU"
        lay += f" x {replicas} replicas" if replicas > 1 else ""
        users = s.max_concurrent_seqs * replicas
        comm = _tp_latency_s(workload, gpu_figures, tp)
        tpot = None if s.tpot_s is None else s.tpot_s + comm
        per_user = None
        if tpot is not None and s.per_user_tokens_per_s:
            cycle = t.output_tokens / s.per_user_tokens_per_s + t.output_tokens * comm  # decode + prefills + TP
            per_user = t.output_tokens / cycle
        last = Figures(fits=s.fits, layout=lay, tp=tp, replicas=replicas, needed_gib=need, binds="memory",
                       binds_note="", per_user=per_user,
                       aggregate=None if per_user is None else t.users * per_user,
                       ttft=s.ttft_s, tpot=tpot, max_users=users, memory_parts=parts,
                       usable_gib=None if cap is None else cap * (1 - cal.SERVING_RESERVE))
        if cap is None:
            return _with_binds(last, "unknown", f"{gpu_figures.name}: no memory figure in the catalog", fits=False)
        if not s.fits:
            if static > cap * 0.9:
                why = f"weights need {static:.1f} GiB per GPU at TP{tp}, {gpu_figures.name} has {cap:g}"
            else:
                why = f"KV cache room for {users} of {t.users} users at {t.prompt_tokens + t.output_tokens:,} tokens"
            last = _with_binds(last, "memory", why, fits=False)
            continue
        if s.tpot_s is None:
            return _with_binds(last, "unknown", f"{gpu_figures.name}: no throughput figures in the catalog", fits=True)
        last = replace(last, capacity=_capacity_tokens_per_s(wt, gpu_figures, s, t, engine, efficiencies, comm,
                                                             memo) * replicas)
        if tpot and comm > cal.INTERCONNECT_BINDS * tpot:
            return _with_binds(last, "interconnect", f"interconnect: tensor-parallel all-reduces take "
                               f"{comm / tpot:.0%} of each decode step", fits=True)
        if per_user and tpot:
            prefill_share = 1.0 - t.output_tokens * tpot * per_user / t.output_tokens
            if prefill_share > 0.5 and users >= cal.MEMORY_BINDS_HEADROOM * t.users:
                return _with_binds(last, "compute", f"compute: prefilling each user's {t.prompt_tokens:,}-token "
                                   f"prompt takes {prefill_share:.0%} of the time (no prefix caching assumed)",
                                   fits=True)
        return _with_binds(last, *_serving_binds(s, workload, gpu_figures, t, users, tp, efficiencies, memo), fits=True)
    return last  # type: ignore[return-value]


#: estimate_serving's answers by their arguments, shared by the `figures` calls of one `build_options`:
#: ranking every card, provider and GPU count asks the same question about three times over (a cold
#: `recommend llama-2-7b` asked 667 times for 201 answers). Scoped to one call, never process-wide, so
#: a changed calibration constant is never answered from a stale entry.
ServingMemo = dict[tuple[Any, ...], Any]


def _serving(workload: Workload, gpu_figures: HardwareFigures, users: int, prompt: int, output: int, engine: str,
             efficiencies: Efficiency | None, memo: ServingMemo | None) -> Any:
    """`estimate_serving`, answered from `memo` when asked before (it is a pure function of frozen inputs)."""
    def ask() -> Any:
        return estimate_serving(workload, gpu_figures, concurrency=users, prompt_tokens=prompt, output_tokens=output,
                                engine=engine, efficiency=efficiencies)

    if memo is None:
        return ask()
    key = (workload, repr(gpu_figures), users, prompt, output, engine, efficiencies)
    if key not in memo:
        memo[key] = ask()
    return memo[key]


def _capacity_tokens_per_s(wt: Workload, gpu_figures: HardwareFigures, s: Any, t: Targets, engine: str,
                           efficiencies: Efficiency | None, comm: float, memo: ServingMemo | None) -> float:
    """One replica's aggregate tok/s at full load: as many sequences as fit, at most MAX_BATCH."""
    n = max(1, min(s.max_concurrent_seqs, int(cal.MAX_BATCH)))
    full = s if n == s.concurrency else _serving(wt, gpu_figures, n, t.prompt_tokens, t.output_tokens, engine,
                                                 efficiencies, memo)
    if not full.per_user_tokens_per_s:
        return 0.0
    cycle = t.output_tokens / full.per_user_tokens_per_s + t.output_tokens * comm
    return n * t.output_tokens / cycle


def _tp_latency_s(workload: Workload, gpu_figures: HardwareFigures, tp: int) -> float:
    """Two all-reduces per layer per decode step between `tp` GPUs (0 on one GPU), at the latency of an
    NVLink-class link (NVLINK_MIN_GBS or more in the catalog) or of PCIe."""
    if tp <= 1:
        return 0.0
    nvlink = (gpu_figures.interconnect_gbs or 0) >= cal.NVLINK_MIN_GBS
    return 2 * workload.model.num_layers * (cal.ALLREDUCE_LATENCY_NVLINK_S if nvlink else cal.ALLREDUCE_LATENCY_PCIE_S)


def _memory(workload: Workload, memo: ServingMemo | None) -> Any:
    """`estimate_memory`, answered from `memo` when asked before: its workload does not depend on the card."""
    if memo is None:
        return estimate_memory(workload)
    key = ("memory", workload)
    if key not in memo:
        memo[key] = estimate_memory(workload)
    return memo[key]


def _serving_binds(s: Any, workload: Workload, gpu_figures: HardwareFigures, t: Targets, users: int, tp: int,
                   efficiencies: Efficiency | None, memo: ServingMemo | None = None) -> tuple[str, str]:
    if users < cal.MEMORY_BINDS_HEADROOM * t.users:
        return "memory", f"memory: KV cache room for {users} users, {t.users} asked"
    if s.bound == "memory":
        wb = _memory(workload.with_(num_gpus=tp, tensor_parallel=tp, sharding="none", batch=1), memo).get("weights")
        active = wb * (workload.model.active_params / workload.model.num_params) * tp / 1e9
        bw = (efficiencies or Efficiency()).for_hardware(gpu_figures)[1] * (gpu_figures.bandwidth_gbs or 0) * tp
        return "bandwidth", f"bandwidth: each step reads {active:.1f} GB of weights (+KV) at ~{bw:,.0f} GB/s"
    if s.bound == "compute":
        return "compute", f"compute: {s.concurrency} sequences per step saturate the matmul units"
    return "overhead", f"engine overhead per step ({engine_profile(s.engine).label})"


def _request_figures(workload: Workload, gpu_figures: HardwareFigures, gpus: int, t: Targets,
                     efficiencies: Efficiency | None) -> Figures:
    """Models that do not decode (diffusion UNets, encoders, vision): one batch of `users`
    requests per step, replicated over the GPUs."""
    per_replica = -(-t.users // gpus)
    wt = workload.with_(num_gpus=1, tensor_parallel=1, sharding="none", batch=per_replica * max(1, workload.batch))
    mem = estimate_memory(wt, gpu_figures.memory_bytes)
    need = mem.total / GiB
    comp = estimate_compute(wt, gpu_figures, efficiencies)
    lay = "1 GPU" + (f" x {gpus} replicas" if gpus > 1 else "")
    base = Figures(fits=gpu_figures.memory_gib is not None and need <= gpu_figures.memory_gib, layout=lay, tp=1,
                   replicas=gpus, needed_gib=need, binds="memory", binds_note="", request_s=comp.time_s,
                   memory_parts=tuple((k, v / GiB) for k, v in mem.items if v), usable_gib=gpu_figures.memory_gib,
                   requests_per_s=None if not comp.time_s else per_replica * gpus / comp.time_s)
    if gpu_figures.memory_gib is None or need > gpu_figures.memory_gib:
        return _with_binds(base, "memory",
                           f"needs {need:.1f} GiB, {gpu_figures.name} has {gpu_figures.memory_gib or 0:g}", fits=False)
    b = comp.bound or "unknown"
    return _with_binds(base, "bandwidth" if b == "memory" else b,
                       f"{'bandwidth' if b == 'memory' else b}: a batch of {wt.batch} is {b} bound", fits=True)


def _with_binds(f: Figures, binds: str, note: str, *, fits: bool) -> Figures:
    return replace(f, binds=binds, binds_note=note, fits=fits, why_not="" if fits else note)


def _training_figures(workload: Workload, gpu_figures: HardwareFigures, gpus: int, t: Targets,
                      efficiencies: Efficiency | None,
                      exact: bool = False) -> Figures:
    """Plain data parallel when a replica fits one GPU, else ZeRO-3 (or the user's sharding; `exact`:
    the workload's own sharding and tensor parallelism only, as `estimate` asks)."""
    shardings = [workload.sharding] if (exact or workload.sharding != "none" or gpus == 1) else ["none", "zero3"]
    tp = workload.tensor_parallel if gpus % workload.tensor_parallel == 0 else 1
    last = None
    for sh in shardings:
        dp = gpus // tp
        # traced models count samples
        budget = float(t.tokens or workload.train_tokens or workload.train_samples or 0.0)
        wl = workload.with_(num_gpus=gpus, tensor_parallel=tp, sharding=sh if dp > 1 else "none",
                            batch=workload.batch * dp,
                     **({"train_samples": budget} if workload.model.is_traced else {"train_tokens": budget}))
        mem = estimate_memory(wl, gpu_figures.memory_bytes)
        need = mem.total / GiB
        comp = estimate_compute(wl, gpu_figures, efficiencies)
        parts = []
        if tp > 1:
            parts.append(f"TP{tp}")
        if dp > 1:
            name = {"none": "DDP", "zero3": "ZeRO-3", "fsdp": "FSDP"}.get(sh, sh.upper().replace("ZERO", "ZeRO-"))
            parts.append(f"{name} x {dp}")
        lay = " + ".join(parts) or "1 GPU"
        last = Figures(fits=False, layout=lay, tp=tp, replicas=dp, needed_gib=need, binds="memory", binds_note="",
                       wall_s=comp.time_s if budget else None, tokens_per_s=comp.tokens_per_s or comp.samples_per_s,
                       memory_parts=tuple((k, v / GiB) for k, v in mem.items if v), usable_gib=gpu_figures.memory_gib)
        if gpu_figures.memory_gib is None or need > gpu_figures.memory_gib:
            last = _with_binds(last, "memory", f"needs {need:.1f} GiB per GPU ({lay}), {gpu_figures.name} has "
                               f"{gpu_figures.memory_gib or 0:g}", fits=False)
            continue
        if comp.step_time_s and comp.comm_time_s > cal.INTERCONNECT_BINDS * comp.step_time_s:
            link = gpu_figures.interconnect_gbs
            return _with_binds(last, "interconnect", f"interconnect: {comp.comm_time_s / comp.step_time_s:.0%} of "
                               f"each step is communication over {link or 'PCIe'} GB/s" if link else
                               f"interconnect: {comp.comm_time_s / comp.step_time_s:.0%} of each step "
                               "is communication over PCIe", fits=True)
        b = comp.bound or "unknown"
        peak = gpu_figures.peak_tflops(wl.math_dtype) or 0.0
        model_mfu = (training_flops_per_token(wl) * (comp.tokens_per_s or 0.0) / (peak * 1e12 * gpus)) if peak else 0
        notes = {"compute": f"compute: matmuls at {comp.mfu:.0%} of {peak:,.0f} TFLOP/s per GPU; {model_mfu:.0%} "
                            "model-FLOPs utilisation over the whole step",
                 "memory": "bandwidth: activations and optimizer traffic dominate the step",
                 "host": "host: eager PyTorch issues the step's kernels from Python more slowly than the GPU runs "
                         "them (a larger per-GPU batch, CUDA graphs or torch.compile help)",
                 "overhead": "latency: the GPU waits on the step's own launches (an RNN's time steps, one after "
                             "another), so a larger batch costs little more and a faster card saves little"}
        note = notes.get(b, f"{b}: what the estimate found limits the step")
        return _with_binds(last, "bandwidth" if b == "memory" else b, note, fits=True)
    if exact:
        return last  # type: ignore[return-value]  # estimate's own layout: no other layout in its place
    from gpuadvisor.advisor.training_layouts import searched  # data/ZeRO-3 does not fit: search the layouts

    found = searched(workload, gpu_figures, gpus, float(t.tokens or workload.train_tokens or 0.0))
    if found is not None:
        f = Figures(fits=True, layout=found["layout"], tp=found["tp"], replicas=found["replicas"],
                    needed_gib=found["needed_gib"], binds="memory", binds_note="", wall_s=found["wall_s"],
                    tokens_per_s=found["tokens_per_s"], memory_parts=found.get("memory_parts", ()),
                    usable_gib=gpu_figures.memory_gib)
        return _with_binds(f, "memory", f"memory: data parallel alone does not fit; {found['layout']} does "
                           f"({found['needed_gib']:.1f} GiB per GPU)", fits=True)
    return last  # type: ignore[return-value]


def figures(workload: Workload, gpu_figures: HardwareFigures, gpus: int, targets: Targets, *,
            engine: str = DEFAULT_ENGINE, efficiency: Efficiency | None = None, exact: bool = False,
            memo: ServingMemo | None = None) -> Figures:
    """The price-free figures of `gpus` x `gpu_figures` running `workload` under `targets`: the one path that
    `estimate`, `recommend`, the API, the TUI and the report share. `exact`: the workload's own
    layout (tensor parallelism, sharding), as `estimate` asks; otherwise the fewest tensor-parallel
    GPUs that fit (serving) or plain data parallel before ZeRO-3 (training). Training reads the
    workload's batch as sequences per GPU (callers split the global batch:
    options.per_gpu_batch). `memo`: a dict shared by the calls that rank one workload."""
    if workload.mode == "inference":
        return _serving_figures(workload, gpu_figures, gpus, targets, engine, efficiency,
                                workload.tensor_parallel if exact else None, memo)
    return _training_figures(workload, gpu_figures, gpus, targets, efficiency, exact)


def layout_figures(workload: Workload, gpu_figures: HardwareFigures, efficiencies: Efficiency | None,
                   engine: str = DEFAULT_ENGINE
                   ) -> Figures | None:
    """The figures of exactly this workload's layout (`workload.num_gpus`, tensor parallelism, sharding), as
    `estimate` and `api.estimate` show them: the path `recommend` prices. Serving a decoder: the
    batch is the users at once (their prompt `seq`, answer `gen_tokens`). None for what the advisor
    does not cost (scoring, a model that does not decode in inference)."""
    if workload.mode == "inference" and workload.model.kind == "decoder" and workload.gen_tokens and workload.seq:
        t = Targets(users=workload.batch, context=workload.seq + workload.gen_tokens,
                    output_tokens=workload.gen_tokens, tokens_per_s=1.0)
        return figures(workload.with_(batch=1), gpu_figures, workload.num_gpus, t, engine=engine,
                       efficiency=efficiencies, exact=True)
    if workload.mode == "inference" and workload.model.kind != "decoder":  # one batch of `batch` requests per step
        return figures(workload.with_(batch=1), gpu_figures, workload.num_gpus, Targets(users=workload.batch),
                       engine=engine, efficiency=efficiencies, exact=True)
    if workload.mode in ("training", "lora", "qlora"):
        t = Targets(tokens=float(workload.train_tokens or workload.train_samples) or None)
        return figures(workload.with_(batch=workload.micro_batch), gpu_figures, workload.num_gpus, t, engine=engine,
                       efficiency=efficiencies, exact=True)
    return None


__all__ = ["Figures", "figures", "layout_figures"]
