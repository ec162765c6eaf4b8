"""A text classifier on PyTorch's own nn.TransformerEncoder (6 pre-norm layers, d_model 512, 8 heads, feed-forward
2,048, GELU, batch_first; vocabulary 30k, 256 tokens, mean-pooled into 4 classes): the encoder a user writes without
Hugging Face. In eval mode under inference_mode PyTorch runs its fused fast path (one native kernel a layer), in
training the layer by layer ops. Written for the out-of-sample check of 2026-12-06 (never fitted on)."""

import torch
from torch import nn

VOCAB, TOKENS, D_MODEL, HEADS, FF, LAYERS, CLASSES = 30_000, 256, 512, 8, 2048, 6, 4


class TransformerClassifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, D_MODEL)
        self.pos = nn.Parameter(torch.zeros(1, TOKENS, D_MODEL))
        layer = nn.TransformerEncoderLayer(D_MODEL, HEADS, FF, dropout=0.1, activation="gelu", batch_first=True,
                                           norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, LAYERS, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(D_MODEL)
        self.head = nn.Linear(D_MODEL, CLASSES)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.encoder(self.embed(tokens) + self.pos)
        return self.head(self.norm(x).mean(dim=1))


def build() -> nn.Module:
    return TransformerClassifier()


def build_batch(batch: int) -> torch.Tensor:
    return torch.randint(0, VOCAB, (batch, TOKENS))
