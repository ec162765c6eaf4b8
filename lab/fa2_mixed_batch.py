#!/usr/bin/env python3
"""FlashAttention-2's varlen kernel (PyTorch's aten::_flash_attention_forward) on a serving engine's mixed batch: B
decoding sequences of `ctx` tokens of KV alone (max_seqlen_q 1: FA2 folds a GQA group into the query length and reads
each KV head once), one prompt of 1,024 tokens alone, and both in one call (max_seqlen_q 1,024: each query head of a
decode row reads its KV head again). The decode rows' share of the mixed call (mixed - prompt alone) against the
decode-only call, and the KV bytes they read once: whether a mixed step's decode attention costs more than the
decode-only step the serving simulation prices (Qwen3-4B's heads: 32 query, 8 KV, 128 wide).

  python3 -m lab.fa2_mixed_batch --out $OUT/fa2_mixed_batch.json
"""

from __future__ import annotations

import argparse

import torch

from lab.results import write_rows

HEADS, KV_HEADS, DIM, PROMPT = 32, 8, 128, 1024


def timed(fn, reps: int = 20) -> float:
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    for _ in range(reps):
        fn()
    b.record()
    b.synchronize()
    return a.elapsed_time(b) / 1e3 / reps


def call(q_lens: list[int], k_lens: list[int]):
    dev, dt = "cuda", torch.bfloat16
    q = torch.randn(sum(q_lens), HEADS, DIM, device=dev, dtype=dt)
    k = torch.randn(sum(k_lens), KV_HEADS, DIM, device=dev, dtype=dt)
    v = torch.randn_like(k)
    cq = torch.tensor([0, *torch.tensor(q_lens).cumsum(0).tolist()], device=dev, dtype=torch.int32)
    ck = torch.tensor([0, *torch.tensor(k_lens).cumsum(0).tolist()], device=dev, dtype=torch.int32)
    mq, mk = max(q_lens), max(k_lens)
    return lambda: torch.ops.aten._flash_attention_forward(q, k, v, cq, ck, mq, mk, 0.0, True, False)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    rows = []
    for ctx in (512, 1100, 2048):
        for batch in (16, 32, 64, 128, 256):
            decode = timed(call([1] * batch, [ctx] * batch))
            prompt = timed(call([PROMPT], [PROMPT]))
            mixed = timed(call([1] * batch + [PROMPT], [ctx] * batch + [PROMPT]))
            kv_bytes = batch * ctx * KV_HEADS * DIM * 2 * 2
            rows.append({"batch": batch, "ctx": ctx, "decode_s": decode, "prompt_s": prompt, "mixed_s": mixed,
                         "kv_bytes": kv_bytes})
            print(f"ctx {ctx} batch {batch}: decode {decode * 1e6:.1f} us ({kv_bytes / decode / 1e9:.0f} GB/s), "
                  f"prompt {prompt * 1e6:.1f}, mixed {mixed * 1e6:.1f}: decode share "
                  f"{(mixed - prompt) / decode:.2f}x", flush=True)
    write_rows(a.out, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
