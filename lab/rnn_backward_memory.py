#!/usr/bin/env python3
"""What a cuDNN RNN's backward holds while it runs: one nn.LSTM/GRU training call (an fp32 module under bf16
autocast, as lab/rnn_memory.py trains) whose output is summed and backpropagated, with the memory allocated before the
backward, its peak during the backward and what stays after it (the gradients), for the shapes the out-of-sample
LSTM autoencoder (lab/models/lstm_autoencoder.py: 10-12 % over its counted peak) and its neighbours run at.

  python3 -m lab.rnn_backward_memory --out $OUT/rnn_backward_memory.json
"""

from __future__ import annotations

import argparse

import torch

from lab.results import write_rows

#: (mode, input, hidden, layers, bidirectional, batch, steps)
SHAPES = [(mode, inp, hidden, layers, bidir, batch, steps)
          for mode in ("LSTM", "GRU")
          for hidden, inp in ((64, 64), (128, 16), (128, 128), (256, 256), (512, 512))
          for layers in (1, 2)
          for bidir in (False, True)
          for batch in (512, 2048)
          for steps in (64,)]


def one(mode: str, inp: int, hidden: int, layers: int, bidir: bool, batch: int, steps: int) -> dict:
    rnn = getattr(torch.nn, mode)(inp, hidden, num_layers=layers, batch_first=True, bidirectional=bidir).cuda()
    x = torch.randn(batch, steps, inp, device="cuda", requires_grad=True)
    for _ in range(2):  # warm: cuDNN's plans and the allocator's blocks
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out, _ = rnn(x)
        out.float().sum().backward()
    rnn.zero_grad(set_to_none=True)
    x.grad = None
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    with torch.autocast("cuda", dtype=torch.bfloat16):
        out, _ = rnn(x)
    loss = out.float().sum()
    torch.cuda.synchronize()
    forward_peak = torch.cuda.max_memory_allocated() - base
    before = torch.cuda.memory_allocated() - base
    torch.cuda.reset_peak_memory_stats()
    loss.backward()
    torch.cuda.synchronize()
    backward_peak = torch.cuda.max_memory_allocated() - base
    after = torch.cuda.memory_allocated() - base
    row = {"mode": mode, "input": inp, "hidden": hidden, "layers": layers, "bidirectional": bidir, "batch": batch,
           "steps": steps, "forward_peak": forward_peak, "before_backward": before, "backward_peak": backward_peak,
           "after_backward": after, "output_bytes": out.numel() * out.element_size()}
    del out, loss, rnn, x
    torch.cuda.empty_cache()
    return row


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    torch.backends.cudnn.benchmark = True
    rows = []
    for shape in SHAPES:
        rows.append(one(*shape))
        print(rows[-1], flush=True)
    write_rows(a.out, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
