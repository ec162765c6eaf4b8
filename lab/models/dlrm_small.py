"""A DLRM-style click-through model: 13 dense features through a bottom MLP (512-256-64), 26 categorical features
looked up in EmbeddingBag tables (100k rows each, dimension 64, sum of 4 ids a bag), their pairwise dot products,
and a top MLP (512-256-1). The embedding-bag lookups and their sparse-free gradients nobody here measured. Written
for the out-of-sample check of 2026-12-06."""

import itertools

import torch
from torch import nn

DENSE, TABLES, ROWS, DIM, BAG = 13, 26, 100_000, 64, 4


def mlp(sizes: list[int]) -> nn.Sequential:
    layers: list[nn.Module] = []
    for a, b in itertools.pairwise(sizes):
        layers += [nn.Linear(a, b), nn.ReLU()]
    return nn.Sequential(*layers)


class DLRM(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.bottom = mlp([DENSE, 512, 256, DIM])
        self.tables = nn.ModuleList([nn.EmbeddingBag(ROWS, DIM, mode="sum") for _ in range(TABLES)])
        pairs = (TABLES + 1) * TABLES // 2
        self.top = nn.Sequential(mlp([DIM + pairs, 512, 256]), nn.Linear(256, 1))

    def forward(self, dense: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
        x = self.bottom(dense)
        feats = torch.stack([x] + [t(ids[:, i]) for i, t in enumerate(self.tables)], dim=1)
        dots = feats @ feats.transpose(1, 2)
        rows, cols = torch.triu_indices(TABLES + 1, TABLES + 1, offset=1, device=dots.device)
        return self.top(torch.cat([x, dots[:, rows, cols]], dim=1))


def build() -> nn.Module:
    return DLRM()


def build_batch(batch: int) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.randn(batch, DENSE), torch.randint(0, ROWS, (batch, TABLES, BAG))
