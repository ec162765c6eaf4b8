#!/usr/bin/env python3
"""FlashAttention 2 (PyTorch's aten::_flash_attention_forward) on a serving engine's mixed batch, on a paged KV cache
as vLLM runs it and on a contiguous one: B decoding sequences of `ctx` tokens of KV beside one prompt of 1,024 tokens
in one varlen call, against the prompt alone. With a block table FA2 runs its split-KV kernel, whose query tile is 64
rows (`run_mha_fwd_splitkv_dispatch`); without one the forward kernel's 128 rows (head dimension 128 on sm90). If a
decoding sequence's cost in a mixed call is its query tiles' multiply-adds (64 or 128 rows per query head for its one
row: the pricer's `decode_query_rows`), the paged call's decode rows cost about half the contiguous call's; if it were
the KV re-read by each query head, the same. Qwen3-4B's heads: 32 query, 8 KV, 128 wide. A bf16 GEMM in the same run
is the reference.

  python3 -m lab.fa2_paged_mixed --out $OUT/fa2_paged_mixed.json
"""

from __future__ import annotations

import argparse

import torch

from lab.fa2_mixed_batch import timed
from lab.results import write_rows

HEADS, KV_HEADS, DIM, PROMPT, PAGE = 32, 8, 128, 1024, 256


def _cu(lens: list[int]) -> torch.Tensor:
    return torch.tensor([0, *torch.tensor(lens).cumsum(0).tolist()], device="cuda", dtype=torch.int32)


def contiguous(q_lens: list[int], k_lens: list[int]):
    dt = torch.bfloat16
    q = torch.randn(sum(q_lens), HEADS, DIM, device="cuda", dtype=dt)
    k = torch.randn(sum(k_lens), KV_HEADS, DIM, device="cuda", dtype=dt)
    v = torch.randn_like(k)
    cq, ck = _cu(q_lens), _cu(k_lens)
    return lambda: torch.ops.aten._flash_attention_forward(q, k, v, cq, ck, max(q_lens), max(k_lens), 0.0, True,
                                                           False)


def paged(q_lens: list[int], k_lens: list[int]):
    """Each sequence's KV in its own pages of PAGE tokens (a block table, as a serving engine keeps it)."""
    dt = torch.bfloat16
    pages = [-(-n // PAGE) for n in k_lens]
    q = torch.randn(sum(q_lens), HEADS, DIM, device="cuda", dtype=dt)
    k = torch.randn(sum(pages), PAGE, KV_HEADS, DIM, device="cuda", dtype=dt)
    v = torch.randn_like(k)
    table = torch.zeros(len(k_lens), max(pages), device="cuda", dtype=torch.int32)
    start = 0
    for i, n in enumerate(pages):
        table[i, :n] = torch.arange(start, start + n, dtype=torch.int32)
        start += n
    cq, ck = _cu(q_lens), _cu(k_lens)
    used = torch.tensor(k_lens, device="cuda", dtype=torch.int32)
    return lambda: torch.ops.aten._flash_attention_forward(q, k, v, cq, ck, max(q_lens), max(k_lens), 0.0, True,
                                                           False, seqused_k=used, block_table=table)


def gemm_tflops() -> float:
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    b = torch.randn_like(a)
    return 2 * 8192**3 / timed(lambda: a @ b) / 1e12


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    rows = []
    ref = gemm_tflops()
    print(f"bf16 GEMM 8192^3: {ref:.0f} TFLOP/s", flush=True)
    for ctx in (1100, 2048):
        for batch in (32, 64, 128, 256):
            row = {"batch": batch, "ctx": ctx}
            for name, make in (("contiguous", contiguous), ("paged", paged)):
                try:
                    row[f"{name}_prompt_s"] = timed(make([PROMPT], [PROMPT]))
                    row[f"{name}_mixed_s"] = timed(make([1] * batch + [PROMPT], [ctx] * batch + [PROMPT]))
                    row[f"{name}_decode_s"] = timed(make([1] * batch, [ctx] * batch))
                except RuntimeError as e:  # a PyTorch whose FA2 takes no block table
                    row[f"{name}_error"] = str(e).splitlines()[0][:200]
            if "paged_mixed_s" in row:
                c = row["contiguous_mixed_s"] - row["contiguous_prompt_s"]
                p = row["paged_mixed_s"] - row["paged_prompt_s"]
                print(f"ctx {ctx} batch {batch}: decode rows in a mixed call, contiguous {c * 1e6:.0f} us, paged "
                      f"{p * 1e6:.0f} us ({p / c:.2f}x); decode-only paged {row['paged_decode_s'] * 1e6:.0f} us",
                      flush=True)
            else:
                print(f"ctx {ctx} batch {batch}: {row}", flush=True)
            rows.append(row)
    write_rows(a.out, rows, gemm_tflops_bf16=ref, heads=HEADS, kv_heads=KV_HEADS, head_dim=DIM,
               prompt=PROMPT, page_tokens=PAGE)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
