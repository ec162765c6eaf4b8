"""CONTRIBUTING.md's recipes, followed step by step: a new card loads and is found by the name a driver reports,
a new rule file evaluates against a real result, a new probe runs under the runner, and a new op class's formula
prices its ops once registered."""

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
    """Every profile in engines.json is an ServeEngineName and back; a what-if knob moves the simulation."""
    import json

    from bench.models import hardware
    from gpuadvisor.estimate.serve import profiles
    from gpuadvisor.estimate.serve.api import estimate_load, serve_setup
    from gpuadvisor.estimate.serve.lengths import Lengths
    from gpuadvisor.modelspec import resolve_model

    on_file = set(json.loads(profiles.DATA.read_text())["engines"])
    assert on_file == set(profiles.engine_names())
    model, gpu_figures, lengths = resolve_model("llama-3.1-8b"), hardware(), Lengths("fixed", 1000, 200)

    def tpot(**knobs):
        s = serve_setup(model, gpu_figures, profiles.serve_engine("vllm", **knobs))
        return estimate_load(s, lengths, users=8, requests=64)["figures"]["tpot_s"]["p50"]

    # vLLM's async scheduling runs the host's 10 ms beside a ~7 ms GPU step: the host sets the step
    assert tpot(host_s_per_iter=0.010) > 0.0099 > tpot() + 0.002
    with pytest.raises(UserError, match="unknown engine"):
        profiles.serve_engine("tgi")


def test_add_a_framework_profile(tmp_path, monkeypatch, capsys):
    """A profile added to a copy of framework-profiles.json is a --framework choice, and its efficiency moves the
    step; an efficiency that names no calibration constant is refused."""
    import json

    from gpuadvisor.cli import main
    from gpuadvisor.estimate.parallel import profiles

    data = json.loads(profiles.PROFILES_PATH.read_text())
    data["profiles"]["halfspeed"] = {**data["profiles"]["fsdp2"], "description": "FSDP2 at half its efficiency",
                                     "compute_eff": profiles.framework("fsdp2").compute_eff / 2}
    path = tmp_path / "framework-profiles.json"
    path.write_text(json.dumps(data))
    monkeypatch.setattr(profiles, "PROFILES_PATH", path)
    profiles._load.cache_clear()
    try:
        assert "halfspeed" in profiles.framework_names()

        def step(name):
            argv = ["estimate", "llama-3.2-1b", "--mode", "training", "--gpus", "8", "--batch", "64",
                    "--framework", name, "--json"]
            assert main(argv) == 0
            return json.loads(capsys.readouterr().out)["time"]["step_s"]

        assert step("halfspeed") > 1.3 * step("fsdp2")
        data["profiles"]["broken"] = {**data["profiles"]["fsdp2"], "compute_eff": "NO_SUCH_CONSTANT"}
        path.write_text(json.dumps(data))
        profiles._load.cache_clear()
        with pytest.raises(KeyError, match="NO_SUCH_CONSTANT"):
            _ = profiles.framework("broken").compute_eff
    finally:
        profiles._load.cache_clear()


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


def _recipe(title: str) -> str:
    text = (ROOT / "CONTRIBUTING.md").read_text()
    start = text.index(f"## {title}")
    return text[start:text.index("\n## ", start + 1)]


def test_the_op_class_recipe_names_what_exists():
    """Every symbol the recipe tells a contributor to use is where it says."""
    from gpuadvisor.estimate import calibration as cal
    from gpuadvisor.estimate import graph, opcost
    from gpuadvisor.estimate.trace import classify

    recipe = _recipe("Add an op class")
    where = {"PRICES": opcost, "@prices": opcost, "OpClass": graph, "SHAPE_KINDS": graph,
             "OpShape": graph, "ConvShape": graph, "graph.FORMAT": graph, "classify()": classify,
             "cal.OP_KERNEL_FLOOR_S": cal}
    for name, module in where.items():
        assert f"`{name}" in recipe, name
        assert hasattr(module, name.lstrip("@").rsplit(".", 1)[-1].removesuffix("()")), name
    for member in ("FIELDS", "from_row", "to_row"):
        assert f"`{member}`" in recipe and all(hasattr(kind, member) for kind in graph.SHAPE_KINDS.values()), member
    for field in ("batch", "in_channels", "kernel_height", "groups", "layout"):
        assert f"`{field}`" in recipe and field in graph.ConvShape.__dataclass_fields__, field
    for path in ("gpuadvisor/estimate/calibration/opgraph.py", "gpuadvisor/estimate/frontends/prims.py",
                 "gpuadvisor/estimate/trace/classify.py", "tests/test_op_pricer.py"):
        assert path in recipe and (ROOT / path).is_file(), path


def test_the_op_class_recipe_on_a_toy_formula():
    """Steps 2-4 on a registry of its own: a class without a formula is refused with the decorator to write, and once
    registered its formula prices the class's ops from their named shape and reads its constant at call time."""
    from dataclasses import FrozenInstanceError

    from bench.models import hardware
    from gpuadvisor.estimate import calibration as cal
    from gpuadvisor.estimate.graph import SHAPE_KINDS, Op, OpClass, Phase, StreamLayout, StreamShape
    from gpuadvisor.estimate.opcost import PRICES, PriceRegistry, Rates

    new = OpClass.COLLECTIVE  # stands in for the new member of OpClass
    registry = PriceRegistry()
    for cls in PRICES.classes:
        if cls is not new:
            registry.register(cls)(PRICES.formula(cls))
    rates = Rates.of(hardware())
    shape = StreamShape(5e8, StreamLayout.DENSE)  # step 2: its named shape, stored as a row
    assert SHAPE_KINDS[new] is StreamShape and StreamShape.from_row(shape.to_row()) == shape
    with pytest.raises(FrozenInstanceError):
        shape.elements = 1.0  # type: ignore[misc]
    op = Op("all_reduce", new, Phase.BACKWARD, "bf16", 0.0, 1e9, 1e9, shape.to_row())
    with pytest.raises(NotImplementedError, match=r"@prices\(OpClass.COLLECTIVE\)"):
        registry.price(op, rates)

    @registry.register(new)  # step 3
    def toy_time(op: Op, shape: StreamShape | None, r: Rates, training: bool) -> float:
        """Two passes over the bytes at STREAM_BW_EFF (step 4: the constant, read at call time)."""
        elements = shape.elements if shape is not None else 0.0
        return max(2 * elements * 2.0 / (r.bandwidth * cal.STREAM_BW_EFF), cal.OP_KERNEL_FLOOR_S)

    t = registry.price(op, rates)
    assert t == pytest.approx(2 * 5e8 * 2.0 / (rates.bandwidth * cal.STREAM_BW_EFF))
    with cal.override(STREAM_BW_EFF=cal.STREAM_BW_EFF / 2):
        assert registry.price(op, rates) == pytest.approx(2 * t)
    with pytest.raises(ValueError, match="already has a pricing formula"):
        registry.register(new)(toy_time)
