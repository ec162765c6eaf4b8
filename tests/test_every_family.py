"""Every model of torchvision.models.list_models() (classification, quantized, video, optical flow, detection,
segmentation) and 44 timm models of as many families build with no weights of any kind and the network cut, and
are estimated through the product's own path (api.estimate, as `gpuadvisor estimate torchvision:NAME` runs it):
an inference step at batch 2 on an H100, traced on fake tensors, with a positive time and memory. A failure is the
product's own line: it names the model, the op and the line of the model's code.

Slow (every model is built and traced: about 7 minutes on two cores: 167 cases); needs torchvision and timm (the
[trace-vision] extra), else skipped with the reason.
"""

from __future__ import annotations

import importlib.util
import socket
import urllib.request

import pytest

from gpuadvisor import api
from gpuadvisor.core.errors import UserError

pytestmark = pytest.mark.slow

HAVE_TV = importlib.util.find_spec("torchvision") is not None
HAVE_TIMM = importlib.util.find_spec("timm") is not None
NO_TV = "needs torchvision (the [trace-vision] extra)"
NO_TIMM = "needs timm (the [trace-vision] extra)"

#: timm models, one or two per family
TIMM_MODELS = (
    "resnet50", "resnext50_32x4d", "seresnet50", "res2net50_26w_4s", "efficientnet_b0", "tf_efficientnetv2_s",
    "mixnet_s", "ghostnet_100", "mobilenetv3_large_100", "mobilevit_s", "convnext_tiny", "convnextv2_atto",
    "vit_base_patch16_224", "deit_small_patch16_224", "beit_base_patch16_224", "eva02_tiny_patch14_224",
    "cait_xxs24_224", "swin_tiny_patch4_window7_224", "swinv2_cr_tiny_ns_224", "regnety_016", "densenet121",
    "inception_v3", "xception41", "levit_128s", "coatnet_0_rw_224", "maxvit_tiny_rw_224", "edgenext_small", "dla34",
    "cspresnet50", "hrnet_w18_small", "dm_nfnet_f0", "poolformer_s12", "twins_svt_small", "crossvit_tiny_240",
    "vgg16", "repvgg_a2", "fastvit_t8", "efficientformer_l1", "mvitv2_tiny", "davit_tiny", "sequencer2d_s",
    "xcit_tiny_12_p16_224", "tiny_vit_5m_224", "efficientvit_b0",
)

#: models whose inference step sizes a tensor by a box, a value of its data: each mask pasted at the whole image,
#: each keypoint heatmap resized at its own size (dynamic.FixedPastes), and the answer says so: (what it says, the
#: resize each detection runs)
FIXED_PASTES = {
    "maskrcnn_resnet50_fpn": ("mask pasted at the whole image's size, 480x640", "upsample_bilinear2d"),
    "maskrcnn_resnet50_fpn_v2": ("mask pasted at the whole image's size, 480x640", "upsample_bilinear2d"),
    "keypointrcnn_resnet50_fpn": ("keypoint heatmaps resized at their own size, 56x56", "upsample_bicubic2d"),
}
DETECTIONS = 2 * 100  # batch 2 x the R-CNNs' detections_per_img: every candidate kept
#: RAFT samples its correlation volume with float32 coordinates: pure bf16 weights fail in grid_sample (on a GPU
#: as here), so it is estimated in fp32 (its bf16 refusal is tested below)
FP32_ONLY = {"raft_small", "raft_large"}


def _torchvision_models() -> list[str]:
    if not HAVE_TV:
        return []
    import torchvision

    return list(torchvision.models.list_models())


@pytest.fixture(autouse=True)
def _offline(monkeypatch):
    """No network: a weight download (torch.hub, urllib, a socket) fails loudly instead."""
    def refuse(*args, **kwargs):
        raise OSError("network access in an offline test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(urllib.request, "urlopen", refuse)


@pytest.fixture(autouse=True)
def _always_trace(monkeypatch):
    """Every model built and traced: no shipped graph answers in its place."""
    import gpuadvisor.estimate.graphstore as graphstore

    monkeypatch.setattr(graphstore, "_shipped_match", lambda ref, opts: None)


def _estimate(spec: str, dtype: str = "bf16", input_shape: tuple[int, ...] = ()):
    from gpuadvisor.estimate.graph_estimate import workload_graph

    w = api.workload(spec, mode="inference", batch=2, dtype=dtype, input_shape=input_shape)
    try:
        ans = api.estimate(api.request(w, "H100 SXM"))
    except UserError as e:
        pytest.fail(str(e), pytrace=False)  # the product's line: the model, the op and where
    return ans, workload_graph(w)


def _check(spec: str, ans, graph) -> None:
    assert ans.time.step_s and ans.time.step_s > 0, f"{spec}: no step time"
    assert ans.memory.per_gpu_bytes > 0, f"{spec}: no memory"
    assert graph.params > 0 and graph.ops, f"{spec}: an empty graph"
    # fake tensors: a model sent to real CPU tensors is traced in minutes, not seconds
    assert "fake tensors" in graph.source, f"{spec}: {graph.source}"


@pytest.mark.skipif(not HAVE_TV, reason=NO_TV)
@pytest.mark.parametrize("name", _torchvision_models())
def test_torchvision_model_estimates(name):
    spec = f"torchvision:{name}"
    ans, graph = _estimate(spec, dtype="fp32" if name in FP32_ONLY else "bf16")
    _check(spec, ans, graph)
    if name in FIXED_PASTES:
        said, resize = FIXED_PASTES[name]
        assert any(said in n for n in ans.notes), ans.notes
        # one resize per detection: torchvision's loop kept (its launches are host time)
        assert sum(op.count for op in graph.ops if op.name == resize) >= DETECTIONS


@pytest.mark.skipif(not HAVE_TIMM, reason=NO_TIMM)
@pytest.mark.parametrize("name", TIMM_MODELS)
def test_timm_model_estimates(name):
    spec = f"timm:{name}"
    _check(spec, *_estimate(spec))


@pytest.mark.skipif(not HAVE_TV, reason=NO_TV)
def test_raft_in_bf16_names_the_op():
    w = api.workload("torchvision:raft_small", mode="inference", batch=2, dtype="bf16")
    with pytest.raises(UserError, match="grid_sampler_2d"):
        api.estimate(api.request(w, "H100 SXM"))


@pytest.mark.skipif(not HAVE_TV, reason=NO_TV)
def test_inputs_of_any_rank_and_family_defaults():
    """--input of rank 4 (a video clip) is taken as given; the families' own inputs are said; a detection step
    keeps every candidate box and says so; a quantized model says it is estimated unquantized."""
    _, clip = _estimate("torchvision:r3d_18", input_shape=(3, 8, 112, 112))
    _, default_clip = _estimate("torchvision:r3d_18")
    assert clip.input_desc == "3x8x112x112" and default_clip.input_desc == "3x16x112x112"
    conv = next(op for op in default_clip.ops if op.name == "convolution")
    assert conv.flops > next(op for op in clip.ops if op.name == "convolution").flops  # twice the frames
    _, flow = _estimate("torchvision:raft_small", dtype="fp32")
    assert flow.input_desc == "two frames of 3x368x496"
    ans, det = _estimate("torchvision:fasterrcnn_resnet50_fpn")
    assert det.input_desc.startswith("3x480x640 images (resized by the model to 800 px")
    assert {"roi_align", "nms"} <= {op.name for op in det.ops}  # torchvision's own ops are priced
    assert any("every candidate kept" in n for n in ans.notes)
    ans, _ = _estimate("torchvision:quantized_resnet50")
    assert any("estimated unquantized" in n or "built unquantized" in n for n in ans.notes)


@pytest.mark.skipif(not HAVE_TV, reason=NO_TV)
def test_a_detector_answers_at_the_clis_default_batch():
    """Batch 1, the CLI's default: a detector's per-image loops make its step differ between the trace batches, so
    it is traced at the batch asked instead of scaled (graphstore.graph_at)."""
    from gpuadvisor.estimate.graph_estimate import workload_graph

    w = api.workload("torchvision:maskrcnn_resnet50_fpn", mode="inference", batch=1)
    ans = api.estimate(api.request(w, "H100 SXM"))
    assert ans.time.step_s and ans.time.step_s > 0 and workload_graph(w).batch == 1
