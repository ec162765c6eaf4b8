"""Variant v0 of the LSTM autoencoder (lab/rnn_ae/net.py)."""

import torch

from lab.rnn_ae.net import Net, batch_of


def build() -> Net:
    return Net("v0")


def build_batch(batch: int) -> torch.Tensor:
    return batch_of("v0", batch)
