"""A small one-layer LSTM text classifier (hidden 128, 20 tokens): launch- and latency-bound recurrence.
Not fitted on: an out-of-sample check."""

import torch
from torch import nn

VOCAB, EMBED, HIDDEN, CLASSES, SEQ = 20_000, 100, 128, 4, 20


class SmallLSTM(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, EMBED)
        self.lstm = nn.LSTM(EMBED, HIDDEN, batch_first=True)
        self.head = nn.Linear(HIDDEN, CLASSES)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        out, _ = self.lstm(self.embed(ids))
        return self.head(out[:, -1])


def build() -> nn.Module:
    return SmallLSTM()


def build_batch(batch: int) -> torch.Tensor:
    return torch.randint(0, VOCAB, (batch, SEQ))
