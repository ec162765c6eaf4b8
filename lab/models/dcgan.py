"""A DCGAN generator (latent 100 -> 64x64 RGB through four stride-2 transposed convolutions, batch norm, ReLU, tanh;
ngf 64), as the PyTorch examples write it: the transposed convolutions nobody here measured. Trained on its own
(the loss is the output's mean, no discriminator). Written for the out-of-sample check of 2026-12-06."""

import torch
from torch import nn

LATENT, NGF = 100, 64


def build() -> nn.Module:
    return nn.Sequential(
        nn.ConvTranspose2d(LATENT, NGF * 8, 4, 1, 0, bias=False), nn.BatchNorm2d(NGF * 8), nn.ReLU(True),
        nn.ConvTranspose2d(NGF * 8, NGF * 4, 4, 2, 1, bias=False), nn.BatchNorm2d(NGF * 4), nn.ReLU(True),
        nn.ConvTranspose2d(NGF * 4, NGF * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(NGF * 2), nn.ReLU(True),
        nn.ConvTranspose2d(NGF * 2, NGF, 4, 2, 1, bias=False), nn.BatchNorm2d(NGF), nn.ReLU(True),
        nn.ConvTranspose2d(NGF, 3, 4, 2, 1, bias=False), nn.Tanh(),
    )


def build_batch(batch: int) -> torch.Tensor:
    return torch.randn(batch, LATENT, 1, 1)
