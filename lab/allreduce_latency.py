#!/usr/bin/env python3
"""The latency of the small all-reduces tensor-parallel decode does (two per layer and step: a few hundred KB),
on the GPUs of one node: NCCL through torch.distributed, eager (CUDA events around 200 calls) and captured in a
CUDA graph (100 calls per replay, as a graph-captured decode step runs them), for 8 KB - 4 MB, over all the
ranks and over the first two. Run under torchrun:

  torchrun --nproc-per-node 4 -m lab.allreduce_latency --out $OUT/allreduce_latency.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics

import torch
import torch.distributed as dist

SIZES = (8 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20)


def eager_s(x: torch.Tensor, group: dist.ProcessGroup, calls: int = 200) -> float:
    for _ in range(20):
        dist.all_reduce(x, group=group)
    torch.cuda.synchronize()
    dist.barrier(group=group)
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    for _ in range(calls):
        dist.all_reduce(x, group=group)
    b.record()
    b.synchronize()
    return a.elapsed_time(b) / 1e3 / calls


def graph_s(x: torch.Tensor, group: dist.ProcessGroup, calls: int = 100) -> float:
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            dist.all_reduce(x, group=group)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(calls):
            dist.all_reduce(x, group=group)
    times = []
    for _ in range(7):
        dist.barrier(group=group)
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        g.replay()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) / 1e3 / calls)
    return statistics.median(times[2:])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", device_id=torch.device("cuda", rank))
    groups = {world: dist.group.WORLD}
    if world > 2:
        groups[2] = dist.new_group([0, 1])
    rows = []
    for ranks, group in groups.items():
        member = rank < ranks
        for size in SIZES:
            x = torch.ones(size // 2, dtype=torch.bfloat16, device="cuda")
            row = {"ranks": ranks, "bytes": size}
            if member:
                row["eager_s"] = eager_s(x, group)
                row["graph_s"] = graph_s(x, group)
            dist.barrier()
            if rank == 0:
                rows.append(row)
                print(f"{ranks} ranks {size >> 10:5d} KB: eager {row['eager_s'] * 1e6:7.1f} us, "
                      f"graph {row['graph_s'] * 1e6:7.1f} us", flush=True)
    if rank == 0:
        env = {"device": torch.cuda.get_device_name(), "torch": torch.__version__,
               "nccl": ".".join(map(str, torch.cuda.nccl.version())), "world": world,
               "NCCL_NVLS_ENABLE": os.environ.get("NCCL_NVLS_ENABLE")}
        with open(a.out, "w") as f:
            json.dump({"env": env, "rows": rows}, f, indent=1)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
