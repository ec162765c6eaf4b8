"""GPU and host probes: small CUDA kernels and library calls that measure what a card delivers.

One probe per module; each exposes `NAME` and `run(ctx) -> ProbeResult` (helpers of a large probe
live beside it: collectives, p2p and topology serve interconnect; cublaslt serves tensor; hostcache
keeps what dispatch measures once per host). CuPy, PyTorch and NVML are imported lazily inside the
probes so that `import probes` works on a machine without a GPU.
"""

ALL_PROBES = ("properties", "memory_bandwidth", "transfer", "flops", "tensor", "health", "host", "crossover",
              "dispatch", "conv", "elementwise", "interconnect")
GPU_PROBES = ("properties", "memory_bandwidth", "transfer", "flops", "tensor", "crossover", "dispatch", "conv",
              "elementwise", "health")
FULL_ONLY = ("conv", "elementwise")  # --quick runs them only when --only names them (PyTorch: seconds to start)
# probes that import PyTorch, per mode (the runner loads it in the background for them); --quick's dispatch
# probe needs it only where the host cache lacks its single-op figures, and imports it itself then
TORCH_PROBES = {"quick": ("conv", "elementwise"),
                "full": ("transfer", "tensor", "dispatch", "conv", "elementwise")}
HOST_PROBES = ("host",)
NODE_PROBES = ("interconnect",)  # once per run, over every selected GPU
LOAD_PROBES = ("flops", "tensor")  # clocks and throttling are sampled while these run (health probe)
