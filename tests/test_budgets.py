"""Budgets and ownership that mean what users mean: a card price cap, budgets per job, hour and
month; buy versus rent from the real use; rental hosts checked for the workload's needs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from gpuadvisor import api
from gpuadvisor.advisor import Targets
from gpuadvisor.advisor.options import host_misses, host_needs

ROOT = Path(__file__).resolve().parent.parent


def cli(*argv):
    return subprocess.run([sys.executable, "-m", "gpuadvisor", *argv], capture_output=True, text=True, cwd=ROOT,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}, timeout=120)


def test_max_card_price_caps_what_is_bought():
    a = api.advise(api.workload("llama-3.1-8b"), Targets(max_card_usd=1000), rent=False)
    buy = a.picks["cheapest_purchase"].option
    assert buy.hardware.purchase_usd / buy.hardware.gpus <= 1000
    assert all(o.hardware.purchase_usd / o.hardware.gpus <= 1000 for o in a.options if o.meets)
    assert "cards to buy <= $1,000 each" in a.targets.describe("inference")


def test_budget_means_a_month_of_serving_and_says_so():
    a = api.advise(api.workload("llama-3.1-8b"), Targets(budget_usd=1000), rent=False)
    assert any("--budget $1,000 is read as a month of serving" in n for n in a.notes)
    assert "<= $1,000 a month" in a.targets.describe("inference") and "in all" not in a.targets.describe("inference")


def test_budget_flags_for_the_wrong_mode_are_refused():
    p = cli("recommend", "7b", "--budget-per-job", "100")
    assert p.returncode == 2 and "--budget-per-job applies to training" in p.stderr
    p = cli("recommend", "1b", "--mode", "training", "--budget-per-month", "100")
    assert p.returncode == 2 and "--budget-per-month applies to serving" in p.stderr
    p = cli("recommend", "7b", "--rent-only", "--max-card-price", "900")
    assert p.returncode == 2


def test_one_off_job_is_not_worth_buying():
    a = api.advise(api.workload("llama-3.1-8b", mode="lora", train_tokens=2e7))
    b = a.buy_vs_rent
    assert b is not None and b.verdict == "rent"
    assert "not worth buying" in b.line and "planned use: one job" in b.line
    # the purchase in the buy-or-rent line is the "cheapest to buy" pick
    assert b.purchase is a.picks["cheapest_purchase"].option


def test_long_use_can_make_buying_worth_it():
    a = api.advise(api.workload("llama-3.1-8b"), Targets(users=8))
    b = a.buy_vs_rent
    assert b is not None and b.purchase is a.picks["cheapest_purchase"].option
    assert "planned use: 36 months" in b.line
    short = api.advise(api.workload("llama-3.1-8b"), Targets(users=8, use_hours=20)).buy_vs_rent
    assert short is not None and short.verdict == "rent"


class _Offer:
    def __init__(self, vcpus, mem):
        self.vcpus, self.memory_gib = vcpus, mem


def test_rental_hosts_are_checked():
    w70 = api.workload("llama-3.1-70b", mode="qlora")
    _, mem, why = host_needs(w70, 1)
    assert mem > 60 and "quantiz" in why
    miss = host_misses(_Offer(2, 4), w70, 1)
    assert any("GiB host memory" in m for m, _ in miss)
    a = api.advise(w70.with_(train_tokens=1e6), rent=True, buy=False)
    flagged = [o for o in a.options if any("GiB host memory" in m for m in o.misses)]
    assert flagged, "no small-memory instance was flagged for 70B QLoRA"
    assert all(not o.meets for o in flagged)
    assert any("host needs (defaults)" in n for n in a.notes)


def test_only_an_image_model_asks_for_vision_data_loading_vcpus():
    """A traced model whose samples are images decodes and augments them on the host (6 vCPUs a GPU); BERT's
    tokenized samples ask for what any training launcher does (2): the BERT fine-tuning advice had flagged 10-vCPU
    V100 instances as short of CPUs "for vision training"."""
    vision = api.workload("torchvision:resnet50", mode="training", batch=64)
    text = api.workload("hf:bert-base-uncased-qa", mode="training", batch=32, seq_len=384)
    assert host_needs(vision, 2)[0] == 12 and "vision" in host_needs(vision, 2)[2]
    cpus, _, why = host_needs(text, 2)
    assert cpus == 4 and "vision" not in why
