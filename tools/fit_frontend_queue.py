"""Fit the part of a serving engine's front-end its one event loop spends on each request in turn (engines.json
`frontend_serial_s_per_request`, per release; sim.front_end_reach) on the published runs that queue every request
at once and are NOT held out (tests/data/published-serving.json): their mean TTFT, which a request sent alone never
shows, is the only figure that sees it. Whether the handling goes on behind the burst (`frontend_requeues`) is the
release's code, not fitted (engines.json says where it comes from). The value, on a 1 ms grid, that minimises the
squared log ratio tool / published of those rows. Prints the figures; engines.json is edited by hand with them (and
says so); tools/fit_host_seq.py is run again after it (its rows' TPOT and throughput move with the queue). Run:
`python3 -m tools.fit_frontend_queue`."""

from __future__ import annotations

from bench import serving as P

#: the releases whose all-queued runs were published with full conditions (GPUStack's, 1,000 ShareGPT prompts)
SPECS = ("vllm@0.11", "sglang@0.5")


def rows_of(spec: str) -> list[dict]:
    """The calibration rows of `spec` that queue every request at once and measure the mean TTFT."""
    return [e for e in P.load_entries() if e["metric"] == "ttft_ms" and not e.get("disaggregated")
            and e["concurrency"] is None and e.get("request_rate") is None and not e["held_out"]
            and e["client_measured"] and P.engine_spec(e) == spec]


def fit(spec: str, grid_ms: range = range(0, 41)) -> tuple[float, list[str]]:
    rows = rows_of(spec)
    if not rows:
        return 0.0, []
    best = P.fit_profile_field(rows, "frontend_serial_s_per_request", [ms / 1e3 for ms in grid_ms])
    return best, [e["id"] for e in rows]


if __name__ == "__main__":
    for name in SPECS:
        value, ids = fit(name)
        print(f"{name}: frontend_serial_s_per_request {value:.3f} from {len(ids)} calibration rows: {', '.join(ids)}")
