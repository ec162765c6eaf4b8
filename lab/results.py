"""Writing a GPU micro-benchmark's rows with the environment they were measured in (device, PyTorch, cuDNN, date,
and whatever the script adds: a dispatch probe), one JSON file the bench/ checks read."""

from __future__ import annotations

import datetime
import json
from typing import Any


def write_rows(path: str, rows: list[dict[str, Any]], **env: Any) -> None:
    import torch

    env = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "cudnn": torch.backends.cudnn.version(),
           **env, "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}
    with open(path, "w") as f:
        json.dump({"env": env, "rows": rows}, f, indent=1)
