"""Memory, serving, offload and advisor constants: what a process holds beside its tensors, what an
engine leaves free and schedules, host memory for offload, and the interconnect's latency."""

from __future__ import annotations

from gpuadvisor.estimate.calibration.record import Constant, Method

VLLM = "https://docs.vllm.ai/en/latest/configuration/engine_args.html"
RNN_MEMORY = "lab/data/h200-rnn-memory-2026-12-04/rnn_memory.json"
RNN_MEMORY_SMALL = "lab/data/h200-rnn-memory-small-2026-12-05/rnn_memory_small.json"
RNN_FIT = ("a grid (a layer and direction's floor by 0.25 MB, bytes per hidden unit by 500) with least squares for the "
           "per-step rows at each point, the least mean |log(counted / measured)| over both grids' 126 inference calls "
           "(LSTM and GRU, hidden 64-1024, 1-2 layers, one and two directions, batch 64-512, 16-128 steps; bf16; "
           "lab/models' own calls left out) of memory allocated during the call beyond its outputs "
           "(bench.recurrent.fit_rnn_workspace)")
RNN_GRIDS = f"{RNN_MEMORY}, {RNN_MEMORY_SMALL}"

RNN_RESERVE_FIT = ("least squares over the grid's 36 training calls under bf16 autocast (lab/models' own calls left "
                   "out) of what a call keeps after it beyond its outputs, less autocast's bf16 copies of its input "
                   "and weights, each layer's final states and every layer's output but the last "
                   "(bench.recurrent.fit_rnn_reserve), rounded to 0.1")

CONSTANTS = (
    Constant("CUDA_CONTEXT_BYTES", 536870912, "bytes", "CUDA driver context + kernel images of an idle PyTorch "
             "process (0.5 GiB), outside torch.cuda.max_memory_allocated", "-", Method.ASSUMPTION,
             ("not measured here: the validation sets record PyTorch's allocator "
             "(max_memory_allocated, max_memory_reserved), never the device's used memory, so no gate reads it")),
    Constant("ALLOCATOR_OVERHEAD", 0.05, "fraction", "caching-allocator fragmentation, as a fraction of tensor "
             "bytes", "-", Method.ASSUMPTION,
             ("set by hand below the stored sets' spread: reserved over peak allocated "
             "memory in tools/data/validation-h100-v2.json is 1.02-2.18x (median 1.10), which +-1.25 points cannot be "
             "held to; the memory gates compare tensor bytes with max_memory_allocated, which holds none of it")),
    Constant("SWIGLU_SAVED_UNITS", 3.5, "tokens x intermediate x activation bytes", "tensors a SwiGLU/GeGLU MLP "
             "keeps for backward (gate, activation, up, product; one is shared)", "docs/validation.md",
             Method.NOT_REPRODUCIBLE, "measured with torch.cuda.max_memory_allocated; the measurement apart from "
             "the validation cases is not stored"),
    Constant("RNN_WORKSPACE_STEP_PASSES", 1.1, "rows per step and direction", "cuDNN's inference workspace for an "
             "RNN call beyond its gates and its input's copies, in rows of batch x hidden per time step and direction "
             "(3.1 while the input's copies were counted at the hidden width)",
             RNN_GRIDS, Method.MEASURED, f"{RNN_FIT}, rounded to 0.1"),
    Constant("RNN_WORKSPACE_INPUT_PASSES", 2.0, "copies of the input per step", "cuDNN's inference workspace for "
             "an RNN call holds this many rows of batch x input per time step (its input's copies, whatever the "
             "directions): a call of a 7-wide input holds less than one as wide as its hidden size",
             "lab/data/h100-rnn-memory-inputs-2026-12-06/rnn_memory_inputs.json", Method.MEASURED,
             "least squares through the origin of what each of the 48 narrower-input inference calls (inputs 7 and 32 "
             "at hidden 64 and 128, LSTM and GRU, one and two directions, batch 1,024, 64-512 steps) holds less than "
             "its twin of input = hidden, per batch x steps x bf16 byte of the width it lacks "
             "(bench.recurrent.fit_input_passes; 2.0 to one decimal). Before it the workspace rows were counted at "
             "the hidden width: the inputs grid 27 of 72 calls within 10 % (up to 1.74x), the steps grid 132 of 192; "
             "with it 72 and 192"),
    Constant("RNN_WORKSPACE_GATE_STEPS", 256, "steps", "the most time steps whose gate rows cuDNN's inference "
             "workspace holds at once (kernels.rnn_workspace_bytes): past them a call's workspace grows by "
             "RNN_WORKSPACE_STEP_PASSES rows a step, not by those and the gates'",
             "lab/data/h100-rnn-memory-steps-2026-12-06/rnn_memory_steps.json", Method.FITTED,
             "the value of {128, 256, 512, 1,024, unbounded} with the least mean |log(counted / measured)| "
             "workspace of the 192 inference calls of 64-1,024 steps on an H100 (bench.recurrent.fit_gate_steps): "
             "10.1 % against 19.8 % unbounded. An LSTM of hidden 256 at batch 1,024 holds 3.6 MiB a step to 256 "
             "steps and 1.5 MiB "
             "a step past them; a bidirectional call keeps every step's gates (8.2 GiB at 1,024 steps, twice 512's)"),
    Constant("RNN_WORKSPACE_BIDIR_PASSES", 4.4, "rows per step", "cuDNN's inference workspace of a bidirectional RNN "
             "call beyond its directions' rows (the joined output), in rows of batch x hidden per time step (2.4 while "
             "the input's copies were counted at the hidden width)",
             RNN_GRIDS, Method.MEASURED, f"{RNN_FIT}, rounded to 0.1"),
    Constant("RNN_WORKSPACE_LSTM_BYTES", 43000, "bytes per hidden unit", "cuDNN's inference workspace of an LSTM call "
             "per layer and direction, per hidden unit, whatever the batch and steps (never under "
             "RNN_WORKSPACE_FLOOR_BYTES)", RNN_GRIDS, Method.MEASURED, RNN_FIT),
    Constant("RNN_WORKSPACE_GRU_BYTES", 38500, "bytes per hidden unit", "cuDNN's inference workspace of a GRU call per "
             "layer and direction, per hidden unit, whatever the batch and steps (never under "
             "RNN_WORKSPACE_FLOOR_BYTES)", RNN_GRIDS, Method.MEASURED, RNN_FIT),
    Constant("RNN_WORKSPACE_FLOOR_BYTES", 9000000, "bytes", "the least inference workspace cuDNN holds per layer and "
             "direction of an RNN call, whatever its hidden size: the small grid's hidden-64 calls hold about 9 MB a "
             "layer and direction beyond their rows, where hidden x bytes per unit gives 3 (before the floor: 70 of "
             "126 calls within 10 %, the least 0.38x; with it 120, 0.89x-1.13x)", RNN_GRIDS, Method.MEASURED, RNN_FIT),
    Constant("RNN_RESERVE_LSTM_ROWS", 5.0, "rows per step, layer and direction", "cuDNN's reserve space of an LSTM "
             "training call (kept for its backward), in rows of batch x hidden: the four gates and the cell state of "
             "every step", RNN_MEMORY, Method.MEASURED, RNN_RESERVE_FIT),
    Constant("RNN_RESERVE_GRU_ROWS", 6.0, "rows per step, layer and direction", "cuDNN's reserve space of a GRU "
             "training call (kept for its backward), in rows of batch x hidden: the three gates and three more rows "
             "of every step", RNN_MEMORY, Method.MEASURED, RNN_RESERVE_FIT),
    Constant("RNN_TRAIN_PERSIST_ROWS", 15.3, "rows per step", "what a training call whose forward runs as one "
             "persistent kernel holds while it runs beyond an inference call's workspace, in rows of batch x hidden "
             "per step, whatever its layers and directions (other calls hold about an inference call's)",
             RNN_GRIDS, Method.MEASURED,
             "least squares over both grids' 100 such training calls (hidden 64-192 of any layers and directions, and "
             "one-layer LSTMs of hidden 256 and 1024; lab/models' own calls left out) of the memory allocated during "
             "the call beyond what it keeps, less the inference call's (bench.recurrent.fit_rnn_train_persist), "
             "rounded to 0.1: 15.0 on the large grid alone, 15.3 on the small one; was RNN_TRAIN_SINGLE_LSTM_ROWS, "
             "15.0 for one-layer, one-direction LSTMs only, which left a small-hidden GRU's training peak 30-40 % low"),
    Constant("OPAQUE_TRANSIENT_FRACTION", 0.25, "fraction", "largest set of forward temporaries of a model given "
             "only by its activation elements (UNets, CNNs), as a fraction of them", "-", Method.ASSUMPTION,
             "not measured"),
    Constant("KV_BLOCK_TOKENS", 16, "tokens", "paged-attention block of a serving engine", VLLM, Method.ASSUMPTION,
             ("vLLM's default block_size (a documented engine default, assumed to be the user's); no stored set "
              "binds it both ways: a documented engine default (vLLM block_size), checked against its source "
              "URL; read by the closed-form serving capacity and the advisor only, which no stored measurement "
              "checks")),
    Constant("SERVING_RESERVE", 0.10, "fraction", "share of card memory a serving engine leaves free", VLLM,
             Method.ASSUMPTION,
             ("vLLM's default gpu_memory_utilization of 0.9 (a documented engine default, assumed to be the "
              "user's); no stored set binds it both ways: a documented engine default (vLLM "
              "gpu_memory_utilization 0.9), checked against its source URL; read by the closed-form serving "
              "capacity and the advisor only, which no stored measurement checks")),
    Constant("MAX_BATCH", 256, "sequences", "sequences in flight an engine schedules at most", VLLM,
             Method.ASSUMPTION,
             ("vLLM's default max_num_seqs (a documented engine default, assumed to be the user's); no stored "
              "set binds it both ways: a documented engine default (vLLM max_num_seqs), checked against its "
              "source URL; read by the advisor only, which no stored measurement checks")),
    Constant("DEFAULT_HOST_BANDWIDTH_GBS", 60.0, "GB/s", "host-memory bandwidth a multi-threaded CPU decoder "
             "reaches when no host probe result is given (CPU offload)", "dual-channel DDR5-5600: ~90 GB/s peak",
             Method.ASSUMPTION, "about two thirds of a typical desktop's peak"),
    Constant("OFFLOAD_BANDWIDTH_EFFICIENCY", 0.8, "fraction", "achieved fraction of the GPU's bandwidth figure "
             "in an offload plan whose caller gives none (the CLI passes BANDWIDTH's)", "-", Method.ASSUMPTION,
             "not measured"),
    Constant("ALLREDUCE_LATENCY_NVLINK_S", 10e-6, "s", "latency of one small all-reduce (a decode step's "
             "activations) between tensor-parallel GPUs over NVLink-class links", "-", Method.ASSUMPTION,
             "not measured here; a decode step does two per layer"),
    Constant("ALLREDUCE_LATENCY_PCIE_S", 30e-6, "s", "latency of one small all-reduce between tensor-parallel GPUs "
             "over PCIe", "-", Method.ASSUMPTION, "not measured here; a decode step does two per layer"),
    Constant("NVLINK_MIN_GBS", 100, "GB/s", "catalog interconnect figure from which a link counts as NVLink-class "
             "(for the all-reduce latency)", "-", Method.ASSUMPTION, "PCIe 5.0 x16 is 64 GB/s, NVLink 3+ >= 300"),
    Constant("INTERCONNECT_BINDS", 0.3, "fraction", "communication above this share of a step or decode step: "
             "the advisor says the interconnect binds", "-", Method.ASSUMPTION, "a reporting threshold"),
    Constant("MEMORY_BINDS_HEADROOM", 1.25, "x", "KV-cache room for fewer than this many times the users asked: "
             "the advisor says memory binds a serving option", "-", Method.ASSUMPTION, "a reporting threshold"),
    Constant("JETSON_SYSTEM_GIB", 1.5, "GiB", "memory of a Jetson taken by its OS and CPU (shared memory), not "
             "available to the model", "-", Method.ASSUMPTION, "not measured"),
)
