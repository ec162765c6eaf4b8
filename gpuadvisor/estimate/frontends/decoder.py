"""The analytic front-end for decoder LLMs: a `ModelSpec` -> the op graph of one eager step, with no PyTorch.

It writes the forward of a Hugging Face Llama-style decoder (Llama, Qwen2, Mistral: token embedding, rotary
positions, RMSNorm, q/k/v/o projections with optional q/k/v biases, SDPA with grouped KV heads, SwiGLU MLP,
residual adds, final norm, LM head, cross-entropy over the shifted labels) against the symbolic tape (tape.py,
prims.py) exactly as transformers 5 runs it under the tracer: the same casts (autocast's copies of weights and
inputs, RMSNorm's fp32 upcast, rotary tables in the residual stream's dtype), SDPA's output in the fused kernel's
(tokens, heads) layout (so no copy back to tokens), the KV cache a forward fills, and, for training, autograd's
backward (frozen parameters get no weight gradients) and one fused AdamW step. With activation checkpointing
(transformers' gradient_checkpointing_enable(): every decoder layer through torch.utils.checkpoint,
use_reentrant=False) training runs without a KV cache, so transformers builds an explicit mask (no causal skip in
SDPA, K and V repeated over the query heads), and each layer's forward is recomputed in the backward
(tape.Region). The tracer (trace/) and this front-end are checked against each other by
tests/test_analytic_graph.py: costed by opcost.step_time they agree within 10 % in time and memory.
"""

from __future__ import annotations

import fnmatch

from gpuadvisor.core.errors import UserError
from gpuadvisor.estimate import calibration as cal
from gpuadvisor.estimate.frontends import prims as P
from gpuadvisor.estimate.frontends.tape import T, Tape, stream_shape
from gpuadvisor.estimate.graph import (
    MEMORY_ITEMS,
    AttentionShape,
    GraphMode,
    MemoryPeak,
    Op,
    OpClass,
    OpGraph,
    Phase,
    merge,
)
from gpuadvisor.estimate.kernels import attention_flops
from gpuadvisor.modelspec import ModelSpec

#: host ops that launch no kernel (views, reshapes, mask and cache bookkeeping) beyond those the tape counts:
#: (per layer, per step, per q/k/v bias per layer) in a forward, and added by a backward and optimizer step;
#: read off the traced Llama-3.2-1B, Qwen2.5-0.5B and Mistral-7B steps (tests/data/analytic-traced.json.gz)
EXTRA_VIEWS = {Phase.FORWARD: (8.0, 6.0, 0.0), Phase.BACKWARD: (36.0, 7.0, 2.0)}
#: more of them with every decoder layer checkpointed (the recompute's bookkeeping, the mask built without a cache):
#: (per layer, per trainable weight matrix or norm weight of the layer, per step), read off the checkpointed traces
#: of the same three models, one with frozen layers
CHECKPOINT_VIEWS = (35.0, 4.0, 18.0)
#: the name of a phase's second peak, at its moment of most batch-scaling tensors (trace/tracer.py's)
STEP_PEAK_SUFFIX = ", most activations"


def check_supported(spec: ModelSpec) -> None:
    """The architectures this front-end writes; anything else is one clear line."""
    why = []
    if spec.kind != "decoder":
        why.append(f"kind {spec.kind}")
    if spec.norm != "rmsnorm":
        why.append(f"norm {spec.norm}")
    if spec.mlp_act != "swiglu":
        why.append(f"MLP {spec.mlp_act}")
    if spec.num_experts > 1:
        why.append("mixture of experts")
    if spec.max_positions:
        why.append("learned position embeddings")
    if spec.fused_qkv or spec.mlp_bias or spec.norms_per_layer != 2 or spec.logit_softcap:
        why.append("fused q/k/v, MLP biases or extra norms")
    if why:
        raise UserError(f"{spec.name}: the analytic op graph covers Llama-style decoders (RMSNorm, rotary, SwiGLU, "
                        f"dense); not {', '.join(why)}: trace it instead (hf:DIR)")


class _Params:
    """The model's parameters by Hugging Face name, trainable as the globs say."""

    def __init__(self, tp: Tape, spec: ModelSpec, dtype: str, freeze: tuple[str, ...],
                 trainable: tuple[str, ...]) -> None:
        self.tp, self.dtype = tp, dtype
        self.freeze, self.trainable = freeze, trainable
        self.by_name: dict[str, T] = {}
        self.names = _param_names(spec)
        for pattern in (*freeze, *trainable):
            if not any(fnmatch.fnmatchcase(n, pattern) for n in self.names):
                raise UserError(f"parameter glob {pattern!r} matches no parameter of {spec.name} "
                                f"(names look like: {', '.join(self.names[:3])}, ...)")

    def get(self, name: str, numel: float) -> T:
        if name not in self.by_name:
            frozen = any(fnmatch.fnmatchcase(name, g) for g in self.freeze) or (
                bool(self.trainable) and not any(fnmatch.fnmatchcase(name, g) for g in self.trainable))
            t = self.tp.tensor(numel, self.dtype, requires_grad=not frozen)
            t.param, t.storage.hold, t.storage.kind = True, True, "weights"
            self.by_name[name] = t
        return self.by_name[name]


def _param_names(spec: ModelSpec) -> list[str]:
    names = ["model.embed_tokens.weight"]
    for i in range(spec.num_layers):
        p = f"model.layers.{i}."
        for proj in ("q", "k", "v"):
            names.append(f"{p}self_attn.{proj}_proj.weight")
            if spec.attn_bias:
                names.append(f"{p}self_attn.{proj}_proj.bias")
        names += [f"{p}self_attn.o_proj.weight", f"{p}mlp.gate_proj.weight", f"{p}mlp.up_proj.weight",
                  f"{p}mlp.down_proj.weight", f"{p}input_layernorm.weight", f"{p}post_attention_layernorm.weight"]
    names.append("model.norm.weight")
    if not spec.tied_embeddings:
        names.append("lm_head.weight")
    return names


def _rmsnorm(tp: Tape, x: T, weight: T, width: int) -> T:
    """transformers' RMSNorm: upcast to fp32, x * rsqrt(mean(x^2) + eps), back to the input dtype, times weight."""
    xf = P.cast(tp, x, "fp32")
    r = P.rsqrt(tp, P.add_scalar(tp, P.mean_last(tp, P.pow2(tp, xf), width)))
    return P.mul(tp, weight, P.cast(tp, P.mul(tp, xf, r), x.dtype))


def _rope(tp: Tape, x: T, cos: T, sin: T) -> T:
    """x * cos + rotate_half(x) * sin, rotate_half(x) = cat(-x[..., d/2:], x[..., :d/2])."""
    a = P.mul(tp, x, cos)
    x1, x2 = P.half(tp, x), P.half(tp, x)
    return P.add(tp, a, P.mul(tp, P.cat(tp, [P.neg(tp, x2), x1]), sin))


def transformer_graph(spec: ModelSpec, *, mode: GraphMode, batch: int, seq: int, dtype: str = "bf16",
                      mixed_precision: bool = True, checkpointing: bool = False, freeze: tuple[str, ...] = (),
                      trainable: tuple[str, ...] = (), labels: bool = True) -> OpGraph:
    """One step of `spec` at `batch` x `seq` tokens: a forward (with the loss over the shifted labels where
    `labels`, as the tracer feeds a *ForCausalLM) for inference; forward, backward and a fused AdamW step for
    training, fp32 weights under `dtype` autocast when `mixed_precision` (else weights in `dtype`)."""
    check_supported(spec)
    if dtype not in ("bf16", "fp16", "fp32"):
        raise UserError(f"{spec.name}: the analytic op graph runs in bf16, fp16 or fp32, not {dtype}")
    if batch < 1 or seq < 1:
        raise UserError(f"{spec.name}: batch and sequence length must be >= 1")
    training = mode is GraphMode.TRAINING
    # transformers checkpoints each decoder layer in training only, and then runs without a KV cache
    checkpointing = checkpointing and training
    mixed = training and mixed_precision and dtype != "fp32"
    wdt = "fp32" if mixed else dtype
    tp = Tape(grad=training)
    params = _Params(tp, spec, wdt, freeze, trainable)
    if training and not any(
            not (any(fnmatch.fnmatchcase(n, g) for g in freeze)
                 or (trainable and not any(fnmatch.fnmatchcase(n, g) for g in trainable))) for n in params.names):
        raise UserError(f"{spec.name}: every parameter is frozen, so there is nothing to train")
    h, qd, kvd, inter, vocab = spec.hidden_size, spec.q_dim, spec.kv_dim, spec.intermediate_size, spec.vocab_size
    d, heads = spec.head_dim, spec.num_heads
    b, s = batch, seq
    tokens = b * s
    ids = tp.tensor(tokens, "int64")
    ids.storage.hold, ids.storage.kind = True, "inputs"
    # every parameter exists before the step, in the order the model registers them
    emb = params.get("model.embed_tokens.weight", vocab * h)
    for name in params.names:
        params.get(name, _numel(spec, name))
    tp.autocast = dtype if mixed else ""

    def W(name: str) -> T:
        return params.by_name[name]

    x = tp.op("embedding", [emb, ids], tokens * h, wdt, OpClass.GATHER, backward=lambda g: [
        tp.op("embedding_dense_backward", [g, ids], emb.numel, g.dtype, OpClass.GATHER), None])
    if checkpointing:  # transformers makes the embeddings' output require a gradient (enable_input_require_grads)
        x.requires_grad = True
    # rotary tables (batch 1), cast to the residual stream's dtype
    pos = tp.op("arange", [], s, "int64")
    pos = tp.op("add", [pos], s, "int64")
    mask = _causal_mask(tp, b, s) if checkpointing else None
    posf = tp.op("_to_copy", [pos], s, "fp32")
    inv = tp.tensor(d / 2, wdt)
    inv.storage.hold = True
    inv = P.cast(tp, inv, "fp32")
    freqs = tp.op("mul", [inv, posf], d / 2 * s, "fp32")
    embt = tp.op("cat", [freqs], d * s, "fp32")
    cos = tp.op("mul", [tp.op("cos", [embt], d * s, "fp32")], d * s, "fp32")
    sin = tp.op("mul", [tp.op("sin", [embt], d * s, "fp32")], d * s, "fp32")
    cos, sin = P.cast(tp, cos, wdt), P.cast(tp, sin, wdt)
    # without a cache (checkpointing) transformers passes an explicit mask: no causal skip, no GQA in SDPA
    att_shape = AttentionShape(float(b), float(heads), float(s), float(s), float(d), causal=mask is None)
    att_flops = attention_flops(att_shape, backward=False) * spec.attention_share(s, cal.ATTN_WINDOW_TILE)  # windows
    held: list[T] = []

    def layer(x: T, p: str) -> T:
        hn = _rmsnorm(tp, x, W(p + "input_layernorm.weight"), h)

        def proj(name: str, n_out: int) -> T:
            bias = W(f"{p}self_attn.{name}_proj.bias") if spec.attn_bias else None
            return P.linear(tp, hn, W(f"{p}self_attn.{name}_proj.weight"), bias, n_out, h, clone_grad=True)
        # view + transpose of each: the heads in another dimension order than the tokens
        q, k, v = (tp.view(t, n=2, strided=True, permuted=True) for t in (proj("q", qd), proj("k", kvd),
                                                                            proj("v", kvd)))
        q, k = _rope(tp, q, cos, sin), _rope(tp, k, cos, sin)
        if mask is None:
            k = P.cache_cat(tp, k, k.dtype, zeros=training)
            v = P.cache_cat(tp, v, k.dtype, zeros=training)
            held.extend((k, v))
        elif heads != spec.num_kv_heads:
            k, v = P.repeat_kv(tp, k, qd / kvd), P.repeat_kv(tp, v, qd / kvd)
        # the fused kernel writes (b, s, heads, d), so the transpose back to tokens is a view, not a copy
        o = tp.view(P.sdpa(tp, q, k, v, att_shape, att_flops, mask))
        x = P.add(tp, x, P.linear(tp, o, W(p + "self_attn.o_proj.weight"), None, h, qd))
        hn = _rmsnorm(tp, x, W(p + "post_attention_layernorm.weight"), h)
        gate = P.silu(tp, P.linear(tp, hn, W(p + "mlp.gate_proj.weight"), None, inter, h))
        up = P.linear(tp, hn, W(p + "mlp.up_proj.weight"), None, inter, h)
        return P.add(tp, x, P.linear(tp, P.mul(tp, gate, up), W(p + "mlp.down_proj.weight"), None, h, inter))
    for i in range(spec.num_layers):
        p = f"model.layers.{i}."
        x = tp.checkpoint(lambda t, p=p: layer(t, p), x) if checkpointing else layer(x, p)  # type: ignore[misc]
    x = _rmsnorm(tp, x, W("model.norm.weight"), h)
    head = emb if spec.tied_embeddings else W("lm_head.weight")
    logits = P.linear(tp, x, head, None, vocab, h)
    held.append(logits)
    loss = None
    if labels:
        lf = P.cast(tp, logits, "fp32")
        tp.op("constant_pad_nd", [ids], b * (s + 1), "int64")
        # labels[..., 1:].contiguous(): a copy, except at batch 1 where the slice is already contiguous
        target = tp.op("clone", [tp.view(ids, n=0, strided=True)], tokens, "int64", contiguous=True) if b > 1 \
            else tp.view(ids)
        loss = _cross_entropy(tp, lf, target)
    tp.end_autocast()
    last_fwd = len(tp.ops) - 1
    for t in held:  # the model's output (logits, its KV cache) lives to the end of the forward
        t.storage.last = max(t.storage.last, last_fwd)
    grads: list[T] = []
    states: list[T] = []
    if training:
        assert loss is not None
        tp.run_backward(loss)
        trained = [t for t in params.by_name.values() if t.requires_grad]
        grads = [t.grad for t in trained if t.grad is not None]
        states = [tp.tensor(t.numel, t.dtype) for t in trained for _ in range(2)]
        for st in states:
            st.storage.hold, st.storage.born = True, 0
        _adamw(tp, trained, grads, states)
    kinds = {id(t.storage): "weights" for t in params.by_name.values()}
    kinds.update({id(g.storage): "gradients" for g in grads})
    kinds.update({id(t.storage): "optimizer states" for t in states})
    kinds[id(ids.storage)] = "inputs"
    phase_peaks = tuple(MemoryPeak(total, ph.value, {k: items.get(k, 0.0) for k in MEMORY_ITEMS})
                        for ph, (total, items) in tp.phase_peaks(kinds).items())
    # and each phase's moment of most batch-scaling bytes, as the tracer adds it (trace/recorder.py: a tensor
    # whose first dimension is a multiple of the batch and whose shape is no parameter's; here by element count)
    weight_numels = {t.numel for t in params.by_name.values()}
    phase_peaks += tuple(
        MemoryPeak(total, ph.value + STEP_PEAK_SUFFIX, {k: items.get(k, 0.0) for k in MEMORY_ITEMS})
        for ph, (total, items) in tp.phase_peaks(kinds, lambda st: st.numel >= 1 and st.numel % b == 0
                                                 and st.numel not in weight_numels).items())
    biases = 3 if spec.attn_bias else 0
    extra = sum(spec.num_layers * (per_layer + biases * per_bias) + per_step
                for ph, (per_layer, per_step, per_bias) in EXTRA_VIEWS.items() if training or ph is Phase.FORWARD)
    if checkpointing:
        weights = sum(t.requires_grad for n, t in params.by_name.items() if n.startswith("model.layers.")
                      and n.endswith(".weight"))
        extra += spec.num_layers * CHECKPOINT_VIEWS[0] + weights * CHECKPOINT_VIEWS[1] + CHECKPOINT_VIEWS[2]
    all_params = list(params.by_name.values())
    return OpGraph(
        model=spec.name, mode=mode, batch=batch, ops=merge(tp.ops),
        params=int(sum(t.numel for t in all_params)),
        trainable_params=int(sum(t.numel for t in all_params if t.requires_grad)),
        memory=max(phase_peaks, key=lambda m: m.peak_bytes), phase_peaks=phase_peaks, unit="tokens",
        tokens_per_sample=seq, input_desc=f"{seq} tokens", source="analytic (Hugging Face decoder)",
        host_ops=round(len(tp.ops) + tp.views + extra), untracked_ops=tp.untracked)


def _numel(spec: ModelSpec, name: str) -> float:
    h, qd, kvd, inter = spec.hidden_size, spec.q_dim, spec.kv_dim, spec.intermediate_size
    last = name.rsplit(".", 2)[-2:]
    sizes = {"q_proj": (qd * h, qd), "k_proj": (kvd * h, kvd), "v_proj": (kvd * h, kvd), "o_proj": (h * qd, h),
             "gate_proj": (inter * h, inter), "up_proj": (inter * h, inter), "down_proj": (h * inter, h),
             "embed_tokens": (spec.vocab_size * h, 0), "lm_head": (spec.vocab_size * h, 0)}
    if last[0] in sizes:
        w, bias = sizes[last[0]]
        return float(w if last[1] == "weight" else bias)
    return float(h)  # norms


def _causal_mask(tp: Tape, b: int, s: int) -> T:
    """What transformers runs to build the attention mask when no cache is passed (checkpointed training): a
    packed-sequence check on the position ids, then the (b, 1, s, s) boolean causal mask, from index ops."""
    E, G = OpClass.ELEMENTWISE, OpClass.GATHER
    wide = b > 1  # a column of a (b, s) tensor is strided, and small index tensors broadcast
    bs, bss = float(b * s), float(b * s * s)
    ops = [("sub", E, b, 2 if wide else 0, 8 * b, 8 * b), ("cat", E, b * (s + 1), 1, 8 * b * (s + 1), 8 * b * (s + 1)),
           ("sub", E, bs, 2 if wide else 0, 16 * bs, 8 * bs), ("ne", E, bs, 0, 8 * bs, bs),
           ("cumsum", OpClass.REDUCTION, bs, 0, bs, 8 * bs), ("arange", E, b, 0, 0, 8 * b), ("arange", E, 1, 0, 0, 8),
           ("arange", E, s, 0, 0, 8 * s), ("add", E, s, 0, 8 * s, 8 * s), ("arange", E, s, 0, 0, 8 * s),
           ("add", E, s, 0, 8 * s, 8 * s), ("new_ones", E, s, 0, 8 * s, 1)]
    idx = ("index", G, bs, 1 if wide else 0, 8 * s + 8 * bs + 8 * b, 8 * bs)
    ops += [idx, idx, ("eq", E, bss, 1, 16 * bs, bss), ("bitwise_and", E, bss, 0, bss + 1, bss),
            (*idx[:3], 3 if wide else 0, *idx[4:]), (*idx[:3], 3 if wide else 0, *idx[4:]),
            ("le", E, bss, 1, 16 * bs, bss)]
    for name, cls, n, bits, read, written in ops:
        tp.emit(name, cls, [], [], shape=(float(n), float(bits)), read=float(read), written=float(written))
    mask = tp.new(bss, "bool")
    tp.emit("bitwise_and", E, [], [mask], shape=(bss, 0.0), read=2 * bss)
    return mask


def _cross_entropy(tp: Tape, logits: T, target: T) -> T:
    """F.cross_entropy in fp32: log-softmax over the vocabulary, then the NLL of the targets."""
    ls: T

    def ls_bwd(g: T) -> list[T | None]:
        return [tp.op("_log_softmax_backward_data", [g, ls], ls.numel, g.dtype, OpClass.REDUCTION)]
    ls = tp.op("_log_softmax", [logits], logits.numel, "fp32", OpClass.REDUCTION, backward=ls_bwd)
    if ls.node is not None:
        ls.node.saved.append(ls)
    weight = tp.tensor(1, "fp32")

    def nll_bwd(g: T) -> list[T | None]:
        return [tp.op("nll_loss_backward", [g, ls, target, weight], ls.numel, "fp32", OpClass.REDUCTION), None]
    return tp.op("nll_loss_forward", [ls, target], 1, "fp32", OpClass.REDUCTION, backward=nll_bwd, saved=(ls,),
                 written=8.0)


def _adamw(tp: Tape, params: list[T], grads: list[T], states: list[T]) -> None:
    """torch.optim.AdamW(fused=True): the step counters, then one multi-tensor kernel over every parameter."""
    tp.phase = Phase.OPTIMIZER
    steps = [tp.tensor(1, "fp32") for _ in params]
    nbytes = sum(t.nbytes for t in steps)
    tp.ops.append(Op("_foreach_add", OpClass.OPTIMIZER, Phase.OPTIMIZER, "fp32", 0.0, nbytes, nbytes, (1.0, 0.0)))
    total = sum(t.nbytes for t in (*params, *grads, *states)) + nbytes
    dtype = params[0].dtype if params else "fp32"
    # its shape as the tracer's stream_shape records it: the largest tensor, and the smaller ones as broadcasts
    tp.ops.append(Op("_fused_adamw", OpClass.OPTIMIZER, Phase.OPTIMIZER, dtype, 0.0, total, total,
                     stream_shape([*params, *grads, *states], [])))
