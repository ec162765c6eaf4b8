"""Rule types that look at the node: GPUs against each other, the links between them, and health.

- peer_consistency: every GPU's figure within a percentage of the node's median (a straggler
  slows every collective yet can pass every absolute threshold);
- nccl_busbw: an NCCL collective's bus bandwidth at one size of the interconnect sweep;
- p2p_bandwidth: peer-to-peer copy bandwidth of every pair this GPU is part of;
- no_pending_row_remaps: no row remap (or page retirement) waiting for a GPU reset, none failed;
- xid_errors: no XID error while the run listened;
- clocks_under_load: the SM clock reached a share of its maximum while the load probes ran.
Each is evaluated per GPU like the others; the node figures (interconnect probe) are the same
for every GPU, and a result with one GPU passes the link rules as not applicable.
"""

from __future__ import annotations

import re
import statistics
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from gpuadvisor.checks.rules import FigureKey, Number, Outcome, Rule, num, register
from gpuadvisor.core.results import DeviceResult, ProbeResult, RunResult

TIME_UNITS = {"ms", "us", "s", "ns"}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(i?b)?\s*$", re.IGNORECASE)


def parse_size(value: Any) -> int:
    """Bytes from 1073741824, '1g', '1 GiB', '256m', '256 MiB' (powers of two: NCCL sweeps use them)."""
    if isinstance(value, bool):
        raise ValueError("must be a size such as 1g, 256m or 1 GiB")
    if isinstance(value, int):
        if value <= 0:
            raise ValueError("must be a positive number of bytes")
        return value
    m = _SIZE.match(str(value))
    if not m:
        raise ValueError(f"{value!r} is not a size (write 1g, 256m, 1 GiB or a number of bytes)")
    unit = m.group(2).lower()
    n = float(m.group(1)) * (1 << (10 * ("kmgt".index(unit) + 1)) if unit else 1)
    if n < 1 or n != int(n):
        raise ValueError(f"{value!r} is not a whole number of bytes")
    return int(n)


def size_label(nbytes: int) -> str:
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if nbytes >= 1 << shift and nbytes % (1 << shift) == 0:
            return f"{nbytes >> shift} {unit}"
    return f"{nbytes} B"


def interconnect(run: RunResult) -> ProbeResult | None:
    return run.node_probe("interconnect")


def _not_applicable(rule: Rule, run: RunResult) -> Outcome | None:
    """A one-GPU result has no links: the link rules pass, saying so."""
    if len(run.devices) < 2:
        return rule.outcome(True, "n/a: one GPU", "no GPU pair in this result")
    return None


def _link_probe(rule: Rule, run: RunResult) -> Outcome | ProbeResult:
    """The interconnect probe a link rule reads, or the outcome when there is none to read."""
    na = _not_applicable(rule, run)
    if na is not None:
        return na
    p = interconnect(run)
    if p is None:
        return rule.outcome(False, "missing", "the interconnect probe is not in the results (was it run?)")
    if p.status != "ok" and not p.data:
        why = f"interconnect probe {p.status}" + (f" ({p.reason})" if p.reason else "")
        return rule.outcome(False, "no value", why)
    return p


# --------------------------------------------------------------------------- peer consistency


@register
class PeerConsistency(Rule):
    """This GPU's figure is within `max_pct` of the median over every GPU of the node.

    Only the slow side counts (below the median; above it for times such as latency), so that
    with two GPUs the slower one is flagged and the faster one is not. With `within_spread`, the
    figure's own run-to-run spread (bursts, repeats) is added to the allowance.
    """

    check: Literal["peer_consistency"]
    figure: FigureKey
    max_pct: Number = Field(gt=0, le=100)
    within_spread: bool = False

    def describe(self) -> str:
        extra = " (+ its spread)" if self.within_spread else ""
        return f"{self.figure} within {num(self.max_pct)}%{extra} of the node median"

    def evaluate(self, dev: DeviceResult, run: RunResult) -> Outcome:
        values = {}
        for d in run.devices:
            m = d.measurement(self.figure)
            if m is not None and m.value is not None:
                values[d.index] = m
        mine = values.get(dev.index)
        if mine is None or mine.value is None:
            return self.outcome(False, "missing", f"{self.figure} is not in this GPU's results")
        if len(values) < 2:
            return self.outcome(True, f"{num(mine.value)} {mine.unit}", "no other GPU with this figure to compare")
        median = statistics.median(m.value for m in values.values() if m.value is not None)
        if not median:
            return self.outcome(False, f"{num(mine.value)} {mine.unit}", "the node median is zero")
        dev_pct = 100.0 * (mine.value - median) / median
        slow_pct = dev_pct if mine.unit in TIME_UNITS else -dev_pct  # how much slower than the median
        allowed = self.max_pct + (100.0 * (mine.spread or 0.0) if self.within_spread else 0.0)
        measured = f"{num(mine.value)} {mine.unit}, {dev_pct:+.1f}% vs median {num(median)} of {len(values)} GPUs"
        msg = ""
        if slow_pct > allowed:
            msg = f"{slow_pct:.1f}% slower than the node median (allowed {allowed:.1f}%)"
        return self.outcome(slow_pct <= allowed, measured, msg, value=dev_pct)


# --------------------------------------------------------------------------- NCCL and P2P


class _LinkThresholds(Rule):
    min: Number | None = Field(default=None, ge=0, description="GB/s")
    min_ratio_to_reference: Number | None = Field(default=None, gt=0, le=100)
    min_pct_of_datasheet: Number | None = Field(default=None, gt=0, le=1000)

    @model_validator(mode="after")
    def _needs_a_threshold(self) -> _LinkThresholds:
        if self.min is None and self.min_ratio_to_reference is None and self.min_pct_of_datasheet is None:
            raise ValueError("give a threshold: min (GB/s), min_ratio_to_reference or min_pct_of_datasheet")
        return self

    def thresholds(self) -> str:
        parts = []
        if self.min is not None:
            parts.append(f">= {num(self.min)} GB/s")
        if self.min_ratio_to_reference is not None:
            parts.append(f">= {num(self.min_ratio_to_reference)} x same-run reference")
        if self.min_pct_of_datasheet is not None:
            parts.append(f">= {num(self.min_pct_of_datasheet)}% of datasheet")
        return " and ".join(parts)

    def judge(self, value: float, reference: float | None, datasheet: float | None) -> list[str]:
        """What this value misses, one phrase each; empty when it passes."""
        bad = []
        if self.min is not None and value < self.min:
            bad.append(f"{num(value)} < {num(self.min)} GB/s")
        if self.min_ratio_to_reference is not None:
            if not reference:
                bad.append("no same-run reference to compare with")
            elif value / reference < self.min_ratio_to_reference:
                bad.append(f"{value / reference:.2f} x reference < {num(self.min_ratio_to_reference)}")
        if self.min_pct_of_datasheet is not None:
            if not datasheet:
                bad.append("no datasheet figure to compare with")
            elif 100 * value / datasheet < self.min_pct_of_datasheet:
                bad.append(f"{100 * value / datasheet:.1f}% of datasheet < {num(self.min_pct_of_datasheet)}%")
        return bad


@register
class NcclBusbw(_LinkThresholds):
    """Bus bandwidth of an NCCL collective at one size of the interconnect probe's sweep."""

    check: Literal["nccl_busbw"]
    collective: Literal["all_reduce", "all_gather", "reduce_scatter"] = "all_reduce"
    size: int | str = Field(default="1g", validate_default=True)

    @field_validator("size", mode="before")
    @classmethod
    def _size(cls, v: Any) -> int:
        return parse_size(v)

    def describe(self) -> str:
        return f"NCCL {self.collective} bus bandwidth at {size_label(int(self.size))} {self.thresholds()}"

    def evaluate(self, dev: DeviceResult, run: RunResult) -> Outcome:
        p = _link_probe(self, run)
        if isinstance(p, Outcome):
            return p
        primary = p.data.get("nccl_primary")
        sweep = p.data.get("nccl") or {}
        row = next((r for r in sweep.get(f"{primary}.{self.collective}", []) if r["bytes"] == int(self.size)), None)
        if row is None:
            sizes = sorted({r["bytes"] for r in sweep.get(f"{primary}.{self.collective}", [])})
            have = ", ".join(size_label(s) for s in sizes) or "none"
            return self.outcome(False, "missing", f"no {self.collective} at {size_label(int(self.size))} in the "
                                f"sweep (sizes measured: {have}; a --full run sweeps 1 MiB to 4 GiB)")
        ref = next((r for r in sweep.get(f"torch.{self.collective}", []) if r["bytes"] == int(self.size)), None)
        ref_v = ref["busbw_gbs"] if ref and primary != "torch" else None
        ds = p.data.get("datasheet_per_direction_gbs")
        value = float(row["busbw_gbs"])
        measured = f"{num(value)} GB/s" + (f" ({value / ref_v:.2f} x torch.distributed {num(ref_v)})" if ref_v else "")
        bad = self.judge(value, ref_v, ds)
        return self.outcome(not bad, measured, "; ".join(bad), value=value)


@register
class P2pBandwidth(_LinkThresholds):
    """Peer-to-peer copy bandwidth of every pair this GPU belongs to (the worst pair decides)."""

    check: Literal["p2p_bandwidth"]
    direction: Literal["one_way", "both_ways"] = "one_way"
    allow_staged: bool = False

    def describe(self) -> str:
        return f"P2P {self.direction.replace('_', ' ')} bandwidth of every pair {self.thresholds()}"

    def evaluate(self, dev: DeviceResult, run: RunResult) -> Outcome:
        p = _link_probe(self, run)
        if isinstance(p, Outcome):
            return p
        rows = []
        for m in p.measurements:
            key = m.key.split(".", 1)[1]
            parts = key.split("_")
            if self.direction == "one_way" and len(parts) == 3 and parts[0] == "p2p":
                a, b = int(parts[1]), int(parts[2])
            elif self.direction == "both_ways" and key.startswith("p2p_bidir_"):
                a, b = int(parts[2]), int(parts[3])
            else:
                continue
            if dev.index in (a, b) and m.value is not None:
                rows.append((a, b, m))
        if not rows:
            return self.outcome(False, "missing", f"no P2P {self.direction.replace('_', ' ')} figure for this GPU "
                                f"({p.data.get('errors', {}).get('p2p') or 'was the interconnect probe run?'})")
        problems, worst = [], None
        for a, b, m in rows:
            assert m.value is not None
            arrow = "->" if self.direction == "one_way" else "<->"
            bad = self.judge(m.value, m.reference, m.datasheet)
            if not self.allow_staged and (m.details.get("path") == "staged through host"
                                          or m.details.get("peer_access") is False):
                bad.append("no peer access: staged through host")
            if bad:
                problems.append(f"{a}{arrow}{b}: " + ", ".join(bad))
            if worst is None or m.value < (worst[2].value or 0.0):  # worst's value was checked like m's
                worst = (a, b, m)
        assert worst is not None
        a, b, m = worst
        measured = f"slowest {a}{'->' if self.direction == 'one_way' else '<->'}{b}: {num(m.value)} GB/s" + (
            f" ({m.value / m.reference:.2f} x {m.reference_label})" if m.reference and m.value else "")
        return self.outcome(not problems, measured, "; ".join(problems), value=m.value)


# --------------------------------------------------------------------------- health


def _health(rule: Rule, dev: DeviceResult) -> Outcome | dict[str, Any]:
    p = dev.probe("health")
    if p is None:
        return rule.outcome(False, "missing", "the health probe is not in the results (was it run?)")
    if p.status != "ok":
        return rule.outcome(False, "no value", f"health probe {p.status}" + (f" ({p.reason})" if p.reason else ""))
    return p.data


@register
class NoPendingRowRemaps(Rule):
    """No remapped row waiting for a GPU reset and no failed remap (A100 and later); on older
    GPUs, no page retirement pending."""

    check: Literal["no_pending_row_remaps"]

    def describe(self) -> str:
        return "no pending or failed row remaps"

    def evaluate(self, dev: DeviceResult, run: RunResult) -> Outcome:
        data = _health(self, dev)
        if isinstance(data, Outcome):
            return data
        rr = data.get("remapped_rows") or {}
        if rr.get("supported"):
            measured = (f"{rr.get('corrected', 0)} corrected, {rr.get('uncorrected', 0)} uncorrected remapped; "
                        f"pending {'yes' if rr.get('pending') else 'no'}, failed {'yes' if rr.get('failed') else 'no'}")
            bad = [x for x, on in (("a row remap is pending: reset the GPU to apply it", rr.get("pending")),
                                   ("a row remap failed: the GPU needs service", rr.get("failed"))) if on]
            return self.outcome(not bad, measured, "; ".join(bad), value=float(bool(bad)))
        rp = data.get("retired_pages") or {}
        if rp.get("supported") and rp.get("pending") is not None:
            return self.outcome(not rp["pending"], f"page retirement pending: {'yes' if rp['pending'] else 'no'}",
                                "a page retirement is pending: reset the GPU" if rp["pending"] else "")
        return self.outcome(False, "missing", f"neither remapped rows nor retired pages are reported "
                            f"({rr.get('reason') or rp.get('reason') or 'not supported'})")


@register
class XidErrors(Rule):
    """At most `max` XID errors while the run listened (NVML keeps no history), except `ignore`."""

    check: Literal["xid_errors"]
    max: int = Field(default=0, ge=0, strict=True)
    ignore: list[int] = Field(default_factory=list)

    def describe(self) -> str:
        return f"XID errors during the run <= {self.max}"

    def evaluate(self, dev: DeviceResult, run: RunResult) -> Outcome:
        data = _health(self, dev)
        if isinstance(data, Outcome):
            return data
        xids = [e.get("xid") for e in data.get("xid_events") or [] if e.get("xid") not in self.ignore]
        if not data.get("xid_watched") and not xids:
            return self.outcome(False, "missing", f"XIDs were not watched: {data.get('xid_note') or 'unknown'}")
        measured = ", ".join(f"XID {x}" for x in xids) if xids else "none"
        return self.outcome(len(xids) <= self.max, measured, value=float(len(xids)))


@register
class ClocksUnderLoad(Rule):
    """The highest SM clock seen while the load probes ran is at least `min_pct` of the maximum."""

    check: Literal["clocks_under_load"]
    min_pct: Number = Field(default=95, gt=0, le=100)

    def describe(self) -> str:
        return f"SM clock under load reaches >= {num(self.min_pct)}% of its maximum"

    def evaluate(self, dev: DeviceResult, run: RunResult) -> Outcome:
        data = _health(self, dev)
        if isinstance(data, Outcome):
            return data
        c = data.get("clocks") or {}
        pct = c.get("reached_max_pct")
        if pct is None:
            return self.outcome(False, "missing", "no busy SM clock sampled (were the flops/tensor probes run?)")
        measured = f"{c.get('sm_clock_busy_max_mhz')} of {c.get('sm_clock_max_mhz')} MHz ({pct:.0f}%)"
        reasons = c.get("throttle_reasons_under_load") or []
        msg = f"throttle reasons under load: {', '.join(reasons)}" if reasons else ""
        return self.outcome(pct >= self.min_pct, measured, msg, value=pct)
