"""Where a training layout runs (`Cluster`: GPUs per NVLink domain, the node network) and how it splits the layers
(`stage_layers`). The layout itself and the checks of its degrees are `gpuadvisor.layout`'s."""

from __future__ import annotations

from dataclasses import dataclass

from gpuadvisor.estimate import calibration as cal
from gpuadvisor.layout import Layout
from gpuadvisor.modelspec import ModelSpec


@dataclass(frozen=True)
class Cluster:
    """Where the GPUs sit: GPUs per NVLink domain and the node network per GPU (GB/s, one direction)."""

    gpus_per_node: int = 0  # 0: the default for the card (GPUS_PER_NODE, NVL72 racks for GB200/GB300)
    net_gbs_per_gpu: float = 0.0  # 0: NODE_NET_GBS_PER_GPU

    def domain(self, card_name: str) -> int:
        if self.gpus_per_node:
            return self.gpus_per_node
        if card_name.upper().startswith(("GB200", "GB300")):
            return int(cal.NVL72_DOMAIN)
        return int(cal.GPUS_PER_NODE)

    def net_bytes_s(self) -> float:
        return (self.net_gbs_per_gpu or cal.NODE_NET_GBS_PER_GPU) * 1e9 * cal.NET_EFFICIENCY


def stage_layers(m: ModelSpec, lay: Layout) -> float:
    """Transformer layers on the fullest pipeline stage: an even split, or whole layers per model chunk where the
    embedding and the loss take the place of one layer each (uneven split)."""
    chunks = lay.pp * lay.vp
    if m.num_layers % chunks == 0:
        return m.num_layers / lay.pp
    return float(-(-m.num_layers // chunks) * lay.vp)
