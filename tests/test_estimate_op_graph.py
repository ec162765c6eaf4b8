"""`estimate --json`'s `op_graph`: where the GPU time of a Llama-style decoder's step goes, op class by op class,
from its analytic op graph (shares of the one estimate, not a second time); absent, with nothing failing, for
what the analytic front-end does not write."""

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


def test_training_step_says_where_its_one_time_goes(capsys):
    d = estimate(capsys, "llama-3.2-1b", "--mode", "training", "--batch", "4", "--seq", "1024")
    g = d["op_graph"]
    share = g["share_by_class"]
    assert {"gemm", "attention", "elementwise", "optimizer"} <= set(share)
    assert sum(share.values()) == pytest.approx(1.0)
    assert list(share.values()) == sorted(share.values(), reverse=True)
    # shares only: no second time or memory peak beside the estimate's own
    assert not {"step_time_s", "peak_bytes", "ratio_to_headline"} & set(g)
    a = transformer_graph(resolve_model("llama-3.2-1b"), mode=GraphMode.TRAINING, batch=4, seq=1024)
    assert g["ops"] == len(a.ops) and g["mode"] == "training"


def test_checkpointed_training_recomputes_the_forward(capsys):
    argv = ("llama-3.2-1b", "--mode", "training", "--batch", "8", "--seq", "1024")
    plain, ckpt = estimate(capsys, *argv)["op_graph"], estimate(capsys, *argv, "--checkpointing")["op_graph"]
    assert ckpt["ops"] > 1.2 * plain["ops"]  # the layers' forward again
    # the recomputed forward is matmuls and the elementwise ops between them: the optimizer's share falls
    assert ckpt["share_by_class"]["optimizer"] < plain["share_by_class"]["optimizer"]


def test_inference_breaks_down_the_prefill(capsys):
    d = estimate(capsys, "qwen2.5-0.5b", "--batch", "2", "--input-len", "512")
    assert d["op_graph"]["mode"] == "inference" and "optimizer" not in d["op_graph"]["share_by_class"]


@pytest.mark.parametrize("argv", [
    ("gpt2",), ("mixtral-8x7b",), ("bert-base",), ("llama-3.2-1b", "--mode", "lora"),
    ("llama-3.2-1b", "--mode", "qlora"), ("llama-3.2-1b", "--quant", "awq"),
    ("llama-3.2-1b", "--mode", "training", "--optimizer", "sgd"), ("llama-3.2-1b", "--dtype", "fp8"),
    ("llama-3.2-1b", "--mode", "training", "--gpus", "2"),
])
def test_unsupported_workloads_have_no_op_graph_and_still_answer(capsys, argv):
    d = estimate(capsys, *argv)
    assert "op_graph" not in d and d["compute"]["time_s"]


def test_one_time_per_step_in_the_text(capsys):
    """The step has one time; the op graph only says where it goes (it once printed a second prefill time)."""
    assert main(["estimate", "llama-3.1-8b", "--gpu", "H100 SXM", "--users", "16"]) == 0
    out = capsys.readouterr().out
    assert sum("prefill:" in ln for ln in out.splitlines()) == 1 and "op graph" not in out
    lines = [ln for ln in out.splitlines() if "GPU time goes" in ln]
    assert len(lines) == 1 and "gemm" in lines[0] and " ms" not in lines[0]
    assert main(["estimate", "gpt2", "--mode", "training"]) == 0
    assert "GPU time goes" not in capsys.readouterr().out
