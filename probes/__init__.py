"""GPU and host probes: small CUDA kernels and library calls that measure what a card delivers.

One probe per module; each exposes `NAME` and `run(ctx) -> ProbeResult` (helpers of a large probe
live beside it: collectives, p2p and topology serve interconnect; cublaslt serves tensor; hostcache
keeps what dispatch measures once per host). CuPy, PyTorch and NVML are imported lazily inside the
probes so that `import probes` works on a machine without a GPU.
"""

ALL_PROBES = ("properties", "memory_bandwidth", "transfer", "flops", "tensor", "health", "host", "crossover",
              "dispatch", "interconnect")
GPU_PROBES = ("properties", "memory_bandwidth", "transfer", "flops", "tensor", "crossover", "dispatch", "health")
HOST_PROBES = ("host",)
NODE_PROBES = ("interconnect",)  # once per run, over every selected GPU
LOAD_PROBES = ("flops", "tensor")  # clocks and throttling are sampled while these run (health probe)
