#!/usr/bin/env python3
"""Per-GPU peak memory and step time of a 7B-class model trained on 2 GPUs: DDP, FSDP2 full
shard (pure bf16 and fp32-master mixed precision) and tensor parallel 2, for comparison with
`gpuadvisor estimate ... --gpus 2 --sharding fsdp` etc. (tools/compare_multigpu.py).

Run from the repo root on a machine with 2 GPUs (each case runs in its own torchrun, so one that
fails or hangs cannot take the others with it; 90 s at most each, about 3 minutes in all on
2 H200s):

  python3 -m lab.validate_multigpu                     # all cases -> $OUT/multigpu.json
  python3 -m lab.validate_multigpu --cases ddp,tp2     # some of them
  python3 -m lab.validate_multigpu --tiny --device cpu # logic check: tiny model, gloo, CPU

Random weights (Llama-2-7B config, full multi-head attention), no download; batch 2 x 2048
tokens per data-parallel rank, AdamW fused (the DTensor-aware foreach where fused is refused).
Peaks are torch.cuda.max_memory_allocated per rank; times are the median of 5 steps with CUDA
events after 2 warm-up steps, the slower rank counting.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

LLAMA2_7B = {"model_type": "llama", "num_hidden_layers": 32, "hidden_size": 4096, "num_attention_heads": 32,
             "num_key_value_heads": 32, "intermediate_size": 11008, "vocab_size": 32000,
             "tie_word_embeddings": False}
TINY = {"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
        "num_key_value_heads": 4, "intermediate_size": 128, "vocab_size": 1000, "tie_word_embeddings": False}
# name: (strategy, fp32 master weights under bf16 autocast / mixed-precision policy)
CASES = {  # the most telling first, in case the caller's time limit cuts the run short
    "fsdp": ("fsdp", False),
    "tp2": ("tp", False),
    "ddp": ("ddp", False),
    "fsdp-mixed": ("fsdp", True),
    "tp2-b8s1024": ("tp", False),  # a second tensor-parallel shape: 8 x 1024 tokens
    "ddp-b4s1024": ("ddp", False),
}
SHAPES = {"tp2-b8s1024": (8, 1024), "ddp-b4s1024": (4, 1024)}  # (micro-batch, seq) where not the default
MICRO_BATCH, SEQ, WARMUP, STEPS = 2, 2048, 2, 5
CASE_TIMEOUT_S = 90  # per case; 4 cases stay under 6 minutes even if all hang


# ---- one case, inside torchrun -------------------------------------------------------------------
def _build(cfg: dict, dtype, device):
    import torch
    import transformers

    cfg = dict(cfg)
    hf = transformers.AutoConfig.for_model(cfg.pop("model_type"), **cfg, attention_dropout=0.0)
    with torch.device(device):
        model = transformers.AutoModelForCausalLM.from_config(hf, dtype=dtype, attn_implementation="sdpa")
    return model, hf


class _Optimizers:
    """AdamW over DTensor parameters and, separately, over plain ones: one multi-tensor step
    cannot mix the two (tensor parallel leaves the norms as plain tensors)."""

    def __init__(self, params, device: str):
        import torch
        from torch.distributed.tensor import DTensor

        groups = [[p for p in params if isinstance(p, DTensor)], [p for p in params if not isinstance(p, DTensor)]]
        self.opts, self.name = [], "adamw-fused"
        for group in (g for g in groups if g):
            try:
                if device != "cuda":
                    raise ValueError("fused AdamW needs CUDA")
                self.opts.append(torch.optim.AdamW(group, lr=1e-5, fused=True))
            except (RuntimeError, ValueError, TypeError):
                self.opts.append(torch.optim.AdamW(group, lr=1e-5, foreach=True))
                self.name = "adamw-foreach"

    def zero_grad(self, set_to_none: bool = True) -> None:
        for o in self.opts:
            o.zero_grad(set_to_none=set_to_none)

    def step(self) -> None:
        for o in self.opts:
            o.step()


def _tensor_parallel(model, mesh) -> None:
    """Megatron-style split of every block: q/k/v and gate/up column-wise, o and down row-wise;
    embedding row-wise (vocab), LM head column-wise with vocab-sharded logits (loss_parallel)."""
    from torch.distributed.tensor import Replicate, Shard
    from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

    plan = {"model.embed_tokens": RowwiseParallel(input_layouts=Replicate()),
            "lm_head": ColwiseParallel(output_layouts=Shard(-1), use_local_output=False)}
    for i in range(len(model.model.layers)):
        p = f"model.layers.{i}."
        plan.update({p + "self_attn.q_proj": ColwiseParallel(), p + "self_attn.k_proj": ColwiseParallel(),
                     p + "self_attn.v_proj": ColwiseParallel(), p + "self_attn.o_proj": RowwiseParallel(),
                     p + "mlp.gate_proj": ColwiseParallel(), p + "mlp.up_proj": ColwiseParallel(),
                     p + "mlp.down_proj": RowwiseParallel()})
    parallelize_module(model, mesh, plan)


def tp_loss_backward(model, x):
    """Forward and backward of a model split by _tensor_parallel: the vocab-parallel cross-entropy over
    its sharded logits (no rank gathers the whole vocabulary). Returns the loss."""
    import torch
    from torch.distributed.tensor.parallel import loss_parallel

    with loss_parallel():
        logits = model(input_ids=x, use_cache=False).logits
        loss = torch.nn.functional.cross_entropy(logits[:, :-1].flatten(0, 1), x[:, 1:].flatten())
        del logits
        loss.backward()
    return loss


def run_case(name: str, tiny: bool, device: str, out_dir: Path) -> int:
    import torch
    import torch.distributed as dist

    strategy, mixed = CASES[name]
    cuda = device == "cuda"
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local = int(os.environ.get("LOCAL_RANK", rank))
    if cuda:
        torch.cuda.set_device(local)
    dist.init_process_group("nccl" if cuda else "gloo", timeout=timedelta(seconds=CASE_TIMEOUT_S - 25))
    dev = torch.device("cuda", local) if cuda else torch.device("cpu")
    cfg = TINY if tiny else LLAMA2_7B
    mb, seq = (2, 32) if tiny else SHAPES.get(name, (MICRO_BATCH, SEQ))
    rec: dict = {"case": name, "strategy": strategy, "mixed_precision": mixed, "world_size": world,
                 "micro_batch": mb, "seq": seq, "config": cfg, "rank": rank}
    t0 = time.perf_counter()
    try:
        param_dtype = torch.float32 if mixed else torch.bfloat16
        model, hf = _build(cfg, param_dtype, dev)
        amp = False
        if strategy == "ddp":
            from torch.nn.parallel import DistributedDataParallel as DDP

            model = DDP(model, device_ids=[local] if cuda else None)
            amp = mixed
        elif strategy == "fsdp":
            from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

            mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32) if mixed else None
            kw = {"mp_policy": mp} if mp else {}
            for layer in model.model.layers:
                fully_shard(layer, **kw)
            fully_shard(model, **kw)
        elif strategy == "tp":
            from torch.distributed.device_mesh import init_device_mesh

            _tensor_parallel(model, init_device_mesh(dev.type, (world,)))
        opt = _Optimizers([p for p in model.parameters() if p.requires_grad], device)
        rec["optimizer"] = opt.name
        # data: different per data-parallel rank, identical across tensor-parallel ranks
        g = torch.Generator(device=dev.type).manual_seed(0 if strategy == "tp" else 1 + rank)
        x = torch.randint(3, hf.vocab_size, (mb, seq), device=dev, generator=g)
        if cuda:
            torch.cuda.synchronize()
            torch.cuda.empty_cache()
        rec["setup_bytes"] = torch.cuda.memory_allocated() if cuda else None
        phases: dict = {}

        def step(record: bool = False) -> None:
            opt.zero_grad(set_to_none=True)
            if record and cuda:
                torch.cuda.synchronize()
                torch.cuda.reset_peak_memory_stats()
            if strategy == "tp":
                loss = tp_loss_backward(model, x)
            else:
                with torch.autocast(device_type=dev.type, dtype=torch.bfloat16, enabled=amp):
                    loss = model(input_ids=x, labels=x, use_cache=False).loss
                loss.backward()
            if record:
                rec["loss"] = float(loss.detach().float().item())  # sanity: finite, about ln(vocab) at start
            if record and cuda:
                torch.cuda.synchronize()
                phases["fb_peak_bytes"] = torch.cuda.max_memory_allocated()
                torch.cuda.reset_peak_memory_stats()
            opt.step()
            if record and cuda:
                torch.cuda.synchronize()
                phases["opt_peak_bytes"] = torch.cuda.max_memory_allocated()

        for _ in range(WARMUP):
            step()
        opt.zero_grad(set_to_none=True)
        if cuda:
            torch.cuda.synchronize()
        rec["static_bytes"] = torch.cuda.memory_allocated() if cuda else None
        step(record=True)
        rec.update(phases)
        rec["peak_bytes"] = max(phases.values()) if phases else None
        times = []
        for _ in range(STEPS):
            dist.barrier()
            if cuda:
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
        rec["step_ms"] = statistics.median(times)
        rec["times_ms"] = [round(t, 3) for t in times]
        if cuda and os.environ.get("GPUADVISOR_PROFILE"):  # where the step's time goes (every rank runs it)
            from lab.profile_summary import profile_call

            dist.barrier()
            rec["profile"] = profile_call(step, top=15)
        rec["reserved_bytes"] = torch.cuda.max_memory_reserved() if cuda else None
    except Exception as e:  # the case fails on its own; the driver goes on with the next
        rec["error"] = f"{type(e).__name__}: {str(e)[:400]}"
    rec["wall_s"] = round(time.perf_counter() - t0, 2)
    from lab.torchrun_case import write_case

    return write_case(rec, rank, world, out_dir, name)


# ---- the driver: one torchrun per case ----------------------------------------------------------
def environment(device: str) -> dict:
    from lab.torchrun_case import environment as read

    return read(device, ("torch", "transformers"))


def summary(cases: list[dict]) -> list[str]:
    lines = [f"{'case':12} {'rank':>4} {'peak GiB':>9} {'static GiB':>10} {'step ms':>9}  error"]
    for c in cases:
        for r in c.get("ranks", []):
            pk = f"{r['peak_bytes'] / 2**30:.2f}" if r.get("peak_bytes") else "-"
            st = f"{r['static_bytes'] / 2**30:.2f}" if r.get("static_bytes") else "-"
            ms = f"{r['step_ms']:.1f}" if r.get("step_ms") else "-"
            lines.append(f"{c['case']:12} {r.get('rank', '?'):>4} {pk:>9} {st:>10} {ms:>9}  {r.get('error', '')}")
        if c.get("error"):
            lines.append(f"{c['case']:12}    -         -          -          -  {c['error']}")
    return lines


def drive(args) -> int:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    names = [n.strip() for n in args.cases.split(",")] if args.cases else list(CASES)
    unknown = [n for n in names if n not in CASES]
    if unknown:
        print(f"unknown case(s) {', '.join(unknown)}; known: {', '.join(CASES)}", file=sys.stderr)
        return 2
    env = environment(args.device)
    print(json.dumps(env), flush=True)
    results = []
    for name in names:
        t0 = time.perf_counter()
        cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={args.nproc}",
               "-m", "lab.validate_multigpu", "--case", name, "--device", args.device,
               "--out", str(Path(out).resolve())]
        if args.tiny:
            cmd.append("--tiny")
        entry: dict = {"case": name}
        try:
            p = subprocess.run(cmd, timeout=CASE_TIMEOUT_S, capture_output=True, text=True,
                               cwd=Path(__file__).resolve().parents[1])  # the repo root: `-m lab.…`
            entry["returncode"] = p.returncode
            if p.returncode:  # an abort at teardown after the results were written is only noted
                entry["exit_note"] = f"torchrun exit {p.returncode}: " + (p.stderr or p.stdout)[-600:]
        except subprocess.TimeoutExpired:
            entry["error"] = f"timed out after {CASE_TIMEOUT_S} s"
        f = out / f"case-{name}.json"
        if f.exists():
            entry["ranks"] = json.loads(f.read_text())
            f.unlink()
        elif "error" not in entry:
            entry["error"] = entry.get("exit_note", "no results written")
        entry["wall_s"] = round(time.perf_counter() - t0, 1)
        results.append(entry)
        print("\n".join(summary([entry])[1:]), flush=True)
        (out / "multigpu.json").write_text(json.dumps({"env": env, "cases": results}, indent=1))
    print("\n".join(summary(results)))
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", help=f"comma-separated: {', '.join(CASES)} (default: all)")
    ap.add_argument("--case", help=argparse.SUPPRESS)  # internal: one case inside torchrun
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    ap.add_argument("--tiny", action="store_true", help="tiny model (logic check on CPU with gloo)")
    ap.add_argument("--nproc", type=int, default=2)
    ap.add_argument("--out", default=os.environ.get("OUT", "out"))
    args = ap.parse_args()
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
    os.environ.setdefault("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")
    os.environ.setdefault("NVSHMEM_DISABLE_NVLS", "1")
    if args.case:
        return run_case(args.case, args.tiny, args.device, Path(args.out))
    return drive(args)


if __name__ == "__main__":
    sys.exit(main())
