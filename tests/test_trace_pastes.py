"""Detection post-processing sized by a box (a value of the data) traced at a fixed size (dynamic.FixedPastes):
torchvision's own functions swapped only while tracing and restored after, outputs shaped as torchvision's, the same
kernels per detection as torchvision launches (on small real CPU tensors, beside the originals); and a model that
truly needs its data's values still refused in one line naming the op and the line. Needs PyTorch (the [trace]
extra); the torchvision tests need torchvision (the [trace-vision] extra). The whole models are estimated in
tests/test_every_family.py (slow)."""

from __future__ import annotations

import importlib.util
import textwrap
from collections import Counter

import pytest

pytest.importorskip("torch", reason="tracing needs PyTorch, the [trace] extra")

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from gpuadvisor.core.errors import UserError
from gpuadvisor.estimate.trace.classify import is_view
from gpuadvisor.estimate.trace.dynamic import (
    FixedPastes,
    heatmaps_to_keypoints_at_own_size,
    paste_mask_at_whole_image,
)
from gpuadvisor.estimate.trace.tracer import TraceOptions, trace_graph
from gpuadvisor.modelref import parse_ref

needs_tv = pytest.mark.skipif(importlib.util.find_spec("torchvision") is None,
                              reason="needs torchvision (the [trace-vision] extra)")
IM_H, IM_W = 48, 64


class _Kernels(TorchDispatchMode):
    """The ops that launch a kernel, by name (views left out), and the reads of a value (.item(), int())."""

    def __init__(self) -> None:
        super().__init__()
        self.kernels: Counter[str] = Counter()
        self.reads = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = str(func._overloadpacket.__name__)
        if name == "_local_scalar_dense":
            self.reads += 1
        elif not is_view(func):
            self.kernels[name] += 1
        return func(*args, **(kwargs or {}))


def _run(fn, *args):
    with _Kernels() as k:
        out = fn(*args)
    return out, k


def _masks_and_boxes(n: int) -> tuple[torch.Tensor, torch.Tensor]:
    """n 28x28 mask probabilities (as maskrcnn_inference gives them) and boxes inside the image."""
    torch.manual_seed(0)
    masks = torch.rand(n, 1, 28, 28)
    x0 = torch.randint(4, 20, (n,)).float()
    y0 = torch.randint(4, 16, (n,)).float()
    return masks, torch.stack((x0, y0, x0 + torch.randint(8, 30, (n,)), y0 + torch.randint(8, 20, (n,))), dim=1)


@needs_tv
def test_the_swap_is_only_while_tracing_and_restored_after():
    from torchvision.models.detection import roi_heads

    originals = (roi_heads.paste_mask_in_image, roi_heads.heatmaps_to_keypoints)
    with FixedPastes(active=False) as off:
        assert (roi_heads.paste_mask_in_image, roi_heads.heatmaps_to_keypoints) == originals
    with pytest.raises(RuntimeError, match="stops a trace"), FixedPastes(active=True) as on:
        assert roi_heads.paste_mask_in_image not in originals and roi_heads.heatmaps_to_keypoints not in originals
        raise RuntimeError("stops a trace")
    assert (roi_heads.paste_mask_in_image, roi_heads.heatmaps_to_keypoints) == originals
    assert off.notes == [] and on.notes == []  # nothing pasted: nothing said


@needs_tv
def test_masks_are_pasted_at_the_whole_image_with_torchvisions_kernels_and_shape():
    from torchvision.models.detection import roi_heads
    from torchvision.models.detection.transform import paste_masks_in_image  # the name postprocess calls

    masks, boxes = _masks_and_boxes(5)
    original, k_original = _run(paste_masks_in_image, masks, boxes, (IM_H, IM_W))
    with FixedPastes(active=True) as pastes:
        fixed, k_fixed = _run(paste_masks_in_image, masks, boxes, (IM_H, IM_W))
    assert fixed.shape == original.shape == (5, 1, IM_H, IM_W) and fixed.dtype == original.dtype
    # the same kernels, one detection at a time (launches are host time); torchvision's reads of the box are left out
    assert k_fixed.kernels == k_original.kernels and k_fixed.kernels["upsample_bilinear2d"] == 5
    assert k_original.reads == 5 * 14 and k_fixed.reads == 0  # its box size, bounds and offsets, read
    assert pastes.notes == [f"each detection's mask pasted at the whole image's size, {IM_H}x{IM_W} (its box's size "
                            "is a value of the data: the largest box taken)"]
    # what it pastes: torchvision's paste of a box that is the whole image, whatever the box given
    whole = torch.tensor([0, 0, IM_W - 1, IM_H - 1])
    mask = masks[0, 0]
    assert torch.equal(paste_mask_at_whole_image(mask, boxes[0].long(), IM_H, IM_W),
                       roi_heads.paste_mask_in_image(mask, whole, IM_H, IM_W))


@needs_tv
def test_keypoint_heatmaps_are_resized_at_their_own_size_with_torchvisions_kernels_and_shapes():
    from torchvision.models.detection import roi_heads

    torch.manual_seed(0)
    maps = torch.randn(3, 17, 56, 56)
    own = torch.tensor([[10.0, 20.0, 66.0, 76.0], [0.0, 5.0, 56.0, 61.0], [30.0, 1.0, 86.0, 57.0]])  # 56 px boxes
    other = own * torch.tensor([1.0, 1.0, 3.0, 2.0])  # boxes of other sizes
    original, k_original = _run(roi_heads.heatmaps_to_keypoints, maps, other)
    fixed, k_fixed = _run(heatmaps_to_keypoints_at_own_size, maps, other)
    assert [t.shape for t in fixed] == [t.shape for t in original] == [(3, 17, 3), (3, 17)]
    assert k_fixed.kernels == k_original.kernels and k_fixed.kernels["upsample_bicubic2d"] == 3
    assert k_original.reads == 2 * 3 and k_fixed.reads == 0
    # where a box's size in pixels is the heatmap's, torchvision's answer exactly
    for a, b in zip(heatmaps_to_keypoints_at_own_size(maps, own), roi_heads.heatmaps_to_keypoints(maps, own),
                    strict=True):
        assert torch.equal(a, b)
    with FixedPastes(active=True) as pastes:
        roi_heads.keypointrcnn_inference(maps, [own])  # resolves the name in roi_heads at call time
    assert pastes.notes == ["each detection's keypoint heatmaps resized at their own size, 56x56 (its box's size "
                            "is a value of the data)"]


# sizes a tensor by a value of its data (fake tensors have none), then runs an op PyTorch's CPU kernels refuse in
# bf16 (as torchvision's NMS did for Mask R-CNN): neither fake nor real CPU tensors can trace it
READS_ITS_DATA = """
import torch
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)
    def forward(self, x):
        n = int(x.abs().sum().item()) % 3 + 1
        y = self.fc(x).repeat(1, n)[:, :4]
        return torch.linalg.inv(y.reshape(-1, 2, 2))
def build():
    return Net()
def build_batch(b):
    return torch.randn(b, 4)
"""


def test_a_model_that_sizes_a_tensor_by_its_data_is_refused_in_one_line_naming_the_op_and_line(tmp_path):
    f = tmp_path / "reads.py"
    f.write_text(textwrap.dedent(READS_ITS_DATA))
    with pytest.raises(UserError) as e:
        trace_graph(parse_ref(f"{f}:build"), TraceOptions(dtype="bf16"), 2)
    lines = f.read_text().splitlines()
    reads, inverts = (next(i + 1 for i, text in enumerate(lines) if word in text) for word in (".item()", "inv("))
    line = str(e.value)
    assert "\n" not in line and line.startswith(f"{f}:build cannot be traced: ")
    assert f"(on fake tensors: the model reads a value of its data in aten::_local_scalar_dense at reads.py:{reads} " \
           "forward)" in line
    assert f"linalg_inv_ex at reads.py:{inverts} forward" in line  # on real CPU tensors: the inverse refuses bf16
