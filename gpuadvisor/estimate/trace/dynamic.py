"""Ops whose output size depends on their data, traced on fake tensors at a fixed size; and which op failed.

A detection model selects: the boxes above a score threshold (`torch.where(scores > t)`, `x[mask]`), those
non-maximum suppression keeps (torchvision::nms). Fake tensors have no values, so the size of such an output is
unknown, and a real trace of a model with random weights would keep a random number of boxes, different at each
trace batch. Here every candidate is kept: `nonzero` returns every index, a boolean mask selects every element,
NMS keeps every box (in score order, as it returns them). The model's own caps then bound the work (the R-CNNs'
`pre_nms_top_n`/`post_nms_top_n` proposals, `detections_per_img`, RetinaNet's `topk_candidates`): the step traced
is the one with the most boxes, the one a user provisions memory for, as layer drop keeps every layer
(recorder.steer_draw). torchvision's `batched_nms` is run as one NMS over class-offset boxes (what it runs on CUDA
below 5000 boxes): its per-class loop runs once per distinct label, a count no fake tensor knows.

An op that raises is named on the exception (`failed_op`): the tracer's one-line error then says which op, and
where in the model's code, a trace stopped.
"""

from __future__ import annotations

import contextlib
import os
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from gpuadvisor.estimate.trace.torchlib import import_torch

torch = import_torch()
from torch._subclasses.fake_tensor import DynamicOutputShapeException  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

aten = torch.ops.aten
_OWN = tuple(str(p) + os.sep for p in (Path(torch.__file__).parent, Path(__file__).resolve().parents[2]))


class FixedSizes(TorchDispatchMode):
    """Under a FakeTensorMode: data-dependent output sizes taken at their largest (module docstring); every op
    that raises is named on its exception."""

    def __init__(self, fake: bool) -> None:
        super().__init__()
        self.fake = fake
        self.fixed: set[str] = set()  # the ops whose sizes were fixed (for the graph's notes)

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        try:
            return func(*args, **kwargs)
        except DynamicOutputShapeException as e:
            fixed = _every_candidate(func, args, kwargs) if self.fake else None
            if fixed is None:
                _name(e, func)
                raise
            self.fixed.add(str(func.name()).split(".")[0])
            return fixed
        except Exception as e:
            _name(e, func)
            raise


def _every_candidate(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The output of a data-dependent op with every candidate selected; None for an op not handled here."""
    if func is aten.nonzero.default:
        x = args[0]
        return x.new_empty((x.numel(), x.dim()), dtype=torch.long)
    if func is aten.masked_select.default:
        n = torch.broadcast_shapes(args[0].shape, args[1].shape).numel()
        return args[0].new_empty((n,))
    if func in (aten.index.Tensor, aten.index_put.default, aten.index_put_.default, aten._index_put_impl_.default):
        indices = list(args[1])
        if not any(i is not None and i.dtype in (torch.bool, torch.uint8) for i in indices):
            return None
        return func(args[0], _every_index(indices), *args[2:], **kwargs)
    if str(func.name()) == "torchvision::nms":
        boxes = args[0]
        return boxes.new_empty((boxes.shape[0],), dtype=torch.long)
    return None


def _every_index(indices: list[Any]) -> list[Any]:
    """Boolean masks as the integer indices of all their elements (one index tensor per masked dimension)."""
    out: list[Any] = []
    for i in indices:
        if i is not None and i.dtype in (torch.bool, torch.uint8):
            out.extend(i.new_empty((i.numel(),), dtype=torch.long) for _ in range(i.dim()))
        else:
            out.append(i)
    return out


def _name(e: BaseException, func: Any) -> None:
    """Name the op on the exception, with the innermost line of the model's code that called it (the first op
    to raise wins: an op that fails inside another op is the one to name)."""
    if getattr(e, "failed_op", None):
        return
    where = ""
    for frame in reversed(traceback.extract_stack()[:-2]):
        if not frame.filename.startswith(_OWN):
            where = f" at {Path(frame.filename).name}:{frame.lineno} {frame.name}"
            break
    with contextlib.suppress(AttributeError, TypeError):
        e.failed_op = f"{func.name()}{where}"  # type: ignore[attr-defined]


def failed_op(e: BaseException) -> str:
    """' in aten::view at raft.py:408 index_pyramid' where the exception came from an op, else ''."""
    op = getattr(e, "failed_op", None)
    return f" in {op}" if op else ""


@contextlib.contextmanager
def one_nms_per_batch() -> Iterator[None]:
    """torchvision's batched_nms as one NMS over class-offset boxes (module docstring), where torchvision is
    imported."""
    import sys

    boxes: Any = sys.modules.get("torchvision.ops.boxes")
    trick = getattr(boxes, "_batched_nms_coordinate_trick", None)
    if boxes is None or trick is None:
        yield
        return
    original = boxes.batched_nms
    boxes.batched_nms = trick
    try:
        yield
    finally:
        boxes.batched_nms = original
