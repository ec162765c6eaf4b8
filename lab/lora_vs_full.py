"""Device script (run once on an H100 through the project's device tool; results in tools/data/lora-vs-full-h100.json).

LoRA vs full fine-tuning steps of Llama-shaped models (random weights from config, no downloads) on one GPU:
Hugging Face Trainer's defaults (fp32 weights under bf16 autocast for full, a bf16 base with fp32 adapters under
autocast for LoRA, fused AdamW, SDPA); median of 8 steps after 3 warm-ups between CUDA events; peak memory."""
import json
import os
import subprocess
import time

import peft
import torch
import transformers
from peft import LoraConfig, get_peft_model
from transformers import LlamaConfig, LlamaForCausalLM

OUT = os.environ.get("OUT", ".")
SHAPES = {
    "llama-3.2-1b": dict(hidden_size=2048, num_hidden_layers=16, num_attention_heads=32, num_key_value_heads=8,
                         intermediate_size=8192, vocab_size=128256, tie_word_embeddings=True),
    "llama-3.2-3b": dict(hidden_size=3072, num_hidden_layers=28, num_attention_heads=24, num_key_value_heads=8,
                         intermediate_size=8192, vocab_size=128256, tie_word_embeddings=True),
}
CASES = [("llama-3.2-1b", "training", "all", 4), ("llama-3.2-1b", "lora", "all", 4),
         ("llama-3.2-1b", "lora", "attn", 4), ("llama-3.2-3b", "training", "all", 2),
         ("llama-3.2-3b", "lora", "all", 2)]
SEQ = 2048


def run(shape, mode, targets, batch):
    torch.manual_seed(0)
    cfg = LlamaConfig(**SHAPES[shape], max_position_embeddings=4096)
    cfg._attn_implementation = "sdpa"
    dtype = torch.float32 if mode == "training" else torch.bfloat16
    model = LlamaForCausalLM(cfg).to(device="cuda", dtype=dtype)
    if mode == "lora":
        mlp = ["gate_proj", "up_proj", "down_proj"] if targets == "all" else []
        tm = ["q_proj", "k_proj", "v_proj", "o_proj", *mlp]
        model = get_peft_model(model, LoraConfig(r=16, lora_alpha=32, target_modules=tm, lora_dropout=0.0))
        for p in model.parameters():
            if p.requires_grad:
                p.data = p.data.float()
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=1e-5, fused=True)
    ids = torch.randint(0, cfg.vocab_size, (batch, SEQ), device="cuda")
    times = []
    torch.cuda.reset_peak_memory_stats()
    for i in range(11):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        e.record()
        torch.cuda.synchronize()
        if i >= 3:
            times.append(s.elapsed_time(e) / 1e3)
    times.sort()
    r = dict(model=shape, mode=mode, lora_targets=targets, batch=batch, seq=SEQ, step_s=times[len(times) // 2],
             tokens_per_s=batch * SEQ / times[len(times) // 2], peak_gib=torch.cuda.max_memory_allocated() / 2**30,
             trainable=sum(p.numel() for p in params))
    del model, opt
    torch.cuda.empty_cache()
    return r


def main():
    smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,power.limit", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.strip()
    env = dict(date=time.strftime("%Y-%m-%d"), device=torch.cuda.get_device_name(0), nvidia_smi=smi,
               torch=torch.__version__, transformers=transformers.__version__, peft=peft.__version__,
               cuda=torch.version.cuda)
    out = dict(env=env, method=__doc__, cases=[])
    for c in CASES:
        t = time.time()
        try:
            out["cases"].append(run(*c))
        except Exception as ex:  # record and go on
            out["cases"].append(dict(model=c[0], mode=c[1], lora_targets=c[2], batch=c[3], error=repr(ex)[:300]))
        print(c, round(time.time() - t, 1), out["cases"][-1], flush=True)
        with open(os.path.join(OUT, "lora-vs-full-h100.json"), "w") as f:
            json.dump(out, f, indent=1)


main()
