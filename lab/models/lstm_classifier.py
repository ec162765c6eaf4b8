"""A text classifier with a 2-layer LSTM: a bring-your-own model for `gpuadvisor estimate
lab/models/lstm_classifier.py:build` (PyTorch runs nn.LSTM as cuDNN's fused recurrent kernels)."""

import torch
from torch import nn

VOCAB, EMBED, HIDDEN, LAYERS, CLASSES, SEQ = 32000, 512, 1024, 2, 2, 256


class LSTMClassifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, EMBED)
        self.lstm = nn.LSTM(EMBED, HIDDEN, num_layers=LAYERS, batch_first=True)
        self.head = nn.Linear(HIDDEN, CLASSES)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        out, _ = self.lstm(self.embed(ids))
        return self.head(out[:, -1])


def build() -> nn.Module:
    return LSTMClassifier()


def build_batch(batch: int) -> torch.Tensor:
    return torch.randint(0, VOCAB, (batch, SEQ))
