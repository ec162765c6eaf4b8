"""One aten op as the cost model sees it: its class, FLOPs, bytes and class-specific shape.

FLOPs come from PyTorch's own formulas (`torch.utils.flop_counter`'s registry: GEMMs, convolutions
and their backward, SDPA); attention is counted by kernels.attention_flops for every SDPA variant (the
registry has no formula for the CPU flash kernel the tracer runs, and counts no causal triangle).
The shapes are graph's named shapes; the recorder stores them as rows (`to_row`). Bytes are each
input and output tensor's own size, once: what a kernel that reads its inputs once must move.
"""

from __future__ import annotations

import math
from typing import Any

from gpuadvisor.estimate.graph import (
    BATCH_STATS,
    BROADCAST,
    MIXED_DTYPE,
    STRIDED,
    AttentionShape,
    ConvGradients,
    ConvShape,
    GemmShape,
    NormShape,
    OpClass,
    StreamLayout,
    StreamShape,
    TensorLayout,
)

GEMM_OPS = {"mm", "addmm", "bmm", "baddbmm", "_scaled_mm", "_grouped_mm", "addmv", "mv", "dot", "_int_mm",
            "addbmm"}
CONV_OPS = {"convolution", "convolution_backward", "_convolution", "cudnn_convolution", "mkldnn_convolution",
            "cudnn_convolution_transpose", "_slow_conv2d_forward", "_slow_conv2d_backward",
            "slow_conv_transpose2d", "_conv_depthwise2d", "conv_depthwise3d"}
NORM_OPS = {"native_batch_norm", "_native_batch_norm_legit", "_native_batch_norm_legit_no_training",
            "_native_batch_norm_legit_functional", "cudnn_batch_norm", "native_batch_norm_backward",
            "cudnn_batch_norm_backward", "_batch_norm_with_update", "batch_norm_backward", "native_layer_norm",
            "native_layer_norm_backward", "native_group_norm", "native_group_norm_backward", "_fused_rms_norm",
            "_fused_rms_norm_backward", "_batch_norm_impl_index", "miopen_batch_norm"}
GATHER_OPS = {"embedding", "embedding_dense_backward", "index_select", "gather", "scatter", "scatter_add",
              "scatter_reduce", "index_add", "index", "index_put", "_index_put_impl", "index_copy",
              "_embedding_bag", "embedding_bag", "masked_scatter", "take",
              # torchvision's region pooling (detection heads): bilinear gathers from the feature maps per box
              "roi_align", "_roi_align_backward", "roi_pool", "_roi_pool_backward", "ps_roi_align",
              "_ps_roi_align_backward", "ps_roi_pool", "_ps_roi_pool_backward"}
REDUCTION_OPS = {"sum", "mean", "amax", "amin", "max", "min", "_softmax", "_log_softmax", "_softmax_backward_data",
                 "_log_softmax_backward_data", "nll_loss_forward", "nll_loss_backward", "nll_loss2d_forward",
                 "nll_loss2d_backward", "var_mean", "var", "std", "norm", "linalg_vector_norm", "cumsum", "topk",
                 "sort", "argmax", "argmin", "prod", "logsumexp", "_safe_softmax", "all", "any", "std_mean",
                 "nms"}  # torchvision::nms: the boxes' overlaps, a mask per box
#: cuDNN's fused RNN ops: never traced as such (recurrent.py records them), but named so in GPU profiles
RECURRENT_OPS = {"_cudnn_rnn", "_cudnn_rnn_backward", "miopen_rnn", "miopen_rnn_backward"}
#: the op namespaces whose ops launch kernels: PyTorch's, and torchvision's (NMS, RoI align: detection models)
KERNEL_NAMESPACES = frozenset({"aten", "torchvision"})
#: ops that allocate without running a kernel (their memory counts, their time does not)
NO_KERNEL = {"empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "lift_fresh",
             "lift_fresh_copy", "_local_scalar_dense", "set", "resize", "_resize_output", "_unsafe_view"}


def op_name(func: Any) -> str:
    """'add' for aten.add_.Tensor: in-place and out-of-place ops cost the same."""
    return str(func._overloadpacket.__name__).rstrip("_")


def is_view(func: Any) -> bool:
    """A view or alias returns part of an input's storage and runs no kernel."""
    return any(r.alias_info is not None and not r.alias_info.is_write for r in func._schema.returns)


def classify(name: str, phase_is_optimizer: bool) -> OpClass:
    if phase_is_optimizer or name.startswith(("_fused_adam", "_fused_sgd", "_foreach_")):
        return OpClass.OPTIMIZER
    if name in GEMM_OPS:
        return OpClass.GEMM
    if name in CONV_OPS:
        return OpClass.CONV
    if "scaled_dot_product" in name or "flash_attention" in name or "efficient_attention" in name \
            or "cudnn_attention" in name:
        return OpClass.ATTENTION
    if name in NORM_OPS:
        return OpClass.NORM
    if name in GATHER_OPS:
        return OpClass.GATHER
    if name in RECURRENT_OPS:
        return OpClass.RECURRENT
    if name in REDUCTION_OPS:
        return OpClass.REDUCTION
    if name.startswith(("all_reduce", "all_gather", "reduce_scatter", "_c10d")):
        return OpClass.COLLECTIVE
    return OpClass.ELEMENTWISE


def tensor_bytes(t: Any) -> float:
    return float(t.numel() * t.element_size())


def dtype_name(dtype: Any) -> str:
    return {"torch.float32": "fp32", "torch.bfloat16": "bf16", "torch.float16": "fp16", "torch.float64": "fp64",
            "torch.float8_e4m3fn": "fp8", "torch.float8_e5m2": "fp8", "torch.int8": "int8"}.get(str(dtype), "other")


def gemm_shape(name: str, args: tuple[Any, ...]) -> GemmShape:
    """The (batch, m, n, k) of a matrix product."""
    mats = [a for a in args if hasattr(a, "shape") and len(a.shape) >= 2]
    if name in ("addmm", "baddbmm", "addbmm") and len(mats) >= 3:
        mats = mats[1:]
    if len(mats) < 2:
        vecs = [a for a in args if hasattr(a, "shape")]
        n = vecs[0].shape[0] if vecs else 1
        k = vecs[0].shape[-1] if vecs else 1
        return GemmShape(1.0, 1.0, float(n), float(k))
    a, b = mats[0], mats[1]
    batch = float(math.prod(a.shape[:-2])) if len(a.shape) > 2 else 1.0
    return GemmShape(batch, float(a.shape[-2]), float(b.shape[-1]), float(a.shape[-1]))


def conv_shape(name: str, args: tuple[Any, ...], out: Any) -> ConvShape:
    """The shape of a 2-D convolution (1-D/3-D folded into 2-D: a 3-D one's depth and width as one width); the
    gradients as conv_grads says. A transposed convolution is recorded as the convolution whose data gradient it
    is (cuDNN runs it as that dgrad): from its output's shape (that convolution's input) to its input's (that
    convolution's output), the weight's first dimension its output channels. Its MACs are then its input's pixels
    x the kernel x both channel counts, not its output's: a stride-2 one had been counted 4x over, and with the
    weight's dimensions read as a plain convolution's its channels swapped (DCGAN's generator, 8x)."""
    if name == "convolution_backward":
        grad_out, x, w = args[0], args[1], args[2]
        groups = args[9] if len(args) > 9 else 1
        y = grad_out
    else:
        x, w = args[0], args[1]
        groups = args[8] if len(args) > 8 else 1
        y = out if hasattr(out, "shape") else x
    nhwc = len(x.shape) == 4 and x.is_contiguous(memory_format=_channels_last()) and x.shape[1] > 1
    transposed = is_transposed(name, args) and hasattr(y, "shape") and len(y.shape) == len(x.shape)
    if transposed:
        x, y = y, x

    def dims(t: Any) -> list[float]:
        s = [float(v) for v in t.shape]
        return ([*s, 1.0, 1.0])[:4] if len(s) < 4 else [s[0], s[1], s[2], float(math.prod(s[3:]))]
    n, c, h, wd = dims(x)
    k, _, r, s = dims(w)
    _, _, oh, ow = dims(y)
    return ConvShape(n, c, h, wd, k, r, s, float(groups), oh, ow, TensorLayout.NHWC if nhwc else TensorLayout.NCHW,
                     conv_grads(name, args), transposed, conv_dilation(name, args))


#: the position of the dilation among the arguments of the convolution ops (aten::convolution's sixth,
#: convolution_backward's seventh, cuDNN's own after their padding, stride and output padding)
DILATION_ARG = {"convolution": 5, "_convolution": 5, "convolution_backward": 6, "cudnn_convolution": 4,
                "cudnn_convolution_transpose": 5}


def conv_dilation(name: str, args: tuple[Any, ...]) -> float:
    """A convolution op's dilation, the largest over its dimensions (1 where the op takes none)."""
    where = DILATION_ARG.get(name)
    if where is None or len(args) <= where:
        return 1.0
    value = args[where]
    values = list(value) if isinstance(value, (list, tuple)) else [value]
    return float(max((int(v) for v in values), default=1))


#: the position of the `transposed` flag among the arguments of the convolution ops that take one; the others
#: are transposed by name, or never (cudnn_convolution's seventh argument is `benchmark`)
TRANSPOSED_ARG = {"convolution": 6, "_convolution": 6, "convolution_backward": 7}
TRANSPOSED_OPS = {"cudnn_convolution_transpose", "slow_conv_transpose2d"}


def is_transposed(name: str, args: tuple[Any, ...]) -> bool:
    """Whether a convolution op is a transposed one: by its flag where it takes one, else by its name."""
    where = TRANSPOSED_ARG.get(name)
    return name in TRANSPOSED_OPS or (where is not None and len(args) > where and bool(args[where]))


def conv_flops(name: str, args: tuple[Any, ...], shape: ConvShape) -> float:
    """2 x MACs of the forward, once per gradient a backward computes. Not flop_counter's formula: its
    convolution backward ignores `groups` and counts a depthwise weight gradient groups-times over."""
    fwd = (2.0 * shape.batch * shape.out_height * shape.out_width * shape.out_channels
           * (shape.in_channels / shape.groups) * shape.kernel_height * shape.kernel_width)
    if name != "convolution_backward":
        return fwd
    mask = args[10] if len(args) > 10 else (True, True, False)
    return fwd * (bool(mask[0]) + bool(mask[1]))


def conv_grads(name: str, args: tuple[Any, ...]) -> ConvGradients:
    """Which gradients a convolution backward computes (its output mask); FORWARD for a forward."""
    if name != "convolution_backward":
        return ConvGradients.FORWARD
    mask = args[10] if len(args) > 10 else (True, True, False)
    grads = ConvGradients.FORWARD
    for wanted, grad in zip(mask, (ConvGradients.INPUT, ConvGradients.WEIGHT, ConvGradients.BIAS), strict=False):
        if wanted:
            grads |= grad
    return grads




#: PyTorch's 2-D pooling ops whose window the trace records: the argument positions of kernel_size and stride
POOL_ARGS = {"max_pool2d_with_indices": (1, 2), "avg_pool2d": (1, 2),
             "max_pool2d_with_indices_backward": (2, 3), "avg_pool2d_backward": (2, 3)}


def pool_window(name: str, args: tuple[Any, ...], kwargs: dict[str, Any] | None = None) -> tuple[float, float] | None:
    """(taps of the window, input elements each output steps over) of a 2-D pooling op, None for any other op.
    An empty stride is the kernel's (PyTorch's default)."""
    where = POOL_ARGS.get(name)
    if where is None:
        return None
    kwargs = kwargs or {}

    def arg(i: int, key: str) -> Any:
        return args[i] if len(args) > i else kwargs.get(key)

    def pair(v: Any) -> tuple[int, int] | None:
        if v is None or (isinstance(v, (list, tuple)) and not v):
            return None
        v = list(v) if isinstance(v, (list, tuple)) else [v]
        return (int(v[0]), int(v[-1]))

    kernel = pair(arg(where[0], "kernel_size"))
    if kernel is None:
        return None
    stride = pair(arg(where[1], "stride")) or kernel
    return float(kernel[0] * kernel[1]), float(stride[0] * stride[1])


def stream_shape(name: str, cls: OpClass, args: tuple[Any, ...], ins: list[Any],
                 outs: list[Any], kwargs: dict[str, Any] | None = None) -> StreamShape | NormShape:
    """The elements of the largest tensor and the layout of a streaming op, and for a norm the elements each
    statistic reduces over: PyTorch's vectorized elementwise path needs every tensor dense in one layout and of one
    dtype; a norm's kernels take a row or a group per thread block, so its reduction length sets how well they
    stream."""
    tensors = ins + outs
    biggest = max((t.numel() for t in tensors), default=0)
    if not biggest:
        return NormShape(0.0, StreamLayout.DENSE) if cls is OpClass.NORM else StreamShape(0.0, StreamLayout.DENSE)
    ref = max(outs or ins, key=lambda t: t.numel())
    bits = StreamLayout.DENSE
    floats = {t.dtype for t in tensors if t.is_floating_point() and t.numel() > 1}
    if len(floats) > 1:
        bits |= MIXED_DTYPE
    for t in ins:
        if 1 < t.numel() < biggest:
            bits |= BROADCAST
        elif t.numel() == biggest and _layout(t) != _layout(ref):
            bits |= STRIDED
    if name in ("native_batch_norm", "_native_batch_norm_legit", "cudnn_batch_norm", "_batch_norm_with_update",
                "_native_batch_norm_legit_functional") and any(a is True for a in args):
        bits |= BATCH_STATS
    if cls is OpClass.NORM:
        return NormShape(float(biggest), bits, _norm_reduction(name, args, biggest))
    window = pool_window(name, args, kwargs)
    return StreamShape(float(biggest), bits, *window) if window else StreamShape(float(biggest), bits)


def _layout(t: Any) -> str:
    if t.is_contiguous():
        return "contiguous"
    if t.dim() == 4 and t.is_contiguous(memory_format=_channels_last()):
        return "channels_last"
    return "strided"


def _norm_reduction(name: str, args: tuple[Any, ...], numel: int) -> float:
    """Elements each mean/variance reduces over: the normalized shape of a layer norm, C/G x H x W of a group norm,
    N x H x W of a batch norm (per channel)."""
    x = next((a for a in args if hasattr(a, "shape")), None)
    if x is None or x.dim() < 2:
        return float(numel)
    if "layer_norm" in name or "rms_norm" in name:
        norm_shape = next((a for a in args[1:] if isinstance(a, (list, tuple))), None)
        return float(math.prod(norm_shape)) if norm_shape else float(x.shape[-1])
    if "group_norm" in name:
        ints = [a for a in args if isinstance(a, int) and not isinstance(a, bool)]
        groups = ints[-1] if ints else 1  # native_group_norm(x, w, b, N, C, HxW, group, eps)
        return float(x.numel() / max(1, x.shape[0] * groups))
    return float(x.numel() / max(1, x.shape[1]))


def _channels_last() -> Any:
    import torch

    return torch.channels_last


def attention_shape(args: tuple[Any, ...], kwargs: dict[str, Any], backward: bool) -> AttentionShape:
    """The (batch, heads, q length, kv length, head dim, causal) of SDPA-style (q, k, v, ...) args."""
    tensors = [a for a in args if hasattr(a, "shape") and len(a.shape) == 4]
    if backward and len(tensors) >= 4:  # (grad_out, q, k, v, ...)
        tensors = tensors[1:]
    q, k = tensors[0], tensors[1]
    causal = bool(kwargs.get("is_causal", False))
    for a in args:
        if isinstance(a, bool):
            causal = causal or a
    b, h, sq, d = (float(v) for v in q.shape)
    return AttentionShape(b, h, sq, float(k.shape[-2]), d, causal)


def registry_flops(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any], out: Any) -> float:
    from torch.utils.flop_counter import flop_registry

    fn = flop_registry.get(func._overloadpacket)
    if fn is None:
        return 0.0
    try:
        return float(fn(*args, **kwargs, out_val=out))
    except Exception:  # a formula that does not fit this overload: count no FLOPs rather than fail
        return 0.0
