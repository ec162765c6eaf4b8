"""The analytic front-end (gpuadvisor.estimate.analytic) against the tracer on the same Hugging Face decoder
configs: both graphs costed by the one op cost model on the H100 catalog card agree within 10 % in step time
and in peak memory. The traced graphs are stored (tests/data/analytic-traced.json.gz, built by
tools/trace_decoders.py), so this runs without PyTorch; one is re-traced live where PyTorch is installed."""

from __future__ import annotations

import gzip
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest

from bench.models import hardware
from gpuadvisor.core.errors import UserError
from gpuadvisor.estimate.analytic import transformer_graph
from gpuadvisor.estimate.graph import FORMAT, GraphMode, OpClass, OpGraph, Phase
from gpuadvisor.estimate.opcost import step_time
from gpuadvisor.modelspec import ModelSpec, spec_from_config_file
from tools.trace_decoders import CASES, OUT, case_key, trace_case

ROOT = Path(__file__).resolve().parents[1]
BOUND = 0.10


@lru_cache(maxsize=1)
def stored() -> dict[str, Any]:
    data = json.loads(gzip.decompress(OUT.read_bytes()))
    assert data["format"] == FORMAT, "re-run tools/trace_decoders.py: the graph format changed"
    return data


def traced(case: tuple[Any, ...]) -> OpGraph:
    return OpGraph.from_dict(stored()["graphs"][case_key(*case)])


def spec_of(config: str) -> ModelSpec:
    path = ROOT / config if config.endswith(".json") else ROOT / "gpuadvisor" / "data" / "configs" / f"{config}.json"
    return spec_from_config_file(path)


def analytic(case: tuple[Any, ...]) -> OpGraph:
    config, mode, batch, seq, opts = case
    return transformer_graph(spec_of(config), mode=GraphMode(mode), batch=batch, seq=seq,
                             mixed_precision=opts.get("mixed_precision", True), freeze=tuple(opts.get("freeze", ())),
                             checkpointing=opts.get("checkpointing", False))


IDS = [case_key(*c).replace("tests/data/configs/", "") for c in CASES]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_analytic_and_traced_agree_in_time_and_memory(case):
    t, a = traced(case), analytic(case)
    gpu_figures = hardware()
    st, sa = step_time(t, gpu_figures), step_time(a, gpu_figures)
    assert sa.step_s == pytest.approx(st.step_s, rel=BOUND), (st.by_class, sa.by_class)
    assert sa.device_s == pytest.approx(st.device_s, rel=BOUND)
    assert a.memory.peak_bytes == pytest.approx(t.memory.peak_bytes, rel=BOUND)
    assert a.memory.phase == t.memory.phase
    assert {m.phase: pytest.approx(m.peak_bytes, rel=BOUND) for m in t.phase_peaks} == {
        m.phase: m.peak_bytes for m in a.phase_peaks}  # each phase's peak, as BatchGraph scales them
    assert (a.params, a.trainable_params) == (t.params, t.trainable_params)
    if t.mode is GraphMode.TRAINING:  # the forward kernels autograd does not record (a frozen base: fewer host us)
        assert a.untracked_ops == t.untracked_ops


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_analytic_graph_has_every_class_the_tracer_records(case):
    """Dropping a class (no attention op, no optimizer step, no weight gradients) fails here even where the
    time would still agree."""
    t, a = traced(case), analytic(case)

    def classes(g: OpGraph) -> dict[tuple[str, str], float]:
        return {(ph.value, c.value): g.total("flops", phase=ph, cls=c) + g.total("read", phase=ph, cls=c)
                for ph in Phase for c in OpClass if any(o.phase is ph and o.cls is c for o in g.ops)}
    tc, ac = classes(t), classes(a)
    assert set(ac) == set(tc)
    for k, v in tc.items():
        assert ac[k] == pytest.approx(v, rel=0.02), k


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_analytic_ops_have_the_traced_shapes(case):
    """Every op, by phase, name, class, dtype and shape (streaming ops' layout bits included: a broadcast, a
    transposed input, mixed dtypes cost more), is launched as often in both graphs."""
    from collections import Counter

    def ops(g: OpGraph) -> Counter[tuple[Any, ...]]:
        n: Counter[tuple[Any, ...]] = Counter()
        for o in g.ops:
            n[(o.phase.value, o.name, o.cls.value, o.dtype, tuple(float(x) for x in o.shape))] += o.count
        return n
    t, a = ops(traced(case)), ops(analytic(case))
    assert {k: (t[k], a[k]) for k in t.keys() | a.keys() if t[k] != a[k]} == {}


def test_frozen_parameters_get_no_weight_gradients():
    spec = spec_of("qwen2.5-0.5b")
    full = transformer_graph(spec, mode=GraphMode.TRAINING, batch=2, seq=128)
    part = transformer_graph(spec, mode=GraphMode.TRAINING, batch=2, seq=128, freeze=("model.layers.[0-9].mlp.*",))
    n = sum(o.count for o in full.ops if o.cls is OpClass.GEMM and o.phase is Phase.BACKWARD)
    m = sum(o.count for o in part.ops if o.cls is OpClass.GEMM and o.phase is Phase.BACKWARD)
    assert n - m == 10 * 3  # gate, up and down of ten layers lose their weight-gradient GEMMs
    assert part.trainable_params == full.trainable_params - 10 * 3 * spec.hidden_size * spec.intermediate_size
    assert part.memory.peak_bytes < full.memory.peak_bytes


def test_checkpointing_recomputes_each_layer_up_to_its_last_saved_tensor():
    """Each layer's forward runs again in the backward, stopping (PyTorch's early stop) before the down projection,
    whose inputs are the last tensors the layer saves; the forward keeps only the layers' inputs (and autocast's
    weight copies, to the end of the forward)."""
    spec = spec_of("llama-3.2-1b")
    plain = transformer_graph(spec, mode=GraphMode.TRAINING, batch=2, seq=256)
    ckpt = transformer_graph(spec, mode=GraphMode.TRAINING, batch=2, seq=256, checkpointing=True)

    def count(g: OpGraph, cls: OpClass, phase: Phase) -> int:
        return sum(o.count for o in g.ops if o.cls is cls and o.phase is phase)
    assert count(ckpt, OpClass.GEMM, Phase.BACKWARD) - count(plain, OpClass.GEMM, Phase.BACKWARD) == 16 * 6
    assert count(ckpt, OpClass.ATTENTION, Phase.FORWARD) == 2 * 16  # the recomputed forward kernels too
    fwd = {m.phase: m for m in ckpt.phase_peaks}["forward"]
    plain_fwd = {m.phase: m for m in plain.phase_peaks}["forward"]
    # at the forward's end: the logits and autocast's bf16 copies of the weights (2.5 GB) stay, the layers' go
    assert fwd.items["activations"] < plain_fwd.items["activations"] - 16 * 2 * 256 * 2048 * 2 * 10
    inference = transformer_graph(spec, mode=GraphMode.INFERENCE, batch=2, seq=256, checkpointing=True)
    assert inference == transformer_graph(spec, mode=GraphMode.INFERENCE, batch=2, seq=256)  # training only


def test_inference_is_one_forward_with_attention_and_no_backward():
    g = transformer_graph(spec_of("llama-3.2-1b"), mode=GraphMode.INFERENCE, batch=1, seq=64)
    assert {o.phase for o in g.ops} == {Phase.FORWARD}
    att = [o for o in g.ops if o.cls is OpClass.ATTENTION]
    assert att and att[0].shape == (1.0, 32.0, 64.0, 64.0, 64.0, 1.0) and att[0].count == 16


@pytest.mark.parametrize(("spec", "words"), [
    ("gpt2", "norm layernorm"), ("mixtral-8x7b", "mixture of experts"), ("bert-base-uncased", "kind encoder"),
])
def test_unsupported_architectures_are_one_line(spec, words):
    from gpuadvisor.modelspec import resolve_model

    try:
        m = resolve_model(spec)
    except UserError:
        pytest.skip(f"no preset {spec}")
    with pytest.raises(UserError) as e:
        transformer_graph(m, mode=GraphMode.INFERENCE, batch=1, seq=16)
    assert "analytic op graph covers" in str(e.value) and "\n" not in str(e.value)


def test_a_glob_matching_no_parameter_is_refused():
    with pytest.raises(UserError, match="matches no parameter"):
        transformer_graph(spec_of("llama-3.2-1b"), mode=GraphMode.TRAINING, batch=1, seq=16, freeze=("encoder.*",))


#: the smallest case (Qwen2.5-0.5B inference) and the first checkpointed one
LIVE = [CASES[4], next(c for c in CASES if c[4].get("checkpointing"))]


def _canonical(op: list) -> str:
    """An op row as text, its counts as floats (a stored 0.0 and a live 0 are the same count)."""
    def number(x):
        if isinstance(x, list):
            return [number(v) for v in x]
        return float(x) if isinstance(x, int) and not isinstance(x, bool) else x
    return json.dumps(number(op))


@pytest.mark.parametrize("case", LIVE, ids=[case_key(*c) for c in LIVE])
def test_stored_traces_match_a_live_trace(case):
    """The stored traced graphs are what the tracer gives today (PyTorch and transformers needed): the same ops, in
    any order (transformers releases build a causal mask's few comparisons in different orders), and the same peak."""
    pytest.importorskip("torch", reason="tracing needs PyTorch (the [trace] extra)")
    pytest.importorskip("transformers", reason="tracing a Hugging Face config needs transformers")
    live = trace_case(*case)
    t = traced(case)
    assert sorted(map(_canonical, live.to_dict()["ops"])) == sorted(map(_canonical, t.to_dict()["ops"]))
    assert live.memory.peak_bytes == t.memory.peak_bytes and live.host_ops == t.host_ops
