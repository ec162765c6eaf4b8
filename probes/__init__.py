"""GPU and host probes: small CUDA kernels and library calls that measure what a card delivers.

One probe per module; each exposes `NAME` and `run(ctx) -> ProbeResult`. CuPy, PyTorch and NVML
are imported lazily inside the probes so that `import probes` works on a machine without a GPU.
"""

ALL_PROBES = ("properties", "memory_bandwidth", "transfer", "flops", "tensor", "host", "crossover")
GPU_PROBES = ("properties", "memory_bandwidth", "transfer", "flops", "tensor", "crossover")
HOST_PROBES = ("host",)
