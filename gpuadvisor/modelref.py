"""A model spec that names PyTorch code: `torchvision:NAME`, `timm:NAME`, `torchaudio:NAME`, `hf:DIR`
(a config.json, transformers or diffusers) or `path/to/file.py[:function]`. Parsing only, no torch:
the tracer (gpuadvisor/estimate/trace/zoo.py) builds the module."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

from gpuadvisor.core.errors import UserError

__all__ = ["DEFAULT_AUDIO_SAMPLES", "DEFAULT_TEXT_SEQ", "ModelRef", "Source", "Unit", "parse_input_shape", "parse_ref"]

_FILE_RE = re.compile(r"^(?P<path>.+\.py)(?::(?P<func>[A-Za-z_]\w*))?$")
DEFAULT_AUDIO_SAMPLES = 160_000  # 10 s at 16 kHz
DEFAULT_TEXT_SEQ = 512


class Source(str, Enum):
    """Where a traced model's code comes from."""

    TORCHVISION = "torchvision"
    TIMM = "timm"
    TORCHAUDIO = "torchaudio"
    HF = "hf"
    FILE = "file"


class Unit(str, Enum):
    """What one sample of the batch is, for throughput: images/s, samples/s or tokens/s."""

    IMAGES = "images"
    SAMPLES = "samples"
    TOKENS = "tokens"


_FILE_RE = re.compile(r"^(?P<path>.+\.py)(?::(?P<func>[A-Za-z_]\w*))?$")
DEFAULT_AUDIO_SAMPLES = 160_000  # 10 s at 16 kHz
DEFAULT_TEXT_SEQ = 512


@dataclass(frozen=True)
class ModelRef:
    """A parsed model spec: where the model comes from and its name (or path and function)."""

    source: Source
    name: str
    func: str = "build"

    @property
    def text(self) -> str:
        if self.source is Source.FILE:
            return f"{self.name}:{self.func}"
        return f"{self.source.value}:{self.name}"


def parse_ref(text: str) -> ModelRef | None:
    """The spec as a ModelRef, or None where the text names no traced model (a preset, a count)."""
    t = text.strip()
    m = _FILE_RE.match(t)
    if m:
        return ModelRef(Source.FILE, m.group("path"), m.group("func") or "build")
    head, sep, rest = t.partition(":")
    if sep and head.lower() in {s.value for s in Source if s is not Source.FILE}:
        if not rest.strip():
            raise UserError(f"model spec {t!r}: give a name after '{head}:'")
        return ModelRef(Source(head.lower()), rest.strip())
    return None


def parse_input_shape(text: str) -> tuple[int, ...]:
    """'3x224x224' -> (3, 224, 224); one line naming the problem otherwise."""
    parts = text.lower().replace(",", "x").split("x")
    try:
        dims = tuple(int(p) for p in parts if p.strip())
    except ValueError:
        raise UserError(f"--input {text!r}: give the per-sample shape as numbers joined by x, e.g. 3x224x224") from None
    if not dims or any(d < 1 for d in dims):
        raise UserError(f"--input {text!r}: every dimension must be a positive integer")
    return dims
