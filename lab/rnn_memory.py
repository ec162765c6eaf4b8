#!/usr/bin/env python3
"""What one cuDNN RNN call holds beyond its input, output, states and weights: the inference workspace and the
training reserve space (kept for backward) plus workspace, for the shapes of lab/models/ (the out-of-sample recurrent
cases) and a small grid. Each call runs once to warm up, then the peak of memory allocated during the call, less
what was allocated before it and its outputs, is its transient (inference) or its saved + transient (training: the
forward's peak less before and outputs, and what stays allocated after it, less the outputs).

Also the CUDA context of an idle PyTorch process: device memory used (mem_get_info) after torch.cuda.init() and one
small kernel, less before (another process holds none of this GPU).

  python3 -m lab.rnn_memory --out $OUT/rnn_memory.json [--grid small|steps|inputs]

--grid small: the hidden sizes whose training calls cuDNN runs in persistent kernels (PyTorch's PERSIST_STATIC_SMALL_H:
hidden <= 192 forward, <= 128 backward), one and two layers, one and two directions, and the keyword GRU's own call
(lab/models/gru_keyword.py), whose training peak the large-hidden grid's fit missed by 30-40 %. --grid steps: 64 to
1,024 steps at hidden 64, 96 and 256, batch 256 and 1,024.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

import torch

#: (mode, input_size, hidden, layers, bidirectional, batch, steps): lab/models' RNNs at their two batch sizes, and a
#: grid over the factors a workspace model would read
SHAPES = [("GRU", 512, 512, 1, False, b, 50) for b in (64, 256)] + \
    [("LSTM", 1024, 1024, 2, False, b, 256) for b in (32, 64)] + \
    [("LSTM", 100, 128, 1, False, b, 20) for b in (256, 1024)] + \
    [("GRU", 80, 256, 3, True, b, 128) for b in (32, 128)] + \
    [(m, h, h, L, d, b, t) for m in ("LSTM", "GRU") for h in (256, 1024) for L in (1, 2) for d in (False, True)
     for b in (64,) for t in (16, 128)]

#: --grid small: (mode, input_size, hidden, layers, bidirectional, batch, steps); the keyword GRU's call first
SMALL_SHAPES = [("GRU", 40, 128, 2, False, b, 100) for b in (128, 512)] + \
    [(m, h, h, L, d, b, t) for m in ("LSTM", "GRU") for h in (64, 128, 192) for L in (1, 2) for d in (False, True)
     for b in (128, 512) for t in (25, 100)]

#: --grid steps: how the inference workspace grows with the call's length past the grids' 128 steps (the forecaster's
#: 336-step calls held 25-35 % less than the step term counts, 2026-12-06)
STEP_SHAPES = [(m, 7 if h == 64 else h, h, L, d, b, t) for m in ("LSTM", "GRU") for h in (64, 96, 256) for L in (1, 2)
               for d in (False, True) for b in (256, 1024) for t in (64, 256, 512, 1024)]

#: --grid inputs: whether the workspace's rows per step go with the input's width (the hidden-64 calls of a 7-wide
#: input held about 1.2 rows a step past 256 steps where wider ones hold 3). Run 2026-12-06: two of the rows are the
#: input's copies, at its width (RNN_WORKSPACE_INPUT_PASSES)
INPUT_SHAPES = [(m, i, h, 1, d, 1024, t) for m in ("LSTM", "GRU") for h in (64, 128) for i in (7, 32, h)
                for d in (False, True) for t in (64, 256, 512)]


def context_bytes() -> dict:
    """Device memory a second, idle PyTorch process takes (its context and kernel images, one 4-byte tensor): free
    memory as this process sees it before the child starts, less free memory as the child sees it."""
    code = ("import torch;x=torch.ones(1,device='cuda');torch.cuda.synchronize();print(torch.cuda.mem_get_info()[0])")
    torch.cuda.empty_cache()
    free_before, total = torch.cuda.mem_get_info()
    free_child = int(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                    check=True).stdout.split()[0])
    return {"idle_process_bytes": free_before - free_child, "total_bytes": total,
            "note": "a second process's own use: this process's free memory before it starts, less the child's view"}


def _call(rnn, x, phase: str):
    if phase == "inference":
        with torch.inference_mode():
            return rnn(x)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        return rnn(x)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--grid", choices=("main", "small", "steps", "inputs"), default="main")
    a = ap.parse_args()
    torch.backends.cudnn.benchmark = True
    free_before_ctx = torch.cuda.mem_get_info()[0]
    rows = []
    grid = {"main": SHAPES, "small": SMALL_SHAPES, "steps": STEP_SHAPES, "inputs": INPUT_SHAPES}[a.grid]
    for mode, inp, hidden, layers, bidir, batch, steps in grid:
        cls = getattr(torch.nn, mode)
        for phase in ("inference", "training"):
            rnn = cls(inp, hidden, num_layers=layers, batch_first=True, bidirectional=bidir).cuda()
            if phase == "inference":
                rnn = rnn.to(torch.bfloat16).eval()
            x = torch.randn(batch, steps, inp, device="cuda", dtype=torch.bfloat16 if phase == "inference" else None)

            out = _call(rnn, x, phase)
            del out
            torch.cuda.synchronize()
            torch.cuda.empty_cache()
            before = torch.cuda.memory_allocated()
            torch.cuda.reset_peak_memory_stats()
            out, state = _call(rnn, x, phase)
            torch.cuda.synchronize()
            peak = torch.cuda.max_memory_allocated() - before
            after = torch.cuda.memory_allocated() - before
            states = state if isinstance(state, tuple) else (state,)
            outputs = out.numel() * out.element_size() + sum(s.numel() * s.element_size() for s in states)
            rows.append({"mode": mode, "input": inp, "hidden": hidden, "layers": layers, "bidirectional": bidir,
                         "batch": batch, "steps": steps, "phase": phase, "peak_over_before": peak,
                         "held_after": after, "outputs": outputs})
            print(rows[-1], flush=True)
            del out, state, states, rnn, x
            torch.cuda.empty_cache()
    env = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "cudnn": torch.backends.cudnn.version(),
           "free_before_bytes": free_before_ctx}
    with open(a.out, "w") as f:
        json.dump({"env": env, "context": context_bytes(), "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
