"""Building a model for a fake-tensor trace: its parameters fake, whatever its constructor reads.

A constructor that reads the values of a tensor it made cannot run on fake tensors, though the step it
builds can: `nn.init.trunc_normal_` resamples until no value lies outside its bounds (`if not mask.any()`,
ViT, Swin, ConvNeXt, MaxViT initialise with it), timm computes each block's drop-path rate with
`torch.linspace(...).tolist()`, RegNet its widths, GoogLeNet and Inception draw from scipy. Those used to
send the whole trace to real CPU tensors (minutes for a training step instead of seconds). Here:

1. fake tensors have no values to resample, so trunc_normal_ leaves them as they are (it does the same for
   meta tensors);
2. a constructor that still reads data is run on real CPU tensors, once, and its parameters, buffers and
   tensor attributes are then made fake: the step itself runs on fake tensors with the same shapes, dtypes
   and strides as it would have (the same ops as a real trace, without its time and memory).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from gpuadvisor.estimate.trace.torchlib import import_torch
from gpuadvisor.estimate.trace.zoo import BuiltModel


def build_on_fake(make: Callable[[], BuiltModel], fake_mode: Any) -> BuiltModel:
    """`make()` (a zoo build) under the active `fake_mode`, its module's tensors fake either way."""
    from torch._subclasses.fake_tensor import DataDependentOutputException, DynamicOutputShapeException

    try:
        with _no_resampling():
            return make()
    except (DataDependentOutputException, DynamicOutputShapeException):
        pass  # the constructor reads its data: build it on real tensors, then make them fake
    from torch._subclasses.fake_tensor import unset_fake_temporarily

    with unset_fake_temporarily():
        built = make()
    _to_fake(built.module, fake_mode)
    return built


@contextlib.contextmanager
def _no_resampling() -> Iterator[None]:
    """nn.init.trunc_normal_ leaves a fake tensor as it is (it has no values to draw, nor to check)."""
    import torch.nn.init as init

    original = getattr(init, "_no_grad_trunc_normal_", None)
    if original is None:  # a PyTorch without the private helper: its trunc_normal_ as it is
        yield
        return
    from torch._subclasses.fake_tensor import FakeTensor

    def trunc_normal(tensor: Any, *args: Any, **kwargs: Any) -> Any:
        return tensor if isinstance(tensor, FakeTensor) else original(tensor, *args, **kwargs)

    init._no_grad_trunc_normal_ = trunc_normal
    try:
        yield
    finally:
        init._no_grad_trunc_normal_ = original


def _to_fake(model: Any, fake_mode: Any) -> None:
    """Every parameter, buffer and tensor attribute of `model` as a fake tensor of the same shape, dtype and
    strides; parameters shared between modules (tied weights) stay shared."""
    torch = import_torch()
    memo: dict[int, Any] = {}

    def fake(t: Any) -> Any:
        if id(t) not in memo:
            memo[id(t)] = fake_mode.from_tensor(t.detach(), static_shapes=True)
        return memo[id(t)]

    params: dict[int, Any] = {}
    for m in model.modules():
        for name, p in list(m._parameters.items()):
            if p is not None:
                if id(p) not in params:
                    params[id(p)] = torch.nn.Parameter(fake(p), requires_grad=p.requires_grad)
                m._parameters[name] = params[id(p)]
        for name, b in list(m._buffers.items()):
            if b is not None:
                m._buffers[name] = fake(b)
        for name, v in list(vars(m).items()):
            if isinstance(v, torch.Tensor) and not name.startswith("_"):
                setattr(m, name, fake(v))
        if isinstance(m, torch.nn.RNNBase):
            m._init_flat_weights()  # RNNs keep a list of their parameters: point it at the new ones
