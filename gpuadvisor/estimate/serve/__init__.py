"""Serving as engines run it: a discrete-event scheduler simulation (sim.py) over a per-iteration cost
(stepcost.py, a Protocol the op-graph cost model can implement later), engine profiles as data (profiles.py,
engines.json) and request lengths (lengths.py). api.py ties them together.

A deployment is laid out as `gpuadvisor.layout.Layout` (tp, pp, ep, replicas; checked by `check_serving_layout`).
Tensor parallelism splits every layer's GEMMs and KV heads and adds two all-reduces a layer (stepcost.py).
Pipeline parallelism splits the layers into pp stages and keeps pp micro-batches in flight, one scheduler each
with 1/pp of the replica's KV memory; a micro-batch's iteration runs through every stage with the sends between
them, and its period is the longer of that cycle and pp x the busiest stage (stepcost.py: the bubble, the stage
imbalance, the link). Speculative decoding (speculative.py) runs k draft steps and one verify over k + 1 tokens a
sequence per iteration, and each decoding sequence keeps the mean accepted length.
Expert parallelism (MoE) shards the experts like tensor
parallelism shards the dense layers here (its all-to-all is costed as the all-reduce of the same bytes).
Replicas (data parallel) split the request stream evenly."""
