"""tools/timm_out_of_sample.py: 27 timm models no fit reads, on an RTX 4090 (timm's published inference rates), hold
the figures docs/cross-card.md states for them."""

from __future__ import annotations

import math

import pytest

pytest.importorskip("torch", reason="PyTorch is not installed (pip install -e '.[trace-vision]')")
pytest.importorskip("timm", reason="timm is not installed (pip install -e '.[trace-vision]')")


@pytest.mark.slow  # traces 27 models (about 30 s on two cores): CI runs it in its slow pass
def test_models_nobody_fitted_hold_on_the_rtx_4090():
    from tools.timm_out_of_sample import ROWS, ratios

    r = ratios()
    assert set(r) == set(ROWS)
    inside = sum(0.8 <= x <= 1.25 for x in r.values())
    geomean = math.exp(sum(math.log(x) for x in r.values()) / len(r))
    # 22 -> 21 within once image stems were priced against the GEMM rate as the H100 measured them (2026-12-06):
    # ResNet-34 and SE-ResNet-34 0.79x-0.80x, at the band's edge (the RTX 4090's stem kernels were never measured)
    assert inside >= 21 and 0.88 <= geomean <= 0.96, (inside, geomean, r)
