"""BERT-base with the SQuAD question-answering head (the published configuration's numbers: 12 layers, hidden 768,
12 heads, feed-forward 3,072) over 384-token sequences, its attention computed explicitly: transformers' "eager"
attention, the scores, softmax, dropout and weighted sum as separate ops, as NVIDIA's DeepLearningExamples BERT
writes its attention, where the same classes default to one fused SDPA call. Written for the fifth out-of-sample
batch of 2026-12-07 (never fitted on): what an explicit attention's score tensors cost beside
hf:bert-base-uncased-qa."""

import torch
from torch import nn

TOKENS, VOCAB = 384, 30_522


class BertQAEager(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        from transformers import BertConfig, BertForQuestionAnswering

        self.bert = BertForQuestionAnswering(BertConfig(
            hidden_size=768, num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072,
            vocab_size=VOCAB, attn_implementation="eager"))

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        out = self.bert(input_ids=tokens)
        return out.start_logits + out.end_logits


def build() -> nn.Module:
    return BertQAEager()


def build_batch(batch: int) -> torch.Tensor:
    return torch.randint(0, VOCAB, (batch, TOKENS))
