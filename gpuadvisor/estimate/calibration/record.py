"""One calibration constant as a typed record: its value and where it came from.

Kept apart from the registry (`calibration/__init__.py`) so that the data modules can build records
without importing the registry that imports them (no import cycle)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Method(str, Enum):
    """How a constant was obtained. MEASURED and FITTED constants are recomputed from their source file
    by tests/test_calibration_fits.py; the others say why they cannot be."""

    MEASURED = "measured directly"  # read off a measurement in the repo (a mean, a median, a ratio)
    FITTED = "fitted"  # a fit of the model to measurements in the repo
    COUNTED = "counted"  # counted from the implementation (ops, bytes, passes), not fitted
    DATASHEET = "datasheet"  # a vendor figure or a documented engine default
    ASSUMPTION = "assumption"  # a judgement, not measured here
    NOT_REPRODUCIBLE = "not reproducible from the repo"  # measured or fitted once, but the fit is not in the repo

    def __str__(self) -> str:
        return str(self.value)

    @property
    def reproducible(self) -> bool:
        """Whether a test can recompute the constant from a file in the repo."""
        return self in (Method.MEASURED, Method.FITTED)


@dataclass(frozen=True)
class Constant:
    """A calibration constant of the estimator.

    `name` is the upper-case identifier code reads it by (`calibration.K_RAMP`); `source` the
    measurement file in the repo (or a datasheet / URL / "-"); `how` one sentence on the derivation
    (the fit, the rounding); `held_out` whether the source holds data that validation holds out from
    fitting (so the constant saw held-out points); `ungated` why no accuracy gate fails when the constant is
    scaled by 0.75 or 1.25 (tests/test_calibration_sweep.py), empty where one does: such a constant is taken on
    trust, as an assumption is, until a validation set binds it."""

    name: str
    value: float
    unit: str
    meaning: str
    source: str
    method: Method
    how: str = ""
    held_out: bool = False
    ungated: str = ""

    def __post_init__(self) -> None:
        if not self.name.isidentifier() or self.name != self.name.upper():
            raise ValueError(f"calibration constant names are upper-case identifiers, got {self.name!r}")
        if isinstance(self.value, bool) or not isinstance(self.value, int | float):
            raise TypeError(f"{self.name}: value must be a number, got {self.value!r}")
        if not (self.meaning and self.source and self.unit):
            raise ValueError(f"{self.name}: meaning, unit and source are required")
