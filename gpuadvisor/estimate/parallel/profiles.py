"""Training framework profiles, read from gpuadvisor/data/framework-profiles.json: what a framework fuses, hides
and shards. Efficiencies are names of calibration constants, read at call time (what-ifs and tests override them)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from gpuadvisor.core.errors import UserError
from gpuadvisor.estimate import calibration as cal
from gpuadvisor.modelspec import _did_you_mean

PROFILES_PATH = Path(__file__).resolve().parents[2] / "data" / "framework-profiles.json"
DEFAULT_FRAMEWORK = "megatron"


@dataclass(frozen=True)
class Framework:
    """One profile; numeric fields given as a constant name resolve through the calibration table."""

    name: str
    description: str
    sources: tuple[str, ...]
    compute_eff_ref: str | float
    attention_eff_ref: str | float
    elementwise_ref: str | float
    tp_overlap_ref: str | float
    host_dispatch: bool
    logit_bytes: float
    fp8: str
    default_sharding: str
    sequence_parallel: bool

    @staticmethod
    def _read(ref: str | float) -> float:
        return cal.value(ref) if isinstance(ref, str) else float(ref)

    @property
    def compute_eff(self) -> float:
        return self._read(self.compute_eff_ref)

    @property
    def attention_eff(self) -> float:
        return self._read(self.attention_eff_ref)

    @property
    def elementwise(self) -> float:
        return self._read(self.elementwise_ref)

    @property
    def tp_overlap(self) -> float:
        return self._read(self.tp_overlap_ref)


@lru_cache(maxsize=1)
def _load() -> dict[str, Framework]:
    raw = json.loads(PROFILES_PATH.read_text())["profiles"]
    out = {}
    for name, p in raw.items():
        out[name] = Framework(
            name=name, description=p["description"], sources=tuple(p["sources"]), compute_eff_ref=p["compute_eff"],
            attention_eff_ref=p["attention_eff"], elementwise_ref=p["elementwise"], tp_overlap_ref=p["tp_overlap"],
            host_dispatch=bool(p["host_dispatch"]),
            logit_bytes=float(p["logit_bytes"]), fp8=p["fp8"], default_sharding=p["default_sharding"],
            sequence_parallel=bool(p["sequence_parallel"]))
    return out


def framework_names() -> tuple[str, ...]:
    return tuple(_load())


def framework(name: str) -> Framework:
    """The profile called `name` (UserError naming the choices otherwise)."""
    profiles = _load()
    key = (name or "").strip().lower()
    if key not in profiles:
        raise UserError(f"unknown framework {name!r}{_did_you_mean(key, tuple(profiles))} "
                        f"(one of {', '.join(profiles)})")
    return profiles[key]
