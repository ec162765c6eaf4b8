"""Human activity recognition as a user writes it (nine inertial channels and 128 readings a window, as in UCI HAR;
a one-layer bidirectional GRU of hidden 96; six classes from both directions' last states): a small model trained
at large batches, where cuDNN's small-hidden persistent kernel walks many batch rows each step, both ways. Written
after that kernel's step was priced by its rows (RNN_PERSIST_GRU_ROW_S, 2026-12-05), to check it out of sample; not
fitted on."""

import torch
from torch import nn

CHANNELS, HIDDEN, READINGS, CLASSES = 9, 96, 128, 6


class ActivityGRU(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.gru = nn.GRU(CHANNELS, HIDDEN, batch_first=True, bidirectional=True)
        self.head = nn.Linear(2 * HIDDEN, CLASSES)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _, state = self.gru(x)
        return self.head(torch.cat([state[0], state[1]], dim=1))


def build() -> nn.Module:
    return ActivityGRU()


def build_batch(batch: int) -> torch.Tensor:
    return torch.randn(batch, READINGS, CHANNELS)
