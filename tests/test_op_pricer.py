"""The op pricer: one registered formula per op class over named shapes (opcost.PRICES, graph.SHAPE_KINDS), the
stored rows read by those shapes without loss, and the facts that used to be written twice read from one place."""

from __future__ import annotations

import typing

import pytest

from gpuadvisor.estimate import calibration as cal
from gpuadvisor.estimate import graphstore, kernels, opcost
from gpuadvisor.estimate.analytic import transformer_graph
from gpuadvisor.estimate.graph import (
    SHAPE_KINDS,
    AttentionShape,
    ConvGradients,
    ConvShape,
    GemmShape,
    GraphMode,
    NormShape,
    Op,
    OpClass,
    Phase,
    RecurrentShape,
    StreamLayout,
    StreamShape,
    TensorLayout,
    named_shape,
)
from gpuadvisor.modelspec import resolve_model


def test_every_op_class_has_exactly_one_formula_reading_its_shape_kind():
    """The registry covers OpClass (a registry refuses a second formula, so each has one), and each formula's
    `shape` parameter is the named shape its class records, or None."""
    assert sorted(opcost.PRICES.classes) == sorted(OpClass)
    for cls in OpClass:
        hints = typing.get_type_hints(opcost.PRICES.formula(cls), vars(opcost))
        assert hints["shape"] == SHAPE_KINDS[cls] | None, cls


def test_a_second_formula_and_a_missing_one_are_refused():
    with pytest.raises(ValueError, match="already has a pricing formula"):
        opcost.prices(OpClass.GEMM)(opcost.gemm_time)
    empty = opcost.PriceRegistry()
    op = Op("mm", OpClass.GEMM, Phase.FORWARD, "bf16", 1e9, 1e6, 1e6, (1.0, 512.0, 512.0, 512.0))
    with pytest.raises(NotImplementedError, match=r"no pricing formula: register one with @prices\(OpClass.GEMM\)"):
        empty.price(op, opcost.Rates.of(_h100()))


def _h100():
    from bench.models import hardware

    return hardware()


SHAPES = [
    GemmShape(2.0, 4096.0, 768.0, 3072.0),
    ConvShape(32.0, 64.0, 56.0, 56.0, 128.0, 3.0, 3.0, 1.0, 28.0, 28.0, TensorLayout.NHWC,
              ConvGradients.INPUT | ConvGradients.BIAS),
    ConvShape(64.0, 3.0, 64.0, 64.0, 64.0, 4.0, 4.0, 1.0, 32.0, 32.0, TensorLayout.NHWC, ConvGradients.FORWARD,
              transposed=True),
    ConvShape(8.0, 2048.0, 65.0, 65.0, 256.0, 3.0, 3.0, 1.0, 65.0, 65.0, TensorLayout.NHWC, ConvGradients.FORWARD,
              dilation=12.0),
    AttentionShape(8.0, 12.0, 512.0, 512.0, 64.0, True),
    RecurrentShape(32.0, 256.0, 512.0, 1024.0, 2.0, 4.0, 1.0),
    NormShape(3.1e6, StreamLayout.STRIDED | StreamLayout.BATCH_STATS, 768.0),
    NormShape(0.0, StreamLayout.DENSE),
    StreamShape(3.1e6, StreamLayout.BROADCAST),
]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: type(s).__name__)
def test_a_named_shape_is_its_row(shape):
    row = shape.to_row()
    assert type(shape).from_row(row) == shape
    assert len(row) <= len(type(shape).FIELDS)


def test_a_convolution_row_is_read_by_name():
    """The stored row's order, named once: the layout flag is the 11th number, the gradients' bits the 12th."""
    conv = named_shape(OpClass.CONV, (4, 3, 224, 224, 64, 7, 7, 1, 112, 112, 0, 3))
    assert isinstance(conv, ConvShape)
    assert (conv.batch, conv.in_channels, conv.out_channels, conv.kernel_height, conv.groups) == (4, 3, 64, 7, 1)
    assert conv.layout is TensorLayout.NCHW
    assert conv.gradients == ConvGradients.INPUT | ConvGradients.WEIGHT
    assert named_shape(OpClass.CONV, ()) is None  # no shape recorded
    with pytest.raises(ValueError, match=r"ConvShape row is \(batch, in_channels.*got 11 numbers"):
        named_shape(OpClass.CONV, (4, 3, 224, 224, 64, 7, 7, 1, 112, 112, 0))


def test_every_stored_op_reads_back_as_its_row():
    """The shipped graphs' rows, read as named shapes and written again, are the rows: the file format is as it
    was, and no stored row is of another length than its class's shape."""
    kinds: set[type] = set()
    for bg in graphstore.shipped().values():
        for op in (*bg.low.ops, *bg.high.ops):
            shape = op.named_shape
            if shape is not None:
                kinds.add(type(shape))
                assert shape.to_row() == tuple(float(x) for x in op.shape), op
    assert kinds == {GemmShape, ConvShape, AttentionShape, RecurrentShape, NormShape, StreamShape}


def test_the_attention_backward_is_one_constant():
    """FlashAttention's backward FLOPs over its forward's: the tracer's count, the analytic front-end's and the
    calibrated transformer path's all read ATTN_BWD_FLOPS (2.5: forward + backward 3.5)."""
    shape = AttentionShape(2.0, 16.0, 1024.0, 1024.0, 64.0, True)
    fwd = kernels.attention_flops(shape, backward=False)
    assert fwd == 4.0 * 2 * 16 * 1024 * 1024 * 64 / 2

    def ratios() -> tuple[float, float, float]:
        g = transformer_graph(resolve_model("llama-3.2-1b"), mode=GraphMode.TRAINING, batch=2, seq=256)
        att = {op.name: op.flops for op in g.ops if op.cls is OpClass.ATTENTION}
        both = kernels.attention_time(2048, 1024, 1024, 64, 1, causal=True, rate=1e15, backward=True)
        alone = kernels.attention_time(2048, 1024, 1024, 64, 1, causal=True, rate=1e15)
        ramp = kernels.attention_rate(1024, 64, 1e15) / kernels.attention_rate(1024, 64, 1e15, backward=True)
        return (kernels.attention_flops(shape, backward=True) / fwd,
                att["flash_attention_backward"] / att["flash_attention"], both / alone / ramp)

    assert ratios() == pytest.approx((2.5, 2.5, 3.5))
    with cal.override(ATTN_BWD_FLOPS=3.0):
        assert ratios() == pytest.approx((3.0, 3.0, 4.0))


def test_bits_per_weight_are_one_table():
    from gpuadvisor.estimate.serve.stepcost import WEIGHT_BITS
    from gpuadvisor.workload import QUANT_FORMATS

    shared = set(WEIGHT_BITS) & set(QUANT_FORMATS)
    assert {"q4_k_m", "q5_k_m", "q8_0", "awq", "gptq", "int8", "fp8"} <= shared
    assert {q: WEIGHT_BITS[q] for q in shared} == {q: QUANT_FORMATS[q][0] for q in shared}


def test_the_kv_block_has_one_name():
    """The simulation pages the KV cache in the calibration table's KV_BLOCK_TOKENS (it had its own KV_BLOCK)."""
    from bench.models import hardware
    from gpuadvisor.estimate.serve import api, sim

    def blocks() -> tuple[int, int]:
        s = api.serve_setup(resolve_model("llama-3.1-8b"), hardware(), "vllm")
        return s.cfg.kv_blocks, s.assumptions()["kv_block_tokens"]

    (n16, b16) = blocks()
    with cal.override(KV_BLOCK_TOKENS=32):
        (n32, b32) = blocks()
    assert (b16, b32) == (16, 32) and n32 == n16 // 2
    assert not hasattr(sim, "KV_BLOCK") and not hasattr(api, "KV_BLOCK")


def _rnn(hidden: float, *, batch: float = 64.0, layers: float = 1.0, gates: float = 4.0, dirs: float = 1.0,
         steps: float = 64.0) -> RecurrentShape:
    return RecurrentShape(batch, steps, hidden, hidden, layers, gates, dirs)


@pytest.mark.parametrize(("shape", "backward", "dtype", "cc", "expected"), [
    (_rnn(128), True, "bf16", "9.0", True),                       # small hidden: PERSIST_STATIC_SMALL_H both ways
    (_rnn(192, gates=3), False, "bf16", "9.0", True),             # a GRU of 192: forward only
    (_rnn(192, gates=3), True, "bf16", "9.0", False),
    (_rnn(512, gates=3), False, "bf16", "9.0", False),            # GRUs never get PERSIST_STATIC
    (_rnn(1024), False, "bf16", "9.0", True),                     # one-layer LSTM, batch <= 128: PERSIST_STATIC
    (_rnn(1024, batch=256), False, "bf16", "9.0", False),
    (_rnn(1024, layers=2), False, "bf16", "9.0", False),
    (_rnn(1024), False, "fp32", "9.0", False),
    (_rnn(1024), False, "fp16", "8.6", False),                    # sm_86 is excluded
    (_rnn(1024), False, "fp16", "7.5", False),                    # Turing too
    (_rnn(128), False, "bf16", None, False),                      # no NVIDIA architecture: cuDNN's choice unknown
])
def test_which_training_rnn_calls_run_one_persistent_kernel(shape, backward, dtype, cc, expected):
    """PyTorch's choice of cuDNN algorithm (RNN.cpp get_algo), as the H100's kernel profiles showed it."""
    assert kernels.rnn_runs_persistent(shape, backward=backward, dtype=dtype, compute_capability=cc,
                                       sms=132) is expected


def test_an_rnn_calls_set_up_is_the_hosts_and_a_persistent_step_costs_no_launch():
    """Set-up is host work (recurrent_host_s) done before the first launch, not on the GPU's timeline; inside a
    small-hidden persistent training kernel a step costs RNN_PERSIST_SMALL_STEP_S, and the backward walks every row
    of every step once more for the bias gradient; launched, in inference as in training, the GPU's part of a step
    is its kernels' floors (RNN_LAUNCHED_STEP_GPU_S) and the host's issuing is the step (RNN_STEP_FLOOR_S, host
    time, once a step each way)."""
    rates = opcost.Rates.of(_h100())
    shape = _rnn(128)
    fwd = Op("rnn", OpClass.RECURRENT, Phase.FORWARD, "bf16", 0.0, 0.0, 0.0, shape.to_row())
    inference, training = opcost.op_time(fwd, rates), opcost.op_time(fwd, rates, training=True)
    assert 64 * cal.RNN_LAUNCHED_STEP_GPU_S < inference < 64 * cal.RNN_STEP_FLOOR_S
    assert 64 * cal.RNN_PERSIST_SMALL_STEP_S <= training < 64 * cal.RNN_STEP_FLOOR_S
    assert opcost.recurrent_host_s(fwd, rates, True) == pytest.approx(cal.RNN_LAYER_CALL_S)
    assert opcost.recurrent_host_s(fwd, rates, False) == pytest.approx(cal.RNN_LAYER_CALL_S
                                                                       + 64 * cal.RNN_STEP_FLOOR_S)
    bwd = Op("rnn", OpClass.RECURRENT, Phase.BACKWARD, "bf16", 0.0, 0.0, 0.0, shape.to_row())
    bias = shape.batch * shape.steps * cal.RNN_BIAS_GRAD_ROW_S
    assert opcost.op_time(bwd, rates, training=True) == pytest.approx(2 * training + bias)
    # a GRU of hidden 256 (never the static kernel): launched both ways in training, its steps the host's like an
    # inference call's, one floor each way
    big = _rnn(256, gates=3)
    launched = Op("rnn", OpClass.RECURRENT, Phase.BACKWARD, "bf16", 0.0, 0.0, 0.0, big.to_row())
    assert opcost.recurrent_host_s(launched, rates, True) == pytest.approx(
        cal.RNN_LAYER_CALL_S + cal.RNN_BACKWARD_CALL_S + big.steps * cal.RNN_STEP_FLOOR_S)


def test_a_probed_host_scales_an_rnn_calls_host_time_as_it_scales_every_other_ops():
    """The dispatch probe's op time scales the whole eager host time of a step, an RNN call's issuing included:
    on a host twice as slow, a recurrent model's host time doubles."""
    from dataclasses import replace

    from gpuadvisor.estimate.graph import GraphMode, MemoryPeak, OpGraph

    fwd = Op("rnn", OpClass.RECURRENT, Phase.FORWARD, "bf16", 0.0, 0.0, 0.0, _rnn(128).to_row())
    g = OpGraph("m", GraphMode.INFERENCE, 64, (fwd,), 1, 0, MemoryPeak(1.0, "forward", {}), host_ops=1)
    gpu_figures = _h100()
    calibration = opcost.step_time(g, gpu_figures).host_s
    slow = opcost.step_time(g, replace(gpu_figures, host_op_s=2 * cal.HOST_OP_S)).host_s
    assert calibration > opcost.recurrent_host_s(fwd, opcost.Rates.of(gpu_figures), False) > 0
    assert slow == pytest.approx(2 * calibration)


@pytest.mark.parametrize(("shape", "extra"), [
    (_rnn(128, gates=3, layers=2, batch=512), True),               # small hidden, any layout: persistent forward
    (_rnn(192, gates=3, dirs=2), True),
    (_rnn(1024, batch=512), True),                                # a one-layer LSTM: PERSIST_STATIC at any batch the
    (_rnn(256, dirs=2), False),                                   # trace can tell (it runs at batch 2 and 4)
    (_rnn(512, gates=3), False),                                  # GRUs of hidden > 192 launch every step
])
def test_a_training_call_whose_forward_runs_persistent_holds_more_while_it_runs(shape, extra):
    """lab/rnn_memory.py on an H200: about RNN_TRAIN_PERSIST_ROWS rows of batch x hidden per step beyond the
    inference workspace, whatever the layers and directions, where the forward runs as one persistent kernel."""
    held = kernels.rnn_training_extra_bytes(shape, 2.0, "bf16")
    expected = 2.0 * cal.RNN_TRAIN_PERSIST_ROWS * shape.batch * shape.steps * shape.hidden_size if extra else 0.0
    assert held == pytest.approx(expected)


@pytest.mark.parametrize(("shape", "unheld"), [
    (_rnn(512, batch=256), True),             # the static kernel takes batches of 128 or less: this one launches
    (_rnn(512, batch=100), True),             # nor one off the multiples of 8
    (_rnn(512, batch=64), False),             # the batch the trace assumes: held as counted
    (_rnn(128, batch=1024), False),           # the small-hidden kernel takes every batch
    (_rnn(512, layers=2, batch=256), False),  # two layers never run the static kernel: nothing was counted
])
def test_the_static_kernels_rows_are_not_held_past_its_batches(shape, unheld):
    """rnn_training_extra_bytes counts the persistent kernel's rows at PERSIST_BATCH (the trace cannot tell the
    user's batch); kernels.rnn_static_unheld_bytes is what that overcounts where PERSIST_STATIC's batch rule says no
    (the 64-1,024-step sweep: one-layer LSTMs of hidden 256 at batch 256 and 1,024 held half the counted peak)."""
    got = kernels.rnn_static_unheld_bytes(shape, 2.0, "bf16")
    assert got == (pytest.approx(kernels.rnn_training_extra_bytes(shape, 2.0, "bf16")) if unheld else 0.0)
    assert (got > 0) == unheld


@pytest.mark.parametrize(("batch", "phase", "noted"), [(256, "forward", True), (64, "forward", False),
                                                        (256, "backward", False)])
def test_an_lstm_past_the_static_kernels_batches_says_so_where_its_peak_is_in_the_forward(batch, phase, noted):
    from gpuadvisor.estimate.graph import GraphMode, MemoryPeak, Op, OpClass, OpGraph, Phase
    from gpuadvisor.estimate.graph_estimate import static_rnn_unheld

    shape = _rnn(512, batch=batch)
    fwd = Op("lstm", OpClass.RECURRENT, Phase.FORWARD, "bf16", 1e9, 1e6, 1e6, shape.to_row())
    g = OpGraph("m", GraphMode.TRAINING, batch, (fwd,), 1, 1, MemoryPeak(1e9, phase, {}), host_ops=1)
    expected = kernels.rnn_training_extra_bytes(shape, 2.0, "bf16") if noted else 0.0
    assert static_rnn_unheld(g) == pytest.approx(expected) and (expected > 0) == noted


@pytest.mark.parametrize(("shape", "training", "bound"), [
    (_rnn(192, gates=3, dirs=2, batch=64, steps=200), True, "overhead"),     # launched backward steps: latency
    (_rnn(1024, layers=2, batch=512, steps=256), True, "compute"),           # each step's GEMM is real work
])
def test_an_rnn_whose_steps_wait_on_their_launches_is_overhead_bound(shape, training, bound):
    """A launched RNN step's floor (RNN_STEP_FLOOR_S) is latency, not arithmetic: a step made mostly of it says
    "overhead" (a faster card would not shorten it), one whose step GEMMs outgrow it says "compute"."""
    from gpuadvisor.estimate.graph import GraphMode, MemoryPeak, OpGraph

    ops = tuple(Op("rnn", OpClass.RECURRENT, phase, "bf16", 0.0, 0.0, 0.0, shape.to_row())
                for phase in ((Phase.FORWARD, Phase.BACKWARD) if training else (Phase.FORWARD,)))
    g = OpGraph("m", GraphMode.TRAINING if training else GraphMode.INFERENCE, int(shape.batch), ops, 1, 1,
                MemoryPeak(1.0, "forward", {}), host_ops=2)
    st = opcost.step_time(g, _h100(), eager=False)
    assert st.bound == bound
    assert 0.0 <= st.latency_s <= st.device_s


@pytest.mark.parametrize(("kernel", "size", "out", "dtype", "expected"), [
    (7, 224, 112, "fp16", "WIDE_STEM_SLOWDOWN_FP16"),  # ResNet's stem: cuDNN's fp16 first-layer kernels
    (7, 224, 112, "bf16", "WIDE_STEM_SLOWDOWN_BF16"),
    (3, 224, 112, "fp16", "MISALIGNED_CONV_SLOWDOWN"),  # a narrow stem
    (16, 224, 14, "bf16", "PATCHIFY_SLOWDOWN"),  # a ViT's patchify: no overlap, no first-layer kernel
    (4, 224, 56, "fp16", "PATCHIFY_SLOWDOWN"),  # ConvNeXt's
    (2, 224, 112, "bf16", "MISALIGNED_CONV_SLOWDOWN"),  # a 2x2/2 patchify is under the wide ones' 4
    (7, 224, 112, "fp32", "MISALIGNED_CONV_SLOWDOWN"),
])
def test_a_three_channel_stem_slows_by_its_kind(kernel, size, out, dtype, expected):
    shape = ConvShape(64, 3, size, size, 64, kernel, kernel, 1, out, out, TensorLayout.NHWC, ConvGradients.FORWARD)
    assert opcost.stem_slowdown(shape, dtype) == getattr(cal, expected)


def test_a_depthwise_backward_keeps_the_calibration_cards_bandwidth_share():
    """Less bandwidth per SM speeds a depthwise forward up to copy speed, not its backward (a reduction)."""
    from dataclasses import replace

    from bench.models import hardware

    base = opcost.Rates.of(hardware())
    geforce_like = replace(base, sm_headroom=3.0)
    shape = ConvShape(64, 96, 56, 56, 96, 3, 3, 96, 56, 56, TensorLayout.NHWC, ConvGradients.FORWARD)
    nbytes = 2.0 * 64 * 96 * 56 * 56
    fwd = Op("convolution", OpClass.CONV, Phase.FORWARD, "bf16", 1e6, nbytes, nbytes, shape.to_row())
    bwd_shape = ConvShape(64, 96, 56, 56, 96, 3, 3, 96, 56, 56, TensorLayout.NHWC,
                          ConvGradients.INPUT | ConvGradients.WEIGHT)
    bwd = Op("convolution_backward", OpClass.CONV, Phase.BACKWARD, "bf16", 2e6, 2 * nbytes, nbytes, bwd_shape.to_row())
    assert opcost.op_time(fwd, geforce_like) < opcost.op_time(fwd, base)
    assert opcost.op_time(bwd, geforce_like) == pytest.approx(opcost.op_time(bwd, base))


def test_a_transposed_convolution_runs_the_dgrad_forward_and_the_forward_backward():
    """cuDNN runs a transposed convolution's forward as the data gradient of the convolution it was recorded as, and
    its input's gradient as that convolution's forward: priced so, pass for pass (stride 1: the same GEMMs; stride
    2: the dgrad over the recorded input's pixels, each reached by a quarter of the taps, so the same MACs), each
    at its own K ramp."""
    from dataclasses import replace

    from bench.models import hardware

    r = opcost.Rates.of(hardware())
    for stride in (1, 2):
        out = 32 // stride
        plain = ConvShape(64, 256, 32, 32, 128, 3, 3, 1, out, out, TensorLayout.NHWC, ConvGradients.FORWARD)
        macs = 64.0 * out * out * 128 * 256 * 9
        fwd = Op("convolution", OpClass.CONV, Phase.FORWARD, "bf16", 2 * macs, 1e6, 1e6, plain.to_row())
        dgrad = replace(fwd, name="convolution_backward", phase=Phase.BACKWARD,
                        shape=replace(plain, gradients=ConvGradients.INPUT).to_row())
        transposed_fwd = replace(fwd, shape=replace(plain, transposed=True).to_row())
        transposed_dgrad = replace(dgrad, shape=replace(plain, gradients=ConvGradients.INPUT, transposed=True).to_row())
        assert opcost.op_time(transposed_dgrad, r) == pytest.approx(opcost.op_time(fwd, r))
        with cal.override(CONV_DGRAD_K_RAMP=cal.CONV_K_RAMP):  # the passes alike but for their K ramps
            if stride == 1:
                assert opcost.op_time(transposed_fwd, r) == pytest.approx(opcost.op_time(dgrad, r))
            else:  # about a quarter of the plain dgrad's GEMM (its kernel's fixed time aside): the zeros it skips
                with cal.override(CONV_PASS_FIXED_S=0.0):
                    assert opcost.op_time(transposed_fwd, r) < 0.4 * opcost.op_time(dgrad, r)
        assert opcost.op_time(transposed_fwd, r) > opcost.op_time(dgrad, r) * (0.3 if stride == 2 else 1.0)


def test_a_grouped_convolution_takes_a_kernels_fixed_time_a_pass():
    """ResNeXt's grouped convolutions run on tensor cores as dense ones do: each implicit GEMM (the forward, each
    gradient of a backward) one kernel of CONV_PASS_FIXED_S beside its FLOPs."""
    from dataclasses import replace

    from bench.models import hardware

    r = opcost.Rates.of(hardware())
    shape = ConvShape(64, 256, 28, 28, 256, 3, 3, 32, 28, 28, TensorLayout.NHWC, ConvGradients.FORWARD)
    fwd = Op("convolution", OpClass.CONV, Phase.FORWARD, "bf16", 2.0 * 64 * 28 * 28 * 256 * 8 * 9, 1e6, 1e6,
             shape.to_row())
    both = ConvGradients.INPUT | ConvGradients.WEIGHT
    bwd = replace(fwd, name="convolution_backward", phase=Phase.BACKWARD, flops=2 * fwd.flops,
                  shape=replace(shape, gradients=both).to_row())
    with cal.override(CONV_PASS_FIXED_S=0.0):
        bare = (opcost.op_time(fwd, r), opcost.op_time(bwd, r))
    assert opcost.op_time(fwd, r) - bare[0] == pytest.approx(cal.CONV_PASS_FIXED_S)
    assert opcost.op_time(bwd, r) - bare[1] == pytest.approx(2 * cal.CONV_PASS_FIXED_S)


def test_fp32_convolutions_run_at_the_tf32_rate_where_the_card_has_one():
    """cuDNN may use TF32 for FP32 convolutions unless told not to (torch.backends.cudnn.allow_tf32 defaults to True),
    while matmuls stay FP32 (torch.backends.cuda.matmul.allow_tf32 defaults to False): an A100's FP32 convolutions
    at its 156 TFLOP/s TF32 rate, its FP32 matmuls at the 19.5 FMA rate; a V100 (no TF32) at its FMA rate both ways.
    Lambda's FP32 ResNet-50 on A100s had come out at 0.31x-0.34x of the published rate, 1.01x-1.10x since."""
    from gpuadvisor.catalog import load_catalog
    from gpuadvisor.estimate import HardwareFigures

    catalog = load_catalog(use_env=False)
    a100 = opcost.Rates.of(HardwareFigures.from_card(catalog.get("A100 SXM4 80GB")))
    assert a100.conv_rate("fp32") == a100.gemm["tf32"] > 7 * a100.rate("fp32")
    assert a100.conv_rate("bf16") == a100.rate("bf16")
    v100 = opcost.Rates.of(HardwareFigures.from_card(catalog.get("Tesla V100 SXM2 16GB")))
    assert "tf32" not in v100.gemm and v100.conv_rate("fp32") == v100.rate("fp32") == v100.gemm["fp32"]
