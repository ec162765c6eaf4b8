"""A review sentiment classifier as a user writes one (a 20,000-word vocabulary embedded in 128 dimensions, one GRU
layer of hidden 256 over 200 tokens, two classes from the last state): a hidden size above the small-hidden
persistent kernel's 192, so cuDNN launches every step from the host, in training as in inference. Written after a
launched inference step became the host's issuing, scaled by the host's dispatch probe (2026-12-06), to check it out
of sample; not fitted on."""

import torch
from torch import nn

VOCAB, EMBED, HIDDEN, TOKENS, CLASSES = 20_000, 128, 256, 200, 2


class ReviewGRU(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, EMBED)
        self.gru = nn.GRU(EMBED, HIDDEN, batch_first=True)
        self.head = nn.Linear(HIDDEN, CLASSES)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        _, state = self.gru(self.embed(tokens))
        return self.head(state[-1])


def build() -> nn.Module:
    return ReviewGRU()


def build_batch(batch: int) -> torch.Tensor:
    return torch.randint(0, VOCAB, (batch, TOKENS))
