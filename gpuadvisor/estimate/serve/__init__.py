"""Serving as engines run it: a discrete-event scheduler simulation (sim.py) over a per-iteration cost
(stepcost.py, a Protocol the op-graph cost model can implement later), engine profiles as data (profiles.py,
engines.json) and request lengths (lengths.py). api.py ties them together.

A deployment is laid out as `gpuadvisor.layout.Layout` (tp, pp, ep, replicas; checked by `check_serving_layout`).
Tensor parallelism splits every layer's GEMMs and KV heads and adds two all-reduces a layer (stepcost.py).
Pipeline parallelism splits the layers into pp stages; with pp batches in flight the stages stay busy, so the
deployment behaves as pp interleaved schedulers, each with 1/pp of the KV memory of the group and an iteration
latency of pp x a stage's time plus the hand-offs. Expert parallelism (MoE) shards the experts like tensor
parallelism shards the dense layers here (its all-to-all is costed as the all-reduce of the same bytes).
Replicas (data parallel) split the request stream evenly."""
