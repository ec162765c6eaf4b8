"""The rental offers a decision considers: the shipped price snapshot (`gpuadvisor.prices`, owned
by that module), filtered by provider and region, and the display currency. Kept apart from the
pure decision code so that tests and notebooks can pass offers of their own."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from gpuadvisor.advisor.decide import PriceInfo
from gpuadvisor.core.errors import UserError


def load_snapshot() -> Any | None:
    """The shipped price snapshot, or None where this build has no prices module."""
    try:
        from gpuadvisor.prices import load_prices
    except ImportError:
        return None
    return load_prices()


def offers_for(
    providers: Sequence[str] = (),
    region: str | None = None,
    *,
    spot: bool = False,
    currency: str = "USD",
    snapshot: Any | None = None,
) -> tuple[list[Any], PriceInfo | None]:
    """(offers, where they came from) after the filters; UserError on an unknown provider, region
    or currency (the snapshot's filter names the known ones). Offers whose price the builder's
    checks flagged (`Offer.flags`) are set aside, never picks: PriceInfo says how many and why,
    and how old the prices are."""
    currency = currency_code(currency)
    snap = snapshot if snapshot is not None else load_snapshot()
    if snap is None:
        if providers or region:
            raise UserError("no rental price snapshot in this build: --provider and --region cannot apply")
        return [], None
    if providers or region:
        snap = snap.filter(providers=list(providers) or None, region=region)
    offers = [o for o in snap.offers if not getattr(o, "flags", ())]
    suspect = [o for o in snap.offers if getattr(o, "flags", ())]
    desc = snap.describe() if hasattr(snap, "describe") else str(getattr(snap, "source", ""))
    fresh = snap.freshness(providers=sorted({o.provider for o in snap.offers})) if hasattr(snap, "freshness") else None
    kinds = Counter(f.split(":", 1)[0] for o in suspect for f in o.flags)
    return offers, PriceInfo(
        source=str(desc), offers=len(offers), spot=spot, providers=tuple(providers), region=region, currency=currency,
        freshness=fresh.line() if fresh else "", age_days=fresh.age_days if fresh else None,
        stale_warning=fresh.warning() if fresh else None,
        set_aside=tuple(f"{o.provider} {o.instance_type} ({o.gpu_count}x {o.card}): {'; '.join(o.flags)}"
                        for o in suspect),
        set_aside_kinds=tuple(sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0]))))


def currency_code(currency: str) -> str:
    """Upper-case ISO code, validated by the prices module (USD always works)."""
    code = (currency or "USD").strip().upper()
    if code == "USD":
        return code
    rate_of(code)
    return code


def rate_of(currency: str) -> float:
    """How many units of `currency` one US dollar buys; UserError on an unknown currency."""
    code = (currency or "USD").strip().upper()
    if code == "USD":
        return 1.0
    try:
        from gpuadvisor.prices import convert_usd
    except ImportError:
        raise UserError(f"unknown currency {currency!r}: this build converts no currencies (use USD)") from None
    return float(convert_usd(1.0, code))


__all__ = ["currency_code", "load_snapshot", "offers_for", "rate_of"]
