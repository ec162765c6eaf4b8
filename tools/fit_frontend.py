"""Fit each serving engine's front-end cost per request (engines.json `frontend_s_per_request`) on the published
closed-loop TTFT rows that are NOT held out (tests/data/published-serving.json): the value, on a 1 ms grid, that
minimises the squared log ratio tool / published of those rows. Prints the figures; engines.json is edited by hand
with them (and says so). Run: `python3 -m tools.fit_frontend`."""

from __future__ import annotations

from bench import serving as P


def fit(engine: str, grid_ms: range = range(0, 121)) -> tuple[float, int, list[str]]:
    rows = [e for e in P.load_entries() if e["engine"] == engine and e["metric"] == "ttft_ms"
            and e["concurrency"] and not e["held_out"] and e["client_measured"]]
    if not rows:
        return 0.0, 0, []
    best = P.fit_profile_field(rows, "frontend_s_per_request", [ms / 1e3 for ms in grid_ms])
    return best, len(rows), [e["id"] for e in rows]


if __name__ == "__main__":
    for name in ("vllm", "sglang", "trtllm"):
        value, n, ids = fit(name)
        print(f"{name}: frontend_s_per_request {value:.3f} from {n} calibration rows: {', '.join(ids)}")
