"""Repack a Ray wheel into a small tarball of what `ray.init()` and tasks need, for machines
without network (the device bundle of lab/device/fleet.sh).

    python3 -m lab.repack_ray ray-2.60.0-cp312-cp312-manylinux2014_x86_64.whl -o .whl/ray-core-cp312.tar.xz

Drops the libraries built on Ray (data, train, tune, serve, rllib, llm, workflow), the Java
jars, the dashboard's web UI build, test folders and bytecode; strips debug symbols from the
native binaries (the raylet, the GCS server, _raylet.so). What remains is unpacked straight
into a site folder (tar -xJf ... -C /tmp/site). The same repacking is tested here on the wheel
for this machine's Python (see docs/fleet.md, "Device bundle").
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

DROP = ("jars", "rllib", "data", "tune", "train", "serve", "llm", "workflow", "dashboard/client")
BINARIES = ("_raylet.so", "core/src/ray/raylet/raylet", "core/src/ray/gcs/gcs_server")


def repack(wheel: Path, out: Path, strip: bool = True) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="repack-ray-") as tmp:
        root = Path(tmp)
        with zipfile.ZipFile(wheel) as z:
            z.extractall(root)
        ray = root / "ray"
        before = sum(f.stat().st_size for f in root.rglob("*") if f.is_file())
        for rel in DROP:
            shutil.rmtree(ray / rel, ignore_errors=True)
        for d in sorted(ray.rglob("*"), reverse=True):
            if d.is_dir() and d.name in ("tests", "__pycache__"):
                shutil.rmtree(d, ignore_errors=True)
        if strip and shutil.which("strip"):
            for rel in BINARIES:
                f = ray / rel
                if f.exists():
                    subprocess.run(["strip", "--strip-unneeded", str(f)], check=True)
        for f in ray.rglob("*"):  # the zip loses the executable bits of the binaries
            if f.is_file() and (f.suffix == ".so" or f.name in ("raylet", "gcs_server")):
                f.chmod(0o755)
        after = sum(f.stat().st_size for f in root.rglob("*") if f.is_file())
        out.parent.mkdir(parents=True, exist_ok=True)
        with tarfile.open(out, "w:xz", preset=9) as tar:
            for f in sorted(root.iterdir()):
                tar.add(f, arcname=f.name)
    return {"unpacked_mb_before": before / 2**20, "unpacked_mb_after": after / 2**20,
            "tarball_mb": out.stat().st_size / 2**20}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("wheel", type=Path)
    ap.add_argument("-o", "--out", type=Path, required=True)
    ap.add_argument("--no-strip", action="store_true")
    a = ap.parse_args()
    sizes = repack(a.wheel, a.out, strip=not a.no_strip)
    print(", ".join(f"{k} {v:.1f}" for k, v in sizes.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
