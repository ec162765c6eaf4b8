#!/usr/bin/env python3
"""One 16-bit convolution of each of VGG-16's shapes, NCHW and NHWC, as PyTorch runs it under fp16 autocast with
cudnn.benchmark on: its time, and the memory it holds beyond its input and output (cuDNN's workspace: for an NCHW
tensor the NHWC copies its tensor-core kernels read and write), then the same NCHW convolution with memory capped
so that only the input and the output fit with `--room` GiB to spare (what PyTorch does on a card too small for
the workspace: cuDNN's plans that need more are skipped). What the recorder's NCHW transposes
(gpuadvisor/estimate/trace/recorder.py `_conv_workspace`) and the time of an NCHW convolution without them rest on.

  python3 -m lab.device.conv_workspace --out $OUT/conv_workspace.json [--batch 1024] [--room 0.5]
"""

from __future__ import annotations

import argparse
import json

import torch
import torch.nn.functional as F

from lab.device.record import save_rows
from lab.rnn_calls import time_call  # median seconds over CUDA events, after a warm-up

#: VGG-16's convolutions: (in channels, out channels, spatial size), 3x3, padding 1
LAYERS = [(3, 64, 224), (64, 64, 224), (64, 128, 112), (128, 128, 112), (128, 256, 56), (256, 256, 56),
          (256, 512, 28), (512, 512, 28), (512, 512, 14)]


def one(cin: int, cout: int, size: int, batch: int, channels_last: bool, cap_room_gib: float | None) -> dict:
    torch.cuda.empty_cache()
    torch.cuda.set_per_process_memory_fraction(1.0)
    fmt = torch.channels_last if channels_last else torch.contiguous_format
    x = torch.randn(batch, cin, size, size, device="cuda", dtype=torch.float16).to(memory_format=fmt)
    w = torch.randn(cout, cin, 3, 3, device="cuda", dtype=torch.float16).to(memory_format=fmt)
    in_bytes = x.numel() * 2
    out_bytes = batch * cout * size * size * 2
    row = {"cin": cin, "cout": cout, "size": size, "batch": batch, "layout": "NHWC" if channels_last else "NCHW",
           "in_gib": in_bytes / 2**30, "out_gib": out_bytes / 2**30, "cap_room_gib": cap_room_gib}
    if cap_room_gib is not None:
        total = torch.cuda.get_device_properties(0).total_memory
        allowed = torch.cuda.memory_allocated() + out_bytes + cap_room_gib * 2**30
        torch.cuda.set_per_process_memory_fraction(min(1.0, allowed / total))
    try:
        with torch.no_grad():
            def run() -> torch.Tensor:
                return F.conv2d(x, w, padding=1)
            run()  # cudnn.benchmark's search
            torch.cuda.synchronize()
            base = torch.cuda.memory_allocated()
            torch.cuda.reset_peak_memory_stats()
            y = run()
            torch.cuda.synchronize()
            row["held_beyond_output_gib"] = (torch.cuda.max_memory_allocated() - base - out_bytes) / 2**30
            del y
            row["time_s"] = time_call(run, reps=10, warmup=3)
            row["tflops"] = 2 * batch * cout * cin * 9 * size * size / row["time_s"] / 1e12
    except torch.OutOfMemoryError as e:
        row["error"] = f"out of memory: {str(e)[:120]}"
    torch.cuda.set_per_process_memory_fraction(1.0)
    return row


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--batch", type=int, nargs="+", default=[1024, 256])
    ap.add_argument("--room", type=float, default=0.5, help="GiB allowed beyond input and output when capped")
    a = ap.parse_args()
    torch.backends.cudnn.benchmark = True
    rows = []
    for batch in a.batch:
        for cin, cout, size in LAYERS:
            for channels_last, room in ((False, None), (True, None), (False, a.room)):
                r = one(cin, cout, size, batch, channels_last, room)
                print(json.dumps(r), flush=True)
                rows.append(r)
    save_rows(a.out, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
