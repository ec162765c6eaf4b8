"""Parallel layouts of a serving deployment: tensor (tp), pipeline (pp) and expert (ep) parallelism and replicas.

Tensor parallelism splits every layer's GEMMs and KV heads and adds two all-reduces a layer (stepcost.py).
Pipeline parallelism splits the layers into pp stages; with pp batches in flight the stages stay busy, so the
deployment behaves as pp interleaved schedulers, each with 1/pp of the KV memory of the group and an iteration
latency of pp x a stage's time plus the hand-offs. Expert parallelism (MoE) shards the experts like tensor
parallelism shards the dense layers here (its all-to-all is costed as the all-reduce of the same bytes).
Replicas (data parallel) split the request stream evenly.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuadvisor.core.errors import UserError


@dataclass(frozen=True)
class Layout:
    tp: int = 1
    pp: int = 1
    ep: int = 1
    replicas: int = 1

    def validate(self, num_layers: int, num_heads: int) -> Layout:
        for k in ("tp", "pp", "ep", "replicas"):
            v = getattr(self, k)
            if not isinstance(v, int) or v < 1:
                raise UserError(f"--{k} must be a whole number >= 1, got {v!r}")
        if self.pp > num_layers:
            raise UserError(f"--pp {self.pp} is more than the model's {num_layers} layers")
        if num_heads % self.tp:
            raise UserError(f"--tp {self.tp} does not divide the model's {num_heads} attention heads")
        return self

    @property
    def gpus(self) -> int:
        return self.tp * self.pp * self.replicas

    def describe(self) -> str:
        parts = [f"TP{self.tp}"] + ([f"PP{self.pp}"] if self.pp > 1 else []) + ([f"EP{self.ep}"] if self.ep > 1 else [])
        return " x ".join(parts) + (f", {self.replicas} replicas" if self.replicas > 1 else "")
