"""A GRU encoder-decoder as a user writes one (vocabulary 10k, hidden 512, 50 tokens each side, teacher forcing):
one-layer GRUs, run by cuDNN's fused recurrent kernels on a GPU. Not fitted on: an out-of-sample check."""

import torch
from torch import nn

VOCAB, HIDDEN, SEQ = 10_000, 512, 50


class Seq2Seq(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.src_embed = nn.Embedding(VOCAB, HIDDEN)
        self.tgt_embed = nn.Embedding(VOCAB, HIDDEN)
        self.encoder = nn.GRU(HIDDEN, HIDDEN, batch_first=True)
        self.decoder = nn.GRU(HIDDEN, HIDDEN, batch_first=True)
        self.out = nn.Linear(HIDDEN, VOCAB)

    def forward(self, src: torch.Tensor, tgt: torch.Tensor) -> torch.Tensor:
        _, h = self.encoder(self.src_embed(src))
        dec, _ = self.decoder(self.tgt_embed(tgt), h)
        return self.out(dec)


def build() -> nn.Module:
    return Seq2Seq()


def build_batch(batch: int) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.randint(0, VOCAB, (batch, SEQ)), torch.randint(0, VOCAB, (batch, SEQ))
