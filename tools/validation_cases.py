"""The validation set: model configs (as published, random weights) and the workload cases.

Every case has a fixed id (its position in CASES, from 1) and is `held_out` when id % 3 == 0:
that rule was fixed before any error was looked at, and held-out cases are never used to
calibrate the estimator (they are reported separately).

Case kinds: generate (prefill with KV cache + decode steps), encode (encoder forward, no grad),
scoring (forward over the whole sequence with full logits and the loss, no grad), mixed (fp32
weights + bf16 autocast), pure (bf16 weights, grads, states), lora, qlora (NF4 base); a `-ckpt`
suffix means activation checkpointing. Options: opt (foreach | fused | 8bit), quant (nf4 |
nf4-dq | int8 | fp8) for generate/qlora, amp (LoRA/QLoRA under bf16 autocast, as Trainer(bf16=True)
runs them), scoring ("loss": labels and the fp32 cross-entropy, as perplexity and Trainer.evaluate
do; "logprobs": log-softmax of the bf16 logits, as lm-eval's loglikelihood does).
"""

from __future__ import annotations

# HF configs (architecture keys only); dropout is turned off when the model is built.
MODELS: dict[str, dict] = {
    "gpt2": {"model_type": "gpt2", "n_layer": 12, "n_embd": 768, "n_head": 12, "vocab_size": 50257,
             "n_positions": 1024},
    "gpt2-medium": {"model_type": "gpt2", "n_layer": 24, "n_embd": 1024, "n_head": 16, "vocab_size": 50257,
                    "n_positions": 1024},
    "bert-base": {"model_type": "bert", "num_hidden_layers": 12, "hidden_size": 768, "num_attention_heads": 12,
                  "intermediate_size": 3072, "vocab_size": 30522, "max_position_embeddings": 512,
                  "type_vocab_size": 2},
    "roberta-large": {"model_type": "roberta", "num_hidden_layers": 24, "hidden_size": 1024,
                      "num_attention_heads": 16, "intermediate_size": 4096, "vocab_size": 50265,
                      "max_position_embeddings": 514, "type_vocab_size": 1, "pad_token_id": 1},
    "qwen2.5-0.5b": {"model_type": "qwen2", "num_hidden_layers": 24, "hidden_size": 896, "num_attention_heads": 14,
                     "num_key_value_heads": 2, "intermediate_size": 4864, "vocab_size": 151936,
                     "tie_word_embeddings": True},
    "tinyllama-1.1b": {"model_type": "llama", "num_hidden_layers": 22, "hidden_size": 2048,
                       "num_attention_heads": 32, "num_key_value_heads": 4, "intermediate_size": 5632,
                       "vocab_size": 32000, "tie_word_embeddings": False},
    "llama-3.2-1b": {"model_type": "llama", "num_hidden_layers": 16, "hidden_size": 2048, "num_attention_heads": 32,
                     "num_key_value_heads": 8, "head_dim": 64, "intermediate_size": 8192, "vocab_size": 128256,
                     "tie_word_embeddings": True},
    "llama-3.2-3b": {"model_type": "llama", "num_hidden_layers": 28, "hidden_size": 3072, "num_attention_heads": 24,
                     "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 8192, "vocab_size": 128256,
                     "tie_word_embeddings": True},
    "llama-3-8b": {"model_type": "llama", "num_hidden_layers": 32, "hidden_size": 4096, "num_attention_heads": 32,
                   "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 128256,
                   "tie_word_embeddings": False},
    "llama-2-7b": {"model_type": "llama", "num_hidden_layers": 32, "hidden_size": 4096, "num_attention_heads": 32,
                   "num_key_value_heads": 32, "intermediate_size": 11008, "vocab_size": 32000,
                   "tie_word_embeddings": False},
    "gemma-2b": {"model_type": "gemma", "num_hidden_layers": 18, "hidden_size": 2048, "num_attention_heads": 8,
                 "num_key_value_heads": 1, "head_dim": 256, "intermediate_size": 16384, "vocab_size": 256000,
                 "hidden_act": "gelu_pytorch_tanh", "hidden_activation": "gelu_pytorch_tanh",
                 "tie_word_embeddings": True},
    "gemma-2-2b": {"model_type": "gemma2", "num_hidden_layers": 26, "hidden_size": 2304, "num_attention_heads": 8,
                   "num_key_value_heads": 4, "head_dim": 256, "intermediate_size": 9216, "vocab_size": 256000,
                   "hidden_act": "gelu_pytorch_tanh", "hidden_activation": "gelu_pytorch_tanh",
                   "final_logit_softcapping": 30.0, "attn_logit_softcapping": 50.0, "query_pre_attn_scalar": 256,
                   "sliding_window": 4096, "tie_word_embeddings": True},
    "phi-3-mini": {"model_type": "phi3", "num_hidden_layers": 32, "hidden_size": 3072, "num_attention_heads": 32,
                   "num_key_value_heads": 32, "intermediate_size": 8192, "vocab_size": 32064,
                   "tie_word_embeddings": False},
    # MoE (Mixtral architecture, scaled down; random weights)
    "mixtral-0.7b": {"model_type": "mixtral", "num_hidden_layers": 12, "hidden_size": 1024, "num_attention_heads": 16,
                     "num_key_value_heads": 8, "intermediate_size": 2048, "vocab_size": 32000,
                     "num_local_experts": 8, "num_experts_per_tok": 2, "tie_word_embeddings": False},
    "mixtral-3.5b": {"model_type": "mixtral", "num_hidden_layers": 16, "hidden_size": 2048, "num_attention_heads": 16,
                     "num_key_value_heads": 8, "intermediate_size": 4096, "vocab_size": 32000,
                     "num_local_experts": 8, "num_experts_per_tok": 2, "tie_word_embeddings": False},
}

TINY: dict[str, dict] = {
    "tiny-gpt2": {"model_type": "gpt2", "n_layer": 2, "n_embd": 64, "n_head": 4, "vocab_size": 1000,
                  "n_positions": 128},
    "tiny-llama": {"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
                   "num_key_value_heads": 2, "intermediate_size": 128, "vocab_size": 1000,
                   "tie_word_embeddings": False},
    "tiny-bert": {"model_type": "bert", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
                  "intermediate_size": 128, "vocab_size": 1000, "max_position_embeddings": 128,
                  "type_vocab_size": 2},
    "tiny-mixtral": {"model_type": "mixtral", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
                     "num_key_value_heads": 2, "intermediate_size": 128, "vocab_size": 1000,
                     "num_local_experts": 4, "num_experts_per_tok": 2},
    "tiny-gemma": {"model_type": "gemma", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
                   "num_key_value_heads": 1, "head_dim": 16, "intermediate_size": 128, "vocab_size": 1000,
                   "hidden_act": "gelu_pytorch_tanh", "hidden_activation": "gelu_pytorch_tanh"},
}

# (model, kind, batch, seq, options)
_C = [
    ("gpt2", "generate", 32, 512, {}),
    ("gpt2", "scoring", 16, 1024, {}),
    ("gpt2", "mixed", 8, 1024, {"opt": "foreach"}),
    ("gpt2", "pure", 8, 1024, {"opt": "foreach"}),
    ("gpt2", "lora", 8, 1024, {}),
    ("gpt2", "mixed-ckpt", 32, 1024, {"opt": "fused"}),
    ("gpt2-medium", "generate", 32, 512, {}),
    ("gpt2-medium", "scoring", 32, 1024, {}),
    ("gpt2-medium", "mixed", 16, 1024, {"opt": "fused"}),
    ("gpt2-medium", "lora-ckpt", 16, 1024, {}),
    ("bert-base", "encode", 64, 512, {}),
    ("bert-base", "mixed", 32, 512, {"opt": "foreach"}),
    ("bert-base", "pure", 32, 512, {"opt": "fused"}),
    ("roberta-large", "encode", 64, 512, {}),
    ("roberta-large", "mixed", 16, 512, {"opt": "fused"}),
    ("roberta-large", "lora", 16, 512, {}),
    ("qwen2.5-0.5b", "generate", 32, 1024, {}),
    ("qwen2.5-0.5b", "scoring", 8, 2048, {}),
    ("qwen2.5-0.5b", "mixed", 4, 2048, {"opt": "foreach"}),
    ("qwen2.5-0.5b", "mixed", 4, 2048, {"opt": "fused"}),
    ("qwen2.5-0.5b", "pure", 8, 1024, {"opt": "foreach"}),
    ("qwen2.5-0.5b", "lora", 8, 1024, {}),
    ("qwen2.5-0.5b", "lora-ckpt", 16, 2048, {}),
    ("tinyllama-1.1b", "generate", 16, 2048, {}),
    ("tinyllama-1.1b", "scoring", 4, 2048, {}),
    ("tinyllama-1.1b", "mixed", 4, 1024, {"opt": "fused"}),
    ("tinyllama-1.1b", "pure-ckpt", 16, 2048, {"opt": "foreach"}),
    ("tinyllama-1.1b", "mixed", 4, 1024, {"opt": "8bit"}),
    ("tinyllama-1.1b", "qlora-ckpt", 8, 1024, {"quant": "nf4"}),
    ("llama-3.2-1b", "generate", 64, 1024, {}),
    ("llama-3.2-1b", "scoring", 8, 2048, {}),
    ("llama-3.2-1b", "mixed", 8, 1024, {"opt": "foreach"}),
    ("llama-3.2-1b", "mixed", 8, 1024, {"opt": "fused"}),
    ("llama-3.2-1b", "pure", 8, 2048, {"opt": "fused"}),
    ("llama-3.2-1b", "lora", 8, 1024, {}),
    ("llama-3.2-1b", "lora-ckpt", 16, 2048, {}),
    ("llama-3.2-1b", "qlora", 4, 1024, {"quant": "nf4-dq"}),
    ("llama-3.2-3b", "generate", 16, 2048, {}),
    ("llama-3.2-3b", "scoring", 4, 4096, {}),
    ("llama-3.2-3b", "mixed-ckpt", 4, 2048, {"opt": "fused"}),
    ("llama-3.2-3b", "mixed", 1, 2048, {"opt": "fused"}),
    ("llama-3.2-3b", "pure", 2, 2048, {"opt": "fused"}),
    ("llama-3.2-3b", "lora", 4, 2048, {}),
    ("llama-3.2-3b", "lora-ckpt", 8, 4096, {}),
    ("llama-3.2-3b", "qlora-ckpt", 8, 2048, {"quant": "nf4"}),
    ("llama-3.2-3b", "pure", 4, 1024, {"opt": "8bit"}),
    ("llama-3-8b", "generate", 8, 4096, {}),
    ("llama-3-8b", "scoring", 2, 4096, {}),
    ("llama-3-8b", "lora-ckpt", 4, 2048, {}),
    ("llama-3-8b", "qlora-ckpt", 4, 4096, {"quant": "nf4-dq"}),
    ("llama-3-8b", "generate", 8, 2048, {"quant": "nf4"}),
    ("llama-3-8b", "generate", 4, 2048, {"quant": "int8"}),
    ("llama-3-8b", "generate", 8, 2048, {"quant": "fp8"}),
    ("gemma-2b", "generate", 16, 2048, {}),
    ("gemma-2b", "scoring", 4, 2048, {}),
    ("gemma-2b", "mixed", 2, 2048, {"opt": "fused"}),
    ("gemma-2b", "lora-ckpt", 8, 2048, {}),
    ("phi-3-mini", "generate", 8, 2048, {}),
    ("phi-3-mini", "pure", 2, 2048, {"opt": "foreach"}),
    ("phi-3-mini", "lora", 4, 1024, {}),
    ("phi-3-mini", "lora-ckpt", 8, 2048, {}),
    ("mixtral-0.7b", "generate", 32, 1024, {}),
    ("mixtral-0.7b", "mixed", 8, 1024, {"opt": "foreach"}),
    ("mixtral-0.7b", "pure", 16, 1024, {"opt": "fused"}),
    ("mixtral-0.7b", "scoring", 16, 1024, {}),
    ("mixtral-3.5b", "mixed", 4, 1024, {"opt": "fused"}),
    ("mixtral-3.5b", "pure-ckpt", 8, 2048, {"opt": "fused"}),
    ("mixtral-3.5b", "lora-ckpt", 8, 2048, {}),
    ("llama-2-7b", "generate", 8, 2048, {}),
    ("llama-2-7b", "lora-ckpt", 4, 2048, {}),
    ("llama-2-7b", "generate", 4, 2048, {"quant": "fp8"}),
    ("llama-2-7b", "scoring", 4, 2048, {}),
    ("gemma-2-2b", "generate", 8, 2048, {}),
    ("gemma-2-2b", "scoring", 4, 2048, {}),
    # second run: LoRA/QLoRA under bf16 autocast (what Trainer(bf16=True) does), lm-eval-style scoring
    # (log-softmax of bf16 logits), more MoE training and quantized generation
    ("llama-3.2-1b", "lora", 8, 1024, {"amp": True}),
    ("llama-3.2-1b", "lora-ckpt", 16, 2048, {"amp": True}),
    ("llama-3.2-3b", "lora", 4, 2048, {"amp": True}),
    ("qwen2.5-0.5b", "lora", 8, 1024, {"amp": True}),
    ("phi-3-mini", "lora", 4, 1024, {"amp": True}),
    ("tinyllama-1.1b", "lora", 8, 1024, {"amp": True}),
    ("llama-3.2-3b", "qlora", 4, 2048, {"quant": "nf4", "amp": True}),
    ("llama-3-8b", "qlora-ckpt", 4, 2048, {"quant": "nf4", "amp": True}),
    ("gpt2-medium", "lora", 16, 1024, {"amp": True}),
    ("gemma-2b", "lora", 4, 2048, {"amp": True}),
    ("llama-3.2-1b", "scoring", 8, 2048, {"scoring": "logprobs"}),
    ("llama-3.2-3b", "scoring", 4, 4096, {"scoring": "logprobs"}),
    ("gemma-2b", "scoring", 4, 2048, {"scoring": "logprobs"}),
    ("qwen2.5-0.5b", "scoring", 8, 2048, {"scoring": "logprobs"}),
    ("llama-3-8b", "scoring", 2, 4096, {"scoring": "logprobs"}),
    ("gpt2", "scoring", 16, 1024, {"scoring": "logprobs"}),
    ("mixtral-0.7b", "mixed", 4, 2048, {"opt": "fused"}),
    ("mixtral-0.7b", "pure-ckpt", 16, 2048, {"opt": "foreach"}),
    ("mixtral-3.5b", "pure", 8, 1024, {"opt": "foreach"}),
    ("mixtral-3.5b", "mixed-ckpt", 8, 2048, {"opt": "fused"}),
    ("mixtral-3.5b", "generate", 16, 2048, {}),
    ("mixtral-0.7b", "lora", 8, 1024, {"amp": True}),
    ("tinyllama-1.1b", "generate", 16, 2048, {"quant": "nf4-dq"}),
    ("llama-3.2-3b", "generate", 8, 2048, {"quant": "int8"}),
    ("mixtral-3.5b", "scoring", 4, 2048, {"scoring": "logprobs"}),
    ("llama-3.2-1b", "pure", 8, 1024, {"opt": "8bit"}),
]


def _mk(i: int, c: tuple) -> dict:
    model, kind, batch, seq, opts = c
    return {"id": i, "model": model, "kind": kind, "batch": batch, "seq": seq, "opts": dict(opts),
            "held_out": i % 3 == 0}


CASES: list[dict] = [_mk(i + 1, c) for i, c in enumerate(_C)]

TINY_CASES: list[dict] = [
    _mk(i + 1, c) for i, c in enumerate(
        [(m, k, 2, 32, {}) for m in ("tiny-gpt2", "tiny-llama", "tiny-gemma")
         for k in ("generate", "scoring", "mixed", "pure", "mixed-ckpt", "lora", "lora-ckpt")]
        + [("tiny-llama", "mixed", 2, 32, {"opt": "fused"}), ("tiny-bert", "encode", 2, 32, {}),
           ("tiny-bert", "mixed", 2, 32, {}), ("tiny-bert", "lora", 2, 32, {}),
           ("tiny-mixtral", "generate", 2, 32, {}), ("tiny-mixtral", "mixed", 2, 32, {}),
           ("tiny-mixtral", "pure-ckpt", 2, 32, {}), ("tiny-mixtral", "lora", 2, 32, {}),
           ("tiny-llama", "lora", 2, 32, {"amp": True}), ("tiny-llama", "scoring", 2, 32, {"scoring": "logprobs"})])
]


def case_label(c: dict) -> str:
    extra = ",".join(k if v is True else f"{v}" for k, v in c.get("opts", {}).items())
    return f"{c['kind']}{'[' + extra + ']' if extra else ''}"
