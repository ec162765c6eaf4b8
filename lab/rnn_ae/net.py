"""The LSTM autoencoder of lab/models/lstm_autoencoder.py in the variants lab/rnn_ae_memory.py measures (v0.py-v4.py
each pick one): where its training peak goes."""

import torch
from torch import nn

CHANNELS, HIDDEN, WINDOW = 16, 128, 64
#: v0 as written; v1 the decoder's expanded input made contiguous; v2 built with repeat; v3 the encoder alone; v4 the
#: decoder alone on a dense input of its width
VARIANTS = ("v0", "v1", "v2", "v3", "v4")


class Net(nn.Module):
    def __init__(self, variant: str) -> None:
        super().__init__()
        self.variant = variant
        self.encoder = nn.LSTM(CHANNELS, HIDDEN, batch_first=True)
        self.decoder = nn.LSTM(HIDDEN, HIDDEN, batch_first=True)
        self.out = nn.Linear(HIDDEN, CHANNELS)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.variant == "v4":
            decoded, _ = self.decoder(x)
            return self.out(decoded)
        _, (state, _) = self.encoder(x)
        if self.variant == "v3":
            return self.out(state[-1])
        repeated = state[-1].unsqueeze(1).expand(-1, x.shape[1], -1)
        if self.variant == "v1":
            repeated = repeated.contiguous()
        elif self.variant == "v2":
            repeated = state[-1].unsqueeze(1).repeat(1, x.shape[1], 1)
        decoded, _ = self.decoder(repeated)
        return self.out(decoded)


def batch_of(variant: str, batch: int) -> torch.Tensor:
    return torch.randn(batch, WINDOW, HIDDEN if variant == "v4" else CHANNELS)
