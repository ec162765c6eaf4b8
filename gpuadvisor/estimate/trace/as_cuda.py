"""Tracing on the CPU as PyTorch would dispatch on an NVIDIA GPU.

A few functional entry points take a different path on the CPU than on CUDA, which would put ops
in the graph that a GPU never runs: scaled_dot_product_attention (the CPU's math fallback
materialises the attention matrix and its dropout; CUDA runs one flash or memory-efficient kernel,
forward and backward) and dropout (one fused native_dropout kernel on CUDA, three ops on the CPU).
nn.MultiheadAttention and nn.TransformerEncoderLayer in eval under no_grad take PyTorch's fast path
(`torch._native_multi_head_attention`, `torch._transformer_encoder_layer_fwd`: fused ops the classifier
cannot see into), so those two are replaced by what their CUDA kernels launch: one addmm for the packed
in-projection, one fused attention kernel on the strided q/k/v views (no copies), one addmm out; PyTorch
itself still decides when the fast path is taken. Autocast's op lists differ too: CUDA autocast runs layer
and group norms, softmax, exp/log/pow, sums and losses in float32 (their outputs float32), where CPU autocast
keeps them in bfloat16, which halved those activations in a traced mixed-precision step: those functions are
wrapped to run as CUDA autocast runs them. And F.linear on a 3-D (or more) input with a bias: CUDA flattens a
contiguous input into one addmm (at::linear's _flatten_nd_linear) or adds the bias in place, but on fake tensors
(a tensor subclass to at::linear) it multiplies, then adds the bias out of place: two outputs of the product's size
alive at once, which doubled a language model's logits at its inference peak.
`cuda_dispatch(rec)` patches the rest for the trace and restores them after.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import gpuadvisor.estimate.trace.classify as C
from gpuadvisor.estimate.graph import AttentionShape, Op, OpClass, Phase
from gpuadvisor.estimate.kernels import attention_flops
from gpuadvisor.estimate.trace.recorder import Recorder, torch

_Function: Any = torch.autograd.Function  # torch is untyped here (an optional extra)

F = torch.nn.functional
T = torch.Tensor
#: ops CUDA autocast runs in float32 (aten/src/ATen/autocast_mode.cpp: its fp32 list, and the fp32_set_opt_dtype
#: ones, marked True, where no dtype is given) and CPU autocast leaves in the lower precision, by owner
_CUDA_FP32: tuple[tuple[Any, tuple[tuple[str, bool], ...]], ...] = (
    (F, (("layer_norm", False), ("group_norm", False), ("softmax", True), ("log_softmax", True),
         ("softplus", False), ("mse_loss", False), ("l1_loss", False), ("smooth_l1_loss", False),
         ("huber_loss", False), ("kl_div", False), ("nll_loss", False), ("cosine_similarity", False),
         ("binary_cross_entropy_with_logits", False))),
    (torch, (("layer_norm", False), ("group_norm", False), ("softmax", True), ("log_softmax", True),
             ("exp", False), ("log", False), ("log1p", False), ("expm1", False), ("pow", False), ("rsqrt", False),
             ("reciprocal", False), ("sum", True), ("cumsum", True), ("prod", True), ("logsumexp", False))),
    (torch.Tensor, (("softmax", True), ("log_softmax", True), ("exp", False), ("log", False), ("log1p", False),
                    ("expm1", False), ("pow", False), ("__pow__", False), ("rsqrt", False), ("reciprocal", False),
                    ("sum", True), ("cumsum", True), ("prod", True), ("logsumexp", False))),
)
_LOW = (torch.bfloat16, torch.float16)


def _float32_under_autocast(fn: Any, opt_dtype: bool) -> Any:
    """`fn`, run in float32 (its 16-bit floating inputs cast up, autocast off inside) while CPU autocast is on, as
    CUDA autocast runs it. A wrapper rather than a TorchFunctionMode: activation checkpointing recomputes outside
    the forward's mode stack, and any mode turns the MHA fast path off."""
    def run(*args: Any, **kwargs: Any) -> Any:
        if torch.is_autocast_enabled("cpu") and not (opt_dtype and kwargs.get("dtype") is not None):
            up = [isinstance(a, torch.Tensor) and a.dtype in _LOW for a in args]
            if any(up):
                args = tuple(a.float() if u else a for a, u in zip(args, up, strict=True))
                with torch.autocast("cpu", enabled=False):
                    return fn(*args, **kwargs)
        return fn(*args, **kwargs)
    return run


@contextlib.contextmanager
def cuda_dispatch(rec: Recorder) -> Iterator[None]:
    originals = (F.scaled_dot_product_attention, F.dropout, F.linear)
    fused = (torch._native_multi_head_attention, torch._transformer_encoder_layer_fwd)
    fastpath = torch.backends.mha.get_fastpath_enabled()
    F.scaled_dot_product_attention = _fused_attention(rec, originals[0])
    F.dropout = _fused_dropout
    F.linear = _cuda_linear(originals[2])
    torch._native_multi_head_attention, torch._transformer_encoder_layer_fwd = _native_mha, _encoder_layer
    torch.backends.mha.set_fastpath_enabled(True)
    saved = [(owner, name, getattr(owner, name)) for owner, names in _CUDA_FP32 for name, _ in names]
    for owner, names in _CUDA_FP32:
        for name, opt_dtype in names:
            setattr(owner, name, _float32_under_autocast(getattr(owner, name), opt_dtype))
    try:
        yield
    finally:
        for owner, name, fn in saved:
            setattr(owner, name, fn)
        F.scaled_dot_product_attention, F.dropout, F.linear = originals
        torch._native_multi_head_attention, torch._transformer_encoder_layer_fwd = fused
        torch.backends.mha.set_fastpath_enabled(fastpath)


def _cuda_linear(linear: Any) -> Any:
    def run(x: Any, weight: Any, bias: Any = None) -> Any:
        if bias is None or x.dim() < 3:
            return linear(x, weight, bias)
        if x.is_contiguous():
            return torch.addmm(bias, x.reshape(-1, x.shape[-1]), weight.t()).view(*x.shape[:-1], weight.shape[0])
        out = torch.matmul(x, weight.t())
        return out.add_(bias)

    return run


def _native_mha(query: Any, key: Any, value: Any, embed_dim: int, num_head: int, qkv_weight: Any, qkv_bias: Any,
                proj_weight: Any, proj_bias: Any, mask: Any = None, need_weights: bool = True,
                average_attn_weights: bool = True, mask_type: Any = None) -> Any:
    """aten's native_multi_head_attention_cuda (transformers/cuda/attention.cu) for self-attention: without the
    weights, linear -> chunk/view/transpose -> one SDPA kernel -> transpose/reshape (a view) -> linear; with them,
    the math path (bmm, softmax, bmm, a copy back to tokens)."""
    b, length = query.shape[0], query.shape[1]
    head = embed_dim // num_head
    qkv = F.linear(query, qkv_weight, qkv_bias)
    q, k, v = (t.view(b, length, num_head, head).transpose(1, 2) for t in qkv.chunk(3, -1))
    if mask is not None and mask.dim() == 2:  # key padding mask (B, L): broadcast over heads and queries
        mask = mask.view(b, 1, 1, length)
    if need_weights:
        scores = torch.matmul(q, k.transpose(-2, -1)) / head ** 0.5
        if mask is not None:
            scores = scores.masked_fill(mask, float("-inf")) if mask.dtype == torch.bool else scores + mask
        weights = torch.softmax(scores, -1)
        y = torch.matmul(weights, v).transpose(1, 2).reshape(b, length, embed_dim)
        out = F.linear(y, proj_weight, proj_bias)
        return out, (weights.mean(1) if average_attn_weights else weights)
    if mask is not None and mask.dtype == torch.bool:
        mask = ~mask  # fast-path masks mark what is left out; SDPA's boolean masks what is kept
    y = F.scaled_dot_product_attention(q, k, v, mask)
    return F.linear(y.transpose(1, 2).reshape(b, length, embed_dim), proj_weight, proj_bias), None


def _encoder_layer(src: Any, embed_dim: int, num_heads: int, qkv_weight: Any, qkv_bias: Any, proj_weight: Any,
                   proj_bias: Any, use_gelu: bool, norm_first: bool, eps: float, norm_weight_1: Any, norm_bias_1: Any,
                   norm_weight_2: Any, norm_bias_2: Any, ffn_weight_1: Any, ffn_bias_1: Any, ffn_weight_2: Any,
                   ffn_bias_2: Any, mask: Any = None, mask_type: Any = None) -> Any:
    """aten's transformer_encoder_layer_forward (transformers/transformer.cpp): the fused MHA above, an in-place
    residual add, layer norms, and the feed-forward (linear, in-place activation, linear)."""
    shape = (embed_dim,)
    x = F.layer_norm(src, shape, norm_weight_1, norm_bias_1, eps) if norm_first else src
    x = _native_mha(x, x, x, embed_dim, num_heads, qkv_weight, qkv_bias, proj_weight, proj_bias, mask, False,
                    True, mask_type)[0]
    x.add_(src)
    if not norm_first:
        x = F.layer_norm(x, shape, norm_weight_1, norm_bias_1, eps)
    residual = x
    if norm_first:
        x = F.layer_norm(x, shape, norm_weight_2, norm_bias_2, eps)
    x = F.linear(x, ffn_weight_1, ffn_bias_1)
    x = F.gelu(x) if use_gelu else x.relu_()
    x = F.linear(x, ffn_weight_2, ffn_bias_2)
    x.add_(residual)
    return x if norm_first else F.layer_norm(x, shape, norm_weight_2, norm_bias_2, eps)


def _fused_dropout(x: Any, p: float = 0.5, training: bool = True, inplace: bool = False) -> Any:
    if not training or p == 0.0:
        return x
    return torch.ops.aten.native_dropout(x, p, True)[0]


def _fused_attention(rec: Recorder, math_sdpa: Any) -> Any:
    class Flash(_Function):
        """One fused kernel each way: out and the log-sum-exp saved; no attention matrix in memory."""

        @staticmethod
        def forward(ctx: Any, q: Any, k: Any, v: Any, mask: Any, causal: bool) -> Any:
            # the fused kernels write (..., L, heads, E) and return it as a (..., heads, L, E) view, so the
            # usual transpose(1, 2).reshape back to tokens is a view on the GPU, not a copy
            out = q.new_empty((*q.shape[:-3], q.shape[-2], q.shape[-3], v.shape[-1])).transpose(-3, -2)
            lse = q.new_empty(q.shape[:-1], dtype=torch.float32)
            ctx.save_for_backward(q, k, v, out, lse, *(() if mask is None else (mask,)))
            ctx.causal = causal
            _record(rec, q, k, v, mask, out, causal, Phase.FORWARD)
            return out

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            q, k, v, _out, _lse, *mask = ctx.saved_tensors
            _record(rec, q, k, v, mask[0] if mask else None, grad, ctx.causal, Phase.BACKWARD)
            return torch.empty_like(q), torch.empty_like(k), torch.empty_like(v), None, None

    def sdpa(q: Any, k: Any, v: Any, attn_mask: Any = None, dropout_p: float = 0.0, is_causal: bool = False,
             scale: Any = None, enable_gqa: bool = False) -> Any:
        mask = attn_mask if isinstance(attn_mask, torch.Tensor) and attn_mask.dtype != torch.bool else None
        if torch.is_autocast_enabled("cpu"):  # autocast casts every floating argument, the mask included
            dt = torch.get_autocast_dtype("cpu")
            q, k, v = q.to(dt), k.to(dt), v.to(dt)
            mask = mask.to(dt) if mask is not None else None
        if mask is not None and mask.requires_grad and dropout_p > 0.0:
            # a float mask that needs its gradient, with attention dropout (T5's learned position bias, dropout
            # 0.1): cuDNN's check_attn_mask_shape refuses it, flash takes no mask, and on the H100 profiles the
            # memory-efficient kernel is not used either, so CUDA runs the math path (bmm, softmax, dropout, bmm),
            # as the CPU does here. Without dropout the memory-efficient kernel takes it, bias gradient and all
            # (BEiT's relative position bias: _efficient_attention_forward/backward on an H100, 2026-12-06,
            # lab/data/h100-unseen-broad-2026-12-06), which Flash below prices
            return math_sdpa(q, k, v, attn_mask=mask, dropout_p=dropout_p, is_causal=is_causal, scale=scale,
                             enable_gqa=enable_gqa)
        return Flash.apply(q, k, v, mask, bool(is_causal))
    return sdpa


def _record(rec: Recorder, q: Any, k: Any, v: Any, mask: Any, out: Any, causal: bool, phase: Phase) -> None:
    if not rec.recording:
        return
    if q.dim() != 4:  # (heads, L, E) without a batch: as a batch of one
        q, k, v, out = (t.unsqueeze(0) for t in (q, k, v, out))
    b, heads, q_length = (float(x) for x in q.shape[:3])
    shape = AttentionShape(b, heads, q_length, float(k.shape[-2]), float(q.shape[-1]), causal)
    backward = phase is Phase.BACKWARD
    io = sum(C.tensor_bytes(t) for t in (q, k, v)) + (C.tensor_bytes(mask) if mask is not None else 0.0)
    read = io + (2 * C.tensor_bytes(out) if backward else 0.0)  # backward reads out and its gradient
    written = sum(C.tensor_bytes(t) for t in (q, k, v)) if backward else C.tensor_bytes(out)
    name = "flash_attention_backward" if backward else "flash_attention"
    # inside an autograd.Function grad mode is off: q, k, v needing a gradient is what makes it recorded
    rec.append(Op(name, OpClass.ATTENTION, phase, C.dtype_name(q.dtype), attention_flops(shape, backward=backward),
                  read, written, shape.to_row()), (q, k, v), grad_mode=True)
