"""Calibration of the op cost model (opcost.py): every efficiency, factor and floor it uses, with where
it comes from. Fitted constants come from tests/data/models-h100.json (lab/measure_models.py on an H100)
using the calibration split only (lab/model_cases.py holds out every third model); tools/fit_opcost.py refits
them. Constants still marked "initial value" were set by hand and not fitted.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class OpConstant:
    name: str
    value: float
    unit: str
    meaning: str
    source: str
    method: str


OP_CONSTANTS: tuple[OpConstant, ...] = (
    OpConstant("kernel_floor_s", 2.5e-6, "s", "GPU time of the smallest kernel in an eager step (launch, ramp, tail)",
               "kernels.KERNEL_FLOOR_S (3.4 us in a CUDA graph, H100)", "assumption: a graph's floor less its gaps"),
    OpConstant("fp32_fma_eff", 0.75, "fraction", "fp32 CUDA-core GEMMs against the FMA peak",
               "compute.py's MoE fp32 SIMT experts (H100 profiles)", "measured directly"),
    OpConstant("conv_eff", 0.50, "fraction", "implicit-GEMM convolutions against the large-GEMM rate",
               "tests/data/models-h100.json", "grid fit with host_ops_per_aten_op and mem_bw_eff, calibration split"),
    OpConstant("nchw_transpose_passes", 1.0, "passes",
               "extra passes over a 16-bit NCHW conv's tensors (NHWC transposes)",
               "cuDNN runs 16-bit convolutions in NHWC", "assumption"),
    OpConstant("depthwise_bw_eff", 0.6, "fraction", "depthwise convolutions against streaming bandwidth",
               "lab/data/h100-models", "initial value, refit by tools/fit_opcost.py"),
    OpConstant("mem_bw_eff", 1.0, "fraction", "streaming ops (norms, elementwise, reductions) against the bandwidth "
               "large copies reach: a traced op counts each tensor once, its kernels pass over them several times",
               "tests/data/models-h100.json", "grid fit with conv_eff and host_ops_per_aten_op, calibration split"),
    OpConstant("gather_bw_eff", 0.5, "fraction", "gathers and scatters (embeddings, GNN messages) against bandwidth",
               "lab/data/h100-models", "initial value, refit by tools/fit_opcost.py"),
    OpConstant("rnn_step_floor_s", 25e-6, "s", "one time step of one cuDNN RNN layer, at the least",
               "tests/data/models-h100.json (lstm_classifier inference, b=32: 14.1 ms / (256 steps x 2 layers))",
               "measured directly on the calibration split"),
    OpConstant("workspace_bytes", 64 * 2**20, "bytes", "cuBLAS/cuDNN workspaces PyTorch allocates on the first "
               "matmul and convolution (counted by max_memory_allocated)",
               "tests/data/models-h100.json (mlp_mnist: 75 MB measured for 12 MB of weights)", "measured directly"),
    OpConstant("optimizer_params_per_launch", 2e7, "params", "parameters one fused-AdamW launch covers",
               "torch multi-tensor apply chunking", "assumption"),
    OpConstant("host_ops_per_aten_op", 2.5, "x HOST_OP_S", "host time of one traced aten op in eager PyTorch, "
               "in units of the dispatch probe's op time (module code, autograd and Python around it)",
               "tests/data/models-h100.json", "grid fit with conv_eff and mem_bw_eff, calibration split"),
)

OPS: dict[str, float] = {c.name: c.value for c in OP_CONSTANTS}
