"""A time-series forecaster as a user writes one (seven sensor channels, as in the ETT benchmark; a two-layer LSTM of
hidden 64 over a 336-step look-back window; the next 96 steps of every channel from the last state): long
sequences at large batches, where cuDNN's small-hidden persistent kernel walks many batch rows each step. Written
after that kernel's step was priced by its rows (RNN_PERSIST_ROW_S, 2026-12-05), to check it out of sample; not
fitted on."""

import torch
from torch import nn

CHANNELS, HIDDEN, LAYERS, LOOKBACK, HORIZON = 7, 64, 2, 336, 96


class Forecaster(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lstm = nn.LSTM(CHANNELS, HIDDEN, num_layers=LAYERS, batch_first=True)
        self.head = nn.Linear(HIDDEN, HORIZON * CHANNELS)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, _ = self.lstm(x)
        return self.head(out[:, -1]).view(-1, HORIZON, CHANNELS)


def build() -> nn.Module:
    return Forecaster()


def build_batch(batch: int) -> torch.Tensor:
    return torch.randn(batch, LOOKBACK, CHANNELS)
