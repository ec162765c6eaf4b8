"""A word-level GRU language model as a user writes one (an 8,000-word vocabulary embedded in 256 dimensions, two GRU
layers of hidden 384 over 96 tokens, next-word logits at every position): a hidden size above the small-hidden
persistent kernel's, so cuDNN launches every step from the host in training as in inference. Written after a
launched training step became the host's issuing, one floor each way (2026-12-06), to check it out of sample; not
fitted on."""

import torch
from torch import nn

VOCAB, EMBED, HIDDEN, LAYERS, TOKENS = 8_000, 256, 384, 2, 96


class GRULanguageModel(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, EMBED)
        self.gru = nn.GRU(EMBED, HIDDEN, num_layers=LAYERS, batch_first=True)
        self.head = nn.Linear(HIDDEN, VOCAB)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        out, _ = self.gru(self.embed(tokens))
        return self.head(out)


def build() -> nn.Module:
    return GRULanguageModel()


def build_batch(batch: int) -> torch.Tensor:
    return torch.randint(0, VOCAB, (batch, TOKENS))
