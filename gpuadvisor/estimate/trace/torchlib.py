"""Importing PyTorch and its model libraries for tracing: one place that says what to install.

PyTorch is an extra (`pip install "gpuadvisor[trace]"`): the base install answers for the models
shipped pre-traced (gpuadvisor/data/graphs/) without it. Where only a CPU build of PyTorch is
installed, the CUDA build of torchvision on PyPI cannot load its C++ operators (NMS, RoI align) and
its import fails while registering their fake kernels; its models need none of them, so the import
is retried with that registration skipped.
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType
from typing import Any

from gpuadvisor.core.errors import UserError

TRACE_EXTRA = 'pip install "gpuadvisor[trace]"'


def have_torch() -> bool:
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def import_torch() -> Any:
    """torch, or one line saying how to install it."""
    try:
        import torch
    except ImportError:
        raise UserError(f"tracing a model needs PyTorch, which is not installed: {TRACE_EXTRA}") from None
    _import_torchvision_if_present(torch)
    return torch


def import_library(name: str, purpose: str) -> ModuleType:
    """A model library (torchvision, timm, torchaudio, transformers, diffusers), or one line naming it."""
    import_torch()
    try:
        return importlib.import_module(name)
    except ImportError as e:
        missing = e.name or name
        raise UserError(f"{purpose} needs the {name} package ({missing} is missing): pip install {name}") from None


def _import_torchvision_if_present(torch: Any) -> None:
    """Import torchvision once, working around its failing operator registration (module docstring);
    transformers and timm import it too, so this runs before any of them."""
    if "torchvision" in sys.modules:
        return
    try:
        import torchvision
    except ImportError:
        return
    except RuntimeError:
        for key in [k for k in sys.modules if k == "torchvision" or k.startswith("torchvision.")]:
            del sys.modules[key]
        original = torch.library.register_fake
        torch.library.register_fake = lambda *a, **k: (lambda fn: fn)
        try:
            import torchvision  # noqa: F401
        except Exception:  # still broken: leave it out, a torchvision model spec will say so
            for key in [k for k in sys.modules if k == "torchvision" or k.startswith("torchvision.")]:
                del sys.modules[key]
        finally:
            torch.library.register_fake = original
