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
