"""`estimate --json`'s `op_graph`: the analytic op graph of a Llama-style decoder's step costed by the op cost
model, beside the calibrated headline; absent, with nothing failing, for what the analytic front-end does not
write."""

from __future__ import annotations

import json

import pytest

from gpuadvisor.cli import main
from gpuadvisor.estimate.analytic import transformer_graph
from gpuadvisor.estimate.graph import GraphMode
from gpuadvisor.modelspec import resolve_model


def estimate(capsys, *argv: str) -> dict:
    """The step model's own figures (the answer's `detail`)."""
    rc = main(["estimate", *argv, "--json"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    return json.loads(out)["detail"]


def test_training_step_has_the_analytic_graph_beside_the_headline(capsys):
    d = estimate(capsys, "llama-3.2-1b", "--mode", "training", "--batch", "4", "--seq", "1024")
    g = d["op_graph"]
    by_class = g["time_by_class_s"]
    assert {"gemm", "attention", "elementwise", "optimizer"} <= set(by_class)
    assert sum(by_class.values()) == pytest.approx(g["device_time_s"])
    assert g["host_time_s"] > 0 and g["step_time_s"] >= max(g["device_time_s"], g["host_time_s"])
    assert g["ratio_to_headline"] == pytest.approx(g["step_time_s"] / d["compute"]["step_time_s"])
    assert 0.5 < g["ratio_to_headline"] < 2.0  # the two paths describe the same step
    assert f"{g['ratio_to_headline']:.2f}x" in g["note"] and "calibrated transformer path" in g["note"]
    # the same graph the analytic front-end writes for this step
    a = transformer_graph(resolve_model("llama-3.2-1b"), mode=GraphMode.TRAINING, batch=4, seq=1024)
    assert g["peak_bytes"] == a.memory.peak_bytes and g["kernels"] > len(a.ops) // 2
    assert g["mode"] == "training"


def test_checkpointed_training_recomputes_and_holds_less(capsys):
    argv = ("llama-3.2-1b", "--mode", "training", "--batch", "8", "--seq", "1024")
    plain, ckpt = estimate(capsys, *argv)["op_graph"], estimate(capsys, *argv, "--checkpointing")["op_graph"]
    assert ckpt["time_by_class_s"]["gemm"] > 1.2 * plain["time_by_class_s"]["gemm"]  # the layers' forward again
    assert ckpt["peak_bytes"] < plain["peak_bytes"]


def test_inference_compares_the_forward_with_the_prefill(capsys):
    graphs = estimate(capsys, "qwen2.5-0.5b", "--batch", "2", "--input-len", "512")
    eager = estimate(capsys, "qwen2.5-0.5b", "--batch", "2", "--input-len", "512", "--engine", "eager")
    g, e = graphs["op_graph"], eager["op_graph"]
    assert g["mode"] == "inference" and "optimizer" not in g["time_by_class_s"]
    assert g["ratio_to_headline"] == pytest.approx(g["step_time_s"] / graphs["compute"]["prefill_time_s"])
    assert g["host_time_s"] == 0 and e["host_time_s"] > 0  # a CUDA graph replays the forward; eager dispatches it
    assert g["device_time_s"] == pytest.approx(e["device_time_s"])


@pytest.mark.parametrize("argv", [
    ("gpt2",), ("mixtral-8x7b",), ("bert-base",), ("llama-3.2-1b", "--mode", "lora"),
    ("llama-3.2-1b", "--mode", "qlora"), ("llama-3.2-1b", "--quant", "awq"),
    ("llama-3.2-1b", "--mode", "training", "--optimizer", "sgd"), ("llama-3.2-1b", "--dtype", "fp8"),
    ("llama-3.2-1b", "--mode", "training", "--gpus", "2"),
])
def test_unsupported_workloads_have_no_op_graph_and_still_answer(capsys, argv):
    d = estimate(capsys, *argv)
    assert "op_graph" not in d and d["compute"]["time_s"]


def test_text_output_has_one_op_graph_line_for_a_decoder_only(capsys):
    assert main(["estimate", "llama-3.2-1b", "--mode", "training", "--batch", "2", "--seq", "512"]) == 0
    out = capsys.readouterr().out
    lines = [ln for ln in out.splitlines() if "op graph" in ln]
    assert len(lines) == 1 and "x the step" in lines[0] and "GiB" in lines[0]
    assert main(["estimate", "gpt2", "--mode", "training"]) == 0
    assert "op graph" not in capsys.readouterr().out
