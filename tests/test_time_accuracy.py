"""The calibrated transformer path and the memory model against H100 and H200 measurements: a CI gate.

README.md's "Estimates checked against real runs" quotes these figures; tests/accuracy_gates.py holds each at the
bound quoted (decode with CUDA graphs, training steps, prefill, scoring, eager decode with the dispatch probe, memory
on one H100 and per GPU on two H200s), and this file asserts the gates and that the README says what they hold.
"""

from __future__ import annotations

import accuracy_gates as G
import pytest

README_GATES = ("memory_h100", "decode_graphs", "training_steps", "prefill", "scoring",
                "eager_decode_generate_probe", "memory_multigpu")


@pytest.mark.parametrize("name", README_GATES)
def test_readme_figure_holds(name):
    verdict = G.gate(name).check()
    assert verdict.passed, verdict.detail


#: the gates that hold each stored set's mean |error| at today's figure (BENCHMARKS.md's LLM time rows, the op-graph
#: step times, the published training runs): each binds calibration constants (tests/test_calibration_sweep.py)
MEAN_ERROR_GATES = tuple(g.name for g in G.GATES if g.name.startswith(("time_", "op_graph_step_",
                                                                       "published_training_mean_")))


@pytest.mark.parametrize("name", MEAN_ERROR_GATES)
def test_stored_set_holds_todays_mean_error(name):
    verdict = G.gate(name).check()
    assert verdict.passed, verdict.detail


def test_every_scored_time_row_has_a_gate():
    """Every scored group of tools/validate_time.py (BENCHMARKS.md's rows; the repeated-length eager runs are listed,
    not scored) has its gate, so a new validation set cannot slip in ungated."""
    decode, phases = G.time_rows()
    groups = {(r["engine"], r["params_b"] < 1) for r in decode} | {(r["phase"], r["params_b"] < 1) for r in phases}
    scored = {g for g in groups if "not scored" not in g[0]}
    gated = {(group, small) for _, _, group, small, *_ in G.TIME_SETS}
    assert scored == gated, scored ^ gated
    assert len(MEAN_ERROR_GATES) == len(G.TIME_SETS) + len(G.OP_GRAPH_STEP_ERROR) + len(G.TRAINING_MEAN_LOG)


def _count(group_key: str, group: str) -> str:
    rows = G._rows(group_key, group)
    return f"{sum(abs(r['err']) <= 25 for r in rows)} of {len(rows)}"


def test_readme_states_todays_time_figures():
    """The README's counts are today's: a change that moves one makes the sentence (and its gate) change too."""
    decode = G._rows("engine", "graphs")
    worst_graphs = max(abs(r["err"]) for r in decode)
    claim = (f"decode with a CUDA-graph engine within {worst_graphs:.0f}%; training steps "
             f"{_count('phase', 'training step')} within 25% (MoE included), prefill {_count('phase', 'prefill')} "
             f"(int8 included), scoring {_count('phase', 'scoring')}; HF eager decode "
             f"{_count('engine', 'eager [generate() probe]')} within 25%")
    readme = " ".join((G.ROOT / "README.md").read_text().split())
    assert claim in readme, claim


def test_a_wrong_constant_fails_a_time_gate():
    """Doubling the elementwise backward bytes (BWD_FACTOR) slows every training step: the training gate fails."""
    from gpuadvisor.estimate import calibration as cal

    with cal.override(BWD_FACTOR=cal.BWD_FACTOR * 2):
        assert not G.gate("training_steps").check().passed
