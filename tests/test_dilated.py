"""What docs/nchw.md says of dilated convolutions on an H100 (bench/dilated.py): the measured facts it states."""

from __future__ import annotations

from bench.dilated import slowdowns


def test_small_dilations_cost_nothing_and_deeplabs_aspp_about_half_again():
    by_call = {(label, d): (f, t) for label, d, f, t in slowdowns()}
    for (label, d), (f, t) in by_call.items():
        if d <= 4 or (label.startswith("tcn") and d <= 8):
            assert 0.9 <= f <= 1.1 and 0.9 <= t <= 1.1, (label, d, f, t)
        elif label.startswith("deeplabv3 aspp"):
            assert 1.4 <= f <= 1.6 and 1.4 <= t <= 1.6, (label, d, f, t)
    assert by_call[("tcn 1-D k3 512 @ 4096", 32)][1] > 4  # its weight gradient off tensor cores
