"""FP32 math on TF32 tensor cores: cuDNN's convolutions take it by default (torch.backends.cudnn.allow_tf32), matmuls
only when asked (--tf32: torch.backends.cuda.matmul.allow_tf32, set_float32_matmul_precision("high"), NGC's
containers); a card without TF32 runs either in FP32. Memory does not change: TF32 keeps FP32 tensors."""

from __future__ import annotations

import pytest

from gpuadvisor import api
from gpuadvisor.catalog import load_catalog
from gpuadvisor.cli import main
from gpuadvisor.core.errors import UserError
from gpuadvisor.estimate import HardwareFigures, estimate_compute, estimate_memory


def _figures(name: str) -> HardwareFigures:
    return HardwareFigures.from_card(load_catalog(use_env=False).get(name))


def test_tf32_matmuls_speed_up_an_fp32_language_model_on_a_card_with_tf32_only():
    fp32 = api.workload("llama-3.2-1b", mode="training", dtype="fp32", batch=4, seq_len=1024)
    tf32 = api.workload("llama-3.2-1b", mode="training", dtype="fp32", batch=4, seq_len=1024, tf32=True)
    a100 = _figures("A100 SXM4 80GB")
    slow, fast = estimate_compute(fp32, a100).step_time_s, estimate_compute(tf32, a100).step_time_s
    assert slow is not None and fast is not None and slow / fast > 4  # 156 against 19.5 TFLOP/s, less the rest
    v100 = _figures("Tesla V100 SXM2 16GB")
    assert estimate_compute(fp32, v100).step_time_s == estimate_compute(tf32, v100).step_time_s
    assert estimate_memory(fp32).total == estimate_memory(tf32).total


def test_tf32_matmuls_speed_up_a_traced_models_matmuls():
    fp32 = api.workload("hf:bert-base-uncased-qa", mode="training", dtype="fp32", batch=32, seq_len=384)
    tf32 = api.workload("hf:bert-base-uncased-qa", mode="training", dtype="fp32", batch=32, seq_len=384, tf32=True)
    a100 = _figures("A100 SXM4 80GB")
    slow, fast = estimate_compute(fp32, a100), estimate_compute(tf32, a100)
    assert slow.step_time_s / fast.step_time_s > 3
    assert slow.breakdown["gemm"] / fast.breakdown["gemm"] == pytest.approx(156.0 / 19.5, rel=0.2)


def test_tf32_without_fp32_math_is_refused_in_one_line(capsys):
    with pytest.raises(UserError, match="--tf32 is for FP32 math"):
        api.workload("llama-3.2-1b", mode="training", dtype="bf16", tf32=True)
    assert main(["estimate", "llama-3.2-1b", "--mode", "training", "--tf32"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--tf32" in err[0]
