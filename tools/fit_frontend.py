"""Fit each serving engine's front-end cost per request (engines.json `frontend_s_per_request`, per release where a
`versions` entry has its own) on the published TTFT rows that are NOT held out (tests/data/published-serving.json):
closed loops and Poisson arrivals, means and medians (all-queued runs measure admission, not the front-end; a row
whose source measured its own host's front-end, `frontend_ms`, is estimated with that and left out). The
value, on a 1 ms grid, that minimises the squared log ratio tool / published of those rows. Prints the figures;
engines.json is edited by hand with them (and says so). Run: `python3 -m tools.fit_frontend`."""

from __future__ import annotations

from bench import serving as P


def rows_of(spec: str) -> list[dict]:
    """The calibration TTFT rows whose engine profile is `spec` (`vllm`, `vllm@0.11`, ...)."""
    return [e for e in P.load_entries() if e["metric"] in ("ttft_ms", "ttft_ms_p50") and not e.get("disaggregated")
            and (e["concurrency"] or e.get("request_rate")) and not e["held_out"] and e["client_measured"]
            and e.get("frontend_ms") is None and P.engine_spec(e) == spec]


def fit(spec: str, grid_ms: range = range(0, 121)) -> tuple[float, int, list[str]]:
    rows = rows_of(spec)
    if not rows:
        return 0.0, 0, []
    best = P.fit_profile_field(rows, "frontend_s_per_request", [ms / 1e3 for ms in grid_ms])
    return best, len(rows), [e["id"] for e in rows]


if __name__ == "__main__":
    for name in ("vllm", "vllm@0.11", "sglang@0.5", "trtllm", "trtllm@0.17"):
        value, n, ids = fit(name)
        print(f"{name}: frontend_s_per_request {value:.3f} from {n} calibration rows: {', '.join(ids)}")
