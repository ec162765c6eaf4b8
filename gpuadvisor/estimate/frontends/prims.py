"""The PyTorch ops a Hugging Face decoder calls, on the symbolic tape: each emits its forward kernel(s) and,
where an input needs a gradient, a backward rule emitting the kernels of PyTorch's derivative formula in the
order a traced step shows them (tests/test_analytic_graph.py compares the two op by op class)."""

from __future__ import annotations

from gpuadvisor.estimate import calibration as cal
from gpuadvisor.estimate.frontends.tape import T, Tape
from gpuadvisor.estimate.graph import AttentionShape, GemmShape, OpClass, Phase

R = OpClass.REDUCTION


def promote(a: T, b: T) -> str:
    return "fp32" if "fp32" in (a.dtype, b.dtype) else a.dtype


def cast(tp: Tape, x: T, dtype: str) -> T:
    if x.dtype == dtype:
        return x
    return tp.op("_to_copy", [x], x.numel, dtype,
                 backward=lambda g: [tp.op("_to_copy", [g], g.numel, x.dtype)])


def mul(tp: Tape, a: T, b: T) -> T:
    """a * b with broadcasting (the smaller operand is summed back to its size in backward)."""
    n = max(a.numel, b.numel)

    def bwd(g: T) -> list[T | None]:
        gb = tp.op("mul", [g, a], n, g.dtype) if b.requires_grad else None  # PyTorch emits the other's first
        ga = tp.op("mul", [g, b], n, g.dtype) if a.requires_grad else None
        if ga is not None and a.numel < n:
            ga = tp.op("sum", [ga], a.numel, ga.dtype, R)
            tp.views += 2 if a.param else 0  # a weight's gradient: sum_to_size's and AccumulateGrad's views
        if gb is not None and b.numel < n:
            gb = tp.op("sum", [gb], b.numel, gb.dtype, R)
            tp.views += 2 if b.param else 0
        return [ga, gb]
    saved = tuple(t for t, other in ((b, a), (a, b)) if other.requires_grad)
    return tp.op("mul", [a, b], n, promote(a, b), backward=bwd, saved=saved)


def scale(tp: Tape, x: T) -> T:
    """x * a Python scalar."""
    return tp.op("mul", [x], x.numel, x.dtype, backward=lambda g: [tp.op("mul", [g], g.numel, g.dtype)])


def add(tp: Tape, a: T, b: T) -> T:
    return tp.op("add", [a, b], max(a.numel, b.numel), promote(a, b), backward=lambda g: [g, g])


def add_scalar(tp: Tape, x: T) -> T:
    return tp.op("add", [x], x.numel, x.dtype, backward=lambda g: [g])


def pow2(tp: Tape, x: T) -> T:
    def bwd(g: T) -> list[T | None]:
        p = tp.op("pow", [x], x.numel, x.dtype)
        p = tp.op("mul", [p], x.numel, x.dtype)
        return [tp.op("mul", [g, p], x.numel, g.dtype)]
    return tp.op("pow", [x], x.numel, x.dtype, backward=bwd, saved=(x,))


def mean_last(tp: Tape, x: T, width: int) -> T:
    def bwd(g: T) -> list[T | None]:
        return [tp.op("div", [tp.view(g, x.numel, 2, strided=True)], x.numel, g.dtype)]  # the expanded gradient
    return tp.op("mean", [x], x.numel / width, x.dtype, R, backward=bwd)


def rsqrt(tp: Tape, x: T) -> T:
    out: T

    def bwd(g: T) -> list[T | None]:
        p = tp.op("pow", [out], out.numel, out.dtype)
        p = tp.op("mul", [p], out.numel, out.dtype)
        return [tp.op("mul", [g, p], out.numel, g.dtype)]
    out = tp.op("rsqrt", [x], x.numel, x.dtype, backward=bwd)
    if out.node is not None:
        out.node.saved.append(out)
    return out


def silu(tp: Tape, x: T) -> T:
    return tp.op("silu", [x], x.numel, x.dtype, saved=(x,),
                 backward=lambda g: [tp.op("silu_backward", [g, x], x.numel, g.dtype)])


def neg(tp: Tape, x: T) -> T:
    return tp.op("neg", [x], x.numel, x.dtype, backward=lambda g: [tp.op("neg", [g], g.numel, g.dtype)])


def half(tp: Tape, x: T) -> T:
    """x[..., :d/2] or x[..., d/2:]: a view whose backward scatters into zeros of x's size."""
    out = tp.view(x, x.numel / 2, strided=True)
    return tp.op_view(out, x, backward=lambda g: [tp.op("slice_backward", [g], x.numel, g.dtype)])


def cat(tp: Tape, parts: list[T]) -> T:
    def bwd(g: T) -> list[T | None]:
        return [tp.view(g, p.numel, strided=True) for p in parts]  # narrow: views
    return tp.op("cat", parts, sum(p.numel for p in parts), parts[0].dtype, backward=bwd, contiguous=True)


def cache_cat(tp: Tape, x: T, cache_dtype: str, *, zeros: bool) -> T:
    """DynamicCache.update: torch.cat of an empty cache tensor (its dtype the first key's) and the new states.
    Its backward's narrow of the empty part allocates zeros."""
    x = cast(tp, x, cache_dtype)

    def bwd(g: T) -> list[T | None]:
        if zeros:
            tp.emit("zeros", OpClass.ELEMENTWISE, [], [], shape=(0.0, 0.0), written=0.0)
        return [tp.view(g)]
    out = tp.op("cat", [x], x.numel, cache_dtype, backward=bwd, contiguous=True)
    out.storage.kind = "cache"
    return out


def linear(tp: Tape, x: T, weight: T, b: T | None, n_out: int, n_in: int, *, clone_grad: bool = False) -> T:
    """F.linear as aten dispatches it: mm (addmm with a bias) on the flattened tokens; under autocast the weight,
    bias and input cast to the compute dtype first (weights once per forward, autocast's cache)."""
    if tp.autocast:
        if b is not None:
            b = tp.cast_weight(b)
        weight = tp.cast_weight(weight)
        x = cast(tp, x, tp.autocast)
    tokens = x.numel / n_in
    tp.views += 3  # view, t, _unsafe_view

    def bwd(g: T) -> list[T | None]:
        tp.views += 4 if weight.requires_grad else 0  # t() of the weight and its gradient
        if clone_grad:  # the gradient of a transposed head view comes back non-contiguous
            g = tp.op("clone", [tp.view(g, n=0, strided=True)], g.numel, g.dtype, contiguous=True)
        gx = gw = gb = None

        def grad_x() -> T:
            return tp.op("mm", [g, weight], x.numel, g.dtype, OpClass.GEMM,
                         shape=GemmShape(1.0, tokens, n_in, n_out).to_row(), flops=2.0 * tokens * n_in * n_out)

        def grad_w() -> T:
            return tp.op("mm", [g, x], weight.numel, g.dtype, OpClass.GEMM,
                         shape=GemmShape(1.0, n_out, n_in, tokens).to_row(), flops=2.0 * tokens * n_in * n_out)
        if b is None:  # traced order: the weight's gradient first for mm, the input's first for addmm
            gw = grad_w() if weight.requires_grad else None
            gx = grad_x() if x.requires_grad else None
        else:
            gx = grad_x() if x.requires_grad else None
            gw = grad_w() if weight.requires_grad else None
            gb = tp.op("sum", [g], n_out, g.dtype, R) if b.requires_grad else None
        return [gx, gw] if b is None else [gx, gw, gb]
    ins = [x, weight] if b is None else [b, x, weight]
    saved = tuple(t for t, other in ((x, weight), (weight, x)) if other.requires_grad)  # x for W's gradient, W for x's
    name = "mm" if b is None else "addmm"
    out = tp.op(name, ins, tokens * n_out, x.dtype, OpClass.GEMM, backward=None,
                shape=GemmShape(1.0, tokens, n_out, n_in).to_row(), flops=2.0 * tokens * n_out * n_in)
    if tp.grad_enabled and any(t.requires_grad for t in ins):
        node_ins = [x, weight] if b is None else [x, weight, b]
        tp.attach(out, node_ins, bwd, saved)
    return out


def repeat_kv(tp: Tape, x: T, n_rep: float) -> T:
    """transformers' repeat_kv: K or V expanded over the query heads of their group and copied (reshape of an
    expand); the backward sums the copies."""
    full = tp.view(x, x.numel * n_rep, 2, strided=True, permuted=False)
    return tp.op("clone", [full], full.numel, x.dtype, contiguous=True,
                 backward=lambda g: [tp.op("sum", [g], x.numel, g.dtype, R)])


def sdpa(tp: Tape, q: T, k: T, v: T, shape: AttentionShape, flops: float, mask: T | None = None) -> T:
    """F.scaled_dot_product_attention as one flash kernel (GQA without repeated K/V); autocast casts q, k, v.
    An explicit `mask` is read (not counted in its bytes, as the tracer counts them) and held to here."""
    if tp.autocast:
        q, k, v = (cast(tp, t, tp.autocast) for t in (q, k, v))
    b, h, s = shape.batch, shape.heads, shape.q_length
    out = tp.new(q.numel, q.dtype)
    lse = tp.new(b * h * s, "fp32")
    # the forward kernel is labelled forward even when a checkpointed layer recomputes it in the backward, as the
    # tracer records it (trace/as_cuda.py), and so costed as a forward kernel
    phase, tp.phase = tp.phase, Phase.FORWARD
    tp.emit("flash_attention", OpClass.ATTENTION, [q, k, v], [out], shape=shape.to_row(), flops=flops)
    tp.phase = phase
    if phase is not Phase.FORWARD:  # its memory still counts in the phase it runs in
        tp.runs_in[len(tp.ops) - 1] = phase
    if mask is not None:
        mask.storage.last = max(mask.storage.last, len(tp.ops) - 1)

    def bwd(g: T) -> list[T | None]:
        grads = [tp.like(t) for t in (q, k, v)]
        tp.emit("flash_attention_backward", OpClass.ATTENTION, [g, q, k, v, out, lse], grads,
                shape=shape.to_row(), flops=flops * cal.ATTN_BWD_FLOPS)
        return list(grads)
    if tp.grad_enabled and any(t.requires_grad for t in (q, k, v)):
        tp.attach(out, [q, k, v], bwd, (q, k, v, out, lse))
    return out
