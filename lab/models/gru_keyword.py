"""A two-layer GRU keyword spotter (40 filterbank features, hidden 128, 100 frames, 12 classes from the last
frame): small enough a hidden size that cuDNN trains it in persistent kernels both ways. Written after the
recurrent pricer learned which calls run persistent, to check that out of sample; not fitted on."""

import torch
from torch import nn

FEATURES, HIDDEN, LAYERS, FRAMES, CLASSES = 40, 128, 2, 100, 12


class KeywordGRU(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.gru = nn.GRU(FEATURES, HIDDEN, num_layers=LAYERS, batch_first=True)
        self.head = nn.Linear(HIDDEN, CLASSES)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, _ = self.gru(x)
        return self.head(out[:, -1])


def build() -> nn.Module:
    return KeywordGRU()


def build_batch(batch: int) -> torch.Tensor:
    return torch.randn(batch, FRAMES, FEATURES)
