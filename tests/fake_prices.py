"""A small in-test price snapshot with the names of `gpuadvisor.prices` (PriceSnapshot, Offer),
so advisor tests do not depend on the shipped snapshot's contents."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from gpuadvisor.core.errors import UserError


@dataclass(frozen=True)
class FakeOffer:
    provider: str
    instance_type: str
    card: str | None
    gpu_count: int
    on_demand_usd_h: float | None
    spot_usd_h: float | None = None
    region: str = "us-east-1"
    accelerator: str = ""
    vcpus: float | None = None  # unknown host: the advisor's host check passes it (tests of it give figures)
    memory_gib: float | None = None
    regions: tuple[str, ...] = ()
    median_on_demand_usd_h: float | None = None

    def price_usd_h(self, spot: bool = False, region: str | None = None) -> float | None:
        return self.spot_usd_h if spot else self.on_demand_usd_h


@dataclass(frozen=True)
class FakeSnapshot:
    source: str = "fake snapshot for tests, 2026-11-01"
    offers: tuple[FakeOffer, ...] = field(default_factory=tuple)

    def describe(self) -> str:
        return self.source

    def providers(self) -> list[str]:
        return sorted({o.provider for o in self.offers})

    def filter(self, providers=None, region=None, cards=None) -> FakeSnapshot:
        offers = self.offers
        if providers:
            unknown = [p for p in providers if p not in self.providers()]
            if unknown:
                raise UserError(f"unknown provider {unknown[0]!r} (one of {', '.join(self.providers())})")
            offers = tuple(o for o in offers if o.provider in providers)
        if region:
            if region not in {o.region for o in offers}:
                raise UserError(f"unknown region {region!r}")
            offers = tuple(o for o in offers if o.region == region)
        return replace(self, offers=offers)


OFFERS = (
    FakeOffer("aws", "g6.xlarge", "L4", 1, 0.805, 0.32),
    FakeOffer("aws", "g6.12xlarge", "L4", 4, 4.60, 1.80),
    FakeOffer("aws", "g6e.xlarge", "L40S", 1, 1.861, 0.75),
    FakeOffer("aws", "g6e.12xlarge", "L40S", 4, 10.49, 4.2),
    FakeOffer("aws", "p4d.24xlarge", "A100 SXM4 40GB", 8, 32.77, 12.0),
    FakeOffer("aws", "p5.48xlarge", "H100 SXM5 80GB", 8, 98.32, 40.0),
    FakeOffer("lambda", "gpu_1x_h100_sxm5", "H100 SXM5 80GB", 1, 3.29, None, "us-west-1"),
    FakeOffer("lambda", "gpu_8x_h100_sxm5", "H100 SXM5 80GB", 8, 23.92, None, "us-west-1"),
    FakeOffer("lambda", "gpu_1x_a100_sxm4", "A100 SXM4 80GB", 1, 1.79, None, "us-west-1"),
    FakeOffer("runpod", "1x_RTX4090", "GeForce RTX 4090", 1, 0.69, 0.35, "CA"),
    FakeOffer("runpod", "2x_A100-80GB", "A100 SXM4 80GB", 2, 3.78, 2.2, "CA"),
    FakeOffer("runpod", "4x_H100", "H100 SXM5 80GB", 4, 11.96, 7.0, "CA"),
    FakeOffer("nowhere", "mystery", None, 1, 0.1),
)
SNAPSHOT = FakeSnapshot(offers=OFFERS)
