"""Fit an engine's host time per sequence per pipeline stage (engines.json `pp_host_s_per_seq`) on the published
pipeline-parallel rows (pp > 1) that are NOT held out (tests/data/published-serving.json): the value, on a 1 us grid,
that minimises the squared log ratio tool / published of those rows. Prints the figure; engines.json is edited by
hand with it (and says so). Run: `python3 -m tools.fit_pp_host`."""

from __future__ import annotations

from bench import serving as P


def fit(engine: str, grid_us: range = range(0, 81)) -> tuple[float, int, list[str]]:
    rows = [e for e in P.load_entries() if e["engine"] == engine and e["pp"] > 1 and not e["held_out"]]
    if not rows:
        return 0.0, 0, []
    best = P.fit_profile_field(rows, "pp_host_s_per_seq", [us / 1e6 for us in grid_us])
    return best, len(rows), [e["id"] for e in rows]


if __name__ == "__main__":
    for name in ("vllm", "sglang", "trtllm"):
        value, n, ids = fit(name)
        print(f"{name}: pp_host_s_per_seq {value * 1e6:.0f} us from {n} calibration rows: {', '.join(ids)}")
