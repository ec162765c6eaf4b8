"""Training at scale: layouts (data, tensor, pipeline, context, expert parallel; micro-batches and gradient
accumulation; ZeRO/FSDP sharding, frozen bases included), framework profiles, step time and memory per GPU, and
the layout search (bench/training.py checks them against published training results). Built on the per-layer
cost (`cost.StageCost`), which an op-graph cost can replace."""

from gpuadvisor.estimate.parallel.layout import Checkpointing, Cluster, Layout, check_layout
from gpuadvisor.estimate.parallel.profiles import DEFAULT_FRAMEWORK, Framework, framework, framework_names
from gpuadvisor.estimate.parallel.time import TrainingEstimate, estimate_training

__all__ = ["DEFAULT_FRAMEWORK", "Checkpointing", "Cluster", "Framework", "Layout", "TrainingEstimate",
           "check_layout", "estimate_training", "framework", "framework_names"]
