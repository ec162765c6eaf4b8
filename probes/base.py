"""What a probe gets (ProbeContext) and small helpers to build its result."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from gpuadvisor.core.results import Measurement
from probes.timing import Deadline, ProbeSkipped

_PRELOAD: dict[str, threading.Thread] = {}


_MODULES: dict[tuple[str, int | None], Any] = {}


def compiled(cp: Any, key: str, code: str, names: tuple[str, ...], options: tuple[str, ...] = ()) -> dict[str, Any]:
    """Compile (once per device and process) a CUDA source with CuPy; returns its kernels by name."""
    dev = cp.cuda.runtime.getDevice()
    cache_key = (key, dev)
    if cache_key not in _MODULES:
        mod = cp.RawModule(code=code, options=options)
        _MODULES[cache_key] = {n: mod.get_function(n) for n in names}
    return _MODULES[cache_key]


def wait_for_torch() -> None:
    if "torch" in _PRELOAD:
        _PRELOAD["torch"].join()


def cuda_torch(ctx: ProbeContext) -> Any:
    """PyTorch with CUDA for a probe that measures through it (cuDNN convolutions, streaming ops): the GPU
    selected, the background import finished; ProbeSkipped, saying why, where there is none."""
    ctx.gpu()
    wait_for_torch()
    torch = ctx.torch()
    if torch is None:
        raise ProbeSkipped(f"needs PyTorch with CUDA: {ctx.torch_reason}")
    return torch


def preload_torch() -> None:
    """Start importing PyTorch in the background (it takes seconds) while other probes run."""
    if "torch" in _PRELOAD:
        return

    def work() -> None:
        with contextlib.suppress(Exception):
            import torch  # noqa: F401

    t = threading.Thread(target=work, name="gpuadvisor-torch-import", daemon=True)
    _PRELOAD["torch"] = t
    t.start()


@dataclass
class ProbeContext:
    mode: str = "quick"  # "quick" or "full"
    deadline: Deadline = field(default_factory=lambda: Deadline(None))
    device_index: int | None = None
    cp: Any = None  # the cupy module, or None where there is no usable GPU
    props: dict[str, Any] = field(default_factory=dict)  # from probes.properties.collect
    card: Any = None  # gpuadvisor.catalog.Card matched to the device, or None
    log: Callable[[str], None] = lambda msg: None
    use_torch: bool = True
    options: dict[str, Any] = field(default_factory=dict)  # per-probe overrides (tests, sizes)
    devices: list[int] = field(default_factory=list)  # node probes: every GPU index in the run
    nvml: Any = None  # the pynvml module where NVML works (node and health probes)
    _torch: Any = None
    _torch_reason: str | None = None

    def gpu(self) -> Any:
        """The cupy module, or ProbeSkipped: a GPU probe on a machine without one is skipped, not failed."""
        if self.cp is None:
            raise ProbeSkipped("no usable GPU")
        return self.cp

    @property
    def quick(self) -> bool:
        return self.mode != "full"

    def torch(self) -> Any:
        """PyTorch with CUDA for same-run references, or None (reason in torch_reason)."""
        if self._torch is not None or self._torch_reason is not None:
            return self._torch
        if not self.use_torch:
            self._torch_reason = "PyTorch references disabled"
            return None
        try:
            import torch

            if not torch.cuda.is_available():
                self._torch_reason = "PyTorch sees no CUDA device"
                return None
            if self.device_index is not None:
                torch.cuda.set_device(self.device_index)
            self._torch = torch
        except Exception as e:  # ImportError, or a broken install
            self._torch_reason = f"PyTorch not usable: {type(e).__name__}: {e}"
        return self._torch

    @property
    def torch_reason(self) -> str | None:
        return self._torch_reason

    def free_pools(self) -> None:
        if self.cp is not None:
            with contextlib.suppress(Exception):
                self.cp.get_default_memory_pool().free_all_blocks()
                self.cp.get_default_pinned_memory_pool().free_all_blocks()
        if self._torch is not None:
            with contextlib.suppress(Exception):
                self._torch.cuda.empty_cache()


def datasheet_for(card_value: float | None, theoretical: float | None, how: str) -> tuple[float | None, str | None]:
    """The catalog figure where there is one, else the theoretical one with how it was computed."""
    if card_value:
        return float(card_value), "catalog"
    if theoretical:
        return float(theoretical), f"theoretical: {how}"
    return None, None


def measurement(
    key: str,
    label: str,
    value: float | None,
    unit: str,
    *,
    spread: float | None = None,
    datasheet: tuple[float | None, str | None] = (None, None),
    reference: float | None = None,
    reference_label: str | None = None,
    **details: Any,
) -> Measurement:
    return Measurement(
        key=key,
        label=label,
        value=None if value is None else float(value),
        unit=unit,
        spread=spread,
        datasheet=datasheet[0],
        datasheet_source=datasheet[1],
        reference=None if reference is None else float(reference),
        reference_label=reference_label if reference is not None else None,
        details=details,
    )
