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

Detection post-processing that sizes a tensor by a box (a value of the data) runs at a fixed size (FixedPastes):
Mask R-CNN pastes each detection's mask at the whole image (the largest box: the most work), Keypoint R-CNN resizes
each detection's heatmaps at their own size; the per-detection loop and its ops are kept (launch counts are host
time), and the answer says so.

An op that raises is named on the exception (`failed_op`): the tracer's one-line error then says which op, and
where in the model's code, a trace stopped.
"""

from __future__ import annotations

import contextlib
import os
import sys
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


class FixedPastes:
    """While tracing on fake tensors (`active`), torchvision's detection post-processing that sizes a tensor by a
    box, a value of the data (`int(box[2] - box[0] + 1)`, `.item()`), runs at a fixed size instead: roi_heads'
    `paste_mask_in_image` (each detection's mask, called by `paste_masks_in_image`, which transform.postprocess
    imports by name: the per-mask function is the one roi_heads resolves at call time) and `heatmaps_to_keypoints`
    (called by keypointrcnn_inference from roi_heads). The originals are restored on leaving. `notes`: what ran at
    a fixed size, for the graph's notes (the answer says it)."""

    def __init__(self, active: bool) -> None:
        self.active = active
        self.notes: list[str] = []
        self._swapped: list[tuple[Any, str, Any]] = []  # (module, name, original)

    def __enter__(self) -> FixedPastes:
        roi_heads = sys.modules.get("torchvision.models.detection.roi_heads")
        if self.active and roi_heads is not None:
            for name, fixed in (("paste_mask_in_image", self._paste_mask),
                                ("heatmaps_to_keypoints", self._heatmaps_to_keypoints)):
                if hasattr(roi_heads, name):
                    self._swapped.append((roi_heads, name, getattr(roi_heads, name)))
                    setattr(roi_heads, name, fixed)
        return self

    def __exit__(self, *exc: object) -> None:
        while self._swapped:
            module, name, original = self._swapped.pop()
            setattr(module, name, original)

    def _note(self, note: str) -> None:
        if note not in self.notes:
            self.notes.append(note)

    def _paste_mask(self, mask: Any, box: Any, im_h: int, im_w: int) -> Any:
        self._note(f"each detection's mask pasted at the whole image's size, {im_h}x{im_w} (its box's size is a value "
                   "of the data: the largest box taken)")
        return paste_mask_at_whole_image(mask, box, im_h, im_w)

    def _heatmaps_to_keypoints(self, maps: Any, rois: Any) -> Any:
        self._note(f"each detection's keypoint heatmaps resized at their own size, {maps.shape[-2]}x{maps.shape[-1]} "
                   "(its box's size is a value of the data)")
        return heatmaps_to_keypoints_at_own_size(maps, rois)


def paste_mask_at_whole_image(mask: Any, box: Any, im_h: int, im_w: int) -> Any:
    """torchvision's `paste_mask_in_image` (torchvision/models/detection/roi_heads.py, BSD-3-Clause) with the box
    taken as the whole image: the mask resized to (im_h, im_w), pasted into zeros of the image's size, returned as
    (im_h, im_w) like the original. The box's own size is data (the original reads it with `int()`), so the largest
    one is taken, the most work (module docstring). The original's other ops on the box run as it runs them (its
    size, its bounds clamped to the image, the mask's offsets: small kernels, one detection at a time, whose launches
    are host time); their values are not read, so the original's reads of them (about 14 a detection, each a
    device-to-host copy that waits for the GPU) are not dispatched."""
    functional = torch.nn.functional
    _ = (box[2] - box[0] + 1, box[3] - box[1] + 1)  # its size (w, h), read by int(): taken as the image's
    mask = functional.interpolate(mask.expand((1, 1, -1, -1)), size=(im_h, im_w), mode="bilinear",
                                  align_corners=False)[0][0]
    im_mask = torch.zeros((im_h, im_w), dtype=mask.dtype, device=mask.device)
    # its bounds clamped to the image: max(box[0], 0) compares box[0] < 0, min(box[2] + 1, im_w) box[2] + 1 > im_w
    x_0, x_1 = box[0], box[2] + 1
    _ = (x_0 < 0, x_1 > im_w)
    y_0, y_1 = box[1], box[3] + 1
    _ = (y_0 < 0, y_1 > im_h)
    _ = (y_0 - box[1], y_1 - box[1], x_0 - box[0], x_1 - box[0])  # the mask's part inside the image
    im_mask[0:im_h, 0:im_w] = mask
    return im_mask


def heatmaps_to_keypoints_at_own_size(maps: Any, rois: Any) -> Any:
    """torchvision's `heatmaps_to_keypoints` (torchvision/models/detection/roi_heads.py, BSD-3-Clause) with each RoI's
    heatmaps resized at their own size (H x W, 56 x 56 in keypointrcnn_resnet50_fpn) instead of its box's size in
    pixels, which is data (the original reads it with `.item()`), and which this function, unlike the masks' paste,
    has no image size to bound. The resize is bicubic upsampling for a sub-pixel argmax: one kernel per RoI whatever
    its size, its output a few MB at a person's box size and freed at the next RoI, so the fixed size changes the
    launch count not at all and the step's time and memory by little. Outputs as the original's: keypoints
    (K, N, 3) and scores (K, N), of K RoIs and N keypoints; the loop over RoIs and its ops are the original's, less
    its two reads a RoI."""
    functional = torch.nn.functional
    offset_x = rois[:, 0]
    offset_y = rois[:, 1]
    widths = (rois[:, 2] - rois[:, 0]).clamp(min=1)
    heights = (rois[:, 3] - rois[:, 1]).clamp(min=1)
    _ = (widths.ceil(), heights.ceil())  # the sizes in pixels the original reads per RoI: taken as the heatmap's
    num_keypoints = maps.shape[1]
    roi_map_height, roi_map_width = int(maps.shape[2]), int(maps.shape[3])
    xy_preds = torch.zeros((len(rois), 3, num_keypoints), dtype=torch.float32, device=maps.device)
    end_scores = torch.zeros((len(rois), num_keypoints), dtype=torch.float32, device=maps.device)
    for i in range(len(rois)):
        width_correction = widths[i] / roi_map_width
        height_correction = heights[i] / roi_map_height
        roi_map = functional.interpolate(maps[i][:, None], size=(roi_map_height, roi_map_width), mode="bicubic",
                                         align_corners=False)[:, 0]
        w = roi_map.shape[2]
        pos = roi_map.reshape(num_keypoints, -1).argmax(dim=1)
        x_int = pos % w
        y_int = torch.div(pos - x_int, w, rounding_mode="floor")
        x = (x_int.float() + 0.5) * width_correction
        y = (y_int.float() + 0.5) * height_correction
        xy_preds[i, 0, :] = x + offset_x[i]
        xy_preds[i, 1, :] = y + offset_y[i]
        xy_preds[i, 2, :] = 1
        end_scores[i, :] = roi_map[torch.arange(num_keypoints, device=roi_map.device), y_int, x_int]
    return xy_preds.permute(0, 2, 1), end_scores
