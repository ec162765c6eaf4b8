#!/usr/bin/env python3
"""Measure decode speed per engine profile, and the physics the time model counts, on one GPU.

Engines (random weights built from configs, bf16, no downloads):
  * eager:  Hugging Face transformers `generate()` (DynamicCache, greedy); the per-step time is
            (time of N+1 new tokens - time of 1 new token) / N, so prefill drops out.
  * graphs: one decode step (one token per sequence over a static KV cache) captured once in a
            `torch.cuda.CUDAGraph` and replayed: the HF model with a StaticCache where capture
            works, and a hand-written Llama-style decoder (same shapes) that always does.
Physics primitives, for the model in gpuadvisor/estimate/compute.py:
  * host launch cost: microseconds per small eager kernel launch (host CPU bound), and the
    Python+dispatch cost of one nn.Linear call at batch 1;
  * bf16 GEMM efficiency against M (tokens) for the layer shapes of the decode models;
  * SDPA attention TFLOP/s against sequence length (forward, forward+backward);
  * elementwise bandwidth against tensor size.

  python3 -m lab.bench_decode                 # on the GPU; writes $OUT/decode-h100.json (~6 min)
  python3 -m lab.bench_decode --quick         # one small model, two batches (~1 min)
  python3 -m lab.bench_decode --device cpu --tiny   # shake out bugs without a GPU

Every case runs in its own try/except; a failure is recorded and the rest carries on.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import traceback
from pathlib import Path

from lab.bench_kernels import (
    Timer,
    attention_sweep,
    ceilings,
    cuda_device_env,
    elementwise_sweep,
    gemm_sweep,
    host_info,
    launch_costs,
    log,
)
from tools.validation_cases import MODELS as CASE_MODELS

MODELS = {  # the 0.5-3B configs are the validation cases' own; the 8B is Llama 3.1 (head_dim given)
    **{k: CASE_MODELS[k] for k in ("qwen2.5-0.5b", "llama-3.2-1b", "llama-3.2-3b")},
    "llama-3.1-8b": {"model_type": "llama", "num_hidden_layers": 32, "hidden_size": 4096, "num_attention_heads": 32,
                     "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 14336, "vocab_size": 128256,
                     "tie_word_embeddings": False},
}
TINY = {
    "tiny-llama": {"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
                   "num_key_value_heads": 2, "intermediate_size": 128, "vocab_size": 1000,
                   "tie_word_embeddings": False},
    "tiny-qwen2": {"model_type": "qwen2", "num_hidden_layers": 3, "hidden_size": 64, "num_attention_heads": 4,
                   "num_key_value_heads": 2, "intermediate_size": 128, "vocab_size": 1000,
                   "tie_word_embeddings": True},
}
BATCHES = [1, 8, 32, 64]
PROMPT = 512
GEN = 32  # decode steps timed per run


def _hf_config(cfg: dict):
    import transformers

    cfg = dict(cfg)
    mt = cfg.pop("model_type")
    cls = {"llama": transformers.LlamaConfig, "qwen2": transformers.Qwen2Config, "gpt2": transformers.GPT2Config}[mt]
    cfg.update(pad_token_id=0, bos_token_id=1, eos_token_id=2)
    if mt == "gpt2":
        cfg.update(resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
    else:
        cfg.update(attention_dropout=0.0)
    return cls(**cfg)


def build_hf(cfg: dict, device: str):
    import torch
    import transformers

    hf = _hf_config(cfg)
    dtype = torch.bfloat16 if device == "cuda" else torch.float32
    with torch.device(device):
        model = transformers.AutoModelForCausalLM.from_config(hf, dtype=dtype, attn_implementation="sdpa")
    model.eval()
    for p in model.parameters():
        p.requires_grad_(False)
    return model, hf


def eager_decode(model, hf, device: str, batch: int, prompt: int, gen: int, reps: int = 2) -> dict:
    """Per-step seconds of HF generate() eager decoding (greedy, DynamicCache)."""
    import torch

    tm = Timer(device)
    g = torch.Generator(device=device).manual_seed(batch)
    x = torch.randint(3, hf.vocab_size, (batch, prompt), device=device, generator=g)
    mask = torch.ones_like(x)

    def run(n):
        with torch.no_grad():
            return model.generate(x, attention_mask=mask, max_new_tokens=n, min_new_tokens=n, do_sample=False,
                                  pad_token_id=0, eos_token_id=None)

    run(2)
    t1 = statistics.median(tm.wall(lambda: run(1), reps=3))
    tn = statistics.median(tm.wall(lambda: run(gen + 1), reps=reps))
    o = run(gen + 1)
    assert o.shape[1] == prompt + gen + 1, o.shape
    return {"step_s": (tn - t1) / gen, "prefill_plus_first_s": t1, "context_mean": prompt + gen / 2}


def prefill_time(model, hf, device: str, batch: int, prompt: int) -> float:
    import torch

    tm = Timer(device)
    x = torch.randint(3, hf.vocab_size, (batch, prompt), device=device)
    with torch.no_grad():
        model(input_ids=x, logits_to_keep=1)
        return statistics.median(tm.wall(lambda: model(input_ids=x, use_cache=True, logits_to_keep=1), reps=3))


def _warm_on_side_stream(torch, step, n: int = 2) -> None:
    """Run `step` n times on a side stream, as CUDA-graph capture requires before it records."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(n):
            step()
    torch.cuda.current_stream().wait_stream(s)


def _graph_step_s(torch, step, pos, prompt: int, gen: int) -> float:
    """Seconds a decode step takes replayed from a CUDA graph: capture one `step`, replay it once
    from position `prompt` (warm), then time `gen` replays from `prompt` again. `step` advances the
    position tensor `pos` itself, so each replay decodes the next token."""
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        step()
    pos.fill_(prompt)
    graph.replay()
    torch.cuda.synchronize()
    pos.fill_(prompt)
    st, en = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    st.record()
    for _ in range(gen):
        graph.replay()
    en.record()
    en.synchronize()
    return st.elapsed_time(en) / 1e3 / gen


def hf_graph_decode(model, hf, device: str, batch: int, prompt: int, gen: int) -> dict:
    """HF model + StaticCache, one-token forward captured in a CUDA graph and replayed `gen` times."""
    import torch
    import transformers

    L = prompt + gen + 8
    try:
        cache = transformers.StaticCache(config=hf, max_cache_len=L)
    except TypeError:
        cache = transformers.StaticCache(config=hf, max_batch_size=batch, max_cache_len=L, device=device,
                                         dtype=next(model.parameters()).dtype)
    x = torch.randint(3, hf.vocab_size, (batch, prompt), device=device)
    with torch.no_grad():
        pos = torch.arange(prompt, device=device)
        out = model(input_ids=x, past_key_values=cache, cache_position=pos, use_cache=True, logits_to_keep=1)
        tok = out.logits[:, -1:].argmax(-1)
        cpos = torch.tensor([prompt], device=device)

        def step():
            o = model(input_ids=tok, past_key_values=cache, cache_position=cpos,
                      position_ids=cpos.view(1, 1).expand(batch, 1), use_cache=True)
            tok.copy_(o.logits[:, -1:].argmax(-1))
            cpos.add_(1)

        if device != "cuda":
            t0 = time.perf_counter()
            for _ in range(gen):
                step()
            return {"step_s": (time.perf_counter() - t0) / gen, "captured": False}
        _warm_on_side_stream(torch, step)
        return {"step_s": _graph_step_s(torch, step, cpos, prompt, gen), "captured": True, "cache_len": L}


class OwnDecoder:
    """A Llama-style decoder with the same weight shapes as the HF model and a static KV cache:
    one step = embedding, per layer (RMSNorm, fused QKV, rotary-like elementwise, cache write,
    SDPA over the cache with a length mask, output proj, RMSNorm, fused gate/up, SiLU*mul, down),
    final norm, LM head, argmax. What a compiled engine runs, without its custom kernels."""

    def __init__(self, cfg: dict, batch: int, cache_len: int, device: str):
        import torch

        dt = torch.bfloat16 if device == "cuda" else torch.float32
        d, nl = cfg["hidden_size"], cfg["num_hidden_layers"]
        h, kv = cfg["num_attention_heads"], cfg["num_key_value_heads"]
        hd = cfg.get("head_dim") or d // h
        inter, vocab = cfg["intermediate_size"], cfg["vocab_size"]
        self.h, self.kv, self.hd, self.batch, self.L = h, kv, hd, batch, cache_len

        def r(*s):
            return torch.randn(*s, device=device, dtype=dt) * 0.02

        self.emb = r(vocab, d)
        self.head = self.emb if cfg.get("tie_word_embeddings") else r(vocab, d)
        self.layers = [dict(qkv=r((h + 2 * kv) * hd, d), o=r(d, h * hd), gu=r(2 * inter, d), down=r(d, inter),
                            n1=torch.ones(d, device=device, dtype=dt), n2=torch.ones(d, device=device, dtype=dt),
                            k=torch.zeros(batch, kv, cache_len, hd, device=device, dtype=dt),
                            v=torch.zeros(batch, kv, cache_len, hd, device=device, dtype=dt)) for _ in range(nl)]
        for ly in self.layers:  # a filled cache: never time on zeros
            ly["k"].normal_()
            ly["v"].normal_()
        self.nf = torch.ones(d, device=device, dtype=dt)
        self.tok = torch.randint(3, vocab, (batch, 1), device=device)
        self.pos = torch.zeros(1, dtype=torch.long, device=device)
        self.ar = torch.arange(cache_len, device=device)
        self.inter = inter

    @staticmethod
    def _norm(x, w):
        import torch

        return torch.nn.functional.rms_norm(x, (x.shape[-1],), w, 1e-6)

    def step(self):
        import torch.nn.functional as F

        b, h, kv, hd = self.batch, self.h, self.kv, self.hd
        x = F.embedding(self.tok, self.emb)  # [b,1,d]
        mask = (self.ar <= self.pos).view(1, 1, 1, -1)
        for ly in self.layers:
            a = self._norm(x, ly["n1"]) @ ly["qkv"].t()
            q, k, v = a.split([h * hd, kv * hd, kv * hd], dim=-1)
            q = q.view(b, 1, h, hd).transpose(1, 2) * 1.0001  # stands in for rotary (one elementwise pass)
            k = k.view(b, 1, kv, hd).transpose(1, 2) * 1.0001
            ly["k"].index_copy_(2, self.pos, k)
            ly["v"].index_copy_(2, self.pos, v.view(b, 1, kv, hd).transpose(1, 2))
            o = F.scaled_dot_product_attention(q, ly["k"], ly["v"], attn_mask=mask, enable_gqa=True)
            x = x + o.transpose(1, 2).reshape(b, 1, h * hd) @ ly["o"].t()
            gu = self._norm(x, ly["n2"]) @ ly["gu"].t()
            g, u = gu.split([self.inter, self.inter], dim=-1)
            x = x + (F.silu(g) * u) @ ly["down"].t()
        logits = self._norm(x, self.nf) @ self.head.t()
        self.tok.copy_(logits.argmax(-1))
        self.pos.add_(1)
        return logits


def own_graph_decode(cfg: dict, device: str, batch: int, prompt: int, gen: int, eager: bool = False) -> dict:
    import torch

    dec = OwnDecoder(cfg, batch, prompt + gen + 8, device)
    if device != "cuda":
        dec.pos.fill_(prompt)
        t0 = time.perf_counter()
        with torch.no_grad():
            for _ in range(min(gen, 4)):
                dec.step()
        return {"step_s": (time.perf_counter() - t0) / min(gen, 4), "captured": False}
    with torch.no_grad():
        dec.pos.fill_(prompt)
        _warm_on_side_stream(torch, dec.step)
        out = {}
        if eager:  # the same step launched kernel by kernel: the launch-bound cost without HF's Python
            dec.pos.fill_(prompt)
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(gen):
                dec.step()
            torch.cuda.synchronize()
            out["eager_step_s"] = (time.perf_counter() - t0) / gen
        out.update(step_s=_graph_step_s(torch, dec.step, dec.pos, prompt, gen), captured=True, cache_len=dec.L)
    del dec
    torch.cuda.empty_cache()
    return out


def run_decode(models: dict, batches: list[int], device: str, prompt: int, gen: int, deadline: float,
               reps: int = 2) -> list[dict]:
    import torch

    recs = []
    for name, cfg in models.items():
        if time.time() > deadline:
            log(f"{name}: skipped, past the deadline")
            recs.append({"model": name, "error": "skipped: deadline"})
            continue
        try:
            t0 = time.time()
            model, hf = build_hf(cfg, device)
            nparams = sum(p.numel() for p in model.parameters())
            log(f"{name}: built ({nparams / 1e9:.2f}B) in {time.time() - t0:.1f}s")
        except Exception as e:
            recs.append({"model": name, "error": f"build: {e!r}"})
            log(f"{name}: build failed: {e!r}")
            continue
        for b in batches:
            rec = {"model": name, "config": cfg, "params": nparams, "batch": b, "prompt": prompt, "gen": gen}
            cases = (("prefill", lambda m=model, h=hf, b=b: {"s": prefill_time(m, h, device, b, prompt)}),
                     ("eager", lambda m=model, h=hf, b=b: eager_decode(m, h, device, b, prompt, gen, reps)),
                     ("graphs_hf", lambda m=model, h=hf, b=b: hf_graph_decode(m, h, device, b, prompt, gen)))
            for key, fn in cases:
                if time.time() > deadline:
                    rec[key] = {"error": "skipped: deadline"}
                    continue
                try:
                    rec[key] = fn()
                except Exception as e:
                    rec[key] = {"error": repr(e)[:400], "trace": traceback.format_exc()[-1500:]}
                if device == "cuda":
                    torch.cuda.empty_cache()
            recs.append(rec)
            _short(rec)
        del model
        if device == "cuda":
            torch.cuda.empty_cache()
        for rec in [r for r in recs if r.get("model") == name and "batch" in r]:
            if time.time() > deadline:
                rec["graphs_own"] = {"error": "skipped: deadline"}
                continue
            try:
                rec["graphs_own"] = own_graph_decode(cfg, device, rec["batch"], prompt, gen, eager=True)
            except Exception as e:
                rec["graphs_own"] = {"error": repr(e)[:400], "trace": traceback.format_exc()[-1500:]}
            if device == "cuda":
                torch.cuda.empty_cache()
            log(f"  {name} b={rec['batch']} graphs_own {_ms(rec['graphs_own'])}")
    return recs


def _ms(d: dict | None) -> str:
    if not d:
        return "-"
    if "error" in d:
        return "ERR"
    v = d.get("step_s", d.get("s"))
    return f"{v * 1e3:.2f}ms" if v is not None else "-"


def _short(rec: dict) -> None:
    log(f"  {rec['model']} b={rec['batch']}: prefill {_ms(rec.get('prefill'))} eager {_ms(rec.get('eager'))} "
        f"graphs_hf {_ms(rec.get('graphs_hf'))}"
        + (f" ({rec['graphs_hf']['error'][:120]})" if "error" in rec.get("graphs_hf", {}) else ""))


HOST_ARCHS = {
    "llama": {"model_type": "llama", "hidden_size": 256, "num_attention_heads": 4, "num_key_value_heads": 2,
              "intermediate_size": 512, "vocab_size": 4096, "tie_word_embeddings": False},
    "qwen2": {"model_type": "qwen2", "hidden_size": 256, "num_attention_heads": 4, "num_key_value_heads": 2,
              "intermediate_size": 512, "vocab_size": 4096, "tie_word_embeddings": True},
    "gpt2": {"model_type": "gpt2", "n_embd": 256, "n_head": 4, "vocab_size": 4096, "n_positions": 1024},
}


def host_sweep(device: str, layers=(2, 8, 24)) -> list[dict]:
    """Host-bound costs of HF eager: tiny-width models with growing layer counts, so the GPU work is
    negligible and time = fixed + per-layer host cost, for a forward (prefill), a generate() step and
    a training step (mixed precision and pure bf16, AdamW)."""
    import torch

    tm = Timer(device)
    out = []
    for arch, base in HOST_ARCHS.items():
        for nl in layers:
            cfg = dict(base)
            cfg["n_layer" if arch == "gpt2" else "num_hidden_layers"] = nl
            rec: dict = {"arch": arch, "layers": nl}
            try:
                model, hf = build_hf(cfg, device)
                x = torch.randint(3, hf.vocab_size, (1, 128), device=device)
                with torch.no_grad():
                    for _ in range(3):
                        model(input_ids=x, use_cache=True, logits_to_keep=1)
                    rec["forward_s"] = statistics.median(
                        tm.wall(lambda m=model, x=x: m(input_ids=x, use_cache=True, logits_to_keep=1), reps=10))
                rec["generate_step_s"] = eager_decode(model, hf, device, 1, 128, 16, reps=5)["step_s"]
                for mode in ("mixed", "bf16"):
                    model.float() if mode == "mixed" else model.to(torch.bfloat16)
                    model.train()
                    for p in model.parameters():
                        p.requires_grad_(True)
                    opt = torch.optim.AdamW(model.parameters(), lr=1e-5)

                    def step(m=model, o=opt, x=x, amp=(mode == "mixed")):
                        o.zero_grad(set_to_none=True)
                        with torch.autocast(device_type=device, dtype=torch.bfloat16, enabled=amp):
                            loss = m(input_ids=x, labels=x).loss
                        loss.backward()
                        o.step()

                    for _ in range(3):
                        step()
                    rec[f"train_{mode}_s"] = statistics.median(tm.wall(step, reps=7))
                    del opt
                del model
            except Exception as e:
                rec["error"] = repr(e)[:400]
            out.append(rec)
            log(f"  host {arch} L={nl}: " + " ".join(f"{k}={v * 1e3:.2f}ms" for k, v in rec.items()
                                                      if k.endswith("_s")))
    return out


def diag(device: str) -> dict:
    """Where eager decode's fixed per-step cost goes on this host: sync latency, allocator calls,
    and a 1B model's eager step with a dynamic cache, a static cache and generate()."""
    import torch
    import transformers

    tm = Timer(device)
    out: dict = {}
    x = torch.randn(16, device=device)
    t0 = time.perf_counter()
    for _ in range(300):
        x.add_(1e-6)
        tm.sync()
    out["launch_sync_us"] = (time.perf_counter() - t0) / 300 * 1e6
    t0 = time.perf_counter()
    for _ in range(300):
        x.sum().item()
    out["item_us"] = (time.perf_counter() - t0) / 300 * 1e6
    if device == "cuda":
        ts = []
        for _ in range(20):
            torch.cuda.empty_cache()
            t0 = time.perf_counter()
            y = torch.empty(64 * 2**20, dtype=torch.uint8, device=device)
            y.fill_(1)
            tm.sync()
            ts.append(time.perf_counter() - t0)
            del y
        out["malloc_64mb_us"] = statistics.median(ts) * 1e6
    cfg = MODELS["llama-3.2-1b"] if device != "cpu" else TINY["tiny-llama"]
    model, hf = build_hf(cfg, device)
    for b, prompt in ((1, 512), (8, 2048)):
        xs = torch.randint(3, hf.vocab_size, (b, prompt), device=device)
        rec: dict = {"batch": b, "prompt": prompt}
        with torch.no_grad():
            for name in ("dynamic", "static"):
                try:
                    if name == "static":
                        cache = transformers.StaticCache(config=hf, max_cache_len=prompt + 40)
                        o = model(input_ids=xs, past_key_values=cache, use_cache=True, logits_to_keep=1,
                                  cache_position=torch.arange(prompt, device=device))
                    else:
                        o = model(input_ids=xs, use_cache=True, logits_to_keep=1)
                    cache = o.past_key_values
                    nxt = o.logits[:, -1:].argmax(-1)
                    ts = []
                    for i in range(20):
                        tm.sync()
                        t0 = time.perf_counter()
                        kw = {"cache_position": torch.tensor([prompt + i], device=device)} if name == "static" else {}
                        o = model(input_ids=nxt, past_key_values=cache, use_cache=True, logits_to_keep=1, **kw)
                        nxt = o.logits[:, -1:].argmax(-1)
                        tm.sync()
                        ts.append(time.perf_counter() - t0)
                    rec[f"{name}_step_s"] = statistics.median(ts[4:])
                except Exception as e:
                    rec[f"{name}_error"] = repr(e)[:300]
            try:
                rec["generate_step_s"] = eager_decode(model, hf, device, b, prompt, 16, reps=3)["step_s"]
            except Exception as e:
                rec["generate_error"] = repr(e)[:300]
        out.setdefault("steps", []).append(rec)
        log("diag", rec)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--tiny", action="store_true", help="tiny configs (CPU shake-out)")
    ap.add_argument("--quick", action="store_true", help="one small model, batches 1 and 8, no sweeps")
    ap.add_argument("--host", action="store_true", help="only the host-overhead sweep and a decode re-check")
    ap.add_argument("--diag", action="store_true", help="only where eager decode's per-step host cost goes")
    ap.add_argument("--budget-s", type=float, default=500.0, help="stop starting new cases after this")
    ap.add_argument("--out", default=None, help="output file (default $OUT/decode-h100.json)")
    args = ap.parse_args()
    t_start = time.time()
    deadline = t_start + args.budget_s
    out_dir = Path(os.environ.get("OUT") or "./out")
    out_dir.mkdir(parents=True, exist_ok=True)
    out_path = Path(args.out) if args.out else out_dir / "decode-h100.json"

    import torch
    import transformers

    if args.device == "cuda" and not torch.cuda.is_available():
        log("no CUDA device")
        return 1
    env = {"torch": torch.__version__, "transformers": transformers.__version__,
           "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "host": host_info()}
    if args.device == "cuda":
        env.update(cuda_device_env())
    result: dict = {"env": env, "prompt": PROMPT, "gen": GEN}

    def save():
        result["wall_s"] = time.time() - t_start
        tmp = out_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(result, indent=1, default=str))
        tmp.replace(out_path)

    for key, fn in (("ceilings", lambda: ceilings(args.device)), ("launch", lambda: launch_costs(args.device))):
        try:
            result[key] = fn()
        except Exception as e:
            result[key] = {"error": repr(e)}
        log(key, result[key])
    save()
    if args.diag:
        out_path = out_path.with_name("decode-h100-diag.json")
        try:
            result["diag"] = diag(args.device)
        except Exception as e:
            result["diag"] = {"error": repr(e), "trace": traceback.format_exc()[-1500:]}
        save()
        log("diag:", {k: v for k, v in result["diag"].items() if k != "steps"})
        return 0
    if args.host:
        out_path = out_path.with_name("decode-h100-host.json")
        result["host_sweep"] = host_sweep(args.device, layers=(2, 4) if args.tiny else (2, 8, 24))
        save()
        try:
            result["attention"] = attention_sweep(args.device, shapes=((96, 32), (80, 32)), seqs=(512, 1024, 2048))
        except Exception as e:
            result["attention"] = [{"error": repr(e)}]
        save()
    if args.tiny:
        models, batches, prompt, gen = TINY, [1, 4], 16, 4
    elif args.host:
        models = {k: MODELS[k] for k in ("llama-3.2-1b", "llama-3.1-8b")}
        batches, prompt, gen = [1, 16, 48], PROMPT, 16
    elif args.quick:
        models, batches, prompt, gen = {"qwen2.5-0.5b": MODELS["qwen2.5-0.5b"]}, [1, 8], PROMPT, 8
    else:
        models, batches, prompt, gen = MODELS, BATCHES, PROMPT, GEN
    result.update(prompt=prompt, gen=gen)
    result["decode"] = run_decode(models, batches, args.device, prompt, gen, deadline, reps=5 if args.host else 2)
    save()
    if not (args.quick or args.tiny or args.host):
        for key, fn in (("gemm", gemm_sweep), ("attention", attention_sweep), ("elementwise", elementwise_sweep)):
            if time.time() > deadline + 60:
                result[key] = [{"error": "skipped: deadline"}]
                continue
            try:
                result[key] = fn(args.device)
            except Exception as e:
                result[key] = [{"error": repr(e)}]
            save()
            log(f"{key}: {len(result[key])} points")
    save()
    log(f"\nwrote {out_path} in {time.time() - t_start:.0f}s")
    log(f"{'model':14} {'B':>3} {'prefill':>9} {'eager':>9} {'graphs_hf':>9} {'own':>9} {'own-eager':>9}  "
        "tok/s eager/graphs")
    for r in result["decode"]:
        if "batch" not in r:
            log(f"{r.get('model')}: {r.get('error')}")
            continue
        go = r.get("graphs_own", {})
        oe = f"{go['eager_step_s'] * 1e3:.2f}ms" if "eager_step_s" in go else "-"
        best_g = r.get("graphs_hf", {}).get("step_s") or go.get("step_s")
        es = r.get("eager", {}).get("step_s")
        tps = f"{r['batch'] / es:,.0f}" if es else "-"
        tpg = f"{r['batch'] / best_g:,.0f}" if best_g else "-"
        log(f"{r['model']:14} {r['batch']:>3} {_ms(r.get('prefill')):>9} {_ms(r.get('eager')):>9} "
            f"{_ms(r.get('graphs_hf')):>9} {_ms(go):>9} {oe:>9}  {tps}/{tpg}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
