#!/usr/bin/env python3
"""What tensor parallelism through DTensor costs beyond its communication: one GPU, a Llama-2-7B-wide
model of 8 layers trained a step (2 x 2048 tokens, bf16, fused AdamW) plain and parallelized over a
mesh of one GPU (the same ColwiseParallel/RowwiseParallel plan and loss_parallel as the 2-GPU case of
lab/validate_multigpu.py). With one rank there is nothing to communicate, so the difference is
DTensor's own cost (host dispatch and redistributions); the profile says which.

  python3 -m lab.device.dtensor_overhead       # writes $OUT/dtensor-overhead.json
"""

from __future__ import annotations

import json
import os
import statistics
import time
from pathlib import Path

from lab.profile_summary import profile_call
from lab.validate_multigpu import LLAMA2_7B, _build, _Optimizers, _tensor_parallel, tp_loss_backward


def main() -> int:
    import torch
    import torch.distributed as dist

    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29517")
    dist.init_process_group("nccl", rank=0, world_size=1)
    torch.cuda.set_device(0)
    out_dir = Path(os.environ.get("OUT", "out"))
    out_dir.mkdir(parents=True, exist_ok=True)
    cfg = dict(LLAMA2_7B, num_hidden_layers=8)
    res: dict = {"date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "torch": torch.__version__,
                 "device_name": torch.cuda.get_device_name(), "config": cfg, "micro_batch": 2, "seq": 2048}
    for mode in ("plain", "dtensor"):
        model, hf = _build(cfg, torch.bfloat16, torch.device("cuda", 0))
        if mode == "dtensor":
            from torch.distributed.device_mesh import init_device_mesh

            _tensor_parallel(model, init_device_mesh("cuda", (1,)))
        opt = _Optimizers([p for p in model.parameters() if p.requires_grad], "cuda")
        x = torch.randint(3, hf.vocab_size, (2, 2048), device="cuda")

        def step(model=model, opt=opt, x=x, mode=mode):
            opt.zero_grad(set_to_none=True)
            if mode == "dtensor":
                tp_loss_backward(model, x)
            else:
                model(input_ids=x, labels=x, use_cache=False).loss.backward()
            opt.step()

        for _ in range(2):
            step()
        torch.cuda.synchronize()
        times, host = [], []
        for _ in range(5):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            t0 = time.perf_counter()
            s.record()
            step()
            e.record()
            host.append(time.perf_counter() - t0)  # host time to issue the step (no sync inside)
            e.synchronize()
            times.append(s.elapsed_time(e))
        res[mode] = {"step_ms": statistics.median(times), "issue_ms": statistics.median(host) * 1e3,
                     "optimizer": opt.name, "profile": profile_call(step, top=12)}
        print(mode, {k: v for k, v in res[mode].items() if k != "profile"}, res[mode]["profile"]["families_ms"],
              "gpu", res[mode]["profile"]["gpu_ms"], flush=True)
        del model, opt
        torch.cuda.empty_cache()
    (out_dir / "dtensor-overhead.json").write_text(json.dumps(res, indent=1))
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
