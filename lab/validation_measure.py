"""Measure one validation case with PyTorch: peak memory (torch.cuda.max_memory_allocated, per
phase) and median times with CUDA events after warm-up. Runs on the device machine (torch,
transformers, peft; bitsandbytes for NF4/int8/8-bit AdamW when importable); also on CPU with
tiny configs to shake out bugs (no memory figures there).
"""

from __future__ import annotations

import gc
import os
import statistics
import time

DECODE_WARM, DECODE_STEPS = 2, 8  # generate: decode steps after the prefill (KV cache holds seq + 10)


def hf_config(cfg: dict):
    import transformers

    cfg = dict(cfg)
    mt = cfg.pop("model_type")
    if mt == "gpt2":
        cfg.update(resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
    elif mt in ("bert", "roberta"):
        cfg.update(hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    else:
        cfg.update(attention_dropout=0.0)
        if mt == "phi3":
            cfg.update(resid_pdrop=0.0, embd_pdrop=0.0, pad_token_id=0)
        if mt == "mixtral":
            cfg.update(router_jitter_noise=0.0, output_router_logits=False)
    return transformers.AutoConfig.for_model(mt, **cfg)


class _Timer:
    def __init__(self, cuda: bool):
        self.cuda = cuda

    def __call__(self, fn, reps: int, warm: int = 1) -> list[float]:
        import torch

        for _ in range(warm):
            fn()
        out = []
        for _ in range(reps):
            if self.cuda:
                s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                s.record()
                fn()
                e.record()
                e.synchronize()
                out.append(s.elapsed_time(e))
            else:
                t0 = time.perf_counter()
                fn()
                out.append((time.perf_counter() - t0) * 1e3)
        return out


# ---- quantized linears (weights only; embeddings and the LM head stay 16-bit) -------------------
def _fp8_linear(lin):
    """Per-tensor fp8 e4m3 weights and dynamic per-tensor fp8 activations through torch._scaled_mm
    (what serving engines' 'fp8' does)."""
    import torch

    class _FP8Linear(torch.nn.Module):
        def __init__(self, lin):
            super().__init__()
            w = lin.weight.data
            scale = (w.abs().amax().float().clamp(min=1e-12) / 448.0)
            self.register_buffer("weight", (w / scale.to(w.dtype)).to(torch.float8_e4m3fn))
            self.register_buffer("w_scale", scale.reshape(()))
            self.bias = lin.bias
            self.out_features = lin.out_features

        def forward(self, x):
            shp = x.shape
            x2 = x.reshape(-1, shp[-1])
            m = x2.shape[0]
            pad = (-m) % 16
            if pad:
                x2 = torch.nn.functional.pad(x2, (0, 0, 0, pad))
            xs = x2.abs().amax().float().clamp(min=1e-12) / 448.0
            xq = (x2 / xs.to(x2.dtype)).to(torch.float8_e4m3fn)
            out = torch._scaled_mm(xq, self.weight.t(), scale_a=xs, scale_b=self.w_scale, out_dtype=torch.bfloat16,
                                   bias=self.bias)
            return out[:m].reshape(*shp[:-1], self.out_features)

    return _FP8Linear(lin)


def quantize_linears(model, fmt: str, device: str) -> int:
    """Replace every nn.Linear inside the blocks (not lm_head/classifier) by a quantized one."""
    import torch

    skip = ("lm_head", "classifier", "score", "pooler")
    n = 0
    for name, mod in list(model.named_modules()):
        for cname, child in list(mod.named_children()):
            if not isinstance(child, torch.nn.Linear) or cname in skip or any(s in name for s in skip):
                continue
            if fmt == "fp8":
                new = _fp8_linear(child)
            elif fmt in ("nf4", "nf4-dq"):
                import bitsandbytes as bnb

                new = bnb.nn.Linear4bit(child.in_features, child.out_features, bias=child.bias is not None,
                                        compute_dtype=torch.bfloat16, compress_statistics=fmt == "nf4-dq",
                                        quant_type="nf4", device="meta")
                new.weight = bnb.nn.Params4bit(child.weight.data.cpu(), requires_grad=False,
                                               compress_statistics=fmt == "nf4-dq", quant_type="nf4")
                if child.bias is not None:
                    new.bias = torch.nn.Parameter(child.bias.data.cpu(), requires_grad=False)
                new = new.to(device)
            elif fmt == "int8":
                import bitsandbytes as bnb

                new = bnb.nn.Linear8bitLt(child.in_features, child.out_features, bias=child.bias is not None,
                                          has_fp16_weights=False, threshold=6.0, device="meta")
                new.weight = bnb.nn.Int8Params(child.weight.data.cpu(), requires_grad=False, has_fp16_weights=False)
                if child.bias is not None:
                    new.bias = torch.nn.Parameter(child.bias.data.cpu(), requires_grad=False)
                new = new.to(device)
            else:
                raise ValueError(f"unknown quantization {fmt!r}")
            setattr(mod, cname, new)
            n += 1
            del child
    gc.collect()
    if device == "cuda":
        torch.cuda.empty_cache()
    return n


def _make_model(case: dict, cfg: dict, device: str):
    import torch
    import transformers

    kind = case["kind"]
    mixed = kind.startswith("mixed")
    hf = hf_config(cfg)
    dtype = torch.float32 if mixed else torch.bfloat16
    encoder = cfg["model_type"] in ("bert", "roberta")
    if encoder:
        cls = transformers.AutoModel if kind == "encode" else transformers.AutoModelForSequenceClassification
    else:
        cls = transformers.AutoModelForCausalLM
    if encoder and kind != "encode":
        hf.num_labels = 2
    with torch.device(device):
        model = cls.from_config(hf, dtype=dtype, attn_implementation="sdpa")
    model.to(device)
    return model, hf, encoder


def _maybe_profile(out: dict, fn, cuda: bool, key: str = "profile") -> None:
    """With GPUADVISOR_PROFILE set: one more call under torch.profiler (lab/profile_summary.py)."""
    if not (cuda and os.environ.get("GPUADVISOR_PROFILE")):
        return
    from lab.profile_summary import profile_call

    try:
        out[key] = profile_call(fn)
    except Exception as e:  # a profile is a diagnostic: never lose the measurement for it
        out[key] = {"error": repr(e)[:300]}


def measure(case: dict, cfg: dict, device: str, reps: int) -> dict:
    import torch

    cuda = device == "cuda"
    kind, batch, seq, opts = case["kind"], case["batch"], case["seq"], case.get("opts", {})
    timer = _Timer(cuda)

    def sync():
        if cuda:
            torch.cuda.synchronize()

    def alloc():
        return torch.cuda.memory_allocated() if cuda else 0

    if cuda:
        gc.collect()
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    base = alloc()

    def peak():
        return (torch.cuda.max_memory_allocated() - base) if cuda else None

    def reset():
        if cuda:
            sync()
            torch.cuda.reset_peak_memory_stats()

    def second_run_peak(fn):
        """Peak bytes of fn's second call: the first warms the allocator and the kernels."""
        o = fn()
        del o
        reset()
        o = fn()
        sync()
        p = peak()
        del o
        return p

    model, hf, encoder = _make_model(case, cfg, device)
    out: dict = {"experts_implementation": getattr(hf, "_experts_implementation", None)}
    quant = opts.get("quant")
    if quant:
        out["quantized_linears"] = quantize_linears(model, quant, device)
    gen = torch.Generator(device=device).manual_seed(0)
    vocab = hf.vocab_size
    x = torch.randint(3, vocab, (batch, seq), device=device, generator=gen)
    sync()
    out["weights_bytes"] = alloc() - base

    if kind in ("generate", "encode", "scoring"):
        model.eval()
        if kind == "generate":
            def prefill():
                with torch.no_grad():
                    return model(input_ids=x, use_cache=True, logits_to_keep=1)

            o = prefill()
            del o
            reset()
            o = prefill()
            sync()
            out["prefill_peak_bytes"] = peak()
            cache = o.past_key_values
            nxt = o.logits[:, -1:].argmax(-1)
            del o
            step_ms = []
            for i in range(DECODE_WARM + DECODE_STEPS):
                if cuda:
                    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    s.record()
                t0 = time.perf_counter()
                with torch.no_grad():
                    o = model(input_ids=nxt, past_key_values=cache, use_cache=True, logits_to_keep=1)
                nxt = o.logits[:, -1:].argmax(-1)
                if cuda:
                    e.record()
                    e.synchronize()
                    ms = s.elapsed_time(e)
                else:
                    ms = (time.perf_counter() - t0) * 1e3
                cache = o.past_key_values
                del o
                if i >= DECODE_WARM:
                    step_ms.append(ms)
            sync()
            out["peak_bytes"] = peak()

            def one_step():
                with torch.no_grad():
                    model(input_ids=nxt, past_key_values=cache, use_cache=True, logits_to_keep=1)

            _maybe_profile(out, one_step, cuda, key="decode_profile")
            out["decode_step_ms"] = statistics.median(step_ms)
            out["decode_steps_ms"] = [round(t, 3) for t in step_ms]
            out["kv_tokens"] = seq + DECODE_WARM + DECODE_STEPS
            del cache, nxt
            fn = prefill
        elif kind == "encode":
            def fn():
                with torch.no_grad():
                    return model(input_ids=x)

            out["peak_bytes"] = second_run_peak(fn)
        else:
            if opts.get("scoring") == "logprobs":  # lm-eval loglikelihood: log-softmax of the bf16 logits
                def fn():
                    with torch.no_grad():
                        logp = torch.nn.functional.log_softmax(model(input_ids=x).logits, dim=-1)
                        return torch.gather(logp[:, :-1], 2, x[:, 1:, None]).sum()
            else:  # with the loss: full-sequence logits and fp32 cross-entropy (perplexity, evaluate)
                def fn():
                    with torch.no_grad():
                        return model(input_ids=x, labels=x)

            out["peak_bytes"] = second_run_peak(fn)
        times = timer(lambda: fn(), reps)
        _maybe_profile(out, fn, cuda)
        out["prefill_ms" if kind != "scoring" else "forward_ms"] = statistics.median(times)
        out["time_ms"] = statistics.median(times)
        out["times_ms"] = [round(t, 3) for t in times]
    else:
        model.train()
        if "ckpt" in kind:
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        base_kind = kind.replace("-ckpt", "")
        if base_kind in ("lora", "qlora"):
            import peft

            lcfg = peft.LoraConfig(r=16, lora_alpha=32, lora_dropout=0.0, target_modules="all-linear")
            model = peft.get_peft_model(model, lcfg)
            if base_kind == "qlora" or "ckpt" in kind:
                model.enable_input_require_grads()
        params = [p for p in model.parameters() if p.requires_grad]
        out["trainable_params"] = sum(p.numel() for p in params)
        o = opts.get("opt", "foreach")
        if o == "8bit":
            import bitsandbytes as bnb

            opt = bnb.optim.AdamW8bit(params, lr=1e-5)
        elif o == "fused" and cuda:
            opt = torch.optim.AdamW(params, lr=1e-5, fused=True)
        else:
            opt = torch.optim.AdamW(params, lr=1e-5, foreach=True if cuda else None)
        amp = kind.startswith("mixed") or bool(opts.get("amp"))
        labels = torch.randint(0, 2, (batch,), device=device) if encoder else x
        phases: dict = {}

        def step(record=False):
            opt.zero_grad(set_to_none=True)
            if record:
                reset()
            with torch.autocast(device_type=device, dtype=torch.bfloat16, enabled=amp):
                loss = model(input_ids=x, labels=labels).loss
            loss.backward()
            if record:
                sync()
                phases["fb_peak_bytes"] = peak()
                reset()
            opt.step()
            if record:
                sync()
                phases["opt_peak_bytes"] = peak()
            del loss

        step()
        sync()
        opt.zero_grad(set_to_none=True)
        sync()
        out["static_bytes"] = alloc() - base
        step(record=True)
        out.update(phases)
        out["peak_bytes"] = max(phases["fb_peak_bytes"], phases["opt_peak_bytes"]) if cuda else None
        times = timer(lambda: step(), reps, warm=0)
        _maybe_profile(out, step, cuda)
        out["step_ms"] = statistics.median(times)
        out["time_ms"] = out["step_ms"]
        out["times_ms"] = [round(t, 3) for t in times]
        del opt, params
    out["reserved_bytes"] = torch.cuda.max_memory_reserved() if cuda else None
    model = x = None  # free them before the next case
    gc.collect()
    if cuda:
        torch.cuda.empty_cache()
    return out


def device_ceilings(device: str) -> dict:
    """A bf16 8192^3 matmul and a 4 GiB device copy, timed with events: the measured peaks."""
    import torch

    if device != "cuda":
        return {}
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    t = _Timer(True)
    ms = statistics.median(t(lambda: a @ b, 20, warm=3))
    tflops = 2 * 8192**3 / (ms / 1e3) / 1e12
    src = torch.empty(2**30, device="cuda", dtype=torch.float32)
    dst = torch.empty_like(src)
    ms = statistics.median(t(lambda: dst.copy_(src), 20, warm=3))
    gbs = 2 * src.numel() * 4 / (ms / 1e3) / 1e9
    a = b = src = dst = None
    torch.cuda.empty_cache()
    return {"bf16_matmul_tflops": tflops, "copy_gbs": gbs}


def environment(device: str) -> dict:
    import torch
    import transformers

    cuda = device == "cuda"
    env = {"torch": torch.__version__, "transformers": transformers.__version__,
           "device_name": torch.cuda.get_device_name() if cuda else "cpu", "driver": None,
           "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    for mod in ("peft", "bitsandbytes"):
        try:
            env[mod] = __import__(mod).__version__
        except Exception as e:  # record why it is missing
            env[mod] = f"missing ({type(e).__name__}: {e})"
    try:  # what trainers default to (decides the --optimizer default)
        env["trainer_default_optim"] = str(transformers.TrainingArguments(output_dir="/tmp/ta").optim)
        import torch.optim.optimizer as topt

        p = torch.nn.Parameter(torch.zeros(4, device="cuda" if cuda else "cpu"))
        fused, foreach = topt._default_to_fused_or_foreach([p], False, False)
        env["torch_adamw_default"] = {"fused": fused, "foreach": foreach}
    except Exception as e:
        env["trainer_default_optim"] = f"unknown ({type(e).__name__}: {e})"
    if cuda:
        try:
            import pynvml

            pynvml.nvmlInit()
            env["driver"] = pynvml.nvmlSystemGetDriverVersion()
        except Exception as e:
            env["driver"] = f"unknown ({e})"
        env.update(device_ceilings(device))
    return env
