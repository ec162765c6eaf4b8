"""A 3-layer graph convolutional network (PyTorch Geometric's GCNConv) for node classification on
random graphs of 2,000 nodes and 20,000 edges per sample: `gpuadvisor estimate lab/models/gcn.py:build`."""

import torch
from torch import nn
from torch_geometric.nn import GCNConv

NODES, EDGES, FEATURES, HIDDEN, CLASSES = 2000, 20000, 512, 256, 40


class GCN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.convs = nn.ModuleList([GCNConv(FEATURES, HIDDEN), GCNConv(HIDDEN, HIDDEN), GCNConv(HIDDEN, CLASSES)])

    def forward(self, x: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:
        for i, conv in enumerate(self.convs):
            x = conv(x, edge_index)
            if i < len(self.convs) - 1:
                x = torch.relu(x)
        return x


def build() -> nn.Module:
    return GCN()


def build_batch(batch: int) -> tuple[torch.Tensor, torch.Tensor]:
    """`batch` graphs side by side as one disconnected graph, as PyG's DataLoader batches them."""
    n = batch * NODES
    x = torch.randn(n, FEATURES)
    src = torch.randint(0, NODES, (batch, EDGES))
    dst = torch.randint(0, NODES, (batch, EDGES))
    offset = (torch.arange(batch) * NODES).unsqueeze(1)
    edge_index = torch.stack([(src + offset).flatten(), (dst + offset).flatten()])
    return x, edge_index
