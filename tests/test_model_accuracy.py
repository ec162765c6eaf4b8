"""The op-graph estimator against measured H100 runs (tests/data/models-h100.json): a CI gate.

Every case is estimated from the shipped pre-traced graphs (no PyTorch needed). The bounds are what
BENCHMARKS.md and the README claim, per group; a case that raises fails the gate.
"""

from __future__ import annotations

import accuracy_gates as G
import pytest

from bench import REPO
from bench import models as v
from gpuadvisor.estimate import calibration as cal

GATES = G.OP_GRAPH_GATES  # group: (time share, memory share, worst time, worst memory); tests/accuracy_gates.py


@pytest.fixture(scope="module")
def results():
    return v.evaluate()


def test_every_case_is_estimated(results):
    errors = [(r.label, r.error) for r in results if r.error]
    assert not errors, errors
    assert len(results) >= 110 and len({r.case["spec"] for r in results}) >= 25


@pytest.mark.parametrize("group", sorted(GATES))
def test_accuracy_per_group(results, group):
    """The gate of tests/accuracy_gates.py, and validation.evaluate() (what BENCHMARKS.md is built from) agreeing
    with the gate's own evaluation (which builds the graphs once for the calibration sweep)."""
    time_share, memory_share, worst_time, worst_memory = GATES[group]
    s = v.summary(results)[group]
    assert s["time_within"] >= time_share, s
    assert s["memory_within"] >= memory_share, s
    assert s["worst_time"] <= worst_time, s
    assert s["worst_memory"] <= worst_memory, s
    verdict = G.gate(f"op_graph_{group.replace(' ', '_')}").check()
    assert verdict.passed and verdict.detail == f"{group}: {s}", verdict.detail


@pytest.mark.slow  # doc sync: BENCHMARKS.md
def test_benchmarks_section_is_the_current_estimator():
    """BENCHMARKS.md's op-graph section and docs/model-accuracy.md are what tools/bench_models.py gives from the
    stored measurements now (tools/bench_page.py puts them there)."""
    from tools import bench_models

    assert bench_models.section(per_case=False).strip() in (REPO / "BENCHMARKS.md").read_text()
    assert bench_models.cases_table().strip() in (REPO / "docs" / "model-accuracy.md").read_text()


@pytest.mark.slow  # doc sync: the README's figures
def test_readme_claim_is_the_current_estimator(results):
    """The README's sentence on op-graph accuracy states today's figures, not an old round's."""
    s = v.summary(results)
    c, h, a = s["calibration"], s["held out"], s["all"]
    pct = lambda x: f"{x * 100:.0f} %"  # noqa: E731
    claim = (f"Against {a['cases']} measured H100 training steps and forward passes of "
             f"{len({r.case['spec'] for r in results})} of them: step time within 25 % on {pct(c['time_within'])} of "
             f"the calibration cases and {pct(h['time_within'])} of the held-out third ({pct(a['time_within'])} of "
             f"all, none off by more than {a['worst_time']:.2f}x), peak memory within 10 % on "
             f"{pct(c['memory_within'])} and {pct(h['memory_within'])}")
    readme = " ".join((REPO / "README.md").read_text().split())
    assert claim in readme, claim


def test_a_wrong_constant_fails_the_gate(results, monkeypatch):
    """Halving the convolution efficiency must push the CNN cases out of bounds: the gate can fail."""
    monkeypatch.setattr(cal, "CONV_EFF", cal.CONV_EFF / 2)
    monkeypatch.setattr(cal, "HOST_BWD_OPS", cal.HOST_BWD_OPS * 2)
    worse = v.summary(v.evaluate([r.case for r in results]))["calibration"]
    assert worse["time_within"] < GATES["calibration"][0]


def test_held_out_models_are_whole_models():
    """A held-out model has every case held out: calibration never saw any of its shapes."""
    by_spec: dict[str, set[bool]] = {}
    for c in v.load():
        if not c.get("trainable"):
            by_spec.setdefault(c["spec"], set()).add(bool(c.get("held_out")))
    assert all(len(flags) == 1 for flags in by_spec.values())
    assert sum(flags == {True} for flags in by_spec.values()) >= 8


def test_published_resnet50_throughput():
    """NVIDIA's published ResNet-50 numbers on A100, V100 and T4 (tests/data/published-resnet50.json, never
    used for calibration). Today every estimate is 0.61-0.80x of them (BENCHMARKS.md): the gate holds that
    level; the target is 0.8-1.25x."""
    verdict = G.published_resnet50()
    assert verdict.passed, verdict.detail
