"""Fit what a serving engine's front-end loop costs a burst of requests (engines.json, per release;
sim.front_end_reach), on published runs that queue every request at once and are NOT held out
(tests/data/published-serving.json; bench.serving.SHORT_BURST): their mean TTFT, which a request sent alone never
shows, is the figure that sees it. Whether the handling goes on behind the burst (`frontend_requeues`) is the
release's code, not fitted (engines.json says where it comes from).

* `frontend_serial_s_per_request`, the loop's time to take in one request: vLLM 0.11's on its ShareGPT burst (its
  128-token burst, bench.serving.SHORT_BURST, checks it); SGLang 0.5's on its 128-token burst (4 output tokens a
  request: what the loop spends streaming is negligible there), mean TTFT and run length;
* `frontend_stream_s_per_token`, an in-line loop's time to stream one token of an answer, which holds back the rest
  of the burst: SGLang 0.5's on its ShareGPT bursts (answers of about 200 tokens), the first figure fixed.

The value on a grid that minimises the squared log ratio tool / published of those rows. Prints the figures;
engines.json is edited by hand with them (and says so); tools/fit_host_seq.py is run again after it (its rows' TPOT
and throughput move with the queue). Run: `python3 -m tools.fit_frontend_queue`."""

from __future__ import annotations

import math

from bench import serving as P

#: the releases whose all-queued runs were published with full conditions (GPUStack's, 1,000 prompts at once)
SPECS = ("vllm@0.11", "sglang@0.5")
#: the short burst each in-line release's loop time per request is read off (bench.serving.SHORT_BURST)
SHORT_BURST_OF = {"sglang@0.5": ("sglang", "0.5.5.post1", "fp8")}


def rows_of(spec: str) -> list[dict]:
    """The calibration rows of `spec` that queue every request at once and measure the mean TTFT."""
    return [e for e in P.load_entries() if e["metric"] == "ttft_ms" and not e.get("disaggregated")
            and P.all_queued(e) and not e["held_out"]
            and e["client_measured"] and P.engine_spec(e) == spec]


def _short_burst_error(run: tuple[str, str, str], per_request: float) -> float:
    ttft, duration = P.short_burst_ratios((run,), frontend_serial_s_per_request=per_request,
                                          frontend_stream_s_per_token=0.0)[run]
    return math.log(ttft) ** 2 + math.log(duration) ** 2


def fit(spec: str) -> tuple[float, float, list[str]]:
    """(seconds a request, seconds a streamed token, the rows read) for `spec`."""
    rows = rows_of(spec)
    if spec not in SHORT_BURST_OF:
        per_request = P.fit_profile_field(rows, "frontend_serial_s_per_request", [ms / 1e3 for ms in range(41)])
        return per_request, 0.0, [e["id"] for e in rows]
    run = SHORT_BURST_OF[spec]
    per_request = min((tenth_ms / 1e4 for tenth_ms in range(201)), key=lambda v: _short_burst_error(run, v))

    def error(per_token: float) -> float:
        knobs = {"frontend_serial_s_per_request": per_request, "frontend_stream_s_per_token": per_token}
        return sum(math.log(P.tool_value(e, **knobs) / e["value"]) ** 2 for e in rows)

    per_token = min((us / 1e6 for us in range(0, 81)), key=error)
    return per_request, per_token, ["bench.serving.SHORT_BURST " + "/".join(run), *(e["id"] for e in rows)]


if __name__ == "__main__":
    for name in SPECS:
        per_request, per_token, ids = fit(name)
        print(f"{name}: frontend_serial_s_per_request {per_request * 1e3:.1f} ms, frontend_stream_s_per_token "
              f"{per_token * 1e6:.0f} us, from {len(ids)} calibration rows: {', '.join(ids)}")
