"""What the device scripts of lab/device/ write: their rows beside the software that measured them."""

from __future__ import annotations

import json
from typing import Any

import torch


def save_rows(path: str, rows: list[dict[str, Any]], **versions: str) -> None:
    """`{"env": {device, torch, *versions, cudnn, cuda}, "rows": rows}` to `path` (`versions`: other libraries the
    script measured through, e.g. timm=timm.__version__)."""
    env = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, **versions,
           "cudnn": torch.backends.cudnn.version(), "cuda": torch.version.cuda}
    with open(path, "w") as f:
        json.dump({"env": env, "rows": rows}, f, indent=1)
