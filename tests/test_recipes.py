"""CONTRIBUTING.md's recipes, followed step by step: a new card loads and is found by the name a driver reports,
a new rule file evaluates against a real result, and a new probe runs under the runner."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuadvisor import checks, probe_runner
from gpuadvisor.catalog import find, load_catalog, match_device
from gpuadvisor.errors import UserError
from gpuadvisor.results import ProbeResult, load
from probes.base import ProbeContext, measurement

ROOT = Path(__file__).resolve().parents[1]
H100 = ROOT / "tools" / "data" / "h100-final-2026-11-23" / "h100-final.json"

CARD = """cards:
  - name: Example X1 48GB
    aliases: [NVIDIA Example X1]
    vendor: nvidia
    family: datacenter
    architecture: Example
    release_year: 2026
    memory_gib: 48
    memory_type: GDDR7
    memory_bandwidth_gbs: 960
    memory_bus_width_bits: 384
    compute_units: 100
    compute_capability: "9.0"
    boost_clock_mhz: 2000
    fp32_tflops: 40.0
    fp64_tflops: null
    tensor_dense_tflops: {fp16: 200, bf16: 200, tf32: 100, fp8: 400, fp4: null, int8: 400}
    tdp_w: 300
    interface: PCIe 5.0 x16
    interconnect_gbs: null
    form_factor: PCIe dual-slot
    launch_price_usd: null
    purchase: null
    source: https://example.com/x1-datasheet
    notes: a card for the recipe test
"""


def test_add_a_card(tmp_path, monkeypatch):
    (tmp_path / "mine.yaml").write_text(CARD)
    monkeypatch.setenv("GPUADVISOR_CATALOG", str(tmp_path))
    cat = load_catalog()
    assert [c.name for c in find(cat, "Example X1")][:1] == ["Example X1 48GB"]
    assert match_device(cat, "NVIDIA Example X1").memory_bandwidth_gbs == 960
    (tmp_path / "mine.yaml").write_text(CARD.replace("memory_gib: 48", "memory_gib: lots"))
    with pytest.raises(UserError, match="memory_gib"):
        load_catalog()


def test_add_a_rule(tmp_path):
    rules = tmp_path / "mine.yaml"
    rules.write_text("name: mine\nrules:\n  - check: memory_gib\n    min: 75\n  - check: figure\n"
                     "    figure: tensor.bf16\n    min: 600\n    unit: TFLOP/s\n")
    report = checks.evaluate(checks.load_rules(rules), load(H100))
    assert report.passed
    rules.write_text(rules.read_text().replace("min: 600", "min: 900"))  # above what this H100 measured
    assert not checks.evaluate(checks.load_rules(rules), load(H100)).passed


def test_add_a_probe():
    def run(ctx: ProbeContext) -> ProbeResult:  # what probes/<name>.py holds
        m = measurement("toy.rate", "Toy rate", 42.0, "GB/s", reference=40.0, reference_label="a vendor copy")
        return ProbeResult(probe="toy", status="ok", duration_s=0.0, measurements=[m])

    res = probe_runner.run_one("toy", run, ProbeContext(), limit_s=5)
    assert res.status == "ok" and res.get("toy.rate").ratio_to_reference == pytest.approx(1.05)

    def broken(ctx: ProbeContext) -> ProbeResult:
        raise RuntimeError("no such device")

    res = probe_runner.run_one("toy", broken, ProbeContext(), limit_s=5)
    assert res.status == "failed" and "no such device" in (res.reason or "")
