"""A two-layer LSTM language model (hidden 1024, 256 tokens, vocabulary 10k): cuDNN's fused multi-layer LSTM.
Not fitted on: an out-of-sample check."""

import torch
from torch import nn

VOCAB, HIDDEN, LAYERS, SEQ = 10_000, 1024, 2, 256


class LSTMLM(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, HIDDEN)
        self.lstm = nn.LSTM(HIDDEN, HIDDEN, num_layers=LAYERS, batch_first=True)
        self.head = nn.Linear(HIDDEN, VOCAB)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        out, _ = self.lstm(self.embed(ids))
        return self.head(out)


def build() -> nn.Module:
    return LSTMLM()


def build_batch(batch: int) -> torch.Tensor:
    return torch.randint(0, VOCAB, (batch, SEQ))
