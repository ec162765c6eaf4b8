#!/usr/bin/env python3
"""How much slower a GEMM runs when a dimension is not a multiple of 8 elements, against the padded one.

The three products of a language-model head (forward y = x W^T, input gradient dx = dy W, weight gradient
dW = dy^T x) at a vocabulary that is odd (GPT-2's 50,257), even but not a multiple of 8 (BERT's 30,522) and the
padded one next to each (50,304 and 30,528), in each dtype the profiled models ran (fp32 with and without TF32,
bf16, fp16). The ratio of time per FLOP misaligned / padded is what kernels.misaligned_slowdown prices
(MISALIGNED_SLOWDOWN for odd, MISALIGNED_EVEN_SLOWDOWN for even). Every point is the median of CUDA-event timings
after a warm-up.

    python3 -m lab.misaligned_gemm --out misaligned.json
"""

from __future__ import annotations

import argparse
import json
import time

from lab.bench_kernels import _event_time

VOCABS = {"gpt2": (50257, 50304), "bert": (30522, 30528), "odd-small": (1001, 1008), "even-small": (1002, 1008)}
HIDDEN = {"gpt2": 768, "bert": 768, "odd-small": 1024, "even-small": 1024}
TOKENS = (1024, 8192)


def sweep() -> list[dict]:
    import torch

    dtypes = {"fp32": (torch.float32, False), "tf32": (torch.float32, True), "bf16": (torch.bfloat16, False),
              "fp16": (torch.float16, False)}
    rows = []
    for dname, (dtype, tf32) in dtypes.items():
        torch.backends.cuda.matmul.allow_tf32 = tf32
        for case, (odd, padded) in VOCABS.items():
            k = HIDDEN[case]
            for m in TOKENS:
                x = torch.randn(m, k, device="cuda", dtype=dtype)
                for vocab in (odd, padded):
                    w = torch.randn(vocab, k, device="cuda", dtype=dtype)
                    dy = torch.randn(m, vocab, device="cuda", dtype=dtype)
                    products = {"forward": lambda x=x, w=w: x @ w.t(),      # (m,k)(k,V): n = V
                                "input_grad": lambda dy=dy, w=w: dy @ w,    # (m,V)(V,k): k = V
                                "weight_grad": lambda dy=dy, x=x: dy.t() @ x}  # (V,m)(m,k): m = V
                    for pname, fn in products.items():
                        seconds = _event_time(fn, 30)
                        rows.append({"dtype": dname, "case": case, "vocab": vocab, "aligned": vocab % 8 == 0,
                                     "tokens": m, "hidden": k, "product": pname, "s": seconds,
                                     "tflops": 2.0 * m * k * vocab / seconds / 1e12})
                    del w, dy
                del x
        torch.cuda.empty_cache()
    torch.backends.cuda.matmul.allow_tf32 = False
    return rows


def ratios(rows: list[dict]) -> list[dict]:
    """Time per FLOP of each misaligned product over its padded twin's."""
    padded = {(r["dtype"], r["case"], r["tokens"], r["product"]): r for r in rows if r["aligned"]}
    out = []
    for r in rows:
        if r["aligned"]:
            continue
        p = padded[(r["dtype"], r["case"], r["tokens"], r["product"])]
        out.append({k: r[k] for k in ("dtype", "case", "vocab", "tokens", "product")}
                   | {"slowdown": (r["s"] / r["vocab"]) / (p["s"] / p["vocab"]), "s": r["s"], "padded_s": p["s"]})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    import torch

    t0 = time.time()
    rows = sweep()
    result = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
              "cublas": torch.backends.cuda.preferred_blas_library().name if hasattr(
                  torch.backends.cuda, "preferred_blas_library") else None,
              "date_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()), "rows": rows, "ratios": ratios(rows),
              "wall_s": time.time() - t0}
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    for r in result["ratios"]:
        print(f"{r['dtype']:5} {r['case']:10} {r['vocab']:6} m={r['tokens']:5} {r['product']:11} "
              f"{r['slowdown']:.2f}x")


if __name__ == "__main__":
    main()
