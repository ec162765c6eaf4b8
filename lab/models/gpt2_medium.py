"""GPT-2 medium (24 layers, d_model 1,024, 16 heads, 50,257-token vocabulary, dropout 0.1) from Hugging Face's
transformers classes with the published configuration's numbers, as a language model over 512 tokens: the logits of
every position. Written for the fourth out-of-sample batch of 2026-12-06 (never fitted on)."""

import torch
from torch import nn

TOKENS, VOCAB = 512, 50_257


class GPT2Medium(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        from transformers import GPT2Config, GPT2LMHeadModel

        self.lm = GPT2LMHeadModel(GPT2Config(n_layer=24, n_embd=1024, n_head=16, n_positions=1024, vocab_size=VOCAB))

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.lm(input_ids=tokens).logits


def build() -> nn.Module:
    return GPT2Medium()


def build_batch(batch: int) -> torch.Tensor:
    return torch.randint(0, VOCAB, (batch, TOKENS))
