"""A small MLP over flattened 28x28 images (an MNIST-style model): the smallest bring-your-own case,
launch-bound on any data-center GPU."""

import torch
from torch import nn


def build() -> nn.Module:
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 2048), nn.ReLU(), nn.Linear(2048, 2048), nn.ReLU(),
                         nn.Linear(2048, 10))


def build_batch(batch: int) -> torch.Tensor:
    return torch.randn(batch, 1, 28, 28)
