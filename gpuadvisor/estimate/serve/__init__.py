"""Serving as engines run it: a discrete-event scheduler simulation (sim.py) over a per-iteration cost
(stepcost.py, a Protocol the op-graph cost model can implement later), engine profiles as data (profiles.py,
engines.json), request lengths (lengths.py) and parallel layouts (parallel.py). api.py ties them together."""
