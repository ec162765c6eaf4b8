"""Where the shipped data lives, in a source checkout and in an installed wheel alike."""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def shipped_catalog_dir() -> Path:
    bundled = _PACKAGE / "_catalog"  # the wheel force-includes catalog/ here
    if bundled.is_dir():
        return bundled
    return _PACKAGE.parent / "catalog"


def repo_root() -> Path:
    return _PACKAGE.parent
