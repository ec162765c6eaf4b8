"""A two-layer bidirectional LSTM named-entity tagger as a user writes one (vocabulary 20k, embeddings 100, hidden 96
each way, 64 tokens, 9 tags a token): a hidden size cuDNN trains in persistent kernels both ways, in a layout (two
layers, two directions) the memory grid's persistent calls cover but no measured model had. Written after the
recurrent memory and set-up were measured call by call (2026-12-05, night), to check them out of sample; not fitted
on."""

import torch
from torch import nn

VOCAB, EMBED, HIDDEN, LAYERS, TAGS, SEQ = 20_000, 100, 96, 2, 9, 64


class Tagger(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, EMBED)
        self.lstm = nn.LSTM(EMBED, HIDDEN, num_layers=LAYERS, batch_first=True, bidirectional=True)
        self.head = nn.Linear(2 * HIDDEN, TAGS)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        out, _ = self.lstm(self.embed(ids))
        return self.head(out)


def build() -> nn.Module:
    return Tagger()


def build_batch(batch: int) -> torch.Tensor:
    return torch.randint(0, VOCAB, (batch, SEQ))
