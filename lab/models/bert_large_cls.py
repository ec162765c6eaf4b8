"""BERT-large (24 layers, hidden 1,024, 16 heads, feed-forward 4,096, 30,522-token vocabulary) from Hugging Face's
transformers classes with the published configuration's numbers, classifying 128-token sequences into 2 classes.
Written for the fourth out-of-sample batch of 2026-12-06 (never fitted on)."""

import torch
from torch import nn

TOKENS, VOCAB = 128, 30_522


class BertLargeClassifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        from transformers import BertConfig, BertForSequenceClassification

        self.bert = BertForSequenceClassification(BertConfig(
            hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096,
            vocab_size=VOCAB, num_labels=2))

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.bert(input_ids=tokens).logits


def build() -> nn.Module:
    return BertLargeClassifier()


def build_batch(batch: int) -> torch.Tensor:
    return torch.randint(0, VOCAB, (batch, TOKENS))
