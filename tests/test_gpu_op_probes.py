"""The op cost model's probes on a real GPU (skipped without CuPy and a GPU; they also need PyTorch with
CUDA): cuDNN convolutions per dtype and layout against a same-run GEMM, and the streaming ops against a
same-run copy. The figures must be physically possible: a dense convolution is an implicit GEMM and
cannot beat a large cuBLAS GEMM by much, a streaming op moves its bytes no faster than a copy."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def ctx():
    from gpuadvisor import devices
    from probes.base import ProbeContext
    from probes.properties import collect
    from probes.timing import Deadline

    d = devices.discover()
    assert d.usable, d.message
    with d.cupy.cuda.Device(0):
        props = collect(d.cupy, d.nvml, devices.nvml_handle(d.nvml, 0), 0)
    c = ProbeContext(mode="full", deadline=Deadline(120), device_index=0, cp=d.cupy, props=props)
    if c.torch() is None:
        pytest.skip(f"needs PyTorch with CUDA: {c.torch_reason}")
    return c


def test_conv_figures_are_physical(ctx):
    from probes import conv

    res = conv.run(ctx)
    assert res.status == "ok", res.reason
    dense = [f"conv.{dt}_{lay}" for dt in conv.DTYPES for lay in conv.LAYOUTS]
    assert {m.key for m in res.measurements} == set(dense) | {"conv.depthwise_bf16_nhwc", "conv.depthwise_bf16_nchw"}
    for key in dense:
        m = res.get(key)
        assert m.value > 0 and m.reference > 0, key
        assert 0.05 < m.ratio_to_reference < 1.2, (key, m.value, m.reference)
    for lay in conv.LAYOUTS:
        m = res.get(f"conv.depthwise_bf16_{lay}")
        assert 0 < m.ratio_to_reference < 1.3, (lay, m.value, m.reference)
    assert all(e <= conv.TOLERANCE for e in res.data["rel_errors"].values())
    assert len(res.data["rows"]) == len(conv.SHAPES) * len(conv.DTYPES) * len(conv.LAYOUTS)


def test_streaming_figures_are_physical(ctx):
    from probes import elementwise

    res = elementwise.run(ctx)
    assert res.status == "ok", res.reason
    copy = res.get("elementwise.copy").value
    props = ctx.props
    theo = props.get("memory_bandwidth_theoretical_gbs")
    if theo:
        assert 0.3 * theo < copy < 1.05 * theo  # a copy of 256 MiB tensors runs from DRAM, near its peak
    for key, (_, cls) in elementwise.OPS.items():
        m = res.get(f"elementwise.{key}")
        assert m.reference == copy and m.details["op_class"] == cls
        assert 0.05 < m.ratio_to_reference < 1.15, (key, m.value, copy)
    assert res.get("elementwise.add").ratio_to_reference > 0.5  # a plain add streams near copy speed
    assert all(r["rel_error"] <= elementwise.TOLERANCE for r in res.data["ops"].values())
