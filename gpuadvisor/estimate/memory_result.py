"""What a memory estimate says: `MemoryBreakdown`, item by item, shared by the transformer path
(memory.py) and the op-graph path (graph_estimate.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

GiB = 2**30
__all__ = ["ITEMS", "NOT_TENSORS", "GiB", "MemoryBreakdown"]


#: memory item names, in display order (every MemoryBreakdown has all of them, zeros included)
ITEMS = (
    "weights",
    "autocast weight copies",
    "gradients",
    "optimizer states",
    "optimizer step temporaries",
    "LoRA adapters",
    "activations",
    "logits and loss",
    "KV cache",
    "allocator overhead",
    "CUDA context",
)
NOT_TENSORS = ("allocator overhead", "CUDA context")


@dataclass(frozen=True)
class MemoryBreakdown:
    """Peak bytes per GPU, item by item (`ITEMS` order, zeros kept); `total` is their sum."""

    items: tuple[tuple[str, float], ...]
    phase: str  # "inference", "forward/backward", "optimizer step"
    notes: tuple[str, ...] = ()

    @property
    def total(self) -> float:
        return float(sum(v for _, v in self.items))

    @property
    def tensors(self) -> float:
        """What torch.cuda.max_memory_allocated would report: total less context and fragmentation."""
        return float(sum(v for k, v in self.items if k not in NOT_TENSORS))

    def get(self, name: str) -> float:
        return next((v for k, v in self.items if k == name), 0.0)

    def as_dict(self) -> dict[str, float]:
        return dict(self.items)

    @property
    def total_gib(self) -> float:
        return self.total / GiB

    def to_dict(self) -> dict[str, Any]:
        return {
            "total_bytes": self.total,
            "total_gib": round(self.total_gib, 3),
            "tensor_bytes": self.tensors,
            "phase": self.phase,
            "items": {k: v for k, v in self.items},
            "notes": list(self.notes),
        }
