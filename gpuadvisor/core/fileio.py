"""Reading user files with one-line errors, and writing outputs atomically.

Outputs go to a temporary file in the same folder and are renamed into place, so a crash or
Ctrl-C never leaves a half-written file, and an existing file is never replaced by a different
one unless the caller passes force=True.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from gpuadvisor.core.errors import UserError


def read_text(path: str | os.PathLike[str], what: str = "file") -> str:
    p = Path(path)
    try:
        return p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError(f"{what} not found: {p}") from None
    except IsADirectoryError:
        raise UserError(f"{what} is a directory, not a file: {p}") from None
    except PermissionError:
        raise UserError(f"cannot read {what} {p}: permission denied") from None
    except UnicodeDecodeError:
        raise UserError(f"{what} {p} is not UTF-8 text") from None
    except OSError as e:
        raise UserError(f"cannot read {what} {p}: {e.strerror or e}") from None


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def load_yaml(path: str | os.PathLike[str], what: str = "YAML file") -> Any:
    import yaml  # here, not at the top: a cold `recommend` reads the catalog from its cache, without YAML

    text = read_text(path, what)
    # the C loader is several times faster; both are safe loaders (no arbitrary Python objects)
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        return yaml.load(text, Loader=loader)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" line {mark.line + 1} column {mark.column + 1}" if mark else ""
        problem = getattr(e, "problem", None) or str(e)
        raise UserError(f"{path}:{where}: YAML syntax error: {_one_line(problem)}") from None


def load_json(path: str | os.PathLike[str], what: str = "JSON file") -> Any:
    text = read_text(path, what)
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise UserError(f"{path}: line {e.lineno} column {e.colno}: invalid JSON: {e.msg}") from None
    except RecursionError:
        raise UserError(f"{path}: invalid JSON: nested too deeply") from None


def _file_mode(path: Path) -> int:
    if path.exists():
        return path.stat().st_mode & 0o7777
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def ensure_writable(path: str | os.PathLike[str], *, force: bool = False) -> Path:
    """Fail before a long job, not after it: the output must be creatable and not clobber a file."""
    p = Path(path)
    if p.is_dir():
        raise UserError(f"output path is a directory: {p}")
    if p.exists() and not force:
        raise UserError(f"{p} exists; pass --force to overwrite it")
    parent = p.parent if str(p.parent) else Path(".")
    try:
        parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".check", dir=parent)
        os.close(fd)
        os.unlink(tmp)
    except PermissionError:
        raise UserError(f"cannot write to {parent}: permission denied") from None
    except OSError as e:
        raise UserError(f"cannot write to {parent}: {e.strerror or e}") from None
    return p


def atomic_write_text(path: str | os.PathLike[str], text: str, *, force: bool = False) -> Path:
    """Write text to path atomically; refuse to replace a different existing file without force."""
    return atomic_write_bytes(path, text.encode("utf-8"), force=force)


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes, *, force: bool = False) -> Path:
    """Write bytes to path atomically (a temporary file renamed over it, so a reader never sees half a
    file); refuse to replace a different existing file without force."""
    p = Path(path)
    if p.is_dir():
        raise UserError(f"output path is a directory: {p}")
    if p.exists() and not force:
        try:
            same = p.read_bytes() == data
        except OSError:
            same = False
        if not same:
            raise UserError(f"{p} exists; pass --force to overwrite it")
        return p
    parent = p.parent if str(p.parent) else Path(".")
    try:
        parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=parent)
    except PermissionError:
        raise UserError(f"cannot write to {parent}: permission denied") from None
    except OSError as e:
        raise UserError(f"cannot write to {parent}: {e.strerror or e}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        # mkstemp makes 0600 files: give the output the mode a plain open() would have
        os.chmod(tmp, _file_mode(p))
        os.replace(tmp, p)
    except BaseException as e:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(e, OSError):
            raise UserError(f"cannot write {p}: {e.strerror or e}") from None
        raise
    return p
