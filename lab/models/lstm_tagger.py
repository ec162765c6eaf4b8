"""A one-layer LSTM sequence tagger as a user writes one (vocabulary 20k, embeddings 256, hidden 512, 80 tokens, a
tag per token): the shape PyTorch trains with cuDNN's persistent LSTM kernel at batches of 128 or less. Written
after the recurrent pricer learned which calls run persistent, to check that out of sample; not fitted on."""

import torch
from torch import nn

VOCAB, EMBED, HIDDEN, TAGS, SEQ = 20_000, 256, 512, 48, 80


class Tagger(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, EMBED)
        self.lstm = nn.LSTM(EMBED, HIDDEN, batch_first=True)
        self.head = nn.Linear(HIDDEN, TAGS)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        out, _ = self.lstm(self.embed(ids))
        return self.head(out)


def build() -> nn.Module:
    return Tagger()


def build_batch(batch: int) -> torch.Tensor:
    return torch.randint(0, VOCAB, (batch, SEQ))
