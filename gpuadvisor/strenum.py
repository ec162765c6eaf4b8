"""A `str` enum that prints, formats and serializes as its value, on Python 3.10 too (3.11's StrEnum).

Members compare and hash equal to their text ("training" == Mode.TRAINING), so data read from the
CLI, JSON or YAML and the enums mix freely; f-strings and JSON show the plain value."""

from __future__ import annotations

from enum import Enum


class StrEnum(str, Enum):
    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)

    @classmethod
    def values(cls) -> tuple[str, ...]:
        return tuple(str(m.value) for m in cls)

    @classmethod
    def coerce(cls, v: object) -> object:
        """The member for a known value, else `v` unchanged (validation reports it)."""
        try:
            return cls(v)
        except ValueError:
            return v
