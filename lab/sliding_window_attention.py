#!/usr/bin/env python3
"""Does a sliding-window layer's attention cost what its query-key pairs say (ModelSpec.attended_pairs)? One
layer of gpt-oss's attention shape (64 query heads of 64, 8 KV heads) over 1,024-16,384 tokens, causal, with and
without a 128-token window, through FlexAttention (block-sparse: blocks outside the mask are skipped), and the flash
SDPA kernel on the full causal problem as the reference measured in the same run.

  python3 -m lab.sliding_window_attention --out $OUT/sliding_window_attention.json
"""

from __future__ import annotations

import torch
from torch.nn.attention.flex_attention import create_block_mask, flex_attention

from lab.results import bench_args, write_rows
from lab.timing import sustained

HEADS, KV_HEADS, HEAD_DIM, WINDOW = 64, 8, 64, 128


def causal(b, h, qi, ki):
    return qi >= ki


def window(b, h, qi, ki):
    return (qi >= ki) & (qi - ki < WINDOW)


def measure(seq: int, flex, seconds: float) -> dict:
    q = torch.randn(1, HEADS, seq, HEAD_DIM, device="cuda", dtype=torch.bfloat16)
    k = torch.randn(1, KV_HEADS, seq, HEAD_DIM, device="cuda", dtype=torch.bfloat16)
    v = torch.randn_like(k)
    full_mask = create_block_mask(causal, None, None, seq, seq)
    win_mask = create_block_mask(window, None, None, seq, seq)
    row = {"seq": seq, "window": WINDOW, "heads": HEADS, "kv_heads": KV_HEADS, "head_dim": HEAD_DIM}
    row["flex_causal_s"] = sustained(lambda: flex(q, k, v, block_mask=full_mask, enable_gqa=True), seconds, 5)
    row["flex_window_s"] = sustained(lambda: flex(q, k, v, block_mask=win_mask, enable_gqa=True), seconds, 5)
    kr, vr = k.repeat_interleave(HEADS // KV_HEADS, 1), v.repeat_interleave(HEADS // KV_HEADS, 1)
    with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.FLASH_ATTENTION):
        row["sdpa_causal_s"] = sustained(lambda: torch.nn.functional.scaled_dot_product_attention(
            q, kr, vr, is_causal=True), seconds, 5)
    print(row, flush=True)
    return row


def main() -> int:
    args = bench_args(__doc__, 0.5)
    flex = torch.compile(flex_attention)
    rows = [measure(seq, flex, args.seconds) for seq in (1024, 4096, 16384)]
    write_rows(args.out, rows, seconds=args.seconds)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
