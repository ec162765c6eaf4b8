"""Host figures measured once per host and software stack, kept in the user's cache folder.

Some figures depend on the host and its software (CPU, Python, PyTorch, transformers, the GPU model
and driver), not on the run: the dispatch probe's generate() timing costs ~15 s, which every
`probe` would otherwise pay. An entry is one JSON file per key (named by a hash of it, so hosts
that share a home folder do not overwrite each other), written atomically. It is used only while
its stored key equals the wanted one and it is under MAX_AGE_DAYS old: a new PyTorch, driver or
CPU is a new key, hence a new measurement. A file that cannot be read or parsed, or holds anything
but numbers, is a miss (the next measurement replaces it), never an error.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
import platform
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpuadvisor.core.paths import user_cache_dir
from gpuadvisor.core.provenance import cpu_name

SCHEMA = 1
MAX_AGE_DAYS = 30  # hosts drift (kernel, BIOS, governor) without a version to key on


@dataclass(frozen=True)
class Entry:
    figures: dict[str, float]
    measured_at: str  # ISO 8601, UTC
    path: Path

    @property
    def date(self) -> str:
        return self.measured_at[:10]


def host_key(**software: str | None) -> dict[str, str | None]:
    """What the figures depend on: this host (name, CPU, Python) and the software the caller names."""
    return {"hostname": socket.gethostname(), "cpu": cpu_name(), "python": platform.python_version(), **software}


def entry_path(name: str, key: dict[str, Any]) -> Path:
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]
    return user_cache_dir() / f"{name}-{digest}.json"


def _numbers(figures: Any) -> bool:
    return isinstance(figures, dict) and all(
        isinstance(k, str) and isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
        for k, v in figures.items())


def load(name: str, key: dict[str, Any], *, not_before: float | None = None) -> Entry | None:
    """The entry for `key`, or None: missing, unreadable, another key or schema, older than
    MAX_AGE_DAYS, or measured before `not_before` (a Unix time: --refresh-host passes the run's start)."""
    try:
        path = entry_path(name, key)
        doc = json.loads(path.read_text(encoding="utf-8"))
        measured = dt.datetime.fromisoformat(doc["measured_at"])
        if doc.get("schema") != SCHEMA or doc.get("key") != key or not _numbers(doc.get("figures")):
            return None
        when = measured.timestamp()  # a naive time is taken as local time
    except Exception:  # any damage to a cache file is a miss: it only costs a measurement
        return None
    now = dt.datetime.now(dt.timezone.utc).timestamp()
    if now - when > MAX_AGE_DAYS * 86400 or (not_before is not None and when < not_before):
        return None
    return Entry(figures=dict(doc["figures"]), measured_at=str(doc["measured_at"]), path=path)


def store(name: str, key: dict[str, Any], figures: dict[str, float]) -> str:
    """Write the entry (replacing whatever file was there); one line saying where, or why not."""
    from gpuadvisor.core.errors import UserError
    from gpuadvisor.core.fileio import atomic_write_text

    doc = {"schema": SCHEMA, "key": key, "figures": figures,
           "measured_at": dt.datetime.now(dt.timezone.utc).isoformat()}  # to the microsecond: vs not_before
    try:
        path = atomic_write_text(entry_path(name, key), json.dumps(doc, indent=2, sort_keys=True) + "\n", force=True)
    except (UserError, OSError, RuntimeError) as e:  # RuntimeError: no home folder to put ~/.cache in
        return f"not cached: {' '.join(str(e).split())}"
    return f"cached in {path}"
