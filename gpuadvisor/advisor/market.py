"""The rental offers a decision considers: the shipped price snapshot (`gpuadvisor.prices`, owned
by that module), filtered by provider and region, and the display currency. Kept apart from the
pure decision code so that tests and notebooks can pass offers of their own."""

from __future__ import annotations

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
    or currency (the snapshot's filter names the known ones)."""
    currency = currency_code(currency)
    snap = snapshot if snapshot is not None else load_snapshot()
    if snap is None:
        if providers or region:
            raise UserError("no rental price snapshot in this build: --provider and --region cannot apply")
        return [], None
    if providers or region:
        snap = snap.filter(providers=list(providers) or None, region=region)
    offers = list(snap.offers)
    desc = snap.describe() if hasattr(snap, "describe") else str(getattr(snap, "source", ""))
    return offers, PriceInfo(source=str(desc), offers=len(offers), spot=spot, providers=tuple(providers),
                             region=region, currency=currency)


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
