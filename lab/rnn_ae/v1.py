"""Variant v1 of lab/models/lstm_autoencoder.py (lab/rnn_ae_memory.py): where its training peak goes."""

import torch
from torch import nn

CHANNELS, HIDDEN, WINDOW = 16, 128, 64
VARIANT = "v1"


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.encoder = nn.LSTM(CHANNELS, HIDDEN, batch_first=True)
        self.decoder = nn.LSTM(HIDDEN, HIDDEN, batch_first=True)
        self.out = nn.Linear(HIDDEN, CHANNELS)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if VARIANT == "v4":  # the decoder alone, on a dense input of the decoder's width
            decoded, _ = self.decoder(x)
            return self.out(decoded)
        _, (state, _) = self.encoder(x)
        if VARIANT == "v3":  # the encoder alone
            return self.out(state[-1])
        repeated = state[-1].unsqueeze(1).expand(-1, x.shape[1], -1)
        if VARIANT == "v1":
            repeated = repeated.contiguous()
        elif VARIANT == "v2":
            repeated = state[-1].unsqueeze(1).repeat(1, x.shape[1], 1)
        decoded, _ = self.decoder(repeated)
        return self.out(decoded)


def build() -> nn.Module:
    return Net()


def build_batch(batch: int) -> torch.Tensor:
    return torch.randn(batch, WINDOW, HIDDEN if VARIANT == "v4" else CHANNELS)
