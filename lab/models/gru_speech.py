"""A one-layer bidirectional GRU speech-command encoder as a user writes one (80 mel features, hidden 192 each way,
200 frames, mean-pooled into 30 classes): hidden 192 is past cuDNN's persistent backward (128) but within its
persistent forward (192), so its training runs one kernel forward and launches every step backward. Written after
the recurrent memory and set-up were measured call by call (2026-12-05, night), to check them out of sample; not
fitted on."""

import torch
from torch import nn

FEATURES, HIDDEN, FRAMES, CLASSES = 80, 192, 200, 30


class SpeechGRU(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.gru = nn.GRU(FEATURES, HIDDEN, batch_first=True, bidirectional=True)
        self.head = nn.Linear(2 * HIDDEN, CLASSES)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, _ = self.gru(x)
        return self.head(out.mean(dim=1))


def build() -> nn.Module:
    return SpeechGRU()


def build_batch(batch: int) -> torch.Tensor:
    return torch.randn(batch, FRAMES, FEATURES)
