"""The raw rows behind the shipped snapshot, committed in catalog/prices/raw/: one gzip-compressed
SkyPilot `vms.csv` per provider (`<provider>.csv.gz`, byte for byte the rows that were read) and
`SOURCES.tsv`, one line per provider: provider, path in skypilot-org/skypilot-catalog, commit,
what was read, date read, rows, sha256 of the uncompressed text, the date of the commit and the
public record that date comes from. The commit date is `YYYY-MM-DD` where known exactly, `after
YYYY-MM-DD` where a public record shows the file could not have been committed before that day (a
pull request that proposed its catalog folder or provider), or `unknown`; an old file without the
columns reads as unknown. tools/build_prices.py rebuilds
rental.json from these alone (offline, deterministically); tests count shapes against them.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
from dataclasses import dataclass
from pathlib import Path

from gpuadvisor.core.errors import UserError

SOURCES = "SOURCES.tsv"
COLUMNS = ("provider", "path", "commit", "coverage", "read", "rows", "sha256", "committed", "committed_source")


@dataclass(frozen=True)
class RawFile:
    provider: str
    path: str  # in the SkyPilot catalog repository
    commit: str
    coverage: str
    read: str  # YYYY-MM-DD
    rows: int
    sha256: str
    committed: str = "unknown"  # YYYY-MM-DD of the commit, 'after YYYY-MM-DD' (a lower bound), or unknown
    committed_source: str = ""  # the public record the commit date comes from (URL and what it says)

    def file_entry(self) -> dict[str, str]:
        """The snapshot's `source.files` entry."""
        return {"provider": self.provider, "path": self.path, "commit": self.commit, "read": self.read,
                "coverage": self.coverage, "rows": str(self.rows), "sha256": self.sha256,
                "committed": self.committed, "committed_source": self.committed_source}


def default_dir() -> Path:
    from gpuadvisor.core.paths import shipped_catalog_dir

    return shipped_catalog_dir() / "prices" / "raw"


def read_sources(folder: str | os.PathLike[str]) -> list[RawFile]:
    """SOURCES.tsv of a raw folder; one UserError line naming the row on a bad one."""
    from gpuadvisor.core.fileio import read_text

    path = Path(folder) / SOURCES
    out = []
    for n, line in enumerate(read_text(path, "raw price sources").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split("\t")
        if not len(COLUMNS) - 2 <= len(parts) <= len(COLUMNS):
            raise UserError(f"{path}:{n}: expected {len(COLUMNS)} tab-separated fields ({', '.join(COLUMNS)})")
        committed = (parts[7].strip() if len(parts) > 7 else "") or "unknown"
        if not is_commit_date(committed):
            raise UserError(f"{path}:{n}: committed must be YYYY-MM-DD, 'after YYYY-MM-DD' or unknown, "
                            f"not {committed!r}")
        try:
            out.append(RawFile(parts[0], parts[1], parts[2], parts[3], parts[4], int(parts[5]), parts[6],
                               committed, parts[8].strip() if len(parts) > 8 else ""))
        except ValueError:
            raise UserError(f"{path}:{n}: rows must be a whole number, not {parts[5]!r}") from None
    return out


def is_commit_date(text: str) -> bool:
    """`YYYY-MM-DD`, `after YYYY-MM-DD` or `unknown`: the forms the committed column takes."""
    import re

    return text == "unknown" or re.fullmatch(r"(after )?\d{4}-\d\d-\d\d", text) is not None


def raw_text(folder: str | os.PathLike[str], entry: RawFile) -> str:
    """The uncompressed CSV of one provider, checked against its recorded sha256."""
    path = Path(folder) / f"{entry.provider}.csv.gz"
    try:
        data = gzip.decompress(path.read_bytes())
    except (OSError, EOFError, gzip.BadGzipFile) as e:
        raise UserError(f"{path}: cannot read the raw rows: {e}") from None
    if hashlib.sha256(data).hexdigest() != entry.sha256:
        raise UserError(f"{path}: contents differ from the sha256 in {SOURCES}; re-import the raw rows")
    return data.decode("utf-8")


def compress(data: bytes) -> bytes:
    """gzip with no name and no timestamp, so the same rows always make the same bytes."""
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, compresslevel=9, mtime=0) as f:
        f.write(data)
    return buf.getvalue()


def write_sources(folder: str | os.PathLike[str], entries: list[RawFile]) -> None:
    from gpuadvisor.core.fileio import atomic_write_text

    lines = ["# " + "\t".join(COLUMNS)]
    lines += ["\t".join([e.provider, e.path, e.commit, e.coverage, e.read, str(e.rows), e.sha256, e.committed,
                         e.committed_source])
              for e in sorted(entries, key=lambda e: e.provider)]
    atomic_write_text(Path(folder) / SOURCES, "\n".join(lines) + "\n", force=True)


def import_folder(src: str | os.PathLike[str], dest: str | os.PathLike[str], date: str,
                  only: list[str] | None = None) -> list[RawFile]:
    """Copy `src/<provider>/vms.csv` (+ its SOURCE.tsv: provider, path, commit, coverage[, commit
    date]) for every
    provider folder holding a DONE file into `dest`, compressed; other providers in `dest` stay."""
    s, d = Path(src), Path(dest)
    d.mkdir(parents=True, exist_ok=True)
    kept = {e.provider: e for e in (read_sources(d) if (d / SOURCES).is_file() else [])}
    for folder in sorted(p for p in s.iterdir() if (p / "DONE").is_file() and (p / "vms.csv").is_file()):
        if only and folder.name not in only:
            continue
        src_line = (folder / "SOURCE.tsv").read_text().strip().split("\t")
        if len(src_line) < 4:
            raise UserError(f"{folder / 'SOURCE.tsv'}: expected provider, path, commit, coverage")
        path = src_line[1].split(":", 1)[-1] if ":" in src_line[1] else src_line[1]  # 'owner/repo:path' -> path
        data = (folder / "vms.csv").read_bytes()
        rows = max(0, sum(1 for line in data.decode("utf-8").splitlines() if line.strip()) - 1)
        (d / f"{folder.name}.csv.gz").write_bytes(compress(data))
        kept[folder.name] = RawFile(folder.name, path, src_line[2], " ".join(src_line[3].split()), date, rows,
                                    hashlib.sha256(data).hexdigest(),
                                    src_line[4].strip() if len(src_line) > 4 and src_line[4].strip() else "unknown")
    write_sources(d, list(kept.values()))
    return sorted(kept.values(), key=lambda e: e.provider)
