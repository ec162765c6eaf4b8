"""Shipped data files parsed once and kept in the user cache, so that a cold `recommend` neither parses
YAML nor builds pydantic's validators (about 70 ms of a 0.5 s command): the catalog's validated cards
(catalog.py) and the model presets (modelspec.py).

One pickle per name and checkout in `paths.user_cache_dir()`, holding (key, value). The key hashes every
input file (path and bytes: the data files and the modules whose code turns them into objects), the
Python version and what the caller adds (pydantic's version for the catalog), so any change misses; a
miss builds the value as always and rewrites the file. Only shipped files are cached: --catalog folders
and $GPUADVISOR_CATALOG are validated on every run, so their errors are the usual one line, and a build
that raises caches nothing. The cache holds what can be computed again: an unreadable, stale or damaged
file is a miss, and a cache that cannot be written costs time only.
"""

from __future__ import annotations

import contextlib
import hashlib
import pickle
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from gpuadvisor.core.paths import user_cache_dir

FORMAT = b"gpuadvisor-data-cache-1"
T = TypeVar("T")


def cache_path(name: str) -> Path:
    return user_cache_dir() / f"{name}.pickle"


def _key(name: str, inputs: Sequence[Path], extra: str) -> str | None:
    """What the value depends on, hashed; None where an input cannot be read (then nothing is cached)."""
    h = hashlib.blake2b(FORMAT, digest_size=20)
    h.update(f"{name}\0{sys.version}\0{extra}".encode())
    try:
        for p in inputs:
            data = p.read_bytes()
            h.update(f"\0{p.resolve()}\0{len(data)}\0".encode())
            h.update(data)
    except OSError:
        return None
    return h.hexdigest()


def _read(path: Path, key: str) -> tuple[bool, object]:
    try:
        with path.open("rb") as f:
            got_key, value = pickle.load(f)
    except Exception:  # missing, damaged, or pickled by other code: a miss, built again by the caller
        return False, None
    return got_key == key, value


def _write(path: Path, key: str, value: object) -> None:
    from gpuadvisor.core.errors import UserError
    from gpuadvisor.core.fileio import atomic_write_bytes

    # an unwritable cache folder: the next run parses the files again, nothing else is lost
    with contextlib.suppress(UserError):
        atomic_write_bytes(path, pickle.dumps((key, value), protocol=pickle.HIGHEST_PROTOCOL), force=True)


def cached(name: str, inputs: Sequence[Path], build: Callable[[], T], check: Callable[[object], bool], *,
           extra: str = "") -> T:
    """`build()`, or its value from the last run when no input changed. `inputs`: every file the value
    comes from, data and code (their full paths count: a value may name its file); `check`: whether a
    value read back has the expected shape; `extra`: anything else it depends on (a library version)."""
    key = _key(name, inputs, extra)
    if key is None:
        return build()
    # one file per checkout (named by where the first input is), so that two checkouts do not take turns
    where = hashlib.blake2b(str(inputs[0].resolve()).encode(), digest_size=4).hexdigest() if inputs else "none"
    path = cache_path(f"{name}-{where}")
    hit, value = _read(path, key)
    if hit and check(value):
        return value  # type: ignore[return-value]  # `check` vouched for it
    fresh = build()  # a bad file raises here, before anything is cached
    _write(path, key, fresh)
    return fresh


__all__ = ["cache_path", "cached"]
