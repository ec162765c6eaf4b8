"""Variant v4 of the LSTM autoencoder (lab/rnn_ae/net.py)."""

import torch

from lab.rnn_ae.net import Net, batch_of


def build() -> Net:
    return Net("v4")


def build_batch(batch: int) -> torch.Tensor:
    return batch_of("v4", batch)
