"""Which of PyTorch's CUDA convolution backends runs a traced convolution (aten/src/ATen/native/Convolution.cpp,
`_convolution`): the tracer records what that backend launches, the op pricer prices it. Shared by both, so it
depends on the graph's types alone."""

from __future__ import annotations

from gpuadvisor.estimate.graph import ConvShape, TensorLayout


def cudnn_depthwise(shape: ConvShape, dtype: str) -> bool:
    """Whether PyTorch runs an NCHW depthwise convolution with cuDNN rather than its own CUDA kernels
    (aten/src/ATen/native/Convolution.cpp, ConvParams::use_cudnn_depthwise and
    check_cudnn_depthwise_workload_with_filter): fp16 only, 32 or more channels, a square 1x1, 3x3 or 5x5 filter,
    an input 7 or more wide; then every stride-1 shape, and at stride 2 a 3x3 or 5x5 one of 512+ channels (256+
    where the input is 28+ wide), a 1x1 one of 128+ channels at batch 16 or less on a 7-wide input, or any at
    batch 1. Channels-last depthwise convolutions always go to cuDNN (the caller's case)."""
    k, c, w, n = shape.kernel_width, shape.in_channels, shape.in_width, shape.batch
    if dtype != "fp16" or c < 32 or shape.kernel_height != k or k not in (1, 3, 5) or w < 7:
        return False
    stride = shape.stride
    if stride == 1:
        return True
    if stride != 2:
        return False
    if n <= 1:
        return k != 1 or w <= 28
    if k == 1:
        return n <= 16 and c >= 128 and w <= 7
    return c >= 512 or (c >= 256 and w >= 28)


def bias_added_apart(shape: ConvShape, dtype: str) -> bool:
    """Whether a convolution's bias is added by a kernel of its own after the convolution: cuDNN's convolutions
    take no bias, and `_convolution` adds it in place (`output.add_(reshape_bias(...))`) for the cuDNN and cuDNN
    transpose backends; PyTorch's own NCHW depthwise kernels (not cudnn_depthwise) add it inside."""
    depthwise = shape.groups > 1 and shape.groups == shape.in_channels
    return not (depthwise and shape.layout is TensorLayout.NCHW and not cudnn_depthwise(shape, dtype))


def pointwise(shape: ConvShape) -> bool:
    """A 1x1 convolution of stride 1: on NCHW tensors cuDNN runs it as a GEMM on them as they are, no transposes
    (an H100's profiles, lab/data/h100-nchw-transposes-2026-12-06)."""
    return shape.kernel_height * shape.kernel_width <= 1 and shape.stride <= 1


def aligned_map(shape: ConvShape) -> bool:
    """Whether a sample's output pixels (a pointwise NCHW GEMM's width) are a multiple of 8."""
    return (shape.out_height * shape.out_width) % 8 == 0


def nchw_gemm(shape: ConvShape) -> bool:
    """Whether cuDNN runs a 16-bit NCHW convolution as a GEMM on NCHW as it is, with no NHWC copies: a pointwise one
    on an aligned map (no transposes in any of six such shapes; on unaligned maps some ran transposes, so they keep
    their copies)."""
    return pointwise(shape) and aligned_map(shape)
