"""What pip takes to add an extra to this install of gpuadvisor: the one place the install hints (tracing's
PyTorch extras, the probes' CuPy extras) get the package's requirement from."""

from __future__ import annotations

import json
from urllib.parse import unquote, urlparse


def package_requirement(extra: str) -> str:
    """What pip takes to add `extra` to this install of gpuadvisor: the folder it was installed from (the README
    installs a clone, and the name alone is looked up on PyPI), editable where it was; else the name."""
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        text = distribution("gpuadvisor").read_text("direct_url.json")
    except PackageNotFoundError:
        text = None
    try:
        origin = json.loads(text) if text else {}
    except ValueError:
        origin = {}
    url = str(origin.get("url", ""))
    if not url.startswith("file://"):
        return f'"gpuadvisor[{extra}]"'
    folder = unquote(urlparse(url).path)
    editable = bool((origin.get("dir_info") or {}).get("editable"))
    return f'{"-e " if editable else ""}"{folder}[{extra}]"'
