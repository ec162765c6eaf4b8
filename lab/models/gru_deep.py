"""A three-layer bidirectional GRU tagger (hidden 256, 128 frames of 80 features, as a speech front-end runs one):
cuDNN's fused multi-layer bidirectional GRU. Not fitted on: an out-of-sample check."""

import torch
from torch import nn

FEATURES, HIDDEN, LAYERS, SEQ, CLASSES = 80, 256, 3, 128, 32


class DeepGRU(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.gru = nn.GRU(FEATURES, HIDDEN, num_layers=LAYERS, batch_first=True, bidirectional=True)
        self.head = nn.Linear(2 * HIDDEN, CLASSES)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, _ = self.gru(x)
        return self.head(out)


def build() -> nn.Module:
    return DeepGRU()


def build_batch(batch: int) -> torch.Tensor:
    return torch.randn(batch, SEQ, FEATURES)
