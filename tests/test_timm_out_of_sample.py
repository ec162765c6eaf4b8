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
    assert inside >= 22 and 0.88 <= geomean <= 0.96, (inside, geomean, r)
