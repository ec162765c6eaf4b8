"""Writing a GPU micro-benchmark's rows with the environment they were measured in (device, driver, PyTorch, cuDNN,
date, and whatever the script adds: a dispatch probe), one JSON file the bench/ checks read."""

from __future__ import annotations

import argparse
import datetime
import json
import subprocess
from collections.abc import Callable, Iterable
from typing import Any


def driver() -> str | None:
    """The NVIDIA driver's version as nvidia-smi reports it; None where it cannot be read."""
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        return None
    return out[0] if out else None


def environment(**extra: Any) -> dict[str, Any]:
    """The run's environment: the device, its driver, PyTorch and cuDNN, what the script adds, and the date."""
    import torch

    return {"device": torch.cuda.get_device_name(), "driver": driver(), "torch": torch.__version__,
            "cudnn": torch.backends.cudnn.version(), **extra,
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}


def write_rows(path: str, rows: list[dict[str, Any]], **env: Any) -> None:
    with open(path, "w") as f:
        json.dump({"env": environment(**env), "rows": rows}, f, indent=1)


def bench_args(doc: str | None, seconds: float) -> argparse.Namespace:
    """A micro-benchmark's command line: --out (the JSON file of write_rows) and --seconds (how long each timing runs,
    default `seconds`), its description the first paragraph of the script's docstring."""
    ap = argparse.ArgumentParser(description=(doc or "").split("\n\n")[0] or None)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seconds", type=float, default=seconds)
    return ap.parse_args()


def measure_and_write(doc: str | None, calls: Iterable[Callable[[], dict[str, Any]]],
                      line: Callable[[dict[str, Any]], str]) -> None:
    """A sweep script's main: `--out FILE` from the command line; each call measured in turn, its `line` printed
    as it lands (a run cut short still shows what it measured), then every row written with the environment."""
    ap = argparse.ArgumentParser(description=(doc or "").splitlines()[0] if doc else None)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    rows = []
    for call in calls:
        rows.append(call())
        print(line(rows[-1]), flush=True)
    write_rows(args.out, rows)
