"""Where the shipped data lives (in a source checkout and in an installed wheel alike), and the user cache."""

from __future__ import annotations

import os
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parents[1]  # gpuadvisor/ (this file is in gpuadvisor/core/)


def shipped_catalog_dir() -> Path:
    bundled = _PACKAGE / "_catalog"  # the wheel force-includes catalog/ here
    if bundled.is_dir():
        return bundled
    return _PACKAGE.parent / "catalog"


def repo_root() -> Path:
    return _PACKAGE.parent


def shipped_configs_dir() -> Path:
    """Model config.json files shipped with the package (gpuadvisor/data/configs/NAME.json)."""
    return _PACKAGE / "data" / "configs"


def shipped_config(name: str) -> Path | None:
    """The shipped config.json of `name` (e.g. 'bert-base-uncased'), or None."""
    path = shipped_configs_dir() / f"{name}.json"
    return path if path.is_file() else None


def shipped_graphs_dir() -> Path:
    """Pre-traced op graphs of popular models (tools/trace_models.py builds them)."""
    return _PACKAGE / "data" / "graphs"


def user_cache_dir() -> Path:
    """$XDG_CACHE_HOME/gpuadvisor, else ~/.cache/gpuadvisor (a relative XDG_CACHE_HOME is ignored, as
    the XDG spec says). Holds what can be measured again: deleting it loses nothing but time."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    root = Path(base) if base and Path(base).is_absolute() else Path.home() / ".cache"
    return root / "gpuadvisor"
