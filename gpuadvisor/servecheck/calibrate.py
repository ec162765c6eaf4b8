"""An engine profile fitted to a measured endpoint: `estimate ... --calibration FILE` (FILE from `serve-check
--save`).

Two figures of the engine's profile are refitted, nothing else (the scheduler, the kernels and the card stay the
estimate's own):
1. `host_s_per_iter`, the host time of one scheduler iteration: every decode iteration pays it after the GPU's step,
   or beside it where the engine schedules ahead (the current vLLM's async scheduling: the longer of the two sets the
   step), so it sets the time per output token. Fitted (secant on the simulation) so that the estimate's median
   TPOT at the measured load equals the measured median TPOT.
2. `frontend_s_per_request`, the per-request front-end cost (HTTP, tokenization, the first chunk streamed back),
   where the engine profile has that figure: it adds to the time to first token only. Fitted, with the host time
   of step 1 in place, so that the median TTFT matches.
Neither goes below zero: a measurement faster than the estimate's GPU time alone leaves that figure at 0 and the
residual is reported (the card, the model or the weight format then differ from what the estimate assumes)."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from gpuadvisor.core.errors import UserError
from gpuadvisor.servecheck.measurement import Measurement
from gpuadvisor.units import duration

HOST = "host_s_per_iter"
FRONTEND = "frontend_s_per_request"
MAX_FIT_REQUESTS = 500  # the simulation of the measured load, per evaluation of the fit (about 5 ms each)
TOLERANCE = 0.01  # relative: the fit stops when the estimate is this close to the measurement
MAX_STEPS = 8


@dataclass(frozen=True)
class Calibration:
    """The fitted figures and how close the estimate at the measured load comes with them."""

    engine: str
    overrides: tuple[tuple[str, float], ...]
    measured: dict[str, float | None]  # ttft_p50_s, tpot_p50_s
    before: dict[str, float | None]  # the estimate at the measured load with the shipped profile
    after: dict[str, float | None]  # ... with the fitted figures
    notes: tuple[str, ...]
    source: str

    def line(self) -> str:
        figs = ", ".join(f"{k} {duration(v)}" for k, v in self.overrides)
        return f"calibrated on {self.source}: {figs}"

    def to_dict(self) -> dict[str, Any]:
        return {"engine": self.engine, "overrides": dict(self.overrides), "measured": self.measured,
                "before": self.before, "after": self.after, "notes": list(self.notes), "source": self.source}


def estimate_request(m: Measurement, overrides: dict[str, float] | None = None,
                     requests: int | None = None) -> Any:
    """The estimate request for the measured deployment and load (the same lengths, seed and request count)."""
    from gpuadvisor import api

    t, ld = m.target, m.load
    w = api.workload(t.model, mode="inference", seq_len=ld.input_len, gen_tokens=ld.output_len, num_gpus=t.gpus,
                     tensor_parallel=t.gpus)
    count = requests or max(1, m.figures.completed or ld.requests)
    q = api.ServingLoad(engine=t.engine, rate=ld.rate, concurrency=ld.concurrency, lengths=ld.lengths,
                        lengths_given=ld.lengths_given, requests=count, seed=ld.seed, weights=t.weights,
                        engine_overrides=tuple(sorted((overrides or {}).items())))
    return api.request(w, t.card, q)


def _medians(m: Measurement, overrides: dict[str, float], catalog: Any) -> dict[str, float | None]:
    from gpuadvisor import api

    req = estimate_request(m, overrides, min(MAX_FIT_REQUESTS, max(1, m.figures.completed or m.load.requests)))
    serving = api.estimate(req, cat=catalog).serving
    pct = (serving.percentiles if serving else None) or {}
    return {"ttft_p50_s": (pct.get("ttft_s") or {}).get("p50"), "tpot_p50_s": (pct.get("tpot_s") or {}).get("p50")}


def _solve(f: Any, target: float, x0: float) -> tuple[float, float]:
    """x >= 0 with f(x) ~ target for an increasing f (secant steps, clamped at 0): (x, f(x))."""
    y0 = f(x0)
    x1 = max(0.0, x0 + (target - y0))
    if x1 == x0:
        return x0, y0
    y1 = f(x1)
    for _ in range(MAX_STEPS):
        if abs(y1 - target) <= TOLERANCE * target or (x1 == 0.0 and y1 > target):
            break
        slope = (y1 - y0) / (x1 - x0) if x1 != x0 else 1.0
        x0, y0 = x1, y1
        x1 = max(0.0, x1 + (target - y1) / (slope if slope > 0.05 else 1.0))
        y1 = f(x1)
    return x1, y1


def fit(m: Measurement, source: str, *, catalog: Any = None) -> Calibration:
    """Fit the engine's host and front-end figures to the measurement (module docstring)."""
    from gpuadvisor.estimate.serve.profiles import ServeEngine, serve_engine

    measured_tpot, measured_ttft = m.figures.tpot_s.p50, m.figures.ttft_s.p50
    if measured_tpot is None or measured_ttft is None:
        raise UserError(f"--calibration {source}: the measurement has no median TTFT and TPOT to fit (requests of "
                        "two tokens or more must have completed)")
    profile = serve_engine(m.target.engine)
    known = {f.name for f in fields(ServeEngine)}
    fitted: dict[str, float] = {HOST: float(profile.host_s_per_iter)}
    has_frontend = FRONTEND in known
    if has_frontend:
        fitted[FRONTEND] = float(getattr(profile, FRONTEND))
    before = _medians(m, {}, catalog)
    notes = []

    def tpot_at(host: float) -> float:
        return float(_medians(m, {**fitted, HOST: host}, catalog)["tpot_p50_s"] or 0.0)

    fitted[HOST], _ = _solve(tpot_at, measured_tpot, fitted[HOST])
    if has_frontend:
        def ttft_at(front: float) -> float:
            return float(_medians(m, {**fitted, FRONTEND: front}, catalog)["ttft_p50_s"] or 0.0)

        fitted[FRONTEND], _ = _solve(ttft_at, measured_ttft, fitted[FRONTEND])
    else:
        notes.append(f"the {m.target.engine} profile has no per-request front-end figure ({FRONTEND}): TTFT is "
                     "not fitted")
    after = _medians(m, fitted, catalog)
    for key, measured, label in (("tpot_p50_s", measured_tpot, "TPOT"), ("ttft_p50_s", measured_ttft, "TTFT")):
        got = after[key]
        if got is not None and abs(got / measured - 1) > 0.05:
            notes.append(f"median {label} after the fit is {got / measured:.2f}x the measured {duration(measured)}")
    return Calibration(engine=m.target.engine, overrides=tuple(sorted(fitted.items())),
                       measured={"ttft_p50_s": measured_ttft, "tpot_p50_s": measured_tpot}, before=before,
                       after=after, notes=tuple(notes), source=source)
