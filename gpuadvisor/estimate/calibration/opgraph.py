"""The op cost model's constants (opcost.py, graph_estimate.py): efficiencies per op class, floors and the
host's time per traced op. Fitted ones come from tests/data/models-h100.json (lab/measure_models.py on an
H100), calibration split only: lab/model_cases.py holds out every third model."""

from __future__ import annotations

from gpuadvisor.estimate.calibration.record import Constant, Method

MODELS = "tests/data/models-h100.json"
GRID = ("grid search with the other two of CONV_EFF, STREAM_BW_EFF and HOST_OPS_PER_ATEN_OP over the calibration "
        "split's step times, least mean |log(estimate / measured)| (gpuadvisor.validation.fit_op_constants)")

CONSTANTS = (
    Constant("OP_KERNEL_FLOOR_S", 2.5e-6, "s", "GPU time of the smallest kernel of an eager step (launch, ramp, tail)",
             "gpu.KERNEL_FLOOR_S (3.4 us inside a CUDA graph, H100)", Method.ASSUMPTION,
             "a graph's floor less its gaps; not measured on its own"),
    Constant("CONV_EFF", 0.5, "fraction", "implicit-GEMM convolutions against the large-GEMM rate", MODELS,
             Method.FITTED, GRID),
    Constant("NCHW_TRANSPOSE_PASSES", 1.0, "passes", "extra passes over a 16-bit NCHW convolution's tensors "
             "(cuDNN runs 16-bit convolutions in NHWC and transposes around them)", "-", Method.ASSUMPTION,
             "not measured: every validation CNN runs channels-last"),
    Constant("DEPTHWISE_BW_EFF", 0.6, "fraction", "depthwise convolutions against streaming bandwidth", "-",
             Method.ASSUMPTION, "set by hand, not fitted"),
    Constant("STREAM_BW_EFF", 1.0, "fraction", "streaming ops (norms, elementwise, reductions) against the "
             "bandwidth large copies reach: a traced op counts each tensor once", MODELS, Method.FITTED, GRID),
    Constant("GATHER_BW_EFF", 0.5, "fraction", "gathers and scatters (embeddings, GNN messages) against streaming "
             "bandwidth", "-", Method.ASSUMPTION, "set by hand, not fitted"),
    Constant("RNN_STEP_FLOOR_S", 25e-6, "s", "one time step of one cuDNN RNN layer, at the least", MODELS,
             Method.ASSUMPTION, "set by hand near the LSTM classifier's inference at batch 32 (14.1 ms over 256 "
             "steps x 2 layers = 27.6 us); not fitted"),
    Constant("OPTIMIZER_PARAMS_PER_LAUNCH", 2e7, "params", "parameters one fused-AdamW launch covers", "-",
             Method.ASSUMPTION, "PyTorch's multi-tensor apply chunking, not measured"),
    Constant("HOST_OPS_PER_ATEN_OP", 2.5, "x HOST_OP_S", "host time of one traced aten op of an eager step, in units "
             "of the dispatch probe's op time (module code, autograd and Python around it)", MODELS,
             Method.FITTED, GRID),
    Constant("WORKSPACE_BYTES", 64 * 2**20, "bytes", "cuBLAS and cuDNN workspaces PyTorch allocates on the first "
             "matmul and convolution (max_memory_allocated counts them)", MODELS, Method.ASSUMPTION,
             "set by hand near the MLP's gap (75 MB measured for 12 MB of weights and inputs); not fitted"),
)
