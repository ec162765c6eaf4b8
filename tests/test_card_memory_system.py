"""The op model on cards besides the calibration H100 (issue 34, "physics before factors"): a tile's ramp is memory
time, so in inner-loop steps it scales with the card's FLOPs per byte; a streaming kernel that the H100's memory
latency holds below copy bandwidth keeps its bytes/s per SM. The H100 itself is priced exactly as fitted."""

from __future__ import annotations

import pytest

from gpuadvisor.catalog import find, load_catalog
from gpuadvisor.estimate import HardwareFigures, opcost
from gpuadvisor.estimate import calibration as cal
from gpuadvisor.estimate.graph import GemmShape, NormShape, Op, OpClass, Phase, StreamLayout, StreamShape


def _rates(name: str) -> opcost.Rates:
    return opcost.Rates.of(HardwareFigures.from_card(find(load_catalog(use_env=False), name)[0]))


def test_the_calibration_card_figures_are_the_catalogs():
    h100 = find(load_catalog(use_env=False), "H100 SXM5 80GB")[0]
    assert h100.tensor_tflops("bf16") == opcost.CALIBRATION_CARD_BF16_TFLOPS
    assert h100.memory_bandwidth_gbs == opcost.CALIBRATION_CARD_BANDWIDTH_GBS
    assert h100.compute_units == opcost.CALIBRATION_CARD_SMS


def test_the_h100_is_priced_as_fitted():
    r = _rates("H100 SXM5 80GB")
    assert r.ramp_scale == pytest.approx(1.0) and r.sm_headroom == pytest.approx(1.0)
    for efficiencies in (cal.NORM_BW_EFF, cal.STRIDED_BW_EFF, cal.STREAM_BW_EFF):
        assert r.streamed_efficiency(efficiencies) == pytest.approx(efficiencies)


def test_a_geforce_card_has_less_bandwidth_per_sm_and_fewer_flops_per_byte():
    """RTX 3090: 72 TFLOP/s over 0.8 TB/s (the H100: 742 over 2.9) and 9.8 GB/s per SM (the H100: 21.8)."""
    r = _rates("GeForce RTX 3090")
    assert 0.3 < r.ramp_scale < 0.4
    assert 2.0 < r.sm_headroom < 2.5


def test_batch_norm_reaches_copy_bandwidth_where_each_sm_needs_less():
    """An eval batch norm (0.6 of copy bandwidth on the H100, bound by its 2-byte loads in flight) runs at the
    vectorized copy's STREAM_BW_EFF on a 3090; a vectorized ReLU, already at DRAM speed on the H100, does not
    speed up."""
    r = _rates("GeForce RTX 3090")
    n = 256 * 64 * 56 * 56
    bn = Op("native_batch_norm", OpClass.NORM, Phase.FORWARD, "bf16", 0.0, 2.0 * n, 2.0 * n,
            NormShape(n, StreamLayout.DENSE).to_row())
    relu = Op("relu", OpClass.ELEMENTWISE, Phase.FORWARD, "bf16", 0.0, 2.0 * n, 2.0 * n,
              StreamShape(n, StreamLayout.DENSE).to_row())
    copy_s = 4.0 * n / r.bandwidth
    assert opcost.op_time(bn, r) == pytest.approx(copy_s / cal.STREAM_BW_EFF)
    assert opcost.op_time(relu, r) == pytest.approx(copy_s / cal.STREAM_BW_EFF)
    h100 = _rates("H100 SXM5 80GB")
    assert opcost.op_time(bn, h100) == pytest.approx(4.0 * n / h100.bandwidth / cal.NORM_BW_EFF)


def test_a_short_k_gemm_loses_less_to_its_ramp_on_a_card_with_fewer_flops_per_byte():
    """ViT-B's QKV projection (K = 768): on the H100 its ramp costs 300 / 1068 of the large-GEMM rate; on a 3090,
    whose tile epilogue is a third as many inner steps long, about a tenth."""
    def seconds(r: opcost.Rates) -> float:
        op = Op("addmm", OpClass.GEMM, Phase.FORWARD, "bf16", 2.0 * 50432 * 2304 * 768, 0.0, 0.0,
                GemmShape(1.0, 50432.0, 2304.0, 768.0).to_row())
        return opcost.op_time(op, r) * r.rate("bf16") / op.flops  # in units of the large-GEMM time

    assert seconds(_rates("H100 SXM5 80GB")) == pytest.approx((768 + cal.K_RAMP) / 768, rel=0.05)
    assert seconds(_rates("GeForce RTX 3090")) < 1.0 + 0.5 * cal.K_RAMP / 768


def test_a_probe_measured_stream_class_keeps_its_measurement():
    r = _rates("GeForce RTX 3090")
    measured = opcost.Rates(r.gemm, r.bandwidth, r.sms, r.source, stream_scale={"norm": 1.2},
                            sm_headroom=r.sm_headroom)
    assert measured.streamed_efficiency(cal.NORM_BW_EFF, "norm") == cal.NORM_BW_EFF
    assert measured.streamed_efficiency(cal.NORM_BW_EFF, "reduction") > cal.NORM_BW_EFF
