"""The one `Layout` (gpuadvisor/layout.py): the step estimate, the training layouts and the serving simulation read
the same type, and its degrees are checked in one place."""

from __future__ import annotations

import pytest

from gpuadvisor.core.errors import UserError
from gpuadvisor.layout import Checkpointing, Layout, Sharding, check_layout, check_serving_layout
from gpuadvisor.workload import make_workload


def test_workload_exposes_its_layout():
    w = make_workload("llama-3.1-8b", mode="training", num_gpus=8, tensor_parallel=2, batch=12, sharding="fsdp",
                      checkpointing=True)
    lay = w.layout
    assert lay == Layout(tp=2, replicas=4, micro_batch=3, sharding=Sharding.FSDP, checkpointing=Checkpointing.FULL)
    assert lay.gpus == w.num_gpus and lay.dp() == w.data_parallel


def test_replicas_given_or_left_by_the_gpus():
    assert Layout(tp=2, pp=2).dp(16) == 4 and Layout(tp=2, pp=2).gpus == 4  # one replica where none are given
    served = Layout(tp=2, pp=2, replicas=3)
    assert served.gpus == 12 and served.describe() == "TP2 x PP2, 3 replicas"
    assert served.check_split(12) == 3
    with pytest.raises(UserError, match="16 GPUs hold 4 replicas of 4 GPUs, not 3"):
        served.check_split(16)


@pytest.mark.parametrize("bad", [{"tp": 0}, {"pp": True}, {"vp": 1.5}, {"micro_batch": -1}, {"replicas": 0}])
def test_every_estimate_refuses_a_degree_below_one_in_the_same_words(bad):
    m = make_workload("llama-3.1-8b").model
    name = next(iter(bad)).replace("_", " ")
    with pytest.raises(UserError, match=f"^{name} must be a positive integer"):
        check_layout(m, 8, 8, 2048, Layout(**bad))
    with pytest.raises(UserError, match=f"^{name} must be a positive integer"):
        check_serving_layout(m, Layout(**bad))


def test_heads_checked_by_one_rule():
    m = make_workload("llama-2-13b").model  # 40 heads
    for check in (lambda: check_serving_layout(m, Layout(tp=16)),
                  lambda: check_layout(m, 16, 16, 4096, Layout(tp=16)),
                  lambda: make_workload("llama-2-13b", num_gpus=16, tensor_parallel=16)):
        with pytest.raises(UserError, match="TP 16 does not divide llama-2-13b's 40 attention heads"):
            check()


def test_serving_splits_layers_unevenly_but_not_below_one_a_stage():
    m = make_workload("llama-3.1-8b").model  # 32 layers
    assert check_serving_layout(m, Layout(pp=3)).pp == 3
    with pytest.raises(UserError, match="PP 33 is more than"):
        check_serving_layout(m, Layout(pp=33))
