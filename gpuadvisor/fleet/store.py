"""The fleet folder: nodes/<node>.json (one RunResult each) and summary.json, written atomically.

Each node's file is written the moment its result arrives and the summary is rewritten after
every change, so a driver stopped mid-run still leaves every result it had received.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from pydantic import ValidationError

from gpuadvisor.core import results
from gpuadvisor.core.errors import UserError
from gpuadvisor.core.fileio import atomic_write_text, load_json
from gpuadvisor.core.results import RunResult
from gpuadvisor.fleet.model import FLEET_SCHEMA_VERSION, Fleet, FleetSummary, NodeEntry

SUMMARY = "summary.json"
NODES_DIR = "nodes"


def prepare_folder(path: str | os.PathLike[str], *, force: bool = False) -> Path:
    """An empty (or --force'd) folder for a new fleet run; fails before anything is probed."""
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise UserError(f"--out must be a folder, and {p} is a file")
    if p.is_dir() and any(p.iterdir()) and not force:
        raise UserError(f"{p} is not empty; pass --force to write into it (its node files are replaced)")
    try:
        (p / NODES_DIR).mkdir(parents=True, exist_ok=True)
        probe = p / ".gpuadvisor-write-check"
        probe.write_text("")
        probe.unlink()
    except PermissionError:
        raise UserError(f"cannot write to {p}: permission denied") from None
    except OSError as e:
        raise UserError(f"cannot write to {p}: {e.strerror or e}") from None
    return p


def node_file(name: str) -> str:
    """A file name for a node label: safe characters only, relative to the fleet folder."""
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-.") or "node"
    return f"{NODES_DIR}/{slug}.json"


def write_node(folder: Path, entry: NodeEntry, result: RunResult) -> str:
    rel = node_file(entry.name)
    results.save(result, folder / rel, force=True)
    return rel


def write_summary(folder: Path, summary: FleetSummary) -> Path:
    return atomic_write_text(folder / SUMMARY, summary.model_dump_json(indent=2) + "\n", force=True)


def load(path: str | os.PathLike[str]) -> Fleet:
    """Read a fleet folder; a node file that is missing or unreadable is a one-line UserError."""
    p = Path(path)
    if not p.is_dir():
        raise UserError(f"not a fleet folder (no such directory): {p}")
    if not (p / SUMMARY).is_file():
        raise UserError(f"not a fleet folder: {p} has no {SUMMARY} (write one with 'gpuadvisor fleet probe --out')")
    data = load_json(p / SUMMARY, "fleet summary")
    if isinstance(data, dict) and data.get("schema_version", FLEET_SCHEMA_VERSION) != FLEET_SCHEMA_VERSION:
        raise UserError(f"{p / SUMMARY}: fleet schema version {data.get('schema_version')!r} is not supported")
    try:
        summary = FleetSummary.model_validate(data)
    except ValidationError as err:
        e = err.errors()[0]
        where = ".".join(str(x) for x in e["loc"]) or "(top level)"
        raise UserError(f"{p / SUMMARY}: not a fleet summary: {where}: {e['msg']}") from None
    fleet = Fleet(summary)
    for node in summary.nodes:
        if node.file:
            f = (p / node.file).resolve()
            if p.resolve() not in f.parents:
                raise UserError(f"{p / SUMMARY}: node {node.name}: file {node.file!r} is outside the folder")
            fleet.results[node.name] = results.load(f)
    return fleet
