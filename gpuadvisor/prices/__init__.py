"""GPU rental prices: a dated, sourced snapshot of cloud instance prices (SkyPilot's public
catalogs), reduced to what advice needs, plus an offline refresh from SkyPilot-format CSVs.

    load_prices(path=None) -> PriceSnapshot   # the user's updated copy if present, else shipped
    snapshot.filter(providers=, region=, cards=) -> PriceSnapshot (iterable over its offers)
    offer.price_usd_h(spot=False, region=None) -> float | None
    convert_usd(amount, currency) -> float     # USD always; others only with a sourced rate

Parsing and building (`gpuadvisor.prices.refresh`) are imported only by `prices update` and
tools/build_prices.py; loading needs nothing but `json`.
"""

from gpuadvisor.prices.model import (
    CURRENCIES,
    Offer,
    PriceSnapshot,
    Source,
    Unmapped,
    convert_usd,
    load_prices,
    shipped_path,
    user_path,
)

__all__ = [
    "CURRENCIES",
    "Offer",
    "PriceSnapshot",
    "Source",
    "Unmapped",
    "convert_usd",
    "load_prices",
    "shipped_path",
    "user_path",
]
