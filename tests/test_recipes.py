"""CONTRIBUTING.md's recipes, followed step by step: a new card loads and is found by the name a driver reports,
a new rule file evaluates against a real result, and a new probe runs under the runner."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuadvisor import checks, probe_runner
from gpuadvisor.catalog import find, load_catalog, match_device
from gpuadvisor.core.errors import UserError
from gpuadvisor.core.results import ProbeResult, load
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


def test_add_an_engine(monkeypatch):
    """Every profile in engines.json is an EngineName and back; a what-if knob moves the simulation."""
    import json

    from bench.models import hardware
    from gpuadvisor.estimate.serve import profiles
    from gpuadvisor.estimate.serve.api import estimate_load, serve_setup
    from gpuadvisor.estimate.serve.lengths import Lengths
    from gpuadvisor.modelspec import resolve_model

    on_file = set(json.loads(profiles.DATA.read_text())["engines"])
    assert on_file == set(profiles.engine_names())
    model, hw, lengths = resolve_model("llama-3.1-8b"), hardware(), Lengths("fixed", 1000, 200)

    def tpot(**knobs):
        s = serve_setup(model, hw, profiles.serve_engine("vllm", **knobs))
        return estimate_load(s, lengths, users=8, requests=64)["figures"]["tpot_s"]["p50"]

    assert tpot(host_s_per_iter=0.010) > tpot() + 0.005
    with pytest.raises(UserError, match="unknown engine"):
        profiles.serve_engine("tgi")


#: one op of each class, as the tracer records them (shapes: see graph.py's module docstring)
OP_EXAMPLES = {
    "GEMM": ("addmm", 4.8e9, 7.5e6, 6.3e6, (1, 4096, 768, 768)),
    "CONV": ("convolution", 3.8e8, 1.5e5, 1.0e7, (4.0, 4.0, 64.0, 64.0, 320.0, 3.0, 3.0, 1.0, 64.0, 64.0, 0.0, 0.0)),
    "ATTENTION": ("flash_attention", 6.4e9, 1.9e7, 6.3e6, (8, 12, 512, 512, 64, 0)),
    "NORM": ("native_layer_norm", 0.0, 6.3e6, 6.3e6, (3145728, 1, 768)),
    "ELEMENTWISE": ("add", 0.0, 1.3e7, 6.3e6, (3145728, 0)),
    "REDUCTION": ("_log_softmax", 0.0, 1.0e8, 1.0e8, (51471360, 0)),
    "GATHER": ("embedding", 0.0, 7.7e7, 6.3e6, (38603520, 1)),
    "RECURRENT": ("cudnn_rnn_lstm", 2.4e11, 3.8e7, 1.8e8, (32, 256, 512, 1024, 2, 4, 1)),
    "OPTIMIZER": ("_fused_adamw", 0.0, 1.4e9, 1.0e9, (86e6, 0)),
    "COLLECTIVE": ("all_reduce", 0.0, 3.5e8, 3.5e8, ()),
}


def test_add_an_op_class():
    """Every op class is costed (a new class without an example here fails), in finite positive time, and the
    compute classes take longer as their FLOPs grow at the same bytes."""
    from dataclasses import replace

    from bench.models import hardware
    from gpuadvisor.estimate.graph import Op, OpClass, Phase
    from gpuadvisor.estimate.opcost import Rates, op_time

    assert set(OP_EXAMPLES) == {c.name for c in OpClass}
    r = Rates.of(hardware())
    for cls, (name, flops, read, written, shape) in OP_EXAMPLES.items():
        op = Op(name, OpClass[cls], Phase.FORWARD, "bf16", flops, read, written, shape)
        t = op_time(op, r)
        assert 0 < t < 1, (cls, t)
        if cls == "GEMM":
            big = replace(op, flops=flops * 8, shape=(1, 4096 * 8, 768, 768))
            assert op_time(big, r) > 2 * t
