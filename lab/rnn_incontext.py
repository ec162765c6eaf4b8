#!/usr/bin/env python3
"""One recurrent model's cuDNN call alone and inside the model, timed and profiled the same way: whether the call
costs more in the model than alone (the keyword GRU's inference measured 7.3 ms a step on an H100, where the
H200's isolated calls of its shape take about 5), and what kernels each launches.

Each variant: bf16 weights under inference mode (as lab/measure_models.py runs inference), and fp32 weights under
bf16 autocast, forward + backward (as it runs training); median of 50 calls between CUDA events after 10 warm-ups,
the host's time to issue each, and one profiled call's kernel count and summed device time.

  python3 -m lab.rnn_incontext --out $OUT/rnn_incontext.json
"""

from __future__ import annotations

import argparse
import json

import torch

from lab.rnn_calls import kernel_profile, time_call


def _variants() -> list[tuple[str, torch.nn.Module, tuple[int, ...]]]:
    from lab.models import gru_keyword

    f, h, n, t = gru_keyword.FEATURES, gru_keyword.HIDDEN, gru_keyword.LAYERS, gru_keyword.FRAMES
    return [("keyword model", gru_keyword.build(), (t, f)),
            ("its GRU alone", torch.nn.GRU(f, h, num_layers=n, batch_first=True), (t, f)),
            ("GRU input 128", torch.nn.GRU(h, h, num_layers=n, batch_first=True), (t, h)),
            ("GRU one layer", torch.nn.GRU(f, h, num_layers=1, batch_first=True), (t, f)),
            ("LSTM same shape", torch.nn.LSTM(f, h, num_layers=n, batch_first=True), (t, f))]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    rows = []
    for name, module, shape in _variants():
        for batch in (128, 512):
            x = torch.randn(batch, *shape, device="cuda")
            m_inf = _copy(module).cuda().to(torch.bfloat16).eval()
            m_train = _copy(module).cuda().train()
            xb = x.to(torch.bfloat16)

            def infer(m=m_inf, xb=xb) -> None:
                with torch.inference_mode():
                    m(xb)

            def train(m=m_train, x=x) -> None:
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    out = m(x)
                out = out[0] if isinstance(out, tuple) else out
                out.float().sum().backward()

            for phase, fn in (("inference", infer), ("training", train)):
                wall, host = time_call(fn, reps=50, warmup=10)
                kernels, device_s, names = kernel_profile(fn, width=60)
                rows.append({"variant": name, "batch": batch, "phase": phase, "wall_s": wall, "host_s": host,
                             "kernels": kernels, "device_s": device_s, "top": dict(names[:8])})
                print(rows[-1], flush=True)
    from probes import dispatch

    env = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "cudnn": torch.backends.cudnn.version(),
           "dispatch_op_s": dispatch.measure(torch, repeats=3)["op_s"]}
    with open(a.out, "w") as f:
        json.dump({"env": env, "rows": rows}, f, indent=1)
    return 0


def _copy(module: torch.nn.Module) -> torch.nn.Module:
    import copy

    return copy.deepcopy(module)


if __name__ == "__main__":
    raise SystemExit(main())
