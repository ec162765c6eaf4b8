"""A wearable-sensor activity classifier as a user writes one (9 sensor channels, 128 readings a window, a two-layer
bidirectional LSTM of hidden 32, the last step's state to 6 activities): a hidden size so small that cuDNN's
inference workspace is almost all its floor per layer and direction (RNN_WORKSPACE_FLOOR_BYTES). Written after that
floor was fitted (2026-12-05, late), to check it out of sample; not fitted on."""

import torch
from torch import nn

CHANNELS, HIDDEN, LAYERS, CLASSES, STEPS = 9, 32, 2, 6, 128


class SensorLSTM(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lstm = nn.LSTM(CHANNELS, HIDDEN, num_layers=LAYERS, batch_first=True, bidirectional=True)
        self.head = nn.Linear(2 * HIDDEN, CLASSES)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, _ = self.lstm(x)
        return self.head(out[:, -1])


def build() -> nn.Module:
    return SensorLSTM()


def build_batch(batch: int) -> torch.Tensor:
    return torch.randn(batch, STEPS, CHANNELS)
