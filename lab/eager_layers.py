#!/usr/bin/env python3
"""One transformer layer's training step in eager PyTorch, bf16 weights, as torchtitan (Llama 3: RMSNorm in fp32,
complex RoPE, GQA repeat, SwiGLU) and llm-foundry (MPT: LayerNorm without bias, fused QKV, GELU, no RoPE) write it,
with SDPA's flash attention: the kernel-level time whose eager loss the fsdp2 profile prices as memory traffic
(FSDP2_ELEMENTWISE).

What it answers: how much of a layer's eager step the kernel model (gpuadvisor.estimate.parallel.cost.AnalyticCost)
misses on a Hopper card, per architecture, and which part: the layer forward and forward + backward, SDPA's flash
attention alone (forward and forward + backward, causal) and the layer's largest GEMM alone. No FSDP, one GPU: the
communication and the framework's hooks are not in it.

  python3 -m lab.eager_layers --out $OUT/eager_layers.json
"""

from __future__ import annotations

import argparse
import json
import math

import torch
import torch.nn.functional as F
from torch import nn

from lab.rnn_calls import time_call  # median seconds over CUDA events, after a warm-up

#: name -> (hidden, heads, kv heads, head dim, FFN width, style); the published runs' models (Llama 3 8B in
#: torchtitan's runs, MPT-7B in llm-foundry's)
MODELS = {"llama3-8b": (4096, 32, 8, 128, 14336, "llama"), "mpt-7b": (4096, 32, 32, 128, 16384, "mpt")}
#: (model, micro-batch, sequence): torchtitan's 8B runs (1 x 8192), llm-foundry's MPT-7B at 2048 (6 x 2048) and
#: the two at each other's token count
CASES = [("llama3-8b", 1, 8192), ("llama3-8b", 6, 2048), ("mpt-7b", 6, 2048), ("mpt-7b", 1, 8192)]


def rope_table(seq: int, head_dim: int, device: str) -> torch.Tensor:
    freqs = 1.0 / (500000.0 ** (torch.arange(0, head_dim, 2, device=device).float() / head_dim))
    return torch.polar(torch.ones(seq, head_dim // 2, device=device), torch.outer(torch.arange(seq, device=device),
                                                                                  freqs).float())


def apply_rope(x: torch.Tensor, freqs: torch.Tensor) -> torch.Tensor:
    """torchtitan's apply_rotary_emb: fp32 complex product, cast back."""
    xc = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
    return torch.view_as_real(xc * freqs.view(1, x.shape[1], 1, -1)).flatten(3).type_as(x)


class RMSNorm(nn.Module):
    """torchtitan's RMSNorm: normalized in fp32, cast back, scaled."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-5)).type_as(x) * self.weight


class LlamaLayer(nn.Module):
    def __init__(self, d: int, heads: int, kv: int, hd: int, ffn: int) -> None:
        super().__init__()
        self.heads, self.kv, self.hd = heads, kv, hd
        self.wq, self.wk, self.wv = (nn.Linear(d, n * hd, bias=False) for n in (heads, kv, kv))
        self.wo = nn.Linear(heads * hd, d, bias=False)
        self.w1, self.w3 = nn.Linear(d, ffn, bias=False), nn.Linear(d, ffn, bias=False)
        self.w2 = nn.Linear(ffn, d, bias=False)
        self.n1, self.n2 = RMSNorm(d), RMSNorm(d)

    def forward(self, x: torch.Tensor, freqs: torch.Tensor) -> torch.Tensor:
        b, s, _ = x.shape
        h = self.n1(x)
        q = self.wq(h).view(b, s, self.heads, self.hd)
        k = self.wk(h).view(b, s, self.kv, self.hd)
        v = self.wv(h).view(b, s, self.kv, self.hd)
        q, k = apply_rope(q, freqs), apply_rope(k, freqs)
        rep = self.heads // self.kv  # torchtitan's repeat_kv: expand and copy
        k = k[:, :, :, None].expand(b, s, self.kv, rep, self.hd).reshape(b, s, self.heads, self.hd)
        v = v[:, :, :, None].expand(b, s, self.kv, rep, self.hd).reshape(b, s, self.heads, self.hd)
        o = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True)
        x = x + self.wo(o.transpose(1, 2).reshape(b, s, -1))
        h = self.n2(x)
        return x + self.w2(F.silu(self.w1(h)) * self.w3(h))


class MptLayer(nn.Module):
    def __init__(self, d: int, heads: int, hd: int, ffn: int) -> None:
        super().__init__()
        self.heads, self.hd = heads, hd
        self.n1, self.n2 = nn.LayerNorm(d, bias=False), nn.LayerNorm(d, bias=False)
        self.wqkv = nn.Linear(d, 3 * heads * hd, bias=False)
        self.wo = nn.Linear(heads * hd, d, bias=False)
        self.up, self.down = nn.Linear(d, ffn, bias=False), nn.Linear(ffn, d, bias=False)

    def forward(self, x: torch.Tensor, freqs: torch.Tensor) -> torch.Tensor:
        b, s, _ = x.shape
        q, k, v = self.wqkv(self.n1(x)).view(b, s, 3, self.heads, self.hd).unbind(2)
        o = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True)
        x = x + self.wo(o.transpose(1, 2).reshape(b, s, -1))
        return x + self.down(F.gelu(self.up(self.n2(x))))


def case(name: str, batch: int, seq: int) -> dict:
    d, heads, kv, hd, ffn, style = MODELS[name]
    dev, dt = "cuda", torch.bfloat16
    layer = (LlamaLayer(d, heads, kv, hd, ffn) if style == "llama" else MptLayer(d, heads, hd, ffn)).to(dev, dt)
    freqs = rope_table(seq, hd, dev)
    x = torch.randn(batch, seq, d, device=dev, dtype=dt, requires_grad=True)
    grad = torch.randn(batch, seq, d, device=dev, dtype=dt)

    def fwd() -> None:
        with torch.no_grad():
            layer(x, freqs)

    def train() -> None:
        layer(x, freqs).backward(grad)

    q = torch.randn(batch, heads, seq, hd, device=dev, dtype=dt, requires_grad=True)
    k, v = (torch.randn(batch, heads, seq, hd, device=dev, dtype=dt, requires_grad=True) for _ in range(2))
    go = torch.randn(batch, heads, seq, hd, device=dev, dtype=dt)

    def attn_fwd() -> None:
        with torch.no_grad():
            F.scaled_dot_product_attention(q, k, v, is_causal=True)

    def attn_train() -> None:
        F.scaled_dot_product_attention(q, k, v, is_causal=True).backward(go)

    tokens = batch * seq
    a = torch.randn(tokens, d, device=dev, dtype=dt)
    w = torch.randn(d, ffn, device=dev, dtype=dt)
    gemm_s = time_call(lambda: a @ w)
    out = {"model": name, "batch": batch, "seq": seq, "tokens": tokens,
           "layer_forward_s": time_call(fwd), "layer_train_s": time_call(train),
           "attention_forward_s": time_call(attn_fwd), "attention_train_s": time_call(attn_train),
           "gemm_s": gemm_s, "gemm_shape": [tokens, d, ffn], "gemm_tflops": 2 * tokens * d * ffn / gemm_s / 1e12}
    attn_flops = 4 * batch * heads * seq * seq * hd / 2  # causal: half the score matrix
    out["attention_forward_tflops"] = attn_flops / out["attention_forward_s"] / 1e12
    out["attention_train_tflops"] = 3.5 * attn_flops / out["attention_train_s"] / 1e12
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True)
    args = p.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = True
    rows = []
    for name, batch, seq in CASES:
        rows.append(case(name, batch, seq))
        print(json.dumps(rows[-1]), flush=True)
        torch.cuda.empty_cache()
    env = {"device": torch.cuda.get_device_name(), "torch": torch.__version__,
           "cudnn": torch.backends.cudnn.version(), "driver": _driver(),
           "sdpa_backend": "flash (default for bf16 causal, head dim 128)"}
    with open(args.out, "w") as f:
        json.dump({"env": env, "rows": rows}, f, indent=1)
    assert all(math.isfinite(r["layer_train_s"]) for r in rows)


def _driver() -> str:
    try:
        import pynvml

        pynvml.nvmlInit()
        return str(pynvml.nvmlSystemGetDriverVersion())
    except Exception:  # the driver is a label here, not a requirement
        return "unknown"


if __name__ == "__main__":
    main()
