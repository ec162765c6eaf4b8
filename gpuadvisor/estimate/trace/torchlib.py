"""Importing PyTorch and its model libraries for tracing: one place that says what to install.

PyTorch is an extra: `[trace]` (your own nn.Module), `[trace-vision]` (torchvision and timm models),
`[trace-audio]` (torchaudio), `[trace-hf]` (transformers and diffusers); the base install answers for the
models shipped pre-traced (gpuadvisor/data/graphs/), and their frozen variants, without it. PyPI's
PyTorch is the CUDA build (gigabytes of CUDA libraries): where no NVIDIA driver is found, the install
hint takes the CPU build from PyTorch's own index first. Where only a CPU build of PyTorch is
installed, the CUDA build of torchvision on PyPI cannot load its C++ operators (NMS, RoI align) and
its import fails while registering their fake kernels; its models need none of them, so the import
is retried with that registration skipped.
"""

from __future__ import annotations

import importlib
import importlib.util
import shutil
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from gpuadvisor.core.errors import UserError
from gpuadvisor.core.install import package_requirement

CPU_TORCH = "pip install torch --index-url https://download.pytorch.org/whl/cpu"
#: the extra that brings each model library (and PyTorch with it)
LIBRARY_EXTRAS = {"torchvision": "trace-vision", "timm": "trace-vision", "torchaudio": "trace-audio",
                  "transformers": "trace-hf", "diffusers": "trace-hf"}


def nvidia_driver_present() -> bool:
    """Whether an NVIDIA driver is installed here (the CUDA build of PyTorch is then the one to take)."""
    return Path("/proc/driver/nvidia/version").is_file() or shutil.which("nvidia-smi") is not None


def install_command(extra: str = "trace", *, torch_installed: bool = False) -> str:
    """The exact command that installs what tracing needs: the extra (package_requirement), after PyTorch's CPU
    build where PyTorch is not installed and no NVIDIA driver is present."""
    pip_extra = f"pip install {package_requirement(extra)}"
    return pip_extra if torch_installed or nvidia_driver_present() else f"{CPU_TORCH} && {pip_extra}"


TRACE_EXTRA = install_command()  # the plain [trace] extra: your own nn.Module


def have_torch() -> bool:
    """Whether PyTorch is installed, found without importing it (that takes seconds, and a cached trace needs
    none); a broken install is told by import_torch when a trace runs."""
    if "torch" in sys.modules:  # imported already, or blocked (None: how the tests take PyTorch away)
        return sys.modules["torch"] is not None
    try:
        return importlib.util.find_spec("torch") is not None
    except (ImportError, ValueError):
        return False


def import_torch(extra: str = "trace") -> Any:
    """torch, or one line saying how to install it (with `extra`, the one for the model asked about)."""
    try:
        import torch
    except ImportError:
        raise UserError(f"tracing a model needs PyTorch, which is not installed: {install_command(extra)}") from None
    _import_torchvision_if_present(torch)
    return torch


def import_library(name: str, purpose: str) -> ModuleType:
    """A model library (torchvision, timm, torchaudio, transformers, diffusers), or one line naming the extra that
    brings it."""
    extra = LIBRARY_EXTRAS.get(name, "trace")
    import_torch(extra)
    try:
        return importlib.import_module(name)
    except ImportError as e:
        missing = e.name or name
        raise UserError(f"{purpose} needs the {name} package ({missing} is missing): "
                        f"{install_command(extra, torch_installed=True)}") from None


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
