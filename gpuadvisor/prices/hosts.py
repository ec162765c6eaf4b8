"""GPUs priced apart from their host VM (GCP lists `InstanceType` empty, `AcceleratorName` set):
host VMs of a family with fixed GPUs get VM + GPU prices per zone, so an a3-highgpu-8g offer is
what it costs; GPU rows that no host VM used stay alone, with a note that the host is billed on top.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from gpuadvisor.prices.model import Anomaly
from gpuadvisor.prices.skypilot import Row

_COUNT_IN_NAME = re.compile(r"-(\d+)g(?:-|$)")
GPU_ONLY_NOTE = "GPU only: the provider bills a host VM on top of this price"


def attached_name(count: float | None, accelerator: str) -> str:
    """The shape name of GPU-only rows: '8x H100 (attached)'."""
    return f"{count or 0:g}x {accelerator} (attached)"


@dataclass
class Joined:
    """What the host join did: rows ready to group, notes per shape, and the accounting."""

    rows: list[tuple[Row, str]] = field(default_factory=list)
    joined: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))  # GPU shape -> host VMs
    anomalies: list[Anomaly] = field(default_factory=list)


def with_hosts(rows: list[Row], families: dict[str, str], counts: dict[str, int],
               is_gpu: Callable[[str], bool] = lambda _: True) -> Joined:
    """Join GPU-only rows to the host VMs of `families` (instance-type prefix -> accelerator name);
    a host's GPU count is `counts[instance type]` or the `-Ng` in its name (a2-highgpu-4g: 4)."""
    out = Joined()
    gpu_rows = [r for r in rows if not r.instance_type]
    if not gpu_rows:
        out.rows = [(r, "") for r in rows]
        return out
    index = {(r.accelerator, r.count, r.region, r.zone): r for r in gpu_rows}
    used: set[tuple[str, float | None]] = set()
    sums: dict[str, tuple[float, float, float, str]] = {}
    free: set[str] = set()
    for r in rows:
        if not r.instance_type or r.accelerator:
            continue
        acc = next((a for prefix, a in sorted(families.items(), key=lambda kv: -len(kv[0]))
                    if r.instance_type.startswith(prefix)), None)
        n = counts.get(r.instance_type)
        if n is None:
            m = _COUNT_IN_NAME.search(r.instance_type)
            n = int(m.group(1)) if m else None
        if acc is None or n is None:
            continue
        gpu = index.get((acc, float(n), r.region, r.zone))
        if gpu is None:
            continue
        used.add((acc, gpu.count))
        out.joined[attached_name(gpu.count, acc)].add(r.instance_type)
        total = _add(r.price, gpu.price)
        if total is not None and (r.instance_type not in sums or total < sums[r.instance_type][2]):
            sums[r.instance_type] = (r.price or 0.0, gpu.price or 0.0, total, r.region)
        if r.price is None and gpu.price is not None:
            free.add(r.instance_type)
        out.rows.append((replace(r, accelerator=acc, count=gpu.count, price=total, spot=_add(r.spot, gpu.spot),
                                 gpu_info=gpu.gpu_info), ""))
    for host, (vm, gpus, total, region) in sorted(sums.items()):
        zero = " (the VM is listed at 0 or without a price: the GPU rows carry it)" if host in free else ""
        out.anomalies.append(Anomaly(
            "host_vm_added", rows[0].provider, host, region,
            f"VM {vm:.4f} + GPUs {gpus:.4f} = {total:.4f} USD/h (cheapest zone){zero}",
            "offer priced as host VM + GPUs in every zone where both are listed"))
    alone: dict[tuple[str, float | None], list[Row]] = defaultdict(list)
    for r in gpu_rows:
        if (r.accelerator, r.count) not in used:
            alone[(r.accelerator, r.count)].append(r)
    fixed = set(families.values())
    for (acc, count), group in sorted(alone.items(), key=lambda kv: (kv[0][0], kv[0][1] or 0)):
        name = attached_name(count, acc)
        why = ("its host VM family is fixed but no host VM with this count is listed" if acc in fixed
               else "attaches to general-purpose VMs of any size")
        if is_gpu(acc):  # a TPU slice is reported as not a GPU instead
            out.anomalies.append(Anomaly("gpu_only", group[0].provider, name, "", f"{len(group)} rows; {why}",
                                         "listed alone, with a note that the host VM is billed on top"))
        out.rows.extend((replace(r, instance_type=name), GPU_ONLY_NOTE) for r in group)
    out.rows.extend((r, "") for r in rows if r.instance_type and r.accelerator)
    return out


def _add(vm: float | None, gpus: float | None) -> float | None:
    """VM + GPUs; a VM without a price (GCP lists a4-highgpu-8g at 0) adds nothing, since its GPU
    rows then carry the whole price; no GPU price, no offer."""
    return None if gpus is None else round((vm or 0.0) + gpus, 6)
