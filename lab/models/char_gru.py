"""A character-level language model as a user writes one (a vocabulary of 96 characters, embeddings 32, a
three-layer GRU of hidden 128, 200 characters a sample, next-character logits at every step): small hidden sizes,
where cuDNN's inference workspace is its floor per layer (RNN_WORKSPACE_FLOOR_BYTES) and its training runs persistent
kernels both ways. Written after that floor was fitted (2026-12-05, late), to check it out of sample; not fitted on."""

import torch
from torch import nn

VOCAB, EMBED, HIDDEN, LAYERS, SEQ = 96, 32, 128, 3, 200


class CharLM(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, EMBED)
        self.gru = nn.GRU(EMBED, HIDDEN, num_layers=LAYERS, batch_first=True)
        self.head = nn.Linear(HIDDEN, VOCAB)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        out, _ = self.gru(self.embed(ids))
        return self.head(out)


def build() -> nn.Module:
    return CharLM()


def build_batch(batch: int) -> torch.Tensor:
    return torch.randint(0, VOCAB, (batch, SEQ))
