"""A tiny LLaMA-architecture GGUF with random weights, written with the `gguf` package, for a real llama.cpp server
to serve in tests (tests/test_serve_check_server.py). Its figures are also written as a Hugging Face config.json,
so that gpuadvisor estimates the same shape.

Sized so that the model's own time dominates a streamed token on a CPU (about 30 ms a decode step, about 2 s
a 128-token prompt on two cores), not the server's Python per token: the comparison with the server's own timings
is then about the model's time, as on a GPU server. The output rows of every token but the words are zero, so that
greedy decoding picks words only: every request generates all its tokens, one streamed chunk each. A word's text
tokenizes back to that word, so that a text prompt made of n words is n tokens."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

WORDS = 260  # the first word's id: below it the special and byte tokens and '▁' (_vocab)


@dataclass(frozen=True)
class TinyLlama:
    hidden: int = 1024
    layers: int = 8
    heads: int = 8
    kv_heads: int = 8
    ffn: int = 2816
    vocab: int = 2048
    context: int = 2048
    seed: int = 0

    def config(self) -> dict[str, object]:
        return {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": self.hidden,
                "intermediate_size": self.ffn, "num_hidden_layers": self.layers,
                "num_attention_heads": self.heads, "num_key_value_heads": self.kv_heads,
                "vocab_size": self.vocab, "max_position_embeddings": self.context, "rms_norm_eps": 1e-5,
                "tie_word_embeddings": False, "torch_dtype": "float16"}


def _vocab(n: int) -> tuple[list[bytes], list[float], list[int]]:
    """SentencePiece-style: <unk> <s> </s>, the 256 byte tokens, '▁', then one word per CJK character ('▁丁'):
    a word's text tokenizes back to that one word, so a prompt made of words has as many tokens as words."""
    from gguf import TokenType

    tokens = [b"<unk>", b"<s>", b"</s>"] + [f"<0x{b:02X}>".encode() for b in range(256)] + ["\u2581".encode()]
    types = [TokenType.UNKNOWN, TokenType.CONTROL, TokenType.CONTROL] + [TokenType.BYTE] * 256 + [TokenType.NORMAL]
    while len(tokens) < n:
        tokens.append(f"\u2581{chr(0x4E00 + len(tokens))}".encode())
        types.append(TokenType.NORMAL)
    scores = [0.0] * 3 + [-1000.0] * 256 + [-1.0] * (n - 259)
    return tokens, scores, [int(t) for t in types]


def write(folder: Path, shape: TinyLlama = TinyLlama()) -> tuple[Path, Path]:
    """(model.gguf, config.json) in `folder`."""
    import gguf

    rng = np.random.default_rng(shape.seed)
    path = folder / "tiny-llama.gguf"
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_name("gpuadvisor tiny llama (random weights)")
    w.add_context_length(shape.context)
    w.add_embedding_length(shape.hidden)
    w.add_block_count(shape.layers)
    w.add_feed_forward_length(shape.ffn)
    w.add_head_count(shape.heads)
    w.add_head_count_kv(shape.kv_heads)
    w.add_rope_dimension_count(shape.hidden // shape.heads)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    tokens, scores, types = _vocab(shape.vocab)
    w.add_tokenizer_model("llama")
    w.add_token_list(tokens)
    w.add_token_scores(scores)
    w.add_token_types(types)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_unk_token_id(0)
    w.add_add_bos_token(False)
    w.add_add_space_prefix(False)  # ' 丁 七' is '▁丁▁七' and nothing more: a prompt is as many tokens as words

    def tensor(name: str, rows: int, cols: int, scale: float | None = None) -> None:
        a = rng.standard_normal((rows, cols), dtype=np.float32) * (scale or cols ** -0.5)
        w.add_tensor(name, a.astype(np.float16))

    def norm(name: str) -> None:
        w.add_tensor(name, np.ones(shape.hidden, np.float32))

    kv = shape.hidden // shape.heads * shape.kv_heads
    tensor("token_embd.weight", shape.vocab, shape.hidden, 1.0)
    for i in range(shape.layers):
        norm(f"blk.{i}.attn_norm.weight")
        tensor(f"blk.{i}.attn_q.weight", shape.hidden, shape.hidden)
        tensor(f"blk.{i}.attn_k.weight", kv, shape.hidden)
        tensor(f"blk.{i}.attn_v.weight", kv, shape.hidden)
        tensor(f"blk.{i}.attn_output.weight", shape.hidden, shape.hidden)
        norm(f"blk.{i}.ffn_norm.weight")
        tensor(f"blk.{i}.ffn_gate.weight", shape.ffn, shape.hidden)
        tensor(f"blk.{i}.ffn_up.weight", shape.ffn, shape.hidden)
        tensor(f"blk.{i}.ffn_down.weight", shape.hidden, shape.ffn)
    norm("output_norm.weight")
    out = (rng.standard_normal((shape.vocab, shape.hidden), dtype=np.float32) * shape.hidden ** -0.5)
    out[:WORDS] = 0.0  # only words win a greedy pick: no </s> (every request runs to max_tokens), no byte token
    # (a lone byte is no text, so its chunk would be held back or merged: one streamed chunk per token)
    w.add_tensor("output.weight", out.astype(np.float16))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    config = folder / "config.json"
    config.write_text(json.dumps(shape.config(), indent=1))
    return path, config
