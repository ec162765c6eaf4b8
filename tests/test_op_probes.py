"""The op cost model's probes without a GPU: which run in --quick and --full, what --quick imports, the
single-op dispatch figures from the host cache, and their figures (tests/data/fake-op-probes.json, an H100
run's conv and elementwise results) into HardwareFigures and the op cost model's rates."""

from __future__ import annotations

import contextlib
import types
from dataclasses import replace
from pathlib import Path

import pytest

from gpuadvisor import devices
from gpuadvisor.core.results import ProbeResult, load
from gpuadvisor.estimate import HardwareFigures, apply_measured, measured_figures, opcost
from gpuadvisor.estimate.graph import Op, OpClass, Phase
from gpuadvisor.probe_runner import FULL_ONLY_NOTE, RunOptions, needs_torch, run_probes
from probes import ALL_PROBES, FULL_ONLY, dispatch, hostcache, tensor
from probes.base import ProbeContext

DATA = Path(__file__).parent / "data" / "fake-op-probes.json"
QUICK = tuple(p for p in ALL_PROBES if p not in FULL_ONLY)  # what --quick selects


def fake_discovery(gpus: int = 1) -> devices.Discovery:
    runtime = types.SimpleNamespace(runtimeGetVersion=lambda: 13000, driverGetVersion=lambda: 13000)
    cp = types.SimpleNamespace(cuda=types.SimpleNamespace(Device=lambda i: contextlib.nullcontext(), runtime=runtime))
    return devices.Discovery(devices=[devices.DeviceInfo(index=i, name="NVIDIA H100 80GB HBM3") for i in range(gpus)],
                             cupy=cp)


def fakes(calls: list[str]) -> dict:
    def fn(name: str):
        def run(ctx: ProbeContext) -> ProbeResult:
            calls.append(name)
            return ProbeResult(probe=name, status="ok", data={"xid_events": [], "problems": []})
        return run
    return {name: fn(name) for name in ALL_PROBES}


# --------------------------------------------------------------------------- which probes run, and PyTorch


def test_quick_names_the_full_only_probes_without_running_them(monkeypatch):
    preloads: list[int] = []
    monkeypatch.setattr("probes.base.preload_torch", lambda: preloads.append(1))
    monkeypatch.setattr(dispatch, "op_figures_cached", lambda ctx: True)
    calls: list[str] = []
    res = run_probes(RunOptions(mode="quick"), discovery=fake_discovery(), probe_fns=fakes(calls))
    assert not set(FULL_ONLY) & set(calls) and "tensor" in calls
    for name in FULL_ONLY:
        p = res.devices[0].probe(name)
        assert p.status == "skipped" and p.reason == FULL_ONLY_NOTE.format(name=name)
        assert "--full" in p.reason and f"--only {name}" in p.reason
    assert preloads == []  # --quick on one GPU with the single-op figures cached: no PyTorch at all

    calls.clear()
    res = run_probes(RunOptions(mode="quick", only=["conv"]), discovery=fake_discovery(), probe_fns=fakes(calls))
    assert calls == ["conv"] and preloads == [1]  # named: it runs, and PyTorch loads ahead of it
    calls.clear()
    res = run_probes(RunOptions(mode="full"), discovery=fake_discovery(), probe_fns=fakes(calls))
    assert set(FULL_ONLY) <= set(calls) and all(res.devices[0].probe(n).status == "ok" for n in FULL_ONLY)


def test_quick_loads_pytorch_ahead_only_where_the_dispatch_figures_are_not_cached(monkeypatch):
    preloads: list[int] = []
    monkeypatch.setattr("probes.base.preload_torch", lambda: preloads.append(1))
    monkeypatch.setattr(dispatch, "op_figures_cached", lambda ctx: False)
    fns = fakes([])
    del fns["dispatch"]  # the real probe decides; the runner only looks ahead
    monkeypatch.setattr(dispatch, "run", lambda ctx: ProbeResult(probe="dispatch", status="ok"))
    run_probes(RunOptions(mode="quick", only=["dispatch"]), discovery=fake_discovery(), probe_fns=fns)
    assert preloads == [1]


@pytest.mark.parametrize(("mode", "selected", "gpus", "want"), [
    ("quick", QUICK, 1, False),  # tensor and transfer take their PyTorch references in --full only
    ("quick", QUICK, 2, True),  # the interconnect probe's collectives
    ("quick", ("conv",), 1, True),
    ("full", ALL_PROBES, 1, True),
    ("full", ("memory_bandwidth", "flops", "host"), 1, False),
])
def test_needs_torch(mode, selected, gpus, want):
    assert needs_torch(mode, selected, gpus) is want


def test_tensor_sizes_per_mode_and_dtype():
    assert all(tensor.sizes(dt, quick=True) == [8192] for dt in tensor.DTYPES)
    assert {dt: tensor.sizes(dt, quick=False) for dt in tensor.DTYPES} == {
        "fp16": [8192], "bf16": [8192], "tf32": [8192], "fp8": [8192, 16384], "int8": [8192, 16384]}


# --------------------------------------------------------------------------- dispatch: single-op figures cached


class NoTorch(Exception):
    pass


@pytest.fixture
def dispatch_fakes(monkeypatch):
    """PyTorch 2.11.0 installed (its metadata), the live measurement counted, a PyTorch import an error."""
    measured: list[str] = []
    monkeypatch.setattr(dispatch, "dist_version", lambda dist: {"torch": "2.11.0"}.get(dist))

    def measure(torch, **kw):
        measured.append("op")
        return {"op_s": 1e-5, "sync_s": 2e-5, "python_iter_s": 2e-8, "op_spread": 0.1}

    monkeypatch.setattr(dispatch, "measure", measure)
    monkeypatch.setattr(dispatch, "host_figures", lambda ctx, torch: ({}, [], False))
    state = {"torch": types.SimpleNamespace(__version__="2.11.0")}

    def torch(self):
        if state["torch"] is None:
            raise NoTorch
        return state["torch"]

    monkeypatch.setattr(ProbeContext, "torch", torch)
    return measured, state


def ctx(mode: str) -> ProbeContext:
    runtime = types.SimpleNamespace(runtimeGetVersion=lambda: 13000, driverGetVersion=lambda: 13000)
    return ProbeContext(mode=mode, cp=types.SimpleNamespace(cuda=types.SimpleNamespace(runtime=runtime)),
                        props={"name": "NVIDIA H100 80GB HBM3"})


def probe(mode: str) -> ProbeResult:
    return dispatch.run(ctx(mode))


def test_quick_reads_the_single_op_figures_from_the_cache_without_pytorch(dispatch_fakes):
    measured, state = dispatch_fakes
    first = probe("quick")  # a new host: measured (PyTorch imported) and cached
    assert measured == ["op"] and first.data["op_figures"] == {"source": "measured"}
    assert first.get("dispatch.op").value == pytest.approx(10.0) and not first.get("dispatch.op").details.get("cached")
    state["torch"] = None  # from now on importing PyTorch fails the test
    again = probe("quick")
    assert measured == ["op"] and again.data["op_figures"]["source"] == "cache"
    m = again.get("dispatch.op")
    assert m.value == pytest.approx(10.0) and m.details["cached"] and "(cached " in m.label
    assert again.get("dispatch.sync").value == pytest.approx(20.0)
    state["torch"] = types.SimpleNamespace(__version__="2.11.0")
    probe("full")  # --full measures them every run, and refreshes the entry
    assert measured == ["op", "op"]
    assert dispatch.op_figures_cached(ctx("quick"))


def test_a_host_without_pytorch_metadata_never_uses_the_op_cache(dispatch_fakes, monkeypatch):
    measured, _ = dispatch_fakes
    monkeypatch.setattr(dispatch, "dist_version", lambda dist: None)
    probe("quick")
    probe("quick")
    assert measured == ["op", "op"]
    assert not list(hostcache.entry_path(dispatch.OP_CACHE, {}).parent.glob(f"{dispatch.OP_CACHE}-*.json"))


# --------------------------------------------------------------------------- figures into the cost model


@pytest.fixture(scope="module")
def device():
    return load(DATA).devices[0]


def test_probe_figures_parse_and_map(device):
    f = measured_figures(device)
    conv = device.measurement("conv.bf16_nhwc")
    assert conv.unit == "TFLOP/s" and conv.reference_label.startswith("torch.matmul")
    assert f["conv_eff.bf16_nhwc"] == pytest.approx(conv.value / conv.reference)
    assert 0.7 < f["conv_eff.bf16_nhwc"] < 1.0 and f["conv_eff.bf16_nchw"] < f["conv_eff.bf16_nhwc"]
    assert f["depthwise_bw_eff"] == pytest.approx(device.measurement("conv.depthwise_bf16_nhwc").ratio_to_reference)
    ln, bn = (device.measurement(f"elementwise.{k}").ratio_to_reference for k in ("layer_norm", "batch_norm"))
    assert f["stream_eff.norm"] == pytest.approx((ln + bn) / 2)
    assert f["stream_eff.elementwise"] == pytest.approx(device.measurement("elementwise.add").ratio_to_reference)
    assert f["stream_eff.reduction"] == pytest.approx(device.measurement("elementwise.softmax").ratio_to_reference)


def test_hardware_figures_carry_them_and_the_rates_use_them(device):
    from gpuadvisor.catalog import load_catalog
    from gpuadvisor.estimate.hardware import H100_OP_FIGURES

    card = HardwareFigures.from_card(load_catalog().get("H100 SXM5 80GB"))
    assert card.conv_eff == {} and card.depthwise_bw_eff is None and card.stream_eff == {}
    assert card.op_scale("conv_eff.bf16_nhwc") is None
    gpu_figures = apply_measured(card, measured_figures(device))
    assert set(gpu_figures.conv_eff) == {"bf16_nhwc", "bf16_nchw", "fp16_nhwc", "fp16_nchw"}
    assert set(gpu_figures.stream_eff) == {"elementwise", "norm", "reduction"} and gpu_figures.depthwise_bw_eff
    assert "conv_eff.bf16_nhwc" in gpu_figures.measured_keys
    r, base = opcost.Rates.of(gpu_figures), opcost.Rates.of(replace(gpu_figures, conv_eff={}, depthwise_bw_eff=None,
                                                                    stream_eff={}))
    assert base.conv_scale == {} and base.stream_scale == {} and base.depthwise_scale == 1.0
    # unmeasured streams carry the H100's bytes/s per SM to the probe's copy bandwidth (Rates.sm_headroom); a
    # measured class does not: compare with the fitted efficiencies as they stand
    base = replace(base, sm_headroom=1.0)
    # factors on the fitted efficiencies: the measured figure over the calibration H100's
    scale = gpu_figures.conv_eff["bf16_nhwc"] / H100_OP_FIGURES["conv_eff.bf16_nhwc"]
    assert r.conv_scale == {"bf16": pytest.approx(scale), "fp16": pytest.approx(
        gpu_figures.conv_eff["fp16_nhwc"] / H100_OP_FIGURES["conv_eff.fp16_nhwc"])}
    assert r.depthwise_scale == pytest.approx(gpu_figures.depthwise_bw_eff / 0.214)
    assert r.stream_scale["norm"] == pytest.approx(gpu_figures.stream_eff["norm"] / 0.476)

    norm = Op(name="layer_norm", cls=OpClass.NORM, phase=Phase.FORWARD, dtype="bf16", flops=0.0, read=2e9,
              written=2e9)
    assert opcost.op_time(norm, base) / opcost.op_time(norm, r) == pytest.approx(r.stream_scale["norm"])
    add = Op(name="add", cls=OpClass.ELEMENTWISE, phase=Phase.FORWARD, dtype="bf16", flops=0.0, read=2e9, written=1e9)
    assert opcost.op_time(add, base) / opcost.op_time(add, r) == pytest.approx(r.stream_scale["elementwise"])
    # a ResNet stage-3 3x3 convolution, NHWC: compute-bound, its time scales with 1 / efficiency
    conv = Op(name="conv", cls=OpClass.CONV, phase=Phase.FORWARD, dtype="bf16", flops=2.0 * 256 * 196 * 256 * 2304,
              read=1e6, written=1e6, shape=(256, 256, 14, 14, 256, 3, 3, 1, 14, 14, 1.0, 0.0))
    assert opcost.op_time(conv, base) / opcost.op_time(conv, r) == pytest.approx(scale, rel=0.05)

    # on the calibration H100 itself the measured figures leave every op's time as validated
    h100 = apply_measured(card, H100_OP_FIGURES)
    assert opcost.Rates.of(h100).conv_scale["bf16"] == pytest.approx(1.0)
    for op in (norm, add, conv):
        assert opcost.op_time(op, opcost.Rates.of(h100)) == pytest.approx(opcost.op_time(op, opcost.Rates.of(card)))
