"""A 16-bit convolution on NCHW tensors without room for its NHWC copies.

cuDNN runs 16-bit NCHW convolutions with NHWC tensor-core kernels: it transposes the input in and the output out
through its workspace, so their NHWC copies are alive beside the tensors themselves (trace.recorder's
`_conv_workspace`). Where the card cannot hold them, PyTorch's algorithm search skips every plan that needs that
workspace and cuDNN runs a workspace-free kernel instead, an order of magnitude slower: on an H200 capped to each
of VGG-16's convolutions' input and output plus 0.5 GiB, those with larger copies ran at 34 TFLOP/s (18 at 64
output channels) against 190-560 uncapped (lab/data/h200-nchw-2026-12-05/conv_workspace.json), and VGG-16's
inference step at batch 1024 under a 23.4 GiB cap took 2.2x as long: its 224x224 64-channel convolution alone fell
back. timm's published RTX 3090 run of that step (24 GiB) is 1.7x its channels-last one, which needs no copies.

One rule, read by the op pricer (the time of the convolutions that fall back) and by the memory estimate (their
copies are then never allocated): a convolution falls back where its copies, with what is surely alive while it
runs (the step's weights, gradients and optimizer states, its own input and output), exceed the card's memory
less the CUDA context. What else is alive is left out: in training the saved activations make the true room
smaller, so the rule can miss a fallback, never invent one.
"""

from __future__ import annotations

from gpuadvisor.estimate import calibration as cal
from gpuadvisor.estimate.conv_backend import nchw_gemm
from gpuadvisor.estimate.graph import ConvShape, Op, OpGraph, TensorLayout
from gpuadvisor.workload import BYTES_PER_DTYPE

SIXTEEN_BIT = ("bf16", "fp16")  # the dtypes cuDNN runs NCHW convolutions in through NHWC copies
RESIDENT_ITEMS = ("weights", "gradients", "optimizer states")


def nhwc_copies_bytes(op: Op, shape: ConvShape) -> float:
    """The bytes of the NHWC copies a 16-bit NCHW convolution holds while it runs (its input and its output, or for
    a backward the output gradient in and the input gradient out: the same sizes); 0 for one cuDNN does not
    transpose (channels-last, grouped, an image stem of fewer than 8 channels, which measured no workspace, a 1x1 run
    as a GEMM on NCHW: conv_backend.nchw_gemm)."""
    if op.dtype not in SIXTEEN_BIT or shape.layout is not TensorLayout.NCHW or shape.groups > 1 \
            or shape.in_channels < 8 or nchw_gemm(shape):
        return 0.0
    elem = BYTES_PER_DTYPE[op.dtype]
    n = shape.batch
    return elem * n * (shape.in_channels * shape.in_height * shape.in_width
                       + shape.out_channels * shape.out_height * shape.out_width)


def room_bytes(g: OpGraph, capacity_bytes: float | None) -> float:
    """What the card holds for one convolution's tensors and their copies beyond what is alive all step (inf
    where the card's memory is not known)."""
    if capacity_bytes is None:
        return float("inf")
    resident = sum(g.memory.items.get(k, 0.0) for k in RESIDENT_ITEMS)
    return capacity_bytes - cal.CUDA_CONTEXT_BYTES - (1.0 + cal.ALLOCATOR_OVERHEAD) * resident


def falls_back(op: Op, shape: ConvShape, room: float) -> bool:
    """Whether the convolution's tensors and their NHWC copies (twice its copies' bytes, with the allocator's
    fragmentation) exceed `room` (room_bytes)."""
    copies = nhwc_copies_bytes(op, shape)
    return copies > 0.0 and 2.0 * copies * (1.0 + cal.ALLOCATOR_OVERHEAD) > room


def fallback_s(op: Op, shape: ConvShape, fp32_flops: float) -> float:
    """The workspace-free kernel's time: its FLOPs at NO_WORKSPACE_CONV_EFF of the FP32 FMA rate, a tile of
    NO_WORKSPACE_CONV_TILE output channels filled in part by fewer."""
    fill = min(1.0, shape.out_channels / cal.NO_WORKSPACE_CONV_TILE)
    return op.flops / (fp32_flops * cal.NO_WORKSPACE_CONV_EFF * fill)


def fallen_back(g: OpGraph, capacity_bytes: float | None) -> list[tuple[Op, float]]:
    """(convolution, its NHWC copies' bytes) of every op of `g` that falls back on a card of `capacity_bytes`."""
    room = room_bytes(g, capacity_bytes)
    out = []
    for op in g.ops:
        shape = op.named_shape
        if isinstance(shape, ConvShape) and falls_back(op, shape, room):
            out.append((op, nhwc_copies_bytes(op, shape)))
    return out
