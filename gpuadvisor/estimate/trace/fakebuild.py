"""Building a model for a fake-tensor trace whose constructor reads values.

A constructor that reads the values of a tensor it made cannot run on fake tensors, though the step it builds can:
`nn.init.trunc_normal_` resamples until no value lies outside its bounds (`if not mask.any()`: ViT, Swin, ConvNeXt
and MaxViT initialise with it). Fake tensors have no values to resample, so here trunc_normal_ leaves them as they
are, as it does meta tensors. A constructor that reads other data (timm's drop-path rates from
`torch.linspace(...).tolist()`, RegNet's widths, GoogLeNet's scipy draws) is built on the meta device or the CPU
instead and its tensors made fake (tracer._as_fake): the step runs on fake tensors either way.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def no_resampling() -> Iterator[None]:
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
