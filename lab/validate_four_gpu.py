#!/usr/bin/env python3
"""Ground truth on four GPUs of one node: per-GPU peak memory, step time and tokens/s of training in
the layouts users run with plain PyTorch, and of tensor-parallel decode, for comparison with
`gpuadvisor estimate` (tools/compare_four_gpu.py).

Run from the repo root on a machine with 4 GPUs (each case is its own torchrun under a time limit, so
one that fails or hangs cannot take the others with it; the most telling cases run first, and a case
that no longer fits the budget is skipped and says so):

  python3 -m lab.validate_four_gpu --budget-s 240          # all cases -> $OUT/four_gpu.json
  python3 -m lab.validate_four_gpu --cases ddp-1b,tp4-sp-8b
  python3 -m lab.validate_four_gpu --tiny --device cpu     # logic check of every case: tiny model, gloo

Models (lab/four_gpu_model.py): Llama-3.2-1B and Llama-3.1-8B shapes, random weights, no download;
`--layers N` cuts the 8B model to N decoder layers (recorded in each case's config and notes).
Training is bf16 compute over fp32 master weights and AdamW (FSDP2: MixedPrecisionPolicy bf16 params,
fp32 reduce; DDP, TP, PP: bf16 autocast), the estimator's default. Step time: the median of 5 steps
after 2 warm-up steps, timed with CUDA events, the slowest rank counting; peak: the largest
torch.cuda.max_memory_allocated over the ranks, over the timed steps (optimizer states in place).
Serving: a CUDA-graph decode loop over a hand-split tensor-parallel 8B model (an explicit all-reduce
after the attention and MLP outputs), batches 8 and 32, 1,024 tokens of context, the median of 20
graph replays. On the CPU (gloo) the same code runs eagerly; what cannot run there says why.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

WARMUP, STEPS, DECODE_STEPS = 2, 5, 20
GiB = 2**30


@dataclass(frozen=True)
class Case:
    """One measured configuration. `micro_batch` is per data-parallel rank (per micro-batch under PP)."""

    kind: str  # fsdp | ddp | lora | tp | pp | tp_dp | vision | serve
    model: str  # 8b | 1b | resnet50
    micro_batch: int
    seq: int
    checkpointing: bool = False
    reshard_after_forward: bool = True  # FSDP2; False keeps gathered params from forward to backward (ZeRO-2)
    tp: int = 1
    pp: int = 1
    microbatches: int = 1  # pipeline: micro-batches per step
    lora_rank: int = 0
    nproc: int = 4
    serve_batches: tuple[int, ...] = ()
    limit_s: int = 100  # this case's torchrun time limit
    layout: str = ""


CASES: dict[str, Case] = {  # the most telling first: a budget cut drops the tail
    "fsdp2-8b-ac": Case("fsdp", "8b", 2, 2048, checkpointing=True, layout="FSDP2 full shard x4, per-layer "
                        "fully_shard, activation checkpointing"),
    "fsdp2-8b": Case("fsdp", "8b", 1, 2048, layout="FSDP2 full shard x4, per-layer fully_shard"),
    "ddp-1b": Case("ddp", "1b", 4, 2048, limit_s=80, layout="DDP x4, bf16 autocast"),
    "zero2-8b-ac": Case("fsdp", "8b", 2, 2048, checkpointing=True, reshard_after_forward=False,
                        layout="FSDP2 shard-grad-op (reshard_after_forward=False) x4, activation checkpointing"),
    "lora-fsdp-8b": Case("lora", "8b", 2, 2048, checkpointing=True, lora_rank=16,
                         layout="LoRA r16 (all linear) on an FSDP2-sharded frozen bf16 base x4, checkpointing"),
    "tp4-sp-8b": Case("tp", "8b", 2, 2048, tp=4, layout="TP4 + sequence parallel (DTensor parallelize_module)"),
    "pp4-1f1b-8b": Case("pp", "8b", 1, 2048, pp=4, microbatches=8, checkpointing=True,
                        layout="PP4 1F1B (torch.distributed.pipelining), 8 micro-batches, checkpointing"),
    "tp2xdp2-8b": Case("tp_dp", "8b", 1, 2048, tp=2, layout="2x2 mesh: TP2 (+SP) x FSDP2 over dp2"),
    "resnet50-ddp": Case("vision", "resnet50", 128, 0, limit_s=80,
                         layout="DDP x4, channels-last, bf16 autocast, AdamW"),
    "serve-tp2-8b": Case("serve", "8b", 0, 1024, tp=2, nproc=2, serve_batches=(8, 32), limit_s=80,
                         layout="TP2 decode, CUDA graph, KV cache bf16"),
    "serve-tp4-8b": Case("serve", "8b", 0, 1024, tp=4, serve_batches=(8, 32), limit_s=80,
                         layout="TP4 decode, CUDA graph, KV cache bf16"),
    # two-GPU variant of the TP case, for a node of two (what is lent when four-GPU kinds are not)
    "tp2-sp-8b": Case("tp", "8b", 2, 2048, tp=2, nproc=2, layout="TP2 + sequence parallel (DTensor "
                      "parallelize_module)"),
}
TINY_SHAPE = {"micro_batch": 2, "seq": 32, "serve_ctx": 16, "image": 32}


def global_batch(case: Case) -> int:
    if case.kind == "pp":
        return case.micro_batch * case.microbatches
    dp = case.nproc // (case.tp * case.pp)
    return case.micro_batch * dp


# ---- one case, inside torchrun -------------------------------------------------------------------------------


@dataclass
class Ctx:
    name: str
    case: Case
    tiny: bool
    cuda: bool
    rank: int
    world: int
    dev: Any
    cfg: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def _config(ctx: Ctx, layers: int | None) -> dict:
    from lab.four_gpu_model import LLAMA_1B, LLAMA_8B, TINY

    if ctx.tiny:
        return dict(TINY)
    cfg = dict(LLAMA_8B if ctx.case.model == "8b" else LLAMA_1B)
    if layers and ctx.case.model == "8b" and layers < cfg["num_hidden_layers"]:
        ctx.notes.append(f"8B cut to {layers} of {cfg['num_hidden_layers']} layers (time budget)")
        cfg["num_hidden_layers"] = layers
    return cfg


def _materialize(model: Any, dev: Any) -> None:
    """Meta-device parameters to real memory on `dev`, random values; the tie of head and embedding kept."""
    from lab.four_gpu_model import init_weights_fast

    model.to_empty(device=dev)
    if getattr(model, "lm_head", None) is not None and model.cfg.get("tie_word_embeddings") \
            and model.embed_tokens is not None:
        model.lm_head.weight = model.embed_tokens.weight
    init_weights_fast(model)


def _adamw(params: list, cuda: bool) -> tuple[list, str]:
    """AdamW fused where it takes the parameters (plain and DTensor apart: one multi-tensor step cannot
    mix them), else foreach."""
    import torch
    from torch.distributed.tensor import DTensor

    groups = [[p for p in params if isinstance(p, DTensor)], [p for p in params if not isinstance(p, DTensor)]]
    opts, name = [], "adamw-fused"
    for group in (g for g in groups if g):
        try:
            if not cuda:
                raise ValueError("fused AdamW needs CUDA")
            opts.append(torch.optim.AdamW(group, lr=1e-5, fused=True))
        except (RuntimeError, ValueError, TypeError):
            opts.append(torch.optim.AdamW(group, lr=1e-5, foreach=True))
            name = "adamw-foreach"
    return opts, name


def _lm_loss(logits: Any, ids: Any) -> Any:
    import torch.nn.functional as F

    return F.cross_entropy(logits[:, :-1].flatten(0, 1).float(), ids[:, 1:].flatten())


def _tp_plan(model: Any, mesh: Any, sequence_parallel: bool = True) -> None:
    """Megatron split with sequence parallel, as torchtitan writes it: q/k/v and gate/up column-wise,
    o and down row-wise with sequence-sharded outputs, norms sequence-parallel, embedding row-wise,
    head column-wise with vocab-sharded logits (loss_parallel)."""
    from torch.distributed.tensor import Replicate, Shard
    from torch.distributed.tensor.parallel import (
        ColwiseParallel,
        PrepareModuleInput,
        RowwiseParallel,
        SequenceParallel,
        parallelize_module,
    )

    parallelize_module(model, mesh, {
        "embed_tokens": RowwiseParallel(input_layouts=Replicate(), output_layouts=Shard(1)),
        "norm": SequenceParallel(),
        "lm_head": ColwiseParallel(input_layouts=Shard(1), output_layouts=Shard(-1), use_local_output=False),
    })
    for block in model.layers.values():
        parallelize_module(block, mesh, {
            "input_layernorm": SequenceParallel(),
            "self_attn": PrepareModuleInput(input_layouts=(Shard(1), None, None),
                                            desired_input_layouts=(Replicate(), None, None)),
            "self_attn.q_proj": ColwiseParallel(), "self_attn.k_proj": ColwiseParallel(),
            "self_attn.v_proj": ColwiseParallel(), "self_attn.o_proj": RowwiseParallel(output_layouts=Shard(1)),
            "post_attention_layernorm": SequenceParallel(),
            "mlp": PrepareModuleInput(input_layouts=(Shard(1),), desired_input_layouts=(Replicate(),)),
            "mlp.gate_proj": ColwiseParallel(), "mlp.up_proj": ColwiseParallel(),
            "mlp.down_proj": RowwiseParallel(output_layouts=Shard(1)),
        })


def _timed(ctx: Ctx, step: Any, rec: dict, warmup: int = WARMUP, steps: int = STEPS) -> None:
    """Warm-up, then `steps` timed steps (CUDA events on the GPU); the peak over the timed steps."""
    import torch
    import torch.distributed as dist

    for _ in range(warmup):
        step()
    if ctx.cuda:
        torch.cuda.synchronize()
        rec["static_bytes"] = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
    times = []
    for _ in range(steps):
        dist.barrier()
        if ctx.cuda:
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            step()
            e.record()
            e.synchronize()
            times.append(s.elapsed_time(e))
        else:
            t = time.perf_counter()
            step()
            times.append((time.perf_counter() - t) * 1e3)
    rec["times_ms"] = [round(t, 3) for t in times]
    rec["step_ms"] = statistics.median(times)
    if os.environ.get("FOUR_GPU_PROFILE") and ctx.cuda:
        rec["profile"] = _profile_step(step)
    if ctx.cuda:
        rec["peak_bytes"] = torch.cuda.max_memory_allocated()
        rec["reserved_bytes"] = torch.cuda.max_memory_reserved()


def _kernel_kind(name: str) -> str:
    low = name.lower()
    if "nccl" in low:
        return "nccl"
    if "flash" in low or "fmha" in low or "attention" in low:
        return "attention"
    if any(k in low for k in ("gemm", "nvjet", "xmma", "cutlass", "sm90_", "sm80_")):
        return "gemm"
    return "other"


def _profile_step(step: Any) -> dict:
    """One more step under torch.profiler (FOUR_GPU_PROFILE=1): the GPU time by kernel kind (NCCL, GEMM,
    attention, other) beside the step's wall time and the host's aten op count, to tell a host-bound step
    (DTensor dispatch) from a communication-bound one."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    torch.cuda.synchronize()
    t0 = time.perf_counter()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        step()
        torch.cuda.synchronize()
    wall = time.perf_counter() - t0
    kinds: dict[str, float] = {}
    aten_ops = 0
    top: list[tuple[str, float]] = []
    for e in prof.key_averages():
        dev = getattr(e, "self_device_time_total", 0.0) or 0.0
        if e.key.startswith("aten::"):
            aten_ops += int(e.count)
        if dev > 0 and getattr(e, "device_type", None) is not None and "CUDA" in str(e.device_type):
            kinds[_kernel_kind(e.key)] = kinds.get(_kernel_kind(e.key), 0.0) + dev / 1e3
            top.append((e.key[:90], dev / 1e3))
    top.sort(key=lambda kv: -kv[1])
    return {"wall_ms_profiled": round(wall * 1e3, 2), "gpu_ms_by_kind": {k: round(v, 3) for k, v in kinds.items()},
            "aten_ops": aten_ops, "top_kernels_ms": [[k, round(v, 3)] for k, v in top[:12]]}


def _train_lm(ctx: Ctx, rec: dict, layers: int | None) -> None:
    import torch
    import torch.distributed as dist

    from lab.four_gpu_model import Llama, add_lora

    case, dev, bf16 = ctx.case, ctx.dev, __import__("torch").bfloat16
    cfg = ctx.cfg = _config(ctx, layers)
    mb, seq = (TINY_SHAPE["micro_batch"], TINY_SHAPE["seq"]) if ctx.tiny else (case.micro_batch, case.seq)
    rec.update(micro_batch=mb, seq=seq)
    autocast = False
    mesh_dp_rank = ctx.rank
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

    mp = MixedPrecisionPolicy(param_dtype=bf16, reduce_dtype=torch.float32)
    with torch.device("meta"):
        model = Llama(cfg, checkpointing=case.checkpointing)
    if case.kind == "fsdp":
        for block in model.layers.values():
            fully_shard(block, mp_policy=mp, reshard_after_forward=case.reshard_after_forward)
        fully_shard(model, mp_policy=mp, reshard_after_forward=case.reshard_after_forward)
        _materialize(model, dev)
    elif case.kind == "lora":
        model.to(bf16)  # the frozen base in bf16, as PEFT users load it; adapters fp32
        rec["adapter_params"] = add_lora(model, case.lora_rank)
        for block in model.layers.values():
            fully_shard(block, mp_policy=mp)
        fully_shard(model, mp_policy=mp)
        _materialize(model, dev)
        with torch.no_grad():
            for n, p in model.named_parameters():
                if "lora_B" in n:
                    (p.to_local() if hasattr(p, "to_local") else p).zero_()
    elif case.kind == "ddp":
        from torch.nn.parallel import DistributedDataParallel as DDP

        _materialize(model, dev)
        model = DDP(model, device_ids=[dev.index] if ctx.cuda else None)
        autocast = True
    elif case.kind == "tp":
        from torch.distributed.device_mesh import init_device_mesh

        _tp_plan(model, init_device_mesh(dev.type, (ctx.world,)))
        _materialize(model, dev)
        autocast = True
        mesh_dp_rank = 0
    elif case.kind == "tp_dp":
        from torch.distributed.device_mesh import init_device_mesh

        mesh = init_device_mesh(dev.type, (ctx.world // case.tp, case.tp), mesh_dim_names=("dp", "tp"))
        _tp_plan(model, mesh["tp"])
        for block in model.layers.values():
            fully_shard(block, mesh=mesh["dp"], mp_policy=mp)
        fully_shard(model, mesh=mesh["dp"], mp_policy=mp)
        _materialize(model, dev)
        mesh_dp_rank = mesh.get_local_rank("dp")
    else:
        raise ValueError(case.kind)
    trainable = [p for p in model.parameters() if p.requires_grad]
    opts, rec["optimizer"] = _adamw(trainable, ctx.cuda)
    g = torch.Generator(device="cpu").manual_seed(1 + mesh_dp_rank)  # same data on the ranks of a TP group
    x = torch.randint(3, cfg["vocab_size"], (mb, seq), generator=g).to(dev)
    tensor_parallel = case.kind in ("tp", "tp_dp")

    def step() -> None:
        for o in opts:
            o.zero_grad(set_to_none=True)
        with torch.autocast(device_type=dev.type, dtype=bf16, enabled=autocast):
            logits = model(x)
        if tensor_parallel:
            from torch.distributed.tensor.parallel import loss_parallel

            with loss_parallel():
                loss = _lm_loss(logits, x)
                del logits
                loss.backward()
        else:
            loss = _lm_loss(logits, x)
            del logits
            loss.backward()
        for o in opts:
            o.step()
        rec["loss"] = float(loss.detach().float().item()) if not hasattr(loss, "full_tensor") else \
            float(loss.full_tensor().item())

    dist.barrier()
    _timed(ctx, step, rec)


def _train_pipeline(ctx: Ctx, rec: dict, layers: int | None) -> None:
    import torch
    import torch.nn.functional as F
    from torch.distributed.pipelining import PipelineStage, Schedule1F1B

    from lab.four_gpu_model import Llama

    case, dev = ctx.case, ctx.dev
    cfg = ctx.cfg = dict(_config(ctx, layers), tie_word_embeddings=False)
    if ctx.case.model == "1b" and not ctx.tiny:
        ctx.notes.append("head untied from the embedding (first and last stage differ)")
    mb, seq = (TINY_SHAPE["micro_batch"], TINY_SHAPE["seq"]) if ctx.tiny else (case.micro_batch, case.seq)
    n_micro = case.microbatches
    rec.update(micro_batch=mb, seq=seq, microbatches=n_micro)
    n_layers, stages = cfg["num_hidden_layers"], ctx.world
    per = [n_layers // stages + (1 if i < n_layers % stages else 0) for i in range(stages)]
    start = sum(per[:ctx.rank])
    ids = list(range(start, start + per[ctx.rank]))
    rec["stage_layers"] = ids
    first, last = ctx.rank == 0, ctx.rank == stages - 1
    with torch.device("meta"):
        body = Llama(cfg, layer_ids=ids, first=first, last=last, checkpointing=case.checkpointing)
    _materialize(body, dev)

    class Autocast(torch.nn.Module):
        """bf16 autocast inside the stage, so the schedule's forward and backward both see it."""

        def __init__(self, inner: torch.nn.Module) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            with torch.autocast(device_type=dev.type, dtype=torch.bfloat16):
                return self.inner(x)

    stage_mod = Autocast(body)
    stage = PipelineStage(stage_mod, ctx.rank, stages, dev)

    def loss_fn(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(logits.flatten(0, 1).float(), target.flatten())

    schedule = Schedule1F1B(stage, n_microbatches=n_micro, loss_fn=loss_fn)
    opts, rec["optimizer"] = _adamw(list(body.parameters()), ctx.cuda)
    g = torch.Generator(device="cpu").manual_seed(1)
    x = torch.randint(3, cfg["vocab_size"], (mb * n_micro, seq), generator=g).to(dev)
    target = torch.roll(x, -1, dims=1)

    def step() -> None:
        for o in opts:
            o.zero_grad(set_to_none=True)
        if first:
            schedule.step(x)
        elif last:
            losses: list = []
            schedule.step(target=target, losses=losses)
            rec["loss"] = float(torch.stack([t.detach().float() for t in losses]).mean().item())
        else:
            schedule.step()
        for o in opts:
            o.step()

    _timed(ctx, step, rec)


def _train_vision(ctx: Ctx, rec: dict) -> None:
    import torch
    import torch.nn.functional as F
    from torch.nn.parallel import DistributedDataParallel as DDP

    try:
        import torchvision
    except ImportError as e:
        raise Skip(f"torchvision not installed here ({e})") from None
    mb = TINY_SHAPE["micro_batch"] if ctx.tiny else ctx.case.micro_batch
    size = TINY_SHAPE["image"] if ctx.tiny else 224
    rec.update(micro_batch=mb, image=[3, size, size])
    model = torchvision.models.resnet50().to(ctx.dev, memory_format=torch.channels_last)
    model = DDP(model, device_ids=[ctx.dev.index] if ctx.cuda else None)
    opts, rec["optimizer"] = _adamw(list(model.parameters()), ctx.cuda)  # what the estimator traces with
    g = torch.Generator(device="cpu").manual_seed(1 + ctx.rank)
    x = torch.randn(mb, 3, size, size, generator=g).to(ctx.dev).contiguous(memory_format=torch.channels_last)
    y = torch.randint(0, 1000, (mb,), generator=g).to(ctx.dev)

    def step() -> None:
        for o in opts:
            o.zero_grad(set_to_none=True)
        with torch.autocast(device_type=ctx.dev.type, dtype=torch.bfloat16):
            loss = F.cross_entropy(model(x), y)
        loss.backward()
        for o in opts:
            o.step()
        rec["loss"] = float(loss.detach().float().item())

    _timed(ctx, step, rec)


def _gqa_decode_attention(q: Any, k: Any, v: Any, mask: Any) -> Any:
    """One new token's attention over the KV cache, each query-head group against its KV head, without
    expanding K and V: capture-safe in a CUDA graph (SDPA's enable_gqa math path synchronizes to size a
    repeat_interleave, which invalidates the capture) and reading the cache once, as a decode kernel does.
    q: (b, heads, 1, hd); k, v: (b, kv, L, hd); mask: (1, 1, 1, L) True where attended."""
    import torch

    b, heads, _, hd = q.shape
    kv = k.shape[1]
    qg = q.view(b, kv, heads // kv, hd)  # (b, kv, g, hd)
    scores = (qg @ k.transpose(-1, -2)).float() * hd**-0.5  # (b, kv, g, L)
    scores = scores.masked_fill(~mask.view(1, 1, 1, -1), float("-inf"))
    probs = torch.softmax(scores, dim=-1).to(v.dtype)
    return (probs @ v).view(b, heads, 1, hd)  # (b, kv, g, hd) -> heads in q's order


class TPDecoder:
    """One rank's slice of a tensor-parallel Llama for decode: column-split q/k/v and gate/up, row-split o
    and down followed by an all-reduce, the embedding whole, the head split by vocabulary and gathered.
    A static KV cache and a position tensor make one decode step capturable as a CUDA graph."""

    def __init__(self, cfg: dict, tp: int, batch: int, max_len: int, dev: Any, dtype: Any) -> None:
        import torch

        from lab.four_gpu_model import rope_tables

        h, hd = cfg["hidden_size"], cfg["head_dim"]
        self.cfg, self.tp, self.hd = cfg, tp, hd
        self.heads, self.kv = cfg["num_attention_heads"] // tp, cfg["num_key_value_heads"] // tp
        inter, vocab = cfg["intermediate_size"] // tp, cfg["vocab_size"] // tp

        def w(*shape: int) -> torch.Tensor:
            return torch.empty(*shape, device=dev, dtype=dtype).normal_(0.0, 0.02)

        self.embed = w(cfg["vocab_size"], h)
        self.layers = [{"ln1": torch.ones(h, device=dev, dtype=dtype), "ln2": torch.ones(h, device=dev, dtype=dtype),
                        "qkv": w((self.heads + 2 * self.kv) * hd, h), "o": w(h, self.heads * hd),
                        "gate_up": w(2 * inter, h), "down": w(h, inter),
                        "k": torch.zeros(batch, self.kv, max_len, hd, device=dev, dtype=dtype),
                        "v": torch.zeros(batch, self.kv, max_len, hd, device=dev, dtype=dtype)}
                       for _ in range(cfg["num_hidden_layers"])]
        self.norm = torch.ones(h, device=dev, dtype=dtype)
        self.head = w(vocab, h)
        cos, sin = rope_tables(cfg, max_len, dev)
        self.cos, self.sin = cos.to(dtype), sin.to(dtype)
        self.positions = torch.arange(max_len, device=dev)
        self.tokens = torch.randint(3, cfg["vocab_size"], (batch, 1), device=dev)
        self.pos = torch.zeros((), dtype=torch.long, device=dev)
        self.gathered = torch.empty(tp * batch, vocab, device=dev, dtype=dtype)  # rank-major: (tp, b, vocab/tp)

    def step(self) -> None:
        import torch.distributed as dist
        import torch.nn.functional as F

        from lab.four_gpu_model import apply_rope

        b = self.tokens.shape[0]
        x = F.embedding(self.tokens, self.embed)  # (b, 1, h)
        # index_select, not self.cos[self.pos]: a 0-d index tensor becomes a Python int (a sync: no capture)
        at = self.pos.view(1)
        cos, sin = self.cos.index_select(0, at).view(1, 1, 1, -1), self.sin.index_select(0, at).view(1, 1, 1, -1)
        mask = (self.positions <= self.pos).view(1, 1, 1, -1)
        for L in self.layers:
            a = F.rms_norm(x, (x.shape[-1],), L["ln1"], 1e-5)
            q, k, v = (a @ L["qkv"].T).split([self.heads * self.hd, self.kv * self.hd, self.kv * self.hd], dim=-1)
            q = apply_rope(q.view(b, 1, self.heads, self.hd).transpose(1, 2), cos, sin)
            k = apply_rope(k.view(b, 1, self.kv, self.hd).transpose(1, 2), cos, sin)
            L["k"].index_copy_(2, self.pos.view(1), k)
            L["v"].index_copy_(2, self.pos.view(1), v.view(b, 1, self.kv, self.hd).transpose(1, 2))
            o = _gqa_decode_attention(q, L["k"], L["v"], mask)
            out = o.transpose(1, 2).reshape(b, 1, -1) @ L["o"].T
            if self.tp > 1:
                dist.all_reduce(out)
            x = x + out
            a = F.rms_norm(x, (x.shape[-1],), L["ln2"], 1e-5)
            gate, up = (a @ L["gate_up"].T).chunk(2, dim=-1)
            out = (F.silu(gate) * up) @ L["down"].T
            if self.tp > 1:
                dist.all_reduce(out)
            x = x + out
        logits = F.rms_norm(x, (x.shape[-1],), self.norm, 1e-5)[:, 0] @ self.head.T  # (b, vocab/tp)
        if self.tp > 1:
            dist.all_gather_into_tensor(self.gathered, logits.contiguous())
        else:
            self.gathered.copy_(logits)
        self.tokens.copy_(self.gathered.view(self.tp, b, -1).permute(1, 0, 2).reshape(b, -1).argmax(-1, keepdim=True))
        self.pos.add_(1)


def _serve(ctx: Ctx, rec: dict, layers: int | None) -> None:
    import torch
    import torch.distributed as dist

    cfg = ctx.cfg = _config(ctx, layers)
    case, dev = ctx.case, ctx.dev
    dtype = torch.bfloat16 if ctx.cuda else torch.float32
    ctx_len = TINY_SHAPE["serve_ctx"] if ctx.tiny else case.seq
    steps = 5 if ctx.tiny else DECODE_STEPS
    rec.update(context=ctx_len, decode_steps=steps, batches={})
    if not ctx.cuda:
        ctx.notes.append("CUDA graphs need CUDA: the decode step ran eagerly on the CPU (gloo all-reduce)")
    for batch in case.serve_batches:
        if ctx.cuda:
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats()
        model = TPDecoder(cfg, case.tp, batch, ctx_len + steps + 8, dev, dtype)
        out: dict = {}
        with torch.no_grad():
            model.pos.fill_(ctx_len)
            graph = None
            if ctx.cuda:
                side = torch.cuda.Stream()
                side.wait_stream(torch.cuda.current_stream())
                with torch.cuda.stream(side):
                    for _ in range(3):  # warm-up (NCCL communicators, cuBLAS handles) before capture
                        model.step()
                torch.cuda.current_stream().wait_stream(side)
                torch.cuda.synchronize()
                dist.barrier()
                graph = torch.cuda.CUDAGraph()
                with torch.cuda.graph(graph, capture_error_mode="thread_local"):  # NCCL's watchdog thread
                    model.step()
                model.pos.fill_(ctx_len)
                torch.cuda.synchronize()
            run = graph.replay if graph is not None else model.step
            times = []
            dist.barrier()
            for _ in range(steps):
                if ctx.cuda:
                    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    s.record()
                    run()
                    e.record()
                    e.synchronize()
                    times.append(s.elapsed_time(e))
                else:
                    t = time.perf_counter()
                    run()
                    times.append((time.perf_counter() - t) * 1e3)
        out["times_ms"] = [round(t, 4) for t in times]
        out["step_ms"] = statistics.median(times)
        out["cuda_graph"] = graph is not None
        if ctx.cuda:
            out["peak_bytes"] = torch.cuda.max_memory_allocated()
        rec["batches"][str(batch)] = out
        del model, graph
    first = rec["batches"][str(case.serve_batches[0])]
    rec["step_ms"], rec["peak_bytes"] = first["step_ms"], first.get("peak_bytes")
    rec["peak_bytes"] = max((b.get("peak_bytes") or 0) for b in rec["batches"].values()) or None


class Skip(Exception):
    """This case cannot run here (the reason is recorded, not an error)."""


def run_case(name: str, tiny: bool, device: str, out_dir: Path, layers: int | None, limit_s: int) -> int:
    import torch
    import torch.distributed as dist

    case = CASES[name]
    cuda = device == "cuda"
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local = int(os.environ.get("LOCAL_RANK", rank))
    if cuda:
        torch.cuda.set_device(local)
    dev = torch.device("cuda", local) if cuda else torch.device("cpu")
    dist.init_process_group("nccl" if cuda else "gloo", timeout=timedelta(seconds=max(30, limit_s - 20)),
                            **({"device_id": dev} if cuda else {}))
    ctx = Ctx(name, case, tiny, cuda, rank, world, dev)
    rec: dict = {"case": name, "rank": rank, "world_size": world}
    t0 = time.perf_counter()
    try:
        if case.kind in ("fsdp", "ddp", "lora", "tp", "tp_dp"):
            _train_lm(ctx, rec, layers)
        elif case.kind == "pp":
            _train_pipeline(ctx, rec, layers)
        elif case.kind == "vision":
            _train_vision(ctx, rec)
        elif case.kind == "serve":
            _serve(ctx, rec, layers)
    except Skip as e:
        rec["skipped"] = str(e)
    except Exception as e:  # the case fails on its own; the driver goes on with the next
        rec["error"] = f"{type(e).__name__}: {' '.join(str(e).split())[:400]}"
    rec["config"] = ctx.cfg or None
    rec["notes"] = ctx.notes
    rec["wall_s"] = round(time.perf_counter() - t0, 2)
    from lab.torchrun_case import write_case

    return write_case(rec, rank, world, out_dir, name)


# ---- the driver: one torchrun per case -------------------------------------------------------------------------


def environment(device: str) -> dict:
    from lab.torchrun_case import environment as read

    return read(device, ("torch", "torchvision"))


def collect(name: str, entry: dict, ranks: list[dict]) -> dict:
    """The case's figures from its ranks: the slowest rank's median step, the largest peak, tokens/s."""
    case = CASES[name]
    entry["ranks"] = ranks
    good = [r for r in ranks if r and not r.get("error") and not r.get("skipped")]
    errors = [r.get("error") for r in ranks if r and r.get("error")]
    skipped = [r.get("skipped") for r in ranks if r and r.get("skipped")]
    if errors:
        entry["error"] = errors[0]
    elif skipped:
        entry["skipped"] = skipped[0]
    r0 = ranks[0] if ranks else {}
    entry.update(config=r0.get("config"), notes=r0.get("notes", []), micro_batch=r0.get("micro_batch"),
                 seq=r0.get("seq"), optimizer=r0.get("optimizer"))
    if case.kind == "serve":
        entry["batches"] = {}
        for b in case.serve_batches:
            per = [r["batches"][str(b)] for r in good if str(b) in (r.get("batches") or {})]
            if per:
                step = max(p["step_ms"] for p in per)
                entry["batches"][str(b)] = {"step_ms": step, "tokens_per_s": b / (step / 1e3),
                                            "peak_bytes": max((p.get("peak_bytes") or 0) for p in per) or None,
                                            "cuda_graph": all(p.get("cuda_graph") for p in per)}
        entry["context"] = r0.get("context")
    steps = [r["step_ms"] for r in good if r.get("step_ms")]
    if steps and not errors:
        entry["step_ms"] = max(steps)
        peaks = [r["peak_bytes"] for r in good if r.get("peak_bytes")]
        entry["peak_bytes"] = max(peaks) if peaks else None
        if case.kind != "serve" and entry.get("micro_batch"):
            entry["global_batch"] = entry["micro_batch"] * (case.microbatches if case.kind == "pp"
                                                            else case.nproc // (case.tp * case.pp))
        if case.kind == "serve":
            entry["tokens_per_s"] = case.serve_batches[0] / (entry["step_ms"] / 1e3)
        elif case.kind == "vision" and entry.get("global_batch"):
            entry["images_per_s"] = entry["global_batch"] / (entry["step_ms"] / 1e3)
        elif entry.get("seq") and entry.get("global_batch"):
            entry["tokens_per_s"] = entry["global_batch"] * entry["seq"] / (entry["step_ms"] / 1e3)
    return entry


def summary(results: list[dict]) -> list[str]:
    head = f"{'case':14} {'GPUs':>4} {'batch':>5} {'seq':>5} {'step ms':>9} {'peak GiB':>8} {'tok/s':>9}  status"
    lines = [head]
    for c in results:
        ms = f"{c['step_ms']:.1f}" if c.get("step_ms") else "-"
        pk = f"{c['peak_bytes'] / GiB:.2f}" if c.get("peak_bytes") else "-"
        rate = c.get("tokens_per_s") or c.get("images_per_s")
        tps = f"{rate:,.0f}" if rate else "-"
        status = (f"error: {c['error'][:90]}" if c.get("error") else f"skipped: {c['skipped'][:90]}"
                  if c.get("skipped") else "ok")
        notes = "; ".join(c.get("notes") or [])
        lines.append(f"{c['case']:14} {c.get('nproc', '-'):>4} {c.get('global_batch') or '-':>5} "
                     f"{c.get('seq') or '-':>5} {ms:>9} {pk:>8} {tps:>9}  {status}" + (f" ({notes})" if notes else ""))
        for b, v in (c.get("batches") or {}).items():
            lines.append(f"{'  batch ' + b:14} {'':>4} {b:>5} {c.get('context') or '-':>5} {v['step_ms']:>9.2f} "
                         f"{(v.get('peak_bytes') or 0) / GiB:>8.2f} {v['tokens_per_s']:>9,.0f}  "
                         f"{'CUDA graph' if v.get('cuda_graph') else 'eager'}")
    return lines


def drive(args: argparse.Namespace) -> int:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    names = [n.strip() for n in args.cases.split(",")] if args.cases else list(CASES)
    unknown = [n for n in names if n not in CASES]
    if unknown:
        print(f"unknown case(s) {', '.join(unknown)}; known: {', '.join(CASES)}", file=sys.stderr)
        return 2
    env = environment(args.device)
    env.update(budget_s=args.budget_s, layers=args.layers, tiny=args.tiny)
    print(json.dumps(env), flush=True)
    t_start = time.perf_counter()
    results: list[dict] = []
    for i, name in enumerate(names):
        case = CASES[name]
        entry: dict = {"case": name, "kind": case.kind, "model": case.model, "layout": case.layout,
                       "nproc": case.nproc, "spec": asdict(case), "held_out": i % 3 == 2,
                       "global_batch": global_batch(case) if not args.tiny else None}
        left = args.budget_s - (time.perf_counter() - t_start) if args.budget_s else None
        limit = case.limit_s if not args.tiny else max(case.limit_s, 150)
        if left is not None:
            if left < args.min_case_s:
                entry["skipped"] = f"budget: {left:.0f} s left of {args.budget_s} s, under {args.min_case_s} s"
                results.append(entry)
                print("\n".join(summary([entry])[1:]), flush=True)
                continue
            limit = int(min(limit, left))
        t0 = time.perf_counter()
        cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={case.nproc}",
               "-m", "lab.validate_four_gpu", "--case", name, "--device", args.device,
               "--out", str(out.resolve()), "--case-limit", str(limit)]
        if args.tiny:
            cmd.append("--tiny")
        if args.layers:
            cmd += ["--layers", str(args.layers)]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True,  # its own group: a hung case is killed whole
                                cwd=Path(__file__).resolve().parents[1])  # the repo root: `-m lab.…`
        try:
            stdout, stderr = proc.communicate(timeout=limit)
            entry["returncode"] = proc.returncode
            if proc.returncode:  # an abort at teardown after the results were written is only noted
                entry["exit_note"] = f"torchrun exit {proc.returncode}: " + (stderr or stdout)[-600:]
        except subprocess.TimeoutExpired:
            entry["error"] = f"timed out after {limit} s"
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            with contextlib.suppress(Exception):
                proc.communicate(timeout=20)
        f = out / f"case-{name}.json"
        if f.exists():
            collect(name, entry, json.loads(f.read_text()))
            f.unlink()
        elif "error" not in entry:
            entry["error"] = entry.get("exit_note", "no results written")
        entry["wall_s"] = round(time.perf_counter() - t0, 1)
        results.append(entry)
        print("\n".join(summary([entry])[1:]), flush=True)
        (out / "four_gpu.json").write_text(json.dumps({"env": env, "cases": results}, indent=1))
    (out / "four_gpu.json").write_text(json.dumps({"env": env, "cases": results}, indent=1))
    print("\n".join(summary(results)))
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", help=f"comma-separated: {', '.join(CASES)} (default: all, in this order)")
    ap.add_argument("--case", help=argparse.SUPPRESS)  # internal: one case inside torchrun
    ap.add_argument("--case-limit", type=int, default=100, help=argparse.SUPPRESS)
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    ap.add_argument("--tiny", action="store_true", help="tiny model (logic check on CPU with gloo)")
    ap.add_argument("--layers", type=int, help="cut the 8B model to this many decoder layers (recorded)")
    ap.add_argument("--budget-s", type=float, default=0, help="seconds for all cases; the rest is skipped")
    ap.add_argument("--min-case-s", type=float, default=35, help="skip a case with less than this left")
    ap.add_argument("--out", default=os.environ.get("OUT", "out"))
    args = ap.parse_args()
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
    os.environ.setdefault("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")
    os.environ.setdefault("NVSHMEM_DISABLE_NVLS", "1")
    if args.layers is not None and not 1 <= args.layers <= 32:
        print(f"--layers {args.layers}: expected 1 to 32", file=sys.stderr)
        return 2
    if args.case:
        return run_case(args.case, args.tiny, args.device, Path(args.out), args.layers, args.case_limit)
    return drive(args)


if __name__ == "__main__":
    sys.exit(main())
