"""Training at scale: layouts (data, tensor, pipeline, context, expert parallel; micro-batches and gradient
accumulation; ZeRO/FSDP sharding, frozen bases included; the `Layout` type and its checks are gpuadvisor.layout's),
framework profiles, step time and memory per GPU, and the layout search (bench/training.py checks them against
published training results). Built on the per-layer cost (`cost.StageCost`), which an op-graph cost can replace."""

from gpuadvisor.estimate.parallel.layout import Cluster
from gpuadvisor.estimate.parallel.profiles import DEFAULT_FRAMEWORK, Framework, framework, framework_names
from gpuadvisor.estimate.parallel.time import TrainingEstimate, estimate_training

__all__ = ["DEFAULT_FRAMEWORK", "Cluster", "Framework", "TrainingEstimate", "estimate_training", "framework",
           "framework_names"]
