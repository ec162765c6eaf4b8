"""The advisor: from a workload, the user's targets and prices to options, a frontier and picks.

`targets` (what the user needs and can spend), `options` (hardware + estimate -> fit, time,
throughput, costs, what binds), `picks` (frontier, named picks, closest miss, buy versus rent),
`decide` (one call that does all of it), `ranking` (the plain speed ranking of cards x counts).
Pure functions and frozen dataclasses; no UI imports.
"""

from gpuadvisor.advisor.decide import Advice, PriceInfo, advise
from gpuadvisor.advisor.options import Hardware, Option, build_options, purchase_of
from gpuadvisor.advisor.picks import BreakEven, Pick, buy_vs_rent, closest_miss, frontier, make_picks
from gpuadvisor.advisor.targets import Targets, parse_duration_h

__all__ = [
    "Advice", "BreakEven", "Hardware", "Option", "Pick", "PriceInfo", "Targets", "advise", "build_options",
    "buy_vs_rent", "closest_miss", "frontier", "make_picks", "parse_duration_h", "purchase_of",
]
