"""A SmolLM-360M-shaped Llama (32 layers, hidden 960, 15 query heads over 5 key-value heads, SwiGLU 2,560,
49,152-token vocabulary, tied embeddings) from Hugging Face's transformers classes with the published
configuration's numbers, as a language model over 512 tokens. Written for the fourth out-of-sample batch of
2026-12-06 (never fitted on): grouped-query attention with a head count no fitted model has."""

import torch
from torch import nn

TOKENS, VOCAB = 512, 49_152


class SmolLM(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        from transformers import LlamaConfig, LlamaForCausalLM

        self.lm = LlamaForCausalLM(LlamaConfig(
            hidden_size=960, intermediate_size=2560, num_hidden_layers=32, num_attention_heads=15,
            num_key_value_heads=5, vocab_size=VOCAB, tie_word_embeddings=True, max_position_embeddings=2048,
            rms_norm_eps=1e-5))

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.lm(input_ids=tokens).logits


def build() -> nn.Module:
    return SmolLM()


def build_batch(batch: int) -> torch.Tensor:
    return torch.randint(0, VOCAB, (batch, TOKENS))
