"""DistilBERT-base (6 layers, hidden 768, 12 heads; transformers' DistilBertConfig defaults, the published model's)
classifying 256-token sequences into 4 classes. Written for the fourth out-of-sample batch of 2026-12-06 (never
fitted on)."""

import torch
from torch import nn

TOKENS, VOCAB = 256, 30_522


class DistilBertClassifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        from transformers import DistilBertConfig, DistilBertForSequenceClassification

        self.model = DistilBertForSequenceClassification(DistilBertConfig(vocab_size=VOCAB, num_labels=4))

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.model(input_ids=tokens).logits


def build() -> nn.Module:
    return DistilBertClassifier()


def build_batch(batch: int) -> torch.Tensor:
    return torch.randint(0, VOCAB, (batch, TOKENS))
