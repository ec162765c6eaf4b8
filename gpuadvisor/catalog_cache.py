"""The shipped catalog's validated cards, kept in the user cache so that a cold `recommend` neither
parses the YAML nor builds pydantic's validators (about 60 ms of a 0.5 s command).

One file, `catalog.pickle` in `paths.user_cache_dir()`, holding (key, cards per file). The key hashes
every shipped YAML file (name and bytes), `catalog.py` itself (the card models and their validators),
and the pydantic and Python versions: any change misses, and a miss validates the files as always and
rewrites the cache. Only the shipped catalog is cached; --catalog folders and $GPUADVISOR_CATALOG are
validated on every run, so their errors are the usual one line. The cache holds what can be computed
again: an unreadable, stale or damaged file is a miss, and a cache that cannot be written costs time only.
"""

from __future__ import annotations

import contextlib
import hashlib
import pickle
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gpuadvisor.paths import user_cache_dir

FORMAT = b"gpuadvisor-catalog-cache-1"


def cache_path() -> Path:
    return user_cache_dir() / "catalog.pickle"


def _key(files: list[Path], models_source: Path) -> str | None:
    """What the cards depend on, hashed; None where a file cannot be read (then nothing is cached)."""
    import pydantic

    h = hashlib.blake2b(FORMAT, digest_size=20)
    h.update(f"{sys.version}|{pydantic.VERSION}".encode())
    try:
        h.update(models_source.read_bytes())
        for p in files:
            data = p.read_bytes()
            h.update(f"\0{p.name}\0{len(data)}\0".encode())
            h.update(data)
    except OSError:
        return None
    return h.hexdigest()


def _read(path: Path, key: str, n: int) -> list[list[Any]] | None:
    try:
        with path.open("rb") as f:
            got_key, cards = pickle.load(f)
    except Exception:  # missing, damaged, or pickled by other code: a miss, recomputed by the caller
        return None
    if got_key != key or not isinstance(cards, list) or len(cards) != n:
        return None
    return cards


def _write(path: Path, key: str, cards: list[list[Any]]) -> None:
    from gpuadvisor.errors import UserError
    from gpuadvisor.fileio import atomic_write_bytes

    # an unwritable cache folder: the next run validates the YAML again, nothing else is lost
    with contextlib.suppress(UserError):
        atomic_write_bytes(path, pickle.dumps((key, cards), protocol=pickle.HIGHEST_PROTOCOL), force=True)


def cached_cards(files: list[Path], load: Callable[[Path], list[Any]], models_source: Path) -> list[list[Any]]:
    """`load(p)` for each of `files` (the shipped catalog), from the cache when its key matches."""
    key = _key(files, models_source)
    if key is None:
        return [load(p) for p in files]
    path = cache_path()
    cards = _read(path, key, len(files))
    if cards is None:
        cards = [load(p) for p in files]  # a bad file raises here, before anything is cached
        _write(path, key, cards)
    return cards


__all__ = ["cache_path", "cached_cards"]
