"""Speculative decoding as engines run it: a drafter proposes `draft_tokens` (k) tokens per sequence, the target
verifies them in one forward over k + 1 tokens per sequence, and a sequence keeps `accept_length` tokens of an
iteration on average (the accepted drafts and the target's own next token: 1 <= accept_length <= k + 1).

Drafters: `draft` (a smaller model of the same tokenizer: k decode steps of its own, and its own prefill of every
prompt), `eagle` (EAGLE-style heads: one decoder layer over the target's hidden states and an LM head, k steps) and
`mtp` (multi-token-prediction modules shipped with the model, DeepSeek-V3 style: one layer and the shared head per
step). Draft steps of heads run inside the engine's CUDA graphs (GPU time only); a draft model's steps are engine
iterations of their own (its host time per iteration included).

A draft tree (EAGLE in SGLang and vLLM: `--speculative-eagle-topk`, `--speculative-num-draft-tokens`) drafts `topk`
candidates a step for k steps and verifies `verify_tokens` of them (the tree's best, with the target's own token)
in one forward: the verify forward costs verify_tokens tokens a sequence and each draft step topk, while the
accepted length stays at most k + 1 (one path of the tree). A chain is topk 1 and k + 1 verified tokens.

Speculation trades compute for fewer weight reads: the verify forward costs about one decode step while the batch
is memory-bound, so at small batches an iteration's accept_length tokens cost little more than one; as the batch
grows the verify forward turns compute-bound (k + 1 tokens per sequence) and the drafts add their own time, until
speculation costs more per token than plain decoding (`break_even_batch`). Pure functions over StepCosts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpuadvisor.core.errors import UserError
from gpuadvisor.estimate.serve.stepcost import RooflineStepCost

METHODS = ("draft", "eagle", "mtp")

#: acceptance presets per method: (draft tokens k, mean accepted length, source). Only methods with a published
#: figure have one; others need --spec-accept.
PRESETS: dict[str, tuple[int, float, str]] = {
    "mtp": (1, 1.875, "DeepSeek-V3 Technical Report (arXiv 2412.19437), section 5.4.3: with one MTP module the "
                      "acceptance rate of the second token is 85-90 % across generation topics (1 + 0.875 tokens "
                      "per verify step, the midpoint)"),
    "draft": (5, 4.58, "llama.cpp issue #5877 (https://github.com/ggml-org/llama.cpp/issues/5877, oxfighterjet's "
                       "comment of 2024-11-19): llama-speculative, Llama 3.1 8B Q8_0 target, Llama 3.2 1B Q8_0 "
                       "draft, --draft 5: 673 tokens predicted, 526 drafts accepted, 147 verify steps (673 - 526): "
                       "4.58 tokens per step; one prompt, greedy: an optimistic preset"),
}


@dataclass(frozen=True)
class Speculation:
    """What the engine speculates with: method, k, the mean accepted length and where it comes from."""

    method: str
    draft_tokens: int
    accept_length: float
    source: str
    draft_model: Any = None  # ModelSpec of a draft model (method draft)
    topk: int = 1  # candidates a draft step proposes per sequence (a draft tree's branching); 1: a chain
    verify_tokens: int = 0  # tokens a sequence verifies per step (the tree's draft tokens); 0: k + 1 (a chain)

    @property
    def verify_width(self) -> int:
        """Tokens one decoding sequence runs through the target's verify forward."""
        return self.verify_tokens or self.draft_tokens + 1

    @property
    def accept_rate(self) -> float:
        """The per-position acceptance rate a of a chain of k drafts whose mean accepted length is accept_length
        (accept_length = (1 - a^(k+1)) / (1 - a)): the distribution the mean stands for."""
        k, target = self.draft_tokens, self.accept_length
        lo, hi = 0.0, 1.0
        for _ in range(60):
            a = (lo + hi) / 2
            mean = sum(a ** j for j in range(k + 1))
            lo, hi = (a, hi) if mean < target else (lo, a)
        return (lo + hi) / 2

    def acceptance_distribution(self) -> list[float]:
        """P(a verify step keeps j tokens), j = 1..k+1, for independent per-position acceptance."""
        a, k = self.accept_rate, self.draft_tokens
        return [a ** (j - 1) * (1 - a) for j in range(1, k + 1)] + [a ** k]

    def to_dict(self) -> dict[str, Any]:
        return {"method": self.method, "draft_tokens": self.draft_tokens, "accept_length": self.accept_length,
                "accept_rate": round(self.accept_rate, 4), "source": self.source,
                "draft_model": getattr(self.draft_model, "name", None), "topk": self.topk,
                "verify_tokens": self.verify_width}


def speculation(method: str, *, draft_tokens: int | None = None, accept_length: float | None = None,
                draft_model: Any = None, topk: int | None = None, verify_tokens: int | None = None) -> Speculation:
    """A Speculation from the user's flags and the presets; one clear line for what cannot be answered."""
    if method not in METHODS:
        raise UserError(f"--speculative {method}: one of {', '.join(METHODS)}")
    if (topk is not None or verify_tokens is not None) and method != "eagle":
        raise UserError(f"--spec-topk / --spec-verify describe an EAGLE draft tree, not --speculative {method}")
    base = _chain(method, draft_tokens, accept_length, draft_model)
    if topk is None and verify_tokens is None:
        return base
    width = topk if topk is not None else 1
    k = base.draft_tokens
    if not 1 <= width <= 16:
        raise UserError(f"--spec-topk {width}: between 1 and 16 candidates a draft step")
    verify = verify_tokens if verify_tokens is not None else k + 1
    most = 1 + k * width
    if not k + 1 <= verify <= most:
        raise UserError(f"--spec-verify {verify}: a tree of {k} steps of {width} candidates verifies between "
                        f"{k + 1} and {most} tokens a sequence")
    return Speculation(base.method, k, base.accept_length, base.source, None, width, verify)


def _chain(method: str, draft_tokens: int | None, accept_length: float | None, draft_model: Any) -> Speculation:
    if method == "draft" and draft_model is None:
        raise UserError("--speculative draft needs --draft-model NAME (the drafting model)")
    if method != "draft" and draft_model is not None:
        raise UserError(f"--draft-model is for --speculative draft, not {method}")
    preset = PRESETS.get(method)
    if accept_length is None:
        if preset is None:
            raise UserError(f"--speculative {method}: no published acceptance preset; give --spec-accept MEAN (the "
                            "mean tokens a verify step keeps, the engine's reported acceptance length)")
        if draft_tokens is not None and draft_tokens != preset[0]:
            raise UserError(f"the {method} preset was measured with {preset[0]} draft tokens; with --spec-tokens "
                            f"{draft_tokens} give --spec-accept")
        return Speculation(method, preset[0], preset[1], preset[2], draft_model)
    k = draft_tokens if draft_tokens is not None else (preset[0] if preset else 3)
    if not 1 <= k <= 16:
        raise UserError(f"--spec-tokens {k}: between 1 and 16 draft tokens")
    if not 1.0 <= accept_length <= k + 1:
        raise UserError(f"--spec-accept {accept_length:g}: a verify step keeps between 1 and k + 1 = {k + 1} tokens")
    return Speculation(method, k, float(accept_length), "given (--spec-accept)", draft_model)


@dataclass
class SpeculativeStepCost:
    """StepCost of an engine that speculates: decoding sequences verify k + 1 tokens and run k draft steps."""

    target: RooflineStepCost
    spec: Speculation
    draft: RooflineStepCost | None = None  # the draft model's cost on the same cards (method draft)
    linear_in_context = True  # decode_steps_s may integrate its decode runs in closed form

    def attended_pairs(self, start: float, tokens: float) -> float:
        """The target model's (RooflineStepCost.attended_pairs)."""
        return float(self.target.attended_pairs(start, tokens))

    def kv_context(self, context: Any) -> Any:
        """The target model's (RooflineStepCost.kv_context)."""
        return self.target.kv_context(context)

    def draft_s(self, prefill_tokens: int, prefill_pairs: float, decode_seqs: int, decode_context: float) -> float:
        """The drafter's seconds in one iteration: k draft steps for the decoding sequences, and a draft model's
        prefill of the prompt chunks."""
        k, s = self.spec.draft_tokens, 0.0
        if self.draft is not None:
            if prefill_tokens:
                s += self.draft.iteration_s(prefill_tokens, prefill_pairs, 0, 0.0)
            if decode_seqs:
                s += k * self.draft.iteration_s(0, 0.0, decode_seqs, decode_context)
        elif decode_seqs:  # one layer over the target's features and the LM head, inside the CUDA graph
            # a tree's first step drafts from the one verified token, each later one from topk branches
            s += self.target.head_step_s(decode_seqs, decode_context)
            s += (k - 1) * self.target.head_step_s(decode_seqs, decode_context, self.spec.topk)
        return s

    def iteration_s(self, prefill_tokens: int, prefill_pairs: float, decode_seqs: int,
                    decode_context: float) -> float:
        verify = self.target.iteration_s(prefill_tokens, prefill_pairs, decode_seqs, decode_context,
                                         decode_width=self.spec.verify_width)
        return verify + self.draft_s(prefill_tokens, prefill_pairs, decode_seqs, decode_context)

    def token_s(self, decode_seqs: int, context_per_seq: float) -> tuple[float, float]:
        """Seconds per generated token of a decode-only iteration of `decode_seqs` sequences: (speculating,
        plain)."""
        ctx = decode_seqs * context_per_seq
        return (self.iteration_s(0, 0.0, decode_seqs, ctx) / self.spec.accept_length,
                self.target.iteration_s(0, 0.0, decode_seqs, ctx))

    def break_even_batch(self, context_per_seq: float, max_batch: int) -> int | None:
        """The smallest batch (decoding sequences) at which speculation costs at least as much per token as plain
        decoding, up to `max_batch`; None: it pays at every batch up to it; 1: it never pays."""
        def loses(b: int) -> bool:
            spec, plain = self.token_s(b, context_per_seq)
            return spec >= plain

        if loses(1):
            return 1
        lo, hi = 1, 1
        while hi < max_batch and not loses(hi):
            lo, hi = hi, min(2 * hi, max_batch)
        if not loses(hi):
            return None
        while hi - lo > 1:  # loses(hi), not loses(lo)
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if not loses(mid) else (lo, mid)
        return hi

    def kv_tokens_capacity(self, target_tokens: int) -> int:
        """The target's KV tokens less the drafter's room: its weights and its KV per token (a draft model: its
        own; heads: one layer of the target's)."""
        t = self.target
        if self.draft is not None:
            extra_weights = self.draft.weight_bytes_per_gpu()
            extra_per_token = self.draft.kv_per_token
        else:
            extra_weights = t.layer_weight_bytes()
            extra_per_token = t.kv_per_token_layer
        total = target_tokens * t.kv_per_token - extra_weights
        return max(0, int(total // (t.kv_per_token + extra_per_token)))
