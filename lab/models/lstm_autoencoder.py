"""An LSTM autoencoder for anomaly detection on sensor windows, as a user writes one (16 channels, 64 readings; an
encoder LSTM of hidden 128 whose last state is repeated over the window and decoded by a second LSTM of hidden 128,
then projected back to the channels): two one-layer small-hidden calls, trained at large batches, where cuDNN's
backward walks every batch row of every step for the bias gradient. Written after that kernel was profiled and
priced (RNN_BIAS_GRAD_ROW_S, 2026-12-06), to check it out of sample; not fitted on."""

import torch
from torch import nn

CHANNELS, HIDDEN, WINDOW = 16, 128, 64


class LSTMAutoencoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.encoder = nn.LSTM(CHANNELS, HIDDEN, batch_first=True)
        self.decoder = nn.LSTM(HIDDEN, HIDDEN, batch_first=True)
        self.out = nn.Linear(HIDDEN, CHANNELS)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _, (state, _) = self.encoder(x)
        repeated = state[-1].unsqueeze(1).expand(-1, x.shape[1], -1)
        decoded, _ = self.decoder(repeated)
        return self.out(decoded)


def build() -> nn.Module:
    return LSTMAutoencoder()


def build_batch(batch: int) -> torch.Tensor:
    return torch.randn(batch, WINDOW, CHANNELS)
