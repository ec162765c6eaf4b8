"""Every calibration constant that is not an assumption binds an accuracy gate: scaled by 0.75 and by 1.25
(tests/accuracy_gates.SCALES), some gate of tests/accuracy_gates.py fails. Every constant read off a timing or memory
measurement (measured, fitted, or measured once and not reproducible) binds, and so does every count and datasheet
figure that is not an assumption; one that no stored set binds both ways is an assumption (Method.ASSUMPTION) and says
why in its record (docs/calibration.md).

The gates run in-process over the stored validation sets; a gate is skipped for a constant it never read (it cannot
move with it), and gates run cheapest first until one fails. The sweep leaves out the serving simulation's gate (about
30 s a run; no constant today is bound by it alone, which the ungated check runs); both are `slow` (CI runs them).
"""

from __future__ import annotations

import accuracy_gates as G
import pytest

from gpuadvisor.estimate import calibration as cal
from gpuadvisor.estimate.calibration import Method

SLOW_GATES = ("published_serving", "published_serving_online")
FAST = tuple(g for g in G.GATES if g.name not in SLOW_GATES)


def swept() -> list[str]:
    """The constants the sweep holds to a gate: not an assumption, and not marked ungated."""
    return [c.name for c in cal.constants() if c.method is not Method.ASSUMPTION and not c.ungated]


def ungated() -> list[str]:
    return [c.name for c in cal.constants() if c.ungated]


@pytest.fixture(scope="module")
def fast_baseline() -> G.Baseline:
    base = G.baseline(FAST)
    assert not base.failing, base.failing
    return base


@pytest.fixture(scope="module")
def full_baseline() -> G.Baseline:
    base = G.baseline(G.GATES)
    assert not base.failing, base.failing
    return base


@pytest.mark.slow  # about two minutes on two cores: CI runs it (`pytest -m slow`), the default suite does not
@pytest.mark.parametrize("name", swept())
def test_constant_binds_a_gate(fast_baseline, name):
    unbound = [f for f in G.SCALES if G.first_failing_gate(name, f, fast_baseline, FAST) is None]
    assert not unbound, (f"{name} x {unbound} fails no accuracy gate: bind it with a gate (tests/accuracy_gates.py) "
                         "or say why in its record's `ungated`")


@pytest.mark.slow
@pytest.mark.parametrize("name", ungated())
def test_an_ungated_constant_binds_no_gate(full_baseline, name):
    """The mark is true: no gate, the serving simulation's included, fails when the constant moves (else the
    mark is stale and the constant belongs to the sweep)."""
    bound = {f: g for f in G.SCALES if (g := G.first_failing_gate(name, f, full_baseline)) is not None
             and not g.startswith("(")}
    assert len(bound) < len(G.SCALES), f"{name} binds {bound}: drop its `ungated` mark"


def test_every_constant_binds_or_is_an_assumption():
    """Issue 28's rule: each non-assumption constant binds a gate both ways (the sweep above), so none is marked
    ungated; one that no stored set binds is an assumption that says why in `how` (a count read off an implementation
    or an engine's documented default included: it is assumed of the user's stack, not measured)."""
    marked = [c.name for c in cal.constants() if c.ungated]
    assert not marked, marked


def test_ungated_and_assumption_records_say_why():
    for c in cal.constants():
        assert not (c.ungated and c.method is Method.ASSUMPTION), f"{c.name}: an assumption needs no ungated mark"
        assert c.method is not Method.ASSUMPTION or c.how, f"{c.name}: an assumption says why in `how`"


@pytest.mark.slow  # computes the baseline of every gate (about 40 s)
def test_the_sweep_can_fail(fast_baseline):
    """A constant the gates cannot see (the Jetson's OS memory: no gate reads it) is reported unbound."""
    assert "JETSON_SYSTEM_GIB" not in set().union(*fast_baseline.reads.values())
    assert G.first_failing_gate("JETSON_SYSTEM_GIB", 1.25, fast_baseline, FAST) is None
    assert G.first_failing_gate("BWD_FACTOR", 1.25, fast_baseline, FAST) is not None
