"""Fit an engine's time per running sequence per iteration on the published rows of that engine (or release) that
are NOT held out (tests/data/published-serving.json), less the mean TTFT and mean TPOT of runs that queue every
request at once (QUEUED_EXCLUDED) and, but for the speculative field, less the runs that speculate: the value, on a
10 us grid, that minimises the squared log ratio tool / published of those rows. Three fields:

* `host_s_per_seq`: the engine core's scheduling, input preparation and output processing, between GPU steps or
  beside them where the engine overlaps the two (`host_seq_overlap`);
* `stream_s_per_seq`: the serving front-end's detokenizing and streaming, in a process of its own, in runs a client
  measures through the engine's HTTP server (its rows: the client-measured ones);
* `speculative_host_s_per_seq`: the speculative worker's time per sequence and verify step, on the runs that
  speculate (the others' rows leave them out).

Prints the figures; engines.json is edited by hand with them (and says so). Run: `python3 -m tools.fit_host_seq`."""

from __future__ import annotations

from bench import serving as P

#: (engine spec, field): vLLM v0.8-v0.13, between GPU steps (async scheduling from v0.14); SGLang v0.4-v0.5, beside
#: them (its overlap scheduler); trtllm-serve's front-end (the offline trtllm-bench tables fit without it)
FITS = (("vllm@0.11", "host_s_per_seq"), ("sglang@0.5", "host_s_per_seq"), ("trtllm", "stream_s_per_seq"),
        ("sglang@0.5", "speculative_host_s_per_seq"))


#: the figures of runs that queue every request at once that are not fitted: the mean TTFT (the front-end's queue,
#: tools/fit_frontend_queue.py) and the mean TPOT, a tail the simulation does not draw (docs/serving.md, "The mean
#: TPOT of a burst"): those runs' output throughput and median TPOT say what a sequence costs the host
QUEUED_EXCLUDED = ("ttft_ms", "tpot_ms")


def fit(spec: str, field: str = "host_s_per_seq", grid_us: range | None = None) -> tuple[float, list[str]]:
    """(the value on the grid, the rows read): 0-400 us, the speculative worker's 0-1,000 us."""
    grid_us = grid_us or (range(0, 1010, 10) if field == "speculative_host_s_per_seq" else range(0, 410, 10))
    rows = [e for e in P.load_entries() if P.engine_spec(e) == spec and not e["held_out"]
            and not (P.all_queued(e) and e["metric"] in QUEUED_EXCLUDED) and not e.get("disaggregated")
            # a speculating engine's per-sequence work is its speculative worker's, fitted on those runs alone
            and bool(e.get("speculative")) == (field == "speculative_host_s_per_seq")
            and (field != "stream_s_per_seq" or e["client_measured"])]
    if not rows:
        return 0.0, []
    return P.fit_profile_field(rows, field, [us / 1e6 for us in grid_us]), [e["id"] for e in rows]


if __name__ == "__main__":
    for spec, field in FITS:
        value, ids = fit(spec, field)
        print(f"{spec}: {field} {value * 1e6:.0f} us from {len(ids)} calibration rows: {', '.join(ids)}")
