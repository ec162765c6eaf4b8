"""Fit an engine version's host time per scheduled sequence per iteration (engines.json `host_s_per_seq`: the
engine core's scheduling, input preparation and output processing, between GPU steps or beside them where the
engine overlaps the two: `host_seq_overlap`) on the published
rows of that version that are NOT held out (tests/data/published-serving.json), less the TTFT of runs that queue
every request at once (their first tokens wait for the front-end to admit a request at a time, which the
simulation does not model: docs/serving.md): the value, on a 10 us grid, that minimises the squared log ratio
tool / published of those rows. Prints the figure; engines.json is edited by hand
with it (and says so). Run: `python3 -m tools.fit_host_seq`."""

from __future__ import annotations

from bench import serving as P

#: the engine versions with a per-sequence host time: vLLM v0.8-v0.13, between GPU steps (async scheduling from
#: v0.14); SGLang v0.4-v0.5, beside them (its overlap scheduler)
VERSIONS = ("vllm@0.11", "sglang@0.5")


def fit(spec: str, grid_us: range = range(0, 410, 10)) -> tuple[float, list[str]]:
    rows = [e for e in P.load_entries() if P.engine_spec(e) == spec and not e["held_out"]
            and not (e["concurrency"] is None and e["metric"] == "ttft_ms")]
    if not rows:
        return 0.0, []
    return P.fit_profile_field(rows, "host_s_per_seq", [us / 1e6 for us in grid_us]), [e["id"] for e in rows]


if __name__ == "__main__":
    for spec in VERSIONS:
        value, ids = fit(spec)
        print(f"{spec}: host_s_per_seq {value * 1e6:.0f} us from {len(ids)} calibration rows: {', '.join(ids)}")
